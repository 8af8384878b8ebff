/*
 * fake_cublaslt_none.c - a fake cuBLASLt, "libcublasLt.so.13", a TEST TOOL that never computes:
 * it exports every cuBLASLt function the CUDA plugin resolves (KMUX_CUDA_LT_FUNCS and
 * KMUX_CUDA_LT_OPTIONAL_FUNCS of backends/cuda/cuda_libs.h) with <cublasLt.h>'s signatures, and
 * models a cuBLASLt that has no algorithm for any problem: handles are real small allocations,
 * descriptor init / set attribute succeed, cublasLtMatmulAlgoGetHeuristic answers
 * returnAlgoCount = 0 with CUBLAS_STATUS_NOT_SUPPORTED, cublasLtMatmul is
 * CUBLAS_STATUS_NOT_SUPPORTED. Put next to the fake driver (tests/fake_cuda), the plugin run
 * against it offers kmux's own kernels only (the fallback path); the computing fake is
 * fake_cublaslt.c.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cublasLt.h>

#define EXPORT __attribute__((visibility("default")))

#define KMUX_FAKE_LT_MAGIC 0x6b6d7578u /* "kmux" */

struct kmux_fake_lt_handle {
    uint32_t magic;
};

EXPORT cublasStatus_t cublasLtCreate(cublasLtHandle_t *lightHandle) {
    if (!lightHandle) return CUBLAS_STATUS_INVALID_VALUE;
    struct kmux_fake_lt_handle *h = malloc(sizeof *h);
    if (!h) return CUBLAS_STATUS_ALLOC_FAILED;
    h->magic = KMUX_FAKE_LT_MAGIC;
    *lightHandle = (cublasLtHandle_t)h;
    return CUBLAS_STATUS_SUCCESS;
}

EXPORT cublasStatus_t cublasLtDestroy(cublasLtHandle_t lightHandle) {
    struct kmux_fake_lt_handle *h = (struct kmux_fake_lt_handle *)lightHandle;
    if (!h || h->magic != KMUX_FAKE_LT_MAGIC) return CUBLAS_STATUS_NOT_INITIALIZED;
    h->magic = 0;
    free(h);
    return CUBLAS_STATUS_SUCCESS;
}

EXPORT const char *cublasLtGetStatusName(cublasStatus_t status) {
    switch (status) {
    case CUBLAS_STATUS_SUCCESS:
        return "CUBLAS_STATUS_SUCCESS";
    case CUBLAS_STATUS_NOT_INITIALIZED:
        return "CUBLAS_STATUS_NOT_INITIALIZED";
    case CUBLAS_STATUS_ALLOC_FAILED:
        return "CUBLAS_STATUS_ALLOC_FAILED";
    case CUBLAS_STATUS_INVALID_VALUE:
        return "CUBLAS_STATUS_INVALID_VALUE";
    case CUBLAS_STATUS_ARCH_MISMATCH:
        return "CUBLAS_STATUS_ARCH_MISMATCH";
    case CUBLAS_STATUS_MAPPING_ERROR:
        return "CUBLAS_STATUS_MAPPING_ERROR";
    case CUBLAS_STATUS_EXECUTION_FAILED:
        return "CUBLAS_STATUS_EXECUTION_FAILED";
    case CUBLAS_STATUS_INTERNAL_ERROR:
        return "CUBLAS_STATUS_INTERNAL_ERROR";
    case CUBLAS_STATUS_NOT_SUPPORTED:
        return "CUBLAS_STATUS_NOT_SUPPORTED";
    case CUBLAS_STATUS_LICENSE_ERROR:
        return "CUBLAS_STATUS_LICENSE_ERROR";
    default:
        return "CUBLAS_STATUS_UNKNOWN";
    }
}

EXPORT const char *cublasLtGetStatusString(cublasStatus_t status) {
    switch (status) {
    case CUBLAS_STATUS_SUCCESS:
        return "success (kmux fake cuBLASLt)";
    case CUBLAS_STATUS_NOT_SUPPORTED:
        return "operation not supported (kmux fake cuBLASLt: no algorithm for any problem)";
    case CUBLAS_STATUS_INVALID_VALUE:
        return "invalid value (kmux fake cuBLASLt)";
    default:
        return "error (kmux fake cuBLASLt)";
    }
}

/* The cuBLASLt these headers describe (13.x: CUBLAS_VERSION 130100 for 13.1.0). */
EXPORT size_t cublasLtGetVersion(void) {
    return CUBLAS_VERSION;
}

EXPORT cublasStatus_t cublasLtMatmul(cublasLtHandle_t lightHandle, cublasLtMatmulDesc_t computeDesc,
                                     const void *alpha, const void *A, cublasLtMatrixLayout_t Adesc,
                                     const void *B, cublasLtMatrixLayout_t Bdesc, const void *beta,
                                     const void *C, cublasLtMatrixLayout_t Cdesc, void *D,
                                     cublasLtMatrixLayout_t Ddesc, const cublasLtMatmulAlgo_t *algo,
                                     void *workspace, size_t workspaceSizeInBytes,
                                     cudaStream_t stream) {
    (void)computeDesc, (void)alpha, (void)A, (void)Adesc, (void)B, (void)Bdesc, (void)beta;
    (void)C, (void)Cdesc, (void)D, (void)Ddesc, (void)algo, (void)workspace;
    (void)workspaceSizeInBytes, (void)stream;
    if (!lightHandle) return CUBLAS_STATUS_NOT_INITIALIZED;
    return CUBLAS_STATUS_NOT_SUPPORTED;
}

