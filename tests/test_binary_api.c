/*
 * test_binary_api.c - the binary and reduction families' API on ref: every invalid description
 * and argument gets KMUX_ERR_INVALID_ARGUMENT with a message naming the field and its value, the
 * plan pointer untouched; empty shapes write nothing; a reduced axis of size 0 gives the
 * identity.
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

TestSuite(binary_api, .init = setup, .fini = teardown);

static void bin_refused(const kmux_binary_desc *d, const char *needle) {
    kmux_plan *plan = (kmux_plan *)0x1;
    kmux_status st = kmux_binary_plan_create(ref, d, NULL, &plan);
    cr_expect_eq(st, KMUX_ERR_INVALID_ARGUMENT, "%s: got %s (%s)", needle, kmux_status_str(st),
                 kmux_last_error());
    cr_expect(strstr(kmux_last_error(), needle) != NULL, "message '%s' lacks '%s'",
              kmux_last_error(), needle);
    cr_expect_eq(plan, (kmux_plan *)0x1, "the plan pointer was written");
}

static void red_refused(const kmux_reduction_desc *d, const char *needle) {
    kmux_plan *plan = (kmux_plan *)0x1;
    kmux_status st = kmux_reduction_plan_create(ref, d, NULL, &plan);
    cr_expect_eq(st, KMUX_ERR_INVALID_ARGUMENT, "%s: got %s (%s)", needle, kmux_status_str(st),
                 kmux_last_error());
    cr_expect(strstr(kmux_last_error(), needle) != NULL, "message '%s' lacks '%s'",
              kmux_last_error(), needle);
    cr_expect_eq(plan, (kmux_plan *)0x1, "the plan pointer was written");
}

Test(binary_api, bad_binary_descriptions_are_named) {
    kmux_binary_desc base = KMUX_BINARY_DESC_INIT;
    base.ndims = 2, base.dims[0] = 4, base.dims[1] = 3, base.src1_dims[0] = 1,
    base.src1_dims[1] = 3;
    kmux_binary_desc d = base;
    d.alg = (kmux_binary_alg)99;
    bin_refused(&d, "desc->alg = 99");
    d = base, d.dtype = KMUX_F8_E4M3;
    bin_refused(&d, "desc->dtype = e4m3");
    d = base, d.ndims = 0;
    bin_refused(&d, "desc->ndims = 0");
    d = base, d.ndims = KMUX_MAX_NDIMS + 1;
    bin_refused(&d, "desc->ndims = 7");
    d = base, d.dims[1] = -3;
    bin_refused(&d, "desc->dims[1] = -3");
    d = base, d.src1_dims[1] = 2;
    bin_refused(&d, "desc->src1_dims[1] = 2 must be desc->dims[1] = 3 or 1");
    d = base, d.dims[0] = d.dims[1] = d.src1_dims[1] = INT64_MAX / 2;
    bin_refused(&d, "more elements than the address space");
    d = base, d.beta = NAN;
    bin_refused(&d, "desc->beta = nan");
    d = base, d.struct_size = 8;
    bin_refused(&d, "desc->struct_size = 8");
    kmux_plan *plan = NULL;
    cr_expect_eq(kmux_binary_plan_create(ref, NULL, NULL, &plan), KMUX_ERR_INVALID_ARGUMENT);
}

Test(binary_api, bad_binary_arguments_are_named) {
    kmux_binary_desc d = KMUX_BINARY_DESC_INIT;
    d.ndims = 1, d.dims[0] = 8, d.src1_dims[0] = 8;
    kmux_plan *plan = NULL;
    TU_OK(kmux_binary_plan_create(ref, &d, NULL, &plan));
    float a[16] = {0}, b[8] = {0};
    kmux_binary_args args = KMUX_BINARY_ARGS_INIT;
    args.src0 = a, args.src1 = b, args.dst = NULL;
    cr_expect_eq(kmux_binary_execute(plan, s, &args), KMUX_ERR_INVALID_ARGUMENT);
    cr_expect(strstr(kmux_last_error(), "args->dst is NULL") != NULL, "%s", kmux_last_error());
    args.dst = a + 4; /* overlaps src0, not exactly */
    cr_expect_eq(kmux_binary_execute(plan, s, &args), KMUX_ERR_INVALID_ARGUMENT);
    cr_expect(strstr(kmux_last_error(), "overlaps args->src0") != NULL, "%s", kmux_last_error());
    args.dst = b;
    cr_expect_eq(kmux_binary_execute(plan, s, &args), KMUX_ERR_INVALID_ARGUMENT);
    cr_expect(strstr(kmux_last_error(), "overlaps args->src1") != NULL, "%s", kmux_last_error());
    args.dst = a; /* in place */
    for (int i = 0; i < 8; i++)
        a[i] = (float)i, b[i] = 1.0f;
    TU_OK(kmux_binary_execute(plan, s, &args));
    TU_OK(kmux_stream_synchronize(s));
    cr_expect_eq(a[7], 8.0f);
    args.struct_size = 4;
    cr_expect_eq(kmux_binary_execute(plan, s, &args), KMUX_ERR_INVALID_ARGUMENT);
    TU_OK(kmux_plan_destroy(plan));
}

