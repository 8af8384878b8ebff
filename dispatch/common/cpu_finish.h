/*
 * cpu_finish.h - THE CPU "finish" of a matmul: from an accumulator (or none, for the degenerate
 * problems k == 0 and alpha == 0) to the stored result, element by element in double:
 *
 *   D = d_scale * act(alpha * a_scale * b_scale * acc + beta * C + bias)   rounded ONCE to c_type
 *
 * amax_d receives max |act(...)| before d_scale (NaN ignored); beta == 0 never reads C; with no
 * accumulator, C = beta * C keeps the sign of zero (as the reference BLAS). Integer GEMM (I32
 * compute) without epilogue or scales wraps modulo 2^32 (as cuBLAS and ref); with scales or amax
 * it is computed in double, rounded to nearest even and saturated. GELU is the tanh form
 * (cuBLASLt's CUBLASLT_EPILOGUE_GELU), defined here once. The auxiliary and backward epilogues
 * (kmux.h kmux_epilogue): RELU_AUX's mask bit / GELU_AUX's input written before the activation,
 * DRELU's select / DGELU's product applied to t; BGRADA / BGRADB's sums of op(A) / op(B) (f64,
 * rounded once) by kmux_cpu_finish, or kmux_cpu_matmul_bias_grad for a backend that finishes
 * batch by batch or not at all (they do not depend on D).
 *
 * Used by the core for the degenerate problems of host devices, and by the CPU backends (ref,
 * openblas, onednn) after their GEMM. Host memory only; part of kmux_common.
 */
#ifndef KMUX_CPU_FINISH_H
#define KMUX_CPU_FINISH_H

#include "kmux_backend.h"

/** An accumulator buffer in C's storage order: element (b, i, j) at
 *  data + b * batch_stride + (row-major ? i * ld + j : i + j * ld), of type f64, f32 or i32. */
typedef struct kmux_cpu_acc {
    const void *data;
    kmux_dtype type; /**< KMUX_F64, KMUX_F32 or KMUX_I32 */
    int64_t ld, batch_stride;
} kmux_cpu_acc;

/** GELU, tanh approximation: 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))). */
double kmux_gelu_tanh(double x);

/** d/dx of kmux_gelu_tanh (DGELU). */
double kmux_gelu_tanh_grad(double x);

/** Finishes batch `batch` of a matmul of validated desc and args (host scalars and scales):
 *  acc (NULL: no product, the degenerate case) points at THIS batch's accumulator. Folds
 *  max |act(...)| into *amax (when args->amax_d is set; the caller stores it). */
void kmux_cpu_finish_batch(const kmux_matmul_desc *desc, const kmux_matmul_args *args,
                           const kmux_cpu_acc *acc, int64_t batch, double *amax);

/** BGRADA / BGRADB of a validated desc (nothing for another epilogue): args->bias_grad = the sums
 *  over k of op(A)'s rows or op(B)'s columns of args->A / args->B, in f64, rounded once. */
void kmux_cpu_matmul_bias_grad(const kmux_matmul_desc *desc, const kmux_matmul_args *args);

/** Every batch (acc->data, when acc is not NULL, is batch 0's accumulator), then *args->amax_d
 *  and the bias gradient (kmux_cpu_matmul_bias_grad). */
void kmux_cpu_finish(const kmux_matmul_desc *desc, const kmux_matmul_args *args,
                     const kmux_cpu_acc *acc);

/** A forward convolution's epilogue (kmux.h kmux_conv2d_desc.epilogue) as the degenerate matmul
 *  over y (k = 0, alpha = beta = *one: y = act(y + bias[k]) with the mask of y + bias > 0), whose
 *  columns are the output channels and whose mask bit index is the element's offset in y:
 *    NHWC  row-major, N P Q rows of K, one matrix
 *    NCHW  column-major, P Q rows of K columns (ldc = P Q), one matrix an image (batch N)
 *  Fills *md and *ma (C = y, bias, aux; one: a float, or a double for an f64 y). Used by the core
 *  (the epilogue after a backend's convolution) and by cpu:onednn's fused finish. */
void kmux_conv_epilogue_matmul(const kmux_conv2d_desc *d, void *y, const void *bias, void *aux,
                               const void *one, kmux_matmul_desc *md, kmux_matmul_args *ma);

#endif
