/*
 * test_type_combinations.c - the public queries of the legal type tables
 * (kmux_{matmul,conv2d}_type_combination_{count,get}): bad arguments are refused with a message
 * naming them, every row is well formed, and the rows are EXACTLY what validation accepts: every
 * (a, b, c, compute) of the whole enum product is accepted by plan creation on "ref" (which runs
 * every legal combination) if and only if it is a row, and a refusal says why.
 */
#include "test_util.h"

#include <stdio.h>
#include <string.h>

#define EXPECT_MSG(needle)                                                                         \
    cr_expect(strstr(kmux_last_error(), needle) != NULL, "message \"%s\" lacks \"%s\"",            \
              kmux_last_error(), needle)

static kmux_context *ctx;
static kmux_device *ref;

static void setup(void) {
    ctx = tu_context();
    ref = tu_device(ctx, "ref");
    cr_assert_not_null(ref);
}

static void teardown(void) {
    kmux_context_destroy(ctx);
}

TestSuite(type_combinations, .init = setup, .fini = teardown);

typedef kmux_status (*count_fn)(int *);
typedef kmux_status (*get_fn)(int, kmux_type_combination *);

static void check_bad_arguments(count_fn count, get_fn get, const char *cname, const char *gname) {
    int n = -7;
    TU_STATUS(KMUX_ERR_INVALID_ARGUMENT, count(NULL));
    EXPECT_MSG(cname);
    EXPECT_MSG("count is NULL");
    TU_OK(count(&n));
    cr_assert_gt(n, 0, "%s gives %d rows", cname, n);
    kmux_type_combination row;
    memset(&row, 0xA5, sizeof row);
    kmux_type_combination untouched = row;
    TU_STATUS(KMUX_ERR_INVALID_ARGUMENT, get(-1, &row));
    EXPECT_MSG(gname);
    EXPECT_MSG("i = -1");
    TU_STATUS(KMUX_ERR_INVALID_ARGUMENT, get(n, &row));
    char needle[64];
    snprintf(needle, sizeof needle, "i = %d", n);
    EXPECT_MSG(needle);
    cr_expect(memcmp(&row, &untouched, sizeof row) == 0, "a refused get wrote the row");
    TU_STATUS(KMUX_ERR_INVALID_ARGUMENT, get(0, NULL));
    EXPECT_MSG("row is NULL");
    TU_OK(get(n - 1, &row));
    cr_expect_str_empty(kmux_last_error(), "a successful call leaves no message");
}

Test(type_combinations, bad_arguments_are_refused_with_their_name) {
    check_bad_arguments(kmux_matmul_type_combination_count, kmux_matmul_type_combination_get,
                        "kmux_matmul_type_combination_count", "kmux_matmul_type_combination_get");
    check_bad_arguments(kmux_conv2d_type_combination_count, kmux_conv2d_type_combination_get,
                        "kmux_conv2d_type_combination_count", "kmux_conv2d_type_combination_get");
}

/* Row index of (a, b, c, ct) in a table, -1 when absent; also checks that rows are unique. */
static int find_row(count_fn count, get_fn get, kmux_dtype a, kmux_dtype b, kmux_dtype c,
                    kmux_compute_type ct) {
    int n = 0, found = -1;
    TU_OK(count(&n));
    for (int i = 0; i < n; i++) {
        kmux_type_combination r;
        TU_OK(get(i, &r));
        cr_assert_eq(r.struct_size, sizeof r, "row %d: struct_size %zu", i, r.struct_size);
        if (r.a_type == a && r.b_type == b && r.c_type == c && r.compute_type == ct) {
            cr_assert_eq(found, -1, "rows %d and %d are equal", found, i);
            found = i;
        }
    }
    return found;
}

static kmux_status matmul_plan(kmux_dtype a, kmux_dtype b, kmux_dtype c, kmux_compute_type ct) {
    kmux_matmul_desc d = KMUX_MATMUL_DESC_INIT;
    d.m = d.n = d.k = 4;
    d.lda = d.ldb = d.ldc = 4;
    d.a_type = a, d.b_type = b, d.c_type = c, d.compute_type = ct;
    kmux_plan *p = NULL;
    kmux_status s = kmux_matmul_plan_create(ref, &d, NULL, &p);
    if (p) kmux_plan_destroy(p);
    return s;
}

static kmux_status conv_plan(kmux_dtype x, kmux_dtype w, kmux_dtype y, kmux_compute_type ct) {
    kmux_conv2d_desc d = KMUX_CONV2D_DESC_INIT;
    d.n = 1, d.c = 2, d.h = 4, d.w = 4, d.k = 2, d.r = 3, d.s = 3;
    d.x_type = x, d.w_type = w, d.y_type = y, d.compute_type = ct;
    kmux_plan *p = NULL;
    kmux_status s = kmux_conv2d_plan_create(ref, &d, NULL, &p);
    if (p) kmux_plan_destroy(p);
    return s;
}

