/*
 * test_eltwise_api.c - the element-wise family's API on ref: every invalid description and
 * argument gets KMUX_ERR_INVALID_ARGUMENT with a message naming the field and its value, the
 * output untouched; empty ops; plans of another kind; what the caps refuse; hand-computed values.
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

TestSuite(eltwise_api, .init = setup, .fini = teardown);

/* plan creation of d fails with INVALID_ARGUMENT and a message holding `needle` */
static void refused(const kmux_eltwise_desc *d, const char *needle) {
    kmux_plan *plan = (kmux_plan *)0x1;
    kmux_status st = kmux_eltwise_plan_create(ref, d, NULL, &plan);
    cr_expect_eq(st, KMUX_ERR_INVALID_ARGUMENT, "%s: got %s (%s)", needle, kmux_status_str(st),
                 kmux_last_error());
    cr_expect(strstr(kmux_last_error(), needle) != NULL, "message '%s' lacks '%s'",
              kmux_last_error(), needle);
    cr_expect_eq(plan, (kmux_plan *)0x1, "the plan pointer was written");
}

Test(eltwise_api, bad_descriptions_are_named) {
    kmux_eltwise_desc d = KMUX_ELTWISE_DESC_INIT;
    d.n = 4;
    d.alg = 0;
    refused(&d, "desc->alg = 0");
    d.alg = 999;
    refused(&d, "desc->alg = 999");
    d = (kmux_eltwise_desc)KMUX_ELTWISE_DESC_INIT;
    d.prop = 3;
    refused(&d, "desc->prop = 3");
    d = (kmux_eltwise_desc)KMUX_ELTWISE_DESC_INIT;
    d.dtype = KMUX_F64;
    refused(&d, "desc->dtype = f64");
    d.dtype = KMUX_I8;
    refused(&d, "desc->dtype = i8");
    d.dtype = (kmux_dtype)77;
    refused(&d, "(77)");
    d = (kmux_eltwise_desc)KMUX_ELTWISE_DESC_INIT;
    d.n = -1;
    refused(&d, "desc->n = -1");
    d.n = INT64_MAX / 2;
    refused(&d, "overflow");
    d = (kmux_eltwise_desc)KMUX_ELTWISE_DESC_INIT;
    d.alpha = NAN;
    refused(&d, "desc->alpha = nan");
    d.alpha = 0;
    d.beta = INFINITY;
    refused(&d, "desc->beta = inf");
    d = (kmux_eltwise_desc)KMUX_ELTWISE_DESC_INIT;
    d.use_dst_for_bwd = 2;
    refused(&d, "use_dst_for_bwd = 2");
    d.prop = KMUX_PROP_BACKWARD;
    d.use_dst_for_bwd = 1;
    d.alg = KMUX_ELTWISE_GELU_ERF;
    refused(&d, "gelu_erf has no backward from its output");
    d.alg = KMUX_ELTWISE_RELU;
    d.alpha = -0.5f;
    refused(&d, "alpha = -0.5 < 0");
    d = (kmux_eltwise_desc)KMUX_ELTWISE_DESC_INIT;
    d.struct_size = 8;
    refused(&d, "desc->struct_size = 8");
    kmux_plan *plan = NULL;
    TU_STATUS(KMUX_ERR_INVALID_ARGUMENT, kmux_eltwise_plan_create(ref, NULL, NULL, &plan));
    cr_expect(strstr(kmux_last_error(), "desc is NULL"));
    d = (kmux_eltwise_desc)KMUX_ELTWISE_DESC_INIT;
    TU_STATUS(KMUX_ERR_INVALID_ARGUMENT, kmux_eltwise_plan_create(NULL, &d, NULL, &plan));
    TU_STATUS(KMUX_ERR_INVALID_ARGUMENT, kmux_eltwise_plan_create(ref, &d, NULL, NULL));
    kmux_plan_prefs pr = KMUX_PLAN_PREFS_INIT;
    pr.tune = 9;
    TU_STATUS(KMUX_ERR_INVALID_ARGUMENT, kmux_eltwise_plan_create(ref, &d, &pr, &plan));
    cr_expect(strstr(kmux_last_error(), "prefs->tune = 9"));
}

