/*
 * test_bench_report.c - kmux-bench records and reports: JSON lines written with jansson and read
 * back, the merge of several files into problem x (machine, device), geometric means, the
 * whole-network view, and the HTML page.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kb_jsonl.h"
#include "kb_report.h"
#include "kb_util.h"
#include "test_util.h"

static kb_result result(const char *desc, const char *device, double median_ms, int passed,
                        const char *workload, int occ, kb_dir dir) {
    kb_result r;
    memset(&r, 0, sizeof r);
    kb_settings_default(&r.prob.set);
    char err[128];
    cr_assert(kb_parse_desc(desc, &r.prob, err, sizeof err), "%s", err);
    r.prob.dir = dir;
    r.prob.occurrences = occ;
    kb_strlcpy(r.prob.workload, workload, sizeof r.prob.workload);
    kb_strlcpy(r.device, device, sizeof r.device);
    kb_strlcpy(r.backend, "x", sizeof r.backend);
    kb_strlcpy(r.impl, "x:impl<1>", sizeof r.impl);
    kb_strlcpy(r.effective_compute, "f32", sizeof r.effective_compute);
    r.status = KMUX_OK;
    kb_check_init(&r.check);
    r.check.status = passed ? KB_VERIFY_PASSED : KB_VERIFY_FAILED;
    r.flops = kb_problem_flops(&r.prob);
    r.min_bytes = kb_problem_min_bytes(&r.prob);
    if (passed) {
        r.timed = 1;
        r.stats.reps = r.stats.warmup = 3;
        r.stats.min_ms = r.stats.median_ms = r.stats.max_ms = median_ms;
        r.gflops = r.gflops_best = r.flops / (median_ms * 1e6);
        r.peak.flops = 100e9;
        kb_roofline_compute(r.flops, r.min_bytes, r.gflops * 1e9, &r.peak, &r.roof);
    } else {
        snprintf(r.check.message, sizeof r.check.message, "first mismatch");
    }
    return r;
}

static void machine(kb_machine *m, const char *label) {
    memset(m, 0, sizeof *m);
    kb_strlcpy(m->label, label, sizeof m->label);
    kb_strlcpy(m->hostname, "host", sizeof m->hostname);
    kb_strlcpy(m->cpu_model, "CPU", sizeof m->cpu_model);
    kb_strlcpy(m->kmux_version, "0.1.0", sizeof m->kmux_version);
    kb_strlcpy(m->kmux_commit, "unknown", sizeof m->kmux_commit);
    kb_strlcpy(m->date, "2024-01-01T00:00:00Z", sizeof m->date);
    m->cores = 2;
}

static char *write_file(const char *label, const kb_result *r, size_t n) {
    static int k;
    char *path = malloc(256);
    snprintf(path, 256, "/tmp/kmux-test-bench-report-%d-%d.jsonl", (int)getpid(), k++);
    FILE *f = fopen(path, "w");
    cr_assert_not_null(f);
    kb_machine m;
    machine(&m, label);
    for (size_t i = 0; i < n; ++i)
        cr_assert(kb_jsonl_write(f, &r[i], &m, 2, 0.5));
    fclose(f);
    return path;
}

Test(bench_report, records_round_trip) {
    kb_result r[2] = {result("64x32:32x16n\"g1\"", "cpu:a", 0.5, 1, "", 1, KB_DIR_FWD),
                      result("mb2ic4ih8oc4kh3", "cpu:a", 0.5, 0, "", 1, KB_DIR_BWD_D)};
    char *path = write_file("m1", r, 2);
    kb_rec_list l = {NULL, 0, 0};
    char err[256];
    cr_assert(kb_jsonl_read(path, 0, &l, err, sizeof err), "%s", err);
    cr_assert_eq(l.n, 2);
    cr_assert(l.v[0].has_speed);
    cr_assert_float_eq(l.v[0].gflops, 2.0 * 64 * 32 * 16 / 0.5e6, 1e-9);
    cr_assert_float_eq(l.v[0].median_ms, 0.5, 1e-12);
    cr_assert_str_eq(l.v[0].column, "m1 cpu:a");
    cr_assert_str_eq(l.v[0].label, "g1 f32"); /* name and dtype */
    cr_assert_str_eq(l.v[0].verification, "passed");
    cr_assert_not(l.v[1].has_speed, "a failed check carries no speed");
    cr_assert_str_eq(l.v[1].verification, "failed");
    cr_assert_str_eq(l.v[1].direction, "BWD_D");
    kb_rec_list_free(&l);
    /* the record text: no timing for the failed one, the reproducer names the options */
    char *text = kb_read_file(path, NULL);
    char *second = strchr(text, '\n') + 1;
    cr_assert(strstr(second, "\"timing\":null,\"performance\":null"), "%s", second);
    cr_assert(strstr(text, "\"reproducer\":\"kmux-bench --dt=f32 --stag=ab --wtag=ab --dtag=ab "),
              "%s", text);
    free(text);
    FILE *f = fopen(path, "a");
    fputs("{\"not\":\"a record\"}\n", f);
    fclose(f);
    cr_assert_not(kb_jsonl_read(path, 0, &l, err, sizeof err));
    cr_assert(strstr(err, ":3: not a kmux-bench record"), "%s", err);
    kb_rec_list_free(&l);
    unlink(path);
    free(path);
}

