/*
 * ref_dtype.c - exact decoding and once-rounded encoding of every kmux dtype (see ref_dtype.h).
 *
 * The narrow formats (f16, bf16, fp8) are THE shared codec's (dispatch/common/kmux_dtype_codec.h,
 * on the parameters of THE dtype table), rounded directly from the double, so ref, the CPU
 * kernels and the GPU kernels round alike. f32 is the same integer rounding routine with the
 * binary32 row of the table (its codes derived from the table's field widths), so that no result
 * depends on the floating-point environment.
 */
#include "ref_dtype.h"

#include <float.h>
#include <math.h>
#include <string.h>

#include "kmux_dtype_codec.h"

/* The binary32 row with the codes the codec needs (the table gives them for narrow formats
 * only): IEEE 754 largest finite, Inf and default quiet NaN, from the field widths. */
static kmux_dtype_desc f32_desc(void) {
    kmux_dtype_desc d = kmux_dtype_desc_of(KMUX_F32);
    const uint32_t exp_all = (1u << d.ebits) - 1u, man_all = (1u << d.mbits) - 1u;
    d.inf_code = exp_all << d.mbits;
    d.max_code = ((exp_all - 1u) << d.mbits) | man_all;
    d.nan_code = d.inf_code | (1u << (d.mbits - 1));
    return d;
}

/* r >= 0 rounded to an integer, ties to even, whatever the current rounding mode. */
static double ref_round_half_even(double r) {
    double fl = floor(r);
    double frac = r - fl; /* exact: r < 2^53 */
    if (frac > 0.5) return fl + 1.0;
    if (frac < 0.5) return fl;
    return fmod(fl, 2.0) == 0.0 ? fl : fl + 1.0;
}

uint32_t kmux_ref_encode_bits(double v, kmux_dtype t, int saturate) {
    if (kmux_dtype_is_narrow(t)) return kmux_encode_f64(v, t, saturate);
    if (t != KMUX_F32) return 0;
    const kmux_dtype_desc f = f32_desc();
    const uint64_t u = kmux_f64_bits(v);
    return kmux_codec_round_bits(u & ~(UINT64_C(1) << 63), (uint32_t)(u >> 63) << f.sign_shift, 52,
                                 1023, &f, saturate);
}

double kmux_ref_decode_bits(uint32_t bits, kmux_dtype t) {
    if (kmux_dtype_is_narrow(t)) return kmux_decode_f64(bits, t);
    if (t == KMUX_F32) return (double)kmux_f32_from_bits(bits);
    return 0.0;
}

double kmux_ref_max_finite(kmux_dtype t) {
    return kmux_dtype_is_float(t) ? kmux_dtype_desc_of(t).max_finite : 0.0;
}

int kmux_ref_is_float(kmux_dtype t) {
    return kmux_dtype_is_float(t);
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
