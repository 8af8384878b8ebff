/*
 * pooling.c - the pooling family on the CPU (kmux_pooling_execute's semantics), for cpu:openblas
 * and cpu:onednn (backends/cpu_common/cpu_pooling.c).
 *
 * Every unit of work computes in f32: its part of the inputs decoded once (f16/bf16; f32 is read
 * in place), its outputs written once, rounded. NCHW: a unit is one plane; the forward reduces
 * the window's rows first (a vector loop along the row) and then the columns; the backward
 * scatters each dy into an f32 accumulator of the plane (max: into the window's first largest
 * x). NHWC: the loops run along the channels (contiguous), a unit is one output row (forward)
 * or one image (backward), the max backward keeping each channel's best value and position in
 * two vectors. The GPU kernel gathers instead (kmux_pooling.h); both are checked against ref.
 * Where a unit's buffers cannot be allocated it falls back to the shared per-element routines.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cast_internal.h"
#include "cpu_clones.h"
#include "cpu_f32_io.h"
#include "kmux_cpu_kernels.h"
#include "kmux_pooling.h"
#include "kmux_sys_alloc.h"

typedef struct pool_job {
    kmux_pool_params p;
    int avx2;
} pool_job;

/* MAX's value rule, as a select the compiler vectorises */
static inline float pmax(float best, float v) {
    return kmux_pool_better(v, best) ? v : best;
}

static const float *f32_of(const pool_job *j, const void *t, int64_t off, int64_t n, float *buf) {
    return kmux_f32_in((kmux_dtype)j->p.dtype, j->avx2, t, off, n, buf);
}

static float *out_f32(const pool_job *j, void *t, int64_t off, float *buf) {
    return kmux_f32_out((kmux_dtype)j->p.dtype, t, off, buf);
}

static void store(const pool_job *j, void *t, int64_t off, int64_t n, const float *f) {
    kmux_f32_store((kmux_dtype)j->p.dtype, j->avx2, t, off, n, f);
}

/* a[k] = the max (or sum) of a[k] and x[k]: the NCHW column pass and the NHWC channel loops */
KMUX_CPU_CLONES static void vmax(int64_t n, float *a, const float *x) {
    for (int64_t k = 0; k < n; k++)
        a[k] = pmax(a[k], x[k]);
}

KMUX_CPU_CLONES static void vadd(int64_t n, float *a, const float *x) {
    for (int64_t k = 0; k < n; k++)
        a[k] += x[k];
}

/* ---- NCHW: one plane ---- */

KMUX_CPU_CLONES static void rows_max(int64_t w, const float *x, int64_t r0, int64_t r1, float *t) {
    memcpy(t, x + r0 * w, (size_t)w * sizeof *t);
    for (int64_t i = r0 + 1; i < r1; i++)
        for (int64_t c = 0; c < w; c++)
            t[c] = pmax(t[c], x[i * w + c]);
}

KMUX_CPU_CLONES static void rows_sum(int64_t w, const float *x, int64_t r0, int64_t r1, float *t) {
    memcpy(t, x + r0 * w, (size_t)w * sizeof *t);
    for (int64_t i = r0 + 1; i < r1; i++)
        for (int64_t c = 0; c < w; c++)
            t[c] += x[i * w + c];
}

/* the outputs [lo, hi) of a row whose windows lie inside x's columns (none in the padding) */
static void interior(const kmux_pool_params *p, int64_t *lo, int64_t *hi) {
    int64_t l = (p->pl + p->sw - 1) / p->sw, h = (p->w + p->pl - p->kw) / p->sw + 1;
    h = h < l ? l : h > p->q ? p->q : h;
    if (l > p->q) l = h = p->q;
    *lo = l, *hi = h;
}

/* A row of w values split into its s phases (stride s > 1): phase f holds the values at columns
 * f, f + s, f + 2 s, ..., at ph + f cw (cw = ceil(w / s) slots each), so that the column
 * c + o s of a window tap is ph[(c % s) cw + c / s + o]: contiguous in the output index o
 * (plain vector loads instead of strided ones). Stride 1: the row itself. */
static int64_t phase_width(int64_t w, int64_t s) {
    return (w + s - 1) / s;
}