/* A run killed inside a write leaves a last line without its newline: the reader ignores it with
 * a warning (2), opening the file to append cuts it off, and the same text followed by a newline
 * (a line in the middle) is still an error. */
Test(bench_report, cut_short_last_line) {
    kb_result r[2] = {result("64x32:32x16", "cpu:a", 0.5, 1, "", 1, KB_DIR_FWD),
                      result("32x32:32x32", "cpu:a", 0.5, 1, "", 1, KB_DIR_FWD)};
    char *path = write_file("m1", r, 2);
    size_t len = 0;
    char *text = kb_read_file(path, &len);
    cr_assert_not_null(text);
    FILE *f = fopen(path, "a");
    fwrite(text, 1, 100, f); /* the first 100 bytes of the first record, no newline */
    fclose(f);
    kb_rec_list l = {NULL, 0, 0};
    char err[512];
    cr_assert_eq(kb_jsonl_read(path, 0, &l, err, sizeof err), 2, "%s", err);
    cr_assert(strstr(err, ":3: the last line (100 bytes, no newline) is cut short"), "%s", err);
    cr_assert_eq(l.n, 2, "the whole lines are read");
    kb_rec_list_free(&l);

    char note[1024];
    cr_assert(kb_jsonl_open_append(path, &f, note, sizeof note), "%s", note);
    cr_assert(strstr(note, "100 bytes, no newline) was cut short"), "%s", note);
    kb_machine m;
    machine(&m, "m1");
    cr_assert(kb_jsonl_write(f, &r[0], &m, 2, 0.5));
    cr_assert(kb_jsonl_close(f));
    size_t len2 = 0;
    char *after = kb_read_file(path, &len2);
    cr_assert(len2 > len && !memcmp(after, text, len) && after[len] == '{' &&
                  after[len2 - 1] == '\n',
              "the record appended on a line of its own after the whole lines");
    free(after);
    cr_assert_eq(kb_jsonl_read(path, 0, &l, err, sizeof err), 1, "%s", err);
    cr_assert_eq(l.n, 3);
    kb_rec_list_free(&l);

    f = fopen(path, "a");
    fwrite(text, 1, 100, f);
    fputc('\n', f);
    fwrite(text, 1, len, f);
    fclose(f);
    cr_assert_eq(kb_jsonl_read(path, 0, &l, err, sizeof err), 0);
    cr_assert(strstr(err, ":4: not a kmux-bench record"), "%s", err);
    kb_rec_list_free(&l);
    free(text);
    unlink(path);
    free(path);
}