Test(eltwise_api, bad_arguments_are_named_and_nothing_is_written) {
    kmux_eltwise_desc d = KMUX_ELTWISE_DESC_INIT;
    d.n = 8;
    kmux_plan *plan = NULL;
    TU_OK(kmux_eltwise_plan_create(ref, &d, NULL, &plan));
    float x[16], y[8];
    for (int i = 0; i < 16; i++)
        x[i] = (float)(i - 8);
    for (int i = 0; i < 8; i++)
        y[i] = 42.0f;
    kmux_eltwise_args a = KMUX_ELTWISE_ARGS_INIT;
    a.src = x;
    TU_STATUS(KMUX_ERR_INVALID_ARGUMENT, kmux_eltwise_execute(plan, s, &a));
    cr_expect(strstr(kmux_last_error(), "args->dst is NULL"), "%s", kmux_last_error());
    a.dst = x + 3; /* overlaps src without being it */
    TU_STATUS(KMUX_ERR_INVALID_ARGUMENT, kmux_eltwise_execute(plan, s, &a));
    cr_expect(strstr(kmux_last_error(), "overlaps args->src"), "%s", kmux_last_error());
    cr_expect_eq(x[3], -5.0f, "x was written");
    a.dst = y;
    a.struct_size = 4;
    TU_STATUS(KMUX_ERR_INVALID_ARGUMENT, kmux_eltwise_execute(plan, s, &a));
    cr_expect(strstr(kmux_last_error(), "args->struct_size = 4"), "%s", kmux_last_error());
    for (int i = 0; i < 8; i++)
        cr_expect_eq(y[i], 42.0f, "y[%d] was written by a refused call", i);
    TU_STATUS(KMUX_ERR_INVALID_ARGUMENT, kmux_eltwise_execute(plan, s, NULL));
    TU_STATUS(KMUX_ERR_INVALID_ARGUMENT, kmux_eltwise_execute(NULL, s, &a));
    TU_OK(kmux_plan_destroy(plan));

    /* backward: the saved tensor may not overlap the gradient written */
    d.prop = KMUX_PROP_BACKWARD;
    TU_OK(kmux_eltwise_plan_create(ref, &d, NULL, &plan));
    kmux_eltwise_args b = KMUX_ELTWISE_ARGS_INIT;
    b.src = x;
    b.diff_dst = y;
    TU_STATUS(KMUX_ERR_INVALID_ARGUMENT, kmux_eltwise_execute(plan, s, &b));
    cr_expect(strstr(kmux_last_error(), "args->diff_src is NULL"), "%s", kmux_last_error());
    b.diff_src = x;
    TU_STATUS(KMUX_ERR_INVALID_ARGUMENT, kmux_eltwise_execute(plan, s, &b));
    cr_expect(strstr(kmux_last_error(), "saved tensor"), "%s", kmux_last_error());
    TU_OK(kmux_plan_destroy(plan));

    /* a matmul plan given to kmux_eltwise_execute */
    kmux_matmul_desc md = KMUX_MATMUL_DESC_INIT;
    md.m = md.n = md.k = 2;
    md.lda = md.ldb = md.ldc = 2;
    TU_OK(kmux_matmul_plan_create(ref, &md, NULL, &plan));
    a.struct_size = sizeof a;
    TU_STATUS(KMUX_ERR_INVALID_ARGUMENT, kmux_eltwise_execute(plan, s, &a));
    cr_expect(strstr(kmux_last_error(), "plan is a matmul plan"), "%s", kmux_last_error());
    TU_OK(kmux_plan_destroy(plan));
}

