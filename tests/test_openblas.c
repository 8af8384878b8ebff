/*
 * test_openblas.c - what is specific to the OpenBLAS backend (cpu:openblas): its implementation
 * names and the +cvt emulation rules, refusal of FAST compute types, the BLAS degenerate cases it
 * handles itself, and exact agreement with "ref" on small-integer data for every GEMM layout and
 * every convolution direction, layout, group count, dilation, padding and stride. The
 * cross-backend conformance suite lives elsewhere.
 *
 * Data are small integers (as benchdnn), so every partial sum is exact in f32 and results must be
 * bitwise equal to ref's (f64, rounded once).
 */
#include "test_util.h"

#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- environment ------------------------------------------------------------------------- */

/* ref and cpu:openblas (NULL without the plugin: every test is skipped) */
TU_DEVICE_SUITE(openblas, g, "cpu:openblas");

/* ---- matmul ------------------------------------------------------------------------------ */

typedef struct mm_case {
    kmux_order order;
    kmux_transpose ta, tb;
    int64_t m, n, k, pad, batch;
    int broadcast_b; /* stride_b = 0 */
    kmux_dtype at, bt, ct;
    unsigned epilogue;
    kmux_dtype bias_t;
    double alpha, beta;
    int nan_c;  /* C starts as NaN (only with beta == 0) */
    int scales; /* a_scale 2, b_scale 0.5, d_scale 0.25, amax */
} mm_case;

/* Runs c on ref and cpu:openblas with the same inputs and compares C (and amax); returns the
 * openblas implementation name in impl. */
static void check_matmul(const mm_case *c, const kmux_plan_prefs *prefs, char *impl,
                         size_t impl_size) {
    kmux_matmul_desc d = KMUX_MATMUL_DESC_INIT;
    d.order = c->order;
    d.transa = c->ta;
    d.transb = c->tb;
    d.m = c->m;
    d.n = c->n;
    d.k = c->k;
    d.a_type = c->at;
    d.b_type = c->bt;
    d.c_type = c->ct;
    d.compute_type = c->at == KMUX_F64 ? KMUX_COMPUTE_F64 : KMUX_COMPUTE_F32;
    d.epilogue = c->epilogue;
    d.bias_type = c->bias_t;
    d.batch_count = c->batch;
    int64_t na, nb, nc;
    tu_matmul_layout(&d, c->pad, 0, c->broadcast_b, &na, &nb, &nc);
    const int rm = c->order == KMUX_ROW_MAJOR;

    uint64_t seed = 0x1234 + (uint64_t)(c->m * 131 + c->n * 17 + c->k);
    /* narrow formats hold fewer integers exactly: e5m2 up to 8, the others far more */
    const int range = (c->at == KMUX_F8_E5M2 || c->at == KMUX_F8_E5M2_FNUZ) ? 4 : 3;
    void *A = tu_fill_ints(c->at, na, range, TU_DENSE, &seed);
    void *B = tu_fill_ints(c->bt, nb, range, TU_DENSE, &seed);
    void *C_ref = tu_fill_ints(c->ct, nc, 3, TU_DENSE, &seed);
    if (c->nan_c) tu_fill_value(c->ct, C_ref, nc, NAN);
    void *C_ob = tu_dup(C_ref, (size_t)nc * kmux_dtype_size(c->ct));
    void *bias = tu_fill_ints(c->bias_t, c->n, 5, TU_DENSE, &seed);

    float a_scale = 2.0f, b_scale = 0.5f, d_scale = 0.25f, amax_ref = -1.0f, amax_ob = -2.0f;
    float alpha_f = (float)c->alpha, beta_f = (float)c->beta;
    kmux_matmul_args a = KMUX_MATMUL_ARGS_INIT;
    a.alpha = c->at == KMUX_F64 ? (const void *)&c->alpha : (const void *)&alpha_f;
    a.beta = c->at == KMUX_F64 ? (const void *)&c->beta : (const void *)&beta_f;
    a.A = A;
    a.B = B;
    a.bias = bias;
    if (c->scales) {
        a.a_scale = &a_scale;
        a.b_scale = &b_scale;
        a.d_scale = &d_scale;
    }
    a.C = C_ref;
    a.amax_d = c->scales ? &amax_ref : NULL;
    TU_OK(tu_run_matmul(g.ref, &d, NULL, &a, 0, NULL, 0, NULL));
    a.C = C_ob;
    a.amax_d = c->scales ? &amax_ob : NULL;
    TU_OK(tu_run_matmul(g.dev, &d, prefs, &a, 0, impl, impl_size, NULL));

    char what[200];
    snprintf(what, sizeof what, "%s %s%s m=%lld n=%lld k=%lld batch=%lld %s*%s->%s epi=%u (%s)",
             rm ? "row" : "col", c->ta == KMUX_TRANS ? "T" : "N", c->tb == KMUX_TRANS ? "T" : "N",
             (long long)c->m, (long long)c->n, (long long)c->k, (long long)c->batch,
             kmux_dtype_name(c->at), kmux_dtype_name(c->bt), kmux_dtype_name(c->ct), c->epilogue,
             impl ? impl : "");
    /* GELU's tanh differs in the last bits; allow one rounding step of the output type */
    const double ulp = c->ct == KMUX_F64   ? 1e-14
                       : c->ct == KMUX_F32 ? 1e-6
                       : c->ct == KMUX_F16 ? 1e-3
                                           : 8e-3;
    const double tol = (c->epilogue & KMUX_EPILOGUE_GELU) ? ulp : 0.0;
    tu_expect_equal(what, "openblas", C_ob, C_ref, c->ct, nc, tol, 10);
    if (c->scales) cr_assert_eq(amax_ob, amax_ref, "%s: amax %g, ref %g", what, amax_ob, amax_ref);
    free(A);
    free(B);
    free(C_ref);
    free(C_ob);
    free(bias);
}

static mm_case mm_default(void) {
    mm_case c = {
        KMUX_ROW_MAJOR, KMUX_NO_TRANS, KMUX_NO_TRANS,      13,       9,   17,   3, 1, 0, KMUX_F32,
        KMUX_F32,       KMUX_F32,      KMUX_EPILOGUE_NONE, KMUX_F32, 2.0, -1.0, 0, 0};
    return c;
}

Test(openblas, device_props) {
    TU_NEED_DEVICE(g);
    kmux_device_props p;
    TU_OK(kmux_device_props_get(g.dev, &p));
    cr_expect_str_eq(p.id, "cpu:openblas");
    cr_expect_str_eq(p.backend, "openblas");
    cr_expect(strncmp(p.library_version, "OpenBLAS ", 9) == 0, "library_version '%s'",
              p.library_version);
    cr_expect(p.is_host);
    cr_expect(p.dtype_support[KMUX_F32] && p.dtype_support[KMUX_F64] && p.dtype_support[KMUX_BF16]);
    cr_expect(!p.dtype_support[KMUX_I8], "no integer GEMM on OpenBLAS");
}

/* f32 and f64, both orders, all transposes, padded leading dimensions, strided batches (one with
 * a broadcast B), alpha and beta != 1: bitwise equal to ref. */
