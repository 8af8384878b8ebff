/*
 * eltwise.c - the element-wise family on the CPU (kmux_cpu_eltwise): every algorithm of
 * dispatch/common/kmux_eltwise.h's table, expanded from its row list into one loop per algorithm
 * and direction, so that the compiler sees a straight loop over one inline function and
 * vectorises it. f16/bf16 run in blocks decoded to f32 and rounded back once (RNE, the kmux_cast
 * rules). The work is split across threads from KMUX_CAST_PARALLEL_MIN elements.
 *
 * The transcendental functions (expf, tanhf, erfcf) vectorise through glibc's libmvec
 * (cpu_libmvec.h says how and why). Each loop is cloned for AVX-512, AVX2 and the baseline,
 * chosen at load time (cpu_clones.h). test_conformance_eltwise holds every backend to ref.
 */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "cast_internal.h"
#include "cpu_bf16.h"
#include "cpu_clones.h"
#include "cpu_libmvec.h" /* before kmux_eltwise.h, whose inline functions call expf */
#include "cpu_stream.h"
#include "kmux_cpu_kernels.h"

#include "kmux_eltwise.h"

/* elements of one block (3 x 1 KiB of f32 on the stack): 256, with the inputs prefetched ahead
 * (cpu_stream.h says what was measured) */
#define BLOCK 256

typedef struct elt_job {
    const kmux_eltwise_desc *d;
    kmux_eltwise_args a;
    int avx2;
    int stream; /* the output is large enough to be streamed out (kmux_cpu_stream_worth) */
} elt_job;

/* y[i] = f(x[i]) over f32, for each algorithm */
#define KMUX_ELT_FWD_LOOP_(E, f, nm, fl)                                                           \
    KMUX_CPU_CLONES static void fwd_##f(int64_t n, const float *x, float *y, float a, float b) {   \
        for (int64_t i = 0; i < n; i++)                                                            \
            y[i] = kmux_elt_##f##_fwd(x[i], a, b);                                                 \
    }                                                                                              \
    KMUX_CPU_CLONES static void bwd_##f(int64_t n, const float *dd, const float *v, float *ds,     \
                                        float a, float b) {                                        \
        for (int64_t i = 0; i < n; i++)                                                            \
            ds[i] = kmux_elt_##f##_bwd(dd[i], v[i], a, b);                                         \
    }                                                                                              \
    KMUX_CPU_CLONES static void bwd_dst_##f(int64_t n, const float *dd, const float *v, float *ds, \
                                            float a, float b) {                                    \
        for (int64_t i = 0; i < n; i++)                                                            \
            ds[i] = kmux_elt_##f##_bwd_dst(dd[i], v[i], a, b);                                     \
    }
KMUX_ELTWISE_ALGS(KMUX_ELT_FWD_LOOP_)
#undef KMUX_ELT_FWD_LOOP_