Test(bench_report, merge_geomean_network_and_html) {
    /* machine A: two devices; machine B: one. Problems: a GEMM and two network layers */
    kb_result a[5] = {
        result("64x32:32x16", "cpu:x", 1.0, 1, "", 1, KB_DIR_FWD),
        result("64x32:32x16", "cpu:y", 2.0, 1, "", 1, KB_DIR_FWD),
        result("mb2ic4ih8oc4kh3n\"l1\"", "cpu:x", 3.0, 1, "resnet50", 3, KB_DIR_FWD),
        result("mb2ic4ih8oc4kh3n\"l1\"", "cpu:y", 1.0, 0, "resnet50", 3, KB_DIR_FWD),
        result("mb2ic4ih8oc8kh1n\"l<2>\"", "cpu:x", 0.5, 1, "resnet50", 2, KB_DIR_FWD),
    };
    kb_result b[3] = {
        result("64x32:32x16", "gpu:0", 0.25, 1, "", 1, KB_DIR_FWD),
        result("64x32:32x16", "gpu:0", 0.5, 1, "", 1, KB_DIR_FWD), /* a slower repeat */
        result("mb2ic4ih8oc4kh3n\"l1\"", "gpu:0", 0.1, 1, "resnet50", 3, KB_DIR_FWD),
    };
    char *files[2] = {write_file("A", a, 5), write_file("B", b, 3)};
    kb_rec_list l = {NULL, 0, 0};
    char err[256];
    for (int i = 0; i < 2; ++i)
        cr_assert(kb_jsonl_read(files[i], i, &l, err, sizeof err), "%s", err);
    const double cost[2] = {0, 4.0};
    kb_report R;
    kb_report_build(&R, &l, files, 2, cost);
    cr_assert_eq(R.ncols, 3);
    cr_assert_eq(R.nrows, 3);
    cr_assert_str_eq(R.cols[2].name, "B gpu:0");
    cr_assert_float_eq(R.cols[2].cost, 4.0, 0);
    /* the repeat keeps the faster verified record */
    cr_assert_float_eq(kb_report_cell(&R, 0, 2)->median_ms, 0.25, 1e-12);
    cr_assert_null(kb_report_cell(&R, 2, 1), "l<2> never ran on cpu:y");
    /* geomean over the problems every column verified: only the GEMM */
    size_t common = 0;
    double g = kb_report_geomean(&R, 0, &common);
    cr_assert_eq(common, 1);
    cr_assert_float_eq(g, 2.0 * 64 * 32 * 16 / 1e6, 1e-9);
    /* network: 3 x 3.0 + 2 x 0.5 on A cpu:x; incomplete on cpu:y (failed) and B (missing) */
    size_t rows = 0;
    cr_assert_float_eq(kb_report_network_ms(&R, "resnet50", 0, &rows), 10.0, 1e-9);
    cr_assert_eq(rows, 2);
    cr_assert_lt(kb_report_network_ms(&R, "resnet50", 1, NULL), 0.0);
    cr_assert_lt(kb_report_network_ms(&R, "resnet50", 2, NULL), 0.0);

    char html[256];
    snprintf(html, sizeof html, "/tmp/kmux-test-bench-report-%d.html", (int)getpid());
    cr_assert(kb_html_write(&R, html));
    char *page = kb_read_file(html, NULL);
    cr_assert_not_null(page);
    cr_assert(strstr(page, "<svg id=\"chart-speed\""));
    cr_assert(strstr(page, "<svg id=\"chart-peak\""));
    cr_assert(strstr(page, "<svg id=\"chart-cost\""), "a column has a cost");
    cr_assert(strstr(page, "l&lt;2&gt;"), "names are escaped");
    cr_assert_null(strstr(page, "l<2>"));
    cr_assert_null(strstr(page, "<script"));
    /* per-problem speed bars: 6 verified cells (A x: 3, A y: 1, B: 2) */
    const char *speed = strstr(page, "<svg id=\"chart-speed\"");
    const char *end = strstr(speed, "</svg>");
    int bars = 0;
    for (const char *p = speed; (p = strstr(p, "class=\"bar\"")) && p < end; ++p)
        ++bars;
    cr_assert_eq(bars, 6);
    free(page);
    unlink(html);
    kb_report_free(&R);
    for (int i = 0; i < 2; ++i) {
        unlink(files[i]);
        free(files[i]);
    }
}