Test(openblas, gemm_exact_all_layouts) {
    TU_NEED_DEVICE(g);
    const kmux_dtype types[] = {KMUX_F32, KMUX_F64};
    for (int ti = 0; ti < 2; ti++)
        for (int o = 0; o < 2; o++)
            for (int ta = 0; ta < 2; ta++)
                for (int tb = 0; tb < 2; tb++) {
                    mm_case c = mm_default();
                    c.order = o ? KMUX_COL_MAJOR : KMUX_ROW_MAJOR;
                    c.ta = ta ? KMUX_TRANS : KMUX_NO_TRANS;
                    c.tb = tb ? KMUX_TRANS : KMUX_NO_TRANS;
                    c.at = c.bt = c.ct = types[ti];
                    c.batch = 3;
                    c.broadcast_b = ta ^ tb;
                    char impl[96];
                    check_matmul(&c, NULL, impl, sizeof impl);
                    cr_expect_str_eq(impl, ti ? "openblas:dgemm" : "openblas:sgemm");
                }
}

/* beta == 0: C is not read, so NaN already there does not survive; also through +cvt with a
 * narrow C (whose f32 copy is then never filled from C). */
Test(openblas, gemm_beta_zero_ignores_nan) {
    TU_NEED_DEVICE(g);
    const kmux_dtype in[] = {KMUX_F32, KMUX_F64, KMUX_BF16, KMUX_F16, KMUX_BF16};
    const kmux_dtype out[] = {KMUX_F32, KMUX_F64, KMUX_BF16, KMUX_F16, KMUX_F32};
    for (int i = 0; i < 5; i++) {
        mm_case c = mm_default();
        c.at = c.bt = in[i];
        c.ct = out[i];
        c.beta = 0.0;
        c.nan_c = 1;
        c.pad = 0; /* NaN in padding would be (correctly) kept and fail expect_equal */
        check_matmul(&c, NULL, NULL, 0);
    }
}

/* k == 0 or alpha == 0: C = beta * C (+ epilogue) with A and B NULL, never dereferenced. */
Test(openblas, gemm_degenerate_null_ab) {
    TU_NEED_DEVICE(g);
    const kmux_dtype types[] = {KMUX_F32, KMUX_BF16};
    for (int ti = 0; ti < 2; ti++)
        for (int kzero = 0; kzero < 2; kzero++) {
            kmux_matmul_desc d = KMUX_MATMUL_DESC_INIT;
            d.m = 5;
            d.n = 7;
            d.k = kzero ? 0 : 4;
            d.a_type = d.b_type = types[ti];
            d.c_type = KMUX_F32;
            d.lda = d.k > 0 ? d.k : 1;
            d.ldb = 7;
            d.ldc = 7;
            d.epilogue = KMUX_EPILOGUE_BIAS;
            uint64_t seed = 99;
            float *C_ref = tu_fill_ints(KMUX_F32, 35, 3, TU_DENSE, &seed);
            float *C_ob = tu_dup(C_ref, 35 * sizeof(float));
            float *bias = tu_fill_ints(KMUX_F32, 7, 3, TU_DENSE, &seed);
            float alpha = kzero ? 1.0f : 0.0f, beta = -2.0f;
            kmux_matmul_args a = KMUX_MATMUL_ARGS_INIT;
            a.alpha = &alpha;
            a.beta = &beta;
            a.bias = bias;
            a.C = C_ref;
            TU_OK(tu_run_matmul(g.ref, &d, NULL, &a, 0, NULL, 0, NULL));
            a.C = C_ob;
            TU_OK(tu_run_matmul(g.dev, &d, NULL, &a, 0, NULL, 0, NULL));
            tu_expect_equal(kzero ? "k == 0" : "alpha == 0", "openblas", C_ob, C_ref, KMUX_F32, 35,
                            0.0, 10);
            free(C_ref);
            free(C_ob);
            free(bias);
        }
}

/* bf16/f16/fp8 run as "+cvt" only with allow_emulation; the result is ref's. */
Test(openblas, gemm_cvt_needs_allow_emulation) {
    TU_NEED_DEVICE(g);
    const struct {
        kmux_dtype a, b, c;
    } combos[] = {
        {KMUX_BF16, KMUX_BF16, KMUX_BF16},      {KMUX_BF16, KMUX_BF16, KMUX_F32},
        {KMUX_F16, KMUX_F16, KMUX_F16},         {KMUX_F16, KMUX_F16, KMUX_F32},
        {KMUX_F8_E4M3, KMUX_F8_E5M2, KMUX_F16}, {KMUX_F8_E4M3_FNUZ, KMUX_F8_E5M2_FNUZ, KMUX_BF16}};
    for (size_t i = 0; i < sizeof combos / sizeof combos[0]; i++)
        for (int o = 0; o < 2; o++) {
            mm_case c = mm_default();
            c.at = combos[i].a;
            c.bt = combos[i].b;
            c.ct = combos[i].c;
            c.order = o ? KMUX_COL_MAJOR : KMUX_ROW_MAJOR;
            c.ta = o ? KMUX_TRANS : KMUX_NO_TRANS;
            c.batch = 2;
            c.scales = c.at != KMUX_BF16 && c.at != KMUX_F16; /* fp8: a/b/d scales and amax */
            c.alpha = c.scales ? 1.0 : 2.0;
            kmux_plan_prefs prefs = KMUX_PLAN_PREFS_INIT;
            prefs.allow_emulation = 1;
            char impl[96];
            check_matmul(&c, &prefs, impl, sizeof impl);
            cr_expect(strstr(impl, "+cvt") != NULL, "impl '%s' does not say +cvt", impl);

            kmux_matmul_desc d = KMUX_MATMUL_DESC_INIT;
            d.m = d.n = d.k = d.lda = d.ldb = d.ldc = 8;
            d.a_type = combos[i].a;
            d.b_type = combos[i].b;
            d.c_type = combos[i].c;
            prefs.allow_emulation = 0;
            kmux_plan *plan = NULL;
            TU_STATUS(KMUX_ERR_UNSUPPORTED, kmux_matmul_plan_create(g.dev, &d, &prefs, &plan));
            cr_expect_null(plan);
        }
}

/* Strict f32 is not substituted for TF32/bf16x3, nor f32 accumulation for f16; no i8. */
Test(openblas, gemm_refuses_what_it_cannot_honour) {
    TU_NEED_DEVICE(g);
    kmux_matmul_desc d = KMUX_MATMUL_DESC_INIT;
    d.m = d.n = d.k = d.lda = d.ldb = d.ldc = 8;
    kmux_plan *plan = NULL;
    d.compute_type = KMUX_COMPUTE_F32_FAST_TF32;
    TU_STATUS(KMUX_ERR_UNSUPPORTED, kmux_matmul_plan_create(g.dev, &d, NULL, &plan));
    d.compute_type = KMUX_COMPUTE_F32_FAST_BF16;
    TU_STATUS(KMUX_ERR_UNSUPPORTED, kmux_matmul_plan_create(g.dev, &d, NULL, &plan));
    d.a_type = d.b_type = d.c_type = KMUX_F16;
    d.compute_type = KMUX_COMPUTE_F16;
    TU_STATUS(KMUX_ERR_UNSUPPORTED, kmux_matmul_plan_create(g.dev, &d, NULL, &plan));
    d.a_type = d.b_type = KMUX_I8;
    d.c_type = KMUX_I32;
    d.compute_type = KMUX_COMPUTE_I32;
    TU_STATUS(KMUX_ERR_UNSUPPORTED, kmux_matmul_plan_create(g.dev, &d, NULL, &plan));
    cr_expect_null(plan);

    /* the same through kmux_gemm_ex on an openblas stream */
    float A[64] = {0}, B[64] = {0}, C[64] = {0}, one = 1.0f;
    kmux_stream *st = NULL;
    TU_OK(kmux_stream_create(g.dev, &st));
    TU_STATUS(KMUX_ERR_UNSUPPORTED, kmux_gemm_ex(st, KMUX_ROW_MAJOR, KMUX_NO_TRANS, KMUX_NO_TRANS,
                                                 8, 8, 8, &one, A, KMUX_F32, 8, B, KMUX_F32, 8,
                                                 &one, C, KMUX_F32, 8, KMUX_COMPUTE_F32_FAST_TF32));
    TU_OK(kmux_stream_destroy(st));
}

