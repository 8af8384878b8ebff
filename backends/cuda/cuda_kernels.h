/*
 * cuda_kernels.h - the CUDA backend's own small kernels (cuda_kernels.cu), with C launchers.
 *
 * They complete what cuBLASLt cannot do by itself for kmux's GEMM semantics:
 * - the "post" kernel: C = beta * C when k == 0 or alpha == 0 (without reading A and B), the
 *   bias of a column-major GEMM (cuBLASLt only adds a bias per row of D), d_scale and amax_d for
 *   outputs that are not fp8 (cuBLASLt applies those only to fp8 D);
 * - byte packing: copies an fp8/int8 operand into the "TN" layout with 16-byte leading
 *   dimensions that cuBLASLt's fp8 kernels require.
 * Every launcher enqueues on `stream` (a cudaStream_t) and returns the cudaError_t of the launch
 * as an int (0 = cudaSuccess).
 */
#ifndef KMUX_CUDA_KERNELS_H
#define KMUX_CUDA_KERNELS_H

#include <stdint.h>

#include "kmux.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum kmux_cuda_act {
    KMUX_CUDA_ACT_NONE = 0,
    KMUX_CUDA_ACT_RELU = 1,
    KMUX_CUDA_ACT_GELU = 2
} kmux_cuda_act;

/** Element-wise completion of a GEMM in cuBLASLt's column-major view: element (r, c) of batch b
 *  of D is at d + b * stride_d + r + c * ldd (elements of d_type). For every element:
 *    v = (acc ? acc[b * stride_acc + r + c * ld_acc] : 0) + (read_c ? beta * D : 0)
 *        + (bias ? bias[bias_per_row ? r : c] : 0);  v = act(v);
 *    amax = max |v| (NaN ignored);  D = round(d_scale ? v * *d_scale : v)
 *  in f64 arithmetic for f64 D and f32 otherwise; i32 D supports only v = beta_i * D (wrapping).
 *  d_type: f64, f32, f16, bf16, i32; bias_type: f32 or d_type. amax (device f32) is overwritten;
 *  d_scale is a device f32. */
typedef struct kmux_cuda_post_args {
    int64_t rows, cols, batch;
    void *d;
    kmux_dtype d_type;
    int64_t ldd, stride_d;
    const float *acc;
    int64_t ld_acc, stride_acc;
    int read_c;
    double beta;
    int32_t beta_i;
    const void *bias;
    kmux_dtype bias_type;
    int bias_per_row;
    kmux_cuda_act act;
    const float *d_scale;
    float *amax;
} kmux_cuda_post_args;

/** Launches the post kernel (and zeroes *amax first when amax is set). */
int kmux_cuda_post_launch(void *stream, const kmux_cuda_post_args *a);

/** dst[b * dst_bs + r + c * ldd] = src[b * src_bs + r * src_rs + c * src_cs] for r < rows,
 *  c < cols, b < batch: a strided gather of 1-byte elements (transposes included). */
int kmux_cuda_pack_bytes(void *stream, const void *src, int64_t rows, int64_t cols, int64_t src_rs,
                         int64_t src_cs, int64_t src_bs, void *dst, int64_t ldd, int64_t dst_bs,
                         int64_t batch);

#ifdef __cplusplus
}
#endif
#endif
