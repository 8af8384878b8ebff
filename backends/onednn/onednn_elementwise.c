/*
 * onednn_elementwise.c - scalar element access with kmux's rounding rules, for the few passes
 * the plugin does by hand (alpha/beta of convolutions, epilogues oneDNN has no fast kernel
 * for; the integer finish is the shared CPU finish of dispatch/common).
 */
#include "onednn_internal.h"

#include <math.h>
#include <string.h>

#include "kmux_cpu_kernels.h"

double kmux_dnn_load(const void *p, kmux_dtype t, int64_t i) {
    switch (t) {
    case KMUX_F32:
        return (double)((const float *)p)[i];
    case KMUX_F16:
        return (double)kmux_cpu_f16_bits_to_f32(((const uint16_t *)p)[i]);
    case KMUX_BF16:
        return (double)kmux_cpu_bf16_bits_to_f32(((const uint16_t *)p)[i]);
    case KMUX_I32:
        return (double)((const int32_t *)p)[i];
    case KMUX_I8:
        return (double)((const int8_t *)p)[i];
    default:
        return 0.0;
    }
}

/* v rounded to f32 with "round to odd": when inexact, the last mantissa bit is set. Rounding
 * that result to a format with at least 2 fewer mantissa bits (f16, bf16) gives the same as
 * rounding v directly, so the value is rounded once, as kmux.h requires. */
static float round_to_odd_f32(double v) {
    float f = (float)v;
    if ((double)f == v || isnan(v) || isinf(f)) return f;
    uint32_t bits;
    memcpy(&bits, &f, sizeof bits);
    if (fabs((double)f) > fabs(v)) bits -= 1; /* rounded away from zero: truncate instead */
    bits |= 1u;
    memcpy(&f, &bits, sizeof f);
    return f;
}

void kmux_dnn_store(void *p, kmux_dtype t, int64_t i, double v) {
    switch (t) {
    case KMUX_F32:
        ((float *)p)[i] = (float)v;
        break;
    case KMUX_F16:
        ((uint16_t *)p)[i] = kmux_cpu_f32_to_f16_bits(round_to_odd_f32(v));
        break;
    case KMUX_BF16:
        ((uint16_t *)p)[i] = kmux_cpu_f32_to_bf16_bits(round_to_odd_f32(v));
        break;
    case KMUX_I32: {
        double r = isnan(v) ? 0.0 : nearbyint(v); /* default rounding mode: to nearest even */
        if (r > 2147483647.0) r = 2147483647.0;
        if (r < -2147483648.0) r = -2147483648.0;
        ((int32_t *)p)[i] = (int32_t)r;
        break;
    }
    default:
        break;
    }
}
