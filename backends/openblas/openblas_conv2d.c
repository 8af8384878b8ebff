/*
 * openblas_conv2d.c - 2-D convolution plans of the OpenBLAS backend: im2col (kernels/cpu) and
 * cblas_sgemm, per group, for the three directions and both layouts (semantics of kmux.h).
 *
 * With Cg = C/groups, Kg = K/groups, CRSg = Cg*R*S, PQ = P*Q and the column matrix `col` of
 * kmux_cpu_im2col_f32 (NCHW: CRSg x PQ; NHWC: PQ x CRSg), for group g of each image:
 *   FWD          NCHW  y_g  = alpha * W_g col            + beta * y_g
 *                NHWC  y_g  = alpha * col W_g^T          + beta * y_g
 *   BWD_DATA     NCHW  col  = W_g^T dy_g;  dx = beta * dx, then col2im adds alpha * col
 *                NHWC  col  = dy_g W_g
 *   BWD_WEIGHTS  NCHW  dW_g = alpha * sum_n dy_g col^T   + beta * dW_g
 *                NHWC  dW_g = alpha * sum_n dy_g^T col   + beta * dW_g
 * W_g is rows [g*Kg, (g+1)*Kg) of the filter, a Kg x CRSg row-major matrix in both KCRS and KRSC.
 * In NHWC the output rows of consecutive images are consecutive, so several images share one
 * GEMM (M = images * PQ), which keeps GEMMs large when P*Q is small (late ResNet layers).
 *
 * A 1x1 filter with stride 1 and no padding needs no im2col: the input IS the column matrix
 * (NCHW: x_g is Cg x HW; NHWC: x_g is (N*HW) x Cg with leading dimension C). Such plans offer
 * "openblas:sgemm(1x1)" first and "openblas:im2col+sgemm" as the next implementation.
 *
 * Every GEMM dimension (C, K, P*Q, H*W, C/groups*R*S) fits OpenBLAS's 32-bit blasint because
 * the device's capabilities limit sizes and tensor elements to 2^31 - 1 (openblas_backend.c).
 *
 * f16/bf16 tensors run only with prefs->allow_emulation: they are widened exactly to f32 copies
 * ("+cvt"), convolved in f32 and rounded once to the tensor type.
 *
 * Determinism: sgemm is deterministic (see openblas_matmul.c) and col2im adds in a fixed order.
 */
#include "openblas_internal.h"

#include <cblas.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/cpu/kmux_cpu_kernels.h"

/* target size of one NHWC GEMM's M (images * PQ) and cap of the column workspace */
#define CV_TARGET_ROWS 1024
#define CV_COL_CAP ((size_t)32 << 20)

typedef struct cv_plan {
    kmux_ob_plan head; /* must be first */
    kmux_conv2d_desc d;
    int64_t p, q;
    int cvt;    /* tensors are f16/bf16, widened to f32 copies */
    int direct; /* this implementation skips im2col */
    int64_t nb; /* images per GEMM (NHWC); 1 for NCHW */
    size_t ws_col, ws_x, ws_w, ws_y, max_ws;
} cv_plan;

/* A plan: its implementations, all prepared at creation (1x1 plans: direct, then im2col). */
typedef struct cv_set {
    cv_plan impl[2];
    int count;
} cv_set;

static size_t align64(size_t b) {
    return (b + 63) & ~(size_t)63;
}

static kmux_status unsupported(kmux_ob_state *st, const kmux_conv2d_desc *d, const char *why) {
    return KMUX_OB_ERROR(st, KMUX_ERR_UNSUPPORTED,
                         "kmux_conv2d_plan_create: backend openblas cannot run a %s convolution "
                         "with compute=%s: %s",
                         kmux_common_dtype_name(d->x_type),
                         kmux_common_compute_type_name(d->compute_type), why);
}

/* Chooses the images per GEMM and the workspace for the current implementation; 0 when it does
 * not fit into max_ws. */