/* The report of the records in paths[0..n-1] as text; baseline: R.baseline (-1: the default). */
static char *report_text_with(char **paths, int n, long baseline) {
    kb_rec_list recs = {NULL, 0, 0};
    char err[256];
    for (int i = 0; i < n; ++i)
        cr_assert(kb_jsonl_read(paths[i], i, &recs, err, sizeof err), "%s", err);
    kb_report R;
    double cost[4] = {0, 0, 0, 0};
    kb_report_build(&R, &recs, paths, n, cost);
    if (baseline >= 0) R.baseline = baseline;
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    kb_report_print(&R, f);
    fclose(f);
    kb_report_free(&R);
    return buf;
}

static char *report_text(char **paths, int n) {
    return report_text_with(paths, n, -1);
}

Test(bench_report, noisy_cells_marked_not_ranked_and_duplicates_reported) {
    kb_result a[3] = {result("64x32:32x16", "cpu:x", 1.0, 1, "", 1, KB_DIR_FWD),
                      result("64x32:32x16", "cpu:y", 2.0, 1, "", 1, KB_DIR_FWD),
                      result("64x32:32x16", "cpu:y", 3.0, 1, "", 1, KB_DIR_FWD)};
    char *path = write_file("m", a, 3);
    char *paths[1] = {path};
    char *t = report_text(paths, 1);
    cr_expect(!strstr(t, "not ranked"), "%s", t);
    cr_expect(strstr(t, "1 duplicate record(s)"), "%s", t);
    free(t);
    unlink(path);
    free(path);
    a[0].noise.measured = a[0].noise.noisy = 1;
    a[0].noise.foreign_cpus = 1.0;
    path = write_file("m", a, 2);
    paths[0] = path;
    t = report_text(paths, 1);
    cr_expect(strstr(t, "NOISY"), "%s", t);
    cr_expect(strstr(t, "not ranked: 1 of the cells"), "%s", t);
    cr_expect(!strstr(t, "duplicate"), "%s", t);
    free(t);
    unlink(path);
    free(path);
}

static char *report_text_baseline(char *path, long baseline) {
    char *paths[1] = {path};
    return report_text_with(paths, 1, baseline);
}

Test(bench_report, rows_name_dtype_and_direction_reasons_baseline_reproducers) {
    kb_result a[4] = {result("mb2ic4ih8oc4kh3n\"l1\"", "cpu:x", 2.0, 1, "", 1, KB_DIR_BWD_D),
                      result("mb2ic4ih8oc4kh3n\"l1\"", "cpu:y", 1.0, 1, "", 1, KB_DIR_BWD_D),
                      result("64x32:32x16n\"g\"", "cpu:x", 1.0, 1, "", 1, KB_DIR_FWD),
                      result("64x32:32x16n\"g\"", "cpu:y", 1.0, 0, "", 1, KB_DIR_FWD)};
    a[3].status = KMUX_ERR_UNSUPPORTED;
    snprintf(a[3].error, sizeof a[3].error, "plan creation: no such kernel here");
    char *path = write_file("m", a, 4);
    char *t = report_text_baseline(path, 0);
    cr_expect(strstr(t, "l1 BWD_D f32"), "row names carry direction and dtype:\n%s", t);
    cr_expect(strstr(t, "g f32"), "%s", t);
    cr_expect(strstr(t, "UNSUPPORTED*"), "%s", t);
    cr_expect(strstr(t, "g f32 on [2]: KMUX_ERR_UNSUPPORTED: plan creation: no such kernel here"),
              "%s", t);
    cr_expect(strstr(t, "Speedup over [1] m cpu:x"), "%s", t);
    cr_expect(strstr(t, "2.00x"), "cpu:y is twice as fast on l1:\n%s", t);
    cr_expect(strstr(t, "Reproducers:"), "%s", t);
    cr_expect(strstr(t, "l1 BWD_D f32: kmux-bench --dir=BWD_D"), "%s", t);
    cr_expect(strstr(t, "; 2 threads"), "the machines table shows threads:\n%s", t);
    free(t);
    unlink(path);
    free(path);
}

