/*
 * kmux_softmax.h - THE table of the softmax family (kmux_softmax_alg of kmux.h) and the f32 row
 * routine every CPU and GPU kernel runs (kernels/cpu/softmax.c: a parallel loop over rows;
 * kernels/gpu/kmux_gpu_softmax.cu: a grid-stride loop over rows, one thread a row). Compiles as
 * C11, C++ and device code; ref keeps its own f64 definitions (backends/ref/ref_softmax.c).
 *
 * Per row of `cols` values x (decoded to f32), with m = max x and s = sum exp(x - m):
 *   SOFTMAX        y = exp(x - m) / s;          backward dx = y (dy - sum(dy y))
 *   LOG_SOFTMAX    y = x - m - log s;           backward dx = dy - exp(y) sum(dy)
 *   CROSS_ENTROPY  (forward only) with label l and smoothing e, target t = (1 - e) onehot(l) + e/C:
 *                  loss = sum t (lse - x) = log s + (1 - e)(m - x_l) + e/C sum (m - x)
 *                  (lse = m + log s; every term >= 0, so nothing cancels),
 *                  dx = (softmax(x) - t) * (1 / rows * grad_scale), argmax = the first largest x.
 *                  A label outside [0, cols) gives loss NaN and a NaN gradient row.
 */
#ifndef KMUX_SOFTMAX_H
#define KMUX_SOFTMAX_H

#include <math.h>

#include "kmux.h"
#include "kmux_backend.h" /* kmux_family_caps */
#include "kmux_family.h"
#include "kmux_dtype_codec.h"
#include "kmux_dtype_desc.h"

/* Row flags. */
#define KMUX_SMX_BWD 1u  /* has a backward */
#define KMUX_SMX_XENT 2u /* reads labels, writes the loss */

/* X(ENUM suffix, "name", flags) */
#define KMUX_SOFTMAX_ALGS(X)                                                                       \
    X(SOFTMAX, "softmax", KMUX_SMX_BWD)                                                            \
    X(LOG_SOFTMAX, "log_softmax", KMUX_SMX_BWD)                                                    \
    X(SOFTMAX_CROSS_ENTROPY, "cross_entropy", KMUX_SMX_XENT)

