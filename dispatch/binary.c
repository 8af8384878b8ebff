/*
 * binary.c - the binary family (kmux_binary_* of kmux.h): validation from the one table
 * (dispatch/common/kmux_binary.h), the device's caps.binary, the plan, and execution with its
 * argument checks. The backend sees shapes without a 0 only: an empty op writes nothing.
 */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "dispatch/common/kmux_binary.h"
#include "validate.h"

#define OPS(dev) ((dev)->backend->ops)
#define STATE(dev) ((dev)->backend->state)
#define INVALID(...) kmux_set_error(KMUX_ERR_INVALID_ARGUMENT, __VA_ARGS__)

const char *kmux_binary_alg_name(kmux_binary_alg alg) {
    return kmux_binary_alg_str((int)alg);
}

static kmux_status validate_desc(const char *fn, const kmux_binary_desc *d, int64_t *n) {
    if (!strcmp(kmux_binary_alg_str((int)d->alg), "?"))
        return INVALID("%s: desc->alg = %d is not a kmux_binary_alg", fn, (int)d->alg);
    if (!kmux_family_dtype((int)d->dtype))
        return INVALID("%s: desc->dtype = %s (%d) is not f32, f16 or bf16", fn,
                       kmux_dtype_name(d->dtype), (int)d->dtype);
    kmux_status st = kmux_validate_nd(fn, d->ndims, d->dims, "dims", d->src1_dims, "src1_dims", n);
    if (st != KMUX_OK) return st;
    if (!isfinite(d->alpha) || !isfinite(d->beta))
        return INVALID("%s: desc->alpha = %g, desc->beta = %g must be finite", fn, (double)d->alpha,
                       (double)d->beta);
    return KMUX_OK;
}

static kmux_status create_native(kmux_device *dev, const void *desc, const kmux_plan_prefs *prefs,
                                 void **native, int *impl_count) {
    return OPS(dev)->binary->plan_create(STATE(dev), dev->index, desc, prefs, native, impl_count);
}

kmux_status kmux_binary_plan_create_unchecked(kmux_device *dev, const kmux_binary_desc *desc,
                                              const kmux_plan_prefs *prefs, kmux_plan **plan) {
    const char *fn = "kmux_binary_plan_create";
    const int64_t n = kmux_nd_elements(desc->ndims, desc->dims);
    const kmux_family_query q = {
        (int)desc->alg,  kmux_binary_alg_name(desc->alg), desc->dtype, "dtype", 0, n,
        "dims (product)"};
    kmux_status st =
        kmux_caps_check_family(fn, dev, OPS(dev)->binary != NULL, &dev->caps.binary, "binary", &q);
    if (st != KMUX_OK) return st;
    return kmux_plan_create_family(dev, KMUX_PLAN_BINARY, fn, desc, sizeof *desc, n == 0, prefs,
                                   create_native, plan);
}

kmux_status kmux_binary_plan_create(kmux_device *dev, const kmux_binary_desc *desc,
                                    const kmux_plan_prefs *prefs, kmux_plan **plan) {
    kmux_clear_error();
    const char *fn = "kmux_binary_plan_create";
    kmux_plan_prefs pr;
    kmux_status st = kmux_plan_check_create(fn, dev, desc, plan, prefs, &pr);
    if (st != KMUX_OK) return st;
    if (desc->struct_size < sizeof(kmux_binary_desc))
        return INVALID("%s: desc->struct_size = %zu is smaller than kmux_binary_desc (%zu bytes)",
                       fn, desc->struct_size, sizeof(kmux_binary_desc));
    kmux_binary_desc d = *desc;
    d.struct_size = sizeof d;
    for (int i = d.ndims > 0 && d.ndims <= KMUX_MAX_NDIMS ? d.ndims : KMUX_MAX_NDIMS;
         i < KMUX_MAX_NDIMS; i++)
        d.dims[i] = d.src1_dims[i] = 1; /* the unused tail, so that plans compare equal */
    int64_t n = 0;
    st = validate_desc(fn, &d, &n);
    if (st == KMUX_OK) st = kmux_binary_plan_create_unchecked(dev, &d, &pr, plan);
    if (st == KMUX_OK) kmux_plan_count_as_callers(*plan);
    return st;
}

kmux_status kmux_binary_execute(kmux_plan *plan, kmux_stream *stream,
                                const kmux_binary_args *args) {
    kmux_clear_error();
    const char *fn = "kmux_binary_execute";
    kmux_status st = kmux_plan_check_execute(fn, plan, stream, args, KMUX_PLAN_BINARY);
    if (st != KMUX_OK) return st;
    if (args->struct_size < sizeof(kmux_binary_args))
        return INVALID("%s: args->struct_size = %zu is smaller than kmux_binary_args (%zu bytes)",
                       fn, args->struct_size, sizeof(kmux_binary_args));
    const kmux_binary_desc *d = &plan->desc.binary;
    const int64_t n = kmux_nd_elements(d->ndims, d->dims);
    if (n == 0) return KMUX_OK;
    const size_t es = kmux_dtype_size(d->dtype), bytes = (size_t)n * es,
                 bytes1 = (size_t)kmux_nd_elements(d->ndims, d->src1_dims) * es;
    const char *names[3] = {"src0", "src1", "dst"};
    const void *ptrs[3] = {args->src0, args->src1, args->dst};
    for (int i = 0; i < 3; i++)
        if (!ptrs[i])
            return INVALID("%s: args->%s is NULL (%lld elements)", fn, names[i], (long long)n);
    if (args->dst != args->src0 && kmux_spans_overlap(args->dst, bytes, args->src0, bytes))
        return INVALID("%s: args->dst = %p overlaps args->src0 = %p (only dst == src0 is allowed)",
                       fn, args->dst, args->src0);
    if (kmux_spans_overlap(args->dst, bytes, args->src1, bytes1))
        return INVALID("%s: args->dst = %p overlaps args->src1 = %p", fn, args->dst, args->src1);
    const double t0 = kmux_plan_exec_begin(plan, stream);
    st = OPS(plan->dev)->binary->execute(STATE(plan->dev), plan->native, plan->impl, stream->native,
                                         args);
    if (st != KMUX_OK) return kmux_plan_backend_failed(st, fn, plan->dev);
    kmux_plan_exec_end(plan, stream, t0);
    return KMUX_OK;
}
