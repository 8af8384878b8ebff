/*
 * bench_cpus.h - what the side-by-side family benchmarks (bench_bias, bench_pooling,
 * bench_softmax) share: the two CPU devices they compare (cpu:onednn, cpu:openblas), each with
 * a stream, the thread count the memcpy yardstick uses (the devices' compute units), and a
 * status check that ends the program with kmux's message.
 */
#ifndef KMUX_BENCH_CPUS_H
#define KMUX_BENCH_CPUS_H

#include <stdio.h>
#include <stdlib.h>

#include "kmux.h"

#define NDEV 2        /* devices side by side */
#define MAX_ROUNDS 32 /* most rounds a run keeps */

static const char *const dev_ids[NDEV] = {"cpu:onednn", "cpu:openblas"};

/* Ends the program (status 1) with "<prog>: <what>: <kmux's message>" unless s is KMUX_OK. */
static inline void kmux_bench_check(const char *prog, const char *what, kmux_status s) {
    if (s == KMUX_OK) return;
    fprintf(stderr, "%s: %s: %s\n", prog, what, kmux_last_error());
    exit(1);
}

typedef struct kmux_bench_cpus {
    kmux_context *ctx;
    kmux_device *dev[NDEV];
    kmux_stream *st[NDEV];
    int threads; /* compute units of the first device (>= 1) */
} kmux_bench_cpus;

/* Opens a context, the devices of dev_ids and a stream on each; ends the program on failure. */
static inline void kmux_bench_cpus_open(const char *prog, kmux_bench_cpus *b) {
    kmux_bench_check(prog, "kmux_context_create", kmux_context_create(NULL, &b->ctx));
    for (int d = 0; d < NDEV; d++) {
        kmux_bench_check(prog, dev_ids[d], kmux_device_find(b->ctx, dev_ids[d], &b->dev[d]));
        kmux_bench_check(prog, "kmux_stream_create", kmux_stream_create(b->dev[d], &b->st[d]));
    }
    kmux_device_props props;
    kmux_bench_check(prog, "kmux_device_props_get", kmux_device_props_get(b->dev[0], &props));
    b->threads = props.compute_units > 0 ? props.compute_units : 1;
}

static inline void kmux_bench_cpus_close(kmux_bench_cpus *b) {
    for (int d = 0; d < NDEV; d++)
        kmux_stream_destroy(b->st[d]);
    kmux_context_destroy(b->ctx);
}

#endif
