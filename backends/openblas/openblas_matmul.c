/*
 * openblas_matmul.c - matmul plans of the OpenBLAS backend.
 *
 * Three implementations, chosen by the types (the core has validated the combination):
 *   "openblas:dgemm"       f64, compute F64: cblas_dgemm
 *   "openblas:sgemm"       f32, compute F32 (strict): cblas_sgemm
 *   "openblas:sgemm+cvt"   f16, bf16, fp8 inputs, compute F32, only with prefs->allow_emulation:
 *                          A and B are widened exactly to f32 in a per-execute workspace, sgemm
 *                          accumulates in f32, and the result is rounded once to c_type.
 * F32_FAST_TF32/BF16, F16 accumulation and i8 are left out of the device's capabilities
 * (openblas_backend.c), so the core refuses them: OpenBLAS has no such modes and kmux never
 * substitutes another precision silently; so are sizes beyond OpenBLAS's 32-bit blasint.
 *
 * The core runs empty problems, k == 0 and alpha == 0 itself; beta == 0 never reads C
 * (OpenBLAS's GEMM_BETA stores 0 for beta == 0, checked by tests/test_openblas.c with NaN in C).
 *
 * Determinism: OpenBLAS's level-3 threading splits M and N between threads, never K, so each
 * element of C is one dot product summed in a fixed order by one thread; the split depends only
 * on the shape and the thread count, which is fixed for the process (openblas_set_num_threads at
 * init). Results are therefore bitwise reproducible run to run, and the plans say so.
 */
#include "openblas_internal.h"

#include <cblas.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dispatch/common/cpu_finish.h"
#include "kernels/cpu/kmux_cpu_kernels.h"
#include "kmux_sys_alloc.h"

typedef enum mm_path { MM_DGEMM, MM_SGEMM, MM_SGEMM_CVT } mm_path;

typedef struct mm_plan {
    kmux_ob_plan head; /* must be first */
    kmux_matmul_desc d;
    mm_path path;
    /* row-major views of the stored A, B, C (rows x cols; ld = the user's) */
    int64_t a_rows, a_cols, b_rows, b_cols, c_rows, c_cols;
    size_t ws_a, ws_b, ws_c; /* bytes of each workspace part */
} mm_plan;

/* Row-major view of an operand stored in `order`, op()-ed with `trans`, of logical shape
 * rows x cols after op(). */
static void stored_view(kmux_order order, kmux_transpose trans, int64_t rows, int64_t cols,
                        int64_t *vr, int64_t *vc) {
    int swap = (order == KMUX_COL_MAJOR) != (trans == KMUX_TRANS);
    *vr = swap ? cols : rows;
    *vc = swap ? rows : cols;
}

static kmux_status unsupported(kmux_ob_state *st, const kmux_matmul_desc *d, const char *why) {
    return KMUX_OB_ERROR(st, KMUX_ERR_UNSUPPORTED,
                         "kmux_matmul_plan_create: backend openblas cannot run a=%s b=%s c=%s "
                         "compute=%s: %s",
                         kmux_common_dtype_name(d->a_type), kmux_common_dtype_name(d->b_type),
                         kmux_common_dtype_name(d->c_type),
                         kmux_common_compute_type_name(d->compute_type), why);
}

/* The implementation of a capability-checked type row (see openblas_backend.c). */
static mm_path choose_path(const kmux_matmul_desc *d) {
    if (d->a_type == KMUX_F64) return MM_DGEMM;
    if (d->a_type == KMUX_F32) return MM_SGEMM;
    return MM_SGEMM_CVT;
}

