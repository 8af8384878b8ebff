/*
 * kmux_gpu_conv_params.h - the argument struct of kmux_gpu_conv.cu's conv_kernel and the host
 * logic that fills it and sizes its grid (a launch description), shared by host C and device
 * code so that a module launch (the HIP plugin: hipModuleLaunchKernel with the struct by value in
 * kernelParams) and the <<<>>> launcher of kmux_gpu_conv.cu agree on layout and values.
 */
#ifndef KMUX_GPU_CONV_PARAMS_H
#define KMUX_GPU_CONV_PARAMS_H

#include <stdint.h>

#include "kmux.h"
#include "kmux_common.h"

/** Arguments of conv_kernel (semantics: kmux_gpu_conv.cu). */
typedef struct kmux_gpu_conv_params {
    int64_t n, c, h, w, k, r, s, p, q, cg, kg, groups;
    int64_t sh, sw, pt, pl, dh, dw;
    int nhwc;
    const void *x, *wt, *y; /* inputs of the direction (the output's pointer is `out`) */
    void *out;
    kmux_dtype out_type;
    double alpha, beta;
    int skip, read_out;
} kmux_gpu_conv_params;

/** Fills *p for description d and arguments a (kmux_gpu_conv2d does exactly this before it
 *  launches). */
static inline void kmux_gpu_conv_params_fill(kmux_gpu_conv_params *p, const kmux_conv2d_desc *d,
                                             const kmux_conv2d_args *a) {
    p->n = d->n, p->c = d->c, p->h = d->h, p->w = d->w, p->k = d->k, p->r = d->r, p->s = d->s;
    p->groups = d->groups, p->cg = d->c / d->groups, p->kg = d->k / d->groups;
    p->sh = d->stride_h, p->sw = d->stride_w, p->pt = d->pad_top, p->pl = d->pad_left;
    p->dh = d->dilation_h, p->dw = d->dilation_w;
    p->p = kmux_conv2d_out_dim(d->h, d->pad_top, d->pad_bottom, d->r, d->dilation_h, d->stride_h);
    p->q = kmux_conv2d_out_dim(d->w, d->pad_left, d->pad_right, d->s, d->dilation_w, d->stride_w);
    p->nhwc = d->layout == KMUX_NHWC;
    p->x = a->x, p->wt = a->w, p->y = a->y;
    switch (d->direction) {
    case KMUX_CONV_FWD:
        p->out = a->y, p->out_type = d->y_type;
        break;
    case KMUX_CONV_BWD_DATA:
        p->out = a->x, p->out_type = d->x_type;
        break;
    default:
        p->out = a->w, p->out_type = d->w_type;
        break;
    }
    const int f64 = d->compute_type == KMUX_COMPUTE_F64;
    p->alpha = f64 ? *(const double *)a->alpha : (double)*(const float *)a->alpha;
    p->beta = f64 ? *(const double *)a->beta : (double)*(const float *)a->beta;
    p->skip = p->alpha == 0.0;
    p->read_out = p->beta != 0.0;
}

/** GEMM sizes (m, n, k) of the implicit GEMM of direction dir (kmux_gpu_conv.cu's gemm_dims). */
static inline void kmux_gpu_conv_gemm_dims(const kmux_gpu_conv_params *p, int dir, int64_t *m,
                                           int64_t *n, int64_t *k) {
    if (dir == KMUX_CONV_FWD) {
        *m = p->n * p->p * p->q, *n = p->kg, *k = p->cg * p->r * p->s;
    } else if (dir == KMUX_CONV_BWD_DATA) {
        *m = p->n * p->h * p->w, *n = p->cg, *k = p->kg * p->r * p->s;
    } else {
        *m = p->kg, *n = p->cg * p->r * p->s, *k = p->n * p->p * p->q;
    }
}

#endif
