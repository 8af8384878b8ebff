/*
 * ov_common.h - the pieces every measurement of bench_overhead shares: interleaved timing of
 * contestants, random data, result comparison, the report table and the devices under test.
 */
#ifndef OV_COMMON_H
#define OV_COMMON_H

#include <stddef.h>
#include <stdint.h>

#include "kmux.h"

#ifdef KMUX_BENCH_HAVE_DNNL
#include <oneapi/dnnl/dnnl.h>
extern dnnl_engine_t g_engine; /* the oneDNN CPU engine of the direct calls */
#endif

#define MAX_REPS 64

typedef int (*run_fn)(void *arg); /* one call; returns 0 on success */

typedef struct contestant {
    const char *name;
    run_fn run;
    void *arg;
    int ok;                /* set to 0 when a call failed */
    double secs[MAX_REPS]; /* seconds per call, one entry per repetition */
} contestant;

typedef struct devices {
    kmux_device *ob, *dnn;
    kmux_stream *ob_s, *dnn_s;
} devices;

/** Monotonic clock in seconds. */
double now_s(void);
/** Median of n <= MAX_REPS values. */
double median(const double *v, int n);
/** Warm-up, then reps rounds; each round times `inner` calls of every contestant in turn. */
void interleave(contestant *c, int nc, int warm, int reps, int inner);
/** n random reals in [-1, 1), 64-byte aligned (exits when out of memory). */
float *rand_f32(int64_t n, uint64_t seed);
/** max |a - b| / (max |b| + tiny): 0 for identical results. */
double rel_diff(const float *a, const float *b, int64_t n);

/** Lines printed and targets missed. */
extern int g_miss, g_lines;
/** One row of the table; pass: 1 PASS, 0 MISS, -1 SKIP (no device), -2 information only. */
void line(const char *what, const char *dev, const char *a, const char *b, const char *value,
          const char *target, int pass);
void fmt_time(char *buf, size_t size, double s);
/** Throughput of kmux relative to direct (time_direct / time_kmux) against target. */
void ratio_line(const char *what, const char *dev, const contestant *k, const contestant *d,
                int reps, double target, int verified);
/** Time kmux adds per call against target_us. */
void added_line(const char *what, const char *dev, const contestant *k, const contestant *d,
                int reps, double target_us, int verified);

/** The measurements (ov_gemm.c, ov_conv.c). */
void bench_gemm(devices *dv, int64_t n, int reps, int inner, int small);
void bench_bf16(kmux_device *dev, kmux_stream *s, const char *id, int64_t n, int reps);
void bench_conv(devices *dv, int64_t mb, int reps);

#endif
