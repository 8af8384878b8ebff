/*
 * values.c - canaries, scalars and fills of the conformance suite. Element access is
 * tests/util's (tu_get / tu_set, on THE dtype table and codec of dispatch/common/): the suite
 * re-encodes no format.
 */
#include "conformance.h"

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
