/*
 * ref_gemm.c - reference matmul: D = d_scale * act(a_scale * b_scale * alpha * op(A) op(B)
 *              + beta * C + bias), per batch matrix.
 *
 * Inputs are decoded exactly to double (op(A) one row at a time, op(B) once per batch matrix,
 * transposed so that every dot product runs over contiguous memory), products are summed in
 * double in the order l = 0..k-1, and the result is rounded once to c_type (RNE, overflow to
 * Inf). For I32 compute the i8 products are summed exactly (in double, exact while |sum| < 2^53,
 * i.e. k < 2^39) and alpha * AB + beta * C is evaluated modulo 2^32 (two's complement
 * wrap-around, as integer GEMMs of cuBLAS); with an epilogue or scales the I32 result is computed
 * in double and rounded to nearest even, saturating at the int32 range.
 *
 * BLAS semantics the core relies on: k == 0 or alpha == 0 never reads A or B (which may be
 * NULL); beta == 0 never reads C. amax_d receives max |act(...)| over the batch, before d_scale,
 * NaN ignored.
 */
#include "ref_internal.h"
#include "ref_dtype.h"

#include <math.h>
#include <stdlib.h>

kmux_status kmux_ref_matmul_plan_create(void *state, int device, const kmux_matmul_desc *desc,
                                        const kmux_plan_prefs *prefs, void **plan) {
    ref_plan *p = calloc(1, sizeof *p);
    if (!p) return kmux_ref_oom(state, "kmux_matmul_plan_create", sizeof *p);
    p->kind = REF_PLAN_MATMUL;
    p->mm = *desc;
    *plan = p;
    return KMUX_OK;
}

/* Element offset of (row, col) of a matrix stored in `order` with leading dimension ld. */
static int64_t ref_at(kmux_order order, int64_t row, int64_t col, int64_t ld) {
    return order == KMUX_ROW_MAJOR ? row * ld + col : row + col * ld;
}

/* Host scalar of the compute type's scale type, as double. */
static double ref_scalar(const void *p, kmux_compute_type ct) {
    if (ct == KMUX_COMPUTE_F64) return *(const double *)p;
    if (ct == KMUX_COMPUTE_I32) return (double)*(const int32_t *)p;
    return (double)*(const float *)p;
}

/* Two's complement wrap of the low 32 bits (portable: no implementation-defined conversion). */
static int32_t ref_wrap_i32(uint64_t u) {
    uint32_t w = (uint32_t)u;
    if (w <= (uint32_t)INT32_MAX) return (int32_t)w;
    return (int32_t)(w - 2147483648u) - INT32_MAX - 1;
}

/* tanh approximation of GELU, as cuBLASLt's CUBLASLT_EPILOGUE_GELU. */
static double ref_gelu(double x) {
    const double sqrt_2_over_pi = 0.7978845608028654;
    return 0.5 * x * (1.0 + tanh(sqrt_2_over_pi * (x + 0.044715 * x * x * x)));
}

/* Execution context of one call, to keep the per-batch function's argument list short. */
typedef struct ref_mm_run {
    const kmux_matmul_desc *d;
    const kmux_matmul_args *a;
    double alpha, beta, ab_scale, d_scale;
    int skip_ab;   /* k == 0 or alpha == 0: A and B are not read */
    int int_plain; /* I32 compute without epilogue or scales: wrap-around arithmetic */
    double amax;
    double *row_a; /* k decoded elements of op(A) row i */
    double *bt;    /* n x k: op(B) transposed, decoded */
} ref_mm_run;

static void ref_mm_decode_b(ref_mm_run *r, int64_t base_b) {
    const kmux_matmul_desc *d = r->d;
    for (int64_t j = 0; j < d->n; j++)
        for (int64_t l = 0; l < d->k; l++) {
            int64_t at = d->transb == KMUX_NO_TRANS ? ref_at(d->order, l, j, d->ldb)
                                                    : ref_at(d->order, j, l, d->ldb);
            r->bt[j * d->k + l] = kmux_ref_load(r->a->B, d->b_type, base_b + at);
        }
}

