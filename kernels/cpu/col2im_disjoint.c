/*
 * col2im_disjoint.c - the adjoint of im2col (BWD_DATA) in ONE pass over dx, for convolutions whose
 * taps never overlap: a stride at least the filter's extent in both dimensions (ResNet's strided
 * 1x1 layers). Each element of dx then receives at most one tap, so
 *   dx = beta * dx + the tap's column value (or + 0 where no tap reaches)
 * is written in one sweep: NHWC row by row, the row scaled (or zeroed) and its taps added while it
 * is in L1; NCHW plane by plane, likewise (with beta = 0 and one group, the thread's planes zeroed
 * by one memset first, disjoint_nchw).
 * The plain path zeroes (or scales) all of dx first and adds the columns after, a second pass over
 * dx, which the stride makes 4x larger than the columns: 12.8 MB for 4 images of ResNet-50's
 * res3a_branch2a against a 1 ms GEMM.
 * Rounding is that of the plain path, (beta * dx + 0.0f) + value (scale_beta_row, then
 * scatter_add_row), so the results are the same bit for bit; with beta = 0 dx is not read (NaN
 * there is dropped).
 * Measured on the 2-core Zen 5 (bench_ob_conv --mb=4, 4-5 runs interleaved with the build before,
 * ratios to the sgemm bar): res3a_2a (1x1 s2, 256 -> 128) NHWC 0.62-0.64 -> 0.72-0.76, res3a_1
 * (256 -> 512) NHWC 0.81 -> 0.88, NCHW 0.78 -> 0.80; res3a_2a NCHW unchanged at 0.59-0.61.
 * Non-temporal stores for beta = 0 (dx written once, never read) were measured on the 2-core Zen 5
 * and dropped: NHWC unchanged (0.76 of the sgemm bar both), NCHW slower, row by row (0.59 -> 0.54
 * in bench_ob_conv --mb=4) and with each plane put together in L1 first and streamed whole
 * (0.21 -> 0.23-0.29 ms per image of res3a_branch2a).
 * Threads: items are (image, channel) planes in NCHW and (image, row) rows in NHWC; each writes its
 * own elements of dx once, so the result does not depend on the thread count. NCHW panels (one
 * image each for ResNet's 28x28 outputs) run on HALF the backend's threads: measured on the 2-core
 * Zen 5 (a /tmp harness of sgemm + this col2im per image of res3a_branch2a, 4 images, 41
 * interleaved rounds, three runs), one thread took 0.62-0.71 ms against 0.97-1.21 ms for two
 * (0.51-0.60 -> 0.59-0.72 of the sgemm rate), with OpenBLAS's idle workers spinning for their
 * default time or for almost none (OPENBLAS_THREAD_TIMEOUT=4) alike (bench_ob_conv:
 * backends/openblas/openblas_conv2d.c). NHWC panels (the batch's images) keep every thread: one
 * thread was faster in that harness on panels of one image (0.47-0.49 against 0.77-1.01 ms), but
 * equal in bench_ob_conv (0.77 against 0.78, 3 runs). Wider machines are not measured.
 */
#include "cast_internal.h"
#include "im2col_internal.h"

/* input index i (row or column) -> the tap that reaches it (*tap, 0 .. r-1) and its output
 * index (*o, 0 .. p-1); 0 when none does. Unique because the stride is at least the extent. */
static int tap_of(int64_t i, int64_t pad, int64_t stride, int64_t dil, int64_t r, int64_t p,
                  int64_t *tap, int64_t *o) {
    const int64_t t = i + pad; /* >= 0: validated pads are >= 0 */
    const int64_t oi = t / stride, rem = t - oi * stride;
    if (oi >= p || rem % dil != 0 || rem / dil >= r) return 0;
    *tap = rem / dil;
    *o = oi;
    return 1;
}

typedef struct disjoint_job {
    const kmux_conv2d_desc *d;
    int64_t p, q, g, img0, nj; /* the panel: images img0.., nj pixels */
    const float *col;
    float *x;
    float beta;
} disjoint_job;

