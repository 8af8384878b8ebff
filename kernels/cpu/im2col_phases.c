/*
 * im2col_phases.c - im2col and col2im of strided NCHW convolutions by PHASES (polyphase
 * decomposition), on panels of whole images.
 *
 * With stride sh x sw, input pixel (i*sh + bh, j*sw + bw) is pixel (i, j) of phase (bh, bw), a
 * sub-plane of Hp x Wp = ceil(H/sh) x ceil(W/sw) pixels (its positions past the plane's edge hold
 * 0). Tap (ri, si) of output pixel (pi, qi) reads input row pi*sh + ri*dh - pad_top, which is
 * (pi + ah)*sh + bh with ah = floor((ri*dh - pad_top) / sh) and bh the remainder, and likewise in
 * w: it reads pixel (pi + ah, qi + aw) of phase (bh, bw). So the panel row of a tap is a SHIFTED
 * copy of one phase, with unit stride, instead of a gather of stride sh from every input row.
 *
 * im2col: per channel and image, the plane is split into its phases once (a per-thread scratch
 * of sh*sw*Hp*Wp floats, which stays in L1/L2: 12.5 KiB for a 56x56 plane), then each of the
 * r*s taps is contiguous copies, ONE copy for the whole image when Wp = Q (ResNet-50's stride-2
 * layers: 56 -> 28, 224 -> 112). col2im is the adjoint: the taps' rows are added into zeroed
 * phases, then the phases are written into the plane as x = beta * x + sum: dx needs no pass of
 * its own for beta (which costs a whole pass over dx where the stride leaves 3/4 of it to the
 * padding taps or to none), and every element receives the sum of its taps, formed in tap order,
 * in one addition, for any thread count.
 *
 * The work is split across threads by items: a channel of an image, or a block of its phase rows
 * when the panel has few planes (kmux_im2col_phase_items); items own disjoint rows of x.
 * Applies only where every phase is read by some tap in a dense filter (a stride no wider than
 * the filter's extent: a 1x1 filter of stride 2 reads one phase, which the plain gather does
 * with less copying), see kmux_im2col_phase_floats.
 */
#include "cast_internal.h"
#include "im2col_internal.h"

/* Rows Hp and columns Wp of every phase: ceil(H / stride_h), ceil(W / stride_w). */
static int64_t phase_rows(const kmux_conv2d_desc *d) {
    return (d->h + d->stride_h - 1) / d->stride_h;
}

static int64_t phase_cols(const kmux_conv2d_desc *d) {
    return (d->w + d->stride_w - 1) / d->stride_w;
}

/* Scratch of one thread, in floats; 0 when the phases do not apply (see the top of the file),
 * including when one thread's scratch would pass 16 Mi floats (64 MiB). */
int64_t kmux_im2col_phase_floats(const kmux_conv2d_desc *d) {
    const int64_t sh = d->stride_h, sw = d->stride_w;
    const int64_t ext_h = kmux_conv2d_extent(d->r, d->dilation_h);
    const int64_t ext_w = kmux_conv2d_extent(d->s, d->dilation_w);
    /* only where the taps read every phase: with a wider stride (1x1, stride 2) the plain gather
     * copies less, and col2im by phases measured slower (ResNet-50's res3a_1, 1x1 stride 2,
     * BWD_DATA NCHW, 5 interleaved runs on the 2-core Zen 5: 0.74 of the sgemm bar against 0.77;
     * again 0.81 against 0.84, with or without non-temporal stores into dx) */
    if (d->layout != KMUX_NCHW || (sh == 1 && sw == 1) || sh > ext_h || sw > ext_w) return 0;
    /* sh * Hp < H + sh and sw * Wp < W + sw: each below 2^32, so the test cannot overflow */
    const int64_t rows = sh * phase_rows(d), cols = sw * phase_cols(d);
    const int64_t cap = (int64_t)1 << 24;
    return rows > cap || cols > cap || rows * cols > cap ? 0 : rows * cols;
}

size_t kmux_cpu_im2col_phase_bytes(const kmux_conv2d_desc *d, int threads) {
    return (size_t)kmux_im2col_phase_floats(d) * (size_t)(threads < 1 ? 1 : threads) *
           sizeof(float);
}

/* Blocks of phase rows per plane: enough for 4 items per thread (ResNet-50's first layer has 3
 * channels). */
int64_t kmux_im2col_phase_items(panel_job *jb, int threads) {
    const kmux_conv2d_desc *d = jb->d;
    const int64_t pq = jb->p * jb->q;
    if (!jb->phases || kmux_im2col_phase_floats(d) == 0 || jb->j0 % pq || jb->j1 % pq) return 0;
    const int64_t planes = d->c / d->groups * ((jb->j1 - jb->j0) / pq);
    const int64_t hp = phase_rows(d), want = 4 * (int64_t)threads;
    jb->phase_blocks = planes >= want ? 1 : (want + planes - 1) / planes;
    if (jb->phase_blocks > hp) jb->phase_blocks = hp;
    return planes * jb->phase_blocks;
}

