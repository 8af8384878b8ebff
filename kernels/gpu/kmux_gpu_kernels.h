/*
 * kmux_gpu_kernels.h - C interface of kmux's own GPU kernels (the .cu files of kernels/gpu),
 * written once and compiled by nvcc into libkmux-cuda.so, by hip-clang into libkmux-hip.so, and
 * as C++ for the host emulation of the tests (tests/gpu_emu, KMUX_GPU_EMU: a test tool).
 *
 * Every launcher enqueues its work on `stream` (a cudaStream_t or hipStream_t passed as void *;
 * NULL = the legacy default stream) and returns the native error code of the launch as an int:
 * 0 (cudaSuccess / hipSuccess) or a cudaError_t / hipError_t value, which the caller names with
 * cudaGetErrorName / hipGetErrorName. Launchers never synchronise and never allocate.
 *
 * Arguments are trusted (validated once by the core). Pointers are device pointers unless said
 * otherwise; every scalar (scale, amax, found_inf, growth_tracker) lives in device memory so that
 * no launcher needs to synchronise. Sizes are elements. Semantics are those of the kmux.h
 * functions of the same names, bit for bit equal to the CPU kernels of kernels/cpu:
 * round-to-nearest-even once (a scaled value is the exact product rounded once), NaN kept,
 * subnormals kept (no flush-to-zero), overflow to Inf / NaN / the largest finite value.
 *
 * The kernels themselves live in namespace kmux_gpu_k (named, not anonymous: nvcc mangles an
 * anonymous namespace with a per-file hash, and the module launchers of backends/gpu launch them
 * by mangled name, gpu_kernel_names.h); the non-template helpers there are static, so that one
 * program or library may link several of these sources (the fake GPU runtimes of the tests).
 */
#ifndef KMUX_GPU_KERNELS_H
#define KMUX_GPU_KERNELS_H

#include <stddef.h>
#include <stdint.h>

#include "kmux.h"

