/*
 * kmux_gpu_formats.cuh - device-side encoding and decoding of f16, bf16 and the four fp8 formats,
 * by integer bit manipulation only, for CUDA and HIP alike. The algorithms are those of
 * kernels/cpu/cast_formats.c and cast_avx2.c (same rounding, NaN, saturation and scaled-product
 * rules), so a GPU and the CPU kernels give the same bits:
 *   - round to nearest even once (IEEE 754-2019 §4.3.1), overflow decided after rounding (§7.4);
 *   - NaN -> quiet NaN with sign and leading payload bits (f16, bf16, e5m2), S.1111.111 (e4m3),
 *     0x80 (FNUZ); Inf -> Inf, or NaN without Inf, or the largest finite value with saturate;
 *   - subnormals kept: nothing here uses floating-point arithmetic that could flush them;
 *   - x * scale is the exact product rounded once: the f32 product is rounded to odd with the FMA
 *     error term, then rounded to the narrow format (the error term is exact while the product is
 *     >= 2^-100 in magnitude; below that only bf16 can still be non-zero, and bf16 then takes the
 *     product in f64, which is exact).
 */
#ifndef KMUX_GPU_FORMATS_CUH
#define KMUX_GPU_FORMATS_CUH

#include <stdint.h>

#include "kmux.h"
#include "kmux_gpu_vendor.h"

#define KMUX_DEV __device__ __forceinline__

/* A format of at most 16 bits (magnitude codes exclude the sign bit). */
struct kmux_gpu_fmt {
    int mbits, bias, sign_shift;
    uint32_t max_code; /* largest finite magnitude */
    uint32_t inf_code; /* 0: no Inf */
    uint32_t nan_code; /* full code of the canonical positive quiet NaN (0x80 for FNUZ) */
    int fnuz;          /* no -0, single NaN 0x80 */
};

/* Descriptor of a narrow dtype (f16, bf16, fp8); T is a compile-time kmux_dtype. */
template <int T> KMUX_DEV kmux_gpu_fmt kmux_gpu_fmt_of() {
    if (T == KMUX_F16) return {10, 15, 15, 0x7bffu, 0x7c00u, 0x7e00u, 0};
    if (T == KMUX_BF16) return {7, 127, 15, 0x7f7fu, 0x7f80u, 0x7fc0u, 0};
    if (T == KMUX_F8_E4M3) return {3, 7, 7, 0x7eu, 0u, 0x7fu, 0};
    if (T == KMUX_F8_E5M2) return {2, 15, 7, 0x7bu, 0x7cu, 0x7eu, 0};
    if (T == KMUX_F8_E4M3_FNUZ) return {3, 8, 7, 0x7fu, 0u, 0x80u, 1};
    return {2, 16, 7, 0x7fu, 0u, 0x80u, 1}; /* KMUX_F8_E5M2_FNUZ */
}

KMUX_DEV uint32_t kmux_gpu_overflow(uint32_t sign, const kmux_gpu_fmt &f, int saturate) {
    if (saturate) return sign | f.max_code;
    if (f.fnuz) return f.nan_code;
    if (f.inf_code) return sign | f.inf_code;
    return sign | f.nan_code; /* e4m3 */
}

/* m * 2^-shift rounded to an integer, ties to even. */
template <typename U> KMUX_DEV U kmux_gpu_rne_shift(U m, int shift) {
    if (shift <= 0) return m;
    if (shift >= (int)(8 * sizeof(U))) return 0;
    U q = m >> shift;
    U rem = m & (((U)1 << shift) - 1);
    U half = (U)1 << (shift - 1);
    if (rem > half || (rem == half && (q & 1))) q++;
    return q;
}

/* Rounds the magnitude bits `a` of a binary format with pm mantissa bits and bias pbias (f32 or
 * f64) to f; sign is already in place. */
