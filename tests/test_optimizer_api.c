/*
 * test_optimizer_api.c - the optimizer family's API on ref: every invalid description and
 * argument gets KMUX_ERR_INVALID_ARGUMENT with a message naming the field and its value and
 * nothing is written; empty steps; plans of another kind.
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

TestSuite(optimizer_api, .init = setup, .fini = teardown);

static void refused(const kmux_optimizer_desc *d, const char *needle) {
    kmux_plan *plan = (kmux_plan *)0x1;
    kmux_status st = kmux_optimizer_plan_create(ref, d, NULL, &plan);
    cr_expect_eq(st, KMUX_ERR_INVALID_ARGUMENT, "%s: got %s (%s)", needle, kmux_status_str(st),
                 kmux_last_error());
    cr_expect(strstr(kmux_last_error(), needle) != NULL, "message '%s' lacks '%s'",
              kmux_last_error(), needle);
    cr_expect_eq(plan, (kmux_plan *)0x1, "the plan pointer was written");
}

Test(optimizer_api, bad_descriptions_are_named) {
    const kmux_optimizer_desc base = KMUX_OPTIMIZER_DESC_INIT;
    kmux_optimizer_desc d = base;
    d.alg = 0;
    refused(&d, "desc->alg = 0");
    d = base, d.n = -5;
    refused(&d, "desc->n = -5");
    d = base, d.n = INT64_MAX / 2;
    refused(&d, "overflow");
    d = base, d.grad_type = KMUX_F64;
    refused(&d, "desc->grad_type = f64");
    d = base, d.copy_type = KMUX_F32;
    refused(&d, "desc->copy_type = 2");
    d = base, d.weight_decay = -1.0f;
    refused(&d, "desc->weight_decay = -1");
    d = base, d.momentum = NAN;
    refused(&d, "desc->momentum = nan");
    d = base, d.dampening = 1.5f;
    refused(&d, "desc->dampening = 1.5 must be in [0, 1]");
    d = base, d.nesterov = 1;
    refused(&d, "nesterov = 1 needs momentum > 0");
    d = base, d.momentum = 0.9f, d.dampening = 0.1f, d.nesterov = 1;
    refused(&d, "dampening = 0.1");
    d = base, d.nesterov = 3;
    refused(&d, "desc->nesterov = 3");
    d = base, d.alg = KMUX_OPTIMIZER_ADAM, d.beta1 = 1.0f;
    refused(&d, "desc->beta1 = 1 must be in [0, 1)");
    d = base, d.alg = KMUX_OPTIMIZER_ADAMW, d.beta2 = -0.1f;
    refused(&d, "desc->beta2 = -0.1");
    d = base, d.alg = KMUX_OPTIMIZER_ADAMW, d.eps = 0.0f;
    refused(&d, "desc->eps = 0 must be finite and > 0");
    d = base, d.struct_size = 16;
    refused(&d, "desc->struct_size = 16");
    kmux_plan *plan = NULL;
    TU_STATUS(KMUX_ERR_INVALID_ARGUMENT, kmux_optimizer_plan_create(ref, NULL, NULL, &plan));
    cr_expect_str_eq(kmux_optimizer_alg_name(KMUX_OPTIMIZER_ADAMW), "adamw");
    cr_expect_str_eq(kmux_optimizer_alg_name(99), "?");
}

Test(optimizer_api, bad_arguments_are_named_and_nothing_is_written) {
    kmux_optimizer_desc d = KMUX_OPTIMIZER_DESC_INIT;
    d.alg = KMUX_OPTIMIZER_ADAM;
    d.n = 8;
    kmux_plan *plan = NULL;
    TU_OK(kmux_optimizer_plan_create(ref, &d, NULL, &plan));
    float p[8], g[8], m[8], v[8], big[20];
    for (int i = 0; i < 8; i++)
        p[i] = 1.0f, g[i] = 0.5f, m[i] = v[i] = 0.0f;
    kmux_optimizer_args a = KMUX_OPTIMIZER_ARGS_INIT;
    a.param = p, a.grad = g, a.state1 = m, a.lr = 0.1f;
    TU_STATUS(KMUX_ERR_INVALID_ARGUMENT, kmux_optimizer_execute(plan, s, &a));
    cr_expect(strstr(kmux_last_error(), "args->state2 is NULL (adam uses it"), "%s",
              kmux_last_error());
    a.state2 = v;
    a.lr = -1.0f;
    TU_STATUS(KMUX_ERR_INVALID_ARGUMENT, kmux_optimizer_execute(plan, s, &a));
    cr_expect(strstr(kmux_last_error(), "args->lr = -1"), "%s", kmux_last_error());
    a.lr = INFINITY;
    TU_STATUS(KMUX_ERR_INVALID_ARGUMENT, kmux_optimizer_execute(plan, s, &a));
    a.lr = 0.1f, a.step = 0;
    TU_STATUS(KMUX_ERR_INVALID_ARGUMENT, kmux_optimizer_execute(plan, s, &a));
    cr_expect(strstr(kmux_last_error(), "args->step = 0"), "%s", kmux_last_error());
    a.step = 1;
    a.state2 = big, a.state1 = big + 4; /* m and v overlap */
    TU_STATUS(KMUX_ERR_INVALID_ARGUMENT, kmux_optimizer_execute(plan, s, &a));
    cr_expect(strstr(kmux_last_error(), "args->state1"), "%s", kmux_last_error());
    cr_expect(strstr(kmux_last_error(), "overlaps args->state2"), "%s", kmux_last_error());
    for (int i = 0; i < 8; i++)
        cr_expect_eq(p[i], 1.0f, "param[%d] written by a refused call", i);
    a.state1 = m, a.state2 = v;
    a.struct_size = 8;
    TU_STATUS(KMUX_ERR_INVALID_ARGUMENT, kmux_optimizer_execute(plan, s, &a));
    a.struct_size = sizeof a;
    TU_OK(kmux_optimizer_execute(plan, s, &a));
    cr_expect_lt(p[0], 1.0f, "a valid step moved nothing");
    TU_OK(kmux_plan_destroy(plan));

    /* SGD without momentum needs no state; an element-wise plan is not an optimizer plan */
    d = (kmux_optimizer_desc)KMUX_OPTIMIZER_DESC_INIT;
    d.n = 8;
    TU_OK(kmux_optimizer_plan_create(ref, &d, NULL, &plan));
    kmux_optimizer_args b = KMUX_OPTIMIZER_ARGS_INIT;
    b.param = p, b.grad = g, b.lr = 1.0f;
    TU_OK(kmux_optimizer_execute(plan, s, &b));
    TU_OK(kmux_plan_destroy(plan));
    kmux_eltwise_desc ed = KMUX_ELTWISE_DESC_INIT;
    ed.n = 4;
    TU_OK(kmux_eltwise_plan_create(ref, &ed, NULL, &plan));
    TU_STATUS(KMUX_ERR_INVALID_ARGUMENT, kmux_optimizer_execute(plan, s, &b));
    cr_expect(strstr(kmux_last_error(), "plan is an element-wise plan"), "%s", kmux_last_error());
    TU_OK(kmux_plan_destroy(plan));
}

Test(optimizer_api, empty_step_is_the_cores) {
    kmux_optimizer_desc d = KMUX_OPTIMIZER_DESC_INIT;
    d.alg = KMUX_OPTIMIZER_ADAMW;
    kmux_plan *plan = NULL;
    TU_OK(kmux_optimizer_plan_create(ref, &d, NULL, &plan));
    kmux_plan_info info;
    TU_OK(kmux_plan_info_get(plan, &info));
    cr_expect_str_eq(info.impl, "kmux:empty");
    kmux_optimizer_args a = KMUX_OPTIMIZER_ARGS_INIT; /* NULL tensors: n = 0 reads none */
    TU_OK(kmux_optimizer_execute(plan, s, &a));
    TU_OK(kmux_plan_destroy(plan));
}
