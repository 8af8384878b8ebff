/*
 * kb_values.h - element access by dtype and the data fills of kmux-bench.
 *
 * Fills are deterministic functions of (seed, element index): the same problem gets the same
 * data on every machine, so records of several machines compare like with like.
 */
#ifndef KB_VALUES_H
#define KB_VALUES_H

#include <stddef.h>
#include <stdint.h>
#include "kmux.h"

/** Bytes of one element (1 for the fp8 formats and i8). */
size_t kb_dtype_size(kmux_dtype t);
/** 1 for i8 and i32. */
int kb_dtype_is_int(kmux_dtype t);
/** Unit roundoff 2^-(p) of a floating type with p fraction bits (f32 2^-24 ... e5m2 2^-3), the
 *  largest relative error of one round-to-nearest; 0 for integer types. */
double kb_dtype_unit_roundoff(kmux_dtype t);
/** Largest r such that every integer in [-r, r] is exact in t, capped at 16 (fills use small
 *  integers only). */
int kb_dtype_int_range(kmux_dtype t);

/** Element i of buf, decoded exactly to double. */
double kb_get(const void *buf, kmux_dtype t, int64_t i);
/** Stores v as element i (rounded to nearest even for narrow floats, saturating for fp8,
 *  truncated toward zero and clamped for integers). */
void kb_set(void *buf, kmux_dtype t, int64_t i, double v);

/** Integer fill for verification: element i is 0 with probability 1 - density, else a uniform
 *  nonzero integer in [-range, -1] u [1, range] (density 1: no zeros at all, so that a problem
 *  that needs no sparsity - a short reduction - gets none). */
void kb_fill_int(void *buf, kmux_dtype t, int64_t n, int range, double density, uint64_t seed);

/** Random real fill for timing: uniform in [-1, 1) rounded to t; integers in [-8, 8] for i8. */
void kb_fill_real(void *buf, kmux_dtype t, int64_t n, uint64_t seed);

/** Fills n elements with a bit pattern that is NaN in every float dtype (all bits set) and -1
 *  in integer types: marks outputs that a backend never wrote. */
void kb_fill_unwritten(void *buf, kmux_dtype t, int64_t n);

/** splitmix64 of x: the hash the fills are made of. */
uint64_t kb_hash64(uint64_t x);

#endif
