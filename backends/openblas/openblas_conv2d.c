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
 *
 * Blocking: the column matrix is never materialised whole. The output pixels of the batch are
 * cut into panels of about CV_PANEL_BYTES of columns; each panel is lowered (im2col, on the
 * backend's threads when it is large) and multiplied (one sgemm, OpenBLAS's threads) while it is
 * still in cache, and for BWD_DATA the panel's columns are scattered back (col2im, threads on
 * disjoint channels) right after its sgemm. The workspace is one panel. In NHWC the output rows of
 * consecutive images are consecutive, so panels run across images, which keeps GEMMs large when P*Q
 * is small (late ResNet layers); NCHW panels stay inside one image, or hold whole images when an
 * image has fewer than CV_PANEL_MIN_COLS pixels and two or more fit (their outputs through a
 * Kg x panel buffer, conv_panels_f32). BWD_WEIGHTS sums the panels' products into dW (beta
 * applied by the first). Threads never oversubscribe: im2col/col2im and sgemm alternate, each on
 * the backend's thread count. Strided NCHW panels of whole images are lowered by phases
 * (kernels/cpu/im2col_phases.c: unit-stride copies instead of strided gathers), with a scratch of
 * a few planes per thread after the panels in the workspace; BWD_DATA then writes beta * dx + the
 * sum of the taps itself (no pass over dx for beta). Measured on the 2-core Zen 5 (bench_ob_conv
 * --mb=4, 5 runs interleaved with the build before, medians of the ratio to the sgemm bar):
 * ResNet-50's 7x7 layer NCHW fwd 0.77 -> 0.87, bwd_data 0.79 -> 0.88, bwd_wts 0.79 -> 0.87;
 * res3a_2b (3x3 s2) bwd_data 0.81 -> 0.87, fwd and bwd_wts unchanged within the noise (0.79-0.81).
 * BWD_DATA whose taps never overlap (a stride at least the filter's extent: ResNet's strided 1x1
 * layers) also writes beta * dx + the taps in one pass, on panels of whole images (NHWC panels are
 * rounded down to whole images for it); NCHW panels run it on half the threads, and with beta = 0
 * and one group zero their planes by one memset before adding the taps (kernels/cpu/
 * col2im_disjoint.c, with its measurements). NCHW convolutions with stride_w = 2 lowered without
 * phases gather runs of whole output rows with AVX-512 where the CPU has it, and every strided
 * NCHW gather asks for its input rows ahead (kernels/cpu/gather_avx512.c, IM2COL_AHEAD).
 * Measured together on the 2-core Zen 5 (bench_ob_conv --mb=4 --only=res3a_2a, 2 runs alternating
 * with the build before), ratios to the sgemm bar: res3a_2a NCHW FWD 0.73 -> 0.79, BWD_DATA 0.64
 * -> 0.71, BWD_WEIGHTS 0.74 -> 0.80; NHWC unchanged.
 *
 * A 1x1 filter with stride 1 and no padding needs no im2col: the input IS the column matrix
 * (NCHW: x_g is Cg x HW; NHWC: x_g is (N*HW) x Cg with leading dimension C). Such plans offer
 * "openblas:sgemm(1x1)" first and "openblas:im2col+sgemm" as the next implementation.
 *
 * Vertical stride 1 with R > 1 (3x3 "same" layers) lowers only the filter's width and runs one
 * sgemm per filter row on shifted pixels (openblas_conv2d_rows.c; rows_apply says when):
 * "openblas:im2col(1xS)+sgemm" first, "openblas:im2col+sgemm" next. Measured on the 2-core Zen 5
 * (both as plans in one process, executions interleaved with each other and the sgemm bar, 11-31
 * rounds, medians of the per-round ratios), rows / im2col on 3x3 layers of 64 and 128 channels
 * (56^2 and 28^2, batches 4-32): NCHW FWD 1.06-1.11, BWD_DATA 1.13-1.28, BWD_WEIGHTS 0.95-1.06
 * (R sgemm calls pack dy R times); NHWC 1.10-1.23 in every direction; on a 5x5 (32 channels)
 * NCHW 1.38, 1.46 and 1.17.
 *
 * Every GEMM dimension (C, K, P*Q, H*W, C/groups*R*S) fits OpenBLAS's 32-bit blasint because
 * the device's capabilities limit sizes and tensor elements to 2^31 - 1 (openblas_backend.c);
 * those of the lowering by rows (H*Q, C/groups*S) because rows_apply bounds its size.
 *
 * f16/bf16 tensors run only with prefs->allow_emulation: they are widened exactly to f32 copies
 * ("+cvt"), convolved in f32 and rounded once to the tensor type.
 *
 * Determinism: sgemm is deterministic (see openblas_matmul.c), the panels depend only on the shape
 * and col2im adds in a fixed order whatever the thread count.
 */
