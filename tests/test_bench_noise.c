/*
 * test_bench_noise.c - noisy-machine detection: the rule on known CPU-time figures, a real CPU
 * hog (a child process busy for a bounded time) seen as foreign load, and a model view that
 * ranks devices on clean data and refuses to on NOISY data.
 */
#define _POSIX_C_SOURCE 200809L
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "kb_noise.h"
#include "kb_table.h"
#include "kb_timing.h"
#include "kb_util.h"
#include "test_util.h"

Test(bench_noise, rule_on_known_figures) {
    kb_noise n;
    /* 2 CPUs, 2 threads: our own 2 CPU-seconds per second are not noise */
    kb_noise_judge(1.0, 2.0, 0.0, 2.0, 2, 2, &n);
    cr_expect(n.measured && !n.noisy, "%s", n.reason);
    /* a process on the other core: 1 foreign CPU while we wanted both */
    kb_noise_judge(1.0, 2.0, 0.0, 1.0, 2, 2, &n);
    cr_expect(n.noisy);
    cr_expect(strstr(n.reason, "other processes kept 1.00 CPUs busy"), "%s", n.reason);
    /* the same foreign process while we used 1 of 2 CPUs: the free core absorbs it */
    kb_noise_judge(1.0, 2.0, 0.0, 1.0, 2, 1, &n);
    cr_expect(!n.noisy, "%s", n.reason);
    /* hypervisor steal */
    kb_noise_judge(1.0, 1.8, 0.3, 1.8, 2, 2, &n);
    cr_expect(n.noisy);
    cr_expect(strstr(n.reason, "stole 15%"), "%s", n.reason);
    /* too short a window: no verdict, never noisy */
    kb_noise_judge(0.05, 2.0, 0.0, 0.0, 2, 2, &n);
    cr_expect(!n.measured && !n.noisy);
}

