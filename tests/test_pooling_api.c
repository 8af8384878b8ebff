/*
 * test_pooling_api.c - the pooling family's API on ref: every invalid description and argument
 * gets KMUX_ERR_INVALID_ARGUMENT with a message naming the field and its value, the plan pointer
 * untouched; kmux_pooling_output_dims; an empty batch writes nothing; the names of the table.
 */
#include <string.h>

#include "test_util.h"

static kmux_context *ctx;
static kmux_device *ref;
static kmux_stream *s;

static void setup(void) {
    ctx = tu_context();
    ref = tu_device(ctx, "ref");
    cr_assert_not_null(ref);
    TU_OK(kmux_stream_create(ref, &s));
}

static void teardown(void) {
    kmux_stream_destroy(s);
    kmux_context_destroy(ctx);
}

TestSuite(pooling_api, .init = setup, .fini = teardown);

static kmux_pooling_desc base(void) {
    kmux_pooling_desc d = KMUX_POOLING_DESC_INIT;
    d.n = 2, d.c = 3, d.h = 8, d.w = 6;
    d.kernel_h = d.kernel_w = 3, d.stride_h = d.stride_w = 2;
    d.pad_top = d.pad_bottom = d.pad_left = d.pad_right = 1;
    return d;
}

static void refused(const kmux_pooling_desc *d, const char *needle) {
    kmux_plan *plan = (kmux_plan *)0x1;
    kmux_status st = kmux_pooling_plan_create(ref, d, NULL, &plan);
    cr_expect_eq(st, KMUX_ERR_INVALID_ARGUMENT, "%s: got %s (%s)", needle, kmux_status_str(st),
                 kmux_last_error());
    cr_expect(strstr(kmux_last_error(), needle) != NULL, "message '%s' lacks '%s'",
              kmux_last_error(), needle);
    cr_expect_eq(plan, (kmux_plan *)0x1, "the plan pointer was written");
    int64_t p = -7, q = -7;
    cr_expect_eq(kmux_pooling_output_dims(d, &p, &q), KMUX_ERR_INVALID_ARGUMENT,
                 "output_dims accepted what plan_create refused (%s)", needle);
    cr_expect(p == -7 && q == -7, "output_dims wrote p, q for an invalid description");
}

Test(pooling_api, bad_descriptions_are_named) {
    kmux_pooling_desc d = base();
    d.alg = (kmux_pooling_alg)9;
    refused(&d, "desc->alg = 9");
    d = base(), d.prop = (kmux_prop)0;
    refused(&d, "desc->prop = 0");
    d = base(), d.layout = (kmux_layout)5;
    refused(&d, "desc->layout = 5");
    d = base(), d.dtype = KMUX_F64;
    refused(&d, "desc->dtype = f64");
    d = base(), d.n = -1;
    refused(&d, "desc->n = -1");
    d = base(), d.c = -2;
    refused(&d, "desc->c = -2");
    d = base(), d.h = 0;
    refused(&d, "desc->h = 0");
    d = base(), d.kernel_w = 0;
    refused(&d, "desc->kernel_w = 0");
    d = base(), d.stride_h = -1;
    refused(&d, "desc->stride_h = -1");
    d = base(), d.pad_left = -1;
    refused(&d, "desc->pad_left = -1");
    d = base(), d.pad_bottom = 3;
    refused(&d, "desc->pad_bottom = 3 must be in [0, desc->kernel_h = 3)");
    d = base(), d.kernel_h = 11, d.pad_top = d.pad_bottom = 1; /* 8 + 2 < 11 */
    refused(&d, "the output is empty");
    d = base(), d.n = d.c = INT64_MAX / 4;
    refused(&d, "overflows");
    d = base(), d.struct_size = 8;
    refused(&d, "desc->struct_size = 8");
    kmux_plan *plan = NULL;
    cr_expect_eq(kmux_pooling_plan_create(ref, NULL, NULL, &plan), KMUX_ERR_INVALID_ARGUMENT);
    int64_t p, q;
    cr_expect_eq(kmux_pooling_output_dims(NULL, &p, &q), KMUX_ERR_INVALID_ARGUMENT);
    d = base();
    cr_expect_eq(kmux_pooling_output_dims(&d, NULL, &q), KMUX_ERR_INVALID_ARGUMENT);
}

Test(pooling_api, output_dims_follow_the_floor_formula) {
    kmux_pooling_desc d = base();
    int64_t p = 0, q = 0;
    TU_OK(kmux_pooling_output_dims(&d, &p, &q));
    cr_expect(p == 4 && q == 3, "8x6, 3x3/2 pad 1: %lldx%lld, want 4x3", (long long)p,
              (long long)q);
    d.h = d.w = 112, d.pad_bottom = d.pad_right = 1; /* ResNet-50's max pool */
    TU_OK(kmux_pooling_output_dims(&d, &p, &q));
    cr_expect(p == 56 && q == 56, "112x112 3x3/2 pad 1: %lldx%lld, want 56x56", (long long)p,
              (long long)q);
    d.h = 1, d.w = 1, d.kernel_h = d.kernel_w = 3, d.stride_h = d.stride_w = 1;
    d.pad_top = d.pad_bottom = d.pad_left = d.pad_right = 2; /* y larger than x */
    TU_OK(kmux_pooling_output_dims(&d, &p, &q));
    cr_expect(p == 3 && q == 3, "1x1, 3x3/1 pad 2: %lldx%lld, want 3x3", (long long)p,
              (long long)q);
}

