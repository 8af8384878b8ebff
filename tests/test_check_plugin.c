/*
 * test_check_plugin.c - kmux-check's checks fed with faked device facts and faked measurements
 * through a real plugin (tests/plugins/fake_gpu_plugin.c, loaded by the core like any backend):
 * a gfx942 whose plugin carries only gfx90a code objects FAILs the code-object check, a GEMM at
 * 40% of peak FAILs the 70% target, 12 GB/s on a PCIe Gen4 x16 link WARNs; and an
 * HSA_OVERRIDE_GFX_VERSION in the environment WARNs. Each Criterion test runs in its own
 * process, so the environment set here reaches only that test's plugin.
 */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ck_checks.h"

typedef struct fixture {
    kmux_context *ctx;
    kmux_device *dev;
    ck_targets targets;
    ck_report report;
    ck_run run;
} fixture;

/* A context with the fake GPU (and ref); skips the test when the plugin cannot be loaded (not
 * built, or a core whose loader speaks another plugin ABI), saying why. */
static void open_fake(fixture *f) {
    memset(f, 0, sizeof *f);
    const char *dir = getenv("KMUX_TEST_PLUGIN_DIR");
    char path[1024];
    snprintf(path, sizeof path, "%s/libkmux-fakegpu.so", dir ? dir : "");
    if (!dir || access(path, R_OK) != 0)
        cr_skip_test("%s not built (plugin ABI 2 header needed)", path);
    kmux_context_options opt = KMUX_CONTEXT_OPTIONS_INIT;
    opt.backend_path = dir;
    opt.backends = "fakegpu";
    cr_assert_eq(kmux_context_create(&opt, &f->ctx), KMUX_OK, "%s", kmux_last_error());
    int nb = 0;
    kmux_backend_count(f->ctx, &nb);
    for (int i = 0; i < nb; i++) {
        kmux_backend_info b;
        kmux_backend_info_get(f->ctx, i, &b);
        if (strcmp(b.name, "fakegpu") == 0 && !b.available) {
            char reason[512];
            snprintf(reason, sizeof reason, "%s", b.reason);
            kmux_context_destroy(f->ctx);
            cr_skip_test("fakegpu plugin not usable by this core: %s", reason);
        }
    }
    cr_assert_eq(kmux_device_find(f->ctx, "fakegpu:0", &f->dev), KMUX_OK, "%s", kmux_last_error());
    ck_targets_default(&f->targets);
    f->run.ctx = f->ctx;
    cr_assert_eq(kmux_device_find(f->ctx, "ref", &f->run.ref), KMUX_OK);
    f->run.devices = &f->dev;
    f->run.device_count = 1;
    f->run.quick = 1;
    f->run.want_gpu_hip = 1;
    f->run.targets = &f->targets;
    f->run.report = &f->report;
}

static void close_fake(fixture *f) {
    ck_report_free(&f->report);
    kmux_context_destroy(f->ctx);
}

/* The results of subject whose name starts with prefix; at least one must exist. */
static int find(const ck_report *r, const char *subject, const char *prefix, const ck_result **out,
                int max) {
    int n = 0;
    for (int i = 0; i < r->count && n < max; i++)
        if (strcmp(r->items[i].subject, subject) == 0 &&
            strncmp(r->items[i].name, prefix, strlen(prefix)) == 0)
            out[n++] = &r->items[i];
    return n;
}

Test(check_plugin, gfx942_with_only_gfx90a_code_objects_fails) {
    setenv("KMUX_FAKE_GPU_TARGET", "gfx942:sramecc+:xnack-", 1);
    setenv("KMUX_FAKE_GPU_CODE_OBJECTS", "gfx90a", 1);
    fixture f;
    open_fake(&f);
    ck_check_devices(&f.run);
    const ck_result *r[4];
    cr_assert_eq(find(&f.report, "fakegpu:0", "code_objects", r, 4), 1);
    cr_assert_eq(r[0]->status, CK_FAIL, "%s", r[0]->detail);
    cr_assert(strstr(r[0]->hint, "--offload-arch=gfx942"), "%s", r[0]->hint);
    cr_assert_eq(ck_exit_status(&f.report.counts), 1);
    close_fake(&f);
}

