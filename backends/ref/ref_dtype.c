/*
 * ref_dtype.c - exact decoding and once-rounded encoding of every kmux dtype (see ref_dtype.h).
 *
 * Every floating format of at most 32 bits is described by its exponent width, trailing
 * significand width, bias and special-value convention, and handled by one generic encoder and
 * decoder, so that f32, f16, bf16 and the four fp8 formats share the same (tested) rounding.
 * The rounding never depends on the floating-point environment: ties are resolved by hand.
 */
#include "ref_dtype.h"

#include <float.h>
#include <math.h>
#include <string.h>

/* How a format uses its largest exponent field. */
typedef enum ref_special {
    REF_IEEE, /* IEEE 754: exponent all ones = Inf (mantissa 0) or NaN */
    REF_E4M3, /* OCP E4M3: no Inf, only S.1111.111 is NaN */
    REF_FNUZ  /* AMD FNUZ: no Inf, no -0, 0x80 is the only NaN */
} ref_special;

typedef struct ref_format {
    int ebits; /* exponent field width */
    int mbits; /* trailing significand field width */
    int bias;
    ref_special special;
} ref_format;

/* Parameters from IEEE 754-2019 Table 3.5 (binary32, binary16), bfloat16 (binary32's upper
 * half), the OCP OFP8 specification rev 1.0 (E4M3 bias 7, E5M2 bias 15) and the FNUZ formats of
 * AMD gfx942 (bias 8 and 16, arXiv:2206.02915). */
static int ref_format_of(kmux_dtype t, ref_format *f) {
    switch (t) {
    case KMUX_F32:
        *f = (ref_format){8, 23, 127, REF_IEEE};
        return 1;
    case KMUX_F16:
        *f = (ref_format){5, 10, 15, REF_IEEE};
        return 1;
    case KMUX_BF16:
        *f = (ref_format){8, 7, 127, REF_IEEE};
        return 1;
    case KMUX_F8_E4M3:
        *f = (ref_format){4, 3, 7, REF_E4M3};
        return 1;
    case KMUX_F8_E5M2:
        *f = (ref_format){5, 2, 15, REF_IEEE};
        return 1;
    case KMUX_F8_E4M3_FNUZ:
        *f = (ref_format){4, 3, 8, REF_FNUZ};
        return 1;
    case KMUX_F8_E5M2_FNUZ:
        *f = (ref_format){5, 2, 16, REF_FNUZ};
        return 1;
    default:
        return 0;
    }
}

/* Largest unbiased exponent of a finite value, and largest trailing significand at it. */
static int ref_emax(const ref_format *f) {
    int field_max = (1 << f->ebits) - 1;
    return (f->special == REF_IEEE ? field_max - 1 : field_max) - f->bias;
}

static uint32_t ref_mant_max(const ref_format *f) {
    uint32_t all = (1u << f->mbits) - 1;
    return f->special == REF_E4M3 ? all - 1 : all;
}

static uint32_t ref_nan_bits(const ref_format *f, uint32_t sign) {
    uint32_t field_max = (1u << f->ebits) - 1;
    switch (f->special) {
    case REF_IEEE:
        return sign | (field_max << f->mbits) | (1u << (f->mbits - 1)); /* quiet */
    case REF_E4M3:
        return sign | (field_max << f->mbits) | ((1u << f->mbits) - 1);
    default:
        return 1u << (f->ebits + f->mbits); /* FNUZ: 0x80 */
    }
}

/* Result of an overflow or of an infinite input. */
static uint32_t ref_overflow_bits(const ref_format *f, uint32_t sign, int saturate) {
    uint32_t max_bits = ((uint32_t)(ref_emax(f) + f->bias) << f->mbits) | ref_mant_max(f);
    if (saturate) return sign | max_bits;
    if (f->special == REF_IEEE) return sign | (((1u << f->ebits) - 1) << f->mbits);
    return ref_nan_bits(f, sign);
}

/* r >= 0 rounded to an integer, ties to even, whatever the current rounding mode. */
static double ref_round_half_even(double r) {
    double fl = floor(r);
    double frac = r - fl; /* exact: r < 2^53 */
    if (frac > 0.5) return fl + 1.0;
    if (frac < 0.5) return fl;
    return fmod(fl, 2.0) == 0.0 ? fl : fl + 1.0;
}

