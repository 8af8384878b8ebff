/*
 * cuda_vendor.c - the CUDA calls of the shared GPU host layer (kmux_gpu_plugin, backends/gpu/
 * gpu_launch.h): the device guard (cuda_guard.c), driver errors (cuda_errors.c), pinned host
 * memory (cuMemHostAlloc with the portable flag: usable from every context; cuMemFreeHost), the
 * stream-ordered memset (cuMemsetD8Async) and launches (cuda_modules.c). What is done with them
 * (the guard around each call, the messages) is written once in backends/gpu/gpu_vendor.c.
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

static int cu_memset_async(void *state, const void *stream, void *dst, int value, size_t bytes) {
    (void)state;
    return (int)kmux_cu_memset_async(dst, value, bytes, ((const kmux_cuda_stream *)stream)->stream);
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
    .module = kmux_cuda_module_get,
    .get_function = kmux_cuda_get_function,
    .launch = kmux_cuda_launch_kernel,
    .host_alloc_name = "cuMemHostAlloc",
    .host_free_name = "cuMemFreeHost",
    .memset_name = "cuMemsetD8Async",
    .get_function_name = "cuModuleGetFunction",
    .launch_name = "cuLaunchKernel",
};
