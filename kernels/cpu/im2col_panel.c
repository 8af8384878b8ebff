/*
 * im2col_panel.c - im2col and col2im on a PANEL of output pixels (a range of columns of the
 * column matrix), over a batch of images, split across threads. The OpenBLAS convolution
 * lowers one panel at a time, so that the panel stays in cache between being written here and
 * being read by sgemm, instead of materialising the whole column matrix (layouts and pixel
 * numbering: kmux_cpu_kernels.h).
 *
 * Threads: im2col splits the panel's rows (NCHW: filter taps; NHWC: pixels), col2im splits the
 * CHANNELS, so that no two threads add into the same element of x (taps of neighbouring pixels
 * overlap); each element receives its additions in the same order for any thread count.
 */
#include <string.h>

#include "cast_internal.h"
#include "kmux_cpu_kernels.h"

/* Threads: a panel is split only from KMUX_CAST_PARALLEL_MIN elements on (kmux_cast_parallel_for).
 * Measured on the 2-core development VM, splitting smaller panels (0.5-2 MiB) made the
 * convolution slower, not faster: each split creates a thread (~20-40 us), and OpenBLAS's
 * workers still spin for a while after every sgemm, so the new thread first competes with them.
 */
typedef struct panel_job {
    const kmux_conv2d_desc *d;
    int64_t p, q, g, j0, j1;
    const float *xs; /* im2col source */
    float *xd;       /* col2im destination */
    float *col;      /* im2col destination */
    const float *cs; /* col2im source */
} panel_job;

/* Half-open range [*lo, *hi) of output columns qi whose input column qi*stride + off is in
 * [0, w). */
static void valid_q(int64_t q, int64_t w, int64_t stride, int64_t off, int64_t *lo, int64_t *hi) {
    int64_t a = off >= 0 ? 0 : (-off + stride - 1) / stride;
    int64_t b = (w - 1 - off) < 0 ? 0 : (w - 1 - off) / stride + 1;
    if (a > q) a = q;
    if (b > q) b = q;
    if (b < a) b = a;
    *lo = a;
    *hi = b;
}

/* NCHW: rows [t0, t1) of the panel (tap index (ci*r + ri)*s + si), every pixel j0..j1. */
static void im2col_nchw_rows(void *ctx, int64_t t0, int64_t t1, int tid) {
    (void)tid;
    const panel_job *jb = ctx;
    const kmux_conv2d_desc *d = jb->d;
    const int64_t cg = d->c / d->groups, pq = jb->p * jb->q, q = jb->q, hw = d->h * d->w;
    const int64_t nj = jb->j1 - jb->j0, img = d->c * hw;
    for (int64_t t = t0; t < t1; t++) {
        const int64_t ci = t / (d->r * d->s), ri = t / d->s % d->r, si = t % d->s;
        const int64_t off_w = si * d->dilation_w - d->pad_left;
        int64_t v0, v1;
        valid_q(q, d->w, d->stride_w, off_w, &v0, &v1);
        float *row = jb->col + t * nj;
        for (int64_t j = jb->j0; j < jb->j1;) {
            const int64_t n = j / pq, pix = j % pq, pi = pix / q, qa = pix % q;
            const int64_t qb = qa + (jb->j1 - j) < q ? qa + (jb->j1 - j) : q;
            float *dst = row + (j - jb->j0) - qa; /* dst[qi] is pixel (pi, qi) */
            const float *plane = jb->xs + n * img + (jb->g * cg + ci) * hw;
            const int64_t hi = pi * d->stride_h - d->pad_top + ri * d->dilation_h;
            if (hi < 0 || hi >= d->h || v0 == v1) {
                memset(dst + qa, 0, (size_t)(qb - qa) * sizeof(float));
            } else {
                const int64_t a = v0 > qa ? v0 : qa, b = v1 < qb ? v1 : qb;
                const int64_t base = hi * d->w + off_w;
                if (a >= b) {
                    memset(dst + qa, 0, (size_t)(qb - qa) * sizeof(float));
                } else {
                    memset(dst + qa, 0, (size_t)(a - qa) * sizeof(float));
                    if (d->stride_w == 1)
                        memcpy(dst + a, plane + (base + a), (size_t)(b - a) * sizeof(float));
                    else
                        for (int64_t qi = a; qi < b; qi++)
                            dst[qi] = plane[base + qi * d->stride_w];
                    memset(dst + b, 0, (size_t)(qb - b) * sizeof(float));
                }
            }
            j += qb - qa;
        }
    }
}