/* bias (f32 or c_type) + ReLU exactly, + GELU within rounding, in both storage orders. */
Test(openblas, gemm_epilogues) {
    TU_NEED_DEVICE(g);
    const unsigned epis[] = {KMUX_EPILOGUE_BIAS, KMUX_EPILOGUE_RELU,
                             KMUX_EPILOGUE_BIAS | KMUX_EPILOGUE_RELU,
                             KMUX_EPILOGUE_BIAS | KMUX_EPILOGUE_GELU};
    for (int e = 0; e < 4; e++)
        for (int o = 0; o < 2; o++) {
            mm_case c = mm_default();
            c.order = o ? KMUX_COL_MAJOR : KMUX_ROW_MAJOR;
            c.epilogue = epis[e];
            check_matmul(&c, NULL, NULL, 0);
            c.at = c.bt = c.ct = c.bias_t = KMUX_BF16; /* bias of c_type through +cvt */
            c.alpha = 1.0;
            check_matmul(&c, NULL, NULL, 0);
            c.at = c.bt = c.ct = c.bias_t = KMUX_F64;
            check_matmul(&c, NULL, NULL, 0);
        }
}

Test(openblas, plan_info) {
    TU_NEED_DEVICE(g);
    kmux_matmul_desc d = KMUX_MATMUL_DESC_INIT;
    d.m = d.n = d.k = d.lda = d.ldb = d.ldc = 16;
    kmux_plan *plan = NULL;
    kmux_plan_info info;
    TU_OK(kmux_matmul_plan_create(g.dev, &d, NULL, &plan));
    TU_OK(kmux_plan_info_get(plan, &info));
    cr_expect_str_eq(info.impl, "openblas:sgemm");
    cr_expect_eq(info.effective_compute, KMUX_COMPUTE_F32);
    cr_expect_eq(info.workspace_bytes, 0);
    cr_expect_eq(info.deterministic, 1);
    TU_STATUS(KMUX_ERR_LAST_IMPL, kmux_plan_next_impl(plan));
    TU_OK(kmux_plan_destroy(plan));

    d.a_type = d.b_type = KMUX_BF16;
    d.c_type = KMUX_BF16;
    TU_OK(kmux_matmul_plan_create(g.dev, &d, NULL, &plan));
    TU_OK(kmux_plan_info_get(plan, &info));
    cr_expect_str_eq(info.impl, "openblas:sgemm+cvt");
    cr_expect_eq(info.effective_compute, KMUX_COMPUTE_F32);
    cr_expect_geq(info.workspace_bytes, 3 * 16 * 16 * sizeof(float));
    TU_OK(kmux_plan_destroy(plan));

    /* a workspace limit below what +cvt needs is refused, not ignored */
    kmux_plan_prefs prefs = KMUX_PLAN_PREFS_INIT;
    prefs.max_workspace_bytes = 1024;
    TU_STATUS(KMUX_ERR_UNSUPPORTED, kmux_matmul_plan_create(g.dev, &d, &prefs, &plan));
}

/* ---- one +cvt plan executed by several threads at once ----------------------------------- */

typedef struct mt_job {
    kmux_plan *plan;
    const kmux_matmul_args *args;
    int reps;
    kmux_status status;
} mt_job;

static void *mt_worker(void *arg) {
    mt_job *j = arg;
    kmux_stream *st = NULL;
    j->status = kmux_stream_create(g.dev, &st);
    for (int r = 0; r < j->reps && j->status == KMUX_OK; r++)
        j->status = kmux_matmul_execute(j->plan, st, j->args);
    kmux_stream_destroy(st);
    return NULL;
}

Test(openblas, concurrent_executes_of_one_plan) {
    TU_NEED_DEVICE(g);
    enum { T = 4, M = 40, N = 24, K = 33 };
    kmux_matmul_desc d = KMUX_MATMUL_DESC_INIT;
    d.m = M;
    d.n = N;
    d.k = K;
    d.lda = K;
    d.ldb = N;
    d.ldc = N;
    d.a_type = d.b_type = d.c_type = KMUX_BF16;
    kmux_plan *plan = NULL;
    TU_OK(kmux_matmul_plan_create(g.dev, &d, NULL, &plan));
    float alpha = 1.0f, beta = 0.0f;
    void *A[T], *B[T], *C[T], *want[T];
    kmux_matmul_args args[T];
    mt_job jobs[T];
    pthread_t th[T];
    uint64_t seed = 7;
    for (int t = 0; t < T; t++) {
        A[t] = tu_fill_ints(KMUX_BF16, M * K, 3, TU_DENSE, &seed);
        B[t] = tu_fill_ints(KMUX_BF16, K * N, 3, TU_DENSE, &seed);
        C[t] = tu_fill_ints(KMUX_BF16, M * N, 3, TU_DENSE, &seed);
        want[t] = tu_fill_ints(KMUX_BF16, M * N, 3, TU_DENSE, &seed);
        kmux_matmul_args a = KMUX_MATMUL_ARGS_INIT;
        a.alpha = &alpha;
        a.beta = &beta;
        a.A = A[t];
        a.B = B[t];
        a.C = want[t];
        TU_OK(tu_run_matmul(g.ref, &d, NULL, &a, 0, NULL, 0, NULL));
        a.C = C[t];
        args[t] = a;
        jobs[t] = (mt_job){plan, &args[t], 50, KMUX_OK};
    }
    for (int t = 0; t < T; t++)
        cr_assert_eq(pthread_create(&th[t], NULL, mt_worker, &jobs[t]), 0);
    for (int t = 0; t < T; t++)
        pthread_join(th[t], NULL);
    for (int t = 0; t < T; t++) {
        cr_expect_eq(jobs[t].status, KMUX_OK, "thread %d: %s", t, kmux_status_str(jobs[t].status));
        tu_expect_equal("concurrent +cvt", "openblas", C[t], want[t], KMUX_BF16, M * N, 0.0, 10);
        free(A[t]);
        free(B[t]);
        free(C[t]);
        free(want[t]);
    }
    TU_OK(kmux_plan_destroy(plan));
}

/* ---- convolution ------------------------------------------------------------------------- */

/* One case in one direction/layout/dtype, with beta = -1 (output read) and beta = 0 with NaN in
 * the output (not read); returns the openblas implementation name. */