template <typename U>
KMUX_DEV uint32_t kmux_gpu_round(U a, uint32_t sign, int pm, int pbias, const kmux_gpu_fmt &f,
                                 int saturate) {
    const U man_mask = ((U)1 << pm) - 1;
    U ef = a >> pm;
    U m = a & man_mask;
    if (ef == (U)(2 * pbias + 1)) {
        if (m) {
            if (f.fnuz) return f.nan_code;
            if (!f.inf_code) return sign | f.nan_code;
            return sign | f.nan_code | (uint32_t)(m >> (pm - f.mbits));
        }
        return kmux_gpu_overflow(sign, f, saturate);
    }
    const int emin = 1 - f.bias;
    int e;
    if (ef == 0) {
        e = 1 - pbias;
    } else {
        e = (int)ef - pbias;
        m |= (U)1 << pm;
    }
    if (e > f.bias + 1) return kmux_gpu_overflow(sign, f, saturate);
    U code;
    if (ef != 0 && e >= emin)
        code = kmux_gpu_rne_shift<U>(a - ((U)(pbias - f.bias) << pm), pm - f.mbits);
    else
        code = kmux_gpu_rne_shift<U>(m, emin - e + pm - f.mbits);
    if (code > (U)f.max_code) return kmux_gpu_overflow(sign, f, saturate);
    if (f.fnuz && code == 0) return 0;
    return sign | (uint32_t)code;
}

KMUX_DEV uint32_t kmux_gpu_round_f32(float x, const kmux_gpu_fmt &f, int saturate) {
    uint32_t u = __float_as_uint(x);
    return kmux_gpu_round<uint32_t>(u & 0x7fffffffu, (u >> 31) << f.sign_shift, 23, 127, f,
                                    saturate);
}

KMUX_DEV uint32_t kmux_gpu_round_f64(double x, const kmux_gpu_fmt &f, int saturate) {
    uint64_t u = (uint64_t)__double_as_longlong(x);
    return kmux_gpu_round<uint64_t>(u & 0x7fffffffffffffffull, (uint32_t)(u >> 63) << f.sign_shift,
                                    52, 1023, f, saturate);
}

/* Exact value of a narrow code. NaN decodes to a quiet NaN keeping sign and payload (f16, e5m2),
 * as F16C does on the CPU; bf16 is the upper half of an f32. */
template <int T> KMUX_DEV float kmux_gpu_decode(uint32_t code) {
    if (T == KMUX_BF16) return __uint_as_float(code << 16);
    const kmux_gpu_fmt f = kmux_gpu_fmt_of<T>();
    const uint32_t sign = ((code >> f.sign_shift) & 1u) << 31;
    const uint32_t mag = code & ((1u << f.sign_shift) - 1);
    const int M = f.mbits;
    if (f.fnuz) {
        if (code == f.nan_code) return __uint_as_float(0x7fc00000u);
    } else if (f.inf_code) {
        if (mag == f.inf_code) return __uint_as_float(sign | 0x7f800000u);
        if (mag > f.inf_code)
            return __uint_as_float(sign | 0x7fc00000u | ((mag & ((1u << M) - 1)) << (23 - M)));
    } else if (mag == f.nan_code) {
        return __uint_as_float(sign | 0x7fc00000u);
    }
    if (mag == 0) return __uint_as_float(sign);
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
    return __uint_as_float(sign | ((uint32_t)(exp - f.bias + 127) << 23) | (man << (23 - M)));
}

/* x * s rounded to odd in f32 (see the file comment). */
KMUX_DEV float kmux_gpu_mul_round_odd(float x, float s) {
    float p = __fmul_rn(x, s);
    float e = fmaf(x, s, -p);
    uint32_t pi = __float_as_uint(p), ei = __float_as_uint(e);
    uint32_t pa = pi & 0x7fffffffu;
    if (pa >= 0x7f800000u || (ei & 0x7fffffffu) == 0) return p; /* Inf/NaN, or exact */
    uint32_t t = ((pi ^ ei) >> 31) ? pa - 1 : pa;               /* toward zero */
    return __uint_as_float((pi & 0x80000000u) | t | 1u);
}

/* The code of x * s in narrow format T, rounded once. */
template <int T> KMUX_DEV uint32_t kmux_gpu_scaled_code(float x, float s, int saturate) {
    const kmux_gpu_fmt f = kmux_gpu_fmt_of<T>();
    float p = kmux_gpu_mul_round_odd(x, s);
    uint32_t pa = __float_as_uint(p) & 0x7fffffffu;
    if (T == KMUX_BF16 && pa != 0 && pa < 0x0d800000u) /* |p| < 2^-100 */
        return kmux_gpu_round_f64((double)x * (double)s, f, saturate);
    return kmux_gpu_round_f32(p, f, saturate);
}

