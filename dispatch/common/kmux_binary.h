/*
 * kmux_binary.h - THE table of the binary family (kmux_binary_alg of kmux.h), the f32 definition
 * of every algorithm and the per-element routine of the GPU kernel, for the core (names,
 * validation), the CPU kernels (kernels/cpu/binary.c) and the GPU kernel (kernels/gpu/
 * kmux_gpu_binary.cu, CUDA, HIP and the host emulation). Compiles as C11, C++ and device code;
 * ref keeps its own f64 definitions (backends/ref/ref_binary.c).
 *
 * dst = op(alpha * src0, beta * src1), src1 broadcast into dst's shape (kmux.h).
 * Adding an algorithm: its value in kmux_binary_alg (kmux.h), one row below with its function,
 * its f64 definition in ref_binary.c, its conformance expectations need none (the suite walks the
 * table through kmux_binary_alg_name).
 */
#ifndef KMUX_BINARY_H
#define KMUX_BINARY_H

#include "kmux.h"
#include "kmux_backend.h" /* kmux_family_caps */
#include "kmux_family.h"

/* X(ENUM suffix, function stem, "name"): one row per kmux_binary_alg, named as oneDNN's
 * binary algorithms without their prefix. */
#define KMUX_BINARY_ALGS(X)                                                                        \
    X(ADD, add, "add")                                                                             \
    X(SUB, sub, "sub")                                                                             \
    X(MUL, mul, "mul")                                                                             \
    X(DIV, div, "div")                                                                             \
    X(MAX, max, "max")                                                                             \
    X(MIN, min, "min")

#ifdef __cplusplus
extern "C" {
#endif

static inline KMUX_DTYPE_HD float kmux_bin_add(float a, float b) {
    return a + b;
}
static inline KMUX_DTYPE_HD float kmux_bin_sub(float a, float b) {
    return a - b;
}
static inline KMUX_DTYPE_HD float kmux_bin_mul(float a, float b) {
    return a * b;
}
static inline KMUX_DTYPE_HD float kmux_bin_div(float a, float b) {
    return a / b;
}
/* a NaN operand wins either way (torch.maximum): b when a is not larger and not NaN */
static inline KMUX_DTYPE_HD float kmux_bin_max(float a, float b) {
    return (a > b || a != a) ? a : b;
}
static inline KMUX_DTYPE_HD float kmux_bin_min(float a, float b) {
    return (a < b || a != a) ? a : b;
}

/** op(a, b) of algorithm alg (a, b already scaled). */
static inline KMUX_DTYPE_HD float kmux_bin_apply(int alg, float a, float b) {
    switch (alg) {
#define KMUX_BIN_APPLY_(E, f, nm)                                                                  \
    case KMUX_BINARY_##E:                                                                          \
        return kmux_bin_##f(a, b);
        KMUX_BINARY_ALGS(KMUX_BIN_APPLY_)
#undef KMUX_BIN_APPLY_
    default:
        return a;
    }
}

/** One op, by value into the kernels. */
typedef struct kmux_bin_params {
    int alg, dtype;
    float alpha, beta;
    int64_t n;        /**< dst elements */
    kmux_nd_groups g; /**< dst's shape against src1's */
    const void *src0, *src1;
    void *dst;
} kmux_bin_params;

/** The parameters of a validated description with every dim >= 1, and its tensors. */
static inline kmux_bin_params kmux_bin_params_of(const kmux_binary_desc *d,
                                                 const kmux_binary_args *a) {
    kmux_bin_params p;
    p.alg = (int)d->alg, p.dtype = (int)d->dtype;
    p.alpha = d->alpha, p.beta = d->beta;
    p.n = kmux_nd_elements(d->ndims, d->dims);
    p.g = kmux_nd_group(d->ndims, d->dims, d->src1_dims);
    p.src0 = a->src0, p.src1 = a->src1, p.dst = a->dst;
    return p;
}

/** dst element i (the GPU kernel's body: one element a thread). */
static inline KMUX_DTYPE_HD void kmux_bin_element(const kmux_bin_params *p, int64_t i) {
    const float a = p->alpha * kmux_fam_load(p->src0, p->dtype, i);
    const float b = p->beta * kmux_fam_load(p->src1, p->dtype, kmux_nd_part_offset(&p->g, i));
    kmux_fam_store(p->dst, p->dtype, i, kmux_bin_apply(p->alg, a, b));
}

/* ---- the table, for C callers ---- */

/** The name of alg ("add", ...), "?" for an unknown value. */
static inline const char *kmux_binary_alg_str(int alg) {
    switch (alg) {
#define KMUX_BIN_NAME_(E, f, nm)                                                                   \
    case KMUX_BINARY_##E:                                                                          \
        return nm;
        KMUX_BINARY_ALGS(KMUX_BIN_NAME_)
#undef KMUX_BIN_NAME_
    default:
        return "?";
    }
}

/** Every algorithm as a mask (bit alg), for a device's caps. */
static inline uint64_t kmux_binary_all_algs(void) {
    return 0
#define KMUX_BIN_BIT_(E, f, nm) | (UINT64_C(1) << KMUX_BINARY_##E)
        KMUX_BINARY_ALGS(KMUX_BIN_BIT_)
#undef KMUX_BIN_BIT_
            ;
}

/** What a device running every algorithm of the family runs (the CPU and GPU kernels). */
static inline void kmux_binary_full_caps(kmux_family_caps *c) {
    c->algs = kmux_binary_all_algs();
    c->dtypes = KMUX_FAMILY_DTYPES;
    c->props = 1u << KMUX_PROP_FORWARD;
    c->max_elements = 0;
}

#ifdef __cplusplus
}
#endif
#endif
