/*
 * validate.h - argument validation, done once in the core before any backend runs.
 *
 * Every check failure sets kmux_last_error to "<fn>: <argument> = <value> <why>" and returns
 * KMUX_ERR_INVALID_ARGUMENT (or KMUX_ERR_UNSUPPORTED where the request is valid but no backend of
 * kmux can do it). `fn` is the public function name used in the message.
 */
#ifndef KMUX_VALIDATE_H
#define KMUX_VALIDATE_H

#include "internal.h"
#include "kmux_dtype_desc.h"

/** Shapes, leading dimensions, strides, enums, overflow, dtype table, epilogue of a matmul. */
kmux_status kmux_validate_matmul_desc(const char *fn, const kmux_matmul_desc *d);
/** Pointers of one matmul execution against its (valid) descriptor. */
kmux_status kmux_validate_matmul_args(const char *fn, const kmux_matmul_desc *d,
                                      const kmux_matmul_args *a);
/** A convolution description; on success *p and *q (may be NULL) receive the output size. */
kmux_status kmux_validate_conv_desc(const char *fn, const kmux_conv2d_desc *d, int64_t *p,
                                    int64_t *q);
kmux_status kmux_validate_conv_args(const char *fn, const kmux_conv2d_desc *d,
                                    const kmux_conv2d_args *a);
/** A forward convolution's epilogue (dispatch/conv_epilogue.c): the flags and bias_type of a
 *  descriptor (called by kmux_validate_conv_desc), the bias and aux pointers of an execution
 *  (by kmux_validate_conv_args), and the bytes of bias and aux (0 without BIAS / RELU_AUX). */
kmux_status kmux_conv_epilogue_check_desc(const char *fn, const kmux_conv2d_desc *d);
kmux_status kmux_conv_epilogue_check_args(const char *fn, const kmux_conv2d_desc *d,
                                          const kmux_conv2d_args *a);
size_t kmux_conv_bias_bytes(const kmux_conv2d_desc *d);
size_t kmux_conv_aux_bytes(const kmux_conv2d_desc *d);
/** 1 when t is a known kmux_dtype (a row of THE dtype table; kmux_dtype_desc.h also gives
 *  kmux_dtype_is_fp8, kmux_dtype_is_float, kmux_dtype_is_fnuz and the sizes). */
static inline int kmux_dtype_valid(kmux_dtype t) {
    return kmux_dtype_is_valid(t);
}
/** n * elem_size fits in the address space: returns 1 and the byte count, else 0. */
int kmux_bytes_of(int64_t n, kmux_dtype t, size_t *bytes);
/** 1 when the byte ranges [a, a + na) and [b, b + nb) share a byte (an output that overlaps an
 *  input: kmux_cast, kmux_conv2d_execute). */
int kmux_spans_overlap(const void *a, size_t na, const void *b, size_t nb);
/** One tensor of an op family's execution: its field name in the args struct ("x"), pointer and
 *  bytes, whether the call writes it, and whether it may not be NULL. */
typedef struct kmux_exec_tensor {
    const char *name;
    const void *p;
    size_t bytes;
    int written, needed;
} kmux_exec_tensor;
/** Elements spanned by a valid matmul's A, B and C, batches included: (batch_count - 1) *
 *  stride + (outer - 1) * ld + inner for the storage order; 0 for an empty operand. The one
 *  definition the capability limits, the workspace overlap check and tuning read. */
void kmux_matmul_operand_spans(const kmux_matmul_desc *d, int64_t el[3]);
/** Byte extents of a valid matmul's A, B, C (kmux_matmul_operand_spans) and bias (0 without the
 *  BIAS epilogue). */
void kmux_matmul_operand_bytes(const kmux_matmul_desc *d, size_t bytes[4]);
/** The name of the lowest kmux_epilogue flag set in flags ("RELU_AUX"); "unknown" for none. */
const char *kmux_epilogue_flag_name(unsigned flags);
/** 1 when a valid matmul's aux is a bit mask (RELU_AUX, DRELU), 0 when it holds elements of
 *  aux_type. */
int kmux_matmul_aux_is_mask(const kmux_matmul_desc *d);
/** Bytes spanned by a valid matmul's aux (kmux_epilogue's layout; batches included). */
size_t kmux_matmul_aux_bytes(const kmux_matmul_desc *d);
/** Bytes of a valid convolution's x, w and y. */
void kmux_conv_tensor_bytes(const kmux_conv2d_desc *d, size_t bytes[3]);
/** The workspace implementation impl of plan needs (its plan_info; 0 when the core runs the
 *  plan itself). */
size_t kmux_plan_workspace_need(const kmux_plan *plan, int impl);
/** The caller's workspace of an execute of plan (nothing to check unless the plan was made with
 *  prefs.caller_workspace): KMUX_ERR_WORKSPACE when it is NULL or smaller than the current
 *  implementation needs, INVALID_ARGUMENT when it is not aligned (64 bytes on host devices, 256
 *  on GPUs) or overlaps one of the n operands; messages name the args fields and both sizes. */
kmux_status kmux_plan_check_workspace(const char *fn, const kmux_plan *plan, const void *ws,
                                      size_t ws_bytes, const kmux_exec_tensor *ops, int n);
/** The n tensors of one execution: each needed one not NULL ("<fn>: args-><name> is NULL
 *  (<why>)", why saying what needs it: "max forward needs it"), and no written one sharing a byte
 *  with another non-NULL one ("<fn>: args-><a> = <p> overlaps args-><b> = <p>"). KMUX_OK or
 *  KMUX_ERR_INVALID_ARGUMENT. */
kmux_status kmux_check_exec_tensors(const char *fn, const kmux_exec_tensor *t, int n,
                                    const char *why);
/** A dense shape of the binary and reduction families: ndims in [1, KMUX_MAX_NDIMS], every
 *  full[i] >= 0, every part[i] full[i] or 1, the element count within the address space in f32.
 *  Messages name "desc-><full_name>[i]" and "desc-><part_name>[i]". *elements: full's count. */
kmux_status kmux_validate_nd(const char *fn, int ndims, const int64_t *full, const char *full_name,
                             const int64_t *part, const char *part_name, int64_t *elements);

#endif
