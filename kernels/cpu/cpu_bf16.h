/* cpu_bf16.h - bf16 <-> f32 inside a vectorised loop (eltwise.c, binary.c, reduction.c): bf16 is
 * the upper half of an f32, so decoding is a shift and rounding to nearest even is an integer add
 * on the bits (overflow to Inf and subnormals come out right); NaN becomes a quiet NaN with its
 * sign and leading payload bits, as the shared codec and VCVTNEPS2BF16. A loop that reads and
 * writes bf16 through these makes one pass over its block instead of three (decode, compute,
 * encode; bench_eltwise: bf16 ReLU 0.5 of the memcpy bound with the three passes). */
#ifndef KMUX_CPU_BF16_H
#define KMUX_CPU_BF16_H

#include <stdint.h>
#include <string.h>

static inline float kmux_bf16_in(uint16_t h) {
    const uint32_t u = (uint32_t)h << 16;
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

static inline uint16_t kmux_bf16_out(float f) {
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    /* both results formed, then selected: a branch kept the AVX2/AVX-512 clones scalar */
    const uint32_t rounded = (u + 0x7fffu + ((u >> 16) & 1u)) >> 16, quiet = (u >> 16) | 0x40u;
    return (uint16_t)((u & 0x7fffffffu) > 0x7f800000u ? quiet : rounded);
}

#endif
