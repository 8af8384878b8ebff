/*
 * kmux_gpu_gemm_params.h - the argument struct of kmux_gpu_gemm.cu's gemm_kernel and the host
 * logic that fills it (a launch description), shared by host C and device code so that a module
 * launch (the HIP plugin: hipModuleLaunchKernel with the struct by value in kernelParams) and the
 * <<<>>> launcher of kmux_gpu_gemm.cu agree on the layout and the values. C11 and C++17.
 */
#ifndef KMUX_GPU_GEMM_PARAMS_H
#define KMUX_GPU_GEMM_PARAMS_H

#include <stdint.h>

#include "kmux.h"
#include "kmux_dtype_desc.h"

/** Arguments of gemm_kernel (the semantics are those of kmux_gpu_gemm.cu). */
typedef struct kmux_gpu_gemm_params {
    int64_t m, n, k, batch;
    const void *A, *B;
    void *C;
    const void *bias;
    int64_t a_si, a_sp, b_sp, b_sj, c_si, c_sj; /* element strides of op(A), op(B), C */
    int64_t sa, sb, sc;                         /* batch strides */
    kmux_dtype c_type, bias_type;
    int act; /* 0, KMUX_EPILOGUE_RELU, KMUX_EPILOGUE_GELU */
    int has_bias, skip_ab, read_c, int_plain;
    double alpha, beta; /* the host scalars, exactly */
    /* KMUX_POINTER_MODE_DEVICE: alpha and beta in device memory, of the scale type of scalar_ct,
     * read by the kernel (which then sets alpha, beta, skip_ab and read_c itself); NULL: host */
    const void *alpha_ptr, *beta_ptr;
    int scalar_ct;
    const float *a_scale, *b_scale, *d_scale;
    float *amax;
    /* the auxiliary and backward epilogues (kmux.h kmux_epilogue): aux_mode is 0 or one of
     * KMUX_EPILOGUE_RELU_AUX, _GELU_AUX, _DRELU, _DGELU; aux element (b, i, j) at
     * b * sx + i * x_si + j * x_sj (bits for the mask); bgrad 0, KMUX_EPILOGUE_BGRADA or _BGRADB */
    void *aux;
    int64_t x_si, x_sj, sx;
    kmux_dtype aux_type;
    int aux_mode, bgrad;
    void *bias_grad;
} kmux_gpu_gemm_params;

/** The compute type kmux's own GEMM and convolution kernels really run for a requested one (as
 *  kmux_plan_info.effective_compute reports it): f64 and i32 as asked, strict f32 for the rest
 *  (the fast f32 modes and f16 accumulation are not used by these kernels). */
static inline kmux_compute_type kmux_gpu_own_effective_compute(kmux_compute_type ct) {
    return ct == KMUX_COMPUTE_F64 || ct == KMUX_COMPUTE_I32 ? ct : KMUX_COMPUTE_F32;
}

/** 1 when gemm_kernel is instantiated for inputs (a, b): equal types among f64, f32, f16, bf16
 *  and i8, or two fp8 formats of one family (OCP with OCP, FNUZ with FNUZ), as the type table
 *  allows (kmux_gpu_gemm.cu's launch() has exactly these cases). Any output type of the table. */
static inline int kmux_gpu_gemm_pair_runs(kmux_dtype a, kmux_dtype b) {
    if (kmux_dtype_is_fp8(a) || kmux_dtype_is_fp8(b))
        return kmux_dtype_is_fp8(a) && kmux_dtype_is_fp8(b) &&
               kmux_dtype_is_fnuz(a) == kmux_dtype_is_fnuz(b);
    return a == b &&
           (a == KMUX_F64 || a == KMUX_F32 || a == KMUX_F16 || a == KMUX_BF16 || a == KMUX_I8);
}

/** The alpha or beta at s, of the scale type of compute type ct (double for F64, int32 for I32,
 *  float otherwise, as cublasGemmEx): read on the host (KMUX_POINTER_MODE_HOST) and by the kernel
 *  (KMUX_POINTER_MODE_DEVICE). */
