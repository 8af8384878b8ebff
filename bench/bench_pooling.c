/*
 * bench_pooling.c - 2-D pooling (the pooling family) on the CPU backends against the
 * memory-bandwidth bound, side by side in one run (issue 48's benchmark; not a test): ResNet-50's
 * max pool (3x3, stride 2, padding 1) and a 2x2/2 average pool over N x 64 x 112 x 112 (default
 * N = 16), forward and backward, NCHW and NHWC, f32 and bf16. The bound: a memcpy (split over the
 * same threads) of the bytes the op moves (forward: read x, write y; backward: read dy and, for
 * max, x, write dx), so "bound" = memcpy time / op time (1.0: memory speed). Rounds interleaved,
 * medians reported. PyTorch's ops on the same tensors: bench/bench_pooling_torch.py.
 * Usage: bench_pooling [--n=N] [--rounds=R] [--only=TEXT] (TEXT: rows whose "op dir dtype
 * layout", e.g. "max bwd f32 nchw", contains it)
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

#define CHECK(x) kmux_bench_check("bench_pooling", #x, (x))

int main(int argc, char **argv) {
    int64_t N = 16;
    const int64_t C = 64, H = 112, W = 112;
    int rounds = 5;
    const char *only = "";
    for (int i = 1; i < argc; i++) {
        if (!strncmp(argv[i], "--n=", 4))
            N = atoll(argv[i] + 4);
        else if (!strncmp(argv[i], "--only=", 7))
            only = argv[i] + 7;
        else if (!strncmp(argv[i], "--rounds=", 9))
            rounds = atoi(argv[i] + 9);
        else {
            fprintf(stderr, "usage: bench_pooling [--n=N] [--rounds=R] [--only=TEXT]\n");
            return 2;
        }
    }
    if (rounds < 1 || rounds > MAX_ROUNDS || N < 1) return 2;
    kmux_bench_cpus cpus;
    kmux_bench_cpus_open("bench_pooling", &cpus);
    kmux_device **dev = cpus.dev;
    kmux_stream **st = cpus.st;
    const int threads = cpus.threads;
    const int64_t nx = N * C * H * W;
    /* CPU devices: host memory is device memory; y and dy hold at most nx / 4 elements */
    void *x = aligned_alloc(64, (size_t)nx * 4), *dx = aligned_alloc(64, (size_t)nx * 4);
    void *y = aligned_alloc(64, (size_t)nx * 4), *dy = aligned_alloc(64, (size_t)nx * 4);
    /* the yardstick's own buffers: the most any op moves is 2 x + y bytes (max backward) */
    const size_t cap = (size_t)nx * 4 * 3 / 2;
    void *ca = aligned_alloc(64, cap), *cb = aligned_alloc(64, cap);
    if (!x || !dx || !y || !dy || !ca || !cb)
        return fprintf(stderr, "bench_pooling: out of memory\n"), 1;
    memset(ca, 1, cap), memset(cb, 0, cap);
    srand(1);
    for (int64_t i = 0; i < nx; i++) /* distinct-ish values: a real max search */
        ((float *)x)[i] = (float)(rand() % 1000);
    memset(dy, 0, (size_t)nx * 4), memset(dx, 0, (size_t)nx * 4), memset(y, 0, (size_t)nx * 4);
    printf("bench_pooling: %lld x %lld x %lld x %lld, %d threads, %d rounds (medians)\n",
           (long long)N, (long long)C, (long long)H, (long long)W, threads, rounds);
    printf("%-16s %-4s %-5s %-5s %-13s %9s %9s %7s\n", "op", "dir", "dtype", "layout", "device",
           "ms", "memcpy ms", "bound");
    const kmux_dtype dts[2] = {KMUX_F32, KMUX_BF16};
    for (int alg = 0; alg < 2; alg++)
        for (int bwd = 0; bwd < 2; bwd++)
            for (int ti = 0; ti < 2; ti++)
                for (int nhwc = 0; nhwc < 2; nhwc++) {
                    char row[64];
                    snprintf(row, sizeof row, "%s %s %s %s", alg ? "avg" : "max",
                             bwd ? "bwd" : "fwd", kmux_dtype_name(dts[ti]), nhwc ? "nhwc" : "nchw");
                    if (!strstr(row, only)) continue;
                    kmux_pooling_desc pd = KMUX_POOLING_DESC_INIT;
                    pd.alg = alg ? KMUX_POOLING_AVG_INCLUDE_PAD : KMUX_POOLING_MAX;
                    pd.prop = bwd ? KMUX_PROP_BACKWARD : KMUX_PROP_FORWARD;
                    pd.layout = nhwc ? KMUX_NHWC : KMUX_NCHW, pd.dtype = dts[ti];
                    pd.n = N, pd.c = C, pd.h = H, pd.w = W;
                    pd.kernel_h = pd.kernel_w = alg ? 2 : 3, pd.stride_h = pd.stride_w = 2;
                    pd.pad_top = pd.pad_bottom = pd.pad_left = pd.pad_right = alg ? 0 : 1;
                    int64_t p, q;
                    CHECK(kmux_pooling_output_dims(&pd, &p, &q));
                    kmux_plan *plan[NDEV];
                    for (int d = 0; d < NDEV; d++)
                        CHECK(kmux_pooling_plan_create(dev[d], &pd, NULL, &plan[d]));
                    const size_t es = kmux_dtype_size(dts[ti]);
                    const size_t bx = (size_t)nx * es, by = (size_t)(N * C * p * q) * es;
                    /* bytes moved; a memcpy of B bytes moves 2 B */
                    const size_t moved = bwd ? bx + by + (alg ? 0 : bx) : bx + by;
                    double tm[NDEV + 1][MAX_ROUNDS];
                    for (int r = 0; r < rounds; r++) {
                        kmux_bench_memcpy_mt(cb, ca, moved / 2, threads); /* untimed */
                        double t0 = kmux_bench_now_ms();
                        kmux_bench_memcpy_mt(cb, ca, moved / 2, threads);
                        tm[NDEV][r] = kmux_bench_now_ms() - t0;
                        for (int d = 0; d < NDEV; d++) {
                            kmux_pooling_args a = KMUX_POOLING_ARGS_INIT;
                            a.x = x, a.y = y, a.dy = dy, a.dx = dx;
                            CHECK(kmux_pooling_execute(plan[d], st[d], &a)); /* untimed */
                            CHECK(kmux_stream_synchronize(st[d]));
                            t0 = kmux_bench_now_ms();
                            CHECK(kmux_pooling_execute(plan[d], st[d], &a));
                            CHECK(kmux_stream_synchronize(st[d]));
                            tm[d][r] = kmux_bench_now_ms() - t0;
                        }
                    }
                    const double mc = kmux_bench_median(tm[NDEV], rounds);
                    for (int d = 0; d < NDEV; d++) {
                        const double ms = kmux_bench_median(tm[d], rounds);
                        printf("%-16s %-4s %-5s %-5s %-13s %9.3f %9.3f %7.2f\n",
                               alg ? "avg 2x2/2" : "max 3x3/2 pad 1", bwd ? "bwd" : "fwd",
                               kmux_dtype_name(dts[ti]), nhwc ? "nhwc" : "nchw", dev_ids[d], ms, mc,
                               mc / ms);
                        kmux_plan_destroy(plan[d]);
                    }
                }
    free(x), free(dx), free(y), free(dy), free(ca), free(cb);
    kmux_bench_cpus_close(&cpus);
    return 0;
}
