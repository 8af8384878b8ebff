/*
 * openblas_conv2d_rows.c - convolutions of vertical stride 1 lowered by rows: the im2col of only
 * the filter's WIDTH, then one sgemm per filter row on a shifted range of pixels (the semantics
 * of kmux.h; the plan chooses this path in openblas_conv2d.c), NCHW and NHWC.
 *
 * The row lowering of image n, group g, is the column matrix of the 1 x S convolution with the
 * same horizontal geometry (kmux_cpu_im2col_panel_f32 on that descriptor, whose output height is
 * H): "low" has one pixel per input row and output column, hi*Q + qi, and Cg*S taps, holding
 * x[ci, hi, qi*stride_w + si*dilation_w - pad_left] (0 in the padding); NCHW stores it (Cg*S) x
 * (H*Q), tap ci*S + si, NHWC (H*Q) x (S*Cg), tap si*Cg + ci. With stride_h = 1, output row pi
 * reads input row hi = pi + ri*dilation_h - pad_top through filter row ri, so for each ri the
 * valid output rows [p0, p0 + rows) read the consecutive input rows [hi0, hi0 + rows): their
 * pixels [p0*Q, (p0 + rows)*Q) of y are ONE shifted range [hi0*Q, ..) of low's. With W_r the
 * filter row ri, Kg x (taps) (NCHW: repacked from KCRS into wr; NHWC: in place in KRSC at leading
 * dimension R*S*Cg), group g of image n, in NCHW terms (NHWC runs the transposed products):
 *   FWD          y[:, p0*Q ..]      (+)= alpha * W_r low[:, hi0*Q ..]           one sgemm per ri
 *   BWD_DATA     low[:, hi0*Q ..]   (+)= alpha * W_r^T dy[:, p0*Q ..];  then the col2im of the
 *                                        1 x S convolution adds low into dx (prescaled by beta)
 *   BWD_WEIGHTS  dW_r               +=  alpha * dy[:, p0*Q ..] low[:, hi0*Q ..]^T over the batch;
 *                                        NCHW sums into wr, then dW = beta * dW + wr (to KCRS);
 *                                        NHWC into dW itself, beta on the first image
 * The first sgemm of FWD (BWD_DATA) is that of a filter row that reaches every output row (every
 * input row), with the caller's beta (beta 0) and the others add; without such a row y is scaled
 * by beta (low zeroed) first.
 *
 * Why: im2col writes Cg*R*S*P*Q floats per image that sgemm then reads once; this writes R times
 * fewer (Cg*S*H*Q), which sgemm reads R times while they are still in cache (the measurements
 * are at the top of openblas_conv2d.c).
 *
 * Determinism: the order of the sgemm calls and of col2im's additions depends only on the shape.
 */
#include "openblas_internal.h"

#include <cblas.h>
#include <string.h>

#include "kernels/cpu/kmux_cpu_kernels.h"

/* The descriptor of the 1 x S convolution whose column matrix is the row lowering: the same
 * horizontal geometry and channels, one filter row, no vertical padding (output height = H). */
static kmux_conv2d_desc row_desc(const kmux_conv2d_desc *d) {
    kmux_conv2d_desc d1 = *d;
    d1.r = 1;
    d1.stride_h = 1;
    d1.dilation_h = 1;
    d1.pad_top = d1.pad_bottom = 0;
    return d1;
}

/* With stride_h = 1 and p output rows: the output rows [*p0, *p0 + rows) that filter row ri
 * reaches, reading the input rows from *hi0 on; returns rows (0: ri lies in the padding for every
 * output row). */
static int64_t tap_rows(const kmux_conv2d_desc *d, int64_t p, int64_t ri, int64_t *p0,
                        int64_t *hi0) {
    const int64_t off = ri * d->dilation_h - d->pad_top; /* input row = output row + off */
    const int64_t begin = off < 0 ? -off : 0, end = d->h - off < p ? d->h - off : p;
    *p0 = begin;
    *hi0 = begin + off;
    return end > begin ? end - begin : 0;
}

/* The lowest filter row that reaches every output row (FWD; BWD_WEIGHTS too, where it only
 * orders the sgemm calls) or every input row (BWD_DATA), or -1. */
static int64_t full_row(const kmux_conv2d_desc *d, int64_t p) {
    for (int64_t ri = 0; ri < d->r; ri++) {
        int64_t p0, hi0;
        const int64_t rows = tap_rows(d, p, ri, &p0, &hi0);
        const int full =
            d->direction == KMUX_CONV_BWD_DATA ? hi0 == 0 && rows == d->h : p0 == 0 && rows == p;
        if (full) return ri;
    }
    return -1;
}

/* wr[ri][k][ci*S + si] = W_g[k][(ci*R + ri)*S + si] (to_kcrs = 0), or the way back into the
 * filter gradient: W_g = beta * W_g + wr (beta = 0: W_g is not read). */
static void repack(float *wg, float *wr, int64_t kg, int64_t cg, int64_t r, int64_t s, int to_kcrs,
                   float beta) {
    const int64_t cgs = cg * s;
    for (int64_t ri = 0; ri < r; ri++)
        for (int64_t k = 0; k < kg; k++)
            for (int64_t ci = 0; ci < cg; ci++) {
                float *f = wg + (k * cg + ci) * r * s + ri * s;
                float *o = wr + (ri * kg + k) * cgs + ci * s;
                for (int64_t si = 0; si < s; si++) {
                    if (!to_kcrs)
                        o[si] = f[si];
                    else
                        f[si] = beta == 0.0f ? o[si] : beta * f[si] + o[si];
                }
            }
}

