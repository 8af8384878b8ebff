/*
 * im2col.c - lowering of one image of a 2-D convolution to a column matrix for GEMM, and its
 * adjoint col2im, for NCHW and NHWC, groups, strides, asymmetric padding and dilation.
 * The matrix layouts are documented in kmux_cpu_kernels.h. Arguments are trusted.
 *
 * NCHW works per filter tap (ci, ri, si): one output row of P x Q values read from one input
 * plane, with the valid range of qi computed once so that the inner loop has no bounds test
 * (a memcpy when stride_w == 1). NHWC works per output pixel and tap: Cg contiguous channels.
 */
#include "im2col_internal.h" /* valid_q */

#include <string.h>

static void im2col_nchw(const kmux_conv2d_desc *d, int64_t p, int64_t q, int64_t g, const float *x,
                        float *col) {
    const int64_t cg = d->c / d->groups, pq = p * q, hw = d->h * d->w;
    for (int64_t ci = 0; ci < cg; ci++) {
        const float *plane = x + (g * cg + ci) * hw;
        for (int64_t ri = 0; ri < d->r; ri++) {
            for (int64_t si = 0; si < d->s; si++) {
                float *row = col + ((ci * d->r + ri) * d->s + si) * pq;
                const int64_t off_w = si * d->dilation_w - d->pad_left;
                int64_t q0, q1;
                valid_q(q, d->w, d->stride_w, off_w, &q0, &q1);
                for (int64_t pi = 0; pi < p; pi++) {
                    float *dst = row + pi * q;
                    const int64_t hi = pi * d->stride_h - d->pad_top + ri * d->dilation_h;
                    if (hi < 0 || hi >= d->h || q0 == q1) {
                        memset(dst, 0, (size_t)q * sizeof(float));
                        continue;
                    }
                    /* index arithmetic: plane + off_w alone may point before the plane */
                    const int64_t base = hi * d->w + off_w;
                    memset(dst, 0, (size_t)q0 * sizeof(float));
                    if (d->stride_w == 1) {
                        memcpy(dst + q0, plane + (base + q0), (size_t)(q1 - q0) * sizeof(float));
                    } else {
                        for (int64_t qi = q0; qi < q1; qi++)
                            dst[qi] = plane[base + qi * d->stride_w];
                    }
                    memset(dst + q1, 0, (size_t)(q - q1) * sizeof(float));
                }
            }
        }
    }
}

static void col2im_nchw(const kmux_conv2d_desc *d, int64_t p, int64_t q, int64_t g,
                        const float *col, float *x) {
    const int64_t cg = d->c / d->groups, pq = p * q, hw = d->h * d->w;
    for (int64_t ci = 0; ci < cg; ci++) {
        float *plane = x + (g * cg + ci) * hw;
        for (int64_t ri = 0; ri < d->r; ri++) {
            for (int64_t si = 0; si < d->s; si++) {
                const float *row = col + ((ci * d->r + ri) * d->s + si) * pq;
                const int64_t off_w = si * d->dilation_w - d->pad_left;
                int64_t q0, q1;
                valid_q(q, d->w, d->stride_w, off_w, &q0, &q1);
                for (int64_t pi = 0; pi < p; pi++) {
                    const int64_t hi = pi * d->stride_h - d->pad_top + ri * d->dilation_h;
                    if (hi < 0 || hi >= d->h) continue;
                    const float *src = row + pi * q;
                    const int64_t base = hi * d->w + off_w;
                    for (int64_t qi = q0; qi < q1; qi++)
                        plane[base + qi * d->stride_w] += src[qi];
                }
            }
        }
    }
}

static void im2col_nhwc(const kmux_conv2d_desc *d, int64_t p, int64_t q, int64_t g, const float *x,
                        float *col) {
    const int64_t cg = d->c / d->groups, rsc = d->r * d->s * cg;
    for (int64_t pi = 0; pi < p; pi++) {
        for (int64_t qi = 0; qi < q; qi++) {
            float *dst = col + (pi * q + qi) * rsc;
            for (int64_t ri = 0; ri < d->r; ri++) {
                const int64_t hi = pi * d->stride_h - d->pad_top + ri * d->dilation_h;
                for (int64_t si = 0; si < d->s; si++) {
                    const int64_t wi = qi * d->stride_w - d->pad_left + si * d->dilation_w;
                    float *t = dst + (ri * d->s + si) * cg;
                    const int inside = hi >= 0 && hi < d->h && wi >= 0 && wi < d->w;
                    if (cg == 1) /* depthwise: no library call per element */
                        *t = inside ? x[(hi * d->w + wi) * d->c + g] : 0.0f;
                    else if (inside)
                        memcpy(t, x + (hi * d->w + wi) * d->c + g * cg, (size_t)cg * sizeof(float));
                    else
                        memset(t, 0, (size_t)cg * sizeof(float));
                }
            }
        }
    }
}

static void col2im_nhwc(const kmux_conv2d_desc *d, int64_t p, int64_t q, int64_t g,
                        const float *col, float *x) {
    const int64_t cg = d->c / d->groups, rsc = d->r * d->s * cg;
    for (int64_t pi = 0; pi < p; pi++) {
        for (int64_t qi = 0; qi < q; qi++) {
            const float *src = col + (pi * q + qi) * rsc;
            for (int64_t ri = 0; ri < d->r; ri++) {
                const int64_t hi = pi * d->stride_h - d->pad_top + ri * d->dilation_h;
                if (hi < 0 || hi >= d->h) continue;
                for (int64_t si = 0; si < d->s; si++) {
                    const int64_t wi = qi * d->stride_w - d->pad_left + si * d->dilation_w;
                    if (wi < 0 || wi >= d->w) continue;
                    const float *t = src + (ri * d->s + si) * cg;
                    float *dst = x + (hi * d->w + wi) * d->c + g * cg;
                    for (int64_t ci = 0; ci < cg; ci++)
                        dst[ci] += t[ci];
                }
            }
        }
    }
}

void kmux_cpu_im2col_f32(const kmux_conv2d_desc *d, int64_t p, int64_t q, int64_t g, const float *x,
                         float *col) {
    if (d->layout == KMUX_NHWC)
        im2col_nhwc(d, p, q, g, x, col);
    else
        im2col_nchw(d, p, q, g, x, col);
}

void kmux_cpu_col2im_f32(const kmux_conv2d_desc *d, int64_t p, int64_t q, int64_t g,
                         const float *col, float *x) {
    if (d->layout == KMUX_NHWC)
        col2im_nhwc(d, p, q, g, col, x);
    else
        col2im_nchw(d, p, q, g, col, x);
}
