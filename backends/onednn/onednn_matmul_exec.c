/*
 * onednn_matmul_exec.c - execution of matmul plans (see onednn_matmul.h).
 *
 * One execute: take an execution context of the plan; for "+cvt" plans widen A and B (and C
 * when beta != 0 and the primitive writes the f32 workspace W) to f32; pick the primitive for
 * (alpha, beta); run it (once, or once per batch when A and B are both broadcast); then apply
 * what oneDNN did not - a column-major bias and its activation, d_scale, amax, the rounding of W
 * to c_type, the integer alpha/beta of I32 GEMMs (exact wrap-around, as ref) - with the shared
 * CPU finish (dispatch/common/cpu_finish.h), or the vectorised cast when only rounding is left.
 * Empty problems, k == 0 and alpha == 0 never get here: the core runs them.
 */
#include "onednn_matmul.h"

#include <math.h>
#include <omp.h>
#include <string.h>

#include "dispatch/common/cpu_finish.h"
#include "kmux_cpu_kernels.h"

static const char FN[] = "kmux_matmul_execute";

/* The largest column sum of |Q| for which every value oneDNN's s8 x s8 kernel forms is an exact
 * f32 integer: 255 * max_j sum_l |Q(l, j)| <= 2^24 (see onednn_matmul.h). */
#define S8_KERNEL_ABS_COLSUM_MAX (((int64_t)1 << 24) / 255)

typedef struct mm_run {
    kmux_dnn_state *st;
    kmux_dnn_mm_plan *p;
    const kmux_matmul_args *a;
    kmux_dnn_exec_ctx *ctx;
    int threads;
    double alpha, beta; /* host scalars (float or int32 by compute type) */
    double ab_scale;    /* a_scale * b_scale, 1 when absent */
    size_t p_extra;     /* I32 split: bytes from the u8 copy of P to the half the primitive reads */
    int s8_direct;      /* I32: oneDNN's s8 x s8 primitive on the caller's P (bounded data) */
} mm_run;

/* Element offset of (batch b, row i, column j) of the C view. */
static int64_t c_at(const kmux_dnn_mm_plan *p, int64_t b, int64_t i, int64_t j) {
    return b * p->bstride_r + i * p->ldr + j;
}

/* I32 split (no VNNI): the exact s32 sums acc = 2 (h Q) + (l Q) - 128 * colsum (the u8 bias of
 * P taken out, modulo 2^32), into out: W itself, or C (same layout) when nothing follows. */
static void split_sums(mm_run *r, const int32_t *w, const int32_t *w2, const int32_t *colsum,
                       int32_t *out) {
    const kmux_dnn_mm_plan *p = r->p;
    for (int64_t b = 0; b < p->d.batch_count; b++) {
        const int32_t *cs = colsum + (p->Q.bstride == 0 ? 0 : b) * p->N;
        for (int64_t i = 0; i < p->M; i++)
            for (int64_t j = 0; j < p->N; j++) {
                int64_t ci = c_at(p, b, i, j);
                uint64_t sum = 2u * (uint64_t)(int64_t)w[ci] + (uint64_t)(int64_t)w2[ci];
                out[ci] = kmux_common_wrap_i32(sum - 128u * (uint64_t)(int64_t)cs[j]);
            }
    }
}

/* The I32 passes around the primitive (kernels/cpu/int8_gemm.c) run on oneDNN's OpenMP team,
 * each thread on its own part: the team is awake right after a primitive, where new threads cost
 * 20-40 us, as much as a pass over a 1024 x 1024 matrix (Zen 5 EPYC, 2 cores). The team has the
 * size kmux_dnn_threads_enter set (1 in a fork() child, onednn_fork.c); passes below
 * PASS_SPLIT_MIN elements stay on the calling thread. */
#define PASS_SPLIT_MIN ((int64_t)1 << 16)

/* [*lo, *hi): part t of nt of [0, n), on multiples of align */
static void part(int64_t n, int64_t align, int t, int nt, int64_t *lo, int64_t *hi) {
    int64_t units = (n + align - 1) / align;
    *lo = units * t / nt * align;
    *hi = units * (t + 1) / nt * align;
    if (*lo > n) *lo = n;
    if (*hi > n) *hi = n;
}

/* One pass of kernels/cpu/int8_gemm.c over a rows x cols matrix (for the column sums, k x n)
 * with leading dimension ld: the int8 src of the reading passes, or the s32 dst of the
 * compensation (with its sums); dst is also where the column sums and the u8 copy go. */
