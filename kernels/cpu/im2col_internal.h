/*
 * im2col_internal.h - what the panel lowering (im2col_panel.c) and its polyphase variant for
 * strided NCHW convolutions (im2col_phases.c) share: the job of one panel and the row loops.
 * Not installed; layouts and pixel numbering are those of kmux_cpu_kernels.h.
 */
#ifndef KMUX_IM2COL_INTERNAL_H
#define KMUX_IM2COL_INTERNAL_H

#include <stdint.h>
#include <string.h>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "cpu_stream.h"
#include "kmux_common.h"
#include "kmux_cpu_kernels.h"

/* Threads: a panel is split from PANEL_PARALLEL_MIN elements (1 MiB of f32) on. Each split creates
 * its threads (~20-40 us), which the lowering of a 1 MiB panel repays twice over. Measured on the
 * 2-core EPYC VM (bench_ob_conv-style, 41 interleaved repetitions, 4 runs): the 0.45-0.9
 * million-element panels of ResNet-50's res3a_2b and res4a_2b in NCHW ran 2-14% faster split (15 of
 * 16 pairs), once the helper threads were kept off the caller's core (kmux_parallel_for_from);
 * before, they ran slower split. */
#define PANEL_PARALLEL_MIN ((int64_t)1 << 18)

/* How far ahead a strided NCHW gather asks for its input rows, in bytes of x (im2col_nchw_rows;
 * rounded down to whole rows of the stride, at least one). Measured on the 2-core Zen 5 with
 * res3a_branch2a's rows (448 bytes a step; the harness of gather_avx512.c, one run each): 1, 8,
 * 16, 18, 32 and 64 rows ahead gave 0.69, 0.71, 0.77, 0.77, 0.79 and 0.77 of the sgemm rate:
 * from 16 rows on, equal within the run-to-run noise (single runs); 8 KiB is the middle. */
#define IM2COL_AHEAD ((int64_t)8 << 10)

/* One panel: pixels [j0, j1) of the batch, group g (kmux_cpu_im2col_panel_f32). */
typedef struct panel_job {
    const kmux_conv2d_desc *d;
    int64_t p, q, g, j0, j1;
    const float *xs;      /* im2col source */
    float *xd;            /* col2im destination */
    float *col;           /* im2col destination */
    float *cw;            /* col2im source (NCHW zeroes its out-of-image columns) */
    float *phases;        /* NCHW with a stride: per-thread scratch of im2col_phases.c, or NULL */
    int64_t phase_blocks; /* im2col_phases.c: the blocks of phase rows of each plane */
    float beta;           /* im2col_phases.c, col2im: x = beta * x + the adjoint */
    int avx512;           /* kmux_cpu_has_avx512f(): stride-2 gathers by kmux_gather2_rows_avx512 */
} panel_job;

/* Rows r < rows of a stride-2 gather with AVX-512F (gather_avx512.c): dst[r*ldd + i] =
 * src[r*lds + 2i] for i < n, reading src[r*lds .. r*lds + 2n-2] only; with ahead != 0 each row
 * first asks for the lines of the row `ahead` floats further on (prefetch_floats). Call only where
 * kmux_cpu_has_avx512f() answers 1. */
void kmux_gather2_rows_avx512(float *restrict dst, int64_t ldd, const float *restrict src,
                              int64_t lds, int64_t rows, int64_t n, int64_t ahead);

/* dst[i] = src[i * stride] for i < n. Unit stride is a copy; stride 2 (ResNet's downsampling
 * layers) takes the even lanes of two loads with SSE2, which every x86-64 has: -O3 leaves that loop
 * scalar. A vector reads src[2i .. 2i+7], so the last 4 elements run in the scalar loop, which
 * keeps every read inside src[0 .. 2n-2]. */
static inline void gather_row(float *restrict dst, const float *restrict src, int64_t n,
                              int64_t stride) {
    int64_t i = 0;
    if (stride == 1) {
        for (; i < n; i++)
            dst[i] = src[i];
        return;
    }
#if defined(__SSE2__)
    if (stride == 2)
        for (; i + 4 < n; i += 4) {
            const __m128 a = _mm_loadu_ps(src + 2 * i), b = _mm_loadu_ps(src + 2 * i + 4);
            _mm_storeu_ps(dst + i, _mm_shuffle_ps(a, b, _MM_SHUFFLE(2, 0, 2, 0)));
        }
#endif
    for (; i < n; i++)
        dst[i] = src[i * stride];
}

/* dst[i * stride] += src[i] for i < n (the adjoint of gather_row). Stride 2 with SSE2 adds
 * (src[i], +0, src[i+1], +0) to dst[2i .. 2i+3]: the odd lanes are neighbouring pixels of the same
 * plane row, and adding +0 leaves them as they are (col2im's x holds no -0, see
 * kmux_cpu_col2im_panel_f32); the last 4 elements stay scalar, inside dst[0 .. 2n-2]. */
