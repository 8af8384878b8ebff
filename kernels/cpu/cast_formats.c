/*
 * cast_formats.c - exact scalar encoding and decoding of f16, bf16 and the four fp8 formats.
 *
 * Every routine works on bit patterns with integer arithmetic only, so the result does not depend
 * on the SSE control register (rounding mode, FTZ, DAZ). Rounding follows IEEE 754-2019 §4.3.1
 * (roundTiesToEven) and §7.4 (overflow is decided after rounding, as if the exponent range were
 * unbounded: the threshold is the midpoint above the largest finite value, and for e4m3, whose
 * largest mantissa 110 is even, that midpoint itself rounds down to 448). OCP OFP8 v1.0 defines
 * e4m3/e5m2; the FNUZ variants are AMD gfx942's.
 */
#include <float.h>
#include <pthread.h>
#include <string.h>

#include "cast_internal.h"
#include "kmux_cpu_kernels.h"

/*                                      mbits bias sign  max     inf     NaN     fnuz */
static const kmux_cast_fmt FMT_F16 = {10, 15, 15, 0x7bffu, 0x7c00u, 0x7e00u, 0};
static const kmux_cast_fmt FMT_BF16 = {7, 127, 15, 0x7f7fu, 0x7f80u, 0x7fc0u, 0};
static const kmux_cast_fmt FMT_E4M3 = {3, 7, 7, 0x7eu, 0, 0x7fu, 0};
static const kmux_cast_fmt FMT_E5M2 = {2, 15, 7, 0x7bu, 0x7cu, 0x7eu, 0};
static const kmux_cast_fmt FMT_E4M3_FNUZ = {3, 8, 7, 0x7fu, 0, 0x80u, 1};
static const kmux_cast_fmt FMT_E5M2_FNUZ = {2, 16, 7, 0x7fu, 0, 0x80u, 1};

const kmux_cast_fmt *kmux_cast_fmt_of(kmux_dtype t) {
    switch (t) {
    case KMUX_F16:
        return &FMT_F16;
    case KMUX_BF16:
        return &FMT_BF16;
    case KMUX_F8_E4M3:
        return &FMT_E4M3;
    case KMUX_F8_E5M2:
        return &FMT_E5M2;
    case KMUX_F8_E4M3_FNUZ:
        return &FMT_E4M3_FNUZ;
    case KMUX_F8_E5M2_FNUZ:
        return &FMT_E5M2_FNUZ;
    default:
        return NULL;
    }
}

static uint32_t overflow_code(uint32_t sign, const kmux_cast_fmt *f, int saturate) {
    if (saturate) return sign | f->max_code;
    if (f->fnuz) return f->nan_code;
    if (f->inf_code) return sign | f->inf_code;
    return sign | f->nan_code; /* e4m3: no Inf, S.1111.111 */
}

static uint32_t nan_code(uint32_t sign, uint64_t payload_top, const kmux_cast_fmt *f) {
    if (f->fnuz) return f->nan_code;
    if (!f->inf_code) return sign | f->nan_code;
    /* IEEE-like: quiet NaN (top mantissa bit set, so it can never read as Inf) with the sign and
     * the leading payload bits, as F16C's VCVTPS2PH does. */
    return sign | f->nan_code | (uint32_t)payload_top;
}

/* Rounds m * 2^-shift (m < 2^53) to an integer, ties to even. */
static uint64_t rne_shift(uint64_t m, int shift) {
    if (shift <= 0) return m;
    if (shift > 63) return 0;
    uint64_t q = m >> shift;
    uint64_t rem = m & ((UINT64_C(1) << shift) - 1);
    uint64_t half = UINT64_C(1) << (shift - 1);
    if (rem > half || (rem == half && (q & 1))) q++;
    return q;
}

/* Shared body of the f32 and f64 roundings: a binary format with `pm` mantissa bits and bias
 * `pbias`, magnitude bits `a`. */
static uint32_t round_generic(uint64_t a, uint32_t sign, int pm, int pbias, const kmux_cast_fmt *f,
                              int saturate) {
    const uint64_t man_mask = (UINT64_C(1) << pm) - 1;
    uint64_t ef = a >> pm;
    uint64_t m = a & man_mask;
    if (ef == (uint64_t)(2 * pbias + 1)) {
        if (m) return nan_code(sign, m >> (pm - f->mbits), f);
        return overflow_code(sign, f, saturate); /* Inf: IEEE §7.4 / __NV_SATFINITE */
    }
    const int emin = 1 - f->bias;
    int e;
    if (ef == 0) {
        e = 1 - pbias; /* source subnormal: no implicit bit */
    } else {
        e = (int)ef - pbias;
        m |= UINT64_C(1) << pm;
    }
    if (e > f->bias + 1) return overflow_code(sign, f, saturate);
    uint64_t code;
    if (ef != 0 && e >= emin) {
        /* Normal in the target: re-bias, then round the dropped mantissa bits; a carry runs into
         * the exponent, which is exactly what rounding up to the next binade means. */
        uint64_t r = a - ((uint64_t)(pbias - f->bias) << pm);
        code = rne_shift(r, pm - f->mbits);
    } else {
        /* Subnormal in the target: count units of 2^(emin - mbits). Rounding up to 1 << mbits
         * gives the smallest normal's code, which is right. */
        code = rne_shift(m, emin - e + pm - f->mbits);
    }
    if (code > f->max_code) return overflow_code(sign, f, saturate);
    if (f->fnuz && code == 0) return 0; /* FNUZ has no -0 */
    return sign | (uint32_t)code;
}

