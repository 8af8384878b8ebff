/*
 * bench_cast.c - memory-bandwidth benchmark of the CPU conversion kernels: f32 -> bf16,
 * f32 -> f16 and amax over 64M elements, against memcpy in the same run.
 *
 * Bytes are counted the same way for every operation: bytes read + bytes written (memcpy of B
 * bytes moves 2B; a cast of n f32 to bf16 moves 4n + 2n; amax reads 4n). The runs are
 * interleaved (memcpy, casts, amax, again) so that every operation sees the same machine state,
 * and the best of several repetitions is kept. memcpy runs with the same number of threads as
 * the kernels (split in contiguous ranges). The last line times f32 -> bf16 through the public
 * kmux_cast on the first CPU plugin device found (cpu:onednn, cpu:openblas), to show the plugin
 * path runs at the kernels' speed. Usage: bench_cast [elements] [repetitions].
 */
#define _POSIX_C_SOURCE 200809L
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "bench_memcpy.h"
#include "kmux.h"
#include "kmux_cpu_kernels.h"

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

enum { OP_MEMCPY, OP_BF16, OP_F16, OP_AMAX, OP_COUNT };
static const char *const OP_NAME[OP_COUNT] = {"memcpy (f32 bytes)", "cast f32->bf16",
                                              "cast f32->f16", "amax f32"};

int main(int argc, char **argv) {
    int64_t n = argc > 1 ? atoll(argv[1]) : (int64_t)64 << 20;
    int reps = argc > 2 ? atoi(argv[2]) : 7;
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    int tcount = cores > 1 ? 2 : 1;
    int thread_list[2] = {1, (int)(cores > 64 ? 64 : cores)};
    if (n < 1 || reps < 1) {
        fprintf(stderr, "usage: bench_cast [elements >= 1] [repetitions >= 1]\n");
        return 2;
    }
    float *src = aligned_alloc(64, (size_t)n * 4);
    float *copy = aligned_alloc(64, (size_t)n * 4);
    uint16_t *half = aligned_alloc(64, (size_t)n * 2);
    if (!src || !copy || !half) {
        fprintf(stderr, "bench_cast: cannot allocate %lld elements\n", (long long)n);
        return 1;
    }
    /* random reals (not constants), every page touched before timing */
    uint64_t s = 88172645463325252ull;
    for (int64_t i = 0; i < n; i++) {
        s ^= s << 13, s ^= s >> 7, s ^= s << 17;
        src[i] = (float)((double)(s >> 11) * 0x1p-53 * 2.0 - 1.0) * 1000.0f;
    }
    memset(copy, 1, (size_t)n * 4);
    memset(half, 1, (size_t)n * 2);

    const double bytes[OP_COUNT] = {2.0 * 4.0 * (double)n, 6.0 * (double)n, 6.0 * (double)n,
                                    4.0 * (double)n};
    printf("bench_cast: %lld elements, best of %d interleaved repetitions, CPU kernels: %s\n",
           (long long)n, reps,
           kmux_cpu_has_avx2_fma() && kmux_cpu_has_f16c() ? "AVX2+F16C" : "portable C");
    printf("%-20s %7s %10s %10s %9s %10s\n", "operation", "threads", "MB moved", "best ms", "GB/s",
           "vs memcpy");
    int bad = 0;
    for (int ti = 0; ti < tcount; ti++) {
        int threads = thread_list[ti];
        double best[OP_COUNT];
        float amax = 0.0f;
        for (int k = 0; k < OP_COUNT; k++)
            best[k] = 1e30;
        for (int r = 0; r < reps; r++)
            for (int k = 0; k < OP_COUNT; k++) {
                double t0 = now_s();
                switch (k) {
                case OP_MEMCPY:
                    kmux_bench_memcpy_mt(copy, src, (size_t)n * 4, threads);
                    break;
                case OP_BF16:
                    kmux_cpu_cast(n, src, KMUX_F32, half, KMUX_BF16, 0, NULL, NULL, threads);
                    break;
                case OP_F16:
                    kmux_cpu_cast(n, src, KMUX_F32, half, KMUX_F16, 0, NULL, NULL, threads);
                    break;
                default:
                    amax = kmux_cpu_amax(n, src, KMUX_F32, threads);
                    break;
                }
                double dt = now_s() - t0;
                if (dt < best[k]) best[k] = dt;
            }
        /* never print a speed for a wrong result: spot-check the last outputs */
        float m = 0.0f;
        for (int64_t i = 0; i < n; i++)
            m = src[i] > m ? src[i] : (-src[i] > m ? -src[i] : m);
        int ok = amax == m && memcmp(copy, src, (size_t)n * 4) == 0;
        for (int64_t i = 0; i < n && ok; i += 4099)
            ok = half[i] == kmux_cpu_f32_to_f16_bits(src[i]);
        if (!ok) {
            printf("bench_cast: WRONG RESULT with %d threads, no speed reported\n", threads);
            bad = 1;
            continue;
        }
        double ref_gbps = bytes[OP_MEMCPY] / best[OP_MEMCPY] * 1e-9;
        for (int k = 0; k < OP_COUNT; k++) {
            double gbps = bytes[k] / best[k] * 1e-9;
            printf("%-20s %7d %10.1f %10.3f %9.2f %9.0f%%\n", OP_NAME[k], threads, bytes[k] * 1e-6,
                   best[k] * 1e3, gbps, 100.0 * gbps / ref_gbps);
        }
    }
    /* the public API on a CPU plugin device (all its threads) */
    kmux_context *ctx = NULL;
    kmux_device *dev = NULL;
    kmux_stream *st = NULL;
    const char *ids[2] = {"cpu:onednn", "cpu:openblas"};
    if (kmux_context_create(NULL, &ctx) == KMUX_OK) {
        for (int i = 0; i < 2 && !dev; i++)
            if (kmux_device_find(ctx, ids[i], &dev) != KMUX_OK) dev = NULL;
        if (dev && kmux_stream_create(dev, &st) == KMUX_OK) {
            double b = 1e30;
            for (int r = 0; r < reps; r++) {
                double t0 = now_s();
                if (kmux_cast(st, n, src, KMUX_F32, half, KMUX_BF16, NULL) != KMUX_OK) {
                    char msg[1024]; /* first: kmux_device_id is a kmux call and clears it */
                    snprintf(msg, sizeof msg, "%s", kmux_last_error());
                    printf("kmux_cast on %s failed: %s\n", kmux_device_id(dev), msg);
                    bad = 1;
                    break;
                }
                double dt = now_s() - t0;
                if (dt < b) b = dt;
            }
            if (!bad)
                printf("%-20s %7s %10.1f %10.3f %9.2f  (kmux_cast on %s, its default threads)\n",
                       "kmux_cast f32->bf16", "dev", bytes[OP_BF16] * 1e-6, b * 1e3,
                       bytes[OP_BF16] / b * 1e-9, kmux_device_id(dev));
            kmux_stream_destroy(st);
        } else {
            printf("(no CPU plugin device: kmux_cast row skipped)\n");
        }
        kmux_context_destroy(ctx);
    }
    free(src);
    free(copy);
    free(half);
    return bad;
}
