/*
 * bench_after_primitive.c - kmux's own CPU kernel on cpu:onednn right after one of oneDNN's
 * primitives, as in a training step (a oneDNN convolution or GEMM, then kmux's element-wise op),
 * against the same kernel right after itself: the cost of meeting libgomp's workers still spinning
 * after the primitive (what onednn_team.c avoids by running kmux's loops on that team). Not a
 * test. The primitive is oneDNN's sigmoid (implementation "onednn:eltwise..."), the kernel kmux's
 * ReLU (implementation "kmux:cpu"), both over n f32 elements; medians of --rounds pairs.
 * Usage: bench_after_primitive [--n=N] [--rounds=R]
 */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_clock.h"
#include "kmux.h"

#define MAX_ROUNDS 101

static void check(const char *what, kmux_status s) {
    if (s == KMUX_OK) return;
    fprintf(stderr, "bench_after_primitive: %s: %s\n", what, kmux_last_error());
    exit(1);
}

int main(int argc, char **argv) {
    int64_t n = (int64_t)16 << 20;
    int rounds = 21;
    for (int i = 1; i < argc; i++) {
        if (!strncmp(argv[i], "--n=", 4))
            n = atoll(argv[i] + 4);
        else if (!strncmp(argv[i], "--rounds=", 9))
            rounds = atoi(argv[i] + 9);
        else
            return fprintf(stderr, "usage: bench_after_primitive [--n=N] [--rounds=R]\n"), 2;
    }
    if (n < 1 || rounds < 1 || rounds > MAX_ROUNDS)
        return fprintf(stderr, "bench_after_primitive: --n >= 1, --rounds in [1, %d]\n",
                       MAX_ROUNDS),
               2;
    kmux_context *ctx = NULL;
    kmux_device *dev = NULL;
    kmux_stream *s = NULL;
    check("kmux_context_create", kmux_context_create(NULL, &ctx));
    check("cpu:onednn", kmux_device_find(ctx, "cpu:onednn", &dev));
    check("kmux_stream_create", kmux_stream_create(dev, &s));
    float *x = malloc((size_t)n * 4), *y = malloc((size_t)n * 4), *z = malloc((size_t)n * 4);
    if (!x || !y || !z) return fprintf(stderr, "bench_after_primitive: out of memory\n"), 1;
    for (int64_t i = 0; i < n; i++)
        x[i] = (float)(i % 7 - 3), y[i] = 0, z[i] = 0;
    kmux_eltwise_desc dp = KMUX_ELTWISE_DESC_INIT, dk = KMUX_ELTWISE_DESC_INIT;
    dp.alg = KMUX_ELTWISE_SIGMOID, dp.n = n;
    dk.alg = KMUX_ELTWISE_RELU, dk.n = n;
    kmux_plan *pp = NULL, *pk = NULL;
    check("sigmoid plan", kmux_eltwise_plan_create(dev, &dp, NULL, &pp));
    check("relu plan", kmux_eltwise_plan_create(dev, &dk, NULL, &pk));
    kmux_plan_info ip, ik;
    check("plan info", kmux_plan_info_get(pp, &ip));
    check("plan info", kmux_plan_info_get(pk, &ik));
    kmux_eltwise_args ap = KMUX_ELTWISE_ARGS_INIT, ak = KMUX_ELTWISE_ARGS_INIT;
    ap.src = x, ap.dst = y;
    ak.src = y, ak.dst = z;
    double after[MAX_ROUNDS], alone[MAX_ROUNDS];
    for (int r = 0; r < rounds; r++) {
        check("sigmoid", kmux_eltwise_execute(pp, s, &ap));
        double t0 = kmux_bench_now_ms();
        check("relu", kmux_eltwise_execute(pk, s, &ak));
        check("sync", kmux_stream_synchronize(s));
        after[r] = kmux_bench_now_ms() - t0;
        check("relu", kmux_eltwise_execute(pk, s, &ak));
        t0 = kmux_bench_now_ms();
        check("relu", kmux_eltwise_execute(pk, s, &ak));
        check("sync", kmux_stream_synchronize(s));
        alone[r] = kmux_bench_now_ms() - t0;
    }
    const double a = kmux_bench_median(after, rounds), b = kmux_bench_median(alone, rounds);
    printf("bench_after_primitive: n = %lld f32, %d rounds (medians)\n", (long long)n, rounds);
    printf("%s right after %s: %.3f ms; right after itself: %.3f ms; ratio %.2f\n", ik.impl,
           ip.impl, a, b, a / b);
    kmux_plan_destroy(pp), kmux_plan_destroy(pk);
    kmux_stream_destroy(s);
    kmux_context_destroy(ctx);
    free(x), free(y), free(z);
    return 0;
}
