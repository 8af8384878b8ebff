/*
 * test_im2col_gather.c - the AVX-512 stride-2 gather of the OpenBLAS convolution's lowering
 * (kernels/cpu/gather_avx512.c) against the plain loop: every row length from 1 to 70 (no full
 * vector, full vectors and tails of every length), several rows with leading dimensions, with and
 * without its prefetch. The last float a row may read sits right before a page that cannot be read,
 * so a read past src[2n-2] crashes the test, and every float of dst past the n written must keep
 * its sentinel. Skipped where the CPU (or the OS) has no AVX-512F.
 */
#define _GNU_SOURCE /* MAP_ANONYMOUS */
#include <criterion/criterion.h>
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