#include "openblas_internal.h"

#include <cblas.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dispatch/common/cpu_finish.h"
#include "kernels/cpu/kmux_cpu_kernels.h"
#include "kmux_sys_alloc.h"

/* Panels: a panel of the column matrix holds about CV_PANEL_BYTES, so that it is still in the
 * shared L3 when sgemm reads it after im2col wrote it (it cannot stay in L2: measured on the
 * 2-core AVX2 EPYC VM, 1-2 MiB panels made ResNet-50's 7x7 layer (K = C*R*S = 147) 30-40% slower
 * than whole images, the many small sgemm calls costing more than the cache saves), and at least
 * CV_PANEL_MIN_COLS pixels, so that sgemm's packing of the filter matrix (once per call) stays
 * small against the panel's arithmetic. */
#define CV_PANEL_BYTES ((size_t)8 << 20)
#define CV_PANEL_MIN_COLS 384

typedef struct cv_plan {
    kmux_ob_plan head; /* must be first */
    kmux_conv2d_desc d;
    int64_t p, q;
    int cvt;         /* tensors are f16/bf16, widened to f32 copies */
    int direct;      /* this implementation skips im2col */
    int rows;        /* this implementation lowers by rows (openblas_conv2d_rows.c) */
    int64_t nj;      /* pixels per panel (im2col) */
    size_t ws_col;   /* the column panel */
    size_t ws_ypan;  /* NCHW panels of whole images (nj = a multiple of P*Q): their output panel */
    size_t ws_phase; /* strided NCHW panels of whole images: the scratch of lowering by phases */
    size_t ws_wr;    /* by rows: the filter repacked per filter row, or dW's sums */
    int disjoint;    /* BWD_DATA whose taps never overlap, on panels of whole images without
                        phases: col2im writes beta * dx + the taps in one pass */
    size_t ws_x, ws_w, ws_y, max_ws;
} cv_plan;

/* A plan: its implementations, all prepared at creation (1x1 plans: direct, then im2col; plans
 * that lower by rows: rows, then im2col). */
typedef struct cv_set {
    cv_plan impl[2];
    int count;
} cv_set;

static size_t align64(size_t b) {
    return (b + 63) & ~(size_t)63;
}

/* The workspace holds, 64-byte aligned and in this order: the column panel (by rows: one image's
 * row lowering), the output panel (ypan), the phase scratch, wr (by rows), then the f32 copies of
 * +cvt (x, w, y). Offsets of all but the first: */
static size_t ws_ypan_at(const cv_plan *pl) {
    return align64(pl->ws_col);
}

static size_t ws_phase_at(const cv_plan *pl) {
    return ws_ypan_at(pl) + align64(pl->ws_ypan);
}

static size_t ws_wr_at(const cv_plan *pl) {
    return ws_phase_at(pl) + align64(pl->ws_phase);
}

static size_t ws_copies_at(const cv_plan *pl) {
    return ws_wr_at(pl) + align64(pl->ws_wr);
}

static kmux_status unsupported(kmux_ob_state *st, const kmux_conv2d_desc *d, const char *why) {
    return KMUX_OB_ERROR(st, KMUX_ERR_UNSUPPORTED,
                         "kmux_conv2d_plan_create: backend openblas cannot run a %s convolution "
                         "with compute=%s: %s",
                         kmux_common_dtype_name(d->x_type),
                         kmux_common_compute_type_name(d->compute_type), why);
}

