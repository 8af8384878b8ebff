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

static int round_count(const kb_timing_opts *o) {
    int r = o->rounds < 1 ? 1 : o->rounds;
    return r > KB_MAX_ROUNDS ? KB_MAX_ROUNDS : r;
}

void kb_timer_close(kb_timer *t) {
    free(t->ms);
    kmux_event_destroy(t->e0);
    kmux_event_destroy(t->e1);
    t->ms = NULL, t->e0 = t->e1 = NULL, t->n = t->cap = 0;
}

static kmux_status fail(kmux_status s, const char *what, char *err, size_t err_cap) {
    snprintf(err, err_cap, "%s: %s: %s", what, kmux_status_str(s), kmux_last_error());
    return s;
}

kmux_status kb_timer_open(kb_timer *t, kmux_device *dev, kmux_stream *stream, kb_exec_fn fn,
                          void *arg, const kb_timing_opts *o, char *err, size_t err_cap) {
    memset(t, 0, sizeof *t);
    t->dev = dev, t->stream = stream, t->fn = fn, t->arg = arg;
    kmux_status s = kmux_event_create(dev, &t->e0);
    if (s == KMUX_OK) s = kmux_event_create(dev, &t->e1);
    if (s != KMUX_OK) {
        kb_timer_close(t);
        return fail(s, "kmux_event_create", err, err_cap);
    }
    /* warm-up: caches, lazily created kernels, thread pools, clocks */
    double t0 = kb_now_s();
    do {
        s = fn(arg);
        if (s == KMUX_OK) s = kmux_stream_synchronize(stream);
        if (s != KMUX_OK) {
            kb_timer_close(t);
            return fail(s, "warm-up call", err, err_cap);
        }
        ++t->warmup;
    } while (kb_now_s() - t0 < o->warmup_s && t->warmup < 1000);
    t->call_s = (kb_now_s() - t0) / t->warmup;
    return KMUX_OK;
}

kmux_status kb_timer_round(kb_timer *t, const kb_timing_opts *o, char *err, size_t err_cap) {
    int rounds = round_count(o);
    if (t->rounds >= KB_MAX_ROUNDS) return KMUX_OK;
    /* this round's share of the budget */
    int min_reps = (o->min_reps + rounds - 1) / rounds,
        max_reps = (o->max_reps + rounds - 1) / rounds;
    if (min_reps < 1) min_reps = 1;
    if (max_reps < min_reps) max_reps = min_reps;
    double min_ms = o->min_time_s * 1e3 / rounds;
    kmux_status s;
    if (t->call_s * 4e3 <= min_ms) { /* re-warm: another device may have evicted the caches */
        s = t->fn(t->arg);
        if (s == KMUX_OK) s = kmux_stream_synchronize(t->stream);
        if (s != KMUX_OK) return fail(s, "warm-up call", err, err_cap);
        ++t->warmup;
    }
    double total = 0;
    for (int n = 0; n < max_reps && (n < min_reps || total < min_ms); ++n) {
        s = kmux_event_record(t->e0, t->stream);
        if (s != KMUX_OK) return fail(s, "kmux_event_record", err, err_cap);
        s = t->fn(t->arg);
        if (s != KMUX_OK) return fail(s, "timed call", err, err_cap);
        s = kmux_event_record(t->e1, t->stream);
        if (s == KMUX_OK) s = kmux_event_synchronize(t->e1);
        float ms = 0;
        if (s == KMUX_OK) s = kmux_event_elapsed_ms(t->e0, t->e1, &ms);
        if (s != KMUX_OK) return fail(s, "kmux_event_record", err, err_cap);
        if (t->n == t->cap) {
            t->cap = t->cap ? 2 * t->cap : 64;
            t->ms = kb_xrealloc(t->ms, (size_t)t->cap * sizeof *t->ms);
        }
        t->ms[t->n++] = ms;
        total += ms;
    }
    t->round_end[t->rounds++] = t->n;
    return KMUX_OK;
}

void kb_timer_stats(const kb_timer *t, kb_stats *st) {
    memset(st, 0, sizeof *st);
    if (t->n < 1 || t->rounds < 1) return;
    double *tmp = kb_xmalloc((size_t)t->n * sizeof *tmp);
    double lo = 0, hi = 0;
    for (int r = 0; r < t->rounds; ++r) {
        int a = r ? t->round_end[r - 1] : 0, b = t->round_end[r];
        memcpy(tmp, t->ms + a, (size_t)(b - a) * sizeof *tmp);
        qsort(tmp, (size_t)(b - a), sizeof *tmp, cmp_double);
        double med = percentile(tmp, b - a, 0.5);
        st->round_median_ms[r] = med;
        if (r == 0 || med < lo) lo = med;
        if (r == 0 || med > hi) hi = med;
    }
    /* one round: judge its consecutive slices (before sorting: call order) */
    double spread = t->rounds > 1 ? (lo > 0 ? (hi - lo) / lo : 0.0)
                                  : kb_rounds_spread(t->ms, t->n, KB_TIMING_ROUNDS);
    memcpy(tmp, t->ms, (size_t)t->n * sizeof *tmp);
    kb_stats_compute(tmp, t->n, st); /* keeps round_median_ms: it only sets the call figures */
    free(tmp);
    double med[KB_MAX_ROUNDS];
    memcpy(med, st->round_median_ms, sizeof med);
    qsort(med, (size_t)t->rounds, sizeof *med, cmp_double);
    st->median_ms = percentile(med, t->rounds, 0.5);
    st->spread = st->median_ms > 0 ? (st->p90_ms - st->p10_ms) / st->median_ms : 0.0;
    st->rounds = t->rounds;
    st->rounds_spread = spread;
    st->warmup = t->warmup;
}
