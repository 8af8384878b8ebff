/*
 * bench_overhead.c - what going through kmux costs against calling the native libraries
 * directly, measured side by side in one run:
 *   1. GEMM f32 2048^3: kmux_gemm_ex on cpu:openblas vs cblas_sgemm, on cpu:onednn vs a oneDNN
 *      matmul primitive (target: kmux reaches >= 98% of the direct throughput);
 *   2. GEMM f32 8^3: microseconds kmux_gemm_ex (plan cache) adds per call (target <= 0.5 us);
 *   3. ResNet-50 3x3 convolution mb32ic64ih56oc64oh56kh3ph1 (NCHW, f32): a kmux conv2d plan on
 *      cpu:onednn vs the oneDNN primitive with the reorders an NCHW caller needs (>= 98%);
 *   4. bf16 GEMM vs f32 GEMM 2048^3 through kmux on each CPU device (bf16 throughput >= 80% of
 *      f32) with kmux_gemm_ex, and as information the plan's implementation on the other path
 *      (native bf16 kernel vs "+cvt", reached with kmux_plan_next_impl) where there is one.
 * Every measurement runs its contestants interleaved (A B C D, A B C D, ...) after a warm-up,
 * times each repetition with the monotonic clock and reports the median. Results of kmux and of
 * the direct call are compared once before timing (random reals; tolerance from K and the
 * type's epsilon); a timing whose result disagrees is not printed. Threads: the kmux context,
 * OpenBLAS and oneDNN's OpenMP all use the machine's cores.
 *
 * Usage: bench_overhead [conv_batch]   (default 32; the conv takes ~30-60 ms on 2 cores)
 */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kmux.h"
#include "overhead/ov_common.h"

int main(int argc, char **argv) {
    int64_t conv_mb = argc > 1 ? atoll(argv[1]) : 32;
    if (conv_mb < 1) conv_mb = 32;
    double t_start = now_s();
    kmux_context *ctx = NULL;
    if (kmux_context_create(NULL, &ctx) != KMUX_OK) {
        fprintf(stderr, "kmux_context_create: %s\n", kmux_last_error());
        return 1;
    }
    devices dv = {0};
    if (kmux_device_find(ctx, "cpu:openblas", &dv.ob) != KMUX_OK) dv.ob = NULL;
    if (kmux_device_find(ctx, "cpu:onednn", &dv.dnn) != KMUX_OK) dv.dnn = NULL;
    if (dv.ob) kmux_stream_create(dv.ob, &dv.ob_s);
    if (dv.dnn) kmux_stream_create(dv.dnn, &dv.dnn_s);
#ifdef KMUX_BENCH_HAVE_DNNL
    if (dnnl_engine_create(&g_engine, dnnl_cpu, 0) != dnnl_success) g_engine = NULL;
#endif
    kmux_device_props props;
    memset(&props, 0, sizeof props);
    if (dv.dnn)
        kmux_device_props_get(dv.dnn, &props);
    else if (dv.ob)
        kmux_device_props_get(dv.ob, &props);
    printf("kmux overhead benchmark: kmux %s, %s, %d threads, %s\n", kmux_version(), props.name,
           props.compute_units, props.library_version);
    printf("medians of interleaved repetitions, monotonic clock, after warm-up; results of kmux "
           "and the direct call compared first\n\n");
    printf("%-34s %-13s %-13s %-13s %-12s %-11s %s\n", "case", "device", "kmux", "direct",
           "kmux/direct", "target", "result");

    bench_gemm(&dv, 2048, 11, 1, 0);
    bench_gemm(&dv, 8, 31, 2000, 1);
    bench_conv(&dv, conv_mb, 15);
    if (dv.dnn) bench_bf16(dv.dnn, dv.dnn_s, "cpu:onednn", 2048, 7);
    if (dv.ob) bench_bf16(dv.ob, dv.ob_s, "cpu:openblas", 2048, 7);

    printf("\n%d lines, %d MISS, %.1f s\n", g_lines, g_miss, now_s() - t_start);
    if (dv.ob_s) kmux_stream_destroy(dv.ob_s);
    if (dv.dnn_s) kmux_stream_destroy(dv.dnn_s);
    kmux_context_destroy(ctx);
    return 0;
}