static void check_conv_prefs(const tu_conv_geom *cc, kmux_conv_direction dir, kmux_layout layout,
                             kmux_dtype t, const kmux_plan_prefs *prefs, int impl_step, char *impl,
                             size_t impl_size) {
    const kmux_conv2d_desc d = tu_conv_desc(cc, dir, layout, t);
    int64_t nx, nw, ny;
    tu_conv_elems(&d, &nx, &nw, &ny);
    const int64_t n_out = dir == KMUX_CONV_FWD ? ny : dir == KMUX_CONV_BWD_DATA ? nx : nw;
    for (int beta_zero = 0; beta_zero < 2; beta_zero++) {
        uint64_t seed = 0xC0FFEE + (uint64_t)(dir * 7 + layout);
        void *x = tu_fill_ints(t, nx, 2, TU_DENSE, &seed);
        void *w = tu_fill_ints(t, nw, 2, TU_DENSE, &seed);
        void *y = tu_fill_ints(t, ny, 2, TU_DENSE, &seed);
        if (beta_zero) /* the output is not read: NaN there must not survive */
            tu_fill_value(t,
                          dir == KMUX_CONV_FWD        ? y
                          : dir == KMUX_CONV_BWD_DATA ? x
                                                      : w,
                          dir == KMUX_CONV_FWD        ? ny
                          : dir == KMUX_CONV_BWD_DATA ? nx
                                                      : nw,
                          NAN);
        void *xo = tu_dup(x, (size_t)nx * kmux_dtype_size(t)),
             *wo = tu_dup(w, (size_t)nw * kmux_dtype_size(t));
        void *yo = tu_dup(y, (size_t)ny * kmux_dtype_size(t));
        float alpha = 2.0f, beta = beta_zero ? 0.0f : -1.0f;
        kmux_conv2d_args a = KMUX_CONV2D_ARGS_INIT;
        a.alpha = &alpha;
        a.beta = &beta;
        a.x = x;
        a.w = w;
        a.y = y;
        TU_OK(tu_run_conv(g.ref, &d, NULL, &a, 0, NULL, 0));
        a.x = xo;
        a.w = wo;
        a.y = yo;
        TU_OK(tu_run_conv(g.dev, &d, prefs, &a, impl_step, impl, impl_size));
        char what[256];
        snprintf(what, sizeof what,
                 "conv %s %s %s n%lld c%lld h%lldw%lld k%lld r%llds%lld g%lld s%lldx%lld "
                 "p%lld,%lld,%lld,%lld d%lldx%lld beta=%g (%s)",
                 dir == KMUX_CONV_FWD        ? "fwd"
                 : dir == KMUX_CONV_BWD_DATA ? "bwd_data"
                                             : "bwd_w",
                 layout == KMUX_NCHW ? "nchw" : "nhwc", kmux_dtype_name(t), (long long)cc->n,
                 (long long)cc->c, (long long)cc->h, (long long)cc->w, (long long)cc->k,
                 (long long)cc->r, (long long)cc->s, (long long)cc->groups, (long long)cc->sh,
                 (long long)cc->sw, (long long)cc->pt, (long long)cc->pb, (long long)cc->pl,
                 (long long)cc->pr, (long long)cc->dh, (long long)cc->dw, beta, impl ? impl : "");
        const void *got = dir == KMUX_CONV_FWD ? yo : dir == KMUX_CONV_BWD_DATA ? xo : wo;
        const void *want = dir == KMUX_CONV_FWD ? y : dir == KMUX_CONV_BWD_DATA ? x : w;
        tu_expect_equal(what, "openblas", got, want, t, n_out, 0.0, 10);
        free(x);
        free(w);
        free(y);
        free(xo);
        free(wo);
        free(yo);
    }
}

static void check_conv(const tu_conv_geom *cc, kmux_conv_direction dir, kmux_layout layout,
                       kmux_dtype t, int impl_step, char *impl, size_t impl_size) {
    check_conv_prefs(cc, dir, layout, t, NULL, impl_step, impl, impl_size);
}

static const tu_conv_geom tu_conv_geoms[] = {
    /* n  c   h  w  k  r  s  g  sh sw pt pb pl pr dh dw */
    {2, 3, 7, 6, 4, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1},  /* plain 3x3, "same" padding */
    {2, 4, 9, 11, 6, 3, 2, 2, 2, 1, 2, 0, 1, 3, 2, 3}, /* groups, stride, asym. pad, dilation */
    {3, 6, 8, 7, 6, 3, 3, 6, 2, 2, 1, 1, 1, 1, 1, 1},  /* depthwise, stride 2 */
    {2, 4, 5, 5, 8, 1, 1, 2, 2, 3, 0, 1, 0, 0, 1, 1},  /* 1x1 with stride: needs im2col */
    {1, 2, 4, 9, 3, 2, 5, 1, 3, 2, 0, 2, 4, 1, 1, 2},  /* stride > filter, big left pad */
};

/* Every geometry in every direction and both layouts, exact (check_conv), on the im2col
 * implementation: the first, or the second after the lowering by rows (NCHW, stride_h 1, R > 1,
 * P*Q >= 384: checked as well). */
static void check_im2col_geoms(const tu_conv_geom *geoms, size_t n) {
    const kmux_conv_direction dirs[] = {KMUX_CONV_FWD, KMUX_CONV_BWD_DATA, KMUX_CONV_BWD_WEIGHTS};
    for (size_t i = 0; i < n; i++)
        for (int di = 0; di < 3; di++)
            for (int l = 0; l < 2; l++) {
                char impl[96];
                const kmux_layout layout = l ? KMUX_NHWC : KMUX_NCHW;
                check_conv(&geoms[i], dirs[di], layout, KMUX_F32, 0, impl, sizeof impl);
                if (!strcmp(impl, "openblas:im2col(1xS)+sgemm"))
                    check_conv(&geoms[i], dirs[di], layout, KMUX_F32, 1, impl, sizeof impl);
                cr_expect_str_eq(impl, "openblas:im2col+sgemm");
            }
}

Test(openblas, conv_exact_every_direction_and_layout) {
    TU_NEED_DEVICE(g);
    check_im2col_geoms(tu_conv_geoms, sizeof tu_conv_geoms / sizeof tu_conv_geoms[0]);
}

/* 1x1 stride-1 unpadded: the direct sgemm first, im2col+sgemm as the next implementation. */
Test(openblas, conv_1x1_both_implementations) {
    TU_NEED_DEVICE(g);
    const tu_conv_geom c = {3, 6, 5, 4, 4, 1, 1, 2, 1, 1, 0, 0, 0, 0, 1, 1};
    const kmux_conv_direction dirs[] = {KMUX_CONV_FWD, KMUX_CONV_BWD_DATA, KMUX_CONV_BWD_WEIGHTS};
    for (int di = 0; di < 3; di++)
        for (int l = 0; l < 2; l++) {
            char impl[96];
            check_conv(&c, dirs[di], l ? KMUX_NHWC : KMUX_NCHW, KMUX_F32, 0, impl, sizeof impl);
            cr_expect_str_eq(impl, "openblas:sgemm(1x1)");
            check_conv(&c, dirs[di], l ? KMUX_NHWC : KMUX_NCHW, KMUX_F32, 1, impl, sizeof impl);
            cr_expect_str_eq(impl, "openblas:im2col+sgemm");
        }
}

