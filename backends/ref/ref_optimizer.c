/*
 * ref_optimizer.c - the oracle of the optimizer family: SGD, Adam and AdamW written again here in
 * f64 from PyTorch's definitions (torch/optim/sgd.py, adam.py, adamw.py; not the f32 code of
 * dispatch/common/kmux_optimizer.h that the CPU and GPU kernels share), gradients decoded exactly,
 * the parameters and states rounded to f32 once per step, the copy rounded from the f32 result.
 */
#include "ref_dtype.h"
#include "ref_internal.h"
#include "kmux_sys_alloc.h"

#include <math.h>
#include <stdlib.h>

kmux_status kmux_ref_optimizer_plan_create(void *state, int device, const kmux_optimizer_desc *desc,
                                           const kmux_plan_prefs *prefs, void **plan,
                                           int *impl_count) {
    (void)device, (void)prefs;
    ref_plan *p = kmux_sys_calloc(1, sizeof *p);
    if (!p) return kmux_ref_oom(state, "kmux_optimizer_plan_create", sizeof *p);
    p->kind = REF_PLAN_OPTIMIZER;
    p->op = *desc;
    *plan = p;
    *impl_count = 1;
    return KMUX_OK;
}

kmux_status kmux_ref_optimizer_execute(void *state, const void *plan, int impl, void *stream,
                                       const kmux_optimizer_args *a) {
    (void)state, (void)impl, (void)stream;
    const kmux_optimizer_desc *d = &((const ref_plan *)plan)->op;
    if (a->found_inf && *a->found_inf != 0.0f) return KMUX_OK; /* the step is skipped */
    const double gs = a->grad_scale ? (double)*a->grad_scale : 1.0, lr = a->lr;
    const double wd = d->weight_decay, mom = d->momentum, b1 = d->beta1, b2 = d->beta2;
    const double t = (double)a->step;
    for (int64_t i = 0; i < d->n; i++) {
        double p = a->param[i], g = kmux_ref_load(a->grad, d->grad_type, i) * gs;
        if (d->alg == KMUX_OPTIMIZER_SGD) {
            if (wd != 0) g += wd * p;
            if (mom != 0) {
                double b = a->step == 1 ? g : mom * a->state1[i] + (1.0 - d->dampening) * g;
                a->state1[i] = (float)b;
                g = d->nesterov ? g + mom * b : b;
            }
            p -= lr * g;
        } else {
            if (d->alg == KMUX_OPTIMIZER_ADAMW)
                p *= 1.0 - lr * wd;
            else if (wd != 0)
                g += wd * p;
            const double m = a->state1[i] + (1.0 - b1) * (g - a->state1[i]);
            const double v = b2 * a->state2[i] + (1.0 - b2) * g * g;
            a->state1[i] = (float)m;
            a->state2[i] = (float)v;
            const double step_size = lr / (1.0 - pow(b1, t));
            p -= step_size * m / (sqrt(v) / sqrt(1.0 - pow(b2, t)) + d->eps);
        }
        a->param[i] = (float)p;
        if (d->copy_type)
            kmux_ref_store(a->param_copy, (kmux_dtype)d->copy_type, i, (double)a->param[i], 0);
    }
    return KMUX_OK;
}
