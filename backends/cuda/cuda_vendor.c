/*
 * cuda_vendor.c - the CUDA calls of the shared GPU host layer (kmux_gpu_plugin, backends/gpu/
 * gpu_launch.h): the device guard (cuda_guard.c), driver errors (cuda_errors.c), pinned host
 * memory (cuMemHostAlloc with the portable flag: usable from every context; cuMemFreeHost), the
 * stream-ordered memset (cuMemsetD8Async), launches (cuda_modules.c), memory, streams and events.
 * What is done with them (the guard around each call, the messages) is written once in
 * backends/gpu/gpu_vendor.c and gpu_runtime.c.
 */
#include <stddef.h>

#include "cuda_backend.h"

_Static_assert(offsetof(kmux_cuda_stream, device) == 0, "gpu_vendor.c reads the device first");

static kmux_status cu_enter(void *state, int device, const char *fn, int *guard) {
    kmux_cuda_guard g = {0};
    kmux_status s = kmux_cuda_enter(state, device, fn, &g);
    *guard = g.pushed;
    return s;
}

static void cu_leave(void *state, int guard) {
    (void)state;
    const kmux_cuda_guard g = {guard};
    kmux_cuda_leave(&g);
}

static kmux_status cu_fail(void *state, int err, const char *what) {
    return kmux_cuda_fail(state, (CUresult)err, "%s", what);
}

static kmux_status cu_error(void *state, kmux_status s, const char *msg) {
    return kmux_cuda_error(state, s, "%s", msg);
}

static int cu_host_alloc(void *state, void **ptr, size_t bytes) {
    (void)state;
    return (int)cuMemHostAlloc(ptr, bytes, CU_MEMHOSTALLOC_PORTABLE);
}

static int cu_host_free(void *state, void *ptr) {
    (void)state;
    return (int)cuMemFreeHost(ptr);
}

static void **cu_modules(void *state, int device, pthread_mutex_t **lock) {
    kmux_cuda_device *d = &((kmux_cuda_state *)state)->devices[device];
    *lock = &d->lock;
    return d->modules;
}

static int cu_module_unload(void *state, void *module) {
    (void)state;
    return (int)cuModuleUnload((CUmodule)module);
}

static int cu_mem_alloc(void *state, void **ptr, size_t bytes) {
    (void)state;
    return (int)kmux_cu_malloc(ptr, bytes);
}

static int cu_mem_free(void *state, void *ptr) {
    (void)state;
    return (int)kmux_cu_free(ptr);
}

static CUstream native_of(const void *stream) {
    return ((const kmux_cuda_stream *)stream)->stream;
}

static int cu_memset_async(void *state, const void *stream, void *dst, int value, size_t bytes) {
    (void)state;
    return (int)kmux_cu_memset_async(dst, value, bytes, native_of(stream));
}

static int cu_stream_init(void *state, void *stream, int own, void *native) {
    (void)state;
    kmux_cuda_stream *s = stream;
    s->own = own;
    if (!own) {
        s->stream = (CUstream)native;
        return CUDA_SUCCESS;
    }
    /* A blocking stream (default flags) stays ordered with the legacy default stream, so work a
     * caller queued there with plain CUDA calls is seen by kmux. */
    return (int)cuStreamCreate(&s->stream, CU_STREAM_DEFAULT);
}

static int cu_stream_sync(void *state, const void *stream) {
    (void)state;
    return (int)cuStreamSynchronize(native_of(stream));
}

static int cu_memcpy_async(void *state, const void *stream, void *dst, const void *src,
                           size_t bytes, int kind) {
    (void)state;
    (void)kind; /* unified addressing: the driver tells host from device pointers */
    return (int)kmux_cu_memcpy_async(dst, src, bytes, native_of(stream));
}

static int cu_event_new(void *state, void **event) {
    (void)state;
    CUevent ev = NULL;
    CUresult e = cuEventCreate(&ev, CU_EVENT_DEFAULT);
    *event = ev;
    return (int)e;
}

static int cu_event_free(void *state, void *event) {
    (void)state;
    return (int)cuEventDestroy((CUevent)event);
}

static int cu_event_record(void *state, void *event, const void *stream) {
    (void)state;
    return (int)cuEventRecord((CUevent)event, native_of(stream));
}

static int cu_stream_wait(void *state, const void *stream, void *event) {
    (void)state;
    return (int)cuStreamWaitEvent(native_of(stream), (CUevent)event, 0);
}

static int cu_event_sync(void *state, void *event) {
    (void)state;
    return (int)cuEventSynchronize((CUevent)event);
}

static int cu_event_elapsed(void *state, float *ms, void *start, void *end) {
    (void)state;
    return (int)cuEventElapsedTime(ms, (CUevent)start, (CUevent)end);
}

const kmux_gpu_plugin kmux_cuda_gpu_plugin = {
    .vendor = "cuda",
    .enter = cu_enter,
    .leave = cu_leave,
    .fail = cu_fail,
    .error = cu_error,
    .host_alloc = cu_host_alloc,
    .host_free = cu_host_free,
    .memset_async = cu_memset_async,
    .bad_shape = kmux_cuda_bad_shape,
    .modules = cu_modules,
    .module_load = kmux_cuda_module_load,
    .module_unload = cu_module_unload,
    .get_function = kmux_cuda_get_function,
    .launch = kmux_cuda_launch_kernel,
    .mem_alloc = cu_mem_alloc,
    .mem_free = cu_mem_free,
    .stream_size = sizeof(kmux_cuda_stream),
    .stream_init = cu_stream_init,
    .stream_sync = cu_stream_sync,
    .memcpy_async = cu_memcpy_async,
    .event_new = cu_event_new,
    .event_free = cu_event_free,
    .event_record = cu_event_record,
    .stream_wait = cu_stream_wait,
    .event_sync = cu_event_sync,
    .event_elapsed = cu_event_elapsed,
    .host_alloc_name = "cuMemHostAlloc",
    .host_free_name = "cuMemFreeHost",
    .memset_name = "cuMemsetD8Async",
    .get_function_name = "cuModuleGetFunction",
    .launch_name = "cuLaunchKernel",
    .mem_alloc_name = "cuMemAlloc",
    .mem_free_name = "cuMemFree",
    .stream_new_name = "cuStreamCreate",
    .stream_sync_name = "cuStreamSynchronize",
    .memcpy_name = "cuMemcpyAsync",
    .event_new_name = "cuEventCreate",
    .event_free_name = "cuEventDestroy",
    .event_record_name = "cuEventRecord",
    .stream_wait_name = "cuStreamWaitEvent",
    .event_sync_name = "cuEventSynchronize",
    .event_elapsed_name = "cuEventElapsedTime",
};
