/*
 * hip_stream.c - the release of a HIP kmux stream: drained, its rocBLAS handle released, the
 * native stream destroyed when kmux created it. Memory, the rest of streams and events:
 * backends/gpu/gpu_runtime.c on hip_vendor.c's calls.
 * kmux_stream_wrap_native adopts a hipStream_t (NULL: the null stream) without owning it.
 * ROCm 7 (HIP API 7.0 changes): hipMemcpyAsync, hipEventRecord and hipStreamDestroy no longer
 * check the stream handle (an invalid one faults, as on CUDA, instead of answering
 * hipErrorContextIsDestroyed): the streams passed here are ones kmux created, or a wrapped
 * native stream, which the caller must keep alive as long as its kmux_stream (as with CUDA).
 * hipFree of hipMalloc memory still synchronises (only hipMallocAsync memory lost that), as
 * kmux_free relies on.
 */
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
