/*
 * gpu_runtime.c - memory (device and pinned host), streams and events of both GPU plugins
 * (gpu_runtime.h), on their vendor calls (kmux_gpu_plugin): the device entered around every call (a
 * thread with no current context, or another GPU's, never reaches the runtime with the wrong one),
 * and every failure named with the vendor call and the device.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpu_runtime.h"
#include "gpu_kernels.h"
#include "kmux_family.h"
#include "kmux_sys_alloc.h"

#if defined(__GNUC__)
#define KMUX_GPU_PRINTF(f, a) __attribute__((format(printf, f, a)))
#else
#define KMUX_GPU_PRINTF(f, a)
#endif

/* The status of vendor error e, the message "<printf-style what>: <the vendor's form>". */
KMUX_GPU_PRINTF(3, 0)
static kmux_status failv(void *state, int e, const char *fmt, va_list ap) {
    const kmux_gpu_plugin *p = state;
    char what[320];
    vsnprintf(what, sizeof what, fmt, ap);
    return p->fail(state, e, what);
}

KMUX_GPU_PRINTF(3, 4)
static kmux_status failed(void *state, int e, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    kmux_status s = failv(state, e, fmt, ap);
    va_end(ap);
    return s;
}

/* Leaves the device entered with `guard`; then KMUX_OK, or when the vendor call failed (e != 0)
 * what failed() answers. */
KMUX_GPU_PRINTF(4, 5)
static kmux_status left(void *state, int guard, int e, const char *fmt, ...) {
    const kmux_gpu_plugin *p = state;
    p->leave(state, guard);
    if (e == 0) return KMUX_OK;
    va_list ap;
    va_start(ap, fmt);
    kmux_status s = failv(state, e, fmt, ap);
    va_end(ap);
    return s;
}

kmux_status kmux_gpu_slot_mem_alloc(void *state, int device, size_t bytes, void **ptr) {
    const kmux_gpu_plugin *p = state;
    if (bytes == 0) {
        *ptr = NULL;
        return KMUX_OK;
    }
    int guard = 0;
    kmux_status s = p->enter(state, device, "kmux_malloc", &guard);
    if (s != KMUX_OK) return s;
    void *q = NULL;
    s = left(state, guard, p->mem_alloc(state, &q, bytes), "kmux_malloc: %s(%zu bytes) on %s:%d",
             p->mem_alloc_name, bytes, p->vendor, device);
    if (s == KMUX_OK) *ptr = q;
    return s;
}

kmux_status kmux_gpu_slot_mem_free(void *state, int device, void *ptr) {
    const kmux_gpu_plugin *p = state;
    if (!ptr) return KMUX_OK;
    int guard = 0;
    kmux_status s = p->enter(state, device, "kmux_free", &guard);
    if (s != KMUX_OK) return s;
    return left(state, guard, p->mem_free(state, ptr), "kmux_free: %s(%p) on %s:%d",
                p->mem_free_name, ptr, p->vendor, device);
}

kmux_status kmux_gpu_slot_host_alloc(void *state, int device, size_t bytes, void **ptr) {
    const kmux_gpu_plugin *p = state;
    int guard = 0;
    kmux_status s = p->enter(state, device, "kmux_host_malloc", &guard);
    if (s != KMUX_OK) return s;
    void *q = NULL;
    s = left(state, guard, p->host_alloc(state, &q, bytes),
             "kmux_host_malloc: %s(%zu bytes) on %s:%d", p->host_alloc_name, bytes, p->vendor,
             device);
    if (s == KMUX_OK) *ptr = q;
    return s;
}

kmux_status kmux_gpu_slot_host_free(void *state, int device, void *ptr) {
    const kmux_gpu_plugin *p = state;
    int guard = 0;
    kmux_status s = p->enter(state, device, "kmux_host_free", &guard);
    if (s != KMUX_OK) return s;
    return left(state, guard, p->host_free(state, ptr), "kmux_host_free: %s(%p) on %s:%d",
                p->host_free_name, ptr, p->vendor, device);
}

