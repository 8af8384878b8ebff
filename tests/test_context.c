/*
 * test_context.c - contexts, device enumeration and lookup, properties, names, the verbose trace
 * and the plan cache seen from outside.
 */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "test_util.h"

#include <criterion/redirect.h>

Test(context, ref_is_always_a_device) {
    kmux_context *ctx = tu_context();
    kmux_device *ref = NULL;
    TU_OK(kmux_device_find(ctx, "ref", &ref));
    kmux_device_props p;
    TU_OK(kmux_device_props_get(ref, &p));
    cr_expect_str_eq(p.id, "ref");
    cr_expect_str_eq(p.backend, "ref");
    cr_expect_eq(p.is_host, 1);
    for (int t = KMUX_F64; t <= KMUX_I32; t++)
        cr_expect(p.dtype_support[t], "ref supports every dtype, not %s", kmux_dtype_name(t));
    TU_OK(kmux_context_destroy(ctx));
}

Test(context, every_device_has_consistent_properties) {
    kmux_context *ctx = tu_context();
    int n = 0, nb = 0;
    TU_OK(kmux_device_count(ctx, &n));
    TU_OK(kmux_backend_count(ctx, &nb));
    int from_backends = 0;
    for (int i = 0; i < nb; i++) {
        kmux_backend_info b;
        TU_OK(kmux_backend_info_get(ctx, i, &b));
        cr_expect(b.available ? b.reason[0] == '\0' : b.reason[0] != '\0',
                  "backend %s: available=%d reason=\"%s\"", b.name, b.available, b.reason);
        from_backends += b.device_count;
    }
    cr_expect_eq(from_backends, n);
    for (int i = 0; i < n; i++) {
        kmux_device *d = NULL;
        TU_OK(kmux_device_get(ctx, i, &d));
        kmux_device_props p;
        TU_OK(kmux_device_props_get(d, &p));
        cr_expect(p.id[0] && p.name[0] && p.backend[0], "device %d has empty names", i);
        cr_expect_gt(p.compute_units, 0, "%s", p.id);
        kmux_device *again = NULL;
        TU_OK(kmux_device_find(ctx, p.id, &again));
        cr_expect_eq(again, d, "find(\"%s\") returns that device", p.id);
    }
    TU_OK(kmux_context_destroy(ctx));
}

Test(context, auto_and_default_device) {
    kmux_context *ctx = tu_context();
    kmux_device *d = NULL;
    TU_OK(kmux_device_find(ctx, "auto", &d));
    TU_OK(kmux_context_destroy(ctx));

    kmux_context_options o = KMUX_CONTEXT_OPTIONS_INIT;
    o.default_device = "ref";
    TU_OK(kmux_context_create(&o, &ctx));
    TU_OK(kmux_device_find(ctx, "auto", &d));
    cr_expect_str_eq(kmux_device_id(d), "ref");
    TU_OK(kmux_context_destroy(ctx));

    setenv("KMUX_DEVICE", "nonexistent:3", 1);
    ctx = tu_context();
    TU_STATUS(KMUX_ERR_NOT_FOUND, kmux_device_find(ctx, "auto", &d));
    cr_expect(strstr(kmux_last_error(), "nonexistent:3") != NULL, "%s", kmux_last_error());
    TU_OK(kmux_context_destroy(ctx));
    unsetenv("KMUX_DEVICE");
}

Test(context, names_and_sizes) {
    cr_expect_str_eq(kmux_status_str(KMUX_ERR_UNSUPPORTED), "KMUX_ERR_UNSUPPORTED");
    cr_expect_str_eq(kmux_dtype_name(KMUX_F8_E4M3_FNUZ), "e4m3fnuz");
    cr_expect_str_eq(kmux_dtype_name(KMUX_F8_E5M2), "e5m2");
    cr_expect_str_eq(kmux_dtype_name((kmux_dtype)99), "?");
    cr_expect_eq(kmux_dtype_size(KMUX_BF16), 2);
    cr_expect_eq(kmux_dtype_size(KMUX_F8_E5M2_FNUZ), 1);
    cr_expect_eq(kmux_dtype_size((kmux_dtype)0), 0);
    cr_expect_str_eq(kmux_compute_type_name(KMUX_COMPUTE_F32_FAST_TF32), "f32_fast_tf32");
    cr_expect(strncmp(kmux_version(), "0.", 2) == 0, "%s", kmux_version());
}