kmux_status kmux_ob_matmul_plan_create(void *state, int device, const kmux_matmul_desc *desc,
                                       const kmux_plan_prefs *prefs, void **plan, int *impl_count) {
    kmux_ob_state *st = state;
    mm_path path = choose_path(desc);

    mm_plan *p = kmux_sys_calloc(1, sizeof *p);
    if (!p)
        return KMUX_OB_ERROR(st, KMUX_ERR_OUT_OF_MEMORY,
                             "kmux_matmul_plan_create: backend openblas: out of host memory (%zu "
                             "bytes)",
                             sizeof *p);
    p->d = *desc;
    p->path = path;
    stored_view(desc->order, desc->transa, desc->m, desc->k, &p->a_rows, &p->a_cols);
    stored_view(desc->order, desc->transb, desc->k, desc->n, &p->b_rows, &p->b_cols);
    stored_view(desc->order, KMUX_NO_TRANS, desc->m, desc->n, &p->c_rows, &p->c_cols);

    /* Workspace of one execute (batches reuse it one after the other). The sizes are products
     * of validated, capability-checked (blasint) dimensions, so they fit in size_t on a 64-bit
     * host. */
    if (path == MM_SGEMM_CVT) {
        p->ws_a = (size_t)(p->a_rows * p->a_cols) * sizeof(float);
        p->ws_b = (size_t)(p->b_rows * p->b_cols) * sizeof(float);
        if (desc->c_type != KMUX_F32) p->ws_c = (size_t)(p->c_rows * p->c_cols) * sizeof(float);
    }
    size_t ws = p->ws_a + p->ws_b + p->ws_c + 3 * 64; /* + alignment of 3 parts */
    if (ws > prefs->max_workspace_bytes && (p->ws_a + p->ws_b + p->ws_c) > 0) {
        free(p);
        char why[160];
        snprintf(why, sizeof why, "needs %zu bytes of workspace, prefs.max_workspace_bytes is %zu",
                 ws, prefs->max_workspace_bytes);
        return unsupported(st, desc, why);
    }
    if (p->ws_a + p->ws_b + p->ws_c == 0) ws = 0;

    p->head.kind = KMUX_OB_MATMUL;
    p->head.effective_compute = path == MM_DGEMM ? KMUX_COMPUTE_F64 : KMUX_COMPUTE_F32;
    p->head.workspace_bytes = ws;
    p->head.deterministic = 1; /* see the file comment */
    snprintf(p->head.impl, sizeof p->head.impl, "openblas:%s%s%s%s%s",
             path == MM_DGEMM ? "dgemm" : "sgemm", path == MM_SGEMM_CVT ? "+cvt" : "",
             (desc->epilogue & KMUX_EPILOGUE_BIAS) ? "+bias" : "",
             (desc->epilogue & KMUX_EPILOGUE_RELU) ? "+relu" : "",
             (desc->epilogue & KMUX_EPILOGUE_GELU) ? "+gelu" : "");
    *plan = p;
    *impl_count = 1;
    return KMUX_OK;
}

/* ---- execution -------------------------------------------------------------------------- */

static size_t align64(size_t b) {
    return (b + 63) & ~(size_t)63;
}

static CBLAS_ORDER cb_order(kmux_order o) {
    return o == KMUX_COL_MAJOR ? CblasColMajor : CblasRowMajor;
}

static CBLAS_TRANSPOSE cb_trans(kmux_transpose t) {
    return t == KMUX_TRANS ? CblasTrans : CblasNoTrans;
}

/* What follows the GEMM (bias, activation, d_scale, amax, the one rounding to c_type) is the
 * shared CPU finish, run on the GEMM's result as its accumulator: alpha and beta are already in
 * it, so the finish sees alpha = 1, beta = 0 and no a/b scales. */
typedef struct mm_finish {
    int active;  /* epilogue, d_scale or amax_d */
    int fast;    /* bias/ReLU over an f32 result: kmux_cpu_matmul_epilogue */
    int threads; /* of the context */
    kmux_matmul_args args;
    double amax;
} mm_finish;

