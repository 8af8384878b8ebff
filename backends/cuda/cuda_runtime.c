/*
 * cuda_runtime.c - memory, streams (with their workspace and cuDNN handle)
 * and events of the CUDA backend.
 */
#include <stdlib.h>

#include "cuda_backend.h"

#define STATE(p) ((kmux_cuda_state *)(p))

/* ---- memory ---- */

kmux_status kmux_cuda_mem_alloc(void *state, int device, size_t bytes, void **ptr) {
    kmux_cuda_state *st = STATE(state);
    if (bytes == 0) {
        *ptr = NULL;
        return KMUX_OK;
    }
    kmux_cuda_guard g;
    kmux_status s = kmux_cuda_enter(st, device, "kmux_malloc", &g);
    if (s != KMUX_OK) return s;
    void *p = NULL;
    CUresult e = kmux_cu_malloc(&p, bytes);
    kmux_cuda_leave(&g);
    if (e != CUDA_SUCCESS)
        return kmux_cuda_fail(st, e, "kmux_malloc: cuMemAlloc(%zu bytes) on cuda:%d", bytes,
                              device);
    *ptr = p;
    return KMUX_OK;
}

kmux_status kmux_cuda_mem_free(void *state, int device, void *ptr) {
    kmux_cuda_state *st = STATE(state);
    if (!ptr) return KMUX_OK;
    kmux_cuda_guard g;
    kmux_status s = kmux_cuda_enter(st, device, "kmux_free", &g);
    if (s != KMUX_OK) return s;
    CUresult e = kmux_cu_free(ptr);
    kmux_cuda_leave(&g);
    if (e != CUDA_SUCCESS)
        return kmux_cuda_fail(st, e, "kmux_free: cuMemFree(%p) on cuda:%d", ptr, device);
    return KMUX_OK;
}

/* ---- streams ---- */

kmux_status kmux_cuda_stream_create(void *state, int device, void *native, int own, void **stream) {
    kmux_cuda_state *st = STATE(state);
    kmux_cuda_stream *s = calloc(1, sizeof *s);
    if (!s) return st->host->set_error(KMUX_ERR_OUT_OF_MEMORY, "kmux_stream_create: out of memory");
    s->device = device;
    s->own = own;
    if (own) {
        kmux_cuda_guard g;
        kmux_status ks = kmux_cuda_enter(st, device, "kmux_stream_create", &g);
        if (ks != KMUX_OK) {
            free(s);
            return ks;
        }
        /* A blocking stream (default flags) stays ordered with the legacy default stream, so
         * work a caller queued there with plain CUDA calls is seen by kmux. */
        CUresult e = cuStreamCreate(&s->stream, CU_STREAM_DEFAULT);
        kmux_cuda_leave(&g);
        if (e != CUDA_SUCCESS) {
            free(s);
            return kmux_cuda_fail(st, e, "kmux_stream_create: cuStreamCreate on cuda:%d", device);
        }
    } else {
        s->stream = (CUstream)native;
    }
    *stream = s;
    return KMUX_OK;
}

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

kmux_status kmux_cuda_stream_synchronize(void *state, void *stream) {
    kmux_cuda_state *st = STATE(state);
    kmux_cuda_stream *s = stream;
    kmux_cuda_guard g;
    kmux_status ks = kmux_cuda_enter(st, s->device, "kmux_stream_synchronize", &g);
    if (ks != KMUX_OK) return ks;
    CUresult e = cuStreamSynchronize(s->stream);
    kmux_cuda_leave(&g);
    if (e != CUDA_SUCCESS)
        return kmux_cuda_fail(st, e, "kmux_stream_synchronize: cuStreamSynchronize on cuda:%d",
                              s->device);
    return KMUX_OK;
}