#ifdef __cplusplus
extern "C" {
#endif

/** kmux_cast: n elements of src_type (f64, f32, f16, bf16 or an fp8 format) to dst_type, any pair
 *  of these. saturate: 0/1 as kmux_cast_options.saturate. scale: device f32 or NULL. amax: device
 *  f32 or NULL; receives max |src| (before scaling, NaN ignored; 0 for n == 0). src and dst must
 *  not overlap. Returns 0 or the native error code (cudaErrorInvalidValue / hipErrorInvalidValue
 *  for a dtype these kernels do not convert). */
int kmux_gpu_cast(void *stream, int64_t n, const void *src, kmux_dtype src_type, void *dst,
                  kmux_dtype dst_type, int saturate, const float *scale, float *amax);

/** kmux_amax: max |x_i| over n elements of a floating dtype into the device f32 *amax (0 for
 *  n == 0, NaN ignored, Inf counts). Returns 0 or the native error code. */
int kmux_gpu_amax(void *stream, int64_t n, const void *x, kmux_dtype type, float *amax);

/** kmux_unscale_check_finite: tensors, sizes and types are HOST arrays of count entries
 *  (tensors[i]: device pointer to sizes[i] elements of f32, f16, bf16 or f64); every element is
 *  multiplied in place by *inv_scale (device f32) and *found_inf (device f32) is set to 1.0f when
 *  any element was Inf or NaN before scaling (never cleared). One launch per tensor. Returns 0 or
 *  the native error code of the first launch that failed. */
int kmux_gpu_unscale_check_finite(void *stream, int64_t count, void *const *tensors,
                                  const int64_t *sizes, const kmux_dtype *types,
                                  const float *inv_scale, float *found_inf);

/** kmux_loss_scale_update (torch._amp_update_scale_): one single-thread kernel, so the scalars stay
 *  on the device. scale, growth_tracker, found_inf: device pointers. Returns 0 or the native error
 *  code. */
int kmux_gpu_loss_scale_update(void *stream, float *scale, int32_t *growth_tracker,
                               const float *found_inf, double growth_factor, double backoff_factor,
                               int64_t growth_interval);

/** kmux_fp8_scale_update (Transformer Engine delayed scaling, "max" over the history): one
 *  single-thread kernel. amax_history (history_len device f32) and scale (device f32). Returns 0
 *  or the native error code. */
int kmux_gpu_fp8_scale_update(void *stream, const float *amax_history, int64_t history_len,
                              kmux_dtype fp8_type, float margin, float *scale);

/* ---- completion of a vendor GEMM and operand packing (kmux_gpu_post.cu) ---- */

typedef enum kmux_gpu_act {
    KMUX_GPU_ACT_NONE = 0,
    KMUX_GPU_ACT_RELU = 1,
    KMUX_GPU_ACT_GELU = 2
} kmux_gpu_act;

/** Element-wise completion of a GEMM in a column-major view: element (r, c) of batch b of D is at
 *  d + b * stride_d + r + c * ldd (elements of d_type). For every element:
 *    v = (acc ? acc[b * stride_acc + r + c * ld_acc] : 0) + (read_c ? beta * D : 0)
 *        + (bias ? bias[bias_per_row ? r : c] : 0);  v = act(v);
 *    amax = max |v| (NaN ignored);  D = round(d_scale ? v * *d_scale : v)
 *  in f64 arithmetic for f64 D and f32 otherwise (ReLU keeps NaN, GELU the tanh form, one
 *  rounding to d_type). d_type: f64, f32, f16, bf16 or i32; bias_type: f32 or d_type.
 *  beta is the multiplier of D for EVERY d_type: for i32 D it must be an integer (a double holds
 *  every int32 exactly); there is no separate integer beta, so "read_c = 1, beta = 1" keeps an
 *  i32 D (the defect of issue 16: an integer beta left 0 zeroed C and amax). i32 D: v = beta * D
 *  modulo 2^32 without d_scale and amax; with either, v = beta * D in f64, amax = max |v|,
 *  D = v * d_scale rounded to nearest even and saturated (as ref); acc, bias and act are
 *  ignored for i32. amax (device f32) is overwritten; d_scale is a device f32. */
typedef struct kmux_gpu_post_args {
    int64_t rows, cols, batch;
    void *d;
    kmux_dtype d_type;
    int64_t ldd, stride_d;
    const float *acc;
    int64_t ld_acc, stride_acc;
    int read_c;
    double beta;
    const void *bias;
    kmux_dtype bias_type;
    int bias_per_row;
    kmux_gpu_act act;
    const float *d_scale;
    float *amax;
} kmux_gpu_post_args;

/** Launches the post kernel (zeroing *amax first when amax is set). Returns 0 or the native
 *  error code (invalid value for an unsupported d_type or bias_type). */
int kmux_gpu_post_launch(void *stream, const kmux_gpu_post_args *a);

/** dst[b * dst_bs + r + c * ldd] = src[b * src_bs + r * src_rs + c * src_cs] for r < rows,
 *  c < cols, b < batch: a strided gather of 1-byte elements (transposes included), e.g. an fp8
 *  operand into the "TN" layout with 16-byte leading dimensions of cuBLASLt's fp8 kernels.
 *  Returns 0 or the native error code. */
int kmux_gpu_pack_bytes(void *stream, const void *src, int64_t rows, int64_t cols, int64_t src_rs,
                        int64_t src_cs, int64_t src_bs, void *dst, int64_t ldd, int64_t dst_bs,
                        int64_t batch);

/* ---- GEMM and convolution (kmux_gpu_gemm.cu, kmux_gpu_conv.cu) ---- */

/** Number of tile configurations (0 .. count-1): tile 0 is 64x64x16 with 4x4 per thread, tile 1
 *  32x32x8 with 2x2 per thread, both 256 threads per block. */
#define KMUX_GPU_TILE_COUNT 2
int kmux_gpu_tile_count(void);

/** The tile a GPU prefers for an m x n output. arch: CUDA compute capability as 10 * major +
 *  minor (80, 86, 89, 90), 942 for gfx942, 0 when unknown. Returns a tile index. */
int kmux_gpu_pick_tile(int arch, int64_t m, int64_t n);

/** Implementation name of kmux_gpu_gemm for d and tile into buf ("kmux-gpu:gemm:f16*f16->f32:
 *  acc=f32:tile=64x64x16/4x4"). Returns 0, or -1 for an unknown tile or a buffer too small. */
int kmux_gpu_gemm_name(const kmux_matmul_desc *d, int tile, char *buf, size_t size);

/** kmux_matmul_execute of d with args a on the GPU (semantics of kmux.h, ref's arithmetic:
 *  see kmux_gpu_gemm.cu): every order, transpose, leading dimension and batch stride of the
 *  description, any batch count (grid z loops), every row of the GEMM type table (inputs decoded
 *  on load with the shared codec, accumulation in f64 for f64, i32 for i8, f32 otherwise),
 *  epilogues BIAS, RELU, GELU, a_scale/b_scale/d_scale and amax_d (zeroed first, then merged with
 *  atomicMax), one rounding to c_type. m == 0, n == 0 or batch 0 does nothing (amax_d untouched).
 * alpha and beta are HOST scalars of the compute type; A, B, C, bias and the scales device
 * pointers. tile: 0 .. KMUX_GPU_TILE_COUNT-1. max_grid_yz: largest grid y and z used (0 = 65535;
 * tests pass small values to exercise the loops). The description is trusted (validated by the
 * core). Returns 0 or the native error code (invalid value for an unknown tile or type pair). */
int kmux_gpu_gemm(void *stream, const kmux_matmul_desc *d, const kmux_matmul_args *a, int tile,
                  int max_grid_yz);

/** Implementation name of kmux_gpu_conv2d for d and tile into buf ("kmux-gpu:conv2d:fwd:nhwc:
 *  f16:acc=f32:tile=64x64x16/4x4"). Returns 0, or -1 for an unknown tile or a buffer too small. */
int kmux_gpu_conv2d_name(const kmux_conv2d_desc *d, int tile, char *buf, size_t size);

/** kmux_conv2d_execute of d with args a on the GPU: implicit GEMM (see kmux_gpu_conv.cu) for
 *  FWD, BWD_DATA and BWD_WEIGHTS, NCHW/KCRS and NHWC/KRSC, any stride, dilation, groups
 *  (depthwise included) and asymmetric padding; x, w, y all f64, f32, f16 or bf16; accumulation
 *  in f64 for f64, f32 otherwise; alpha and beta HOST scalars (double for KMUX_COMPUTE_F64, float
 *  otherwise); alpha == 0 reads no input, beta == 0 does not read the output. tile and
 *  max_grid_yz (grid z runs over the groups) as kmux_gpu_gemm. The description is trusted.
 *  Returns 0 or the native error code. */
int kmux_gpu_conv2d(void *stream, const kmux_conv2d_desc *d, const kmux_conv2d_args *a, int tile,
                    int max_grid_yz);

#ifdef __cplusplus
}
#endif
#endif
