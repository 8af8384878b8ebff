/*
 * test_bench_median.c - kb_median.h, the statistics bench_cpu_direct and bench_ob_conv print: the
 * median, its ~95% interval at the ranks of the exact binomial tables, and the caller's samples
 * left in round order (they are paired with another contestant's by index).
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
static void interval_ranks(int n, int *lo, int *hi) {
    double t[KB_MEDIAN_MAX];
    for (int i = 0; i < n; i++)
        t[i] = (double)((i * 7) % n + 1); /* a permutation of 1..n (7 is prime to every n used) */
    double l, h;
    kb_median_interval(t, n, &l, &h);
    *lo = (int)l;
    *hi = (int)h;
}

Test(bench_median, interval_ranks_match_the_binomial_tables) {
    /* ranks of the 95% interval of the median (Conover's table; n < 6: the whole range) */
    static const struct {
        int n, lo, hi;
    } want[] = {{1, 1, 1},  {3, 1, 3},   {5, 1, 5},   {6, 1, 6},
                {10, 2, 9}, {15, 4, 12}, {20, 6, 15}, {41, 14, 28}};
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
        int lo, hi;
        interval_ranks(want[i].n, &lo, &hi);
        cr_expect(lo == want[i].lo && hi == want[i].hi, "n = %d: ranks %d-%d, want %d-%d",
                  want[i].n, lo, hi, want[i].lo, want[i].hi);
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