static int size_workspace(cv_plan *pl) {
    const kmux_conv2d_desc *d = &pl->d;
    const int64_t pq = pl->p * pl->q, crsg = d->c / d->groups * d->r * d->s;
    const size_t col_img = (size_t)(pq * crsg) * sizeof(float);
    const size_t fixed = align64(pl->ws_x) + align64(pl->ws_y) + align64(pl->ws_w);
    int64_t nb = 1;
    if (d->layout == KMUX_NHWC) {
        if (pl->direct) {
            nb = d->n;
        } else {
            nb = (CV_TARGET_ROWS + pq - 1) / pq;
            int64_t by_mem = (int64_t)(CV_COL_CAP / col_img);
            if (nb > by_mem) nb = by_mem;
        }
        if (nb > d->n) nb = d->n;
        if (nb > INT32_MAX / pq) nb = INT32_MAX / pq;
        if (nb < 1) nb = 1;
    }
    size_t col = pl->direct ? 0 : (size_t)nb * col_img;
    while (!pl->direct && nb > 1 && fixed + col + 64 > pl->max_ws) {
        nb /= 2;
        col = (size_t)nb * col_img;
    }
    size_t total = fixed + align64(col);
    pl->nb = nb;
    pl->ws_col = col;
    pl->head.workspace_bytes = total;
    return total <= pl->max_ws || total == 0;
}

static void set_impl(cv_plan *pl) {
    snprintf(pl->head.impl, sizeof pl->head.impl, "openblas:%s%s",
             pl->direct ? "sgemm(1x1)" : "im2col+sgemm", pl->cvt ? "+cvt" : "");
}

kmux_status kmux_ob_conv2d_plan_create(void *state, int device, const kmux_conv2d_desc *desc,
                                       const kmux_plan_prefs *prefs, void **plan, int *impl_count) {
    kmux_ob_state *st = state;
    const kmux_conv2d_desc *d = desc;
    /* f32, or f16/bf16 by conversion (the capabilities mark those rows emulated) */
    const int cvt = d->x_type != KMUX_F32;
    const int64_t p =
        kmux_conv2d_out_dim(d->h, d->pad_top, d->pad_bottom, d->r, d->dilation_h, d->stride_h);
    const int64_t q =
        kmux_conv2d_out_dim(d->w, d->pad_left, d->pad_right, d->s, d->dilation_w, d->stride_w);
    const int64_t cg = d->c / d->groups;

    cv_set *set = calloc(1, sizeof *set);
    if (!set)
        return KMUX_OB_ERROR(st, KMUX_ERR_OUT_OF_MEMORY,
                             "kmux_conv2d_plan_create: backend openblas: out of host memory");
    cv_plan *pl = &set->impl[0];
    pl->d = *d;
    pl->p = p;
    pl->q = q;
    pl->cvt = cvt;
    pl->max_ws = prefs->max_workspace_bytes;
    const int can_direct = d->r == 1 && d->s == 1 && d->stride_h == 1 && d->stride_w == 1 &&
                           d->pad_top == 0 && d->pad_bottom == 0 && d->pad_left == 0 &&
                           d->pad_right == 0;
    pl->direct = can_direct;
    if (cvt) {
        pl->ws_x = (size_t)(d->n * d->c * d->h * d->w) * sizeof(float);
        pl->ws_w = (size_t)(d->k * cg * d->r * d->s) * sizeof(float);
        pl->ws_y = (size_t)(d->n * d->k * p * q) * sizeof(float);
    }
    pl->head.kind = KMUX_OB_CONV2D;
    pl->head.effective_compute = KMUX_COMPUTE_F32;
    pl->head.deterministic = 1;
    if (!size_workspace(pl)) {
        char why[160];
        snprintf(why, sizeof why, "needs %zu bytes of workspace, prefs.max_workspace_bytes is %zu",
                 pl->head.workspace_bytes, pl->max_ws);
        free(set);
        return unsupported(st, d, why);
    }
    set_impl(pl);
    set->count = 1;
    if (can_direct) { /* im2col + sgemm as the second implementation, when its workspace fits */
        cv_plan next = *pl;
        next.direct = 0;
        if (size_workspace(&next)) {
            set_impl(&next);
            set->impl[set->count++] = next;
        }
    }
    *plan = set;
    *impl_count = set->count;
    return KMUX_OK;
}

const kmux_ob_plan *kmux_ob_conv2d_head(const void *plan, int impl) {
    return &((const cv_set *)plan)->impl[impl].head;
}

