/*
 * kmux_dtype_codec.h - THE scalar encoder and decoder of the narrow float formats (f16, bf16 and
 * the four fp8 formats), on the parameters of kmux_dtype_desc.h. One routine per behaviour, for
 * ref, the CPU kernels' scalar paths, the GPU kernels (CUDA, HIP, host emulation) and the tests.
 * Compiles as C11, C++ and device code.
 *
 * Integer arithmetic only, so results never depend on the floating-point environment (rounding
 * mode, FTZ/DAZ):
 *   - round to nearest, ties to even, once (IEEE 754-2019 §4.3.1); overflow decided after
 *     rounding, as if the exponent range were unbounded (§7.4): the threshold is the midpoint
 *     above the largest finite value (for e4m3 that midpoint itself rounds down to 448);
 *   - NaN -> quiet NaN with the sign and leading payload bits (f16, bf16, e5m2, as F16C's
 *     VCVTPS2PH), S.1111.111 (e4m3), 0x80 (FNUZ); Inf -> Inf, or NaN in formats without Inf, or
 *     the largest finite value with `saturate` (as __NV_SATFINITE);
 *   - subnormals are kept, never flushed; FNUZ has no -0 (a result of -0 becomes +0).
 * Vector paths (AVX2, F16C) are separate implementations tested bit for bit against these.
 */
#ifndef KMUX_DTYPE_CODEC_H
#define KMUX_DTYPE_CODEC_H

#include <stdint.h>
#include <string.h>

#include "kmux_dtype_desc.h"

