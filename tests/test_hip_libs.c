/*
 * test_hip_libs.c - AMD's libraries behind hip:0 (backends/hip/hip_blaslt.c, hip_miopen.c): which
 * implementations a plan offers and in which order, that each computes what ref computes, what
 * KMUX_HIP_IMPL keeps, and the failures (a library call failing at execution, a library too old)
 * named with the library. Against the fake HIP runtime and the computing fake hipBLASLt,
 * rocBLAS and MIOpen (tests/fake_hip: written from the ROCm API references), as ctest
 * test_hip_libs.
 */
#include <criterion/criterion.h>
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kmux.h"
#include "test_util.h"

static kmux_device *hip0(kmux_context *ctx) {
#if !KMUX_TEST_HIP_CODE_OBJECTS
    cr_skip_test("kmux-hip was built without code objects (no gfx942 toolchain at configure)");
#endif
    kmux_device *dev = NULL;
    if (kmux_device_find(ctx, "hip:0", &dev) != KMUX_OK)
        cr_assert_fail("hip:0 missing with the fake runtime: %s", kmux_last_error());
    return dev;
}

static void *dev_copy(kmux_device *dev, kmux_stream *s, const void *host, size_t bytes) {
    void *p = NULL;
    TU_OK(kmux_malloc(dev, bytes, &p));
    TU_OK(kmux_memcpy(s, p, host, bytes, KMUX_MEMCPY_HOST_TO_DEVICE));
    return p;
}

/* Row-major f32 13 x 9 x 17, bias + epilogue, small integers (exact in any order). */
enum { M = 13, N = 9, K = 17 };
static float ha[M * K], hb[K * N], hc[M * N], hbias[N];

static kmux_matmul_desc desc_f32(unsigned epilogue) {
    kmux_matmul_desc d = KMUX_MATMUL_DESC_INIT;
    d.order = KMUX_ROW_MAJOR;
    d.m = M, d.n = N, d.k = K;
    d.lda = K, d.ldb = N, d.ldc = N;
    d.epilogue = epilogue;
    d.bias_type = KMUX_F32;
    uint64_t seed = 7;
    for (int i = 0; i < M * K; i++)
        ha[i] = (float)((int)(tu_rand_u64(&seed) % 7) - 3);
    for (int i = 0; i < K * N; i++)
        hb[i] = (float)((int)(tu_rand_u64(&seed) % 7) - 3);
    for (int i = 0; i < M * N; i++)
        hc[i] = (float)((int)(tu_rand_u64(&seed) % 7) - 3);
    for (int i = 0; i < N; i++)
        hbias[i] = (float)((int)(tu_rand_u64(&seed) % 5) - 2);
    return d;
}

/* kmux_last_error() of the last run() that failed (the cleanup after it resets the error). */
static char run_error[1024];

/* Runs the plan's current implementation on dev; C (M x N) into out. */
static kmux_status run(kmux_device *dev, kmux_plan *plan, float out[M * N]) {
    kmux_stream *s = NULL;
    TU_OK(kmux_stream_create(dev, &s));
    float *a = dev_copy(dev, s, ha, sizeof ha), *b = dev_copy(dev, s, hb, sizeof hb),
          *c = dev_copy(dev, s, hc, sizeof hc), *bias = dev_copy(dev, s, hbias, sizeof hbias);
    const float alpha = 2.0f, beta = -0.5f;
    kmux_matmul_args x = KMUX_MATMUL_ARGS_INIT;
    x.alpha = &alpha, x.beta = &beta, x.A = a, x.B = b, x.C = c, x.bias = bias;
    kmux_status st = kmux_matmul_execute(plan, s, &x);
    if (st != KMUX_OK) snprintf(run_error, sizeof run_error, "%s", kmux_last_error());
    if (st == KMUX_OK) {
        TU_OK(kmux_memcpy(s, out, c, sizeof hc, KMUX_MEMCPY_DEVICE_TO_HOST));
        TU_OK(kmux_stream_synchronize(s));
    }
    TU_OK(kmux_free(dev, a));
    TU_OK(kmux_free(dev, b));
    TU_OK(kmux_free(dev, c));
    TU_OK(kmux_free(dev, bias));
    TU_OK(kmux_stream_destroy(s));
    return st;
}

