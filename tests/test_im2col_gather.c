/*
 * test_im2col_gather.c - kernels of the OpenBLAS convolution's lowering tested directly
 * (kernels/cpu): the AVX-512 stride-2 gather (gather_avx512.c) against the plain loop, every row
 * length from 1 to 70 (no full vector, full vectors and tails of every length), several rows with
 * leading dimensions, with and without its prefetch; the last float a row may read sits right
 * before a page that cannot be read, so a read past src[2n-2] crashes the test, and every float of
 * dst past the n written must keep its sentinel (skipped where the CPU or the OS has no
 * AVX-512F). And the one-pass col2im of taps that never overlap (col2im_disjoint.c) in NCHW,
 * split across threads, against the same call on one thread and against the definition.
 */
#define _GNU_SOURCE /* MAP_ANONYMOUS */
#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <stdint.h>
#include <sys/mman.h>
#include <unistd.h>

#include "im2col_internal.h"

#define SENTINEL -7.0f

/* Floats ending right before an unreadable page: the guard of *map (map_bytes long). */
static float *guarded(size_t floats, void **map, size_t *map_bytes) {
    const size_t page = (size_t)sysconf(_SC_PAGESIZE);
    const size_t data = (floats * sizeof(float) + page - 1) / page * page;
    *map_bytes = data + page;
    char *m = mmap(NULL, *map_bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    cr_assert_neq(m, MAP_FAILED);
    cr_assert_eq(mprotect(m + data, page, PROT_NONE), 0);
    *map = m;
    return (float *)(m + data) - floats;
}

Test(im2col_gather, avx512_stride2_rows_match_the_plain_loop) {
    if (!kmux_cpu_has_avx512f()) cr_skip_test("no AVX-512F on this CPU");
    const int64_t rows = 3, gap = 5; /* source rows 2n-1 + gap floats apart */
    for (int64_t n = 1; n <= 70; n++)
        for (int ahead = 0; ahead < 2; ahead++) {
            const int64_t lds = 2 * n - 1 + gap, ldd = n + 3;
            const size_t src_floats = (size_t)((rows - 1) * lds + 2 * n - 1);
            void *map;
            size_t map_bytes;
            float *src = guarded(src_floats, &map, &map_bytes);
            for (size_t i = 0; i < src_floats; i++)
                src[i] = (float)i + 0.5f;
            float dst[3 * 74];
            for (size_t i = 0; i < sizeof dst / sizeof dst[0]; i++)
                dst[i] = SENTINEL;
            kmux_gather2_rows_avx512(dst, ldd, src, lds, rows, n, ahead ? 4 * lds : 0);
            for (int64_t r = 0; r < rows; r++)
                for (int64_t i = 0; i < ldd; i++) {
                    const float want = i < n ? src[r * lds + 2 * i] : SENTINEL;
                    cr_expect_eq(dst[r * ldd + i], want,
                                 "n %lld, ahead %d: row %lld, element %lld is %g, want %g",
                                 (long long)n, ahead, (long long)r, (long long)i,
                                 (double)dst[r * ldd + i], (double)want);
                }
            munmap(map, map_bytes);
        }
}

/* 1x1 stride 2, 2 images of 16 x 128 x 128: 2^19 elements of dx, so that 4 threads (2 for the NCHW
 * pass, which runs on half) split the planes. beta = 0 over NaN (zeroed by one memset, then the
 * taps) and beta = -1.5 (every row scaled): bit-equal for 1 and 4 threads, and equal to
 * dx = beta * dx + 0.0f + col at the even rows and columns. */
Test(im2col_gather, col2im_disjoint_nchw_split_across_threads) {
    kmux_conv2d_desc d = KMUX_CONV2D_DESC_INIT;
    d.direction = KMUX_CONV_BWD_DATA;
    d.n = 2, d.c = 16, d.h = d.w = 128, d.k = 4, d.r = d.s = 1;
    d.stride_h = d.stride_w = 2;
    const int64_t p = 64, q = 64, pq = p * q, hw = d.h * d.w, nx = d.n * d.c * hw;
    const int64_t nj = d.n * pq;
    float *col = malloc((size_t)(d.c * nj) * sizeof(float));
    float *x0 = malloc((size_t)nx * sizeof(float)), *x1 = malloc((size_t)nx * sizeof(float)),
          *x4 = malloc((size_t)nx * sizeof(float));
    cr_assert(col && x0 && x1 && x4);
    for (int64_t i = 0; i < d.c * nj; i++)
        col[i] = (float)(i % 251) - 125.0f;
    const float betas[] = {0.0f, -1.5f};
    for (int b = 0; b < 2; b++) {
        const float beta = betas[b];
        for (int64_t i = 0; i < nx; i++)
            x0[i] = beta == 0.0f ? NAN : (float)(i % 7) - 3.0f;
        memcpy(x1, x0, (size_t)nx * sizeof(float));
        memcpy(x4, x0, (size_t)nx * sizeof(float));
        cr_assert(kmux_cpu_col2im_panel_disjoint_f32(&d, p, q, 0, col, 0, nj, x1, beta, 1));
        cr_assert(kmux_cpu_col2im_panel_disjoint_f32(&d, p, q, 0, col, 0, nj, x4, beta, 4));
        cr_expect(memcmp(x1, x4, (size_t)nx * sizeof(float)) == 0,
                  "beta %g: 4 threads differ from 1", (double)beta);
        int64_t bad = 0;
        for (int64_t i = 0; i < nx && bad < 3; i++) {
            const int64_t n = i / (d.c * hw), c = i / hw % d.c, h = i % hw / d.w, w = i % d.w;
            float want = beta == 0.0f ? 0.0f : beta * x0[i] + 0.0f;
            if (h % 2 == 0 && w % 2 == 0) want += col[c * nj + n * pq + h / 2 * q + w / 2];
            if (memcmp(&x4[i], &want, sizeof want) != 0) {
                cr_expect_fail("beta %g: dx[%lld] (n %lld, c %lld, h %lld, w %lld) is %g, want %g",
                               (double)beta, (long long)i, (long long)n, (long long)c, (long long)h,
                               (long long)w, (double)x4[i], (double)want);
                bad++;
            }
        }
    }
    free(col), free(x0), free(x1), free(x4);
}
