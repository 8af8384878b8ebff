/*
 * test_tune.c - choosing an implementation by measurement (prefs.tune, KMUX_TUNE) and the
 * verdict cache (KMUX_TUNE_CACHE): a verdict is stored and reused without timing, a cached
 * index is the one that runs, a corrupt cache is skipped with a KMUX_VERBOSE=2 line (never an
 * error), tuning off gives implementation 0. With the two-implementation test plugin
 * (tests/plugins/small_plugin.c, device "test:small") and, where present, cpu:onednn.
 */
#define _GNU_SOURCE
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "test_util.h"

static const char *plugin_dir(void) {
    const char *d = getenv("KMUX_TEST_PLUGIN_DIR");
    cr_assert(d && *d, "KMUX_TEST_PLUGIN_DIR is not set (run through ctest)");
    return d;
}

/* A fresh cache file name of this test process (Criterion runs each test in its own process). */
static char g_cache[256];

static void set_cache(void) {
    snprintf(g_cache, sizeof g_cache, "/tmp/kmux-test-tune-%ld/tune-v1.txt", (long)getpid());
    unlink(g_cache);
    setenv("KMUX_TUNE_CACHE", g_cache, 1);
    unsetenv("KMUX_TUNE");
}

static void drop_cache(void) {
    unlink(g_cache);
    char dir[256];
    snprintf(dir, sizeof dir, "%s", g_cache);
    *strrchr(dir, '/') = '\0';
    rmdir(dir);
}

static kmux_context *small_context(int verbose, kmux_device **dev) {
    kmux_context_options o = KMUX_CONTEXT_OPTIONS_INIT;
    o.backend_path = plugin_dir();
    o.verbose = verbose;
    kmux_context *ctx = NULL;
    TU_OK(kmux_context_create(&o, &ctx));
    TU_OK(kmux_device_find(ctx, "test:small", dev));
    return ctx;
}

static kmux_matmul_desc f32_desc(int64_t m, int64_t n, int64_t k) {
    kmux_matmul_desc d = KMUX_MATMUL_DESC_INIT;
    d.m = m, d.n = n, d.k = k;
    d.lda = k, d.ldb = n, d.ldc = n;
    return d;
}

/* Index the new plan starts at under tune mode `tune`. */
static int start_index(kmux_device *dev, int tune) {
    kmux_matmul_desc d = f32_desc(48, 40, 32);
    kmux_plan_prefs p = KMUX_PLAN_PREFS_INIT;
    p.tune = tune;
    kmux_plan *plan = NULL;
    TU_OK(kmux_matmul_plan_create(dev, &d, &p, &plan));
    kmux_plan_info info;
    TU_OK(kmux_plan_info_get(plan, &info));
    cr_expect_str_eq(info.impl, info.impl_index == 0 ? "small:naive" : "small:naive-reversed");
    TU_OK(kmux_plan_destroy(plan));
    return info.impl_index;
}

static void read_file(const char *path, char *buf, size_t size) {
    FILE *f = fopen(path, "r");
    cr_assert_not_null(f, "cannot open %s", path);
    size_t n = fread(buf, 1, size - 1, f);
    buf[n] = '\0';
    fclose(f);
}

/* Rewrites the only line of the cache with implementation index idx and name name. */
static void rewrite_verdict(int idx, const char *name) {
    char text[4096];
    read_file(g_cache, text, sizeof text);
    cr_assert_eq(tu_count_lines(g_cache, NULL), 1, "cache: %s", text);
    char *f[5];
    char *p = text;
    for (int i = 0; i < 5; i++) {
        f[i] = p;
        p = strpbrk(p, "\t\n");
        cr_assert_not_null(p, "cache line has %d fields: %s", i + 1, text);
        *p++ = '\0';
    }
    FILE *out = fopen(g_cache, "w");
    cr_assert_not_null(out);
    fprintf(out, "%s\t%s\t%d\t%s\t%s\n", f[0], f[1], idx, name, f[4]);
    fclose(out);
}

