/*
 * test_int8_passes.c - the passes around cpu:onednn's exact int8 GEMM (kernels/cpu/int8_gemm.c)
 * against plain loops: column sums of Q (both storage orders, leading dimensions with padding,
 * row counts on both sides of the 16-bit blocks of 128 rows, whole and in two column ranges as
 * cpu:onednn's threads compute them), the largest column sum of |Q| and the largest |Q|, the
 * biased u8 copy P + 128, and the compensation C -= 128 * colsum modulo 2^32.
 */
#include <criterion/criterion.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "kmux_cpu_kernels.h"

static uint64_t g_rng = 0x9e3779b97f4a7c15ull;

static int8_t rnd8(void) {
    g_rng ^= g_rng << 13, g_rng ^= g_rng >> 7, g_rng ^= g_rng << 17;
    return (int8_t)(uint8_t)(g_rng >> 32);
}

/* A k x n matrix stored untransposed (rows of ld >= n) or transposed (columns of ld >= k), the
 * padding filled too (it must not be read into the sums). */
static int8_t *matrix(int64_t k, int64_t n, int64_t ld, int trans) {
    int64_t rows = trans ? n : k;
    int8_t *q = malloc((size_t)(rows * ld));
    cr_assert_not_null(q);
    for (int64_t i = 0; i < rows * ld; i++)
        q[i] = rnd8();
    return q;
}

static int8_t at(const int8_t *q, int64_t l, int64_t j, int64_t ld, int trans) {
    return trans ? q[j * ld + l] : q[l * ld + j];
}

/* split: the columns in two ranges [0, n/2) and [n/2, n), as a caller's threads take them */
static void check_col_sums(int64_t k, int64_t n, int64_t pad, int trans, int split) {
    int64_t ld = (trans ? k : n) + pad;
    int8_t *q = matrix(k, n, ld, trans);
    int32_t *sums = malloc((size_t)n * sizeof(int32_t));
    int64_t want_max = 0, got_max, h = split ? n / 2 : n;
    got_max = kmux_cpu_s8_col_sums(k, h, q, ld, trans, sums);
    if (h < n) {
        int64_t m2 = kmux_cpu_s8_col_sums(k, n - h, q + (trans ? h * ld : h), ld, trans, sums + h);
        if (m2 > got_max) got_max = m2;
    }
    for (int64_t j = 0; j < n; j++) {
        int64_t s = 0, a = 0;
        for (int64_t l = 0; l < k; l++) {
            int v = at(q, l, j, ld, trans);
            s += v;
            a += v < 0 ? -v : v;
        }
        if (a > want_max) want_max = a;
        cr_assert_eq(sums[j], (int32_t)s,
                     "k %lld n %lld trans %d split %d: sum[%lld] %d, want %lld", (long long)k,
                     (long long)n, trans, split, (long long)j, sums[j], (long long)s);
    }
    cr_assert_eq(got_max, want_max, "k %lld n %lld trans %d: largest |column| sum %lld, want %lld",
                 (long long)k, (long long)n, trans, (long long)got_max, (long long)want_max);
    /* the largest |v| over the stored matrix (rows x cols of its storage) */
    int most = 0;
    for (int64_t l = 0; l < k; l++)
        for (int64_t j = 0; j < n; j++) {
            int v = at(q, l, j, ld, trans);
            if ((v < 0 ? -v : v) > most) most = v < 0 ? -v : v;
        }
    cr_assert_eq(kmux_cpu_s8_abs_max(trans ? n : k, trans ? k : n, q, ld), most);
    free(q);
    free(sums);
}

Test(int8_passes, column_sums_every_shape) {
    static const int64_t ks[] = {1, 7, 127, 128, 129, 300};
    static const int64_t ns[] = {1, 63, 64, 513, 1100};
    for (size_t a = 0; a < sizeof ks / sizeof ks[0]; a++)
        for (size_t b = 0; b < sizeof ns / sizeof ns[0]; b++)
            for (int trans = 0; trans < 2; trans++)
                for (int split = 0; split < 2; split++)
                    check_col_sums(ks[a], ns[b], (a + b) % 3 * 5, trans, split);
}

/* Every column at -128: |sum| = 128 k, the extreme of the 16-bit blocks and of the bound. */
Test(int8_passes, column_sums_extremes) {
    const int64_t k = 1000, n = 70;
    int8_t *q = malloc((size_t)(k * n));
    memset(q, 0x80, (size_t)(k * n));
    int32_t sums[70];
    cr_assert_eq(kmux_cpu_s8_col_sums(k, n, q, n, 0, sums), 128 * k);
    for (int64_t j = 0; j < n; j++)
        cr_assert_eq(sums[j], -128 * k);
    cr_assert_eq(kmux_cpu_s8_abs_max(k, n, q, n), 128);
    free(q);
}

Test(int8_passes, biased_copy_and_compensation) {
    const int64_t rows = 37, cols = 1029, ld = cols + 11, ldc = cols + 3;
    int8_t *p = matrix(rows, cols, ld, 0);
    uint8_t *u = malloc((size_t)(rows * cols));
    kmux_cpu_s8_to_u8_biased(rows, cols, p, ld, u);
    for (int64_t i = 0; i < rows; i++)
        for (int64_t j = 0; j < cols; j++)
            cr_assert_eq(u[i * cols + j], p[i * ld + j] + 128);
    int32_t *c = malloc((size_t)(rows * ldc) * sizeof(int32_t)),
            *want = malloc((size_t)(rows * ldc) * sizeof(int32_t));
    int32_t *sums = malloc((size_t)cols * sizeof(int32_t));
    for (int64_t j = 0; j < cols; j++)
        sums[j] = (int32_t)((uint32_t)rnd8() * 65599u + (uint32_t)rnd8()); /* any s32, wraps */
    for (int64_t i = 0; i < rows * ldc; i++)
        c[i] = want[i] = (int32_t)((uint32_t)rnd8() << 24 | (uint32_t)(uint8_t)rnd8());
    for (int64_t i = 0; i < rows; i++)
        for (int64_t j = 0; j < cols; j++) /* modulo 2^32, as integer BLAS */
            want[i * ldc + j] = (int32_t)((uint32_t)want[i * ldc + j] - 128u * (uint32_t)sums[j]);
    kmux_cpu_s32_sub_bias_comp(rows, cols, c, ldc, sums);
    cr_assert_eq(memcmp(c, want, (size_t)(rows * ldc) * sizeof(int32_t)), 0,
                 "the compensation, or a write into the padding");
    free(p);
    free(u);
    free(c);
    free(want);
    free(sums);
}
