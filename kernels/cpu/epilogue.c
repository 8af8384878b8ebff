/*
 * epilogue.c - a GEMM's bias and ReLU epilogue over its f32 result (with the ReLU's mask written,
 * RELU_AUX, or its backward, DRELU), on several threads, for the backends whose library has no
 * such fused epilogue (OpenBLAS; oneDNN for the mask). It gives the bits of the shared CPU
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
#include "cpu_clones.h"
#include "cpu_finish.h"
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
    /* RELU_AUX writes, DRELU reads the mask: run r's bits from bit r * aux_ld of aux, a byte
     * boundary (kmux_cpu_matmul_epilogue_runs), so threads never share a byte */
    uint8_t *aux;
    int64_t aux_ld;
    int write_mask, drelu;
} epi_job;

/* The mask bits [x, x + m) (x a multiple of 8) from the values v: set where v > 0; bits past m
 * in the last byte are kept. */
static void put_bits(uint8_t *aux, int64_t x, int64_t m, const double *v) {
    uint8_t *p = aux + x / 8;
    for (int64_t k = 0; k < m; k += 8) {
        const int64_t e = m - k < 8 ? m - k : 8;
        uint8_t byte = e < 8 ? (uint8_t)(p[k / 8] & (0xffu << e)) : 0;
        for (int64_t q = 0; q < e; q++)
            byte |= (uint8_t)((v[k + q] > 0.0) << q);
        p[k / 8] = byte;
    }
}

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

/* Eight elements of an f32 C without bias, in integer arithmetic on their bits (branch-free, so
 * that it vectorises): keep bit q of `keep` -> the element (a NaN as the finish's quiet NaN with
 * its sign), else +0. Returns the byte of t > 0 (Inf counts, NaN does not). */
static inline unsigned select8(const float *t, float *c, unsigned keep, int relu, int use_keep) {
    uint32_t u[8], o[8];
    memcpy(u, t, sizeof u);
    unsigned pos_bits = 0;
    for (int q = 0; q < 8; q++) {
        const uint32_t a = u[q] & 0x7fffffffu;
        const uint32_t nan = a > 0x7f800000u;
        const uint32_t pos = (u[q] >> 31) == 0 && a != 0 && !nan;
        pos_bits |= pos << q;
        const uint32_t k = use_keep ? (keep >> q) & 1u : !relu || pos || nan;
        const uint32_t v = nan ? (u[q] & 0x80000000u) | 0x7fc00000u : u[q];
        o[q] = k ? v : 0u;
    }
    memcpy(c, o, sizeof o);
    return pos_bits;
}

/* A run of n elements of an f32 C without bias, t -> c (c may be t): ReLU (NaN kept), the mask
 * written from t > 0 (write_mask) or DRELU's select by it, eight elements a mask byte; bits past
 * n in the last byte kept. The finish's bits. */
KMUX_CPU_CLONES static void run_f32(const float *t, float *c, uint8_t *bits, int64_t n, int relu,
                                    int write_mask, int drelu) {
    int64_t k = 0;
    for (; k + 8 <= n; k += 8) {
        const unsigned b = select8(t + k, c + k, drelu ? bits[k / 8] : 0u, relu, drelu);
        if (write_mask) bits[k / 8] = (uint8_t)b;
    }
    if (k < n) { /* the last partial byte, through a padded copy: its bits past n kept */
        const int64_t e = n - k;
        float tt[8] = {0}, cc[8];
        memcpy(tt, t + k, (size_t)e * sizeof(float));
        const unsigned b = select8(tt, cc, drelu ? bits[k / 8] : 0u, relu, drelu);
        memcpy(c + k, cc, (size_t)e * sizeof(float));
        if (write_mask) bits[k / 8] = (uint8_t)((bits[k / 8] & (0xffu << e)) | (b & ~(0xffu << e)));
    }
}

/* f64 -> f32 rounded to odd (kmux_cpu_f64_to_f32_odd, inline here so that a run vectorises):
 * exact values and infinities as they are, else the neighbour toward zero with its last bit set.
 * Not for NaN. */
static inline float odd32(double v) {
    const float f = (float)v;
    uint32_t bits;
    memcpy(&bits, &f, 4);
    const uint32_t away = fabs((double)f) > fabs(v);
    const uint32_t odd = (bits - away) | 1u;
    bits = ((double)f == v || isinf(f)) ? bits : odd;
    float o;
    memcpy(&o, &bits, 4);
    return o;
}

/* The m values v after the bias: ReLU (NaN kept), then the finish's one rounding to f32 (f32_out)
 * or to odd (for the later nearest-even rounding to bf16/f16), NaN as the finish's quiet NaN. */
