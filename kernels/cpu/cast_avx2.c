/*
 * cast_avx2.c - AVX2/F16C conversion kernels, compiled with function-level target attributes so
 * the library still runs (through the portable paths of cast.c) on CPUs without them.
 *
 * Bit-exactness with the scalar routines of cast_formats.c: f16 <-> f32 uses F16C with the
 * rounding given in the instruction (VCVTPS2PH imm = round to nearest even; it ignores MXCSR.FTZ,
 * keeps f16 subnormals, quiets NaN keeping the leading payload bits, overflows to Inf), bf16 and
 * the magnitude comparisons use integer instructions, so neither depends on MXCSR. Tails are run
 * through the same vector code on a small padded buffer, never through different scalar code.
 *
 * Large outputs may be written with non-temporal stores (the caller decides): the destination is
 * then not read for ownership, which is what lets a cast run at the speed of memcpy (which
 * streams too).
 */
#include <string.h>

#include "cast_internal.h"
#include "cpu_stream.h"

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>

#define KMUX_AVX2 __attribute__((target("avx2,fma,f16c")))
/* Helpers must be inlined into the loops (GCC does not always on its own, and then rebuilds every
 * constant per call). */
/* Software prefetch 2 KiB ahead: the hardware prefetchers alone leave a single thread short of
 * the read bandwidth memcpy gets. Prefetching past the end of an array is harmless (prefetches
 * never fault); the address is formed as an integer so no out-of-bounds pointer exists. */
#define KMUX_PREFETCH_AHEAD(p) kmux_cpu_prefetch_line((uintptr_t)(p) + 2048u)
#define KMUX_AVX2_INLINE __attribute__((target("avx2,fma,f16c"), always_inline)) static inline

KMUX_AVX2 void kmux_cast_f16_to_f32_avx2(int64_t n, const uint16_t *src, float *dst) {
    int64_t i = 0;
    for (; i + 32 <= n; i += 32) {
        __m256 a = _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(src + i)));
        __m256 b = _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(src + i + 8)));
        __m256 c = _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(src + i + 16)));
        __m256 d = _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(src + i + 24)));
        _mm256_storeu_ps(dst + i, a);
        _mm256_storeu_ps(dst + i + 8, b);
        _mm256_storeu_ps(dst + i + 16, c);
        _mm256_storeu_ps(dst + i + 24, d);
    }
    for (; i < n; i += 8) {
        uint16_t in[8] = {0};
        float out[8];
        int64_t k = n - i < 8 ? n - i : 8;
        memcpy(in, src + i, (size_t)k * sizeof *in);
        _mm256_storeu_ps(out, _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)in)));
        memcpy(dst + i, out, (size_t)k * sizeof *out);
    }
}

KMUX_AVX2 void kmux_cast_bf16_to_f32_avx2(int64_t n, const uint16_t *src, float *dst) {
    int64_t i = 0;
    for (; i + 16 <= n; i += 16) {
        __m256i v = _mm256_loadu_si256((const __m256i *)(src + i));
        __m256i lo = _mm256_slli_epi32(_mm256_cvtepu16_epi32(_mm256_castsi256_si128(v)), 16);
        __m256i hi = _mm256_slli_epi32(_mm256_cvtepu16_epi32(_mm256_extracti128_si256(v, 1)), 16);
        _mm256_storeu_si256((__m256i *)(dst + i), lo);
        _mm256_storeu_si256((__m256i *)(dst + i + 8), hi);
    }
    for (; i < n; i++) {
        uint32_t u = (uint32_t)src[i] << 16;
        memcpy(dst + i, &u, sizeof u);
    }
}

KMUX_AVX2 void kmux_cast_fp8_to_f32_avx2(int64_t n, const uint8_t *src, const float *table,
                                         float *dst) {
    int64_t i = 0;
    for (; i + 16 <= n; i += 16) {
        __m128i v = _mm_loadu_si128((const __m128i *)(src + i));
        __m256i lo = _mm256_cvtepu8_epi32(v);
        __m256i hi = _mm256_cvtepu8_epi32(_mm_srli_si128(v, 8));
        _mm256_storeu_ps(dst + i, _mm256_i32gather_ps(table, lo, 4));
        _mm256_storeu_ps(dst + i + 8, _mm256_i32gather_ps(table, hi, 4));
    }
    for (; i < n; i++)
        dst[i] = table[src[i]];
}

/* x * s rounded to f32 with round-to-odd: the f32 nearest the exact product toward zero, with
 * its last bit forced to 1 when the product is inexact. Rounding that once more to a format with
 * at most 22 significant bits gives the exact product rounded ONCE (the classic round-to-odd
 * theorem), so a scaled cast is a single rounding, as kmux_cast promises. The rounding error
 * comes from FMA (x*s - p, exact while |p| >= 2^-100; below that f16 results are 0 anyway, and
 * the bf16 kernel takes those lanes through the scalar f64 path). */
