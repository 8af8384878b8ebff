/*
 * emu_gemm_case.c - see emu_gemm_case.h.
 */
#include "emu_gemm_case.h"

#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "emu_common.h"
#include "kmux_dtype_desc.h"
#include "kmux_gpu_emu_api.h"
#include "kmux_gpu_kernels.h"

emu_gemm_case emu_gemm_case_make(kmux_dtype a, kmux_dtype b, kmux_dtype c, kmux_compute_type ct,
                                 kmux_order o, kmux_transpose ta, kmux_transpose tb, int64_t m,
                                 int64_t n, int64_t k, int64_t pad) {
    emu_gemm_case gc;
    memset(&gc, 0, sizeof gc);
    kmux_matmul_desc d = KMUX_MATMUL_DESC_INIT;
    d.order = o, d.transa = ta, d.transb = tb;
    d.m = m, d.n = n, d.k = k;
    d.a_type = a, d.b_type = b, d.c_type = c, d.compute_type = ct;
    int row = o == KMUX_ROW_MAJOR;
    int64_t a_rows = ta == KMUX_NO_TRANS ? m : k, a_cols = ta == KMUX_NO_TRANS ? k : m;
    int64_t b_rows = tb == KMUX_NO_TRANS ? k : n, b_cols = tb == KMUX_NO_TRANS ? n : k;
    d.lda = (row ? a_cols : a_rows) + pad;
    d.ldb = (row ? b_cols : b_rows) + pad;
    d.ldc = (row ? n : m) + pad;
    if (d.lda < 1) d.lda = 1;
    if (d.ldb < 1) d.ldb = 1;
    if (d.ldc < 1) d.ldc = 1;
    d.batch_count = 1;
    d.bias_type = c == KMUX_I32 ? KMUX_F32 : c;
    gc.d = d;
    gc.alpha = 1;
    gc.beta = 0;
    return gc;
}

/* Offset of stored element (r, c) of a matrix; its extent; the batch extent. */
static int64_t at(kmux_order o, int64_t r, int64_t c, int64_t ld) {
    return o == KMUX_ROW_MAJOR ? r * ld + c : r + c * ld;
}
static int64_t mat_span(kmux_order o, int64_t rows, int64_t cols, int64_t ld) {
    if (rows == 0 || cols == 0) return 0;
    return o == KMUX_ROW_MAJOR ? (rows - 1) * ld + cols : (cols - 1) * ld + rows;
}
static int64_t batch_span(int64_t batch, int64_t stride, int64_t span) {
    return batch == 0 || span == 0 ? 0 : (batch - 1) * stride + span;
}

typedef struct operand {
    kmux_dtype t;
    int64_t span;
    size_t bytes;
    unsigned char *p;
    unsigned char *mask; /* 1: element of some matrix */
} operand;

static void operand_init(operand *x, kmux_dtype t, int64_t span) {
    x->t = t;
    x->span = span;
    x->bytes = (size_t)span * kmux_dtype_bytes(t);
    x->p = emu_alloc(x->bytes);
    x->mask = emu_alloc((size_t)span);
    memset(x->mask, 0, (size_t)span);
}

static void operand_free(operand *x) {
    free(x->p);
    free(x->mask);
}

/* Marks the elements of every batch matrix (stored rows x cols) and fills them; poisons the rest.
 */
static void operand_fill(operand *x, kmux_order o, int64_t rows, int64_t cols, int64_t ld,
                         int64_t stride, int64_t batch, double range, uint64_t *st) {
    for (int64_t b = 0; b < batch; b++)
        for (int64_t r = 0; r < rows; r++)
            for (int64_t c = 0; c < cols; c++)
                x->mask[b * stride + at(o, r, c, ld)] = 1;
    for (int64_t e = 0; e < x->span; e++) {
        if (x->mask[e])
            emu_fill(x->t, x->p + (size_t)e * kmux_dtype_bytes(x->t), 1, range, st);
        else
            emu_poison(x->t, x->p, e);
    }
}

/* Element (i, p) of op(X) in batch b. */
static double op_get(const operand *x, kmux_order o, kmux_transpose t, int64_t i, int64_t p,
                     int64_t ld, int64_t stride, int64_t b) {
    int64_t e = t == KMUX_NO_TRANS ? at(o, i, p, ld) : at(o, p, i, ld);
    return emu_get(x->t, x->p, b * stride + e);
}

