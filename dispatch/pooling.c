/*
 * pooling.c - the pooling family (kmux_pooling_* of kmux.h): validation (the geometry checked
 * once here, every backend sees a valid one), the device's caps.pooling, the plan, and execution
 * with its argument checks. The backend sees n >= 1 and c >= 1 only: an empty batch writes
 * nothing.
 */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <string.h>

#include "dispatch/common/kmux_pooling.h"
#include "validate.h"

#define OPS(dev) ((dev)->backend->ops)
#define STATE(dev) ((dev)->backend->state)
#define INVALID(...) kmux_set_error(KMUX_ERR_INVALID_ARGUMENT, __VA_ARGS__)

const char *kmux_pooling_alg_name(kmux_pooling_alg alg) {
    return kmux_pooling_alg_str((int)alg);
}

/* One spatial axis: its size, kernel, stride and pads, named as the fields are. */
static kmux_status check_axis(const char *fn, const char *in_name, int64_t in, const char *k_name,
                              int64_t k, const char *s_name, int64_t s, const char *p0_name,
                              int64_t p0, const char *p1_name, int64_t p1) {
    if (in < 1) return INVALID("%s: desc->%s = %lld must be >= 1", fn, in_name, (long long)in);
    if (k < 1) return INVALID("%s: desc->%s = %lld must be >= 1", fn, k_name, (long long)k);
    if (s < 1) return INVALID("%s: desc->%s = %lld must be >= 1", fn, s_name, (long long)s);
    const char *pn[2] = {p0_name, p1_name};
    const int64_t pv[2] = {p0, p1};
    for (int i = 0; i < 2; i++)
        if (pv[i] < 0 || pv[i] >= k)
            return INVALID("%s: desc->%s = %lld must be in [0, desc->%s = %lld) (a window of "
                           "padding alone has no value)",
                           fn, pn[i], (long long)pv[i], k_name, (long long)k);
    if (in > INT64_MAX / 4 || k > INT64_MAX / 4)
        return INVALID("%s: desc->%s = %lld or desc->%s = %lld is too large", fn, in_name,
                       (long long)in, k_name, (long long)k);
    if (kmux_pool_out_dim(in, k, s, p0, p1) < 1)
        return INVALID("%s: desc->%s = %lld is larger than desc->%s = %lld plus its padding "
                       "(%lld + %lld): the output is empty",
                       fn, k_name, (long long)k, in_name, (long long)in, (long long)p0,
                       (long long)p1);
    return KMUX_OK;
}

/* The output's height and width of a description whose axes are checked. */
static void out_dims(const kmux_pooling_desc *d, int64_t *p, int64_t *q) {
    *p = kmux_pool_out_dim(d->h, d->kernel_h, d->stride_h, d->pad_top, d->pad_bottom);
    *q = kmux_pool_out_dim(d->w, d->kernel_w, d->stride_w, d->pad_left, d->pad_right);
}

/* f[0] x f[1] x f[2] x f[3] elements that fit the address space (in f32), or a refusal naming
 * `what` */
static kmux_status product(const char *fn, const char *what, const int64_t f[4]) {
    int64_t n = 1;
    size_t bytes;
    for (int i = 0; i < 4 && n >= 0; i++)
        n = f[i] > 0 && n > INT64_MAX / f[i] ? -1 : n * f[i];
    if (n < 0 || !kmux_bytes_of(n, KMUX_F32, &bytes))
        return INVALID("%s: %s = %lld x %lld x %lld x %lld overflows or does not fit the address "
                       "space",
                       fn, what, (long long)f[0], (long long)f[1], (long long)f[2],
                       (long long)f[3]);
    return KMUX_OK;
}

/* x (n c h w) and y (n c p q: larger than x when the padding is wider than the stride) must
 * both be addressable; checked once, at plan creation */
static kmux_status check_counts(const char *fn, const kmux_pooling_desc *d) {
    int64_t p, q;
    out_dims(d, &p, &q);
    const int64_t fx[4] = {d->n, d->c, d->h, d->w}, fy[4] = {d->n, d->c, p, q};
    kmux_status st = product(fn, "desc->n x c x h x w", fx);
    return st == KMUX_OK ? product(fn, "the output n x c x p x q", fy) : st;
}

static kmux_status validate_desc(const char *fn, const kmux_pooling_desc *d) {
    if (!strcmp(kmux_pooling_alg_str((int)d->alg), "?"))
        return INVALID("%s: desc->alg = %d is not a kmux_pooling_alg", fn, (int)d->alg);
    if (d->prop != KMUX_PROP_FORWARD && d->prop != KMUX_PROP_BACKWARD)
        return INVALID(
            "%s: desc->prop = %d must be KMUX_PROP_FORWARD (1) or KMUX_PROP_BACKWARD (2)", fn,
            (int)d->prop);
    if (d->layout != KMUX_NCHW && d->layout != KMUX_NHWC)
        return INVALID("%s: desc->layout = %d is not KMUX_NCHW (1) or KMUX_NHWC (2)", fn,
                       (int)d->layout);
    if (!kmux_family_dtype((int)d->dtype))
        return INVALID("%s: desc->dtype = %s (%d) is not f32, f16 or bf16", fn,
                       kmux_dtype_name(d->dtype), (int)d->dtype);
    if (d->n < 0) return INVALID("%s: desc->n = %lld is negative", fn, (long long)d->n);
    if (d->c < 0) return INVALID("%s: desc->c = %lld is negative", fn, (long long)d->c);
    kmux_status st = check_axis(fn, "h", d->h, "kernel_h", d->kernel_h, "stride_h", d->stride_h,
                                "pad_top", d->pad_top, "pad_bottom", d->pad_bottom);
    if (st == KMUX_OK)
        st = check_axis(fn, "w", d->w, "kernel_w", d->kernel_w, "stride_w", d->stride_w, "pad_left",
                        d->pad_left, "pad_right", d->pad_right);
    return st == KMUX_OK ? check_counts(fn, d) : st;
}

