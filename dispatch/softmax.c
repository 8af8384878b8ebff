/*
 * softmax.c - the softmax family (kmux_softmax_* of kmux.h): validation from the one table
 * (dispatch/common/kmux_softmax.h), the device's caps.softmax, the plan, and execution with its
 * argument checks. The backend sees rows >= 1 only: an op of no rows writes nothing.
 */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "dispatch/common/kmux_softmax.h"
#include "validate.h"

#define OPS(dev) ((dev)->backend->ops)
#define STATE(dev) ((dev)->backend->state)
#define INVALID(...) kmux_set_error(KMUX_ERR_INVALID_ARGUMENT, __VA_ARGS__)

const char *kmux_softmax_alg_name(kmux_softmax_alg alg) {
    return kmux_softmax_alg_str((int)alg);
}

static kmux_status validate_desc(const char *fn, const kmux_softmax_desc *d) {
    const unsigned fl = kmux_softmax_flags((int)d->alg);
    if (!fl) return INVALID("%s: desc->alg = %d is not a kmux_softmax_alg", fn, (int)d->alg);
    if (d->prop != KMUX_PROP_FORWARD && d->prop != KMUX_PROP_BACKWARD)
        return INVALID(
            "%s: desc->prop = %d must be KMUX_PROP_FORWARD (1) or KMUX_PROP_BACKWARD (2)", fn,
            (int)d->prop);
    if (d->prop == KMUX_PROP_BACKWARD && !(fl & KMUX_SMX_BWD))
        return INVALID("%s: desc->prop = backward: %s has no backward (its forward writes the "
                       "gradient)",
                       fn, kmux_softmax_alg_name(d->alg));
    if (d->rows < 0) return INVALID("%s: desc->rows = %lld is negative", fn, (long long)d->rows);
    if (d->cols < 1) return INVALID("%s: desc->cols = %lld must be >= 1", fn, (long long)d->cols);
    if (!kmux_family_dtype((int)d->dtype))
        return INVALID("%s: desc->dtype = %s (%d) is not f32, f16 or bf16", fn,
                       kmux_dtype_name(d->dtype), (int)d->dtype);
    size_t bytes;
    if (d->rows > INT64_MAX / d->cols || !kmux_bytes_of(d->rows * d->cols, KMUX_F32, &bytes))
        return INVALID("%s: desc->rows * desc->cols = %lld x %lld overflows", fn,
                       (long long)d->rows, (long long)d->cols);
    if (!(d->label_smoothing >= 0.0f && d->label_smoothing <= 1.0f))
        return INVALID("%s: desc->label_smoothing = %g must be in [0, 1]", fn,
                       (double)d->label_smoothing);
    return KMUX_OK;
}

static kmux_status create_native(kmux_device *dev, const void *desc, const kmux_plan_prefs *prefs,
                                 void **native, int *impl_count) {
    return OPS(dev)->softmax->plan_create(STATE(dev), dev->index, desc, prefs, native, impl_count);
}

kmux_status kmux_softmax_plan_create_unchecked(kmux_device *dev, const kmux_softmax_desc *desc,
                                               const kmux_plan_prefs *prefs, kmux_plan **plan) {
    const char *fn = "kmux_softmax_plan_create";
    const kmux_family_query q = {
        (int)desc->alg,  kmux_softmax_alg_name(desc->alg), desc->dtype,  "dtype",
        (int)desc->prop, desc->rows * desc->cols,          "rows * cols"};
    kmux_status st = kmux_caps_check_family(fn, dev, OPS(dev)->softmax != NULL, &dev->caps.softmax,
                                            "softmax", &q);
    if (st != KMUX_OK) return st;
    return kmux_plan_create_family(dev, KMUX_PLAN_SOFTMAX, fn, desc, sizeof *desc, desc->rows == 0,
                                   prefs, create_native, plan);
}

kmux_status kmux_softmax_plan_create(kmux_device *dev, const kmux_softmax_desc *desc,
                                     const kmux_plan_prefs *prefs, kmux_plan **plan) {
    kmux_clear_error();
    const char *fn = "kmux_softmax_plan_create";
    kmux_plan_prefs pr;
    kmux_status st = kmux_plan_check_create(fn, dev, desc, plan, prefs, &pr);
    if (st != KMUX_OK) return st;
    if (desc->struct_size < sizeof(kmux_softmax_desc))
        return INVALID("%s: desc->struct_size = %zu is smaller than kmux_softmax_desc (%zu bytes)",
                       fn, desc->struct_size, sizeof(kmux_softmax_desc));
    kmux_softmax_desc d = *desc;
    d.struct_size = sizeof d;
    st = validate_desc(fn, &d);
    if (st == KMUX_OK) st = kmux_softmax_plan_create_unchecked(dev, &d, &pr, plan);
    if (st == KMUX_OK) kmux_plan_count_as_callers(*plan);
    return st;
}

kmux_status kmux_softmax_execute(kmux_plan *plan, kmux_stream *stream,
                                 const kmux_softmax_args *args) {
    kmux_clear_error();
    const char *fn = "kmux_softmax_execute";
    kmux_status st = kmux_plan_check_execute(fn, plan, stream, args, KMUX_PLAN_SOFTMAX);
    if (st != KMUX_OK) return st;
    if (args->struct_size < sizeof(kmux_softmax_args))
        return INVALID("%s: args->struct_size = %zu is smaller than kmux_softmax_args (%zu bytes)",
                       fn, args->struct_size, sizeof(kmux_softmax_args));
    const kmux_softmax_desc *d = &plan->desc.softmax;
    if (d->rows == 0) return KMUX_OK;
    kmux_softmax_args a = *args;
    const int xent = d->alg == KMUX_SOFTMAX_CROSS_ENTROPY, fwd = d->prop == KMUX_PROP_FORWARD;
    const size_t n = (size_t)(d->rows * d->cols) * kmux_dtype_size(d->dtype);
    const size_t r4 = (size_t)d->rows * 4;
    if (xent) {
        a.y = NULL, a.dy = NULL;
    } else {
        a.labels = NULL, a.loss = NULL, a.mean_loss = NULL, a.argmax = NULL, a.grad_scale = NULL;
        if (fwd)
            a.dy = NULL, a.dx = NULL;
        else
            a.x = NULL;
    }
    const kmux_exec_tensor t[] = {
        {"x", a.x, n, 0, xent || fwd},         {"y", a.y, n, !xent && fwd, !xent},
        {"dy", a.dy, n, 0, !xent && !fwd},     {"dx", a.dx, n, 1, !xent && !fwd},
        {"labels", a.labels, r4, 0, xent},     {"loss", a.loss, r4, 1, xent},
        {"mean_loss", a.mean_loss, 4, 1, 0},   {"argmax", a.argmax, r4, 1, 0},
        {"grad_scale", a.grad_scale, 4, 0, 0},
    };
    char why[96];
    snprintf(why, sizeof why, "%s %s needs it, rows = %lld", kmux_softmax_alg_name(d->alg),
             fwd ? "forward" : "backward", (long long)d->rows);
    st = kmux_check_exec_tensors(fn, t, (int)(sizeof t / sizeof t[0]), why);
    if (st != KMUX_OK) return st;
    const double t0 = kmux_plan_exec_begin(plan, stream);
    st = OPS(plan->dev)->softmax->execute(STATE(plan->dev), plan->native, plan->impl,
                                          stream->native, &a);
    if (st != KMUX_OK) return kmux_plan_backend_failed(st, fn, plan->dev);
    kmux_plan_exec_end(plan, stream, t0);
    return KMUX_OK;
}
