/*
 * hip_mem.c - memory, streams and events of the HIP backend. Every call runs with the device
 * made current for the thread and the caller's device restored (kmux_hip_enter / leave).
 * kmux_stream_wrap_native adopts a hipStream_t (NULL: the null stream) without owning it.
 * ROCm 7 (HIP API 7.0 changes): hipMemcpyAsync, hipEventRecord and hipStreamDestroy no longer
 * check the stream handle (an invalid one faults, as on CUDA, instead of answering
 * hipErrorContextIsDestroyed): the streams passed here are ones this file created, or a wrapped
 * native stream, which the caller must keep alive as long as its kmux_stream (as with CUDA).
 * hipFree of hipMalloc memory still synchronises (only hipMallocAsync memory lost that), as
 * kmux_free relies on.
 */
#include <stdlib.h>

#include "hip_backend.h"

#define ENTER(st, dev, fn)                                                                         \
    kmux_hip_guard g_;                                                                             \
    do {                                                                                           \
        kmux_status ks_ = kmux_hip_enter((st), (dev), (fn), &g_);                                  \
        if (ks_ != KMUX_OK) return ks_;                                                            \
    } while (0)
#define LEAVE(st) kmux_hip_leave((st), &g_)

kmux_status kmux_hip_mem_alloc(void *state, int device, size_t bytes, void **ptr) {
    kmux_hip_state *st = state;
    if (bytes == 0) {
        *ptr = NULL;
        return KMUX_OK;
    }
    ENTER(st, device, "kmux_malloc");
    void *p = NULL;
    kmux_hip_error e = st->api.hipMalloc(&p, bytes);
    LEAVE(st);
    if (e != KMUX_HIP_SUCCESS)
        return kmux_hip_fail(st, e, "kmux_malloc: hipMalloc(%zu bytes) on hip:%d", bytes, device);
    *ptr = p;
    return KMUX_OK;
}

kmux_status kmux_hip_mem_free(void *state, int device, void *ptr) {
    kmux_hip_state *st = state;
    if (!ptr) return KMUX_OK;
    ENTER(st, device, "kmux_free");
    kmux_hip_error e = st->api.hipFree(ptr);
    LEAVE(st);
    if (e != KMUX_HIP_SUCCESS)
        return kmux_hip_fail(st, e, "kmux_free: hipFree(%p) on hip:%d", ptr, device);
    return KMUX_OK;
}

kmux_status kmux_hip_stream_create(void *state, int device, void *native, int own, void **stream) {
    kmux_hip_state *st = state;
    kmux_hip_stream_t *s = calloc(1, sizeof *s);
    if (!s) return st->host->set_error(KMUX_ERR_OUT_OF_MEMORY, "kmux_stream_create: out of memory");
    s->device = device;
    s->own = own;
    if (own) {
        kmux_hip_guard g;
        kmux_status ks = kmux_hip_enter(st, device, "kmux_stream_create", &g);
        if (ks != KMUX_OK) {
            free(s);
            return ks;
        }
        /* a blocking stream: ordered with the null stream, as the CUDA plugin's streams */
        kmux_hip_error e = st->api.hipStreamCreate(&s->stream);
        kmux_hip_leave(st, &g);
        if (e != KMUX_HIP_SUCCESS) {
            free(s);
            return kmux_hip_fail(st, e, "kmux_stream_create: hipStreamCreate on hip:%d", device);
        }
    } else {
        s->stream = native;
    }
    *stream = s;
    return KMUX_OK;
}