/* Chooses the panel width and the workspace for the current implementation, the phase scratch
 * for the backend's `threads`; 0 when it does not fit into max_ws. */
static int size_workspace(cv_plan *pl, int threads) {
    const kmux_conv2d_desc *d = &pl->d;
    const int64_t pq = pl->p * pl->q, crsg = d->c / d->groups * d->r * d->s;
    const int64_t kg = d->k / d->groups;
    const size_t fixed = align64(pl->ws_x) + align64(pl->ws_y) + align64(pl->ws_w);
    int64_t nj = 0, imgs = 0;
    size_t phase = 0, col = 0, wr = 0;
    const int disjoint_taps = d->direction == KMUX_CONV_BWD_DATA && kmux_cpu_col2im_disjoint(d);
    if (pl->rows) { /* rows_apply bounded the lowering */
        col = kmux_ob_conv_rows_floats(d, pl->q, &wr) * sizeof(float);
        wr *= sizeof(float);
    } else if (!pl->direct) {
        nj = (int64_t)(CV_PANEL_BYTES / ((size_t)crsg * sizeof(float)));
        if (nj < CV_PANEL_MIN_COLS) nj = CV_PANEL_MIN_COLS;
        /* NCHW: panels of whole images when one image has fewer than CV_PANEL_MIN_COLS pixels
         * (late ResNet-50 layers: 14x14, 7x7), else panels inside one image. Measured on the
         * 2-core Zen 5 (bench_ob_conv --mb=4, 3 runs each): res4a_2b (14x14) NCHW 0.75-0.82 of
         * the sgemm bar -> 0.80-0.91 in every direction; with 28x28 images (res3a) whole-image
         * panels were slower (0.63-0.80 against 0.72-0.87): the panel leaves L2 and the copies
         * through ypan cost more than the wider sgemm saves */
        if (d->layout == KMUX_NCHW && pq < CV_PANEL_MIN_COLS)
            imgs = nj / pq < d->n ? nj / pq : d->n;
        if (imgs < 2) imgs = 0;
        const int64_t limit = d->layout == KMUX_NCHW ? (imgs ? imgs * pq : pq) : d->n * pq;
        if (nj > limit) nj = limit;
        /* NHWC BWD_DATA whose taps never overlap: panels of whole images, which col2im writes in
         * one pass (kmux_cpu_col2im_panel_disjoint_f32; NCHW panels are whole images already) */
        const int whole = d->layout == KMUX_NHWC && disjoint_taps;
        if (whole && nj > pq) nj = nj / pq * pq;
        /* a smaller panel when the workspace would not fit (NCHW: fewer images, then one); the
         * phase scratch (a few planes) goes first */
        for (;;) {
            phase = nj % pq == 0 ? kmux_cpu_im2col_phase_bytes(d, threads) : 0;
            const size_t need = fixed + align64((size_t)(nj * crsg) * sizeof(float)) +
                                (imgs ? align64((size_t)(kg * nj) * sizeof(float)) : 0);
            if (need + align64(phase) > pl->max_ws) phase = 0;
            if (nj <= 16 || need <= pl->max_ws) break;
            if (imgs > 3) { /* halved, still two or more images */
                imgs /= 2;
                nj = imgs * pq;
            } else if (imgs) {
                imgs = 0;
                nj = nj / 2 < pq ? nj / 2 : pq;
            } else if (whole && nj >= 2 * pq) { /* halved, still whole images */
                nj = nj / 2 / pq * pq;
            } else {
                nj /= 2;
            }
        }
    }
    if (!pl->rows) col = (size_t)(nj * crsg) * sizeof(float);
    const size_t ypan = imgs ? (size_t)(kg * nj) * sizeof(float) : 0;
    const size_t total = fixed + align64(col) + align64(ypan) + align64(phase) + align64(wr);
    pl->nj = nj;
    pl->ws_col = col;
    pl->ws_ypan = ypan;
    pl->ws_phase = phase;
    pl->ws_wr = wr;
    pl->disjoint = !pl->direct && !pl->rows && disjoint_taps && !phase && nj % pq == 0;
    pl->head.workspace_bytes = total;
    return total <= pl->max_ws || total == 0;
}

