/*
 * kmux_eltwise.h - THE table of the element-wise family (kmux_eltwise_alg of kmux.h) and the
 * single-precision definition of every algorithm, forward and backward, for the core (names,
 * validation), the CPU kernels (kernels/cpu/eltwise.c) and the GPU kernel (kernels/gpu/
 * kmux_gpu_eltwise.cu, CUDA, HIP and the host emulation). Compiles as C11, C++ and device code.
 * ref keeps its own double-precision definitions (backends/ref/ref_eltwise.c): the oracle is not
 * this file.
 *
 * Adding an algorithm: its value in kmux_eltwise_alg (kmux.h), one row of KMUX_ELTWISE_ALGS
 * below and its three functions here, its double definition in ref_eltwise.c, and (optionally)
 * its oneDNN algorithm in backends/onednn/onednn_eltwise.c. Every kernel expands the row list,
 * so no kernel, plugin or ABI slot changes.
 *
 * Per algorithm `a`, on f32 values (f16/bf16 are decoded to f32 and the result rounded once):
 *   kmux_elt_<a>_fwd(x, alpha, beta)          y = f(x)
 *   kmux_elt_<a>_bwd(dd, x, alpha, beta)      diff_src = dd * f'(x), from the saved input
 *   kmux_elt_<a>_bwd_dst(dd, y, alpha, beta)  the same from the saved output y = f(x), for the
 *                                             algorithms flagged KMUX_ELT_DST_BWD (as oneDNN's
 *                                             *_use_dst_for_bwd); NaN for the others (never run:
 *                                             the core refuses them)
 */
#ifndef KMUX_ELTWISE_H
#define KMUX_ELTWISE_H

#include <math.h>

#include "kmux.h"
#include "kmux_backend.h" /* kmux_family_caps */
#include "kmux_family.h"
#include "kmux_dtype_desc.h"

/* Row flags. */
#define KMUX_ELT_ALPHA 1u   /* the algorithm reads alpha */
#define KMUX_ELT_BETA 2u    /* the algorithm reads beta */
#define KMUX_ELT_DST_BWD 4u /* backward from the output (use_dst_for_bwd) is defined */
/* ... only when alpha >= 0 (leaky ReLU: a negative slope makes y = f(x) lose the sign of x) */
#define KMUX_ELT_DST_BWD_ALPHA_NONNEG 8u

/* X(ENUM suffix, function stem, "name", flags): one row per kmux_eltwise_alg, the name as
 * oneDNN's algorithm (eltwise_relu, ...) without its prefix. */
#define KMUX_ELTWISE_ALGS(X)                                                                       \
    X(RELU, relu, "relu", KMUX_ELT_ALPHA | KMUX_ELT_DST_BWD | KMUX_ELT_DST_BWD_ALPHA_NONNEG)       \
    X(GELU_TANH, gelu_tanh, "gelu_tanh", 0u)                                                       \
    X(GELU_ERF, gelu_erf, "gelu_erf", 0u)                                                          \
    X(SIGMOID, sigmoid, "sigmoid", KMUX_ELT_DST_BWD)                                               \
    X(TANH, tanh, "tanh", KMUX_ELT_DST_BWD)                                                        \
    X(LINEAR, linear, "linear", KMUX_ELT_ALPHA | KMUX_ELT_BETA | KMUX_ELT_DST_BWD)                 \
    X(RECIPROCAL, reciprocal, "reciprocal", KMUX_ELT_DST_BWD)                                      \
    X(SILU, silu, "silu", 0u)

