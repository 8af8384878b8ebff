/*
 * cuda_own.c - kmux's own GEMM and implicit-GEMM convolution kernels (kernels/gpu/kmux_gpu_gemm.cu
 * and kmux_gpu_conv.cu, embedded as fatbins) as implementations of CUDA plans, launched through
 * the GPU host layer shared with HIP (backends/gpu/gpu_kernels.h) on the kmux stream's native
 * stream. Which implementation is offered where: cuda_impl_order.h. No workspace, no library
 * handle.
 */
#include "cuda_backend.h"
#include "gpu_kernels.h"

kmux_status kmux_cuda_own_gemm(kmux_cuda_state *st, const kmux_cuda_stream *cs,
                               const kmux_matmul_desc *d, const kmux_matmul_args *a, int tile) {
    const kmux_gpu_launcher l = kmux_gpu_plugin_launcher(st, cs);
    return kmux_gpu_host_gemm(&l, d, a, tile);
}

kmux_status kmux_cuda_own_conv(kmux_cuda_state *st, const kmux_cuda_stream *cs,
                               const kmux_conv2d_desc *d, const kmux_conv2d_args *a, int tile) {
    const kmux_gpu_launcher l = kmux_gpu_plugin_launcher(st, cs);
    return kmux_gpu_host_conv2d(&l, d, a, tile);
}