static inline void scatter_add_row(float *restrict dst, const float *restrict src, int64_t n,
                                   int64_t stride) {
    int64_t i = 0;
    if (stride == 1) {
        for (; i < n; i++)
            dst[i] += src[i];
        return;
    }
#if defined(__SSE2__)
    if (stride == 2) {
        const __m128 zero = _mm_setzero_ps();
        for (; i + 4 < n; i += 4) {
            const __m128 v = _mm_loadu_ps(src + i);
            float *o = dst + 2 * i;
            _mm_storeu_ps(o, _mm_add_ps(_mm_loadu_ps(o), _mm_unpacklo_ps(v, zero)));
            _mm_storeu_ps(o + 4, _mm_add_ps(_mm_loadu_ps(o + 4), _mm_unpackhi_ps(v, zero)));
        }
    }
#endif
    for (; i < n; i++)
        dst[i * stride] += src[i];
}

/* Half-open range [*lo, *hi) of output columns qi < q whose input column qi*stride + off is in
 * [0, w). */
static inline void valid_q(int64_t q, int64_t w, int64_t stride, int64_t off, int64_t *lo,
                           int64_t *hi) {
    int64_t a = off >= 0 ? 0 : (-off + stride - 1) / stride;
    int64_t b = (w - 1 - off) < 0 ? 0 : (w - 1 - off) / stride + 1;
    if (a > q) a = q;
    if (b > q) b = q;
    if (b < a) b = a;
    *lo = a;
    *hi = b;
}

/* x = beta * x + 0.0f over n floats (beta = 0: zeroed, x not read), before col2im adds taps into
 * x: the "+ 0.0f" turns -0 into +0 (kmux_cpu_col2im_prescale_f32) */
static inline void scale_beta_row(float *x, int64_t n, float beta) {
    if (beta == 0.0f) {
        memset(x, 0, (size_t)n * sizeof(float));
        return;
    }
    for (int64_t i = 0; i < n; i++)
        x[i] = beta * x[i] + 0.0f;
}

/* Asks for the cache lines of n floats at src + ahead floats (prefetch hints: they never fault,
 * and the address is formed as an integer, so it may lie past the tensor). */
static inline void prefetch_floats(const float *src, int64_t ahead, int64_t n) {
    kmux_cpu_prefetch_at((uintptr_t)src + (uintptr_t)ahead * sizeof(float),
                         (size_t)n * sizeof(float));
}

static inline void zero_row(float *dst, int64_t n) {
    for (int64_t i = 0; i < n; i++)
        dst[i] = 0.0f;
}

/* dst[i] = src[i] for i < n. NHWC rows of a few channels copy s * C floats per pixel and filter
 * row (21 for ResNet's 7x7 layer on 3 channels, 351 thousand copies per 4 images of 112 x 112
 * outputs): below 64 floats the copy is inline with SSE2, 4 floats a step, the last 4 stored
 * overlapping the step before (no tail loop, which the compiler turns into a call to memmove). */
static inline void copy_row(float *restrict dst, const float *restrict src, int64_t n) {
#if defined(__SSE2__)
    if (n < 64) {
        if (n < 4) {
            if (n > 0) dst[0] = src[0];
            if (n > 1) dst[1] = src[1];
            if (n > 2) dst[2] = src[2];
            return;
        }
        for (int64_t i = 0; i + 4 < n; i += 4)
            _mm_storeu_ps(dst + i, _mm_loadu_ps(src + i));
        _mm_storeu_ps(dst + n - 4, _mm_loadu_ps(src + n - 4)); /* the last 4, overlapping */
        return;
    }
#endif
    if (n > 0) memcpy(dst, src, (size_t)n * sizeof(float));
}

/* NCHW with stride_h or stride_w above 1, on a panel of whole images (im2col_phases.c): the
 * workers of kmux_parallel_for_from over the items [u0, u1) of the panel, item u being block
 * u % phase_blocks of the phase rows of channel u / phase_blocks / images of image
 * u / phase_blocks % images; thread tid uses jb->phases + tid * kmux_im2col_phase_floats(d). */
int64_t kmux_im2col_phase_floats(const kmux_conv2d_desc *d);
/* The number of work items of panel jb by phases, 0 when the phases do not apply to it (no
 * scratch, no phases for its geometry, or not whole images); sets jb->phase_blocks. */
int64_t kmux_im2col_phase_items(panel_job *jb, int threads);
void kmux_im2col_nchw_phase_items(void *ctx, int64_t u0, int64_t u1, int tid);
void kmux_col2im_nchw_phase_items(void *ctx, int64_t u0, int64_t u1, int tid);

#endif
