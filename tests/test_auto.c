/*
 * test_auto.c - the routing device cpu:auto (dispatch/auto.c): it exists when a CPU backend does,
 * its plans run on the real devices and say which ("auto->cpu:..."), kmux_plan_next_impl walks
 * the implementations of every backend it routes to, f64 goes to OpenBLAS (oneDNN has none),
 * "auto" as a device id is the measured routing device (tuned plans), and the allow-list can
 * leave it out.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "test_util.h"

static kmux_device *auto_device(kmux_context *ctx) {
    kmux_device *dev = NULL;
    if (kmux_device_find(ctx, "cpu:auto", &dev) != KMUX_OK) return NULL;
    return dev;
}

static int has_device(kmux_context *ctx, const char *id) {
    kmux_device *d = NULL;
    return kmux_device_find(ctx, id, &d) == KMUX_OK;
}

/* C = A B with small integers (exact in f32 and f64), checked element by element. */
static void check_gemm(kmux_context *ctx, kmux_device *dev, kmux_dtype t, const char *want_prefix,
                       int walk) {
    enum { M = 7, N = 5, K = 9 };
    kmux_matmul_desc d = KMUX_MATMUL_DESC_INIT;
    d.m = M, d.n = N, d.k = K, d.lda = K, d.ldb = N, d.ldc = N;
    d.a_type = d.b_type = d.c_type = t;
    d.compute_type = t == KMUX_F64 ? KMUX_COMPUTE_F64 : KMUX_COMPUTE_F32;
    kmux_plan_prefs p = KMUX_PLAN_PREFS_INIT;
    p.tune = KMUX_TUNE_OFF;
    kmux_plan *plan = NULL;
    TU_OK(kmux_matmul_plan_create(dev, &d, &p, &plan));
    double A[M * K], B[K * N], C[M * N];
    float Af[M * K], Bf[K * N], Cf[M * N];
    for (int i = 0; i < M * K; i++)
        A[i] = Af[i] = (float)(i % 5 - 2);
    for (int i = 0; i < K * N; i++)
        B[i] = Bf[i] = (float)(i % 4 - 1);
    kmux_stream *st = NULL;
    TU_OK(kmux_stream_create(dev, &st));
    int seen_openblas = 0, seen_onednn = 0, impls = 0;
    do {
        kmux_plan_info info;
        TU_OK(kmux_plan_info_get(plan, &info));
        cr_expect_str_eq(info.device, "cpu:auto");
        cr_expect(strncmp(info.impl, "auto->cpu:", 10) == 0, "impl '%s'", info.impl);
        if (impls == 0)
            cr_expect(strncmp(info.impl, want_prefix, strlen(want_prefix)) == 0,
                      "first implementation '%s', want %s...", info.impl, want_prefix);
        seen_openblas |= strncmp(info.impl, "auto->cpu:openblas:", 19) == 0;
        seen_onednn |= strncmp(info.impl, "auto->cpu:onednn:", 17) == 0;
        impls++;
        double one = 1.0, zero = 0.0;
        float onef = 1.0f, zerof = 0.0f;
        kmux_matmul_args a = KMUX_MATMUL_ARGS_INIT;
        if (t == KMUX_F64)
            a.alpha = &one, a.beta = &zero, a.A = A, a.B = B, a.C = C;
        else
            a.alpha = &onef, a.beta = &zerof, a.A = Af, a.B = Bf, a.C = Cf;
        memset(C, 0x7f, sizeof C);
        memset(Cf, 0x7f, sizeof Cf);
        TU_OK(kmux_matmul_execute(plan, st, &a));
        for (int i = 0; i < M; i++)
            for (int j = 0; j < N; j++) {
                double s = 0;
                for (int l = 0; l < K; l++)
                    s += A[i * K + l] * B[l * N + j];
                double got = t == KMUX_F64 ? C[i * N + j] : Cf[i * N + j];
                cr_expect_eq(got, s, "%s: C[%d][%d] = %g, want %g", info.impl, i, j, got, s);
            }
    } while (walk && kmux_plan_next_impl(plan) == KMUX_OK);
    if (walk && has_device(ctx, "cpu:openblas"))
        cr_expect(seen_openblas, "walking never reached cpu:openblas");
    if (walk && has_device(ctx, "cpu:onednn"))
        cr_expect(seen_onednn, "walking never reached cpu:onednn");
    TU_OK(kmux_stream_destroy(st));
    TU_OK(kmux_plan_destroy(plan));
}

Test(auto_device, routes_f32_to_onednn_first_and_walks_every_backend) {
    kmux_context *ctx = tu_context();
    kmux_device *dev = auto_device(ctx);
    int cpu = has_device(ctx, "cpu:onednn") || has_device(ctx, "cpu:openblas");
    cr_expect_eq(dev != NULL, cpu, "cpu:auto exists exactly when a CPU backend does");
    if (dev)
        check_gemm(ctx, dev, KMUX_F32,
                   has_device(ctx, "cpu:onednn") ? "auto->cpu:onednn:" : "auto->cpu:openblas:", 1);
    TU_OK(kmux_context_destroy(ctx));
}

