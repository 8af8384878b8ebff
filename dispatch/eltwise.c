/*
 * eltwise.c - the element-wise family (kmux_eltwise_* of kmux.h): validation from the one table
 * (dispatch/common/kmux_eltwise.h), the device's caps.eltwise, the plan, and execution with its
 * argument checks. The backend sees n >= 1 only: an empty op is the core's.
 */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "dispatch/common/kmux_eltwise.h"
#include "validate.h"

#define OPS(dev) ((dev)->backend->ops)
#define STATE(dev) ((dev)->backend->state)
#define INVALID(...) kmux_set_error(KMUX_ERR_INVALID_ARGUMENT, __VA_ARGS__)

const char *kmux_eltwise_alg_name(kmux_eltwise_alg alg) {
    return kmux_eltwise_alg_str((int)alg);
}

/* Required fields: all of them (kmux.h); a larger struct_size is a newer caller's. */
static kmux_status resolve_desc(const char *fn, const kmux_eltwise_desc *in,
                                kmux_eltwise_desc *out) {
    if (in->struct_size < sizeof *out)
        return INVALID("%s: desc->struct_size = %zu is smaller than kmux_eltwise_desc (%zu bytes)",
                       fn, in->struct_size, sizeof *out);
    *out = *in;
    out->struct_size = sizeof *out;
    return KMUX_OK;
}

static kmux_status validate_desc(const char *fn, const kmux_eltwise_desc *d) {
    if (!kmux_eltwise_alg_valid((int)d->alg))
        return INVALID("%s: desc->alg = %d is not a kmux_eltwise_alg", fn, (int)d->alg);
    const char *alg = kmux_eltwise_alg_name(d->alg);
    if (d->prop != KMUX_PROP_FORWARD && d->prop != KMUX_PROP_BACKWARD)
        return INVALID(
            "%s: desc->prop = %d must be KMUX_PROP_FORWARD (1) or KMUX_PROP_BACKWARD (2)", fn,
            (int)d->prop);
    if (!kmux_family_dtype((int)d->dtype))
        return INVALID("%s: desc->dtype = %s (%d) is not f32, f16 or bf16", fn,
                       kmux_dtype_name(d->dtype), (int)d->dtype);
    size_t bytes;
    if (d->n < 0) return INVALID("%s: desc->n = %lld is negative", fn, (long long)d->n);
    if (!kmux_bytes_of(d->n, d->dtype, &bytes))
        return INVALID("%s: desc->n = %lld elements of %s overflow the address space", fn,
                       (long long)d->n, kmux_dtype_name(d->dtype));
    if (!isfinite(d->alpha) || !isfinite(d->beta))
        return INVALID("%s: desc->%s = %g is not finite", fn,
                       !isfinite(d->alpha) ? "alpha" : "beta",
                       (double)(!isfinite(d->alpha) ? d->alpha : d->beta));
    if (d->use_dst_for_bwd != 0 && d->use_dst_for_bwd != 1)
        return INVALID("%s: desc->use_dst_for_bwd = %d must be 0 or 1", fn, d->use_dst_for_bwd);
    const unsigned fl = kmux_eltwise_flags((int)d->alg);
    if (d->use_dst_for_bwd && !(fl & KMUX_ELT_DST_BWD))
        return INVALID("%s: desc->use_dst_for_bwd = 1: %s has no backward from its output (its "
                       "input cannot be recovered from it); keep src",
                       fn, alg);
    if (d->use_dst_for_bwd && (fl & KMUX_ELT_DST_BWD_ALPHA_NONNEG) && d->alpha < 0)
        return INVALID("%s: desc->use_dst_for_bwd = 1 with %s alpha = %g < 0: the output's sign "
                       "does not say the input's; keep src",
                       fn, alg, (double)d->alpha);
    return KMUX_OK;
}

/* What the device runs of the family (its caps.eltwise), one message for every backend. */
static kmux_status check_caps(const char *fn, const kmux_device *dev, const kmux_eltwise_desc *d) {
    const kmux_family_query q = {
        (int)d->alg, kmux_eltwise_alg_name(d->alg), d->dtype, "dtype", (int)d->prop, d->n, "n"};
    return kmux_caps_check_family(fn, dev, OPS(dev)->eltwise != NULL, &dev->caps.eltwise,
                                  "element-wise", &q);
}

static kmux_status create_native(kmux_device *dev, const void *desc, const kmux_plan_prefs *prefs,
                                 void **native, int *impl_count) {
    return OPS(dev)->eltwise->plan_create(STATE(dev), dev->index, desc, prefs, native, impl_count);
}

