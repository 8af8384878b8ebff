/*
 * kb_median.h - the median of a few dozen samples and its confidence interval, for the benches
 * that compare contestants round by round (bench_cpu_direct, bench_ob_conv). Header-only; the
 * samples are copied, so the caller's stay in round order and remain paired.
 */
#ifndef KB_MEDIAN_H
#define KB_MEDIAN_H

#include <math.h>
#include <string.h>

/** At most this many samples. */
#define KB_MEDIAN_MAX 64

/** s = t[0 .. n-1] sorted ascending (0 < n <= KB_MEDIAN_MAX; insertion sort: n is small). */
static inline void kb_sorted_copy(const double *t, int n, double *s) {
    memcpy(s, t, (size_t)n * sizeof *s);
    for (int i = 1; i < n; i++)
        for (int j = i; j > 0 && s[j] < s[j - 1]; j--) {
            const double v = s[j];
            s[j] = s[j - 1];
            s[j - 1] = v;
        }
}

/** The median of t[0 .. n-1] (0 < n <= KB_MEDIAN_MAX); t is left as it is. */
static inline double kb_median(const double *t, int n) {
    double s[KB_MEDIAN_MAX];
    kb_sorted_copy(t, n, s);
    return n % 2 ? s[n / 2] : 0.5 * (s[n / 2 - 1] + s[n / 2]);
}

/** A distribution-free ~95% confidence interval [*lo, *hi] of the median of t[0 .. n-1]
 *  (0 < n <= KB_MEDIAN_MAX): the order statistics of 1-based ranks (n - 1.96 sqrt(n)) / 2 and
 *  1 + (n + 1.96 sqrt(n)) / 2, rounded: the normal approximation of the binomial(n, 1/2) bounds
 *  (Conover, Practical Nonparametric Statistics), which gives the exact tables' ranks 2 and 9 for
 *  n = 10, 6 and 15 for n = 20 (coverage 97.9% and 95.9%); [min, max] below n = 6 (93.8% at 5). */
static inline void kb_median_interval(const double *t, int n, double *lo, double *hi) {
    double s[KB_MEDIAN_MAX];
    kb_sorted_copy(t, n, s);
    long j = lround((n - 1.96 * sqrt(n)) / 2), k = lround(1 + (n + 1.96 * sqrt(n)) / 2);
    if (j < 1) j = 1;
    if (k > n) k = n;
    *lo = s[j - 1];
    *hi = s[k - 1];
}

#endif
