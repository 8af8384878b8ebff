/*
 * kmux_family.h - what the op families (kmux_eltwise_*, kmux_optimizer_*, kmux_softmax_*) share
 * as facts: the dtypes their tensors may have. Read by the core's validation, the caps of every
 * backend and the family headers; compiles as C, C++ and device code.
 */
#ifndef KMUX_FAMILY_H
#define KMUX_FAMILY_H

#include "kmux.h"

/** The dtypes of an op family's tensors (bit 1 << kmux_dtype): f32, f16, bf16, computed in f32. */
#define KMUX_FAMILY_DTYPES ((1u << KMUX_F32) | (1u << KMUX_F16) | (1u << KMUX_BF16))

/** 1 when t is one of KMUX_FAMILY_DTYPES. */
static inline int kmux_family_dtype(int t) {
    return t > 0 && t < 32 && ((KMUX_FAMILY_DTYPES >> t) & 1u);
}

#endif
