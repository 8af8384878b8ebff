/*
 * test_cpu_parallel.c - the CPU kernels' parallel-for (kernels/cpu/cast_parallel.c): every index
 * is run exactly once, in ranges on block boundaries; work below the threshold runs serially on
 * the caller; and kmux_parallel_for_from keeps its helper threads off the caller's CPU (their
 * affinity mask is the caller's without one CPU), which the OpenBLAS convolution's lowering relies
 * on for its speed (kernels/cpu/im2col_panel.c), while kmux_cast_parallel_for leaves them free.
 */
#define _GNU_SOURCE /* sched_getaffinity, CPU_* */
#include <criterion/criterion.h>
#include <pthread.h>
#include <sched.h>
#include <string.h>

#include "cast_internal.h"

#define N_MAX 4096

typedef struct seen {
    int hits[N_MAX];
    int ranges;
    int bad_align;
    pthread_t caller;
    int helper_ran, helper_mask_count, helper_subset, off_caller;
    cpu_set_t caller_mask;
    pthread_mutex_t lock;
} seen;

static seen g;

static void mark(void *ctx, int64_t b, int64_t e, int tid) {
    seen *s = ctx;
    pthread_mutex_lock(&s->lock);
    s->ranges++;
    if (b % 8 != 0) s->bad_align = 1;
    for (int64_t i = b; i < e; i++)
        s->hits[i]++;
    if (!pthread_equal(pthread_self(), s->caller)) s->off_caller++;
    if (tid > 0 && !pthread_equal(pthread_self(), s->caller)) {
        cpu_set_t m;
        if (sched_getaffinity(0, sizeof m, &m) == 0) {
            s->helper_ran = 1;
            s->helper_mask_count = CPU_COUNT(&m);
            cpu_set_t both;
            CPU_AND(&both, &m, &s->caller_mask);
            s->helper_subset = CPU_EQUAL(&both, &m);
        }
    }
    pthread_mutex_unlock(&s->lock);
}

static void reset(void) {
    memset(&g, 0, sizeof g);
    pthread_mutex_init(&g.lock, NULL);
    g.caller = pthread_self();
    cr_assert_eq(sched_getaffinity(0, sizeof g.caller_mask, &g.caller_mask), 0);
}

Test(cpu_parallel, every_index_once_on_block_boundaries) {
    reset();
    const int n = 4000;
    const int r = kmux_parallel_for_from(n, 1000, 2, 8, 1 << 18, mark, &g);
    cr_expect_eq(r, 2, "4 million elements of work on 2 threads: %d ranges", r);
    cr_expect_eq(g.ranges, r);
    cr_expect_eq(g.bad_align, 0, "a range starts off a block of 8");
    for (int i = 0; i < n; i++)
        cr_expect_eq(g.hits[i], 1, "index %d ran %d times", i, g.hits[i]);
}

Test(cpu_parallel, below_the_threshold_runs_serially) {
    reset();
    const int r = kmux_parallel_for_from(100, 100, 2, 1, 1 << 18, mark, &g);
    cr_expect_eq(r, 1, "10000 elements of work, threshold 262144: %d ranges", r);
    cr_expect_eq(g.ranges, 1);
    cr_expect_eq(g.off_caller, 0, "a range ran on another thread");
    for (int i = 0; i < 100; i++)
        cr_expect_eq(g.hits[i], 1);
    /* the default threshold (KMUX_CAST_PARALLEL_MIN) is larger */
    reset();
    cr_expect_eq(kmux_cast_parallel_for(1000, 512, 2, 1, mark, &g), 1);
    cr_expect_eq(kmux_cast_parallel_for(1000, 4096, 2, 1, mark, &g), 2);
}

Test(cpu_parallel, helpers_stay_off_the_callers_cpu) {
    reset();
    if (CPU_COUNT(&g.caller_mask) < 2) cr_skip_test("one CPU in this process's affinity mask");
    kmux_parallel_for_from(4000, 1000, 2, 8, 1 << 18, mark, &g);
    cr_assert(g.helper_ran, "no helper thread ran");
    cr_expect_eq(g.helper_mask_count, CPU_COUNT(&g.caller_mask) - 1,
                 "helper mask has %d CPUs, the caller's %d: want one fewer", g.helper_mask_count,
                 CPU_COUNT(&g.caller_mask));
    cr_expect(g.helper_subset, "the helper may run on a CPU the caller may not");
}

Test(cpu_parallel, conversion_helpers_are_not_pinned) {
    reset();
    if (CPU_COUNT(&g.caller_mask) < 2) cr_skip_test("one CPU in this process's affinity mask");
    cr_expect_eq(kmux_cast_parallel_for(1000, 4096, 2, 1, mark, &g), 2);
    cr_assert(g.helper_ran, "no helper thread ran");
    cr_expect_eq(g.helper_mask_count, CPU_COUNT(&g.caller_mask), "helper mask %d CPUs, caller %d",
                 g.helper_mask_count, CPU_COUNT(&g.caller_mask));
}
