/*
 * int8_gemm.c - the passes around an exact s8 x s8 -> s32 GEMM that runs on u8 x s8 kernels
 * (oneDNN's brgemm with VNNI, see backends/onednn/onednn_matmul.h): the column sums of Q (for the
 * compensation, and the bound that says when oneDNN's own s8 x s8 kernel is exact), the largest
 * |Q| (a cheaper first test of that bound), the biased u8 copy P + 128, and the compensation
 * C -= 128 * colsum(Q).
 *
 * All arithmetic on sums is unsigned modulo 2^32 (no signed overflow), as integer BLAS wraps.
 * The loops are written so that the compiler vectorises them (this file is built with -O3, see
 * CMakeLists.txt); large matrices are split over threads by columns or rows.
 */
#include <stdint.h>
#include <string.h>

#include "cast_internal.h"
#include "kmux_cpu_kernels.h"

/* Columns one worker sums at a time (untransposed Q): the accumulator rows stay in L1; rows
 * summed in 16 bits before they are added to the 32-bit sums. */
#define COL_BLOCK 512
#define ROW_BLOCK 128

/* Bytes of data from which a pass is split over threads (s32 passes: a quarter of the elements).
 * On the 2-core Zen 5 EPYC each pass over a 1024 x 1024 matrix ran slower on two threads than on
 * one (thread creation costs 20-40 us; the passes take 0.02-0.1 ms). */
#define PASS_PARALLEL_MIN ((int64_t)1 << 24)

typedef struct colsum_job {
    int64_t k, ld;
    const int8_t *q;
    int trans;
    int32_t *sums;
    int64_t abs_max[KMUX_CAST_MAX_THREADS];
} colsum_job;

/* Two's complement wrap of the low 32 bits (no implementation-defined conversion). */
static int32_t wrap_i32(uint32_t w) {
    if (w <= (uint32_t)INT32_MAX) return (int32_t)w;
    return (int32_t)(w - 2147483648u) - INT32_MAX - 1;
}

/* s16[j] += row[j], a16[j] += |row[j]| for j < w. Up to ROW_BLOCK rows keep the 16-bit
 * accumulators exact (|s| <= 128 * 128 = 2^14; |a| <= 2^14, read back as unsigned), and the
 * 16-bit lanes halve the widening and accumulator traffic of 32-bit ones (1024 x 1024 column
 * sums, one thread, Zen 5 EPYC: 0.145 -> 0.098 ms). */
static void add_row16(int16_t *restrict s16, int16_t *restrict a16, const int8_t *restrict row,
                      int64_t w) {
    for (int64_t j = 0; j < w; j++) {
        int v = row[j];
        s16[j] = (int16_t)(s16[j] + v);
        a16[j] = (int16_t)(a16[j] + (v < 0 ? -v : v));
    }
}

static void colsum_range(void *vctx, int64_t begin, int64_t end, int tid) {
    colsum_job *c = vctx;
    int64_t best = 0;
    if (c->trans) { /* column j is the storage row j: a contiguous reduction over k */
        for (int64_t j = begin; j < end; j++) {
            const int8_t *col = c->q + j * c->ld;
            uint32_t s = 0, a = 0;
            for (int64_t l = 0; l < c->k; l++) {
                int v = col[l];
                s += (uint32_t)v;
                a += (uint32_t)(v < 0 ? -v : v);
            }
            c->sums[j] = wrap_i32(s);
            if ((int64_t)a > best) best = (int64_t)a;
        }
    } else { /* rows of Q run along the columns: add whole row pieces into the accumulators */
        uint32_t s[COL_BLOCK], a[COL_BLOCK];
        int16_t s16[COL_BLOCK], a16[COL_BLOCK];
        for (int64_t j0 = begin; j0 < end; j0 += COL_BLOCK) {
            int64_t w = end - j0 < COL_BLOCK ? end - j0 : COL_BLOCK;
            memset(s, 0, sizeof s);
            memset(a, 0, sizeof a);
            for (int64_t l0 = 0; l0 < c->k; l0 += ROW_BLOCK) {
                const int64_t l1 = c->k - l0 < ROW_BLOCK ? c->k : l0 + ROW_BLOCK;
                memset(s16, 0, sizeof s16);
                memset(a16, 0, sizeof a16);
                for (int64_t l = l0; l < l1; l++)
                    add_row16(s16, a16, c->q + l * c->ld + j0, w);
                for (int64_t j = 0; j < w; j++) {
                    s[j] += (uint32_t)(int32_t)s16[j];
                    a[j] += (uint32_t)(uint16_t)a16[j];
                }
            }
            for (int64_t j = 0; j < w; j++) {
                c->sums[j0 + j] = wrap_i32(s[j]);
                if ((int64_t)a[j] > best) best = (int64_t)a[j];
            }
        }
    }
    c->abs_max[tid] = best;
}

