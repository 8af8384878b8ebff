/*
 * memory.c - device memory, streams and events: argument checks, then the backend's slot.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "internal.h"
#include "kmux_sys_alloc.h"

#define OPS(dev) ((dev)->backend->ops)
#define STATE(dev) ((dev)->backend->state)

#define CHECK_HANDLE KMUX_CHECK_HANDLE

/* Backends set their own message on failure; make sure there always is one. */
static kmux_status checked(kmux_status st, const char *fn, const kmux_device *dev) {
    if (st != KMUX_OK && kmux_last_error()[0] == '\0')
        kmux_set_error(st, "%s: backend %s failed on %s with %s", fn, dev->backend->name,
                       dev->props.id, kmux_status_str(st));
    return st;
}

kmux_status kmux_malloc(kmux_device *dev, size_t bytes, void **ptr) {
    kmux_clear_error();
    if (!dev || !ptr)
        return kmux_set_error(KMUX_ERR_INVALID_ARGUMENT, "kmux_malloc: %s is NULL",
                              !dev ? "dev" : "ptr");
    CHECK_HANDLE("kmux_malloc", "dev", dev, KMUX_HANDLE_DEVICE);
    if (bytes == 0) {
        *ptr = NULL;
        return KMUX_OK;
    }
    kmux_status st = OPS(dev)->mem_alloc(STATE(dev), dev->index, bytes, ptr);
    if (st != KMUX_OK) return checked(st, "kmux_malloc", dev);
    st = kmux_alloc_record_add(dev, *ptr, bytes, KMUX_ALLOC_DEVICE);
    if (st != KMUX_OK) {
        OPS(dev)->mem_free(STATE(dev), dev->index, *ptr);
        *ptr = NULL;
    }
    return st;
}

kmux_status kmux_free(kmux_device *dev, void *ptr) {
    kmux_clear_error();
    if (!dev) return kmux_set_error(KMUX_ERR_INVALID_ARGUMENT, "kmux_free: dev is NULL");
    CHECK_HANDLE("kmux_free", "dev", dev, KMUX_HANDLE_DEVICE);
    if (!ptr) return KMUX_OK;
    size_t bytes = 0;
    kmux_status st = kmux_alloc_record_take(dev, ptr, KMUX_ALLOC_DEVICE, "kmux_free", &bytes);
    if (st != KMUX_OK) return st;
    st = OPS(dev)->mem_free(STATE(dev), dev->index, ptr);
    if (st != KMUX_OK) { /* still the caller's: it stays recorded */
        kmux_status keep = checked(st, "kmux_free", dev);
        kmux_alloc_record_add(dev, ptr, bytes, KMUX_ALLOC_DEVICE);
        return keep;
    }
    return KMUX_OK;
}

/* host_alloc / host_free are optional slots of ABI 2.2: absent when NULL or beyond the
 * plugin's struct_size (older plugins). */
static int has_host_slots(const kmux_backend_ops *ops) {
    return KMUX_OPS_HAS(ops, host_alloc) && KMUX_OPS_HAS(ops, host_free);
}

static kmux_status host_unsupported(const char *fn, const kmux_device *dev) {
    return kmux_set_error(KMUX_ERR_UNSUPPORTED,
                          "%s: backend %s has no page-locked host allocation for %s (plugin "
                          "older than ABI 2.2)",
                          fn, dev->backend->name, dev->props.id);
}

kmux_status kmux_host_malloc(kmux_device *dev, size_t bytes, void **ptr) {
    kmux_clear_error();
    if (!dev || !ptr)
        return kmux_set_error(KMUX_ERR_INVALID_ARGUMENT, "kmux_host_malloc: %s is NULL",
                              !dev ? "dev" : "ptr");
    CHECK_HANDLE("kmux_host_malloc", "dev", dev, KMUX_HANDLE_DEVICE);
    *ptr = NULL;
    if (bytes == 0) return KMUX_OK;
    if (has_host_slots(OPS(dev))) {
        kmux_status st = OPS(dev)->host_alloc(STATE(dev), dev->index, bytes, ptr);
        if (st != KMUX_OK) return checked(st, "kmux_host_malloc", dev);
        st = kmux_alloc_record_add(dev, *ptr, bytes, KMUX_ALLOC_HOST);
        if (st != KMUX_OK) {
            OPS(dev)->host_free(STATE(dev), dev->index, *ptr);
            *ptr = NULL;
        }
        return st;
    }
    if (!dev->props.is_host) return host_unsupported("kmux_host_malloc", dev);
    if (bytes > SIZE_MAX - 63)
        return kmux_set_error(KMUX_ERR_OUT_OF_MEMORY, "kmux_host_malloc: bytes = %zu is too large",
                              bytes);
    void *p = kmux_sys_aligned_alloc(64, (bytes + 63) / 64 * 64);
    if (!p)
        return kmux_set_error(KMUX_ERR_OUT_OF_MEMORY, "kmux_host_malloc: out of memory (%zu bytes)",
                              bytes);
    kmux_status st = kmux_alloc_record_add(dev, p, bytes, KMUX_ALLOC_HOST);
    if (st != KMUX_OK) {
        free(p);
        return st;
    }
    *ptr = p;
    return KMUX_OK;
}

