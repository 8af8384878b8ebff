/*
 * hip_lib.h - what the HIP plugin keeps of each ROCm library it opens at run time (rocBLAS,
 * hipBLASLt, MIOpen): opened once per backend state under a lock, the handle or why not, and
 * the version the library reports. kmux_hip_lib_once (hip_runtime.c) is the one open-once path.
 */
#ifndef KMUX_HIP_LIB_H
#define KMUX_HIP_LIB_H

#include <pthread.h>

/** The first member of each library's table (kmux_hip_rocblas, kmux_hip_blaslt, kmux_hip_miopen).
 */
typedef struct kmux_hip_lib {
    pthread_mutex_t lock;
    int tried;        /**< the search ran */
    void *lib;        /**< the dlopen'ed library; NULL: not found or unusable (why) */
    char why[512];    /**< "hipBLASLt not found (KMUX_HIPBLASLT_LIBRARY not set; ...)" */
    char version[64]; /**< "rocBLAS 4.0.0", "MIOpen 3.4.0" ("" until known) */
} kmux_hip_lib;

/** The name of a rocblas_status ("rocblas_status_internal_error"), as rocblas_status_to_string,
 *  from rocblas-types.h; "rocblas_status_?" for a value it does not list. */
static inline const char *kmux_rocblas_status_name(int s) {
    static const char *const names[] = {"rocblas_status_success",
                                        "rocblas_status_invalid_handle",
                                        "rocblas_status_not_implemented",
                                        "rocblas_status_invalid_pointer",
                                        "rocblas_status_invalid_size",
                                        "rocblas_status_memory_error",
                                        "rocblas_status_internal_error",
                                        "rocblas_status_perf_degraded",
                                        "rocblas_status_size_query_mismatch",
                                        "rocblas_status_size_increased",
                                        "rocblas_status_size_unchanged",
                                        "rocblas_status_invalid_value",
                                        "rocblas_status_continue",
                                        "rocblas_status_check_numerics_fail",
                                        "rocblas_status_excluded_from_build",
                                        "rocblas_status_arch_mismatch"};
    return s >= 0 && s < (int)(sizeof names / sizeof names[0]) ? names[s] : "rocblas_status_?";
}

/** The name of a hipblasStatus_t ("HIPBLAS_STATUS_INTERNAL_ERROR"), as hipblasStatusToString,
 *  from hipblas-common.h; "HIPBLAS_STATUS_?" for a value it does not list. */
static inline const char *kmux_hipblas_status_name(int s) {
    static const char *const names[] = {
        "HIPBLAS_STATUS_SUCCESS",        "HIPBLAS_STATUS_NOT_INITIALIZED",
        "HIPBLAS_STATUS_ALLOC_FAILED",   "HIPBLAS_STATUS_INVALID_VALUE",
        "HIPBLAS_STATUS_MAPPING_ERROR",  "HIPBLAS_STATUS_EXECUTION_FAILED",
        "HIPBLAS_STATUS_INTERNAL_ERROR", "HIPBLAS_STATUS_NOT_SUPPORTED",
        "HIPBLAS_STATUS_ARCH_MISMATCH",  "HIPBLAS_STATUS_HANDLE_IS_NULLPTR",
        "HIPBLAS_STATUS_INVALID_ENUM",   "HIPBLAS_STATUS_UNKNOWN"};
    return s >= 0 && s < (int)(sizeof names / sizeof names[0]) ? names[s] : "HIPBLAS_STATUS_?";
}

#endif
