/*
 * kmux_cpu_kernels.h - kmux's own CPU kernels (static library kmux_cpu_kernels, linked into the
 * CPU backends). Vectorised with F16C/AVX2 where the CPU has them, chosen at RUN time
 * (__builtin_cpu_supports), with a portable C path otherwise. Arguments are trusted (validated
 * by the core). Sizes are elements.
 */
#ifndef KMUX_CPU_KERNELS_H
#define KMUX_CPU_KERNELS_H

#include <stdint.h>
#include "kmux.h"

/* ---- CPU feature detection (cached) ---- */
int kmux_cpu_has_avx2_fma(void); /* AVX2 + FMA */
int kmux_cpu_has_f16c(void);
int kmux_cpu_has_avx512f(void); /* AVX-512 Foundation, with the OS saving ZMM state */
/* The output size (bytes) from which a bandwidth-bound kernel streams its output past the caches
 * (cpu_stream.h): 3/4 of the last-level cache (glibc's rule for its own memcpy), 8 MiB where the
 * cache size is not known, kept within [4, 32] MiB (a VM may report its host's whole L3). */
size_t kmux_cpu_stream_min_bytes(void);
int kmux_cpu_has_avx512_bf16(void);
int kmux_cpu_has_avx512_fp16(void);

/* ---- dtype conversion (kernels/cpu/cast*.c) ---- */
/** Widens n elements of a floating type (f16, bf16, fp8 x4, f32, f64) to f32, exactly (every
 *  narrow value is representable in f32). `threads` >= 1 splits large arrays. */
void kmux_cpu_to_f32(int64_t n, const void *src, kmux_dtype src_type, float *dst, int threads);
/** Widens a strided matrix: rows x cols elements with leading dimension ld (row-major view) into
 *  a dense rows x cols f32 matrix (leading dimension cols). */
void kmux_cpu_matrix_to_f32(int64_t rows, int64_t cols, const void *src, kmux_dtype src_type,
                            int64_t ld, float *dst, int threads);
/** The full kmux_cast semantics of kmux.h (RNE, NaN kept, saturate, scale, amax). Returns
 *  KMUX_OK or KMUX_ERR_UNSUPPORTED for a pair it does not handle. */
kmux_status kmux_cpu_cast(int64_t n, const void *src, kmux_dtype src_type, void *dst,
                          kmux_dtype dst_type, int saturate, const float *scale, float *amax,
                          int threads);
/** Rounds one f32 to a narrow format with the kmux_cast rules; returns the bit pattern. */
uint16_t kmux_cpu_f32_to_f16_bits(float x);
uint16_t kmux_cpu_f32_to_bf16_bits(float x);
uint8_t kmux_cpu_f32_to_fp8_bits(float x, kmux_dtype fp8_type, int saturate);
float kmux_cpu_f16_bits_to_f32(uint16_t h);
float kmux_cpu_bf16_bits_to_f32(uint16_t b);
float kmux_cpu_fp8_bits_to_f32(uint8_t v, kmux_dtype fp8_type);
/** v rounded to f32 "to odd": toward zero, the last mantissa bit set when inexact (NaN and
 *  results that round to +-Inf as a plain conversion gives them). Rounding that f32 to nearest
 *  even in a format of at least 2 fewer mantissa bits (f16, bf16) rounds v once. */
float kmux_cpu_f64_to_f32_odd(double v);

/* ---- mixed-precision utilities (kernels/cpu/amp.c), semantics of kmux.h ---- */
float kmux_cpu_amax(int64_t n, const void *x, kmux_dtype type, int threads);

/** Returns 1 when any element was Inf/NaN before scaling. */
int kmux_cpu_unscale_check_finite(int64_t n, void *x, kmux_dtype type, float inv_scale,
                                  int threads);

/* ---- op families (kernels/cpu/eltwise.c, optimizer.c, softmax.c, binary.c, reduction.c,
 *      pooling.c) ---- */