/* f16/bf16 convolution through +cvt, only with allow_emulation; FAST compute refused. */
Test(openblas, conv_cvt_and_refusals) {
    TU_NEED_DEVICE(g);
    const kmux_dtype types[] = {KMUX_BF16, KMUX_F16};
    const kmux_conv_direction dirs[] = {KMUX_CONV_FWD, KMUX_CONV_BWD_DATA, KMUX_CONV_BWD_WEIGHTS};
    for (int ti = 0; ti < 2; ti++)
        for (int di = 0; di < 3; di++) {
            char impl[96];
            check_conv(&tu_conv_geoms[1], dirs[di], di == 1 ? KMUX_NHWC : KMUX_NCHW, types[ti], 0,
                       impl, sizeof impl);
            cr_expect_str_eq(impl, "openblas:im2col+sgemm+cvt");
        }
    kmux_conv2d_desc d = KMUX_CONV2D_DESC_INIT;
    d.n = 1;
    d.c = d.k = 4;
    d.h = d.w = 8;
    d.r = d.s = 3;
    d.x_type = d.w_type = d.y_type = KMUX_BF16;
    kmux_plan_prefs prefs = KMUX_PLAN_PREFS_INIT;
    prefs.allow_emulation = 0;
    kmux_plan *plan = NULL;
    TU_STATUS(KMUX_ERR_UNSUPPORTED, kmux_conv2d_plan_create(g.dev, &d, &prefs, &plan));
    d.x_type = d.w_type = d.y_type = KMUX_F32;
    d.compute_type = KMUX_COMPUTE_F32_FAST_TF32;
    TU_STATUS(KMUX_ERR_UNSUPPORTED, kmux_conv2d_plan_create(g.dev, &d, NULL, &plan));
    cr_expect_null(plan);
}

/* The blocked im2col: a workspace that holds only 24 pixels of the column matrix forces many
 * panels, which start and end inside output rows and (NHWC) run across images; col2im of
 * overlapping panels must add every tap once. */
Test(openblas, conv_many_panels) {
    TU_NEED_DEVICE(g);
    /* n  c  h  w  k  r  s  g  sh sw pt pb pl pr dh dw: P x Q = 6 x 7, C*R*S = 36 */
    const tu_conv_geom c = {3, 4, 6, 7, 5, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1};
    const tu_conv_geom cg = {2, 4, 11, 9, 6, 3, 2, 2, 2, 1, 2, 0, 1, 3, 2, 3}; /* groups etc. */
    kmux_plan_prefs prefs = KMUX_PLAN_PREFS_INIT;
    const kmux_conv_direction dirs[] = {KMUX_CONV_FWD, KMUX_CONV_BWD_DATA, KMUX_CONV_BWD_WEIGHTS};
    for (int di = 0; di < 3; di++)
        for (int l = 0; l < 2; l++) {
            char impl[96];
            prefs.max_workspace_bytes = 36 * 4 * 24 + 64; /* 24 pixels fit, 48 do not */
            check_conv_prefs(&c, dirs[di], l ? KMUX_NHWC : KMUX_NCHW, KMUX_F32, &prefs, 0, impl,
                             sizeof impl);
            cr_expect_str_eq(impl, "openblas:im2col+sgemm");
            prefs.max_workspace_bytes = 2 * 3 * 2 * 4 * 24 + 64; /* C/groups*R*S = 12 */
            check_conv_prefs(&cg, dirs[di], l ? KMUX_NHWC : KMUX_NCHW, KMUX_F32, &prefs, 0, impl,
                             sizeof impl);
        }
}

/* NCHW images of fewer than 384 pixels go into panels of whole images, their outputs through a
 * buffer (openblas_conv2d.c): one panel for the batch, then a workspace for two images' panels
 * (2 + 2 + 1 images for n = 5), with groups too, in every direction. */
Test(openblas, conv_nchw_whole_image_panels) {
    TU_NEED_DEVICE(g);
    /* n  c  h  w  k  r  s  g  sh sw pt pb pl pr dh dw: P x Q = 6 x 7, C/g*R*S = 36 or 18 */
    const tu_conv_geom geoms[] = {{5, 4, 6, 7, 5, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1},
                                  {5, 4, 6, 7, 6, 3, 3, 2, 1, 1, 1, 1, 1, 1, 1, 1}};
    /* The plan's workspace shows the panels: five images (210 pixels) need a column panel of
     * 210 x 36 floats (30240 bytes, aligned 30272) and an output panel of 5 x 210 (4200, 4224),
     * two images 84 x 36 (12096) and 5 x 84 (1680, 1728); with groups 210 x 18 (15168 aligned)
     * and 3 x 210 (2560), or 84 x 18 (6080) and 3 x 84 (1024). One image per panel would need
     * no output panel (42 x 36 floats, 6080 bytes). */
    const size_t five_images[] = {30272 + 4224, 15168 + 2560};
    const size_t two_images[] = {12096 + 1728, 6080 + 1024};
    const kmux_conv_direction dirs[] = {KMUX_CONV_FWD, KMUX_CONV_BWD_DATA, KMUX_CONV_BWD_WEIGHTS};
    kmux_plan_prefs prefs = KMUX_PLAN_PREFS_INIT;
    for (int i = 0; i < 2; i++)
        for (int di = 0; di < 3; di++)
            for (int small = 0; small < 2; small++) {
                char impl[96];
                prefs.max_workspace_bytes = small ? two_images[i] : (size_t)1 << 30;
                const kmux_conv2d_desc d = tu_conv_desc(&geoms[i], dirs[di], KMUX_NCHW, KMUX_F32);
                kmux_plan *plan = NULL;
                TU_OK(kmux_conv2d_plan_create(g.dev, &d, &prefs, &plan));
                kmux_plan_info info;
                TU_OK(kmux_plan_info_get(plan, &info));
                cr_expect_eq(info.workspace_bytes, small ? two_images[i] : five_images[i],
                             "geometry %d, direction %d: workspace %zu", i, di,
                             info.workspace_bytes);
                TU_OK(kmux_plan_destroy(plan));
                check_conv_prefs(&geoms[i], dirs[di], KMUX_NCHW, KMUX_F32, &prefs, 0, impl,
                                 sizeof impl);
                cr_expect_str_eq(impl, "openblas:im2col+sgemm");
            }
}

/* Panels big enough to be lowered and scattered on several threads (>= 2^18 elements,
 * kernels/cpu/im2col_panel.c); the second geometry's 460800 lie between 2^18 and 2^20; the third
 * has taps that never overlap (NHWC col2im splits its pixels). */
Test(openblas, conv_threaded_panels) {
    TU_NEED_DEVICE(g);
    const tu_conv_geom geoms[] = {
        /* n  c   h   w   k  r  s  g  sh sw pt pb pl pr dh dw: 64*3*3 x 48*48 = 1327104 elements */
        {2, 64, 48, 48, 4, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1},
        {1, 32, 40, 40, 4, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1}, /* 32*3*3 x 40*40 = 460800 */
        /* 1x1 of stride 2: NHWC col2im splits the 2 x 32 x 32 pixels (x 128 = 2^18) */
        {2, 128, 64, 64, 4, 1, 1, 1, 2, 2, 0, 0, 0, 0, 1, 1},
    };
    check_im2col_geoms(geoms, sizeof geoms / sizeof geoms[0]);
}