typedef struct int_pass {
    int64_t rows, cols, ld;
    int trans;
    const int8_t *src;
    void *dst;
    const int32_t *sums;
} int_pass;

/* The part [lo, hi) of a pass (rows, or columns for the column sums); returns what the pass
 * reduces by max (0 when nothing). */
typedef int64_t (*int_pass_part)(const int_pass *a, int64_t lo, int64_t hi);

static int64_t part_comp(const int_pass *a, int64_t lo, int64_t hi) {
    kmux_cpu_s32_sub_bias_comp(hi - lo, a->cols, (int32_t *)a->dst + lo * a->ld, a->ld, a->sums);
    return 0;
}

static int64_t part_col_sums(const int_pass *a, int64_t lo, int64_t hi) {
    return kmux_cpu_s8_col_sums(a->rows, hi - lo, a->src + (a->trans ? lo * a->ld : lo), a->ld,
                                a->trans, (int32_t *)a->dst + lo);
}

static int64_t part_abs_max(const int_pass *a, int64_t lo, int64_t hi) {
    return kmux_cpu_s8_abs_max(hi - lo, a->cols, a->src + lo * a->ld, a->ld);
}

static int64_t part_biased_copy(const int_pass *a, int64_t lo, int64_t hi) {
    kmux_cpu_s8_to_u8_biased(hi - lo, a->cols, a->src + lo * a->ld, a->ld,
                             (uint8_t *)a->dst + lo * a->cols);
    return 0;
}

/* Runs fn on the team, each thread on its part of [0, n) (multiples of align); the largest value
 * the parts return. */
static int64_t team_pass(const int_pass *a, int64_t n, int64_t align, int_pass_part fn) {
    int64_t most = 0;
#pragma omp parallel if (a->rows * a->cols >= PASS_SPLIT_MIN) reduction(max : most)
    {
        int64_t lo, hi;
        part(n, align, omp_get_thread_num(), omp_get_num_threads(), &lo, &hi);
        if (hi > lo) most = fn(a, lo, hi);
    }
    return most;
}

/* I32 with one u8 matmul: takes the u8 bias out of the s32 result (P + 128) Q in place. */
static void sub_bias_comp(mm_run *r, int32_t *res, const int32_t *colsum) {
    const kmux_dnn_mm_plan *p = r->p;
    for (int64_t b = 0; b < p->d.batch_count; b++) {
        const int_pass a = {.rows = p->M,
                            .cols = p->N,
                            .ld = p->ldr,
                            .dst = res + c_at(p, b, 0, 0),
                            .sums = colsum + (p->Q.bstride == 0 ? 0 : b) * p->N};
        team_pass(&a, p->M, 1, part_comp);
    }
}

/* I32: the column sums of Q (per distinct batch); returns the largest column sum of |Q|. */
static int64_t int_col_sums(mm_run *r, int32_t *colsum) {
    const kmux_dnn_mm_plan *p = r->p;
    const kmux_dnn_mm_operand *Q = &p->Q;
    const int8_t *qs = Q->from_a ? r->a->A : r->a->B;
    int64_t most = 0;
    for (int64_t b = 0; b < Q->distinct; b++) {
        const int_pass a = {.rows = p->K,
                            .cols = p->N,
                            .ld = Q->ld,
                            .trans = Q->trans,
                            .src = qs + b * Q->bstride,
                            .dst = colsum + b * p->N};
        int64_t m = team_pass(&a, p->N, 64, part_col_sums);
        if (m > most) most = m;
    }
    return most;
}

/* I32: whether oneDNN's s8 x s8 kernel is exact for this call's Q (see onednn_matmul.h): first
 * by the largest |Q| alone (k * max|Q| bounds every column sum: one cheap pass, enough for the
 * small values of most data), else by the column sums themselves, which the u8 path needs anyway
 * (then in colsum, and *have_sums set). */
