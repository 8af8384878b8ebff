/*
 * kmux_common.h - helpers shared by the core and every backend plugin (static library
 * kmux_common, linked into libkmux and into each plugin; hidden, never exported).
 *
 * Plugins do not link libkmux, so they cannot call its kmux_dtype_name & co: these are the one
 * implementation behind those public functions and behind every plugin's messages.
 */
#ifndef KMUX_COMMON_H
#define KMUX_COMMON_H

#include "kmux.h"
#include "kmux_sys_alloc.h" /* every host allocation of the core and the plugins goes through it */

/** Name of a dtype ("f32", "bf16", "e4m3", "e4m3fnuz", ...); "?" when unknown. Static storage.
 *  (The implementation of kmux_dtype_name.) */
const char *kmux_common_dtype_name(kmux_dtype t);

/** Size of one element in bytes; 0 for an unknown dtype. (The implementation of
 *  kmux_dtype_size.) */
size_t kmux_common_dtype_size(kmux_dtype t);

/** Name of a compute type ("f32", "f32_fast_tf32", ...); "?" when unknown. Static storage.
 *  (The implementation of kmux_compute_type_name.) */
const char *kmux_common_compute_type_name(kmux_compute_type t);

/** Name of a status ("KMUX_ERR_INVALID_ARGUMENT"); "KMUX_STATUS_UNKNOWN" for a value that is
 *  not a kmux_status. Static storage. (The implementation of kmux_status_str.) */
const char *kmux_common_status_str(kmux_status s);

/** The extent of a filter of r taps with dilation along one axis, (r - 1) * dilation + 1: the
 *  input rows (columns) one output pixel reads. Taps of neighbouring outputs never overlap where
 *  the stride is at least this. For a validated description (no overflow). */
static inline int64_t kmux_conv2d_extent(int64_t r, int64_t dilation) {
    return (r - 1) * dilation + 1;
}

/** Output size along one axis of a 2-D convolution, with kmux.h's formula (dilation 1 = dense):
 *    (in + pad_lo + pad_hi - ((r - 1) * dilation + 1)) / stride + 1
 *  P = kmux_conv2d_out_dim(h, pad_top, pad_bottom, r, dilation_h, stride_h), Q likewise from
 *  (w, pad_left, pad_right, s, dilation_w, stride_w). For a description the core has validated
 *  (kmux_validate_conv_desc checks that nothing overflows and that the result is >= 1); it does
 *  no check of its own. Inline, so that the GPU kernels' host code (kernels/gpu, compiled by nvcc,
 *  the HIP toolchain and as emulated C++) uses it without linking kmux_common. */
static inline int64_t kmux_conv2d_out_dim(int64_t in, int64_t pad_lo, int64_t pad_hi, int64_t r,
                                          int64_t dilation, int64_t stride) {
    return (in + pad_lo + pad_hi - kmux_conv2d_extent(r, dilation)) / stride + 1;
}

/** The low 32 bits of u as a two's complement int32: integer BLAS's wrap-around of an s32 result
 *  (i8 x i8 -> i32 GEMMs), without C's implementation-defined conversion of out-of-range values. */
static inline int32_t kmux_common_wrap_i32(uint64_t u) {
    uint32_t w = (uint32_t)u;
    if (w <= (uint32_t)INT32_MAX) return (int32_t)w;
    return (int32_t)(w - 2147483648u) - INT32_MAX - 1;
}

/** 1 when `name` is one of the comma-separated entries of `list` (exact match, no spaces
 *  trimmed), or when list is NULL (no selection: everything is listed); else 0. */
int kmux_common_name_listed(const char *list, const char *name);

#endif
