/*
 * hip_kernels.c - the HIP side of the shared launch logic of kmux's own kernels
 * (backends/gpu/gpu_kernels.h): a kmux_gpu_launcher whose launch is a module launch
 * (kmux_hip_launch_3d: hipModuleLaunchKernel under the device guard, with HIP's launch-shape
 * checks) and whose memset is hipMemsetAsync under the device guard. Which kernel, grid and
 * arguments is decided in backends/gpu, once for HIP and CUDA.
 */
#include "hip_backend.h"

static kmux_status hip_launch(const kmux_gpu_launcher *l, kmux_gpu_module_id mod, const char *name,
                              const unsigned grid[3], unsigned block, void **params,
                              const char *what) {
    return kmux_hip_launch_3d(l->state, l->stream, mod, name, grid, block, params, what);
}

static kmux_status hip_memset_async(const kmux_gpu_launcher *l, void *dst, int value, size_t bytes,
                                    const char *what) {
    kmux_hip_state *st = l->state;
    const kmux_hip_stream_t *s = l->stream;
    kmux_hip_guard g;
    kmux_status ks = kmux_hip_enter(st, s->device, what, &g);
    if (ks != KMUX_OK) return ks;
    kmux_hip_error e = st->api.hipMemsetAsync(dst, value, bytes, s->stream);
    kmux_hip_leave(st, &g);
    if (e != KMUX_HIP_SUCCESS)
        return kmux_hip_fail(st, e, "%s: hipMemsetAsync(%p, %d, %zu bytes) on hip:%d", what, dst,
                             value, bytes, s->device);
    return KMUX_OK;
}

kmux_gpu_launcher kmux_hip_launcher(void *state, const void *stream) {
    kmux_hip_state *st = state;
    const kmux_hip_stream_t *s = stream;
    kmux_gpu_launcher l = {
        .state = st,
        .stream = s,
        .device = s->device,
        .vendor = "hip",
        .host = st->host,
        .launch = hip_launch,
        .memset_async = hip_memset_async,
    };
    return l;
}
