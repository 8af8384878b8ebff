/*
 * epilogue.c - a GEMM's bias and ReLU epilogue over its f32 result, on several threads, for the
 * backends whose library has no fused epilogue (OpenBLAS). It gives the bits of the shared CPU
 * finish (dispatch/common/cpu_finish.c, one element at a time, in f64): the sum is formed in f64
 * as there, then rounded once to the output type: f32 directly, bf16 and f16 through an f32 rounded
 * to odd (which a nearest-even rounding to a format of 2 or more bits less then rounds exactly as
 * from the f64), NaN as the finish writes it (the quiet NaN with its sign). Measured
 * (bench_epilogue, 1024^3, 2-core EPYC): the shared finish made OpenBLAS's fused GEMM + bias + ReLU
 * slower than the three separate calls.
 */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "cast_internal.h"
#include "kmux_cpu_kernels.h"

#define RUN 256 /* elements converted at a time (an f32 row buffer on the stack) */

/* The finish's NaN: quiet, with the sign of v. */
static float quiet_nan(double v) {
    return kmux_f32_from_bits((signbit(v) ? 0x80000000u : 0u) | 0x7fc00000u);
}

typedef struct epi_job {
    const kmux_matmul_desc *d;
    const float *t;
    int64_t ldt;
    const void *bias;
    void *c; /* this batch's C */
    int64_t run_len, runs;
    int bias_along; /* 1: the bias varies along a stored run (row-major), 0: per run */
    int relu;
} epi_job;

/* bias[i0 .. i0 + m) as f64 (exact) into out; zeros without a bias. */
static void bias_f64(const epi_job *j, int64_t i0, int64_t m, double *out) {
    if (!j->bias) {
        for (int64_t k = 0; k < m; k++)
            out[k] = 0.0;
        return;
    }
    if (j->d->bias_type == KMUX_F32) {
        for (int64_t k = 0; k < m; k++)
            out[k] = (double)((const float *)j->bias)[i0 + k];
        return;
    }
    float f[RUN]; /* bias_type == c_type: bf16 or f16 */
    kmux_cast_to_f32_serial(m, (const uint16_t *)j->bias + i0, j->d->bias_type, f,
                            kmux_cast_have_avx2());
    for (int64_t k = 0; k < m; k++)
        out[k] = (double)f[k];
}

static void range(void *ctx, int64_t begin, int64_t end, int tid) {
    (void)tid;
    const epi_job *j = ctx;
    const kmux_dtype ct = j->d->c_type;
    const size_t es = ct == KMUX_F32 ? 4 : 2;
    float buf[RUN];
    double bias_run[RUN];
    for (int64_t r = begin; r < end; r++) {
        const float *t = j->t + r * j->ldt;
        char *c = (char *)j->c + (size_t)(r * j->d->ldc) * es;
        double b_const = 0.0;
        if (!j->bias_along) bias_f64(j, r, 1, &b_const);
        for (int64_t c0 = 0; c0 < j->run_len; c0 += RUN) {
            const int64_t m = j->run_len - c0 < RUN ? j->run_len - c0 : RUN;
            if (j->bias_along)
                bias_f64(j, c0, m, bias_run);
            else
                for (int64_t k = 0; k < m; k++)
                    bias_run[k] = b_const;
            for (int64_t k = 0; k < m; k++) {
                double v = (double)t[c0 + k] + bias_run[k];
                if (j->relu) v = v > 0.0 ? v : (isnan(v) ? v : 0.0);
                buf[k] = isnan(v)         ? quiet_nan(v)
                         : ct == KMUX_F32 ? (float)v
                                          : kmux_cpu_f64_to_f32_odd(v);
            }
            if (ct == KMUX_F32)
                memcpy(c + (size_t)c0 * 4, buf, (size_t)m * 4);
            else /* nearest even from the odd-rounded f32: the f64's one rounding */
                kmux_cast_from_f32(m, buf, c + (size_t)c0 * es, ct, 0, NULL, kmux_cast_have_avx2(),
                                   0);
        }
    }
}

int kmux_cpu_matmul_epilogue_runs(const kmux_matmul_desc *d, const kmux_matmul_args *a) {
    const unsigned epi = d->epilogue;
    return (epi & ~(unsigned)(KMUX_EPILOGUE_BIAS | KMUX_EPILOGUE_RELU)) == 0 && !a->d_scale &&
           !a->amax_d &&
           (d->c_type == KMUX_F32 || d->c_type == KMUX_BF16 || d->c_type == KMUX_F16) &&
           (!(epi & KMUX_EPILOGUE_BIAS) || d->bias_type == KMUX_F32 || d->bias_type == d->c_type);
}

void kmux_cpu_matmul_epilogue(const kmux_matmul_desc *d, const kmux_matmul_args *a, const float *t,
                              int64_t ldt, int64_t batch, int threads) {
    const int row = d->order == KMUX_ROW_MAJOR;
    const size_t es = d->c_type == KMUX_F32 ? 4 : 2;
    epi_job j = {.d = d,
                 .t = t,
                 .ldt = ldt,
                 .bias = (d->epilogue & KMUX_EPILOGUE_BIAS) ? a->bias : NULL,
                 .c = (char *)a->C + (size_t)(batch * d->stride_c) * es,
                 .run_len = row ? d->n : d->m,
                 .runs = row ? d->m : d->n,
                 .bias_along = row,
                 .relu = (d->epilogue & KMUX_EPILOGUE_RELU) != 0};
    kmux_cast_parallel_for(j.runs, j.run_len, threads, 1, range, &j);
}