/* Vertical stride 1 with P*Q >= 384 lowers by rows first (openblas_conv2d_rows.c: the im2col of
 * the filter's width, one sgemm per filter row on shifted pixels), im2col + sgemm next; both
 * exact in every direction and layout, with beta = -1 and over NaN with beta = 0. The geometries
 * take each branch: a filter row that reaches every output and input row (it sets y or the
 * lowering) or none (y scaled, the lowering zeroed first), output rows no filter row reaches, a
 * filter row that reaches none, and the horizontal geometry of the 1 x S lowering. */
Test(openblas, conv_rows) {
    TU_NEED_DEVICE(g);
    const tu_conv_geom geoms[] = {
        /* n  c  h   w   k  r  s  g  sh sw pt pb pl pr dh dw */
        {2, 3, 20, 21, 4, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1}, /* "same" 3x3: row 1 reaches all */
        {2, 3, 20, 21, 4, 3, 3, 1, 1, 1, 2, 0, 1, 1, 1, 1}, /* top pad 2: row 2 reaches all */
        {2, 3, 20, 21, 4, 2, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1}, /* 2 rows, P = H + 1: FWD has none */
        {2, 3, 22, 21, 4, 3, 3, 1, 1, 1, 0, 0, 1, 1, 1, 1}, /* no vertical pad: BWD_DATA: none */
        {1, 2, 16, 24, 3, 2, 3, 1, 1, 1, 5, 2, 0, 2, 1, 1}, /* output rows 0-3, 21 reach no input */
        {1, 2, 4, 70, 3, 3, 3, 1, 1, 1, 8, 0, 1, 1, 3, 1},  /* row 0 reaches none (P = 6) */
        /* groups, stride_w 2, dilations, uneven horizontal padding (Q = 22); then P = 26 > H,
         * where no filter row reaches every output row; then depthwise (NCHW BWD_WEIGHTS: im2col
         * only) */
        {2, 4, 24, 45, 6, 3, 3, 2, 1, 2, 2, 2, 2, 1, 2, 2},
        {2, 4, 24, 45, 6, 3, 3, 2, 1, 2, 3, 3, 2, 1, 2, 2},
        {2, 3, 20, 21, 3, 3, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1},
    };
    const kmux_conv_direction dirs[] = {KMUX_CONV_FWD, KMUX_CONV_BWD_DATA, KMUX_CONV_BWD_WEIGHTS};
    for (size_t i = 0; i < sizeof geoms / sizeof geoms[0]; i++)
        for (int di = 0; di < 3; di++)
            for (int l = 0; l < 2; l++) {
                const tu_conv_geom *cc = &geoms[i];
                const kmux_layout layout = l ? KMUX_NHWC : KMUX_NCHW;
                char impl[96];
                if (!l && dirs[di] == KMUX_CONV_BWD_WEIGHTS && cc->k == cc->groups) {
                    check_conv(cc, dirs[di], layout, KMUX_F32, 0, impl, sizeof impl);
                    cr_expect_str_eq(impl, "openblas:im2col+sgemm", "geometry %zu", i);
                    continue;
                }
                check_conv(cc, dirs[di], layout, KMUX_F32, 0, impl, sizeof impl);
                cr_expect_str_eq(impl, "openblas:im2col(1xS)+sgemm", "geometry %zu", i);
                check_conv(cc, dirs[di], layout, KMUX_F32, 1, impl, sizeof impl);
                cr_expect_str_eq(impl, "openblas:im2col+sgemm", "geometry %zu", i);
                check_conv(cc, dirs[di], layout, KMUX_BF16, 0, impl, sizeof impl);
                cr_expect_str_eq(impl, "openblas:im2col(1xS)+sgemm+cvt", "geometry %zu", i);
            }
    /* a workspace one float too small for an image's lowering (C/g*S x H*Q): im2col + sgemm
     * alone; with room for it (and NCHW's repacked filter), the lowering by rows */
    const tu_conv_geom *cc = &geoms[6];
    for (int l = 0; l < 2; l++)
        for (int fits = 0; fits < 2; fits++) {
            const kmux_layout layout = l ? KMUX_NHWC : KMUX_NCHW;
            const kmux_conv2d_desc d = tu_conv_desc(cc, KMUX_CONV_FWD, layout, KMUX_F32);
            int64_t p, q;
            TU_OK(kmux_conv2d_output_dims(&d, &p, &q));
            kmux_plan_prefs prefs = KMUX_PLAN_PREFS_INIT;
            const size_t low = (size_t)(cc->c / cc->groups * cc->s * cc->h * q) * 4;
            const size_t wr = (size_t)(cc->k / cc->groups * cc->c / cc->groups * cc->r * cc->s) * 4;
            prefs.max_workspace_bytes = low - 4; /* then the 64-byte aligned low, and wr (NCHW) */
            if (fits)
                prefs.max_workspace_bytes = (low + 63) / 64 * 64 + (l ? 0 : (wr + 63) / 64 * 64);
            char impl[96];
            check_conv_prefs(cc, KMUX_CONV_FWD, layout, KMUX_F32, &prefs, 0, impl, sizeof impl);
            cr_expect_str_eq(impl, fits ? "openblas:im2col(1xS)+sgemm" : "openblas:im2col+sgemm");
        }
}

/* A row lowering whose size C/g*S*H*Q wraps 64 bits (2^64 floats, over tensors of 4 Mi elements
 * each: W = 1, a filter as wide as the padding) must not be taken for a small one: the plan is
 * im2col + sgemm or refused, never the lowering by rows. */
Test(openblas, conv_rows_size_overflow) {
    TU_NEED_DEVICE(g);
    kmux_conv2d_desc d = KMUX_CONV2D_DESC_INIT;
    d.n = d.c = d.k = 1;
    d.h = (int64_t)1 << 22;
    d.w = 1;
    d.r = 2;
    d.s = (int64_t)1 << 20;
    d.dilation_h = ((int64_t)1 << 22) - 1; /* P = 1 */
    d.pad_left = (int64_t)1 << 21;
    d.pad_right = ((int64_t)1 << 21) + ((int64_t)1 << 20) - 2; /* Q = 2^22 */
    int64_t p, q;
    TU_OK(kmux_conv2d_output_dims(&d, &p, &q));
    cr_assert_eq(p * q, (int64_t)1 << 22);
    kmux_plan *plan = NULL;
    const kmux_status st = kmux_conv2d_plan_create(g.dev, &d, NULL, &plan);
    if (st == KMUX_OK) {
        kmux_plan_info info;
        TU_OK(kmux_plan_info_get(plan, &info));
        cr_expect_str_neq(info.impl, "openblas:im2col(1xS)+sgemm");
        TU_OK(kmux_plan_destroy(plan));
    } else {
        cr_expect_eq(st, KMUX_ERR_UNSUPPORTED, "%s", kmux_status_str(st));
    }
}

/* One group and dilation 1: NHWC lowers and scatters each filter row's taps as one run; the
 * runs are cut at the image's edges (stride > 1, uneven and large padding, ResNet's 7x7). */
