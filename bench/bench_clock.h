/*
 * bench_clock.h - the clock and the median of the side-by-side CPU benchmarks (bench_bias,
 * bench_eltwise, bench_pooling, bench_softmax): a monotonic millisecond clock, and the median of
 * a round's times (sorted in place).
 */
#ifndef KMUX_BENCH_CLOCK_H
#define KMUX_BENCH_CLOCK_H

#include <stdlib.h>
#include <time.h>

static inline double kmux_bench_now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec * 1e-6;
}

static inline int kmux_bench_cmp_double(const void *a, const void *b) {
    const double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* The median of v[0..n) (n >= 1); v is sorted. */
static inline double kmux_bench_median(double *v, int n) {
    qsort(v, (size_t)n, sizeof v[0], kmux_bench_cmp_double);
    return v[n / 2];
}

#endif