Test(binary_api, bad_reduction_descriptions_are_named) {
    kmux_reduction_desc base = KMUX_REDUCTION_DESC_INIT;
    base.ndims = 2, base.src_dims[0] = 4, base.src_dims[1] = 3, base.dst_dims[0] = 1,
    base.dst_dims[1] = 3;
    kmux_reduction_desc d = base;
    d.alg = (kmux_reduction_alg)0;
    red_refused(&d, "desc->alg = 0");
    d = base, d.src_dtype = KMUX_I8;
    red_refused(&d, "desc->src_dtype = i8");
    d = base, d.dst_dtype = KMUX_F64;
    red_refused(&d, "desc->dst_dtype = f64");
    d = base, d.ndims = -1;
    red_refused(&d, "desc->ndims = -1");
    d = base, d.dst_dims[0] = 2;
    red_refused(&d, "desc->dst_dims[0] = 2 must be desc->src_dims[0] = 4 or 1");
    d = base, d.src_dims[0] = -4;
    red_refused(&d, "desc->src_dims[0] = -4");
}

Test(binary_api, empty_shapes_and_empty_reductions) {
    /* a 0 in the shape: nothing to do, NULL tensors accepted */
    kmux_binary_desc d = KMUX_BINARY_DESC_INIT;
    d.ndims = 2, d.dims[0] = 0, d.dims[1] = 3, d.src1_dims[0] = 1, d.src1_dims[1] = 3;
    kmux_plan *plan = NULL;
    TU_OK(kmux_binary_plan_create(ref, &d, NULL, &plan));
    kmux_binary_args args = KMUX_BINARY_ARGS_INIT;
    TU_OK(kmux_binary_execute(plan, s, &args));
    TU_OK(kmux_plan_destroy(plan));
    /* reducing an axis of size 0: the identity of each algorithm */
    const float want[] = {0.0f, NAN, -INFINITY, INFINITY, 0.0f, 0.0f};
    for (int alg = 1; alg <= 6; alg++) {
        kmux_reduction_desc r = KMUX_REDUCTION_DESC_INIT;
        r.alg = (kmux_reduction_alg)alg;
        r.ndims = 2, r.src_dims[0] = 0, r.src_dims[1] = 2, r.dst_dims[0] = 1, r.dst_dims[1] = 2;
        TU_OK(kmux_reduction_plan_create(ref, &r, NULL, &plan));
        float out[2] = {42.0f, 42.0f};
        kmux_reduction_args ra = KMUX_REDUCTION_ARGS_INIT;
        ra.dst = out;
        TU_OK(kmux_reduction_execute(plan, s, &ra));
        TU_OK(kmux_stream_synchronize(s));
        for (int j = 0; j < 2; j++)
            cr_expect(isnan(want[alg - 1]) ? isnan(out[j]) : out[j] == want[alg - 1],
                      "%s of nothing: %g", kmux_reduction_alg_name(r.alg), (double)out[j]);
        TU_OK(kmux_plan_destroy(plan));
    }
}