/* NHWC with one group and dilation_w = 1: the taps si of one filter row read s * C consecutive
 * floats of x, so those in the image are ONE copy (7 x 3 channels for ResNet's first layer instead
 * of 7 copies of 3). [*s0, *s1): the taps of output column qi inside the image. */
static int nhwc_runs(const kmux_conv2d_desc *d) {
    return d->groups == 1 && d->dilation_w == 1;
}

static void taps_inside(const kmux_conv2d_desc *d, int64_t qi, int64_t *s0, int64_t *s1) {
    const int64_t w0 = qi * d->stride_w - d->pad_left; /* input column of tap 0 */
    *s0 = w0 < 0 ? -w0 : 0;
    *s1 = d->w - w0 < d->s ? d->w - w0 : d->s;
    if (*s0 > d->s) *s0 = d->s;
    if (*s1 < *s0) *s1 = *s0;
}

/* NHWC: pixels [a, b) of the panel (offsets from j0), every tap. */
static void im2col_nhwc_rows(void *ctx, int64_t a, int64_t b, int tid) {
    (void)tid;
    const panel_job *jb = ctx;
    const kmux_conv2d_desc *d = jb->d;
    const int64_t cg = d->c / d->groups, rsc = d->r * d->s * cg, pq = jb->p * jb->q;
    const int64_t img = d->c * d->h * d->w;
    const int runs = nhwc_runs(d);
    for (int64_t o = a; o < b; o++) {
        const int64_t j = jb->j0 + o, pix = j % pq, pi = pix / jb->q, qi = pix % jb->q;
        const float *x = jb->xs + j / pq * img;
        float *dst = jb->col + o * rsc;
        for (int64_t ri = 0; ri < d->r; ri++) {
            const int64_t hi = pi * d->stride_h - d->pad_top + ri * d->dilation_h;
            float *t = dst + ri * d->s * cg;
            if (runs) {
                int64_t s0, s1;
                taps_inside(d, qi, &s0, &s1);
                if (hi < 0 || hi >= d->h) s1 = s0;
                const int64_t w0 = qi * d->stride_w - d->pad_left + s0;
                memset(t, 0, (size_t)(s0 * cg) * sizeof(float));
                if (s1 > s0)
                    memcpy(t + s0 * cg, x + (hi * d->w + w0) * d->c,
                           (size_t)((s1 - s0) * cg) * sizeof(float));
                memset(t + s1 * cg, 0, (size_t)((d->s - s1) * cg) * sizeof(float));
                continue;
            }
            for (int64_t si = 0; si < d->s; si++, t += cg) {
                const int64_t wi = qi * d->stride_w - d->pad_left + si * d->dilation_w;
                const int inside = hi >= 0 && hi < d->h && wi >= 0 && wi < d->w;
                if (cg == 1) /* depthwise: no library call per element */
                    *t = inside ? x[(hi * d->w + wi) * d->c + jb->g] : 0.0f;
                else if (inside)
                    memcpy(t, x + (hi * d->w + wi) * d->c + jb->g * cg, (size_t)cg * sizeof(float));
                else
                    memset(t, 0, (size_t)cg * sizeof(float));
            }
        }
    }
}

/* NCHW: channels [c0, c1) of the group, every tap and pixel of the panel. */
static void col2im_nchw_chans(void *ctx, int64_t c0, int64_t c1, int tid) {
    (void)tid;
    const panel_job *jb = ctx;
    const kmux_conv2d_desc *d = jb->d;
    const int64_t cg = d->c / d->groups, pq = jb->p * jb->q, q = jb->q, hw = d->h * d->w;
    const int64_t nj = jb->j1 - jb->j0, img = d->c * hw;
    for (int64_t ci = c0; ci < c1; ci++)
        for (int64_t ri = 0; ri < d->r; ri++)
            for (int64_t si = 0; si < d->s; si++) {
                const int64_t t = (ci * d->r + ri) * d->s + si;
                const int64_t off_w = si * d->dilation_w - d->pad_left;
                int64_t v0, v1;
                valid_q(q, d->w, d->stride_w, off_w, &v0, &v1);
                const float *row = jb->cs + t * nj;
                for (int64_t j = jb->j0; j < jb->j1;) {
                    const int64_t n = j / pq, pix = j % pq, pi = pix / q, qa = pix % q;
                    const int64_t qb = qa + (jb->j1 - j) < q ? qa + (jb->j1 - j) : q;
                    const float *src = row + (j - jb->j0) - qa; /* src[qi]: pixel (pi, qi) */
                    const int64_t hi = pi * d->stride_h - d->pad_top + ri * d->dilation_h;
                    j += qb - qa;
                    if (hi < 0 || hi >= d->h) continue;
                    const int64_t lo = v0 > qa ? v0 : qa, up = v1 < qb ? v1 : qb;
                    float *plane = jb->xd + n * img + (jb->g * cg + ci) * hw;
                    const int64_t base = hi * d->w + off_w;
                    if (d->stride_w == 1) { /* unit stride: a loop the compiler vectorises */
                        float *dst = plane + (base + lo);
                        const float *from = src + lo;
                        for (int64_t e = 0; e < up - lo; e++)
                            dst[e] += from[e];
                    } else {
                        for (int64_t qi = lo; qi < up; qi++)
                            plane[base + qi * d->stride_w] += src[qi];
                    }
                }
            }
}