kmux_status kmux_cuda_stream_workspace(kmux_cuda_state *st, kmux_cuda_stream *s, size_t bytes,
                                       const char *fn, void **ws) {
    if (bytes == 0) {
        *ws = NULL;
        return KMUX_OK;
    }
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

kmux_status kmux_cuda_mem_copy(void *state, void *stream, void *dst, const void *src, size_t bytes,
                               kmux_memcpy_kind kind) {
    (void)kind; /* unified addressing: the driver tells host from device pointers */
    kmux_cuda_state *st = STATE(state);
    kmux_cuda_stream *s = stream;
    if (bytes == 0) return KMUX_OK;
    kmux_cuda_guard g;
    kmux_status ks = kmux_cuda_enter(st, s->device, "kmux_memcpy", &g);
    if (ks != KMUX_OK) return ks;
    CUresult e = kmux_cu_memcpy_async(dst, src, bytes, s->stream);
    kmux_cuda_leave(&g);
    if (e != CUDA_SUCCESS)
        return kmux_cuda_fail(
            st, e, "kmux_memcpy: cuMemcpyAsync(dst=%p, src=%p, %zu bytes, kind=%d) on cuda:%d", dst,
            src, bytes, (int)kind, s->device);
    return KMUX_OK;
}

kmux_status kmux_cuda_mem_set(void *state, void *stream, void *dst, int value, size_t bytes) {
    kmux_cuda_state *st = STATE(state);
    kmux_cuda_stream *s = stream;
    if (bytes == 0) return KMUX_OK;
    kmux_cuda_guard g;
    kmux_status ks = kmux_cuda_enter(st, s->device, "kmux_memset", &g);
    if (ks != KMUX_OK) return ks;
    CUresult e = kmux_cu_memset_async(dst, value, bytes, s->stream);
    kmux_cuda_leave(&g);
    if (e != CUDA_SUCCESS)
        return kmux_cuda_fail(
            st, e, "kmux_memset: cuMemsetD8Async(dst=%p, value=%d, %zu bytes) on cuda:%d", dst,
            value, bytes, s->device);
    return KMUX_OK;
}

/* ---- events ---- */

kmux_status kmux_cuda_event_create(void *state, int device, void **event) {
    kmux_cuda_state *st = STATE(state);
    kmux_cuda_event *ev = calloc(1, sizeof *ev);
    if (!ev) return st->host->set_error(KMUX_ERR_OUT_OF_MEMORY, "kmux_event_create: out of memory");
    ev->device = device;
    kmux_cuda_guard g;
    kmux_status ks = kmux_cuda_enter(st, device, "kmux_event_create", &g);
    if (ks != KMUX_OK) {
        free(ev);
        return ks;
    }
    CUresult e = cuEventCreate(&ev->event, CU_EVENT_DEFAULT);
    kmux_cuda_leave(&g);
    if (e != CUDA_SUCCESS) {
        free(ev);
        return kmux_cuda_fail(st, e, "kmux_event_create: cuEventCreate on cuda:%d", device);
    }
    *event = ev;
    return KMUX_OK;
}

kmux_status kmux_cuda_event_destroy(void *state, void *event) {
    kmux_cuda_state *st = STATE(state);
    kmux_cuda_event *ev = event;
    if (!ev) return KMUX_OK;
    kmux_cuda_guard g;
    kmux_status ks = kmux_cuda_enter(st, ev->device, "kmux_event_destroy", &g);
    CUresult e = cuEventDestroy(ev->event);
    if (ks == KMUX_OK) kmux_cuda_leave(&g);
    free(ev);
    if (e != CUDA_SUCCESS) return kmux_cuda_fail(st, e, "kmux_event_destroy: cuEventDestroy");
    return KMUX_OK;
}

kmux_status kmux_cuda_event_record(void *state, void *event, void *stream) {
    kmux_cuda_state *st = STATE(state);
    kmux_cuda_event *ev = event;
    kmux_cuda_stream *s = stream;
    /* The stream's device is the one entered (the core has checked that the event's is the
     * same); an adopted stream keeps the device it was adopted on. */
    kmux_cuda_guard g;
    kmux_status ks = kmux_cuda_enter(st, s->device, "kmux_event_record", &g);
    if (ks != KMUX_OK) return ks;
    CUresult e = cuEventRecord(ev->event, s->stream);
    kmux_cuda_leave(&g);
    if (e != CUDA_SUCCESS)
        return kmux_cuda_fail(st, e, "kmux_event_record: cuEventRecord on cuda:%d", s->device);
    return KMUX_OK;
}

kmux_status kmux_cuda_stream_wait_event(void *state, void *stream, void *event) {
    kmux_cuda_state *st = STATE(state);
    kmux_cuda_stream *s = stream;
    kmux_cuda_event *ev = event;
    /* under the stream's device; the event may be another device's (CUDA allows it) */
    kmux_cuda_guard g;
    kmux_status ks = kmux_cuda_enter(st, s->device, "kmux_stream_wait_event", &g);
    if (ks != KMUX_OK) return ks;
    CUresult e = cuStreamWaitEvent(s->stream, ev->event, 0);
    kmux_cuda_leave(&g);
    if (e != CUDA_SUCCESS)
        return kmux_cuda_fail(st, e,
                              "kmux_stream_wait_event: cuStreamWaitEvent on cuda:%d (event of "
                              "cuda:%d)",
                              s->device, ev->device);
    return KMUX_OK;
}

kmux_status kmux_cuda_event_synchronize(void *state, void *event) {
    kmux_cuda_state *st = STATE(state);
    kmux_cuda_event *ev = event;
    /* under the event's device: a thread with no current context, or another GPU's, must not
     * reach the runtime with the wrong one */
    kmux_cuda_guard g;
    kmux_status ks = kmux_cuda_enter(st, ev->device, "kmux_event_synchronize", &g);
    if (ks != KMUX_OK) return ks;
    CUresult e = cuEventSynchronize(ev->event);
    kmux_cuda_leave(&g);
    if (e != CUDA_SUCCESS)
        return kmux_cuda_fail(st, e, "kmux_event_synchronize: cuEventSynchronize on cuda:%d",
                              ev->device);
    return KMUX_OK;
}

kmux_status kmux_cuda_event_elapsed_ms(void *state, void *start, void *end, float *ms) {
    kmux_cuda_state *st = STATE(state);
    const kmux_cuda_event *a = start, *b = end;
    float t = 0.0f;
    kmux_cuda_guard g;
    kmux_status ks = kmux_cuda_enter(st, a->device, "kmux_event_elapsed_ms", &g);
    if (ks != KMUX_OK) return ks;
    CUresult e = cuEventElapsedTime(&t, a->event, b->event);
    kmux_cuda_leave(&g);
    if (e != CUDA_SUCCESS)
        return kmux_cuda_fail(st, e,
                              "kmux_event_elapsed_ms: cuEventElapsedTime on cuda:%d (are both "
                              "events recorded and complete?)",
                              a->device);
    *ms = t;
    return KMUX_OK;
}
