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

void kmux_dnn_store(void *p, kmux_dtype t, int64_t i, double v) {
    switch (t) {
    case KMUX_F32:
        ((float *)p)[i] = (float)v;
        break;
    case KMUX_F16:
        ((uint16_t *)p)[i] = kmux_cpu_f32_to_f16_bits(kmux_cpu_f64_to_f32_odd(v));
        break;
    case KMUX_BF16:
        ((uint16_t *)p)[i] = kmux_cpu_f32_to_bf16_bits(kmux_cpu_f64_to_f32_odd(v));
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