kmux_status kmux_gpu_slot_stream_create(void *state, int device, void *native, int own,
                                        void **stream) {
    const kmux_gpu_plugin *p = state;
    void *obj = kmux_sys_calloc(1, p->stream_size);
    if (!obj) return p->error(state, KMUX_ERR_OUT_OF_MEMORY, "kmux_stream_create: out of memory");
    *(int *)obj = device;
    int guard = 0;
    kmux_status s = own ? p->enter(state, device, "kmux_stream_create", &guard) : KMUX_OK;
    if (s != KMUX_OK) {
        free(obj);
        return s;
    }
    int e = p->stream_init(state, obj, own, native);
    if (own) p->leave(state, guard);
    if (e != 0) {
        free(obj);
        return failed(state, e, "kmux_stream_create: %s on %s:%d", p->stream_new_name, p->vendor,
                      device);
    }
    *stream = obj;
    return KMUX_OK;
}

kmux_status kmux_gpu_slot_stream_synchronize(void *state, void *stream) {
    const kmux_gpu_plugin *p = state;
    int device = kmux_gpu_stream_device(stream), guard = 0;
    kmux_status s = p->enter(state, device, "kmux_stream_synchronize", &guard);
    if (s != KMUX_OK) return s;
    return left(state, guard, p->stream_sync(state, stream), "kmux_stream_synchronize: %s on %s:%d",
                p->stream_sync_name, p->vendor, device);
}

kmux_status kmux_gpu_slot_mem_copy(void *state, void *stream, void *dst, const void *src,
                                   size_t bytes, kmux_memcpy_kind kind) {
    const kmux_gpu_plugin *p = state;
    if (bytes == 0) return KMUX_OK;
    int device = kmux_gpu_stream_device(stream), guard = 0;
    kmux_status s = p->enter(state, device, "kmux_memcpy", &guard);
    if (s != KMUX_OK) return s;
    return left(state, guard, p->memcpy_async(state, stream, dst, src, bytes, (int)kind),
                "kmux_memcpy: %s(dst=%p, src=%p, %zu bytes, kind=%d) on %s:%d", p->memcpy_name, dst,
                src, bytes, (int)kind, p->vendor, device);
}

kmux_status kmux_gpu_slot_mem_set(void *state, void *stream, void *dst, int value, size_t bytes) {
    if (bytes == 0) return KMUX_OK;
    kmux_gpu_launcher l = kmux_gpu_plugin_launcher(state, stream);
    return l.memset_async(&l, dst, value, bytes, "kmux_memset");
}

kmux_status kmux_gpu_slot_event_create(void *state, int device, void **event) {
    const kmux_gpu_plugin *p = state;
    kmux_gpu_event *ev = kmux_sys_calloc(1, sizeof *ev);
    if (!ev) return p->error(state, KMUX_ERR_OUT_OF_MEMORY, "kmux_event_create: out of memory");
    ev->device = device;
    int guard = 0;
    kmux_status s = p->enter(state, device, "kmux_event_create", &guard);
    if (s != KMUX_OK) {
        free(ev);
        return s;
    }
    int e = p->event_new(state, &ev->native);
    p->leave(state, guard);
    if (e != 0) {
        free(ev);
        return failed(state, e, "kmux_event_create: %s on %s:%d", p->event_new_name, p->vendor,
                      device);
    }
    *event = ev;
    return KMUX_OK;
}

kmux_status kmux_gpu_slot_event_destroy(void *state, void *event) {
    const kmux_gpu_plugin *p = state;
    kmux_gpu_event *ev = event;
    if (!ev) return KMUX_OK;
    int device = ev->device, guard = 0;
    /* released even where the device cannot be entered (gone, or a forked child): nothing of
     * the event is lost, and the vendor's call needs no current device for it */
    kmux_status s = p->enter(state, device, "kmux_event_destroy", &guard);
    int e = p->event_free(state, ev->native);
    if (s == KMUX_OK) p->leave(state, guard);
    free(ev);
    if (e != 0)
        return failed(state, e, "kmux_event_destroy: %s on %s:%d", p->event_free_name, p->vendor,
                      device);
    return KMUX_OK;
}

kmux_status kmux_gpu_slot_event_record(void *state, void *event, void *stream) {
    const kmux_gpu_plugin *p = state;
    kmux_gpu_event *ev = event;
    /* The stream's device is the one entered (the core has checked that the event's is the
     * same); an adopted stream keeps the device it was adopted on. */
    int device = kmux_gpu_stream_device(stream), guard = 0;
    kmux_status s = p->enter(state, device, "kmux_event_record", &guard);
    if (s != KMUX_OK) return s;
    return left(state, guard, p->event_record(state, ev->native, stream),
                "kmux_event_record: %s on %s:%d", p->event_record_name, p->vendor, device);
}