/* the same loops on bf16 tensors */
#define KMUX_ELT_BF16_LOOP_(E, f, nm, fl)                                                          \
    KMUX_CPU_CLONES static void fwd16_##f(int64_t n, const uint16_t *x, uint16_t *y, float a,      \
                                          float b) {                                               \
        for (int64_t i = 0; i < n; i++)                                                            \
            y[i] = kmux_bf16_out(kmux_elt_##f##_fwd(kmux_bf16_in(x[i]), a, b));                    \
    }                                                                                              \
    KMUX_CPU_CLONES static void bwd16_##f(int64_t n, const uint16_t *dd, const uint16_t *v,        \
                                          uint16_t *ds, float a, float b) {                        \
        for (int64_t i = 0; i < n; i++)                                                            \
            ds[i] =                                                                                \
                kmux_bf16_out(kmux_elt_##f##_bwd(kmux_bf16_in(dd[i]), kmux_bf16_in(v[i]), a, b));  \
    }                                                                                              \
    KMUX_CPU_CLONES static void bwd16_dst_##f(int64_t n, const uint16_t *dd, const uint16_t *v,    \
                                              uint16_t *ds, float a, float b) {                    \
        for (int64_t i = 0; i < n; i++)                                                            \
            ds[i] = kmux_bf16_out(                                                                 \
                kmux_elt_##f##_bwd_dst(kmux_bf16_in(dd[i]), kmux_bf16_in(v[i]), a, b));            \
    }
KMUX_ELTWISE_ALGS(KMUX_ELT_BF16_LOOP_)
#undef KMUX_ELT_BF16_LOOP_

static void run_bf16(const kmux_eltwise_desc *d, int64_t n, const uint16_t *x, const uint16_t *dd,
                     uint16_t *out) {
    const float a = d->alpha, b = d->beta;
    switch (d->alg) {
#define KMUX_ELT_CASE16_(E, f, nm, fl)                                                             \
    case KMUX_ELTWISE_##E:                                                                         \
        if (d->prop == KMUX_PROP_FORWARD)                                                          \
            fwd16_##f(n, x, out, a, b);                                                            \
        else if (d->use_dst_for_bwd)                                                               \
            bwd16_dst_##f(n, dd, x, out, a, b);                                                    \
        else                                                                                       \
            bwd16_##f(n, dd, x, out, a, b);                                                        \
        break;
        KMUX_ELTWISE_ALGS(KMUX_ELT_CASE16_)
#undef KMUX_ELT_CASE16_
    default:
        break;
    }
}

static void run_f32(const kmux_eltwise_desc *d, int64_t n, const float *x, const float *dd,
                    float *out) {
    const float a = d->alpha, b = d->beta;
    switch (d->alg) {
#define KMUX_ELT_CASE_(E, f, nm, fl)                                                               \
    case KMUX_ELTWISE_##E:                                                                         \
        if (d->prop == KMUX_PROP_FORWARD)                                                          \
            fwd_##f(n, x, out, a, b);                                                              \
        else if (d->use_dst_for_bwd)                                                               \
            bwd_dst_##f(n, dd, x, out, a, b);                                                      \
        else                                                                                       \
            bwd_##f(n, dd, x, out, a, b);                                                          \
        break;
        KMUX_ELTWISE_ALGS(KMUX_ELT_CASE_)
#undef KMUX_ELT_CASE_
    default:
        break;
    }
}

/* The element range [begin, end) in blocks of BLOCK elements: f32 computed into an L1-resident
 * block and streamed out when the output is large, straight into the output otherwise
 * (kmux_cpu_block_out); bf16 likewise in one pass (run_bf16); f16 decoded into f32 blocks (F16C),
 * computed and rounded back once (plain stores: kmux_cast_from_f32's streaming path was 2x slower
 * in these 2 KiB blocks, bench_eltwise). */
static void range(void *ctx, int64_t begin, int64_t end, int tid) {
    (void)tid;
    const elt_job *j = ctx;
    const kmux_eltwise_desc *d = j->d;
    const int fwd = d->prop == KMUX_PROP_FORWARD;
    const void *x = fwd ? j->a.src : d->use_dst_for_bwd ? (const void *)j->a.dst : j->a.src;
    const void *dd = j->a.diff_dst;
    void *out = fwd ? j->a.dst : j->a.diff_src;
    float xb[BLOCK], db[BLOCK], ob[BLOCK];
    const size_t es = (size_t)kmux_dtype_desc_of(d->dtype).bytes;
    for (int64_t i = begin; i < end; i += BLOCK) {
        const int64_t m = end - i < BLOCK ? end - i : BLOCK;
        kmux_cpu_prefetch_ahead((const char *)x + i * es, (size_t)m * es);
        if (!fwd) kmux_cpu_prefetch_ahead((const char *)dd + i * es, (size_t)m * es);
        if (d->dtype == KMUX_F32) {
            float *o = kmux_cpu_block_out((float *)out + i, ob, j->stream);
            run_f32(d, m, (const float *)x + i, fwd ? NULL : (const float *)dd + i, o);
            kmux_cpu_block_done((float *)out + i, ob, (size_t)m * sizeof(float), j->stream);
            continue;
        }
        if (d->dtype == KMUX_BF16) {
            uint16_t *o16 = kmux_cpu_block_out((uint16_t *)out + i, ob, j->stream);
            run_bf16(d, m, (const uint16_t *)x + i, fwd ? NULL : (const uint16_t *)dd + i, o16);
            kmux_cpu_block_done((uint16_t *)out + i, ob, (size_t)m * sizeof(uint16_t), j->stream);
            continue;
        }
        kmux_cast_to_f32_serial(m, (const char *)x + i * es, d->dtype, xb, j->avx2);
        if (!fwd) kmux_cast_to_f32_serial(m, (const char *)dd + i * es, d->dtype, db, j->avx2);
        run_f32(d, m, xb, db, ob);
        kmux_cast_from_f32(m, ob, (char *)out + i * es, d->dtype, 0, NULL, j->avx2, 0);
    }
    if (j->stream) kmux_cpu_stream_fence(); /* streamed stores visible before the op returns */
}

void kmux_cpu_eltwise(const kmux_eltwise_desc *d, const kmux_eltwise_args *args, int threads) {
    elt_job j = {d, *args, kmux_cast_have_avx2(),
                 kmux_cpu_stream_worth((size_t)d->n * kmux_dtype_desc_of(d->dtype).bytes)};
    /* block-aligned ranges: an in-place f16/bf16 op never has two threads on one block */
    kmux_cast_parallel_for(d->n, 1, threads, BLOCK, range, &j);
}
