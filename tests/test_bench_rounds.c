/*
 * test_bench_rounds.c - kmux-bench times the devices of a problem interleaved, round by round,
 * the first device rotating (A B, B A, A B), not one device after the other (A A A, B B B); when
 * every device's buffers at once do not fit in host memory it falls back to one after another
 * and says so; the per-round medians are kept. The order is read from the KMUX_VERBOSE=1 trace
 * (one "exec" line per execution, with its device), so it does not trust kmux-bench's own
 * bookkeeping. Devices: the test plugin "test:small" (tests/plugins) and the built-in ref.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kb_run.h"
#include "test_util.h"

static kmux_context *g_ctx;
static kb_target g_tg[2];
static kmux_device *g_ref;
static kmux_stream *g_ref_stream;

static void open_devices(void) {
    const char *dir = getenv("KMUX_TEST_PLUGIN_DIR");
    cr_assert(dir && *dir, "KMUX_TEST_PLUGIN_DIR is not set (run through ctest)");
    kmux_context_options o = KMUX_CONTEXT_OPTIONS_INIT;
    o.backend_path = dir;
    o.verbose = 1;
    TU_OK(kmux_context_create(&o, &g_ctx));
    const char *ids[2] = {"test:small", "ref"};
    memset(g_tg, 0, sizeof g_tg);
    for (int k = 0; k < 2; ++k) {
        TU_OK(kmux_device_find(g_ctx, ids[k], &g_tg[k].dev));
        TU_OK(kmux_device_props_get(g_tg[k].dev, &g_tg[k].props));
        TU_OK(kmux_stream_create(g_tg[k].dev, &g_tg[k].stream));
    }
    TU_OK(kmux_device_find(g_ctx, "ref", &g_ref));
    TU_OK(kmux_stream_create(g_ref, &g_ref_stream));
}

static void close_devices(void) {
    for (int k = 0; k < 2; ++k)
        kmux_stream_destroy(g_tg[k].stream);
    kmux_stream_destroy(g_ref_stream);
    kmux_context_destroy(g_ctx);
}

TestSuite(bench_rounds, .init = open_devices, .fini = close_devices);

static kb_problem problem(const char *desc) {
    kb_problem p;
    memset(&p, 0, sizeof p);
    kb_settings_default(&p.set);
    p.occurrences = 1;
    char err[256];
    cr_assert(kb_parse_desc(desc, &p, err, sizeof err), "%s", err);
    return p;
}

static kb_run_opts options(int rounds) {
    kb_run_opts o;
    memset(&o, 0, sizeof o);
    o.verify = o.time = 1;
    o.timing.min_time_s = 0.03;
    o.timing.min_reps = 3;
    o.timing.max_reps = 30;
    o.timing.warmup_s = 0.005;
    o.timing.rounds = rounds;
    o.ref_budget_flops = 1e9;
    o.seed = 1;
    return o;
}

/* Runs p on both devices with stderr (the trace) sent to a file; returns the device column of
 * every "exec" line, in order, as a string of letters: S = test:small, R = ref. */
static char *run_traced(const kb_problem *p, const kb_run_opts *o, kb_result res[2], size_t *nres) {
    char path[] = "/tmp/kmux-rounds-XXXXXX";
    int fd = mkstemp(path);
    cr_assert(fd >= 0);
    fflush(stderr);
    int saved = dup(2);
    dup2(fd, 2);
    *nres = kb_run_problem(p, g_ref, g_ref_stream, g_tg, 2, o, res, 2);
    fflush(stderr);
    dup2(saved, 2);
    close(saved);
    FILE *f = fdopen(fd, "r");
    rewind(f);
    size_t cap = 1 << 16, n = 0;
    char *seq = calloc(1, cap), line[4096];
    while (fgets(line, sizeof line, f) && n + 1 < cap) {
        if (strncmp(line, "kmux_verbose,exec,", 18)) continue;
        const char *dev = line + 18;
        if (!strncmp(dev, "test:small,", 11))
            seq[n++] = 'S';
        else if (!strncmp(dev, "ref,", 4))
            seq[n++] = 'R';
    }
    fclose(f);
    unlink(path);
    return seq;
}

/* "SSSRRS" -> "SRS": the turns of the devices. */
static void turns(const char *seq, char *out, size_t cap) {
    size_t n = 0;
    for (const char *c = seq; *c && n + 1 < cap; ++c)
        if (n == 0 || out[n - 1] != *c) out[n++] = *c;
    out[n] = '\0';
}

