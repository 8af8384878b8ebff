/*
 * im2col_panel.c - im2col and col2im on a PANEL of output pixels (a range of columns of the
 * column matrix), over a batch of images, split across threads. The OpenBLAS convolution
 * lowers one panel at a time, so that the panel stays in cache between being written here and
 * being read by sgemm, instead of materialising the whole column matrix (layouts and pixel
 * numbering: kmux_cpu_kernels.h).
 *
 * Threads: im2col splits the panel's rows (NCHW: filter taps; NHWC: pixels), col2im splits the
 * CHANNELS (NCHW; NHWC runs on one thread, see kmux_cpu_col2im_panel_f32), so that no two threads
 * add into the same element of x (taps of neighbouring pixels overlap); each element receives its
 * additions in the same order for any thread count. NHWC col2im splits the pixels where taps
 * cannot overlap (a stride at least the filter's extent).
 */
#include "cast_internal.h"
#include "im2col_internal.h"

/* Position of panel pixel j: image n, output row pi, output column qi. The loops below walk the
 * pixels of a panel by output row with this cursor instead of dividing per row (64-bit divisions
 * were most of im2col's time for 56-pixel rows). */
typedef struct pix_cursor {
    int64_t n, pi, qi;
} pix_cursor;

static pix_cursor cursor_at(int64_t j, int64_t p, int64_t q) {
    const int64_t pix = j % (p * q);
    return (pix_cursor){.n = j / (p * q), .pi = pix / q, .qi = pix % q};
}

/* the cursor after one pixel (NHWC walks the panel pixel by pixel) */
static void cursor_next_pixel(pix_cursor *c, int64_t p, int64_t q) {
    if (++c->qi == q) {
        c->qi = 0;
        if (++c->pi == p) {
            c->pi = 0;
            c->n++;
        }
    }
}

/* the cursor after the rest of the current output row */
static void cursor_next_row(pix_cursor *c, int64_t p) {
    c->qi = 0;
    if (++c->pi == p) {
        c->pi = 0;
        c->n++;
    }
}

/* NCHW, stride_w = 1 and stride_h * w = q (a "same" convolution of stride 1): consecutive output
 * rows read consecutive input rows, so k >= 2 whole output rows from the cursor on are ONE run of
 * the plane. Panel entries [e0, e1) of the run's k * q lie in the plane, entry e at plane index
 * s0 + e; the others are in out-of-image columns. */
typedef struct row_run {
    int64_t k, s0, e0, e1;
} row_run;

/* The run at cursor c (panel offset o, input row hi, tap column offset off_w); 0 when there is
 * none of at least 2 rows. */
static int whole_rows(const panel_job *jb, pix_cursor c, int64_t o, int64_t hi, int64_t off_w,
                      row_run *run) {
    const kmux_conv2d_desc *d = jb->d;
    const int64_t q = jb->q, hw = d->h * d->w;
    if (d->stride_w != 1 || d->stride_h * d->w != q || c.qi != 0 || hi < 0 || hi >= d->h) return 0;
    int64_t k = (jb->j1 - jb->j0 - o) / q;
    if (k > jb->p - c.pi) k = jb->p - c.pi;
    if (k > (d->h - 1 - hi) / d->stride_h + 1) k = (d->h - 1 - hi) / d->stride_h + 1;
    if (k < 2) return 0;
    run->k = k;
    run->s0 = hi * d->w + off_w;
    run->e0 = run->s0 < 0 ? -run->s0 : 0;
    run->e1 = run->s0 + k * q > hw ? hw - run->s0 : k * q;
    return 1;
}

/* zeroes the out-of-image columns [0, v0) and [v1, q) of k panel rows of q entries */
static void zero_outside(float *rows, int64_t k, int64_t q, int64_t v0, int64_t v1) {
    for (int64_t i = 0; i < k; i++) {
        zero_row(rows + i * q, v0);
        zero_row(rows + i * q + v1, q - v1);
    }
}

/* NCHW with stride_w = 2 where the gather has AVX-512: the whole output rows from the cursor on
 * that read rows of the same plane (at most the rest of the image and of the panel, and the rows
 * whose input row hi + i * stride_h is in the plane), gathered by ONE call; 0 when the cursor is
 * not at a row's start or hi is outside the plane. */