Test(openblas, conv_nhwc_tap_runs) {
    TU_NEED_DEVICE(g);
    const tu_conv_geom geoms[] = {
        /* n  c  h   w  k  r  s  g  sh sw pt pb pl pr dh dw */
        {2, 3, 9, 10, 4, 3, 4, 1, 2, 3, 1, 2, 3, 2, 1, 1},
        {1, 3, 15, 15, 4, 7, 7, 1, 2, 2, 3, 3, 3, 3, 1, 1},
        {1, 2, 5, 4, 3, 2, 6, 1, 1, 1, 0, 1, 5, 4, 2, 1}, /* filter wider than the image */
    };
    check_im2col_geoms(geoms, sizeof geoms / sizeof geoms[0]);
}

/* NCHW where stride_w = 1 and stride_h * W = Q: runs of whole output rows are lowered as one copy,
 * their out-of-image columns zeroed after (im2col_panel.c). The runs end at the plane's last
 * element (right padding), start before its first (top-left padding), use dilation, and a
 * stride_h of 2 with W = Q / 2. */
Test(openblas, conv_nchw_row_runs) {
    TU_NEED_DEVICE(g);
    const tu_conv_geom geoms[] = {
        /* n  c  h  w  k  r  s  g  sh sw pt pb pl pr dh dw */
        {2, 3, 8, 8, 4, 3, 3, 1, 1, 1, 2, 2, 2, 2, 2, 2}, /* dilated "same" */
        {2, 3, 6, 5, 4, 3, 3, 1, 1, 1, 0, 2, 0, 2, 1, 1}, /* padding only right and below */
        {2, 2, 7, 3, 3, 2, 1, 1, 2, 1, 1, 1, 1, 2, 1, 1}, /* stride_h 2, Q = 2 W */
        {3, 4, 5, 4, 2, 3, 3, 2, 1, 1, 1, 1, 1, 1, 1, 1}, /* groups */
    };
    const kmux_conv_direction dirs[] = {KMUX_CONV_FWD, KMUX_CONV_BWD_DATA, KMUX_CONV_BWD_WEIGHTS};
    kmux_plan_prefs prefs = KMUX_PLAN_PREFS_INIT;
    for (size_t i = 0; i < sizeof geoms / sizeof geoms[0]; i++)
        for (int di = 0; di < 3; di++)
            for (int small = 0; small < 2; small++) {
                char impl[96];
                /* small: panels of 16 pixels, which start inside output rows */
                const tu_conv_geom *cc = &geoms[i];
                prefs.max_workspace_bytes =
                    small ? (size_t)(cc->c / cc->groups * cc->r * cc->s) * 4 * 16 + 64 : SIZE_MAX;
                check_conv_prefs(cc, dirs[di], KMUX_NCHW, KMUX_F32, &prefs, 0, impl, sizeof impl);
                cr_expect_str_eq(impl, "openblas:im2col+sgemm");
            }
}

/* BWD_DATA whose taps never overlap (a stride at least the filter's extent): col2im writes
 * beta * dx + the taps in one pass over dx (kernels/cpu/col2im_disjoint.c) for panels of whole
 * images; a workspace of one pixel less than an image takes the plain path (dx scaled first, the
 * taps added after), its panels never holding a whole image (every image has over 16 output
 * pixels, the smallest panel). Both must agree with ref exactly, with beta = -1 and over NaN with
 * beta = 0. */
Test(openblas, conv_bwd_data_disjoint_taps) {
    TU_NEED_DEVICE(g);
    const tu_conv_geom geoms[] = {
        /* n  c  h   w   k  r  s  g  sh sw pt pb pl pr dh dw */
        {2, 4, 8, 9, 3, 1, 1, 1, 2, 2, 0, 0, 0, 0, 1, 1},   /* 1x1 stride 2, odd W */
        {2, 6, 10, 8, 4, 2, 2, 2, 3, 2, 1, 0, 1, 1, 1, 1},  /* groups, stride = extent in w */
        {1, 3, 16, 16, 2, 2, 2, 1, 3, 3, 0, 1, 2, 0, 2, 1}, /* dilation: extent 3 = stride */
        {3, 5, 9, 9, 4, 1, 1, 1, 2, 3, 2, 2, 0, 1, 1, 1},   /* 1x1 with padding, rows unreached */
        {1, 16, 128, 128, 8, 1, 1, 1, 2, 2, 0, 0, 0, 0, 1, 1}, /* 2^18 elements: split mid-image */
        {2, 8, 30, 30, 16, 1, 1, 1, 2, 2, 0, 0, 0, 0, 1, 1},   /* ResNet's res3a_2a, scaled down */
    };
    for (size_t i = 0; i < sizeof geoms / sizeof geoms[0]; i++)
        for (int l = 0; l < 4; l++) { /* NCHW, NHWC, then both with panels inside an image */
            const tu_conv_geom *cc = &geoms[i];
            const kmux_layout layout = l % 2 ? KMUX_NHWC : KMUX_NCHW;
            const kmux_conv2d_desc d = tu_conv_desc(cc, KMUX_CONV_BWD_DATA, layout, KMUX_F32);
            int64_t p, q;
            TU_OK(kmux_conv2d_output_dims(&d, &p, &q));
            kmux_plan_prefs prefs = KMUX_PLAN_PREFS_INIT;
            if (l >= 2)
                prefs.max_workspace_bytes =
                    (size_t)(cc->c / cc->groups * cc->r * cc->s * 4) * (size_t)(p * q - 1);
            char impl[96];
            check_conv_prefs(cc, KMUX_CONV_BWD_DATA, layout, KMUX_F32, &prefs, 0, impl,
                             sizeof impl);
            cr_expect_str_eq(impl, "openblas:im2col+sgemm", "geometry %zu: %s", i, impl);
        }
}

/* NCHW with stride_w = 2 and no phases (a stride wider than the filter) gathers runs of whole
 * output rows with AVX-512 where the CPU has it (kernels/cpu/gather_avx512.c), else row by row
 * with SSE2, asking for the input rows ahead. Rows of 35, 18 and 17 outputs (full vectors and
 * tails), left and right padding (a tap's first or last columns outside the image), groups; with
 * whole-image panels and with panels of about 2.5 output rows, which start and end inside rows
 * and hold whole rows between. BWD_DATA of the 1x1 geometries writes dx by
 * kernels/cpu/col2im_disjoint.c. Exact against ref. */
