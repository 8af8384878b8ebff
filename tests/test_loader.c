/*
 * test_loader.c - plugin discovery and loading: rejected plugins (another ABI, ABI 1) are listed
 * with the reason, never fatal; a missing plugin folder is not an error; the allow-list;
 * concurrent contexts. With the small-capability test plugin (tests/plugins/small_plugin.c):
 * the core's capability checks (one message for every device), the implementation index the
 * core keeps, and the degenerate problems the core runs without calling the backend. Hostile
 * plugins and folders (tests/plugins-hostile, temporary folders): absurd device counts, a table
 * that poses as another backend, reserved names, device ids of another backend or repeated,
 * truncated files, FIFOs, relative and too long paths, bad environment values.
 */
#define _POSIX_C_SOURCE 200809L
#include <elf.h>
#include <errno.h>
#include <pthread.h>
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

static kmux_context *context_with_path(const char *path, const char *allow) {
    kmux_context_options o = KMUX_CONTEXT_OPTIONS_INIT;
    o.backend_path = path;
    o.backends = allow;
    kmux_context *ctx = NULL;
    TU_OK(kmux_context_create(&o, &ctx));
    return ctx;
}

/* The info of backend `name`, asserting that it is listed. */
static kmux_backend_info find_info(kmux_context *ctx, const char *name) {
    int n = 0;
    TU_OK(kmux_backend_count(ctx, &n));
    for (int i = 0; i < n; i++) {
        kmux_backend_info b;
        TU_OK(kmux_backend_info_get(ctx, i, &b));
        if (strcmp(b.name, name) == 0) return b;
    }
    cr_assert_fail("backend %s is not listed", name);
    kmux_backend_info none = {0};
    return none;
}

Test(loader, wrong_abi_is_rejected_with_reason) {
    kmux_context *ctx = context_with_path(plugin_dir(), NULL);
    kmux_backend_info b = find_info(ctx, "wrongabi");
    cr_expect_eq(b.available, 0);
    cr_expect(strstr(b.reason, "built for plugin ABI 3 (3.0)") &&
                  strstr(b.reason, "this libkmux loads ABI 2"),
              "reason: %s", b.reason);
    cr_expect(strstr(b.path, "libkmux-wrongabi.so") != NULL, "path: %s", b.path);
    kmux_device *dev = NULL;
    TU_STATUS(KMUX_ERR_NOT_FOUND, kmux_device_find(ctx, "wrongabi", &dev));
    cr_expect(strstr(kmux_last_error(), "unavailable") != NULL, "%s", kmux_last_error());
    /* ref is unaffected */
    cr_expect_eq(find_info(ctx, "ref").available, 1);
    TU_OK(kmux_context_destroy(ctx));
}

/* A plugin built against the previous ABI (plan slots in the main table, no device_caps). */
Test(loader, abi_v1_plugin_is_rejected_with_reason) {
    kmux_context *ctx = context_with_path(plugin_dir(), NULL);
    kmux_backend_info b = find_info(ctx, "abiv1");
    cr_expect_eq(b.available, 0);
    cr_expect_eq(b.device_count, 0);
    cr_expect_str_eq(b.reason,
                     "built for plugin ABI 1 (1.0); this libkmux loads ABI 2 (rebuild the plugin "
                     "against this kmux_backend.h)");
    kmux_device *dev = NULL;
    TU_STATUS(KMUX_ERR_NOT_FOUND, kmux_device_find(ctx, "abiv1", &dev));
    cr_expect(strstr(kmux_last_error(), "built for plugin ABI 1") != NULL, "%s", kmux_last_error());
    TU_OK(kmux_context_destroy(ctx));
}

Test(loader, missing_entry_symbol_is_rejected) {
    kmux_context *ctx = context_with_path(plugin_dir(), NULL);
    kmux_backend_info b = find_info(ctx, "noentry");
    cr_expect_eq(b.available, 0);
    cr_expect(strstr(b.reason, "kmux_backend_entry") != NULL, "reason: %s", b.reason);
    TU_OK(kmux_context_destroy(ctx));
}

Test(loader, plugin_without_device_reports_probe_reason) {
    kmux_context *ctx = context_with_path(plugin_dir(), NULL);
    kmux_backend_info b = find_info(ctx, "nodevice");
    cr_expect_eq(b.available, 0);
    cr_expect_eq(b.device_count, 0);
    cr_expect_str_eq(b.reason, "test plugin: no device (by design)");
    cr_expect_str_eq(b.version, "test 1.0");
    TU_OK(kmux_context_destroy(ctx));
}

Test(loader, file_that_is_not_a_library_is_rejected) {
    char dir[] = "/tmp/kmux-loader-XXXXXX";
    cr_assert_not_null(mkdtemp(dir));
    char path[256];
    snprintf(path, sizeof path, "%s/libkmux-garbage.so", dir);
    FILE *f = fopen(path, "w");
    cr_assert_not_null(f);
    fputs("this is not an ELF file\n", f);
    fclose(f);
    kmux_context *ctx = context_with_path(dir, NULL);
    kmux_backend_info b = find_info(ctx, "garbage");
    cr_expect_eq(b.available, 0);
    cr_expect(strstr(b.reason, "cannot load") != NULL, "reason: %s", b.reason);
    TU_OK(kmux_context_destroy(ctx));
    unlink(path);
    rmdir(dir);
}

