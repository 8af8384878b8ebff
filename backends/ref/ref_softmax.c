/*
 * ref_softmax.c - the oracle of the softmax family: softmax, log-softmax and softmax
 * cross-entropy written again in f64 (not the f32 row routine of dispatch/common/kmux_softmax.h
 * that the CPU and GPU kernels share), inputs decoded exactly, every output rounded once.
 */
#include "ref_dtype.h"
#include "ref_internal.h"
#include "kmux_sys_alloc.h"

#include <math.h>
#include <stdlib.h>

kmux_status kmux_ref_softmax_plan_create(void *state, int device, const kmux_softmax_desc *desc,
                                         const kmux_plan_prefs *prefs, void **plan,
                                         int *impl_count) {
    (void)device, (void)prefs;
    ref_plan *p = kmux_sys_calloc(1, sizeof *p);
    if (!p) return kmux_ref_oom(state, "kmux_softmax_plan_create", sizeof *p);
    p->kind = REF_PLAN_SOFTMAX;
    p->sm = *desc;
    *plan = p;
    *impl_count = 1;
    return KMUX_OK;
}

kmux_status kmux_ref_softmax_execute(void *state, const void *plan, int impl, void *stream,
                                     const kmux_softmax_args *a) {
    (void)state, (void)impl, (void)stream;
    const kmux_softmax_desc *d = &((const ref_plan *)plan)->sm;
    const kmux_dtype t = d->dtype;
    const int64_t C = d->cols;
    double total = 0.0;
    for (int64_t r = 0; r < d->rows; r++) {
        const int64_t o = r * C;
        if (d->prop == KMUX_PROP_BACKWARD) {
            double sum = 0.0;
            for (int64_t c = 0; c < C; c++) {
                const double dy = kmux_ref_load(a->dy, t, o + c);
                sum += d->alg == KMUX_SOFTMAX ? dy * kmux_ref_load(a->y, t, o + c) : dy;
            }
            for (int64_t c = 0; c < C; c++) {
                const double y = kmux_ref_load(a->y, t, o + c), dy = kmux_ref_load(a->dy, t, o + c);
                kmux_ref_store(a->dx, t, o + c,
                               d->alg == KMUX_SOFTMAX ? y * (dy - sum) : dy - exp(y) * sum, 0);
            }
            continue;
        }
        double m = -INFINITY;
        int64_t am = -1;
        int nan = 0;
        for (int64_t c = 0; c < C; c++) {
            const double v = kmux_ref_load(a->x, t, o + c);
            if (isnan(v))
                nan = 1;
            else if (am < 0 || v > m)
                m = v, am = c;
        }
        if (am < 0) am = 0; /* every logit NaN */
        double s = 0.0;
        for (int64_t c = 0; c < C; c++)
            s += exp(kmux_ref_load(a->x, t, o + c) - m);
        const double lse = nan ? NAN : m + log(s);
        if (d->alg != KMUX_SOFTMAX_CROSS_ENTROPY) {
            for (int64_t c = 0; c < C; c++) {
                const double v = kmux_ref_load(a->x, t, o + c);
                kmux_ref_store(a->y, t, o + c, d->alg == KMUX_SOFTMAX ? exp(v - lse) : v - lse, 0);
            }
            continue;
        }
        const int32_t l = a->labels[r];
        const int ok = l >= 0 && (int64_t)l < C;
        const double e = d->label_smoothing, on = 1.0 - e, off = e / (double)C;
        double loss = 0.0;
        for (int64_t c = 0; c < C; c++) /* sum over the target distribution */
            loss += ((c == l ? on : 0.0) + off) * (lse - kmux_ref_load(a->x, t, o + c));
        a->loss[r] = ok ? (float)loss : NAN;
        total += ok ? (double)a->loss[r] : NAN;
        if (a->argmax) a->argmax[r] = (int32_t)am;
        if (!a->dx) continue;
        const double coef = (a->grad_scale ? (double)*a->grad_scale : 1.0) / (double)d->rows;
        for (int64_t c = 0; c < C; c++) {
            const double q = exp(kmux_ref_load(a->x, t, o + c) - lse);
            const double g = (q - ((c == l ? on : 0.0) + off)) * coef;
            kmux_ref_store(a->dx, t, o + c, ok ? g : NAN, 0);
        }
    }
    if (d->alg == KMUX_SOFTMAX_CROSS_ENTROPY && a->mean_loss)
        *a->mean_loss = (float)(total / (double)d->rows);
    return KMUX_OK;
}