static void set_impl(cv_plan *pl) {
    snprintf(pl->head.impl, sizeof pl->head.impl, "openblas:%s%s",
             pl->direct ? "sgemm(1x1)"
             : pl->rows ? "im2col(1xS)+sgemm"
                        : "im2col+sgemm",
             pl->cvt ? "+cvt" : "");
}

/* Whether d lowers by rows (openblas_conv2d_rows.c): vertical stride 1 with several filter
 * rows, images of at least CV_PANEL_MIN_COLS output pixels (its sgemm calls run per image, as
 * wide as the image) and a row lowering of one image that fits a panel (CV_PANEL_BYTES, so that
 * it stays in cache for the R sgemm calls that read it; its size is checked for overflow, as
 * C/g*S*H*Q is not bounded by any tensor's size). Not NCHW BWD_WEIGHTS with one output channel
 * per group (depthwise): its R sgemm calls per image and group, of one row each, cost more than
 * the lowering saves (rows / im2col 0.57 on 3x3 64 channels of 56^2, the 2-core Zen 5, where
 * FWD and BWD_DATA by rows ran 1.21-1.28 times as fast, and NHWC 1.11-1.20). */
static int rows_apply(const kmux_conv2d_desc *d, int64_t p, int64_t q) {
    size_t wr;
    if (d->layout == KMUX_NCHW && d->direction == KMUX_CONV_BWD_WEIGHTS && d->k == d->groups)
        return 0;
    return d->r > 1 && d->stride_h == 1 && p * q >= CV_PANEL_MIN_COLS &&
           kmux_ob_conv_rows_floats(d, q, &wr) <= CV_PANEL_BYTES / sizeof(float);
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

    cv_set *set = kmux_sys_calloc(1, sizeof *set);
    if (!set)
        return KMUX_OB_ERROR(st, KMUX_ERR_OUT_OF_MEMORY,
                             "kmux_conv2d_plan_create: backend openblas: out of host memory");
    cv_plan base = {0};
    base.d = *d;
    base.p = p;
    base.q = q;
    base.cvt = cvt;
    base.max_ws = prefs->max_workspace_bytes;
    if (cvt) {
        base.ws_x = (size_t)(d->n * d->c * d->h * d->w) * sizeof(float);
        base.ws_w = (size_t)(d->k * cg * d->r * d->s) * sizeof(float);
        base.ws_y = (size_t)(d->n * d->k * p * q) * sizeof(float);
    }
    base.head.kind = KMUX_OB_CONV2D;
    base.head.effective_compute = KMUX_COMPUTE_F32;
    base.head.deterministic = 1;
    /* first the GEMM on the input itself (1x1, stride 1, unpadded) or the lowering by rows where
     * they apply, then im2col + sgemm; those whose workspace fits */
    cv_plan cand[2] = {base, base};
    int ncand = 0;
    cand[0].direct = d->r == 1 && d->s == 1 && d->stride_h == 1 && d->stride_w == 1 &&
                     d->pad_top == 0 && d->pad_bottom == 0 && d->pad_left == 0 && d->pad_right == 0;
    cand[0].rows = rows_apply(d, p, q);
    if (cand[0].direct || cand[0].rows) ncand++;
    ncand++; /* im2col + sgemm: cand[ncand - 1] = base */
    size_t least = SIZE_MAX;
    for (int i = 0; i < ncand; i++) {
        if (!size_workspace(&cand[i], st->hdr.num_threads)) {
            if (cand[i].head.workspace_bytes < least) least = cand[i].head.workspace_bytes;
            continue;
        }
        set_impl(&cand[i]);
        set->impl[set->count++] = cand[i];
    }
    if (set->count == 0) {
        char why[160];
        snprintf(why, sizeof why, "needs %zu bytes of workspace, prefs.max_workspace_bytes is %zu",
                 least, base.max_ws);
        free(set);
        return unsupported(st, d, why);
    }
    *plan = set;
    *impl_count = set->count;
    return KMUX_OK;
}