Test(tune, verdict_is_stored_and_reused_without_timing, .init = set_cache, .fini = drop_cache) {
    kmux_device *dev = NULL;
    kmux_context *ctx = small_context(0, &dev);
    int first = start_index(dev, KMUX_TUNE_ON);
    cr_expect_eq(tu_count_lines(g_cache, NULL), 1, "one verdict line after the first tuned plan");
    char text[4096];
    read_file(g_cache, text, sizeof text);
    cr_expect(strncmp(text, "kmux-tune-v1\t", 13) == 0, "cache: %s", text);
    cr_expect(strstr(text, "test:small") && strstr(text, "48x32:32x40"), "key: %s", text);
    /* a hit: same index, nothing appended (no second measurement) */
    cr_expect_eq(start_index(dev, KMUX_TUNE_ON), first);
    cr_expect_eq(tu_count_lines(g_cache, NULL), 1, "a cache hit must not time again");
    TU_OK(kmux_context_destroy(ctx));
}

/* The measurement itself: with one implementation ten times slower per call (the test plugin
 * sleeps), the verdict is the other one, whichever index it has. */
Test(tune, faster_implementation_wins, .init = set_cache, .fini = drop_cache) {
    kmux_device *dev = NULL;
    kmux_context *ctx = small_context(0, &dev);
    for (int slow = 0; slow < 2; slow++) {
        setenv("KMUX_TEST_SMALL_DELAY_US", slow == 0 ? "3000,300" : "300,3000", 1);
        unlink(g_cache); /* no verdict from the previous pass */
        cr_expect_eq(start_index(dev, KMUX_TUNE_ON), 1 - slow, "implementation %d sleeps 3 ms",
                     slow);
    }
    unsetenv("KMUX_TEST_SMALL_DELAY_US");
    TU_OK(kmux_context_destroy(ctx));
}

/* A warm-up round that spends the whole budget is followed by one timed round all the same:
 * implementation 1 pays 300 ms on its first call (a one-time cost) and 1 ms after, implementation
 * 0 5 ms a call; the budget of 100 ms is gone after the warm-up, where 0 looked faster. (With a
 * 20 ms budget the test failed once under ASan on a loaded 2-core machine, most likely because
 * the first call of implementation 0 alone passed the budget and implementation 1 was never
 * started.) */
Test(tune, one_timed_round_after_a_costly_warmup, .init = set_cache, .fini = drop_cache) {
    kmux_device *dev = NULL;
    kmux_context *ctx = small_context(0, &dev);
    setenv("KMUX_TEST_SMALL_DELAY_US", "5000,1000", 1);
    setenv("KMUX_TEST_SMALL_FIRST_US", "0,300000", 1);
    setenv("KMUX_TUNE_BUDGET_MS", "100", 1);
    cr_expect_eq(start_index(dev, KMUX_TUNE_ON), 1, "the one-time cost decided the verdict");
    unsetenv("KMUX_TEST_SMALL_DELAY_US");
    unsetenv("KMUX_TEST_SMALL_FIRST_US");
    unsetenv("KMUX_TUNE_BUDGET_MS");
    TU_OK(kmux_context_destroy(ctx));
}