KMUX_CPU_CLONES static void round_run(const double *v, int64_t m, int relu, int f32_out,
                                      float *buf) {
    for (int64_t k = 0; k < m; k++) {
        double x = v[k];
        if (relu) x = x > 0.0 || x != x ? x : 0.0;
        const float r = f32_out ? (float)x : odd32(x);
        buf[k] = x != x ? quiet_nan(x) : r;
    }
}

static void range(void *ctx, int64_t begin, int64_t end, int tid) {
    (void)tid;
    const epi_job *j = ctx;
    const kmux_dtype ct = j->d->c_type;
    const size_t es = ct == KMUX_F32 ? 4 : 2;
    float buf[RUN];
    double bias_run[RUN];
    const int avx2 = kmux_cast_have_avx2(); /* once: it is a pthread_once call */
    if (!j->bias) { /* t is exact in f32: one rounding from it is the finish's */
        for (int64_t r = begin; r < end; r++) {
            const float *t = j->t + r * j->ldt;
            char *c = (char *)j->c + (size_t)(r * j->d->ldc) * es;
            uint8_t *bits = j->aux ? j->aux + r * j->aux_ld / 8 : NULL;
            if (ct == KMUX_F32) {
                run_f32(t, (float *)c, bits, j->run_len, j->relu, j->write_mask, j->drelu);
                continue;
            }
            for (int64_t c0 = 0; c0 < j->run_len; c0 += RUN) { /* RUN: whole mask bytes */
                const int64_t m = j->run_len - c0 < RUN ? j->run_len - c0 : RUN;
                run_f32(t + c0, buf, bits ? bits + c0 / 8 : NULL, m, j->relu, j->write_mask,
                        j->drelu);
                kmux_cast_from_f32(m, buf, c + (size_t)c0 * es, ct, 0, NULL, avx2, 0);
            }
        }
        return;
    }
    /* a short row's bias (a convolution's K channels, NHWC): converted once, not once a row */
    const int one_chunk = j->bias_along && j->run_len <= RUN;
    if (one_chunk) bias_f64(j, 0, j->run_len, bias_run);
    /* short dense rows (t, C and the mask without gaps): whole rows a chunk, so that the rounding
     * and the conversion run over RUN elements, not over one row of K at a time */
    const int64_t n = j->run_len, per = n > 0 ? RUN / n : 0;
    if (one_chunk && per > 1 && j->ldt == n && j->d->ldc == n && !j->drelu &&
        (!j->write_mask || j->aux_ld == n)) {
        for (int64_t k = n; k < per * n; k++)
            bias_run[k] = bias_run[k - n];
        for (int64_t r = begin; r < end; r += per) {
            const int64_t m = (end - r < per ? end - r : per) * n;
            const float *t = j->t + r * n;
            double pre[RUN];
            for (int64_t k = 0; k < m; k++)
                pre[k] = (double)t[k] + bias_run[k];
            if (j->write_mask) put_bits(j->aux, r * n, m, pre);
            round_run(pre, m, j->relu, ct == KMUX_F32, buf);
            char *c = (char *)j->c + (size_t)(r * n) * es;
            if (ct == KMUX_F32)
                memcpy(c, buf, (size_t)m * 4);
            else
                kmux_cast_from_f32(m, buf, c, ct, 0, NULL, avx2, 0);
        }
        return;
    }
    for (int64_t r = begin; r < end; r++) {
        const float *t = j->t + r * j->ldt;
        char *c = (char *)j->c + (size_t)(r * j->d->ldc) * es;
        double b_const = 0.0;
        if (!j->bias_along) bias_f64(j, r, 1, &b_const);
        for (int64_t c0 = 0; c0 < j->run_len; c0 += RUN) {
            const int64_t m = j->run_len - c0 < RUN ? j->run_len - c0 : RUN;
            if (j->bias_along && !one_chunk)
                bias_f64(j, c0, m, bias_run);
            else if (!j->bias_along)
                for (int64_t k = 0; k < m; k++)
                    bias_run[k] = b_const;
            const int64_t x = r * j->aux_ld + c0; /* the run's bit c0 */
            double pre[RUN];
            for (int64_t k = 0; k < m; k++)
                pre[k] = (double)t[c0 + k] + bias_run[k];
            if (j->write_mask) put_bits(j->aux, x, m, pre);
            if (j->drelu) /* (DRELU takes no bias: kept for the shape of the rule) */
                for (int64_t k = 0; k < m; k++)
                    if (!((j->aux[(x + k) / 8] >> ((x + k) % 8)) & 1)) pre[k] = 0.0;
            round_run(pre, m, j->relu, ct == KMUX_F32, buf);
            if (ct == KMUX_F32)
                memcpy(c + (size_t)c0 * 4, buf, (size_t)m * 4);
            else /* nearest even from the odd-rounded f32: the f64's one rounding */
                kmux_cast_from_f32(m, buf, c + (size_t)c0 * es, ct, 0, NULL, avx2, 0);
        }
    }
}