Test(loader, missing_plugin_folder_is_not_an_error) {
    kmux_context *ctx = context_with_path("/nonexistent/kmux/plugins:/also/missing", NULL);
    int n = 0;
    TU_OK(kmux_device_count(ctx, &n));
    cr_expect_geq(n, 1, "ref must always be there");
    kmux_device *ref = NULL;
    TU_OK(kmux_device_find(ctx, "ref", &ref));
    TU_OK(kmux_context_destroy(ctx));
}

Test(loader, environment_path_is_searched) {
    setenv("KMUX_BACKEND_PATH", plugin_dir(), 1);
    kmux_context *ctx = tu_context();
    cr_expect_eq(find_info(ctx, "nodevice").available, 0);
    TU_OK(kmux_context_destroy(ctx));
}

Test(loader, allow_list_keeps_other_backends_out) {
    kmux_context *ctx = context_with_path(plugin_dir(), "ref");
    kmux_backend_info b = find_info(ctx, "nodevice");
    cr_expect_eq(b.available, 0);
    cr_expect(strstr(b.reason, "allow-list") != NULL, "reason: %s", b.reason);
    cr_expect_eq(find_info(ctx, "ref").available, 1);
    TU_OK(kmux_context_destroy(ctx));
}

static void *create_destroy(void *arg) {
    (void)arg;
    for (int i = 0; i < 5; i++) {
        kmux_context *ctx = NULL;
        if (kmux_context_create(NULL, &ctx) != KMUX_OK) return (void *)1;
        kmux_device *d = NULL;
        if (kmux_device_find(ctx, "ref", &d) != KMUX_OK) return (void *)1;
        kmux_context_destroy(ctx);
    }
    return NULL;
}

Test(loader, contexts_are_created_concurrently_and_coexist) {
    pthread_t t[4];
    for (int i = 0; i < 4; i++)
        cr_assert_eq(pthread_create(&t[i], NULL, create_destroy, NULL), 0);
    for (int i = 0; i < 4; i++) {
        void *r = NULL;
        pthread_join(t[i], &r);
        cr_expect_null(r, "thread %d failed: %s", i, kmux_last_error());
    }
    kmux_context *a = tu_context(), *b = tu_context();
    kmux_device *da, *db;
    TU_OK(kmux_device_find(a, "ref", &da));
    TU_OK(kmux_device_find(b, "ref", &db));
    cr_expect_neq(da, db, "devices belong to their context");
    TU_OK(kmux_context_destroy(a));
    TU_OK(kmux_context_destroy(b));
}

/* ---- the core's capability checks, with the small-capability plugin ----------------------- */

static kmux_context *small_context(kmux_device **small) {
    kmux_context *ctx = context_with_path(plugin_dir(), NULL);
    TU_OK(kmux_device_find(ctx, "test:small", small));
    return ctx;
}

static kmux_matmul_desc f32_desc(int64_t m, int64_t n, int64_t k) {
    kmux_matmul_desc d = KMUX_MATMUL_DESC_INIT;
    d.m = m, d.n = n, d.k = k;
    d.lda = k, d.ldb = n, d.ldc = n;
    return d;
}

/* desc must be refused UNSUPPORTED with exactly `want` as the message. */
static void expect_refused(kmux_device *dev, const kmux_matmul_desc *d,
                           const kmux_plan_prefs *prefs, const char *want) {
    kmux_plan *plan = NULL;
    TU_STATUS(KMUX_ERR_UNSUPPORTED, kmux_matmul_plan_create(dev, d, prefs, &plan));
    cr_expect_null(plan);
    cr_expect_str_eq(kmux_last_error(), want);
}

/* A backend that does not declare caps.caller_workspace (test:small) runs plans only in memory
 * of its own: prefs.caller_workspace is refused at creation, not silently ignored. */
Test(caps, caller_workspace_is_refused_where_the_backend_lacks_it) {
    kmux_device *dev = NULL;
    kmux_context *ctx = small_context(&dev);
    kmux_plan_prefs prefs = KMUX_PLAN_PREFS_INIT;
    prefs.caller_workspace = 1;
    kmux_matmul_desc d = f32_desc(8, 8, 8);
    expect_refused(dev, &d, &prefs,
                   "kmux_matmul_plan_create: prefs->caller_workspace = 1: device test:small "
                   "(backend small) runs plans only in a workspace of its own");
    prefs.caller_workspace = 0;
    kmux_plan *plan = NULL;
    TU_OK(kmux_matmul_plan_create(dev, &d, &prefs, &plan));
    TU_OK(kmux_plan_destroy(plan));
    TU_OK(kmux_context_destroy(ctx));
}