static void ref_mm_batch(ref_mm_run *r, int64_t batch) {
    const kmux_matmul_desc *d = r->d;
    const kmux_matmul_args *a = r->a;
    int64_t base_c = batch * d->stride_c;
    if (!r->skip_ab) ref_mm_decode_b(r, batch * d->stride_b);
    for (int64_t i = 0; i < d->m; i++) {
        if (!r->skip_ab)
            for (int64_t l = 0; l < d->k; l++) {
                int64_t at = d->transa == KMUX_NO_TRANS ? ref_at(d->order, i, l, d->lda)
                                                        : ref_at(d->order, l, i, d->lda);
                r->row_a[l] = kmux_ref_load(a->A, d->a_type, batch * d->stride_a + at);
            }
        for (int64_t j = 0; j < d->n; j++) {
            double acc = 0.0;
            if (!r->skip_ab) {
                const double *b = r->bt + j * d->k;
                for (int64_t l = 0; l < d->k; l++)
                    acc += r->row_a[l] * b[l];
            }
            int64_t ci = base_c + ref_at(d->order, i, j, d->ldc);
            if (r->int_plain) {
                uint64_t v = (uint64_t)(int64_t)r->alpha * (uint64_t)(int64_t)acc;
                if (r->beta != 0.0)
                    v += (uint64_t)(int64_t)r->beta * (uint64_t)((const int32_t *)a->C)[ci];
                ((int32_t *)a->C)[ci] = ref_wrap_i32(v);
                continue;
            }
            double t = r->skip_ab ? 0.0 : r->ab_scale * r->alpha * acc;
            if (r->beta != 0.0) { /* as the reference BLAS: C = beta * C keeps the sign of 0 */
                double bc = r->beta * kmux_ref_load(a->C, d->c_type, ci);
                t = r->skip_ab ? bc : t + bc;
            }
            if (d->epilogue & KMUX_EPILOGUE_BIAS) t += kmux_ref_load(a->bias, d->bias_type, j);
            if (d->epilogue & KMUX_EPILOGUE_RELU) t = t > 0.0 ? t : (isnan(t) ? t : 0.0);
            if (d->epilogue & KMUX_EPILOGUE_GELU) t = ref_gelu(t);
            if (fabs(t) > r->amax) r->amax = fabs(t); /* false for NaN: ignored */
            kmux_ref_store(a->C, d->c_type, ci, r->d_scale * t, 0);
        }
    }
}

kmux_status kmux_ref_matmul_execute(void *state, void *plan, void *stream,
                                    const kmux_matmul_args *args) {
    const ref_plan *p = plan;
    const kmux_matmul_desc *d = &p->mm;
    ref_mm_run r = {0};
    r.d = d;
    r.a = args;
    r.alpha = ref_scalar(args->alpha, d->compute_type);
    r.beta = ref_scalar(args->beta, d->compute_type);
    r.ab_scale = (args->a_scale ? (double)*args->a_scale : 1.0) *
                 (args->b_scale ? (double)*args->b_scale : 1.0);
    r.d_scale = args->d_scale ? (double)*args->d_scale : 1.0;
    r.skip_ab = d->k == 0 || r.alpha == 0.0;
    r.int_plain = d->compute_type == KMUX_COMPUTE_I32 && d->epilogue == KMUX_EPILOGUE_NONE &&
                  !args->a_scale && !args->b_scale && !args->d_scale && !args->amax_d;
    if (!r.skip_ab) {
        size_t bytes = ((size_t)d->k + (size_t)d->n * (size_t)d->k) * sizeof(double);
        r.row_a = malloc(bytes);
        if (!r.row_a) return kmux_ref_oom(state, "kmux_matmul_execute", bytes);
        r.bt = r.row_a + d->k;
    }
    for (int64_t b = 0; b < d->batch_count; b++)
        ref_mm_batch(&r, b);
    free(r.row_a);
    if (args->amax_d) *args->amax_d = (float)r.amax;
    return KMUX_OK;
}
