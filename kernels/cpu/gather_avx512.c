/*
 * gather_avx512.c - the stride-2 row gather of im2col (dst[i] = src[2i]) with AVX-512F, for runs of
 * whole output rows of NCHW convolutions (im2col_nchw_rows in im2col_panel.c, where
 * kmux_cpu_has_avx512f() answers 1), with the prefetch of the input rows ahead.
 *
 * Why: the lowering of a strided 1x1 NCHW convolution (ResNet-50 v1's res3a_branch2a, 1x1 stride 2,
 * 256 -> 128 on 56x56) reads 3.2 MB of x per image for a 0.24 ms sgemm, in rows of 28 outputs, and
 * is bound by the cache misses in flight, not by arithmetic. Measured on the 2-core Zen 5 (a /tmp
 * harness of im2col + sgemm per image of 4 images against the batch's sgemm, 41 interleaved
 * rounds, 4 runs; the ratio to the sgemm rate): the SSE2 gather row by row 0.64-0.68, with the
 * prefetch 0.72-0.75; this gather 0.60-0.66 without the prefetch and 0.75-0.77 with it. The
 * prefetch is most of the gain; one call per run of rows and 16 outputs per permute add the rest.
 * Not used to split strided planes into phases (im2col_phases.c): its scratch is read right after,
 * and res3a_branch2b's lowering by phases ran 0.77 -> 0.65 of the sgemm rate with it.
 */
#include "im2col_internal.h"

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>

/* A vector takes src[2i .. 2i+31] for 16 outputs; the last (up to 16) outputs of a row load under
 * a mask that stops at src[2n-2], so no float past the last one used is read. One call gathers a
 * run of rows: per row, a call and its masks cost as much as the copy of 28 floats. */
__attribute__((target("avx512f"))) void kmux_gather2_rows_avx512(float *restrict dst, int64_t ldd,
                                                                 const float *restrict src,
                                                                 int64_t lds, int64_t rows,
                                                                 int64_t n, int64_t ahead) {
    if (n <= 0) return;
    const __m512i even =
        _mm512_set_epi32(30, 28, 26, 24, 22, 20, 18, 16, 14, 12, 10, 8, 6, 4, 2, 0);
    const int64_t full = (n - 1) / 16 * 16, used = 2 * (n - full) - 1; /* tail: 1-16 outputs */
    const __mmask16 ka = (__mmask16)(used >= 16 ? 0xffff : (1u << used) - 1);
    const __mmask16 kb = (__mmask16)(used > 16 ? (1u << (used - 16)) - 1 : 0);
    const __mmask16 kd = (__mmask16)((1u << (n - full)) - 1);
    for (int64_t r = 0; r < rows; r++) {
        const float *s = src + r * lds;
        float *o = dst + r * ldd;
        if (ahead) prefetch_floats(s, ahead, 2 * n - 1);
        int64_t i = 0;
        for (; i < full; i += 16) {
            const __m512 a = _mm512_loadu_ps(s + 2 * i), b = _mm512_loadu_ps(s + 2 * i + 16);
            _mm512_storeu_ps(o + i, _mm512_permutex2var_ps(a, even, b));
        }
        const __m512 a = _mm512_maskz_loadu_ps(ka, s + 2 * i);
        const __m512 b = kb ? _mm512_maskz_loadu_ps(kb, s + 2 * i + 16) : _mm512_setzero_ps();
        _mm512_mask_storeu_ps(o + i, kd, _mm512_permutex2var_ps(a, even, b));
    }
}
#else
void kmux_gather2_rows_avx512(float *restrict dst, int64_t ldd, const float *restrict src,
                              int64_t lds, int64_t rows, int64_t n, int64_t ahead) {
    (void)ahead; /* the plain loop: other CPUs, and i386, where AVX-512 may still be reported */
    for (int64_t r = 0; r < rows; r++)
        for (int64_t i = 0; i < n; i++)
            dst[r * ldd + i] = src[r * lds + 2 * i];
}
#endif