/* NCHW: planes [u0, u1), plane u = channel u % cg of image img0 + u / cg. Each plane is scaled
 * (x = beta * x + 0.0f, scale_beta_row), then its taps are added tap by tap (distinct taps reach
 * distinct elements). With beta = 0 and one group the range's planes are consecutive in x and are
 * zeroed by ONE memset first (for ResNet's strided 1x1 layers 3/4 of dx stays 0). Measured on the
 * 2-core Zen 5 (a /tmp harness of sgemm + col2im per image against the batch's sgemm,
 * res3a_branch2a, 4 images, one thread, 41 interleaved rounds, two runs): 0.47-0.50 ms for the
 * rows written one by one with their taps, 0.39-0.40 ms zeroed first; 0.66 -> 0.71-0.72 of the
 * sgemm rate. */
static void disjoint_nchw(void *ctx, int64_t u0, int64_t u1, int tid) {
    (void)tid;
    const disjoint_job *jb = ctx;
    const kmux_conv2d_desc *d = jb->d;
    const int64_t cg = d->c / d->groups, pq = jb->p * jb->q, sw = d->stride_w, hw = d->h * d->w;
    const int zeroed = jb->beta == 0.0f && d->groups == 1;
    if (zeroed) scale_beta_row(jb->x + (jb->img0 * d->c + u0) * hw, (u1 - u0) * hw, 0.0f);
    for (int64_t u = u0; u < u1; u++) {
        const int64_t n = u / cg, ci = u % cg;
        float *plane = jb->x + ((jb->img0 + n) * d->c + jb->g * cg + ci) * hw;
        if (!zeroed) scale_beta_row(plane, hw, jb->beta);
        for (int64_t ri = 0; ri < d->r; ri++)
            for (int64_t si = 0; si < d->s; si++) {
                const int64_t off = si * d->dilation_w - d->pad_left;
                int64_t lo, hi, p0, p1; /* output columns and rows whose tap lies in x */
                valid_q(jb->q, d->w, sw, off, &lo, &hi);
                valid_q(jb->p, d->h, d->stride_h, ri * d->dilation_h - d->pad_top, &p0, &p1);
                if (hi <= lo) continue;
                const float *src = jb->col + ((ci * d->r + ri) * d->s + si) * jb->nj + n * pq;
                for (int64_t pi = p0; pi < p1; pi++) {
                    const int64_t h = pi * d->stride_h + ri * d->dilation_h - d->pad_top;
                    scatter_add_row(plane + h * d->w + lo * sw + off, src + pi * jb->q + lo,
                                    hi - lo, sw);
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
    for (int64_t u = u0; u < u1; u++) {
        const int64_t n = u / d->h, h = u % d->h;
        float *row = jb->x + ((jb->img0 + n) * d->h + h) * d->w * d->c + jb->g * cg;
        if (d->groups == 1)
            scale_beta_row(row, d->w * d->c, jb->beta);
        else
            for (int64_t wi = 0; wi < d->w; wi++)
                scale_beta_row(row + wi * d->c, cg, jb->beta);
        int64_t ri, pi;
        if (!tap_of(h, d->pad_top, d->stride_h, d->dilation_h, d->r, jb->p, &ri, &pi)) continue;
        /* the column panel's row of output pixel (pi, qi) is (n * p + pi) * q + qi */
        const float *src = jb->col + (n * jb->p + pi) * jb->q * rsc + ri * d->s * cg;
        for (int64_t wi = 0; wi < d->w; wi++) {
            int64_t si, qi;
            if (tap_of(wi, d->pad_left, d->stride_w, d->dilation_w, d->s, jb->q, &si, &qi))
                scatter_add_row(row + wi * d->c, src + qi * rsc + si * cg, cg, 1);
        }
    }
}

int kmux_cpu_col2im_disjoint(const kmux_conv2d_desc *d) {
    return d->stride_h >= kmux_conv2d_extent(d->r, d->dilation_h) &&
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
    const int64_t images = (j1 - j0) / pq, cg = d->c / d->groups;
    const int half = threads > 1 ? threads / 2 : 1; /* NCHW: see the top of the file */
    if (d->layout == KMUX_NHWC)
        kmux_parallel_for_from(images * d->h, d->w * cg, threads, 1, PANEL_PARALLEL_MIN,
                               disjoint_nhwc, &jb);
    else
        kmux_parallel_for_from(images * cg, d->h * d->w, half, 1, PANEL_PARALLEL_MIN, disjoint_nchw,
                               &jb);
    return 1;
}