Test(pooling_api, bad_arguments_are_named) {
    kmux_pooling_desc d = base();
    kmux_plan *fwd = NULL, *bwd = NULL, *bavg = NULL;
    TU_OK(kmux_pooling_plan_create(ref, &d, NULL, &fwd));
    d.prop = KMUX_PROP_BACKWARD;
    TU_OK(kmux_pooling_plan_create(ref, &d, NULL, &bwd));
    d.alg = KMUX_POOLING_AVG_EXCLUDE_PAD;
    TU_OK(kmux_pooling_plan_create(ref, &d, NULL, &bavg));
    float x[2 * 3 * 8 * 6] = {0}, y[2 * 3 * 4 * 3] = {0}, dx[2 * 3 * 8 * 6];
    kmux_pooling_args a = KMUX_POOLING_ARGS_INIT;
    a.y = y;
    cr_expect_eq(kmux_pooling_execute(fwd, s, &a), KMUX_ERR_INVALID_ARGUMENT);
    cr_expect(strstr(kmux_last_error(), "args->x is NULL (max forward needs it)"), "%s",
              kmux_last_error());
    a.x = x, a.y = x + 4; /* y inside x */
    cr_expect_eq(kmux_pooling_execute(fwd, s, &a), KMUX_ERR_INVALID_ARGUMENT);
    cr_expect(strstr(kmux_last_error(), "args->y ="), "%s", kmux_last_error());
    cr_expect(strstr(kmux_last_error(), "overlaps args->x"), "%s", kmux_last_error());
    a.y = y;
    TU_OK(kmux_pooling_execute(fwd, s, &a));
    /* backward of MAX needs x; of an average it does not */
    kmux_pooling_args b = KMUX_POOLING_ARGS_INIT;
    b.dy = y, b.dx = dx;
    cr_expect_eq(kmux_pooling_execute(bwd, s, &b), KMUX_ERR_INVALID_ARGUMENT);
    cr_expect(strstr(kmux_last_error(), "args->x is NULL (max backward needs it)"), "%s",
              kmux_last_error());
    TU_OK(kmux_pooling_execute(bavg, s, &b));
    b.dx = (float *)y; /* dx over dy */
    cr_expect_eq(kmux_pooling_execute(bavg, s, &b), KMUX_ERR_INVALID_ARGUMENT);
    cr_expect(strstr(kmux_last_error(), "args->dx ="), "%s", kmux_last_error());
    b.dx = NULL;
    cr_expect_eq(kmux_pooling_execute(bavg, s, &b), KMUX_ERR_INVALID_ARGUMENT);
    cr_expect(strstr(kmux_last_error(), "args->dx is NULL"), "%s", kmux_last_error());
    cr_expect_eq(kmux_pooling_execute(fwd, s, NULL), KMUX_ERR_INVALID_ARGUMENT);
    kmux_pooling_args small = a;
    small.struct_size = 8;
    cr_expect_eq(kmux_pooling_execute(fwd, s, &small), KMUX_ERR_INVALID_ARGUMENT);
    cr_expect(strstr(kmux_last_error(), "args->struct_size = 8"), "%s", kmux_last_error());
    TU_OK(kmux_plan_destroy(fwd));
    TU_OK(kmux_plan_destroy(bwd));
    TU_OK(kmux_plan_destroy(bavg));
}

Test(pooling_api, an_empty_batch_writes_nothing) {
    kmux_pooling_desc d = base();
    d.n = 0;
    kmux_plan *plan = NULL;
    TU_OK(kmux_pooling_plan_create(ref, &d, NULL, &plan));
    kmux_pooling_args a = KMUX_POOLING_ARGS_INIT; /* NULL tensors: nothing to read or write */
    TU_OK(kmux_pooling_execute(plan, s, &a));
    TU_OK(kmux_plan_destroy(plan));
}

Test(pooling_api, the_table_names_every_algorithm) {
    cr_expect_str_eq(kmux_pooling_alg_name(KMUX_POOLING_MAX), "max");
    cr_expect_str_eq(kmux_pooling_alg_name(KMUX_POOLING_AVG_INCLUDE_PAD), "avg_include_pad");
    cr_expect_str_eq(kmux_pooling_alg_name(KMUX_POOLING_AVG_EXCLUDE_PAD), "avg_exclude_pad");
    cr_expect_str_eq(kmux_pooling_alg_name((kmux_pooling_alg)0), "?");
    cr_expect_str_eq(kmux_pooling_alg_name((kmux_pooling_alg)4), "?");
}