kmux_status kmux_eltwise_plan_create_unchecked(kmux_device *dev, const kmux_eltwise_desc *desc,
                                               const kmux_plan_prefs *prefs, kmux_plan **plan) {
    const char *fn = "kmux_eltwise_plan_create";
    kmux_status st = check_caps(fn, dev, desc);
    if (st != KMUX_OK) return st;
    return kmux_plan_create_family(dev, KMUX_PLAN_ELTWISE, fn, desc, sizeof *desc, desc->n == 0,
                                   prefs, create_native, plan);
}

kmux_status kmux_eltwise_plan_create(kmux_device *dev, const kmux_eltwise_desc *desc,
                                     const kmux_plan_prefs *prefs, kmux_plan **plan) {
    kmux_clear_error();
    const char *fn = "kmux_eltwise_plan_create";
    kmux_plan_prefs pr;
    kmux_eltwise_desc d;
    kmux_status st = kmux_plan_check_create(fn, dev, desc, plan, prefs, &pr);
    if (st == KMUX_OK) st = resolve_desc(fn, desc, &d);
    if (st == KMUX_OK) st = validate_desc(fn, &d);
    if (st == KMUX_OK) st = kmux_eltwise_plan_create_unchecked(dev, &d, &pr, plan);
    if (st == KMUX_OK) kmux_plan_count_as_callers(*plan);
    return st;
}

/* The written tensor w against a read one r: the same start (in place) or disjoint. */
static kmux_status check_overlap(const char *fn, const char *wn, const void *w, const char *rn,
                                 const void *r, size_t bytes) {
    if (w == r || !kmux_spans_overlap(w, bytes, r, bytes)) return KMUX_OK;
    return INVALID("%s: args->%s = %p overlaps args->%s = %p (%zu bytes each) without being the "
                   "same tensor (in place)",
                   fn, wn, w, rn, r, bytes);
}

kmux_status kmux_eltwise_execute(kmux_plan *plan, kmux_stream *stream,
                                 const kmux_eltwise_args *args) {
    kmux_clear_error();
    const char *fn = "kmux_eltwise_execute";
    kmux_status st = kmux_plan_check_execute(fn, plan, stream, args, KMUX_PLAN_ELTWISE);
    if (st != KMUX_OK) return st;
    if (args->struct_size < sizeof(kmux_eltwise_args))
        return INVALID("%s: args->struct_size = %zu is smaller than kmux_eltwise_args (%zu bytes)",
                       fn, args->struct_size, sizeof(kmux_eltwise_args));
    const kmux_eltwise_desc *d = &plan->desc.eltwise;
    if (d->n == 0) return KMUX_OK;
    kmux_eltwise_args a = *args;
    size_t bytes = 0;
    kmux_bytes_of(d->n, d->dtype, &bytes);
    if (d->prop == KMUX_PROP_FORWARD) {
        if (!a.src || !a.dst)
            return INVALID("%s: args->%s is NULL (forward reads src and writes dst, n = %lld)", fn,
                           !a.src ? "src" : "dst", (long long)d->n);
        st = check_overlap(fn, "dst", a.dst, "src", a.src, bytes);
        a.diff_dst = NULL;
        a.diff_src = NULL;
    } else {
        const char *saved = d->use_dst_for_bwd ? "dst" : "src";
        const void *sv = d->use_dst_for_bwd ? (const void *)a.dst : a.src;
        if (!sv || !a.diff_dst || !a.diff_src)
            return INVALID("%s: args->%s is NULL (backward reads diff_dst and %s and writes "
                           "diff_src, n = %lld)",
                           fn,
                           !sv           ? saved
                           : !a.diff_dst ? "diff_dst"
                                         : "diff_src",
                           saved, (long long)d->n);
        st = check_overlap(fn, "diff_src", a.diff_src, "diff_dst", a.diff_dst, bytes);
        if (st == KMUX_OK && kmux_spans_overlap(a.diff_src, bytes, sv, bytes))
            st = INVALID("%s: args->diff_src = %p overlaps args->%s = %p (%zu bytes each): the "
                         "saved tensor is read while the gradient is written",
                         fn, a.diff_src, saved, sv, bytes);
        if (d->use_dst_for_bwd)
            a.src = NULL;
        else
            a.dst = NULL;
    }
    if (st != KMUX_OK) return st;
    const double t0 = kmux_plan_exec_begin(plan, stream);
    st = OPS(plan->dev)->eltwise->execute(STATE(plan->dev), plan->native, plan->impl,
                                          stream->native, &a);
    if (st != KMUX_OK) return kmux_plan_backend_failed(st, fn, plan->dev);
    kmux_plan_exec_end(plan, stream, t0);
    return KMUX_OK;
}