kmux_status kmux_pooling_output_dims(const kmux_pooling_desc *desc, int64_t *p, int64_t *q) {
    kmux_clear_error();
    const char *fn = "kmux_pooling_output_dims";
    if (!desc || !p || !q) return INVALID("%s: %s is NULL", fn, !desc ? "desc" : !p ? "p" : "q");
    if (desc->struct_size < sizeof(kmux_pooling_desc))
        return INVALID("%s: desc->struct_size = %zu is smaller than kmux_pooling_desc (%zu bytes)",
                       fn, desc->struct_size, sizeof(kmux_pooling_desc));
    kmux_status st = validate_desc(fn, desc);
    if (st != KMUX_OK) return st;
    out_dims(desc, p, q);
    return KMUX_OK;
}

static kmux_status create_native(kmux_device *dev, const void *desc, const kmux_plan_prefs *prefs,
                                 void **native, int *impl_count) {
    return OPS(dev)->pooling->plan_create(STATE(dev), dev->index, desc, prefs, native, impl_count);
}

kmux_status kmux_pooling_plan_create_unchecked(kmux_device *dev, const kmux_pooling_desc *desc,
                                               const kmux_plan_prefs *prefs, kmux_plan **plan) {
    const char *fn = "kmux_pooling_plan_create";
    const kmux_family_query q = {
        (int)desc->alg,  kmux_pooling_alg_name(desc->alg),      desc->dtype,    "dtype",
        (int)desc->prop, desc->n * desc->c * desc->h * desc->w, "n x c x h x w"};
    kmux_status st = kmux_caps_check_family(fn, dev, OPS(dev)->pooling != NULL, &dev->caps.pooling,
                                            "pooling", &q);
    if (st != KMUX_OK) return st;
    return kmux_plan_create_family(dev, KMUX_PLAN_POOLING, fn, desc, sizeof *desc,
                                   desc->n == 0 || desc->c == 0, prefs, create_native, plan);
}

kmux_status kmux_pooling_plan_create(kmux_device *dev, const kmux_pooling_desc *desc,
                                     const kmux_plan_prefs *prefs, kmux_plan **plan) {
    kmux_clear_error();
    const char *fn = "kmux_pooling_plan_create";
    kmux_plan_prefs pr;
    kmux_status st = kmux_plan_check_create(fn, dev, desc, plan, prefs, &pr);
    if (st != KMUX_OK) return st;
    if (desc->struct_size < sizeof(kmux_pooling_desc))
        return INVALID("%s: desc->struct_size = %zu is smaller than kmux_pooling_desc (%zu bytes)",
                       fn, desc->struct_size, sizeof(kmux_pooling_desc));
    kmux_pooling_desc d = *desc;
    d.struct_size = sizeof d;
    st = validate_desc(fn, &d);
    if (st == KMUX_OK) st = kmux_pooling_plan_create_unchecked(dev, &d, &pr, plan);
    if (st == KMUX_OK) kmux_plan_count_as_callers(*plan);
    return st;
}

kmux_status kmux_pooling_execute(kmux_plan *plan, kmux_stream *stream,
                                 const kmux_pooling_args *args) {
    kmux_clear_error();
    const char *fn = "kmux_pooling_execute";
    kmux_status st = kmux_plan_check_execute(fn, plan, stream, args, KMUX_PLAN_POOLING);
    if (st != KMUX_OK) return st;
    if (args->struct_size < sizeof(kmux_pooling_args))
        return INVALID("%s: args->struct_size = %zu is smaller than kmux_pooling_args (%zu bytes)",
                       fn, args->struct_size, sizeof(kmux_pooling_args));
    const kmux_pooling_desc *d = &plan->desc.pooling;
    if (d->n == 0 || d->c == 0) return KMUX_OK;
    int64_t p, q; /* the plan's description was validated: no overflow left to check */
    out_dims(d, &p, &q);
    const int64_t nx = d->n * d->c * d->h * d->w, ny = d->n * d->c * p * q;
    kmux_pooling_args a = *args;
    const int fwd = d->prop == KMUX_PROP_FORWARD, max = d->alg == KMUX_POOLING_MAX;
    if (fwd)
        a.dy = NULL, a.dx = NULL;
    else
        a.y = NULL, a.x = max ? a.x : NULL;
    const size_t es = kmux_dtype_size(d->dtype);
    const kmux_exec_tensor t[] = {
        {"x", a.x, (size_t)nx * es, 0, fwd || max},
        {"y", a.y, (size_t)ny * es, 1, fwd},
        {"dy", a.dy, (size_t)ny * es, 0, !fwd},
        {"dx", a.dx, (size_t)nx * es, 1, !fwd},
    };
    char why[64];
    snprintf(why, sizeof why, "%s %s needs it", kmux_pooling_alg_name(d->alg),
             fwd ? "forward" : "backward");
    st = kmux_check_exec_tensors(fn, t, (int)(sizeof t / sizeof t[0]), why);
    if (st != KMUX_OK) return st;
    const double t0 = kmux_plan_exec_begin(plan, stream);
    st = OPS(plan->dev)->pooling->execute(STATE(plan->dev), plan->native, plan->impl,
                                          stream->native, &a);
    if (st != KMUX_OK) return kmux_plan_backend_failed(st, fn, plan->dev);
    kmux_plan_exec_end(plan, stream, t0);
    return KMUX_OK;
}
