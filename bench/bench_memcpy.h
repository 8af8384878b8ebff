/*
 * bench_memcpy.h - the memory-bandwidth yardstick of the CPU benchmarks (bench_cast,
 * bench_eltwise): memcpy split over `threads` threads in contiguous, 64-byte aligned ranges, as
 * kmux's kernels split their work, the calling thread running the first range.
 */
#ifndef KMUX_BENCH_MEMCPY_H
#define KMUX_BENCH_MEMCPY_H

#include <pthread.h>
#include <stddef.h>
#include <string.h>

typedef struct kmux_bench_copy_part {
    char *dst;
    const char *src;
    size_t bytes;
} kmux_bench_copy_part;

static void *kmux_bench_copy_main(void *p) {
    kmux_bench_copy_part *c = p;
    memcpy(c->dst, c->src, c->bytes);
    return NULL;
}

/* dst[0..bytes) = src[0..bytes) on up to 64 threads; a thread that cannot start has its range
 * copied by the caller. */
static inline void kmux_bench_memcpy_mt(void *dst, const void *src, size_t bytes, int threads) {
    pthread_t th[64];
    kmux_bench_copy_part parts[64];
    int started[64] = {0};
    if (threads > 64) threads = 64;
    if (threads < 1) threads = 1;
    size_t per = (bytes / (size_t)threads + 63) / 64 * 64;
    for (int i = 0; i < threads; i++) {
        size_t off = per * (size_t)i;
        size_t len = off >= bytes ? 0 : (bytes - off < per ? bytes - off : per);
        parts[i] = (kmux_bench_copy_part){(char *)dst + off, (const char *)src + off, len};
    }
    for (int i = 1; i < threads; i++) {
        started[i] = pthread_create(&th[i], NULL, kmux_bench_copy_main, &parts[i]) == 0;
        if (!started[i]) kmux_bench_copy_main(&parts[i]);
    }
    kmux_bench_copy_main(&parts[0]);
    for (int i = 1; i < threads; i++)
        if (started[i]) pthread_join(th[i], NULL);
}

#endif