/* floor(a / b) for b > 0 */
static int64_t floor_div(int64_t a, int64_t b) {
    return a >= 0 ? a / b : -((-a + b - 1) / b);
}

/* The geometry of one work item: phases of hp x wp floats, output images of p x q, and the item's
 * block [i0, i1) of phase rows. */
typedef struct phase_geom {
    int64_t sh, sw, hp, wp, p, q, i0, i1;
} phase_geom;

/* Work item u: channel ci of image img of the panel, block u % blocks of the phase rows; its
 * plane of x starts at *plane floats from the batch's first image, its first panel row (tap 0;
 * the others follow nj apart) at *taps floats from the panel's start. */
static phase_geom item_at(const panel_job *jb, int64_t u, int64_t *plane, int64_t *taps) {
    const kmux_conv2d_desc *d = jb->d;
    const int64_t pq = jb->p * jb->q, nj = jb->j1 - jb->j0, nimg = nj / pq;
    const int64_t nb = jb->phase_blocks, ci = u / nb / nimg, img = u / nb % nimg, b = u % nb;
    const int64_t hp = phase_rows(d);
    *plane = ((jb->j0 / pq + img) * d->c + jb->g * (d->c / d->groups) + ci) * d->h * d->w;
    *taps = ci * d->r * d->s * nj + img * pq;
    return (phase_geom){.sh = d->stride_h,
                        .sw = d->stride_w,
                        .hp = hp,
                        .wp = phase_cols(d),
                        .p = jb->p,
                        .q = jb->q,
                        .i0 = hp * b / nb,
                        .i1 = hp * (b + 1) / nb};
}

/* [*lo, *hi): the output indices o < n whose shifted index o + a lies in [0, len) */
static void shifted_range(int64_t n, int64_t len, int64_t a, int64_t *lo, int64_t *hi) {
    int64_t l = -a > 0 ? -a : 0, h = len - a < n ? len - a : n;
    if (l > n) l = n;
    if (h < l) h = l;
    *lo = l;
    *hi = h;
}

/* The phase of tap (ri, si): the offset of its first float in the scratch, and its shift
 * (ah, aw). */
static int64_t tap_phase(const kmux_conv2d_desc *d, const phase_geom *ge, int64_t ri, int64_t si,
                         int64_t *ah, int64_t *aw) {
    const int64_t oh = ri * d->dilation_h - d->pad_top, ow = si * d->dilation_w - d->pad_left;
    *ah = floor_div(oh, ge->sh);
    *aw = floor_div(ow, ge->sw);
    const int64_t bh = oh - *ah * ge->sh, bw = ow - *aw * ge->sw;
    return (bh * ge->sw + bw) * ge->hp * ge->wp;
}

/* Splits rows [i0, i1) of the phases of one plane of x (ph: those rows fully written). */
static void split_phases(const kmux_conv2d_desc *d, const phase_geom *ge, const float *plane,
                         float *ph) {
    for (int64_t bh = 0; bh < ge->sh; bh++)
        for (int64_t i = ge->i0; i < ge->i1; i++) {
            const int64_t hi = i * ge->sh + bh;
            for (int64_t bw = 0; bw < ge->sw; bw++) {
                float *dst = ph + ((bh * ge->sw + bw) * ge->hp + i) * ge->wp;
                const int64_t nv = hi < d->h && bw < d->w ? (d->w - bw + ge->sw - 1) / ge->sw : 0;
                if (nv) gather_row(dst, plane + hi * d->w + bw, nv, ge->sw);
                zero_row(dst + nv, ge->wp - nv);
            }
        }
}

/* x = beta * x + v for n elements of x, stride apart (beta = 0: x is not read) */
static void axpby_strided(float *restrict x, const float *restrict v, int64_t n, int64_t stride,
                          float beta) {
    if (beta == 0.0f)
        for (int64_t i = 0; i < n; i++)
            x[i * stride] = v[i];
    else
        for (int64_t i = 0; i < n; i++)
            x[i * stride] = beta * x[i * stride] + v[i];
}

/* Stride 2: x[2j] = beta * x[2j] + e[j], x[2j+1] = beta * x[2j+1] + o[j], for a row of w
 * elements; SSE2 interleaves 4 of each a step, the tail (and odd w's last element) is scalar. */
