/*
 * onednn_team.c - kmux's own CPU kernels (kernels/cpu: element-wise, binary, reductions, casts,
 * im2col...) on cpu:onednn run their parallel loops on oneDNN's OpenMP team (kmux_cpu_set_team).
 *
 * Why: after a oneDNN primitive, libgomp's workers go on spinning for a while (its default wait
 * policy) on the cores the next call needs. A kmux kernel that started threads of its own shared
 * those cores with them: on the 2-core VM, cpu:openblas's f32 bias-add right after a oneDNN call
 * ran at 0.52-0.55 of the memcpy bound, 0.80 with OMP_WAIT_POLICY=passive (bench_bias). On the
 * team, the spinning workers are the ones that take the work.
 *
 * In a fork() child whose thread's pool is stale (onednn_fork.c) the team declines, and the loop
 * starts threads of its own, as before. Nested inside a caller's OpenMP region the team has one
 * thread (nested parallelism off) and that thread runs every range.
 */
#include "onednn_internal.h"

#include <omp.h>

#include "cast_internal.h" /* kmux_cpu_set_team */

static int omp_team(int n, void (*fn)(void *arg, int i), void *arg) {
    if (!kmux_dnn_pool_usable(n)) return 0;
#pragma omp parallel num_threads(n)
    {
        const int nt = omp_get_num_threads();
        for (int i = omp_get_thread_num(); i < n; i += nt)
            fn(arg, i);
    }
    return 1;
}

void kmux_dnn_team_install(void) {
    kmux_cpu_set_team(omp_team);
}