static int s8_kernel_exact(mm_run *r, int32_t *colsum, int *have_sums) {
    const kmux_dnn_mm_plan *p = r->p;
    const kmux_dnn_mm_operand *Q = &p->Q;
    const int8_t *qs = Q->from_a ? r->a->A : r->a->B;
    *have_sums = 0;
    if (!p->prim_s8) return 0;
    int most = 0;
    for (int64_t b = 0; b < Q->distinct; b++) {
        const int_pass a = {.rows = Q->trans ? p->N : p->K,
                            .cols = Q->trans ? p->K : p->N,
                            .ld = Q->ld,
                            .src = qs + b * Q->bstride};
        int m = (int)team_pass(&a, a.rows, 1, part_abs_max);
        if (m > most) most = m;
    }
    if (p->K * most <= S8_KERNEL_ABS_COLSUM_MAX) return 1;
    *have_sums = 1;
    const int64_t abs_colsum_max = int_col_sums(r, colsum);
    if (abs_colsum_max <= S8_KERNEL_ABS_COLSUM_MAX) return 1;
    r->st->hdr.host->trace(2,
                           "exec,onednn,matmul,%s,u8 copy and compensation: a column sum of |Q| "
                           "is %lld above %lld",
                           p->base.impl, (long long)abs_colsum_max,
                           (long long)S8_KERNEL_ABS_COLSUM_MAX);
    return 0;
}

/* I32: the biased u8 copy of P (dense; with split, the halves h then l of P + 128 = 2h + l). */
static void int_biased_copy(mm_run *r) {
    const kmux_dnn_mm_plan *p = r->p;
    const kmux_dnn_mm_operand *P = &p->P;
    const int8_t *ps = P->from_a ? r->a->A : r->a->B;
    uint8_t *pu = (uint8_t *)r->ctx->work + P->cvt_offset;
    int64_t srows = P->trans ? P->cols : P->rows, scols = P->trans ? P->rows : P->cols;
    int64_t half = P->distinct * srows * scols;
    for (int64_t b = 0; b < P->distinct; b++) {
        if (!p->int_split) {
            const int_pass a = {.rows = srows,
                                .cols = scols,
                                .ld = P->ld,
                                .src = ps + b * P->bstride,
                                .dst = pu + b * srows * scols};
            team_pass(&a, srows, 1, part_biased_copy);
            continue;
        }
        for (int64_t i = 0; i < srows; i++) {
            const int8_t *row = ps + b * P->bstride + i * P->ld;
            uint8_t *out = pu + (b * srows + i) * scols;
            for (int64_t j = 0; j < scols; j++) {
                unsigned v = (unsigned)(row[j] + 128);
                out[j] = (uint8_t)(v >> 1);
                out[half + j] = (uint8_t)(v & 1u);
            }
        }
    }
}

/* Widens the inputs of a "+cvt" plan (each distinct batch matrix once) and the bias. */
static void convert_inputs(mm_run *r) {
    const kmux_dnn_mm_plan *p = r->p;
    const kmux_dnn_mm_operand *ops[2] = {&p->P, &p->Q};
    char *ws = r->ctx->work;
    if (p->cvt)
        for (int o = 0; o < 2; o++) {
            const kmux_dnn_mm_operand *op = ops[o];
            const char *src = op->from_a ? r->a->A : r->a->B;
            size_t es = kmux_common_dtype_size(op->type);
            int64_t srows = op->trans ? op->cols : op->rows;
            int64_t scols = op->trans ? op->rows : op->cols;
            float *dst = (float *)(ws + op->cvt_offset);
            for (int64_t b = 0; b < op->distinct; b++)
                kmux_cpu_matrix_to_f32(srows, scols, src + (size_t)(b * op->bstride) * es, op->type,
                                       op->ld, dst + b * srows * scols, r->threads);
        }
    if (p->bias_cvt)
        kmux_cpu_to_f32(p->N, r->a->bias, p->d.bias_type, (float *)(ws + p->off_bias), r->threads);
}

/* Bytes from one batch matrix of an operand to the next, as the primitive reads it: the user's
 * storage, or its dense copy (f32 for "+cvt", u8 when u8 is set). */
static size_t operand_step(const kmux_dnn_mm_plan *p, const kmux_dnn_mm_operand *o, int dense,
                           int u8) {
    if (o->bstride == 0) return 0;
    if (!dense) return (size_t)o->bstride * kmux_common_dtype_size(o->type);
    return (size_t)(o->rows * o->cols) * (u8 ? 1 : sizeof(float));
}

