/*
 * kmux_pooling.h - THE table of the pooling family (kmux_pooling_alg of kmux.h), the output size,
 * and the per-element routines of the kernels: one y element forward, one dx element backward
 * (gathered from the windows that hold it, the max window's argmax recomputed from x), read by
 * the core, the CPU kernel (kernels/cpu/pooling.c: the forward routine, its own scatter backward)
 * and the GPU kernel (kernels/gpu/kmux_gpu_pooling.cu: both routines, one thread an element).
 * Compiles as C11, C++ and device code; ref keeps its own f64 definitions
 * (backends/ref/ref_pooling.c).
 *
 * Adding an algorithm: its value in kmux_pooling_alg (kmux.h), one row below, its divisor in
 * kmux_pool_divisor (or its value rule beside MAX's), its definition in ref_pooling.c.
 */
#ifndef KMUX_POOLING_H
#define KMUX_POOLING_H

#include <math.h>

#include "kmux.h"
#include "kmux_backend.h" /* kmux_family_caps */
#include "kmux_family.h"

/* X(ENUM suffix, "name"), named as PyTorch's count_include_pad and oneDNN's pooling_avg_*. */
#define KMUX_POOLING_ALGS(X)                                                                       \
    X(MAX, "max")                                                                                  \
    X(AVG_INCLUDE_PAD, "avg_include_pad")                                                          \
    X(AVG_EXCLUDE_PAD, "avg_exclude_pad")