Test(bench_rounds, devices_alternate_round_by_round) {
    kb_problem p = problem("24x16:16x20");
    kb_run_opts o = options(3);
    kb_result res[2];
    size_t n = 0;
    unsetenv("KMUX_BENCH_AVAILABLE_MIB");
    char *seq = run_traced(&p, &o, res, &n);
    char t[256];
    turns(seq, t, sizeof t);
    cr_assert_eq(n, 2);
    for (int k = 0; k < 2; ++k) {
        cr_assert_eq(res[k].status, KMUX_OK, "%s", res[k].error);
        cr_assert(kb_result_has_speed(&res[k]), "%s: %s", res[k].device, res[k].check.message);
        cr_expect(res[k].interleaved, "%s", res[k].device);
        cr_expect_str_empty(res[k].order_note);
        cr_assert_eq(res[k].stats.rounds, 3);
        for (int r = 0; r < 3; ++r)
            cr_expect_gt(res[k].stats.round_median_ms[r], 0.0);
    }
    /* the oracle (ref), the preparation of S then R (verification, warm-up), then the rounds
     * S R | R S | S R: turns R S R S R S R. One after another would be R S R (oracle, all of
     * S, all of R). */
    cr_expect_str_eq(t, "RSRSRSR", "exec order %s (turns %s)", seq, t);
    free(seq);
}

Test(bench_rounds, rounds_share_the_repetition_budget) {
    kb_problem p = problem("24x16:16x20");
    kb_run_opts o = options(3);
    o.timing.min_time_s = 0; /* the repetition counts alone decide */
    o.timing.min_reps = o.timing.max_reps = 9;
    kb_result res[2];
    size_t n = 0;
    unsetenv("KMUX_BENCH_AVAILABLE_MIB");
    free(run_traced(&p, &o, res, &n));
    cr_assert_eq(n, 2);
    for (int k = 0; k < 2; ++k) {
        cr_assert(kb_result_has_speed(&res[k]), "%s", res[k].device);
        cr_expect_eq(res[k].stats.reps, 9, "%s: %d timed calls for a budget of 9 in 3 rounds",
                     res[k].device, res[k].stats.reps);
        cr_expect_eq(res[k].stats.rounds, 3);
    }
}

Test(bench_rounds, no_room_for_every_device_at_once_runs_them_one_after_another) {
    kb_problem p = problem("200x200:200x200");
    kb_run_opts o = options(3);
    /* room for one device's buffers but not for both */
    double one = kb_problem_host_bytes(&p, &o, 1), both = kb_problem_host_bytes(&p, &o, 2);
    cr_assert_gt(both, one);
    char mib[64];
    snprintf(mib, sizeof mib, "%.6f", (one + both) / 2 / 0.9 / 1048576.0);
    setenv("KMUX_BENCH_AVAILABLE_MIB", mib, 1);
    kb_result res[2];
    size_t n = 0;
    char *seq = run_traced(&p, &o, res, &n);
    char t[256];
    turns(seq, t, sizeof t);
    cr_assert_eq(n, 2);
    for (int k = 0; k < 2; ++k) {
        cr_assert(kb_result_has_speed(&res[k]), "%s: %s %s", res[k].device, res[k].error,
                  res[k].check.message);
        cr_expect(!res[k].interleaved);
        cr_expect(strstr(res[k].order_note, "one device after another"), "%s", res[k].order_note);
        cr_expect_eq(res[k].stats.rounds, 3, "the rounds are kept, just not interleaved");
    }
    cr_expect_str_eq(t, "RSR", "exec order %s (turns %s)", seq, t);
    free(seq);
    /* no room even for one: an error row per device, nothing run */
    snprintf(mib, sizeof mib, "%.6f", one / 2 / 1048576.0);
    setenv("KMUX_BENCH_AVAILABLE_MIB", mib, 1);
    seq = run_traced(&p, &o, res, &n);
    unsetenv("KMUX_BENCH_AVAILABLE_MIB");
    cr_assert_eq(n, 2);
    cr_expect_eq(res[0].status, KMUX_ERR_OUT_OF_MEMORY);
    cr_expect(strstr(res[0].error, "host memory"), "%s", res[0].error);
    cr_expect_str_empty(seq, "%s", seq);
    free(seq);
}