static void axpby_interleave2(float *restrict x, const float *restrict e, const float *restrict o,
                              int64_t w, float beta) {
    int64_t j = 0;
#if defined(__SSE2__)
    const __m128 b = _mm_set1_ps(beta);
    for (; 2 * j + 8 <= w; j += 4) {
        const __m128 ve = _mm_loadu_ps(e + j), vo = _mm_loadu_ps(o + j);
        __m128 lo = _mm_unpacklo_ps(ve, vo), hi = _mm_unpackhi_ps(ve, vo);
        if (beta != 0.0f) {
            lo = _mm_add_ps(_mm_mul_ps(b, _mm_loadu_ps(x + 2 * j)), lo);
            hi = _mm_add_ps(_mm_mul_ps(b, _mm_loadu_ps(x + 2 * j + 4)), hi);
        }
        _mm_storeu_ps(x + 2 * j, lo);
        _mm_storeu_ps(x + 2 * j + 4, hi);
    }
#endif
    axpby_strided(x + 2 * j, e + j, (w - 2 * j + 1) / 2, 2, beta);
    axpby_strided(x + 2 * j + 1, o + j, (w - 2 * j) / 2, 2, beta);
}

/* The adjoint of split_phases, with beta: x = beta * x + the phases, for the plane rows of phase
 * rows [i0, i1), every element of those rows written once (beta = 0: x is not read). The phase
 * sums hold no -0 (they start at +0), so an element no tap reaches gets beta * x + (+0), as
 * alpha * 0 + beta * x. */
static void merge_phases(const kmux_conv2d_desc *d, const phase_geom *ge, const float *ph,
                         float *plane, float beta) {
    const int64_t sub = ge->hp * ge->wp;
    for (int64_t bh = 0; bh < ge->sh; bh++)
        for (int64_t i = ge->i0; i < ge->i1; i++) {
            const int64_t hi = i * ge->sh + bh;
            if (hi >= d->h) break;
            const float *row = ph + bh * ge->sw * sub + i * ge->wp; /* phase (bh, 0), row i */
            if (ge->sw == 2 && d->w >= 2) {
                axpby_interleave2(plane + hi * d->w, row, row + sub, d->w, beta);
                continue;
            }
            for (int64_t bw = 0; bw < ge->sw && bw < d->w; bw++)
                axpby_strided(plane + hi * d->w + bw, row + bw * sub,
                              (d->w - bw + ge->sw - 1) / ge->sw, ge->sw, beta);
        }
}

/* zeroes the columns [0, qa) and [qb, q) of the rows [pa, pb) of a p x q image */
static void zero_columns(float *img, int64_t q, int64_t pa, int64_t pb, int64_t qa, int64_t qb) {
    for (int64_t pi = pa; pi < pb; pi++) {
        zero_row(img + pi * q, qa);
        zero_row(img + pi * q + qb, q - qb);
    }
}

/* A tap of shifts (ah, aw): its output rows [*lo, *hi) read phase rows (the rows before and
 * after read none: padding), of which [*pa, *pb) read the item's block [i0, i1); its output
 * columns [*qa, *qb) read the phase. */
typedef struct tap_window {
    int64_t lo, hi, pa, pb, qa, qb;
} tap_window;

static tap_window window_of(const phase_geom *ge, int64_t ah, int64_t aw) {
    tap_window t;
    shifted_range(ge->p, ge->hp, ah, &t.lo, &t.hi);
    t.pa = t.lo > ge->i0 - ah ? t.lo : ge->i0 - ah;
    t.pb = t.hi < ge->i1 - ah ? t.hi : ge->i1 - ah;
    if (t.pb < t.pa) t.pb = t.pa;
    shifted_range(ge->q, ge->wp, aw, &t.qa, &t.qb);
    return t;
}

/* One tap of one image: dst[pi*q + qi] = phase[(pi + ah)*wp + qi + aw], 0 outside the phase, for
 * the output rows of the item's block; the first block also zeroes the rows above the phase, the
 * last those below, so the blocks of an image write every row once. */
static void shifted_copy(const phase_geom *ge, float *dst, const float *phase, int64_t ah,
                         int64_t aw) {
    const int64_t q = ge->q, wp = ge->wp;
    const tap_window t = window_of(ge, ah, aw);
    if (ge->i0 == 0) zero_row(dst, t.lo * q);
    if (ge->i1 == ge->hp) zero_row(dst + t.hi * q, (ge->p - t.hi) * q);
    if (t.qa == t.qb) {
        zero_row(dst + t.pa * q, (t.pb - t.pa) * q);
        return;
    }
    if (wp == q) {
        /* rows [pa, pb) read consecutive phase rows: one copy, clipped to the phase; the entries
         * it skips or brings from a neighbouring row are the columns outside [qa, qb), zeroed */
        const int64_t s0 = (t.pa + ah) * wp + aw, len = (t.pb - t.pa) * q;
        const int64_t e0 = s0 < 0 ? -s0 : 0, e1 = s0 + len > ge->hp * wp ? ge->hp * wp - s0 : len;
        if (e1 > e0)
            memcpy(dst + t.pa * q + e0, phase + s0 + e0, (size_t)(e1 - e0) * sizeof(float));
        zero_columns(dst, q, t.pa, t.pb, t.qa, t.qb);
        return;
    }
    for (int64_t pi = t.pa; pi < t.pb; pi++) {
        float *row = dst + pi * q;
        zero_row(row, t.qa);
        memcpy(row + t.qa, phase + (pi + ah) * wp + t.qa + aw,
               (size_t)(t.qb - t.qa) * sizeof(float));
        zero_row(row + t.qb, q - t.qb);
    }
}

