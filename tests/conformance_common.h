/*
 * conformance_common.h - machinery of the cross-backend conformance suite
 * (tests/test_conformance_*.c). Header-only: every function is static inline, so a test file
 * that does not use one gets no warning.
 *
 * Scheme (as oneDNN benchdnn): each case is run on "ref" (the oracle) and on every other
 * available device with the same inputs, and the outputs are compared
 *  - exactly for integer-valued fills: small integers, one operand made sparse until every
 *    partial sum (any order) is exactly representable in the accumulator and the output type;
 *  - within a bound scaled by K and the unit roundoffs of the compute and output types for
 *    random fills (and for GELU, which is never exact).
 * A device "claims" a case when plan creation (or kmux_gemm_ex) returns KMUX_OK; it may answer
 * KMUX_ERR_UNSUPPORTED (with a message, without touching the output); any other status fails.
 *
 * Every tensor lives in a guarded image: CF_GUARD bytes of canary before and after it, and
 * canary in every element of its span that is not part of the tensor (the gaps between rows
 * when ldc > n, between matrices when stride_c is larger than a matrix). Canaries of inputs are
 * NaN (or a large integer), so reading them shows in the result; canaries of outputs must come
 * back byte for byte, and inputs must come back unchanged.
 *
 * An independent f64 model of GEMM in this file (products of exactly decoded values, so exact
 * for the integer fills) drives the sparsification, gives the per-element error bounds, and
 * checks "ref" itself: a disagreement between ref and the model is reported as such.
 *
 * Environment:
 *   KMUX_CONFORMANCE_FULL=1        larger sweep (bigger shapes, every implementation of a plan)
 *   KMUX_CONFORMANCE_DEVICES=a,b   only these device ids (ref always runs, as the oracle)
 *   KMUX_CONFORMANCE_CASE=N        only case number N of each test (as printed on failure)
 */
#ifndef KMUX_CONFORMANCE_COMMON_H
#define KMUX_CONFORMANCE_COMMON_H

#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kmux.h"
#include "test_util.h"

/* ============================================================================================
 * Options and failure reporting
 * ============================================================================================ */

#define CF_GUARD 256 /* bytes of canary before and after every tensor */
#define CF_MAX_DEVICES 32
#define CF_MAX_REPORTS 25 /* failures printed per test; the rest are only counted */
#define CF_MSG 4096

static inline int cf_full(void) {
    const char *e = getenv("KMUX_CONFORMANCE_FULL");
    return e && e[0] && strcmp(e, "0") != 0;
}

/** Case filter: -1 = every case, else only that case number. */
static inline long cf_only_case(void) {
    const char *e = getenv("KMUX_CONFORMANCE_CASE");
    return e && e[0] ? strtol(e, NULL, 10) : -1;
}

/** Implementations walked per plan with kmux_plan_next_impl. */
static inline int cf_max_impls(void) {
    return cf_full() ? 64 : 4;
}

typedef struct cf_stats {
    long failures; /* reported through cf_fail */
    long cases;    /* cases prepared */
    long runs;     /* (case, device, implementation) executions compared */
    long unsupported;
} cf_stats;

static cf_stats cf_stat;

/** Reports one failure (a full reproducer, built by the caller) without stopping the test. */
static inline void cf_fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static inline void cf_fail(const char *fmt, ...) {
    char msg[CF_MSG];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    cf_stat.failures++;
    if (cf_stat.failures <= CF_MAX_REPORTS)
        cr_expect(0, "%s", msg);
    else
        cr_expect(0, "%s", "(further failure, message suppressed)");
}

/** Prints the summary of a test to stderr (always) and the number of suppressed failures. */
static inline void cf_summary(const char *test) {
    fprintf(stderr,
            "conformance %s: %ld cases, %ld device runs compared, %ld unsupported answers, %ld "
            "failures%s\n",
            test, cf_stat.cases, cf_stat.runs, cf_stat.unsupported, cf_stat.failures,
            cf_stat.failures > CF_MAX_REPORTS ? " (only the first ones printed)" : "");
}

/* ============================================================================================
 * Data types: exact decoding, round-to-nearest-even encoding, precision figures
 * ============================================================================================ */

enum { CF_IEEE = 0, CF_OCP_E4M3 = 1, CF_FNUZ = 2 };

static inline const char *cf_dtype_str(kmux_dtype t) {
    return kmux_dtype_name(t);
}

static inline const char *cf_compute_str(kmux_compute_type t) {
    switch (t) {
    case KMUX_COMPUTE_F64:
        return "F64";
    case KMUX_COMPUTE_F32:
        return "F32";
    case KMUX_COMPUTE_F32_FAST_TF32:
        return "F32_FAST_TF32";
    case KMUX_COMPUTE_F32_FAST_BF16:
        return "F32_FAST_BF16";
    case KMUX_COMPUTE_F16:
        return "F16";
    case KMUX_COMPUTE_I32:
        return "I32";
    }
    return "?";
}

static inline size_t cf_dtype_size(kmux_dtype t) {
    switch (t) {
    case KMUX_F64:
        return 8;
    case KMUX_F32:
    case KMUX_I32:
        return 4;
    case KMUX_F16:
    case KMUX_BF16:
        return 2;
    default:
        return 1;
    }
}

static inline int cf_is_int(kmux_dtype t) {
    return t == KMUX_I8 || t == KMUX_I32;
}

static inline int cf_is_fp8(kmux_dtype t) {
    return t == KMUX_F8_E4M3 || t == KMUX_F8_E5M2 || t == KMUX_F8_E4M3_FNUZ ||
           t == KMUX_F8_E5M2_FNUZ;
}

/** Format of a narrow float: exponent bits, mantissa bits, bias, kind. 0 for other types. */
static inline int cf_minifloat(kmux_dtype t, int *eb, int *mb, int *bias, int *kind) {
    switch (t) {
    case KMUX_F16:
        *eb = 5, *mb = 10, *bias = 15, *kind = CF_IEEE;
        return 1;
    case KMUX_BF16:
        *eb = 8, *mb = 7, *bias = 127, *kind = CF_IEEE;
        return 1;
    case KMUX_F8_E4M3:
        *eb = 4, *mb = 3, *bias = 7, *kind = CF_OCP_E4M3;
        return 1;
    case KMUX_F8_E5M2:
        *eb = 5, *mb = 2, *bias = 15, *kind = CF_IEEE;
        return 1;
    case KMUX_F8_E4M3_FNUZ:
        *eb = 4, *mb = 3, *bias = 8, *kind = CF_FNUZ;
        return 1;
    case KMUX_F8_E5M2_FNUZ:
        *eb = 5, *mb = 2, *bias = 16, *kind = CF_FNUZ;
        return 1;
    default:
        return 0;
    }
}

/** Exact value of a narrow-float bit pattern (written from the format definitions). */
static inline double cf_mini_decode(unsigned bits, int eb, int mb, int bias, int kind) {
    unsigned sign = (bits >> (eb + mb)) & 1u;
    unsigned e = (bits >> mb) & ((1u << eb) - 1u);
    unsigned f = bits & ((1u << mb) - 1u);
    if (kind == CF_FNUZ && sign && e == 0 && f == 0) return NAN;
    if (kind == CF_IEEE && e == (1u << eb) - 1u) return f ? NAN : (sign ? -INFINITY : INFINITY);
    if (kind == CF_OCP_E4M3 && e == 15 && f == 7) return NAN;
    double v = e == 0 ? ldexp((double)f, 1 - bias - mb)
                      : ldexp((double)(f | (1u << mb)), (int)e - bias - mb);
    return sign ? -v : v;
}

/** Bit pattern of the largest finite value of a narrow float (sign bit clear). */
static inline unsigned cf_mini_max_bits(int eb, int mb, int kind) {
    if (kind == CF_IEEE) return ((((1u << eb) - 2u) << mb) | ((1u << mb) - 1u));
    if (kind == CF_OCP_E4M3) return 0x7Eu;
    return (1u << (eb + mb)) - 1u; /* FNUZ: every exponent is finite */
}