Test(check_plugin, matching_code_objects_and_ecc_pass) {
    setenv("KMUX_FAKE_GPU_CODE_OBJECTS", "gfx90a,gfx942:sramecc+", 1);
    setenv("KMUX_FAKE_GPU_ECC", "1", 1);
    fixture f;
    open_fake(&f);
    ck_check_devices(&f.run);
    const ck_result *r[4];
    cr_assert_eq(find(&f.report, "fakegpu:0", "code_objects", r, 4), 1);
    cr_assert_eq(r[0]->status, CK_PASS, "%s", r[0]->detail);
    cr_assert_eq(find(&f.report, "fakegpu:0", "ecc", r, 4), 1);
    cr_assert_eq(r[0]->status, CK_PASS, "%s", r[0]->detail);
    close_fake(&f);
}

Test(check_plugin, gemm_at_40_percent_of_peak_fails, .timeout = 300) {
    setenv("KMUX_FAKE_GPU_GEMM_FRAC", "0.4", 1);
    fixture f;
    open_fake(&f);
    ck_check_speed(&f.run);
    const ck_result *r[8];
    int n = find(&f.report, "fakegpu:0", "gemm ", r, 8);
    cr_assert(n >= 3, "%d GEMM checks", n);
    kmux_device_props p;
    kmux_device_props_get(f.dev, &p);
    for (int i = 0; i < n; i++) {
        cr_assert_eq(r[i]->status, CK_FAIL, "%s: %s", r[i]->name, r[i]->detail);
        cr_assert(strstr(r[i]->detail, "40% of"), "%s", r[i]->detail);
        /* measured / target = 0.4 / 0.7 */
        cr_assert_float_eq(r[i]->measured / r[i]->target, 0.4 / 0.7, 1e-3, "%s", r[i]->name);
    }
    close_fake(&f);
}

Test(check_plugin, twelve_gbps_on_gen4_x16_warns, .timeout = 300) {
    setenv("KMUX_FAKE_GPU_H2D_GBPS", "12", 1);
    setenv("KMUX_FAKE_GPU_PCIE", "4x16", 1);
    fixture f;
    open_fake(&f);
    ck_check_speed(&f.run);
    const ck_result *r[4];
    cr_assert_eq(find(&f.report, "fakegpu:0", "h2d_pageable", r, 4), 1);
    cr_assert_eq(r[0]->status, CK_WARN, "%s", r[0]->detail);
    cr_assert_float_eq(r[0]->measured, 12.0, 0.01);
    cr_assert(strstr(r[0]->detail, "PCIe Gen4 x16"), "%s", r[0]->detail);
    cr_assert_eq(find(&f.report, "fakegpu:0", "d2h_pageable", r, 4), 1);
    cr_assert_eq(r[0]->status, CK_WARN, "%s", r[0]->detail);
    cr_assert_eq(find(&f.report, "fakegpu:0", "device_copy", r, 4), 1);
    cr_assert_eq(r[0]->status, CK_PASS, "%s", r[0]->detail); /* 90% of 5300 GB/s */
    close_fake(&f);
}

/* Pinned copies (kmux_host_malloc) against 70% of the link: 12 GB/s of Gen4 x16's 31.5 WARNs in
 * both directions while pageable copies at 25 GB/s pass their 50%; 28 GB/s passes. */