/* No algorithm is ever handed out, so there is none to describe. */
EXPORT cublasStatus_t cublasLtMatmulAlgoCapGetAttribute(const cublasLtMatmulAlgo_t *algo,
                                                        cublasLtMatmulAlgoCapAttributes_t attr,
                                                        void *buf, size_t sizeInBytes,
                                                        size_t *sizeWritten) {
    (void)algo, (void)attr, (void)buf, (void)sizeInBytes;
    if (sizeWritten) *sizeWritten = 0;
    return CUBLAS_STATUS_NOT_SUPPORTED;
}

EXPORT cublasStatus_t cublasLtMatmulAlgoConfigGetAttribute(
    const cublasLtMatmulAlgo_t *algo, cublasLtMatmulAlgoConfigAttributes_t attr, void *buf,
    size_t sizeInBytes, size_t *sizeWritten) {
    (void)algo, (void)attr, (void)buf, (void)sizeInBytes;
    if (sizeWritten) *sizeWritten = 0;
    return CUBLAS_STATUS_NOT_SUPPORTED;
}

EXPORT cublasStatus_t cublasLtMatmulAlgoGetHeuristic(
    cublasLtHandle_t lightHandle, cublasLtMatmulDesc_t operationDesc, cublasLtMatrixLayout_t Adesc,
    cublasLtMatrixLayout_t Bdesc, cublasLtMatrixLayout_t Cdesc, cublasLtMatrixLayout_t Ddesc,
    cublasLtMatmulPreference_t preference, int requestedAlgoCount,
    cublasLtMatmulHeuristicResult_t heuristicResultsArray[], int *returnAlgoCount) {
    (void)operationDesc, (void)Adesc, (void)Bdesc, (void)Cdesc, (void)Ddesc, (void)preference;
    (void)heuristicResultsArray;
    if (!lightHandle) return CUBLAS_STATUS_NOT_INITIALIZED;
    if (!returnAlgoCount || requestedAlgoCount < 1) return CUBLAS_STATUS_INVALID_VALUE;
    *returnAlgoCount = 0;
    return CUBLAS_STATUS_NOT_SUPPORTED;
}

/* The descriptors live in the caller's storage (the header's opaque types); init checks the
 * size as cuBLASLt does and clears it. */
static cublasStatus_t init_opaque(void *p, size_t size, size_t need) {
    if (!p) return CUBLAS_STATUS_INVALID_VALUE;
    if (size < need) return CUBLAS_STATUS_ALLOC_FAILED;
    memset(p, 0, need);
    return CUBLAS_STATUS_SUCCESS;
}

EXPORT cublasStatus_t cublasLtMatmulDescInit_internal(cublasLtMatmulDesc_t matmulDesc, size_t size,
                                                      cublasComputeType_t computeType,
                                                      cudaDataType_t scaleType) {
    (void)computeType, (void)scaleType;
    return init_opaque(matmulDesc, size, sizeof(cublasLtMatmulDescOpaque_t));
}

EXPORT cublasStatus_t cublasLtMatmulDescSetAttribute(cublasLtMatmulDesc_t matmulDesc,
                                                     cublasLtMatmulDescAttributes_t attr,
                                                     const void *buf, size_t sizeInBytes) {
    (void)attr, (void)sizeInBytes;
    return matmulDesc && buf ? CUBLAS_STATUS_SUCCESS : CUBLAS_STATUS_INVALID_VALUE;
}

EXPORT cublasStatus_t cublasLtMatmulPreferenceInit_internal(cublasLtMatmulPreference_t pref,
                                                            size_t size) {
    return init_opaque(pref, size, sizeof(cublasLtMatmulPreferenceOpaque_t));
}

EXPORT cublasStatus_t cublasLtMatmulPreferenceSetAttribute(
    cublasLtMatmulPreference_t pref, cublasLtMatmulPreferenceAttributes_t attr, const void *buf,
    size_t sizeInBytes) {
    (void)attr, (void)sizeInBytes;
    return pref && buf ? CUBLAS_STATUS_SUCCESS : CUBLAS_STATUS_INVALID_VALUE;
}

EXPORT cublasStatus_t cublasLtMatrixLayoutInit_internal(cublasLtMatrixLayout_t matLayout,
                                                        size_t size, cudaDataType type,
                                                        uint64_t rows, uint64_t cols, int64_t ld) {
    (void)type, (void)rows, (void)cols, (void)ld;
    return init_opaque(matLayout, size, sizeof(cublasLtMatrixLayoutOpaque_t));
}

EXPORT cublasStatus_t cublasLtMatrixLayoutSetAttribute(cublasLtMatrixLayout_t matLayout,
                                                       cublasLtMatrixLayoutAttribute_t attr,
                                                       const void *buf, size_t sizeInBytes) {
    (void)attr, (void)sizeInBytes;
    return matLayout && buf ? CUBLAS_STATUS_SUCCESS : CUBLAS_STATUS_INVALID_VALUE;
}

#if defined(CUBLAS_VERSION) && CUBLAS_VERSION >= 130000
EXPORT cublasStatus_t cublasLtEmulationDescInit_internal(cublasLtEmulationDesc_t emulationDesc,
                                                         size_t size) {
    return init_opaque(emulationDesc, size, sizeof(cublasLtEmulationDescOpaque_t));
}

EXPORT cublasStatus_t cublasLtEmulationDescSetAttribute(cublasLtEmulationDesc_t emulationDesc,
                                                        cublasLtEmulationDescAttributes_t attr,
                                                        const void *buf, size_t sizeInBytes) {
    (void)attr, (void)sizeInBytes;
    return emulationDesc && buf ? CUBLAS_STATUS_SUCCESS : CUBLAS_STATUS_INVALID_VALUE;
}
#endif
