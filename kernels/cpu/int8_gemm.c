/*
 * int8_gemm.c - the passes around an exact s8 x s8 -> s32 GEMM that runs on u8 x s8 kernels
 * (oneDNN's brgemm with VNNI, see backends/onednn/onednn_matmul.h): the column sums of Q (for the
 * compensation, and the bound that says when oneDNN's own s8 x s8 kernel is exact), the largest
 * |Q| (a cheaper first test of that bound), the biased u8 copy P + 128, and the compensation
 * C -= 128 * colsum(Q).
 *
 * All arithmetic on sums is unsigned modulo 2^32 (no signed overflow), as integer BLAS wraps.
 * The loops are written so that the compiler vectorises them (this file is built with -O3, see
 * CMakeLists.txt). Each call runs on the calling thread: the caller splits the work (cpu:onednn
 * runs the parts on oneDNN's OpenMP team, onednn_matmul_exec.c).
 */
#include <stdint.h>
#include <string.h>

#include "kmux_common.h"
#include "kmux_cpu_kernels.h"

/* Columns summed at a time (untransposed Q): the accumulator rows stay in L1; rows
 * summed in 16 bits before they are added to the 32-bit sums. */
#define COL_BLOCK 512
#define ROW_BLOCK 128

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

int64_t kmux_cpu_s8_col_sums(int64_t k, int64_t n, const int8_t *q, int64_t ld, int trans,
                             int32_t *sums) {
    int64_t best = 0;
    if (trans) { /* column j is the storage row j: a contiguous reduction over k */
        for (int64_t j = 0; j < n; j++) {
            const int8_t *col = q + j * ld;
            uint32_t s = 0, a = 0;
            for (int64_t l = 0; l < k; l++) {
                int v = col[l];
                s += (uint32_t)v;
                a += (uint32_t)(v < 0 ? -v : v);
            }
            sums[j] = kmux_common_wrap_i32(s);
            if ((int64_t)a > best) best = (int64_t)a;
        }
    } else { /* rows of Q run along the columns: add whole row pieces into the accumulators */
        uint32_t s[COL_BLOCK], a[COL_BLOCK];
        int16_t s16[COL_BLOCK], a16[COL_BLOCK];
        for (int64_t j0 = 0; j0 < n; j0 += COL_BLOCK) {
            int64_t w = n - j0 < COL_BLOCK ? n - j0 : COL_BLOCK;
            memset(s, 0, sizeof s);
            memset(a, 0, sizeof a);
            for (int64_t l0 = 0; l0 < k; l0 += ROW_BLOCK) {
                const int64_t l1 = k - l0 < ROW_BLOCK ? k : l0 + ROW_BLOCK;
                memset(s16, 0, sizeof s16);
                memset(a16, 0, sizeof a16);
                for (int64_t l = l0; l < l1; l++)
                    add_row16(s16, a16, q + l * ld + j0, w);
                for (int64_t j = 0; j < w; j++) {
                    s[j] += (uint32_t)(int32_t)s16[j];
                    a[j] += (uint32_t)(uint16_t)a16[j];
                }
            }
            for (int64_t j = 0; j < w; j++) {
                sums[j0 + j] = kmux_common_wrap_i32(s[j]);
                if ((int64_t)a[j] > best) best = (int64_t)a[j];
            }
        }
    }
    /* an absolute sum is at most 128 k: exact in the uint32 accumulators below k = 2^25 */
    return k >= ((int64_t)1 << 25) ? INT64_MAX : best;
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

/* One row: u8 stores may alias anything, so the row loop gets restrict pointers (else the
 * compiler reloads every bound after each byte and does not vectorise: 0.3 ms for a 1024 x 1024
 * copy, 0.02 ms with them). */
static void bias_row(uint8_t *restrict out, const uint8_t *restrict row, int64_t n) {
    for (int64_t j = 0; j < n; j++)
        out[j] = (uint8_t)(row[j] ^ 0x80u); /* s8 v -> u8 v + 128 */
}

void kmux_cpu_s8_to_u8_biased(int64_t rows, int64_t cols, const int8_t *src, int64_t ld,
                              uint8_t *dst) {
    for (int64_t i = 0; i < rows; i++)
        bias_row(dst + i * cols, (const uint8_t *)(src + i * ld), cols);
}

static void comp_row(uint32_t *restrict row, const uint32_t *restrict s, int64_t n) {
    for (int64_t j = 0; j < n; j++)
        row[j] -= s[j] << 7; /* 128 * sum, modulo 2^32 */
}

void kmux_cpu_s32_sub_bias_comp(int64_t rows, int64_t cols, int32_t *c, int64_t ldc,
                                const int32_t *sums) {
    for (int64_t i = 0; i < rows; i++)
        comp_row((uint32_t *)(c + i * ldc), (const uint32_t *)sums, cols);
}
