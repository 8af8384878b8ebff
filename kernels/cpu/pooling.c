/*
 * pooling.c - the pooling family on the CPU (kmux_pooling_execute's semantics), for cpu:openblas
 * and cpu:onednn (backends/cpu_common/cpu_pooling.c).
 *
 * Forward: the shared per-output routine of dispatch/common/kmux_pooling.h over rows of y split
 * across threads. Backward: scattered, not gathered (the GPU kernel gathers, which recomputes a
 * max window once per element it holds): each unit of work (one plane in NCHW; one image and a
 * block of channels in NHWC) zeroes an f32 accumulator of its part of dx, adds every dy of its
 * windows into it (MAX: into the window's first largest x), and stores it once, rounded.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cast_internal.h"
#include "kmux_cpu_kernels.h"
#include "kmux_pooling.h"

#define CBLOCK 64 /* NHWC backward: channels of one unit (its accumulator h w CBLOCK floats) */

typedef struct pool_job {
    kmux_pool_params p;
    int64_t row;    /* forward: y elements of one item */
    int64_t cunits; /* backward: units of channels per image */
    int64_t cn;     /* backward: channels of one unit */
} pool_job;

static void fwd_range(void *ctx, int64_t begin, int64_t end, int tid) {
    (void)tid;
    const pool_job *j = ctx;
    for (int64_t e = begin * j->row; e < end * j->row; e++)
        kmux_pool_fwd_output(&j->p, e);
}

/* One backward unit: image ni, channels [c0, c0 + cn), into acc (h w cn floats, zeroed). */
static void bwd_unit(const kmux_pool_params *p, int64_t ni, int64_t c0, int64_t cn, float *acc) {
    for (int64_t oi = 0; oi < p->p; oi++)
        for (int64_t oj = 0; oj < p->q; oj++) {
            int64_t r0, r1, w0, w1;
            kmux_pool_window(p, oi, oj, &r0, &r1, &w0, &w1);
            const float inv = 1.0f / kmux_pool_divisor(p, r0, r1, w0, w1);
            for (int64_t k = 0; k < cn; k++) {
                const int64_t ci = c0 + k;
                const float g =
                    kmux_fam_load(p->dy, p->dtype, kmux_pool_at(p, ni, ci, oi, oj, p->p, p->q));
                if (p->alg == KMUX_POOLING_MAX) {
                    int64_t bi = r0, bj = w0;
                    float best =
                        kmux_fam_load(p->x, p->dtype, kmux_pool_at(p, ni, ci, r0, w0, p->h, p->w));
                    for (int64_t i = r0; i < r1; i++)
                        for (int64_t jj = w0; jj < w1; jj++) {
                            const float v = kmux_fam_load(
                                p->x, p->dtype, kmux_pool_at(p, ni, ci, i, jj, p->h, p->w));
                            if (kmux_pool_better(v, best)) best = v, bi = i, bj = jj;
                        }
                    acc[(bi * p->w + bj) * cn + k] += g;
                } else {
                    const float s = g * inv;
                    for (int64_t i = r0; i < r1; i++)
                        for (int64_t jj = w0; jj < w1; jj++)
                            acc[(i * p->w + jj) * cn + k] += s;
                }
            }
        }
    for (int64_t i = 0; i < p->h; i++)
        for (int64_t jj = 0; jj < p->w; jj++)
            for (int64_t k = 0; k < cn; k++)
                kmux_fam_store(p->dx, p->dtype, kmux_pool_at(p, ni, c0 + k, i, jj, p->h, p->w),
                               acc[(i * p->w + jj) * cn + k]);
}

static void bwd_range(void *ctx, int64_t begin, int64_t end, int tid) {
    (void)tid;
    const pool_job *j = ctx;
    const kmux_pool_params *p = &j->p;
    float *acc = malloc((size_t)(p->h * p->w * j->cn) * sizeof *acc);
    for (int64_t u = begin; u < end; u++) {
        const int64_t ni = u / j->cunits, c0 = (u % j->cunits) * j->cn;
        const int64_t cn = p->c - c0 < j->cn ? p->c - c0 : j->cn;
        if (acc) {
            memset(acc, 0, (size_t)(p->h * p->w * cn) * sizeof *acc);
            bwd_unit(p, ni, c0, cn, acc);
            continue;
        }
        /* no memory for the accumulator: gather each element instead (slower, same result
         * up to the order of the f32 sums) */
        for (int64_t ci = c0; ci < c0 + cn; ci++)
            for (int64_t i = 0; i < p->h; i++)
                for (int64_t jj = 0; jj < p->w; jj++)
                    kmux_pool_bwd_input(p, kmux_pool_at(p, ni, ci, i, jj, p->h, p->w));
    }
    free(acc);
}

void kmux_cpu_pooling(const kmux_pooling_desc *d, const kmux_pooling_args *args, int threads) {
    pool_job j;
    j.p = kmux_pool_params_of(d, args);
    const kmux_pool_params *p = &j.p;
    if (p->prop == KMUX_PROP_FORWARD) {
        j.row = p->nhwc ? p->q * p->c : p->q;
        const int64_t items = p->n * p->c * p->p * p->q / j.row;
        kmux_cast_parallel_for(items, j.row * p->kh * p->kw, threads, 1, fwd_range, &j);
        return;
    }
    j.cn = p->nhwc ? (p->c < CBLOCK ? p->c : CBLOCK) : 1;
    j.cunits = (p->c + j.cn - 1) / j.cn;
    /* a unit's work: every window of its channels, once */
    kmux_cast_parallel_for(p->n * j.cunits, p->p * p->q * p->kh * p->kw * j.cn, threads, 1,
                           bwd_range, &j);
}