static double now_s(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* A child that spins for at most `s` seconds (bounded even if the parent dies). */
static pid_t hog(double s) {
    pid_t pid = fork();
    if (pid == 0) {
        volatile unsigned long x = 0;
        double end = now_s() + s;
        while (now_s() < end)
            for (int i = 0; i < 100000; ++i)
                x += (unsigned long)i;
        _exit(x == 1 ? 1 : 0); /* x is read: the loop is not dead code, for every compiler */
    }
    return pid;
}

Test(bench_noise, cpu_hog_is_foreign_load) {
    kb_noise_sample a, b;
    kb_noise_sample_now(&a);
    cr_assert(a.ok, "/proc/stat unreadable");
    pid_t pid = hog(0.6);
    cr_assert(pid > 0);
    int st = 0;
    waitpid(pid, &st, 0);
    kb_noise_sample_now(&b);
    kb_noise n;
    kb_noise_between(&a, &b, 2, &n);
    cr_expect(n.measured, "window %.2f s", n.wall_s);
    /* the hog spun for the whole window on one CPU (or shared one with other load) */
    cr_expect(n.foreign_cpus >= 0.6, "foreign load %.2f CPUs during a busy child", n.foreign_cpus);
    if (n.online_cpus <= 2)
        cr_expect(n.noisy, "%d CPUs, foreign %.2f", n.online_cpus, n.foreign_cpus);
}

static kb_result res(const char *device, double ms, int noisy) {
    kb_result r;
    memset(&r, 0, sizeof r);
    kb_settings_default(&r.prob.set);
    char err[128];
    cr_assert(kb_parse_desc("mb2ic64ih56oc64oh56kh3ph1n\"res2\"", &r.prob, err, sizeof err), "%s",
              err);
    r.prob.op = KB_OP_CONV;
    r.prob.dir = KB_DIR_FWD;
    r.prob.occurrences = 3;
    kb_strlcpy(r.prob.workload, "resnet50", sizeof r.prob.workload);
    kb_strlcpy(r.device, device, sizeof r.device);
    r.status = KMUX_OK;
    kb_check_init(&r.check);
    r.check.status = KB_VERIFY_PASSED;
    r.timed = 1;
    r.stats.reps = 3;
    r.stats.min_ms = r.stats.median_ms = ms;
    if (noisy) {
        r.noise.measured = r.noise.noisy = 1;
        r.noise.foreign_cpus = 1.0;
        kb_strlcpy(r.noise.reason, "other processes kept 1.00 CPUs busy", sizeof r.noise.reason);
    }
    return r;
}

static char *model_view(const kb_result *r, size_t n) {
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    cr_assert(f);
    kb_model_view(f, r, n);
    fclose(f);
    return buf;
}

Test(bench_noise, model_view_ranks_clean_data_only) {
    kb_result clean[2] = {res("cpu:onednn", 10.0, 0), res("cpu:openblas", 25.0, 0)};
    char *v = model_view(clean, 2);
    cr_expect(strstr(v, "fastest: cpu:onednn, 2.50x cpu:openblas"), "%s", v);
    cr_expect(!strstr(v, "not ranked"), "%s", v);
    free(v);
    /* the case: oneDNN locked at 25x its quiet time by a foreign process */
    kb_result loud[2] = {res("cpu:onednn", 250.0, 1), res("cpu:openblas", 25.0, 0)};
    v = model_view(loud, 2);
    cr_expect(strstr(v, "not ranked: 1 of these timings"), "%s", v);
    cr_expect(!strstr(v, "fastest"), "%s", v);
    free(v);
}

Test(bench_noise, timing_rounds_disagreement) {
    /* steady calls: the three rounds agree */
    double steady[12] = {10, 10.2, 9.9, 10, 10.1, 10, 9.8, 10, 10.2, 10, 10.1, 9.9};
    cr_expect_lt(kb_rounds_spread(steady, 12, 3), 0.05);
    /* the last third slowed down 2x (a process started on the other core) */
    double drift[12] = {10, 10, 10, 10, 10, 10, 10, 10, 20, 20, 20, 20};
    cr_expect_float_eq(kb_rounds_spread(drift, 12, 3), 1.0, 1e-12);
    cr_expect_eq(kb_rounds_spread(drift, 5, 3), 0.0, "too few calls: no verdict");
    kb_noise n;
    kb_noise_judge(1.0, 2.0, 0.0, 2.0, 2, 2, &n);
    kb_noise_rounds(&n, 1.0);
    cr_expect(n.noisy);
    cr_expect(strstr(n.reason, "timing rounds disagree by 100%"), "%s", n.reason);
    kb_noise_judge(1.0, 2.0, 0.0, 2.0, 2, 2, &n);
    kb_noise_rounds(&n, 0.05);
    cr_expect(!n.noisy, "%s", n.reason);
}

/* the clock re-check: an injected re-measured clock 6% away marks the row "clock", 4% does not;
 * a row already noisy keeps its reason and gets the clock appended */
Test(bench_noise, clock_recheck_marks_a_moved_clock) {
    kb_noise n;
    memset(&n, 0, sizeof n);
    cr_assert_eq(kb_noise_clock(&n, 3000.0, 3120.0), 0, "4%% is within the threshold");
    cr_assert_eq(n.noisy, 0);
    cr_assert_float_eq(n.clock_mhz, 3120.0, 1e-9);
    cr_assert_eq(kb_noise_clock(&n, 3000.0, 2820.0), 1, "-6%% moved");
    cr_assert_eq(n.noisy, 1);
    cr_assert(strstr(n.reason, "clock: 3000 MHz at the start, 2820 MHz now (-6%)"), "%s", n.reason);
    cr_assert_eq(kb_noise_clock(&n, 0.0, 2820.0), 0, "no start clock: no verdict");
    memset(&n, 0, sizeof n);
    kb_noise_rounds(&n, 0.5);
    cr_assert_eq(kb_noise_clock(&n, 3000.0, 3300.0), 1);
    cr_assert(strstr(n.reason, "rounds disagree") && strstr(n.reason, "; clock: "), "%s", n.reason);
    /* the hook replaces the measurement; a user-given clock is never re-checked */
    setenv("KMUX_BENCH_RECHECK_CLOCK_MHZ", "1234", 1);
    cr_assert_float_eq(kb_noise_recheck_clock_mhz(), 1234.0, 1e-9);
    unsetenv("KMUX_BENCH_RECHECK_CLOCK_MHZ");
    setenv("KMUX_CPU_CLOCK_MHZ", "2000", 1);
    cr_assert_eq(kb_noise_recheck_clock_mhz(), 0.0);
    unsetenv("KMUX_CPU_CLOCK_MHZ");
    double mhz = kb_noise_recheck_clock_mhz();
    cr_assert(mhz > 100.0 && mhz < 10000.0, "measured %.0f MHz", mhz);
}