kmux_status kmux_gpu_slot_stream_wait_event(void *state, void *stream, void *event) {
    const kmux_gpu_plugin *p = state;
    kmux_gpu_event *ev = event;
    /* under the stream's device; the event may be another device's (both vendors allow it) */
    int device = kmux_gpu_stream_device(stream), guard = 0;
    kmux_status s = p->enter(state, device, "kmux_stream_wait_event", &guard);
    if (s != KMUX_OK) return s;
    return left(state, guard, p->stream_wait(state, stream, ev->native),
                "kmux_stream_wait_event: %s on %s:%d (event of %s:%d)", p->stream_wait_name,
                p->vendor, device, p->vendor, ev->device);
}

kmux_status kmux_gpu_slot_event_synchronize(void *state, void *event) {
    const kmux_gpu_plugin *p = state;
    kmux_gpu_event *ev = event;
    int guard = 0;
    kmux_status s = p->enter(state, ev->device, "kmux_event_synchronize", &guard);
    if (s != KMUX_OK) return s;
    return left(state, guard, p->event_sync(state, ev->native),
                "kmux_event_synchronize: %s on %s:%d", p->event_sync_name, p->vendor, ev->device);
}

kmux_status kmux_gpu_slot_event_elapsed_ms(void *state, void *start, void *end, float *ms) {
    const kmux_gpu_plugin *p = state;
    const kmux_gpu_event *a = start, *b = end;
    float t = 0.0f;
    int guard = 0;
    kmux_status s = p->enter(state, a->device, "kmux_event_elapsed_ms", &guard);
    if (s != KMUX_OK) return s;
    s = left(state, guard, p->event_elapsed(state, &t, a->native, b->native),
             "kmux_event_elapsed_ms: %s on %s:%d (are both events recorded and complete?)",
             p->event_elapsed_name, p->vendor, a->device);
    if (s == KMUX_OK) *ms = t;
    return s;
}

kmux_status kmux_gpu_plan_copy(void *state, const char *fn, const void *desc, size_t size,
                               void **plan, int *impl_count) {
    void *p = kmux_sys_malloc(size);
    if (!p) {
        const kmux_gpu_plugin *g = state;
        return g->host->set_error(KMUX_ERR_OUT_OF_MEMORY, "%s: %s: out of memory (%zu bytes)",
                                  g->vendor, fn, size);
    }
    memcpy(p, desc, size);
    *plan = p;
    *impl_count = 1;
    return KMUX_OK;
}

kmux_status kmux_gpu_kernels_info(void *state, const void *plan, int impl, kmux_plan_info *info) {
    info->impl = "kmux:gpu";
    info->effective_compute = KMUX_COMPUTE_F32;
    info->workspace_bytes = 0;
    info->deterministic = 1;
    return KMUX_OK;
}

void kmux_gpu_plan_free(void *state, void *plan) {
    free(plan);
}

void kmux_gpu_families_caps(kmux_device_caps *caps) {
    if (KMUX_CAPS_HAS(caps, eltwise)) kmux_gpu_eltwise_caps(&caps->eltwise);
    if (KMUX_CAPS_HAS(caps, optimizer)) kmux_gpu_optimizer_caps(&caps->optimizer);
    if (KMUX_CAPS_HAS(caps, softmax)) kmux_gpu_softmax_caps(&caps->softmax);
    if (KMUX_CAPS_HAS(caps, binary)) kmux_gpu_binary_caps(&caps->binary);
    if (KMUX_CAPS_HAS(caps, reduction)) kmux_gpu_reduction_caps(&caps->reduction);
    if (KMUX_CAPS_HAS(caps, pooling)) kmux_gpu_pooling_caps(&caps->pooling);
}

kmux_status kmux_gpu_caller_workspace(const kmux_backend_host *host, const char *vendor,
                                      const char *fn, size_t bytes, void *caller,
                                      size_t caller_bytes, void **ws) {
    *ws = caller;
    if (caller_bytes >= bytes) return KMUX_OK;
    return host->set_error(KMUX_ERR_WORKSPACE,
                           "%s: backend %s: this call needs %zu bytes of workspace, "
                           "args->workspace_bytes = %zu",
                           fn, vendor, bytes, caller_bytes);
}
