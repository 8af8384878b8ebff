/*
 * ref_conv.c - reference 2-D convolution (cross-correlation), the three directions of kmux.h:
 *   FWD          y  = alpha * conv(x, w)    + beta * y
 *   BWD_DATA     dx = alpha * conv^T(dy, w) + beta * dx
 *   BWD_WEIGHTS  dw = alpha * corr(x, dy)   + beta * dw
 *
 * The two inputs of the direction are decoded exactly to double, one image at a time (the
 * weights whole), so the oracle holds one image of x and y as double, not the batch. One loop nest
 * walks the forward index space (n, k, p, q, c, r, s) and, for each tap inside the (padded) input,
 * accumulates the product of the two inputs into a double copy of the output: y[n,k,p,q] for FWD,
 * x[n,c,h,w] for BWD_DATA, w[k,c,r,s] for BWD_WEIGHTS. The three directions are therefore
 * exact adjoints of each other (up to the order of the double sums). The output is then
 * alpha * acc (+ beta * output when beta != 0, otherwise not read), then the forward's epilogue
 * (bias, ReLU/GELU, the ReLU's mask; kmux.h), rounded once (RNE).
 */
#include "ref_internal.h"
#include "ref_dtype.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>

#include "dispatch/common/cpu_finish.h"
#include "kmux_sys_alloc.h"

kmux_status kmux_ref_conv2d_plan_create(void *state, int device, const kmux_conv2d_desc *desc,
                                        const kmux_plan_prefs *prefs, void **plan,
                                        int *impl_count) {
    ref_plan *p = kmux_sys_calloc(1, sizeof *p);
    if (!p) return kmux_ref_oom(state, "kmux_conv2d_plan_create", sizeof *p);
    p->kind = REF_PLAN_CONV2D;
    p->cv = *desc;
    *plan = p;
    *impl_count = 1;
    return KMUX_OK;
}

/* Shape of a convolution with the output size and the index functions of its layout. */
typedef struct ref_cv_shape {
    const kmux_conv2d_desc *d;
    int64_t p, q, cg; /* output height, width; input channels per group */
} ref_cv_shape;

static int64_t ref_x_at(const ref_cv_shape *s, int64_t n, int64_t c, int64_t h, int64_t w) {
    const kmux_conv2d_desc *d = s->d;
    return d->layout == KMUX_NCHW ? ((n * d->c + c) * d->h + h) * d->w + w
                                  : ((n * d->h + h) * d->w + w) * d->c + c;
}

/* c is the channel within the group (0 <= c < C / groups). */
static int64_t ref_w_at(const ref_cv_shape *s, int64_t k, int64_t c, int64_t r, int64_t t) {
    const kmux_conv2d_desc *d = s->d;
    return d->layout == KMUX_NCHW ? ((k * s->cg + c) * d->r + r) * d->s + t
                                  : ((k * d->r + r) * d->s + t) * s->cg + c;
}

static int64_t ref_y_at(const ref_cv_shape *s, int64_t n, int64_t k, int64_t p, int64_t q) {
    const kmux_conv2d_desc *d = s->d;
    return d->layout == KMUX_NCHW ? ((n * d->k + k) * s->p + p) * s->q + q
                                  : ((n * s->p + p) * s->q + q) * d->k + k;
}

/* Decodes elements [first, first + n) of src into dst. */
static void ref_decode(double *dst, const void *src, kmux_dtype t, int64_t first, int64_t n) {
    for (int64_t i = 0; i < n; i++)
        dst[i] = kmux_ref_load(src, t, first + i);
}

/* Tensors as double: X, W, Y hold the inputs of the direction; acc the output being summed. */
typedef struct ref_cv_bufs {
    const double *x, *w, *y;
    double *acc;
} ref_cv_bufs;

/* All taps of output pixel (n, k, p, q). */
static void ref_cv_pixel(const ref_cv_shape *s, const ref_cv_bufs *b, int64_t n, int64_t k,
                         int64_t p, int64_t q) {
    const kmux_conv2d_desc *d = s->d;
    int64_t c0 = k / (d->k / d->groups) * s->cg; /* first input channel of k's group */
    int64_t yi = ref_y_at(s, n, k, p, q);
    for (int64_t c = 0; c < s->cg; c++)
        for (int64_t r = 0; r < d->r; r++) {
            int64_t h = p * d->stride_h - d->pad_top + r * d->dilation_h;
            if (h < 0 || h >= d->h) continue;
            for (int64_t t = 0; t < d->s; t++) {
                int64_t w = q * d->stride_w - d->pad_left + t * d->dilation_w;
                if (w < 0 || w >= d->w) continue;
                int64_t xi = ref_x_at(s, n, c0 + c, h, w);
                int64_t wi = ref_w_at(s, k, c, r, t);
                switch (d->direction) {
                case KMUX_CONV_FWD:
                    b->acc[yi] += b->x[xi] * b->w[wi];
                    break;
                case KMUX_CONV_BWD_DATA:
                    b->acc[xi] += b->y[yi] * b->w[wi];
                    break;
                default:
                    b->acc[wi] += b->x[xi] * b->y[yi];
                    break;
                }
            }
        }
}

/* A forward convolution's epilogue (kmux.h): bias, activation and the ReLU's mask, applied to
 * t = alpha * acc + beta * y before the one rounding. */
