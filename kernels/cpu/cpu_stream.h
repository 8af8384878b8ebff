/* cpu_stream.h - the memory side of a bandwidth-bound CPU kernel that works in L1-resident blocks
 * (eltwise.c, binary.c, cast.c; the prefetches of reduction.c, cast_avx2.c, im2col): the input
 * lines of a later block asked for ahead of time, and a finished block streamed out with
 * non-temporal stores.
 *
 * Measured on the 2-core Zen 5 VM (ReLU backward, f32, 51 M elements, 2 threads), as a ratio to a
 * memcpy of the same bytes timed beside it: blocks of 1024 elements computed into L1 and streamed
 * out, 0.55-0.6; a plain loop storing straight into the output, 0.85; blocks of 256 with the
 * inputs prefetched 4 KiB ahead, 0.8-1.2 (bench_eltwise, over runs as the VM's memory load
 * changed; a hand-written AVX-512 loop with the same streams measured 1.0-1.3 in the same runs).
 * The hardware prefetchers stall at each burst of a block's reads; the software prefetch keeps
 * the read streams going.
 */
#ifndef KMUX_CPU_STREAM_H
#define KMUX_CPU_STREAM_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>
#if defined(__x86_64__)
#include <emmintrin.h>
#endif

#include "kmux_cpu_kernels.h"

/** How far ahead (bytes) a block's inputs are asked for. */
#define KMUX_CPU_PREFETCH_AHEAD 4096u

/** Asks for the cache line holding address a, formed as an integer (so it may lie past the end of
 *  a tensor: a prefetch is a hint and never faults). */
static inline void kmux_cpu_prefetch_line(uintptr_t a) {
#if defined(__GNUC__) || defined(__clang__)
    __builtin_prefetch((const void *)a);
#else
    (void)a;
#endif
}

/** Asks for the cache lines of [a, a + bytes), a as for kmux_cpu_prefetch_line. */
static inline void kmux_cpu_prefetch_at(uintptr_t a, size_t bytes) {
    for (uintptr_t b = a & ~(uintptr_t)63; b < a + bytes; b += 64)
        kmux_cpu_prefetch_line(b);
}

/** Asks for the cache lines of [p, p + bytes). */
static inline void kmux_cpu_prefetch(const void *p, size_t bytes) {
    kmux_cpu_prefetch_at((uintptr_t)p, bytes);
}

/** Asks for the cache lines of [p + KMUX_CPU_PREFETCH_AHEAD, + bytes): a later block's inputs. */
static inline void kmux_cpu_prefetch_ahead(const void *p, size_t bytes) {
    kmux_cpu_prefetch_at((uintptr_t)p + KMUX_CPU_PREFETCH_AHEAD, bytes);
}

/** dst[0..bytes) = src[0..bytes) with non-temporal stores where dst is 16-byte aligned (x86-64),
 *  a plain copy otherwise. A plain store first reads each line it writes (write-allocate), one
 *  more stream of memory traffic for an output the op does not read again. The caller ends a
 *  streamed range with kmux_cpu_stream_fence(). */
static inline void kmux_cpu_stream_store(void *dst, const void *src, size_t bytes) {
#if defined(__x86_64__)
    if (((uintptr_t)dst & 15u) == 0) {
        size_t i = 0;
        for (; i + 16 <= bytes; i += 16)
            _mm_stream_si128((__m128i *)((char *)dst + i),
                             _mm_loadu_si128((const __m128i *)((const char *)src + i)));
        memcpy((char *)dst + i, (const char *)src + i, bytes - i);
        return;
    }
#endif
    memcpy(dst, src, bytes);
}

/** Whether an output of `bytes` is streamed out (1) or stored plainly (0): streamed from
 *  kmux_cpu_stream_min_bytes() (cpu_features.c). A smaller output is likely read again from the
 *  cache by the next op of a step. */
static inline int kmux_cpu_stream_worth(size_t bytes) {
    return bytes >= kmux_cpu_stream_min_bytes();
}

/** Where a kernel computes a block of its output: into the L1-resident `block` when the output is
 *  streamed (`stream`, kmux_cpu_stream_worth of the whole output), straight into `dst` otherwise
 *  (no copy). kmux_cpu_block_done then streams the block out. */
static inline void *kmux_cpu_block_out(void *dst, void *block, int stream) {
    return stream ? block : dst;
}

/** Ends a block computed where kmux_cpu_block_out said: streams `bytes` of `block` to `dst` when
 *  `stream`, nothing otherwise. */
static inline void kmux_cpu_block_done(void *dst, const void *block, size_t bytes, int stream) {
    if (stream) kmux_cpu_stream_store(dst, block, bytes);
}

/** Makes the streamed stores of this thread visible before its range returns. */
static inline void kmux_cpu_stream_fence(void) {
#if defined(__x86_64__)
    _mm_sfence();
#endif
}

#endif