/* ---- execution -------------------------------------------------------------------------- */

/* dx = beta * dx before col2im accumulates into it. "+ 0.0f" turns -0 into +0 so that pixels no
 * tap reaches come out as alpha * 0 + beta * dx does (beta = -1, dx = 0 gives +0, not -0). */
static void prescale_dx(float *dx, int64_t n, float beta) {
    if (beta == 0.0f) {
        memset(dx, 0, (size_t)n * sizeof(float));
        return;
    }
    for (int64_t i = 0; i < n; i++)
        dx[i] = beta * dx[i] + 0.0f;
}

/* sgemm, row-major, with the int casts in one place (dimensions checked at plan creation) */
static void sgemm_rm(CBLAS_TRANSPOSE ta, CBLAS_TRANSPOSE tb, int64_t m, int64_t n, int64_t k,
                     float alpha, const float *a, int64_t lda, const float *b, int64_t ldb,
                     float beta, float *c, int64_t ldc) {
    cblas_sgemm(CblasRowMajor, ta, tb, (int)m, (int)n, (int)k, alpha, a, (int)lda, b, (int)ldb,
                beta, c, (int)ldc);
}

static void conv_f32(const cv_plan *pl, float alpha, float beta, float *x, float *w, float *y,
                     float *col) {
    const kmux_conv2d_desc *d = &pl->d;
    const int nchw = d->layout == KMUX_NCHW;
    const int64_t cg = d->c / d->groups, kg = d->k / d->groups, pq = pl->p * pl->q;
    const int64_t hw = d->h * d->w, crsg = cg * d->r * d->s;
    const int64_t x_img = d->c * hw, y_img = d->k * pq, w_grp = kg * crsg;
    const CBLAS_TRANSPOSE N = CblasNoTrans, T = CblasTrans;

    for (int64_t n0 = 0; n0 < d->n; n0 += pl->nb) {
        const int64_t nbc = d->n - n0 < pl->nb ? d->n - n0 : pl->nb;
        const int64_t rows = nbc * pq; /* NHWC: GEMM rows of this chunk */
        float *xc = x + n0 * x_img, *yc = y + n0 * y_img;
        /* dx = beta * dx first; col2im then accumulates alpha * W^T dy into it */
        if (d->direction == KMUX_CONV_BWD_DATA && !pl->direct) prescale_dx(xc, nbc * x_img, beta);
        const float wbeta = n0 == 0 ? beta : 1.0f; /* BWD_WEIGHTS sums over the batch */

        for (int64_t g = 0; g < d->groups; g++) {
            float *wg = w + g * w_grp;
            const float *colp = col;
            int64_t ldcol = nchw ? pq : crsg;
            if (d->direction != KMUX_CONV_BWD_DATA) {
                if (pl->direct) {
                    colp = nchw ? xc + g * cg * hw : xc + g * cg;
                    ldcol = nchw ? hw : d->c;
                } else {
                    for (int64_t i = 0; i < nbc; i++)
                        kmux_cpu_im2col_f32(d, pl->p, pl->q, g, xc + i * x_img,
                                            col + i * pq * crsg);
                }
            }
            if (nchw) {
                float *yg = yc + g * kg * pq;
                switch (d->direction) {
                case KMUX_CONV_FWD:
                    sgemm_rm(N, N, kg, pq, crsg, alpha, wg, crsg, colp, ldcol, beta, yg, pq);
                    break;
                case KMUX_CONV_BWD_WEIGHTS:
                    sgemm_rm(N, T, kg, crsg, pq, alpha, yg, pq, colp, ldcol, wbeta, wg, crsg);
                    break;
                case KMUX_CONV_BWD_DATA:
                    if (pl->direct) {
                        sgemm_rm(T, N, cg, pq, kg, alpha, wg, cg, yg, pq, beta, xc + g * cg * hw,
                                 hw);
                    } else {
                        sgemm_rm(T, N, crsg, pq, kg, alpha, wg, crsg, yg, pq, 0.0f, col, pq);
                        kmux_cpu_col2im_f32(d, pl->p, pl->q, g, col, xc);
                    }
                    break;
                }
            } else {
                float *yg = yc + g * kg;
                switch (d->direction) {
                case KMUX_CONV_FWD:
                    sgemm_rm(N, T, rows, kg, crsg, alpha, colp, ldcol, wg, crsg, beta, yg, d->k);
                    break;
                case KMUX_CONV_BWD_WEIGHTS:
                    sgemm_rm(T, N, kg, crsg, rows, alpha, yg, d->k, colp, ldcol, wbeta, wg, crsg);
                    break;
                case KMUX_CONV_BWD_DATA:
                    if (pl->direct) {
                        sgemm_rm(N, N, rows, cg, kg, alpha, yg, d->k, wg, cg, beta, xc + g * cg,
                                 d->c);
                    } else {
                        sgemm_rm(N, N, rows, crsg, kg, alpha, yg, d->k, wg, crsg, 0.0f, col, crsg);
                        for (int64_t i = 0; i < nbc; i++)
                            kmux_cpu_col2im_f32(d, pl->p, pl->q, g, col + i * pq * crsg,
                                                xc + i * x_img);
                    }
                    break;
                }
            }
        }
    }
}

