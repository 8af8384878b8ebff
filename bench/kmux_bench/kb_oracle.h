/*
 * kb_oracle.h - expected results from the ref backend (f64 accumulation, exact decoding).
 *
 * Small problems are computed whole. Above a budget of operations the oracle computes a slice
 * of the same problem from the same inputs and the record says "sampled": for a GEMM a subset
 * of rows of op(A) times a subset of columns of op(B) (first and last batch); for a convolution
 * 1-2 images (FWD, BWD_D) and, when still too large, a subset of output channels (FWD, dw) or
 * input channels (BWD_D, dw; groups == 1).
 */
#ifndef KB_ORACLE_H
#define KB_ORACLE_H

#include "kb_problem.h"
#include "kb_verify.h"

/** The three tensors of a problem: 0 = A / x, 1 = B / w, 2 = C / y. */
typedef struct kb_tensors {
    int64_t count[3]; /**< elements */
    kmux_dtype dt[3];
    int out; /**< which one the problem writes (2; 0 for BWD_D, 1 for BWD_W) */
} kb_tensors;

/** Sizes, dtypes and output of p's tensors. */
void kb_problem_tensors(const kb_problem *p, kb_tensors *t);

/** Computes the oracle of p on `ref` (a device whose memory is host memory) from the host
 *  tensors `host` (the inputs of p's direction filled; the output is not read). Above
 *  budget_flops operations, or 16 Mi output elements, a slice is computed. On failure o->ok = 0
 *  and o->message says why. */
void kb_oracle_compute(kmux_device *ref, kmux_stream *stream, const kb_problem *p,
                       void *const host[3], double budget_flops, kb_oracle *o);

#endif
