/*
 * gpu_kernels.h - the host side of kmux's own GPU kernels (kernels/gpu) for module launches,
 * written once for every vendor on a kmux_gpu_launcher (gpu_launch.h): which kernel (its mangled
 * name, gpu_kernel_names.h), which grid and block, which arguments, and the checks that come
 * before a launch. It mirrors the extern "C" launchers of kernels/gpu (kmux_gpu_kernels.h), which
 * the plugins cannot use: they launch with <<<>>>, which needs the vendor runtime at link time.
 * Semantics: those of the kmux_gpu_* function of the same name in kmux_gpu_kernels.h. Arguments
 * are trusted (validated by the core). Every function returns KMUX_OK, or a status with the
 * message set through l->host->set_error ("hip: kmux_cast: no kernel for dtype i8").
 *
 * Files: gpu_elementwise.c (cast, amax, unscale, loss scale, fp8 scale), gpu_amp.c (the plugins'
 * mixed-precision slots on those), gpu_tiled.c (GEMM and convolution: tiles, implementation
 * names, launches), gpu_post.c (the completion of a vendor GEMM and byte packing).
 */
#ifndef KMUX_GPU_KERNELS_HOST_H
#define KMUX_GPU_KERNELS_HOST_H

#include <stddef.h>
#include <stdint.h>

#include "gpu_launch.h"
#include "kmux.h"
#include "kmux_gpu_kernels.h"

/* ---- gpu_elementwise.c: kmux_gpu_cast.cu and kmux_gpu_amp.cu ---- */

/** kmux_gpu_cast: n elements of src_type to dst_type (floating dtypes), *amax (when set) zeroed
 *  first, then merged into by the kernel. */
kmux_status kmux_gpu_host_cast(const kmux_gpu_launcher *l, int64_t n, const void *src,
                               kmux_dtype src_type, void *dst, kmux_dtype dst_type, int saturate,
                               const float *scale, float *amax);
/** kmux_gpu_amax: max |x_i| of n elements of dtype t into *amax (zeroed first). */
kmux_status kmux_gpu_host_amax(const kmux_gpu_launcher *l, int64_t n, const void *x, kmux_dtype t,
                               float *amax);
/** One tensor of kmux_gpu_unscale_check_finite: x[0..n) *= *inv_scale, *found_inf = 1 on a
 *  non-finite element (f64, f32, f16, bf16). */
kmux_status kmux_gpu_host_unscale(const kmux_gpu_launcher *l, int64_t n, void *x, kmux_dtype t,
                                  const float *inv_scale, float *found_inf);
/** kmux_gpu_loss_scale_update: one single-thread kernel. */
kmux_status kmux_gpu_host_loss_scale(const kmux_gpu_launcher *l, float *scale,
                                     int32_t *growth_tracker, const float *found_inf,
                                     double growth_factor, double backoff_factor,
                                     int64_t growth_interval);
/** kmux_gpu_fp8_scale_update with the format's largest finite value fmax (the caller checks that
 *  the format is an fp8 one): one single-thread kernel. */
kmux_status kmux_gpu_host_fp8_scale(const kmux_gpu_launcher *l, const float *amax_history,
                                    int64_t history_len, double fmax, double margin, float *scale);

/* ---- gpu_amp.c: the plugins' mixed-precision slots (kmux_backend.h cast, amax,
 * unscale_check_finite, loss_scale_update, fp8_scale_update), for a state that begins with a
 * kmux_gpu_plugin and a stream of that plugin; semantics: kmux_gpu_kernels.h, bit for bit the CPU
 * kernels ---- */

/** kmux_cast: opts (NULL: defaults) as kmux_cast_options. */
kmux_status kmux_gpu_slot_cast(void *state, void *stream, int64_t n, const void *src,
                               kmux_dtype src_type, void *dst, kmux_dtype dst_type,
                               const kmux_cast_options *opts);
/** kmux_amax. */
kmux_status kmux_gpu_slot_amax(void *state, void *stream, int64_t n, const void *x, kmux_dtype type,
                               float *amax);
/** kmux_unscale_check_finite: one launch per tensor (tensors, sizes, types: host arrays of count
 *  entries); stops at the first failure. */
kmux_status kmux_gpu_slot_unscale(void *state, void *stream, int64_t count, void *const *tensors,
                                  const int64_t *sizes, const kmux_dtype *types,
                                  const float *inv_scale, float *found_inf);
/** kmux_loss_scale_update. */
kmux_status kmux_gpu_slot_loss_scale(void *state, void *stream, float *scale,
                                     int32_t *growth_tracker, const float *found_inf,
                                     double growth_factor, double backoff_factor,
                                     int64_t growth_interval);
/** kmux_fp8_scale_update: KMUX_ERR_UNSUPPORTED when fp8_type is not an fp8 format. */
kmux_status kmux_gpu_slot_fp8_scale(void *state, void *stream, const float *amax_history,
                                    int64_t history_len, kmux_dtype fp8_type, float margin,
                                    float *scale);

