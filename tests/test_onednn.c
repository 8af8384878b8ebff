/*
 * test_onednn.c - what is specific to the oneDNN backend (cpu:onednn): device properties,
 * implementation names and the "+cvt" emulation rule, strict f32 for the FAST compute types,
 * f64 refusal, exact i8 GEMM (also past 2^24 and with wrap-around), every GEMM layout and
 * epilogue path of the plugin, the BLAS degenerate cases it handles itself, every convolution
 * direction and layout, plan_next_impl, and concurrent executes of one plan from 4 threads.
 * The cross-backend conformance suite lives in test_conformance_*.c.
 *
 * Data are small integers (as benchdnn), so every partial sum is exact and results must be
 * bitwise equal to ref's (f64, rounded once); GELU (tanh) is compared with a tolerance.
 */
#include "test_util.h"

#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ref and cpu:onednn (NULL without the plugin: every test is skipped) */
TU_DEVICE_SUITE(onednn, g, "cpu:onednn");

/* ---- matmul helpers ------------------------------------------------------------------------ */

typedef struct mm_case {
    kmux_order order;
    kmux_transpose ta, tb;
    int64_t m, n, k, pad, batch;
    int bcast_a, bcast_b; /* stride 0 */
    kmux_dtype at, ct;
    kmux_compute_type ct_compute;
    unsigned epilogue;
    kmux_dtype bias_t;
    double alpha, beta;
    int nan_c;  /* C starts as NaN (beta == 0 only) */
    int scales; /* fp8: a_scale 2, b_scale 0.5, d_scale 0.25 and amax */
    int allow_emulation;
} mm_case;

static void mm_desc(const mm_case *c, kmux_matmul_desc *d, int64_t *na, int64_t *nb, int64_t *nc) {
    kmux_matmul_desc init = KMUX_MATMUL_DESC_INIT;
    *d = init;
    d->order = c->order;
    d->transa = c->ta;
    d->transb = c->tb;
    d->m = c->m;
    d->n = c->n;
    d->k = c->k;
    d->a_type = d->b_type = c->at;
    d->c_type = c->ct;
    d->compute_type = c->ct_compute ? c->ct_compute : KMUX_COMPUTE_F32;
    d->epilogue = c->epilogue;
    d->bias_type = c->epilogue & KMUX_EPILOGUE_BIAS ? c->bias_t : KMUX_F32;
    d->batch_count = c->batch;
    tu_matmul_layout(d, c->pad, c->bcast_a, c->bcast_b, na, nb, nc);
}

/* Runs c on ref and cpu:onednn with the same inputs and compares all of C's span (gaps too:
 * neither may write them) and amax. Returns onednn's status (OK or UNSUPPORTED) and its plan
 * info; the comparison is done only when it ran. */
static kmux_status check_matmul(const mm_case *c, kmux_plan_info *info, char *impl,
                                size_t impl_size) {
    kmux_matmul_desc d;
    int64_t na, nb, nc;
    mm_desc(c, &d, &na, &nb, &nc);
    uint64_t seed = 0x5eed + (uint64_t)(c->m * 131 + c->n * 17 + c->k + c->order + c->ta * 3);
    int is_int = c->at == KMUX_I8;
    void *A = tu_fill_ints(c->at, na, is_int ? 100 : 3, TU_DENSE, &seed);
    void *B =
        tu_fill_ints(c->at, nb, is_int ? 100 : 3, (!is_int) ? TU_ZERO_3_OF_4 : TU_DENSE, &seed);
    void *C0 = tu_fill_ints(c->ct, nc, 4, TU_DENSE, &seed);
    if (c->nan_c)
        for (int64_t i = 0; i < nc; i++)
            tu_set(c->ct, C0, i, NAN);
    void *bias = tu_fill_ints(c->bias_t, c->n, 5, TU_DENSE, &seed);
    size_t cbytes = (size_t)nc * kmux_dtype_size(c->ct);
    void *Cd = tu_dup(C0, cbytes), *Cr = tu_dup(C0, cbytes);
    float fa = (float)c->alpha, fb = (float)c->beta;
    int32_t ia = (int32_t)c->alpha, ib = (int32_t)c->beta;
    float as = 2.0f, bs = 0.5f, ds = 0.25f, amax_d = -1.0f, amax_r = -2.0f;
    kmux_matmul_args a = KMUX_MATMUL_ARGS_INIT;
    a.alpha = is_int ? (const void *)&ia : (const void *)&fa;
    a.beta = is_int ? (const void *)&ib : (const void *)&fb;
    a.A = A;
    a.B = B;
    a.bias = bias;
    if (c->scales) {
        a.a_scale = &as;
        a.b_scale = &bs;
        a.d_scale = &ds;
    }
    kmux_plan_prefs prefs = KMUX_PLAN_PREFS_INIT;
    prefs.allow_emulation = c->allow_emulation;
    a.C = Cd;
    a.amax_d = c->scales ? &amax_d : NULL;
    kmux_status s = tu_run_matmul(g.dev, &d, &prefs, &a, 0, impl, impl_size, info);
    if (s == KMUX_OK) {
        a.C = Cr;
        a.amax_d = c->scales ? &amax_r : NULL;
        prefs.allow_emulation = 1;
        TU_OK(tu_run_matmul(g.ref, &d, &prefs, &a, 0, NULL, 0, NULL));
        char what[160];
        snprintf(what, sizeof what, "matmul %s m%lld n%lld k%lld batch%lld %s", impl ? impl : "",
                 (long long)c->m, (long long)c->n, (long long)c->k, (long long)c->batch,
                 c->order == KMUX_ROW_MAJOR ? "row" : "col");
        tu_expect_equal(what, "onednn", Cd, Cr, c->ct, nc,
                        (c->epilogue & KMUX_EPILOGUE_GELU) ? 1e-5 : 0.0, 4);
        if (c->scales) cr_assert_eq(amax_d, amax_r, "amax: onednn %g, ref %g", amax_d, amax_r);
    }
    free(A);
    free(B);
    free(C0);
    free(bias);
    free(Cd);
    free(Cr);
    return s;
}

static mm_case f32_case(kmux_order o, kmux_transpose ta, kmux_transpose tb) {
    mm_case c = {o,
                 ta,
                 tb,
                 13,
                 11,
                 9,
                 0,
                 1,
                 0,
                 0,
                 KMUX_F32,
                 KMUX_F32,
                 KMUX_COMPUTE_F32,
                 KMUX_EPILOGUE_NONE,
                 KMUX_F32,
                 1.0,
                 0.0,
                 0,
                 0,
                 1};
    return c;
}

/* ---- device ---------------------------------------------------------------------------------- */

Test(onednn, device_props) {
    TU_NEED_DEVICE(g);
    kmux_device_props p;
    TU_OK(kmux_device_props_get(g.dev, &p));
    cr_expect_str_eq(p.id, "cpu:onednn");
    cr_expect_str_eq(p.backend, "onednn");
    cr_expect(strncmp(p.library_version, "oneDNN ", 7) == 0, "library_version '%s'",
              p.library_version);
    cr_expect(strstr(p.library_version, "isa ") != NULL, "library_version '%s'", p.library_version);
    cr_expect(p.arch[0] != '\0');
    cr_expect(p.is_host);
    cr_expect(p.dtype_support[KMUX_F32] && p.dtype_support[KMUX_I8]);
    cr_expect(!p.dtype_support[KMUX_F64], "oneDNN 2.x has no f64 on CPU");
}

