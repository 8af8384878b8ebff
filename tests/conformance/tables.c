/*
 * tables.c - what the suite tests: the legal type combinations, read through the public API
 * (the table validation uses, dispatch/common/type_rules.c), so a new row is tested on every
 * device the moment it is added; and the convolution shapes.
 */
#include "conformance.h"

static int read_rows(kmux_status (*count_fn)(int *),
                     kmux_status (*get_fn)(int, kmux_type_combination *), cf_combo *out, int max) {
    int n = 0;
    TU_OK(count_fn(&n));
    cr_assert(n > 0, "the legal type table is empty");
    cr_assert(n <= max, "the legal type table has %d rows, more than the %d the suite holds", n,
              max);
    for (int i = 0; i < n; i++)
        TU_OK(get_fn(i, &out[i]));
    return n;
}

int cf_gemm_combos(cf_combo *out, int max) {
    return read_rows(kmux_matmul_type_combination_count, kmux_matmul_type_combination_get, out,
                     max);
}

int cf_conv_combos(cf_combo *out, int max) {
    return read_rows(kmux_conv2d_type_combination_count, kmux_conv2d_type_combination_get, out,
                     max);
}

/* n, c, h, w, k, r, s, groups, stride h/w, pad top/bottom/left/right, dilation h/w */
static const tu_conv_geom QUICK[] = {
    {2, 3, 7, 9, 5, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1},   /* odd sizes, "same" padding */
    {1, 4, 11, 7, 6, 3, 2, 2, 2, 1, 0, 2, 1, 0, 1, 1},  /* 2 groups, asymmetric pad, stride */
    {3, 6, 9, 8, 6, 3, 3, 6, 1, 2, 2, 1, 0, 1, 2, 1},   /* depthwise, dilation 2x1 */
    {2, 5, 13, 11, 7, 1, 1, 1, 2, 2, 0, 0, 0, 0, 1, 1}, /* 1x1, stride 2 */
    {1, 2, 5, 5, 3, 5, 5, 1, 1, 1, 0, 0, 0, 0, 1, 1},   /* filter covers the input */
    {2, 8, 17, 15, 4, 3, 5, 2, 3, 2, 1, 2, 2, 1, 2, 3}, /* everything at once */
    {1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 1, 1},   /* 1x1x1x1 */
    {2, 3, 6, 7, 6, 3, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1},   /* depthwise, multiplier 2 */
    {1, 3, 10, 10, 2, 2, 2, 1, 3, 3, 0, 0, 0, 0, 1, 1}, /* stride > filter: gaps in dx */
    {1, 2, 7, 5, 4, 3, 3, 1, 1, 1, 3, 0, 0, 2, 1, 1},   /* padding larger than filter - 1 */
};

static const tu_conv_geom FULL[] = {
    {2, 64, 28, 28, 64, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1},
    {1, 32, 29, 31, 32, 3, 3, 32, 2, 2, 1, 1, 1, 1, 1, 1},
    {4, 16, 15, 15, 32, 5, 5, 1, 2, 2, 2, 2, 2, 2, 1, 1},
    {1, 24, 13, 17, 48, 3, 3, 4, 1, 1, 2, 2, 2, 2, 2, 2},
};

const tu_conv_geom *cf_conv_shapes(int full, int *count) {
    *count = full ? (int)(sizeof FULL / sizeof FULL[0]) : (int)(sizeof QUICK / sizeof QUICK[0]);
    return full ? FULL : QUICK;
}