const kmux_ob_plan *kmux_ob_conv2d_head(const void *plan, int impl) {
    return &((const cv_set *)plan)->impl[impl].head;
}

/* ---- execution -------------------------------------------------------------------------- */

/* 1x1 stride-1 unpadded convolutions: the input itself is the column matrix (no workspace). */
static void conv_direct_f32(const cv_plan *pl, float alpha, float beta, float *x, float *w,
                            float *y) {
    const kmux_conv2d_desc *d = &pl->d;
    const int nchw = d->layout == KMUX_NCHW;
    const int64_t cg = d->c / d->groups, kg = d->k / d->groups, pq = pl->p * pl->q;
    const int64_t x_img = d->c * pq, y_img = d->k * pq, w_grp = kg * cg;
    /* NCHW: one GEMM per image; NHWC: the images' rows are consecutive, one GEMM for all */
    const int64_t nb = nchw ? 1 : d->n, rows = nb * pq;
    for (int64_t n0 = 0; n0 < d->n; n0 += nb) {
        float *xc = x + n0 * x_img, *yc = y + n0 * y_img;
        const float wbeta = n0 == 0 ? beta : 1.0f; /* BWD_WEIGHTS sums over the batch */
        for (int64_t g = 0; g < d->groups; g++) {
            float *wg = w + g * w_grp;
            /* the input itself is the lowered matrix (taps = Cg) */
            float *xg = xc + g * cg * (nchw ? pq : 1), *yg = yc + g * kg * (nchw ? pq : 1);
            const float out_beta = d->direction == KMUX_CONV_BWD_WEIGHTS ? wbeta : beta;
            kmux_ob_conv_gemm(d->direction, nchw, rows, kg, cg, alpha, wg, cg, xg, nchw ? pq : d->c,
                              yg, nchw ? pq : d->k, out_beta);
        }
    }
}

/* NCHW panels of whole images: the Kg x PQ blocks of group g of images [img0, img0 + nimg) of
 * y (y_img apart, the group kg * PQ into each) to or from the dense Kg x (nimg * PQ) matrix ypan,
 * whose columns are the panel's pixels in batch order. */
static void ypan_copy(float *y, float *ypan, int64_t img0, int64_t nimg, int64_t g, int64_t kg,
                      int64_t pq, int64_t y_img, int to_ypan) {
    const int64_t ld = nimg * pq;
    for (int64_t i = 0; i < nimg; i++)
        for (int64_t k = 0; k < kg; k++) {
            float *yr = y + (img0 + i) * y_img + (g * kg + k) * pq, *pr = ypan + k * ld + i * pq;
            memcpy(to_ypan ? pr : yr, to_ypan ? yr : pr, (size_t)pq * sizeof(float));
        }
}

/* im2col + sgemm, one panel of pl->nj output pixels at a time (see the top of the file). Pixel
 * j of the batch is pixel j % PQ of image j / PQ. NCHW panels stay inside one image (the
 * image's outputs are a Kg x PQ matrix) or, when P*Q is small, hold whole images whose outputs
 * go through ypan (ypan_copy: the sgemm then has N = images * P*Q, as on the equivalent GEMM
 * of the batch; res4a_2b's 14x14 images gave 256x196x2304 sgemm calls); NHWC panels run across
 * images (the batch's outputs are one (N*PQ) x K matrix). */