Test(openblas, conv_nchw_stride2_gathers) {
    TU_NEED_DEVICE(g);
    const tu_conv_geom geoms[] = {
        /* n  c  h  w   k  r  s  g  sh sw pt pb pl pr dh dw */
        {2, 3, 9, 70, 4, 1, 1, 1, 2, 2, 0, 0, 0, 0, 1, 1}, /* 1x1: Q = 35 */
        {2, 2, 6, 35, 3, 1, 3, 1, 2, 2, 0, 0, 2, 1, 1, 1}, /* 1x3, left pad 2: Q = 18 */
        {2, 2, 6, 34, 3, 1, 3, 1, 2, 2, 0, 0, 2, 2, 1, 1}, /* right pad 2: tap 2 stops at 17 */
        {2, 4, 5, 33, 4, 1, 1, 2, 2, 2, 1, 0, 0, 0, 1, 1}, /* groups, top pad: Q = 17 */
    };
    const kmux_conv_direction dirs[] = {KMUX_CONV_FWD, KMUX_CONV_BWD_DATA, KMUX_CONV_BWD_WEIGHTS};
    for (size_t i = 0; i < sizeof geoms / sizeof geoms[0]; i++)
        for (int di = 0; di < 3; di++)
            for (int small = 0; small < 2; small++) {
                const tu_conv_geom *cc = &geoms[i];
                const kmux_conv2d_desc d = tu_conv_desc(cc, dirs[di], KMUX_NCHW, KMUX_F32);
                int64_t p, q;
                TU_OK(kmux_conv2d_output_dims(&d, &p, &q));
                const size_t pixel = (size_t)(cc->c / cc->groups * cc->r * cc->s) * 4;
                kmux_plan_prefs prefs = KMUX_PLAN_PREFS_INIT;
                if (small) {
                    prefs.max_workspace_bytes = (pixel * (size_t)(5 * q / 2) + 63) & ~(size_t)63;
                    kmux_plan *plan = NULL;
                    TU_OK(kmux_conv2d_plan_create(g.dev, &d, &prefs, &plan));
                    kmux_plan_info info;
                    TU_OK(kmux_plan_info_get(plan, &info));
                    TU_OK(kmux_plan_destroy(plan));
                    const size_t nj = info.workspace_bytes / pixel; /* the panel, rounded up */
                    cr_expect(nj > (size_t)q + 1 && nj < (size_t)(p * q),
                              "geometry %zu: a panel of about %zu pixels, rows of %lld", i, nj,
                              (long long)q);
                }
                char impl[96];
                check_conv_prefs(cc, dirs[di], KMUX_NCHW, KMUX_F32, &prefs, 0, impl, sizeof impl);
                cr_expect_str_eq(impl, "openblas:im2col+sgemm");
            }
}

/* Strided NCHW convolutions lower panels of whole images by phases (kernels/cpu/im2col_phases.c).
 * The plan's workspace shows it: the column panel, then one phase scratch per thread (sh * Hp x
 * sw * Wp floats); NHWC, and NCHW when the workspace allows only panels inside an image, lower
 * without, and so does a stride wider than the filter. BWD_DATA writes beta * dx + the sum by
 * phases in one pass (no pass of its own for beta). Geometries: odd sizes,
 * stride in one dimension, dilation, groups, a stride as wide as the filter, an image as narrow
 * as the stride, 1x1 of stride 2, and few channels on several threads (the planes are then split
 * into blocks of phase rows, 2^18 elements and more: threaded). */
Test(openblas, conv_nchw_stride_phases) {
    TU_NEED_DEVICE(g);
    const tu_conv_geom geoms[] = {
        /* n  c  h   w   k  r  s  g  sh sw pt pb pl pr dh dw */
        {2, 3, 9, 11, 4, 3, 3, 1, 2, 2, 1, 1, 1, 1, 1, 1},  /* Hp x Wp = 5 x 6, P x Q = 5 x 6 */
        {2, 4, 10, 9, 6, 3, 5, 2, 1, 3, 0, 2, 2, 1, 2, 1},  /* groups, stride_w only, dilation */
        {2, 2, 7, 8, 3, 2, 2, 1, 2, 2, 0, 1, 1, 0, 1, 1},   /* stride = filter */
        {1, 2, 5, 2, 3, 3, 3, 1, 2, 2, 1, 1, 1, 1, 1, 1},   /* W = stride */
        {2, 4, 6, 9, 3, 1, 1, 1, 2, 2, 0, 0, 0, 0, 1, 1},   /* 1x1, stride 2: no phases */
        {1, 3, 96, 96, 4, 7, 7, 1, 2, 2, 3, 3, 3, 3, 1, 1}, /* ResNet's 7x7 on 96^2: 338688 */
    };
    const kmux_conv_direction dirs[] = {KMUX_CONV_FWD, KMUX_CONV_BWD_DATA, KMUX_CONV_BWD_WEIGHTS};
    for (size_t i = 0; i < sizeof geoms / sizeof geoms[0]; i++) {
        const tu_conv_geom *cc = &geoms[i];
        const int64_t hp = (cc->h + cc->sh - 1) / cc->sh, wp = (cc->w + cc->sw - 1) / cc->sw;
        const size_t phase = (size_t)(cc->sh * hp * cc->sw * wp) * sizeof(float);
        for (int di = 0; di < 3; di++)
            for (int l = 0; l < 3; l++) { /* NCHW, NHWC, NCHW with panels inside an image */
                const kmux_layout layout = l == 1 ? KMUX_NHWC : KMUX_NCHW;
                const kmux_conv2d_desc d = tu_conv_desc(cc, dirs[di], layout, KMUX_F32);
                int64_t p, q;
                TU_OK(kmux_conv2d_output_dims(&d, &p, &q));
                const int64_t crsg = cc->c / cc->groups * cc->r * cc->s;
                /* one image per panel (P*Q >= 384 pixels, or fewer and the batch's panel) */
                const int64_t nj = p * q >= 384 || l == 1 ? p * q : cc->n * p * q;
                const size_t col = ((size_t)(nj * crsg) * sizeof(float) + 63) & ~(size_t)63;
                kmux_plan_prefs prefs = KMUX_PLAN_PREFS_INIT;
                if (l == 2)
                    prefs.max_workspace_bytes = (size_t)(crsg * 4) * 16 + 64; /* 16 pixels */
                kmux_plan *plan = NULL;
                TU_OK(kmux_conv2d_plan_create(g.dev, &d, &prefs, &plan));
                kmux_plan_info info;
                TU_OK(kmux_plan_info_get(plan, &info));
                TU_OK(kmux_plan_destroy(plan));
                const int wide =
                    cc->sh > (cc->r - 1) * cc->dh + 1 || cc->sw > (cc->s - 1) * cc->dw + 1;
                /* NCHW images of < 384 pixels also get an output panel (Kg x the batch) */
                const size_t ypan = p * q < 384 && cc->n > 1
                                        ? ((size_t)(cc->k / cc->groups * nj) * 4 + 63) & ~63u
                                        : 0;
                if (l == 0 && wide) {
                    cr_expect_eq(info.workspace_bytes, col + ypan,
                                 "geometry %zu, direction %d: %zu", i, di, info.workspace_bytes);
                } else if (l == 0) {
                    const size_t rest = info.workspace_bytes - col - ypan;
                    int threads = 0;
                    for (int t = 1; t <= 64 && !threads; t++)
                        if (rest == ((phase * (size_t)t + 63) & ~(size_t)63)) threads = t;
                    cr_expect(threads > 0,
                              "geometry %zu, direction %d: workspace %zu is not the column panel "
                              "%zu + output panel %zu + a phase scratch of %zu bytes per thread",
                              i, di, info.workspace_bytes, col, ypan, phase);
                } else if (l == 1) {
                    cr_expect_eq(info.workspace_bytes,
                                 ((size_t)(cc->n * p * q * crsg) * 4 + 63) & ~(size_t)63,
                                 "geometry %zu, direction %d: NHWC workspace %zu", i, di,
                                 info.workspace_bytes);
                } else {
                    cr_expect_leq(info.workspace_bytes, prefs.max_workspace_bytes);
                }
                char impl[96];
                check_conv_prefs(cc, dirs[di], layout, KMUX_F32, &prefs, 0, impl, sizeof impl);
                cr_expect_str_eq(impl, "openblas:im2col+sgemm");
            }
    }
}