/* ---- GEMM: types and implementation names --------------------------------------------------- */

Test(onednn, f32_impl_name_and_info) {
    TU_NEED_DEVICE(g);
    mm_case c = f32_case(KMUX_ROW_MAJOR, KMUX_NO_TRANS, KMUX_NO_TRANS);
    kmux_plan_info info;
    char impl[128];
    TU_OK(check_matmul(&c, &info, impl, sizeof impl));
    cr_expect(strncmp(impl, "onednn:", 7) == 0 && strlen(impl) > 7, "impl '%s'", impl);
    cr_expect(strstr(impl, "+cvt") == NULL, "f32 must not be converted: '%s'", impl);
    cr_expect(strstr(impl, "ref") == NULL, "f32 GEMM fell back to oneDNN's reference: '%s'", impl);
    cr_expect_eq(info.effective_compute, KMUX_COMPUTE_F32);
    cr_expect_eq(info.impl_index, 0);
    cr_expect(info.deterministic);
}

Test(onednn, f64_unsupported) {
    TU_NEED_DEVICE(g);
    kmux_matmul_desc d = KMUX_MATMUL_DESC_INIT;
    d.m = d.n = d.k = 4;
    d.lda = d.ldb = d.ldc = 4;
    d.a_type = d.b_type = d.c_type = KMUX_F64;
    d.compute_type = KMUX_COMPUTE_F64;
    kmux_plan *plan = NULL;
    TU_STATUS(KMUX_ERR_UNSUPPORTED, kmux_matmul_plan_create(g.dev, &d, NULL, &plan));
    cr_expect(strstr(kmux_last_error(), "f64") != NULL, "message: %s", kmux_last_error());
    cr_expect(strstr(kmux_last_error(), "onednn") != NULL, "message: %s", kmux_last_error());
}

/* f16/bf16: "+cvt" (f32 on converted inputs) only when emulation is allowed; without it the
 * plan is native or UNSUPPORTED with a reason. Results exact either way. */
static void narrow_rule(kmux_dtype t, kmux_dtype ct) {
    mm_case c = f32_case(KMUX_ROW_MAJOR, KMUX_NO_TRANS, KMUX_TRANS);
    c.at = t;
    c.ct = ct;
    c.beta = 1.0;
    char with[128] = "", without[128] = "";
    kmux_plan_info info;
    TU_OK(check_matmul(&c, &info, with, sizeof with));
    cr_expect_eq(info.effective_compute, KMUX_COMPUTE_F32);
    c.allow_emulation = 0;
    kmux_status s = check_matmul(&c, NULL, without, sizeof without);
    if (s == KMUX_OK) {
        cr_expect(strstr(without, "+cvt") == NULL, "%s: '+cvt' without allow_emulation: '%s'",
                  kmux_dtype_name(t), without);
    } else {
        TU_STATUS(KMUX_ERR_UNSUPPORTED, s);
        cr_expect(strstr(kmux_last_error(), "allow_emulation") != NULL, "message: %s",
                  kmux_last_error());
        cr_expect(strstr(with, "+cvt") != NULL, "%s: no native kernel, but '%s' is not +cvt",
                  kmux_dtype_name(t), with);
    }
}

Test(onednn, bf16_native_or_cvt) {
    TU_NEED_DEVICE(g);
    narrow_rule(KMUX_BF16, KMUX_BF16);
    narrow_rule(KMUX_BF16, KMUX_F32);
}

Test(onednn, f16_native_or_cvt) {
    TU_NEED_DEVICE(g);
    narrow_rule(KMUX_F16, KMUX_F16);
    narrow_rule(KMUX_F16, KMUX_F32);
}

Test(onednn, fp8_cvt_with_scales_and_amax) {
    TU_NEED_DEVICE(g);
    static const kmux_dtype cts[] = {KMUX_F32, KMUX_BF16, KMUX_F16};
    for (int i = 0; i < 3; i++) {
        mm_case c = f32_case(KMUX_COL_MAJOR, KMUX_TRANS, KMUX_NO_TRANS);
        c.at = KMUX_F8_E4M3;
        c.ct = cts[i];
        c.beta = 1.0;
        c.scales = 1;
        char impl[128];
        TU_OK(check_matmul(&c, NULL, impl, sizeof impl));
        cr_expect(strstr(impl, "+cvt") != NULL, "fp8 runs converted: '%s'", impl);
        c.allow_emulation = 0;
        TU_STATUS(KMUX_ERR_UNSUPPORTED, check_matmul(&c, NULL, impl, sizeof impl));
    }
}

/* The FAST compute types allow TF32 / bf16x3; oneDNN 2.x offers neither, so the plan must say
 * what it really does. Data with 20 significant bits tell TF32 or bf16 rounding apart. */
Test(onednn, fast_compute_types_not_silently_lowered) {
    TU_NEED_DEVICE(g);
    static const kmux_compute_type fast[] = {KMUX_COMPUTE_F32_FAST_TF32,
                                             KMUX_COMPUTE_F32_FAST_BF16};
    const int64_t n = 16;
    float A[16 * 16], B[16 * 16], C[16 * 16];
    for (int i = 0; i < n * n; i++) {
        A[i] = 1.0f + (float)((i % 7) + 1) * 0x1p-20f;
        B[i] = (i % 17 == 0) ? 1.0f : 0.0f;
    }
    for (int f = 0; f < 2; f++) {
        kmux_matmul_desc d = KMUX_MATMUL_DESC_INIT;
        d.m = d.n = d.k = n;
        d.lda = d.ldb = d.ldc = n;
        d.compute_type = fast[f];
        float one = 1.0f, zero = 0.0f;
        kmux_matmul_args a = KMUX_MATMUL_ARGS_INIT;
        a.alpha = &one;
        a.beta = &zero;
        a.A = A;
        a.B = B;
        a.C = C;
        kmux_plan_info info;
        char impl[128];
        TU_OK(tu_run_matmul(g.dev, &d, NULL, &a, 0, impl, sizeof impl, &info));
        if (info.effective_compute == KMUX_COMPUTE_F32) {
            /* strict f32: every C[i][j] = sum of A[i][l] B[l][j], exact here */
            for (int64_t i = 0; i < n; i++)
                for (int64_t j = 0; j < n; j++) {
                    double want = 0.0;
                    for (int64_t l = 0; l < n; l++)
                        want += (double)A[i * n + l] * (double)B[l * n + j];
                    cr_assert_eq(C[i * n + j], (float)want,
                                 "%s reported effective f32 but C[%lld][%lld] = %.9g, want %.9g",
                                 kmux_compute_type_name(fast[f]), (long long)i, (long long)j,
                                 C[i * n + j], want);
                }
        } else {
            cr_expect_eq(info.effective_compute, fast[f], "effective compute %s for %s",
                         kmux_compute_type_name(info.effective_compute),
                         kmux_compute_type_name(fast[f]));
            cr_expect(strstr(impl, fast[f] == KMUX_COMPUTE_F32_FAST_TF32 ? "tf32" : "bf16"),
                      "a lowered plan must say so in its name: '%s'", impl);
        }
    }
}

