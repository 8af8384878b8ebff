/*
 * eltwise.c - the element-wise family on the CPU (kmux_cpu_eltwise): every algorithm of
 * dispatch/common/kmux_eltwise.h's table, expanded from its row list into one loop per algorithm
 * and direction, so that the compiler sees a straight loop over one inline function (ReLU and
 * linear vectorise; the transcendental ones call libm per element). f16/bf16 run in blocks
 * decoded to f32 and rounded back once (RNE, the kmux_cast rules). The work is split across
 * threads from KMUX_CAST_PARALLEL_MIN elements.
 */
#include "cast_internal.h"
#include "kmux_eltwise.h"
#include "kmux_cpu_kernels.h"

#define BLOCK 1024 /* f32 elements of one decoded block (3 x 4 KiB on the stack) */

typedef struct elt_job {
    const kmux_eltwise_desc *d;
    kmux_eltwise_args a;
    int avx2;
} elt_job;

/* y[i] = f(x[i]) over f32, for each algorithm */
#define KMUX_ELT_FWD_LOOP_(E, f, nm, fl)                                                           \
    static void fwd_##f(int64_t n, const float *x, float *y, float a, float b) {                   \
        for (int64_t i = 0; i < n; i++)                                                            \
            y[i] = kmux_elt_##f##_fwd(x[i], a, b);                                                 \
    }                                                                                              \
    static void bwd_##f(int64_t n, const float *dd, const float *v, float *ds, float a, float b) { \
        for (int64_t i = 0; i < n; i++)                                                            \
            ds[i] = kmux_elt_##f##_bwd(dd[i], v[i], a, b);                                         \
    }                                                                                              \
    static void bwd_dst_##f(int64_t n, const float *dd, const float *v, float *ds, float a,        \
                            float b) {                                                             \
        for (int64_t i = 0; i < n; i++)                                                            \
            ds[i] = kmux_elt_##f##_bwd_dst(dd[i], v[i], a, b);                                     \
    }
KMUX_ELTWISE_ALGS(KMUX_ELT_FWD_LOOP_)
#undef KMUX_ELT_FWD_LOOP_

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

/* The element range [begin, end): f32 in place of the tensors, f16/bf16 through f32 blocks. */
static void range(void *ctx, int64_t begin, int64_t end, int tid) {
    (void)tid;
    const elt_job *j = ctx;
    const kmux_eltwise_desc *d = j->d;
    const int fwd = d->prop == KMUX_PROP_FORWARD;
    const void *x = fwd ? j->a.src : d->use_dst_for_bwd ? (const void *)j->a.dst : j->a.src;
    const void *dd = j->a.diff_dst;
    void *out = fwd ? j->a.dst : j->a.diff_src;
    if (d->dtype == KMUX_F32) {
        run_f32(d, end - begin, (const float *)x + begin, fwd ? NULL : (const float *)dd + begin,
                (float *)out + begin);
        return;
    }
    float xb[BLOCK], db[BLOCK], ob[BLOCK];
    const size_t es = (size_t)kmux_dtype_desc_of(d->dtype).bytes;
    for (int64_t i = begin; i < end; i += BLOCK) {
        const int64_t m = end - i < BLOCK ? end - i : BLOCK;
        kmux_cast_to_f32_serial(m, (const char *)x + i * es, d->dtype, xb, j->avx2);
        if (!fwd) kmux_cast_to_f32_serial(m, (const char *)dd + i * es, d->dtype, db, j->avx2);
        run_f32(d, m, xb, db, ob);
        kmux_cast_from_f32(m, ob, (char *)out + i * es, d->dtype, 0, NULL, j->avx2, 0);
    }
}

void kmux_cpu_eltwise(const kmux_eltwise_desc *d, const kmux_eltwise_args *args, int threads) {
    elt_job j = {d, *args, kmux_cast_have_avx2()};
    /* block-aligned ranges: an in-place f16/bf16 op never has two threads on one block */
    kmux_cast_parallel_for(d->n, 1, threads, BLOCK, range, &j);
}