/** Rounds v to a narrow float, to nearest, ties to even; saturates beyond the largest finite
 *  value (the suite never relies on overflow). NaN gives the format's NaN. */
static inline unsigned cf_mini_encode(double v, int eb, int mb, int bias, int kind) {
    if (isnan(v)) {
        if (kind == CF_FNUZ) return 0x80u;
        if (kind == CF_OCP_E4M3) return 0x7Fu;
        return (((1u << eb) - 1u) << mb) | (1u << (mb - 1));
    }
    unsigned sign = signbit(v) ? 1u : 0u;
    double a = fabs(v);
    unsigned maxb = cf_mini_max_bits(eb, mb, kind);
    if (a == 0) return kind == CF_FNUZ ? 0u : sign << (eb + mb);
    unsigned mag;
    if (isinf(a)) {
        mag = kind == CF_IEEE ? ((1u << eb) - 1u) << mb : maxb;
    } else {
        int e2;
        (void)frexp(a, &e2);
        int E = e2 - 1;
        if (E < 1 - bias) E = 1 - bias;
        double q = nearbyint(ldexp(a, mb - E));
        if (q >= ldexp(1.0, mb + 1)) {
            q /= 2;
            E++;
        }
        if (q == 0) return kind == CF_FNUZ ? 0u : sign << (eb + mb);
        if (q < ldexp(1.0, mb))
            mag = (unsigned)q;
        else
            mag = ((unsigned)(E + bias) << mb) | ((unsigned)q - (1u << mb));
        if (mag > maxb) mag = maxb;
    }
    return (sign << (eb + mb)) | mag;
}

/** Exact value of element i of a typed array. */
static inline double cf_get(kmux_dtype t, const void *base, int64_t i) {
    const unsigned char *p = (const unsigned char *)base + (size_t)i * cf_dtype_size(t);
    int eb, mb, bias, kind;
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
    case KMUX_F16:
    case KMUX_BF16: {
        uint16_t v;
        memcpy(&v, p, 2);
        cf_minifloat(t, &eb, &mb, &bias, &kind);
        return cf_mini_decode(v, eb, mb, bias, kind);
    }
    default:
        if (!cf_minifloat(t, &eb, &mb, &bias, &kind)) return NAN;
        return cf_mini_decode(*p, eb, mb, bias, kind);
    }
}

/** Stores v, rounded to nearest even (integers: rounded and clamped), as element i. */
static inline void cf_set(kmux_dtype t, void *base, int64_t i, double v) {
    unsigned char *p = (unsigned char *)base + (size_t)i * cf_dtype_size(t);
    int eb, mb, bias, kind;
    switch (t) {
    case KMUX_F64:
        memcpy(p, &v, 8);
        return;
    case KMUX_F32: {
        float f = (float)v;
        memcpy(p, &f, 4);
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
    case KMUX_F16:
    case KMUX_BF16: {
        cf_minifloat(t, &eb, &mb, &bias, &kind);
        uint16_t x = (uint16_t)cf_mini_encode(v, eb, mb, bias, kind);
        memcpy(p, &x, 2);
        return;
    }
    default:
        if (cf_minifloat(t, &eb, &mb, &bias, &kind))
            *p = (unsigned char)cf_mini_encode(v, eb, mb, bias, kind);
        return;
    }
}

/** v rounded to dtype t and decoded back. */
static inline double cf_round_to(kmux_dtype t, double v) {
    unsigned char tmp[8];
    cf_set(t, tmp, 0, v);
    return cf_get(t, tmp, 0);
}

/** Canary of one element of type t: a quiet NaN with a payload for float types, an unlikely
 *  large value for integers. As an input it poisons any result that reads it. */
static inline void cf_poison(kmux_dtype t, void *p) {
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
    case KMUX_F8_E4M3:
        *q = 0x7F;
        return;
    case KMUX_F8_E5M2:
        *q = 0x7E;
        return;
    default:
        *q = 0x80;
        return; /* the FNUZ NaN */
    }
}

/** Unit roundoff of a storage type (0 for integers). */
static inline double cf_unit_roundoff(kmux_dtype t) {
    int eb, mb, bias, kind;
    if (t == KMUX_F64) return ldexp(1.0, -53);
    if (t == KMUX_F32) return ldexp(1.0, -24);
    if (cf_minifloat(t, &eb, &mb, &bias, &kind)) return ldexp(1.0, -(mb + 1));
    return 0;
}

/** Smallest positive (subnormal) value of a storage type (0 for integers). */
static inline double cf_min_subnormal(kmux_dtype t) {
    int eb, mb, bias, kind;
    if (t == KMUX_F64) return ldexp(1.0, -1074);
    if (t == KMUX_F32) return ldexp(1.0, -149);
    if (cf_minifloat(t, &eb, &mb, &bias, &kind)) return ldexp(1.0, 1 - bias - mb);
    return 0;
}

/** Largest M such that every integer in [-M, M] is representable in t. */
static inline double cf_exact_int_limit(kmux_dtype t) {
    int eb, mb, bias, kind;
    switch (t) {
    case KMUX_F64:
        return ldexp(1.0, 53);
    case KMUX_F32:
        return ldexp(1.0, 24);
    case KMUX_I32:
        return 2147483647.0;
    case KMUX_I8:
        return 127;
    default:
        if (cf_minifloat(t, &eb, &mb, &bias, &kind)) return ldexp(1.0, mb + 1);
        return 0;
    }
}

/** Unit roundoff of the accumulation of a compute type, including the rounding of the inputs
 *  that the FAST types allow (TF32: 10 mantissa bits; bf16x3: about 2^-20 per product). */
static inline double cf_compute_roundoff(kmux_compute_type c) {
    switch (c) {
    case KMUX_COMPUTE_F64:
        return ldexp(1.0, -53);
    case KMUX_COMPUTE_F32:
        return ldexp(1.0, -24);
    case KMUX_COMPUTE_F32_FAST_TF32:
        return ldexp(1.0, -10);
    case KMUX_COMPUTE_F32_FAST_BF16:
        return ldexp(1.0, -20);
    case KMUX_COMPUTE_F16:
        return ldexp(1.0, -11);
    case KMUX_COMPUTE_I32:
        return 0;
    }
    return 1;
}

/** Largest integer magnitude below which a compute type accumulates integers exactly. */
static inline double cf_compute_int_limit(kmux_compute_type c) {
    switch (c) {
    case KMUX_COMPUTE_F64:
        return ldexp(1.0, 53);
    case KMUX_COMPUTE_F16:
        return 2048;
    case KMUX_COMPUTE_I32:
        return 2147483647.0;
    default:
        return ldexp(1.0, 24);
    }
}

/** Whether an implementation's effective compute type honours the requested one: kmux never
 *  lowers precision silently (kmux.h), so a FAST or narrower type is only allowed when asked. */
static inline int cf_compute_ok(kmux_compute_type requested, kmux_compute_type effective) {
    switch (requested) {
    case KMUX_COMPUTE_F64:
        return effective == KMUX_COMPUTE_F64;
    case KMUX_COMPUTE_F32:
        return effective == KMUX_COMPUTE_F32 || effective == KMUX_COMPUTE_F64;
    case KMUX_COMPUTE_F32_FAST_TF32:
    case KMUX_COMPUTE_F32_FAST_BF16:
        return effective == requested || effective == KMUX_COMPUTE_F32 ||
               effective == KMUX_COMPUTE_F64;
    case KMUX_COMPUTE_F16:
        return effective == KMUX_COMPUTE_F16 || effective == KMUX_COMPUTE_F32 ||
               effective == KMUX_COMPUTE_F64;
    case KMUX_COMPUTE_I32:
        return effective == KMUX_COMPUTE_I32;
    }
    return 0;
}