kmux_status kmux_ob_conv2d_execute(void *state, const void *plan, int impl, void *stream,
                                   const kmux_conv2d_args *args) {
    kmux_ob_state *st = state;
    const cv_plan *pl = &((const cv_set *)plan)->impl[impl];
    const kmux_conv2d_desc *d = &pl->d;
    (void)stream; /* CPU streams run synchronously in the calling thread */
    const float alpha = *(const float *)args->alpha, beta = *(const float *)args->beta;
    char *ws = NULL;
    if (pl->head.workspace_bytes > 0) {
        ws = kmux_ob_ws_get(st, pl->head.workspace_bytes);
        if (!ws)
            return KMUX_OB_ERROR(st, KMUX_ERR_OUT_OF_MEMORY,
                                 "kmux_conv2d_execute: backend openblas (%s): cannot allocate %zu "
                                 "bytes of workspace",
                                 pl->head.impl, pl->head.workspace_bytes);
    }
    float *col = (float *)ws;
    if (!pl->cvt) {
        conv_f32(pl, alpha, beta, args->x, args->w, args->y, col);
        kmux_ob_ws_put(st, ws);
        return KMUX_OK;
    }

    /* +cvt: f32 copies of the three tensors after the column workspace */
    const int threads = st->hdr.num_threads;
    float *xf = (float *)(ws + align64(pl->ws_col));
    float *wf = (float *)((char *)xf + align64(pl->ws_x));
    float *yf = (float *)((char *)wf + align64(pl->ws_w));
    const int64_t nx = (int64_t)(pl->ws_x / sizeof(float)),
                  nw = (int64_t)(pl->ws_w / sizeof(float));
    const int64_t ny = (int64_t)(pl->ws_y / sizeof(float));
    void *out = d->direction == KMUX_CONV_FWD        ? args->y
                : d->direction == KMUX_CONV_BWD_DATA ? args->x
                                                     : args->w;
    float *out_f = d->direction == KMUX_CONV_FWD        ? yf
                   : d->direction == KMUX_CONV_BWD_DATA ? xf
                                                        : wf;
    const int64_t n_out = d->direction == KMUX_CONV_FWD        ? ny
                          : d->direction == KMUX_CONV_BWD_DATA ? nx
                                                               : nw;
    /* inputs always; the output only when beta != 0 (beta == 0: it is not read) */
    if (d->direction != KMUX_CONV_BWD_DATA || beta != 0.0f)
        kmux_cpu_to_f32(nx, args->x, d->x_type, xf, threads);
    if (d->direction != KMUX_CONV_BWD_WEIGHTS || beta != 0.0f)
        kmux_cpu_to_f32(nw, args->w, d->w_type, wf, threads);
    if (d->direction != KMUX_CONV_FWD || beta != 0.0f)
        kmux_cpu_to_f32(ny, args->y, d->y_type, yf, threads);
    conv_f32(pl, alpha, beta, xf, wf, yf, col);
    /* f16/bf16 targets: kmux_cpu_cast cannot fail for them */
    (void)kmux_cpu_cast(n_out, out_f, KMUX_F32, out, d->x_type, 0, NULL, NULL, threads);
    kmux_ob_ws_put(st, ws);
    return KMUX_OK;
}
