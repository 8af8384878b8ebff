/*
 * cast_parallel.c - the floating-point environment guard and the parallel-for of the conversion
 * and mixed-precision kernels.
 */
#define _GNU_SOURCE /* glibc: sched_getcpu, CPU_SET, pthread_attr_setaffinity_np */
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>

#include "cast_internal.h"

#if defined(__x86_64__) || defined(__i386__)
#include <xmmintrin.h>

/* MXCSR default: all exceptions masked, round to nearest even, FTZ and DAZ off. */
#define KMUX_MXCSR_IEEE 0x1f80u

unsigned kmux_cast_fp_enter(void) {
    unsigned saved = _mm_getcsr();
    if (saved != KMUX_MXCSR_IEEE) _mm_setcsr(KMUX_MXCSR_IEEE);
    return saved;
}

void kmux_cast_fp_leave(unsigned saved) {
    /* Restoring also drops the sticky exception flags our own arithmetic raised. */
    _mm_setcsr(saved);
}
#else
unsigned kmux_cast_fp_enter(void) {
    return 0;
}

void kmux_cast_fp_leave(unsigned saved) {
    (void)saved;
}
#endif

typedef struct worker {
    pthread_t thread;
    kmux_cast_range_fn fn;
    void *ctx;
    int64_t begin, end;
    int tid;
} worker;

static void run_range(const worker *w) {
    unsigned saved = kmux_cast_fp_enter();
    w->fn(w->ctx, w->begin, w->end, w->tid);
    kmux_cast_fp_leave(saved);
}

static void *worker_main(void *arg) {
    run_range(arg);
    return NULL;
}

static void run_indexed(void *arg, int i) {
    run_range(&((const worker *)arg)[i]);
}

static _Atomic(kmux_cpu_team_fn) g_team;

void kmux_cpu_set_team(kmux_cpu_team_fn team) {
    atomic_store_explicit(&g_team, team, memory_order_release);
}

/* Attributes that keep the helper threads off the caller's CPU (the caller runs range 0 itself);
 * 0 when there is no such choice (one CPU allowed, or not glibc on Linux). The caller's CPU is read
 * once: a caller that migrates later may share a core with a helper again. Measured on the 2-core
 * EPYC VM: right after an OpenBLAS call, OpenBLAS's worker spins on the other core, and a new
 * helper thread was often placed on the caller's core, so a split im2col ran barely faster than one
 * thread (1.2x); kept off the caller's core it ran 1.8x faster, and the OpenBLAS convolution
 * 5-14% faster (bench_ob_conv). */
static int helper_attr(pthread_attr_t *attr) {
#if defined(__linux__) && defined(__GLIBC__) /* musl and Bionic lack the attribute call */
    cpu_set_t set;
    const int me = sched_getcpu();
    if (me < 0 || sched_getaffinity(0, sizeof set, &set) != 0 || !CPU_ISSET(me, &set) ||
        CPU_COUNT(&set) < 2)
        return 0;
    CPU_CLR(me, &set);
    if (pthread_attr_init(attr) != 0) return 0;
    if (pthread_attr_setaffinity_np(attr, sizeof set, &set) != 0) {
        pthread_attr_destroy(attr);
        return 0;
    }
    return 1;
#else
    (void)attr;
    return 0;
#endif
}

static int parallel_for(int64_t n, int64_t unit, int threads, int64_t align, int64_t min_work,
                        int pin, kmux_cast_range_fn fn, void *ctx);

int kmux_cast_parallel_for(int64_t n, int64_t unit, int threads, int64_t align,
                           kmux_cast_range_fn fn, void *ctx) {
    return parallel_for(n, unit, threads, align, KMUX_CAST_PARALLEL_MIN, 0, fn, ctx);
}

int kmux_parallel_for_from(int64_t n, int64_t unit, int threads, int64_t align, int64_t min_work,
                           kmux_cast_range_fn fn, void *ctx) {
    return parallel_for(n, unit, threads, align, min_work, 1, fn, ctx);
}

static int parallel_for(int64_t n, int64_t unit, int threads, int64_t align, int64_t min_work,
                        int pin, kmux_cast_range_fn fn, void *ctx) {
    if (align < 1) align = 1;
    if (min_work < 2) min_work = 2;
    int64_t nw = threads;
    if (nw > KMUX_CAST_MAX_THREADS) nw = KMUX_CAST_MAX_THREADS;
    if (unit < 1) unit = 1;
    if (n <= 0 || n > INT64_MAX / unit || n * unit < min_work || nw <= 1) {
        worker w = {.fn = fn, .ctx = ctx, .begin = 0, .end = n, .tid = 0};
        run_range(&w);
        return 1;
    }
    /* Keep every range at least half of the threshold long, and at least one block. */
    if (nw > n * unit / (min_work / 2)) nw = n * unit / (min_work / 2);
    int64_t blocks = (n + align - 1) / align;
    if (nw > blocks) nw = blocks;
    if (nw < 1) nw = 1;
    worker w[KMUX_CAST_MAX_THREADS];
    int64_t per = blocks / nw, extra = blocks % nw, pos = 0;
    for (int64_t i = 0; i < nw; i++) {
        int64_t len = (per + (i < extra)) * align;
        w[i] = (worker){.fn = fn, .ctx = ctx, .begin = pos, .end = pos + len, .tid = (int)i};
        if (w[i].end > n) w[i].end = n;
        pos = w[i].end;
    }
    const kmux_cpu_team_fn team = atomic_load_explicit(&g_team, memory_order_acquire);
    if (team && team((int)nw, run_indexed, w)) return (int)nw;
    /* Workers 1.. run on new threads, worker 0 on this one. A thread that cannot be created has
     * its range run here instead, so the result never depends on thread creation succeeding. */
    int started[KMUX_CAST_MAX_THREADS] = {0};
    pthread_attr_t attr;
    const int pinned = pin && nw > 1 && helper_attr(&attr);
    for (int64_t i = 1; i < nw; i++)
        started[i] = pthread_create(&w[i].thread, pinned ? &attr : NULL, worker_main, &w[i]) == 0;
    if (pinned) pthread_attr_destroy(&attr);
    run_range(&w[0]);
    for (int64_t i = 1; i < nw; i++) {
        if (started[i])
            pthread_join(w[i].thread, NULL);
        else
            run_range(&w[i]);
    }
    return (int)nw;
}