/* ---- GEMM: integer -----------------------------------------------------------------------------
 */

/* Values up to 100 in magnitude: with k = 67 every column sum of |B| is far below the bound of
 * oneDNN's own s8 x s8 kernel (onednn_matmul.h), with k = 2048 far above it (the u8 copy and the
 * compensation pass run), so both paths meet every alpha/beta, order, padding and batch. */
Test(onednn, i8_exact_vs_ref) {
    TU_NEED_DEVICE(g);
    static const double ab[][2] = {{1, 0}, {2, -1}, {1, 1}, {-3, 2}, {0, 3}};
    static const int64_t ks[] = {67, 2048};
    for (int i = 0; i < 5; i++)
        for (int o = 0; o < 2; o++)
            for (int kk = 0; kk < 2; kk++) {
                mm_case c = f32_case(o ? KMUX_COL_MAJOR : KMUX_ROW_MAJOR, KMUX_NO_TRANS,
                                     o ? KMUX_TRANS : KMUX_NO_TRANS);
                c.at = KMUX_I8;
                c.ct = KMUX_I32;
                c.ct_compute = KMUX_COMPUTE_I32;
                c.k = ks[kk];
                c.pad = o;
                c.batch = i % 2 ? 3 : 1;
                c.bcast_b = i == 3;
                c.alpha = ab[i][0];
                c.beta = ab[i][1];
                char impl[128];
                TU_OK(check_matmul(&c, NULL, impl, sizeof impl));
                cr_expect(strstr(impl, "+cvt") == NULL, "i8 must run natively: '%s'", impl);
            }
}

/* The shapes that crashed oneDNN 2.6's AMX int8 brgemm with SIGILL (K not a multiple of 4;
 * onednn_matmul.c: kernels_to_avoid) run on another kernel and match ref; none of the plan's
 * first three implementations is an AMX one. On a CPU without AMX they only check results. */
Test(onednn, i8_amx_k_tail_shapes_run_on_another_kernel) {
    TU_NEED_DEVICE(g);
    static const int64_t shapes[][3] = {{33, 127, 1}, {33, 127, 17}, {65, 126, 1}, {130, 125, 1}};
    for (int i = 0; i < 4; i++)
        for (int step = 0; step < 3; step++) {
            mm_case c = f32_case(KMUX_ROW_MAJOR, KMUX_NO_TRANS, i % 2 ? KMUX_TRANS : KMUX_NO_TRANS);
            c.at = KMUX_I8, c.ct = KMUX_I32, c.ct_compute = KMUX_COMPUTE_I32;
            c.m = shapes[i][0], c.k = shapes[i][1], c.n = shapes[i][2];
            c.alpha = 1, c.beta = 0;
            kmux_matmul_desc d;
            int64_t na, nb, nc;
            mm_desc(&c, &d, &na, &nb, &nc);
            kmux_plan *plan = NULL;
            TU_OK(kmux_matmul_plan_create(g.dev, &d, NULL, &plan));
            int ok = 1;
            for (int k = 0; k < step && ok; k++)
                ok = kmux_plan_next_impl(plan) == KMUX_OK;
            kmux_plan_info info;
            TU_OK(kmux_plan_info_get(plan, &info));
            cr_expect(!ok || strstr(info.impl, "amx") == NULL,
                      "%lldx%lldx%lld implementation %d: %s", (long long)c.m, (long long)c.k,
                      (long long)c.n, step, info.impl);
            TU_OK(kmux_plan_destroy(plan));
            if (step == 0) {
                char impl[128];
                TU_OK(check_matmul(&c, NULL, impl, sizeof impl));
            }
        }
}

/* Both sides of the bound under which oneDNN's own s8 x s8 kernel is used (255 * the largest
 * column sum of |Q| <= 2^24, onednn_matmul.h). A = 127; the columns of B sum to the bound (the s8
 * kernel runs; 255 * 65793 = 16777215) or, in the second call, one column to 132105, so that its
 * result 127 * 132105 = 16777335 is odd and above 2^24: oneDNN 2.6.3's s8 kernel returns it
 * rounded to f32 (measured: it rounds the final sum, not its intermediates, so the bound holds
 * with room to spare), and only the u8 path gets it right. B untransposed and transposed (the
 * two walks of the column sums). */
Test(onednn, i8_s8_kernel_bound) {
    TU_NEED_DEVICE(g);
    enum { M = 3, N = 4, K = 2048 };
    const int64_t at_bound = ((int64_t)1 << 24) / 255; /* 65793 */
    static int8_t A[M * K], B[K * N];
    int32_t C[M * N], R[M * N];
    for (int64_t i = 0; i < M * K; i++)
        A[i] = 127;
    for (int beyond = 0; beyond < 2; beyond++)
        for (int tb = 0; tb < 2; tb++) {
            for (int64_t j = 0; j < N; j++) {
                /* column sums: at the bound, at it, below it, and far beyond (or at it) */
                int64_t sum = j == 3 && beyond ? 132105 : at_bound - (j == 2 ? 700 : 0);
                for (int64_t l = 0; l < K; l++) {
                    int8_t v = (int8_t)(sum / K + (l < sum % K ? 1 : 0));
                    B[tb ? j * K + l : l * N + j] = v;
                }
            }
            kmux_matmul_desc d = KMUX_MATMUL_DESC_INIT;
            d.transb = tb ? KMUX_TRANS : KMUX_NO_TRANS;
            d.m = M, d.n = N, d.k = K;
            d.lda = K, d.ldb = tb ? K : N, d.ldc = N;
            d.a_type = d.b_type = KMUX_I8;
            d.c_type = KMUX_I32;
            d.compute_type = KMUX_COMPUTE_I32;
            int32_t alpha = 1, beta = 0;
            kmux_matmul_args a = KMUX_MATMUL_ARGS_INIT;
            a.alpha = &alpha, a.beta = &beta, a.A = A, a.B = B, a.C = C;
            TU_OK(tu_run_matmul(g.dev, &d, NULL, &a, 0, NULL, 0, NULL));
            a.C = R;
            TU_OK(tu_run_matmul(g.ref, &d, NULL, &a, 0, NULL, 0, NULL));
            for (int i = 0; i < M * N; i++)
                cr_assert_eq(C[i], R[i], "beyond %d, transb %d: C[%d] onednn %d, ref %d", beyond,
                             tb, i, C[i], R[i]);
        }
}