Test(tune, cached_index_is_the_one_that_runs, .init = set_cache, .fini = drop_cache) {
    kmux_device *dev = NULL;
    kmux_context *ctx = small_context(0, &dev);
    int first = start_index(dev, KMUX_TUNE_ON);
    for (int want = 0; want < 2; want++) {
        rewrite_verdict(want, want == 0 ? "small:naive" : "small:naive-reversed");
        cr_expect_eq(start_index(dev, KMUX_TUNE_ON), want, "cached verdict %d (tuned: %d)", want,
                     first);
        cr_expect_eq(tu_count_lines(g_cache, NULL), 1);
    }
    /* the chosen implementation computes the right result */
    rewrite_verdict(1, "small:naive-reversed");
    kmux_matmul_desc d = f32_desc(4, 4, 3);
    kmux_plan_prefs p = KMUX_PLAN_PREFS_INIT;
    p.tune = KMUX_TUNE_ON;
    kmux_plan *plan = NULL;
    TU_OK(kmux_matmul_plan_create(dev, &d, &p, &plan));
    float *buf = NULL, one = 1.0f, zero = 0.0f;
    TU_OK(kmux_malloc(dev, 64 * sizeof(float), (void **)&buf));
    float *A = buf, *B = buf + 16, *C = buf + 32;
    for (int i = 0; i < 12; i++)
        A[i] = (float)(i % 5 - 2), B[i] = (float)(i % 3 + 1);
    kmux_stream *st = NULL;
    TU_OK(kmux_stream_create(dev, &st));
    kmux_matmul_args a = KMUX_MATMUL_ARGS_INIT;
    a.alpha = &one, a.beta = &zero, a.A = A, a.B = B, a.C = C;
    TU_OK(kmux_matmul_execute(plan, st, &a));
    for (int i = 0; i < 4; i++)
        for (int j = 0; j < 4; j++) {
            float s = 0.0f;
            for (int l = 0; l < 3; l++)
                s += A[i * 3 + l] * B[l * 4 + j];
            cr_expect_eq(C[i * 4 + j], s, "C[%d][%d] = %g, want %g", i, j, C[i * 4 + j], s);
        }
    TU_OK(kmux_stream_destroy(st));
    TU_OK(kmux_free(dev, buf));
    TU_OK(kmux_plan_destroy(plan));
    TU_OK(kmux_context_destroy(ctx));
}

Test(tune, stale_verdict_is_retimed, .init = set_cache, .fini = drop_cache) {
    kmux_device *dev = NULL;
    kmux_context *ctx = small_context(0, &dev);
    start_index(dev, KMUX_TUNE_ON);
    rewrite_verdict(1, "small:an-implementation-that-is-gone");
    start_index(dev, KMUX_TUNE_ON);
    cr_expect_eq(tu_count_lines(g_cache, NULL), 2,
                 "a verdict naming another implementation is retimed");
    TU_OK(kmux_context_destroy(ctx));
}

Test(tune, corrupt_cache_is_skipped_with_a_trace, .init = set_cache, .fini = drop_cache) {
    kmux_device *dev = NULL;
    kmux_context *ctx = small_context(0, &dev);
    start_index(dev, KMUX_TUNE_ON); /* creates the folder */
    FILE *f = fopen(g_cache, "w");
    cr_assert_not_null(f);
    fputs("garbage without tabs\nkmux-tune-v1\tkey\tnot-a-number\tx\t1\n", f);
    fputs("kmux-tune-v1\ttruncated", f);
    fclose(f);
    TU_OK(kmux_context_destroy(ctx));
    ctx = small_context(2, &dev);
    tu_capture cap;
    tu_capture_begin(&cap);
    int idx = start_index(dev, KMUX_TUNE_ON);
    char text[16384];
    tu_capture_end(&cap, text, sizeof text);
    cr_expect(idx == 0 || idx == 1);
    cr_expect(strstr(text, "tune-v1.txt:1: line ignored: fewer than 5 tab-separated fields"),
              "trace: %s", text);
    cr_expect(strstr(text, "tune-v1.txt:2: line ignored: implementation index is not a number"),
              "trace: %s", text);
    cr_expect(strstr(text, "tune-v1.txt:3: line ignored: no newline"), "trace: %s", text);
    cr_expect(strstr(text, "\"test:small,verdict "), "trace: %s", text);
    TU_OK(kmux_context_destroy(ctx));
}

Test(tune, off_and_default_start_at_zero, .init = set_cache, .fini = drop_cache) {
    kmux_device *dev = NULL;
    kmux_context *ctx = small_context(0, &dev);
    start_index(dev, KMUX_TUNE_ON);
    rewrite_verdict(1, "small:naive-reversed");
    cr_expect_eq(start_index(dev, KMUX_TUNE_OFF), 0);
    cr_expect_eq(start_index(dev, KMUX_TUNE_DEFAULT), 0, "KMUX_TUNE unset");
    setenv("KMUX_TUNE", "0", 1);
    cr_expect_eq(start_index(dev, KMUX_TUNE_DEFAULT), 0, "KMUX_TUNE=0");
    setenv("KMUX_TUNE", "1", 1);
    cr_expect_eq(start_index(dev, KMUX_TUNE_DEFAULT), 1, "KMUX_TUNE=1 uses the cache");
    setenv("KMUX_TUNE", "on", 1);
    cr_expect_eq(start_index(dev, KMUX_TUNE_OFF), 0, "OFF wins over KMUX_TUNE=on");
    unsetenv("KMUX_TUNE");
    TU_OK(kmux_context_destroy(ctx));
}