/* Runs the primitive (loop times); dst is C or W. */
static kmux_status run_primitive(mm_run *r, dnnl_primitive_t prim, void *dst, size_t dst_bstride) {
    kmux_dnn_mm_plan *p = r->p;
    kmux_dnn_exec_ctx *ctx = r->ctx;
    kmux_status ks = KMUX_OK;
    char *ws = ctx->work;
    const char *pp = p->P.from_a ? r->a->A : r->a->B;
    const char *qp = p->Q.from_a ? r->a->A : r->a->B;
    if (p->cvt || (p->is_int && !r->s8_direct)) pp = ws + p->P.cvt_offset + r->p_extra;
    if (p->cvt) qp = ws + p->Q.cvt_offset;
    const void *bias = p->bias_cvt ? (const void *)(ws + p->off_bias) : r->a->bias;
    float scale = (float)(r->alpha * r->ab_scale);
    dnnl_exec_arg_t args[6];
    int n = 0;
    dnnl_memory_t m;
    if (!(m = r->s8_direct ? kmux_dnn_ctx_mem(r->st, ctx, MM_MEM_P_S8, &p->md_p_s8, (void *)pp, &ks)
                           : kmux_dnn_ctx_mem(r->st, ctx, MM_MEM_P, &p->md_p, (void *)pp, &ks)))
        return ks;
    args[n++] = (dnnl_exec_arg_t){DNNL_ARG_SRC, m};
    if (!(m = kmux_dnn_ctx_mem(r->st, ctx, MM_MEM_Q, &p->md_q, (void *)qp, &ks))) return ks;
    args[n++] = (dnnl_exec_arg_t){DNNL_ARG_WEIGHTS, m};
    int dst_slot = n;
    if (!(m = kmux_dnn_ctx_mem(r->st, ctx, MM_MEM_DST, &p->md_dst, dst, &ks))) return ks;
    args[n++] = (dnnl_exec_arg_t){DNNL_ARG_DST, m};
    if (p->bias_in_prim) {
        int idx = (!p->is_int && r->beta != 0.0) ? 1 : 0; /* after the sum post-op */
        if (!(m = kmux_dnn_ctx_mem(r->st, ctx, MM_MEM_BIAS, &p->md_bias, (void *)bias, &ks)))
            return ks;
        args[n++] = (dnnl_exec_arg_t){DNNL_ARG_ATTR_MULTIPLE_POST_OP(idx) | DNNL_ARG_SRC_1, m};
    }
    if (p->rt_alpha) {
        if (!(m = kmux_dnn_ctx_mem(r->st, ctx, MM_MEM_SCALE, &p->md_scale, &scale, &ks))) return ks;
        args[n++] = (dnnl_exec_arg_t){DNNL_ARG_ATTR_OUTPUT_SCALES, m};
    }
    if (ctx->scratch_mem) args[n++] = (dnnl_exec_arg_t){DNNL_ARG_SCRATCHPAD, ctx->scratch_mem};
    size_t p_step =
        operand_step(p, &p->P, p->cvt || (p->is_int && !r->s8_direct), p->is_int ? 1 : 0);
    size_t q_step = operand_step(p, &p->Q, p->cvt, 0);
    for (int64_t l = 0; l < p->loop; l++) {
        if (l > 0) { /* loop over batches (see build_descs) */
            const size_t lz = (size_t)l;
            if (dnnl_memory_set_data_handle(args[0].memory, (char *)pp + lz * p_step) ||
                dnnl_memory_set_data_handle(args[1].memory, (char *)qp + lz * q_step) ||
                dnnl_memory_set_data_handle(args[dst_slot].memory, (char *)dst + lz * dst_bstride))
                return KMUX_DNN_ERROR(r->st, KMUX_ERR_DEVICE,
                                      "%s: backend onednn: dnnl_memory_set_data_handle failed", FN);
        }
        dnnl_status_t s = dnnl_primitive_execute(prim, ctx->stream, n, args);
        if (s != dnnl_success) return kmux_dnn_fail(r->st, FN, "dnnl_primitive_execute", s);
    }
    return KMUX_OK;
}

void kmux_dnn_epilogue_on_team(const kmux_matmul_desc *d, const kmux_matmul_args *a, const float *t,
                               int64_t ldt, int64_t bstride) {
    const int64_t runs = kmux_cpu_matmul_epilogue_runs_count(d);
    for (int64_t b = 0; b < d->batch_count; b++) {
#pragma omp parallel if (d->m * d->n >= PASS_SPLIT_MIN)
        {
            int64_t lo, hi;
            part(runs, 1, omp_get_thread_num(), omp_get_num_threads(), &lo, &hi);
            if (hi > lo) kmux_cpu_matmul_epilogue_part(d, a, t + b * bstride, ldt, b, lo, hi);
        }
    }
}

