/* kb_values.c - dtype element access and the verification / timing fills. */
#include "kb_values.h"

#include <math.h>
#include <string.h>

#include "kmux_dtype_codec.h"

/* Sizes, kinds and codecs come from the shared dtype table and codec (dispatch/common). */
size_t kb_dtype_size(kmux_dtype t) {
    return kmux_dtype_bytes(t);
}

int kb_dtype_is_int(kmux_dtype t) {
    return kmux_dtype_is_int(t);
}

double kb_dtype_unit_roundoff(kmux_dtype t) {
    /* half the distance from 1 to the next value: 2^-(mbits + 1) */
    return kmux_dtype_is_float(t) ? kmux_dtype_desc_of(t).epsilon / 2 : 0.0;
}

int kb_dtype_int_range(kmux_dtype t) {
    switch (t) {
    case KMUX_F8_E4M3:
    case KMUX_F8_E4M3_FNUZ:
        return 16; /* 4 significant bits: every integer up to 16 */
    case KMUX_F8_E5M2:
    case KMUX_F8_E5M2_FNUZ:
        return 8; /* 3 significant bits: up to 8 */
    default:
        return 16;
    }
}

double kb_get(const void *buf, kmux_dtype t, int64_t i) {
    switch (t) {
    case KMUX_F64:
        return ((const double *)buf)[i];
    case KMUX_F32:
        return ((const float *)buf)[i];
    case KMUX_I32:
        return ((const int32_t *)buf)[i];
    case KMUX_I8:
        return ((const int8_t *)buf)[i];
    case KMUX_F16:
    case KMUX_BF16:
        return kmux_decode_f64(((const uint16_t *)buf)[i], t);
    default:
        return kmux_decode_f64(((const uint8_t *)buf)[i], t);
    }
}

static double clamp(double v, double lo, double hi) {
    return v < lo ? lo : v > hi ? hi : v;
}

void kb_set(void *buf, kmux_dtype t, int64_t i, double v) {
    switch (t) {
    case KMUX_F64:
        ((double *)buf)[i] = v;
        break;
    case KMUX_F32:
        ((float *)buf)[i] = (float)v;
        break;
    case KMUX_I32:
        ((int32_t *)buf)[i] = (int32_t)clamp(v, -2147483648.0, 2147483647.0);
        break;
    case KMUX_I8:
        ((int8_t *)buf)[i] = (int8_t)clamp(v, -128.0, 127.0);
        break;
    case KMUX_F16:
    case KMUX_BF16: /* rounded once from the double, not through f32 */
        ((uint16_t *)buf)[i] = (uint16_t)kmux_encode_f64(v, t, 0);
        break;
    default: /* fp8: saturating, as the fills want the largest finite value, never NaN */
        ((uint8_t *)buf)[i] = (uint8_t)kmux_encode_f64(v, t, 1);
        break;
    }
}

uint64_t kb_hash64(uint64_t x) {
    x += 0x9e3779b97f4a7c15ull;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}

/* Integer value of element i: see kb_fill_int. */
static int int_value(uint64_t h, int range, uint64_t threshold, int sparse) {
    if (sparse) {
        if ((h >> 11) >= threshold) return 0;
        int v = 1 + (int)((h & 0x3ff) % (uint64_t)range);
        return (h & 0x400) ? -v : v;
    }
    /* dense: never zero, so that a short reduction (K = 1, a 1x1 convolution with one input
     * channel) cannot produce mostly-zero outputs that would be mistrusted */
    int v = 1 + (int)((h & 0xffff) % (uint64_t)range);
    return (h & 0x10000) ? -v : v;
}

void kb_fill_int(void *buf, kmux_dtype t, int64_t n, int range, double density, uint64_t seed) {
    if (range < 1) range = 1;
    int sparse = density < 1.0;
    /* probability as a threshold on the top 53 bits of the hash */
    uint64_t threshold = (uint64_t)(density * 9007199254740992.0);
    uint64_t base = kb_hash64(seed);
    switch (t) {
    case KMUX_F32:
        for (int64_t i = 0; i < n; ++i)
            ((float *)buf)[i] =
                (float)int_value(kb_hash64(base + (uint64_t)i), range, threshold, sparse);
        break;
    case KMUX_I8:
        for (int64_t i = 0; i < n; ++i)
            ((int8_t *)buf)[i] =
                (int8_t)int_value(kb_hash64(base + (uint64_t)i), range, threshold, sparse);
        break;
    default:
        for (int64_t i = 0; i < n; ++i)
            kb_set(buf, t, i, int_value(kb_hash64(base + (uint64_t)i), range, threshold, sparse));
        break;
    }
}

void kb_fill_real(void *buf, kmux_dtype t, int64_t n, uint64_t seed) {
    uint64_t base = kb_hash64(seed ^ 0x5eedf00dull);
    if (t == KMUX_I8 || t == KMUX_I32) {
        for (int64_t i = 0; i < n; ++i)
            kb_set(buf, t, i, (double)((int)(kb_hash64(base + (uint64_t)i) % 17) - 8));
        return;
    }
    for (int64_t i = 0; i < n; ++i) {
        double u = (double)(kb_hash64(base + (uint64_t)i) >> 11) * (1.0 / 9007199254740992.0);
        double v = 2.0 * u - 1.0;
        if (t == KMUX_F32)
            ((float *)buf)[i] = (float)v;
        else
            kb_set(buf, t, i, v);
    }
}

void kb_fill_unwritten(void *buf, kmux_dtype t, int64_t n) {
    memset(buf, 0xff, (size_t)n * kb_dtype_size(t));
}