typedef struct ref_cv_epi {
    unsigned flags;
    const void *bias;
    kmux_dtype bias_type;
    uint8_t *mask;
    int64_t k, pq; /* the channel of element i of y: (i / pq) % k (NCHW) or i % k (NHWC) */
    int nhwc;
} ref_cv_epi;

static double ref_cv_epilogue(const ref_cv_epi *e, int64_t i, double t) {
    if (e->flags & KMUX_EPILOGUE_BIAS) {
        const int64_t ch = e->nhwc ? i % e->k : (i / e->pq) % e->k;
        t += kmux_ref_load(e->bias, e->bias_type, ch);
    }
    if (e->flags & KMUX_EPILOGUE_RELU_AUX) {
        if (t > 0.0)
            e->mask[i / 8] |= (uint8_t)(1u << (i % 8));
        else
            e->mask[i / 8] &= (uint8_t) ~(1u << (i % 8));
    }
    if ((e->flags & KMUX_EPILOGUE_RELU) && !(t > 0.0) && !isnan(t)) t = 0.0;
    if (e->flags & KMUX_EPILOGUE_GELU) t = kmux_gelu_tanh(t);
    return t;
}

/* One direction's output, per image or whole (BWD_WEIGHTS): out = alpha * acc + beta * out for
 * elements [first, first + count) of out, then the epilogue (e: forward only, else NULL). */
static void ref_cv_store(void *out, kmux_dtype t, int64_t first, int64_t count, const double *acc,
                         double alpha, double beta, const ref_cv_epi *e) {
    for (int64_t i = 0; i < count; i++) {
        double v = alpha * acc[i];
        if (beta != 0.0) v += beta * kmux_ref_load(out, t, first + i);
        if (e && e->flags) v = ref_cv_epilogue(e, first + i, v);
        kmux_ref_store(out, t, first + i, v, 0);
    }
}

kmux_status kmux_ref_conv2d_execute(void *state, const void *plan, int impl, void *stream,
                                    const kmux_conv2d_args *args) {
    const kmux_conv2d_desc *d = &((const ref_plan *)plan)->cv;
    ref_cv_shape s = {d, 0, 0, d->c / d->groups};
    s.p = kmux_conv2d_out_dim(d->h, d->pad_top, d->pad_bottom, d->r, d->dilation_h, d->stride_h);
    s.q = kmux_conv2d_out_dim(d->w, d->pad_left, d->pad_right, d->s, d->dilation_w, d->stride_w);
    /* Both layouts keep n outermost: one image of x or y is contiguous. The loops run image by
     * image (n outermost, as before), so only one image of x and y is held as double at a time
     * (bounded memory, same sums in the same order). */
    int64_t nx = d->c * d->h * d->w, nw = d->k * s.cg * d->r * d->s, ny = d->k * s.p * s.q;
    size_t bytes = (size_t)(nx + nw + ny) * sizeof(double);
    double *mem = kmux_sys_calloc((size_t)(nx + nw + ny), sizeof(double));
    if (!mem) return kmux_ref_oom(state, "kmux_conv2d_execute", bytes);
    double *dx = mem, *dw = mem + nx, *dy = mem + nx + nw;
    int f64 = d->compute_type == KMUX_COMPUTE_F64;
    double alpha = f64 ? *(const double *)args->alpha : (double)*(const float *)args->alpha;
    double beta = f64 ? *(const double *)args->beta : (double)*(const float *)args->beta;
    if (d->direction != KMUX_CONV_BWD_WEIGHTS) ref_decode(dw, args->w, d->w_type, 0, nw);
    ref_cv_bufs b = {dx, dw, dy, NULL};
    const ref_cv_epi epi = {d->epilogue, args->bias, d->bias_type,          args->aux,
                            d->k,        s.p * s.q,  d->layout == KMUX_NHWC};
    for (int64_t n = 0; n < d->n; n++) {
        switch (d->direction) {
        case KMUX_CONV_FWD:
            ref_decode(dx, args->x, d->x_type, n * nx, nx);
            for (int64_t i = 0; i < ny; i++)
                dy[i] = 0.0;
            b.acc = dy;
            break;
        case KMUX_CONV_BWD_DATA:
            ref_decode(dy, args->y, d->y_type, n * ny, ny);
            for (int64_t i = 0; i < nx; i++)
                dx[i] = 0.0;
            b.acc = dx;
            break;
        default:
            ref_decode(dx, args->x, d->x_type, n * nx, nx);
            ref_decode(dy, args->y, d->y_type, n * ny, ny);
            b.acc = dw; /* summed over every image */
            break;
        }
        for (int64_t k = 0; k < d->k; k++)
            for (int64_t p = 0; p < s.p; p++)
                for (int64_t q = 0; q < s.q; q++)
                    ref_cv_pixel(&s, &b, 0, k, p, q);
        if (d->direction == KMUX_CONV_FWD)
            ref_cv_store(args->y, d->y_type, n * ny, ny, dy, alpha, beta, &epi);
        else if (d->direction == KMUX_CONV_BWD_DATA)
            ref_cv_store(args->x, d->x_type, n * nx, nx, dx, alpha, beta, NULL);
    }
    if (d->direction == KMUX_CONV_BWD_WEIGHTS)
        ref_cv_store(args->w, d->w_type, 0, nw, dw, alpha, beta, NULL);
    free(mem);
    return KMUX_OK;
}