/* Hostile JSONL records (issue 50): terminal escapes (OSC 0 title, OSC 52 clipboard, OSC 8
 * link, SGR, a C1 CSI) never reach the report's text; a gflops of 1e308 is refused, not printed
 * as a 300-digit number; kb_strlcpy never cuts a UTF-8 character. */
Test(bench_report, hostile_records) {
    char path[] = "/tmp/kmux-hostile-jsonl-XXXXXX";
    int fd = mkstemp(path);
    cr_assert(fd >= 0);
    FILE *f = fdopen(fd, "w");
    fputs("{\"problem\": {\"op\": \"matmul\", \"descriptor\": \"4x4:4x4\", \"name\": "
          "\"\\u001b]0;pwned\\u0007\\u001b]52;c;ZWNobyBoaQ==\\u0007x\\u001b[31m\\u009b2J\"}, "
          "\"device\": {\"id\": \"cpu:\\u001b]8;;http://evil\\u001b\\\\x\"}, "
          "\"machine\": {\"label\": \"m\\u001b[0m\"}, \"performance\": {\"gflops\": 1.5}, "
          "\"verification\": {\"result\": \"passed\"}}\n",
          f);
    fclose(f);
    kb_rec_list l = {NULL, 0, 0};
    char err[512] = "";
    cr_assert(kb_jsonl_read(path, 0, &l, err, sizeof err), "%s", err);
    cr_assert_eq(l.n, 1);
    const char *fields[] = {l.v[0].label, l.v[0].device, l.v[0].machine, l.v[0].column};
    for (size_t i = 0; i < 4; i++)
        for (const unsigned char *p = (const unsigned char *)fields[i]; *p; p++)
            cr_expect(*p >= 0x20 && *p != 0x7F && !(p[0] == 0xC2 && p[1] >= 0x80 && p[1] <= 0x9F),
                      "control byte 0x%02x in '%s'", *p, fields[i]);
    kb_rec_list_free(&l);

    f = fopen(path, "w");
    fputs("{\"problem\": {\"op\": \"matmul\"}, \"device\": {\"id\": \"cpu:x\"}, "
          "\"performance\": {\"gflops\": 1e308}, \"verification\": {\"result\": \"passed\"}}\n",
          f);
    fclose(f);
    cr_assert_not(kb_jsonl_read(path, 0, &l, err, sizeof err));
    cr_expect(strstr(err, ":1: performance.gflops = 1e+308") && strstr(err, "not a plausible"),
              "%s", err);
    kb_rec_list_free(&l);
    /* /dev/zero hung `kmux-bench report` (read until memory ran out); a NUL byte cut the file */
    cr_assert_not(kb_jsonl_read("/dev/zero", 0, &l, err, sizeof err));
    cr_expect(strstr(err, "/dev/zero is larger than 256 MiB"), "%s", err);
    f = fopen(path, "wb");
    fwrite("{}\n\0{}\n", 1, 7, f);
    fclose(f);
    cr_assert_not(kb_jsonl_read(path, 0, &l, err, sizeof err));
    cr_expect(strstr(err, "a NUL byte at offset 3"), "%s", err);
    kb_rec_list_free(&l);
    unlink(path);

    char small[6];
    kb_strlcpy(small, "abcd\xc3\xa9", sizeof small); /* "abcdé": the é does not fit whole */
    cr_expect_str_eq(small, "abcd");
    kb_strlcpy(small, "ab\xe2\x82\xac", sizeof small); /* "ab€" fits: 5 bytes */
    cr_expect_str_eq(small, "ab\xe2\x82\xac");
}