Test(tune, bad_tune_value_is_refused, .init = set_cache, .fini = drop_cache) {
    kmux_device *dev = NULL;
    kmux_context *ctx = small_context(0, &dev);
    kmux_matmul_desc d = f32_desc(8, 8, 8);
    kmux_plan_prefs p = KMUX_PLAN_PREFS_INIT;
    p.tune = 7;
    kmux_plan *plan = NULL;
    TU_STATUS(KMUX_ERR_INVALID_ARGUMENT, kmux_matmul_plan_create(dev, &d, &p, &plan));
    cr_expect_str_eq(kmux_last_error(),
                     "kmux_matmul_plan_create: prefs->tune = 7 must be KMUX_TUNE_DEFAULT (0), "
                     "KMUX_TUNE_OFF (1) or KMUX_TUNE_ON (2)");
    TU_OK(kmux_context_destroy(ctx));
}

/* A real backend with several implementations: the tuned plan still computes the right GEMM. */
Test(tune, onednn_bf16_tuned_plan_is_correct, .init = set_cache, .fini = drop_cache) {
    kmux_context *ctx = tu_context();
    kmux_device *dev = NULL;
    if (kmux_device_find(ctx, "cpu:onednn", &dev) != KMUX_OK) {
        TU_OK(kmux_context_destroy(ctx));
        cr_skip_test("cpu:onednn is not available");
    }
    enum { M = 40, N = 24, K = 64 };
    kmux_matmul_desc d = f32_desc(M, N, K);
    d.a_type = d.b_type = KMUX_BF16;
    kmux_plan_prefs p = KMUX_PLAN_PREFS_INIT;
    p.tune = KMUX_TUNE_ON;
    kmux_plan *plan = NULL;
    /* implementations of this plan, by walking an untuned one */
    int impls = 1;
    p.tune = KMUX_TUNE_OFF;
    TU_OK(kmux_matmul_plan_create(dev, &d, &p, &plan));
    while (kmux_plan_next_impl(plan) == KMUX_OK)
        impls++;
    TU_OK(kmux_plan_destroy(plan));
    p.tune = KMUX_TUNE_ON;
    TU_OK(kmux_matmul_plan_create(dev, &d, &p, &plan));
    cr_expect_eq(tu_count_lines(g_cache, NULL), impls > 1, "%d implementations", impls);
    uint16_t A[M * K], B[K * N];
    float C[M * N], one = 1.0f, zero = 0.0f;
    for (int i = 0; i < M * K; i++)
        A[i] = (uint16_t)(0x3f80 + (i % 7) * 0x10); /* 1 + small steps: exact in bf16 */
    for (int i = 0; i < K * N; i++)
        B[i] = (uint16_t)(i % 3 == 0 ? 0xbf80 : 0x4000); /* -1 or 2 */
    kmux_stream *st = NULL;
    TU_OK(kmux_stream_create(dev, &st));
    kmux_matmul_args a = KMUX_MATMUL_ARGS_INIT;
    a.alpha = &one, a.beta = &zero, a.A = A, a.B = B, a.C = C;
    TU_OK(kmux_matmul_execute(plan, st, &a));
    for (int i = 0; i < M; i++)
        for (int j = 0; j < N; j++) {
            double s = 0;
            for (int l = 0; l < K; l++) {
                uint32_t ab = (uint32_t)A[i * K + l] << 16, bb = (uint32_t)B[l * N + j] << 16;
                float av, bv;
                memcpy(&av, &ab, 4);
                memcpy(&bv, &bb, 4);
                s += (double)av * bv;
            }
            cr_expect_float_eq(C[i * N + j], (float)s, 1e-4 * (1 + fabs(s)), "C[%d][%d]", i, j);
        }
    TU_OK(kmux_stream_destroy(st));
    TU_OK(kmux_plan_destroy(plan));
    TU_OK(kmux_context_destroy(ctx));
}