#ifdef __cplusplus
extern "C" {
#endif

/** What one row of a step needs, by value into the kernels (pointers are the whole tensors). */
typedef struct kmux_smx_params {
    int64_t rows, cols;
    int alg, prop, dtype;
    float smoothing;
    const void *x;           /**< forward: the input; backward: NULL */
    const void *y, *dy;      /**< backward: the forward's output and its gradient */
    void *out;               /**< forward: y (SOFTMAX, LOG_SOFTMAX) or dx (CROSS_ENTROPY, NULL:
                                  none); backward: dx */
    const int32_t *labels;   /**< CROSS_ENTROPY */
    float *loss;             /**< CROSS_ENTROPY: per row */
    int32_t *argmax;         /**< CROSS_ENTROPY, may be NULL */
    float grad_coef;         /**< CROSS_ENTROPY: 1 / rows */
    const float *grad_scale; /**< CROSS_ENTROPY: multiplies the gradient (device); NULL = 1 */
} kmux_smx_params;

/** The row parameters of a validated description and its arguments (host code). */
static inline kmux_smx_params kmux_smx_params_of(const kmux_softmax_desc *d,
                                                 const kmux_softmax_args *a) {
    const int fwd = d->prop == KMUX_PROP_FORWARD;
    kmux_smx_params p;
    p.rows = d->rows, p.cols = d->cols;
    p.alg = (int)d->alg, p.prop = (int)d->prop, p.dtype = (int)d->dtype;
    p.smoothing = d->label_smoothing;
    p.x = fwd ? a->x : NULL;
    p.y = fwd ? NULL : a->y;
    p.dy = fwd ? NULL : a->dy;
    p.out = d->alg == KMUX_SOFTMAX_CROSS_ENTROPY ? a->dx : fwd ? a->y : a->dx;
    p.labels = a->labels, p.loss = a->loss, p.argmax = a->argmax;
    p.grad_coef = 1.0f / (float)d->rows;
    p.grad_scale = a->grad_scale;
    return p;
}

static inline KMUX_DTYPE_HD float kmux_smx_load(const void *p, int t, int64_t i) {
    return kmux_fam_load(p, t, i);
}

static inline KMUX_DTYPE_HD void kmux_smx_store(void *p, int t, int64_t i, float v) {
    kmux_fam_store(p, t, i, v);
}

/** Row r of the step (see the file comment). */
static inline KMUX_DTYPE_HD void kmux_smx_row(const kmux_smx_params *p, int64_t r) {
    const int64_t C = p->cols, o = r * C;
    const int t = p->dtype;
    if (p->prop == KMUX_PROP_BACKWARD) {
        float sum = 0.0f;
        for (int64_t c = 0; c < C; c++) {
            const float dy = kmux_smx_load(p->dy, t, o + c);
            sum += p->alg == KMUX_SOFTMAX ? dy * kmux_smx_load(p->y, t, o + c) : dy;
        }
        for (int64_t c = 0; c < C; c++) {
            const float y = kmux_smx_load(p->y, t, o + c), dy = kmux_smx_load(p->dy, t, o + c);
            kmux_smx_store(p->out, t, o + c,
                           p->alg == KMUX_SOFTMAX ? y * (dy - sum) : dy - expf(y) * sum);
        }
        return;
    }
    float m = kmux_smx_load(p->x, t, o);
    int64_t am = 0;
    for (int64_t c = 1; c < C; c++) {
        const float v = kmux_smx_load(p->x, t, o + c);
        if (v > m || (m != m && v == v)) m = v, am = c; /* the first largest; NaN loses */
    }
    float s = 0.0f, gap = 0.0f; /* gap: sum (m - x), no cancellation */
    for (int64_t c = 0; c < C; c++) {
        const float v = kmux_smx_load(p->x, t, o + c);
        s += expf(v - m);
        gap += m - v;
    }
    const float ls = logf(s);
    if (p->alg == KMUX_SOFTMAX || p->alg == KMUX_LOG_SOFTMAX) {
        for (int64_t c = 0; c < C; c++) {
            const float v = kmux_smx_load(p->x, t, o + c) - m;
            kmux_smx_store(p->out, t, o + c, p->alg == KMUX_SOFTMAX ? expf(v) / s : v - ls);
        }
        return;
    }
    const int32_t l = p->labels[r];
    const int ok = l >= 0 && (int64_t)l < C;
    const float e = p->smoothing, on = 1.0f - e, off = e / (float)C;
    const float xl = ok ? kmux_smx_load(p->x, t, o + l) : NAN;
    p->loss[r] = ls + on * (m - xl) + off * gap; /* lse - on x_l - off sum x */
    if (p->argmax) p->argmax[r] = (int32_t)am;
    if (!p->out) return;
    const float coef = p->grad_scale ? p->grad_coef * *p->grad_scale : p->grad_coef;
    for (int64_t c = 0; c < C; c++) {
        const float q = expf(kmux_smx_load(p->x, t, o + c) - m) / s;
        const float target = (c == (int64_t)l ? on : 0.0f) + off;
        kmux_smx_store(p->out, t, o + c, ok ? (q - target) * coef : NAN);
    }
}

/* ---- the table, for C callers ---- */

/** Row flags of alg (KMUX_SMX_*), bit 31 set for a known algorithm; 0 for an unknown one. */
static inline KMUX_DTYPE_HD unsigned kmux_softmax_flags(int alg) {
    switch (alg) {
#define KMUX_SMX_FLAGS_(E, nm, fl)                                                                 \
    case KMUX_##E:                                                                                 \
        return (fl) | 0x80000000u;
        KMUX_SOFTMAX_ALGS(KMUX_SMX_FLAGS_)
#undef KMUX_SMX_FLAGS_
    default:
        return 0u;
    }
}

/** The name of alg ("softmax", "log_softmax", "cross_entropy"), "?" for an unknown value. */
static inline const char *kmux_softmax_alg_str(int alg) {
    switch (alg) {
#define KMUX_SMX_NAME_(E, nm, fl)                                                                  \
    case KMUX_##E:                                                                                 \
        return nm;
        KMUX_SOFTMAX_ALGS(KMUX_SMX_NAME_)
#undef KMUX_SMX_NAME_
    default:
        return "?";
    }
}

/** Every algorithm as a mask (bit alg), for a device's caps. */
static inline KMUX_DTYPE_HD uint64_t kmux_softmax_all_algs(void) {
    return 0
#define KMUX_SMX_BIT_(E, nm, fl) | (UINT64_C(1) << KMUX_##E)
        KMUX_SOFTMAX_ALGS(KMUX_SMX_BIT_)
#undef KMUX_SMX_BIT_
            ;
}

/** What a device running every algorithm of the family runs (the CPU and GPU kernels). */
static inline void kmux_softmax_full_caps(kmux_family_caps *c) {
    c->algs = kmux_softmax_all_algs();
    c->dtypes = KMUX_FAMILY_DTYPES;
    c->props = (1u << KMUX_PROP_FORWARD) | (1u << KMUX_PROP_BACKWARD);
    c->max_elements = 0;
}

#ifdef __cplusplus
}
#endif
#endif
