/*
 * test_check_targets.c - kmux-check's target file: defaults, key=value and JSON overrides,
 * errors naming the key and the value.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "ck_targets.h"

Test(check_targets, defaults_are_the_documented_ones) {
    ck_targets t;
    ck_targets_default(&t);
    cr_assert_float_eq(t.gemm_pass_frac, 0.70, 1e-12);
    cr_assert_float_eq(t.devmem_pass_frac, 0.80, 1e-12);
    cr_assert_eq(t.link_rate_gbps, 0.0);
    cr_assert_str_eq(t.origin, "defaults");
}

Test(check_targets, key_value_lines) {
    ck_targets t;
    ck_targets_default(&t);
    char err[256] = "";
    int rc = ck_targets_parse("# site targets\n\ngemm_pass_frac = 0.8  # stricter\n"
                              "link_rate_gbps=64\n",
                              &t, err, sizeof err);
    cr_assert_eq(rc, 0, "%s", err);
    cr_assert_float_eq(t.gemm_pass_frac, 0.8, 1e-12);
    cr_assert_float_eq(t.link_rate_gbps, 64.0, 1e-12);
    cr_assert_float_eq(t.devmem_pass_frac, 0.80, 1e-12); /* untouched */
}

Test(check_targets, json_object) {
    ck_targets t;
    ck_targets_default(&t);
    char err[256] = "";
    cr_assert_eq(ck_targets_parse(" {\"cpu_mem_peak_gbps\": 204.8, \"gemm_fail_frac\": 0.4}", &t,
                                  err, sizeof err),
                 0, "%s", err);
    cr_assert_float_eq(t.cpu_mem_peak_gbps, 204.8, 1e-12);
    cr_assert_float_eq(t.gemm_fail_frac, 0.4, 1e-12);
}

Test(check_targets, errors_name_key_and_value) {
    ck_targets t;
    ck_targets_default(&t);
    char err[256] = "";
    cr_assert_eq(ck_targets_parse("gemm_pass=0.7\n", &t, err, sizeof err), -1);
    cr_assert(strstr(err, "unknown target key \"gemm_pass\""), "%s", err);
    cr_assert_eq(ck_targets_parse("gemm_pass_frac=1.5\n", &t, err, sizeof err), -1);
    cr_assert(strstr(err, "gemm_pass_frac=1.5") && strstr(err, "[0, 1]"), "%s", err);
    cr_assert_eq(ck_targets_parse("\n\ngemm_pass_frac=fast\n", &t, err, sizeof err), -1);
    cr_assert(strstr(err, "line 3") && strstr(err, "fast"), "%s", err);
    cr_assert_eq(ck_targets_parse("just words\n", &t, err, sizeof err), -1);
    cr_assert(strstr(err, "expected key=value"), "%s", err);
    cr_assert_eq(ck_targets_parse("{\"gemm_pass_frac\": \"0.7\"}", &t, err, sizeof err), -1);
    cr_assert(strstr(err, "not a number"), "%s", err);
    cr_assert_eq(ck_targets_parse("{\"gemm_pass_frac\": 0.7", &t, err, sizeof err), -1);
    cr_assert(strstr(err, "JSON error"), "%s", err);
    cr_assert_float_eq(t.gemm_pass_frac, 0.70, 1e-12); /* failed parses changed nothing */
}

Test(check_targets, load_names_the_file) {
    ck_targets t;
    ck_targets_default(&t);
    char err[256] = "", path[] = "/tmp/kmux-check-targets-XXXXXX";
    cr_assert_eq(ck_targets_load("/nonexistent/targets", &t, err, sizeof err), -1);
    cr_assert(strstr(err, "/nonexistent/targets"), "%s", err);
    int fd = mkstemp(path);
    cr_assert(fd >= 0);
    FILE *f = fdopen(fd, "w");
    fputs("h2d_pinned_pass_frac=0.9\n", f);
    fclose(f);
    cr_assert_eq(ck_targets_load(path, &t, err, sizeof err), 0, "%s", err);
    remove(path);
    cr_assert_float_eq(t.h2d_pinned_pass_frac, 0.9, 1e-12);
    cr_assert_str_eq(t.origin, path);
}

/* Hostile target files (issue 50): a padded line was cut at 511 characters (a padded
 * cpu_gemm_fail_frac=0.95 became 0, "never FAIL"), contradictory targets were accepted, a folder
 * was "larger than 16383 bytes". */
Test(check_targets, hostile_target_files) {
    ck_targets t;
    ck_targets_default(&t);
    char err[512] = "", text[1200];
    memset(text, ' ', 600);
    snprintf(text + 600, sizeof text - 600, "cpu_gemm_fail_frac=0.95\n");
    cr_assert_eq(ck_targets_parse(text, &t, err, sizeof err), -1);
    cr_assert(strstr(err, "line 1: longer than 511 characters"), "%s", err);
    cr_assert_float_eq(t.cpu_gemm_fail_frac, 0.30, 1e-12);
    cr_assert_eq(
        ck_targets_parse("gemm_pass_frac=0.01\ngemm_fail_frac=0.99\n", &t, err, sizeof err), -1);
    cr_assert(strstr(err, "gemm_pass_frac=0.01 is below gemm_fail_frac=0.99"), "%s", err);
    cr_assert_float_eq(t.gemm_pass_frac, 0.70, 1e-12); /* nothing half-applied */
    cr_assert_eq(ck_targets_parse("{\"devmem_pass_frac\": 0.1}", &t, err, sizeof err), -1);
    cr_assert(strstr(err, "devmem_pass_frac=0.1 is below devmem_fail_frac=0.5"), "%s", err);
    cr_assert_eq(ck_targets_load("/tmp", &t, err, sizeof err), -1);
    cr_assert(strstr(err, "--target-file=/tmp: not a regular file (a directory)"), "%s", err);
    cr_assert_eq(ck_targets_load("/dev/zero", &t, err, sizeof err), -1);
    cr_assert(strstr(err, "not a regular file (a device)"), "%s", err);
}
