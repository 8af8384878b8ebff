/*
 * optimizer.c - the optimizer family on the CPU (kmux_cpu_optimizer): the f32 update of
 * dispatch/common/kmux_optimizer.h expanded from its row list into one loop per algorithm, over
 * blocks whose gradients are decoded (f16/bf16) and unscaled first; the f16/bf16 copy of the
 * updated parameters written from the same block. -O3 -fno-math-errno (sqrtf vectorises without
 * errno) and clones for AVX-512/AVX2/baseline, as eltwise.c.
 */
#include <math.h>
#include <string.h>

#include "cast_internal.h"
#include "cpu_clones.h"
#include "kmux_cpu_kernels.h"
#include "kmux_optimizer.h"

#define BLOCK 1024

/* p[i], s1[i], s2[i] updated from the f32 gradients g[0..m) (s1/s2 NULL when unused) */
#define KMUX_OPT_LOOP_(E, f, nm, fl)                                                               \
    KMUX_CPU_CLONES static void upd_##f(int64_t m, float *p, const float *g, float *s1, float *s2, \
                                        const kmux_opt_scalars *sc) {                              \
        const kmux_opt_scalars s = *sc;                                                            \
        if (s1 && s2) {                                                                            \
            for (int64_t i = 0; i < m; i++)                                                        \
                kmux_opt_##f(&p[i], g[i], &s1[i], &s2[i], &s);                                     \
        } else if (s1) {                                                                           \
            for (int64_t i = 0; i < m; i++)                                                        \
                kmux_opt_##f(&p[i], g[i], &s1[i], NULL, &s);                                       \
        } else {                                                                                   \
            for (int64_t i = 0; i < m; i++)                                                        \
                kmux_opt_##f(&p[i], g[i], NULL, NULL, &s);                                         \
        }                                                                                          \
    }
KMUX_OPTIMIZER_ALGS(KMUX_OPT_LOOP_)
#undef KMUX_OPT_LOOP_

typedef struct opt_job {
    const kmux_optimizer_desc *d;
    const kmux_optimizer_args *a;
    kmux_opt_scalars sc;
    float gs; /* the gradient scale */
    int avx2;
} opt_job;

static void range(void *ctx, int64_t begin, int64_t end, int tid) {
    (void)tid;
    const opt_job *j = ctx;
    const kmux_optimizer_desc *d = j->d;
    const kmux_optimizer_args *a = j->a;
    float gb[BLOCK];
    const size_t ges = (size_t)kmux_dtype_desc_of(d->grad_type).bytes;
    for (int64_t i = begin; i < end; i += BLOCK) {
        const int64_t m = end - i < BLOCK ? end - i : BLOCK;
        kmux_cast_to_f32_serial(m, (const char *)a->grad + (size_t)i * ges, d->grad_type, gb,
                                j->avx2);
        if (j->gs != 1.0f)
            for (int64_t k = 0; k < m; k++)
                gb[k] *= j->gs;
        float *p = a->param + i, *s1 = a->state1 ? a->state1 + i : NULL;
        float *s2 = a->state2 ? a->state2 + i : NULL;
        switch (d->alg) {
#define KMUX_OPT_CASE_(E, f, nm, fl)                                                               \
    case KMUX_OPTIMIZER_##E:                                                                       \
        upd_##f(m, p, gb, s1, s2, &j->sc);                                                         \
        break;
            KMUX_OPTIMIZER_ALGS(KMUX_OPT_CASE_)
#undef KMUX_OPT_CASE_
        default:
            break;
        }
        if (d->copy_type)
            kmux_cast_from_f32(m, p, (char *)a->param_copy + (size_t)i * 2,
                               (kmux_dtype)d->copy_type, 0, NULL, j->avx2, 0);
    }
}

void kmux_cpu_optimizer(const kmux_optimizer_desc *d, const kmux_optimizer_args *a, int threads) {
    if (a->found_inf && *a->found_inf != 0.0f) return; /* GradScaler.step: skipped */
    opt_job j = {d, a, kmux_opt_scalars_of(d, a->lr, a->step),
                 a->grad_scale ? *a->grad_scale : 1.0f, kmux_cast_have_avx2()};
    kmux_cast_parallel_for(d->n, 1, threads, BLOCK, range, &j);
}