uint32_t kmux_cast_round_f32(uint32_t u, const kmux_cast_fmt *f, int saturate) {
    return round_generic(u & 0x7fffffffu, (u >> 31) << f->sign_shift, 23, 127, f, saturate);
}

uint32_t kmux_cast_round_f64(uint64_t u, const kmux_cast_fmt *f, int saturate) {
    return round_generic(u & ~(UINT64_C(1) << 63), (uint32_t)(u >> 63) << f->sign_shift, 52, 1023,
                         f, saturate);
}

static float f32_from_bits(uint32_t u) {
    float x;
    memcpy(&x, &u, sizeof x);
    return x;
}

float kmux_cast_decode(uint32_t code, const kmux_cast_fmt *f) {
    if (f == &FMT_BF16) return f32_from_bits(code << 16); /* bf16 is the top half of an f32 */
    const uint32_t sign = ((code >> f->sign_shift) & 1u) << 31;
    const uint32_t mag = code & ((1u << f->sign_shift) - 1);
    const int M = f->mbits;
    if (f->fnuz) {
        if (code == f->nan_code) return f32_from_bits(0x7fc00000u);
    } else if (f->inf_code) {
        if (mag == f->inf_code) return f32_from_bits(sign | 0x7f800000u);
        if (mag > f->inf_code) /* NaN: quieted, payload kept (as F16C's VCVTPH2PS) */
            return f32_from_bits(sign | 0x7fc00000u | ((mag & ((1u << M) - 1)) << (23 - M)));
    } else if (mag == f->nan_code) {
        return f32_from_bits(sign | 0x7fc00000u);
    }
    int exp = (int)(mag >> M);
    uint32_t man = mag & ((1u << M) - 1);
    if (mag == 0) return f32_from_bits(sign);
    if (exp == 0) { /* subnormal: normalise (all of them are normal f32 numbers) */
        exp = 1;
        while (!(man & (1u << M))) {
            man <<= 1;
            exp--;
        }
        man &= (1u << M) - 1;
    }
    return f32_from_bits(sign | ((uint32_t)(exp - f->bias + 127) << 23) | (man << (23 - M)));
}

float kmux_cast_f64_to_f32(double x, int saturate) {
    float y = (float)x; /* RNE under kmux_cast_fp_enter; NaN stays NaN; overflow -> Inf */
    if (saturate && y - y != 0.0f && y == y) y = y > 0 ? FLT_MAX : -FLT_MAX;
    return y;
}

/* ---- fp8 tables ---- */

static float fp8_tables[4][256];
static pthread_once_t fp8_once = PTHREAD_ONCE_INIT;

static void fp8_tables_init(void) {
    static const kmux_dtype types[4] = {KMUX_F8_E4M3, KMUX_F8_E5M2, KMUX_F8_E4M3_FNUZ,
                                        KMUX_F8_E5M2_FNUZ};
    for (int t = 0; t < 4; t++)
        for (uint32_t c = 0; c < 256; c++)
            fp8_tables[t][c] = kmux_cast_decode(c, kmux_cast_fmt_of(types[t]));
}

const float *kmux_cast_fp8_table(kmux_dtype t) {
    int i;
    switch (t) {
    case KMUX_F8_E4M3:
        i = 0;
        break;
    case KMUX_F8_E5M2:
        i = 1;
        break;
    case KMUX_F8_E4M3_FNUZ:
        i = 2;
        break;
    case KMUX_F8_E5M2_FNUZ:
        i = 3;
        break;
    default:
        return NULL;
    }
    pthread_once(&fp8_once, fp8_tables_init);
    return fp8_tables[i];
}

/* ---- the single-value functions of kmux_cpu_kernels.h ---- */

static uint32_t f32_bits(float x) {
    uint32_t u;
    memcpy(&u, &x, sizeof u);
    return u;
}

uint16_t kmux_cpu_f32_to_f16_bits(float x) {
    return (uint16_t)kmux_cast_round_f32(f32_bits(x), &FMT_F16, 0);
}

uint16_t kmux_cpu_f32_to_bf16_bits(float x) {
    return (uint16_t)kmux_cast_round_f32(f32_bits(x), &FMT_BF16, 0);
}

uint8_t kmux_cpu_f32_to_fp8_bits(float x, kmux_dtype fp8_type, int saturate) {
    const kmux_cast_fmt *f = kmux_cast_fmt_of(fp8_type);
    return f ? (uint8_t)kmux_cast_round_f32(f32_bits(x), f, saturate) : 0;
}

float kmux_cpu_f16_bits_to_f32(uint16_t h) {
    return kmux_cast_decode(h, &FMT_F16);
}

float kmux_cpu_bf16_bits_to_f32(uint16_t b) {
    return f32_from_bits((uint32_t)b << 16);
}

float kmux_cpu_fp8_bits_to_f32(uint8_t v, kmux_dtype fp8_type) {
    const float *t = kmux_cast_fp8_table(fp8_type);
    return t ? t[v] : f32_from_bits(0x7fc00000u);
}

void kmux_cast_scaled_scalar(int64_t n, const float *src, void *dst, kmux_dtype dst_type,
                             int saturate, float scale) {
    const kmux_cast_fmt *f = kmux_cast_fmt_of(dst_type);
    const double s = (double)scale;
    for (int64_t i = 0; i < n; i++) {
        double y = (double)src[i] * s; /* exact: 24 x 24 significant bits fit in 53 */
        uint64_t u;
        memcpy(&u, &y, sizeof u);
        uint32_t code = kmux_cast_round_f64(u, f, saturate);
        if (f->sign_shift == 15)
            ((uint16_t *)dst)[i] = (uint16_t)code;
        else
            ((uint8_t *)dst)[i] = (uint8_t)code;
    }
}