kmux_status kmux_hip_stream_destroy(void *state, void *stream) {
    kmux_hip_state *st = state;
    kmux_hip_stream_t *s = stream;
    if (!s) return KMUX_OK;
    ENTER(st, s->device, "kmux_stream_destroy");
    kmux_hip_error e = st->api.hipStreamSynchronize(s->stream);
    kmux_hip_rocblas_stream_release(st, s);
    kmux_hip_error e2 = s->own ? st->api.hipStreamDestroy(s->stream) : KMUX_HIP_SUCCESS;
    LEAVE(st);
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

kmux_status kmux_hip_stream_synchronize(void *state, void *stream) {
    kmux_hip_state *st = state;
    kmux_hip_stream_t *s = stream;
    ENTER(st, s->device, "kmux_stream_synchronize");
    kmux_hip_error e = st->api.hipStreamSynchronize(s->stream);
    LEAVE(st);
    if (e != KMUX_HIP_SUCCESS)
        return kmux_hip_fail(st, e, "kmux_stream_synchronize: hipStreamSynchronize on hip:%d",
                             s->device);
    return KMUX_OK;
}

kmux_status kmux_hip_mem_copy(void *state, void *stream, void *dst, const void *src, size_t bytes,
                              kmux_memcpy_kind kind) {
    kmux_hip_state *st = state;
    kmux_hip_stream_t *s = stream;
    if (bytes == 0) return KMUX_OK;
    ENTER(st, s->device, "kmux_memcpy");
    /* kmux_memcpy_kind has hipMemcpyKind's numbering (host-to-host 0 ... device-to-device 3) */
    kmux_hip_error e = st->api.hipMemcpyAsync(dst, src, bytes, (int)kind, s->stream);
    LEAVE(st);
    if (e != KMUX_HIP_SUCCESS)
        return kmux_hip_fail(
            st, e, "kmux_memcpy: hipMemcpyAsync(dst=%p, src=%p, %zu bytes, kind=%d) on hip:%d", dst,
            src, bytes, (int)kind, s->device);
    return KMUX_OK;
}

kmux_status kmux_hip_mem_set(void *state, void *stream, void *dst, int value, size_t bytes) {
    kmux_hip_state *st = state;
    kmux_hip_stream_t *s = stream;
    if (bytes == 0) return KMUX_OK;
    ENTER(st, s->device, "kmux_memset");
    kmux_hip_error e = st->api.hipMemsetAsync(dst, value, bytes, s->stream);
    LEAVE(st);
    if (e != KMUX_HIP_SUCCESS)
        return kmux_hip_fail(st, e,
                             "kmux_memset: hipMemsetAsync(dst=%p, value=%d, %zu bytes) on hip:%d",
                             dst, value, bytes, s->device);
    return KMUX_OK;
}

kmux_status kmux_hip_event_create(void *state, int device, void **event) {
    kmux_hip_state *st = state;
    kmux_hip_event_t *ev = calloc(1, sizeof *ev);
    if (!ev) return st->host->set_error(KMUX_ERR_OUT_OF_MEMORY, "kmux_event_create: out of memory");
    ev->device = device;
    kmux_hip_guard g;
    kmux_status ks = kmux_hip_enter(st, device, "kmux_event_create", &g);
    if (ks != KMUX_OK) {
        free(ev);
        return ks;
    }
    kmux_hip_error e = st->api.hipEventCreate(&ev->event);
    kmux_hip_leave(st, &g);
    if (e != KMUX_HIP_SUCCESS) {
        free(ev);
        return kmux_hip_fail(st, e, "kmux_event_create: hipEventCreate on hip:%d", device);
    }
    *event = ev;
    return KMUX_OK;
}

kmux_status kmux_hip_event_destroy(void *state, void *event) {
    kmux_hip_state *st = state;
    kmux_hip_event_t *ev = event;
    if (!ev) return KMUX_OK;
    ENTER(st, ev->device, "kmux_event_destroy");
    kmux_hip_error e = st->api.hipEventDestroy(ev->event);
    LEAVE(st);
    free(ev);
    if (e != KMUX_HIP_SUCCESS) return kmux_hip_fail(st, e, "kmux_event_destroy: hipEventDestroy");
    return KMUX_OK;
}

kmux_status kmux_hip_event_record(void *state, void *event, void *stream) {
    kmux_hip_state *st = state;
    kmux_hip_event_t *ev = event;
    kmux_hip_stream_t *s = stream;
    ENTER(st, ev->device, "kmux_event_record");
    kmux_hip_error e = st->api.hipEventRecord(ev->event, s->stream);
    LEAVE(st);
    if (e != KMUX_HIP_SUCCESS)
        return kmux_hip_fail(st, e, "kmux_event_record: hipEventRecord on hip:%d", ev->device);
    return KMUX_OK;
}

kmux_status kmux_hip_stream_wait_event(void *state, void *stream, void *event) {
    kmux_hip_state *st = state;
    kmux_hip_stream_t *s = stream;
    kmux_hip_event_t *ev = event;
    ENTER(st, s->device, "kmux_stream_wait_event"); /* the event may be another device's */
    kmux_hip_error e = st->api.hipStreamWaitEvent(s->stream, ev->event, 0);
    LEAVE(st);
    if (e != KMUX_HIP_SUCCESS)
        return kmux_hip_fail(st, e,
                             "kmux_stream_wait_event: hipStreamWaitEvent on hip:%d (event of "
                             "hip:%d)",
                             s->device, ev->device);
    return KMUX_OK;
}

kmux_status kmux_hip_event_synchronize(void *state, void *event) {
    kmux_hip_state *st = state;
    kmux_hip_event_t *ev = event;
    kmux_hip_error e = st->api.hipEventSynchronize(ev->event);
    if (e != KMUX_HIP_SUCCESS)
        return kmux_hip_fail(st, e, "kmux_event_synchronize: hipEventSynchronize on hip:%d",
                             ev->device);
    return KMUX_OK;
}

kmux_status kmux_hip_event_elapsed_ms(void *state, void *start, void *end, float *ms) {
    kmux_hip_state *st = state;
    const kmux_hip_event_t *a = start, *b = end;
    kmux_hip_error e = st->api.hipEventElapsedTime(ms, a->event, b->event);
    if (e != KMUX_HIP_SUCCESS)
        return kmux_hip_fail(st, e, "kmux_event_elapsed_ms: hipEventElapsedTime");
    return KMUX_OK;
}
