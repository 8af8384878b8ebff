/*
 * reduction.c - the reduction family on the CPU (kmux_cpu_reduction), accumulated in f64.
 * src's shape is grouped against dst's (dispatch/common/kmux_family.h); the innermost group
 * decides the loop:
 *   reduced (NCHW bias gradient: N, C kept, H x W reduced): one output at a time over contiguous
 *     runs of src, each run summed in 32 independent f64 lanes (vectorised, a fixed order);
 *   kept (NHWC / row-major bias gradient): a tile of TILE consecutive outputs, each src row's
 *     tile added into f64 accumulators.
 * The work items (outputs, or tiles) are split across threads; where there are fewer items than
 * threads (a full reduction, a short bias) or the items are tiles of at most 2^16 outputs, the
 * reduced index range is split instead into one partial per thread (each reading its rows in
 * order), combined in order afterwards. Results are deterministic for a given thread
 * count, and within one f32 rounding of ref's whatever the count.
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>

#include "cast_internal.h"
#include "cpu_bf16.h"
#include "cpu_clones.h"
#include "cpu_stream.h"
#include "kmux_cpu_kernels.h"
#include "kmux_reduction.h"
#include "kmux_sys_alloc.h"

#define TILE 64    /* outputs of one tile (innermost group kept) */
#define BLOCK 2048 /* f16/bf16 values decoded at once */

typedef struct red_job {
    kmux_red_params p;
    int inner_kept;  /* the innermost group is kept (tiles) or reduced (runs) */
    int64_t len;     /* elements of the innermost group */
    int64_t tiles;   /* tiles of one innermost kept run */
    int64_t items;   /* outputs (runs) or tiles (tiles) */
    int parts;       /* > 1: the reduced range split into parts with partials */
    double *partial; /* parts x pstride accumulators */
    int64_t pstride; /* dst_n rounded up to a cache line of doubles: no line shared by two parts */
    int avx2;
    int bf16_sums; /* bf16 src and an algorithm that adds: read in place, never decoded */
} red_job;

/* LANES f64 partial sums, combined pairwise at the end: a fixed order (deterministic), and four
 * AVX-512 (eight AVX2) accumulators, so the adds do not wait on each other's latency */
#define LANES 32

#define F32_VALUE(v) (v)

/* sum_run<sfx>: the sum (or the sum of squares) of n values of type T, in LANES f64 lanes.
 * One body for f32 and bf16 (read in place: no decoded copy to pass over again). */
#define KMUX_RED_SUM_RUN(sfx, T, VALUE)                                                            \
    KMUX_CPU_CLONES static double sum_run##sfx(const T *x, int64_t n, int squares) {               \
        double s[LANES] = {0};                                                                     \
        int64_t i = 0;                                                                             \
        if (squares)                                                                               \
            for (; i + LANES <= n; i += LANES)                                                     \
                for (int k = 0; k < LANES; k++)                                                    \
                    s[k] += (double)VALUE(x[i + k]) * (double)VALUE(x[i + k]);                     \
        else                                                                                       \
            for (; i + LANES <= n; i += LANES)                                                     \
                for (int k = 0; k < LANES; k++)                                                    \
                    s[k] += (double)VALUE(x[i + k]);                                               \
        for (; i < n; i++)                                                                         \
            s[i % LANES] +=                                                                        \
                squares ? (double)VALUE(x[i]) * (double)VALUE(x[i]) : (double)VALUE(x[i]);         \
        for (int w = LANES / 2; w >= 1; w /= 2)                                                    \
            for (int k = 0; k < w; k++)                                                            \
                s[k] += s[k + w];                                                                  \
        return s[0];                                                                               \
    }

/* sum_tile<sfx>: acc[i] += the value (or its square) of x[i], i < n (SUM, MEAN, NORM2) */
#define KMUX_RED_ACC_TILE(sfx, T, VALUE)                                                           \
    KMUX_CPU_CLONES static void sum_tile##sfx(double *acc, const T *x, int64_t n, int squares) {   \
        if (squares)                                                                               \
            for (int64_t i = 0; i < n; i++)                                                        \
                acc[i] += (double)VALUE(x[i]) * (double)VALUE(x[i]);                               \
        else                                                                                       \
            for (int64_t i = 0; i < n; i++)                                                        \
                acc[i] += (double)VALUE(x[i]);                                                     \
    }

KMUX_RED_SUM_RUN(, float, F32_VALUE)
KMUX_RED_SUM_RUN(16, uint16_t, kmux_bf16_in)
KMUX_RED_ACC_TILE(, float, F32_VALUE)
KMUX_RED_ACC_TILE(16, uint16_t, kmux_bf16_in)

/* the algorithms that add (values or their squares) */
static int sums(int alg) {
    return alg == KMUX_REDUCTION_SUM || alg == KMUX_REDUCTION_MEAN || alg == KMUX_REDUCTION_NORM2;
}