kmux_status kmux_host_free(kmux_device *dev, void *ptr) {
    kmux_clear_error();
    if (!dev) return kmux_set_error(KMUX_ERR_INVALID_ARGUMENT, "kmux_host_free: dev is NULL");
    CHECK_HANDLE("kmux_host_free", "dev", dev, KMUX_HANDLE_DEVICE);
    if (!ptr) return KMUX_OK;
    if (!has_host_slots(OPS(dev)) && !dev->props.is_host)
        return host_unsupported("kmux_host_free", dev);
    size_t bytes = 0;
    kmux_status st = kmux_alloc_record_take(dev, ptr, KMUX_ALLOC_HOST, "kmux_host_free", &bytes);
    if (st != KMUX_OK) return st;
    if (has_host_slots(OPS(dev))) {
        st = OPS(dev)->host_free(STATE(dev), dev->index, ptr);
        if (st != KMUX_OK) {
            kmux_status keep = checked(st, "kmux_host_free", dev);
            kmux_alloc_record_add(dev, ptr, bytes, KMUX_ALLOC_HOST);
            return keep;
        }
        return KMUX_OK;
    }
    free(ptr);
    return KMUX_OK;
}

kmux_status kmux_memcpy(kmux_stream *stream, void *dst, const void *src, size_t bytes,
                        kmux_memcpy_kind kind) {
    kmux_clear_error();
    CHECK_HANDLE("kmux_memcpy", "stream", stream, KMUX_HANDLE_STREAM);
    if (kind < KMUX_MEMCPY_HOST_TO_HOST || kind > KMUX_MEMCPY_DEVICE_TO_DEVICE)
        return kmux_set_error(KMUX_ERR_INVALID_ARGUMENT,
                              "kmux_memcpy: kind = %d is not a kmux_memcpy_kind", (int)kind);
    if (bytes == 0) return KMUX_OK;
    if (!dst || !src)
        return kmux_set_error(KMUX_ERR_INVALID_ARGUMENT, "kmux_memcpy: %s is NULL with bytes = %zu",
                              !dst ? "dst" : "src", bytes);
    kmux_device *dev = stream->dev;
    return checked(OPS(dev)->mem_copy(STATE(dev), stream->native, dst, src, bytes, kind),
                   "kmux_memcpy", dev);
}

kmux_status kmux_memset(kmux_stream *stream, void *dst, int value, size_t bytes) {
    kmux_clear_error();
    CHECK_HANDLE("kmux_memset", "stream", stream, KMUX_HANDLE_STREAM);
    if (bytes == 0) return KMUX_OK;
    if (!dst)
        return kmux_set_error(KMUX_ERR_INVALID_ARGUMENT,
                              "kmux_memset: dst is NULL with bytes = %zu", bytes);
    kmux_device *dev = stream->dev;
    return checked(OPS(dev)->mem_set(STATE(dev), stream->native, dst, value, bytes), "kmux_memset",
                   dev);
}

static kmux_status stream_new(kmux_device *dev, void *native, int own, kmux_stream **stream,
                              const char *fn) {
    CHECK_HANDLE(fn, "dev", dev, KMUX_HANDLE_DEVICE);
    kmux_stream *s = kmux_handle_alloc(KMUX_HANDLE_STREAM, sizeof *s);
    if (!s) return kmux_set_error(KMUX_ERR_OUT_OF_MEMORY, "%s: out of memory", fn);
    s->dev = dev;
    kmux_status st = OPS(dev)->stream_create(STATE(dev), dev->index, native, own, &s->native);
    if (st != KMUX_OK) {
        kmux_handle_release(s);
        return checked(st, fn, dev);
    }
    KMUX_LIVE_ADD(dev->ctx, live_streams, 1);
    *stream = s;
    return KMUX_OK;
}

