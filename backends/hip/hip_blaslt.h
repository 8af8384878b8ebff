/*
 * hip_blaslt.h - hipBLASLt, opened at run time when the host has it ($KMUX_HIPBLASLT_LIBRARY,
 * else libhipblaslt.so.1 of ROCm 7, .so.0 of ROCm 5.7 - 6.x, looked for first in the HIP
 * runtime's folder: hip_blaslt.c), as the implementations "hipblaslt:algo=<i>" of matmul plans
 * (hipblasLtMatmul with the candidates of hipblasLtMatmulAlgoGetHeuristic). Never a
 * requirement: without it a plan offers rocBLAS and kmux's own kernel.
 *
 * The ABI values below are those of hipblaslt.h and hipblas-common.h (ROCm 6.0 - 7.x), and of
 * HIP's library_types.h for hipDataType (checked against the toolchain's HIP headers by
 * test_hip_abi): hipBLASLt >= 0.6 takes hipDataType and hipblasComputeType_t, the types shared
 * with hipBLAS. (hipBLASLt 0.5 of ROCm 5.7 had its own hipblasltDatatype_t and
 * hipblasLtComputeType_t: its library is refused by the version check, hipblasLtGetVersion
 * < 600.)
 */
#ifndef KMUX_HIP_BLASLT_H
#define KMUX_HIP_BLASLT_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

#include "hip_lib.h"
#include "kmux.h"

enum {
    /* hipblasStatus_t (hipblas-common.h) */
    KMUX_HIPBLAS_SUCCESS = 0,
    KMUX_HIPBLAS_NOT_INITIALIZED = 1,
    KMUX_HIPBLAS_ALLOC_FAILED = 2,
    KMUX_HIPBLAS_INVALID_VALUE = 3,
    KMUX_HIPBLAS_MAPPING_ERROR = 4,
    KMUX_HIPBLAS_EXECUTION_FAILED = 5,
    KMUX_HIPBLAS_INTERNAL_ERROR = 6,
    KMUX_HIPBLAS_NOT_SUPPORTED = 7,
    KMUX_HIPBLAS_ARCH_MISMATCH = 8,
    KMUX_HIPBLAS_HANDLE_IS_NULLPTR = 9,
    KMUX_HIPBLAS_INVALID_ENUM = 10,
    KMUX_HIPBLAS_UNKNOWN = 11,
    /* hipblasOperation_t */
    KMUX_HIPBLAS_OP_N = 111,
    KMUX_HIPBLAS_OP_T = 112,
    /* hipDataType (library_types.h) */
    KMUX_HIP_R_32F = 0,
    KMUX_HIP_R_64F = 1,
    KMUX_HIP_R_16F = 2,
    KMUX_HIP_R_8I = 3,
    KMUX_HIP_R_32I = 10,
    KMUX_HIP_R_16BF = 14,
    KMUX_HIP_R_8F_E4M3 = 28,
    KMUX_HIP_R_8F_E5M2 = 29,
    KMUX_HIP_R_8F_E4M3_FNUZ = 1000,
    KMUX_HIP_R_8F_E5M2_FNUZ = 1001,
    /* hipblasComputeType_t */
    KMUX_HIPBLAS_COMPUTE_32F = 2,
    KMUX_HIPBLAS_COMPUTE_32F_FAST_16BF = 5,
    KMUX_HIPBLAS_COMPUTE_32F_FAST_TF32 = 6, /* xf32 on gfx942 */
    KMUX_HIPBLAS_COMPUTE_32I = 9,
    /* hipblasLtEpilogue_t */
    KMUX_HIPBLASLT_EPILOGUE_DEFAULT = 1,
    KMUX_HIPBLASLT_EPILOGUE_RELU = 2,
    KMUX_HIPBLASLT_EPILOGUE_BIAS = 4,
    KMUX_HIPBLASLT_EPILOGUE_RELU_BIAS = 6,
    KMUX_HIPBLASLT_EPILOGUE_GELU = 32,
    KMUX_HIPBLASLT_EPILOGUE_GELU_BIAS = 36,
    /* hipblasLtMatmulDescAttributes_t */
    KMUX_HIPBLASLT_DESC_TRANSA = 0,         /* int32_t */
    KMUX_HIPBLASLT_DESC_TRANSB = 1,         /* int32_t */
    KMUX_HIPBLASLT_DESC_EPILOGUE = 2,       /* uint32_t */
    KMUX_HIPBLASLT_DESC_BIAS_POINTER = 3,   /* void* */
    KMUX_HIPBLASLT_DESC_BIAS_DATA_TYPE = 4, /* int32_t (hipDataType) */
    KMUX_HIPBLASLT_DESC_A_SCALE_POINTER = 5,
    KMUX_HIPBLASLT_DESC_B_SCALE_POINTER = 6,
    KMUX_HIPBLASLT_DESC_D_SCALE_POINTER = 8,
    /* hipblasLtMatrixLayoutAttribute_t */
    KMUX_HIPBLASLT_LAYOUT_BATCH_COUNT = 0,          /* int32_t */
    KMUX_HIPBLASLT_LAYOUT_STRIDED_BATCH_OFFSET = 1, /* int64_t */
    /* hipblasLtMatmulPreferenceAttributes_t */
    KMUX_HIPBLASLT_PREF_MAX_WORKSPACE_BYTES = 1 /* uint64_t */
};