#ifdef __cplusplus
extern "C" {
#endif

static inline KMUX_DTYPE_HD uint32_t kmux_f32_bits(float x) {
#if defined(__CUDA_ARCH__) || defined(__HIP_DEVICE_COMPILE__)
    return __float_as_uint(x);
#else
    uint32_t u;
    memcpy(&u, &x, sizeof u);
    return u;
#endif
}
static inline KMUX_DTYPE_HD float kmux_f32_from_bits(uint32_t u) {
#if defined(__CUDA_ARCH__) || defined(__HIP_DEVICE_COMPILE__)
    return __uint_as_float(u);
#else
    float x;
    memcpy(&x, &u, sizeof x);
    return x;
#endif
}
static inline KMUX_DTYPE_HD uint64_t kmux_f64_bits(double x) {
#if defined(__CUDA_ARCH__) || defined(__HIP_DEVICE_COMPILE__)
    return (uint64_t)__double_as_longlong(x);
#else
    uint64_t u;
    memcpy(&u, &x, sizeof u);
    return u;
#endif
}
static inline KMUX_DTYPE_HD double kmux_f64_from_bits(uint64_t u) {
#if defined(__CUDA_ARCH__) || defined(__HIP_DEVICE_COMPILE__)
    return __longlong_as_double((long long)u);
#else
    double x;
    memcpy(&x, &u, sizeof x);
    return x;
#endif
}

/** The code a value that overflows f takes: the largest finite value with saturate, else Inf,
 *  else NaN. sign is already shifted to f's sign bit. */
static inline KMUX_DTYPE_HD uint32_t kmux_codec_overflow(uint32_t sign, const kmux_dtype_desc *f,
                                                         int saturate) {
    if (saturate) return sign | f->max_code;
    if (f->special == KMUX_SPECIAL_FNUZ) return f->nan_code;
    if (f->inf_code) return sign | f->inf_code;
    return sign | f->nan_code; /* e4m3: no Inf, S.1111.111 */
}

/** m * 2^-shift rounded to an integer, ties to even. */
static inline KMUX_DTYPE_HD uint64_t kmux_codec_rne_shift(uint64_t m, int shift) {
    if (shift <= 0) return m;
    if (shift > 63) return 0;
    uint64_t q = m >> shift;
    uint64_t rem = m & ((UINT64_C(1) << shift) - 1);
    uint64_t half = UINT64_C(1) << (shift - 1);
    if (rem > half || (rem == half && (q & 1))) q++;
    return q;
}

/** Rounds the magnitude bits `a` of a binary format with pm significand bits and bias pbias
 *  (f32: 23/127, f64: 52/1023) to the narrow format f; sign is already in place. */
static inline KMUX_DTYPE_HD uint32_t kmux_codec_round_bits(uint64_t a, uint32_t sign, int pm,
                                                           int pbias, const kmux_dtype_desc *f,
                                                           int saturate) {
    const uint64_t man_mask = (UINT64_C(1) << pm) - 1;
    uint64_t ef = a >> pm;
    uint64_t m = a & man_mask;
    if (ef == (uint64_t)(2 * pbias + 1)) {
        if (m) { /* NaN */
            if (f->special == KMUX_SPECIAL_FNUZ) return f->nan_code;
            if (!f->inf_code) return sign | f->nan_code;
            return sign | f->nan_code | (uint32_t)(m >> (pm - f->mbits));
        }
        return kmux_codec_overflow(sign, f, saturate); /* Inf */
    }
    const int emin = 1 - f->bias;
    int e;
    if (ef == 0) {
        e = 1 - pbias;
    } else {
        e = (int)ef - pbias;
        m |= UINT64_C(1) << pm;
    }
    if (e > f->bias + 1) return kmux_codec_overflow(sign, f, saturate);
    uint64_t code;
    if (ef != 0 && e >= emin)
        code = kmux_codec_rne_shift(a - ((uint64_t)(pbias - f->bias) << pm), pm - f->mbits);
    else
        code = kmux_codec_rne_shift(m, emin - e + pm - f->mbits);
    if (code > (uint64_t)f->max_code) return kmux_codec_overflow(sign, f, saturate);
    if (f->special == KMUX_SPECIAL_FNUZ && code == 0) return 0; /* no -0 */
    return sign | (uint32_t)code;
}

/** Code of the f32 value x in the narrow format t (f16, bf16, fp8), rounded once. */
static inline KMUX_DTYPE_HD uint32_t kmux_encode_f32(float x, kmux_dtype t, int saturate) {
    const kmux_dtype_desc f = kmux_dtype_desc_of(t);
    uint32_t u = kmux_f32_bits(x);
    return kmux_codec_round_bits(u & 0x7fffffffu, (u >> 31) << f.sign_shift, 23, 127, &f, saturate);
}

/** Code of the f64 value x in the narrow format t, rounded once (not through f32). */
static inline KMUX_DTYPE_HD uint32_t kmux_encode_f64(double x, kmux_dtype t, int saturate) {
    const kmux_dtype_desc f = kmux_dtype_desc_of(t);
    uint64_t u = kmux_f64_bits(x);
    return kmux_codec_round_bits(u & UINT64_C(0x7fffffffffffffff),
                                 (uint32_t)(u >> 63) << f.sign_shift, 52, 1023, &f, saturate);
}

/** Exact f32 value of a code of the narrow format t. NaN decodes to a quiet NaN keeping the sign
 *  and payload (f16, bf16, e5m2), as F16C does; the e4m3 and FNUZ NaNs to the default quiet
 *  NaN (with the sign for e4m3). */
static inline KMUX_DTYPE_HD float kmux_decode_f32(uint32_t code, kmux_dtype t) {
    const kmux_dtype_desc f = kmux_dtype_desc_of(t);
    if (t == KMUX_BF16) return kmux_f32_from_bits(code << 16);
    const uint32_t sign = ((code >> f.sign_shift) & 1u) << 31;
    const uint32_t mag = code & ((1u << f.sign_shift) - 1);
    const int M = f.mbits;
    if (f.special == KMUX_SPECIAL_FNUZ) {
        if (code == f.nan_code) return kmux_f32_from_bits(0x7fc00000u);
    } else if (f.inf_code) {
        if (mag == f.inf_code) return kmux_f32_from_bits(sign | 0x7f800000u);
        if (mag > f.inf_code)
            return kmux_f32_from_bits(sign | 0x7fc00000u | ((mag & ((1u << M) - 1)) << (23 - M)));
    } else if (mag == f.nan_code) {
        return kmux_f32_from_bits(sign | 0x7fc00000u);
    }
    if (mag == 0) return kmux_f32_from_bits(sign);
    int exp = (int)(mag >> M);
    uint32_t man = mag & ((1u << M) - 1);
    if (exp == 0) { /* subnormal: normalise */
        exp = 1;
        while (!(man & (1u << M))) {
            man <<= 1;
            exp--;
        }
        man &= (1u << M) - 1;
    }
    return kmux_f32_from_bits(sign | ((uint32_t)(exp - f.bias + 127) << 23) | (man << (23 - M)));
}

/** Exact f64 value of a code of the narrow format t (every narrow value is an f32 value). */
static inline KMUX_DTYPE_HD double kmux_decode_f64(uint32_t code, kmux_dtype t) {
    return (double)kmux_decode_f32(code, t);
}

#ifdef __cplusplus
}
#endif
#endif /* KMUX_DTYPE_CODEC_H */