KMUX_AVX2_INLINE __m256 mul_round_odd(__m256 x, __m256 s) {
    const __m256i absm = _mm256_set1_epi32(0x7fffffff);
    __m256 p = _mm256_mul_ps(x, s);
    __m256 e = _mm256_fmsub_ps(x, s, p);
    __m256i pi = _mm256_castps_si256(p), ei = _mm256_castps_si256(e);
    __m256i pa = _mm256_and_si256(pi, absm);
    __m256i finite = _mm256_cmpgt_epi32(_mm256_set1_epi32(0x7f800000), pa);
    __m256i exact = _mm256_cmpeq_epi32(_mm256_and_si256(ei, absm), _mm256_setzero_si256());
    __m256i apply = _mm256_andnot_si256(exact, finite);
    /* |exact| < |p| when e and p have opposite signs: truncation is then the next f32 down. */
    __m256i down = _mm256_srai_epi32(_mm256_xor_si256(pi, ei), 31);
    __m256i odd = _mm256_or_si256(_mm256_add_epi32(pa, down), _mm256_set1_epi32(1));
    odd = _mm256_or_si256(odd, _mm256_andnot_si256(absm, pi));
    return _mm256_castsi256_ps(_mm256_blendv_epi8(pi, odd, apply));
}

/* Loads 8 floats, multiplies by the scale and clamps to +-maxv when asked. NaN passes through
 * the clamp: MINPS/MAXPS return their SECOND operand when either is NaN. */
KMUX_AVX2_INLINE __m256 load_scaled(const float *p, int has_scale, __m256 s, int saturate,
                                    __m256 maxv) {
    __m256 x = _mm256_loadu_ps(p);
    if (has_scale) x = mul_round_odd(x, s);
    if (saturate) {
        x = _mm256_min_ps(maxv, x);
        x = _mm256_max_ps(_mm256_sub_ps(_mm256_setzero_ps(), maxv), x);
    }
    return x;
}

