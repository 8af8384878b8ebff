/*
 * test_cast_exhaustive.c - kmux_cast over every bit pattern of f16, bf16 and the four fp8 formats
 * and over large random sets of f32 and f64 patterns, on every available device and on the CPU
 * kernels directly, compared bit for bit with the reference device "ref" (two NaNs compare
 * equal whatever their payloads). Independent of ref, every finite pattern must survive a
 * round trip through f32 and f64 unchanged.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kmux_cpu_kernels.h"
#include "test_util.h"

static const kmux_dtype NARROW[6] = {KMUX_F16,     KMUX_BF16,         KMUX_F8_E4M3,
                                     KMUX_F8_E5M2, KMUX_F8_E4M3_FNUZ, KMUX_F8_E5M2_FNUZ};
static const kmux_dtype ALL[8] = {KMUX_F64,     KMUX_F32,     KMUX_F16,          KMUX_BF16,
                                  KMUX_F8_E4M3, KMUX_F8_E5M2, KMUX_F8_E4M3_FNUZ, KMUX_F8_E5M2_FNUZ};

/* NaN test on element i of an array of type t (OCP OFP8 v1.0 Table 1, IEEE 754 §3.4, FNUZ). */
static int is_nan_at(const void *p, kmux_dtype t, int64_t i) {
    switch (t) {
    case KMUX_F64:
        return isnan(((const double *)p)[i]);
    case KMUX_F32:
        return isnan(((const float *)p)[i]);
    case KMUX_F16:
    case KMUX_BF16:
        return tu_is_nan_code(((const uint16_t *)p)[i], t);
    default:
        return tu_is_nan_code(((const uint8_t *)p)[i], t);
    }
}

/* kmux_cast on device id ("kernels": kmux_cpu_cast directly, 2 threads) with host buffers;
 * amax (host, may be NULL) receives the amax output. */
static void run_cast(kmux_context *ctx, const char *id, int64_t n, const void *src, kmux_dtype st,
                     void *dst, kmux_dtype dt, int saturate, const float *scale, float *amax) {
    if (strcmp(id, "kernels") == 0) {
        cr_assert_eq(kmux_cpu_cast(n, src, st, dst, dt, saturate, scale, amax, 2), KMUX_OK);
        return;
    }
    kmux_device *dev = tu_device(ctx, id);
    cr_assert(dev);
    tu_cast_on_device(dev, n, src, st, dst, dt, saturate, scale, amax);
}

/* Number of elements where a and b (type t) differ, NaN == NaN; reports the first few. */
static int64_t count_diffs(const char *what, const void *a, const void *b, kmux_dtype t, int64_t n,
                           const void *src, kmux_dtype st) {
    int64_t bad = 0;
    size_t es = kmux_dtype_size(t);
    for (int64_t i = 0; i < n; i++) {
        int na = is_nan_at(a, t, i), nb = is_nan_at(b, t, i);
        if (na && nb) continue;
        if (na == nb && memcmp((const char *)a + i * es, (const char *)b + i * es, es) == 0)
            continue;
        if (bad++ < 4) {
            uint64_t va = 0, vb = 0, vs = 0;
            memcpy(&va, (const char *)a + i * es, es);
            memcpy(&vb, (const char *)b + i * es, es);
            memcpy(&vs, (const char *)src + i * kmux_dtype_size(st), kmux_dtype_size(st));
            cr_log_error("%s: element %lld (%s 0x%llx): got 0x%llx, ref 0x%llx", what, (long long)i,
                         kmux_dtype_name(st), (unsigned long long)vs, (unsigned long long)va,
                         (unsigned long long)vb);
        }
    }
    return bad;
}

/* Casts src (n elements of st) to dt on every target and on ref; compares outputs and amax. */
static void compare_all_targets(kmux_context *ctx, int64_t n, const void *src, kmux_dtype st,
                                kmux_dtype dt, int saturate, const float *scale) {
    const char **ids = tu_device_ids(ctx);
    void *want = malloc((size_t)n * kmux_dtype_size(dt)),
         *got = malloc((size_t)n * kmux_dtype_size(dt));
    cr_assert(want && got);
    float amax_want = -1, amax_got = -1;
    run_cast(ctx, "ref", n, src, st, want, dt, saturate, scale, &amax_want);
    for (int d = -1; d == -1 || ids[d]; d++) {
        const char *id = d < 0 ? "kernels" : ids[d];
        if (strcmp(id, "ref") == 0) continue;
        char what[160];
        snprintf(what, sizeof what, "%s: %s -> %s sat=%d scale=%a", id, kmux_dtype_name(st),
                 kmux_dtype_name(dt), saturate, scale ? (double)*scale : 1.0);
        memset(got, 0x5a, (size_t)n * kmux_dtype_size(dt));
        run_cast(ctx, id, n, src, st, got, dt, saturate, scale, &amax_got);
        int64_t bad = count_diffs(what, got, want, dt, n, src, st);
        cr_expect_eq(bad, 0, "%s: %lld of %lld elements differ from ref", what, (long long)bad,
                     (long long)n);
        cr_expect(amax_got == amax_want, "%s: amax %a, ref %a", what, (double)amax_got,
                  (double)amax_want);
    }
    free(want);
    free(got);
}

