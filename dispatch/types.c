/*
 * types.c - the public queries of the legal type combinations (kmux.h,
 * kmux_{matmul,conv2d}_type_combination_{count,get}): readers of the one table in
 * dispatch/common/type_rules.c, the table validation checks against.
 */
#include "internal.h"
#include "kmux_type_rules.h"

typedef const kmux_type_combination *(*table_fn)(int *count);

static kmux_status count_of(const char *fn, table_fn table, int *count) {
    kmux_clear_error();
    if (!count) return kmux_set_error(KMUX_ERR_INVALID_ARGUMENT, "%s: count is NULL", fn);
    table(count);
    return KMUX_OK;
}

static kmux_status row_of(const char *fn, table_fn table, int i, kmux_type_combination *row) {
    kmux_clear_error();
    if (!row) return kmux_set_error(KMUX_ERR_INVALID_ARGUMENT, "%s: row is NULL", fn);
    int n = 0;
    const kmux_type_combination *rows = table(&n);
    if (i < 0 || i >= n)
        return kmux_set_error(KMUX_ERR_INVALID_ARGUMENT,
                              "%s: i = %d is out of range (the table has %d rows: 0 <= i < %d)", fn,
                              i, n, n);
    *row = rows[i];
    return KMUX_OK;
}

kmux_status kmux_matmul_type_combination_count(int *count) {
    return count_of("kmux_matmul_type_combination_count", kmux_rules_matmul_table, count);
}

kmux_status kmux_matmul_type_combination_get(int i, kmux_type_combination *row) {
    return row_of("kmux_matmul_type_combination_get", kmux_rules_matmul_table, i, row);
}

kmux_status kmux_conv2d_type_combination_count(int *count) {
    return count_of("kmux_conv2d_type_combination_count", kmux_rules_conv_table, count);
}

kmux_status kmux_conv2d_type_combination_get(int i, kmux_type_combination *row) {
    return row_of("kmux_conv2d_type_combination_get", kmux_rules_conv_table, i, row);
}
