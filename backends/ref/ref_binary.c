/*
 * ref_binary.c - the oracle of the binary family: dst = op(alpha src0, beta src1) in f64 over
 * dst's index space walked axis by axis (an odometer, not the grouped offsets of
 * dispatch/common/kmux_family.h that the kernels share), rounded once to the dtype.
 */
#include "ref_dtype.h"
#include "ref_internal.h"
#include "kmux_sys_alloc.h"

#include <math.h>
#include <stdlib.h>

kmux_status kmux_ref_binary_plan_create(void *state, int device, const kmux_binary_desc *desc,
                                        const kmux_plan_prefs *prefs, void **plan,
                                        int *impl_count) {
    (void)device, (void)prefs;
    ref_plan *p = kmux_sys_calloc(1, sizeof *p);
    if (!p) return kmux_ref_oom(state, "kmux_binary_plan_create", sizeof *p);
    p->kind = REF_PLAN_BINARY;
    p->bi = *desc;
    *plan = p;
    *impl_count = 1;
    return KMUX_OK;
}

static double op(kmux_binary_alg alg, double a, double b) {
    switch (alg) {
    case KMUX_BINARY_ADD:
        return a + b;
    case KMUX_BINARY_SUB:
        return a - b;
    case KMUX_BINARY_MUL:
        return a * b;
    case KMUX_BINARY_DIV:
        return a / b;
    case KMUX_BINARY_MAX:
        return isnan(a) || isnan(b) ? NAN : a > b ? a : b;
    case KMUX_BINARY_MIN:
        return isnan(a) || isnan(b) ? NAN : a < b ? a : b;
    }
    return NAN;
}

kmux_status kmux_ref_binary_execute(void *state, const void *plan, int impl, void *stream,
                                    const kmux_binary_args *a) {
    (void)state, (void)impl, (void)stream;
    const kmux_binary_desc *d = &((const ref_plan *)plan)->bi;
    const int nd = d->ndims;
    int64_t idx[KMUX_MAX_NDIMS] = {0}, total = 1;
    for (int k = 0; k < nd; k++)
        total *= d->dims[k];
    /* the scales are f32 products in every kernel: form them the same way, then op in f64 */
    for (int64_t i = 0; i < total; i++) {
        int64_t j = 0;
        for (int k = 0; k < nd; k++)
            j = j * d->src1_dims[k] + (d->src1_dims[k] == 1 ? 0 : idx[k]);
        const double x = (double)(float)(d->alpha * (float)kmux_ref_load(a->src0, d->dtype, i));
        const double y = (double)(float)(d->beta * (float)kmux_ref_load(a->src1, d->dtype, j));
        kmux_ref_store(a->dst, d->dtype, i, op(d->alg, x, y), 0);
        for (int k = nd - 1; k >= 0 && ++idx[k] == d->dims[k]; k--)
            idx[k] = 0;
    }
    return KMUX_OK;
}