kmux_status kmux_stream_create(kmux_device *dev, kmux_stream **stream) {
    kmux_clear_error();
    if (!dev || !stream)
        return kmux_set_error(KMUX_ERR_INVALID_ARGUMENT, "kmux_stream_create: %s is NULL",
                              !dev ? "dev" : "stream");
    return stream_new(dev, NULL, 1, stream, "kmux_stream_create");
}

kmux_status kmux_stream_wrap_native(kmux_device *dev, void *native_stream, kmux_stream **stream) {
    kmux_clear_error();
    if (!dev || !stream)
        return kmux_set_error(KMUX_ERR_INVALID_ARGUMENT, "kmux_stream_wrap_native: %s is NULL",
                              !dev ? "dev" : "stream");
    CHECK_HANDLE("kmux_stream_wrap_native", "dev", dev, KMUX_HANDLE_DEVICE);
    if (dev->props.is_host && native_stream)
        return kmux_set_error(KMUX_ERR_UNSUPPORTED,
                              "kmux_stream_wrap_native: device %s has no native streams "
                              "(native_stream must be NULL)",
                              dev->props.id);
    return stream_new(dev, native_stream, 0, stream, "kmux_stream_wrap_native");
}

kmux_status kmux_stream_synchronize(kmux_stream *stream) {
    kmux_clear_error();
    CHECK_HANDLE("kmux_stream_synchronize", "stream", stream, KMUX_HANDLE_STREAM);
    kmux_device *dev = stream->dev;
    kmux_trace(1, "sync,kmux_stream_synchronize on %s", dev->props.id);
    return checked(OPS(dev)->stream_synchronize(STATE(dev), stream->native),
                   "kmux_stream_synchronize", dev);
}

kmux_status kmux_stream_destroy(kmux_stream *stream) {
    kmux_clear_error();
    if (!stream) return KMUX_OK;
    CHECK_HANDLE("kmux_stream_destroy", "stream", stream, KMUX_HANDLE_STREAM);
    kmux_device *dev = stream->dev;
    kmux_status st = OPS(dev)->stream_destroy(STATE(dev), stream->native);
    kmux_handle_release(stream);
    KMUX_LIVE_ADD(dev->ctx, live_streams, -1);
    return checked(st, "kmux_stream_destroy", dev);
}

kmux_device *kmux_stream_device(const kmux_stream *stream) {
    kmux_clear_error();
    if (kmux_handle_check("kmux_stream_device", "stream", stream, KMUX_HANDLE_STREAM) != KMUX_OK)
        return NULL;
    return stream->dev;
}

kmux_status kmux_event_create(kmux_device *dev, kmux_event **event) {
    kmux_clear_error();
    if (!dev || !event)
        return kmux_set_error(KMUX_ERR_INVALID_ARGUMENT, "kmux_event_create: %s is NULL",
                              !dev ? "dev" : "event");
    CHECK_HANDLE("kmux_event_create", "dev", dev, KMUX_HANDLE_DEVICE);
    kmux_event *e = kmux_handle_alloc(KMUX_HANDLE_EVENT, sizeof *e);
    if (!e) return kmux_set_error(KMUX_ERR_OUT_OF_MEMORY, "kmux_event_create: out of memory");
    e->dev = dev;
    kmux_status st = OPS(dev)->event_create(STATE(dev), dev->index, &e->native);
    if (st != KMUX_OK) {
        kmux_handle_release(e);
        return checked(st, "kmux_event_create", dev);
    }
    KMUX_LIVE_ADD(dev->ctx, live_events, 1);
    *event = e;
    return KMUX_OK;
}

kmux_status kmux_event_record(kmux_event *event, kmux_stream *stream) {
    kmux_clear_error();
    if (!event || !stream)
        return kmux_set_error(KMUX_ERR_INVALID_ARGUMENT, "kmux_event_record: %s is NULL",
                              !event ? "event" : "stream");
    CHECK_HANDLE("kmux_event_record", "event", event, KMUX_HANDLE_EVENT);
    CHECK_HANDLE("kmux_event_record", "stream", stream, KMUX_HANDLE_STREAM);
    if (event->dev != stream->dev)
        return kmux_set_error(KMUX_ERR_INVALID_ARGUMENT,
                              "kmux_event_record: event is on %s but stream is on %s",
                              event->dev->props.id, stream->dev->props.id);
    kmux_status st =
        OPS(event->dev)->event_record(STATE(event->dev), event->native, stream->native);
    if (st == KMUX_OK) event->recorded = 1;
    return checked(st, "kmux_event_record", event->dev);
}