/* What oneDNN did not do, from the f32 result t (C itself, or the dense workspace W): the
 * by-hand epilogue, d_scale, amax and the one rounding to c_type, as the shared CPU finish with
 * t as its accumulator (alpha, beta and the fp8 scales are already in it). */
static void finish_float(mm_run *r, const float *t) {
    const kmux_dnn_mm_plan *p = r->p;
    static const float one = 1.0f, zero = 0.0f;
    kmux_matmul_desc d = p->d;
    if (!p->epi_by_hand) d.epilogue = KMUX_EPILOGUE_NONE; /* fused into the primitive */
    d.epilogue &= ~(unsigned)(KMUX_EPILOGUE_BGRADA | KMUX_EPILOGUE_BGRADB); /* by exec, after */
    kmux_matmul_args a = *r->a;
    a.alpha = &one, a.beta = &zero, a.a_scale = a.b_scale = NULL;
    /* W holds R = C (row-major) or C^T (column-major) densely: C's storage order, ld = N */
    const int64_t ldt = p->use_w ? p->N : d.ldc, bstride = p->use_w ? p->M * p->N : d.stride_c;
    if (kmux_cpu_matmul_epilogue_runs(&d, &a)) { /* bias, ReLU, its mask, DRELU: on the team */
        kmux_dnn_epilogue_on_team(&d, &a, t, ldt, bstride);
        return;
    }
    const kmux_cpu_acc acc = {t, KMUX_F32, ldt, bstride};
    kmux_cpu_finish(&d, &a, &acc);
}

/* W (dense f32) -> C (c_type), rounded once, nothing else to apply (kmux_cpu_cast). */
static kmux_status round_w(mm_run *r, const float *w) {
    const kmux_dnn_mm_plan *p = r->p;
    size_t es = kmux_common_dtype_size(p->d.c_type);
    int dense = p->ldr == p->N && (p->d.batch_count == 1 || p->bstride_r == p->M * p->N);
    int64_t rows = dense ? 1 : p->d.batch_count * p->M;
    int64_t len = dense ? p->d.batch_count * p->M * p->N : p->N;
    for (int64_t row = 0; row < rows; row++) {
        int64_t b = row / p->M, i = row % p->M;
        kmux_status ks = kmux_cpu_cast(len, w + row * len, KMUX_F32,
                                       (char *)r->a->C + (size_t)c_at(p, b, i, 0) * es, p->d.c_type,
                                       0, NULL, NULL, r->threads);
        if (ks != KMUX_OK)
            return KMUX_DNN_ERROR(r->st, ks, "%s: backend onednn: f32 -> %s rounding failed", FN,
                                  kmux_common_dtype_name(p->d.c_type));
    }
    return KMUX_OK;
}

static kmux_status exec_float(mm_run *r) {
    kmux_dnn_mm_plan *p = r->p;
    const kmux_matmul_desc *d = &p->d;
    dnnl_primitive_t prim = NULL;
    size_t scratch = 0;
    int temporary = 0;
    /* constant output scale alpha * a_scale * b_scale (rt_alpha plans pass it at run time) */
    float alpha = (float)(r->alpha * r->ab_scale);
    kmux_status ks =
        kmux_dnn_mm_variant_get(r->st, p, alpha, (float)r->beta, &prim, &scratch, &temporary);
    if (ks != KMUX_OK) return ks;
    ks = kmux_dnn_ctx_acquire("kmux_matmul_execute", r->st, &p->base, scratch, r->a->workspace,
                              r->a->workspace_bytes, &r->ctx);
    if (ks == KMUX_OK) {
        float *w = (float *)((char *)r->ctx->work + p->off_w);
        convert_inputs(r);
        if (p->use_w && r->beta != 0.0)
            for (int64_t b = 0; b < d->batch_count; b++)
                kmux_cpu_matrix_to_f32(p->M, p->N,
                                       (const char *)r->a->C +
                                           (size_t)c_at(p, b, 0, 0) *
                                               kmux_common_dtype_size(d->c_type),
                                       d->c_type, p->ldr, w + b * p->M * p->N, r->threads);
        void *dst = p->use_w ? (void *)w : r->a->C;
        size_t dst_bstride = p->use_w ? (size_t)(p->M * p->N) * sizeof(float)
                                      : (size_t)p->bstride_r * kmux_common_dtype_size(d->c_type);
        ks = run_primitive(r, prim, dst, dst_bstride);
        if (ks == KMUX_OK && (p->epi_by_hand || r->a->d_scale || r->a->amax_d))
            finish_float(r, dst); /* sets amax_d */
        else if (ks == KMUX_OK && p->use_w)
            ks = round_w(r, w);
        kmux_dnn_ctx_release(&p->base, r->ctx);
    }
    if (temporary) dnnl_primitive_destroy(prim);
    return ks;
}