static const float *phases(const float *row, int64_t w, int64_t s, float *ph) {
    if (s == 1) return row;
    const int64_t cw = phase_width(w, s);
    for (int64_t f = 0; f < s; f++)
        for (int64_t j = 0; j * s + f < w; j++)
            ph[f * cw + j] = row[j * s + f];
    return ph;
}

/* the phase-split row's values at columns c + o s, o = 0.. (c >= 0) */
static const float *tap(const float *ph, int64_t cw, int64_t s, int64_t c) {
    return ph + (c % s) * cw + c / s;
}

KMUX_CPU_CLONES static void vset(int64_t n, float *y, const float *t) {
    for (int64_t o = 0; o < n; o++)
        y[o] = t[o];
}

/* y[o] = the max or sum of the row's columns c0 + o s + k over k < kw, o < n (ph: its phases) */
static void cols_pass(int max, int64_t n, const float *ph, int64_t cw, int64_t s, int64_t c0,
                      int64_t kw, float *y) {
    vset(n, y, tap(ph, cw, s, c0));
    for (int64_t k = 1; k < kw; k++)
        if (max)
            vmax(n, y, tap(ph, cw, s, c0 + k));
        else
            vadd(n, y, tap(ph, cw, s, c0 + k));
}

/* the vector loops over a row's outputs run in whole vectors of VPAD floats where their reads
 * stay inside kmux's own buffers (the rows split into phases, VPAD floats of slack after them)
 * and their writes go to a buffer: no scalar remainder (a row of ResNet-50's max pool has 55
 * interior outputs: 3 vectors and 7 scalar steps, the steps the slower part). The lanes past
 * the row's end compute on the slack and are never read. */
#define VPAD 16

static int64_t vround(int64_t n) {
    return (n + VPAD - 1) / VPAD * VPAD;
}

/* t: w + sw ceil(w / sw) + VPAD + q + VPAD floats (the row pass, its phases and slack, the
 * interior outputs of the row) */
static void nchw_fwd_plane(const kmux_pool_params *p, const float *x, float *y, float *t) {
    const int64_t cw = p->sw == 1 ? p->w : phase_width(p->w, p->sw);
    float *yt = t + p->w + p->sw * cw + VPAD;
    const int max = p->alg == KMUX_POOLING_MAX;
    for (int64_t oi = 0; oi < p->p; oi++) {
        int64_t r0, r1, c0, c1;
        kmux_pool_window(p, oi, 0, &r0, &r1, &c0, &c1);
        if (max)
            rows_max(p->w, x, r0, r1, t);
        else
            rows_sum(p->w, x, r0, r1, t);
        float *yr = y + oi * p->q;
        /* the outputs whose windows lie inside the row, [lo, hi): one pass per kernel column
         * (a strided vector loop); the others (in the padding) one by one */
        int64_t lo, hi;
        interior(p, &lo, &hi);
        if (hi > lo) {
            cols_pass(max, vround(hi - lo), phases(t, p->w, p->sw, t + p->w), cw, p->sw,
                      lo * p->sw - p->pl, p->kw, yt);
            memcpy(yr + lo, yt, (size_t)(hi - lo) * sizeof *yr);
            if (!max)
                for (int64_t oj = lo; oj < hi; oj++)
                    yr[oj] /= kmux_pool_divisor(p, r0, r1, oj * p->sw - p->pl,
                                                oj * p->sw - p->pl + p->kw);
        }
        for (int64_t oj = 0; oj < p->q; oj++) {
            if (oj == lo) oj = hi;
            if (oj >= p->q) break;
            kmux_pool_window(p, oi, oj, &r0, &r1, &c0, &c1);
            float v = t[c0];
            for (int64_t c = c0 + 1; c < c1; c++)
                v = max ? pmax(v, t[c]) : v + t[c];
            yr[oj] = max ? v : v / kmux_pool_divisor(p, r0, r1, c0, c1);
        }
    }
}

/* MAX backward of the interior outputs of a row, as vectors over them: the best value and its
 * position of each window, tap by tap in row-major order (the first largest wins). xph: x's rows
 * split into phases (rw floats a row, cw a phase); the window of output o starts at column
 * col0 + o s. */