/* ref's C for d on the current operands. */
static void want(kmux_context *ctx, const kmux_matmul_desc *d, float out[M * N]) {
    kmux_device *ref = NULL;
    TU_OK(kmux_device_find(ctx, "ref", &ref));
    kmux_plan *p = NULL;
    TU_OK(kmux_matmul_plan_create(ref, d, NULL, &p));
    TU_OK(run(ref, p, out));
    TU_OK(kmux_plan_destroy(p));
}

/* The plan's implementation names, in order, '|'-joined into buf. */
static int impl_names(kmux_plan *plan, char *buf, size_t size) {
    int n = 0;
    buf[0] = 0;
    do {
        kmux_plan_info info;
        TU_OK(kmux_plan_info_get(plan, &info));
        size_t len = strlen(buf);
        snprintf(buf + len, size - len, "%s%s", n ? "|" : "", info.impl);
        n++;
    } while (kmux_plan_next_impl(plan) == KMUX_OK);
    return n;
}

/* hipBLASLt's candidates lead (its fastest estimate first), rocBLAS (no epilogue: refused) is
 * left out, kmux's own kernel is last, and every one of them computes ref's bits; the workspace
 * cap of the prefs bounds the candidates hipBLASLt may return. */
Test(hip_libs, hipblaslt_candidates_lead_and_each_matches_ref) {
    kmux_context *ctx = tu_context();
    kmux_device *dev = hip0(ctx);
    kmux_matmul_desc d = desc_f32(KMUX_EPILOGUE_BIAS | KMUX_EPILOGUE_RELU);
    float w[M * N], got[M * N];
    want(ctx, &d, w);
    kmux_plan *plan = NULL;
    TU_OK(kmux_matmul_plan_create(dev, &d, NULL, &plan));
    int n = 0;
    do {
        kmux_plan_info info;
        TU_OK(kmux_plan_info_get(plan, &info));
        const char *expect[] = {"hipblaslt:algo=0,ws=0", "hipblaslt:algo=1,ws=1048576",
                                "kmux-gpu:gemm:"};
        cr_assert(n < 3, "a fourth implementation: %s", info.impl);
        cr_expect(strncmp(info.impl, expect[n], strlen(expect[n])) == 0, "impl %d: %s, want %s", n,
                  info.impl, expect[n]);
        if (n == 1) cr_expect_eq(info.workspace_bytes, (size_t)1 << 20);
        if (n < 2) cr_expect(!info.deterministic, "hipBLASLt promises no reproducibility");
        memset(got, 0xee, sizeof got);
        TU_OK(run(dev, plan, got));
        cr_expect(memcmp(got, w, sizeof w) == 0, "%s: not ref's result", info.impl);
        n++;
    } while (kmux_plan_next_impl(plan) == KMUX_OK);
    cr_expect_eq(n, 3);
    TU_OK(kmux_plan_destroy(plan));
    /* 64 MiB would be the third candidate: the default cap (32 MiB) and a 0-byte cap exclude
     * it, and 0 bytes the 1 MiB one too */
    kmux_plan_prefs prefs = KMUX_PLAN_PREFS_INIT;
    prefs.max_workspace_bytes = 0;
    TU_OK(kmux_matmul_plan_create(dev, &d, &prefs, &plan));
    char names[1024];
    cr_expect_eq(impl_names(plan, names, sizeof names), 2, "%s", names);
    cr_expect(strncmp(names, "hipblaslt:algo=0,ws=0|kmux-gpu:gemm:", 36) == 0, "%s", names);
    TU_OK(kmux_plan_destroy(plan));
    kmux_context_destroy(ctx);
}

/* Hook `name` of the fake library that the variable `env` names (already loaded by the plugin),
 * or NULL. */
static void *fake_hook(const char *env, const char *name) {
    const char *path = getenv(env);
    void *h = path ? dlopen(path, RTLD_NOW | RTLD_NOLOAD) : NULL;
    void *f = h ? dlsym(h, name) : NULL;
    if (h) dlclose(h);
    return f;
}