/** The name of a hipblasStatus_t ("HIPBLAS_STATUS_INTERNAL_ERROR"), as hipblasStatusToString;
 *  "HIPBLAS_STATUS_?" for a value the enum above does not list. */
static inline const char *kmux_hipblas_status_name(int s) {
    static const char *const names[] = {
        [KMUX_HIPBLAS_SUCCESS] = "HIPBLAS_STATUS_SUCCESS",
        [KMUX_HIPBLAS_NOT_INITIALIZED] = "HIPBLAS_STATUS_NOT_INITIALIZED",
        [KMUX_HIPBLAS_ALLOC_FAILED] = "HIPBLAS_STATUS_ALLOC_FAILED",
        [KMUX_HIPBLAS_INVALID_VALUE] = "HIPBLAS_STATUS_INVALID_VALUE",
        [KMUX_HIPBLAS_MAPPING_ERROR] = "HIPBLAS_STATUS_MAPPING_ERROR",
        [KMUX_HIPBLAS_EXECUTION_FAILED] = "HIPBLAS_STATUS_EXECUTION_FAILED",
        [KMUX_HIPBLAS_INTERNAL_ERROR] = "HIPBLAS_STATUS_INTERNAL_ERROR",
        [KMUX_HIPBLAS_NOT_SUPPORTED] = "HIPBLAS_STATUS_NOT_SUPPORTED",
        [KMUX_HIPBLAS_ARCH_MISMATCH] = "HIPBLAS_STATUS_ARCH_MISMATCH",
        [KMUX_HIPBLAS_HANDLE_IS_NULLPTR] = "HIPBLAS_STATUS_HANDLE_IS_NULLPTR",
        [KMUX_HIPBLAS_INVALID_ENUM] = "HIPBLAS_STATUS_INVALID_ENUM",
        [KMUX_HIPBLAS_UNKNOWN] = "HIPBLAS_STATUS_UNKNOWN"};
    return s >= 0 && s < (int)(sizeof names / sizeof names[0]) ? names[s] : "HIPBLAS_STATUS_?";
}

/** hipblasLtMatmulAlgo_t (AMD platform). */
typedef struct kmux_hipblaslt_algo {
    uint8_t data[16];
    size_t max_workspace_bytes;
} kmux_hipblaslt_algo;

/** hipblasLtMatmulHeuristicResult_t (AMD platform). */
typedef struct kmux_hipblaslt_heuristic {
    kmux_hipblaslt_algo algo;
    size_t workspace_size; /**< workspace the algorithm needs, bytes */
    int state;             /**< hipblasStatus_t: the other fields are valid when SUCCESS */
    float waves_count;
    int reserved[4];
} kmux_hipblaslt_heuristic;

/** hipBLASLt's functions and its per-device handles, in the backend state. */
typedef struct kmux_hip_blaslt {
    kmux_hip_lib base; /**< opened once; version "hipBLASLt 1.0.0" (hipblasLtGetVersion: major *
                            100000 + minor * 100 + patch), known with the first handle */
    void **handles;    /**< one hipblasLtHandle_t per device, created on first use */
    int (*create)(void **handle);
    int (*destroy)(void *handle);
    int (*get_version)(void *handle, int *version);
    int (*layout_create)(void **layout, int type, uint64_t rows, uint64_t cols, int64_t ld);
    int (*layout_destroy)(void *layout);
    int (*layout_set)(void *layout, int attr, const void *buf, size_t size);
    int (*desc_create)(void **desc, int compute_type, int scale_type);
    int (*desc_destroy)(void *desc);
    int (*desc_set)(void *desc, int attr, const void *buf, size_t size);
    int (*pref_create)(void **pref);
    int (*pref_destroy)(void *pref);
    int (*pref_set)(void *pref, int attr, const void *buf, size_t size);
    int (*heuristic)(void *handle, void *desc, void *a, void *b, void *c, void *d, void *pref,
                     int requested, kmux_hipblaslt_heuristic *results, int *returned);
    int (*matmul)(void *handle, void *desc, const void *alpha, const void *A, void *a_layout,
                  const void *B, void *b_layout, const void *beta, const void *C, void *c_layout,
                  void *D, void *d_layout, const kmux_hipblaslt_algo *algo, void *workspace,
                  size_t workspace_bytes, void *stream);
} kmux_hip_blaslt;

/** Most hipBLASLt candidates a plan keeps (the heuristic's first ones, fastest estimate first). */
#define KMUX_HIP_BLASLT_MAX_ALGOS 8
/** Workspace a hipBLASLt algorithm may use when prefs leave it to the backend (32 MiB, the
 *  cuBLASLt default of the CUDA plugin on sm_90). */
#define KMUX_HIP_BLASLT_DEFAULT_WORKSPACE ((size_t)32 << 20)

/** The hipBLASLt half of a matmul plan: descriptors (created once, read-only afterwards) and
 *  the heuristic's candidates. */
typedef struct kmux_hip_blaslt_plan {
    int n_algos;
    kmux_hipblaslt_heuristic algos[KMUX_HIP_BLASLT_MAX_ALGOS];
    void *desc, *a, *b, *c; /**< matmul descriptor and layouts of A', B', C' = D' */
    int fp8; /**< fp8 inputs: the call's a_scale / b_scale / d_scale go to hipBLASLt */
    kmux_compute_type effective;
    char names[KMUX_HIP_BLASLT_MAX_ALGOS][48]; /**< "hipblaslt:algo=0,ws=1048576" */
} kmux_hip_blaslt_plan;

#endif