/** The element-wise op of a validated description (kmux_eltwise_execute's semantics, n >= 1) on
 *  up to `threads` threads: the f32 formulas of dispatch/common/kmux_eltwise.h, f16/bf16 decoded
 *  to f32 and rounded once (RNE). args holds the pointers the direction uses. */
void kmux_cpu_eltwise(const kmux_eltwise_desc *d, const kmux_eltwise_args *args, int threads);

/** One optimizer step of a validated description (kmux_optimizer_execute's semantics, n >= 1;
 *  grad_scale and found_inf read from host memory) on up to `threads` threads. */
void kmux_cpu_optimizer(const kmux_optimizer_desc *d, const kmux_optimizer_args *args, int threads);

/** A softmax op of a validated description (kmux_softmax_execute's semantics, rows >= 1;
 *  grad_scale read from host memory) on up to `threads` threads. */
void kmux_cpu_softmax(const kmux_softmax_desc *d, const kmux_softmax_args *args, int threads);

/** 1 when kmux_cpu_matmul_epilogue gives the shared CPU finish's bits for d and a: an epilogue
 *  of BIAS, RELU, RELU_AUX (aux_ld and stride_aux multiples of 8 bits) or DRELU (the same), no
 *  GELU, no d_scale or amax_d, C in f32, bf16 or f16, bias in f32 or c_type. */
int kmux_cpu_matmul_epilogue_runs(const kmux_matmul_desc *d, const kmux_matmul_args *a);
/** C of batch `batch` (a->C + batch * stride_c) = relu?(t + bias) (DRELU: t where the mask's bit
 *  is set, else 0; RELU_AUX: the bits of t + bias > 0 written), t the f32 GEMM result in C's
 *  storage order with leading dimension ldt (t may be C itself when c_type is f32), rounded once
 *  to c_type as the shared CPU finish rounds (kernels/cpu/epilogue.c), on up to `threads`
 *  threads. Only where kmux_cpu_matmul_epilogue_runs. */
void kmux_cpu_matmul_epilogue(const kmux_matmul_desc *d, const kmux_matmul_args *a, const float *t,
                              int64_t ldt, int64_t batch, int threads);
/** The runs of kmux_cpu_matmul_epilogue (stored rows of C: m row-major, n column-major), and the
 *  runs [begin, end) of it on the calling thread, for a backend that splits them over a thread
 *  team of its own (oneDNN's OpenMP team, awake after its primitive). */
int64_t kmux_cpu_matmul_epilogue_runs_count(const kmux_matmul_desc *d);
void kmux_cpu_matmul_epilogue_part(const kmux_matmul_desc *d, const kmux_matmul_args *a,
                                   const float *t, int64_t ldt, int64_t batch, int64_t begin,
                                   int64_t end);

/** BGRADA / BGRADB (nothing for another epilogue): the sums over k of op(A)'s rows or op(B)'s
 *  columns into args->bias_grad, by the threaded SUM reduction (f64, rounded once) where the
 *  operand is dense, else by the shared finish's loop (kmux_cpu_matmul_bias_grad). */
void kmux_cpu_matmul_bias_grad_fast(const kmux_matmul_desc *d, const kmux_matmul_args *a,
                                    int threads);

/** A binary op of a validated description with no 0 in its shape (kmux_binary_execute's
 *  semantics; dst == src0 allowed) on up to `threads` threads (kernels/cpu/binary.c). */
void kmux_cpu_binary(const kmux_binary_desc *d, const kmux_binary_args *args, int threads);

/** A reduction of a validated description whose dst has elements (kmux_reduction_execute's
 *  semantics, f64 accumulation) on up to `threads` threads (kernels/cpu/reduction.c). */
void kmux_cpu_reduction(const kmux_reduction_desc *d, const kmux_reduction_args *args, int threads);

/** A pooling op of a validated description with n, c >= 1 (kmux_pooling_execute's semantics) on
 *  up to `threads` threads (kernels/cpu/pooling.c). */