static kmux_status exec_int(mm_run *r) {
    kmux_dnn_mm_plan *p = r->p;
    dnnl_primitive_t prim = NULL;
    size_t scratch = 0;
    int temporary = 0;
    kmux_status ks = kmux_dnn_mm_variant_get(r->st, p, 1.0f, 0.0f, &prim, &scratch, &temporary);
    if (ks != KMUX_OK) return ks;
    if (p->scratch_s8 > scratch) scratch = p->scratch_s8;
    ks = kmux_dnn_ctx_acquire("kmux_matmul_execute", r->st, &p->base, scratch, r->a->workspace,
                              r->a->workspace_bytes, &r->ctx);
    if (ks == KMUX_OK) {
        char *ws = r->ctx->work;
        int32_t *w = (int32_t *)(ws + p->off_w), *colsum = (int32_t *)(ws + p->off_colsum);
        int32_t *w2 = p->int_split ? (int32_t *)(ws + p->off_w2) : NULL;
        /* alpha = 1, beta = 0 and nothing after the GEMM (the common case): the sums go to C
         * directly, without the shared finish's second pass over C (issue 14) */
        const int direct = *(const int32_t *)r->a->alpha == 1 &&
                           *(const int32_t *)r->a->beta == 0 && !r->a->d_scale && !r->a->amax_d;
        int32_t *res = direct && !w2 ? (int32_t *)r->a->C : w;
        int have_sums = 0;
        r->s8_direct = s8_kernel_exact(r, colsum, &have_sums);
        if (r->s8_direct) {
            ks = run_primitive(r, p->prim_s8, res, (size_t)p->bstride_r * sizeof(int32_t));
        } else {
            if (!have_sums) int_col_sums(r, colsum);
            int_biased_copy(r);
            ks = run_primitive(r, prim, res, (size_t)p->bstride_r * sizeof(int32_t));
            if (ks == KMUX_OK && w2) { /* the low halves l */
                r->p_extra = (size_t)(p->P.distinct * p->P.rows * p->P.cols);
                ks = run_primitive(r, prim, w2, (size_t)p->bstride_r * sizeof(int32_t));
                if (ks == KMUX_OK) split_sums(r, w, w2, colsum, direct ? (int32_t *)r->a->C : w);
            } else if (ks == KMUX_OK) {
                sub_bias_comp(r, res, colsum);
            }
        }
        if (ks == KMUX_OK && !direct) {
            const kmux_cpu_acc acc = {w, KMUX_I32, p->d.ldc, p->d.stride_c};
            kmux_cpu_finish(&p->d, r->a, &acc); /* alpha, beta, scales, amax_d, wrap-around */
        }
        kmux_dnn_ctx_release(&p->base, r->ctx);
    }
    if (temporary) dnnl_primitive_destroy(prim);
    return ks;
}

kmux_status kmux_dnn_matmul_run(kmux_dnn_state *st, kmux_dnn_plan *plan,
                                const kmux_matmul_args *args) {
    kmux_dnn_mm_plan *p = (kmux_dnn_mm_plan *)plan;
    mm_run r = {0};
    r.st = st;
    r.p = p;
    r.a = args;
    r.threads = r.st->hdr.num_threads;
    kmux_dnn_threads th;
    kmux_dnn_threads_enter(r.st, &th);
    kmux_status ks;
    if (p->is_int) {
        ks = exec_int(&r);
    } else {
        r.alpha = (double)*(const float *)args->alpha;
        r.beta = (double)*(const float *)args->beta;
        r.ab_scale = (args->a_scale ? (double)*args->a_scale : 1.0) *
                     (args->b_scale ? (double)*args->b_scale : 1.0);
        ks = exec_float(&r);
    }
    if (ks == KMUX_OK) kmux_cpu_matmul_bias_grad_fast(&p->d, args, r.threads); /* BGRADA/B */
    kmux_dnn_threads_leave(&th);
    return ks;
}