static uint32_t ref_encode(double v, const ref_format *f, int saturate) {
    uint32_t sign = signbit(v) ? 1u << (f->ebits + f->mbits) : 0u;
    uint32_t zero = f->special == REF_FNUZ ? 0u : sign; /* FNUZ has no -0 */
    if (isnan(v)) return ref_nan_bits(f, sign);
    double a = fabs(v);
    if (isinf(a)) return ref_overflow_bits(f, sign, saturate);
    if (a == 0.0) return zero;

    int emin = 1 - f->bias;
    int e2 = 0;
    (void)frexp(a, &e2); /* a = m * 2^e2, m in [0.5, 1) */
    int e = e2 - 1;      /* a in [2^e, 2^(e+1)) */
    if (e < emin) e = emin;
    /* Quantum of the binade of a is 2^(e - mbits): r = a / quantum, exact, < 2^(mbits + 1). */
    double rr = ref_round_half_even(ldexp(a, f->mbits - e));
    if (rr == 0.0) return zero; /* underflow to zero */
    uint64_t r = (uint64_t)rr;
    uint64_t hidden = 1ull << f->mbits;
    if (r == 2 * hidden) { /* rounded up into the next binade */
        r = hidden;
        e += 1;
    }
    if (e > ref_emax(f) || (e == ref_emax(f) && r - hidden > ref_mant_max(f)))
        return ref_overflow_bits(f, sign, saturate);
    if (r < hidden) return sign | (uint32_t)r; /* subnormal: exponent field 0 (e == emin) */
    return sign | ((uint32_t)(e + f->bias) << f->mbits) | (uint32_t)(r - hidden);
}

static double ref_decode(uint32_t bits, const ref_format *f) {
    uint32_t sign_bit = 1u << (f->ebits + f->mbits);
    uint32_t field_max = (1u << f->ebits) - 1;
    uint32_t ef = (bits >> f->mbits) & field_max;
    uint32_t mant = bits & ((1u << f->mbits) - 1);
    int neg = (bits & sign_bit) != 0;
    if (f->special == REF_FNUZ && bits == sign_bit) return NAN;
    if (f->special == REF_IEEE && ef == field_max)
        return mant == 0 ? (neg ? -INFINITY : INFINITY) : (neg ? -NAN : NAN);
    if (f->special == REF_E4M3 && ef == field_max && mant == (1u << f->mbits) - 1)
        return neg ? -NAN : NAN;
    double mag = ef == 0 ? ldexp((double)mant, 1 - f->bias - f->mbits)
                         : ldexp((double)((1u << f->mbits) + mant), (int)ef - f->bias - f->mbits);
    return neg ? -mag : mag;
}

uint32_t kmux_ref_encode_bits(double v, kmux_dtype t, int saturate) {
    ref_format f;
    if (!ref_format_of(t, &f)) return 0;
    return ref_encode(v, &f, saturate);
}

double kmux_ref_decode_bits(uint32_t bits, kmux_dtype t) {
    ref_format f;
    if (!ref_format_of(t, &f)) return 0.0;
    return ref_decode(bits, &f);
}

double kmux_ref_max_finite(kmux_dtype t) {
    ref_format f;
    if (t == KMUX_F64) return DBL_MAX;
    if (!ref_format_of(t, &f)) return 0.0;
    return ldexp((double)((1u << f.mbits) + ref_mant_max(&f)), ref_emax(&f) - f.mbits);
}

int kmux_ref_is_float(kmux_dtype t) {
    return t != KMUX_I8 && t != KMUX_I32;
}

double kmux_ref_load(const void *p, kmux_dtype t, int64_t idx) {
    switch (t) {
    case KMUX_F64:
        return ((const double *)p)[idx];
    case KMUX_F32:
        return (double)((const float *)p)[idx];
    case KMUX_F16:
    case KMUX_BF16:
        return kmux_ref_decode_bits(((const uint16_t *)p)[idx], t);
    case KMUX_I8:
        return (double)((const int8_t *)p)[idx];
    case KMUX_I32:
        return (double)((const int32_t *)p)[idx];
    default:
        return kmux_ref_decode_bits(((const uint8_t *)p)[idx], t); /* fp8 */
    }
}

/* Integer targets: nearest even, clamped, NaN -> 0. */
static int64_t ref_to_int(double v, double lo, double hi) {
    if (isnan(v)) return 0;
    if (v <= lo) return (int64_t)lo;
    if (v >= hi) return (int64_t)hi;
    double r = ref_round_half_even(fabs(v));
    return (int64_t)(v < 0 ? -r : r);
}

void kmux_ref_store(void *p, kmux_dtype t, int64_t idx, double v, int saturate) {
    switch (t) {
    case KMUX_F64:
        if (saturate && isinf(v)) v = v < 0 ? -DBL_MAX : DBL_MAX;
        ((double *)p)[idx] = v;
        return;
    case KMUX_F32: {
        uint32_t bits = kmux_ref_encode_bits(v, t, saturate);
        memcpy((float *)p + idx, &bits, sizeof bits);
        return;
    }
    case KMUX_F16:
    case KMUX_BF16:
        ((uint16_t *)p)[idx] = (uint16_t)kmux_ref_encode_bits(v, t, saturate);
        return;
    case KMUX_I8:
        ((int8_t *)p)[idx] = (int8_t)ref_to_int(v, INT8_MIN, INT8_MAX);
        return;
    case KMUX_I32:
        ((int32_t *)p)[idx] = (int32_t)ref_to_int(v, INT32_MIN, INT32_MAX);
        return;
    default:
        ((uint8_t *)p)[idx] = (uint8_t)kmux_ref_encode_bits(v, t, saturate);
        return;
    }
}