void kmux_cpu_pooling(const kmux_pooling_desc *d, const kmux_pooling_args *args, int threads);

/* ---- exact s8 x s8 -> s32 GEMM on u8 x s8 kernels (kernels/cpu/int8_gemm.c); each call runs
 *      on the calling thread (callers split rows or columns) ---- */
/** Column sums of the k x n int8 matrix Q, stored untransposed (trans 0: row l at q + l * ld)
 *  or transposed (trans 1: column j at q + j * ld): sums[j] = sum over l of Q(l, j), modulo 2^32
 *  (two's complement, as integer BLAS wraps). Returns the largest column sum of absolute values,
 *  max_j sum_l |Q(l, j)| (INT64_MAX when k >= 2^25, where it is not formed). */
int64_t kmux_cpu_s8_col_sums(int64_t k, int64_t n, const int8_t *q, int64_t ld, int trans,
                             int32_t *sums);
/** The largest |v| (0..128) of a rows x cols int8 matrix (row i at src + i * ld). */
int kmux_cpu_s8_abs_max(int64_t rows, int64_t cols, const int8_t *src, int64_t ld);
/** The u8 copy P + 128 of a rows x cols int8 matrix (row i at src + i * ld) into the dense
 *  rows x cols u8 matrix dst (leading dimension cols). */
void kmux_cpu_s8_to_u8_biased(int64_t rows, int64_t cols, const int8_t *src, int64_t ld,
                              uint8_t *dst);
/** Takes the u8 bias out of (P + 128) Q in place: c(i, j) -= 128 * sums[j] modulo 2^32 for a
 *  rows x cols s32 matrix with leading dimension ldc (sums from kmux_cpu_s8_col_sums). */
void kmux_cpu_s32_sub_bias_comp(int64_t rows, int64_t cols, int32_t *c, int64_t ldc,
                                const int32_t *sums);

/* ---- convolution helpers (kernels/cpu/im2col.c), NCHW or NHWC, one image, one group ---- */
/*
 * The geometry (layout, c, h, w, r, s, groups, strides, pad_top, pad_left, dilations; 1 = dense)
 * comes from a kmux_conv2d_desc; p and q are its output height and width. x is ONE image
 * (c*h*w f32 in the layout) and g a group index in [0, groups); Cg = c/groups. The column
 * matrix of group g is row-major f32:
 *   NCHW: (Cg*r*s) x (p*q), row (ci*r + ri)*s + si, column pi*q + qi  -> W_g[K/g x Cg*r*s] * col
 *   NHWC: (p*q) x (r*s*Cg), row pi*q + qi, column (ri*s + si)*Cg + ci  -> col * W_g^T
 * (the filter layouts KCRS and KRSC give exactly these row orders). Taps that fall into the
 * padding are 0 in col.
 */
/** Lowers image x, group g, to its column matrix col (fully written). */
void kmux_cpu_im2col_f32(const kmux_conv2d_desc *d, int64_t p, int64_t q, int64_t g, const float *x,
                         float *col);
/** The adjoint of kmux_cpu_im2col_f32: ADDS every element of col into the image x at the tap it
 *  was read from (overlapping taps accumulate; padding taps are dropped). Channels of other
 *  groups are not touched. */
void kmux_cpu_col2im_f32(const kmux_conv2d_desc *d, int64_t p, int64_t q, int64_t g,
                         const float *col, float *x);

/* Panels (kernels/cpu/im2col_panel.c): the columns [j0, j1) of the column matrices of a BATCH of
 * images, pixel j being pixel j % (p*q) of image j / (p*q); x is the first image, images follow
 * each other (c*h*w f32 apart). The panel is the matrix above restricted to those pixels:
 *   NCHW: (Cg*r*s) x (j1 - j0), leading dimension j1 - j0;   NHWC: (j1 - j0) x (r*s*Cg).
 * All split the work across up to `threads` threads (run serially for small panels).
 * phases: NULL, or a scratch of kmux_cpu_im2col_phase_bytes(d, threads) bytes, with which strided
 * NCHW panels of whole images are lowered (scattered) by phases (kernels/cpu/im2col_phases.c). */
