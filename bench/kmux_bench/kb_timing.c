/* kb_timing.c - event-based timing loop and statistics. */
#include "kb_timing.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kb_util.h"

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double percentile(const double *sorted, int n, double q) {
    double pos = q * (double)(n - 1);
    int i = (int)pos;
    if (i >= n - 1) return sorted[n - 1];
    double f = pos - (double)i;
    return sorted[i] + f * (sorted[i + 1] - sorted[i]);
}

double kb_rounds_spread(const double *ms, int n, int rounds) {
    if (rounds < 2 || n < 2 * rounds) return 0.0;
    double lo = 0, hi = 0;
    for (int r = 0; r < rounds; ++r) {
        int a = n * r / rounds, b = n * (r + 1) / rounds;
        double *tmp = kb_xmalloc((size_t)(b - a) * sizeof *tmp);
        memcpy(tmp, ms + a, (size_t)(b - a) * sizeof *tmp);
        qsort(tmp, (size_t)(b - a), sizeof *tmp, cmp_double);
        double med = percentile(tmp, b - a, 0.5);
        free(tmp);
        if (r == 0 || med < lo) lo = med;
        if (r == 0 || med > hi) hi = med;
    }
    return lo > 0 ? (hi - lo) / lo : 0.0;
}

void kb_stats_compute(double *ms, int n, kb_stats *s) {
    qsort(ms, (size_t)n, sizeof *ms, cmp_double);
    double sum = 0;
    for (int i = 0; i < n; ++i)
        sum += ms[i];
    s->reps = n;
    s->min_ms = ms[0];
    s->max_ms = ms[n - 1];
    s->median_ms = percentile(ms, n, 0.5);
    s->p10_ms = percentile(ms, n, 0.1);
    s->p90_ms = percentile(ms, n, 0.9);
    s->mean_ms = sum / n;
    s->total_s = sum * 1e-3;
    s->spread = s->median_ms > 0 ? (s->p90_ms - s->p10_ms) / s->median_ms : 0.0;
}

kmux_status kb_time(kmux_device *dev, kmux_stream *stream, kb_exec_fn fn, void *arg,
                    const kb_timing_opts *o, kb_stats *st, char *err, size_t err_cap) {
    kmux_event *e0 = NULL, *e1 = NULL;
    double *ms = NULL;
    int cap = 0, n = 0;
    const char *what = "kmux_event_create";
    kmux_status s = kmux_event_create(dev, &e0);
    if (s == KMUX_OK) s = kmux_event_create(dev, &e1);
    if (s != KMUX_OK) goto done;

    /* warm-up: caches, lazily created kernels, thread pools, clocks */
    what = "warm-up call";
    memset(st, 0, sizeof *st);
    double t0 = kb_now_s();
    do {
        s = fn(arg);
        if (s == KMUX_OK) s = kmux_stream_synchronize(stream);
        if (s != KMUX_OK) goto done;
        ++st->warmup;
    } while (kb_now_s() - t0 < o->warmup_s && st->warmup < 1000);

    double total = 0;
    while (n < o->max_reps && (n < o->min_reps || total < o->min_time_s * 1e3)) {
        what = "kmux_event_record";
        s = kmux_event_record(e0, stream);
        if (s != KMUX_OK) goto done;
        what = "timed call";
        s = fn(arg);
        if (s != KMUX_OK) goto done;
        what = "kmux_event_record";
        s = kmux_event_record(e1, stream);
        if (s == KMUX_OK) s = kmux_event_synchronize(e1);
        float t = 0;
        if (s == KMUX_OK) s = kmux_event_elapsed_ms(e0, e1, &t);
        if (s != KMUX_OK) goto done;
        if (n == cap) {
            cap = cap ? 2 * cap : 64;
            ms = kb_xrealloc(ms, (size_t)cap * sizeof *ms);
        }
        ms[n++] = t;
        total += t;
    }
    int warmup = st->warmup;
    double rounds = kb_rounds_spread(ms, n, KB_TIMING_ROUNDS); /* before sorting: call order */
    kb_stats_compute(ms, n, st);
    st->warmup = warmup;
    st->rounds_spread = rounds;
done:
    if (s != KMUX_OK)
        snprintf(err, err_cap, "%s: %s: %s", what, kmux_status_str(s), kmux_last_error());
    free(ms);
    kmux_event_destroy(e0);
    kmux_event_destroy(e1);
    return s;
}