KMUX_AVX2 void kmux_cast_f32_to_f16_avx2(int64_t n, const float *src, uint16_t *dst, int saturate,
                                         const float *scale, int stream) {
    const int has_scale = scale != NULL;
    const __m256 s = _mm256_set1_ps(has_scale ? *scale : 1.0f);
    const __m256 maxv = _mm256_set1_ps(65504.0f); /* clamping never changes a finite result */
    int64_t i = 0;
    if (stream) { /* head up to 16-byte alignment of dst, then aligned streaming stores */
        int64_t head = (int64_t)((16 - ((uintptr_t)dst & 15)) & 15) / 2;
        if (head > n) head = n; /* a short call: all of it is head (was read and written past n) */
        if (((uintptr_t)dst & 1) == 0 && head > 0) {
            kmux_cast_f32_to_f16_avx2(head, src, dst, saturate, scale, 0);
            i = head;
        }
    }
    if (stream && ((uintptr_t)(dst + i) & 15) == 0) {
        for (; i + 32 <= n; i += 32) {
            KMUX_PREFETCH_AHEAD(src + i);
            KMUX_PREFETCH_AHEAD(src + i + 16);
            for (int k = 0; k < 32; k += 8) {
                __m256 x = load_scaled(src + i + k, has_scale, s, saturate, maxv);
                _mm_stream_si128((__m128i *)(dst + i + k),
                                 _mm256_cvtps_ph(x, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
            }
        }
    }
    for (; i + 8 <= n; i += 8) {
        __m256 x = load_scaled(src + i, has_scale, s, saturate, maxv);
        _mm_storeu_si128((__m128i *)(dst + i),
                         _mm256_cvtps_ph(x, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
    }
    if (i < n) {
        float in[8] = {0};
        uint16_t out[8];
        memcpy(in, src + i, (size_t)(n - i) * sizeof *in);
        __m256 x = load_scaled(in, has_scale, s, saturate, maxv);
        _mm_storeu_si128((__m128i *)out,
                         _mm256_cvtps_ph(x, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
        memcpy(dst + i, out, (size_t)(n - i) * sizeof *out);
    }
}

/* 8 f32 -> 8 bf16 codes in the low halves of 32-bit lanes: RNE by integer addition; NaN ->
 * quiet NaN with sign and leading payload (NaN lanes are rare: they are blended in only when a
 * vector has one); saturate turns an Inf result into the largest finite value of its sign
 * (0x7f80 -> 0x7f7f, with the sign bit untouched). */
KMUX_AVX2_INLINE __m256i bf16_codes(__m256 x, int saturate) {
    const __m256i u = _mm256_castps_si256(x);
    const __m256i one = _mm256_set1_epi32(1);
    const __m256i hi = _mm256_srli_epi32(u, 16);
    __m256i r = _mm256_add_epi32(u, _mm256_set1_epi32(0x7fff));
    r = _mm256_srli_epi32(_mm256_add_epi32(r, _mm256_and_si256(hi, one)), 16);
    __m256i a = _mm256_and_si256(u, _mm256_set1_epi32(0x7fffffff));
    __m256i is_nan = _mm256_cmpgt_epi32(a, _mm256_set1_epi32(0x7f800000));
    if (!_mm256_testz_si256(is_nan, is_nan))
        r = _mm256_blendv_epi8(r, _mm256_or_si256(hi, _mm256_set1_epi32(0x40)), is_nan);
    if (saturate) {
        __m256i mag = _mm256_and_si256(r, _mm256_set1_epi32(0x7fff));
        __m256i inf = _mm256_cmpeq_epi32(mag, _mm256_set1_epi32(0x7f80));
        r = _mm256_sub_epi32(r, _mm256_and_si256(inf, one));
    }
    return r;
}

/* 16 f32 -> 16 bf16 codes in order. With a scale, products below 2^-100 in magnitude (where the
 * FMA error term of mul_round_odd may be inexact) go through the exact scalar path. */
KMUX_AVX2_INLINE __m256i bf16_pack16(const float *p, int has_scale, __m256 s, int saturate) {
    __m256 x0 = _mm256_loadu_ps(p), x1 = _mm256_loadu_ps(p + 8);
    if (has_scale) {
        const __m256i absm = _mm256_set1_epi32(0x7fffffff), tiny = _mm256_set1_epi32(0x0d800000);
        x0 = mul_round_odd(x0, s);
        x1 = mul_round_odd(x1, s);
        __m256i a0 = _mm256_and_si256(_mm256_castps_si256(x0), absm);
        __m256i a1 = _mm256_and_si256(_mm256_castps_si256(x1), absm);
        __m256i z = _mm256_setzero_si256();
        __m256i t0 = _mm256_andnot_si256(_mm256_cmpeq_epi32(a0, z), _mm256_cmpgt_epi32(tiny, a0));
        __m256i t1 = _mm256_andnot_si256(_mm256_cmpeq_epi32(a1, z), _mm256_cmpgt_epi32(tiny, a1));
        if (!_mm256_testz_si256(_mm256_or_si256(t0, t1), _mm256_or_si256(t0, t1))) {
            uint16_t out[16];
            float sc;
            _mm_store_ss(&sc, _mm256_castps256_ps128(s));
            kmux_cast_scaled_scalar(16, p, out, KMUX_BF16, saturate, sc);
            return _mm256_loadu_si256((const __m256i *)out);
        }
    }
    __m256i packed = _mm256_packus_epi32(bf16_codes(x0, saturate), bf16_codes(x1, saturate));
    return _mm256_permute4x64_epi64(packed, 0xd8); /* undo the per-lane interleave of PACKUSDW */
}

KMUX_AVX2 void kmux_cast_f32_to_bf16_avx2(int64_t n, const float *src, uint16_t *dst, int saturate,
                                          const float *scale, int stream) {
    const int has_scale = scale != NULL;
    const __m256 s = _mm256_set1_ps(has_scale ? *scale : 1.0f);
    int64_t i = 0;
    if (stream) {
        int64_t head = (int64_t)((32 - ((uintptr_t)dst & 31)) & 31) / 2;
        if (head > n) head = n; /* a short call: all of it is head (was read and written past n) */
        if (((uintptr_t)dst & 1) == 0 && head > 0) {
            kmux_cast_f32_to_bf16_avx2(head, src, dst, saturate, scale, 0);
            i = head;
        }
    }
    if (stream && ((uintptr_t)(dst + i) & 31) == 0) {
        for (; i + 32 <= n; i += 32) {
            KMUX_PREFETCH_AHEAD(src + i);
            KMUX_PREFETCH_AHEAD(src + i + 16);
            _mm256_stream_si256((__m256i *)(dst + i), bf16_pack16(src + i, has_scale, s, saturate));
            _mm256_stream_si256((__m256i *)(dst + i + 16),
                                bf16_pack16(src + i + 16, has_scale, s, saturate));
        }
    }
    for (; i + 16 <= n; i += 16)
        _mm256_storeu_si256((__m256i *)(dst + i), bf16_pack16(src + i, has_scale, s, saturate));
    if (i < n) {
        float in[16] = {0};
        uint16_t out[16];
        memcpy(in, src + i, (size_t)(n - i) * sizeof *in);
        _mm256_storeu_si256((__m256i *)out, bf16_pack16(in, has_scale, s, saturate));
        memcpy(dst + i, out, (size_t)(n - i) * sizeof *out);
    }
}

/* |x| bits of 8 floats with NaN lanes set to 0; as integers they order like the magnitudes. */
KMUX_AVX2_INLINE __m256i abs_bits_no_nan(__m256i u) {
    __m256i a = _mm256_and_si256(u, _mm256_set1_epi32(0x7fffffff));
    return _mm256_andnot_si256(_mm256_cmpgt_epi32(a, _mm256_set1_epi32(0x7f800000)), a);
}

KMUX_AVX2 float kmux_cast_amax_f32_avx2(int64_t n, const float *x) {
    __m256i m0 = _mm256_setzero_si256(), m1 = m0, m2 = m0, m3 = m0;
    int64_t i = 0;
    for (; i + 32 <= n; i += 32) {
        KMUX_PREFETCH_AHEAD(x + i);
        KMUX_PREFETCH_AHEAD(x + i + 16);
        m0 = _mm256_max_epi32(m0, abs_bits_no_nan(_mm256_loadu_si256((const __m256i *)(x + i))));
        m1 =
            _mm256_max_epi32(m1, abs_bits_no_nan(_mm256_loadu_si256((const __m256i *)(x + i + 8))));
        m2 = _mm256_max_epi32(m2,
                              abs_bits_no_nan(_mm256_loadu_si256((const __m256i *)(x + i + 16))));
        m3 = _mm256_max_epi32(m3,
                              abs_bits_no_nan(_mm256_loadu_si256((const __m256i *)(x + i + 24))));
    }
    for (; i + 8 <= n; i += 8)
        m0 = _mm256_max_epi32(m0, abs_bits_no_nan(_mm256_loadu_si256((const __m256i *)(x + i))));
    m0 = _mm256_max_epi32(_mm256_max_epi32(m0, m1), _mm256_max_epi32(m2, m3));
    uint32_t lanes[8], best = 0;
    _mm256_storeu_si256((__m256i *)lanes, m0);
    for (int k = 0; k < 8; k++)
        best = lanes[k] > best ? lanes[k] : best;
    for (; i < n; i++) {
        uint32_t u;
        memcpy(&u, x + i, sizeof u);
        u &= 0x7fffffffu;
        if (u <= 0x7f800000u && u > best) best = u;
    }
    float r;
    memcpy(&r, &best, sizeof r);
    return r;
}

KMUX_AVX2 int kmux_cast_unscale_f32_avx2(int64_t n, float *x, float s) {
    const __m256 sv = _mm256_set1_ps(s);
    const __m256i maxfin = _mm256_set1_epi32(0x7f7fffff);
    const __m256i absm = _mm256_set1_epi32(0x7fffffff);
    __m256i bad = _mm256_setzero_si256();
    int64_t i = 0;
    for (; i + 8 <= n; i += 8) {
        __m256 v = _mm256_loadu_ps(x + i);
        __m256i a = _mm256_and_si256(_mm256_castps_si256(v), absm);
        bad = _mm256_or_si256(bad, _mm256_cmpgt_epi32(a, maxfin));
        _mm256_storeu_ps(x + i, _mm256_mul_ps(v, sv));
    }
    int found = !_mm256_testz_si256(bad, bad);
    for (; i < n; i++) {
        uint32_t u;
        memcpy(&u, x + i, sizeof u);
        if ((u & 0x7fffffffu) > 0x7f7fffffu) found = 1;
        x[i] *= s;
    }
    return found;
}

#else /* not x86: never called (kmux_cpu_has_* answer 0), defined so the library links */

void kmux_cast_f16_to_f32_avx2(int64_t n, const uint16_t *src, float *dst) {
    (void)n, (void)src, (void)dst;
}
void kmux_cast_bf16_to_f32_avx2(int64_t n, const uint16_t *src, float *dst) {
    (void)n, (void)src, (void)dst;
}
void kmux_cast_fp8_to_f32_avx2(int64_t n, const uint8_t *src, const float *table, float *dst) {
    (void)n, (void)src, (void)table, (void)dst;
}
void kmux_cast_f32_to_f16_avx2(int64_t n, const float *src, uint16_t *dst, int saturate,
                               const float *scale, int stream) {
    (void)n, (void)src, (void)dst, (void)saturate, (void)scale, (void)stream;
}
void kmux_cast_f32_to_bf16_avx2(int64_t n, const float *src, uint16_t *dst, int saturate,
                                const float *scale, int stream) {
    (void)n, (void)src, (void)dst, (void)saturate, (void)scale, (void)stream;
}
float kmux_cast_amax_f32_avx2(int64_t n, const float *x) {
    (void)n, (void)x;
    return 0.0f;
}
int kmux_cast_unscale_f32_avx2(int64_t n, float *x, float s) {
    (void)n, (void)x, (void)s;
    return 0;
}
#endif
