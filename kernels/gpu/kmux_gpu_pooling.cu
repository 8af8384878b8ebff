/*
 * kmux_gpu_pooling.cu - the pooling family on the GPU, one source for CUDA, HIP and the host
 * emulation: the shared per-element routines of dispatch/common/kmux_pooling.h, one thread an
 * element over a grid-stride loop (forward: a y element; backward: a dx element gathered from the
 * windows that hold it, so no atomics and a deterministic sum). extern "C": no mangled name to
 * keep.
 */
#include "kmux_gpu_formats.cuh" /* first: the vendor runtime the shared codec's intrinsics need */

#include "kmux_gpu_kernels.h"
#include "kmux_pooling.h"

namespace kmux_gpu_k {

extern "C" __global__ void __launch_bounds__(KMUX_GPU_BLOCK)
    kmux_gpu_pooling_kernel(kmux_pool_params p, int64_t count) {
    const int64_t stride = (int64_t)gridDim.x * blockDim.x;
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < count; i += stride) {
        if (p.prop == KMUX_PROP_FORWARD)
            kmux_pool_fwd_output(&p, i);
        else
            kmux_pool_bwd_input(&p, i);
    }
}

} // namespace kmux_gpu_k
