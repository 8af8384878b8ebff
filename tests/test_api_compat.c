/*
 * test_api_compat.c - callers compiled against an older kmux.h: descriptors, argument and option
 * structs with a SHORTER struct_size are accepted, the fields beyond it take their _INIT
 * defaults (whatever bytes lie there), and a struct_size too small for the required fields is
 * KMUX_ERR_INVALID_ARGUMENT naming struct_size.
 */
#include <stddef.h>
#include <string.h>

#include "test_util.h"

#define END_OF(type, field) (offsetof(type, field) + sizeof(((type *)0)->field))

static kmux_context *g_ctx;
static kmux_device *g_ref;
static kmux_stream *g_st;

static void setup(void) {
    g_ctx = tu_context();
    TU_OK(kmux_device_find(g_ctx, "ref", &g_ref));
    TU_OK(kmux_stream_create(g_ref, &g_st));
}
static void teardown(void) {
    kmux_stream_destroy(g_st);
    kmux_context_destroy(g_ctx);
}

TestSuite(compat, .init = setup, .fini = teardown);

/* C(2 x 2) = A(2 x 3) B(3 x 2), small integers, C preset to 100 (beta = 0 ignores it). */
static void expect_product(const float *A, const float *B, const float *C) {
    for (int i = 0; i < 2; i++)
        for (int j = 0; j < 2; j++) {
            float s = 0.0f;
            for (int l = 0; l < 3; l++)
                s += A[i * 3 + l] * B[l * 2 + j];
            cr_expect_eq(C[i * 2 + j], s, "C[%d][%d] = %g, want %g", i, j, C[i * 2 + j], s);
        }
}

Test(compat, older_matmul_desc_and_args_take_the_defaults) {
    float A[6] = {1, 2, 3, -1, 0, 2}, B[6] = {2, 1, 0, -3, 1, 1}, C[4] = {100, 100, 100, 100};
    float one = 1.0f, zero = 0.0f;
    kmux_matmul_desc d = KMUX_MATMUL_DESC_INIT;
    d.m = 2, d.n = 2, d.k = 3, d.lda = 3, d.ldb = 2, d.ldc = 2;
    /* an older caller's struct ends before epilogue: whatever lies beyond must be ignored */
    d.epilogue = 0x40;
    d.bias_type = (kmux_dtype)77;
    d.struct_size = offsetof(kmux_matmul_desc, epilogue);
    kmux_plan *plan = NULL;
    TU_OK(kmux_matmul_plan_create(g_ref, &d, NULL, &plan));
    kmux_matmul_args a = KMUX_MATMUL_ARGS_INIT;
    a.alpha = &one, a.beta = &zero, a.A = A, a.B = B, a.C = C;
    a.bias = (const void *)(uintptr_t)1; /* garbage beyond the older struct_size */
    a.a_scale = a.b_scale = a.d_scale = (const float *)(uintptr_t)8;
    a.amax_d = (float *)(uintptr_t)8;
    a.struct_size = END_OF(kmux_matmul_args, C);
    TU_OK(kmux_matmul_execute(plan, g_st, &a));
    expect_product(A, B, C);
    TU_OK(kmux_plan_destroy(plan));

    d.struct_size = offsetof(kmux_matmul_desc, compute_type); /* misses a required field */
    TU_STATUS(KMUX_ERR_INVALID_ARGUMENT, kmux_matmul_plan_create(g_ref, &d, NULL, &plan));
    cr_expect(strstr(kmux_last_error(), "desc->struct_size =") != NULL, "%s", kmux_last_error());
    d.struct_size = sizeof d;
    d.epilogue = KMUX_EPILOGUE_NONE, d.bias_type = KMUX_F32;
    TU_OK(kmux_matmul_plan_create(g_ref, &d, NULL, &plan));
    a.struct_size = offsetof(kmux_matmul_args, C);
    TU_STATUS(KMUX_ERR_INVALID_ARGUMENT, kmux_matmul_execute(plan, g_st, &a));
    cr_expect(strstr(kmux_last_error(), "args->struct_size =") != NULL, "%s", kmux_last_error());
    TU_OK(kmux_plan_destroy(plan));
}