/* Sums beyond 2^24 (not exact in f32) and alpha * AB beyond 2^31 (wraps modulo 2^32, as ref). */
Test(onednn, i8_large_sums_and_wraparound) {
    TU_NEED_DEVICE(g);
    const int64_t m = 4, n = 4, k = 2048;
    int8_t *A = malloc((size_t)(m * k)), *B = malloc((size_t)(k * n));
    int32_t C[16], R[16];
    for (int64_t i = 0; i < m * k; i++)
        A[i] = (int8_t)(127 - (int)(i % 3));
    for (int64_t i = 0; i < k * n; i++)
        B[i] = (int8_t)(i % 7 == 0 ? -128 : 127 - (int)(i % 5));
    kmux_matmul_desc d = KMUX_MATMUL_DESC_INIT;
    d.m = m;
    d.n = n;
    d.k = k;
    d.lda = k;
    d.ldb = n;
    d.ldc = n;
    d.a_type = d.b_type = KMUX_I8;
    d.c_type = KMUX_I32;
    d.compute_type = KMUX_COMPUTE_I32;
    static const int32_t alphas[] = {1, 1000};
    for (int t = 0; t < 2; t++) {
        int32_t alpha = alphas[t], beta = 0;
        kmux_matmul_args a = KMUX_MATMUL_ARGS_INIT;
        a.alpha = &alpha;
        a.beta = &beta;
        a.A = A;
        a.B = B;
        a.C = C;
        TU_OK(tu_run_matmul(g.dev, &d, NULL, &a, 0, NULL, 0, NULL));
        a.C = R;
        TU_OK(tu_run_matmul(g.ref, &d, NULL, &a, 0, NULL, 0, NULL));
        int big = 0;
        for (int i = 0; i < 16; i++) {
            cr_assert_eq(C[i], R[i], "alpha %d: C[%d] onednn %d, ref %d", alpha, i, C[i], R[i]);
            big += C[i] > (1 << 24) || C[i] < -(1 << 24);
        }
        if (t == 0) cr_expect(big > 0, "the test data must give sums beyond 2^24");
    }
    free(A);
    free(B);
}

/* One i8 GEMM on cpu:onednn of a context of its own with KMUX_VERBOSE=2, exact against ref;
 * returns 1 when the call took the u8 path although the plan has oneDNN's s8 kernel (the trace
 * says so), 0 when it ran that kernel, -1 when the plan has no s8 kernel (CPUs without VNNI, or a
 * layout oneDNN runs on gemm:jit rather than brgemm, such as this column-major one here). */
static int i8_path(kmux_order o, kmux_transpose tb, int64_t m, int64_t n, int64_t k, int range) {
    kmux_matmul_desc d = KMUX_MATMUL_DESC_INIT;
    d.order = o;
    d.transb = tb;
    d.m = m, d.n = n, d.k = k;
    d.a_type = d.b_type = KMUX_I8;
    d.c_type = KMUX_I32;
    d.compute_type = KMUX_COMPUTE_I32;
    int64_t na, nb, nc;
    tu_matmul_layout(&d, 0, 0, 0, &na, &nb, &nc); /* dense: oneDNN's brgemm takes it */
    uint64_t seed = 77 + (uint64_t)(k + range);
    void *A = tu_fill_ints(KMUX_I8, na, range, TU_DENSE, &seed);
    void *B = tu_fill_ints(KMUX_I8, nb, range, TU_DENSE, &seed);
    int32_t *C = calloc((size_t)nc, sizeof(int32_t)), *R = calloc((size_t)nc, sizeof(int32_t));
    int32_t one = 1, zero = 0;
    kmux_matmul_args a = KMUX_MATMUL_ARGS_INIT;
    a.alpha = &one, a.beta = &zero, a.A = A, a.B = B, a.C = C;
    kmux_context_options opt = KMUX_CONTEXT_OPTIONS_INIT;
    opt.verbose = 2;
    kmux_context *ctx = NULL;
    kmux_device *dev = NULL;
    TU_OK(kmux_context_create(&opt, &ctx));
    TU_OK(kmux_device_find(ctx, "cpu:onednn", &dev));
    static char text[1 << 16];
    tu_capture cap;
    tu_capture_begin(&cap);
    kmux_status st = tu_run_matmul(dev, &d, NULL, &a, 0, NULL, 0, NULL);
    tu_capture_end(&cap, text, sizeof text);
    TU_OK(st);
    TU_OK(kmux_context_destroy(ctx));
    a.C = R;
    TU_OK(tu_run_matmul(g.ref, &d, NULL, &a, 0, NULL, 0, NULL));
    char what[96];
    snprintf(what, sizeof what, "i8 %s m%lld n%lld k%lld range %d",
             o == KMUX_ROW_MAJOR ? "row" : "col", (long long)m, (long long)n, (long long)k, range);
    tu_expect_equal(what, "onednn", C, R, KMUX_I32, nc, 0.0, 4);
    free(A);
    free(B);
    free(C);
    free(R);
    if (!strstr(text, "s8 x s8 kernel for bounded data: yes")) return -1;
    return strstr(text, "u8 copy and compensation") != NULL;
}

/* The path each call takes: small values (k * max|B| within the bound) run oneDNN's s8 kernel,
 * full-range values with k = 1100 the u8 copy; both exact, in both orders (the column-major one,
 * B transposed, runs on gemm:jit on the Zen 5 here: exactness only), and large enough
 * (1100 x 260 operands) for every pass to be split across oneDNN's OpenMP team. A bound planted
 * 4x too tight fails it, and so does a thread that skips its part of a pass. */
Test(onednn, i8_path_by_data) {
    TU_NEED_DEVICE(g);
    for (int o = 0; o < 2; o++)
        for (int range = 0; range < 2; range++) {
            kmux_order ord = o ? KMUX_COL_MAJOR : KMUX_ROW_MAJOR;
            int u8 = i8_path(ord, o ? KMUX_TRANS : KMUX_NO_TRANS, 300, 260, 1100, range ? 127 : 50);
            if (u8 < 0) {
                cr_log_info("order %d: no s8 kernel for this layout or CPU (gemm:jit, or no VNNI): "
                            "exactness only",
                            o);
                continue;
            }
            cr_expect_eq(u8, range, "order %d, values up to %d: %s path", o, range ? 127 : 50,
                         u8 ? "u8" : "s8");
        }
}

/* ---- GEMM: layouts, batches, epilogues ----------------------------------------------------------
 */

Test(onednn, f32_every_layout_exact) {
    TU_NEED_DEVICE(g);
    for (int o = 0; o < 2; o++)
        for (int ta = 0; ta < 2; ta++)
            for (int tb = 0; tb < 2; tb++)
                for (int pad = 0; pad < 2; pad++) {
                    mm_case c =
                        f32_case(o ? KMUX_COL_MAJOR : KMUX_ROW_MAJOR,
                                 ta ? KMUX_TRANS : KMUX_NO_TRANS, tb ? KMUX_TRANS : KMUX_NO_TRANS);
                    c.pad = pad * 3;
                    c.alpha = pad ? 2.0 : 1.0;
                    c.beta = pad ? -1.0 : 0.0;
                    TU_OK(check_matmul(&c, NULL, NULL, 0));
                }
}

Test(onednn, strided_batched_with_broadcast) {
    TU_NEED_DEVICE(g);
    for (int bc = 0; bc < 4; bc++)
        for (int o = 0; o < 2; o++) {
            mm_case c = f32_case(o ? KMUX_COL_MAJOR : KMUX_ROW_MAJOR, KMUX_TRANS, KMUX_NO_TRANS);
            c.batch = 5;
            c.bcast_a = bc & 1;
            c.bcast_b = (bc >> 1) & 1;
            c.pad = 1;
            c.beta = bc == 3 ? 0.5 : 0.0;
            TU_OK(check_matmul(&c, NULL, NULL, 0));
            c.at = KMUX_BF16; /* native or +cvt: each batch must still be right */
            c.ct = KMUX_BF16;
            TU_OK(check_matmul(&c, NULL, NULL, 0));
        }
}