KMUX_CPU_CLONES static void row_argmax(int64_t n, const float *xph, int64_t rw, int64_t cw,
                                       int64_t w, int64_t r0, int64_t r1, int64_t col0, int64_t s,
                                       int64_t kw, float *best, int32_t *at) {
    for (int64_t i = r0; i < r1; i++)
        for (int64_t k = 0; k < kw; k++) {
            const float *v = tap(xph + i * rw, cw, s, col0 + k);
            const int32_t e0 = (int32_t)(i * w + col0 + k), st = (int32_t)s;
            if (i == r0 && k == 0) {
                for (int64_t o = 0; o < n; o++)
                    best[o] = v[o], at[o] = e0 + (int32_t)o * st;
                continue;
            }
            for (int64_t o = 0; o < n; o++) {
                const int b = kmux_pool_better(v[o], best[o]);
                best[o] = b ? v[o] : best[o];
                at[o] = b ? e0 + (int32_t)o * st : at[o];
            }
        }
}

/* xph: h sw ceil(w / sw) + VPAD floats (x's rows split into phases, MAX, and slack); best and
 * at: q + VPAD each */
static void nchw_bwd_plane(const kmux_pool_params *p, const float *x, const float *dy, float *acc,
                           float *best, int32_t *at, float *xph) {
    memset(acc, 0, (size_t)(p->h * p->w) * sizeof *acc);
    int64_t lo, hi;
    interior(p, &lo, &hi);
    const int64_t cw = p->sw == 1 ? p->w : phase_width(p->w, p->sw), rw = p->sw * cw;
    const float *xp = x;
    if (p->alg == KMUX_POOLING_MAX && hi > lo && p->sw > 1) {
        for (int64_t i = 0; i < p->h; i++)
            phases(x + i * p->w, p->w, p->sw, xph + i * rw);
        xp = xph;
    }
    for (int64_t oi = 0; oi < p->p; oi++) {
        int64_t r0, r1, c0, c1;
        const float *g = dy + oi * p->q;
        if (hi > lo) {
            kmux_pool_window(p, oi, lo, &r0, &r1, &c0, &c1);
            const int64_t col0 = lo * p->sw - p->pl, n = hi - lo;
            if (p->alg == KMUX_POOLING_MAX) {
                /* whole vectors when the reads are in xph (stride > 1), else exactly n */
                row_argmax(xp == xph ? vround(n) : n, xp, rw, cw, p->w, r0, r1, col0, p->sw, p->kw,
                           best, at);
                for (int64_t o = 0; o < n; o++)
                    acc[at[o]] += g[lo + o];
            } else {
                const float inv = 1.0f / kmux_pool_divisor(p, r0, r1, c0, c1);
                for (int64_t i = r0; i < r1; i++)
                    for (int64_t k = 0; k < p->kw; k++)
                        for (int64_t o = 0; o < n; o++)
                            acc[i * p->w + col0 + o * p->sw + k] += g[lo + o] * inv;
            }
        }
        for (int64_t oj = 0; oj < p->q; oj++) { /* the windows reaching into the padding */
            if (oj == lo) oj = hi;
            if (oj >= p->q) break;
            kmux_pool_window(p, oi, oj, &r0, &r1, &c0, &c1);
            if (p->alg == KMUX_POOLING_MAX) {
                int64_t a = r0 * p->w + c0;
                float b = x[a];
                for (int64_t i = r0; i < r1; i++)
                    for (int64_t c = c0; c < c1; c++)
                        if (kmux_pool_better(x[i * p->w + c], b))
                            b = x[i * p->w + c], a = i * p->w + c;
                acc[a] += g[oj];
            } else {
                const float sc = g[oj] / kmux_pool_divisor(p, r0, r1, c0, c1);
                for (int64_t i = r0; i < r1; i++)
                    for (int64_t c = c0; c < c1; c++)
                        acc[i * p->w + c] += sc;
            }
        }
    }
}

/* ---- NHWC: vectors of the c channels ---- */

KMUX_CPU_CLONES static void vadds(int64_t n, float *a, const float *x, float s) {
    for (int64_t k = 0; k < n; k++)
        a[k] += x[k] * s;
}

