/*
 * values.c - element access, canaries, scalars and fills of the conformance suite. Element
 * sizes, special values and the narrow formats' encoding are THE dtype table's and THE codec's
 * (dispatch/common/kmux_dtype_desc.h, kmux_dtype_codec.h): the suite re-encodes no format.
 */
#include "conformance.h"

#include "kmux_dtype_codec.h"

double cf_get(kmux_dtype t, const void *base, int64_t i) {
    const kmux_dtype_desc f = kmux_dtype_desc_of(t);
    const unsigned char *p = (const unsigned char *)base + (size_t)i * f.bytes;
    switch (t) {
    case KMUX_F64: {
        double v;
        memcpy(&v, p, 8);
        return v;
    }
    case KMUX_F32: {
        float v;
        memcpy(&v, p, 4);
        return v;
    }
    case KMUX_I32: {
        int32_t v;
        memcpy(&v, p, 4);
        return v;
    }
    case KMUX_I8:
        return (double)*(const int8_t *)p;
    default:
        break;
    }
    if (!kmux_dtype_is_narrow(t)) return NAN;
    uint16_t code = 0;
    if (f.bytes == 2)
        memcpy(&code, p, 2);
    else
        code = *p;
    return kmux_decode_f64(code, t);
}

void cf_set(kmux_dtype t, void *base, int64_t i, double v) {
    const kmux_dtype_desc f = kmux_dtype_desc_of(t);
    unsigned char *p = (unsigned char *)base + (size_t)i * f.bytes;
    switch (t) {
    case KMUX_F64:
        memcpy(p, &v, 8);
        return;
    case KMUX_F32: {
        float x = (float)v;
        memcpy(p, &x, 4);
        return;
    }
    case KMUX_I32: {
        double r = nearbyint(v);
        int32_t x = r > 2147483647.0 ? INT32_MAX : r < -2147483648.0 ? INT32_MIN : (int32_t)r;
        memcpy(p, &x, 4);
        return;
    }
    case KMUX_I8: {
        double r = nearbyint(v);
        *(int8_t *)p = (int8_t)(r > 127 ? 127 : r < -128 ? -128 : r);
        return;
    }
    default:
        break;
    }
    if (!kmux_dtype_is_narrow(t)) return;
    /* finite values saturate; an infinity stays one where the format has Inf */
    int saturate = !(isinf(v) && (f.flags & KMUX_DTYPE_HAS_INF));
    uint32_t code = kmux_encode_f64(v, t, saturate);
    if (f.bytes == 2) {
        uint16_t x = (uint16_t)code;
        memcpy(p, &x, 2);
    } else {
        *p = (unsigned char)code;
    }
}

void cf_poison(kmux_dtype t, void *p) {
    /* NaNs with a payload where the format has payloads, so that a canary read into a result
     * is told from a NaN the computation made; the fp8 formats have one NaN (or two). */
    static const unsigned char f64[8] = {0xA5, 0xA5, 0xA5, 0xA5, 0xA5, 0xA5, 0xF8, 0x7F};
    static const unsigned char f32[4] = {0xA5, 0xA5, 0xE5, 0x7F};
    static const unsigned char i32[4] = {0xA5, 0xA5, 0xA5, 0x5A};
    static const unsigned char f16[2] = {0x5A, 0x7E};
    static const unsigned char bf16[2] = {0xE5, 0x7F};
    unsigned char *q = (unsigned char *)p;
    switch (t) {
    case KMUX_F64:
        memcpy(q, f64, 8);
        return;
    case KMUX_F32:
        memcpy(q, f32, 4);
        return;
    case KMUX_I32:
        memcpy(q, i32, 4);
        return;
    case KMUX_F16:
        memcpy(q, f16, 2);
        return;
    case KMUX_BF16:
        memcpy(q, bf16, 2);
        return;
    case KMUX_I8:
        *q = 0x5A;
        return;
    default:
        *q = (unsigned char)kmux_dtype_desc_of(t).nan_code; /* fp8 */
        return;
    }
}

int64_t cf_rand_int(uint64_t *st, int64_t lo, int64_t hi) {
    return lo + (int64_t)(tu_rand_u64(st) % (uint64_t)(hi - lo + 1));
}

uint64_t cf_seed(uint64_t a, uint64_t b) {
    uint64_t x = a * 0x9E3779B97F4A7C15ull ^ (b + 0x632BE59BD9B4E019ull);
    x ^= x >> 31;
    x *= 0xBF58476D1CE4E5B9ull;
    x ^= x >> 29;
    return x | 1u;
}

double cf_fill_value(uint64_t *st, int exact, int64_t lo, int64_t hi) {
    return exact ? (double)cf_rand_int(st, lo, hi) : tu_rand_uniform(st, -1, 1);
}

cf_scalar cf_make_scalar(kmux_compute_type c, double v) {
    cf_scalar s;
    memset(&s, 0, sizeof s);
    if (c == KMUX_COMPUTE_F64)
        s.d = v;
    else if (c == KMUX_COMPUTE_I32)
        s.i = (int32_t)v;
    else
        s.f = (float)v;
    return s;
}
