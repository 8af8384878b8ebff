/*
 * kmux_gpu_softmax.cu - the softmax family on the GPU, one source for CUDA, HIP and the host
 * emulation: the shared row routine of dispatch/common/kmux_softmax.h, one thread a row over a
 * grid-stride loop (the rows of a training step's logits are short; long rows would want a block
 * a row), and the mean loss summed in row order in f64 by one thread (deterministic, and the
 * same sum as the CPU kernels'). Both kernels are extern "C": no mangled names to keep.
 */
#include "kmux_gpu_formats.cuh"
#include "kmux_gpu_kernels.h"
#include "kmux_softmax.h"

namespace kmux_gpu_k {

extern "C" __global__ void __launch_bounds__(KMUX_GPU_BLOCK)
    kmux_gpu_softmax_kernel(kmux_smx_params p) {
    const int64_t stride = (int64_t)gridDim.x * blockDim.x;
    for (int64_t r = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; r < p.rows; r += stride)
        kmux_smx_row(&p, r);
}

extern "C" __global__ void kmux_gpu_softmax_mean_kernel(const float *loss, int64_t rows,
                                                        float *mean) {
    double total = 0.0;
    for (int64_t r = 0; r < rows; r++)
        total += (double)loss[r];
    *mean = (float)(total / (double)rows);
}

} // namespace kmux_gpu_k