Test(auto_device, f64_goes_to_openblas) {
    kmux_context *ctx = tu_context();
    kmux_device *dev = auto_device(ctx);
    if (!dev || !has_device(ctx, "cpu:openblas")) {
        TU_OK(kmux_context_destroy(ctx));
        cr_skip_test("cpu:auto with cpu:openblas is not available");
    }
    check_gemm(ctx, dev, KMUX_F64, "auto->cpu:openblas:dgemm", 0);
    TU_OK(kmux_context_destroy(ctx));
}

/* One f32 GEMM plan of a new shape on dev (prefs default: KMUX_TUNE decides), destroyed again;
 * the implementation it starts at in *impl. */
static void plan_once(kmux_device *dev, int64_t m, char *impl, size_t size) {
    kmux_matmul_desc d = KMUX_MATMUL_DESC_INIT;
    d.m = m, d.n = 48, d.k = 64, d.lda = 64, d.ldb = 48, d.ldc = 48;
    kmux_plan *plan = NULL;
    TU_OK(kmux_matmul_plan_create(dev, &d, NULL, &plan));
    kmux_plan_info info;
    TU_OK(kmux_plan_info_get(plan, &info));
    snprintf(impl, size, "%s", info.impl);
    TU_OK(kmux_plan_destroy(plan));
}

/* "auto" asks for the measured choice (issue 34): on a host without a GPU it is the routing
 * device cpu:auto under the id "auto", not one more device in the list, and its plans are tuned
 * unless KMUX_TUNE says otherwise (the verdict lands in the cache); the same plan on cpu:auto
 * keeps its default order (explicit ids keep theirs). */
Test(auto_device, auto_id_is_the_measured_routing_device) {
    char cache[] = "/tmp/kmux-auto-tune-XXXXXX";
    int fd = mkstemp(cache);
    cr_assert_geq(fd, 0);
    close(fd);
    setenv("KMUX_TUNE_CACHE", cache, 1);
    unsetenv("KMUX_TUNE");
    unsetenv("KMUX_DEVICE");
    kmux_context *ctx = tu_context();
    kmux_device *routing = auto_device(ctx), *dev = NULL, *gpu = NULL;
    int n = 0;
    TU_OK(kmux_device_count(ctx, &n));
    for (int i = 0; i < n; i++) {
        kmux_device *d = NULL;
        kmux_device_props p;
        TU_OK(kmux_device_get(ctx, i, &d));
        TU_OK(kmux_device_props_get(d, &p));
        cr_expect_str_neq(p.id, "auto", "device %d of the list is \"auto\"", i);
        if (!p.is_host && !gpu) gpu = d;
    }
    TU_OK(kmux_device_find(ctx, "auto", &dev));
    cr_expect_str_eq(kmux_device_id(dev), "auto");
    if (gpu || !routing) {
        TU_OK(kmux_context_destroy(ctx));
        unlink(cache);
        cr_skip_test("a GPU or no cpu:auto here: \"auto\" stands for another device");
    }
    kmux_device_props p;
    TU_OK(kmux_device_props_get(dev, &p));
    cr_expect_str_eq(p.backend, "auto");
    char impl[256];
    plan_once(routing, 65, impl, sizeof impl); /* explicit cpu:auto: not tuned */
    cr_expect_eq(tu_count_lines(cache, NULL), 0, "a plan on cpu:auto was tuned without KMUX_TUNE");
    plan_once(dev, 65, impl, sizeof impl);
    cr_expect(strncmp(impl, "auto->cpu:", 10) == 0, "impl '%s'", impl);
    cr_expect_eq(tu_count_lines(cache, NULL), 1, "a plan on \"auto\" left %d verdicts, want 1",
                 tu_count_lines(cache, NULL));
    setenv("KMUX_TUNE", "off", 1);
    plan_once(dev, 66, impl, sizeof impl); /* KMUX_TUNE=off: no measurement there either */
    cr_expect_eq(tu_count_lines(cache, NULL), 1, "KMUX_TUNE=off still tuned a plan on \"auto\"");
    unsetenv("KMUX_TUNE");
    TU_OK(kmux_context_destroy(ctx));
    unlink(cache);
}

Test(auto_device, allow_list_leaves_it_out) {
    kmux_context_options o = KMUX_CONTEXT_OPTIONS_INIT;
    o.backends = "onednn,openblas";
    kmux_context *ctx = NULL;
    TU_OK(kmux_context_create(&o, &ctx));
    cr_expect_null(auto_device(ctx));
    TU_OK(kmux_context_destroy(ctx));
}