/** Bytes of the `phases` scratch for up to `threads` threads; 0 where phases do not apply (NHWC,
 *  stride 1, a stride wider than the filter's extent, over 64 MiB a thread). */
size_t kmux_cpu_im2col_phase_bytes(const kmux_conv2d_desc *d, int threads);
/** Lowers pixels [j0, j1) of group g to the panel col (fully written). */
void kmux_cpu_im2col_panel_f32(const kmux_conv2d_desc *d, int64_t p, int64_t q, int64_t g,
                               const float *x, int64_t j0, int64_t j1, float *col, float *phases,
                               int threads);
/** The adjoint: ADDS the panel col into the images at x. Threads take disjoint channels (NHWC
 *  whose taps cannot overlap, a stride at least the filter's extent: disjoint pixels), so every
 *  element receives its additions in the same order for any thread count. col is scratch: NCHW
 *  may zero its entries of taps outside the image. x must hold no -0 (the caller prescales it
 *  with "+ 0.0f"): runs of whole rows add those zeros to neighbouring pixels. */
void kmux_cpu_col2im_panel_f32(const kmux_conv2d_desc *d, int64_t p, int64_t q, int64_t g,
                               float *col, int64_t j0, int64_t j1, float *x, int threads);
/** The adjoint by phases, with beta: x = beta * x + the adjoint of col on the planes of group g of
 *  the panel's images (every element written; beta = 0: x is not read, NaN there is dropped), on
 *  up to `threads` threads, in the same order for any thread count. Applies to a panel of whole
 *  images (j0 and j1 multiples of p*q) with phases of kmux_cpu_im2col_phase_bytes(d, threads) > 0
 *  bytes; returns 1, or 0 having done nothing where it does not apply. col is scratch. */
int kmux_cpu_col2im_panel_phases_f32(const kmux_conv2d_desc *d, int64_t p, int64_t q, int64_t g,
                                     float *col, int64_t j0, int64_t j1, float *x, float beta,
                                     float *phases, int threads);
/** x = beta * x + 0.0f over n floats, before col2im adds its taps into x
 *  (kmux_cpu_col2im_panel_f32) or sgemm calls with beta = 1 add their products (the OpenBLAS
 *  convolution by rows), in IEEE mode whatever the caller's (kmux_cast_fp_enter), as the
 *  worker threads of the col2im kernels run; beta = 0 zeroes x without reading it (NaN there is
 *  dropped). The "+ 0.0f" turns -0 into +0, so that elements no tap reaches come out as
 *  alpha * 0 + beta * x does (beta = -1, x = 0: +0). */
void kmux_cpu_col2im_prescale_f32(float *x, int64_t n, float beta);
/** Whether the taps of d never overlap: a stride at least the filter's extent in both dimensions
 *  (ResNet's strided 1x1 layers). Each element of x then receives at most one tap. */
int kmux_cpu_col2im_disjoint(const kmux_conv2d_desc *d);
/** The adjoint in one pass over x where the taps never overlap (kmux_cpu_col2im_disjoint): x =
 *  beta * x + the adjoint of col on group g's channels of the panel's images, each element
 *  receiving at most one tap, rounded as kmux_cpu_col2im_panel_f32 after x = beta * x + 0.0f
 *  (beta = 0: x is not read), on up to `threads` threads (NCHW: half of them), the same for any
 *  thread count (col2im_disjoint.c). Applies to a
 *  panel of whole images (j0 and j1 multiples of p*q); returns 1, or 0 having done nothing where
 *  it does not apply. */
int kmux_cpu_col2im_panel_disjoint_f32(const kmux_conv2d_desc *d, int64_t p, int64_t q, int64_t g,
                                       const float *col, int64_t j0, int64_t j1, float *x,
                                       float beta, int threads);
#endif
