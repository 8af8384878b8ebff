/*
 * tables.c - what the suite tests: the legal type combinations, read through the public API
 * (the table validation uses, dispatch/common/type_rules.c), so a new row is tested on every
 * device the moment it is added; and the convolution shapes.
 */
#include "conformance.h"
#include "conv_quick_shapes.h"

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

/* conv_quick_shapes.h */
static const tu_conv_geom QUICK[] = {KMUX_CONV_QUICK_SHAPES};

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
