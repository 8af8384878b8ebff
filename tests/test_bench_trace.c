/*
 * test_bench_trace.c - the KMUX_VERBOSE trace (dispatch/verbose.c): a header with the version,
 * the column template and every device; every line has the same number of columns (CSV with
 * quoted messages); a rejected plan gives one line with its message, not a second error line;
 * the problem column is kmux-bench's grammar (it parses back to the same shape).
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kb_problem.h"
#include "test_util.h"

/* Splits one CSV line into fields (quotes removed, "" -> "); returns the count. */
static int csv_split(const char *line, char fields[][512], int max) {
    int n = 0;
    const char *p = line;
    for (;;) {
        if (n == max) return -1;
        size_t k = 0;
        if (*p == '"') {
            ++p;
            while (*p && !(*p == '"' && p[1] != '"')) {
                if (*p == '"') ++p; /* "" */
                if (k < 511) fields[n][k++] = *p;
                ++p;
            }
            if (*p == '"') ++p;
        } else {
            while (*p && *p != ',' && *p != '\n')
                if (k < 511) fields[n][k++] = *p++;
        }
        fields[n++][k] = '\0';
        if (*p != ',') break;
        ++p;
    }
    return n;
}

/* Runs body with stderr sent to a file; returns the file's text. */
static char *capture(void (*body)(void)) {
    char path[] = "/tmp/kmux-trace-XXXXXX";
    int fd = mkstemp(path);
    cr_assert(fd >= 0);
    fflush(stderr);
    int saved = dup(2);
    dup2(fd, 2);
    body();
    fflush(stderr);
    dup2(saved, 2);
    close(saved);
    FILE *f = fdopen(fd, "r");
    fseek(f, 0, SEEK_END);
    long len = ftell(f);
    rewind(f);
    char *text = calloc(1, (size_t)len + 1);
    cr_assert(fread(text, 1, (size_t)len, f) == (size_t)len);
    fclose(f);
    unlink(path);
    return text;
}

static void run_traced(void) {
    kmux_context_options o = KMUX_CONTEXT_OPTIONS_INIT;
    o.verbose = 2;
    kmux_context *ctx = NULL;
    cr_assert_eq(kmux_context_create(&o, &ctx), KMUX_OK, "%s", kmux_last_error());
    kmux_device *ref = NULL;
    cr_assert_eq(kmux_device_find(ctx, "ref", &ref), KMUX_OK);
    kmux_stream *s = NULL;
    cr_assert_eq(kmux_stream_create(ref, &s), KMUX_OK);
    /* a transposed, column-major GEMM on ref: create + exec lines */
    kmux_matmul_desc d = KMUX_MATMUL_DESC_INIT;
    d.order = KMUX_COL_MAJOR;
    d.transa = KMUX_TRANS;
    d.m = 6, d.n = 5, d.k = 4;
    d.lda = 4, d.ldb = 4, d.ldc = 6;
    kmux_plan *p = NULL;
    cr_assert_eq(kmux_matmul_plan_create(ref, &d, NULL, &p), KMUX_OK, "%s", kmux_last_error());
    float A[24], B[20], C[30], one = 1, zero = 0;
    for (int i = 0; i < 24; ++i)
        A[i] = 1;
    for (int i = 0; i < 20; ++i)
        B[i] = 1;
    kmux_matmul_args a = KMUX_MATMUL_ARGS_INIT;
    a.alpha = &one, a.beta = &zero, a.A = A, a.B = B, a.C = C;
    cr_assert_eq(kmux_matmul_execute(p, s, &a), KMUX_OK, "%s", kmux_last_error());
    kmux_plan_destroy(p);
    /* a rejected plan where a backend refuses: oneDNN has no f64 */
    kmux_device *dnn = NULL;
    if (kmux_device_find(ctx, "cpu:onednn", &dnn) == KMUX_OK) {
        kmux_matmul_desc e = d;
        e.a_type = e.b_type = e.c_type = KMUX_F64;
        e.compute_type = KMUX_COMPUTE_F64;
        cr_assert_neq(kmux_matmul_plan_create(dnn, &e, NULL, &p), KMUX_OK);
    }
    /* an invalid argument: one error line, written at the next call */
    kmux_matmul_desc bad = d;
    bad.m = -3;
    cr_assert_neq(kmux_matmul_plan_create(ref, &bad, NULL, &p), KMUX_OK);
    kmux_stream_destroy(s);
    kmux_context_destroy(ctx);
}

Test(bench_trace, header_fixed_columns_single_error_and_reproducer) {
    char *text = capture(run_traced);
    static char f[16][512];
    int lines = 0, header = 0, devices = 0, exec = 0, rejects = 0, errors = 0, errors_neg = 0;
    for (char *l = strtok(text, "\n"); l; l = strtok(NULL, "\n")) {
        if (strncmp(l, "kmux_verbose,", 13)) continue;
        ++lines;
        int n = csv_split(l, f, 16);
        cr_expect_eq(n, 10, "%d columns in: %s", n, l);
        if (n != 10) continue;
        if (!strcmp(f[1], "info") && strstr(f[9], "columns: event,device,op,impl")) ++header;
        if (!strcmp(f[1], "info") && !strcmp(f[2], "ref")) ++devices;
        if (!strcmp(f[1], "reject")) {
            ++rejects;
            cr_expect(strlen(f[9]) > 0, "a reject says why: %s", l);
        }
        if (!strcmp(f[1], "error")) {
            ++errors;
            errors_neg += strstr(f[9], "-3") != NULL;
        }
        if (!strcmp(f[1], "exec") && !strcmp(f[2], "ref")) {
            ++exec;
            cr_expect_str_eq(f[3], "matmul");
            /* the problem column, pasted after kmux-bench: its last word is the descriptor */
            /* col-major with op(A) = A^T: C and B stored "ba", A "ab" (kb_matmul_to_desc) */
            cr_expect(strstr(f[7], "--stag=ab --wtag=ba --dtag=ba"), "%s", f[7]);
            const char *desc = strrchr(f[7], ' ') + 1;
            kb_problem pr;
            memset(&pr, 0, sizeof pr);
            kb_settings_default(&pr.set);
            char err[256];
            cr_assert(kb_parse_desc(desc, &pr, err, sizeof err), "%s: %s", desc, err);
            cr_expect(pr.mm.m == 6 && pr.mm.n == 5 && pr.mm.k == 4, "%s", desc);
        }
    }
    cr_expect(lines > 0);
    cr_expect_eq(header, 1, "one column template line");
    cr_expect_eq(devices, 1, "the header lists the devices");
    cr_expect_eq(exec, 1);
    cr_expect_eq(errors_neg, 1, "the invalid m gives exactly one error line (%d errors)", errors);
    /* a backend's refusal: one reject line carrying the message, no error line repeating it */
    if (rejects) cr_expect_eq(errors, 1, "%d error lines beside %d rejects", errors, rejects);
    free(text);
}
