/*
 * test_bench_median.c - kb_median.h, the statistics bench_cpu_direct and bench_ob_conv print: the
 * median, its 95% interval at the ranks of the exact binomial interval with its coverage, and the
 * caller's samples left in round order (they are paired with another contestant's by index).
 */
#include <math.h>

#include "kb_median.h"
#include "test_util.h"

Test(bench_median, median_of_odd_and_even_counts_leaves_the_samples_in_order) {
    double t[5] = {5, 1, 4, 2, 3};
    cr_assert_float_eq(kb_median(t, 5), 3.0, 0);
    cr_assert(t[0] == 5 && t[1] == 1 && t[2] == 4 && t[3] == 2 && t[4] == 3,
              "kb_median reordered the caller's samples");
    double u[4] = {10, 40, 20, 30};
    cr_assert_float_eq(kb_median(u, 4), 25.0, 0);
    double one = 7;
    cr_assert_float_eq(kb_median(&one, 1), 7.0, 0);
}

/* the k-th smallest of the samples 1..n shuffled is k: the interval names its ranks */
static double interval_ranks(int n, int *lo, int *hi) {
    double t[KB_MEDIAN_MAX];
    for (int i = 0; i < n; i++)
        t[i] = (double)((i * 7) % n + 1); /* a permutation of 1..n (7 is prime to every n used) */
    double l, h;
    const double coverage = kb_median_interval(t, n, &l, &h);
    *lo = (int)l;
    *hi = (int)h;
    return coverage;
}

Test(bench_median, interval_ranks_and_coverage_are_the_exact_binomial_ones) {
    /* ranks k and n + 1 - k of the exact interval, largest k with P(B <= k - 1) <= 0.025, and its
     * coverage 1 - 2 P(B <= k - 1) (n < 6: the whole range, under 95%) */
    static const struct {
        int n, lo, hi;
        double coverage;
    } want[] = {{3, 1, 3, 0.75},         {5, 1, 5, 0.9375},     {6, 1, 6, 0.96875},
                {10, 2, 9, 0.978515625}, {17, 5, 13, 0.950958}, {20, 6, 15, 0.958611},
                {41, 14, 28, 0.972466},  {44, 16, 29, 0.951233}};
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
        int lo, hi;
        const double c = interval_ranks(want[i].n, &lo, &hi);
        cr_expect(lo == want[i].lo && hi == want[i].hi, "n = %d: ranks %d-%d, want %d-%d",
                  want[i].n, lo, hi, want[i].lo, want[i].hi);
        cr_expect(fabs(c - want[i].coverage) < 1e-5, "n = %d: coverage %.6f, want %.6f", want[i].n,
                  c, want[i].coverage);
    }
}

Test(bench_median, interval_contains_the_median_and_covers_constant_samples) {
    double t[9] = {1.02, 0.97, 0.99, 1.10, 0.50, 1.01, 0.98, 1.00, 1.03};
    double lo, hi;
    kb_median_interval(t, 9, &lo, &hi);
    const double m = kb_median(t, 9);
    cr_assert(lo <= m && m <= hi, "median %g outside [%g, %g]", m, lo, hi);
    cr_assert(lo > 0.5 && hi < 1.10, "one outlier each side must not set the bounds: [%g, %g]", lo,
              hi);
    double c[12];
    for (int i = 0; i < 12; i++)
        c[i] = 0.8;
    kb_median_interval(c, 12, &lo, &hi);
    cr_assert(lo == 0.8 && hi == 0.8, "constant samples: [%g, %g]", lo, hi);
}