/* A context tracing at level 2, with its cpu:auto device and cpu:openblas (skips the test when
 * cpu:auto cannot route to both CPU libraries). */
static kmux_context *auto_context(kmux_device **dev, kmux_device **ob) {
    kmux_context_options o = KMUX_CONTEXT_OPTIONS_INIT;
    o.verbose = 2;
    kmux_context *ctx = NULL;
    TU_OK(kmux_context_create(&o, &ctx));
    kmux_device *dnn = NULL;
    if (kmux_device_find(ctx, "cpu:auto", dev) != KMUX_OK ||
        kmux_device_find(ctx, "cpu:openblas", ob) != KMUX_OK ||
        kmux_device_find(ctx, "cpu:onednn", &dnn) != KMUX_OK) {
        TU_OK(kmux_context_destroy(ctx));
        cr_skip_test("cpu:auto needs both cpu:onednn and cpu:openblas");
    }
    return ctx;
}

/* A tuned plan of d on dev; the trace of its creation into text (captured in /tmp: the cache's
 * folder does not exist yet). */
static void tuned_plan_traced(kmux_device *dev, const kmux_matmul_desc *d, kmux_plan **plan,
                              char *text, size_t size) {
    kmux_plan_prefs p = KMUX_PLAN_PREFS_INIT;
    p.tune = KMUX_TUNE_ON;
    tu_capture cap;
    tu_capture_begin(&cap);
    kmux_status st = kmux_matmul_plan_create(dev, d, &p, plan);
    tu_capture_end(&cap, text, size);
    TU_OK(st);
}

/* How many implementations cpu:onednn listed for the plan (its plan trace, "..,N implementations";
 * 1 on AVX2 CPUs, 2 on AVX-512 ones for a small f32 GEMM): cpu:auto lists them first, OpenBLAS's
 * after them. */
static int onednn_impls(const char *text) {
    const char *line = strstr(text, "onednn,matmul,");
    const char *end = line ? strchr(line, '\n') : NULL;
    const char *word = line ? strstr(line, " implementations") : NULL;
    cr_assert(word && (!end || word < end), "no cpu:onednn plan trace: %s", text);
    const char *num = word;
    while (num > line && num[-1] != ',')
        num--;
    return atoi(num);
}

/* cpu:auto with OpenBLAS's pthreads server: cpu:openblas reports its workers' spin period as
 * settle_ms (kmux_device_caps), so OpenBLAS's implementations are timed first, then a pause, then
 * oneDNN's (tune.c, measure); the trace says so in that order, and the tuned plan computes the
 * right product. Whether OpenBLAS spins is read here from its displayed threading, a different
 * path from the backend's openblas_get_parallel(). */
