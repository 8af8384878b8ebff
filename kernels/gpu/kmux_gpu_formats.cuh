/*
 * kmux_gpu_formats.cuh - element access of the GPU kernels on top of the shared dtype table and
 * codec (dispatch/common/kmux_dtype_desc.h, kmux_dtype_codec.h): the same encoder and decoder as
 * ref and the CPU kernels, so a GPU, the emulator and the CPU give the same bits:
 *   - round to nearest even once, overflow decided after rounding; NaN and saturation rules of
 *     kmux_dtype_codec.h; subnormals kept (integer arithmetic only);
 *   - x * scale is the exact product rounded once: the f32 product is rounded to odd with the FMA
 *     error term, then rounded to the narrow format (the error term is exact while the product is
 *     >= 2^-100 in magnitude; below that only bf16 can still be non-zero, and bf16 then takes the
 *     product in f64, which is exact).
 * Dtypes are compile-time template arguments, so the descriptors constant-fold.
 */
#ifndef KMUX_GPU_FORMATS_CUH
#define KMUX_GPU_FORMATS_CUH

#include <stdint.h>

#include "kmux.h"
#include "kmux_gpu_vendor.h"
/* after the vendor header: in the emulation it defines the CUDA keywords the codec may use */
#include "kmux_dtype_codec.h"
#include "kmux_dtype_desc.h"

#define KMUX_DEV __device__ __forceinline__

/* Exact f32 value of a code of narrow dtype T. */
template <int T> KMUX_DEV float kmux_gpu_decode(uint32_t code) {
    return kmux_decode_f32(code, (kmux_dtype)T);
}

/* Code of x in narrow dtype T, rounded once. */
template <int T> KMUX_DEV uint32_t kmux_gpu_encode_f32(float x, int saturate) {
    return kmux_encode_f32(x, (kmux_dtype)T, saturate);
}
template <int T> KMUX_DEV uint32_t kmux_gpu_encode_f64(double x, int saturate) {
    return kmux_encode_f64(x, (kmux_dtype)T, saturate);
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
    float p = kmux_gpu_mul_round_odd(x, s);
    uint32_t pa = __float_as_uint(p) & 0x7fffffffu;
    if (T == KMUX_BF16 && pa != 0 && pa < 0x0d800000u) /* |p| < 2^-100 */
        return kmux_gpu_encode_f64<T>((double)x * (double)s, saturate);
    return kmux_gpu_encode_f32<T>(p, saturate);
}

/* Element i of an array of dtype T as f32 (exact for every narrow type; T != f64, i8 exact). */
template <int T> KMUX_DEV float kmux_gpu_load_f32(const void *p, int64_t i) {
    if (T == KMUX_F32) return ((const float *)p)[i];
    if (T == KMUX_I8) return (float)((const int8_t *)p)[i];
    if (T == KMUX_F16 || T == KMUX_BF16) return kmux_gpu_decode<T>(((const uint16_t *)p)[i]);
    return kmux_gpu_decode<T>(((const uint8_t *)p)[i]);
}

/* Element i of an array of dtype T as f64 (exact for every dtype but i32 beyond 2^53: never). */
template <int T> KMUX_DEV double kmux_gpu_load_f64(const void *p, int64_t i) {
    if (T == KMUX_F64) return ((const double *)p)[i];
    if (T == KMUX_I32) return (double)((const int32_t *)p)[i];
    return (double)kmux_gpu_load_f32<T>(p, i);
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
        uint32_t c = has_scale ? kmux_gpu_scaled_code<D>(x, s, saturate)
                               : kmux_gpu_encode_f32<D>(x, saturate);
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
        uint32_t c = kmux_gpu_encode_f64<D>(x, saturate);
        if (D == KMUX_F16 || D == KMUX_BF16)
            ((uint16_t *)p)[i] = (uint16_t)c;
        else
            ((uint8_t *)p)[i] = (uint8_t)c;
    }
}

/* Max of v over the wave (every lane gets it): butterfly over kmux_gpu_wave_size() lanes. */
KMUX_DEV uint32_t kmux_gpu_wave_max(uint32_t v) {
#if KMUX_GPU_PLANT == KMUX_GPU_PLANT_WAVE32
    const unsigned w = 32; /* planted bug: a hard-coded warp width */
#else
    const unsigned w = KMUX_GPU_WAVE();
#endif
    for (unsigned o = w / 2; o > 0; o >>= 1)
        v = max(v, (uint32_t)KMUX_GPU_SHFL_XOR_U32(v, o));
    return v;
}

/* Max of `v` over the block into *out (unsigned bits of a non-negative f32) with one atomicMax per
 * block. Every thread of the (1-D, at most KMUX_GPU_BLOCK threads, a multiple of the wave) block
 * must call it: a wave reduction, then one slot per wave in shared memory. */
KMUX_DEV void kmux_gpu_block_max_to(uint32_t v, float *out) {
    KMUX_GPU_SHARED(uint32_t, part, KMUX_GPU_BLOCK / KMUX_GPU_MIN_WAVE);
#if KMUX_GPU_PLANT == KMUX_GPU_PLANT_WAVE32
    const unsigned w = 32;
#else
    const unsigned w = KMUX_GPU_WAVE();
#endif
    v = kmux_gpu_wave_max(v);
    if (KMUX_GPU_LANE() == 0) part[threadIdx.x / w] = v;
    __syncthreads();
    if (threadIdx.x == 0) {
        uint32_t m = 0;
        for (unsigned i = 0; i < blockDim.x / w; i++)
            m = max(m, part[i]);
        if (m != 0u) atomicMax((unsigned int *)out, (unsigned int)m);
    }
}

#endif
