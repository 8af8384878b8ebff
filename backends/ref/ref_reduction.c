/*
 * ref_reduction.c - the oracle of the reduction family: one pass over src in row-major order
 * (an odometer), each value accumulated in f64 into its output's accumulator (the output index
 * is the input index with the reduced axes set to 0), then the final step and one rounding to
 * dst_dtype. Written apart from dispatch/common/kmux_reduction.h, which the kernels share.
 */
#include "ref_dtype.h"
#include "ref_internal.h"
#include "kmux_sys_alloc.h"

#include <math.h>
#include <stdlib.h>

kmux_status kmux_ref_reduction_plan_create(void *state, int device, const kmux_reduction_desc *desc,
                                           const kmux_plan_prefs *prefs, void **plan,
                                           int *impl_count) {
    (void)device, (void)prefs;
    ref_plan *p = kmux_sys_calloc(1, sizeof *p);
    if (!p) return kmux_ref_oom(state, "kmux_reduction_plan_create", sizeof *p);
    p->kind = REF_PLAN_REDUCTION;
    p->re = *desc;
    *plan = p;
    *impl_count = 1;
    return KMUX_OK;
}

kmux_status kmux_ref_reduction_execute(void *state, const void *plan, int impl, void *stream,
                                       const kmux_reduction_args *a) {
    (void)impl, (void)stream;
    const kmux_reduction_desc *d = &((const ref_plan *)plan)->re;
    const int nd = d->ndims;
    int64_t idx[KMUX_MAX_NDIMS] = {0}, n = 1, m = 1;
    for (int k = 0; k < nd; k++)
        n *= d->src_dims[k], m *= d->dst_dims[k];
    double *acc = kmux_sys_malloc((size_t)m * sizeof *acc);
    int *nan = kmux_sys_calloc((size_t)m, sizeof *nan);
    if (!acc || !nan) {
        free(acc), free(nan);
        return kmux_ref_oom(state, "kmux_reduction_execute", (size_t)m * (sizeof *acc + 4));
    }
    const kmux_reduction_alg alg = d->alg;
    for (int64_t j = 0; j < m; j++)
        acc[j] = alg == KMUX_REDUCTION_MAX ? -INFINITY : alg == KMUX_REDUCTION_MIN ? INFINITY : 0.0;
    for (int64_t i = 0; i < n; i++) {
        int64_t j = 0;
        for (int k = 0; k < nd; k++)
            j = j * d->dst_dims[k] + (d->dst_dims[k] == 1 ? 0 : idx[k]);
        const double x = kmux_ref_load(a->src, d->src_dtype, i);
        if (isnan(x)) nan[j] = 1;
        switch (alg) {
        case KMUX_REDUCTION_MAX:
            acc[j] = fmax(acc[j], x);
            break;
        case KMUX_REDUCTION_MIN:
            acc[j] = fmin(acc[j], x);
            break;
        case KMUX_REDUCTION_AMAX:
            acc[j] = fmax(acc[j], fabs(x));
            break;
        case KMUX_REDUCTION_NORM2:
            acc[j] += x * x;
            break;
        default:
            acc[j] += x;
        }
        for (int k = nd - 1; k >= 0 && ++idx[k] == d->src_dims[k]; k--)
            idx[k] = 0;
    }
    const int64_t count = m ? n / m : 0;
    for (int64_t j = 0; j < m; j++) {
        double v = acc[j];
        if (alg == KMUX_REDUCTION_MEAN) v = count ? v / (double)count : NAN;
        if (alg == KMUX_REDUCTION_NORM2) v = sqrt(v);
        if (nan[j]) v = NAN; /* fmax/fmin drop NaN; the sums carry it already */
        kmux_ref_store(a->dst, d->dst_dtype, j, v, 0);
    }
    free(acc), free(nan);
    return KMUX_OK;
}
