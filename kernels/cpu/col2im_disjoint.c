/*
 * col2im_disjoint.c - the adjoint of im2col (BWD_DATA) in ONE pass over dx, for convolutions whose
 * taps never overlap: a stride at least the filter's extent in both dimensions (ResNet's strided
 * 1x1 layers). Each element of dx then receives at most one tap, so
 *   dx = beta * dx + the tap's column value (or + 0 where no tap reaches)
 * is written row by row: the row is scaled (or zeroed) and its taps are added while it is in L1.
 * The plain path zeroes (or scales) all of dx first and adds the columns after, a second pass over
 * dx, which the stride makes 4x larger than the columns: 12.8 MB for 4 images of ResNet-50's
 * res3a_branch2a against a 1 ms GEMM.
 * Rounding is that of the plain path, (beta * dx + 0.0f) + value, so the results are the same bit
 * for bit; with beta = 0 dx is not read (NaN there is dropped).
 * Rows are walked with running (output index, remainder) pairs, not divisions: three 64-bit
 * divisions per 56-float row or per pixel cost as much as the row's stores.
 * Non-temporal stores for beta = 0 (dx written once, never read) were measured on the 2-core Zen 5
 * and dropped: NHWC unchanged (0.76 of the sgemm bar both), NCHW slower, row by row (0.59 -> 0.54
 * in bench_ob_conv --mb=4) and with each plane put together in L1 first and streamed whole
 * (0.21 -> 0.23-0.29 ms per image of res3a_branch2a).
 * Threads: items are (image, channel) planes in NCHW and (image, row) rows in NHWC; each writes its
 * own elements of dx once, so the result does not depend on the thread count.
 */
#include "cast_internal.h"
#include "im2col_internal.h"

/* The filter widths this path takes (the output columns of each tap are kept per job) */
#define DISJOINT_MAX_S 64

/* Input index i = o * stride + rem - pad along one dimension, walked one index at a time. */
typedef struct walk {
    int64_t o, rem;
} walk;

static walk walk_at(int64_t i, int64_t pad, int64_t stride) {
    const int64_t t = i + pad; /* >= 0: i >= 0 and pad >= 0 */
    return (walk){.o = t / stride, .rem = t % stride};
}

static void walk_next(walk *w, int64_t stride) {
    if (++w->rem == stride) {
        w->rem = 0;
        w->o++;
    }
}

/* the tap (0 .. r-1) of dilation dil that reaches the walk's index, for output indices below p;
 * -1 when none does (unique because the stride is at least the extent) */
static int64_t walk_tap(const walk *w, int64_t dil, int64_t r, int64_t p) {
    if (w->o >= p) return -1;
    if (dil == 1) return w->rem < r ? w->rem : -1;
    return w->rem % dil == 0 && w->rem / dil < r ? w->rem / dil : -1;
}

/* x = beta * x + 0.0f over n floats (x = 0 for beta = 0, x not read), in the thread's current
 * floating-point mode: the worker ranges run in kmux's IEEE mode (kmux_cast_fp_enter) */
static void prescale(float *x, int64_t n, float beta) {
    if (beta == 0.0f) {
        memset(x, 0, (size_t)n * sizeof(float));
        return;
    }
    for (int64_t i = 0; i < n; i++)
        x[i] = beta * x[i] + 0.0f;
}

void kmux_cpu_col2im_prescale_f32(float *x, int64_t n, float beta) {
    /* in IEEE mode, as the one-pass path's worker ranges: a caller's flush-to-zero must not make
     * dx depend on which path the workspace allowed */
    const unsigned saved = kmux_cast_fp_enter();
    prescale(x, n, beta);
    kmux_cast_fp_leave(saved);
}

typedef struct disjoint_job {
    const kmux_conv2d_desc *d;
    int64_t p, q, g, img0, nj; /* the panel: images img0.., nj pixels */
    const float *col;
    float *x;
    float beta;
    int64_t q_lo[DISJOINT_MAX_S], q_hi[DISJOINT_MAX_S]; /* NCHW: tap si reaches output columns
                                                            [q_lo, q_hi) of the row */
} disjoint_job;