#ifdef __cplusplus
extern "C" {
#endif

/* ---- ReLU, leaky with slope alpha: y = x > 0 ? x : alpha * x. NaN propagates; -Inf with
 * alpha = 0 gives 0 (not 0 * -Inf). The gradient at 0 is alpha * dd (PyTorch, oneDNN); with
 * alpha = 0 a masked gradient is 0 even when dd is Inf or NaN (PyTorch's threshold_backward). */
/* (the products are formed unconditionally: a compiler may not speculate a floating-point
 * operation out of a branch, and a branch keeps the CPU loops from vectorising) */
static inline KMUX_DTYPE_HD float kmux_elt_relu_fwd(float x, float a, float b) {
    (void)b;
    const float ax = a * x, neg = a == 0.0f ? 0.0f : ax;
    return x > 0.0f ? x : x < 0.0f ? neg : x;
}
static inline KMUX_DTYPE_HD float kmux_elt_relu_bwd(float dd, float x, float a, float b) {
    (void)b;
    const float ad = a * dd, masked = a == 0.0f ? 0.0f : ad;
    return x > 0.0f ? dd : masked;
}
static inline KMUX_DTYPE_HD float kmux_elt_relu_bwd_dst(float dd, float y, float a, float b) {
    return kmux_elt_relu_bwd(dd, y, a, b); /* alpha >= 0: y > 0 exactly where x > 0 */
}

/* ---- GELU, tanh form: y = x/2 (1 + tanh(u)), u = sqrt(2/pi) (x + 0.044715 x^3), computed as
 * x * s with s = 1/2 (1 + tanh(u)) = sigmoid(2u), which keeps its accuracy where tanh(u) -> -1
 * (1 + tanh(u) cancels in f32 from x ~ -4); dy/dx = s + x * 2 s (1 - s) du/dx. */
#define KMUX_ELT_SQRT_2_OVER_PI 0.7978845608028654f
#define KMUX_ELT_GELU_C 0.044715f
static inline KMUX_DTYPE_HD float kmux_elt_gelu_tanh_s(float x) {
    const float u = KMUX_ELT_SQRT_2_OVER_PI * (x + KMUX_ELT_GELU_C * x * x * x);
    return 1.0f / (1.0f + expf(-2.0f * u));
}
static inline KMUX_DTYPE_HD float kmux_elt_gelu_tanh_fwd(float x, float a, float b) {
    (void)a, (void)b;
    return x * kmux_elt_gelu_tanh_s(x);
}
static inline KMUX_DTYPE_HD float kmux_elt_gelu_tanh_bwd(float dd, float x, float a, float b) {
    (void)a, (void)b;
    const float s = kmux_elt_gelu_tanh_s(x);
    const float du = KMUX_ELT_SQRT_2_OVER_PI * (1.0f + 3.0f * KMUX_ELT_GELU_C * x * x);
    return dd * (s + x * (2.0f * s * (1.0f - s)) * du);
}
static inline KMUX_DTYPE_HD float kmux_elt_gelu_tanh_bwd_dst(float dd, float y, float a, float b) {
    (void)dd, (void)y, (void)a, (void)b;
    return NAN;
}

/* ---- GELU, erf form: y = x/2 (1 + erf(x / sqrt(2))) = x/2 erfc(-x / sqrt(2)) (erfc: no
 * cancellation for negative x) */
#define KMUX_ELT_SQRT1_2 0.7071067811865476f
#define KMUX_ELT_INV_SQRT_2PI 0.3989422804014327f
static inline KMUX_DTYPE_HD float kmux_elt_gelu_erf_fwd(float x, float a, float b) {
    (void)a, (void)b;
    return 0.5f * x * erfcf(-x * KMUX_ELT_SQRT1_2);
}
static inline KMUX_DTYPE_HD float kmux_elt_gelu_erf_bwd(float dd, float x, float a, float b) {
    (void)a, (void)b;
    const float cdf = 0.5f * erfcf(-x * KMUX_ELT_SQRT1_2);
    const float pdf = KMUX_ELT_INV_SQRT_2PI * expf(-0.5f * x * x);
    return dd * (cdf + x * pdf);
}
static inline KMUX_DTYPE_HD float kmux_elt_gelu_erf_bwd_dst(float dd, float y, float a, float b) {
    (void)dd, (void)y, (void)a, (void)b;
    return NAN;
}

/* ---- sigmoid (oneDNN's logistic): y = 1 / (1 + exp(-x)); dy/dx = y (1 - y) */
static inline KMUX_DTYPE_HD float kmux_elt_sigmoid_fwd(float x, float a, float b) {
    (void)a, (void)b;
    return 1.0f / (1.0f + expf(-x));
}
static inline KMUX_DTYPE_HD float kmux_elt_sigmoid_bwd_dst(float dd, float y, float a, float b) {
    (void)a, (void)b;
    return dd * y * (1.0f - y);
}
static inline KMUX_DTYPE_HD float kmux_elt_sigmoid_bwd(float dd, float x, float a, float b) {
    return kmux_elt_sigmoid_bwd_dst(dd, kmux_elt_sigmoid_fwd(x, a, b), a, b);
}

/* ---- tanh: dy/dx = 1 - y^2 */
static inline KMUX_DTYPE_HD float kmux_elt_tanh_fwd(float x, float a, float b) {
    (void)a, (void)b;
    return tanhf(x);
}
static inline KMUX_DTYPE_HD float kmux_elt_tanh_bwd_dst(float dd, float y, float a, float b) {
    (void)a, (void)b;
    return dd * (1.0f - y * y);
}
static inline KMUX_DTYPE_HD float kmux_elt_tanh_bwd(float dd, float x, float a, float b) {
    return kmux_elt_tanh_bwd_dst(dd, tanhf(x), a, b);
}

/* ---- linear: y = alpha x + beta (f32 multiply and add; fused where a compiler contracts);
 * dy/dx = alpha */
static inline KMUX_DTYPE_HD float kmux_elt_linear_fwd(float x, float a, float b) {
    return a * x + b;
}
static inline KMUX_DTYPE_HD float kmux_elt_linear_bwd(float dd, float x, float a, float b) {
    (void)x, (void)b;
    return dd * a;
}
static inline KMUX_DTYPE_HD float kmux_elt_linear_bwd_dst(float dd, float y, float a, float b) {
    (void)y, (void)b;
    return dd * a;
}

/* ---- reciprocal: y = 1 / x; dy/dx = -1 / x^2 = -y^2 */
static inline KMUX_DTYPE_HD float kmux_elt_reciprocal_fwd(float x, float a, float b) {
    (void)a, (void)b;
    return 1.0f / x;
}
static inline KMUX_DTYPE_HD float kmux_elt_reciprocal_bwd_dst(float dd, float y, float a, float b) {
    (void)a, (void)b;
    return -dd * (y * y);
}
static inline KMUX_DTYPE_HD float kmux_elt_reciprocal_bwd(float dd, float x, float a, float b) {
    return kmux_elt_reciprocal_bwd_dst(dd, 1.0f / x, a, b);
}

/* ---- SiLU: y = x s, s = sigmoid(x); dy/dx = s (1 + x (1 - s)) */
static inline KMUX_DTYPE_HD float kmux_elt_silu_fwd(float x, float a, float b) {
    return x * kmux_elt_sigmoid_fwd(x, a, b);
}
static inline KMUX_DTYPE_HD float kmux_elt_silu_bwd(float dd, float x, float a, float b) {
    const float s = kmux_elt_sigmoid_fwd(x, a, b);
    return dd * (s * (1.0f + x * (1.0f - s)));
}
static inline KMUX_DTYPE_HD float kmux_elt_silu_bwd_dst(float dd, float y, float a, float b) {
    (void)dd, (void)y, (void)a, (void)b;
    return NAN;
}

/* ---- the table, for C callers (names, flags) ---- */

/** Row flags of algorithm alg (KMUX_ELT_*); 0 for an unknown value. */
static inline KMUX_DTYPE_HD unsigned kmux_eltwise_flags(int alg) {
    switch (alg) {
#define KMUX_ELT_FLAGS_(E, f, nm, fl)                                                              \
    case KMUX_ELTWISE_##E:                                                                         \
        return (fl) | 0x80000000u;
        KMUX_ELTWISE_ALGS(KMUX_ELT_FLAGS_)
#undef KMUX_ELT_FLAGS_
    default:
        return 0u;
    }
}

/** 1 when alg is a kmux_eltwise_alg. */
static inline KMUX_DTYPE_HD int kmux_eltwise_alg_valid(int alg) {
    return kmux_eltwise_flags(alg) != 0u;
}

/** The name of alg ("relu", "gelu_tanh", ...), "?" for an unknown value. */
static inline const char *kmux_eltwise_alg_str(int alg) {
    switch (alg) {
#define KMUX_ELT_NAME_(E, f, nm, fl)                                                               \
    case KMUX_ELTWISE_##E:                                                                         \
        return nm;
        KMUX_ELTWISE_ALGS(KMUX_ELT_NAME_)
#undef KMUX_ELT_NAME_
    default:
        return "?";
    }
}

/** Every algorithm of the table as a mask (bit alg), for a device's caps. */
static inline KMUX_DTYPE_HD uint64_t kmux_eltwise_all_algs(void) {
    return 0
#define KMUX_ELT_BIT_(E, f, nm, fl) | (UINT64_C(1) << KMUX_ELTWISE_##E)
        KMUX_ELTWISE_ALGS(KMUX_ELT_BIT_)
#undef KMUX_ELT_BIT_
            ;
}

/** What a device running every algorithm of the family runs (the CPU and GPU kernels). */
static inline void kmux_eltwise_full_caps(kmux_family_caps *c) {
    c->algs = kmux_eltwise_all_algs();
    c->dtypes = KMUX_FAMILY_DTYPES;
    c->props = (1u << KMUX_PROP_FORWARD) | (1u << KMUX_PROP_BACKWARD);
    c->max_elements = 0;
}

#ifdef __cplusplus
}
#endif
#endif