/* Every pattern of a narrow type as a host array. */
static void *all_patterns(kmux_dtype t, int64_t *n) {
    *n = kmux_dtype_size(t) == 2 ? 65536 : 256;
    void *p = malloc((size_t)*n * kmux_dtype_size(t));
    cr_assert(p);
    for (int64_t i = 0; i < *n; i++) {
        if (kmux_dtype_size(t) == 2)
            ((uint16_t *)p)[i] = (uint16_t)i;
        else
            ((uint8_t *)p)[i] = (uint8_t)i;
    }
    return p;
}

/* Every pattern decoded to f32 and f64 and re-encoded, both saturate modes: equal to ref, and
 * finite patterns come back unchanged (NaN stays NaN; saturate may change only Inf). */
Test(cast_exhaustive, decode_reencode_every_pattern) {
    kmux_context *ctx = tu_context();
    const char **ids = tu_device_ids(ctx);
    for (int k = 0; k < 6; k++) {
        kmux_dtype t = NARROW[k];
        int64_t n;
        void *pat = all_patterns(t, &n);
        for (int wide = 0; wide < 2; wide++) {
            kmux_dtype w = wide ? KMUX_F64 : KMUX_F32;
            compare_all_targets(ctx, n, pat, t, w, 0, NULL);
            void *dec = malloc((size_t)n * kmux_dtype_size(w)),
                 *back = malloc((size_t)n * kmux_dtype_size(t));
            cr_assert(dec && back);
            for (int d = -1; d == -1 || ids[d]; d++) {
                const char *id = d < 0 ? "kernels" : ids[d];
                run_cast(ctx, id, n, pat, t, dec, w, 0, NULL, NULL);
                for (int sat = 0; sat < 2; sat++) {
                    run_cast(ctx, id, n, dec, w, back, t, sat, NULL, NULL);
                    int64_t bad = 0;
                    for (int64_t i = 0; i < n; i++) {
                        int was_nan = is_nan_at(pat, t, i);
                        int inf =
                            w == KMUX_F32 ? isinf(((float *)dec)[i]) : isinf(((double *)dec)[i]);
                        if (was_nan ? is_nan_at(back, t, i)
                                    : (inf && sat) || memcmp((char *)back + i * kmux_dtype_size(t),
                                                             (char *)pat + i * kmux_dtype_size(t),
                                                             kmux_dtype_size(t)) == 0)
                            continue;
                        if (bad++ < 4)
                            cr_log_error("%s: %s pattern %lld -> %s -> back differs", id,
                                         kmux_dtype_name(t), (long long)i, kmux_dtype_name(w));
                    }
                    cr_expect_eq(bad, 0, "%s: %s round trip through %s (sat=%d): %lld bad", id,
                                 kmux_dtype_name(t), kmux_dtype_name(w), sat, (long long)bad);
                }
            }
            /* re-encoding compared with ref (covers saturate of Inf) */
            run_cast(ctx, "ref", n, pat, t, dec, w, 0, NULL, NULL);
            for (int sat = 0; sat < 2; sat++)
                compare_all_targets(ctx, n, dec, w, t, sat, NULL);
            free(dec);
            free(back);
        }
        free(pat);
    }
    TU_OK(kmux_context_destroy(ctx));
}

/* Every narrow pattern to every other floating type (the pairs "through f32"). */
Test(cast_exhaustive, every_pattern_to_every_type) {
    kmux_context *ctx = tu_context();
    for (int k = 0; k < 6; k++) {
        int64_t n;
        void *pat = all_patterns(NARROW[k], &n);
        for (int j = 0; j < 8; j++)
            for (int sat = 0; sat < 2; sat++)
                compare_all_targets(ctx, n, pat, NARROW[k], ALL[j], sat, NULL);
        free(pat);
    }
    TU_OK(kmux_context_destroy(ctx));
}