/* The adjoint of shifted_copy: phase[(pi + ah)*wp + qi + aw] += src[pi*q + qi] inside the phase.
 * src is scratch: the one-run case zeroes its columns outside [qa, qb) and adds those zeros to
 * neighbouring phase entries (which hold no -0: sums that start at +0 never become -0). */
static void shifted_add(const phase_geom *ge, float *phase, float *src, int64_t ah, int64_t aw) {
    const int64_t q = ge->q, wp = ge->wp;
    const tap_window t = window_of(ge, ah, aw);
    if (t.qa == t.qb || t.pa == t.pb) return;
    if (wp == q) {
        const int64_t s0 = (t.pa + ah) * wp + aw, len = (t.pb - t.pa) * q;
        const int64_t e0 = s0 < 0 ? -s0 : 0, e1 = s0 + len > ge->hp * wp ? ge->hp * wp - s0 : len;
        zero_columns(src, q, t.pa, t.pb, t.qa, t.qb);
        if (e1 > e0) scatter_add_row(phase + s0 + e0, src + t.pa * q + e0, e1 - e0, 1);
        return;
    }
    for (int64_t pi = t.pa; pi < t.pb; pi++)
        scatter_add_row(phase + (pi + ah) * wp + t.qa + aw, src + pi * q + t.qa, t.qb - t.qa, 1);
}

/* The items [u0, u1) of panel jb on thread tid: im2col (split the plane, copy every tap from its
 * phase) or, adjoint, col2im (add every tap into its zeroed phase, merge the phases into x). */
static void phase_items(const panel_job *jb, int64_t u0, int64_t u1, int tid, int adjoint) {
    const kmux_conv2d_desc *d = jb->d;
    const int64_t nj = jb->j1 - jb->j0;
    float *ph = jb->phases + tid * kmux_im2col_phase_floats(d);
    for (int64_t u = u0; u < u1; u++) {
        int64_t plane, taps;
        const phase_geom ge = item_at(jb, u, &plane, &taps);
        if (!adjoint)
            split_phases(d, &ge, jb->xs + plane, ph);
        else /* the block's rows of every phase */
            for (int64_t b = 0; b < ge.sh * ge.sw; b++)
                zero_row(ph + (b * ge.hp + ge.i0) * ge.wp, (ge.i1 - ge.i0) * ge.wp);
        for (int64_t t = 0; t < d->r * d->s; t++) {
            int64_t ah, aw;
            const int64_t phase = tap_phase(d, &ge, t / d->s, t % d->s, &ah, &aw);
            if (!adjoint)
                shifted_copy(&ge, jb->col + taps + t * nj, ph + phase, ah, aw);
            else
                shifted_add(&ge, ph + phase, jb->cw + taps + t * nj, ah, aw);
        }
        if (adjoint) merge_phases(d, &ge, ph, jb->xd + plane, jb->beta);
    }
}

void kmux_im2col_nchw_phase_items(void *ctx, int64_t u0, int64_t u1, int tid) {
    phase_items(ctx, u0, u1, tid, 0);
}

void kmux_col2im_nchw_phase_items(void *ctx, int64_t u0, int64_t u1, int tid) {
    phase_items(ctx, u0, u1, tid, 1);
}

int kmux_cpu_col2im_panel_phases_f32(const kmux_conv2d_desc *d, int64_t p, int64_t q, int64_t g,
                                     float *col, int64_t j0, int64_t j1, float *x, float beta,
                                     float *phases, int threads) {
    panel_job jb = {.d = d,
                    .p = p,
                    .q = q,
                    .g = g,
                    .j0 = j0,
                    .j1 = j1,
                    .xd = x,
                    .cw = col,
                    .phases = phases,
                    .beta = beta};
    const int64_t items = kmux_im2col_phase_items(&jb, threads);
    if (!items) return 0;
    kmux_parallel_for_from(items, d->c / d->groups * d->r * d->s * (j1 - j0) / items, threads, 1,
                           PANEL_PARALLEL_MIN, kmux_col2im_nchw_phase_items, &jb);
    return 1;
}
