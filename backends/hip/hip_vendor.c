/*
 * hip_vendor.c - the HIP calls of the shared GPU host layer (kmux_gpu_plugin, backends/gpu/
 * gpu_launch.h): the device guard (hipSetDevice, hip_runtime.c), runtime errors, pinned host
 * memory (hipHostMalloc with the device current, so that the pages are mapped for its DMA
 * engines; hipHostFree), the stream-ordered memset (hipMemsetAsync), launches (hip_modules.c),
 * memory, streams and events. What is done with them (the guard around each call, the messages)
 * is written once in backends/gpu/gpu_vendor.c and gpu_runtime.c.
 */
#include <stddef.h>

#include "hip_backend.h"

#define KMUX_HIP_HOST_MALLOC_DEFAULT 0u /* hipHostMallocDefault */

_Static_assert(offsetof(kmux_hip_stream_t, device) == 0, "gpu_vendor.c reads the device first");

static kmux_status hip_enter(void *state, int device, const char *fn, int *guard) {
    kmux_hip_guard g = {-1};
    kmux_status s = kmux_hip_enter(state, device, fn, &g);
    *guard = g.previous;
    return s;
}

static void hip_leave(void *state, int guard) {
    const kmux_hip_guard g = {guard};
    kmux_hip_leave(state, &g);
}

static kmux_status hip_fail(void *state, int err, const char *what) {
    return kmux_hip_fail(state, err, "%s", what);
}

static kmux_status hip_error(void *state, kmux_status s, const char *msg) {
    const kmux_hip_state *st = state;
    return st->host->set_error(s, "hip: %s", msg);
}

static int hip_host_alloc(void *state, void **ptr, size_t bytes) {
    const kmux_hip_state *st = state;
    return st->api.hipHostMalloc(ptr, bytes, KMUX_HIP_HOST_MALLOC_DEFAULT);
}

static int hip_host_free(void *state, void *ptr) {
    const kmux_hip_state *st = state;
    return st->api.hipHostFree(ptr);
}

static kmux_hip_stream native_of(const void *stream) {
    return ((const kmux_hip_stream_t *)stream)->stream;
}

static int hip_memset_async(void *state, const void *stream, void *dst, int value, size_t bytes) {
    const kmux_hip_state *st = state;
    return st->api.hipMemsetAsync(dst, value, bytes, native_of(stream));
}

static void **hip_modules(void *state, int device, pthread_mutex_t **lock) {
    kmux_hip_device *d = &((kmux_hip_state *)state)->devices[device];
    *lock = &d->lock;
    return d->modules;
}

static int hip_module_unload(void *state, void *module) {
    const kmux_hip_state *st = state;
    return st->api.hipModuleUnload(module);
}

static int hip_mem_alloc(void *state, void **ptr, size_t bytes) {
    const kmux_hip_state *st = state;
    return st->api.hipMalloc(ptr, bytes);
}

static int hip_mem_free(void *state, void *ptr) {
    const kmux_hip_state *st = state;
    return st->api.hipFree(ptr);
}

static int hip_stream_init(void *state, void *stream, int own, void *native) {
    const kmux_hip_state *st = state;
    kmux_hip_stream_t *s = stream;
    s->own = own;
    if (!own) {
        s->stream = native;
        return KMUX_HIP_SUCCESS;
    }
    /* a blocking stream: ordered with the null stream, as the CUDA plugin's streams */
    return st->api.hipStreamCreate(&s->stream);
}

static int hip_stream_sync(void *state, const void *stream) {
    const kmux_hip_state *st = state;
    return st->api.hipStreamSynchronize(native_of(stream));
}

static int hip_memcpy_async(void *state, const void *stream, void *dst, const void *src,
                            size_t bytes, int kind) {
    const kmux_hip_state *st = state;
    /* kmux_memcpy_kind has hipMemcpyKind's numbering (host-to-host 0 ... device-to-device 3) */
    return st->api.hipMemcpyAsync(dst, src, bytes, kind, native_of(stream));
}

static int hip_event_new(void *state, void **event) {
    const kmux_hip_state *st = state;
    return st->api.hipEventCreate(event);
}

static int hip_event_free(void *state, void *event) {
    const kmux_hip_state *st = state;
    return st->api.hipEventDestroy(event);
}

static int hip_event_record(void *state, void *event, const void *stream) {
    const kmux_hip_state *st = state;
    return st->api.hipEventRecord(event, native_of(stream));
}

static int hip_stream_wait(void *state, const void *stream, void *event) {
    const kmux_hip_state *st = state;
    return st->api.hipStreamWaitEvent(native_of(stream), event, 0);
}

static int hip_event_sync(void *state, void *event) {
    const kmux_hip_state *st = state;
    return st->api.hipEventSynchronize(event);
}

static int hip_event_elapsed(void *state, float *ms, void *start, void *end) {
    const kmux_hip_state *st = state;
    return st->api.hipEventElapsedTime(ms, start, end);
}

const kmux_gpu_plugin kmux_hip_gpu_plugin = {
    .vendor = "hip",
    .enter = hip_enter,
    .leave = hip_leave,
    .fail = hip_fail,
    .error = hip_error,
    .host_alloc = hip_host_alloc,
    .host_free = hip_host_free,
    .memset_async = hip_memset_async,
    .bad_shape = kmux_hip_bad_shape,
    .modules = hip_modules,
    .module_load = kmux_hip_module_load,
    .module_unload = hip_module_unload,
    .get_function = kmux_hip_get_function,
    .launch = kmux_hip_launch_kernel,
    .mem_alloc = hip_mem_alloc,
    .mem_free = hip_mem_free,
    .stream_size = sizeof(kmux_hip_stream_t),
    .stream_init = hip_stream_init,
    .stream_sync = hip_stream_sync,
    .memcpy_async = hip_memcpy_async,
    .event_new = hip_event_new,
    .event_free = hip_event_free,
    .event_record = hip_event_record,
    .stream_wait = hip_stream_wait,
    .event_sync = hip_event_sync,
    .event_elapsed = hip_event_elapsed,
    .host_alloc_name = "hipHostMalloc",
    .host_free_name = "hipHostFree",
    .memset_name = "hipMemsetAsync",
    .get_function_name = "hipModuleGetFunction",
    .launch_name = "hipModuleLaunchKernel",
    .mem_alloc_name = "hipMalloc",
    .mem_free_name = "hipFree",
    .stream_new_name = "hipStreamCreate",
    .stream_sync_name = "hipStreamSynchronize",
    .memcpy_name = "hipMemcpyAsync",
    .event_new_name = "hipEventCreate",
    .event_free_name = "hipEventDestroy",
    .event_record_name = "hipEventRecord",
    .stream_wait_name = "hipStreamWaitEvent",
    .event_sync_name = "hipEventSynchronize",
    .event_elapsed_name = "hipEventElapsedTime",
};
