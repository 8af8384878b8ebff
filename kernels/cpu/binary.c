/*
 * binary.c - the binary family on the CPU (kmux_cpu_binary): dst's shape grouped against src1's
 * (dispatch/common/kmux_family.h), so that the innermost group is one contiguous run of dst and
 * src0 with src1 either running alongside (same shape there) or one broadcast value (a bias of
 * an NCHW tensor: one value per H x W run). The runs are cut into blocks of BLOCK elements, the
 * blocks split across threads; one loop per algorithm, expanded from the table's row list, so
 * that each is a straight vectorisable loop (cloned for AVX-512, AVX2 and the baseline).
 * bf16 is decoded and rounded (RNE) inside the loops, one pass (cpu_bf16.h); f16 blocks are
 * decoded to f32, computed, rounded once.
 */
#include <stdint.h>
#include <string.h>

#include "cast_internal.h"
#include "cpu_bf16.h"
#include "cpu_clones.h"
#include "cpu_stream.h"
#include "kmux_binary.h"
#include "kmux_cpu_kernels.h"

/* elements of one block: 1024, the inputs prefetched ahead and a large output streamed out, as
 * eltwise.c (cpu_stream.h) */
#define BLOCK 1024

/* o = op(al a, be b) with b a run (vv) or one value (vs), for each algorithm */
#define KMUX_BIN_LOOPS_(E, f, nm)                                                                  \
    KMUX_CPU_CLONES static void vv_##f(int64_t n, const float *a, const float *b, float *o,        \
                                       float al, float be) {                                       \
        for (int64_t i = 0; i < n; i++)                                                            \
            o[i] = kmux_bin_##f(al * a[i], be * b[i]);                                             \
    }                                                                                              \
    KMUX_CPU_CLONES static void vs_##f(int64_t n, const float *a, float b, float *o, float al) {   \
        for (int64_t i = 0; i < n; i++)                                                            \
            o[i] = kmux_bin_##f(al * a[i], b);                                                     \
    }
KMUX_BINARY_ALGS(KMUX_BIN_LOOPS_)
#undef KMUX_BIN_LOOPS_