/* Random f32 bit patterns: one third uniform over all 2^32 patterns, the rest with exponents
 * near the narrow formats' ranges and low mantissa bits cleared at random, so that exact ties
 * and midpoints are frequent. */
static float *random_f32(int64_t n, uint64_t seed) {
    float *x = malloc((size_t)n * sizeof *x);
    cr_assert(x);
    uint64_t s = seed;
    for (int64_t i = 0; i < n; i++) {
        uint64_t r = tu_rand_u64(&s);
        uint32_t u = (uint32_t)r;
        if (i % 3) {
            uint32_t e = 127 - 30 + (uint32_t)((r >> 32) % 50); /* 2^-30 .. 2^19 */
            if (i % 7 == 0) e = (uint32_t)((r >> 40) % 256);    /* anything, subnormals */
            u = (u & 0x807fffffu) | (e << 23);
            u &= ~((1u << ((r >> 48) % 24)) - 1); /* clear 0..23 low bits */
        }
        memcpy(&x[i], &u, sizeof u);
    }
    return x;
}

/* 4M elements: the vector paths, their tails and the threaded split all run. */
Test(cast_exhaustive, random_f32_to_f16_bf16, .timeout = 600) {
    kmux_context *ctx = tu_context();
    const int64_t n = (int64_t)4 << 20;
    float *x = random_f32(n, 12345);
    for (int sat = 0; sat < 2; sat++) {
        compare_all_targets(ctx, n, x, KMUX_F32, KMUX_F16, sat, NULL);
        compare_all_targets(ctx, n, x, KMUX_F32, KMUX_BF16, sat, NULL);
    }
    /* odd size and offset: tails and unaligned vectors */
    compare_all_targets(ctx, 1000003, x + 1, KMUX_F32, KMUX_BF16, 0, NULL);
    compare_all_targets(ctx, 1000003, x + 1, KMUX_F32, KMUX_F16, 0, NULL);
    free(x);
    TU_OK(kmux_context_destroy(ctx));
}

Test(cast_exhaustive, random_f32_to_fp8, .timeout = 600) {
    kmux_context *ctx = tu_context();
    const int64_t n = (int64_t)1 << 20;
    float *x = random_f32(n, 777);
    for (int k = 2; k < 6; k++)
        for (int sat = 0; sat < 2; sat++)
            compare_all_targets(ctx, n, x, KMUX_F32, NARROW[k], sat, NULL);
    free(x);
    TU_OK(kmux_context_destroy(ctx));
}

/* Scaled casts: a power of two (exact product) and 0.3700001 (inexact: the product must be
 * rounded once, which ref does exactly in f64). */
Test(cast_exhaustive, random_f32_scaled, .timeout = 600) {
    kmux_context *ctx = tu_context();
    const int64_t n = (int64_t)1 << 20;
    float *x = random_f32(n, 99);
    const float scales[2] = {0x1p-3f, 0.3700001f};
    for (int s = 0; s < 2; s++)
        for (int k = 0; k < 6; k++)
            for (int sat = 0; sat < 2; sat++)
                compare_all_targets(ctx, n, x, KMUX_F32, NARROW[k], sat, &scales[s]);
    free(x);
    TU_OK(kmux_context_destroy(ctx));
}

/* Random f64 patterns near the narrow ranges, rounded once from f64. */
Test(cast_exhaustive, random_f64_to_narrow, .timeout = 600) {
    kmux_context *ctx = tu_context();
    const int64_t n = (int64_t)1 << 18;
    double *x = malloc((size_t)n * sizeof *x);
    cr_assert(x);
    uint64_t s = 4242;
    for (int64_t i = 0; i < n; i++) {
        uint64_t r = tu_rand_u64(&s), e = 1023 - 140 + (tu_rand_u64(&s) % 280);
        uint64_t u = (r & 0x800fffffffffffffull) | (e << 52);
        if (i % 2) u &= ~((1ull << (tu_rand_u64(&s) % 53)) - 1);
        if (i % 97 == 0) u = r; /* anything */
        memcpy(&x[i], &u, sizeof u);
    }
    for (int k = 0; k < 8; k++)
        for (int sat = 0; sat < 2; sat++)
            if (ALL[k] != KMUX_F64) compare_all_targets(ctx, n, x, KMUX_F64, ALL[k], sat, NULL);
    free(x);
    TU_OK(kmux_context_destroy(ctx));
}
