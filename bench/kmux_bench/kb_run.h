/*
 * kb_run.h - one problem on every selected device: the oracle once, then per device plan
 * creation (timed), verification on integer data with guard bands, and timing on random reals.
 * Every device is prepared first (plan, buffers, verification, warm-up); then the timing runs in
 * rounds (kb_timing.h), each round timing every device once in turn, the first one rotating
 * (A B, B A, A B): a change of the machine's load hits all devices alike and shows as rounds
 * that disagree. When the devices' buffers do not fit in host memory together, the devices run
 * one after another (the row says so).
 */
#ifndef KB_RUN_H
#define KB_RUN_H

#include <regex.h>
#include <stdint.h>
#include "kb_noise.h"
#include "kb_oracle.h"
#include "kb_peaks.h"
#include "kb_problem.h"
#include "kb_timing.h"
#include "kb_verify.h"
#include "kmux.h"

/** A device the problems run on. */
typedef struct kb_target {
    kmux_device *dev;
    kmux_stream *stream;
    kmux_device_props props;
} kb_target;

/** How to run. */
typedef struct kb_run_opts {
    int verify; /**< --mode has C */
    int time;   /**< --mode has P */
    kb_timing_opts timing;
    double ref_budget_flops; /**< above it the oracle samples */
    uint64_t seed;
    const char *self_test;       /**< NULL, or "corrupt-output", "corrupt-guard", "zero-data":
                                      injected faults that test the checker itself */
    double cold_bytes;           /**< > 0: time with rotating copies of the operands adding up to
                                      at least this many bytes, so that no call hits the cache */
    const kb_host_measure *host; /**< for CPU peaks */
    const char *peaks_csv;       /**< text of peaks.csv (GPU peaks), may be NULL */
    const regex_t *impl_regex;   /**< --impl: run the first implementation whose name matches */
    const char *impl_pattern;    /**< its text, for messages */
    int all_impls;               /**< --all-impls: one result per implementation (matching) */
} kb_run_opts;

/** Result of one problem on one device. */
typedef struct kb_result {
    kb_problem prob;
    char device[32], backend[16], device_name[128], arch[32], library_version[96];
    char impl[128];
    char effective_compute[16];
    int deterministic;
    kmux_status status; /**< of plan creation / execution; KMUX_OK when they worked */
    char error[400];    /**< why not (status != OK), e.g. the backend's KMUX_ERR_UNSUPPORTED */
    double plan_ms;     /**< plan creation time */
    double oracle_ms;   /**< time ref took for the oracle (shared by the problem's devices) */
    char sample_note[96];
    kb_check check;
    int timed; /**< 1 when stats hold a measurement (never for failed checks) */
    kb_stats stats;
    int rotations; /**< buffer sets the timed calls cycled through (1 = hot caches) */
    double flops, min_bytes;
    double gflops;      /**< at the median time */
    double gflops_best; /**< at the minimum time */
    kb_peak peak;
    kb_roofline roof;
    kb_noise noise;       /**< foreign load and steal during the run (noise.noisy: do not rank) */
    int interleaved;      /**< 1 when its rounds alternated with other devices' rounds */
    char order_note[160]; /**< why the devices were not interleaved ("" when they were, or when
                               there was one device) */
} kb_result;

/** At most this many implementations per device with --all-impls. */
#define KB_MAX_IMPLS 32

/** Runs p on the ntargets devices, using ref (with ref_stream) as the oracle; fills results[]
 *  (capacity cap >= ntargets, ntargets * KB_MAX_IMPLS with --all-impls) in target order, one
 *  per target (or per implementation with o->all_impls). Returns the count written. */
size_t kb_run_problem(const kb_problem *p, kmux_device *ref, kmux_stream *ref_stream,
                      kb_target *targets, int ntargets, const kb_run_opts *o, kb_result *results,
                      size_t cap);

/** Host memory a run of p needs (bytes) with host_devices CPU devices prepared at once:
 *  kb_run_problem checks it against the memory available (MemAvailable; the test hook
 *  KMUX_BENCH_AVAILABLE_MIB replaces it) before allocating anything. Every device at once does
 *  not fit: the devices run one after another; one does not fit: KMUX_ERR_OUT_OF_MEMORY results
 *  (the run goes on). */
double kb_problem_host_bytes(const kb_problem *p, const kb_run_opts *o, int host_devices);

/** A rough estimate of the seconds kb_run_problem takes for p (oracle, verification and timing
 *  on every target at a third of its peak), for the progress lines. */
double kb_problem_estimate_s(const kb_problem *p, const kb_target *targets, int ntargets,
                             const kb_run_opts *o);

/** 1 when the result may carry a speed: passed, or not verified (--mode=P), and timed. */
int kb_result_has_speed(const kb_result *r);

/** 1 when the result has a speed measured on a machine that other processes (or the hypervisor)
 *  kept busy: it is shown, marked, and never ranked. */
int kb_result_noisy(const kb_result *r);

#endif
