/*
 * bench_softmax.c - the softmax family (softmax, log-softmax forward and backward, the fused
 * softmax cross-entropy with its gradient) on the CPU backends against the memory-bandwidth
 * bound, side by side in one run (issue 48's benchmark; not a test): rows x cols logits (default
 * 8192 x 2048, 16 Mi elements: a language model's batch of tokens over a small vocabulary, or
 * attention scores), f32 and bf16. The bound: a memcpy (split over the same threads) of the
 * bytes the op moves (forward: read x, write y; backward: read y and dy, write dx; cross-entropy:
 * read x, write dx), so "bound" = memcpy time / op time (1.0: memory speed). Rounds interleaved,
 * medians reported. PyTorch's ops on the same tensors: bench/bench_softmax_torch.py.
 * Usage: bench_softmax [--rows=R] [--cols=C] [--rounds=K]
 */
#define _ISOC11_SOURCE
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_clock.h"
#include "bench_cpus.h"
#include "bench_memcpy.h"
#include "kmux.h"

#define CHECK(x) kmux_bench_check("bench_softmax", #x, (x))

int main(int argc, char **argv) {
    int64_t R = 8192, C = 2048;
    int rounds = 5;
    for (int i = 1; i < argc; i++) {
        if (!strncmp(argv[i], "--rows=", 7))
            R = atoll(argv[i] + 7);
        else if (!strncmp(argv[i], "--cols=", 7))
            C = atoll(argv[i] + 7);
        else if (!strncmp(argv[i], "--rounds=", 9))
            rounds = atoi(argv[i] + 9);
        else {
            fprintf(stderr, "usage: bench_softmax [--rows=R] [--cols=C] [--rounds=K]\n");
            return 2;
        }
    }
    if (rounds < 1 || rounds > MAX_ROUNDS || R < 1 || C < 1) return 2;
    kmux_bench_cpus cpus;
    kmux_bench_cpus_open("bench_softmax", &cpus);
    kmux_device **dev = cpus.dev;
    kmux_stream **st = cpus.st;
    const int threads = cpus.threads;
    const int64_t n = R * C;
    /* CPU devices: host memory is device memory */
    float *x = aligned_alloc(64, (size_t)n * 4), *y = aligned_alloc(64, (size_t)n * 4);
    float *dy = aligned_alloc(64, (size_t)n * 4), *dx = aligned_alloc(64, (size_t)n * 4);
    int32_t *labels = malloc((size_t)R * 4), *argmax = malloc((size_t)R * 4);
    float *loss = malloc((size_t)R * 4), mean = 0.0f;
    /* the yardstick's own buffers: the most any op moves is three tensors (a backward) */
    const size_t cap = (size_t)n * 4 * 3 / 2;
    void *ca = aligned_alloc(64, cap), *cb = aligned_alloc(64, cap);
    if (!x || !y || !dy || !dx || !labels || !argmax || !loss || !ca || !cb)
        return fprintf(stderr, "bench_softmax: out of memory\n"), 1;
    memset(ca, 1, cap), memset(cb, 0, cap);
    srand(1);
    /* logits in [-4, 4], dy in [-1, 1], y <= 0 (a log-softmax's range); the bf16 runs read
     * the same values as bf16 (the top halves of the f32 bits) from their own buffers */
    for (int64_t i = 0; i < n; i++) {
        x[i] = (float)(rand() % 8001) / 1000.0f - 4.0f;
        dy[i] = (float)(rand() % 2001) / 1000.0f - 1.0f;
        y[i] = -(float)(rand() % 4001) / 1000.0f;
    }
    uint16_t *x16 = malloc((size_t)n * 2), *y16 = malloc((size_t)n * 2);
    uint16_t *dy16 = malloc((size_t)n * 2), *dx16 = malloc((size_t)n * 2);
    if (!x16 || !y16 || !dy16 || !dx16) return fprintf(stderr, "bench_softmax: out of memory\n"), 1;
    for (int64_t i = 0; i < n; i++) {
        uint32_t b[3];
        memcpy(&b[0], &x[i], 4), memcpy(&b[1], &y[i], 4), memcpy(&b[2], &dy[i], 4);
        x16[i] = (uint16_t)(b[0] >> 16), y16[i] = (uint16_t)(b[1] >> 16);
        dy16[i] = (uint16_t)(b[2] >> 16);
    }
    for (int64_t r = 0; r < R; r++)
        labels[r] = (int32_t)((r * 7 + 3) % C);
    printf("bench_softmax: %lld x %lld, %d threads, %d rounds (medians)\n", (long long)R,
           (long long)C, threads, rounds);
    printf("%-14s %-4s %-5s %-13s %9s %9s %7s\n", "op", "dir", "dtype", "device", "ms", "memcpy ms",
           "bound");
    const kmux_dtype dts[2] = {KMUX_F32, KMUX_BF16};
    for (int alg = KMUX_SOFTMAX; alg <= KMUX_SOFTMAX_CROSS_ENTROPY; alg++)
        for (int bwd = 0; bwd < (alg == KMUX_SOFTMAX_CROSS_ENTROPY ? 1 : 2); bwd++)
            for (int ti = 0; ti < 2; ti++) {
                kmux_softmax_desc sd = KMUX_SOFTMAX_DESC_INIT;
                sd.alg = (kmux_softmax_alg)alg;
                sd.prop = bwd ? KMUX_PROP_BACKWARD : KMUX_PROP_FORWARD;
                sd.rows = R, sd.cols = C, sd.dtype = dts[ti];
                kmux_plan *plan[NDEV];
                for (int d = 0; d < NDEV; d++)
                    CHECK(kmux_softmax_plan_create(dev[d], &sd, NULL, &plan[d]));
                const size_t bt = (size_t)n * kmux_dtype_size(dts[ti]);
                const size_t moved = (bwd ? 3 : 2) * bt; /* a memcpy of B bytes moves 2 B */
                double tm[NDEV + 1][MAX_ROUNDS];
                for (int r = 0; r < rounds; r++) {
                    kmux_bench_memcpy_mt(cb, ca, moved / 2, threads); /* untimed, as below */
                    double t0 = kmux_bench_now_ms();
                    kmux_bench_memcpy_mt(cb, ca, moved / 2, threads);
                    tm[NDEV][r] = kmux_bench_now_ms() - t0;
                    for (int d = 0; d < NDEV; d++) {
                        kmux_softmax_args a = KMUX_SOFTMAX_ARGS_INIT;
                        const int h = dts[ti] == KMUX_BF16;
                        a.x = h ? (void *)x16 : (void *)x;
                        a.y = bwd ? (h ? (void *)y16 : (void *)y) : (h ? (void *)dx16 : (void *)dx);
                        a.dy = h ? (void *)dy16 : (void *)dy, a.dx = h ? (void *)dx16 : (void *)dx;
                        a.labels = labels, a.loss = loss, a.mean_loss = &mean, a.argmax = argmax;
                        CHECK(kmux_softmax_execute(plan[d], st[d], &a)); /* untimed */
                        CHECK(kmux_stream_synchronize(st[d]));
                        t0 = kmux_bench_now_ms();
                        CHECK(kmux_softmax_execute(plan[d], st[d], &a));
                        CHECK(kmux_stream_synchronize(st[d]));
                        tm[d][r] = kmux_bench_now_ms() - t0;
                    }
                }
                const double mc = kmux_bench_median(tm[NDEV], rounds);
                for (int d = 0; d < NDEV; d++) {
                    const double ms = kmux_bench_median(tm[d], rounds);
                    kmux_plan_info info;
                    CHECK(kmux_plan_info_get(plan[d], &info));
                    printf("%-14s %-4s %-5s %-13s %9.3f %9.3f %7.2f  %s\n",
                           kmux_softmax_alg_name(sd.alg), bwd ? "bwd" : "fwd",
                           kmux_dtype_name(dts[ti]), dev_ids[d], ms, mc, mc / ms, info.impl);
                    kmux_plan_destroy(plan[d]);
                }
                if (!isfinite(mean) && alg == KMUX_SOFTMAX_CROSS_ENTROPY)
                    fprintf(stderr, "bench_softmax: the mean loss is %g\n", (double)mean);
            }
    free(x), free(y), free(dy), free(dx), free(labels), free(argmax), free(loss);
    free(x16), free(y16), free(dy16), free(dx16);
    free(ca), free(cb);
    kmux_bench_cpus_close(&cpus);
    return 0;
}