Test(caps, matmul_limits_are_refused_by_the_core) {
    kmux_device *dev = NULL;
    kmux_context *ctx = small_context(&dev);
    kmux_matmul_desc d = f32_desc(1001, 8, 8);
    expect_refused(dev, &d, NULL,
                   "kmux_matmul_plan_create: m = 1001 exceeds the largest dimension device "
                   "test:small accepts (1000)");
    d = f32_desc(8, 8, 8);
    d.batch_count = 5, d.stride_a = d.stride_b = 64, d.stride_c = 64;
    expect_refused(dev, &d, NULL,
                   "kmux_matmul_plan_create: batch_count = 5 exceeds the largest batch device "
                   "test:small accepts (4)");
    d = f32_desc(8, 8, 8);
    d.lda = 1001;
    expect_refused(dev, &d, NULL,
                   "kmux_matmul_plan_create: lda = 1001 exceeds the largest leading dimension "
                   "device test:small accepts (1000)");
    d = f32_desc(400, 400, 8);
    expect_refused(dev, &d, NULL,
                   "kmux_matmul_plan_create: span of C = 160000 exceeds the largest operand span "
                   "(elements) device test:small accepts (100000)");
    d = f32_desc(8, 8, 8);
    d.epilogue = KMUX_EPILOGUE_BIAS | KMUX_EPILOGUE_RELU;
    expect_refused(dev, &d, NULL,
                   "kmux_matmul_plan_create: epilogue = 0x3: device test:small does not run the "
                   "RELU epilogue");
    d = f32_desc(8, 8, 8);
    d.epilogue = KMUX_EPILOGUE_BGRADB; /* ABI 2.10's flags: an older backend never sees them */
    expect_refused(dev, &d, NULL,
                   "kmux_matmul_plan_create: epilogue = 0x100: device test:small does not run the "
                   "BGRADB epilogue");
    d = f32_desc(8, 8, 8);
    d.a_type = d.b_type = d.c_type = KMUX_F64, d.compute_type = KMUX_COMPUTE_F64;
    expect_refused(dev, &d, NULL,
                   "kmux_matmul_plan_create: a_type = f64, b_type = f64, c_type = f64, "
                   "compute_type = f64: device test:small does not run this type combination");
    /* a dtype the device runs only as another one (kmux_device_caps.dtype_instead, ABI 2.3): the
     * refusal names the one it runs, for the first operand that has one; test:small plays an
     * OCP-fp8 device (NVIDIA sm_89+, AMD gfx950): FNUZ requests are told to use OCP */
    d = f32_desc(8, 8, 8);
    d.a_type = d.b_type = KMUX_F8_E4M3_FNUZ;
    expect_refused(dev, &d, NULL,
                   "kmux_matmul_plan_create: a_type = e4m3fnuz (FNUZ) is not supported by "
                   "test:small (test device, OCP fp8 only): use e4m3");
    d.a_type = d.b_type = KMUX_F8_E5M2_FNUZ;
    expect_refused(dev, &d, NULL,
                   "kmux_matmul_plan_create: a_type = e5m2fnuz (FNUZ) is not supported by "
                   "test:small (test device, OCP fp8 only): use e5m2");
    /* no alternative for OCP fp8 itself (not in its rows either): the plain refusal */
    d.a_type = d.b_type = KMUX_F8_E4M3;
    expect_refused(dev, &d, NULL,
                   "kmux_matmul_plan_create: a_type = e4m3, b_type = e4m3, c_type = f32, "
                   "compute_type = f32: device test:small does not run this type combination");
    /* bf16 runs only by emulation there: refused without prefs.allow_emulation, else planned */
    d = f32_desc(8, 8, 8);
    d.a_type = d.b_type = d.c_type = KMUX_BF16;
    kmux_plan_prefs prefs = KMUX_PLAN_PREFS_INIT;
    prefs.allow_emulation = 0;
    expect_refused(dev, &d, &prefs,
                   "kmux_matmul_plan_create: a_type = bf16, b_type = bf16, c_type = bf16, "
                   "compute_type = f32: device test:small runs this type combination only by "
                   "emulation (conversion to a wider type, \"+cvt\"), which needs "
                   "prefs.allow_emulation = 1");
    prefs.allow_emulation = 1;
    kmux_plan *plan = NULL;
    TU_OK(kmux_matmul_plan_create(dev, &d, &prefs, &plan));
    TU_OK(kmux_plan_destroy(plan));
    /* at the limits themselves: accepted */
    d = f32_desc(1000, 100, 100); /* A and C span exactly 100000 elements */
    TU_OK(kmux_matmul_plan_create(dev, &d, NULL, &plan));
    TU_OK(kmux_plan_destroy(plan));
    TU_OK(kmux_context_destroy(ctx));
}

/* The element-wise family's caps (one kmux_family_caps): what test:small does not declare is
 * refused by the core with one message, and the plugin (which fails loudly otherwise) never sees
 * it; what it declares runs. */
