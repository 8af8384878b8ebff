/* ov_common.c - timing, data, comparison and the report table of bench_overhead. */
#define _POSIX_C_SOURCE 200809L
#include "ov_common.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#ifdef KMUX_BENCH_HAVE_DNNL
dnnl_engine_t g_engine;
#endif

double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

double median(const double *v, int n) {
    double s[MAX_REPS];
    memcpy(s, v, (size_t)n * sizeof *s);
    qsort(s, (size_t)n, sizeof *s, cmp_double);
    return n % 2 ? s[n / 2] : 0.5 * (s[n / 2 - 1] + s[n / 2]);
}

/* Warm-up, then reps rounds; each round times `inner` calls of every contestant in turn. */
void interleave(contestant *c, int nc, int warm, int reps, int inner) {
    for (int i = 0; i < nc; i++)
        for (int w = 0; w < warm && c[i].ok; w++)
            c[i].ok = c[i].run(c[i].arg) == 0;
    for (int r = 0; r < reps; r++)
        for (int i = 0; i < nc; i++) {
            if (!c[i].ok) continue;
            double t0 = now_s();
            for (int k = 0; k < inner && c[i].ok; k++)
                c[i].ok = c[i].run(c[i].arg) == 0;
            c[i].secs[r] = (now_s() - t0) / inner;
        }
}

/* ---- data
 * ---------------------------------------------------------------------------------------- */

float *rand_f32(int64_t n, uint64_t seed) {
    float *p = aligned_alloc(64, ((size_t)n * 4 + 63) / 64 * 64);
    if (!p) {
        fprintf(stderr, "bench_overhead: out of memory\n");
        exit(1);
    }
    uint64_t x = seed * 0x9E3779B97F4A7C15ull + 1;
    for (int64_t i = 0; i < n; i++) {
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        p[i] =
            (float)((double)((x * 0x2545F4914F6CDD1Dull) >> 11) / 9007199254740992.0 * 2.0 - 1.0);
    }
    return p;
}

/* max |a - b| / (max |b| + tiny) over n values: 0 for identical results */
double rel_diff(const float *a, const float *b, int64_t n) {
    double d = 0.0, m = 1e-30;
    for (int64_t i = 0; i < n; i++) {
        double e = fabs((double)a[i] - (double)b[i]);
        if (e > d || isnan(e)) d = isnan(e) ? INFINITY : e;
        if (fabs((double)b[i]) > m) m = fabs((double)b[i]);
    }
    return d / m;
}

/* ---- report ------------------------------------------------------------------------------------
 */

int g_miss, g_lines;

/* One row of the table; pass: 1 PASS, 0 MISS, -1 SKIP (no device), -2 information only. */
void line(const char *what, const char *dev, const char *a, const char *b, const char *value,
          const char *target, int pass) {
    printf("%-34s %-13s %-13s %-13s %-12s %-11s %s\n", what, dev, a, b, value, target,
           pass == -2 ? "-"
           : pass < 0 ? "SKIP"
           : pass     ? "PASS"
                      : "MISS");
    if (pass == 0) g_miss++;
    g_lines++;
}

void fmt_time(char *buf, size_t size, double s) {
    if (s >= 1e-3)
        snprintf(buf, size, "%.2f ms", s * 1e3);
    else
        snprintf(buf, size, "%.3f us", s * 1e6);
}

/* The line of a failed or unverified comparison (returns 1), or the two medians (returns 0) and
 * their times formatted into a (kmux) and b (direct), 32 bytes each. */
static int medians(const char *what, const char *dev, const contestant *k, const contestant *d,
                   int reps, int verified, double *tk, double *td, char *a, char *b) {
    if (!k->ok || !d->ok || !verified) {
        line(what, dev, k->ok ? "" : "failed", d->ok ? "" : "failed",
             verified ? "" : "WRONG RESULT", "", 0);
        return 1;
    }
    *tk = median(k->secs, reps);
    *td = median(d->secs, reps);
    fmt_time(a, 32, *tk);
    fmt_time(b, 32, *td);
    return 0;
}

/* Ratio line: throughput of kmux relative to direct (time_direct / time_kmux). */
void ratio_line(const char *what, const char *dev, const contestant *k, const contestant *d,
                int reps, double target, int verified) {
    char a[32], b[32], v[32], t[32];
    double tk, td;
    if (medians(what, dev, k, d, reps, verified, &tk, &td, a, b)) return;
    snprintf(v, sizeof v, "%.2f%%", 100.0 * td / tk);
    snprintf(t, sizeof t, ">= %.0f%%", 100.0 * target);
    line(what, dev, a, b, v, t, td / tk >= target);
}

void added_line(const char *what, const char *dev, const contestant *k, const contestant *d,
                int reps, double target_us, int verified) {
    char a[32], b[32], v[32], t[32];
    double tk, td;
    if (medians(what, dev, k, d, reps, verified, &tk, &td, a, b)) return;
    snprintf(v, sizeof v, "%+.3f us", (tk - td) * 1e6);
    snprintf(t, sizeof t, "<= %.1f us", target_us);
    line(what, dev, a, b, v, t, (tk - td) * 1e6 <= target_us);
}