/* Row-major bias is a oneDNN post-op, column-major bias is applied by the plugin: both, with
 * relu/gelu after them and f32 or bf16 outputs and bias types. */
Test(onednn, epilogues_both_orders) {
    TU_NEED_DEVICE(g);
    static const unsigned epis[] = {KMUX_EPILOGUE_BIAS, KMUX_EPILOGUE_RELU,
                                    KMUX_EPILOGUE_BIAS | KMUX_EPILOGUE_RELU,
                                    KMUX_EPILOGUE_BIAS | KMUX_EPILOGUE_GELU, KMUX_EPILOGUE_GELU};
    for (int e = 0; e < 5; e++)
        for (int o = 0; o < 2; o++)
            for (int t = 0; t < 2; t++) {
                mm_case c =
                    f32_case(o ? KMUX_COL_MAJOR : KMUX_ROW_MAJOR, KMUX_NO_TRANS, KMUX_TRANS);
                c.epilogue = epis[e];
                c.at = t ? KMUX_BF16 : KMUX_F32;
                c.ct = c.at;
                c.bias_t = t ? KMUX_BF16 : KMUX_F32;
                c.alpha = 2.0;
                c.beta = 1.0;
                c.batch = 2;
                TU_OK(check_matmul(&c, NULL, NULL, 0));
            }
}

/* One plan, more distinct (alpha, beta) pairs than it keeps primitives for, each exact. */
Test(onednn, alpha_beta_variants_on_one_plan) {
    TU_NEED_DEVICE(g);
    enum { M = 20, N = 12, K = 8 };
    kmux_matmul_desc d = KMUX_MATMUL_DESC_INIT;
    d.m = M;
    d.n = N;
    d.k = K;
    d.lda = K;
    d.ldb = N;
    d.ldc = N;
    d.epilogue = KMUX_EPILOGUE_BIAS | KMUX_EPILOGUE_RELU;
    kmux_plan *plan = NULL;
    TU_OK(kmux_matmul_plan_create(g.dev, &d, NULL, &plan));
    kmux_stream *st = NULL;
    TU_OK(kmux_stream_create(g.dev, &st));
    uint64_t seed = 3;
    float *A = tu_fill_ints(KMUX_F32, M * K, 3, TU_DENSE, &seed),
          *B = tu_fill_ints(KMUX_F32, K * N, 3, TU_ZERO_3_OF_4, &seed);
    float *C0 = tu_fill_ints(KMUX_F32, M * N, 4, TU_DENSE, &seed),
          *bias = tu_fill_ints(KMUX_F32, N, 4, TU_DENSE, &seed);
    float C[M * N], R[M * N];
    for (int i = 0; i < 12; i++) {
        float alpha = (float)(1 + i % 4), beta = (float)(i / 4) - 1.0f;
        kmux_matmul_args a = KMUX_MATMUL_ARGS_INIT;
        a.alpha = &alpha;
        a.beta = &beta;
        a.A = A;
        a.B = B;
        a.bias = bias;
        memcpy(R, C0, sizeof R);
        a.C = R;
        TU_OK(tu_run_matmul(g.ref, &d, NULL, &a, 0, NULL, 0, NULL));
        memcpy(C, C0, sizeof C);
        a.C = C;
        TU_OK(kmux_matmul_execute(plan, st, &a));
        char what[64];
        snprintf(what, sizeof what, "alpha %g beta %g", alpha, beta);
        tu_expect_equal(what, "onednn", C, R, KMUX_F32, M * N, 0.0, 4);
    }
    TU_OK(kmux_stream_destroy(st));
    TU_OK(kmux_plan_destroy(plan));
    free(A);
    free(B);
    free(C0);
    free(bias);
}

/* beta == 0: C is not read (NaN must not survive); k == 0 and alpha == 0: C = beta * C without
 * reading A or B (NULL). */
Test(onednn, blas_degenerate_cases) {
    TU_NEED_DEVICE(g);
    mm_case c = f32_case(KMUX_ROW_MAJOR, KMUX_NO_TRANS, KMUX_NO_TRANS);
    c.nan_c = 1;
    TU_OK(check_matmul(&c, NULL, NULL, 0));
    c.ct = c.at = KMUX_BF16;
    TU_OK(check_matmul(&c, NULL, NULL, 0));

    float C[12], R[12];
    for (int i = 0; i < 12; i++)
        C[i] = R[i] = (float)(i - 5);
    kmux_matmul_desc d = KMUX_MATMUL_DESC_INIT;
    d.m = 3;
    d.n = 4;
    d.k = 0;
    d.lda = 1;
    d.ldb = 4;
    d.ldc = 4;
    d.epilogue = KMUX_EPILOGUE_BIAS;
    float bias[4] = {1, 2, 3, 4}, alpha = 1.0f, beta = 3.0f;
    kmux_matmul_args a = KMUX_MATMUL_ARGS_INIT;
    a.alpha = &alpha;
    a.beta = &beta;
    a.C = C;
    a.bias = bias;
    TU_OK(tu_run_matmul(g.dev, &d, NULL, &a, 0, NULL, 0, NULL));
    for (int i = 0; i < 12; i++)
        cr_assert_eq(C[i], 3.0f * R[i] + bias[i % 4], "k == 0: C[%d] = %g", i, C[i]);
    d.k = 5;
    d.lda = 5;
    alpha = 0.0f;
    beta = 0.0f;
    for (int i = 0; i < 12; i++)
        C[i] = NAN;
    TU_OK(tu_run_matmul(g.dev, &d, NULL, &a, 0, NULL, 0, NULL));
    for (int i = 0; i < 12; i++)
        cr_assert_eq(C[i], bias[i % 4], "alpha == beta == 0: C[%d] = %g", i, C[i]);
}

/* Walks every implementation of a plan; each must give the exact result. A bf16 plan that
 * allows emulation lists the "+cvt" path and, where oneDNN has one, the native kernel. */
