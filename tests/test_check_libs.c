/*
 * test_check_libs.c - kmux-check's library checks (tools/kmux_check/ck_libs.c) on hip:0 of the
 * real HIP plugin against the fake HIP runtime and the computing fake rocBLAS, hipBLASLt and
 * MIOpen (tests/fake_hip): the libraries are listed with their versions, each library's GEMM or
 * convolution passes against ref, and a library call that fails (the fake hipBLASLt's fault hook)
 * fails its check with the library's message while the others still pass.
 */
#include <criterion/criterion.h>
#include <dlfcn.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ck_checks.h"

typedef struct fixture {
    kmux_context *ctx;
    kmux_device *dev;
    ck_targets targets;
    ck_report report;
    ck_run run;
} fixture;

static void open_hip(fixture *f) {
#if !KMUX_TEST_HIP_CODE_OBJECTS
    cr_skip_test("kmux-hip was built without code objects (no gfx942 toolchain at configure)");
#endif
    memset(f, 0, sizeof *f);
    kmux_context_options opt = KMUX_CONTEXT_OPTIONS_INIT;
    opt.backends = "hip";
    cr_assert_eq(kmux_context_create(&opt, &f->ctx), KMUX_OK, "%s", kmux_last_error());
    cr_assert_eq(kmux_device_find(f->ctx, "hip:0", &f->dev), KMUX_OK, "%s", kmux_last_error());
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

static const ck_result *result(const ck_report *r, const char *name) {
    for (int i = 0; i < r->count; i++)
        if (strcmp(r->items[i].subject, "hip:0") == 0 && strcmp(r->items[i].name, name) == 0)
            return &r->items[i];
    cr_assert_fail("no result \"%s\"", name);
    return NULL;
}

Test(check_libs, each_amd_library_is_listed_and_computes) {
    fixture f;
    open_hip(&f);
    ck_check_libraries(&f.run);
    const ck_result *l = result(&f.report, "libraries");
    cr_expect_eq(l->status, CK_PASS);
    cr_expect(strstr(l->detail, "rocBLAS 4.0.0-kmux-fake") &&
                  strstr(l->detail, "hipBLASLt 1.0.0") && strstr(l->detail, "MIOpen 3.4.0"),
              "%s", l->detail);
    static const char *const names[] = {
        "library hipblaslt matmul f32", "library rocblas_gemm_ex matmul f32",
        "library kmux-gpu matmul f32", "library miopen conv_fwd f16",
        "library kmux-gpu conv_fwd f16"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        const ck_result *r = result(&f.report, names[i]);
        cr_expect_eq(r->status, CK_PASS, "%s: %s", names[i], r->detail);
    }
    ck_report_free(&f.report);
    kmux_context_destroy(f.ctx);
}

Test(check_libs, a_failing_library_fails_its_check_only) {
    fixture f;
    open_hip(&f);
    void *h = dlopen(getenv("KMUX_HIPBLASLT_LIBRARY"), RTLD_NOW);
    cr_assert(h, "the fake hipBLASLt: %s", dlerror());
    void (*fail_call)(long, int) = NULL;
    *(void **)&fail_call = dlsym(h, "kmux_fake_hipblaslt_fail_call");
    cr_assert(fail_call);
    fail_call(1, 5 /* HIPBLAS_STATUS_EXECUTION_FAILED */);
    ck_check_libraries(&f.run);
    const ck_result *r = result(&f.report, "library hipblaslt matmul f32");
    cr_expect_eq(r->status, CK_FAIL, "%s", r->detail);
    cr_expect(strstr(r->detail, "hipblasLtMatmul") &&
                  strstr(r->detail, "HIPBLAS_STATUS_EXECUTION_FAILED (5)"),
              "%s", r->detail);
    r = result(&f.report, "library rocblas_gemm_ex matmul f32");
    cr_expect_eq(r->status, CK_PASS, "%s", r->detail);
    ck_report_free(&f.report);
    kmux_context_destroy(f.ctx);
    dlclose(h);
}
