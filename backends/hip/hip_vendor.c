/*
 * hip_vendor.c - the HIP calls of the shared GPU host layer (kmux_gpu_plugin, backends/gpu/
 * gpu_launch.h): the device guard (hipSetDevice, hip_runtime.c), runtime errors, pinned host
 * memory (hipHostMalloc with the device current, so that the pages are mapped for its DMA
 * engines; hipHostFree), the stream-ordered memset (hipMemsetAsync) and launches
 * (hip_modules.c). What is done with them (the guard around each call, the messages) is written
 * once in backends/gpu/gpu_vendor.c.
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

static int hip_memset_async(void *state, const void *stream, void *dst, int value, size_t bytes) {
    const kmux_hip_state *st = state;
    return st->api.hipMemsetAsync(dst, value, bytes, ((const kmux_hip_stream_t *)stream)->stream);
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
    .module = kmux_hip_module_get,
    .get_function = kmux_hip_get_function,
    .launch = kmux_hip_launch_kernel,
    .host_alloc_name = "hipHostMalloc",
    .host_free_name = "hipHostFree",
    .memset_name = "hipMemsetAsync",
    .get_function_name = "hipModuleGetFunction",
    .launch_name = "hipModuleLaunchKernel",
};