int64_t kmux_cpu_s8_col_sums(int64_t k, int64_t n, const int8_t *q, int64_t ld, int trans,
                             int32_t *sums, int threads) {
    colsum_job c;
    c.k = k, c.ld = ld, c.q = q, c.trans = trans, c.sums = sums;
    int parts =
        kmux_parallel_for_from(n, k, threads, trans ? 1 : 64, PASS_PARALLEL_MIN, colsum_range, &c);
    /* an absolute sum is at most 128 k: exact in the uint32 accumulators below k = 2^25 */
    if (k >= ((int64_t)1 << 25)) return INT64_MAX;
    int64_t best = 0;
    for (int t = 0; t < parts; t++)
        if (c.abs_max[t] > best) best = c.abs_max[t];
    return best;
}

int kmux_cpu_s8_abs_max(int64_t rows, int64_t cols, const int8_t *src, int64_t ld) {
    uint8_t most = 0;
    for (int64_t i = 0; i < rows; i++) {
        const int8_t *row = src + i * ld;
        uint8_t m = 0;
        for (int64_t j = 0; j < cols; j++) {
            /* |v| as a byte: -128 gives 0x80, which is 128 read unsigned */
            uint8_t a = (uint8_t)(row[j] < 0 ? -(unsigned)row[j] : (unsigned)row[j]);
            m = a > m ? a : m;
        }
        most = m > most ? m : most;
    }
    return most;
}

typedef struct bias_job {
    int64_t cols, ld;
    const int8_t *src;
    uint8_t *dst;
} bias_job;

/* One row: u8 stores may alias anything, so the row loop gets restrict pointers and no loads
 * through the job record (else the compiler reloads it after every byte and does not vectorise:
 * 0.3 ms for a 1024 x 1024 copy). */
static void bias_row(uint8_t *restrict out, const uint8_t *restrict row, int64_t n) {
    for (int64_t j = 0; j < n; j++)
        out[j] = (uint8_t)(row[j] ^ 0x80u); /* s8 v -> u8 v + 128 */
}

static void bias_range(void *vctx, int64_t begin, int64_t end, int tid) {
    const bias_job *b = vctx;
    const int64_t cols = b->cols, ld = b->ld;
    const uint8_t *src = (const uint8_t *)b->src;
    uint8_t *dst = b->dst;
    (void)tid;
    for (int64_t i = begin; i < end; i++)
        bias_row(dst + i * cols, src + i * ld, cols);
}

void kmux_cpu_s8_to_u8_biased(int64_t rows, int64_t cols, const int8_t *src, int64_t ld,
                              uint8_t *dst, int threads) {
    bias_job b = {cols, ld, src, dst};
    kmux_parallel_for_from(rows, cols, threads, 1, PASS_PARALLEL_MIN, bias_range, &b);
}

typedef struct comp_job {
    int64_t cols, ldc;
    int32_t *c;
    const int32_t *sums;
} comp_job;

static void comp_row(uint32_t *restrict row, const uint32_t *restrict s, int64_t n) {
    for (int64_t j = 0; j < n; j++)
        row[j] -= s[j] << 7; /* 128 * sum, modulo 2^32 */
}

static void comp_range(void *vctx, int64_t begin, int64_t end, int tid) {
    const comp_job *cj = vctx;
    const int64_t cols = cj->cols, ldc = cj->ldc;
    (void)tid;
    for (int64_t i = begin; i < end; i++)
        comp_row((uint32_t *)(cj->c + i * ldc), (const uint32_t *)cj->sums, cols);
}

void kmux_cpu_s32_sub_bias_comp(int64_t rows, int64_t cols, int32_t *c, int64_t ldc,
                                const int32_t *sums, int threads) {
    comp_job cj = {cols, ldc, c, sums};
    kmux_parallel_for_from(rows, cols, threads, 1, PASS_PARALLEL_MIN / 4, comp_range, &cj);
}