/* best value and its position per channel: a later position wins only by kmux_pool_better */
KMUX_CPU_CLONES static void vargmax(int64_t n, float *best, int32_t *at, const float *x,
                                    int32_t pos) {
    for (int64_t k = 0; k < n; k++) {
        const int b = kmux_pool_better(x[k], best[k]);
        best[k] = b ? x[k] : best[k];
        at[k] = b ? pos : at[k];
    }
}

/* output row oi of image ni: rows r0..r1 of x (as f32 from row r0, x[(i - r0) w c]) into y */
static void nhwc_fwd_row(const kmux_pool_params *p, int64_t oi, const float *x, int64_t xr0,
                         float *y) {
    const int64_t c = p->c;
    for (int64_t oj = 0; oj < p->q; oj++) {
        int64_t r0, r1, c0, c1;
        kmux_pool_window(p, oi, oj, &r0, &r1, &c0, &c1);
        float *o = y + oj * c;
        memcpy(o, x + ((r0 - xr0) * p->w + c0) * c, (size_t)c * sizeof *o);
        for (int64_t i = r0; i < r1; i++)
            for (int64_t jj = c0; jj < c1; jj++) {
                if (i == r0 && jj == c0) continue;
                const float *v = x + ((i - xr0) * p->w + jj) * c;
                if (p->alg == KMUX_POOLING_MAX)
                    vmax(c, o, v);
                else
                    vadd(c, o, v);
            }
        if (p->alg != KMUX_POOLING_MAX) {
            const float inv = 1.0f / kmux_pool_divisor(p, r0, r1, c0, c1);
            for (int64_t k = 0; k < c; k++)
                o[k] *= inv;
        }
    }
}

static void nhwc_bwd_image(const kmux_pool_params *p, const float *x, const float *dy, float *acc,
                           float *best, int32_t *at) {
    const int64_t c = p->c;
    memset(acc, 0, (size_t)(p->h * p->w * c) * sizeof *acc);
    for (int64_t oi = 0; oi < p->p; oi++)
        for (int64_t oj = 0; oj < p->q; oj++) {
            int64_t r0, r1, c0, c1;
            kmux_pool_window(p, oi, oj, &r0, &r1, &c0, &c1);
            const float *g = dy + (oi * p->q + oj) * c;
            if (p->alg == KMUX_POOLING_MAX) {
                const int32_t first = (int32_t)(r0 * p->w + c0);
                memcpy(best, x + (int64_t)first * c, (size_t)c * sizeof *best);
                for (int64_t k = 0; k < c; k++)
                    at[k] = first;
                for (int64_t i = r0; i < r1; i++)
                    for (int64_t jj = c0; jj < c1; jj++)
                        if (i != r0 || jj != c0)
                            vargmax(c, best, at, x + (i * p->w + jj) * c, (int32_t)(i * p->w + jj));
                for (int64_t k = 0; k < c; k++)
                    acc[(int64_t)at[k] * c + k] += g[k];
            } else {
                const float inv = 1.0f / kmux_pool_divisor(p, r0, r1, c0, c1);
                for (int64_t i = r0; i < r1; i++)
                    for (int64_t jj = c0; jj < c1; jj++)
                        vadds(c, acc + (i * p->w + jj) * c, g, inv);
            }
        }
}

/* ---- units and their buffers ---- */

static void fallback(const kmux_pool_params *p, int64_t u) {
    if (p->prop == KMUX_PROP_FORWARD) { /* NCHW: plane u; NHWC: output row u */
        const int64_t row = p->nhwc ? p->q * p->c : p->p * p->q;
        for (int64_t e = u * row; e < (u + 1) * row; e++)
            kmux_pool_fwd_output(p, e);
        return;
    }
    const int64_t part = p->nhwc ? p->h * p->w * p->c : p->h * p->w;
    for (int64_t e = u * part; e < (u + 1) * part; e++)
        kmux_pool_bwd_input(p, e);
}