/* ---- gpu_tiled.c: kmux_gpu_gemm.cu and kmux_gpu_conv.cu ---- */

/** kmux_gpu_pick_tile: the tile a GPU prefers for an m x n output (arch as there; every current
 *  target gives the same answer). */
int kmux_gpu_host_pick_tile(int arch, int64_t m, int64_t n);
/** The tile of kmux_gpu_host_pick_tile for the implicit GEMM of convolution d. */
int kmux_gpu_host_conv2d_pick_tile(int arch, const kmux_conv2d_desc *d);
/** kmux_gpu_gemm_name: "kmux-gpu:gemm:f16*f16->f32:acc=f32:tile=64x64x16/4x4" into buf. Returns
 *  0, or -1 for an unknown tile or a buffer too small. */
int kmux_gpu_host_gemm_name(const kmux_matmul_desc *d, int tile, char *buf, size_t size);
/** kmux_gpu_conv2d_name: "kmux-gpu:conv2d:fwd:nhwc:f16:acc=f32:tile=64x64x16/4x4" into buf.
 *  Returns 0, or -1 for an unknown tile or a buffer too small. */
int kmux_gpu_host_conv2d_name(const kmux_conv2d_desc *d, int tile, char *buf, size_t size);
/** kmux_gpu_gemm with grid y and z capped at 65535: m == 0, n == 0 or batch 0 does nothing;
 *  refused (KMUX_ERR_UNSUPPORTED) without a kernel for the input pair or when m needs more row
 *  tiles than a grid's x dimension (2^31 - 1); *amax_d zeroed before the launch. */
kmux_status kmux_gpu_host_gemm(const kmux_gpu_launcher *l, const kmux_matmul_desc *d,
                               const kmux_matmul_args *a, int tile);
/** kmux_gpu_conv2d with grid y and z (groups) capped at 65535: an empty output does nothing;
 *  refused (KMUX_ERR_UNSUPPORTED) without a kernel for the dtypes or when the implicit GEMM
 *  needs more row tiles than a grid's x dimension. */
kmux_status kmux_gpu_host_conv2d(const kmux_gpu_launcher *l, const kmux_conv2d_desc *d,
                                 const kmux_conv2d_args *a, int tile);

/* ---- gpu_eltwise.c: kmux_gpu_eltwise.cu, the element-wise family ---- */

/** Fills a device's caps.eltwise with what kmux_gpu_eltwise_ops runs: every algorithm of the
 *  table, f32/f16/bf16, both directions. */
void kmux_gpu_eltwise_caps(kmux_family_caps *c);

/* ---- gpu_optimizer.c: kmux_gpu_optimizer.cu, the optimizer family ---- */

/** Fills a device's caps.optimizer with what kmux_gpu_optimizer_ops runs. */
void kmux_gpu_optimizer_caps(kmux_family_caps *c);

/* ---- gpu_softmax.c: kmux_gpu_softmax.cu, the softmax family ---- */

/** Fills a device's caps.softmax with what kmux_gpu_softmax_ops runs. */
void kmux_gpu_softmax_caps(kmux_family_caps *c);

/* ---- gpu_binary.c, gpu_reduction.c: kmux_gpu_binary.cu, kmux_gpu_reduction.cu ---- */

void kmux_gpu_binary_caps(kmux_family_caps *c);
void kmux_gpu_reduction_caps(kmux_family_caps *c);
/* gpu_pooling.c: kmux_gpu_pooling.cu */
void kmux_gpu_pooling_caps(kmux_family_caps *c);

/** Writes the caps of every op family the GPU kernels run into caps, each where
 *  caps->struct_size covers it (an older core's struct is shorter); gpu_runtime.c. */
void kmux_gpu_families_caps(kmux_device_caps *caps);

/* ---- gpu_post.c: kmux_gpu_post.cu ---- */

/** kmux_gpu_post_launch: *amax (when set) zeroed, then the post kernel of a->d_type (f64; f32,
 *  f16, bf16 with an f32 or d_type bias; i32); refused (KMUX_ERR_UNSUPPORTED) for another d_type
 *  or bias_type. */
kmux_status kmux_gpu_host_post(const kmux_gpu_launcher *l, const kmux_gpu_post_args *a);
/** kmux_gpu_pack_bytes: dst[b * dst_bs + r + c * ldd] = src[b * src_bs + r * src_rs + c * src_cs]
 *  for r < rows, c < cols, b < batch (1-byte elements). */
kmux_status kmux_gpu_host_pack_bytes(const kmux_gpu_launcher *l, const void *src, int64_t rows,
                                     int64_t cols, int64_t src_rs, int64_t src_cs, int64_t src_bs,
                                     void *dst, int64_t ldd, int64_t dst_bs, int64_t batch);

#endif