/** Host scalar of the scale type of compute type c (kmux.h: double for F64, int32 for I32,
 *  float otherwise), holding v. */
typedef union cf_scalar {
    double d;
    float f;
    int32_t i;
} cf_scalar;

static inline cf_scalar cf_make_scalar(kmux_compute_type c, double v) {
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

/* Deterministic random numbers (tests/util xorshift). */
static inline int64_t cf_rand_int(uint64_t *st, int64_t lo, int64_t hi) {
    return lo + (int64_t)(tu_rand_u64(st) % (uint64_t)(hi - lo + 1));
}

static inline uint64_t cf_seed(uint64_t a, uint64_t b) {
    uint64_t x = a * 0x9E3779B97F4A7C15ull ^ (b + 0x632BE59BD9B4E019ull);
    x ^= x >> 31;
    x *= 0xBF58476D1CE4E5B9ull;
    x ^= x >> 29;
    return x | 1u;
}

/* ============================================================================================
 * Guarded tensors
 * ============================================================================================ */

/** A host image: CF_GUARD bytes | span elements | CF_GUARD bytes. Elements of the span that
 *  are not part of the tensor (mask 0) and both guards hold the type's canary. */
typedef struct cf_tensor {
    kmux_dtype type;
    size_t esz;
    size_t front;        /* bytes before the first element: CF_GUARD + misalignment */
    int64_t span;        /* elements between the first and one past the last addressed one */
    size_t bytes;        /* size of the image */
    unsigned char *img;  /* as uploaded */
    unsigned char *mask; /* span entries: 1 where the element belongs to the tensor */
} cf_tensor;

/** misalign: elements added to the front guard, so that the first element is only
 *  element-aligned (CF_GUARD keeps 256-byte alignment otherwise). */
static inline void cf_tensor_init_misaligned(cf_tensor *t, kmux_dtype type, int64_t span,
                                             int misalign) {
    memset(t, 0, sizeof *t);
    t->type = type;
    t->esz = cf_dtype_size(type);
    t->span = span;
    t->front = CF_GUARD + (size_t)misalign * t->esz;
    t->bytes = t->front + CF_GUARD + (size_t)span * t->esz;
    t->img = malloc(t->bytes);
    t->mask = calloc((size_t)span + 1, 1);
    cr_assert(t->img && t->mask, "out of host memory (%zu bytes)", t->bytes);
    for (size_t o = 0; o + t->esz <= t->bytes; o += t->esz)
        cf_poison(type, t->img + o);
}

static inline void cf_tensor_init(cf_tensor *t, kmux_dtype type, int64_t span) {
    cf_tensor_init_misaligned(t, type, span, 0);
}

static inline void cf_tensor_free(cf_tensor *t) {
    free(t->img);
    free(t->mask);
    memset(t, 0, sizeof *t);
}

/** Start of the elements in the host image. */
static inline void *cf_data(const cf_tensor *t) {
    return t->img + t->front;
}

static inline double cf_tget(const cf_tensor *t, int64_t e) {
    return cf_get(t->type, cf_data(t), e);
}

static inline void cf_tset(cf_tensor *t, int64_t e, double v) {
    cf_set(t->type, cf_data(t), e, v);
    t->mask[e] = 1;
}

/** Device copy of a tensor image. */
typedef struct cf_dbuf {
    kmux_device *dev;
    void *base;
    size_t bytes;
    size_t front;
} cf_dbuf;

static inline kmux_status cf_upload(kmux_device *dev, kmux_stream *st, const cf_tensor *t,
                                    cf_dbuf *d) {
    d->dev = dev;
    d->bytes = t->bytes;
    d->front = t->front;
    d->base = NULL;
    kmux_status s = kmux_malloc(dev, t->bytes, &d->base);
    if (s != KMUX_OK) return s;
    s = kmux_memcpy(st, d->base, t->img, t->bytes, KMUX_MEMCPY_HOST_TO_DEVICE);
    if (s == KMUX_OK) s = kmux_stream_synchronize(st);
    return s;
}

/** Re-uploads the image (an output before every execution). */
static inline kmux_status cf_reupload(kmux_stream *st, const cf_tensor *t, cf_dbuf *d) {
    kmux_status s = kmux_memcpy(st, d->base, t->img, t->bytes, KMUX_MEMCPY_HOST_TO_DEVICE);
    return s == KMUX_OK ? kmux_stream_synchronize(st) : s;
}

static inline kmux_status cf_download(kmux_stream *st, const cf_dbuf *d, unsigned char *out) {
    kmux_status s = kmux_memcpy(st, out, d->base, d->bytes, KMUX_MEMCPY_DEVICE_TO_HOST);
    return s == KMUX_OK ? kmux_stream_synchronize(st) : s;
}

static inline void cf_dfree(cf_dbuf *d) {
    if (d->base) kmux_free(d->dev, d->base);
    d->base = NULL;
}

/** Pointer to the first element of a device tensor. */
static inline void *cf_dptr(const cf_dbuf *d) {
    return d->base ? (unsigned char *)d->base + d->front : NULL;
}

/** First byte of got that differs from the uploaded image OUTSIDE the tensor (guards, gaps),
 *  as an offset into the image; -1 when there is none. */
static inline int64_t cf_foreign_write(const cf_tensor *t, const unsigned char *got) {
    for (size_t o = 0; o < t->bytes; o++) {
        if (got[o] == t->img[o]) continue;
        if (o >= t->front && o < t->front + (size_t)t->span * t->esz &&
            t->mask[(o - t->front) / t->esz])
            continue;
        return (int64_t)o;
    }
    return -1;
}

/** First byte of got that differs from the uploaded image anywhere; -1 when none. */
static inline int64_t cf_any_change(const cf_tensor *t, const unsigned char *got) {
    for (size_t o = 0; o < t->bytes; o++)
        if (got[o] != t->img[o]) return (int64_t)o;
    return -1;
}

/** Names a byte of an image for a message: "front guard byte -12", "back guard byte +4 after
 *  the last element", or "element E (gap)" with `where` naming the element. */
typedef void (*cf_locate_fn)(const void *ctx, int64_t elem, char *buf, size_t n);

static inline void cf_describe_byte(const cf_tensor *t, int64_t o, cf_locate_fn loc,
                                    const void *ctx, char *buf, size_t n) {
    int64_t front = (int64_t)t->front;
    int64_t end = front + t->span * (int64_t)t->esz;
    if (o < front) {
        snprintf(buf, n, "front guard, %lld bytes before the first element",
                 (long long)(front - o));
    } else if (o >= end) {
        snprintf(buf, n, "back guard, byte %lld after the end of the span (%lld elements)",
                 (long long)(o - end), (long long)t->span);
    } else {
        char where[160] = "";
        int64_t e = (o - front) / (int64_t)t->esz;
        if (loc) loc(ctx, e, where, sizeof where);
        snprintf(buf, n, "element %lld %s, which is not part of the tensor (gap)", (long long)e,
                 where);
    }
}

/* ============================================================================================
 * Comparison
 * ============================================================================================ */

/** How results are compared. Per element e, with pre[e] the exact value before the activation
 *  and bound[e] the sum of the magnitudes of all terms that produced it:
 *    exact (integer fills, no GELU): got == want (NaN == NaN, -0 == +0);
 *    else acc = inexact ? bound * (k + 4) * u_acc : 0
 *         tol = acc + u_out * (2 |want| + acc) + min_out   (+ GELU slack, below). */
typedef struct cf_tol {
    int inexact;  /* random inputs: accumulation error possible */
    int gelu;     /* GELU epilogue: never exact */
    double u_acc; /* unit roundoff of the accumulation */
    double u_out; /* unit roundoff of the output type */
    double min_out;
    double k; /* length of the longest sum */
} cf_tol;

static inline double cf_tol_of(const cf_tol *ts, double want, double pre, double bound) {
    if (!ts->inexact && !ts->gelu) return 0;
    double acc = ts->inexact ? bound * (ts->k + 4) * ts->u_acc : 0;
    double t = acc + ts->u_out * (2 * fabs(want) + acc) + ts->min_out;
    if (ts->gelu) {
        double u = ts->u_out > ldexp(1.0, -24) ? ts->u_out : ldexp(1.0, -24);
        t = 1.25 * t + 8 * u * (1 + fabs(pre));
    }
    return t;
}

static inline int cf_same(double got, double want, double tol) {
    if (isnan(want) || isnan(got)) return isnan(want) && isnan(got);
    if (isinf(want) || isinf(got)) return got == want;
    return tol == 0 ? got == want : fabs(got - want) <= tol;
}

typedef struct cf_cmp {
    int64_t bad, checked;
    int64_t first; /* element of the first mismatch, -1 */
    double got, want, tol;
} cf_cmp;

/** Compares the elements of got (an image of t) with want (span doubles). */
static inline void cf_compare(const cf_tensor *t, const unsigned char *got_img, const double *want,
                              const double *pre, const double *bound, const cf_tol *ts, cf_cmp *r) {
    memset(r, 0, sizeof *r);
    r->first = -1;
    for (int64_t e = 0; e < t->span; e++) {
        if (!t->mask[e]) continue;
        double g = cf_get(t->type, got_img + t->front, e);
        double tol = cf_tol_of(ts, want[e], pre ? pre[e] : want[e], bound ? bound[e] : 0);
        r->checked++;
        if (cf_same(g, want[e], tol)) continue;
        if (r->bad++ == 0) {
            r->first = e;
            r->got = g;
            r->want = want[e];
            r->tol = tol;
        }
    }
}

/* ============================================================================================
 * Devices
 * ============================================================================================ */

typedef struct cf_env {
    kmux_context *ctx;
    kmux_device *ref;
    kmux_stream *ref_stream;
    int ndev; /* devices under test (every available one except ref) */
    kmux_device *dev[CF_MAX_DEVICES];
    kmux_stream *stream[CF_MAX_DEVICES];
    const char *id[CF_MAX_DEVICES];
} cf_env;

static inline int cf_device_selected(const char *id) {
    const char *sel = getenv("KMUX_CONFORMANCE_DEVICES");
    if (!sel || !sel[0]) return 1;
    size_t n = strlen(id);
    for (const char *p = sel; *p;) {
        const char *end = strchr(p, ',');
        size_t len = end ? (size_t)(end - p) : strlen(p);
        if (len == n && strncmp(p, id, n) == 0) return 1;
        if (!end) break;
        p = end + 1;
    }
    return 0;
}

static inline void cf_env_init(cf_env *env) {
    memset(env, 0, sizeof *env);
    env->ctx = tu_context();
    TU_OK(kmux_device_find(env->ctx, "ref", &env->ref));
    TU_OK(kmux_stream_create(env->ref, &env->ref_stream));
    int n = 0;
    TU_OK(kmux_device_count(env->ctx, &n));
    for (int i = 0; i < n && env->ndev < CF_MAX_DEVICES; i++) {
        kmux_device *d = NULL;
        TU_OK(kmux_device_get(env->ctx, i, &d));
        const char *id = kmux_device_id(d);
        cr_assert(id != NULL, "kmux_device_id(device %d) is NULL", i);
        if (d == env->ref || strcmp(id, "ref") == 0 || !cf_device_selected(id)) continue;
        env->dev[env->ndev] = d;
        env->id[env->ndev] = id;
        TU_OK(kmux_stream_create(d, &env->stream[env->ndev]));
        env->ndev++;
    }
    if (env->ndev == 0)
        fprintf(stderr, "conformance: no device besides ref; only ref is checked against the "
                        "test's model\n");
}

static inline void cf_env_fini(cf_env *env) {
    for (int i = 0; i < env->ndev; i++)
        kmux_stream_destroy(env->stream[i]);
    kmux_stream_destroy(env->ref_stream);
    kmux_context_destroy(env->ctx);
}

/* ============================================================================================
 * GEMM cases
 * ============================================================================================ */

enum { CF_ENTRY_PLAN = 0, CF_ENTRY_GEMM_EX = 1, CF_ENTRY_BATCHED_EX = 2 };
enum { CF_FILL_EXACT = 0, CF_FILL_RANDOM = 1 };

/** One dtype combination of the table of kmux.h. */
typedef struct cf_combo {
    kmux_dtype a, b, c;
    kmux_compute_type compute;
} cf_combo;

/** Every combination of the GEMM table of kmux.h (a and b of one fp8 family may differ). */
static inline int cf_gemm_combos(cf_combo *out, int max) {
    static const kmux_dtype ocp[2] = {KMUX_F8_E4M3, KMUX_F8_E5M2};
    static const kmux_dtype fnuz[2] = {KMUX_F8_E4M3_FNUZ, KMUX_F8_E5M2_FNUZ};
    static const kmux_dtype fp8_out[3] = {KMUX_F32, KMUX_F16, KMUX_BF16};
    cf_combo all[40];
    int n = 0;
    all[n++] = (cf_combo){KMUX_F64, KMUX_F64, KMUX_F64, KMUX_COMPUTE_F64};
    all[n++] = (cf_combo){KMUX_F32, KMUX_F32, KMUX_F32, KMUX_COMPUTE_F32};
    all[n++] = (cf_combo){KMUX_F32, KMUX_F32, KMUX_F32, KMUX_COMPUTE_F32_FAST_TF32};
    all[n++] = (cf_combo){KMUX_F32, KMUX_F32, KMUX_F32, KMUX_COMPUTE_F32_FAST_BF16};
    all[n++] = (cf_combo){KMUX_F16, KMUX_F16, KMUX_F16, KMUX_COMPUTE_F32};
    all[n++] = (cf_combo){KMUX_F16, KMUX_F16, KMUX_F32, KMUX_COMPUTE_F32};
    all[n++] = (cf_combo){KMUX_F16, KMUX_F16, KMUX_F16, KMUX_COMPUTE_F16};
    all[n++] = (cf_combo){KMUX_BF16, KMUX_BF16, KMUX_BF16, KMUX_COMPUTE_F32};
    all[n++] = (cf_combo){KMUX_BF16, KMUX_BF16, KMUX_F32, KMUX_COMPUTE_F32};
    for (int fam = 0; fam < 2; fam++)
        for (int i = 0; i < 2; i++)
            for (int j = 0; j < 2; j++)
                for (int o = 0; o < 3; o++) {
                    const kmux_dtype *f = fam ? fnuz : ocp;
                    all[n++] = (cf_combo){f[i], f[j], fp8_out[o], KMUX_COMPUTE_F32};
                }
    all[n++] = (cf_combo){KMUX_I8, KMUX_I8, KMUX_I32, KMUX_COMPUTE_I32};
    if (n > max) n = max;
    memcpy(out, all, (size_t)n * sizeof *out);
    return n;
}

typedef struct cf_gemm_case {
    int entry; /* CF_ENTRY_* */
    kmux_order order;
    kmux_transpose transa, transb;
    int64_t m, n, k;
    int64_t lda, ldb, ldc;
    int64_t batch; /* 1 for a plain GEMM */
    int64_t stride_a, stride_b, stride_c;
    kmux_dtype a_type, b_type, c_type;
    kmux_compute_type compute;
    unsigned epilogue;
    kmux_dtype bias_type;
    double alpha, beta;
    int fill;     /* CF_FILL_* */
    int c_nan;    /* C holds NaN (poison) instead of values: only with beta == 0 */
    int ab_nan;   /* A and B hold NaN (poison): only when they must not be read */
    int null_ab;  /* A and B passed as NULL: only when they must not be read */
    int scales;   /* fp8 scales a = 2, b = 0.5, d = 0.5 and amax_d */
    int misalign; /* A, B, C start this many elements after a 256-byte boundary */
    uint64_t seed;
} cf_gemm_case;

/** Rows x cols of matrix X as stored, given op(X) = r x c. */
static inline void cf_stored(kmux_transpose t, int64_t r, int64_t c, int64_t *sr, int64_t *sc) {
    *sr = t == KMUX_NO_TRANS ? r : c;
    *sc = t == KMUX_NO_TRANS ? c : r;
}

static inline int64_t cf_min_ld(kmux_order o, kmux_transpose t, int64_t r, int64_t c) {
    int64_t sr, sc;
    cf_stored(t, r, c, &sr, &sc);
    int64_t v = o == KMUX_ROW_MAJOR ? sc : sr;
    return v < 1 ? 1 : v;
}

/** Elements spanned by one stored matrix (0 when it is empty). */
static inline int64_t cf_mat_span(kmux_order o, kmux_transpose t, int64_t r, int64_t c,
                                  int64_t ld) {
    int64_t sr, sc;
    cf_stored(t, r, c, &sr, &sc);
    if (sr == 0 || sc == 0) return 0;
    return o == KMUX_ROW_MAJOR ? (sr - 1) * ld + sc : (sc - 1) * ld + sr;
}

/** Offset of element (i, j) of op(X). */
static inline int64_t cf_mat_off(kmux_order o, kmux_transpose t, int64_t i, int64_t j, int64_t ld) {
    int64_t si = t == KMUX_NO_TRANS ? i : j, sj = t == KMUX_NO_TRANS ? j : i;
    return o == KMUX_ROW_MAJOR ? si * ld + sj : si + sj * ld;
}

static inline int64_t cf_batch_span(int64_t batch, int64_t stride, int64_t mat) {
    if (batch == 0 || mat == 0) return 0;
    return (batch - 1) * stride + mat;
}

/** Sets minimal leading dimensions plus pad, and strides (packed matrices plus spad). */
static inline void cf_gemm_layout(cf_gemm_case *c, int64_t pad, int64_t spad) {
    c->lda = cf_min_ld(c->order, c->transa, c->m, c->k) + pad;
    c->ldb = cf_min_ld(c->order, c->transb, c->k, c->n) + pad;
    c->ldc = cf_min_ld(c->order, KMUX_NO_TRANS, c->m, c->n) + pad;
    if (c->batch > 1) {
        c->stride_a = cf_mat_span(c->order, c->transa, c->m, c->k, c->lda) + spad;
        c->stride_b = cf_mat_span(c->order, c->transb, c->k, c->n, c->ldb) + spad;
        c->stride_c = cf_mat_span(c->order, KMUX_NO_TRANS, c->m, c->n, c->ldc) + spad;
    } else {
        c->stride_a = c->stride_b = c->stride_c = 0;
    }
}

static inline void cf_epilogue_str(unsigned e, kmux_dtype bias_type, char *buf, size_t n) {
    if (e == KMUX_EPILOGUE_NONE) {
        snprintf(buf, n, "NONE");
        return;
    }
    snprintf(buf, n, "%s%s%s%s%s%s", (e & KMUX_EPILOGUE_BIAS) ? "BIAS(" : "",
             (e & KMUX_EPILOGUE_BIAS) ? cf_dtype_str(bias_type) : "",
             (e & KMUX_EPILOGUE_BIAS) ? ")" : "", (e & KMUX_EPILOGUE_BIAS) && (e & ~1u) ? "|" : "",
             (e & KMUX_EPILOGUE_RELU) ? "RELU" : "", (e & KMUX_EPILOGUE_GELU) ? "GELU" : "");
}

/** One-line description of a case: everything needed to rebuild it. */
static inline void cf_gemm_describe(const cf_gemm_case *c, char *buf, size_t n) {
    static const char *entries[] = {"kmux_matmul_plan_create+execute", "kmux_gemm_ex",
                                    "kmux_gemm_strided_batched_ex"};
    char epi[64];
    cf_epilogue_str(c->epilogue, c->bias_type, epi, sizeof epi);
    snprintf(buf, n,
             "%s %s transa=%c transb=%c m=%lld n=%lld k=%lld lda=%lld ldb=%lld ldc=%lld "
             "batch=%lld stride_a=%lld stride_b=%lld stride_c=%lld a=%s b=%s c=%s compute=%s "
             "epilogue=%s alpha=%g beta=%g%s%s%s%s%s fill=%s seed=0x%llx",
             entries[c->entry], c->order == KMUX_ROW_MAJOR ? "ROW_MAJOR" : "COL_MAJOR",
             c->transa == KMUX_TRANS ? 'T' : 'N', c->transb == KMUX_TRANS ? 'T' : 'N',
             (long long)c->m, (long long)c->n, (long long)c->k, (long long)c->lda,
             (long long)c->ldb, (long long)c->ldc, (long long)c->batch, (long long)c->stride_a,
             (long long)c->stride_b, (long long)c->stride_c, cf_dtype_str(c->a_type),
             cf_dtype_str(c->b_type), cf_dtype_str(c->c_type), cf_compute_str(c->compute), epi,
             c->alpha, c->beta, c->c_nan ? (cf_is_int(c->c_type) ? " C=garbage" : " C=NaN") : "",
             c->ab_nan ? (cf_is_int(c->a_type) ? " A,B=garbage" : " A,B=NaN") : "",
             c->null_ab ? " A,B=NULL" : "",
             c->scales ? " a_scale=2 b_scale=0.5 d_scale=0.5 amax_d" : "",
             c->misalign ? " A,B,C one element past a 256-byte boundary" : "",
             c->fill == CF_FILL_EXACT ? "exact-integers" : "random", (unsigned long long)c->seed);
}

/** Locates element e of C for messages: "(batch b, row i, col j)". */
static inline void cf_gemm_locate_c(const void *ctx, int64_t e, char *buf, size_t n) {
    const cf_gemm_case *c = (const cf_gemm_case *)ctx;
    int64_t b = c->stride_c > 0 ? e / c->stride_c : 0;
    int64_t r = e - b * c->stride_c;
    int64_t i = c->order == KMUX_ROW_MAJOR ? r / c->ldc : r % c->ldc;
    int64_t j = c->order == KMUX_ROW_MAJOR ? r % c->ldc : r / c->ldc;
    snprintf(buf, n, "(batch %lld, row i=%lld, col j=%lld)", (long long)b, (long long)i,
             (long long)j);
}

/** Inputs, canaries and the model's answer of one case. */
typedef struct cf_gemm_data {
    cf_tensor a, b, c, bias;
    double *pre;   /* c.span: alpha*sa*sb*AB + beta*C + bias (NaN outside C) */
    double *bound; /* c.span: sum of |terms| of pre */
    double *model; /* c.span: d_scale * act(pre), the exact answer before rounding */
    double amax;   /* max |act(pre)| */
    float scale_a, scale_b, scale_d;
    int degenerate; /* the fill gave a mostly-zero answer: the case would prove little */
} cf_gemm_data;

static inline double cf_gelu(double x) {
    return 0.5 * x * (1.0 + tanh(0.7978845608028654 * (x + 0.044715 * x * x * x)));
}

static inline int cf_gemm_reads_ab(const cf_gemm_case *c) {
    return c->k > 0 && c->alpha != 0;
}

/** The f64 model: pre, bound, model and amax from the images of d. */
static inline void cf_gemm_model(const cf_gemm_case *c, cf_gemm_data *d) {
    double sab = c->scales ? (double)d->scale_a * d->scale_b : 1.0;
    double sd = c->scales ? d->scale_d : 1.0;
    const void *A = cf_data(&d->a), *B = cf_data(&d->b);
    d->amax = 0;
    for (int64_t e = 0; e < d->c.span; e++)
        d->pre[e] = d->bound[e] = d->model[e] = NAN;
    for (int64_t bt = 0; bt < c->batch; bt++)
        for (int64_t i = 0; i < c->m; i++)
            for (int64_t j = 0; j < c->n; j++) {
                double dot = 0, absdot = 0;
                if (cf_gemm_reads_ab(c))
                    for (int64_t l = 0; l < c->k; l++) {
                        double x = cf_get(c->a_type, A,
                                          bt * c->stride_a +
                                              cf_mat_off(c->order, c->transa, i, l, c->lda));
                        double y = cf_get(c->b_type, B,
                                          bt * c->stride_b +
                                              cf_mat_off(c->order, c->transb, l, j, c->ldb));
                        dot += x * y;
                        absdot += fabs(x * y);
                    }
                int64_t ec = bt * c->stride_c + cf_mat_off(c->order, KMUX_NO_TRANS, i, j, c->ldc);
                double cin = c->beta != 0 ? cf_tget(&d->c, ec) : 0;
                double bias = (c->epilogue & KMUX_EPILOGUE_BIAS) ? cf_tget(&d->bias, j) : 0;
                double pre = c->alpha * sab * dot + c->beta * cin + bias;
                double act = pre;
                if (c->epilogue & KMUX_EPILOGUE_RELU) act = pre > 0 ? pre : 0;
                if (c->epilogue & KMUX_EPILOGUE_GELU) act = cf_gelu(pre);
                d->pre[ec] = pre;
                d->bound[ec] = fabs(c->alpha * sab) * absdot + fabs(c->beta * cin) + fabs(bias);
                d->model[ec] = sd * act;
                if (fabs(act) > d->amax) d->amax = fabs(act);
            }
}

/** Fills the operands of a case (see the file comment), sparsifying B for exact fills until
 *  every partial sum is representable, and runs the model. */
static inline void cf_gemm_prepare(const cf_gemm_case *c, cf_gemm_data *d) {
    memset(d, 0, sizeof *d);
    uint64_t st = c->seed;
    int64_t sa =
        cf_batch_span(c->batch, c->stride_a, cf_mat_span(c->order, c->transa, c->m, c->k, c->lda));
    int64_t sb =
        cf_batch_span(c->batch, c->stride_b, cf_mat_span(c->order, c->transb, c->k, c->n, c->ldb));
    int64_t sc = cf_batch_span(c->batch, c->stride_c,
                               cf_mat_span(c->order, KMUX_NO_TRANS, c->m, c->n, c->ldc));
    cf_tensor_init_misaligned(&d->a, c->a_type, sa, c->misalign);
    cf_tensor_init_misaligned(&d->b, c->b_type, sb, c->misalign);
    cf_tensor_init_misaligned(&d->c, c->c_type, sc, c->misalign);
    cf_tensor_init(&d->bias, c->bias_type,
                   (c->epilogue & KMUX_EPILOGUE_BIAS) ? (c->n > 0 ? c->n : 0) : 0);
    d->pre = malloc(((size_t)sc + 1) * sizeof(double));
    d->bound = malloc(((size_t)sc + 1) * sizeof(double));
    d->model = malloc(((size_t)sc + 1) * sizeof(double));
    cr_assert(d->pre && d->bound && d->model, "out of host memory");
    d->scale_a = 2.0f;
    d->scale_b = 0.5f;
    d->scale_d = 0.5f;

    cr_assert(c->compute != KMUX_COMPUTE_I32 ||
                  (c->alpha == nearbyint(c->alpha) && c->beta == nearbyint(c->beta)),
              "test bug: integer GEMM with a non-integer alpha or beta");
    /* integers are always exact; their "random" fill uses the whole i8 range (where signed /
       unsigned compensation bugs show) */
    int exact = c->fill == CF_FILL_EXACT || cf_is_int(c->a_type);
    int64_t lo = -3, hi = 3;
    if (cf_is_int(c->a_type) && c->fill == CF_FILL_RANDOM) lo = -128, hi = 127;
    /* A: every element of op(A), dense; B: op(B), sparsified below when needed. Broadcast
       operands (stride 0) are written once per batch with the same positions. */
    for (int64_t bt = 0; bt < (c->stride_a ? c->batch : 1); bt++)
        for (int64_t i = 0; i < c->m; i++)
            for (int64_t l = 0; l < c->k; l++) {
                int64_t e = bt * c->stride_a + cf_mat_off(c->order, c->transa, i, l, c->lda);
                if (c->ab_nan) {
                    d->a.mask[e] = 1; /* keep the poison */
                    continue;
                }
                cf_tset(&d->a, e,
                        exact ? (double)cf_rand_int(&st, lo, hi) : tu_rand_uniform(&st, -1, 1));
            }
    for (int64_t bt = 0; bt < (c->stride_b ? c->batch : 1); bt++)
        for (int64_t l = 0; l < c->k; l++)
            for (int64_t j = 0; j < c->n; j++) {
                int64_t e = bt * c->stride_b + cf_mat_off(c->order, c->transb, l, j, c->ldb);
                if (c->ab_nan) {
                    d->b.mask[e] = 1;
                    continue;
                }
                cf_tset(&d->b, e,
                        exact ? (double)cf_rand_int(&st, lo, hi) : tu_rand_uniform(&st, -1, 1));
            }
    for (int64_t bt = 0; bt < c->batch; bt++)
        for (int64_t i = 0; i < c->m; i++)
            for (int64_t j = 0; j < c->n; j++) {
                int64_t e = bt * c->stride_c + cf_mat_off(c->order, KMUX_NO_TRANS, i, j, c->ldc);
                if (c->c_nan) {
                    d->c.mask[e] = 1;
                    continue;
                }
                cf_tset(&d->c, e,
                        exact ? (double)cf_rand_int(&st, -3, 3) : tu_rand_uniform(&st, -1, 1));
            }
    for (int64_t j = 0; j < d->bias.span; j++)
        cf_tset(&d->bias, j, exact ? (double)cf_rand_int(&st, -3, 3) : tu_rand_uniform(&st, -1, 1));

    /* Exact fills: the largest magnitude every partial sum and the output may reach. */
    double limit = cf_exact_int_limit(c->c_type);
    double lim2 = cf_compute_int_limit(c->compute);
    if (lim2 < limit) limit = lim2;
    if (c->scales) limit /= 4;
    if (c->alpha != nearbyint(c->alpha) || c->beta != nearbyint(c->beta)) limit /= 2;
    for (int iter = 0;; iter++) {
        cf_gemm_model(c, d);
        if (!exact) break;
        double worst = 0;
        for (int64_t e = 0; e < sc; e++)
            if (d->c.mask[e] && d->bound[e] > worst) worst = d->bound[e];
        if (worst <= limit) break;
        cr_assert(iter < 64, "test bug: cannot make the fill exact (worst %g, limit %g)", worst,
                  limit);
        /* zero about half of the nonzero elements of B */
        for (int64_t e = 0; e < sb; e++)
            if (d->b.mask[e] && cf_tget(&d->b, e) != 0 && (tu_rand_u64(&st) & 1))
                cf_set(c->b_type, cf_data(&d->b), e, 0.0);
    }
    /* A mostly-zero answer proves little (benchdnn "mistrusted"): the test's own sanity. */
    int64_t nz = 0, cnt = 0;
    for (int64_t e = 0; e < sc; e++)
        if (d->c.mask[e]) {
            cnt++;
            nz += d->model[e] != 0;
        }
    d->degenerate =
        cnt >= 16 && cf_gemm_reads_ab(c) && !(c->epilogue & KMUX_EPILOGUE_RELU) && nz * 4 < cnt;
}

static inline void cf_gemm_free(cf_gemm_data *d) {
    cf_tensor_free(&d->a);
    cf_tensor_free(&d->b);
    cf_tensor_free(&d->c);
    cf_tensor_free(&d->bias);
    free(d->pre);
    free(d->bound);
    free(d->model);
}

/** Tolerance of a device compared with ref (acc = the case's compute type). */
static inline cf_tol cf_gemm_tol(const cf_gemm_case *c, int against_model) {
    cf_tol t;
    t.inexact = c->fill == CF_FILL_RANDOM && !cf_is_int(c->a_type);
    t.gelu = (c->epilogue & KMUX_EPILOGUE_GELU) != 0;
    /* ref accumulates in f64 from exact inputs: only its final rounding differs from the model */
    t.u_acc = against_model ? ldexp(1.0, -52) : cf_compute_roundoff(c->compute);
    t.u_out = cf_unit_roundoff(c->c_type);
    t.min_out = cf_min_subnormal(c->c_type);
    if (c->scales) t.min_out *= 2;
    t.k = (double)c->k;
    return t;
}

/** Runs case c on dev and compares C (and amax_d) with want / want_amax. Returns 1 when the
 *  device claims the case and ran it, 0 when it answered KMUX_ERR_UNSUPPORTED, -1 when a failure
 *  was reported. out (c.span doubles, may be NULL) receives the decoded C of the first
 *  implementation, out_amax its amax_d. tag names the case in messages ("case 12 of ..."). */
static inline int cf_gemm_run(kmux_device *dev, kmux_stream *st, const cf_gemm_case *c,
                              const cf_gemm_data *d, const double *want, double want_amax,
                              const cf_tol *ts, double *out, double *out_amax, const char *tag) {
    const char *id = kmux_device_id(dev);
    char desc[1024];
    cf_gemm_describe(c, desc, sizeof desc);
    int result = 1;
    kmux_status s;
    cf_dbuf da = {0}, db = {0}, dc = {0}, dbias = {0}, dsc = {0};
    kmux_plan *plan = NULL;
    unsigned char *got = malloc(d->c.bytes + 1);
    unsigned char *gin =
        malloc((d->a.bytes > d->b.bytes ? d->a.bytes : d->b.bytes) + d->bias.bytes + 1);
    cr_assert(got && gin, "out of host memory");
    float scal[4] = {d->scale_a, d->scale_b, d->scale_d, -1.0f};
    cf_tensor tsc;
    cf_tensor_init(&tsc, KMUX_F32, 4);
    for (int i = 0; i < 4; i++)
        cf_tset(&tsc, i, scal[i]);

#define CF_GEMM_DEV(call)                                                                          \
    do {                                                                                           \
        s = (call);                                                                                \
        if (s != KMUX_OK) {                                                                        \
            cf_fail("%s on %s: %s -> %s: %s\n  case: %s", tag, id, #call, kmux_status_str(s),      \
                    kmux_last_error(), desc);                                                      \
            result = -1;                                                                           \
            goto done;                                                                             \
        }                                                                                          \
    } while (0)

    CF_GEMM_DEV(cf_upload(dev, st, &d->a, &da));
    CF_GEMM_DEV(cf_upload(dev, st, &d->b, &db));
    CF_GEMM_DEV(cf_upload(dev, st, &d->c, &dc));
    CF_GEMM_DEV(cf_upload(dev, st, &d->bias, &dbias));
    CF_GEMM_DEV(cf_upload(dev, st, &tsc, &dsc));
    const void *pa = c->null_ab ? NULL : cf_dptr(&da);
    const void *pb = c->null_ab ? NULL : cf_dptr(&db);
    cf_scalar alpha = cf_make_scalar(c->compute, c->alpha);
    cf_scalar beta = cf_make_scalar(c->compute, c->beta);

    int nimpl = 0;
    for (;;) {
        char impl[160];
        snprintf(impl, sizeof impl, "%s",
                 c->entry == CF_ENTRY_GEMM_EX      ? "(kmux_gemm_ex)"
                 : c->entry == CF_ENTRY_BATCHED_EX ? "(kmux_gemm_strided_batched_ex)"
                                                   : "?");
        CF_GEMM_DEV(cf_reupload(st, &d->c, &dc));
        if (c->entry == CF_ENTRY_PLAN) {
            if (!plan) {
                kmux_matmul_desc md = KMUX_MATMUL_DESC_INIT;
                kmux_plan_prefs prefs = KMUX_PLAN_PREFS_INIT;
                md.order = c->order;
                md.transa = c->transa;
                md.transb = c->transb;
                md.m = c->m, md.n = c->n, md.k = c->k;
                md.a_type = c->a_type, md.b_type = c->b_type, md.c_type = c->c_type;
                md.lda = c->lda, md.ldb = c->ldb, md.ldc = c->ldc;
                md.batch_count = c->batch;
                md.stride_a = c->stride_a, md.stride_b = c->stride_b, md.stride_c = c->stride_c;
                md.compute_type = c->compute;
                md.epilogue = c->epilogue;
                md.bias_type = c->bias_type;
                s = kmux_matmul_plan_create(dev, &md, &prefs, &plan);
                if (s == KMUX_ERR_UNSUPPORTED) {
                    if (kmux_last_error()[0] == '\0') {
                        cf_fail("%s on %s: kmux_matmul_plan_create -> KMUX_ERR_UNSUPPORTED with "
                                "an empty kmux_last_error()\n  case: %s",
                                tag, id, desc);
                        result = -1;
                    } else {
                        result = 0;
                    }
                    plan = NULL;
                    goto done;
                }
                if (s != KMUX_OK) {
                    cf_fail("%s on %s: kmux_matmul_plan_create -> %s (only KMUX_OK or "
                            "KMUX_ERR_UNSUPPORTED are acceptable for a valid case): %s\n  case: %s",
                            tag, id, kmux_status_str(s), kmux_last_error(), desc);
                    result = -1;
                    plan = NULL;
                    goto done;
                }
            }
            kmux_plan_info info;
            memset(&info, 0, sizeof info);
            CF_GEMM_DEV(kmux_plan_info_get(plan, &info));
            snprintf(impl, sizeof impl, "%s", info.impl ? info.impl : "(NULL impl)");
            if (!info.impl || !info.impl[0]) {
                cf_fail("%s on %s: kmux_plan_info_get gives an empty implementation name\n  "
                        "case: %s",
                        tag, id, desc);
                result = -1;
            }
            if (!cf_compute_ok(c->compute, info.effective_compute)) {
                cf_fail("%s on %s impl %s: effective compute %s for requested %s (precision "
                        "lowered without being asked)\n  case: %s",
                        tag, id, impl, cf_compute_str(info.effective_compute),
                        cf_compute_str(c->compute), desc);
                result = -1;
            }
            kmux_matmul_args args = KMUX_MATMUL_ARGS_INIT;
            args.alpha = &alpha;
            args.beta = &beta;
            args.A = pa;
            args.B = pb;
            args.C = cf_dptr(&dc);
            args.bias = (c->epilogue & KMUX_EPILOGUE_BIAS) ? cf_dptr(&dbias) : NULL;
            if (c->scales) {
                float *sp = (float *)cf_dptr(&dsc);
                args.a_scale = sp;
                args.b_scale = sp + 1;
                args.d_scale = sp + 2;
                args.amax_d = sp + 3;
                CF_GEMM_DEV(cf_reupload(st, &tsc, &dsc));
            }
            s = kmux_matmul_execute(plan, st, &args);
            if (s == KMUX_OK) s = kmux_stream_synchronize(st);
            if (s != KMUX_OK) {
                cf_fail("%s on %s impl %s: kmux_matmul_execute -> %s: %s\n  case: %s", tag, id,
                        impl, kmux_status_str(s), kmux_last_error(), desc);
                result = -1;
                goto done;
            }
        } else {
            if (c->entry == CF_ENTRY_GEMM_EX)
                s = kmux_gemm_ex(st, c->order, c->transa, c->transb, c->m, c->n, c->k, &alpha, pa,
                                 c->a_type, c->lda, pb, c->b_type, c->ldb, &beta, cf_dptr(&dc),
                                 c->c_type, c->ldc, c->compute);
            else
                s = kmux_gemm_strided_batched_ex(
                    st, c->order, c->transa, c->transb, c->m, c->n, c->k, &alpha, pa, c->a_type,
                    c->lda, c->stride_a, pb, c->b_type, c->ldb, c->stride_b, &beta, cf_dptr(&dc),
                    c->c_type, c->ldc, c->stride_c, c->batch, c->compute);
            char err[512];
            snprintf(err, sizeof err, "%s", kmux_last_error());
            if (s == KMUX_OK) s = kmux_stream_synchronize(st);
            if (s == KMUX_ERR_UNSUPPORTED) {
                result = 0;
                if (!err[0]) {
                    cf_fail("%s on %s: %s -> KMUX_ERR_UNSUPPORTED with an empty "
                            "kmux_last_error()\n  case: %s",
                            tag, id, impl, desc);
                    result = -1;
                }
                CF_GEMM_DEV(cf_download(st, &dc, got));
                int64_t o = cf_any_change(&d->c, got);
                if (o >= 0) {
                    char where[256];
                    cf_describe_byte(&d->c, o, cf_gemm_locate_c, c, where, sizeof where);
                    cf_fail("%s on %s: %s answered KMUX_ERR_UNSUPPORTED but modified C (byte "
                            "%lld of the image: %s)\n  case: %s",
                            tag, id, impl, (long long)o - (long long)d->c.front, where, desc);
                    result = -1;
                }
                goto done;
            }
            if (s != KMUX_OK) {
                cf_fail("%s on %s: %s -> %s (only KMUX_OK or KMUX_ERR_UNSUPPORTED are acceptable "
                        "for a valid case): %s\n  case: %s",
                        tag, id, impl, kmux_status_str(s), err, desc);
                result = -1;
                goto done;
            }
        }

        /* ---- check this execution ---- */
        CF_GEMM_DEV(cf_download(st, &dc, got));
        cf_stat.runs++;
        int64_t o = cf_foreign_write(&d->c, got);
        if (o >= 0) {
            char where[256];
            cf_describe_byte(&d->c, o, cf_gemm_locate_c, c, where, sizeof where);
            cf_fail("%s on %s impl %s: write outside the output C: %s\n  case: %s", tag, id, impl,
                    where, desc);
            result = -1;
        }
        cf_tol tsl = *ts;
        cf_cmp r;
        cf_compare(&d->c, got, want, d->pre, d->bound, &tsl, &r);
        if (r.bad) {
            char where[160];
            cf_gemm_locate_c(c, r.first, where, sizeof where);
            cf_fail("%s on %s impl %s: %lld of %lld elements of C differ; first at element "
                    "%lld %s: got %.9g want %.9g (|diff| %.3g, tolerance %.3g%s)\n  case: %s",
                    tag, id, impl, (long long)r.bad, (long long)r.checked, (long long)r.first,
                    where, r.got, r.want, fabs(r.got - r.want), r.tol, r.tol == 0 ? ", exact" : "",
                    desc);
            result = -1;
        }
        double amax = NAN;
        if (c->scales) {
            float am;
            unsigned char sbuf[2 * CF_GUARD + 16];
            CF_GEMM_DEV(cf_download(st, &dsc, sbuf));
            memcpy(&am, sbuf + CF_GUARD + 12, 4);
            amax = am;
            double tol = cf_tol_of(ts, want_amax, want_amax, want_amax * (c->k + 1));
            if (!cf_same(amax, want_amax, tol)) {
                cf_fail("%s on %s impl %s: amax_d got %.9g want %.9g (tolerance %.3g)\n  case: %s",
                        tag, id, impl, amax, want_amax, tol, desc);
                result = -1;
            }
        }
        if (nimpl == 0) {
            if (out)
                for (int64_t e = 0; e < d->c.span; e++)
                    out[e] = d->c.mask[e] ? cf_get(c->c_type, got + d->c.front, e) : NAN;
            if (out_amax) *out_amax = amax;
        }
        nimpl++;
        if (c->entry != CF_ENTRY_PLAN || nimpl >= cf_max_impls()) break;
        s = kmux_plan_next_impl(plan);
        if (s == KMUX_ERR_LAST_IMPL) break;
        if (s != KMUX_OK) {
            cf_fail("%s on %s: kmux_plan_next_impl -> %s (want KMUX_OK or KMUX_ERR_LAST_IMPL): "
                    "%s\n  case: %s",
                    tag, id, kmux_status_str(s), kmux_last_error(), desc);
            result = -1;
            break;
        }
    }

    /* inputs must come back unchanged, canaries included */
    {
        const cf_tensor *ins[3] = {&d->a, &d->b, &d->bias};
        const cf_dbuf *dins[3] = {&da, &db, &dbias};
        static const char *names[3] = {"A", "B", "bias"};
        for (int i = 0; i < 3; i++) {
            CF_GEMM_DEV(cf_download(st, dins[i], gin));
            int64_t o = cf_any_change(ins[i], gin);
            if (o >= 0) {
                cf_fail("%s on %s: the input %s was modified (byte %lld of its image, relative "
                        "to its first element)\n  case: %s",
                        tag, id, names[i], (long long)o - (long long)ins[i]->front, desc);
                result = -1;
            }
        }
    }
#undef CF_GEMM_DEV
done:
    if (plan) kmux_plan_destroy(plan);
    cf_dfree(&da);
    cf_dfree(&db);
    cf_dfree(&dc);
    cf_dfree(&dbias);
    cf_dfree(&dsc);
    cf_tensor_free(&tsc);
    free(got);
    free(gin);
    return result;
}

/** The whole check of one case: model, ref against the model, every device against ref (or
 *  against the model when ref itself failed, so that a ref bug does not hide a device's). */
static inline void cf_gemm_check_case(cf_env *env, const cf_gemm_case *c, const char *tag) {
    cf_gemm_data d;
    char desc[1024], rtag[256];
    cf_gemm_describe(c, desc, sizeof desc);
    cf_gemm_prepare(c, &d);
    cf_stat.cases++;
    if (d.degenerate)
        cf_fail("%s: test bug: the fill gives a mostly-zero answer\n  case: %s", tag, desc);
    double *ref_out = malloc(((size_t)d.c.span + 1) * sizeof(double));
    cr_assert(ref_out, "out of host memory");
    double ref_amax = NAN;
    cf_tol tm = cf_gemm_tol(c, 1);
    snprintf(rtag, sizeof rtag, "%s [ref checked against the test's independent f64 model]", tag);
    int r = cf_gemm_run(env->ref, env->ref_stream, c, &d, d.model, d.amax, &tm, ref_out, &ref_amax,
                        rtag);
    if (r == 0)
        cf_fail("%s: ref answered KMUX_ERR_UNSUPPORTED (%s): the oracle must run every valid "
                "case\n  case: %s",
                tag, kmux_last_error(), desc);
    cf_tol td = cf_gemm_tol(c, 0);
    const double *want = r == 1 ? ref_out : d.model;
    double want_amax = r == 1 ? ref_amax : d.amax;
    char dtag[256];
    snprintf(dtag, sizeof dtag, "%s%s", tag,
             r == 1 ? "" : " [compared with the model, ref having failed]");
    for (int i = 0; i < env->ndev; i++) {
        int rr =
            cf_gemm_run(env->dev[i], env->stream[i], c, &d, want, want_amax, &td, NULL, NULL, dtag);
        if (rr == 0) cf_stat.unsupported++;
    }
    free(ref_out);
    cf_gemm_free(&d);
}

#endif
