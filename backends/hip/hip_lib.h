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

#endif