#ifdef __cplusplus
extern "C" {
#endif

/** The output size along one axis (the caller has checked the sizes); < 1 when empty. */
static inline KMUX_DTYPE_HD int64_t kmux_pool_out_dim(int64_t in, int64_t k, int64_t stride,
                                                      int64_t pad0, int64_t pad1) {
    const int64_t span = in + pad0 + pad1 - k;
    return span < 0 ? 0 : span / stride + 1;
}

/** One pooling op, by value into the kernels. */
typedef struct kmux_pool_params {
    int alg, prop, dtype, nhwc;
    int64_t n, c, h, w, p, q;
    int64_t kh, kw, sh, sw, pt, pl;
    const void *x;
    void *y;
    const void *dy;
    void *dx;
} kmux_pool_params;

/** The parameters of a validated description and its tensors. */
static inline kmux_pool_params kmux_pool_params_of(const kmux_pooling_desc *d,
                                                   const kmux_pooling_args *a) {
    kmux_pool_params p;
    p.alg = (int)d->alg, p.prop = (int)d->prop, p.dtype = (int)d->dtype;
    p.nhwc = d->layout == KMUX_NHWC;
    p.n = d->n, p.c = d->c, p.h = d->h, p.w = d->w;
    p.p = kmux_pool_out_dim(d->h, d->kernel_h, d->stride_h, d->pad_top, d->pad_bottom);
    p.q = kmux_pool_out_dim(d->w, d->kernel_w, d->stride_w, d->pad_left, d->pad_right);
    p.kh = d->kernel_h, p.kw = d->kernel_w, p.sh = d->stride_h, p.sw = d->stride_w;
    p.pt = d->pad_top, p.pl = d->pad_left;
    p.x = a->x, p.y = a->y, p.dy = a->dy, p.dx = a->dx;
    return p;
}

/** Offset of element (ni, ci, i, j) of a tensor of ni x c x rows x cols in the layout. */
static inline KMUX_DTYPE_HD int64_t kmux_pool_at(const kmux_pool_params *p, int64_t ni, int64_t ci,
                                                 int64_t i, int64_t j, int64_t rows, int64_t cols) {
    return p->nhwc ? ((ni * rows + i) * cols + j) * p->c + ci
                   : ((ni * p->c + ci) * rows + i) * cols + j;
}

/** Splits e, an element index of a tensor of n x c x rows x cols in the layout, into its
 *  coordinates. */
static inline KMUX_DTYPE_HD void kmux_pool_coords(const kmux_pool_params *p, int64_t e,
                                                  int64_t rows, int64_t cols, int64_t *ni,
                                                  int64_t *ci, int64_t *i, int64_t *j) {
    if (p->nhwc) {
        *ci = e % p->c, e /= p->c;
        *j = e % cols, e /= cols;
        *i = e % rows, *ni = e / rows;
    } else {
        *j = e % cols, e /= cols;
        *i = e % rows, e /= rows;
        *ci = e % p->c, *ni = e / p->c;
    }
}

/** The x rows [*r0, *r1) and columns [*c0, *c1) of output (oi, oj)'s window, clipped to x. */
static inline KMUX_DTYPE_HD void kmux_pool_window(const kmux_pool_params *p, int64_t oi, int64_t oj,
                                                  int64_t *r0, int64_t *r1, int64_t *c0,
                                                  int64_t *c1) {
    const int64_t a = oi * p->sh - p->pt, b = oj * p->sw - p->pl;
    *r0 = a < 0 ? 0 : a, *r1 = a + p->kh < p->h ? a + p->kh : p->h;
    *c0 = b < 0 ? 0 : b, *c1 = b + p->kw < p->w ? b + p->kw : p->w;
}

/** What an average divides its window's sum by: the whole window (padding counted) or the x
 *  elements in it. */
static inline KMUX_DTYPE_HD float kmux_pool_divisor(const kmux_pool_params *p, int64_t r0,
                                                    int64_t r1, int64_t c0, int64_t c1) {
    return p->alg == KMUX_POOLING_AVG_INCLUDE_PAD ? (float)(p->kh * p->kw)
                                                  : (float)((r1 - r0) * (c1 - c0));
}

/** MAX's choice: v replaces the best so far when larger, or a NaN while best is not one (the
 *  first NaN stays). Bitwise, not short-circuit: a select the CPU kernel's loops vectorise. */
static inline KMUX_DTYPE_HD int kmux_pool_better(float v, float best) {
    return ((v > best) | (v != v)) & (best == best);
}

/** The x offset of MAX's choice in the window of output (oi, oj) of plane (ni, ci): the first
 *  largest in row-major order. */
static inline KMUX_DTYPE_HD int64_t kmux_pool_argmax(const kmux_pool_params *p, int64_t ni,
                                                     int64_t ci, int64_t oi, int64_t oj) {
    int64_t r0, r1, c0, c1;
    kmux_pool_window(p, oi, oj, &r0, &r1, &c0, &c1);
    int64_t best_at = kmux_pool_at(p, ni, ci, r0, c0, p->h, p->w);
    float best = kmux_fam_load(p->x, p->dtype, best_at);
    for (int64_t i = r0; i < r1; i++)
        for (int64_t j = c0; j < c1; j++) {
            const int64_t at = kmux_pool_at(p, ni, ci, i, j, p->h, p->w);
            const float v = kmux_fam_load(p->x, p->dtype, at);
            if (kmux_pool_better(v, best)) best = v, best_at = at;
        }
    return best_at;
}

/** Forward: y element e (in the layout's order). */
static inline KMUX_DTYPE_HD void kmux_pool_fwd_output(const kmux_pool_params *p, int64_t e) {
    int64_t ni, ci, oi, oj, r0, r1, c0, c1;
    kmux_pool_coords(p, e, p->p, p->q, &ni, &ci, &oi, &oj);
    float v;
    if (p->alg == KMUX_POOLING_MAX) {
        v = kmux_fam_load(p->x, p->dtype, kmux_pool_argmax(p, ni, ci, oi, oj));
    } else {
        kmux_pool_window(p, oi, oj, &r0, &r1, &c0, &c1);
        float s = 0.0f;
        for (int64_t i = r0; i < r1; i++)
            for (int64_t j = c0; j < c1; j++)
                s += kmux_fam_load(p->x, p->dtype, kmux_pool_at(p, ni, ci, i, j, p->h, p->w));
        v = s / kmux_pool_divisor(p, r0, r1, c0, c1);
    }
    kmux_fam_store(p->y, p->dtype, e, v);
}

/** The outputs [*lo, *hi) along one axis whose windows hold input index i. */
static inline KMUX_DTYPE_HD void kmux_pool_covering(int64_t i, int64_t k, int64_t stride,
                                                    int64_t pad, int64_t out, int64_t *lo,
                                                    int64_t *hi) {
    const int64_t a = i + pad - k + 1; /* the first window start that still reaches i */
    *lo = a <= 0 ? 0 : (a + stride - 1) / stride;
    const int64_t b = (i + pad) / stride + 1;
    *hi = b < out ? b : out;
}

/** Backward: dx element e (in the layout's order), gathered from every window that holds it. */
static inline KMUX_DTYPE_HD void kmux_pool_bwd_input(const kmux_pool_params *p, int64_t e) {
    int64_t ni, ci, i, j, i0, i1, j0, j1;
    kmux_pool_coords(p, e, p->h, p->w, &ni, &ci, &i, &j);
    kmux_pool_covering(i, p->kh, p->sh, p->pt, p->p, &i0, &i1);
    kmux_pool_covering(j, p->kw, p->sw, p->pl, p->q, &j0, &j1);
    float s = 0.0f;
    for (int64_t oi = i0; oi < i1; oi++)
        for (int64_t oj = j0; oj < j1; oj++) {
            const float g =
                kmux_fam_load(p->dy, p->dtype, kmux_pool_at(p, ni, ci, oi, oj, p->p, p->q));
            if (p->alg == KMUX_POOLING_MAX) {
                if (kmux_pool_argmax(p, ni, ci, oi, oj) == e) s += g;
            } else {
                int64_t r0, r1, c0, c1;
                kmux_pool_window(p, oi, oj, &r0, &r1, &c0, &c1);
                s += g / kmux_pool_divisor(p, r0, r1, c0, c1);
            }
        }
    kmux_fam_store(p->dx, p->dtype, e, s);
}

/* ---- the table, for C callers ---- */

/** The name of alg ("max", ...), "?" for an unknown value. */
static inline const char *kmux_pooling_alg_str(int alg) {
    switch (alg) {
#define KMUX_POOL_NAME_(E, nm)                                                                     \
    case KMUX_POOLING_##E:                                                                         \
        return nm;
        KMUX_POOLING_ALGS(KMUX_POOL_NAME_)
#undef KMUX_POOL_NAME_
    default:
        return "?";
    }
}

/** Every algorithm as a mask (bit alg), for a device's caps. */
static inline uint64_t kmux_pooling_all_algs(void) {
    return 0
#define KMUX_POOL_BIT_(E, nm) | (UINT64_C(1) << KMUX_POOLING_##E)
        KMUX_POOLING_ALGS(KMUX_POOL_BIT_)
#undef KMUX_POOL_BIT_
            ;
}

/** What a device running every algorithm of the family runs (ref, the CPU and GPU kernels). */
static inline void kmux_pooling_full_caps(kmux_family_caps *c) {
    c->algs = kmux_pooling_all_algs();
    c->dtypes = KMUX_FAMILY_DTYPES;
    c->props = (1u << KMUX_PROP_FORWARD) | (1u << KMUX_PROP_BACKWARD);
    c->max_elements = 0;
}

#ifdef __cplusplus
}
#endif
#endif