static void walk_impls(kmux_dtype t) {
    enum { M = 32, N = 24, K = 16 };
    kmux_matmul_desc d = KMUX_MATMUL_DESC_INIT;
    d.m = M;
    d.n = N;
    d.k = K;
    d.lda = K;
    d.ldb = N;
    d.ldc = N;
    d.a_type = d.b_type = d.c_type = t;
    kmux_plan *plan = NULL;
    TU_OK(kmux_matmul_plan_create(g.dev, &d, NULL, &plan));
    uint64_t seed = 7;
    void *A = tu_fill_ints(t, M * K, 3, TU_DENSE, &seed),
         *B = tu_fill_ints(t, K * N, 3, TU_ZERO_3_OF_4, &seed);
    size_t cb = (size_t)(M * N) * kmux_dtype_size(t);
    void *C = malloc(cb), *R = malloc(cb);
    float one = 1.0f, zero = 0.0f;
    kmux_matmul_args a = KMUX_MATMUL_ARGS_INIT;
    a.alpha = &one;
    a.beta = &zero;
    a.A = A;
    a.B = B;
    a.C = R;
    TU_OK(tu_run_matmul(g.ref, &d, NULL, &a, 0, NULL, 0, NULL));
    a.C = C;
    kmux_stream *st = NULL;
    TU_OK(kmux_stream_create(g.dev, &st));
    int walked = 0, saw_cvt = 0, saw_native = 0;
    for (;;) {
        kmux_plan_info info;
        TU_OK(kmux_plan_info_get(plan, &info));
        cr_expect_eq(info.impl_index, walked);
        int cvt = strstr(info.impl, "+cvt") != NULL;
        saw_cvt |= cvt;
        saw_native |= !cvt;
        memset(C, 0xff, cb);
        TU_OK(kmux_matmul_execute(plan, st, &a));
        tu_expect_equal(info.impl, "onednn", C, R, t, M * N, 0.0, 4);
        walked++;
        kmux_status s = kmux_plan_next_impl(plan);
        if (s == KMUX_ERR_LAST_IMPL) break;
        TU_OK(s);
        cr_assert(walked < 16, "plan_next_impl never ends");
    }
    if (t != KMUX_F32) { /* emulation is allowed: "+cvt" and any native kernel are listed */
        kmux_plan_prefs strict = KMUX_PLAN_PREFS_INIT;
        strict.allow_emulation = 0;
        kmux_plan *native = NULL;
        int has_native = kmux_matmul_plan_create(g.dev, &d, &strict, &native) == KMUX_OK;
        if (native) TU_OK(kmux_plan_destroy(native));
        cr_expect(saw_cvt, "%s: no \"+cvt\" implementation listed", kmux_dtype_name(t));
        if (has_native)
            cr_expect(saw_native, "%s: the native kernel is not listed", kmux_dtype_name(t));
    }
    TU_OK(kmux_stream_destroy(st));
    TU_OK(kmux_plan_destroy(plan));
    free(A);
    free(B);
    free(C);
    free(R);
}

Test(onednn, next_impl_walk) {
    TU_NEED_DEVICE(g);
    walk_impls(KMUX_F32);
    walk_impls(KMUX_BF16);
}

/* ---- concurrency ---------------------------------------------------------------------------- */

#define CONC_THREADS 4
#define CONC_N 48

typedef struct conc_job {
    kmux_plan *plan;
    float A[CONC_N * CONC_N], B[CONC_N * CONC_N], C[CONC_N * CONC_N], R[CONC_N * CONC_N];
    int bad;
    kmux_status status;
} conc_job;

static void *conc_worker(void *arg) {
    conc_job *j = arg;
    kmux_stream *st = NULL;
    j->status = kmux_stream_create(g.dev, &st);
    float one = 1.0f, zero = 0.0f;
    kmux_matmul_args a = KMUX_MATMUL_ARGS_INIT;
    a.alpha = &one;
    a.beta = &zero;
    a.A = j->A;
    a.B = j->B;
    a.C = j->C;
    for (int it = 0; it < 40 && j->status == KMUX_OK; it++) {
        memset(j->C, 0xff, sizeof j->C);
        j->status = kmux_matmul_execute(j->plan, st, &a);
        if (memcmp(j->C, j->R, sizeof j->C) != 0) j->bad++;
    }
    kmux_stream_destroy(st);
    return NULL;
}

Test(onednn, concurrent_executes_one_plan) {
    TU_NEED_DEVICE(g);
    kmux_matmul_desc d = KMUX_MATMUL_DESC_INIT;
    d.m = d.n = d.k = CONC_N;
    d.lda = d.ldb = d.ldc = CONC_N;
    d.transb = KMUX_TRANS; /* a scratchpad-using brgemm kernel */
    kmux_plan *plan = NULL;
    TU_OK(kmux_matmul_plan_create(g.dev, &d, NULL, &plan));
    static conc_job jobs[CONC_THREADS];
    uint64_t seed = 99;
    float one = 1.0f, zero = 0.0f;
    for (int t = 0; t < CONC_THREADS; t++) {
        conc_job *j = &jobs[t];
        memset(j, 0, sizeof *j);
        j->plan = plan;
        for (int i = 0; i < CONC_N * CONC_N; i++) {
            j->A[i] = (float)((int)(tu_rand_u64(&seed) % 7) - 3);
            j->B[i] = (tu_rand_u64(&seed) % 3 == 0) ? (float)(t + 1) : 0.0f;
        }
        kmux_matmul_args a = KMUX_MATMUL_ARGS_INIT;
        a.alpha = &one;
        a.beta = &zero;
        a.A = j->A;
        a.B = j->B;
        a.C = j->R;
        TU_OK(tu_run_matmul(g.ref, &d, NULL, &a, 0, NULL, 0, NULL));
    }
    pthread_t th[CONC_THREADS];
    for (int t = 0; t < CONC_THREADS; t++)
        cr_assert_eq(pthread_create(&th[t], NULL, conc_worker, &jobs[t]), 0);
    for (int t = 0; t < CONC_THREADS; t++)
        pthread_join(th[t], NULL);
    for (int t = 0; t < CONC_THREADS; t++) {
        cr_expect_eq(jobs[t].status, KMUX_OK, "thread %d: %s", t, kmux_status_str(jobs[t].status));
        cr_expect_eq(jobs[t].bad, 0, "thread %d: %d of 40 results wrong", t, jobs[t].bad);
    }
    TU_OK(kmux_plan_destroy(plan));
}

/* ---- convolution ------------------------------------------------------------------------------
 */

typedef struct conv_case {
    kmux_conv_direction dir;
    kmux_layout layout;
    tu_conv_geom g;
    kmux_dtype type;
    double alpha, beta;
} conv_case;

static void check_conv(const conv_case *c) {
    const kmux_conv2d_desc d = tu_conv_desc(&c->g, c->dir, c->layout, c->type);
    int64_t nx, nw, ny;
    tu_conv_elems(&d, &nx, &nw, &ny);
    uint64_t seed = 0xc0 + (uint64_t)(c->dir * 7 + c->layout * 3 + c->g.groups);
    void *x = tu_fill_ints(c->type, nx, 2,
                           (c->dir == KMUX_CONV_BWD_WEIGHTS) ? TU_ZERO_3_OF_4 : TU_DENSE, &seed);
    void *w =
        tu_fill_ints(c->type, nw, 2, (c->dir == KMUX_CONV_FWD) ? TU_ZERO_3_OF_4 : TU_DENSE, &seed);
    void *y =
        tu_fill_ints(c->type, ny, 2, (c->dir != KMUX_CONV_FWD) ? TU_ZERO_3_OF_4 : TU_DENSE, &seed);
    size_t es = kmux_dtype_size(c->type);
    void *out = c->dir == KMUX_CONV_FWD ? y : c->dir == KMUX_CONV_BWD_DATA ? x : w;
    int64_t nout = c->dir == KMUX_CONV_FWD ? ny : c->dir == KMUX_CONV_BWD_DATA ? nx : nw;
    void *ref_out = tu_dup(out, (size_t)nout * es);
    float alpha = (float)c->alpha, beta = (float)c->beta;
    kmux_conv2d_args a = KMUX_CONV2D_ARGS_INIT;
    a.alpha = &alpha;
    a.beta = &beta;
    a.x = x;
    a.w = w;
    a.y = y;
    /* ref first, on a copy of the output */
    void *save = tu_dup(out, (size_t)nout * es);
    TU_OK(tu_run_conv(g.ref, &d, NULL, &a, 0, NULL, 0));
    memcpy(ref_out, out, (size_t)nout * es);
    memcpy(out, save, (size_t)nout * es);
    char impl[128];
    TU_OK(tu_run_conv(g.dev, &d, NULL, &a, 0, impl, sizeof impl));
    cr_expect(strncmp(impl, "onednn:", 7) == 0, "impl '%s'", impl);
    char what[200];
    snprintf(what, sizeof what, "conv dir%d %s g%lld %s (%s)", c->dir,
             c->layout == KMUX_NCHW ? "NCHW" : "NHWC", (long long)c->g.groups,
             kmux_dtype_name(c->type), impl);
    tu_expect_equal(what, "onednn", out, ref_out, c->type, nout, 0.0, 4);
    free(x);
    free(w);
    free(y);
    free(ref_out);
    free(save);
}

