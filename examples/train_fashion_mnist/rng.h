/*
 * rng.h - SplitMix64 (Steele, Lea, Flood 2014), the generator of the initial weights and of the
 * shuffling. compare_pytorch.py implements the same three functions, so that both trainers start
 * from the same weights and see the batches in the same order.
 */
#ifndef FMNIST_RNG_H
#define FMNIST_RNG_H

#include <stdint.h>

static inline uint64_t rng_next(uint64_t *state) {
    uint64_t z = (*state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

/** Uniform in [-bound, bound), computed in double and rounded once to float. */
static inline float rng_uniform(uint64_t *state, double bound) {
    double u = (double)(rng_next(state) >> 11) * 0x1.0p-53;
    return (float)((2.0 * u - 1.0) * bound);
}

/** Fisher-Yates shuffle of idx[0..n). */
static inline void rng_shuffle(uint64_t *state, int32_t *idx, int64_t n) {
    for (int64_t i = n - 1; i > 0; i--) {
        int64_t j = (int64_t)(rng_next(state) % (uint64_t)(i + 1));
        int32_t t = idx[i];
        idx[i] = idx[j];
        idx[j] = t;
    }
}

#endif