int kmux_cpu_matmul_epilogue_runs(const kmux_matmul_desc *d, const kmux_matmul_args *a) {
    const unsigned epi = d->epilogue;
    const unsigned fast =
        KMUX_EPILOGUE_BIAS | KMUX_EPILOGUE_RELU | KMUX_EPILOGUE_RELU_AUX | KMUX_EPILOGUE_DRELU;
    /* a mask's runs start on byte boundaries (threads own whole bytes) */
    const int mask_ok = !(epi & (KMUX_EPILOGUE_RELU_AUX | KMUX_EPILOGUE_DRELU)) ||
                        (d->aux_ld % 8 == 0 && (d->batch_count == 1 || d->stride_aux % 8 == 0));
    return (epi & ~fast) == 0 && mask_ok && !a->d_scale && !a->amax_d &&
           (d->c_type == KMUX_F32 || d->c_type == KMUX_BF16 || d->c_type == KMUX_F16) &&
           (!(epi & KMUX_EPILOGUE_BIAS) || d->bias_type == KMUX_F32 || d->bias_type == d->c_type);
}

/* The job of batch `batch`. */
static epi_job job_of(const kmux_matmul_desc *d, const kmux_matmul_args *a, const float *t,
                      int64_t ldt, int64_t batch) {
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
                 .relu = (d->epilogue & KMUX_EPILOGUE_RELU) != 0,
                 .aux = a->aux ? (uint8_t *)a->aux + batch * d->stride_aux / 8 : NULL,
                 .aux_ld = d->aux_ld,
                 .write_mask = (d->epilogue & KMUX_EPILOGUE_RELU_AUX) != 0,
                 .drelu = (d->epilogue & KMUX_EPILOGUE_DRELU) != 0};
    return j;
}

void kmux_cpu_matmul_epilogue(const kmux_matmul_desc *d, const kmux_matmul_args *a, const float *t,
                              int64_t ldt, int64_t batch, int threads) {
    epi_job j = job_of(d, a, t, ldt, batch);
    kmux_cast_parallel_for(j.runs, j.run_len, threads, 1, range, &j);
}

int64_t kmux_cpu_matmul_epilogue_runs_count(const kmux_matmul_desc *d) {
    return d->order == KMUX_ROW_MAJOR ? d->m : d->n;
}

void kmux_cpu_matmul_epilogue_part(const kmux_matmul_desc *d, const kmux_matmul_args *a,
                                   const float *t, int64_t ldt, int64_t batch, int64_t begin,
                                   int64_t end) {
    epi_job j = job_of(d, a, t, ldt, batch);
    range(&j, begin, end, 0);
}

void kmux_cpu_matmul_bias_grad_fast(const kmux_matmul_desc *d, const kmux_matmul_args *a,
                                    int threads) {
    const unsigned e = d->epilogue;
    if (!(e & (KMUX_EPILOGUE_BGRADA | KMUX_EPILOGUE_BGRADB))) return;
    const int of_a = (e & KMUX_EPILOGUE_BGRADA) != 0;
    const int trans = (of_a ? d->transa : d->transb) == KMUX_TRANS;
    /* the operand as stored (rows x cols in its order) and which of its axes is p (k) */
    const int64_t rows = of_a ? (trans ? d->k : d->m) : (trans ? d->n : d->k);
    const int64_t cols = of_a ? (trans ? d->m : d->k) : (trans ? d->k : d->n);
    const int p_is_rows = of_a ? trans : !trans;
    const int row = d->order == KMUX_ROW_MAJOR;
    const int64_t outer = row ? rows : cols, inner = row ? cols : rows;
    const int reduce_outer = row ? p_is_rows : !p_is_rows;
    if ((of_a ? d->lda : d->ldb) != inner || d->k == 0) { /* padded or empty: the finish's loop */
        kmux_cpu_matmul_bias_grad(d, a);
        return;
    }
    /* dense: the reduction family's SUM (f64, rounded once, as the loop) over outer or inner */
    kmux_reduction_desc r = KMUX_REDUCTION_DESC_INIT;
    r.alg = KMUX_REDUCTION_SUM, r.ndims = 2;
    r.src_dtype = of_a ? d->a_type : d->b_type, r.dst_dtype = d->bias_type;
    r.src_dims[0] = outer, r.src_dims[1] = inner;
    r.dst_dims[0] = reduce_outer ? 1 : outer, r.dst_dims[1] = reduce_outer ? inner : 1;
    kmux_reduction_args ra = KMUX_REDUCTION_ARGS_INIT;
    ra.src = of_a ? a->A : a->B, ra.dst = a->bias_grad;
    kmux_cpu_reduction(&r, &ra, threads);
}
