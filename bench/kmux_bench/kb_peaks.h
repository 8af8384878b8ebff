/*
 * kb_peaks.h - what "% of peak" is measured against, and the roofline of each record.
 *
 * CPU: the device's peak FLOP/s from kmux_device_props, which the CPU plugins compute from one
 * per-microarchitecture model and one measured clock (backends/cpu_common/cpu_model.h: usable
 * cores x FMA width and pipes x clock), and the memory bandwidth of a STREAM-like triad measured
 * here once per machine and cached in $XDG_CACHE_HOME/kmux/bench-host.json (or ~/.cache/kmux/...)
 * keyed by CPU model and threads.
 * GPU: the device's own figures, else the datasheet row of bench/workloads/peaks.csv whose device
 * name the GPU's name contains.
 */
#ifndef KB_PEAKS_H
#define KB_PEAKS_H

#include "kmux.h"

/** Measurements of the host CPU. */
typedef struct kb_host_measure {
    char cpu_model[128];
    int threads;          /**< threads the triad ran with */
    double clock_mhz;     /**< the CPU devices' measured clock (device props), 0 if unknown */
    double triad_gbps;    /**< measured STREAM triad bandwidth, GB/s (1e9 B/s), 0 if not */
    int from_cache;       /**< 1 when read from the cache file */
    char cache_path[512]; /**< the cache file ("" when none could be used) */
} kb_host_measure;

/** Model name of the host CPU from /proc/cpuinfo ("unknown CPU" when absent). */
void kb_cpu_model(char *buf, size_t cap);

/** STREAM triad a[i] = b[i] + s * c[i] over arrays far larger than the caches, with `threads`
 *  threads; best of several passes, 24 bytes per element, in GB/s. *stable (may be NULL): the
 *  two best passes agree within 5%. */
double kb_measure_triad_gbps(int threads, int *stable);

/** Fills *m: clock_mhz as given (the CPU devices' props), the triad from the cache or, when
 *  absent, stale, or use_cache is 0, by measuring (and then writes the cache). */
void kb_host_measure_get(int threads, double clock_mhz, int use_cache, kb_host_measure *m);

/** Peak figures of one device for one problem's input dtype and compute type. */
typedef struct kb_peak {
    double flops;          /**< FLOP/s (ops/s for i8), 0 when unknown */
    char flops_source[96]; /**< "device props x measured clock", "peaks.csv: NVIDIA H100 SXM5" */
    double bw_gbps;        /**< memory bandwidth GB/s, 0 when unknown */
    char bw_source[96];
} kb_peak;

/** Peak of the device described by props for inputs of dtype a and compute type ct. hm: the host
 *  measurement (CPU devices), may be NULL. peaks_csv: text of peaks.csv, may be NULL. */
void kb_device_peak(const kmux_device_props *props, kmux_dtype a, kmux_compute_type ct,
                    const kb_host_measure *hm, const char *peaks_csv, kb_peak *pk);

/** Roofline figures of one measurement. */
typedef struct kb_roofline {
    double ai;         /**< arithmetic intensity: flops / minimal bytes */
    double ridge;      /**< peak flops / bandwidth (flop/byte); 0 when unknown */
    double pct_peak;   /**< achieved / peak flops * 100; < 0 when unknown */
    double attainable; /**< min(peak, ai * bandwidth) in FLOP/s; 0 when unknown */
    const char *bound; /**< "compute-bound", "memory-bound" or NULL when unknown */
} kb_roofline;

/** Roofline of `flops` operations over `bytes` bytes achieved at `flops_per_s`. */
void kb_roofline_compute(double flops, double bytes, double flops_per_s, const kb_peak *pk,
                         kb_roofline *r);

#endif
