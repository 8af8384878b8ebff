/*
 * kmux_optimizer.h - THE table of the optimizer family (kmux_optimizer_alg of kmux.h) and the f32
 * update of one parameter for every algorithm, for the core (names, validation), the CPU kernels
 * (kernels/cpu/optimizer.c) and the GPU kernel (kernels/gpu/kmux_gpu_optimizer.cu). Compiles as
 * C11, C++ and device code. ref keeps its own f64 definitions (backends/ref/ref_optimizer.c).
 *
 * The formulas are PyTorch's single-tensor paths (torch/optim/sgd.py, adam.py, adamw.py), in
 * their order of operations, so that a trainer moving from torch.optim sees the same numbers:
 *   SGD    g += wd p; buf = step 1 ? g : momentum buf + (1 - dampening) g;
 *          g = nesterov ? g + momentum buf : buf (momentum != 0); p -= lr g
 *   Adam   g += wd p; m += (1 - b1)(g - m); v = b2 v + (1 - b2) g g;
 *          p += -(lr / (1 - b1^t)) m / (sqrt(v) / sqrt(1 - b2^t) + eps)
 *   AdamW  p *= 1 - lr wd, then Adam without the g += wd p
 * The per-step scalars (bias corrections) are formed once per call in f64 (kmux_opt_scalars_of),
 * as PyTorch forms them in Python floats.
 */
#ifndef KMUX_OPTIMIZER_H
#define KMUX_OPTIMIZER_H

#include <math.h>

#include "kmux.h"
#include "kmux_backend.h" /* kmux_family_caps */
#include "kmux_family.h"
#include "kmux_dtype_desc.h"

/* Row flags. */
#define KMUX_OPT_STATE1 1u /* uses state1 (SGD: only when momentum != 0) */
#define KMUX_OPT_STATE2 2u /* uses state2 */
#define KMUX_OPT_ADAM 4u   /* reads beta1, beta2, eps */

/* X(ENUM suffix, function stem, "name", flags) */
#define KMUX_OPTIMIZER_ALGS(X)                                                                     \
    X(SGD, sgd, "sgd", KMUX_OPT_STATE1)                                                            \
    X(ADAM, adam, "adam", KMUX_OPT_STATE1 | KMUX_OPT_STATE2 | KMUX_OPT_ADAM)                       \
    X(ADAMW, adamw, "adamw", KMUX_OPT_STATE1 | KMUX_OPT_STATE2 | KMUX_OPT_ADAM)

#ifdef __cplusplus
extern "C" {
#endif

/** The scalars of one step, by value into every kernel. */
typedef struct kmux_opt_scalars {
    float lr, momentum, dampening, wd, b1, b2, eps;
    float step_size;     /**< Adam: lr / (1 - b1^t) */
    float bc2_sqrt;      /**< Adam: sqrt(1 - b2^t) */
    float decay;         /**< AdamW: 1 - lr wd */
    int nesterov, first; /**< first: step == 1 */
} kmux_opt_scalars;

/** The scalars of desc at learning rate lr and step `step` (>= 1). Host code only. */
static inline kmux_opt_scalars kmux_opt_scalars_of(const kmux_optimizer_desc *d, float lr,
                                                   int64_t step) {
    kmux_opt_scalars s;
    s.lr = lr;
    s.momentum = d->momentum;
    s.dampening = d->dampening;
    s.wd = d->weight_decay;
    s.b1 = d->beta1;
    s.b2 = d->beta2;
    s.eps = d->eps;
    s.step_size = (float)((double)lr / (1.0 - pow((double)d->beta1, (double)step)));
    s.bc2_sqrt = (float)sqrt(1.0 - pow((double)d->beta2, (double)step));
    s.decay = (float)(1.0 - (double)lr * (double)d->weight_decay);
    s.nesterov = d->nesterov;
    s.first = step == 1;
    return s;
}

/* ---- one parameter: p (f32 master), g (the gradient, decoded and unscaled), the states ---- */

static inline KMUX_DTYPE_HD void kmux_opt_sgd(float *p, float g, float *buf, float *unused,
                                              const kmux_opt_scalars *s) {
    (void)unused;
    const float gw = g + s->wd * *p;
    g = s->wd != 0.0f ? gw : g;
    if (buf) { /* momentum != 0 */
        const float b = s->first ? g : s->momentum * *buf + (1.0f - s->dampening) * g;
        *buf = b;
        g = s->nesterov ? g + s->momentum * b : b;
    }
    *p = *p - s->lr * g;
}

static inline KMUX_DTYPE_HD void kmux_opt_adam_core(float *p, float g, float *m, float *v,
                                                    const kmux_opt_scalars *s) {
    const float mm = *m + (1.0f - s->b1) * (g - *m);
    const float vv = s->b2 * *v + (1.0f - s->b2) * g * g;
    *m = mm;
    *v = vv;
    const float denom = sqrtf(vv) / s->bc2_sqrt + s->eps;
    *p = *p + (-s->step_size) * (mm / denom);
}

static inline KMUX_DTYPE_HD void kmux_opt_adam(float *p, float g, float *m, float *v,
                                               const kmux_opt_scalars *s) {
    const float gw = g + s->wd * *p;
    kmux_opt_adam_core(p, s->wd != 0.0f ? gw : g, m, v, s);
}

static inline KMUX_DTYPE_HD void kmux_opt_adamw(float *p, float g, float *m, float *v,
                                                const kmux_opt_scalars *s) {
    *p = *p * s->decay;
    kmux_opt_adam_core(p, g, m, v, s);
}

/* ---- the table, for C callers ---- */

/** Row flags of alg (KMUX_OPT_*), with bit 31 set for a known algorithm; 0 for an unknown one. */
static inline KMUX_DTYPE_HD unsigned kmux_optimizer_flags(int alg) {
    switch (alg) {
#define KMUX_OPT_FLAGS_(E, f, nm, fl)                                                              \
    case KMUX_OPTIMIZER_##E:                                                                       \
        return (fl) | 0x80000000u;
        KMUX_OPTIMIZER_ALGS(KMUX_OPT_FLAGS_)
#undef KMUX_OPT_FLAGS_
    default:
        return 0u;
    }
}

/** The name of alg ("sgd", "adam", "adamw"), "?" for an unknown value. */
static inline const char *kmux_optimizer_alg_str(int alg) {
    switch (alg) {
#define KMUX_OPT_NAME_(E, f, nm, fl)                                                               \
    case KMUX_OPTIMIZER_##E:                                                                       \
        return nm;
        KMUX_OPTIMIZER_ALGS(KMUX_OPT_NAME_)
#undef KMUX_OPT_NAME_
    default:
        return "?";
    }
}

/** Every algorithm of the table as a mask (bit alg), for a device's caps. */
static inline KMUX_DTYPE_HD uint64_t kmux_optimizer_all_algs(void) {
    return 0
#define KMUX_OPT_BIT_(E, f, nm, fl) | (UINT64_C(1) << KMUX_OPTIMIZER_##E)
        KMUX_OPTIMIZER_ALGS(KMUX_OPT_BIT_)
#undef KMUX_OPT_BIT_
            ;
}

/** What a device running every algorithm of the family runs (the CPU and GPU kernels). */
static inline void kmux_optimizer_full_caps(kmux_family_caps *c) {
    c->algs = kmux_optimizer_all_algs();
    c->dtypes = KMUX_FAMILY_DTYPES;
    c->props = 0;
    c->max_elements = 0;
}

#ifdef __cplusplus
}
#endif
#endif