/* the same loops on bf16 tensors, decoded and rounded inside the loop (cpu_bf16.h) */
#define KMUX_BIN_LOOPS16_(E, f, nm)                                                                \
    KMUX_CPU_CLONES static void vv16_##f(int64_t n, const uint16_t *a, const uint16_t *b,          \
                                         uint16_t *o, float al, float be) {                        \
        for (int64_t i = 0; i < n; i++)                                                            \
            o[i] = kmux_bf16_out(kmux_bin_##f(al * kmux_bf16_in(a[i]), be * kmux_bf16_in(b[i])));  \
    }                                                                                              \
    KMUX_CPU_CLONES static void vs16_##f(int64_t n, const uint16_t *a, float b, uint16_t *o,       \
                                         float al) {                                               \
        for (int64_t i = 0; i < n; i++)                                                            \
            o[i] = kmux_bf16_out(kmux_bin_##f(al * kmux_bf16_in(a[i]), b));                        \
    }
KMUX_BINARY_ALGS(KMUX_BIN_LOOPS16_)
#undef KMUX_BIN_LOOPS16_

static void run16(int alg, int64_t n, const uint16_t *a, const uint16_t *b, int bvec, uint16_t *o,
                  float al, float be) {
    switch (alg) {
#define KMUX_BIN_CASE16_(E, f, nm)                                                                 \
    case KMUX_BINARY_##E:                                                                          \
        if (bvec)                                                                                  \
            vv16_##f(n, a, b, o, al, be);                                                          \
        else                                                                                       \
            vs16_##f(n, a, be *kmux_bf16_in(b[0]), o, al);                                         \
        break;
        KMUX_BINARY_ALGS(KMUX_BIN_CASE16_)
#undef KMUX_BIN_CASE16_
    default:
        break;
    }
}

static void run(int alg, int64_t n, const float *a, const float *b, int bvec, float *o, float al,
                float be) {
    switch (alg) {
#define KMUX_BIN_CASE_(E, f, nm)                                                                   \
    case KMUX_BINARY_##E:                                                                          \
        if (bvec)                                                                                  \
            vv_##f(n, a, b, o, al, be);                                                            \
        else                                                                                       \
            vs_##f(n, a, be *b[0], o, al);                                                         \
        break;
        KMUX_BINARY_ALGS(KMUX_BIN_CASE_)
#undef KMUX_BIN_CASE_
    default:
        break;
    }
}

typedef struct bin_job {
    kmux_bin_params p;
    int64_t len;    /* elements of one run (the innermost group) */
    int64_t blocks; /* blocks of one run */
    int bvec;       /* src1 runs alongside (1) or is one value per run (0) */
    int avx2;
    int stream; /* dst is large enough to be streamed out (kmux_cpu_stream_worth) */
} bin_job;

static void range(void *ctx, int64_t begin, int64_t end, int tid) {
    (void)tid;
    const bin_job *j = ctx;
    const kmux_bin_params *p = &j->p;
    const size_t es = (size_t)kmux_dtype_desc_of((kmux_dtype)p->dtype).bytes;
    float ab[BLOCK], bb[BLOCK], ob[BLOCK];
    for (int64_t t = begin; t < end; t++) {
        const int64_t r = t / j->blocks, c = (t % j->blocks) * BLOCK;
        const int64_t m = j->len - c < BLOCK ? j->len - c : BLOCK;
        const int64_t off = r * j->len + c;
        const int64_t off1 = kmux_nd_part_offset(&p->g, r * j->len) + (j->bvec ? c : 0);
        const int64_t m1 = j->bvec ? m : 1;
        kmux_cpu_prefetch_ahead((const char *)p->src0 + (size_t)off * es, (size_t)m * es);
        if (j->bvec)
            kmux_cpu_prefetch_ahead((const char *)p->src1 + (size_t)off1 * es, (size_t)m * es);
        if (p->dtype == KMUX_F32) {
            float *o = kmux_cpu_block_out((float *)p->dst + off, ob, j->stream);
            run(p->alg, m, (const float *)p->src0 + off, (const float *)p->src1 + off1, j->bvec, o,
                p->alpha, p->beta);
            kmux_cpu_block_done((float *)p->dst + off, ob, (size_t)m * es, j->stream);
            continue;
        }
        if (p->dtype == KMUX_BF16) {
            uint16_t *o = kmux_cpu_block_out((uint16_t *)p->dst + off, ob, j->stream);
            run16(p->alg, m, (const uint16_t *)p->src0 + off, (const uint16_t *)p->src1 + off1,
                  j->bvec, o, p->alpha, p->beta);
            kmux_cpu_block_done((uint16_t *)p->dst + off, ob, (size_t)m * es, j->stream);
            continue;
        }
        kmux_cast_to_f32_serial(m, (const char *)p->src0 + (size_t)off * es, (kmux_dtype)p->dtype,
                                ab, j->avx2);
        kmux_cast_to_f32_serial(m1, (const char *)p->src1 + (size_t)off1 * es, (kmux_dtype)p->dtype,
                                bb, j->avx2);
        run(p->alg, m, ab, bb, j->bvec, ob, p->alpha, p->beta);
        kmux_cast_from_f32(m, ob, (char *)p->dst + (size_t)off * es, (kmux_dtype)p->dtype, 0, NULL,
                           j->avx2, 0);
    }
    if (j->stream) kmux_cpu_stream_fence();
}

void kmux_cpu_binary(const kmux_binary_desc *d, const kmux_binary_args *args, int threads) {
    bin_job j;
    j.p = kmux_bin_params_of(d, args);
    const kmux_nd_groups *g = &j.p.g;
    j.len = g->n ? g->size[g->n - 1] : 1;
    j.bvec = g->n ? g->kept[g->n - 1] : 1;
    j.blocks = (j.len + BLOCK - 1) / BLOCK;
    j.avx2 = kmux_cast_have_avx2();
    j.stream = kmux_cpu_stream_worth((size_t)j.p.n * kmux_dtype_desc_of(d->dtype).bytes);
    const int64_t items = j.p.n / j.len * j.blocks;
    kmux_cast_parallel_for(items, j.len < BLOCK ? j.len : BLOCK, threads, 1, range, &j);
}