static int conv_panels_f32(const cv_plan *pl, float alpha, float beta, float *x, float *w, float *y,
                           char *ws, int threads) {
    /* the workspace: the column panel, the output panel (ypan), the phase scratch */
    float *col = (float *)ws, *ypan = (float *)(ws + ws_ypan_at(pl));
    float *phases = pl->ws_phase ? (float *)(ws + ws_phase_at(pl)) : NULL;
    const kmux_conv2d_desc *d = &pl->d;
    const int nchw = d->layout == KMUX_NCHW;
    const int64_t cg = d->c / d->groups, kg = d->k / d->groups, pq = pl->p * pl->q;
    const int64_t crsg = cg * d->r * d->s, y_img = d->k * pq, w_grp = kg * crsg;
    const int64_t total = d->n * pq;
    /* dx = beta * dx first, and col2im accumulates alpha * W^T dy into it; by phases, or where
     * the taps never overlap (panels of whole images both), col2im writes beta * dx + alpha *
     * W^T dy itself */
    if (d->direction == KMUX_CONV_BWD_DATA && !phases && !pl->disjoint)
        kmux_cpu_col2im_prescale_f32(x, d->n * d->c * d->h * d->w, beta);

    for (int64_t g = 0; g < d->groups; g++) {
        float *wg = w + g * w_grp;
        for (int64_t j0 = 0; j0 < total;) {
            int64_t j1 = j0 + pl->nj < total ? j0 + pl->nj : total;
            const int64_t img = j0 / pq, jl = j0 % pq; /* NCHW: image and its first pixel */
            if (nchw && !pl->ws_ypan && j1 > (img + 1) * pq) j1 = (img + 1) * pq;
            const int64_t nj = j1 - j0;
            const float wbeta = j0 == 0 ? beta : 1.0f; /* BWD_WEIGHTS sums over all panels */
            if (d->direction != KMUX_CONV_BWD_DATA)
                kmux_cpu_im2col_panel_f32(d, pl->p, pl->q, g, x, j0, j1, col, phases, threads);
            /* the panel's outputs (FWD) or output gradients (the backward directions): whole
             * NCHW images through ypan, gathered first where the sgemm reads them */
            float *yp = nchw ? y + img * y_img + g * kg * pq + jl : y + j0 * d->k + g * kg;
            int64_t ldy = nchw ? pq : d->k;
            const int64_t nimg = nj / pq;
            if (pl->ws_ypan) {
                if (d->direction != KMUX_CONV_FWD || beta != 0.0f)
                    ypan_copy(y, ypan, img, nimg, g, kg, pq, y_img, 1);
                yp = ypan;
                ldy = nj;
            }
            const float out_beta = d->direction == KMUX_CONV_FWD           ? beta
                                   : d->direction == KMUX_CONV_BWD_WEIGHTS ? wbeta
                                                                           : 0.0f;
            kmux_ob_conv_gemm(d->direction, nchw, nj, kg, crsg, alpha, wg, crsg, col,
                              nchw ? nj : crsg, yp, ldy, out_beta);
            switch (d->direction) {
            case KMUX_CONV_FWD:
                if (pl->ws_ypan) ypan_copy(y, ypan, img, nimg, g, kg, pq, y_img, 0);
                break;
            case KMUX_CONV_BWD_WEIGHTS:
                break;
            case KMUX_CONV_BWD_DATA:
                if (pl->disjoint) {
                    if (!kmux_cpu_col2im_panel_disjoint_f32(d, pl->p, pl->q, g, col, j0, j1, x,
                                                            beta, threads))
                        return 0; /* not reached: whole images, taps that never overlap */
                } else if (!phases) {
                    kmux_cpu_col2im_panel_f32(d, pl->p, pl->q, g, col, j0, j1, x, threads);
                } else if (!kmux_cpu_col2im_panel_phases_f32(d, pl->p, pl->q, g, col, j0, j1, x,
                                                             beta, phases, threads)) {
                    return 0; /* not reached: ws_phase is set only for panels of whole images */
                }
                break;
            }
            j0 = j1;
        }
    }
    return 1;
}

/* Returns 0 when a panel could not be scattered back (an internal error, not reached). */
static int conv_f32(const cv_plan *pl, float alpha, float beta, float *x, float *w, float *y,
                    char *ws, int threads) {
    if (pl->rows) {
        kmux_ob_conv_rows_f32(&pl->d, pl->p, pl->q, alpha, beta, x, w, y, (float *)ws,
                              (float *)(ws + ws_wr_at(pl)), threads);
        return 1;
    }
    if (!pl->direct) return conv_panels_f32(pl, alpha, beta, x, w, y, ws, threads);
    conv_direct_f32(pl, alpha, beta, x, w, y);
    return 1;
}

