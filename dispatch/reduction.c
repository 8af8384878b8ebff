/*
 * reduction.c - the reduction family (kmux_reduction_* of kmux.h): validation from the one table
 * (dispatch/common/kmux_reduction.h), the device's caps.reduction for both dtypes, the plan, and
 * execution with its argument checks. The backend sees a dst with elements only.
 */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <string.h>

#include "dispatch/common/kmux_reduction.h"
#include "validate.h"

#define OPS(dev) ((dev)->backend->ops)
#define STATE(dev) ((dev)->backend->state)
#define INVALID(...) kmux_set_error(KMUX_ERR_INVALID_ARGUMENT, __VA_ARGS__)

const char *kmux_reduction_alg_name(kmux_reduction_alg alg) {
    return kmux_reduction_alg_str((int)alg);
}

static kmux_status validate_desc(const char *fn, const kmux_reduction_desc *d) {
    if (!strcmp(kmux_reduction_alg_str((int)d->alg), "?"))
        return INVALID("%s: desc->alg = %d is not a kmux_reduction_alg", fn, (int)d->alg);
    if (!kmux_family_dtype((int)d->src_dtype))
        return INVALID("%s: desc->src_dtype = %s (%d) is not f32, f16 or bf16", fn,
                       kmux_dtype_name(d->src_dtype), (int)d->src_dtype);
    if (!kmux_family_dtype((int)d->dst_dtype))
        return INVALID("%s: desc->dst_dtype = %s (%d) is not f32, f16 or bf16", fn,
                       kmux_dtype_name(d->dst_dtype), (int)d->dst_dtype);
    int64_t n;
    return kmux_validate_nd(fn, d->ndims, d->src_dims, "src_dims", d->dst_dims, "dst_dims", &n);
}

static kmux_status create_native(kmux_device *dev, const void *desc, const kmux_plan_prefs *prefs,
                                 void **native, int *impl_count) {
    return OPS(dev)->reduction->plan_create(STATE(dev), dev->index, desc, prefs, native,
                                            impl_count);
}

kmux_status kmux_reduction_plan_create_unchecked(kmux_device *dev, const kmux_reduction_desc *desc,
                                                 const kmux_plan_prefs *prefs, kmux_plan **plan) {
    const char *fn = "kmux_reduction_plan_create";
    const int64_t n = kmux_nd_elements(desc->ndims, desc->src_dims);
    const char *name = kmux_reduction_alg_name(desc->alg);
    const kmux_family_query qs = {(int)desc->alg,      name, desc->src_dtype, "src_dtype", 0, n,
                                  "src_dims (product)"};
    const kmux_family_query qd = {(int)desc->alg,      name, desc->dst_dtype, "dst_dtype", 0, n,
                                  "src_dims (product)"};
    const int has = OPS(dev)->reduction != NULL;
    kmux_status st = kmux_caps_check_family(fn, dev, has, &dev->caps.reduction, "reduction", &qs);
    if (st == KMUX_OK)
        st = kmux_caps_check_family(fn, dev, has, &dev->caps.reduction, "reduction", &qd);
    if (st != KMUX_OK) return st;
    return kmux_plan_create_family(dev, KMUX_PLAN_REDUCTION, fn, desc, sizeof *desc,
                                   kmux_nd_elements(desc->ndims, desc->dst_dims) == 0, prefs,
                                   create_native, plan);
}

kmux_status kmux_reduction_plan_create(kmux_device *dev, const kmux_reduction_desc *desc,
                                       const kmux_plan_prefs *prefs, kmux_plan **plan) {
    kmux_clear_error();
    const char *fn = "kmux_reduction_plan_create";
    kmux_plan_prefs pr;
    kmux_status st = kmux_plan_check_create(fn, dev, desc, plan, prefs, &pr);
    if (st != KMUX_OK) return st;
    if (desc->struct_size < sizeof(kmux_reduction_desc))
        return INVALID(
            "%s: desc->struct_size = %zu is smaller than kmux_reduction_desc (%zu bytes)", fn,
            desc->struct_size, sizeof(kmux_reduction_desc));
    kmux_reduction_desc d = *desc;
    d.struct_size = sizeof d;
    for (int i = d.ndims > 0 && d.ndims <= KMUX_MAX_NDIMS ? d.ndims : KMUX_MAX_NDIMS;
         i < KMUX_MAX_NDIMS; i++)
        d.src_dims[i] = d.dst_dims[i] = 1; /* the unused tail, so that plans compare equal */
    st = validate_desc(fn, &d);
    if (st == KMUX_OK) st = kmux_reduction_plan_create_unchecked(dev, &d, &pr, plan);
    if (st == KMUX_OK) kmux_plan_count_as_callers(*plan);
    return st;
}

kmux_status kmux_reduction_execute(kmux_plan *plan, kmux_stream *stream,
                                   const kmux_reduction_args *args) {
    kmux_clear_error();
    const char *fn = "kmux_reduction_execute";
    kmux_status st = kmux_plan_check_execute(fn, plan, stream, args, KMUX_PLAN_REDUCTION);
    if (st != KMUX_OK) return st;
    if (args->struct_size < sizeof(kmux_reduction_args))
        return INVALID(
            "%s: args->struct_size = %zu is smaller than kmux_reduction_args (%zu bytes)", fn,
            args->struct_size, sizeof(kmux_reduction_args));
    const kmux_reduction_desc *d = &plan->desc.reduction;
    const int64_t n = kmux_nd_elements(d->ndims, d->src_dims),
                  m = kmux_nd_elements(d->ndims, d->dst_dims);
    if (m == 0) return KMUX_OK;
    if (!args->dst) return INVALID("%s: args->dst is NULL (%lld elements)", fn, (long long)m);
    if (n > 0 && !args->src)
        return INVALID("%s: args->src is NULL (%lld elements)", fn, (long long)n);
    const size_t sb = (size_t)n * kmux_dtype_size(d->src_dtype),
                 db = (size_t)m * kmux_dtype_size(d->dst_dtype);
    if (kmux_spans_overlap(args->dst, db, args->src, sb))
        return INVALID("%s: args->dst = %p overlaps args->src = %p", fn, args->dst, args->src);
    const double t0 = kmux_plan_exec_begin(plan, stream);
    st = OPS(plan->dev)->reduction->execute(STATE(plan->dev), plan->native, plan->impl,
                                            stream->native, args);
    if (st != KMUX_OK) return kmux_plan_backend_failed(st, fn, plan->dev);
    kmux_plan_exec_end(plan, stream, t0);
    return KMUX_OK;
}
