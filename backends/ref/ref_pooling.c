/*
 * ref_pooling.c - the oracle of the pooling family: every window walked over the padded input
 * (kh x kw positions, those in the padding skipped), in f64; backward scatters each dy into an
 * f64 accumulator of dx (the kernels gather instead, or scatter in f32), then rounds once.
 * Written apart from dispatch/common/kmux_pooling.h, which the kernels share.
 */
#include "ref_dtype.h"
#include "ref_internal.h"
#include "kmux_sys_alloc.h"

#include <math.h>
#include <stdlib.h>

kmux_status kmux_ref_pooling_plan_create(void *state, int device, const kmux_pooling_desc *desc,
                                         const kmux_plan_prefs *prefs, void **plan,
                                         int *impl_count) {
    (void)device, (void)prefs;
    ref_plan *p = kmux_sys_calloc(1, sizeof *p);
    if (!p) return kmux_ref_oom(state, "kmux_pooling_plan_create", sizeof *p);
    p->kind = REF_PLAN_POOLING;
    p->po = *desc;
    *plan = p;
    *impl_count = 1;
    return KMUX_OK;
}

/* offset of (b, ch, i, j) in a b x c x rows x cols tensor of the layout */
static int64_t at(const kmux_pooling_desc *d, int64_t b, int64_t ch, int64_t i, int64_t j,
                  int64_t rows, int64_t cols) {
    return d->layout == KMUX_NHWC ? ((b * rows + i) * cols + j) * d->c + ch
                                  : ((b * d->c + ch) * rows + i) * cols + j;
}

kmux_status kmux_ref_pooling_execute(void *state, const void *plan, int impl, void *stream,
                                     const kmux_pooling_args *a) {
    (void)impl, (void)stream;
    const kmux_pooling_desc *d = &((const ref_plan *)plan)->po;
    const int64_t P = (d->h + d->pad_top + d->pad_bottom - d->kernel_h) / d->stride_h + 1;
    const int64_t Q = (d->w + d->pad_left + d->pad_right - d->kernel_w) / d->stride_w + 1;
    const int fwd = d->prop == KMUX_PROP_FORWARD;
    const int64_t nx = d->n * d->c * d->h * d->w;
    double *acc = NULL;
    if (!fwd) {
        acc = kmux_sys_calloc((size_t)nx, sizeof *acc);
        if (!acc) return kmux_ref_oom(state, "kmux_pooling_execute", (size_t)nx * sizeof *acc);
    }
    for (int64_t b = 0; b < d->n; b++)
        for (int64_t ch = 0; ch < d->c; ch++)
            for (int64_t oi = 0; oi < P; oi++)
                for (int64_t oj = 0; oj < Q; oj++) {
                    double sum = 0.0, best = 0.0;
                    int64_t best_at = -1, inside = 0;
                    for (int64_t ki = 0; ki < d->kernel_h; ki++)
                        for (int64_t kj = 0; kj < d->kernel_w; kj++) {
                            const int64_t i = oi * d->stride_h - d->pad_top + ki;
                            const int64_t j = oj * d->stride_w - d->pad_left + kj;
                            if (i < 0 || i >= d->h || j < 0 || j >= d->w) continue; /* padding */
                            const int64_t o = at(d, b, ch, i, j, d->h, d->w);
                            inside++;
                            if (d->alg != KMUX_POOLING_MAX) continue;
                            const double v = kmux_ref_load(a->x, d->dtype, o);
                            /* the first largest; the first NaN, once seen, stays */
                            if (best_at < 0 || (!isnan(best) && (isnan(v) || v > best)))
                                best = v, best_at = o;
                        }
                    const double div = d->alg == KMUX_POOLING_AVG_INCLUDE_PAD
                                           ? (double)(d->kernel_h * d->kernel_w)
                                           : (double)inside;
                    const int64_t yo = at(d, b, ch, oi, oj, P, Q);
                    if (fwd) {
                        if (d->alg == KMUX_POOLING_MAX) {
                            kmux_ref_store(a->y, d->dtype, yo, best, 0);
                            continue;
                        }
                        for (int64_t ki = 0; ki < d->kernel_h; ki++)
                            for (int64_t kj = 0; kj < d->kernel_w; kj++) {
                                const int64_t i = oi * d->stride_h - d->pad_top + ki;
                                const int64_t j = oj * d->stride_w - d->pad_left + kj;
                                if (i >= 0 && i < d->h && j >= 0 && j < d->w)
                                    sum += kmux_ref_load(a->x, d->dtype,
                                                         at(d, b, ch, i, j, d->h, d->w));
                            }
                        kmux_ref_store(a->y, d->dtype, yo, sum / div, 0);
                        continue;
                    }
                    const double g = kmux_ref_load(a->dy, d->dtype, yo);
                    if (d->alg == KMUX_POOLING_MAX) {
                        acc[best_at] += g;
                        continue;
                    }
                    for (int64_t ki = 0; ki < d->kernel_h; ki++)
                        for (int64_t kj = 0; kj < d->kernel_w; kj++) {
                            const int64_t i = oi * d->stride_h - d->pad_top + ki;
                            const int64_t j = oj * d->stride_w - d->pad_left + kj;
                            if (i >= 0 && i < d->h && j >= 0 && j < d->w)
                                acc[at(d, b, ch, i, j, d->h, d->w)] += g / div;
                        }
                }
    if (!fwd) {
        for (int64_t e = 0; e < nx; e++)
            kmux_ref_store(a->dx, d->dtype, e, acc[e], 0);
        free(acc);
    }
    return KMUX_OK;
}