/* acc over a contiguous f32 run */
static double acc_run(int alg, double acc, const float *x, int64_t n) {
    if (sums(alg)) return acc + sum_run(x, n, alg == KMUX_REDUCTION_NORM2);
    for (int64_t i = 0; i < n; i++)
        acc = kmux_red_acc(alg, acc, (double)x[i]);
    return acc;
}

/* acc[i] over the f32 values x[i], i < n */
static void acc_tile(int alg, double *acc, const float *x, int64_t n) {
    if (sums(alg)) {
        sum_tile(acc, x, n, alg == KMUX_REDUCTION_NORM2);
    } else {
        for (int64_t i = 0; i < n; i++)
            acc[i] = kmux_red_acc(alg, acc[i], (double)x[i]);
    }
}

/* src values [off, off + n) as f32: the tensor itself, or decoded into buf (n <= BLOCK) */
static const float *values(const red_job *j, int64_t off, int64_t n, float *buf) {
    if (j->p.src_dtype == KMUX_F32) return (const float *)j->p.src + off;
    const size_t es = (size_t)kmux_dtype_desc_of((kmux_dtype)j->p.src_dtype).bytes;
    kmux_cast_to_f32_serial(n, (const char *)j->p.src + (size_t)off * es,
                            (kmux_dtype)j->p.src_dtype, buf, j->avx2);
    return buf;
}

/* The first output of item t and how many it has. */
static int64_t item_out(const red_job *j, int64_t t, int64_t *width) {
    if (!j->inner_kept) return *width = 1, t;
    const int64_t c = (t % j->tiles) * TILE;
    *width = j->len - c < TILE ? j->len - c : TILE;
    return t / j->tiles * j->len + c;
}

/* Asks for the first 4 KiB of the run of output `out` that starts at reduced index r: the runs of
 * an NCHW bias gradient are H x W values far apart (one per image), each too short for the
 * hardware prefetchers to ramp up on (0.58 of the memcpy bound without this, Zen 5 VM). */
static void next_run(const red_job *j, int64_t out, int64_t r) {
    const size_t es = (size_t)kmux_dtype_desc_of((kmux_dtype)j->p.src_dtype).bytes;
    const size_t bytes = (size_t)j->len * es;
    kmux_cpu_prefetch((const char *)j->p.src + (size_t)kmux_nd_full_offset(&j->p.g, out, r) * es,
                      bytes < 4096 ? bytes : 4096);
}

/* Accumulates the reduced indices [r0, r1) of item t into acc (its width). */
static void item_acc(const red_job *j, int64_t t, int64_t r0, int64_t r1, double *acc) {
    float buf[BLOCK];
    int64_t w;
    const int64_t out = item_out(j, t, &w);
    const int alg = j->p.alg;
    if (j->bf16_sums) { /* read in place */
        const uint16_t *x = j->p.src;
        const int sq = alg == KMUX_REDUCTION_NORM2;
        if (j->inner_kept) {
            for (int64_t r = r0; r < r1; r++)
                sum_tile16(acc, x + kmux_nd_full_offset(&j->p.g, out, r), w, sq);
            return;
        }
        for (int64_t r = r0; r < r1;) {
            int64_t n = j->len - r % j->len;
            if (n > r1 - r) n = r1 - r;
            if (r + n < r1) next_run(j, out, r + n);
            acc[0] += sum_run16(x + kmux_nd_full_offset(&j->p.g, out, r), n, sq);
            r += n;
        }
        return;
    }
    if (j->inner_kept && j->p.g.n == 2) { /* rows x cols, the rows reduced: row r at r * cols */
        for (int64_t r = r0; r < r1; r++)
            acc_tile(alg, acc, values(j, r * j->len + out, w, buf), w);
        return;
    }
    if (j->inner_kept) {
        for (int64_t r = r0; r < r1; r++)
            acc_tile(alg, acc, values(j, kmux_nd_full_offset(&j->p.g, out, r), w, buf), w);
        return;
    }
    for (int64_t r = r0; r < r1;) {
        int64_t n = j->len - r % j->len;
        if (n > r1 - r) n = r1 - r;
        if (n > BLOCK && j->p.src_dtype != KMUX_F32) n = BLOCK;
        if (r + n < r1 && (r + n) % j->len == 0) next_run(j, out, r + n);
        acc[0] = acc_run(alg, acc[0], values(j, kmux_nd_full_offset(&j->p.g, out, r), n, buf), n);
        r += n;
    }
}

static void store(const red_job *j, int64_t out, const double *acc, int64_t w) {
    for (int64_t i = 0; i < w; i++)
        kmux_fam_store(j->p.dst, j->p.dst_dtype, out + i,
                       (float)kmux_red_final(j->p.alg, acc[i], j->p.count));
}

static void items(void *ctx, int64_t begin, int64_t end, int tid) {
    (void)tid;
    const red_job *j = ctx;
    double acc[TILE];
    for (int64_t t = begin; t < end; t++) {
        int64_t w;
        const int64_t out = item_out(j, t, &w);
        for (int64_t i = 0; i < w; i++)
            acc[i] = kmux_red_identity(j->p.alg);
        item_acc(j, t, 0, j->p.count, acc);
        store(j, out, acc, w);
    }
}

