/*
 * hip_rocblas.h - rocBLAS, opened at run time when the host has it ($KMUX_ROCBLAS_LIBRARY, else
 * librocblas.so.5 of ROCm 7, .so.4 of ROCm 6, .so.3 / .so.0 of ROCm 5, looked for first in the
 * HIP runtime's folder: hip_matmul.c), as the implementation "rocblas_gemm_ex"
 * of matmul plans: rocblas_gemm_strided_batched_ex, no epilogue, no scales. Never a requirement:
 * without it a plan is refused with the reason. The ABI values below are those of rocBLAS 2.x
 * to 4.x (rocblas-types.h; checked against the toolchain's rocBLAS 2.47 headers by test_hip_abi).
 */
#ifndef KMUX_HIP_ROCBLAS_H
#define KMUX_HIP_ROCBLAS_H

#include <pthread.h>
#include <stdint.h>

#include "hip_lib.h"
#include "kmux.h"

enum {
    /* rocblas_status (rocblas-types.h) */
    KMUX_ROCBLAS_SUCCESS = 0,
    KMUX_ROCBLAS_INVALID_HANDLE = 1,
    KMUX_ROCBLAS_NOT_IMPLEMENTED = 2,
    KMUX_ROCBLAS_INVALID_POINTER = 3,
    KMUX_ROCBLAS_INVALID_SIZE = 4,
    KMUX_ROCBLAS_MEMORY_ERROR = 5,
    KMUX_ROCBLAS_INTERNAL_ERROR = 6,
    KMUX_ROCBLAS_OP_N = 111, /* rocblas_operation_none */
    KMUX_ROCBLAS_OP_T = 112, /* rocblas_operation_transpose */
    KMUX_ROCBLAS_F16 = 150,  /* rocblas_datatype_f16_r */
    KMUX_ROCBLAS_F32 = 151,
    KMUX_ROCBLAS_F64 = 152,
    KMUX_ROCBLAS_BF16 = 168,
    KMUX_ROCBLAS_ALGO_STANDARD = 0,
    KMUX_ROCBLAS_ATOMICS_NOT_ALLOWED = 0, /* rocblas_atomics_mode: bitwise reproducible */
    KMUX_ROCBLAS_ATOMICS_ALLOWED = 1      /* rocBLAS's default */
};

/** The name of a rocblas_status ("rocblas_status_internal_error"), as rocblas_status_to_string;
 *  "rocblas_status_?" for a value the enum above does not list. */
static inline const char *kmux_rocblas_status_name(int s) {
    static const char *const names[] = {
        [KMUX_ROCBLAS_SUCCESS] = "rocblas_status_success",
        [KMUX_ROCBLAS_INVALID_HANDLE] = "rocblas_status_invalid_handle",
        [KMUX_ROCBLAS_NOT_IMPLEMENTED] = "rocblas_status_not_implemented",
        [KMUX_ROCBLAS_INVALID_POINTER] = "rocblas_status_invalid_pointer",
        [KMUX_ROCBLAS_INVALID_SIZE] = "rocblas_status_invalid_size",
        [KMUX_ROCBLAS_MEMORY_ERROR] = "rocblas_status_memory_error",
        [KMUX_ROCBLAS_INTERNAL_ERROR] = "rocblas_status_internal_error"};
    return s >= 0 && s < (int)(sizeof names / sizeof names[0]) ? names[s] : "rocblas_status_?";
}

typedef struct kmux_hip_rocblas {
    kmux_hip_lib base; /**< opened once; its version string: rocblas_get_version_string */
    int (*create_handle)(void **handle);
    int (*destroy_handle)(void *handle);
    int (*set_stream)(void *handle, void *stream);
    int (*get_version_string)(char *buf, size_t len);
    int (*set_atomics_mode)(void *handle, int mode); /**< NULL: no deterministic plans */
    int (*gemm_strided_batched_ex)(void *handle, int transa, int transb, int32_t m, int32_t n,
                                   int32_t k, const void *alpha, const void *a, int a_type,
                                   int32_t lda, int64_t stride_a, const void *b, int b_type,
                                   int32_t ldb, int64_t stride_b, const void *beta, const void *c,
                                   int c_type, int32_t ldc, int64_t stride_c, void *d, int d_type,
                                   int32_t ldd, int64_t stride_d, int32_t batch_count,
                                   int compute_type, int algo, int32_t solution_index,
                                   uint32_t flags);
} kmux_hip_rocblas;

#endif
