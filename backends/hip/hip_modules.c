/*
 * hip_modules.c - the embedded code objects as HIP modules, and what a launch of the shared GPU
 * host layer (backends/gpu/gpu_vendor.c) needs of HIP: the launch-shape limits, the kernel by
 * name, hipModuleLaunchKernel.
 *
 * Each kernels/gpu source is one offload bundle holding a code object per architecture of the
 * build; hipModuleLoadData picks the one of the current device. When it finds none
 * (hipErrorNoBinaryForGpu) or takes the image for none it can load (hipErrorInvalidImage), the
 * call fails with KMUX_ERR_UNSUPPORTED naming the device's target id and the targets carried.
 * Before a launch the grid is checked: every dimension at least 1 (ROCm 7 refuses an empty one)
 * and gridDim * blockDim within 32 bits per dimension (HIP's global work size is a uint32_t;
 * ROCm answers hipErrorInvalidConfiguration or wraps it), refused with KMUX_ERR_UNSUPPORTED naming
 * the sizes. Modules are loaded on a device's first launch, under the device lock, and kept
 * until the backend is finalised. Kernels are looked up by their mangled names
 * (backends/gpu/gpu_kernel_names.h) with hipModuleGetFunction at each launch (a hash lookup in the
 * runtime).
 */
#include <stdint.h>
#include <stdio.h>

#include "hip_backend.h"

kmux_status kmux_hip_module_load(void *state, int device, kmux_gpu_module_id id, const char *what,
                                 void **out, size_t *bytes) {
    kmux_hip_state *st = state;
    const kmux_hip_device *d = &st->devices[device];
    const kmux_hip_code_object *co = kmux_hip_code_object_get(id);
    if (!co->image)
        return st->host->set_error(KMUX_ERR_UNSUPPORTED,
                                   "hip: %s: kmux-hip was built without the code object of "
                                   "kmux_gpu_%s.cu",
                                   what, co->name);
    kmux_hip_module m = NULL;
    kmux_hip_error e = st->api.hipModuleLoadData(&m, co->image);
    if (e == KMUX_HIP_ERROR_NO_BINARY_FOR_GPU || e == KMUX_HIP_ERROR_INVALID_IMAGE)
        return st->host->set_error(KMUX_ERR_UNSUPPORTED,
                                   "hip: %s: no code object in kmux_gpu_%s.cu loads on hip:%d "
                                   "(target %s): kmux-hip carries code objects for %s "
                                   "(hipModuleLoadData: %s)",
                                   what, co->name, device, d->target_id, kmux_hip_carried_archs(),
                                   kmux_hip_error_name(st, e));
    if (e != KMUX_HIP_SUCCESS)
        return kmux_hip_fail(st, e,
                             "%s: hipModuleLoadData(kmux_gpu_%s.cu, %zu bytes, code objects for "
                             "%s) on hip:%d (%s)",
                             what, co->name, co->size, kmux_hip_carried_archs(), device,
                             d->target_id);
    *bytes = co->size;
    *out = m;
    return KMUX_OK;
}

/* Why the launch shape cannot be launched (buf), or NULL when it can; *status: what to answer
 * (an empty launch is a bug of the plugin: its callers return early on empty problems). 1-D
 * blocks of `threads`. */
const char *kmux_hip_bad_shape(const unsigned grid[3], unsigned block_x, char *buf, size_t size,
                               kmux_status *status) {
    const unsigned block[3] = {block_x, 1, 1};
    static const char axis[3] = {'x', 'y', 'z'};
    for (int i = 0; i < 3; i++) {
        *status = KMUX_ERR_INTERNAL;
        if (grid[i] == 0 || block[i] == 0)
            return snprintf(buf, size, "gridDim.%c = %u, blockDim.%c = %u: an empty launch",
                            axis[i], grid[i], axis[i], block[i]),
                   buf;
        *status = KMUX_ERR_UNSUPPORTED;
        const uint64_t threads = (uint64_t)grid[i] * block[i];
        if (threads > UINT32_MAX)
            return snprintf(buf, size,
                            "gridDim.%c * blockDim.%c = %u * %u = %llu threads, more than HIP's "
                            "32-bit global work size (%lu)",
                            axis[i], axis[i], grid[i], block[i], (unsigned long long)threads,
                            (unsigned long)UINT32_MAX),
                   buf;
    }
    return NULL;
}

int kmux_hip_get_function(void *state, void *module, const char *name, void **fn) {
    const kmux_hip_state *st = state;
    return st->api.hipModuleGetFunction(fn, module, name);
}

int kmux_hip_launch_kernel(void *state, const void *stream, void *fn, const unsigned grid[3],
                           unsigned block, void **params) {
    const kmux_hip_state *st = state;
    const kmux_hip_stream_t *s = stream;
    return st->api.hipModuleLaunchKernel(fn, grid[0], grid[1], grid[2], block, 1, 1, 0, s->stream,
                                         params, NULL);
}