static void finish_init(const mm_plan *p, const kmux_matmul_args *args, int threads, mm_finish *f) {
    static const float one_f = 1.0f, zero_f = 0.0f;
    static const double one_d = 1.0, zero_d = 0.0;
    /* the bias gradients do not touch D: kmux_cpu_matmul_bias_grad after the GEMM */
    f->active = (p->d.epilogue & ~(unsigned)(KMUX_EPILOGUE_BGRADA | KMUX_EPILOGUE_BGRADB)) ||
                args->d_scale || args->amax_d;
    f->args = *args;
    f->args.alpha = p->path == MM_DGEMM ? (const void *)&one_d : (const void *)&one_f;
    f->args.beta = p->path == MM_DGEMM ? (const void *)&zero_d : (const void *)&zero_f;
    f->args.a_scale = f->args.b_scale = NULL;
    f->amax = 0.0;
    f->fast = f->active && p->path != MM_DGEMM && kmux_cpu_matmul_epilogue_runs(&p->d, args);
    f->threads = threads;
}

/* Batch b: t (f64 or f32, C's storage order, leading dimension ldt) -> C: bias and ReLU over an
 * f32 result by the threaded kernel (the same bits), everything else by the shared finish. */
static void finish_batch(const mm_plan *p, mm_finish *f, const void *t, int64_t ldt, int64_t b) {
    if (f->fast) {
        kmux_cpu_matmul_epilogue(&p->d, &f->args, t, ldt, b, f->threads);
        return;
    }
    const kmux_cpu_acc acc = {t, p->path == MM_DGEMM ? KMUX_F64 : KMUX_F32, ldt, 0};
    kmux_cpu_finish_batch(&p->d, &f->args, &acc, b, &f->amax);
}

static float scale_product(const kmux_matmul_args *args) {
    float s = 1.0f;
    if (args->a_scale) s *= *args->a_scale;
    if (args->b_scale) s *= *args->b_scale;
    return s;
}

static void run_dgemm(const mm_plan *p, const kmux_matmul_args *args, mm_finish *f) {
    const kmux_matmul_desc *d = &p->d;
    const double alpha = *(const double *)args->alpha, beta = *(const double *)args->beta;
    const double alpha_eff = alpha * (double)scale_product(args);
    for (int64_t b = 0; b < d->batch_count; b++) {
        double *C = (double *)args->C + b * d->stride_c;
        const double *A = (const double *)args->A + b * d->stride_a;
        const double *B = (const double *)args->B + b * d->stride_b;
        cblas_dgemm(cb_order(d->order), cb_trans(d->transa), cb_trans(d->transb), (int)d->m,
                    (int)d->n, (int)d->k, alpha_eff, A, (int)d->lda, B, (int)d->ldb, beta, C,
                    (int)d->ldc);
        if (f->active) finish_batch(p, f, C, d->ldc, b);
    }
}

static void run_sgemm(const mm_plan *p, const kmux_matmul_args *args, mm_finish *f) {
    const kmux_matmul_desc *d = &p->d;
    const float alpha = *(const float *)args->alpha, beta = *(const float *)args->beta;
    const float alpha_eff = alpha * scale_product(args);
    for (int64_t b = 0; b < d->batch_count; b++) {
        float *C = (float *)args->C + b * d->stride_c;
        const float *A = (const float *)args->A + b * d->stride_a;
        const float *B = (const float *)args->B + b * d->stride_b;
        cblas_sgemm(cb_order(d->order), cb_trans(d->transa), cb_trans(d->transb), (int)d->m,
                    (int)d->n, (int)d->k, alpha_eff, A, (int)d->lda, B, (int)d->ldb, beta, C,
                    (int)d->ldc);
        if (f->active) finish_batch(p, f, C, d->ldc, b);
    }
}

/* Narrow inputs: widen A and B (once when their batch stride is 0), sgemm in f32 into C itself
 * (c = f32) or into an f32 copy of C, then one rounding to c_type: the vectorised cast when
 * nothing else follows the GEMM, else the shared finish. */