static int64_t strided_rows(const panel_job *jb, pix_cursor c, int64_t o, int64_t hi) {
    const kmux_conv2d_desc *d = jb->d;
    if (!jb->avx512 || d->stride_w != 2 || c.qi != 0 || hi < 0 || hi >= d->h) return 0;
    int64_t k = (jb->j1 - jb->j0 - o) / jb->q;
    if (k > jb->p - c.pi) k = jb->p - c.pi;
    if (k > (d->h - 1 - hi) / d->stride_h + 1) k = (d->h - 1 - hi) / d->stride_h + 1;
    return k;
}

/* the cursor after k whole rows */
static void cursor_skip_rows(pix_cursor *c, int64_t k, int64_t p) {
    c->pi += k - 1;
    cursor_next_row(c, p);
}

/* NCHW: rows [t0, t1) of the panel (tap index (ci*r + ri)*s + si), every pixel j0..j1. A run of
 * whole rows (row_run) is ONE copy, its out-of-image columns (|off_w| per row at most) zeroed
 * after: 14-56-pixel rows made the per-row work dominate. */
static void im2col_nchw_rows(void *ctx, int64_t t0, int64_t t1, int tid) {
    (void)tid;
    const panel_job *jb = ctx;
    const kmux_conv2d_desc *d = jb->d;
    const int64_t cg = d->c / d->groups, p = jb->p, q = jb->q, hw = d->h * d->w;
    const int64_t nj = jb->j1 - jb->j0, img = d->c * hw, sw = d->stride_w;
    const pix_cursor start = cursor_at(jb->j0, p, q);
    /* Strided gathers ask for the input row IM2COL_AHEAD bytes of rows ahead (at least one output
     * row): their rows skip rows and columns of x, which the hardware prefetchers follow poorly */
    const int64_t row_step = d->stride_h * d->w, rows = IM2COL_AHEAD / (row_step * 4);
    const int64_t ahead = sw > 1 ? (rows > 1 ? rows : 1) * row_step : 0;
    for (int64_t t = t0; t < t1; t++) {
        const int64_t ci = t / (d->r * d->s), ri = t / d->s % d->r, si = t % d->s;
        const int64_t off_w = si * d->dilation_w - d->pad_left;
        int64_t v0, v1;
        valid_q(q, d->w, sw, off_w, &v0, &v1);
        float *row = jb->col + t * nj;
        pix_cursor c = start;
        for (int64_t o = 0; o < nj;) {
            const float *plane = jb->xs + c.n * img + (jb->g * cg + ci) * hw;
            const int64_t hi = c.pi * d->stride_h - d->pad_top + ri * d->dilation_h;
            const int inside = hi >= 0 && hi < d->h;
            row_run run;
            const int64_t k = strided_rows(jb, c, o, hi);
            if (k > 0) { /* in-plane columns gathered, the out-of-image ones zeroed */
                float *dst = row + o;
                if (v1 > v0)
                    kmux_gather2_rows_avx512(dst + v0, q, plane + hi * d->w + off_w + v0 * 2,
                                             d->stride_h * d->w, k, v1 - v0, ahead);
                zero_outside(dst, k, q, v0, v1);
                o += k * q;
                cursor_skip_rows(&c, k, p);
                continue;
            }
            if (whole_rows(jb, c, o, hi, off_w, &run)) {
                /* the in-plane part copied, the out-of-image columns zeroed */
                float *dst = row + o;
                if (run.e1 > run.e0)
                    memcpy(dst + run.e0, plane + run.s0 + run.e0,
                           (size_t)(run.e1 - run.e0) * sizeof(float));
                zero_outside(dst, run.k, q, v0, v1);
                o += run.k * q;
                cursor_skip_rows(&c, run.k, p);
                continue;
            }
            const int64_t qa = c.qi, qb = qa + (nj - o) < q ? qa + (nj - o) : q;
            const int64_t lo = v0 > qa ? v0 : qa, up = v1 < qb ? v1 : qb;
            float *dst = row + o - qa; /* dst[qi] is pixel (pi, qi) */
            o += qb - qa;
            cursor_next_row(&c, p);
            if (!inside || lo >= up) {
                zero_row(dst + qa, qb - qa);
                continue;
            }
            zero_row(dst + qa, lo - qa);
            const float *src = plane + hi * d->w + off_w + lo * sw;
            if (ahead) prefetch_floats(src, ahead, (up - lo - 1) * sw + 1);
            gather_row(dst + lo, src, up - lo, sw);
            zero_row(dst + up, qb - up);
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

/* [*lo, *hi): the output columns whose s taps (dilation 1) all lie inside the image, where NHWC
 * copies (adds) one run of s * C floats per filter row with no edge work. For ResNet-50's 7x7
 * layer on 3 channels (4 images, one thread, 2-core EPYC VM) this took im2col from 7.2 to 4.6 ms
 * and col2im from 6.2 to 4.1 ms. */
static void interior_q(const kmux_conv2d_desc *d, int64_t q, int64_t *lo, int64_t *hi) {
    const int64_t sw = d->stride_w, pl = d->pad_left, last = d->w + pl - d->s;
    *lo = pl > 0 ? (pl + sw - 1) / sw : 0;
    *hi = last < 0 ? 0 : last / sw + 1;
    if (*hi > q) *hi = q;
    if (*lo > *hi) *lo = *hi;
}

/* NHWC: pixels [a, b) of the panel (offsets from j0), every tap. */
static void im2col_nhwc_rows(void *ctx, int64_t a, int64_t b, int tid) {
    (void)tid;
    const panel_job *jb = ctx;
    const kmux_conv2d_desc *d = jb->d;
    const int64_t cg = d->c / d->groups, rsc = d->r * d->s * cg;
    const int64_t img = d->c * d->h * d->w;
    const int runs = nhwc_runs(d);
    const int64_t sw = d->stride_w, pl = d->pad_left, sc = d->s * cg;
    int64_t q_lo, q_hi;
    interior_q(d, jb->q, &q_lo, &q_hi);
    pix_cursor c = cursor_at(jb->j0 + a, jb->p, jb->q);
    for (int64_t o = a; o < b; o++, cursor_next_pixel(&c, jb->p, jb->q)) {
        const int64_t pi = c.pi, qi = c.qi;
        const float *x = jb->xs + c.n * img;
        float *dst = jb->col + o * rsc;
        if (runs && qi >= q_lo && qi < q_hi) { /* interior column: one copy per filter row */
            const float *src = x + (qi * sw - pl) * d->c;
            for (int64_t ri = 0; ri < d->r; ri++, dst += sc) {
                const int64_t hi = pi * d->stride_h - d->pad_top + ri * d->dilation_h;
                if (hi >= 0 && hi < d->h)
                    copy_row(dst, src + hi * d->w * d->c, sc);
                else
                    zero_row(dst, sc);
            }
            continue;
        }
        for (int64_t ri = 0; ri < d->r; ri++) {
            const int64_t hi = pi * d->stride_h - d->pad_top + ri * d->dilation_h;
            float *t = dst + ri * d->s * cg;
            if (runs) {
                int64_t s0, s1;
                taps_inside(d, qi, &s0, &s1);
                if (hi < 0 || hi >= d->h) s1 = s0;
                const int64_t w0 = qi * d->stride_w - d->pad_left + s0;
                zero_row(t, s0 * cg);
                copy_row(t + s0 * cg, x + (hi * d->w + w0) * d->c, (s1 - s0) * cg);
                zero_row(t + s1 * cg, (d->s - s1) * cg);
                continue;
            }
            for (int64_t si = 0; si < d->s; si++, t += cg) {
                const int64_t wi = qi * d->stride_w - d->pad_left + si * d->dilation_w;
                const int inside = hi >= 0 && hi < d->h && wi >= 0 && wi < d->w;
                if (cg == 1) /* depthwise: no library call per element */
                    *t = inside ? x[(hi * d->w + wi) * d->c + jb->g] : 0.0f;
                else if (inside)
                    copy_row(t, x + (hi * d->w + wi) * d->c + jb->g * cg, cg);
                else
                    zero_row(t, cg);
            }
        }
    }
}

/* NCHW: channels [c0, c1) of the group, every tap and pixel of the panel. In a run of whole rows
 * (row_run), the panel's out-of-image columns
 * are zeroed first and the run is ONE addition loop: the zeros land on neighbouring pixels of
 * the plane, and x + (+0) == x for every x that can be there (dx was prescaled by "+ 0.0f", so it
 * holds no -0, and sums never make one), so every element still gets exactly its taps, in the
 * same order. The panel is the plugin's workspace, free to overwrite. */
static void col2im_nchw_chans(void *ctx, int64_t c0, int64_t c1, int tid) {
    (void)tid;
    const panel_job *jb = ctx;
    const kmux_conv2d_desc *d = jb->d;
    const int64_t cg = d->c / d->groups, p = jb->p, q = jb->q, hw = d->h * d->w;
    const int64_t nj = jb->j1 - jb->j0, img = d->c * hw, sw = d->stride_w;
    const pix_cursor start = cursor_at(jb->j0, p, q);
    for (int64_t ci = c0; ci < c1; ci++)
        for (int64_t ri = 0; ri < d->r; ri++)
            for (int64_t si = 0; si < d->s; si++) {
                const int64_t t = (ci * d->r + ri) * d->s + si;
                const int64_t off_w = si * d->dilation_w - d->pad_left;
                int64_t v0, v1;
                valid_q(q, d->w, sw, off_w, &v0, &v1);
                float *row = jb->cw + t * nj;
                pix_cursor c = start;
                for (int64_t o = 0; o < nj;) {
                    float *plane = jb->xd + c.n * img + (jb->g * cg + ci) * hw;
                    const int64_t hi = c.pi * d->stride_h - d->pad_top + ri * d->dilation_h;
                    const int inside = hi >= 0 && hi < d->h;
                    row_run run;
                    if (whole_rows(jb, c, o, hi, off_w, &run)) {
                        float *src = row + o;
                        zero_outside(src, run.k, q, v0, v1);
                        if (run.e1 > run.e0)
                            scatter_add_row(plane + run.s0 + run.e0, src + run.e0, run.e1 - run.e0,
                                            1);
                        o += run.k * q;
                        cursor_skip_rows(&c, run.k, p);
                        continue;
                    }
                    const int64_t qa = c.qi, qb = qa + (nj - o) < q ? qa + (nj - o) : q;
                    const float *src = row + o - qa; /* src[qi]: pixel (pi, qi) */
                    o += qb - qa;
                    cursor_next_row(&c, p);
                    if (!inside) continue;
                    const int64_t lo = v0 > qa ? v0 : qa, up = v1 < qb ? v1 : qb;
                    if (lo >= up) continue;
                    scatter_add_row(plane + hi * d->w + off_w + lo * sw, src + lo, up - lo, sw);
                }
            }
}

/* NHWC: channels [c0, c1) of the group, every pixel and tap of the panel. */
static void col2im_nhwc_chans(void *ctx, int64_t c0, int64_t c1, int tid) {
    (void)tid;
    const panel_job *jb = ctx;
    const kmux_conv2d_desc *d = jb->d;
    const int64_t cg = d->c / d->groups, rsc = d->r * d->s * cg;
    const int64_t img = d->c * d->h * d->w;
    const int whole = nhwc_runs(d) && c0 == 0 && c1 == cg;
    int64_t q_lo, q_hi;
    interior_q(d, jb->q, &q_lo, &q_hi);
    const int64_t sc = d->s * cg;
    pix_cursor c = cursor_at(jb->j0, jb->p, jb->q);
    for (int64_t j = jb->j0; j < jb->j1; j++, cursor_next_pixel(&c, jb->p, jb->q)) {
        const int64_t pi = c.pi, qi = c.qi;
        float *x = jb->xd + c.n * img + jb->g * cg;
        const float *src = jb->cw + (j - jb->j0) * rsc;
        if (whole && qi >= q_lo && qi < q_hi) { /* interior column: one run per filter row */
            float *xq = x + (qi * d->stride_w - d->pad_left) * d->c;
            for (int64_t ri = 0; ri < d->r; ri++) {
                const int64_t hi = pi * d->stride_h - d->pad_top + ri * d->dilation_h;
                if (hi >= 0 && hi < d->h)
                    scatter_add_row(xq + hi * d->w * d->c, src + ri * sc, sc, 1);
            }
            continue;
        }
        for (int64_t ri = 0; ri < d->r; ri++) {
            const int64_t hi = pi * d->stride_h - d->pad_top + ri * d->dilation_h;
            if (hi < 0 || hi >= d->h) continue;
            if (whole) { /* one run of s * C floats (nhwc_runs), all channels on this thread */
                int64_t s0, s1;
                taps_inside(d, qi, &s0, &s1);
                const float *t = src + (ri * d->s + s0) * cg;
                float *dst = x + (hi * d->w + qi * d->stride_w - d->pad_left + s0) * d->c;
                scatter_add_row(dst, t, (s1 - s0) * cg, 1);
                continue;
            }
            for (int64_t si = 0; si < d->s; si++) {
                const int64_t wi = qi * d->stride_w - d->pad_left + si * d->dilation_w;
                if (wi < 0 || wi >= d->w) continue;
                const float *t = src + (ri * d->s + si) * cg;
                float *dst = x + (hi * d->w + wi) * d->c;
                scatter_add_row(dst + c0, t + c0, c1 - c0, 1);
            }
        }
    }
}

void kmux_cpu_im2col_panel_f32(const kmux_conv2d_desc *d, int64_t p, int64_t q, int64_t g,
                               const float *x, int64_t j0, int64_t j1, float *col, float *phases,
                               int threads) {
    panel_job jb = {
        .d = d, .p = p, .q = q, .g = g, .j0 = j0, .j1 = j1, .xs = x, .col = col, .phases = phases};
    jb.avx512 = kmux_cpu_has_avx512f();
    const int64_t taps = d->c / d->groups * d->r * d->s,
                  items = kmux_im2col_phase_items(&jb, threads);
    if (items)
        kmux_parallel_for_from(items, taps * (j1 - j0) / items, threads, 1, PANEL_PARALLEL_MIN,
                               kmux_im2col_nchw_phase_items, &jb);
    else if (d->layout == KMUX_NHWC)
        kmux_parallel_for_from(j1 - j0, taps, threads, 1, PANEL_PARALLEL_MIN, im2col_nhwc_rows,
                               &jb);
    else
        kmux_parallel_for_from(taps, (j1 - j0), threads, 1, PANEL_PARALLEL_MIN, im2col_nchw_rows,
                               &jb);
}

/* NHWC whose taps never overlap (a stride at least the filter's extent, ResNet's strided 1x1
 * layers): pixels [a, b) of the panel, every channel. Each element of x then receives at most one
 * tap, so threads may split the pixels. Measured on the 2-core Zen 5 (bench_ob_conv --mb=4, 5 runs
 * interleaved with one thread): res3a_1 (1x1 stride 2, 256 -> 512) BWD_DATA NHWC 0.80 -> 0.83 of
 * the sgemm bar; res3a_2a (256 -> 128) unchanged at 0.65, bound by writing dx (12.8 MB for 4
 * images, against a 1 ms GEMM). The OpenBLAS plugin now takes col2im_disjoint.c's one pass for
 * panels of whole images; this split remains for the others. */
static void col2im_nhwc_pixels(void *ctx, int64_t a, int64_t b, int tid) {
    const panel_job *jb = ctx;
    const kmux_conv2d_desc *d = jb->d;
    panel_job part = *jb;
    part.j0 = jb->j0 + a;
    part.j1 = jb->j0 + b;
    part.cw = jb->cw + a * d->r * d->s * (d->c / d->groups);
    col2im_nhwc_chans(&part, 0, d->c / d->groups, tid);
}

void kmux_cpu_col2im_panel_f32(const kmux_conv2d_desc *d, int64_t p, int64_t q, int64_t g,
                               float *col, int64_t j0, int64_t j1, float *x, int threads) {
    panel_job jb = {.d = d, .p = p, .q = q, .g = g, .j0 = j0, .j1 = j1, .xd = x, .cw = col};
    const int64_t cg = d->c / d->groups, per_chan = d->r * d->s * (j1 - j0);
    const int nhwc = d->layout == KMUX_NHWC;
    if (nhwc && kmux_cpu_col2im_disjoint(d)) {
        kmux_parallel_for_from(j1 - j0, d->r * d->s * cg, threads, 1, PANEL_PARALLEL_MIN,
                               col2im_nhwc_pixels, &jb);
        return;
    }
    /* Other NHWC runs on one thread: split by channels, each thread walks every pixel and tap for
     * a part of each run, which measured slower than one thread on 2 cores for C = 3..256 (the
     * additions are bound by memory, not by arithmetic), and no faster (0.95-1.03x) with the
     * helper kept off the caller's core; one thread also adds in runs of s * C floats
     * (nhwc_runs). */
    kmux_parallel_for_from(cg, per_chan, nhwc ? 1 : threads, nhwc ? 8 : 1, PANEL_PARALLEL_MIN,
                           nhwc ? col2im_nhwc_chans : col2im_nchw_chans, &jb);
}

void kmux_cpu_col2im_prescale_f32(float *x, int64_t n, float beta) {
    /* in IEEE mode, as the col2im kernels' worker ranges: a caller's flush-to-zero must not make
     * dx depend on which path the workspace allowed */
    const unsigned saved = kmux_cast_fp_enter();
    scale_beta_row(x, n, beta);
    kmux_cast_fp_leave(saved);
}
