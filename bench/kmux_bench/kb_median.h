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

/** A distribution-free confidence interval [*lo, *hi] of the median of t[0 .. n-1]
 *  (0 < n <= KB_MEDIAN_MAX), of at least 95% where n allows it: the order statistics of 1-based
 *  ranks k and n + 1 - k, for the largest k with P(B <= k - 1) <= 0.025, B ~ binomial(n, 1/2)
 *  (the exact binomial interval, as in Conover, Practical Nonparametric Statistics: ranks 2 and 9
 *  for n = 10, 5 and 13 for n = 17, 6 and 15 for n = 20; [min, max] up to n = 8). Returns its
 *  coverage, 1 - 2 P(B <= k - 1), which assumes independent samples (drift between rounds breaks
 *  that); below 0.95 for n < 6 (0.9375 at n = 5, 0.75 at n = 3), where callers should not call the
 *  interval a 95% one. */
static inline double kb_median_interval(const double *t, int n, double *lo, double *hi) {
    double s[KB_MEDIAN_MAX];
    kb_sorted_copy(t, n, s);
    /* cdf = P(B <= k - 1), grown while it stays within 0.025; P(B = i) = C(n, i) / 2^n */
    double p = ldexp(1.0, -n), cdf = p;
    int k = 1;
    for (int i = 1; i < n / 2; i++) {
        p = p * (n - i + 1) / i;
        if (cdf + p > 0.025) break;
        cdf += p;
        k = i + 1;
    }
    *lo = s[k - 1];
    *hi = s[n - k];
    return 1 - 2 * cdf;
}

/** The ratio of contestant a's rate to b's over n interleaved rounds (both doing the same work;
 *  t_a, t_b: seconds per call, round by round): the median over the rounds of t_b[r] / t_a[r],
 *  with its interval in [*lo, *hi] where that covers at least 95% (kb_median_interval), else
 *  *lo = *hi = 0 (fewer than 6 rounds: it would be the range of the rounds). Pairing the rounds
 *  cancels what slows a whole round, not what changes from one sample to the next. */
static inline double kb_paired_ratio(const double *t_a, const double *t_b, int n, double *lo,
                                     double *hi) {
    double q[KB_MEDIAN_MAX];
    for (int r = 0; r < n; r++)
        q[r] = t_b[r] / t_a[r];
    if (kb_median_interval(q, n, lo, hi) < 0.95) *lo = *hi = 0;
    return kb_median(q, n);
}

/** Whether ratio v reaches target as printed with "%.2f" (0.795 counts as 0.80). */
static inline int kb_reaches(double v, double target) {
    return lround(v * 100) >= lround(target * 100);
}

#endif