/* NHWC: channels [c0, c1) of the group, every pixel and tap of the panel. */
static void col2im_nhwc_chans(void *ctx, int64_t c0, int64_t c1, int tid) {
    (void)tid;
    const panel_job *jb = ctx;
    const kmux_conv2d_desc *d = jb->d;
    const int64_t cg = d->c / d->groups, rsc = d->r * d->s * cg, pq = jb->p * jb->q;
    const int64_t img = d->c * d->h * d->w;
    const int whole = nhwc_runs(d) && c0 == 0 && c1 == cg;
    for (int64_t j = jb->j0; j < jb->j1; j++) {
        const int64_t pix = j % pq, pi = pix / jb->q, qi = pix % jb->q;
        float *x = jb->xd + j / pq * img + jb->g * cg;
        const float *src = jb->cs + (j - jb->j0) * rsc;
        for (int64_t ri = 0; ri < d->r; ri++) {
            const int64_t hi = pi * d->stride_h - d->pad_top + ri * d->dilation_h;
            if (hi < 0 || hi >= d->h) continue;
            if (whole) { /* one run of s * C floats (nhwc_runs), all channels on this thread */
                int64_t s0, s1;
                taps_inside(d, qi, &s0, &s1);
                const float *t = src + (ri * d->s + s0) * cg;
                float *dst = x + (hi * d->w + qi * d->stride_w - d->pad_left + s0) * d->c;
                for (int64_t e = 0; e < (s1 - s0) * cg; e++)
                    dst[e] += t[e];
                continue;
            }
            for (int64_t si = 0; si < d->s; si++) {
                const int64_t wi = qi * d->stride_w - d->pad_left + si * d->dilation_w;
                if (wi < 0 || wi >= d->w) continue;
                const float *t = src + (ri * d->s + si) * cg;
                float *dst = x + (hi * d->w + wi) * d->c;
                for (int64_t ci = c0; ci < c1; ci++)
                    dst[ci] += t[ci];
            }
        }
    }
}

void kmux_cpu_im2col_panel_f32(const kmux_conv2d_desc *d, int64_t p, int64_t q, int64_t g,
                               const float *x, int64_t j0, int64_t j1, float *col, int threads) {
    panel_job jb = {.d = d, .p = p, .q = q, .g = g, .j0 = j0, .j1 = j1, .xs = x, .col = col};
    const int64_t taps = d->c / d->groups * d->r * d->s;
    if (d->layout == KMUX_NHWC)
        kmux_cast_parallel_for(j1 - j0, taps, threads, 1, im2col_nhwc_rows, &jb);
    else
        kmux_cast_parallel_for(taps, (j1 - j0), threads, 1, im2col_nchw_rows, &jb);
}

void kmux_cpu_col2im_panel_f32(const kmux_conv2d_desc *d, int64_t p, int64_t q, int64_t g,
                               const float *col, int64_t j0, int64_t j1, float *x, int threads) {
    panel_job jb = {.d = d, .p = p, .q = q, .g = g, .j0 = j0, .j1 = j1, .xd = x, .cs = col};
    const int64_t cg = d->c / d->groups, per_chan = d->r * d->s * (j1 - j0);
    /* NHWC: ranges of 8 channels keep each thread's additions vectorisable; fewer than 16
     * channels run on one thread, in runs of s * C floats (nhwc_runs) */
    const int nhwc = d->layout == KMUX_NHWC;
    kmux_cast_parallel_for(cg, per_chan, nhwc && cg < 16 ? 1 : threads, nhwc ? 8 : 1,
                           nhwc ? col2im_nhwc_chans : col2im_nchw_chans, &jb);
}