/* Over the whole product of dtypes and compute types: legal (a row) <=> validation accepts. */
static void check_table_is_validation(count_fn count, get_fn get,
                                      kmux_status (*plan)(kmux_dtype, kmux_dtype, kmux_dtype,
                                                          kmux_compute_type),
                                      const char *what) {
    int n = 0, accepted = 0;
    TU_OK(count(&n));
    for (int a = KMUX_F64; a <= KMUX_I32; a++)
        for (int b = KMUX_F64; b <= KMUX_I32; b++)
            for (int c = KMUX_F64; c <= KMUX_I32; c++)
                for (int ct = KMUX_COMPUTE_F64; ct <= KMUX_COMPUTE_I32; ct++) {
                    int row = find_row(count, get, (kmux_dtype)a, (kmux_dtype)b, (kmux_dtype)c,
                                       (kmux_compute_type)ct);
                    kmux_status s =
                        plan((kmux_dtype)a, (kmux_dtype)b, (kmux_dtype)c, (kmux_compute_type)ct);
                    const char *names = kmux_dtype_name((kmux_dtype)a);
                    if (row >= 0) {
                        accepted++;
                        cr_expect_eq(
                            s, KMUX_OK, "%s row %d (%s, %s, %s, %s) refused: %s", what, row, names,
                            kmux_dtype_name((kmux_dtype)b), kmux_dtype_name((kmux_dtype)c),
                            kmux_compute_type_name((kmux_compute_type)ct), kmux_last_error());
                    } else {
                        cr_expect_eq(
                            s, KMUX_ERR_INVALID_ARGUMENT,
                            "%s (%s, %s, %s, %s) is no row but plan creation gave %s", what, names,
                            kmux_dtype_name((kmux_dtype)b), kmux_dtype_name((kmux_dtype)c),
                            kmux_compute_type_name((kmux_compute_type)ct), kmux_status_str(s));
                        /* the message names the values and says which rule is broken */
                        cr_expect(strstr(kmux_last_error(), names) != NULL &&
                                      strstr(kmux_last_error(), ": ") != NULL,
                                  "%s: message \"%s\" lacks the types", what, kmux_last_error());
                    }
                }
    cr_expect_eq(accepted, n, "%s: %d rows, %d of them found in the product", what, n, accepted);
}

Test(type_combinations, matmul_rows_are_exactly_what_validation_accepts, .timeout = 300) {
    check_table_is_validation(kmux_matmul_type_combination_count, kmux_matmul_type_combination_get,
                              matmul_plan, "matmul");
}

Test(type_combinations, conv2d_rows_are_exactly_what_validation_accepts, .timeout = 300) {
    check_table_is_validation(kmux_conv2d_type_combination_count, kmux_conv2d_type_combination_get,
                              conv_plan, "conv2d");
}

/* Rows the manual (kmux.h) names, and combinations it excludes. */
Test(type_combinations, documented_rows) {
    count_fn mc = kmux_matmul_type_combination_count;
    get_fn mg = kmux_matmul_type_combination_get;
    cr_expect_geq(find_row(mc, mg, KMUX_F32, KMUX_F32, KMUX_F32, KMUX_COMPUTE_F32), 0);
    cr_expect_geq(find_row(mc, mg, KMUX_F16, KMUX_F16, KMUX_F16, KMUX_COMPUTE_F16), 0);
    cr_expect_geq(find_row(mc, mg, KMUX_F8_E4M3, KMUX_F8_E5M2, KMUX_BF16, KMUX_COMPUTE_F32), 0);
    cr_expect_geq(find_row(mc, mg, KMUX_I8, KMUX_I8, KMUX_I32, KMUX_COMPUTE_I32), 0);
    cr_expect_eq(find_row(mc, mg, KMUX_F8_E4M3, KMUX_F8_E4M3_FNUZ, KMUX_F32, KMUX_COMPUTE_F32), -1,
                 "OCP and FNUZ fp8 cannot be mixed");
    cr_expect_eq(find_row(mc, mg, KMUX_F32, KMUX_F16, KMUX_F32, KMUX_COMPUTE_F32), -1);
    count_fn cc = kmux_conv2d_type_combination_count;
    get_fn cg = kmux_conv2d_type_combination_get;
    cr_expect_geq(find_row(cc, cg, KMUX_BF16, KMUX_BF16, KMUX_BF16, KMUX_COMPUTE_F32), 0);
    cr_expect_eq(find_row(cc, cg, KMUX_I8, KMUX_I8, KMUX_I8, KMUX_COMPUTE_I32), -1);
}