Test(tune, auto_times_openblas_first_then_pauses, .init = set_cache, .fini = drop_cache) {
    kmux_device *dev = NULL, *ob = NULL;
    kmux_context *ctx = auto_context(&dev, &ob);
    kmux_device_props props;
    TU_OK(kmux_device_props_get(ob, &props));
    /* OpenBLAS's workers spin only with its pthreads server and more than one thread */
    const int spins = strstr(props.library_version, "pthread") != NULL && props.compute_units >= 2;
    enum { M = 24, N = 16, K = 32 };
    kmux_matmul_desc d = f32_desc(M, N, K);
    kmux_plan *plan = NULL;
    char text[65536];
    tuned_plan_traced(dev, &d, &plan, text, sizeof text);
    const int n = onednn_impls(text);
    char ob_group[64], dnn_group[64];
    snprintf(ob_group, sizeof ob_group, "implementations %d..", n);
    snprintf(dnn_group, sizeof dnn_group, "implementations 0..%d:", n - 1);
    const char *pause = strstr(text, "pause of"), *ob_first = strstr(text, ob_group);
    const char *dnn_after = strstr(text, dnn_group);
    if (spins) {
        cr_expect(pause && ob_first && dnn_after && ob_first < pause && pause < dnn_after,
                  "want OpenBLAS timed, the pause, then oneDNN: %s", text);
        const char *who = pause ? strstr(pause, "ms for cpu:openblas's workers") : NULL;
        cr_expect(who && who < dnn_after, "want the pause to name cpu:openblas: %s", text);
    } else {
        cr_expect_null(pause, "no pause without OpenBLAS's pthreads server: %s", text);
    }
    float A[M * K], B[K * N], C[M * N], one = 1.0f, zero = 0.0f;
    for (int i = 0; i < M * K; i++)
        A[i] = (float)(i % 5 - 2);
    for (int i = 0; i < K * N; i++)
        B[i] = (float)(i % 3 - 1);
    kmux_matmul_args a = KMUX_MATMUL_ARGS_INIT;
    a.alpha = &one, a.beta = &zero, a.A = A, a.B = B, a.C = C;
    kmux_stream *s = NULL;
    TU_OK(kmux_stream_create(dev, &s));
    TU_OK(kmux_matmul_execute(plan, s, &a));
    TU_OK(kmux_stream_synchronize(s));
    for (int i = 0; i < M; i++)
        for (int j = 0; j < N; j++) {
            float want = 0;
            for (int l = 0; l < K; l++)
                want += A[i * K + l] * B[l * N + j];
            cr_expect_eq(C[i * N + j], want, "C[%d][%d]", i, j);
        }
    TU_OK(kmux_stream_destroy(s));
    TU_OK(kmux_plan_destroy(plan));
    TU_OK(kmux_context_destroy(ctx));
}

/* With OPENBLAS_THREAD_TIMEOUT=4 OpenBLAS's workers sleep at once (settle_ms 0): cpu:auto times
 * oneDNN's and OpenBLAS's implementations in ONE rotation, with no pause (tune.c, measure). */
Test(tune, auto_without_spin_times_one_rotation, .init = set_cache, .fini = drop_cache) {
    setenv("OPENBLAS_THREAD_TIMEOUT", "4", 1); /* before OpenBLAS loads (context creation) */
    kmux_device *dev = NULL, *ob = NULL;
    kmux_context *ctx = auto_context(&dev, &ob);
    kmux_matmul_desc d = f32_desc(24, 16, 32);
    kmux_plan *plan = NULL;
    char text[65536];
    tuned_plan_traced(dev, &d, &plan, text, sizeof text);
    cr_expect_null(strstr(text, "pause of"), "no pause when nothing spins: %s", text);
    char both[64];
    snprintf(both, sizeof both, "implementations 0..%d:", onednn_impls(text));
    cr_expect_not_null(strstr(text, both), "want one rotation of both: %s", text);
    TU_OK(kmux_plan_destroy(plan));
    TU_OK(kmux_context_destroy(ctx));
}

/* A cache that is not a regular file (issue 50: /dev/full, /dev/zero and a FIFO hung plan
 * creation) costs only the measurement: the plan is made, nothing is read or written there. */
Test(tune, cache_that_is_not_a_regular_file_costs_only_the_measurement, .timeout = 60) {
    char dir[] = "/tmp/kmux-tune-fifo-XXXXXX";
    cr_assert_not_null(mkdtemp(dir));
    char fifo[300];
    snprintf(fifo, sizeof fifo, "%s/cache", dir);
    cr_assert_eq(mkfifo(fifo, 0600), 0);
    const char *bad[] = {"/dev/full", "/dev/zero", fifo};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        setenv("KMUX_TUNE_CACHE", bad[i], 1);
        kmux_device *dev = NULL;
        kmux_context *ctx = small_context(0, &dev);
        int idx = start_index(dev, KMUX_TUNE_ON);
        cr_expect(idx == 0 || idx == 1, "%s: index %d", bad[i], idx);
        TU_OK(kmux_context_destroy(ctx));
    }
    unsetenv("KMUX_TUNE_CACHE");
    unlink(fifo);
    rmdir(dir);
}
