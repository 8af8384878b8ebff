/*
 * hip_stream.c - what a HIP kmux stream holds besides its native stream: the device workspace of
 * the library calls queued on it (hipBLASLt, MIOpen), and its release: drained, its rocBLAS and
 * MIOpen handles and workspace released, the native stream destroyed when kmux created it. Memory,
 * the rest of streams and events: backends/gpu/gpu_runtime.c on hip_vendor.c's calls.
 * kmux_stream_wrap_native adopts a hipStream_t (NULL: the null stream) without owning it. ROCm 7
 * (HIP API 7.0 changes): hipMemcpyAsync, hipEventRecord and hipStreamDestroy no longer check the
 * stream handle (an invalid one faults, as on CUDA, instead of answering
 * hipErrorContextIsDestroyed): the streams passed here are ones kmux created, or a wrapped native
 * stream, which the caller must keep alive as long as its kmux_stream (as with CUDA). hipFree of
 * hipMalloc memory still synchronises (only hipMallocAsync memory lost that), as kmux_free relies
 * on.
 */
#include <stdint.h>
#include <stdlib.h>

#include "hip_backend.h"

kmux_status kmux_hip_stream_destroy(void *state, void *stream) {
    kmux_hip_state *st = state;
    kmux_hip_stream_t *s = stream;
    if (!s) return KMUX_OK;
    kmux_hip_guard g;
    kmux_status ks = kmux_hip_enter(st, s->device, "kmux_stream_destroy", &g);
    if (ks != KMUX_OK) {
        /* the device cannot be made current (gone, or a forked child, where the HIP runtime must
         * not be called): kmux's own memory of the stream is released, its native stream and
         * rocBLAS handle go with the device */
        free(s);
        return ks;
    }
    kmux_hip_error e = st->api.hipStreamSynchronize(s->stream);
    kmux_hip_rocblas_stream_release(st, s);
    kmux_hip_miopen_stream_release(st, s);
    if (s->ws) (void)st->api.hipFree(s->ws);
    kmux_hip_error e2 = s->own ? st->api.hipStreamDestroy(s->stream) : KMUX_HIP_SUCCESS;
    kmux_hip_leave(st, &g);
    int device = s->device;
    free(s);
    if (e != KMUX_HIP_SUCCESS)
        return kmux_hip_fail(st, e,
                             "kmux_stream_destroy: hipStreamSynchronize on hip:%d (an "
                             "earlier asynchronous error)",
                             device);
    if (e2 != KMUX_HIP_SUCCESS)
        return kmux_hip_fail(st, e2, "kmux_stream_destroy: hipStreamDestroy on hip:%d", device);
    return KMUX_OK;
}

kmux_status kmux_hip_stream_workspace(kmux_hip_state *st, kmux_hip_stream_t *s, size_t bytes,
                                      void *caller, size_t caller_bytes, const char *fn,
                                      void **ws) {
    *ws = NULL;
    if (bytes == 0) return KMUX_OK;
    if (caller) /* prefs.caller_workspace */
        return kmux_gpu_caller_workspace(st->host, "hip", fn, bytes, caller, caller_bytes, ws);
    if (s->ws_size >= bytes) {
        *ws = s->ws;
        return KMUX_OK;
    }
    /* the old block may still be read by work queued before: drained first (hipFree of
     * hipMalloc memory would wait too, but only for the device's work as a whole) */
    kmux_hip_error e = st->api.hipStreamSynchronize(s->stream);
    if (e != KMUX_HIP_SUCCESS)
        return kmux_hip_fail(st, e,
                             "%s: hipStreamSynchronize on hip:%d before growing the "
                             "stream's workspace (an earlier asynchronous error)",
                             fn, s->device);
    const size_t old = s->ws_size, mib = (size_t)1 << 20;
    if (s->ws) (void)st->api.hipFree(s->ws);
    s->ws = NULL;
    s->ws_size = 0;
    /* geometric growth: a sequence of growing plans reallocates rarely */
    size_t want = bytes < mib ? mib : bytes;
    if (old <= SIZE_MAX / 2 && want < 2 * old) want = 2 * old;
    void *p = NULL;
    e = st->api.hipMalloc(&p, want);
    if (e != KMUX_HIP_SUCCESS && want > bytes) e = st->api.hipMalloc(&p, want = bytes);
    if (e != KMUX_HIP_SUCCESS)
        return kmux_hip_fail(st, e, "%s: hipMalloc of a %zu-byte workspace on hip:%d", fn, bytes,
                             s->device);
    s->ws = p;
    s->ws_size = want;
    *ws = p;
    return KMUX_OK;
}
