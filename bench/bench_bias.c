/*
 * bench_bias.c - a layer's bias-add (the binary family: ADD with the bias broadcast) and bias
 * gradient (the reduction family: SUM over every axis but the channel) on the CPU backends,
 * against the memory-bandwidth bound, side by side in one run (issue 48's benchmark; not a
 * test). NCHW and NHWC, f32 and bf16, a training-size tensor (default 64 x 256 x 56 x 56).
 * The bound: a memcpy (split over the same threads) of the bytes the op moves (bias-add: read and
 * write the tensor; bias gradient: read it), so "bound" = memcpy time / op time (1.0: memory
 * speed). Rounds interleaved, medians reported. PyTorch's ops on the same tensors:
 * bench/bench_bias_torch.py.
 * Usage: bench_bias [--n=N] [--rounds=R]
 */
#define _ISOC11_SOURCE
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_clock.h"
#include "bench_cpus.h"
#include "bench_memcpy.h"
#include "kmux.h"

#define CHECK(x) kmux_bench_check("bench_bias", #x, (x))

int main(int argc, char **argv) {
    int64_t N = 64, C = 256, HW = 56 * 56;
    int rounds = 7;
    for (int i = 1; i < argc; i++) {
        if (!strncmp(argv[i], "--n=", 4))
            N = atoll(argv[i] + 4);
        else if (!strncmp(argv[i], "--rounds=", 9))
            rounds = atoi(argv[i] + 9);
        else {
            fprintf(stderr, "usage: bench_bias [--n=N] [--rounds=R]\n");
            return 2;
        }
    }
    if (rounds < 1 || rounds > MAX_ROUNDS || N < 1) return 2;
    kmux_bench_cpus cpus;
    kmux_bench_cpus_open("bench_bias", &cpus);
    kmux_device **dev = cpus.dev;
    kmux_stream **st = cpus.st;
    const int threads = cpus.threads;
    const int64_t n = N * C * HW;
    /* CPU devices: host memory is device memory */
    void *x = aligned_alloc(64, (size_t)n * 4), *y = aligned_alloc(64, (size_t)n * 4);
    void *b = aligned_alloc(64, (size_t)C * 4 + 64), *db = aligned_alloc(64, (size_t)C * 4 + 64);
    if (!x || !y || !b || !db) return fprintf(stderr, "bench_bias: out of memory\n"), 1;
    memset(x, 0, (size_t)n * 4), memset(y, 0, (size_t)n * 4), memset(b, 0, (size_t)C * 4);
    printf("bench_bias: %lld x %lld x %lld elements, %d threads, %d rounds (medians)\n",
           (long long)N, (long long)C, (long long)HW, threads, rounds);
    printf("%-10s %-5s %-5s %-13s %9s %9s %7s\n", "op", "dtype", "layout", "device", "ms",
           "memcpy ms", "bound");
    const kmux_dtype dts[2] = {KMUX_F32, KMUX_BF16};
    for (int op = 0; op < 2; op++)
        for (int ti = 0; ti < 2; ti++)
            for (int nhwc = 0; nhwc < 2; nhwc++) {
                const kmux_dtype t = dts[ti];
                const int64_t full[4] = {N, nhwc ? HW : C, nhwc ? C : HW, 1};
                const int64_t part[4] = {1, nhwc ? 1 : C, nhwc ? C : 1, 1};
                kmux_plan *plan[NDEV];
                for (int d = 0; d < NDEV; d++) {
                    if (op == 0) {
                        kmux_binary_desc bd = KMUX_BINARY_DESC_INIT;
                        bd.dtype = t, bd.ndims = 3;
                        memcpy(bd.dims, full, sizeof full), memcpy(bd.src1_dims, part, sizeof part);
                        CHECK(kmux_binary_plan_create(dev[d], &bd, NULL, &plan[d]));
                    } else {
                        kmux_reduction_desc rd = KMUX_REDUCTION_DESC_INIT;
                        rd.src_dtype = t, rd.dst_dtype = KMUX_F32, rd.ndims = 3;
                        memcpy(rd.src_dims, full, sizeof full),
                            memcpy(rd.dst_dims, part, sizeof part);
                        CHECK(kmux_reduction_plan_create(dev[d], &rd, NULL, &plan[d]));
                    }
                }
                const size_t bytes = (size_t)n * kmux_dtype_size(t);
                /* bias-add moves 2 x bytes (a memcpy of bytes); the gradient reads bytes (a
                 * memcpy of bytes / 2) */
                const size_t cp = op == 0 ? bytes : bytes / 2;
                double tm[NDEV + 1][MAX_ROUNDS];
                /* The first contestant rotates each round (memcpy, then each device), and each
                 * timed call follows an untimed one of the same contestant: the previous one's
                 * thread pool may still be spinning (libgomp's workers, a few ms after a oneDNN
                 * primitive) on the cores this one needs. cpu:openblas's f32 bias-add measured
                 * 0.52-0.55 of the bound right after cpu:onednn, 0.80 with
                 * OMP_WAIT_POLICY=passive (Zen 5 VM, 2 threads). */
                for (int r = 0; r < rounds; r++)
                    for (int j = 0; j <= NDEV; j++)
                        for (int pass = 0; pass < 2; pass++) { /* pass 0: untimed */
                            const int d = (j + r) % (NDEV + 1);
                            double t0 = kmux_bench_now_ms();
                            if (d == NDEV) {
                                kmux_bench_memcpy_mt(y, x, cp, threads);
                            } else if (op == 0) {
                                kmux_binary_args a = KMUX_BINARY_ARGS_INIT;
                                a.src0 = x, a.src1 = b, a.dst = y;
                                CHECK(kmux_binary_execute(plan[d], st[d], &a));
                            } else {
                                kmux_reduction_args a = KMUX_REDUCTION_ARGS_INIT;
                                a.src = x, a.dst = db;
                                CHECK(kmux_reduction_execute(plan[d], st[d], &a));
                            }
                            if (d < NDEV) CHECK(kmux_stream_synchronize(st[d]));
                            if (pass) tm[d][r] = kmux_bench_now_ms() - t0;
                        }
                const double mc = kmux_bench_median(tm[NDEV], rounds);
                for (int d = 0; d < NDEV; d++) {
                    const double ms = kmux_bench_median(tm[d], rounds);
                    printf("%-10s %-5s %-5s %-13s %9.3f %9.3f %7.2f\n",
                           op == 0 ? "bias_add" : "bias_grad", kmux_dtype_name(t),
                           nhwc ? "nhwc" : "nchw", dev_ids[d], ms, mc, mc / ms);
                    kmux_plan_destroy(plan[d]);
                }
            }
    free(x), free(y), free(b), free(db);
    kmux_bench_cpus_close(&cpus);
    return 0;
}