Test(onednn, conv_every_direction_and_layout_exact) {
    TU_NEED_DEVICE(g);
    for (int dir = 1; dir <= 3; dir++)
        for (int l = 1; l <= 2; l++) {
            /* stride 2, asymmetric padding, dilation 2 */
            conv_case c = {(kmux_conv_direction)dir,
                           (kmux_layout)l,
                           {2, 8, 9, 10, 16, 3, 3, 1, 2, 1, 1, 2, 0, 1, 2, 1},
                           KMUX_F32,
                           1.0,
                           0.0};
            check_conv(&c);
            c.g.groups = 2; /* grouped, with alpha/beta */
            c.alpha = 2.0;
            c.beta = 1.0;
            check_conv(&c);
            c.g.groups = 8; /* depthwise: C = K = groups */
            c.g.k = 8;
            c.alpha = 1.0;
            c.beta = 0.0;
            c.g.dh = c.g.dw = 1;
            check_conv(&c);
        }
}

Test(onednn, conv_narrow_types) {
    TU_NEED_DEVICE(g);
    static const kmux_dtype types[] = {KMUX_BF16, KMUX_F16};
    for (int t = 0; t < 2; t++)
        for (int dir = 1; dir <= 3; dir++) {
            conv_case c = {(kmux_conv_direction)dir,
                           KMUX_NHWC,
                           {2, 16, 7, 7, 16, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1},
                           types[t],
                           1.0,
                           0.0};
            check_conv(&c);
            c.layout = KMUX_NCHW;
            c.beta = 1.0;
            check_conv(&c);
        }
}

/* f16 convolution: native where oneDNN has a kernel, "+cvt" only with allow_emulation. */
Test(onednn, conv_emulation_rule) {
    TU_NEED_DEVICE(g);
    kmux_conv2d_desc d = KMUX_CONV2D_DESC_INIT;
    d.n = 1;
    d.c = d.k = 8;
    d.h = d.w = 6;
    d.r = d.s = 3;
    d.x_type = d.w_type = d.y_type = KMUX_F16;
    kmux_plan_prefs prefs = KMUX_PLAN_PREFS_INIT;
    kmux_plan *plan = NULL;
    TU_OK(kmux_conv2d_plan_create(g.dev, &d, &prefs, &plan));
    kmux_plan_info info;
    TU_OK(kmux_plan_info_get(plan, &info));
    int cvt = strstr(info.impl, "+cvt") != NULL;
    cr_expect_eq(info.effective_compute, KMUX_COMPUTE_F32);
    TU_OK(kmux_plan_destroy(plan));
    prefs.allow_emulation = 0;
    plan = NULL;
    kmux_status s = kmux_conv2d_plan_create(g.dev, &d, &prefs, &plan);
    if (cvt) {
        TU_STATUS(KMUX_ERR_UNSUPPORTED, s);
        cr_expect(strstr(kmux_last_error(), "allow_emulation") != NULL, "message: %s",
                  kmux_last_error());
    } else {
        TU_OK(s);
        TU_OK(kmux_plan_destroy(plan));
    }
    d.x_type = d.w_type = d.y_type = KMUX_F64;
    d.compute_type = KMUX_COMPUTE_F64;
    TU_STATUS(KMUX_ERR_UNSUPPORTED, kmux_conv2d_plan_create(g.dev, &d, NULL, &plan));
}

/* A reference kernel, or an im2col-based one (GEMM-based with a filter above 1x1 or padding). */
static int is_fallback_kernel(const char *impl, int64_t r) {
    return strstr(impl, "onednn:ref") != NULL || (r > 1 && strstr(impl, "gemm") != NULL);
}

/* Walks every implementation oneDNN offers for one convolution (16 channels, 7x7 images, r x r
 * filter, "same" padding): each gives the exact result, both layout lists are there, and the
 * default is the caller's layout unless oneDNN's first kernel for it is a reference one or an
 * im2col-based one (onednn_conv.c, layout_first). */
static void walk_conv(kmux_conv_direction dir, kmux_layout layout, int64_t r) {
    kmux_conv2d_desc d = KMUX_CONV2D_DESC_INIT;
    d.direction = dir;
    d.layout = layout;
    d.n = 2;
    d.c = 16;
    d.k = 16;
    d.h = d.w = 7;
    d.r = d.s = r;
    d.pad_top = d.pad_bottom = d.pad_left = d.pad_right = r / 2;
    int64_t nx = 2 * 16 * 49, nw = 16 * 16 * r * r;
    uint64_t seed = 11;
    float *x = tu_fill_ints(KMUX_F32, nx, 2, TU_DENSE, &seed),
          *w = tu_fill_ints(KMUX_F32, nw, 2, TU_DENSE, &seed);
    float *y = tu_fill_ints(KMUX_F32, nx, 2, TU_ZERO_3_OF_4, &seed);
    float one = 1.0f, zero = 0.0f;
    kmux_conv2d_args a = KMUX_CONV2D_ARGS_INIT;
    a.alpha = &one;
    a.beta = &zero;
    a.x = x;
    a.w = w;
    a.y = y;
    /* the tensor the direction writes: ref writes want, every implementation out */
    void **slot = dir == KMUX_CONV_FWD ? &a.y : dir == KMUX_CONV_BWD_DATA ? &a.x : &a.w;
    float *out = *slot;
    int64_t nout = dir == KMUX_CONV_BWD_WEIGHTS ? nw : nx;
    float *want = malloc((size_t)nout * 4);
    *slot = want;
    TU_OK(tu_run_conv(g.ref, &d, NULL, &a, 0, NULL, 0));
    *slot = out;
    kmux_plan *plan = NULL;
    TU_OK(kmux_conv2d_plan_create(g.dev, &d, NULL, &plan));
    kmux_stream *st = NULL;
    TU_OK(kmux_stream_create(g.dev, &st));
    int reordered = 0, plain = 0, default_reorders = 0;
    char first_plain[128] = "";
    for (int walked = 0;; walked++) {
        kmux_plan_info info;
        TU_OK(kmux_plan_info_get(plan, &info));
        cr_expect_eq(info.impl_index, walked);
        int re = strstr(info.impl, "+reorder") != NULL;
        if (walked == 0) default_reorders = re;
        if (!re && !plain++) snprintf(first_plain, sizeof first_plain, "%s", info.impl);
        reordered += re;
        memset(out, 0xff, (size_t)nout * 4);
        TU_OK(kmux_conv2d_execute(plan, st, &a));
        tu_expect_equal(info.impl, "onednn", out, want, KMUX_F32, nout, 0.0, 4);
        kmux_status s = kmux_plan_next_impl(plan);
        if (s == KMUX_ERR_LAST_IMPL) break;
        TU_OK(s);
        cr_assert(walked < 32, "plan_next_impl never ends");
    }
    /* every x86 oneDNN has a blocked (nChw8c/16c) kernel for 16 channels */
    cr_expect_gt(reordered, 0, "no +reorder implementation was listed");
    if (plain)
        cr_expect_eq(default_reorders, is_fallback_kernel(first_plain, r),
                     "default %s +reorder, the caller's layout's first kernel is %s",
                     default_reorders ? "is" : "is not", first_plain);
    else
        cr_expect(default_reorders, "no implementation on the caller's layout, yet no +reorder");
    TU_OK(kmux_stream_destroy(st));
    TU_OK(kmux_plan_destroy(plan));
    free(x);
    free(w);
    free(y);
    free(want);
}

