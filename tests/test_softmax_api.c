/*
 * test_softmax_api.c - the softmax family's API on ref: every invalid description and argument
 * gets KMUX_ERR_INVALID_ARGUMENT with a message naming the field and its value and nothing is
 * written; empty ops; hand-computed values.
 */
#include <math.h>
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

TestSuite(softmax_api, .init = setup, .fini = teardown);

static void refused(const kmux_softmax_desc *d, const char *needle) {
    kmux_plan *plan = (kmux_plan *)0x1;
    kmux_status st = kmux_softmax_plan_create(ref, d, NULL, &plan);
    cr_expect_eq(st, KMUX_ERR_INVALID_ARGUMENT, "%s: got %s (%s)", needle, kmux_status_str(st),
                 kmux_last_error());
    cr_expect(strstr(kmux_last_error(), needle) != NULL, "message '%s' lacks '%s'",
              kmux_last_error(), needle);
    cr_expect_eq(plan, (kmux_plan *)0x1, "the plan pointer was written");
}

Test(softmax_api, bad_descriptions_are_named) {
    const kmux_softmax_desc base = KMUX_SOFTMAX_DESC_INIT;
    kmux_softmax_desc d = base;
    d.alg = 7;
    refused(&d, "desc->alg = 7");
    d = base, d.prop = 0;
    refused(&d, "desc->prop = 0");
    d = base, d.alg = KMUX_SOFTMAX_CROSS_ENTROPY, d.prop = KMUX_PROP_BACKWARD;
    refused(&d, "cross_entropy has no backward");
    d = base, d.rows = -1;
    refused(&d, "desc->rows = -1");
    d = base, d.cols = 0;
    refused(&d, "desc->cols = 0");
    d = base, d.rows = INT64_MAX / 2, d.cols = 4;
    refused(&d, "overflows");
    d = base, d.dtype = KMUX_I32;
    refused(&d, "desc->dtype = i32");
    d = base, d.label_smoothing = 2.0f;
    refused(&d, "desc->label_smoothing = 2");
    d = base, d.label_smoothing = NAN;
    refused(&d, "desc->label_smoothing = nan");
    d = base, d.struct_size = 4;
    refused(&d, "desc->struct_size = 4");
    cr_expect_str_eq(kmux_softmax_alg_name(KMUX_SOFTMAX_CROSS_ENTROPY), "cross_entropy");
}

Test(softmax_api, bad_arguments_are_named_and_nothing_is_written) {
    kmux_softmax_desc d = KMUX_SOFTMAX_DESC_INIT;
    d.alg = KMUX_SOFTMAX_CROSS_ENTROPY;
    d.rows = 2, d.cols = 3;
    kmux_plan *plan = NULL;
    TU_OK(kmux_softmax_plan_create(ref, &d, NULL, &plan));
    float x[6] = {1, 2, 3, 3, 2, 1}, loss[2] = {42, 42}, dx[6];
    int32_t labels[2] = {2, 0};
    kmux_softmax_args a = KMUX_SOFTMAX_ARGS_INIT;
    a.x = x, a.loss = loss;
    TU_STATUS(KMUX_ERR_INVALID_ARGUMENT, kmux_softmax_execute(plan, s, &a));
    cr_expect(strstr(kmux_last_error(), "args->labels is NULL"), "%s", kmux_last_error());
    a.labels = labels;
    a.dx = x + 2; /* overlaps the logits */
    TU_STATUS(KMUX_ERR_INVALID_ARGUMENT, kmux_softmax_execute(plan, s, &a));
    cr_expect(strstr(kmux_last_error(), "args->x"), "%s", kmux_last_error());
    cr_expect(strstr(kmux_last_error(), "args->dx"), "%s", kmux_last_error());
    cr_expect(loss[0] == 42 && loss[1] == 42, "loss written by a refused call");
    a.dx = dx;
    TU_OK(kmux_softmax_execute(plan, s, &a));
    /* row 0: label 2 is the largest logit: loss = log(e^-2 + e^-1 + 1) */
    cr_expect(fabsf(loss[0] - (float)log(exp(-2.0) + exp(-1.0) + 1.0)) < 1e-6f, "loss %g",
              (double)loss[0]);
    cr_expect(fabsf(loss[1] - loss[0]) < 1e-6f, "the mirrored row: %g", (double)loss[1]);
    /* the gradient of the mean: (p - onehot) / 2 sums to 0 over a row */
    cr_expect(fabsf(dx[0] + dx[1] + dx[2]) < 1e-6f);
    cr_expect_lt(dx[2], 0.0f);
    TU_OK(kmux_plan_destroy(plan));
    d.rows = 0;
    TU_OK(kmux_softmax_plan_create(ref, &d, NULL, &plan));
    kmux_softmax_args e = KMUX_SOFTMAX_ARGS_INIT;
    TU_OK(kmux_softmax_execute(plan, s, &e)); /* no rows: nothing read or written */
    TU_OK(kmux_plan_destroy(plan));
}