/* A hipblasLtMatmul that fails (the fake's hook: HIPBLAS_STATUS_EXECUTION_FAILED once) comes back
 * as KMUX_ERR_DEVICE naming hipBLASLt, the call, the candidate and the status; the same plan then
 * runs, and computes ref's result. */
Test(hip_libs, hipblaslt_failure_names_the_library_and_the_plan_runs_after) {
    kmux_context *ctx = tu_context();
    kmux_device *dev = hip0(ctx);
    kmux_matmul_desc d = desc_f32(KMUX_EPILOGUE_NONE);
    float w[M * N], got[M * N];
    want(ctx, &d, w);
    kmux_plan *plan = NULL;
    TU_OK(kmux_matmul_plan_create(dev, &d, NULL, &plan));
    void (*fail_call)(long, int) = NULL;
    int (*fired)(void) = NULL;
    *(void **)&fail_call = fake_hook("KMUX_HIPBLASLT_LIBRARY", "kmux_fake_hipblaslt_fail_call");
    *(void **)&fired = fake_hook("KMUX_HIPBLASLT_LIBRARY", "kmux_fake_hipblaslt_fail_fired");
    cr_assert(fail_call && fired, "the fake hipBLASLt (KMUX_HIPBLASLT_LIBRARY) is not loaded");
    fail_call(1, 5 /* HIPBLAS_STATUS_EXECUTION_FAILED */);
    kmux_status st = run(dev, plan, got);
    cr_expect(fired(), "the armed failure was not reached");
    fail_call(0, 0);
    cr_expect_eq(st, KMUX_ERR_DEVICE, "%s: %s", kmux_status_str(st), run_error);
    const char *e = run_error;
    cr_expect(strstr(e, "hipBLASLt 1.0.0") && strstr(e, "hipblasLtMatmul") &&
                  strstr(e, "hipblaslt:algo=0") &&
                  strstr(e, "HIPBLAS_STATUS_EXECUTION_FAILED (5)") && strstr(e, "hip:0"),
              "the message names neither the library, the call, the candidate nor the status: %s",
              e);
    memset(got, 0xee, sizeof got);
    TU_OK(run(dev, plan, got));
    cr_expect(memcmp(got, w, sizeof w) == 0, "the plan after the failure: not ref's result");
    TU_OK(kmux_plan_destroy(plan));
    kmux_context_destroy(ctx);
}

/* KMUX_HIP_IMPL keeps the named libraries' implementations: what they cannot run is refused with
 * each one's reason; a word of convolution's libraries leaves GEMM as it is; an unknown word is
 * an invalid argument naming it. */
