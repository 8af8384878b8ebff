/*
 * kb_tensor.h - indexing and sub-tensor gathers used by sampled verification: the oracle runs on
 * a slice (some rows and columns of a GEMM, some images and channels of a convolution) gathered
 * from the very inputs the backend used.
 */
#ifndef KB_TENSOR_H
#define KB_TENSOR_H

#include <stddef.h>
#include <stdint.h>
#include "kmux.h"

/** Offset in elements of (n, c, h, w) in a tensor of logical dims d = {N, C, H, W}: NCHW or NHWC
 *  (filters: KCRS is "NCHW" with d = {K, C/g, R, S}, KRSC is "NHWC"). */
int64_t kb_off4(kmux_layout l, const int64_t d[4], int64_t n, int64_t c, int64_t h, int64_t w);

/** Copies images ni[0..nn) and channels ci[0..nc) of src (dims d, layout l, esize-byte elements)
 *  into dst, a dense tensor of dims {nn, nc, d[2], d[3]} in the same layout. */
void kb_gather4(const void *src, size_t esize, kmux_layout l, const int64_t d[4], const int64_t *ni,
                int64_t nn, const int64_t *ci, int64_t nc, void *dst);

/** Offset of element (i, j) of op(X) for a matrix stored in `order` with leading dimension ld
 *  (op = transpose when trans == KMUX_TRANS). */
int64_t kb_mat_off(kmux_order order, kmux_transpose trans, int64_t ld, int64_t i, int64_t j);

/** Copies rows ri[0..nr) of op(X) (all `cols` columns) into dst, dense row-major nr x cols. */
void kb_gather_rows(const void *src, size_t esize, kmux_order order, kmux_transpose trans,
                    int64_t ld, const int64_t *ri, int64_t nr, int64_t cols, void *dst);

/** Copies columns cj[0..nc) of op(X) (all `rows` rows) into dst, dense row-major rows x nc. */
void kb_gather_cols(const void *src, size_t esize, kmux_order order, kmux_transpose trans,
                    int64_t ld, int64_t rows, const int64_t *cj, int64_t nc, void *dst);

/** Chooses min(n, count) distinct sorted indices of [0, n): all of them when count >= n, else the
 *  first and last few (where blocking tails live) and evenly spread ones between. Writes them to
 *  out (capacity >= min(n, count)) and returns how many. */
int64_t kb_pick_indices(int64_t n, int64_t count, int64_t *out);

#endif
