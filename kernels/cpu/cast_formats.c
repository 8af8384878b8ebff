/*
 * cast_formats.c - the scalar single-value conversions of kmux_cpu_kernels.h, the fp8 decoding
 * tables, f64 -> f32 and the scaled scalar narrowing: thin users of THE codec
 * (dispatch/common/kmux_dtype_codec.h: integer arithmetic only, so results do not depend on the
 * SSE control register; IEEE 754-2019 roundTiesToEven, overflow decided after rounding).
 */
#include <float.h>
#include <math.h>
#include <pthread.h>
#include <string.h>

#include "cast_internal.h"
#include "kmux_cpu_kernels.h"

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
            fp8_tables[t][c] = kmux_decode_f32(c, types[t]);
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

uint16_t kmux_cpu_f32_to_f16_bits(float x) {
    return (uint16_t)kmux_encode_f32(x, KMUX_F16, 0);
}

uint16_t kmux_cpu_f32_to_bf16_bits(float x) {
    return (uint16_t)kmux_encode_f32(x, KMUX_BF16, 0);
}

uint8_t kmux_cpu_f32_to_fp8_bits(float x, kmux_dtype fp8_type, int saturate) {
    return kmux_dtype_is_fp8(fp8_type) ? (uint8_t)kmux_encode_f32(x, fp8_type, saturate) : 0;
}

float kmux_cpu_f16_bits_to_f32(uint16_t h) {
    return kmux_decode_f32(h, KMUX_F16);
}

float kmux_cpu_bf16_bits_to_f32(uint16_t b) {
    return kmux_decode_f32(b, KMUX_BF16);
}

float kmux_cpu_fp8_bits_to_f32(uint8_t v, kmux_dtype fp8_type) {
    const float *t = kmux_cast_fp8_table(fp8_type);
    return t ? t[v] : kmux_f32_from_bits(0x7fc00000u);
}

void kmux_cast_scaled_scalar(int64_t n, const float *src, void *dst, kmux_dtype dst_type,
                             int saturate, float scale) {
    const kmux_dtype_desc f = kmux_dtype_desc_of(dst_type);
    const double s = (double)scale;
    for (int64_t i = 0; i < n; i++) {
        uint64_t u = kmux_f64_bits((double)src[i] * s); /* exact: 24 x 24 bits fit in 53 */
        uint32_t code = kmux_codec_round_bits(
            u & ~(UINT64_C(1) << 63), (uint32_t)(u >> 63) << f.sign_shift, 52, 1023, &f, saturate);
        if (f.bytes == 2)
            ((uint16_t *)dst)[i] = (uint16_t)code;
        else
            ((uint8_t *)dst)[i] = (uint8_t)code;
    }
}

float kmux_cpu_f64_to_f32_odd(double v) {
    const float f = (float)v;
    if ((double)f == v || isnan(v) || isinf(f)) return f;
    uint32_t bits = kmux_f32_bits(f);
    if (fabs((double)f) > fabs(v)) bits -= 1; /* rounded away from zero: truncate instead */
    return kmux_f32_from_bits(bits | 1u);
}