static void range(void *ctx, int64_t begin, int64_t end, int tid) {
    (void)tid;
    const pool_job *j = ctx;
    const kmux_pool_params *p = &j->p;
    const int fwd = p->prop == KMUX_PROP_FORWARD;
    const int64_t hw = p->h * p->w, pq = p->p * p->q, c = p->nhwc ? p->c : 1;
    /* f32 copies: x part, dy part, the output; NCHW forward: a row; NHWC max: best, at */
    const int64_t xrows = p->nhwc && fwd ? p->kh * p->w * c : hw * c;
    /* NCHW: a row split into phases (forward), every row (backward) */
    const int64_t rw = p->sw * phase_width(p->w, p->sw);
    const int64_t ph = p->nhwc ? 0 : (fwd ? rw : p->h * rw) + 2 * VPAD + p->q;
    const size_t nf = (size_t)(xrows + (fwd ? (p->nhwc ? p->q * c : pq + p->w) : pq * c + hw * c) +
                               2 * (c + p->q + VPAD) + ph);
    float *buf =
        kmux_sys_calloc(nf, sizeof *buf); /* zeros: the slack the padded vector lanes read */
    for (int64_t u = begin; u < end; u++) {
        if (!buf) {
            fallback(p, u);
            continue;
        }
        float *xb = buf, *ob = buf + xrows;
        if (!p->nhwc && fwd) { /* plane u */
            const float *x = f32_of(j, p->x, u * hw, hw, xb);
            float *t = ob + pq, *y = out_f32(j, p->y, u * pq, ob); /* t: w + rw floats */
            nchw_fwd_plane(p, x, y, t);
            store(j, p->y, u * pq, pq, y);
        } else if (!p->nhwc) {
            const float *x = p->alg == KMUX_POOLING_MAX ? f32_of(j, p->x, u * hw, hw, xb) : NULL;
            const float *dy = f32_of(j, p->dy, u * pq, pq, ob);
            float *acc = out_f32(j, p->dx, u * hw, ob + pq);
            float *best = ob + pq + hw;
            nchw_bwd_plane(p, x, dy, acc, best, (int32_t *)(best + p->q + VPAD),
                           best + 2 * (p->q + VPAD));
            store(j, p->dx, u * hw, hw, acc);
        } else if (fwd) { /* output row u = (ni, oi) */
            const int64_t ni = u / p->p, oi = u % p->p;
            int64_t r0, r1, c0, c1;
            kmux_pool_window(p, oi, 0, &r0, &r1, &c0, &c1);
            const float *x = f32_of(j, p->x, (ni * p->h + r0) * p->w * c, (r1 - r0) * p->w * c, xb);
            float *y = out_f32(j, p->y, u * p->q * c, ob);
            nhwc_fwd_row(p, oi, x, r0, y);
            store(j, p->y, u * p->q * c, p->q * c, y);
        } else { /* image u */
            const float *x =
                p->alg == KMUX_POOLING_MAX ? f32_of(j, p->x, u * hw * c, hw * c, xb) : NULL;
            const float *dy = f32_of(j, p->dy, u * pq * c, pq * c, ob);
            float *acc = out_f32(j, p->dx, u * hw * c, ob + pq * c);
            float *best = ob + pq * c + hw * c;
            nhwc_bwd_image(p, x, dy, acc, best, (int32_t *)(best + c));
            store(j, p->dx, u * hw * c, hw * c, acc);
        }
    }
    free(buf);
}

void kmux_cpu_pooling(const kmux_pooling_desc *d, const kmux_pooling_args *args, int threads) {
    pool_job j;
    j.p = kmux_pool_params_of(d, args);
    j.avx2 = kmux_cast_have_avx2();
    const kmux_pool_params *p = &j.p;
    const int fwd = p->prop == KMUX_PROP_FORWARD;
    if (p->h * p->w > INT32_MAX) { /* positions of an image beyond int32: per element */
        const int64_t n = fwd ? p->n * p->c * p->p * p->q : p->n * p->c * p->h * p->w;
        for (int64_t e = 0; e < n; e++)
            fwd ? kmux_pool_fwd_output(p, e) : kmux_pool_bwd_input(p, e);
        return;
    }
    /* units: NCHW planes; NHWC output rows (forward) or images (backward); the work of one is
     * about its windows' loads */
    const int64_t units = !p->nhwc ? p->n * p->c : fwd ? p->n * p->p : p->n;
    const int64_t work = p->n * p->c * p->p * p->q * p->kh * p->kw / (units ? units : 1);
    kmux_cast_parallel_for(units, work, threads, 1, range, &j);
}
