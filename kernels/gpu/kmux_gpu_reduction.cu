/*
 * kmux_gpu_reduction.cu - the reduction family on the GPU, one source for CUDA, HIP and the host
 * emulation: the shared per-output routine of dispatch/common/kmux_reduction.h, one thread an
 * output over a grid-stride loop, the shape's groups by value. extern "C": no mangled name to keep.
 */
#include "kmux_gpu_formats.cuh" /* first: the vendor runtime the shared codec's intrinsics need */

#include "kmux_gpu_kernels.h"
#include "kmux_reduction.h"

namespace kmux_gpu_k {

extern "C" __global__ void __launch_bounds__(KMUX_GPU_BLOCK)
    kmux_gpu_reduction_kernel(kmux_red_params p) {
    const int64_t stride = (int64_t)gridDim.x * blockDim.x;
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < p.dst_n; i += stride)
        kmux_red_output(&p, i);
}

} // namespace kmux_gpu_k