Test(onednn, conv_next_impl_walk) {
    TU_NEED_DEVICE(g);
    walk_conv(KMUX_CONV_BWD_DATA, KMUX_NHWC, 3);
    walk_conv(KMUX_CONV_FWD, KMUX_NCHW, 1);
    walk_conv(KMUX_CONV_FWD, KMUX_NCHW, 3);
    walk_conv(KMUX_CONV_BWD_WEIGHTS, KMUX_NCHW, 3);
}

/* A context with num_threads = 1 (oneDNN's OpenMP team is sized per call): same exact result,
 * and the plan reports itself deterministic, so two runs must agree bitwise. */
Test(onednn, one_thread_context) {
    TU_NEED_DEVICE(g);
    kmux_context_options opt = KMUX_CONTEXT_OPTIONS_INIT;
    opt.num_threads = 1;
    kmux_context *ctx1 = NULL;
    TU_OK(kmux_context_create(&opt, &ctx1));
    kmux_device *dev1 = tu_device(ctx1, "cpu:onednn");
    cr_assert_not_null(dev1);
    kmux_device_props props;
    TU_OK(kmux_device_props_get(dev1, &props));
    cr_expect_eq(props.compute_units, 1);
    enum { N = 96 };
    uint64_t seed = 5;
    float *A = tu_fill_ints(KMUX_F32, N * N, 3, TU_DENSE, &seed),
          *B = tu_fill_ints(KMUX_F32, N * N, 3, TU_ZERO_3_OF_4, &seed);
    float *C1 = malloc(N * N * 4), *C2 = malloc(N * N * 4), *R = malloc(N * N * 4);
    kmux_matmul_desc d = KMUX_MATMUL_DESC_INIT;
    d.m = d.n = d.k = N;
    d.lda = d.ldb = d.ldc = N;
    float one = 1.0f, zero = 0.0f;
    kmux_matmul_args a = KMUX_MATMUL_ARGS_INIT;
    a.alpha = &one;
    a.beta = &zero;
    a.A = A;
    a.B = B;
    a.C = R;
    TU_OK(tu_run_matmul(g.ref, &d, NULL, &a, 0, NULL, 0, NULL));
    kmux_plan_info info;
    a.C = C1;
    TU_OK(tu_run_matmul(dev1, &d, NULL, &a, 0, NULL, 0, &info));
    cr_expect(info.deterministic);
    a.C = C2;
    TU_OK(tu_run_matmul(dev1, &d, NULL, &a, 0, NULL, 0, NULL));
    tu_expect_equal("1 thread vs ref", "onednn", C1, R, KMUX_F32, N * N, 0.0, 4);
    cr_expect(memcmp(C1, C2, N * N * 4) == 0, "two runs differ");
    free(A);
    free(B);
    free(C1);
    free(C2);
    free(R);
    TU_OK(kmux_context_destroy(ctx1));
}

/* oneDNN 2.6 divides by some dims in 32 bits (SIGFPE at m or k = 2^32): the plugin must answer
 * UNSUPPORTED, naming the dimension, before oneDNN sees it. */
Test(onednn, dims_beyond_32_bits_are_refused_not_crashed) {
    TU_NEED_DEVICE(g);
    kmux_matmul_desc d = KMUX_MATMUL_DESC_INIT;
    d.m = 1, d.n = 1, d.k = INT64_C(1) << 32;
    d.lda = d.k, d.ldb = 1, d.ldc = 1;
    kmux_plan *p = NULL;
    TU_STATUS(KMUX_ERR_UNSUPPORTED, kmux_matmul_plan_create(g.dev, &d, NULL, &p));
    cr_expect(strstr(kmux_last_error(), "k = 4294967296") != NULL, "%s", kmux_last_error());
    kmux_conv2d_desc c = KMUX_CONV2D_DESC_INIT;
    c.n = 1, c.c = 1, c.h = 1, c.w = INT64_C(1) << 32, c.k = 1, c.r = 1, c.s = 1;
    TU_STATUS(KMUX_ERR_UNSUPPORTED, kmux_conv2d_plan_create(g.dev, &c, NULL, &p));
    cr_expect(strstr(kmux_last_error(), "w = 4294967296") != NULL, "%s", kmux_last_error());
    c.w = 4, c.dilation_h = INT64_MAX;
    TU_STATUS(KMUX_ERR_UNSUPPORTED, kmux_conv2d_plan_create(g.dev, &c, NULL, &p));
    cr_expect(strstr(kmux_last_error(), "dilation_h") != NULL, "%s", kmux_last_error());
}

/* A workspace cap picks the first implementation that fits instead of refusing the plan. */
Test(onednn, workspace_cap_walks_to_a_fitting_implementation) {
    TU_NEED_DEVICE(g);
    kmux_matmul_desc d = KMUX_MATMUL_DESC_INIT;
    d.m = d.n = d.k = 64;
    d.lda = d.ldb = d.ldc = 64;
    kmux_plan_prefs prefs = KMUX_PLAN_PREFS_INIT;
    prefs.max_workspace_bytes = 0;
    kmux_plan *p = NULL;
    kmux_status st = kmux_matmul_plan_create(g.dev, &d, &prefs, &p);
    if (st == KMUX_OK) {
        kmux_plan_info info;
        TU_OK(kmux_plan_info_get(p, &info));
        cr_expect_eq(info.workspace_bytes, 0, "%s needs %zu bytes", info.impl,
                     info.workspace_bytes);
        TU_OK(kmux_plan_destroy(p));
    } else {
        TU_STATUS(KMUX_ERR_UNSUPPORTED, st);
        cr_expect(strstr(kmux_last_error(), "every implementation") != NULL, "%s",
                  kmux_last_error());
    }
}