Test(hip_libs, hip_impl_keeps_only_the_named_libraries) {
    kmux_context *ctx = tu_context();
    kmux_device *dev = hip0(ctx);
    kmux_matmul_desc d = desc_f32(KMUX_EPILOGUE_NONE);
    kmux_plan *plan = NULL;
    char names[1024];
    static const struct {
        const char *env, *want;
    } cases[] = {
        {"hipblaslt", "hipblaslt:algo=0,ws=0|hipblaslt:algo=1,ws=1048576"},
        {"rocblas", "rocblas_gemm_ex"},
        {"own", "kmux-gpu:gemm:"},
        {"rocblas,own", "rocblas_gemm_ex|kmux-gpu:gemm:"},
        {",own,", "kmux-gpu:gemm:"},
        {"miopen", "hipblaslt:algo=0,ws=0|hipblaslt:algo=1,ws=1048576|rocblas_gemm_ex|kmux-gpu"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        setenv("KMUX_HIP_IMPL", cases[i].env, 1);
        TU_OK(kmux_matmul_plan_create(dev, &d, NULL, &plan));
        impl_names(plan, names, sizeof names);
        cr_expect(strncmp(names, cases[i].want, strlen(cases[i].want)) == 0, "%s: %s", cases[i].env,
                  names);
        TU_OK(kmux_plan_destroy(plan));
    }
    setenv("KMUX_HIP_IMPL", "hipblaslt", 1);
    d.a_type = d.b_type = d.c_type = KMUX_F64;
    d.compute_type = KMUX_COMPUTE_F64;
    TU_STATUS(KMUX_ERR_UNSUPPORTED, kmux_matmul_plan_create(dev, &d, NULL, &plan));
    const char *e = kmux_last_error();
    cr_expect(strstr(e, "left out by KMUX_HIP_IMPL=hipblaslt") && strstr(e, "f64 is rocBLAS's"),
              "%s", e);
    setenv("KMUX_HIP_IMPL", "rocblas,cublas", 1);
    TU_STATUS(KMUX_ERR_INVALID_ARGUMENT, kmux_matmul_plan_create(dev, &d, NULL, &plan));
    cr_expect(strstr(kmux_last_error(), "KMUX_HIP_IMPL='rocblas,cublas': 'cublas'"), "%s",
              kmux_last_error());
    kmux_context_destroy(ctx);
}

/* A hipBLASLt before 0.7 (its own datatype enums) is not used: the reason carries its version. */
Test(hip_libs, hipblaslt_before_0_7_is_refused_with_its_version) {
    setenv("KMUX_FAKE_HIPBLASLT_VERSION", "600", 1);
    setenv("KMUX_HIP_IMPL", "hipblaslt", 1);
    kmux_context *ctx = tu_context();
    kmux_device *dev = hip0(ctx);
    kmux_matmul_desc d = desc_f32(KMUX_EPILOGUE_NONE);
    kmux_plan *plan = NULL;
    TU_STATUS(KMUX_ERR_UNSUPPORTED, kmux_matmul_plan_create(dev, &d, NULL, &plan));
    cr_expect(strstr(kmux_last_error(), "hipBLASLt 0.6.0 is older than 0.7"), "%s",
              kmux_last_error());
    unsetenv("KMUX_HIP_IMPL");
    TU_OK(kmux_matmul_plan_create(dev, &d, NULL, &plan));
    kmux_plan_info info;
    TU_OK(kmux_plan_info_get(plan, &info));
    cr_expect_str_eq(info.impl, "rocblas_gemm_ex");
    TU_OK(kmux_plan_destroy(plan));
    kmux_context_destroy(ctx);
}

/* fp8 goes to hipBLASLt in gfx942's FNUZ formats and the TN layout only; other layouts run on
 * kmux's own kernel, and forced to hipBLASLt they are refused with the rule. */
Test(hip_libs, hipblaslt_fp8_is_asked_in_tn_only) {
    kmux_context *ctx = tu_context();
    kmux_device *dev = hip0(ctx);
    kmux_matmul_desc d = KMUX_MATMUL_DESC_INIT;
    d.order = KMUX_COL_MAJOR;
    d.m = d.n = d.k = 16;
    d.lda = d.ldb = d.ldc = 16;
    d.a_type = d.b_type = KMUX_F8_E4M3_FNUZ;
    d.c_type = KMUX_F32;
    kmux_plan *plan = NULL;
    kmux_plan_info info;
    d.transa = KMUX_TRANS, d.transb = KMUX_NO_TRANS;
    TU_OK(kmux_matmul_plan_create(dev, &d, NULL, &plan));
    TU_OK(kmux_plan_info_get(plan, &info));
    cr_expect(strncmp(info.impl, "hipblaslt:", 10) == 0, "TN: %s", info.impl);
    TU_OK(kmux_plan_destroy(plan));
    d.transa = KMUX_NO_TRANS;
    TU_OK(kmux_matmul_plan_create(dev, &d, NULL, &plan));
    TU_OK(kmux_plan_info_get(plan, &info));
    cr_expect(strncmp(info.impl, "kmux-gpu:gemm:", 14) == 0, "NN: %s", info.impl);
    TU_OK(kmux_plan_destroy(plan));
    setenv("KMUX_HIP_IMPL", "hipblaslt", 1);
    TU_STATUS(KMUX_ERR_UNSUPPORTED, kmux_matmul_plan_create(dev, &d, NULL, &plan));
    cr_expect(strstr(kmux_last_error(), "TN layout only"), "%s", kmux_last_error());
    kmux_context_destroy(ctx);
}

/* ---- MIOpen ------------------------------------------------------------------------------ */

/* f32 convolution 2 x 4 x 6 x 6, 4 filters 3 x 3, padding 1, small integers (exact sums). */
enum { CN = 2, CC = 4, CH = 6, CW = 6, CK = 4, CR = 3 };
static float cx[CN * CC * CH * CW], cw[CK * CC * CR * CR], cy[CN * CK * CH * CW];

static kmux_conv2d_desc conv_desc(kmux_conv_direction dir, kmux_layout layout) {
    kmux_conv2d_desc d = KMUX_CONV2D_DESC_INIT;
    d.direction = dir, d.layout = layout;
    d.n = CN, d.c = CC, d.h = CH, d.w = CW, d.k = CK, d.r = d.s = CR;
    d.pad_top = d.pad_bottom = d.pad_left = d.pad_right = 1;
    uint64_t seed = 11;
    for (size_t i = 0; i < sizeof cx / sizeof cx[0]; i++)
        cx[i] = (float)((int)(tu_rand_u64(&seed) % 5) - 2);
    for (size_t i = 0; i < sizeof cw / sizeof cw[0]; i++)
        cw[i] = (float)((int)(tu_rand_u64(&seed) % 5) - 2);
    for (size_t i = 0; i < sizeof cy / sizeof cy[0]; i++)
        cy[i] = (float)((int)(tu_rand_u64(&seed) % 5) - 2);
    return d;
}

/* Runs the plan's current implementation with alpha 1 and `beta`; the written tensor into out
 * (the size of the largest). */
static kmux_status conv_run(kmux_device *dev, kmux_plan *plan, kmux_conv_direction dir, float beta,
                            float *out) {
    kmux_stream *s = NULL;
    TU_OK(kmux_stream_create(dev, &s));
    float *x = dev_copy(dev, s, cx, sizeof cx), *w = dev_copy(dev, s, cw, sizeof cw),
          *y = dev_copy(dev, s, cy, sizeof cy);
    const float one = 1.0f;
    kmux_conv2d_args a = KMUX_CONV2D_ARGS_INIT;
    a.alpha = &one, a.beta = &beta, a.x = x, a.w = w, a.y = y;
    kmux_status st = kmux_conv2d_execute(plan, s, &a);
    if (st != KMUX_OK) snprintf(run_error, sizeof run_error, "%s", kmux_last_error());
    const void *res = dir == KMUX_CONV_FWD ? (void *)y : dir == KMUX_CONV_BWD_DATA ? (void *)x : w;
    const size_t bytes = dir == KMUX_CONV_FWD        ? sizeof cy
                         : dir == KMUX_CONV_BWD_DATA ? sizeof cx
                                                     : sizeof cw;
    if (st == KMUX_OK) {
        TU_OK(kmux_memcpy(s, out, res, bytes, KMUX_MEMCPY_DEVICE_TO_HOST));
        TU_OK(kmux_stream_synchronize(s));
    }
    TU_OK(kmux_free(dev, x));
    TU_OK(kmux_free(dev, w));
    TU_OK(kmux_free(dev, y));
    TU_OK(kmux_stream_destroy(s));
    return st;
}

static size_t conv_out_bytes(kmux_conv_direction dir) {
    return dir == KMUX_CONV_FWD ? sizeof cy : dir == KMUX_CONV_BWD_DATA ? sizeof cx : sizeof cw;
}

static void conv_want(kmux_context *ctx, const kmux_conv2d_desc *d, float beta, float *out) {
    kmux_device *ref = NULL;
    TU_OK(kmux_device_find(ctx, "ref", &ref));
    kmux_plan *p = NULL;
    TU_OK(kmux_conv2d_plan_create(ref, d, NULL, &p));
    TU_OK(conv_run(ref, p, d->direction, beta, out));
    TU_OK(kmux_plan_destroy(p));
}

/* MIOpen's immediate-mode solutions lead (in its order), the own kernel is last, every one
 * computes ref's bits in each direction and layout; strict f32 leaves Winograd out, a fast f32
 * mode keeps it. */
Test(hip_libs, miopen_solutions_lead_and_each_matches_ref) {
    kmux_context *ctx = tu_context();
    kmux_device *dev = hip0(ctx);
    static float got[CN * CK * CH * CW], want_[CN * CK * CH * CW];
    static const char *const dirs[] = {"fwd", "bwd_data", "bwd_weights"};
    for (int di = 0; di < 3; di++)
        for (int li = 0; li < 2; li++)
            for (int fast = 0; fast < 2; fast++) {
                kmux_conv_direction dir = (kmux_conv_direction)(KMUX_CONV_FWD + di);
                kmux_conv2d_desc d = conv_desc(dir, li ? KMUX_NHWC : KMUX_NCHW);
                d.compute_type = fast ? KMUX_COMPUTE_F32_FAST_TF32 : KMUX_COMPUTE_F32;
                conv_want(ctx, &d, 0.0f, want_);
                kmux_plan *plan = NULL;
                TU_OK(kmux_conv2d_plan_create(dev, &d, NULL, &plan));
                char expect[3][64];
                int ne = 0;
                if (fast)
                    snprintf(expect[ne++], 64, "miopen:%s:Winograd:id=%d,", dirs[di],
                             103 + 10 * di);
                snprintf(expect[ne++], 64, "miopen:%s:GEMM:id=%d,", dirs[di], 100 + 10 * di);
                snprintf(expect[ne++], 64, "miopen:%s:Direct:id=%d,ws=0", dirs[di], 101 + 10 * di);
                int n = 0;
                do {
                    kmux_plan_info info;
                    TU_OK(kmux_plan_info_get(plan, &info));
                    if (n < ne)
                        cr_expect(strncmp(info.impl, expect[n], strlen(expect[n])) == 0,
                                  "%s %s fast=%d impl %d: %s, want %s", dirs[di],
                                  li ? "NHWC" : "NCHW", fast, n, info.impl, expect[n]);
                    else
                        cr_expect(strncmp(info.impl, "kmux-gpu:conv2d", 15) == 0, "%s", info.impl);
                    memset(got, 0xee, sizeof got);
                    TU_OK(conv_run(dev, plan, dir, 0.0f, got));
                    cr_expect(memcmp(got, want_, conv_out_bytes(dir)) == 0, "%s %s: %s: not ref's",
                              dirs[di], li ? "NHWC" : "NCHW", info.impl);
                    n++;
                } while (kmux_plan_next_impl(plan) == KMUX_OK);
                cr_expect_eq(n, ne + 1, "%s: %d implementations", dirs[di], n);
                TU_OK(kmux_plan_destroy(plan));
            }
    kmux_context_destroy(ctx);
}

/* Tuning asked of hip:0 (prefs.tune on) runs MIOpen's find step at plan creation: the plan holds
 * the measured algorithms, run by miopenConvolutionForward, and computes ref's bits. */
Test(hip_libs, miopen_find_step_when_the_plan_is_tuned) {
    setenv("KMUX_HIP_IMPL", "miopen", 1);
    char cache[] = "/tmp/kmux-tune-XXXXXX";
    int fd = mkstemp(cache);
    cr_assert(fd >= 0);
    close(fd);
    setenv("KMUX_TUNE_CACHE", cache, 1);
    kmux_context *ctx = tu_context();
    kmux_device *dev = hip0(ctx);
    kmux_conv2d_desc d = conv_desc(KMUX_CONV_FWD, KMUX_NCHW);
    static float got[CN * CK * CH * CW], want_[CN * CK * CH * CW];
    conv_want(ctx, &d, 0.0f, want_);
    kmux_plan_prefs prefs = KMUX_PLAN_PREFS_INIT;
    prefs.tune = KMUX_TUNE_ON;
    kmux_plan *plan = NULL;
    TU_OK(kmux_conv2d_plan_create(dev, &d, &prefs, &plan));
    kmux_plan_info info;
    TU_OK(kmux_plan_info_get(plan, &info));
    cr_expect(strncmp(info.impl, "miopen:find:fwd:", 16) == 0, "%s", info.impl);
    TU_OK(conv_run(dev, plan, KMUX_CONV_FWD, 0.0f, got));
    cr_expect(memcmp(got, want_, sizeof cy) == 0, "%s: not ref's", info.impl);
    TU_OK(kmux_plan_destroy(plan));
    kmux_context_destroy(ctx);
    unlink(cache);
}

/* An MIOpen call failing at execution is KMUX_ERR_DEVICE naming MIOpen, the call, the solution
 * and the status; the plan runs after it. A call with beta != 0 runs on kmux's own kernel even
 * under KMUX_HIP_IMPL=miopen (MIOpen is asked for alpha 1, beta 0 only) and computes ref's. */
Test(hip_libs, miopen_failure_names_the_library_and_beta_runs_on_the_own_kernel) {
    setenv("KMUX_HIP_IMPL", "miopen", 1);
    kmux_context *ctx = tu_context();
    kmux_device *dev = hip0(ctx);
    kmux_conv2d_desc d = conv_desc(KMUX_CONV_BWD_DATA, KMUX_NHWC);
    static float got[CN * CK * CH * CW], want_[CN * CK * CH * CW];
    kmux_plan *plan = NULL;
    TU_OK(kmux_conv2d_plan_create(dev, &d, NULL, &plan));
    void (*fail_call)(long, int) = NULL;
    int (*fired)(void) = NULL;
    *(void **)&fail_call = fake_hook("KMUX_MIOPEN_LIBRARY", "kmux_fake_miopen_fail_call");
    *(void **)&fired = fake_hook("KMUX_MIOPEN_LIBRARY", "kmux_fake_miopen_fail_fired");
    cr_assert(fail_call && fired, "the fake MIOpen (KMUX_MIOPEN_LIBRARY) is not loaded");
    fail_call(1, 5 /* miopenStatusInternalError */);
    kmux_status st = conv_run(dev, plan, KMUX_CONV_BWD_DATA, 0.0f, got);
    cr_expect(fired(), "the armed failure was not reached");
    fail_call(0, 0);
    cr_expect_eq(st, KMUX_ERR_DEVICE, "%s: %s", kmux_status_str(st), run_error);
    cr_expect(strstr(run_error, "MIOpen 3.4.0") &&
                  strstr(run_error, "miopenConvolutionBackwardDataImmediate") &&
                  strstr(run_error, "miopen:bwd_data:GEMM:id=110") &&
                  strstr(run_error, "miopenStatusInternalError (miopenStatus_t 5)"),
              "%s", run_error);
    conv_want(ctx, &d, 0.0f, want_);
    TU_OK(conv_run(dev, plan, KMUX_CONV_BWD_DATA, 0.0f, got));
    cr_expect(memcmp(got, want_, sizeof cx) == 0, "after the failure: not ref's");
    conv_want(ctx, &d, 1.0f, want_);
    TU_OK(conv_run(dev, plan, KMUX_CONV_BWD_DATA, 1.0f, got));
    cr_expect(memcmp(got, want_, sizeof cx) == 0, "beta = 1 (own kernel): not ref's");
    TU_OK(kmux_plan_destroy(plan));
    /* asymmetric padding is not asked of MIOpen: forced to it, the plan is refused with why */
    d.pad_bottom = 0;
    TU_STATUS(KMUX_ERR_UNSUPPORTED, kmux_conv2d_plan_create(dev, &d, NULL, &plan));
    cr_expect(strstr(kmux_last_error(), "MIOpen pads both sides alike"), "%s", kmux_last_error());
    /* require_deterministic: MIOpen's deterministic attribute, said by plan_info */
    d.pad_bottom = 1;
    kmux_plan_prefs prefs = KMUX_PLAN_PREFS_INIT;
    prefs.require_deterministic = 1;
    TU_OK(kmux_conv2d_plan_create(dev, &d, &prefs, &plan));
    kmux_plan_info info;
    TU_OK(kmux_plan_info_get(plan, &info));
    cr_expect(strncmp(info.impl, "miopen:", 7) == 0 && info.deterministic, "%s det %d", info.impl,
              info.deterministic);
    TU_OK(kmux_plan_destroy(plan));
    kmux_context_destroy(ctx);
}
