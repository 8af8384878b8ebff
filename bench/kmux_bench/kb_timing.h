/*
 * kb_timing.h - timing of one prepared operation with kmux events on its stream (device events on
 * GPUs, the monotonic clock on CPU devices): warm-up, then repetitions until a minimum time, and
 * robust statistics of the per-call times.
 */
#ifndef KB_TIMING_H
#define KB_TIMING_H

#include <stddef.h>
#include "kmux.h"

/** Statistics of per-call times in milliseconds. */
typedef struct kb_stats {
    int warmup; /**< untimed calls before measuring */
    int reps;   /**< timed calls */
    double min_ms, median_ms, max_ms, mean_ms, p10_ms, p90_ms;
    double spread;        /**< (p90 - p10) / median: run-to-run noise */
    double rounds_spread; /**< (max - min) / min of the medians of KB_TIMING_ROUNDS consecutive
                               rounds of the timed calls: drift during the measurement */
    double total_s;       /**< sum of the timed calls */
} kb_stats;

/** The timed calls are judged in this many consecutive rounds. */
#define KB_TIMING_ROUNDS 3

/** (max - min) / min of the medians of `rounds` consecutive equal slices of the n samples in
 *  call order (0 when n < 2 * rounds: too few to judge). */
double kb_rounds_spread(const double *ms, int n, int rounds);

/** Computes the statistics of n > 0 samples (sorts ms in place; percentiles interpolate). */
void kb_stats_compute(double *ms, int n, kb_stats *s);

/** One call of the operation being timed. */
typedef kmux_status (*kb_exec_fn)(void *arg);

/** Timing settings. */
typedef struct kb_timing_opts {
    double min_time_s; /**< keep repeating until the timed calls add up to this */
    int min_reps;      /**< at least this many timed calls */
    int max_reps;      /**< at most this many */
    double warmup_s;   /**< warm up at least this long (and at least one call) */
} kb_timing_opts;

/** Times fn(arg) on stream (of dev): each call between two recorded events, synchronised on the
 *  second. Returns KMUX_OK and fills *st; on an error from fn or the events, returns it with a
 *  message in err. */
kmux_status kb_time(kmux_device *dev, kmux_stream *stream, kb_exec_fn fn, void *arg,
                    const kb_timing_opts *o, kb_stats *st, char *err, size_t err_cap);

#endif