size_t kmux_ob_conv_rows_floats(const kmux_conv2d_desc *d, int64_t q, size_t *wr_floats) {
    const int64_t cg = d->c / d->groups;
    const int64_t taps = cg * d->s, pixels = d->h * q; /* each < 2^62: sizes are < 2^31 */
    int64_t low;
    *wr_floats = d->layout == KMUX_NCHW ? (size_t)(d->k / d->groups * cg * d->r * d->s) : 0;
    return __builtin_mul_overflow(taps, pixels, &low) ? SIZE_MAX : (size_t)low;
}

void kmux_ob_conv_rows_f32(const kmux_conv2d_desc *d, int64_t p, int64_t q, float alpha, float beta,
                           float *x, float *w, float *y, float *low, float *wr, int threads) {
    const kmux_conv2d_desc d1 = row_desc(d);
    const int nchw = d->layout == KMUX_NCHW;
    const int64_t cg = d->c / d->groups, kg = d->k / d->groups, cgs = cg * d->s;
    const int64_t pq = p * q, hq = d->h * q, y_img = d->k * pq;
    const int64_t w_grp = kg * cg * d->r * d->s, wr_row = kg * cgs;
    /* steps of one output row in y (dy), of one input row in low, and leading dimensions; NHWC
     * reads W_r in place (KRSC: filter row ri of group g is Kg x (S*Cg) at ld R*S*Cg) */
    const int64_t y_row = nchw ? q : q * d->k, low_row = nchw ? q : q * cgs;
    const int64_t ldy = nchw ? pq : d->k, ldl = nchw ? hq : cgs;
    const int64_t ldw = nchw ? cgs : d->r * cgs, w_row = nchw ? wr_row : cgs;
    const int64_t full = full_row(d, p);
    if (d->direction == KMUX_CONV_BWD_DATA)
        kmux_cpu_col2im_prescale_f32(x, d->n * d->c * d->h * d->w, beta);
    if (d->direction == KMUX_CONV_FWD && full < 0)
        kmux_cpu_col2im_prescale_f32(y, d->n * y_img, beta);

    for (int64_t g = 0; g < d->groups; g++) {
        float *wg = w + g * w_grp, *wsrc = nchw ? wr : wg;
        if (nchw && d->direction == KMUX_CONV_BWD_WEIGHTS)
            memset(wr, 0, (size_t)(d->r * wr_row) * sizeof(float));
        else if (nchw)
            repack(wg, wr, kg, cg, d->r, d->s, 0, 0.0f);
        for (int64_t n = 0; n < d->n; n++) {
            float *yg = y + n * y_img + g * kg * (nchw ? pq : 1); /* image n, group g */
            if (d->direction != KMUX_CONV_BWD_DATA)
                kmux_cpu_im2col_panel_f32(&d1, d->h, q, g, x, n * hq, (n + 1) * hq, low, NULL,
                                          threads);
            else if (full < 0)
                memset(low, 0, (size_t)(cgs * hq) * sizeof(float));
            /* the full filter row first (it sets y or low), then the others add */
            for (int64_t i = 0; i < d->r; i++) {
                const int64_t ri = full < 0 ? i : i == 0 ? full : i <= full ? i - 1 : i;
                int64_t p0, hi0;
                const int64_t rows = tap_rows(d, p, ri, &p0, &hi0), m = rows * q;
                float *wri = wsrc + ri * w_row, *lo = low + hi0 * low_row, *yo = yg + p0 * y_row;
                if (rows == 0) { /* NHWC dW_r = beta * dW_r, as alpha * 0 + beta * dW_r rounds */
                    if (!nchw && d->direction == KMUX_CONV_BWD_WEIGHTS && n == 0)
                        for (int64_t k = 0; k < kg; k++)
                            kmux_cpu_col2im_prescale_f32(wri + k * ldw, cgs, beta);
                    continue;
                }
                /* FWD, BWD_DATA: the full filter row sets y (beta) or low (0), the others add;
                 * BWD_WEIGHTS: NCHW adds into wr, NHWC into dW_r (beta on the first image) */
                const float out_beta = d->direction == KMUX_CONV_BWD_WEIGHTS
                                           ? (nchw || n > 0 ? 1.0f : beta)
                                       : ri != full                    ? 1.0f
                                       : d->direction == KMUX_CONV_FWD ? beta
                                                                       : 0.0f;
                kmux_ob_conv_gemm(d->direction, nchw, m, kg, cgs, alpha, wri, ldw, lo, ldl, yo, ldy,
                                  out_beta);
            }
            if (d->direction == KMUX_CONV_BWD_DATA)
                kmux_cpu_col2im_panel_f32(&d1, d->h, q, g, low, n * hq, (n + 1) * hq, x, threads);
        }
        if (nchw && d->direction == KMUX_CONV_BWD_WEIGHTS)
            repack(wg, wr, kg, cg, d->r, d->s, 1, beta);
    }
}