Test(compat, older_prefs_take_the_defaults) {
    kmux_matmul_desc d = KMUX_MATMUL_DESC_INIT;
    d.m = d.n = d.k = d.lda = d.ldb = d.ldc = 4;
    kmux_plan_prefs p = KMUX_PLAN_PREFS_INIT;
    p.allow_emulation = 7; /* beyond the older size: not read (else INVALID: must be 0 or 1) */
    p.require_deterministic = 9;
    p.struct_size = END_OF(kmux_plan_prefs, max_workspace_bytes);
    kmux_plan *plan = NULL;
    TU_OK(kmux_matmul_plan_create(g_ref, &d, &p, &plan));
    TU_OK(kmux_plan_destroy(plan));
    p.struct_size = sizeof p;
    TU_STATUS(KMUX_ERR_INVALID_ARGUMENT, kmux_matmul_plan_create(g_ref, &d, &p, &plan));
    p.struct_size = sizeof(size_t);
    TU_STATUS(KMUX_ERR_INVALID_ARGUMENT, kmux_matmul_plan_create(g_ref, &d, &p, &plan));
    cr_expect(strstr(kmux_last_error(), "prefs->struct_size =") != NULL, "%s", kmux_last_error());
}

Test(compat, conv_structs_need_their_required_fields) {
    kmux_conv2d_desc c = KMUX_CONV2D_DESC_INIT;
    c.n = 1, c.c = 1, c.h = 3, c.w = 3, c.k = 1, c.r = 1, c.s = 1;
    c.struct_size = END_OF(kmux_conv2d_desc, compute_type);
    kmux_plan *plan = NULL;
    TU_OK(kmux_conv2d_plan_create(g_ref, &c, NULL, &plan));
    float x[9] = {1, 2, 3, 4, 5, 6, 7, 8, 9}, w[1] = {2}, y[9] = {0}, one = 1.0f, zero = 0.0f;
    kmux_conv2d_args a = KMUX_CONV2D_ARGS_INIT;
    a.alpha = &one, a.beta = &zero, a.x = x, a.w = w, a.y = y;
    a.struct_size = END_OF(kmux_conv2d_args, y);
    TU_OK(kmux_conv2d_execute(plan, g_st, &a));
    for (int i = 0; i < 9; i++)
        cr_expect_eq(y[i], 2.0f * x[i], "y[%d] = %g", i, y[i]);
    a.struct_size = offsetof(kmux_conv2d_args, y);
    TU_STATUS(KMUX_ERR_INVALID_ARGUMENT, kmux_conv2d_execute(plan, g_st, &a));
    cr_expect(strstr(kmux_last_error(), "args->struct_size =") != NULL, "%s", kmux_last_error());
    TU_OK(kmux_plan_destroy(plan));
    c.struct_size = offsetof(kmux_conv2d_desc, compute_type);
    TU_STATUS(KMUX_ERR_INVALID_ARGUMENT, kmux_conv2d_plan_create(g_ref, &c, NULL, &plan));
    int64_t p = 0, q = 0;
    TU_STATUS(KMUX_ERR_INVALID_ARGUMENT, kmux_conv2d_output_dims(&c, &p, &q));
    cr_expect(strstr(kmux_last_error(), "desc->struct_size =") != NULL, "%s", kmux_last_error());
}

Test(compat, older_cast_options_take_the_defaults) {
    float src[4] = {1.0f, -2.5f, 3.0f, 1e6f};
    uint16_t dst[4] = {0};
    kmux_cast_options o = KMUX_CAST_OPTIONS_INIT;
    o.scale = (const float *)(uintptr_t)8; /* beyond the older size: must not be read */
    o.amax = (float *)(uintptr_t)8;
    o.struct_size = END_OF(kmux_cast_options, saturate);
    TU_OK(kmux_cast(g_st, 4, src, KMUX_F32, dst, KMUX_BF16, &o));
    cr_expect_eq(dst[0], 0x3f80);
    cr_expect_eq(dst[1], 0xc020);
    o.struct_size = sizeof(size_t);
    TU_STATUS(KMUX_ERR_INVALID_ARGUMENT, kmux_cast(g_st, 4, src, KMUX_F32, dst, KMUX_BF16, &o));
    cr_expect(strstr(kmux_last_error(), "opts->struct_size =") != NULL, "%s", kmux_last_error());
}