Test(caps, eltwise_caps_are_refused_by_the_core) {
    kmux_device *dev = NULL;
    kmux_context *ctx = small_context(&dev);
    static const struct {
        kmux_eltwise_alg alg;
        kmux_prop prop;
        kmux_dtype dtype;
        int64_t n;
        const char *want;
    } cases[] = {
        {KMUX_ELTWISE_TANH, KMUX_PROP_FORWARD, KMUX_F32, 8,
         "kmux_eltwise_plan_create: desc->alg = tanh is not supported by test:small"},
        {KMUX_ELTWISE_RELU, KMUX_PROP_FORWARD, KMUX_BF16, 8,
         "kmux_eltwise_plan_create: desc->dtype = bf16 is not supported by test:small for "
         "element-wise ops"},
        {KMUX_ELTWISE_RELU, KMUX_PROP_BACKWARD, KMUX_F32, 8,
         "kmux_eltwise_plan_create: desc->prop = backward is not supported by test:small"},
        {KMUX_ELTWISE_SILU, KMUX_PROP_FORWARD, KMUX_F32, 100001,
         "kmux_eltwise_plan_create: desc->n = 100001 is beyond the 100000 elements test:small "
         "runs in one call"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        kmux_eltwise_desc d = KMUX_ELTWISE_DESC_INIT;
        d.alg = cases[i].alg, d.prop = cases[i].prop, d.dtype = cases[i].dtype, d.n = cases[i].n;
        kmux_plan *plan = NULL;
        TU_STATUS(KMUX_ERR_UNSUPPORTED, kmux_eltwise_plan_create(dev, &d, NULL, &plan));
        cr_expect_null(plan);
        cr_expect_str_eq(kmux_last_error(), cases[i].want);
    }
    kmux_eltwise_desc d = KMUX_ELTWISE_DESC_INIT;
    d.alg = KMUX_ELTWISE_SILU, d.n = 3;
    kmux_plan *plan = NULL;
    TU_OK(kmux_eltwise_plan_create(dev, &d, NULL, &plan));
    kmux_stream *s = NULL;
    TU_OK(kmux_stream_create(dev, &s));
    float x[3] = {-1.0f, 0.0f, 2.0f}, y[3];
    kmux_eltwise_args a = KMUX_ELTWISE_ARGS_INIT;
    a.src = x, a.dst = y;
    TU_OK(kmux_eltwise_execute(plan, s, &a));
    cr_expect_float_eq(y[0], -0.26894142f, 1e-6f);
    cr_expect_eq(y[1], 0.0f);
    cr_expect_float_eq(y[2], 1.7615942f, 1e-6f);
    TU_OK(kmux_plan_destroy(plan));
    TU_OK(kmux_stream_destroy(s));
    TU_OK(kmux_context_destroy(ctx));
}

Test(caps, conv_limits_are_refused_by_the_core) {
    kmux_device *dev = NULL;
    kmux_context *ctx = small_context(&dev);
    kmux_conv2d_desc c = KMUX_CONV2D_DESC_INIT;
    c.n = 1, c.c = 2, c.h = 8, c.w = 8, c.k = 2, c.r = 3, c.s = 3;
    c.pad_top = c.pad_bottom = c.pad_left = c.pad_right = 1;
    kmux_plan *plan = NULL;
    TU_OK(kmux_conv2d_plan_create(dev, &c, NULL, &plan));
    TU_OK(kmux_plan_destroy(plan));
    struct {
        kmux_conv2d_desc d;
        const char *want;
    } cases[8];
    int n = 0;
    cases[n].d = c, cases[n].d.w = 1001;
    cases[n++].want = "kmux_conv2d_plan_create: w = 1001 exceeds the largest dimension device "
                      "test:small accepts (1000)";
    cases[n].d = c, cases[n].d.direction = KMUX_CONV_BWD_DATA;
    cases[n++].want = "kmux_conv2d_plan_create: device test:small does not run backward-data "
                      "convolution";
    cases[n].d = c, cases[n].d.layout = KMUX_NHWC;
    cases[n++].want = "kmux_conv2d_plan_create: layout = NHWC: device test:small does not run "
                      "this layout";
    cases[n].d = c, cases[n].d.pad_bottom = 2;
    cases[n++].want = "kmux_conv2d_plan_create: pad_top = 1, pad_bottom = 2, pad_left = 1, "
                      "pad_right = 1: device test:small does not run asymmetric padding";
    cases[n].d = c, cases[n].d.groups = 2;
    cases[n++].want = "kmux_conv2d_plan_create: groups = 2: device test:small does not run "
                      "grouped convolution";
    cases[n].d = c, cases[n].d.x_type = cases[n].d.w_type = cases[n].d.y_type = KMUX_BF16;
    cases[n++].want = "kmux_conv2d_plan_create: x_type = bf16, w_type = bf16, y_type = bf16, "
                      "compute_type = f32: device test:small does not run this type combination";
    for (int i = 0; i < n; i++) {
        plan = NULL;
        TU_STATUS(KMUX_ERR_UNSUPPORTED, kmux_conv2d_plan_create(dev, &cases[i].d, NULL, &plan));
        cr_expect_null(plan);
        cr_expect_str_eq(kmux_last_error(), cases[i].want, "case %d", i);
    }
    TU_OK(kmux_context_destroy(ctx));
}

/* The same problem beyond a device's largest dimension gives the same message on every device
 * that has such a limit (ref has none and plans it). */
Test(caps, one_message_on_every_backend) {
    kmux_context *ctx = context_with_path(plugin_dir(), NULL);
    static const struct {
        const char *id;
        long long max_dim;
    } limits[] = {{"test:small", 1000}, {"cpu:openblas", 2147483647}, {"cpu:onednn", 2147483647}};
    int checked = 0;
    for (size_t i = 0; i < sizeof limits / sizeof limits[0]; i++) {
        kmux_device *dev = NULL;
        if (kmux_device_find(ctx, limits[i].id, &dev) != KMUX_OK) continue;
        kmux_matmul_desc d = f32_desc(1, limits[i].max_dim + 1, 1);
        char want[256];
        snprintf(want, sizeof want,
                 "kmux_matmul_plan_create: n = %lld exceeds the largest dimension device %s "
                 "accepts (%lld)",
                 limits[i].max_dim + 1, limits[i].id, limits[i].max_dim);
        expect_refused(dev, &d, NULL, want);
        kmux_conv2d_desc c = KMUX_CONV2D_DESC_INIT;
        c.n = 1, c.c = 1, c.h = 1, c.w = limits[i].max_dim + 1, c.k = 1, c.r = 1, c.s = 1;
        kmux_plan *plan = NULL;
        TU_STATUS(KMUX_ERR_UNSUPPORTED, kmux_conv2d_plan_create(dev, &c, NULL, &plan));
        snprintf(want, sizeof want,
                 "kmux_conv2d_plan_create: w = %lld exceeds the largest dimension device %s "
                 "accepts (%lld)",
                 limits[i].max_dim + 1, limits[i].id, limits[i].max_dim);
        cr_expect_str_eq(kmux_last_error(), want);
        checked++;
    }
    cr_expect_geq(checked, 1, "test:small must be there");
    kmux_device *ref = NULL;
    TU_OK(kmux_device_find(ctx, "ref", &ref));
    kmux_matmul_desc d = f32_desc(1, INT64_C(3000000000), 1);
    kmux_plan *plan = NULL;
    TU_OK(kmux_matmul_plan_create(ref, &d, NULL, &plan));
    TU_OK(kmux_plan_destroy(plan));
    TU_OK(kmux_context_destroy(ctx));
}

/* C(4 x 4) = A(4 x 3) B(3 x 4) with small integers, checked against a hand loop. */
static void fill_small(float *A, float *B, float *C) {
    for (int i = 0; i < 12; i++)
        A[i] = (float)(i % 5 - 2), B[i] = (float)(i % 3 + 1);
    for (int i = 0; i < 16; i++)
        C[i] = (float)(i - 8);
}

Test(caps, pointer_alignment_is_checked_at_execute) {
    kmux_device *dev = NULL;
    kmux_context *ctx = small_context(&dev);
    kmux_matmul_desc d = f32_desc(4, 4, 3);
    kmux_plan *plan = NULL;
    TU_OK(kmux_matmul_plan_create(dev, &d, NULL, &plan));
    float *buf = NULL;
    TU_OK(kmux_malloc(dev, 64 * sizeof(float), (void **)&buf));
    float *A = buf, *B = buf + 16, *C = buf + 32, one = 1.0f, zero = 0.0f;
    fill_small(A, B, C);
    kmux_stream *st = NULL;
    TU_OK(kmux_stream_create(dev, &st));
    kmux_matmul_args a = KMUX_MATMUL_ARGS_INIT;
    a.alpha = &one, a.beta = &zero, a.A = A, a.B = B, a.C = C + 1;
    TU_STATUS(KMUX_ERR_UNSUPPORTED, kmux_matmul_execute(plan, st, &a));
    char want[200];
    snprintf(want, sizeof want,
             "kmux_matmul_execute: C = %p is not a multiple of 64 bytes, the alignment device "
             "test:small requires",
             (void *)(C + 1));
    cr_expect_str_eq(kmux_last_error(), want);
    a.C = C;
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

/* k == 0, alpha == 0 and empty problems are the core's: the small plugin fails loudly when it is
 * handed one (KMUX_ERR_INTERNAL), so success here means the backend was not called. */
Test(core, degenerate_problems_never_reach_the_backend) {
    kmux_device *dev = NULL;
    kmux_context *ctx = small_context(&dev);
    float *buf = NULL;
    TU_OK(kmux_malloc(dev, 96 * sizeof(float), (void **)&buf));
    float *A = buf, *B = buf + 16, *C = buf + 32, *bias = buf + 64, beta = -2.0f;
    float alphas[2] = {1.0f, 0.0f};
    kmux_stream *st = NULL;
    TU_OK(kmux_stream_create(dev, &st));
    for (int t = 0; t < 2; t++) { /* t = 0: k == 0 plan; t = 1: alpha == 0 at execute */
        kmux_matmul_desc d = f32_desc(4, 4, t == 0 ? 0 : 3);
        d.lda = t == 0 ? 1 : 3;
        d.epilogue = KMUX_EPILOGUE_BIAS;
        kmux_plan *plan = NULL;
        TU_OK(kmux_matmul_plan_create(dev, &d, NULL, &plan));
        kmux_plan_info info;
        TU_OK(kmux_plan_info_get(plan, &info));
        if (t == 0) cr_expect_str_eq(info.impl, "kmux:k=0");
        fill_small(A, B, C);
        for (int j = 0; j < 4; j++)
            bias[j] = (float)(10 * j);
        kmux_matmul_args a = KMUX_MATMUL_ARGS_INIT;
        a.alpha = &alphas[t], a.beta = &beta, a.A = A, a.B = B, a.C = C, a.bias = bias;
        TU_OK(kmux_matmul_execute(plan, st, &a));
        for (int i = 0; i < 16; i++)
            cr_expect_eq(C[i], -2.0f * (float)(i - 8) + (float)(10 * (i % 4)), "t %d C[%d] = %g", t,
                         i, C[i]);
        TU_OK(kmux_plan_destroy(plan));
    }
    kmux_matmul_desc e = f32_desc(0, 4, 3);
    kmux_plan *plan = NULL;
    TU_OK(kmux_matmul_plan_create(dev, &e, NULL, &plan));
    kmux_plan_info info;
    TU_OK(kmux_plan_info_get(plan, &info));
    cr_expect_str_eq(info.impl, "kmux:empty");
    TU_OK(kmux_plan_destroy(plan));
    TU_OK(kmux_stream_destroy(st));
    TU_OK(kmux_free(dev, buf));
    TU_OK(kmux_context_destroy(ctx));
}

/* The backend prepares every implementation; the core walks them with its own index. */
Test(core, implementation_index_is_kept_by_the_core) {
    kmux_device *dev = NULL;
    kmux_context *ctx = small_context(&dev);
    kmux_matmul_desc d = f32_desc(4, 4, 3);
    kmux_plan *plan = NULL;
    TU_OK(kmux_matmul_plan_create(dev, &d, NULL, &plan));
    kmux_plan_info info;
    TU_OK(kmux_plan_info_get(plan, &info));
    cr_expect_str_eq(info.impl, "small:naive");
    cr_expect_eq(info.impl_index, 0);
    TU_OK(kmux_plan_next_impl(plan));
    TU_OK(kmux_plan_info_get(plan, &info));
    cr_expect_str_eq(info.impl, "small:naive-reversed");
    cr_expect_eq(info.impl_index, 1);
    TU_STATUS(KMUX_ERR_LAST_IMPL, kmux_plan_next_impl(plan));
    cr_expect_str_eq(kmux_last_error(), "kmux_plan_next_impl: small:naive-reversed is the last of "
                                        "the 2 implementations of this plan on test:small");
    TU_OK(kmux_plan_info_get(plan, &info));
    cr_expect_eq(info.impl_index, 1, "a refused next_impl leaves the plan as it was");
    TU_OK(kmux_plan_destroy(plan));
    TU_OK(kmux_context_destroy(ctx));
}

/* ---- hostile plugins and folders (issue 50); the plugins are in tests/plugins-hostile ---- */

static const char *hostile_dir(void) {
    static char d[1024];
    snprintf(d, sizeof d, "%s-hostile", plugin_dir());
    return d;
}

/* A probe answering INT_MAX devices once overflowed the device array (heap corruption). */
Test(loader, absurd_device_count_is_refused) {
    kmux_context *ctx = context_with_path(hostile_dir(), NULL);
    kmux_backend_info b = find_info(ctx, "hugecount");
    cr_expect_eq(b.available, 0);
    cr_expect(strstr(b.reason, "probe reported 2147483647 devices, more than the 1024") != NULL,
              "reason: %s", b.reason);
    kmux_device *ref = NULL;
    TU_OK(kmux_device_find(ctx, "ref", &ref));
    TU_OK(kmux_context_destroy(ctx));
}

/* libkmux-aaimpostor.so calls itself "small": it once replaced the real plugin of that name. */
Test(loader, plugin_table_name_must_match_its_file) {
    char path[2100];
    snprintf(path, sizeof path, "%s:%s", hostile_dir(), plugin_dir());
    kmux_context *ctx = context_with_path(path, NULL);
    kmux_backend_info imp = find_info(ctx, "aaimpostor");
    cr_expect_eq(imp.available, 0);
    cr_expect(strstr(imp.reason, "calls itself 'small', but its file name says 'aaimpostor'"),
              "reason: %s", imp.reason);
    kmux_backend_info small = find_info(ctx, "small");
    cr_expect_eq(small.available, 1, "the real 'small': %s", small.reason);
    cr_expect(strstr(small.path, "/tests/plugins/libkmux-small.so") != NULL, "path %s", small.path);
    TU_OK(kmux_context_destroy(ctx));
}

/* A file named for a built-in backend is never opened (its constructor would run). */
Test(loader, builtin_names_are_reserved) {
    unsetenv("KMUX_TEST_AUTO_PLUGIN_OPENED");
    kmux_context *ctx = context_with_path(hostile_dir(), NULL);
    cr_expect_null(getenv("KMUX_TEST_AUTO_PLUGIN_OPENED"), "libkmux-auto.so was opened");
    kmux_backend_info a = find_info(ctx, "auto");
    cr_expect_str_eq(a.path, "(built in)");
    TU_OK(kmux_context_destroy(ctx));
}

/* Device ids name their backend and are unique: "cpu:openblas" from backend aaposer is refused,
 * as is its second "aaposer:1"; kmux_device_find("cpu:openblas") finds the real one or none. */
Test(loader, device_ids_name_their_backend_and_are_unique) {
    kmux_context *ctx = context_with_path(hostile_dir(), NULL);
    kmux_backend_info b = find_info(ctx, "aaposer");
    cr_expect_eq(b.available, 1, "%s", b.reason);
    cr_expect_eq(b.device_count, 1, "only aaposer:1 may be taken, got %d", b.device_count);
    kmux_device *dev = NULL;
    TU_OK(kmux_device_find(ctx, "aaposer:1", &dev));
    if (kmux_device_find(ctx, "cpu:openblas", &dev) == KMUX_OK) {
        kmux_device_props p;
        TU_OK(kmux_device_props_get(dev, &p));
        cr_expect_str_eq(p.backend, "openblas", "cpu:openblas is backend %s", p.backend);
    }
    int n = 0;
    TU_OK(kmux_device_count(ctx, &n));
    int posers = 0;
    for (int i = 0; i < n; i++) {
        TU_OK(kmux_device_get(ctx, i, &dev));
        kmux_device_props p;
        TU_OK(kmux_device_props_get(dev, &p));
        for (int j = 0; j < i; j++) {
            kmux_device *o = NULL;
            kmux_device_props q;
            TU_OK(kmux_device_get(ctx, j, &o));
            TU_OK(kmux_device_props_get(o, &q));
            cr_expect_str_neq(p.id, q.id, "two devices with id %s", p.id);
        }
        posers += strcmp(p.id, "cpu:openblas") == 0 && strcmp(p.backend, "openblas") != 0;
    }
    cr_expect_eq(posers, 0);
    TU_OK(kmux_context_destroy(ctx));
}

/* The end of the last PT_LOAD segment's file bytes of the ELF file at path. */
static uint64_t load_end(const char *path) {
    FILE *f = fopen(path, "rb");
    cr_assert_not_null(f, "%s", path);
    Elf64_Ehdr eh;
    cr_assert_eq(fread(&eh, sizeof eh, 1, f), 1);
    uint64_t end = 0;
    for (unsigned i = 0; i < eh.e_phnum; i++) {
        Elf64_Phdr ph;
        cr_assert_eq(fseek(f, (long)(eh.e_phoff + (uint64_t)i * sizeof ph), SEEK_SET), 0);
        cr_assert_eq(fread(&ph, sizeof ph, 1, f), 1);
        if (ph.p_type == PT_LOAD && ph.p_offset + ph.p_filesz > end)
            end = ph.p_offset + ph.p_filesz;
    }
    fclose(f);
    return end;
}

/* A truncated plugin once died of SIGBUS inside dlopen; a FIFO blocked it forever. */
Test(loader, truncated_plugin_and_fifo_are_not_opened, .timeout = 60) {
    char dir[] = "/tmp/kmux-hostile-XXXXXX";
    cr_assert_not_null(mkdtemp(dir));
    char src[1100], p1[256], p2[256], p3[256];
    snprintf(src, sizeof src, "%s/libkmux-small.so", plugin_dir());
    snprintf(p1, sizeof p1, "%s/libkmux-cut1k.so", dir);
    snprintf(p2, sizeof p2, "%s/libkmux-cuthalf.so", dir);
    snprintf(p3, sizeof p3, "%s/libkmux-fifo.so", dir);
    /* cut one byte short of the end of its loadable segments (debug sections may follow them,
     * so a fraction of the file size need not cut a segment) */
    long half = (long)load_end(src) - 1;
    tu_copy_prefix(src, p1, 1000);
    tu_copy_prefix(src, p2, (size_t)half);
    cr_assert_eq(mkfifo(p3, 0600), 0);
    kmux_context *ctx = context_with_path(dir, NULL);
    kmux_backend_info a = find_info(ctx, "cut1k"), b = find_info(ctx, "cuthalf"),
                      c = find_info(ctx, "fifo");
    cr_expect(!a.available && strstr(a.reason, "truncated: 1000 bytes"), "%s", a.reason);
    char want[64];
    snprintf(want, sizeof want, "truncated: %ld bytes", half);
    cr_expect(!b.available && strstr(b.reason, want), "%s", b.reason);
    cr_expect(!c.available && strstr(c.reason, "a FIFO, not opened"), "%s", c.reason);
    TU_OK(kmux_context_destroy(ctx));
    unlink(p1), unlink(p2), unlink(p3), rmdir(dir);
}

/* Relative folders would load whatever the working folder holds. */
Test(loader, relative_plugin_folders_are_refused) {
    kmux_context_options o = KMUX_CONTEXT_OPTIONS_INIT;
    o.backend_path = "/tmp:.";
    kmux_context *ctx = NULL;
    TU_STATUS(KMUX_ERR_INVALID_ARGUMENT, kmux_context_create(&o, &ctx));
    cr_expect(strstr(kmux_last_error(), "backend_path entry '.' is not an absolute folder"), "%s",
              kmux_last_error());
    setenv("KMUX_BACKEND_PATH", "lib", 1);
    TU_STATUS(KMUX_ERR_INVALID_ARGUMENT, kmux_context_create(NULL, &ctx));
    cr_expect(strstr(kmux_last_error(), "KMUX_BACKEND_PATH entry 'lib'"), "%s", kmux_last_error());
    unsetenv("KMUX_BACKEND_PATH");
}

/* A plugin path that does not fit is refused, never opened shorter. */
Test(loader, too_long_plugin_path_is_refused) {
    char dir[] = "/tmp/kmux-long-XXXXXX";
    cr_assert_not_null(mkdtemp(dir));
    char deep[1400];
    snprintf(deep, sizeof deep, "%s", dir);
    while (strlen(deep) < 1100) { /* nested folders of 200 characters */
        strcat(deep, "/");
        size_t n = strlen(deep);
        memset(deep + n, 'd', 200);
        deep[n + 200] = '\0';
        cr_assert_eq(mkdir(deep, 0700), 0, "%s", strerror(errno));
    }
    char path[1500], src[1100];
    snprintf(path, sizeof path, "%s/libkmux-small.so", deep);
    snprintf(src, sizeof src, "%s/libkmux-small.so", plugin_dir());
    tu_copy_prefix(src, path, (size_t)1 << 30);
    kmux_context *ctx = context_with_path(deep, NULL);
    kmux_backend_info b = find_info(ctx, "small");
    cr_expect_eq(b.available, 0);
    cr_expect(strstr(b.reason, "the path is longer than 1023 bytes; not opened"), "%s", b.reason);
    TU_OK(kmux_context_destroy(ctx));
    unlink(path);
    while (strlen(deep) > strlen(dir)) {
        rmdir(deep);
        *strrchr(deep, '/') = '\0';
    }
    rmdir(dir);
}

/* One parser for the environment: a bad value is refused with its name, as the API field is. */
Test(loader, bad_environment_values_are_refused) {
    static const char *const cases[][2] = {
        {"KMUX_NUM_THREADS", "-5"},   {"KMUX_NUM_THREADS", "abc"},
        {"KMUX_NUM_THREADS", "1e9"},  {"KMUX_NUM_THREADS", "100000"},
        {"KMUX_VERBOSE", "abc"},      {"KMUX_VERBOSE", "-1"},
        {"KMUX_VERBOSE", "99999999"}, {"KMUX_NUM_THREADS", "99999999999999999999"}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        setenv(cases[i][0], cases[i][1], 1);
        kmux_context *ctx = NULL;
        kmux_status st = kmux_context_create(NULL, &ctx);
        cr_expect_eq(st, KMUX_ERR_INVALID_ARGUMENT, "%s=%s: %s", cases[i][0], cases[i][1],
                     kmux_status_str(st));
        char want[128];
        snprintf(want, sizeof want, "%s = '%s' is not an integer in", cases[i][0], cases[i][1]);
        cr_expect(strstr(kmux_last_error(), want), "%s", kmux_last_error());
        if (st == KMUX_OK) kmux_context_destroy(ctx);
        unsetenv(cases[i][0]);
    }
    setenv("KMUX_NUM_THREADS", "3", 1);
    kmux_context *ctx = NULL;
    TU_OK(kmux_context_create(NULL, &ctx));
    TU_OK(kmux_context_destroy(ctx));
    unsetenv("KMUX_NUM_THREADS");
}

/* A huge plan cache costs nothing until used; beyond the cap it is refused with a message. */
Test(loader, plan_cache_capacity_is_capped_and_lazy) {
    kmux_context_options o = KMUX_CONTEXT_OPTIONS_INIT;
    o.plan_cache_capacity = 2000000000;
    kmux_context *ctx = NULL;
    TU_STATUS(KMUX_ERR_INVALID_ARGUMENT, kmux_context_create(&o, &ctx));
    cr_expect(strstr(kmux_last_error(), "plan_cache_capacity = 2000000000 is out of range"), "%s",
              kmux_last_error());
    o.plan_cache_capacity = 65536;
    TU_OK(kmux_context_create(&o, &ctx));
    kmux_device *dev = NULL;
    kmux_stream *s = NULL;
    TU_OK(kmux_device_find(ctx, "ref", &dev));
    TU_OK(kmux_stream_create(dev, &s));
    float a[64] = {1}, c[64] = {0}, one = 1, zero = 0;
    for (int m = 1; m <= 40; m++) /* 40 plans: the cache grows past its first room */
        TU_OK(kmux_gemm_ex(s, KMUX_ROW_MAJOR, KMUX_NO_TRANS, KMUX_NO_TRANS, m, 1, 1, &one, a,
                           KMUX_F32, 1, a, KMUX_F32, 1, &zero, c, KMUX_F32, 1, KMUX_COMPUTE_F32));
    cr_expect_eq(c[0], 1.0f);
    TU_OK(kmux_stream_destroy(s));
    TU_OK(kmux_context_destroy(ctx));
}