static kmux_status internal_error(kmux_ob_state *st, const cv_plan *pl) {
    return KMUX_OB_ERROR(st, KMUX_ERR_INTERNAL,
                         "kmux_conv2d_execute: backend openblas (%s): internal error: a panel of "
                         "%lld pixels could not be scattered back by phases or as disjoint taps",
                         pl->head.impl, (long long)pl->nj);
}

/* The forward epilogue (kmux.h) from the f32 result t (alpha and beta applied; y itself on the
 * f32 path) into y, one rounding: the threaded GEMM epilogue kernel where it runs the flags, else
 * the shared CPU finish with t as its accumulator. */
static void epilogue(const cv_plan *pl, const kmux_conv2d_args *args, const float *t, int threads) {
    static const float one = 1.0f, zero = 0.0f;
    kmux_matmul_desc md;
    kmux_matmul_args ma;
    kmux_conv_epilogue_matmul(&pl->d, args->y, args->bias, args->aux, &one, &md, &ma);
    ma.beta = &zero; /* t holds alpha conv + beta y already */
    const int64_t ldt = md.ldc;
    if (kmux_cpu_matmul_epilogue_runs(&md, &ma)) {
        for (int64_t b = 0; b < md.batch_count; b++)
            kmux_cpu_matmul_epilogue(&md, &ma, t + b * md.stride_c, ldt, b, threads);
        return;
    }
    const kmux_cpu_acc acc = {t, KMUX_F32, ldt, md.stride_c};
    kmux_cpu_finish(&md, &ma, &acc);
}

/* One convolution in the workspace ws. */
static kmux_status conv_run(kmux_ob_state *st, const cv_plan *pl, const kmux_conv2d_args *args,
                            char *ws) {
    const kmux_conv2d_desc *d = &pl->d;
    const float alpha = *(const float *)args->alpha, beta = *(const float *)args->beta;
    const int threads = st->hdr.num_threads;
    const int epi = d->direction == KMUX_CONV_FWD && d->epilogue;
    if (!pl->cvt) {
        if (!conv_f32(pl, alpha, beta, args->x, args->w, args->y, ws, threads))
            return internal_error(st, pl);
        if (epi) epilogue(pl, args, args->y, threads);
        return KMUX_OK;
    }

    /* +cvt: f32 copies of the three tensors after the column workspace */
    float *xf = (float *)(ws + ws_copies_at(pl));
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
    if (!conv_f32(pl, alpha, beta, xf, wf, yf, ws, threads)) return internal_error(st, pl);
    if (epi) { /* the epilogue's one rounding instead of the cast's */
        epilogue(pl, args, yf, threads);
        return KMUX_OK;
    }
    /* f16/bf16 targets: kmux_cpu_cast cannot fail for them */
    (void)kmux_cpu_cast(n_out, out_f, KMUX_F32, out, d->x_type, 0, NULL, NULL, threads);
    return KMUX_OK;
}

kmux_status kmux_ob_conv2d_execute(void *state, const void *plan, int impl, void *stream,
                                   const kmux_conv2d_args *args) {
    kmux_ob_state *st = state;
    const cv_plan *pl = &((const cv_set *)plan)->impl[impl];
    (void)stream;               /* CPU streams run synchronously in the calling thread */
    char *ws = args->workspace; /* the caller's (prefs.caller_workspace), else the pool's */
    const int pooled = !ws && pl->head.workspace_bytes > 0;
    if (pooled) {
        ws = kmux_ob_ws_get(st, pl->head.workspace_bytes);
        if (!ws)
            return KMUX_OB_ERROR(st, KMUX_ERR_OUT_OF_MEMORY,
                                 "kmux_conv2d_execute: backend openblas (%s): cannot allocate %zu "
                                 "bytes of workspace",
                                 pl->head.impl, pl->head.workspace_bytes);
    }
    kmux_status ks = conv_run(st, pl, args, ws);
    if (pooled) kmux_ob_ws_put(st, ws);
    return ks;
}