Test(eltwise_api, empty_op_is_the_cores) {
    kmux_eltwise_desc d = KMUX_ELTWISE_DESC_INIT;
    d.n = 0;
    kmux_plan *plan = NULL;
    TU_OK(kmux_eltwise_plan_create(ref, &d, NULL, &plan));
    kmux_plan_info info;
    TU_OK(kmux_plan_info_get(plan, &info));
    cr_expect_str_eq(info.impl, "kmux:empty");
    kmux_eltwise_args a = KMUX_ELTWISE_ARGS_INIT; /* NULL tensors: nothing is read */
    TU_OK(kmux_eltwise_execute(plan, s, &a));
    TU_OK(kmux_plan_destroy(plan));
}

/* Values worked by hand (f32 inputs exact; expected values from the definitions). */
Test(eltwise_api, hand_computed_values) {
    const struct {
        kmux_eltwise_alg alg;
        float alpha, beta, x, y, dy; /* dy: derivative at x */
    } rows[] = {
        {KMUX_ELTWISE_RELU, 0.0f, 0.0f, -2.0f, 0.0f, 0.0f},
        {KMUX_ELTWISE_RELU, 0.1f, 0.0f, -2.0f, -0.2f, 0.1f},
        {KMUX_ELTWISE_RELU, 0.0f, 0.0f, 3.0f, 3.0f, 1.0f},
        {KMUX_ELTWISE_GELU_ERF, 0, 0, 1.0f, 0.8413447460685429f, 1.0833154705876864f},
        {KMUX_ELTWISE_GELU_TANH, 0, 0, 1.0f, 0.8411919906082768f, 1.0829640838457826f},
        {KMUX_ELTWISE_SIGMOID, 0, 0, 0.0f, 0.5f, 0.25f},
        {KMUX_ELTWISE_TANH, 0, 0, 0.5f, 0.46211715726000974f, 0.7864477329659274f},
        {KMUX_ELTWISE_LINEAR, 2.0f, 1.0f, 3.0f, 7.0f, 2.0f},
        {KMUX_ELTWISE_RECIPROCAL, 0, 0, 4.0f, 0.25f, -0.0625f},
        {KMUX_ELTWISE_SILU, 0, 0, 1.0f, 0.7310585786300049f, 0.9276705118714869f},
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        kmux_eltwise_desc d = KMUX_ELTWISE_DESC_INIT;
        d.alg = rows[i].alg;
        d.alpha = rows[i].alpha;
        d.beta = rows[i].beta;
        d.n = 1;
        float y = NAN, g = NAN, one = 1.0f;
        kmux_plan *plan = NULL;
        TU_OK(kmux_eltwise_plan_create(ref, &d, NULL, &plan));
        kmux_eltwise_args a = KMUX_ELTWISE_ARGS_INIT;
        a.src = &rows[i].x;
        a.dst = &y;
        TU_OK(kmux_eltwise_execute(plan, s, &a));
        TU_OK(kmux_plan_destroy(plan));
        d.prop = KMUX_PROP_BACKWARD;
        TU_OK(kmux_eltwise_plan_create(ref, &d, NULL, &plan));
        a.diff_dst = &one;
        a.diff_src = &g;
        TU_OK(kmux_eltwise_execute(plan, s, &a));
        TU_OK(kmux_plan_destroy(plan));
        cr_expect(fabsf(y - rows[i].y) <= 1e-6f * (1 + fabsf(rows[i].y)),
                  "%s(%g) = %.9g, want %.9g", kmux_eltwise_alg_name(d.alg), (double)rows[i].x,
                  (double)y, (double)rows[i].y);
        cr_expect(fabsf(g - rows[i].dy) <= 1e-6f * (1 + fabsf(rows[i].dy)),
                  "%s'(%g) = %.9g, want %.9g", kmux_eltwise_alg_name(d.alg), (double)rows[i].x,
                  (double)g, (double)rows[i].dy);
    }
    cr_expect_str_eq(kmux_eltwise_alg_name(0), "?");
    cr_expect_str_eq(kmux_eltwise_alg_name(KMUX_ELTWISE_GELU_TANH), "gelu_tanh");
}