static void parts(void *ctx, int64_t begin, int64_t end, int tid) {
    (void)tid;
    const red_job *j = ctx;
    for (int64_t q = begin; q < end; q++) {
        const int64_t r0 = j->p.count * q / j->parts, r1 = j->p.count * (q + 1) / j->parts;
        const size_t es = (size_t)kmux_dtype_desc_of((kmux_dtype)j->p.src_dtype).bytes;
        const size_t row_bytes = (size_t)j->len * es;
        if (j->inner_kept && j->p.g.n == 2 && j->bf16_sums) { /* rows x cols, in place */
            for (int64_t r = r0; r < r1; r++) {
                kmux_cpu_prefetch_ahead((const char *)j->p.src + (size_t)r * row_bytes, row_bytes);
                sum_tile16(j->partial + q * j->pstride, (const uint16_t *)j->p.src + r * j->len,
                           j->len, j->p.alg == KMUX_REDUCTION_NORM2);
            }
            continue;
        }
        if (j->inner_kept && j->p.g.n == 2 && j->len <= BLOCK) { /* rows x cols: whole rows */
            float buf[BLOCK];
            for (int64_t r = r0; r < r1; r++) {
                kmux_cpu_prefetch_ahead((const char *)j->p.src + (size_t)r * row_bytes, row_bytes);
                acc_tile(j->p.alg, j->partial + q * j->pstride, values(j, r * j->len, j->len, buf),
                         j->len);
            }
            continue;
        }
        /* tiles: row by row, every tile of a row while it is in cache; runs: run by run, every
         * output's run at one reduced index in turn, so that the tensor is read in memory order
         * (an NCHW bias gradient: image by image, each channel's H x W run) */
        for (int64_t r = r0; r < r1;) {
            int64_t n = j->inner_kept ? 1 : j->len - r % j->len;
            if (n > r1 - r) n = r1 - r;
            for (int64_t t = 0; t < j->items; t++) {
                int64_t w;
                const int64_t out = item_out(j, t, &w);
                item_acc(j, t, r, r + n, j->partial + q * j->pstride + out);
            }
            r += n;
        }
    }
}

void kmux_cpu_reduction(const kmux_reduction_desc *d, const kmux_reduction_args *args,
                        int threads) {
    red_job j;
    j.p = kmux_red_params_of(d, args);
    const kmux_nd_groups *g = &j.p.g;
    j.inner_kept = g->n > 0 && g->kept[g->n - 1];
    j.len = g->n ? g->size[g->n - 1] : 1;
    j.tiles = (j.len + TILE - 1) / TILE;
    j.items = j.inner_kept ? j.p.dst_n / j.len * j.tiles : j.p.dst_n;
    j.avx2 = kmux_cast_have_avx2();
    j.bf16_sums = j.p.src_dtype == KMUX_BF16 && sums(j.p.alg);
    j.parts = 1;
    j.pstride = 0;
    j.partial = NULL;
    const int64_t work = j.p.count * j.p.dst_n;
    /* partials: too few items for the threads, or few outputs (up to 2^16): the tensor is then
     * read once, in memory order, a range of it by each thread, instead of every thread striding
     * over all of it for its outputs; one part on one thread too. Measured on the Zen 5 VM, a
     * bias gradient of 64 x 256 x 56 x 56 f32: NHWC, one thread, 42.8 ms tile by tile (4 strided
     * passes) -> 7.8 ms whole rows; NCHW, two threads, 8.3 ms channel by channel (64 runs 3.2 MB
     * apart) -> 4.1 ms image by image. */
    const int parallel = threads > 1 && work >= KMUX_CAST_PARALLEL_MIN;
    if ((parallel && j.items < threads) || j.p.dst_n <= ((int64_t)1 << 16)) {
        j.parts = !parallel ? 1 : threads < KMUX_CAST_MAX_THREADS ? threads : KMUX_CAST_MAX_THREADS;
        j.pstride = (j.p.dst_n + 7) / 8 * 8;
        j.partial =
            kmux_sys_aligned_alloc(64, (size_t)j.parts * (size_t)j.pstride * sizeof(double));
    }
    if (!j.partial) { /* one thread an item (or the partials' memory was refused) */
        kmux_cast_parallel_for(j.items, j.p.count * (j.inner_kept ? TILE : 1), threads, 1, items,
                               &j);
        return;
    }
    for (int64_t i = 0; i < (int64_t)j.parts * j.pstride; i++)
        j.partial[i] = kmux_red_identity(j.p.alg);
    kmux_cast_parallel_for(j.parts, work / j.parts, j.parts, 1, parts, &j);
    for (int64_t o = 0; o < j.p.dst_n; o++) {
        double acc = j.partial[o];
        for (int q = 1; q < j.parts; q++)
            acc = kmux_red_combine(j.p.alg, acc, j.partial[(int64_t)q * j.pstride + o]);
        store(&j, o, &acc, 1);
    }
    free(j.partial);
}
