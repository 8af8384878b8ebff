/*
 * kmux_reduction.h - THE table of the reduction family (kmux_reduction_alg of kmux.h): each
 * algorithm's identity, accumulation and final step on an f64 accumulator, and the per-output
 * routine of the GPU kernel, for the core, the CPU kernels (kernels/cpu/reduction.c) and the GPU
 * kernel (kernels/gpu/kmux_gpu_reduction.cu). Compiles as C11, C++ and device code; ref keeps its
 * own definitions (backends/ref/ref_reduction.c).
 *
 * Adding an algorithm: its value in kmux_reduction_alg (kmux.h), one row below (identity, the
 * accumulation of one value, the combination of two partial accumulators, the final step), its
 * definition in ref_reduction.c.
 */
#ifndef KMUX_REDUCTION_H
#define KMUX_REDUCTION_H

#include <math.h>

#include "kmux.h"
#include "kmux_backend.h" /* kmux_family_caps */
#include "kmux_family.h"

/* X(ENUM suffix, function stem, "name"), named as oneDNN's reduction algorithms where it has
 * them (AMAX: cuDNN's CUDNN_REDUCE_TENSOR_AMAX; NORM2: oneDNN's norm_lp_sum with p = 2). */
#define KMUX_REDUCTION_ALGS(X)                                                                     \
    X(SUM, sum, "sum")                                                                             \
    X(MEAN, mean, "mean")                                                                          \
    X(MAX, max, "max")                                                                             \
    X(MIN, min, "min")                                                                             \
    X(AMAX, amax, "amax")                                                                          \
    X(NORM2, norm2, "norm2")

#ifdef __cplusplus
extern "C" {
#endif

/* max / min keeping a NaN once seen (torch.amax): the new value wins when larger or NaN */
static inline KMUX_DTYPE_HD double kmux_red_maxd(double acc, double x) {
    return (x > acc || x != x) && acc == acc ? x : acc;
}
static inline KMUX_DTYPE_HD double kmux_red_mind(double acc, double x) {
    return (x < acc || x != x) && acc == acc ? x : acc;
}

/** The accumulator before any value. */
static inline KMUX_DTYPE_HD double kmux_red_identity(int alg) {
    return alg == KMUX_REDUCTION_MAX ? -INFINITY : alg == KMUX_REDUCTION_MIN ? INFINITY : 0.0;
}

/** acc after one more value x. */
static inline KMUX_DTYPE_HD double kmux_red_acc(int alg, double acc, double x) {
    switch (alg) {
    case KMUX_REDUCTION_MAX:
        return kmux_red_maxd(acc, x);
    case KMUX_REDUCTION_MIN:
        return kmux_red_mind(acc, x);
    case KMUX_REDUCTION_AMAX:
        return kmux_red_maxd(acc, fabs(x));
    case KMUX_REDUCTION_NORM2:
        return acc + x * x;
    default: /* SUM, MEAN */
        return acc + x;
    }
}

/** Two partial accumulators of the same output combined. */
static inline KMUX_DTYPE_HD double kmux_red_combine(int alg, double a, double b) {
    switch (alg) {
    case KMUX_REDUCTION_MAX:
    case KMUX_REDUCTION_AMAX:
        return kmux_red_maxd(a, b);
    case KMUX_REDUCTION_MIN:
        return kmux_red_mind(a, b);
    default:
        return a + b;
    }
}

/** The result from the accumulator of `count` values. */
static inline KMUX_DTYPE_HD double kmux_red_final(int alg, double acc, int64_t count) {
    if (alg == KMUX_REDUCTION_MEAN) return acc / (double)count; /* count 0: NaN */
    if (alg == KMUX_REDUCTION_NORM2) return sqrt(acc);
    return acc;
}

/** One reduction, by value into the kernels. */
typedef struct kmux_red_params {
    int alg, src_dtype, dst_dtype;
    int64_t dst_n;    /**< outputs */
    int64_t count;    /**< values reduced into each */
    kmux_nd_groups g; /**< src's shape against dst's */
    const void *src;
    void *dst;
} kmux_red_params;

/** The parameters of a validated description with every dst dim >= 1, and its tensors. */
static inline kmux_red_params kmux_red_params_of(const kmux_reduction_desc *d,
                                                 const kmux_reduction_args *a) {
    kmux_red_params p;
    p.alg = (int)d->alg, p.src_dtype = (int)d->src_dtype, p.dst_dtype = (int)d->dst_dtype;
    p.dst_n = kmux_nd_elements(d->ndims, d->dst_dims);
    p.g = kmux_nd_group(d->ndims, d->src_dims, d->dst_dims);
    p.count = p.dst_n ? kmux_nd_elements(d->ndims, d->src_dims) / p.dst_n : 0;
    p.src = a->src, p.dst = a->dst;
    return p;
}

/** Output j (the GPU kernel's body: one output a thread), values in row-major order. */
static inline KMUX_DTYPE_HD void kmux_red_output(const kmux_red_params *p, int64_t j) {
    double acc = kmux_red_identity(p->alg);
    for (int64_t r = 0; r < p->count; r++)
        acc = kmux_red_acc(
            p->alg, acc,
            (double)kmux_fam_load(p->src, p->src_dtype, kmux_nd_full_offset(&p->g, j, r)));
    kmux_fam_store(p->dst, p->dst_dtype, j, (float)kmux_red_final(p->alg, acc, p->count));
}

/* ---- the table, for C callers ---- */

/** The name of alg ("sum", ...), "?" for an unknown value. */
static inline const char *kmux_reduction_alg_str(int alg) {
    switch (alg) {
#define KMUX_RED_NAME_(E, f, nm)                                                                   \
    case KMUX_REDUCTION_##E:                                                                       \
        return nm;
        KMUX_REDUCTION_ALGS(KMUX_RED_NAME_)
#undef KMUX_RED_NAME_
    default:
        return "?";
    }
}

/** Every algorithm as a mask (bit alg), for a device's caps. */
static inline uint64_t kmux_reduction_all_algs(void) {
    return 0
#define KMUX_RED_BIT_(E, f, nm) | (UINT64_C(1) << KMUX_REDUCTION_##E)
        KMUX_REDUCTION_ALGS(KMUX_RED_BIT_)
#undef KMUX_RED_BIT_
            ;
}

/** What a device running every algorithm of the family runs (the CPU and GPU kernels). */
static inline void kmux_reduction_full_caps(kmux_family_caps *c) {
    c->algs = kmux_reduction_all_algs();
    c->dtypes = KMUX_FAMILY_DTYPES;
    c->props = 1u << KMUX_PROP_FORWARD;
    c->max_elements = 0;
}

#ifdef __cplusplus
}
#endif
#endif