static void run_sgemm_cvt(const mm_plan *p, const kmux_matmul_args *args, mm_finish *f, char *ws,
                          int threads) {
    const kmux_matmul_desc *d = &p->d;
    const float alpha = *(const float *)args->alpha, beta = *(const float *)args->beta;
    const float alpha_eff = alpha * scale_product(args);
    const size_t a_size = kmux_common_dtype_size(d->a_type),
                 b_size = kmux_common_dtype_size(d->b_type);
    const size_t c_size = kmux_common_dtype_size(d->c_type);
    float *Af = (float *)ws;
    float *Bf = (float *)(ws + align64(p->ws_a));
    float *Cf = (float *)(ws + align64(p->ws_a) + align64(p->ws_b));
    const int c_direct = d->c_type == KMUX_F32;
    for (int64_t b = 0; b < d->batch_count; b++) {
        char *C = (char *)args->C + (size_t)(b * d->stride_c) * c_size;
        float *T = c_direct ? (float *)C : Cf;
        const int64_t ldt = c_direct ? d->ldc : p->c_cols;
        if (!c_direct && beta != 0.0f)
            kmux_cpu_matrix_to_f32(p->c_rows, p->c_cols, C, d->c_type, d->ldc, Cf, threads);
        if (b == 0 || d->stride_a != 0)
            kmux_cpu_matrix_to_f32(p->a_rows, p->a_cols,
                                   (const char *)args->A + (size_t)(b * d->stride_a) * a_size,
                                   d->a_type, d->lda, Af, threads);
        if (b == 0 || d->stride_b != 0)
            kmux_cpu_matrix_to_f32(p->b_rows, p->b_cols,
                                   (const char *)args->B + (size_t)(b * d->stride_b) * b_size,
                                   d->b_type, d->ldb, Bf, threads);
        /* the dense f32 copies have leading dimension = their view's column count */
        cblas_sgemm(cb_order(d->order), cb_trans(d->transa), cb_trans(d->transb), (int)d->m,
                    (int)d->n, (int)d->k, alpha_eff, Af, (int)p->a_cols, Bf, (int)p->b_cols, beta,
                    T, (int)ldt);
        if (f->active) {
            finish_batch(p, f, T, ldt, b);
        } else if (!c_direct) {
            /* f16 / bf16 targets only: kmux_cpu_cast cannot fail for them */
            for (int64_t r = 0; r < p->c_rows; r++)
                (void)kmux_cpu_cast(p->c_cols, T + r * ldt, KMUX_F32,
                                    C + (size_t)(r * d->ldc) * c_size, d->c_type, 0, NULL, NULL,
                                    threads);
        }
    }
}

kmux_status kmux_ob_matmul_execute(void *state, const void *plan, int impl, void *stream,
                                   const kmux_matmul_args *args) {
    kmux_ob_state *st = state;
    const mm_plan *p = plan;
    (void)stream;               /* CPU streams run synchronously in the calling thread */
    char *ws = args->workspace; /* the caller's (prefs.caller_workspace), else the pool's */
    const int pooled = !ws && p->head.workspace_bytes > 0;
    if (pooled) {
        ws = kmux_ob_ws_get(st, p->head.workspace_bytes);
        if (!ws)
            return KMUX_OB_ERROR(st, KMUX_ERR_OUT_OF_MEMORY,
                                 "kmux_matmul_execute: backend openblas (%s): cannot allocate %zu "
                                 "bytes of workspace",
                                 p->head.impl, p->head.workspace_bytes);
    }
    mm_finish f;
    finish_init(p, args, st->hdr.num_threads, &f);
    switch (p->path) {
    case MM_DGEMM:
        run_dgemm(p, args, &f);
        break;
    case MM_SGEMM:
        run_sgemm(p, args, &f);
        break;
    case MM_SGEMM_CVT:
        run_sgemm_cvt(p, args, &f, ws, st->hdr.num_threads);
        break;
    }
    if (pooled) kmux_ob_ws_put(st, ws);
    if (args->amax_d) *args->amax_d = (float)f.amax;
    kmux_cpu_matmul_bias_grad_fast(&p->d, args, st->hdr.num_threads);
    return KMUX_OK;
}