static void pinned_case(const char *gbps, ck_status want) {
    setenv("KMUX_FAKE_GPU_PINNED_GBPS", gbps, 1);
    setenv("KMUX_FAKE_GPU_H2D_GBPS", "25", 1);
    setenv("KMUX_FAKE_GPU_PCIE", "4x16", 1);
    fixture f;
    open_fake(&f);
    ck_check_speed(&f.run);
    const ck_result *r[4];
    static const char *names[2] = {"h2d_pinned", "d2h_pinned"};
    for (int k = 0; k < 2; k++) {
        cr_assert_eq(find(&f.report, "fakegpu:0", names[k], r, 4), 1, "%s", names[k]);
        cr_assert_eq(r[0]->status, want, "%s: %s", names[k], r[0]->detail);
        cr_assert_float_eq(r[0]->measured, atof(gbps), 0.01, "%s", names[k]);
        cr_assert_float_eq(r[0]->target, 31.5 * 0.7, 0.01, "%s", names[k]);
        cr_assert(strstr(r[0]->detail, "PCIe Gen4 x16"), "%s", r[0]->detail);
    }
    cr_assert_eq(find(&f.report, "fakegpu:0", "h2d_pageable", r, 4), 1);
    cr_assert_eq(r[0]->status, CK_PASS, "%s", r[0]->detail);
    cr_assert_float_eq(r[0]->measured, 25.0, 0.01);
    close_fake(&f);
}

Test(check_plugin, pinned_twelve_gbps_on_gen4_x16_warns, .timeout = 300) {
    pinned_case("12", CK_WARN);
}

Test(check_plugin, pinned_28_gbps_on_gen4_x16_passes, .timeout = 300) {
    pinned_case("28", CK_PASS);
}

/* A plugin that refuses pinned memory gives SKIP lines with its reason, not a failure. */
Test(check_plugin, pinned_unsupported_skips, .timeout = 300) {
    setenv("KMUX_FAKE_GPU_PINNED_GBPS", "0", 1);
    fixture f;
    open_fake(&f);
    ck_check_speed(&f.run);
    const ck_result *r[4];
    cr_assert_eq(find(&f.report, "fakegpu:0", "d2h_pinned", r, 4), 1);
    cr_assert_eq(r[0]->status, CK_SKIP, "%s", r[0]->detail);
    cr_assert(strstr(r[0]->detail, "no pinned host memory"), "%s", r[0]->detail);
    close_fake(&f);
}

Test(check_plugin, function_checks_of_a_correct_device_pass) {
    fixture f;
    open_fake(&f);
    ck_check_function(&f.run);
    const ck_result *r[64];
    int n = find(&f.report, "fakegpu:0", "matmul ", r, 64);
    cr_assert(n >= 5, "%d matmul checks", n);
    for (int i = 0; i < n; i++)
        cr_assert_eq(r[i]->status, CK_PASS, "%s: %s", r[i]->name, r[i]->detail);
    cr_assert_eq(find(&f.report, "fakegpu:0", "copy_roundtrip", r, 4), 1);
    cr_assert_eq(r[0]->status, CK_PASS, "%s", r[0]->detail);
    close_fake(&f);
}

/* The environment checks need no plugin: ref only. */
Test(check_plugin, hsa_override_gfx_version_warns) {
    setenv("HSA_OVERRIDE_GFX_VERSION", "9.4.2", 1);
    kmux_context_options opt = KMUX_CONTEXT_OPTIONS_INIT;
    opt.backends = "ref";
    kmux_context *ctx = NULL;
    cr_assert_eq(kmux_context_create(&opt, &ctx), KMUX_OK);
    ck_targets t;
    ck_targets_default(&t);
    ck_report report = {0};
    ck_run run = {0};
    run.ctx = ctx;
    run.want_gpu_hip = 1;
    run.targets = &t;
    run.report = &report;
    ck_check_environment(&run);
    const ck_result *r[4];
    cr_assert_eq(find(&report, "env", "HSA_OVERRIDE_GFX_VERSION", r, 4), 1);
    cr_assert_eq(r[0]->status, CK_WARN, "%s", r[0]->detail);
    cr_assert(strstr(r[0]->detail, "9.4.2"), "%s", r[0]->detail);
    cr_assert_eq(ck_exit_status(&report.counts), 0); /* a WARN alone is not a failure */
    ck_report_free(&report);
    kmux_context_destroy(ctx);
}
