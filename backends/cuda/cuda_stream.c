/*
 * cuda_stream.c - what a CUDA stream holds besides its native stream: its workspace (grown on
 * demand, stream-ordered where the device has memory pools) and its cuDNN handle, and the stream's
 * release with them. Memory, the rest of streams and events: backends/gpu/gpu_runtime.c.
 */
#include <stdlib.h>

#include "cuda_backend.h"

#define STATE(p) ((kmux_cuda_state *)(p))

kmux_status kmux_cuda_stream_destroy(void *state, void *stream) {
    kmux_cuda_state *st = STATE(state);
    kmux_cuda_stream *s = stream;
    if (!s) return KMUX_OK;
    kmux_cuda_guard g;
    kmux_status ks = kmux_cuda_enter(st, s->device, "kmux_stream_destroy", &g);
    if (ks != KMUX_OK) {
        /* the device is gone (or this is a forked child): release what needs no context, so
         * that nothing of the stream is lost (cuStreamDestroy takes the stream's own context) */
        if (s->own) (void)cuStreamDestroy(s->stream);
        free(s);
        return ks;
    }
    CUresult e = cuStreamSynchronize(s->stream);
    CUresult e2 = CUDA_SUCCESS;
    /* cuMemFree also releases a cuMemAllocAsync block; the stream is idle by now. */
    if (s->ws) e2 = kmux_cu_free(s->ws);
    if (s->dnn) cudnnDestroy(s->dnn);
    if (s->own) {
        CUresult e3 = cuStreamDestroy(s->stream);
        if (e2 == CUDA_SUCCESS) e2 = e3;
    }
    kmux_cuda_leave(&g);
    free(s);
    if (e != CUDA_SUCCESS)
        return kmux_cuda_fail(
            st, e, "kmux_stream_destroy: cuStreamSynchronize (an earlier asynchronous error)");
    if (e2 != CUDA_SUCCESS)
        return kmux_cuda_fail(st, e2, "kmux_stream_destroy: releasing the stream");
    return KMUX_OK;
}

kmux_status kmux_cuda_stream_workspace(kmux_cuda_state *st, kmux_cuda_stream *s, size_t bytes,
                                       void *caller, size_t caller_bytes, const char *fn,
                                       void **ws) {
    if (bytes == 0) {
        *ws = NULL;
        return KMUX_OK;
    }
    if (caller) /* prefs.caller_workspace */
        return kmux_gpu_caller_workspace(st->host, "cuda", fn, bytes, caller, caller_bytes, ws);
    if (s->ws_size >= bytes) {
        *ws = s->ws;
        return KMUX_OK;
    }
    /* Grow geometrically (at least 1 MiB) so a sequence of growing plans reallocates rarely. */
    size_t want = kmux_cuda_align_up(bytes, KMUX_CUDA_MIB);
    if (want < 2 * s->ws_size) want = kmux_cuda_align_up(2 * s->ws_size, KMUX_CUDA_MIB);
    void *p = NULL;
    CUresult e;
    if (st->devices[s->device].memory_pools) {
        /* Stream-ordered: the old block is released after the work queued before it, the new
         * one is usable by everything queued after; no device-wide synchronisation. */
        if (s->ws && s->ws_async) {
            (void)cuMemFreeAsync(kmux_cu_ptr(s->ws), s->stream);
        } else if (s->ws) { /* a cuMemAlloc fallback block: only after the stream drains */
            (void)cuStreamSynchronize(s->stream);
            (void)kmux_cu_free(s->ws);
        }
        s->ws = NULL;
        s->ws_size = 0;
        s->ws_async = 1;
        e = kmux_cu_malloc_async(&p, want, s->stream);
        if (e != CUDA_SUCCESS && want > bytes) {
            want = bytes;
            e = kmux_cu_malloc_async(&p, want, s->stream);
        }
        if (e != CUDA_SUCCESS) {
            /* The pool refused (its release threshold, a pool limit, or a driver whose pools do
             * not work under this process, e.g. some MPS/vGPU setups): fall back to cuMemAlloc
             * after the stream drains, as the pool-less path does. The block is freed with
             * cuMemFree either way (stream_destroy). */
            s->ws_async = 0;
            e = cuStreamSynchronize(s->stream);
            if (e == CUDA_SUCCESS) e = kmux_cu_malloc(&p, want);
            if (e != CUDA_SUCCESS && want > bytes) {
                want = bytes;
                e = kmux_cu_malloc(&p, want);
            }
        }
    } else {
        s->ws_async = 0;
        e = cuStreamSynchronize(s->stream);
        if (e == CUDA_SUCCESS && s->ws) e = kmux_cu_free(s->ws);
        s->ws = NULL;
        s->ws_size = 0;
        if (e == CUDA_SUCCESS) e = kmux_cu_malloc(&p, want);
    }
    if (e != CUDA_SUCCESS)
        return kmux_cuda_fail(st, e, "%s: allocating %zu bytes of workspace on cuda:%d", fn, want,
                              s->device);
    s->ws = p;
    s->ws_size = want;
    *ws = p;
    return KMUX_OK;
}

kmux_status kmux_cuda_stream_dnn(kmux_cuda_state *st, kmux_cuda_stream *s, cudnnHandle_t *dnn) {
    if (!s->dnn) {
        cudnnStatus_t cs = cudnnCreate(&s->dnn);
        if (cs != CUDNN_STATUS_SUCCESS) {
            s->dnn = NULL;
            return kmux_cuda_fail_dnn(st, cs, "kmux_conv2d_execute: cudnnCreate on cuda:%d",
                                      s->device);
        }
        cs = cudnnSetStream(s->dnn, s->stream);
        if (cs != CUDNN_STATUS_SUCCESS) {
            cudnnDestroy(s->dnn);
            s->dnn = NULL;
            return kmux_cuda_fail_dnn(st, cs, "kmux_conv2d_execute: cudnnSetStream on cuda:%d",
                                      s->device);
        }
    }
    *dnn = s->dnn;
    return KMUX_OK;
}