static double host_range(kmux_dtype t) {
    return kmux_dtype_is_int(t) ? 20 : 2;
}

void emu_gemm_run(const emu_gemm_case *gc, const char *tag) {
    const kmux_matmul_desc *d = &gc->d;
    const int64_t m = d->m, n = d->n, k = d->k, batch = d->batch_count;
    const kmux_order o = d->order;
    const int ta = d->transa != KMUX_NO_TRANS, tb = d->transb != KMUX_NO_TRANS;
    const int64_t ar = ta ? k : m, ac = ta ? m : k, br = tb ? n : k, bc = tb ? k : n;
    uint64_t st = 0x1234567ull + (uint64_t)(m * 131 + n * 17 + k) + (uint64_t)d->a_type * 7919u;

    operand A, B, C, bias;
    operand_init(&A, d->a_type, batch_span(batch, d->stride_a, mat_span(o, ar, ac, d->lda)));
    operand_init(&B, d->b_type, batch_span(batch, d->stride_b, mat_span(o, br, bc, d->ldb)));
    operand_init(&C, d->c_type, batch_span(batch, d->stride_c, mat_span(o, m, n, d->ldc)));
    operand_init(&bias, d->bias_type, n);
    operand_fill(&A, o, ar, ac, d->lda, d->stride_a, batch, host_range(d->a_type), &st);
    operand_fill(&B, o, br, bc, d->ldb, d->stride_b, batch, host_range(d->b_type), &st);
    operand_fill(&C, o, m, n, d->ldc, d->stride_c, batch, host_range(d->c_type), &st);
    operand_fill(&bias, KMUX_ROW_MAJOR, 1, n, n, 0, 1, 1.0, &st);
    if (gc->c_poison)
        for (int64_t e = 0; e < C.span; e++)
            emu_poison(C.t, C.p, e);

    /* scalars of the compute type */
    union {
        double f64;
        float f32;
        int32_t i32;
    } alpha, beta;
    if (d->compute_type == KMUX_COMPUTE_F64)
        alpha.f64 = gc->alpha, beta.f64 = gc->beta;
    else if (d->compute_type == KMUX_COMPUTE_I32)
        alpha.i32 = (int32_t)gc->alpha, beta.i32 = (int32_t)gc->beta;
    else
        alpha.f32 = (float)gc->alpha, beta.f32 = (float)gc->beta;
    float as = gc->a_scale, bs = gc->b_scale, ds = gc->d_scale;
    kmux_matmul_args args = KMUX_MATMUL_ARGS_INIT;
    args.alpha = &alpha, args.beta = &beta;
    args.A = gc->null_ab ? NULL : A.p, args.B = gc->null_ab ? NULL : B.p;
    args.bias = bias.p;
    args.a_scale = as != 0 ? &as : NULL;
    args.b_scale = bs != 0 ? &bs : NULL;
    args.d_scale = ds != 0 ? &ds : NULL;

    /* the oracle */
    unsigned char *want = emu_alloc(C.bytes), *got = emu_alloc(C.bytes),
                  *first = emu_alloc(C.bytes);
    memcpy(want, C.p, C.bytes);
    float want_amax = -1, got_amax = -1, first_amax = -1;
    args.C = want;
    args.amax_d = gc->amax ? &want_amax : NULL;
    kmux_plan *plan = NULL;
    cr_assert_eq(kmux_matmul_plan_create(emu_ref(), d, NULL, &plan), KMUX_OK, "%s: ref plan: %s",
                 tag, kmux_last_error());
    cr_assert_eq(kmux_matmul_execute(plan, emu_ref_stream(), &args), KMUX_OK, "%s: ref: %s", tag,
                 kmux_last_error());
    kmux_plan_destroy(plan);

    /* error bound per element: the magnitudes of all terms */
    double *bound = emu_alloc(sizeof(double) * (size_t)(C.span ? C.span : 1));
    const double ab = fabs(gc->alpha) * (as != 0 ? as : 1) * (bs != 0 ? bs : 1);
    const double dsc = ds != 0 ? ds : 1;
    double amax_bound = 0;
    for (int64_t b = 0; b < batch; b++)
        for (int64_t i = 0; i < m; i++)
            for (int64_t j = 0; j < n; j++) {
                double s = 0;
                if (!gc->null_ab && gc->alpha != 0)
                    for (int64_t p = 0; p < k; p++)
                        s += fabs(op_get(&A, o, d->transa, i, p, d->lda, d->stride_a, b) *
                                  op_get(&B, o, d->transb, p, j, d->ldb, d->stride_b, b));
                int64_t e = b * d->stride_c + at(o, i, j, d->ldc);
                s = ab * s + (gc->beta != 0 ? fabs(gc->beta * emu_get(C.t, C.p, e)) : 0);
                if (d->epilogue & KMUX_EPILOGUE_BIAS) s += fabs(emu_get(bias.t, bias.p, j));
                if (s > amax_bound) amax_bound = s;
                bound[e] = s * dsc;
            }

    int integer = d->compute_type == KMUX_COMPUTE_I32;
    int scaled_int = integer && (as != 0 || bs != 0 || ds != 0 || gc->amax);
    double u_acc = integer                 ? (scaled_int ? ldexp(1.0, -53) : 0)
                   : d->a_type == KMUX_F64 ? ldexp(1.0, -53)
                                           : ldexp(1.0, -24);
    double u_out = emu_unit_roundoff(d->c_type);
    double min_out = emu_min_subnormal(d->c_type) * (as != 0 || ds != 0 ? 2 : 1);
    int gelu = (d->epilogue & KMUX_EPILOGUE_GELU) != 0;

    int runs = 0;
    for (int si = 0; si < EMU_SETTING_COUNT; si++) {
        int last_tile =
            gc->tiles || si == 0 || si == EMU_SETTING_COUNT - 1 ? KMUX_GPU_TILE_COUNT - 1 : 0;
        for (int tile = 0; tile <= last_tile; tile++) {
            const emu_setting *s = &EMU_SETTINGS[si];
            emu_apply(s);
            memcpy(got, C.p, C.bytes);
            got_amax = -1;
            args.C = got;
            args.amax_d = gc->amax ? &got_amax : NULL;
            char what[160];
            snprintf(what, sizeof what, "%s [wave %u, seed %llu, tile %d]", tag, s->wave,
                     (unsigned long long)s->seed, tile);
            emu_check_launch(kmux_gpu_gemm(NULL, d, &args, tile, gc->max_yz), what);
            const size_t eb = kmux_dtype_bytes(C.t);
            for (int64_t e = 0; e < C.span; e++) {
                if (!C.mask[e]) {
                    cr_assert(memcmp(got + e * eb, C.p + e * eb, eb) == 0,
                              "%s: element %lld outside every C matrix was written", what,
                              (long long)e);
                    continue;
                }
                double w = emu_get(C.t, want, e), g = emu_get(C.t, got, e);
                double tol = emu_tol(w, bound[e], (double)k, u_acc, u_out, min_out, gelu);
                cr_assert(emu_same(g, w, tol), "%s: C element %lld: got %.9g want %.9g (tol %.3g)",
                          what, (long long)e, g, w, tol);
            }
            if (gc->amax) {
                double tol =
                    emu_tol(want_amax, amax_bound, (double)k, u_acc, ldexp(1.0, -24), 0, gelu);
                cr_assert(emu_same(got_amax, want_amax, tol), "%s: amax got %.9g want %.9g", what,
                          (double)got_amax, (double)want_amax);
            }
            /* wave width, block order and tile must not change a single bit */
            if (runs == 0) {
                memcpy(first, got, C.bytes);
                first_amax = got_amax;
            } else {
                cr_assert(memcmp(first, got, C.bytes) == 0,
                          "%s: result differs bitwise from the first run (wave %u, seed 0, tile 0)",
                          what, EMU_SETTINGS[0].wave);
                cr_assert(memcmp(&first_amax, &got_amax, sizeof got_amax) == 0,
                          "%s: amax differs from the first run", what);
            }
            runs++;
        }
    }
    free(bound);
    free(want);
    free(got);
    free(first);
    operand_free(&A);
    operand_free(&B);
    operand_free(&C);
    operand_free(&bias);
}