Test(context, verbose_trace_lines, .init = cr_redirect_stderr) {
    kmux_context_options o = KMUX_CONTEXT_OPTIONS_INIT;
    o.verbose = 2;
    kmux_context *ctx = NULL;
    TU_OK(kmux_context_create(&o, &ctx));
    kmux_device *ref;
    kmux_stream *s;
    TU_OK(kmux_device_find(ctx, "ref", &ref));
    TU_OK(kmux_stream_create(ref, &s));
    float A[4] = {1, 2, 3, 4}, C[4];
    const float one = 1, zero = 0;
    TU_OK(kmux_gemm_ex(s, KMUX_ROW_MAJOR, KMUX_NO_TRANS, KMUX_NO_TRANS, 2, 2, 2, &one, A, KMUX_F32,
                       2, A, KMUX_F32, 2, &zero, C, KMUX_F32, 2, KMUX_COMPUTE_F32));
    TU_OK(kmux_stream_destroy(s));
    TU_OK(kmux_context_destroy(ctx));
    fflush(stderr);
    FILE *f = cr_get_redirected_stderr();
    char line[2048];
    int exec = 0, create = 0, search = 0;
    while (fgets(line, sizeof line, f)) {
        cr_expect(strncmp(line, "kmux_verbose,", 13) == 0, "not a trace line: %s", line);
        if (strncmp(line, "kmux_verbose,exec,ref,matmul,", 29) == 0) {
            exec++;
            cr_expect(strstr(line, ",f32:f32:f32,f32,\"--dt=f32 --stag=ab --wtag=ab --dtag=ab "
                                   "--compute=f32 2x2:2x2\",") != NULL,
                      "%s", line);
        }
        if (strstr(line, ",create,ref,matmul,")) create++;
        if (strstr(line, ",load,,,,,,,,\"search,")) search++;
    }
    cr_expect_eq(exec, 1, "one exec line per executed call");
    cr_expect_eq(create, 1, "one plan creation");
    cr_expect_geq(search, 1, "level 2 shows the plugin search");
}

Test(context, gemm_reuses_cached_plans, .init = cr_redirect_stderr) {
    kmux_context_options o = KMUX_CONTEXT_OPTIONS_INIT;
    o.verbose = 2;
    kmux_context *ctx = NULL;
    TU_OK(kmux_context_create(&o, &ctx));
    kmux_device *ref;
    kmux_stream *s;
    TU_OK(kmux_device_find(ctx, "ref", &ref));
    TU_OK(kmux_stream_create(ref, &s));
    float A[9] = {0}, C[9];
    const float one = 1, zero = 0;
    for (int rep = 0; rep < 3; rep++)
        for (int m = 2; m <= 3; m++)
            TU_OK(kmux_gemm_ex(s, KMUX_ROW_MAJOR, KMUX_NO_TRANS, KMUX_NO_TRANS, m, 3, 3, &one, A,
                               KMUX_F32, 3, A, KMUX_F32, 3, &zero, C, KMUX_F32, 3,
                               KMUX_COMPUTE_F32));
    TU_OK(kmux_stream_destroy(s));
    TU_OK(kmux_context_destroy(ctx));
    fflush(stderr);
    FILE *f = cr_get_redirected_stderr();
    char line[2048];
    int create = 0, exec = 0;
    while (fgets(line, sizeof line, f)) {
        if (strstr(line, ",create,ref,matmul,")) create++;
        if (strstr(line, ",exec,ref,matmul,")) exec++;
    }
    cr_expect_eq(create, 2, "two shapes -> two plans, however many calls");
    cr_expect_eq(exec, 6);
}

Test(context, trace_stops_when_the_verbose_context_is_gone, .init = cr_redirect_stderr) {
    kmux_context_options o = KMUX_CONTEXT_OPTIONS_INIT;
    o.verbose = 1;
    kmux_context *loud = NULL, *quiet = NULL;
    TU_OK(kmux_context_create(&o, &loud));
    TU_OK(kmux_context_destroy(loud));
    o.verbose = 0;
    TU_OK(kmux_context_create(&o, &quiet));
    kmux_device *ref;
    kmux_stream *s;
    TU_OK(kmux_device_find(quiet, "ref", &ref));
    TU_OK(kmux_stream_create(ref, &s));
    float A[4] = {1, 2, 3, 4}, C[4];
    const float one = 1, zero = 0;
    TU_OK(kmux_gemm_ex(s, KMUX_ROW_MAJOR, KMUX_NO_TRANS, KMUX_NO_TRANS, 2, 2, 2, &one, A, KMUX_F32,
                       2, A, KMUX_F32, 2, &zero, C, KMUX_F32, 2, KMUX_COMPUTE_F32));
    TU_OK(kmux_stream_destroy(s));
    TU_OK(kmux_context_destroy(quiet));
    fflush(stderr);
    FILE *f = cr_get_redirected_stderr();
    char line[2048];
    int exec = 0;
    while (fgets(line, sizeof line, f))
        if (strstr(line, ",exec,")) exec++;
    cr_expect_eq(exec, 0, "a destroyed verbose context must not keep the trace on");
}
