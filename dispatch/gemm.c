/*
 * gemm.c - kmux_gemm_ex and kmux_gemm_strided_batched_ex: validate once, then run a cached
 * matmul plan of the stream's device.
 */
#include "validate.h"

/* Both entry points: the (strided batched) GEMM as a matmul description, validated once, run as
 * a cached matmul plan of the stream's device. fn names the entry point in messages. */
static kmux_status gemm_run(const char *fn, kmux_stream *stream, kmux_order order,
                            kmux_transpose transa, kmux_transpose transb, int64_t m, int64_t n,
                            int64_t k, const void *alpha, const void *A, kmux_dtype a_type,
                            int64_t lda, int64_t stride_a, const void *B, kmux_dtype b_type,
                            int64_t ldb, int64_t stride_b, const void *beta, void *C,
                            kmux_dtype c_type, int64_t ldc, int64_t stride_c, int64_t batch_count,
                            kmux_compute_type compute_type) {
    kmux_clear_error();
    kmux_matmul_desc d = KMUX_MATMUL_DESC_INIT;
    d.order = order;
    d.transa = transa;
    d.transb = transb;
    d.m = m;
    d.n = n;
    d.k = k;
    d.a_type = a_type;
    d.b_type = b_type;
    d.c_type = c_type;
    d.lda = lda;
    d.ldb = ldb;
    d.ldc = ldc;
    d.stride_a = stride_a;
    d.stride_b = stride_b;
    d.stride_c = stride_c;
    d.batch_count = batch_count;
    d.compute_type = compute_type;
    KMUX_CHECK_HANDLE(fn, "stream", stream, KMUX_HANDLE_STREAM);
    kmux_status st = kmux_validate_matmul_desc(fn, &d);
    if (st != KMUX_OK) return st;
    kmux_matmul_args args = KMUX_MATMUL_ARGS_INIT;
    args.alpha = alpha;
    args.beta = beta;
    args.A = A;
    args.B = B;
    args.C = C;
    st = kmux_validate_matmul_args(fn, &d, &args);
    if (st != KMUX_OK) return st;
    if (d.m == 0 || d.n == 0 || d.batch_count == 0) return KMUX_OK; /* as the reference BLAS */
    return kmux_matmul_run_cached(stream, &d, &args);
}

kmux_status kmux_gemm_ex(kmux_stream *stream, kmux_order order, kmux_transpose transa,
                         kmux_transpose transb, int64_t m, int64_t n, int64_t k, const void *alpha,
                         const void *A, kmux_dtype a_type, int64_t lda, const void *B,
                         kmux_dtype b_type, int64_t ldb, const void *beta, void *C,
                         kmux_dtype c_type, int64_t ldc, kmux_compute_type compute_type) {
    /* one matrix: batch_count 1 and strides 0, as in KMUX_MATMUL_DESC_INIT */
    return gemm_run("kmux_gemm_ex", stream, order, transa, transb, m, n, k, alpha, A, a_type, lda,
                    0, B, b_type, ldb, 0, beta, C, c_type, ldc, 0, 1, compute_type);
}

kmux_status kmux_gemm_strided_batched_ex(kmux_stream *stream, kmux_order order,
                                         kmux_transpose transa, kmux_transpose transb, int64_t m,
                                         int64_t n, int64_t k, const void *alpha, const void *A,
                                         kmux_dtype a_type, int64_t lda, int64_t stride_a,
                                         const void *B, kmux_dtype b_type, int64_t ldb,
                                         int64_t stride_b, const void *beta, void *C,
                                         kmux_dtype c_type, int64_t ldc, int64_t stride_c,
                                         int64_t batch_count, kmux_compute_type compute_type) {
    return gemm_run("kmux_gemm_strided_batched_ex", stream, order, transa, transb, m, n, k, alpha,
                    A, a_type, lda, stride_a, B, b_type, ldb, stride_b, beta, C, c_type, ldc,
                    stride_c, batch_count, compute_type);
}