/* NCHW: planes [u0, u1), plane u = channel u % cg of image img0 + u / cg */
static void disjoint_nchw(void *ctx, int64_t u0, int64_t u1, int tid) {
    (void)tid;
    const disjoint_job *jb = ctx;
    const kmux_conv2d_desc *d = jb->d;
    const int64_t cg = d->c / d->groups, pq = jb->p * jb->q, sw = d->stride_w;
    const walk top = walk_at(0, d->pad_top, d->stride_h);
    for (int64_t u = u0; u < u1; u++) {
        const int64_t n = u / cg, ci = u % cg;
        float *row = jb->x + ((jb->img0 + n) * d->c + jb->g * cg + ci) * d->h * d->w;
        const float *src = jb->col + ci * d->r * d->s * jb->nj + n * pq;
        walk wh = top;
        for (int64_t h = 0; h < d->h; h++, row += d->w, walk_next(&wh, d->stride_h)) {
            prescale(row, d->w, jb->beta);
            const int64_t ri = walk_tap(&wh, d->dilation_h, d->r, jb->p);
            if (ri < 0) continue;
            for (int64_t si = 0; si < d->s; si++) {
                const int64_t lo = jb->q_lo[si], hi = jb->q_hi[si];
                if (hi <= lo) continue;
                /* input column of output column qi: qi * sw + si * dw - pad_left */
                float *dst = row + lo * sw + si * d->dilation_w - d->pad_left;
                scatter_add_row(dst, src + (ri * d->s + si) * jb->nj + wh.o * jb->q + lo, hi - lo,
                                sw);
            }
        }
    }
}

/* NHWC: rows [u0, u1), row u = input row u % h of image img0 + u / h; channels of group g */
static void disjoint_nhwc(void *ctx, int64_t u0, int64_t u1, int tid) {
    (void)tid;
    const disjoint_job *jb = ctx;
    const kmux_conv2d_desc *d = jb->d;
    const int64_t cg = d->c / d->groups, rsc = d->r * d->s * cg;
    const walk left = walk_at(0, d->pad_left, d->stride_w);
    int64_t n = u0 / d->h, h = u0 % d->h;
    walk wh = walk_at(h, d->pad_top, d->stride_h);
    for (int64_t u = u0; u < u1; u++) {
        float *row = jb->x + ((jb->img0 + n) * d->h + h) * d->w * d->c + jb->g * cg;
        if (d->groups == 1)
            prescale(row, d->w * d->c, jb->beta);
        else
            for (int64_t wi = 0; wi < d->w; wi++)
                prescale(row + wi * d->c, cg, jb->beta);
        const int64_t ri = walk_tap(&wh, d->dilation_h, d->r, jb->p);
        if (ri >= 0) {
            /* the column panel's row of output pixel (pi, qi) is (n * p + pi) * q + qi */
            const float *src = jb->col + (n * jb->p + wh.o) * jb->q * rsc + ri * d->s * cg;
            walk ww = left;
            for (int64_t wi = 0; wi < d->w; wi++, walk_next(&ww, d->stride_w)) {
                const int64_t si = walk_tap(&ww, d->dilation_w, d->s, jb->q);
                if (si >= 0) scatter_add_row(row + wi * d->c, src + ww.o * rsc + si * cg, cg, 1);
            }
        }
        if (++h == d->h) { /* the next image */
            h = 0;
            n++;
            wh = walk_at(0, d->pad_top, d->stride_h);
        } else {
            walk_next(&wh, d->stride_h);
        }
    }
}

int kmux_cpu_col2im_disjoint(const kmux_conv2d_desc *d) {
    return d->s <= DISJOINT_MAX_S && d->stride_h >= kmux_conv2d_extent(d->r, d->dilation_h) &&
           d->stride_w >= kmux_conv2d_extent(d->s, d->dilation_w);
}

int kmux_cpu_col2im_panel_disjoint_f32(const kmux_conv2d_desc *d, int64_t p, int64_t q, int64_t g,
                                       const float *col, int64_t j0, int64_t j1, float *x,
                                       float beta, int threads) {
    const int64_t pq = p * q;
    if (!kmux_cpu_col2im_disjoint(d) || j0 % pq != 0 || j1 % pq != 0 || j1 <= j0) return 0;
    disjoint_job jb = {.d = d,
                       .p = p,
                       .q = q,
                       .g = g,
                       .img0 = j0 / pq,
                       .nj = j1 - j0,
                       .col = col,
                       .x = x,
                       .beta = beta};
    for (int64_t si = 0; si < d->s; si++) {
        /* output columns qi whose input column qi * sw + off lies in [0, w) */
        const int64_t off = si * d->dilation_w - d->pad_left, sw = d->stride_w;
        int64_t lo = off >= 0 ? 0 : (-off + sw - 1) / sw;
        int64_t hi = off >= d->w ? 0 : (d->w - 1 - off) / sw + 1;
        jb.q_lo[si] = lo;
        jb.q_hi[si] = hi < q ? hi : q;
    }
    const int64_t images = (j1 - j0) / pq, cg = d->c / d->groups;
    if (d->layout == KMUX_NHWC)
        kmux_parallel_for_from(images * d->h, d->w * cg, threads, 1, PANEL_PARALLEL_MIN,
                               disjoint_nhwc, &jb);
    else
        kmux_parallel_for_from(images * cg, d->h * d->w, threads, 1, PANEL_PARALLEL_MIN,
                               disjoint_nchw, &jb);
    return 1;
}