/* Element i of an array of dtype T as f32 (exact for every narrow type; T != f64). */
template <int T> KMUX_DEV float kmux_gpu_load_f32(const void *p, int64_t i) {
    if (T == KMUX_F32) return ((const float *)p)[i];
    if (T == KMUX_F16 || T == KMUX_BF16) return kmux_gpu_decode<T>(((const uint16_t *)p)[i]);
    return kmux_gpu_decode<T>(((const uint8_t *)p)[i]);
}

/* Magnitude bits of |x| as an f32, 0 for NaN: they order like the magnitudes, so an unsigned
 * max (and atomicMax) over them is an amax that ignores NaN. */
KMUX_DEV uint32_t kmux_gpu_amax_bits(float x) {
    uint32_t a = __float_as_uint(x) & 0x7fffffffu;
    return a <= 0x7f800000u ? a : 0u;
}

KMUX_DEV uint32_t kmux_gpu_amax_bits_f64(double x) {
    double a = fabs(x);
    return a == a ? __float_as_uint((float)a) : 0u; /* rounding is monotonic */
}

/* Stores f32 value x (times s when has_scale) as element i of dtype D. */
template <int D>
KMUX_DEV void kmux_gpu_store_from_f32(void *p, int64_t i, float x, int saturate, bool has_scale,
                                      float s) {
    if (D == KMUX_F32) {
        float y = has_scale ? __fmul_rn(x, s) : x;
        if (saturate && isinf(y)) y = y > 0.0f ? 3.402823466e38f : -3.402823466e38f;
        ((float *)p)[i] = y;
    } else if (D == KMUX_F64) {
        double y = has_scale ? (double)x * (double)s : (double)x; /* exact */
        if (saturate && isinf(y)) y = y > 0.0 ? 1.7976931348623157e308 : -1.7976931348623157e308;
        ((double *)p)[i] = y;
    } else {
        const kmux_gpu_fmt f = kmux_gpu_fmt_of<D>();
        uint32_t c = has_scale ? kmux_gpu_scaled_code<D>(x, s, saturate)
                               : kmux_gpu_round_f32(x, f, saturate);
        if (D == KMUX_F16 || D == KMUX_BF16)
            ((uint16_t *)p)[i] = (uint16_t)c;
        else
            ((uint8_t *)p)[i] = (uint8_t)c;
    }
}

/* Stores f64 value x (times s in f64 when has_scale) as element i of dtype D, rounded once from
 * the f64 value. */
template <int D>
KMUX_DEV void kmux_gpu_store_from_f64(void *p, int64_t i, double x, int saturate, bool has_scale,
                                      float s) {
    if (has_scale) x *= (double)s;
    if (D == KMUX_F64) {
        if (saturate && isinf(x)) x = x > 0.0 ? 1.7976931348623157e308 : -1.7976931348623157e308;
        ((double *)p)[i] = x;
    } else if (D == KMUX_F32) {
        float y = (float)x; /* round to nearest even */
        if (saturate && isinf(y)) y = y > 0.0f ? 3.402823466e38f : -3.402823466e38f;
        ((float *)p)[i] = y;
    } else {
        uint32_t c = kmux_gpu_round_f64(x, kmux_gpu_fmt_of<D>(), saturate);
        if (D == KMUX_F16 || D == KMUX_BF16)
            ((uint16_t *)p)[i] = (uint16_t)c;
        else
            ((uint8_t *)p)[i] = (uint8_t)c;
    }
}

/* Max of `v` over the block into *out (unsigned bits of a non-negative f32) with one atomicMax per
 * block. Every thread of the block must call it. Shared-memory tree: no warp-width assumption. */
KMUX_DEV void kmux_gpu_block_max_to(uint32_t v, float *out) {
    __shared__ uint32_t sh[KMUX_GPU_BLOCK];
    const unsigned t = threadIdx.x;
    sh[t] = v;
    __syncthreads();
    for (unsigned s = blockDim.x / 2; s > 0; s >>= 1) {
        if (t < s && sh[t + s] > sh[t]) sh[t] = sh[t + s];
        __syncthreads();
    }
    if (t == 0 && sh[0] != 0u) atomicMax((unsigned int *)out, (unsigned int)sh[0]);
}

#endif
