/*
 * kb_timing.h - timing of one prepared operation with kmux events on its stream (device events on
 * GPUs, the monotonic clock on CPU devices): a warm-up, then ROUNDS of repetitions, and robust
 * statistics of the per-call times.
 *
 * The rounds exist so that kmux-bench can interleave devices (kb_run.c): round 1 of device A,
 * round 1 of device B, round 2 of B, round 2 of A, ... A foreign process that starts or stops
 * during the run then shows as rounds that disagree instead of as one device that looks slow.
 * The repetition budget (--min-time, --min-reps, --max-reps) is split over the rounds, not
 * multiplied by them.
 */
#ifndef KB_TIMING_H
#define KB_TIMING_H

#include <stddef.h>
#include "kmux.h"

/** At most this many rounds (--rounds). */
#define KB_MAX_ROUNDS 16

/** Statistics of per-call times in milliseconds. */
typedef struct kb_stats {
    int warmup; /**< untimed calls (the warm-up, and one per round to re-warm caches) */
    int reps;   /**< timed calls, all rounds */
    double min_ms, max_ms, mean_ms, p10_ms, p90_ms; /**< over every timed call of every round */
    double median_ms;     /**< the median over the rounds of each round's median call time */
    double spread;        /**< (p90 - p10) / median: call-to-call noise */
    double rounds_spread; /**< (max - min) / min of round_median_ms (with a single round: of the
                               medians of KB_TIMING_ROUNDS consecutive slices of its calls) */
    int rounds;           /**< rounds timed */
    double round_median_ms[KB_MAX_ROUNDS]; /**< each round's median call time, in round order */
    double total_s;                        /**< sum of the timed calls */
} kb_stats;

/** A single round's calls are judged in this many consecutive slices (drift within it). */
#define KB_TIMING_ROUNDS 3

/** (max - min) / min of the medians of `rounds` consecutive equal slices of the n samples in
 *  call order (0 when n < 2 * rounds: too few to judge). */
double kb_rounds_spread(const double *ms, int n, int rounds);

/** Computes the statistics of n > 0 samples (sorts ms in place; percentiles interpolate). */
void kb_stats_compute(double *ms, int n, kb_stats *s);

/** One call of the operation being timed. */
typedef kmux_status (*kb_exec_fn)(void *arg);

/** Timing settings: the budget of the whole timing, which the rounds share. */
typedef struct kb_timing_opts {
    double min_time_s; /**< keep repeating until the timed calls add up to this (all rounds) */
    int min_reps;      /**< at least this many timed calls (all rounds; >= 1 per round) */
    int max_reps;      /**< at most this many (all rounds; >= 1 per round) */
    double warmup_s;   /**< warm up at least this long (and at least one call) */
    int rounds;        /**< rounds the budget is split into (>= 1; 0 is taken as 1) */
} kb_timing_opts;

/** The timing of one operation on one stream, round by round. */
typedef struct kb_timer {
    kmux_device *dev;
    kmux_stream *stream;
    kb_exec_fn fn;
    void *arg;
    kmux_event *e0, *e1;
    double *ms; /**< every timed call, in call order */
    int n, cap;
    int round_end[KB_MAX_ROUNDS]; /**< ms[round_end[r-1] .. round_end[r]) belong to round r */
    int rounds, warmup;
    double call_s; /**< a call's time as the warm-up saw it */
} kb_timer;

/** Creates the events and warms up (o->warmup_s, at least one call). Returns KMUX_OK, or the
 *  error with a message in err (t is then closed). */
kmux_status kb_timer_open(kb_timer *t, kmux_device *dev, kmux_stream *stream, kb_exec_fn fn,
                          void *arg, const kb_timing_opts *o, char *err, size_t err_cap);

/** Times one round: 1/o->rounds of the budget, each call between two recorded events and
 *  synchronised on the second; first one untimed call to re-warm the caches (another device may
 *  have run since) unless a call costs more than a quarter of the round. At most KB_MAX_ROUNDS. */
kmux_status kb_timer_round(kb_timer *t, const kb_timing_opts *o, char *err, size_t err_cap);

/** The statistics of the rounds timed so far (at least one). */
void kb_timer_stats(const kb_timer *t, kb_stats *st);

/** Frees the events and samples (safe on a zeroed or closed timer). */
void kb_timer_close(kb_timer *t);

#endif
