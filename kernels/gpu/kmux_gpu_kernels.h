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
