/*
 * test_messages.c - every argument error names exactly the argument that is wrong, with its
 * value, and no innocent one: e.g. c = 4, k = 6, groups = 4 blames k, not c. Each case checks
 * that the message contains what names the culprit and none of the strings that would blame an
 * argument that is right.
 */
#include "test_util.h"

#include <stdint.h>
#include <string.h>

static kmux_context *g_ctx;
static kmux_device *g_ref;
static kmux_stream *g_s;

static void setup(void) {
    g_ctx = tu_context();
    g_ref = tu_device(g_ctx, "ref");
    cr_assert_not_null(g_ref);
    TU_OK(kmux_stream_create(g_ref, &g_s));
}

static void teardown(void) {
    kmux_stream_destroy(g_s);
    kmux_context_destroy(g_ctx);
}

TestSuite(messages, .init = setup, .fini = teardown);

/* The last call failed with INVALID_ARGUMENT; its message has `want` and none of `innocent`. */
static void blames(kmux_status st, const char *what, const char *want,
                   const char *const *innocent) {
    const char *msg = kmux_last_error();
    cr_assert_eq(st, KMUX_ERR_INVALID_ARGUMENT, "%s: %s (%s)", what, kmux_status_str(st), msg);
    cr_expect(strstr(msg, want) != NULL, "%s: \"%s\" does not name \"%s\"", what, msg, want);
    for (; innocent && *innocent; innocent++)
        cr_expect(strstr(msg, *innocent) == NULL, "%s: \"%s\" blames \"%s\", which is right", what,
                  msg, *innocent);
}

static kmux_conv2d_desc conv(void) {
    kmux_conv2d_desc d = KMUX_CONV2D_DESC_INIT;
    d.n = 1, d.c = 4, d.h = 8, d.w = 8, d.k = 4, d.r = 3, d.s = 3;
    return d;
}

static kmux_status conv_plan(const kmux_conv2d_desc *d) {
    kmux_plan *p = NULL;
    kmux_status st = kmux_conv2d_plan_create(g_ref, d, NULL, &p);
    if (st == KMUX_OK) kmux_plan_destroy(p);
    return st;
}

Test(messages, groups_blames_k_not_c) {
    kmux_conv2d_desc d = conv();
    d.c = 4, d.k = 6, d.groups = 4;
    blames(conv_plan(&d), "k % groups", "k = 6", (const char *[]){"c = 4", NULL});
    d.c = 6, d.k = 4, d.groups = 4;
    blames(conv_plan(&d), "c % groups", "c = 6", (const char *[]){"k = 4", NULL});
}

Test(messages, filter_larger_than_input_names_the_axis) {
    kmux_conv2d_desc d = conv();
    d.h = 2, d.r = 5; /* too tall; the width is fine */
    blames(conv_plan(&d), "tall filter", "r = 5", (const char *[]){"s = ", "w = ", NULL});
    d = conv();
    d.w = 2, d.s = 4, d.dilation_w = 1;
    blames(conv_plan(&d), "wide filter", "s = 4", (const char *[]){"r = ", "h = ", NULL});
}

Test(messages, dtype_errors_name_one_tensor) {
    kmux_conv2d_desc d = conv();
    d.w_type = KMUX_F16;
    blames(conv_plan(&d), "w_type differs", "w_type = f16", (const char *[]){"y_type", NULL});
    d = conv();
    d.y_type = KMUX_BF16;
    blames(conv_plan(&d), "y_type differs", "y_type = bf16", (const char *[]){"w_type", NULL});
    d = conv();
    d.y_type = (kmux_dtype)99;
    blames(conv_plan(&d), "y_type invalid", "y_type = 99",
           (const char *[]){"x_type = ", "w_type = ", NULL});
    d = conv();
    d.x_type = d.w_type = d.y_type = KMUX_F16;
    d.compute_type = KMUX_COMPUTE_F16;
    blames(conv_plan(&d), "compute type", "compute_type = ", NULL);
    d = conv();
    d.x_type = d.w_type = d.y_type = KMUX_I8;
    blames(conv_plan(&d), "i8 conv", "x_type = i8", (const char *[]){"compute_type = ", NULL});
}

Test(messages, conv_overflow_names_the_tensor) {
    kmux_conv2d_desc d = conv();
    d.n = INT64_MAX / 4, d.c = 4; /* x overflows */
    blames(conv_plan(&d), "x too large", "tensor x", (const char *[]){"tensor w", NULL});
    d = conv();
    d.k = INT64_MAX / 2, d.c = 4; /* w = k * c * r * s overflows, x does not */
    blames(conv_plan(&d), "w too large", "tensor w", (const char *[]){"tensor x", NULL});
    d = conv();
    d.h = INT64_MAX - 1, d.pad_top = 1, d.pad_bottom = 1;
    blames(conv_plan(&d), "padded height", "h = ", (const char *[]){"w = 8", NULL});
}

Test(messages, gemm_overflow_blames_ld_or_stride) {
    kmux_matmul_desc d = KMUX_MATMUL_DESC_INIT;
    d.m = 4, d.n = 4, d.k = 4, d.lda = INT64_MAX / 2, d.ldb = 4, d.ldc = 4;
    kmux_plan *p = NULL;
    blames(kmux_matmul_plan_create(g_ref, &d, NULL, &p), "huge lda",
           "lda = ", (const char *[]){"stride_a", "ldb", NULL});
    d.lda = 4, d.batch_count = 3, d.stride_a = INT64_MAX / 2, d.stride_b = 16, d.stride_c = 16;
    blames(kmux_matmul_plan_create(g_ref, &d, NULL, &p), "huge stride_a",
           "stride_a = ", (const char *[]){"lda = ", NULL});
}

Test(messages, prefs_name_one_field) {
    kmux_conv2d_desc d = conv();
    kmux_plan_prefs prefs = KMUX_PLAN_PREFS_INIT;
    prefs.require_deterministic = 7;
    kmux_plan *p = NULL;
    blames(kmux_conv2d_plan_create(g_ref, &d, &prefs, &p), "require_deterministic",
           "require_deterministic = 7", (const char *[]){"allow_emulation", NULL});
}

Test(messages, amp_sizes_negative_or_overflowing) {
    float x = 1, inv = 1, found = 0;
    void *t[1] = {&x};
    kmux_dtype ty[1] = {KMUX_F32};
    int64_t n[1] = {-3};
    blames(kmux_unscale_check_finite(g_s, 1, t, n, ty, &inv, &found), "negative size",
           "sizes[0] = -3 is negative", (const char *[]){"overflow", NULL});
    n[0] = INT64_MAX / 2;
    blames(kmux_unscale_check_finite(g_s, 1, t, n, ty, &inv, &found), "huge size",
           "overflow the address space", (const char *[]){"negative", NULL});
    float buf[8] = {0};
    blames(kmux_cast(g_s, 4, buf, KMUX_F32, buf + 2, KMUX_F32, NULL), "overlap", "dst = ", NULL);
}
