/*
 * ref_dtype.h - exact decoding of every kmux dtype to double and encoding from double with one
 * round-to-nearest-even rounding (the reference backend's number conversions).
 *
 * Encoding rules (those of kmux_cast in kmux.h):
 * - A value is rounded ONCE, directly from the double, to the target precision with ties to
 *   even (IEEE 754-2019 4.3.1), subnormals kept (never flushed).
 * - Overflow is decided as IEEE 754-2019 7.4: the value rounded with an unbounded exponent range
 *   exceeds the largest finite value (so values that round to the largest finite value stay
 *   finite, e.g. 464 -> 448 in e4m3). On overflow, and for an infinite input: saturate == 0 gives
 *   Inf (f64, f32, f16, bf16, e5m2), NaN 0x7F/0xFF (e4m3) or NaN 0x80 (FNUZ); saturate == 1 gives
 *   the largest finite value with the sign of the input.
 * - NaN stays NaN: a quiet NaN with the input's sign and the leading bits of its payload where
 *   the format has them (f32 0x7FC00000, f16 0x7E00, bf16 0x7FC0, e5m2 0x7E for the default
 *   NaN; as F16C and kmux_cast), S.1111.111 in e4m3, 0x80 in the FNUZ formats. These are the
 *   rules of the shared codec (dispatch/common/kmux_dtype_codec.h), which implements them.
 * - -0 stays -0, except in the FNUZ formats (no -0), where every zero result is +0 (0x00).
 * - Integers (i8, i32): rounded to nearest even, clamped to the type's range, NaN -> 0. (The
 *   I32 GEMM path wraps instead; see ref_gemm.c.)
 */
#ifndef KMUX_REF_DTYPE_H
#define KMUX_REF_DTYPE_H

#include <stdint.h>
#include "kmux.h"

/** Element idx (in elements) of the array p of dtype t, decoded exactly. Any kmux_dtype. */
double kmux_ref_load(const void *p, kmux_dtype t, int64_t idx);

/** Rounds v to dtype t with the rules above and stores it as element idx of p. */
void kmux_ref_store(void *p, kmux_dtype t, int64_t idx, double v, int saturate);

/** Bit pattern of v rounded to a floating dtype of at most 32 bits (f32, f16, bf16, fp8). */
uint32_t kmux_ref_encode_bits(double v, kmux_dtype t, int saturate);

/** Exact value of the bit pattern bits of a floating dtype of at most 32 bits. */
double kmux_ref_decode_bits(uint32_t bits, kmux_dtype t);

/** Largest finite value of a floating dtype (DBL_MAX for f64); 0 for integer dtypes. */
double kmux_ref_max_finite(kmux_dtype t);

/** 1 when t is a floating-point dtype, 0 for i8 / i32 (and values that are no dtype). */
int kmux_ref_is_float(kmux_dtype t);

#endif