static inline KMUX_DTYPE_HD double kmux_gpu_scalar_value(const void *s, kmux_compute_type ct) {
    if (ct == KMUX_COMPUTE_F64) return *(const double *)s;
    if (ct == KMUX_COMPUTE_I32) return (double)*(const int32_t *)s;
    return (double)*(const float *)s;
}

/** Fills *p for description d and arguments a (kmux_gpu_gemm does exactly this before it
 *  launches; the HIP plugin calls it for its module launch). */
static inline void kmux_gpu_gemm_params_fill(kmux_gpu_gemm_params *p, const kmux_matmul_desc *d,
                                             const kmux_matmul_args *a) {
    const int row = d->order == KMUX_ROW_MAJOR;
    const int ta = d->transa != KMUX_NO_TRANS, tb = d->transb != KMUX_NO_TRANS;
    p->m = d->m, p->n = d->n, p->k = d->k, p->batch = d->batch_count;
    p->A = a->A, p->B = a->B, p->C = a->C, p->bias = a->bias;
    /* op(A)(i, p): row-major A(r, c) = A[r * lda + c], column-major A[r + c * lda] */
    const int a_rows_unit = row == ta; /* consecutive i are consecutive in memory */
    p->a_si = a_rows_unit ? 1 : d->lda;
    p->a_sp = a_rows_unit ? d->lda : 1;
    const int b_cols_unit = row != tb; /* consecutive j are consecutive in memory */
    p->b_sj = b_cols_unit ? 1 : d->ldb;
    p->b_sp = b_cols_unit ? d->ldb : 1;
    p->c_si = row ? d->ldc : 1;
    p->c_sj = row ? 1 : d->ldc;
    p->sa = d->stride_a, p->sb = d->stride_b, p->sc = d->stride_c;
    p->c_type = d->c_type;
    p->bias_type = d->bias_type;
    p->has_bias = (d->epilogue & KMUX_EPILOGUE_BIAS) != 0;
    p->act = (d->epilogue & KMUX_EPILOGUE_RELU)   ? KMUX_EPILOGUE_RELU
             : (d->epilogue & KMUX_EPILOGUE_GELU) ? KMUX_EPILOGUE_GELU
                                                  : 0;
    p->scalar_ct = (int)d->compute_type;
    if (d->pointer_mode == KMUX_POINTER_MODE_DEVICE) {
        p->alpha_ptr = a->alpha, p->beta_ptr = a->beta;
        p->alpha = p->beta = 0.0; /* the kernel reads them */
        p->skip_ab = d->k == 0;
        p->read_c = 1;
    } else {
        p->alpha_ptr = p->beta_ptr = NULL;
        p->alpha = kmux_gpu_scalar_value(a->alpha, d->compute_type);
        p->beta = kmux_gpu_scalar_value(a->beta, d->compute_type);
        p->skip_ab = d->k == 0 || p->alpha == 0.0;
        p->read_c = p->beta != 0.0;
    }
    p->a_scale = a->a_scale, p->b_scale = a->b_scale, p->d_scale = a->d_scale;
    p->amax = a->amax_d;
    p->aux = a->aux, p->aux_type = d->aux_type, p->sx = d->stride_aux;
    p->x_si = row ? d->aux_ld : 1;
    p->x_sj = row ? 1 : d->aux_ld;
    const unsigned e = d->epilogue;
    p->aux_mode = (int)(e & (KMUX_EPILOGUE_RELU_AUX | KMUX_EPILOGUE_GELU_AUX | KMUX_EPILOGUE_DRELU |
                             KMUX_EPILOGUE_DGELU));
    p->bgrad = (int)(e & (KMUX_EPILOGUE_BGRADA | KMUX_EPILOGUE_BGRADB));
    p->bias_grad = a->bias_grad;
    p->int_plain = d->compute_type == KMUX_COMPUTE_I32 && d->epilogue == KMUX_EPILOGUE_NONE &&
                   !a->a_scale && !a->b_scale && !a->d_scale && !a->amax_d;
}

#endif
