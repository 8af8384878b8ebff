/*
 * eltwise.c - the element-wise family on the CPU (kmux_cpu_eltwise): every algorithm of
 * dispatch/common/kmux_eltwise.h's table, expanded from its row list into one loop per algorithm
 * and direction, so that the compiler sees a straight loop over one inline function and
 * vectorises it. f16/bf16 run in blocks decoded to f32 and rounded back once (RNE, the kmux_cast
 * rules). The work is split across threads from KMUX_CAST_PARALLEL_MIN elements.
 *
 * The transcendental functions (expf, tanhf, erfcf) vectorise through glibc's libmvec (x86-64,
 * glibc >= 2.35: _ZGVdN8v_expf, ...): declared here as SIMD-callable, as <math.h> does itself only
 * under -ffast-math, which kmux does not use (it would drop NaN and signed-zero semantics); this
 * file is compiled with -fno-math-errno alone (errno is the only thing a vector call cannot set).
 * Each loop is cloned for AVX-512, AVX2 and the baseline, chosen at load time (target_clones).
 * libmvec's functions are within 4 ulp of the correctly rounded result (glibc's libm-test-ulps);
 * test_conformance_eltwise holds every backend to ref. Other compilers and libcs: scalar calls.
 */
#include <math.h>
#include <stdint.h>
#include <string.h>
#if defined(__x86_64__)
#include <emmintrin.h>
#endif

#include "cast_internal.h"
#include "kmux_cpu_kernels.h"

#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && defined(__GLIBC__) &&       \
    (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 35))
#define KMUX_ELT_LIBMVEC 1
extern float expf(float) __attribute__((__simd__("notinbranch")));
extern float tanhf(float) __attribute__((__simd__("notinbranch")));
extern float erfcf(float) __attribute__((__simd__("notinbranch")));
#define KMUX_ELT_CLONES __attribute__((target_clones("avx512f", "avx2", "default")))
#else
#define KMUX_ELT_CLONES
#endif

#include "kmux_eltwise.h"

#define BLOCK 1024 /* f32 elements of one block (3 x 4 KiB on the stack) */

typedef struct elt_job {
    const kmux_eltwise_desc *d;
    kmux_eltwise_args a;
    int avx2;
} elt_job;

/* y[i] = f(x[i]) over f32, for each algorithm */
#define KMUX_ELT_FWD_LOOP_(E, f, nm, fl)                                                           \
    KMUX_ELT_CLONES static void fwd_##f(int64_t n, const float *x, float *y, float a, float b) {   \
        for (int64_t i = 0; i < n; i++)                                                            \
            y[i] = kmux_elt_##f##_fwd(x[i], a, b);                                                 \
    }                                                                                              \
    KMUX_ELT_CLONES static void bwd_##f(int64_t n, const float *dd, const float *v, float *ds,     \
                                        float a, float b) {                                        \
        for (int64_t i = 0; i < n; i++)                                                            \
            ds[i] = kmux_elt_##f##_bwd(dd[i], v[i], a, b);                                         \
    }                                                                                              \
    KMUX_ELT_CLONES static void bwd_dst_##f(int64_t n, const float *dd, const float *v, float *ds, \
                                            float a, float b) {                                    \
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

/* dst[0..m) = src[0..m) with non-temporal stores where dst is 16-byte aligned (x86-64): the
 * output is not read again by this op, and a plain store first reads each line it writes
 * (write-allocate), a fourth stream of memory traffic for a backward, a third for a forward. */
static void store_f32(float *dst, const float *src, int64_t m) {
#if defined(__x86_64__)
    if (((uintptr_t)dst & 15u) == 0) {
        int64_t i = 0;
        for (; i + 4 <= m; i += 4)
            _mm_stream_ps(dst + i, _mm_loadu_ps(src + i));
        for (; i < m; i++)
            dst[i] = src[i];
        return;
    }
#endif
    memcpy(dst, src, (size_t)m * sizeof *dst);
}

/* The element range [begin, end) in blocks of BLOCK elements: f32 computed into an L1-resident
 * block and streamed out; f16/bf16 decoded into f32 blocks, computed, rounded back once and
 * streamed out. */
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
        if (d->dtype == KMUX_F32) {
            run_f32(d, m, (const float *)x + i, fwd ? NULL : (const float *)dd + i, ob);
            store_f32((float *)out + i, ob, m);
            continue;
        }
        kmux_cast_to_f32_serial(m, (const char *)x + i * es, d->dtype, xb, j->avx2);
        if (!fwd) kmux_cast_to_f32_serial(m, (const char *)dd + i * es, d->dtype, db, j->avx2);
        run_f32(d, m, xb, db, ob);
        kmux_cast_from_f32(m, ob, (char *)out + i * es, d->dtype, 0, NULL, j->avx2, 1);
    }
#if defined(__x86_64__)
    _mm_sfence(); /* the streamed stores are visible before the op returns */
#endif
}

void kmux_cpu_eltwise(const kmux_eltwise_desc *d, const kmux_eltwise_args *args, int threads) {
    elt_job j = {d, *args, kmux_cast_have_avx2()};
    /* block-aligned ranges: an in-place f16/bf16 op never has two threads on one block */
    kmux_cast_parallel_for(d->n, 1, threads, BLOCK, range, &j);
}
