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

/* Columns one worker sums at a time (untransposed Q): the two accumulator rows stay in L1. */
#define COL_BLOCK 512

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
    } else { /* rows of Q run along the columns: add whole row pieces into two accumulators */
        uint32_t s[COL_BLOCK], a[COL_BLOCK];
        for (int64_t j0 = begin; j0 < end; j0 += COL_BLOCK) {
            int64_t w = end - j0 < COL_BLOCK ? end - j0 : COL_BLOCK;
            memset(s, 0, sizeof s);
            memset(a, 0, sizeof a);
            for (int64_t l = 0; l < c->k; l++) {
                const int8_t *row = c->q + l * c->ld + j0;
                for (int64_t j = 0; j < w; j++) {
                    int v = row[j];
                    s[j] += (uint32_t)v;
                    a[j] += (uint32_t)(v < 0 ? -v : v);
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
    int parts = kmux_cast_parallel_for(n, k, threads, trans ? 1 : 64, colsum_range, &c);
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

static void bias_range(void *vctx, int64_t begin, int64_t end, int tid) {
    const bias_job *b = vctx;
    (void)tid;
    for (int64_t i = begin; i < end; i++) {
        const uint8_t *row = (const uint8_t *)(b->src + i * b->ld);
        uint8_t *out = b->dst + i * b->cols;
        for (int64_t j = 0; j < b->cols; j++)
            out[j] = (uint8_t)(row[j] ^ 0x80u); /* s8 v -> u8 v + 128 */
    }
}

void kmux_cpu_s8_to_u8_biased(int64_t rows, int64_t cols, const int8_t *src, int64_t ld,
                              uint8_t *dst, int threads) {
    bias_job b = {cols, ld, src, dst};
    kmux_cast_parallel_for(rows, cols, threads, 1, bias_range, &b);
}

typedef struct comp_job {
    int64_t cols, ldc;
    int32_t *c;
    const int32_t *sums;
} comp_job;

static void comp_range(void *vctx, int64_t begin, int64_t end, int tid) {
    const comp_job *cj = vctx;
    (void)tid;
    for (int64_t i = begin; i < end; i++) {
        uint32_t *row = (uint32_t *)(cj->c + i * cj->ldc);
        const uint32_t *s = (const uint32_t *)cj->sums;
        for (int64_t j = 0; j < cj->cols; j++)
            row[j] -= s[j] << 7; /* 128 * sum, modulo 2^32 */
    }
}

void kmux_cpu_s32_sub_bias_comp(int64_t rows, int64_t cols, int32_t *c, int64_t ldc,
                                const int32_t *sums, int threads) {
    comp_job cj = {cols, ldc, c, sums};
    kmux_cast_parallel_for(rows, cols, threads, 1, comp_range, &cj);
}