kmux_status kmux_event_synchronize(kmux_event *event) {
    kmux_clear_error();
    CHECK_HANDLE("kmux_event_synchronize", "event", event, KMUX_HANDLE_EVENT);
    if (!event->recorded)
        return kmux_set_error(KMUX_ERR_INVALID_ARGUMENT,
                              "kmux_event_synchronize: event was never recorded");
    kmux_trace(1, "sync,kmux_event_synchronize on %s", event->dev->props.id);
    return checked(OPS(event->dev)->event_synchronize(STATE(event->dev), event->native),
                   "kmux_event_synchronize", event->dev);
}

/* stream_wait_event is an optional slot of ABI 2.5: absent when NULL or beyond struct_size. */
static int has_stream_wait(const kmux_backend_ops *ops) {
    return KMUX_OPS_HAS(ops, stream_wait_event);
}

kmux_status kmux_stream_wait_event(kmux_stream *stream, kmux_event *event) {
    kmux_clear_error();
    if (!stream || !event)
        return kmux_set_error(KMUX_ERR_INVALID_ARGUMENT, "kmux_stream_wait_event: %s is NULL",
                              !stream ? "stream" : "event");
    CHECK_HANDLE("kmux_stream_wait_event", "stream", stream, KMUX_HANDLE_STREAM);
    CHECK_HANDLE("kmux_stream_wait_event", "event", event, KMUX_HANDLE_EVENT);
    if (!event->recorded)
        return kmux_set_error(KMUX_ERR_INVALID_ARGUMENT,
                              "kmux_stream_wait_event: event (on %s) was never recorded",
                              event->dev->props.id);
    kmux_backend_instance *b = stream->dev->backend;
    if (event->dev->backend == b && has_stream_wait(b->ops))
        return checked(b->ops->stream_wait_event(b->state, stream->native, event->native),
                       "kmux_stream_wait_event", stream->dev);
    /* no device-side wait across backends (or in this plugin): the same order on the host */
    kmux_trace(1, "sync,kmux_stream_wait_event on %s waits on the host (no device-side wait to %s)",
               event->dev->props.id, stream->dev->props.id);
    return checked(OPS(event->dev)->event_synchronize(STATE(event->dev), event->native),
                   "kmux_stream_wait_event", event->dev);
}

kmux_status kmux_event_elapsed_ms(kmux_event *start, kmux_event *end, float *ms) {
    kmux_clear_error();
    if (!start || !end || !ms)
        return kmux_set_error(KMUX_ERR_INVALID_ARGUMENT, "kmux_event_elapsed_ms: %s is NULL",
                              !start ? "start"
                              : !end ? "end"
                                     : "ms");
    CHECK_HANDLE("kmux_event_elapsed_ms", "start", start, KMUX_HANDLE_EVENT);
    CHECK_HANDLE("kmux_event_elapsed_ms", "end", end, KMUX_HANDLE_EVENT);
    if (start->dev != end->dev)
        return kmux_set_error(KMUX_ERR_INVALID_ARGUMENT,
                              "kmux_event_elapsed_ms: start is on %s but end is on %s",
                              start->dev->props.id, end->dev->props.id);
    if (!start->recorded || !end->recorded)
        return kmux_set_error(KMUX_ERR_INVALID_ARGUMENT,
                              "kmux_event_elapsed_ms: %s event was never recorded",
                              !start->recorded ? "start" : "end");
    return checked(
        OPS(start->dev)->event_elapsed_ms(STATE(start->dev), start->native, end->native, ms),
        "kmux_event_elapsed_ms", start->dev);
}

kmux_status kmux_event_destroy(kmux_event *event) {
    kmux_clear_error();
    if (!event) return KMUX_OK;
    CHECK_HANDLE("kmux_event_destroy", "event", event, KMUX_HANDLE_EVENT);
    kmux_device *dev = event->dev;
    kmux_status st = OPS(dev)->event_destroy(STATE(dev), event->native);
    kmux_handle_release(event);
    KMUX_LIVE_ADD(dev->ctx, live_events, -1);
    return checked(st, "kmux_event_destroy", dev);
}
