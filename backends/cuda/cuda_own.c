/*
 * cuda_own.c - kmux's own GEMM and implicit-GEMM convolution kernels (kernels/gpu/kmux_gpu_gemm.cu
 * and kmux_gpu_conv.cu, compiled into this plugin by nvcc) as implementations of CUDA plans,
 * launched through their C interface (kmux_gpu_kernels.h) on the kmux stream's native stream.
 * Which implementation is offered where: cuda_impl_order.h. No workspace, no library handle.
 */
#include "cuda_backend.h"
#include "kmux_gpu_kernels.h"

/* One launch on the device: the GEMM (md, ma) or the convolution (cd, ca). */
static kmux_status own_run(kmux_cuda_state *st, int device, const kmux_cuda_stream *cs,
                           const kmux_matmul_desc *md, const kmux_matmul_args *ma,
                           const kmux_conv2d_desc *cd, const kmux_conv2d_args *ca, int tile,
                           const char *name) {
    const char *fn = md ? "kmux_matmul_execute" : "kmux_conv2d_execute";
    kmux_cuda_guard g;
    kmux_status s = kmux_cuda_enter(st, device, fn, &g);
    if (s != KMUX_OK) return s;
    int e = md ? kmux_gpu_gemm(cs->stream, md, ma, tile, 0)
               : kmux_gpu_conv2d(cs->stream, cd, ca, tile, 0);
    kmux_cuda_leave(&g);
    if (e != 0) return kmux_cuda_fail(st, (cudaError_t)e, "%s: %s on cuda:%d", fn, name, device);
    return KMUX_OK;
}

kmux_status kmux_cuda_own_gemm(kmux_cuda_state *st, int device, const kmux_cuda_stream *cs,
                               const kmux_matmul_desc *d, const kmux_matmul_args *a, int tile,
                               const char *name) {
    return own_run(st, device, cs, d, a, NULL, NULL, tile, name);
}

kmux_status kmux_cuda_own_conv(kmux_cuda_state *st, int device, const kmux_cuda_stream *cs,
                               const kmux_conv2d_desc *d, const kmux_conv2d_args *a, int tile,
                               const char *name) {
    return own_run(st, device, cs, NULL, NULL, d, a, tile, name);
}
