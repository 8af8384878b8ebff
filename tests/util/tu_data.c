/*
 * tu_data.c - typed host data for the tests: element access on THE dtype table and codec
 * (dispatch/common/), integer fills, copies and the bitwise comparison with ref.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kmux_dtype_codec.h"
#include "test_util.h"

double tu_get(kmux_dtype t, const void *base, int64_t i) {
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

void tu_set(kmux_dtype t, void *base, int64_t i, double v) {
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
    int saturate = !(isinf(v) && (f.flags & KMUX_DTYPE_HAS_INF));
    uint32_t code = kmux_encode_f64(v, t, saturate);
    if (f.bytes == 2) {
        uint16_t x = (uint16_t)code;
        memcpy(p, &x, 2);
    } else {
        *p = (unsigned char)code;
    }
}

int tu_is_nan_code(uint32_t c, kmux_dtype t) {
    switch (t) {
    case KMUX_F16: /* IEEE 754 §3.4: exponent all ones, significand not 0 */
        return (c & 0x7c00) == 0x7c00 && (c & 0x03ff);
    case KMUX_BF16:
        return (c & 0x7f80) == 0x7f80 && (c & 0x007f);
    case KMUX_F8_E4M3: /* OFP8 v1.0 Table 1: S.1111.111 only */
        return (c & 0x7f) == 0x7f;
    case KMUX_F8_E5M2: /* IEEE-like */
        return (c & 0x7c) == 0x7c && (c & 0x03);
    case KMUX_F8_E4M3_FNUZ: /* the one NaN 0x80 */
    case KMUX_F8_E5M2_FNUZ:
        return c == 0x80;
    default:
        return 0;
    }
}

void *tu_fill_ints(kmux_dtype t, int64_t n, int range, tu_zeros zeros, uint64_t *seed) {
    void *p = malloc((size_t)(n > 0 ? n : 1) * kmux_dtype_bytes(t));
    cr_assert_not_null(p);
    for (int64_t i = 0; i < n; i++) {
        double v = (double)((int64_t)(tu_rand_u64(seed) % (uint64_t)(2 * range + 1)) - range);
        if (zeros == TU_ZERO_3_OF_4 && tu_rand_u64(seed) % 4 != 0) v = 0.0;
        if (zeros == TU_ZERO_ODD && (i % 2)) v = 0.0;
        tu_set(t, p, i, v);
    }
    return p;
}

void tu_fill_value(kmux_dtype t, void *buf, int64_t n, double v) {
    for (int64_t i = 0; i < n; i++)
        tu_set(t, buf, i, v);
}

size_t tu_copy_prefix(const char *from, const char *to, size_t bytes) {
    FILE *in = fopen(from, "rb"), *out = fopen(to, "wb");
    cr_assert(in && out, "%s -> %s", from, to);
    size_t done = 0;
    char buf[65536];
    while (done < bytes) {
        size_t want = bytes - done < sizeof buf ? bytes - done : sizeof buf;
        size_t n = fread(buf, 1, want, in);
        if (n == 0) break;
        cr_assert_eq(fwrite(buf, 1, n, out), n);
        done += n;
    }
    fclose(in);
    fclose(out);
    return done;
}

int tu_count_lines(const char *path, const char *needle) {
    FILE *f = fopen(path, "r");
    if (!f) return 0;
    char line[8192];
    int n = 0;
    while (fgets(line, sizeof line, f)) {
        size_t len = strlen(line);
        if (len + 1 == sizeof line && line[len - 1] != '\n') continue; /* the rest comes next */
        n += !needle || strstr(line, needle) != NULL;
    }
    fclose(f);
    return n;
}

void *tu_dup(const void *p, size_t bytes) {
    void *q = malloc(bytes > 0 ? bytes : 1);
    cr_assert_not_null(q);
    memcpy(q, p, bytes);
    return q;
}

void tu_expect_equal(const char *what, const char *dev, const void *got, const void *want,
                     kmux_dtype t, int64_t n, double rel_tol, int nonzero_div) {
    const size_t es = kmux_dtype_bytes(t);
    int64_t nonzero = 0;
    for (int64_t i = 0; i < n; i++) {
        double g = tu_get(t, got, i), w = tu_get(t, want, i);
        int same = rel_tol > 0 ? fabs(g - w) <= rel_tol * (1.0 + fabs(w))
                               : memcmp((const char *)got + (size_t)i * es,
                                        (const char *)want + (size_t)i * es, es) == 0;
        cr_assert(same, "%s: element %lld: %s %.9g, ref %.9g", what, (long long)i, dev, g, w);
        cr_assert(!isnan(g), "%s: element %lld is NaN", what, (long long)i);
        nonzero += w != 0.0;
    }
    cr_assert(nonzero * nonzero_div >= n,
              "%s: only %lld of %lld outputs are nonzero: result mistrusted", what,
              (long long)nonzero, (long long)n);
}
