/*
 * test_hip_abi.c - the HIP ABI values the plugin writes out itself (backends/hip/hip_api.h, so
 * that it builds without ROCm) against the HIP headers of the gfx942 toolchain (Debian 13's HIP
 * 5.7, hip_runtime_api.h): error codes, device attribute numbers, memcpy kinds, and the
 * signatures of the resolved functions (parameter by parameter, with hipError_t read as int).
 * The same for rocBLAS (hip_rocblas.h against the toolchain's rocblas.h, rocBLAS 2.47).
 * A compile-time test: it builds only when the headers are there, and then it passes by running.
 */
#define __HIP_PLATFORM_AMD__ 1
#include <hip/hip_runtime_api.h>
#include <rocblas/rocblas.h>
#include <stdio.h>

#include "hip_api.h"
#include "hip_rocblas.h"
#include "kmux.h"

#define SAME(a, b) _Static_assert((int)(a) == (int)(b), #a " != " #b)

SAME(KMUX_HIP_SUCCESS, hipSuccess);
SAME(KMUX_HIP_ERROR_INVALID_VALUE, hipErrorInvalidValue);
SAME(KMUX_HIP_ERROR_OUT_OF_MEMORY, hipErrorOutOfMemory);
SAME(KMUX_HIP_ERROR_NOT_INITIALIZED, hipErrorNotInitialized);
SAME(KMUX_HIP_ERROR_INSUFFICIENT_DRIVER, hipErrorInsufficientDriver);
SAME(KMUX_HIP_ERROR_NO_DEVICE, hipErrorNoDevice);
SAME(KMUX_HIP_ERROR_INVALID_DEVICE, hipErrorInvalidDevice);
SAME(KMUX_HIP_ERROR_INVALID_IMAGE, hipErrorInvalidImage);
SAME(KMUX_HIP_ERROR_NO_BINARY_FOR_GPU, hipErrorNoBinaryForGpu);
SAME(KMUX_HIP_ERROR_NOT_FOUND, hipErrorNotFound);
SAME(KMUX_HIP_ERROR_NOT_SUPPORTED, hipErrorNotSupported);
SAME(KMUX_HIP_ATTR_CLOCK_RATE, hipDeviceAttributeClockRate);
SAME(KMUX_HIP_ATTR_INTEGRATED, hipDeviceAttributeIntegrated);
SAME(KMUX_HIP_ATTR_CC_MAJOR, hipDeviceAttributeComputeCapabilityMajor);
SAME(KMUX_HIP_ATTR_MAX_THREADS_PER_BLOCK, hipDeviceAttributeMaxThreadsPerBlock);
SAME(KMUX_HIP_ATTR_MEMORY_BUS_WIDTH, hipDeviceAttributeMemoryBusWidth);
SAME(KMUX_HIP_ATTR_MEMORY_CLOCK_RATE, hipDeviceAttributeMemoryClockRate);
SAME(KMUX_HIP_ATTR_CC_MINOR, hipDeviceAttributeComputeCapabilityMinor);
SAME(KMUX_HIP_ATTR_MULTIPROCESSOR_COUNT, hipDeviceAttributeMultiprocessorCount);
SAME(KMUX_HIP_ATTR_WARP_SIZE, hipDeviceAttributeWarpSize);
SAME(KMUX_HIP_ATTR_GCN_ARCH, hipDeviceAttributeGcnArch);
SAME(KMUX_HIP_MEMCPY_DEFAULT, hipMemcpyDefault);
SAME(KMUX_MEMCPY_HOST_TO_HOST, hipMemcpyHostToHost);
SAME(KMUX_MEMCPY_HOST_TO_DEVICE, hipMemcpyHostToDevice);
SAME(KMUX_MEMCPY_DEVICE_TO_HOST, hipMemcpyDeviceToHost);
SAME(KMUX_MEMCPY_DEVICE_TO_DEVICE, hipMemcpyDeviceToDevice);
_Static_assert(sizeof(hipError_t) == sizeof(kmux_hip_error), "hipError_t is not int-sized");
_Static_assert(sizeof(hipStream_t) == sizeof(kmux_hip_stream), "hipStream_t");

/* Each resolved function, declared by HIP, converted to the plugin's pointer type with the
 * return type spelled as HIP's: a parameter list that differs is a compile error. */
#define SIG(name, params)                                                                          \
    _Static_assert(_Generic(&name, hipError_t(*) params : 1, default : 0), #name)
SIG(hipGetDeviceCount, (int *));
SIG(hipDeviceGetAttribute, (int *, hipDeviceAttribute_t, int));
SIG(hipDeviceGetName, (char *, int, int));
SIG(hipDeviceTotalMem, (size_t *, int));
SIG(hipDeviceGetPCIBusId, (char *, int, int));
SIG(hipRuntimeGetVersion, (int *));
SIG(hipDriverGetVersion, (int *));
SIG(hipGetDevice, (int *));
SIG(hipSetDevice, (int));
SIG(hipMalloc, (void **, size_t));
SIG(hipFree, (void *));
SIG(hipMemcpyAsync, (void *, const void *, size_t, hipMemcpyKind, hipStream_t));
SIG(hipMemsetAsync, (void *, int, size_t, hipStream_t));
SIG(hipStreamCreate, (hipStream_t *));
SIG(hipStreamDestroy, (hipStream_t));
SIG(hipStreamSynchronize, (hipStream_t));
SIG(hipEventCreate, (hipEvent_t *));
SIG(hipEventDestroy, (hipEvent_t));
SIG(hipEventRecord, (hipEvent_t, hipStream_t));
SIG(hipEventSynchronize, (hipEvent_t));
SIG(hipEventElapsedTime, (float *, hipEvent_t, hipEvent_t));
SIG(hipModuleLoadData, (hipModule_t *, const void *));
SIG(hipModuleUnload, (hipModule_t));
SIG(hipModuleGetFunction, (hipFunction_t *, hipModule_t, const char *));
SIG(hipModuleLaunchKernel,
    (hipFunction_t, unsigned int, unsigned int, unsigned int, unsigned int, unsigned int,
     unsigned int, unsigned int, hipStream_t, void **, void **));
_Static_assert(_Generic(&hipGetErrorName, const char *(*)(hipError_t) : 1, default : 0), "name");
_Static_assert(_Generic(&hipGetErrorString, const char *(*)(hipError_t) : 1, default : 0), "str");

/* rocBLAS (hip_rocblas.h) against the toolchain's rocblas.h */
SAME(KMUX_ROCBLAS_SUCCESS, rocblas_status_success);
SAME(KMUX_ROCBLAS_OP_N, rocblas_operation_none);
SAME(KMUX_ROCBLAS_OP_T, rocblas_operation_transpose);
SAME(KMUX_ROCBLAS_F16, rocblas_datatype_f16_r);
SAME(KMUX_ROCBLAS_F32, rocblas_datatype_f32_r);
SAME(KMUX_ROCBLAS_F64, rocblas_datatype_f64_r);
SAME(KMUX_ROCBLAS_BF16, rocblas_datatype_bf16_r);
SAME(KMUX_ROCBLAS_ALGO_STANDARD, rocblas_gemm_algo_standard);
SAME(KMUX_ROCBLAS_ATOMICS_NOT_ALLOWED, rocblas_atomics_not_allowed);
SAME(KMUX_ROCBLAS_ATOMICS_ALLOWED, rocblas_atomics_allowed);
_Static_assert(sizeof(rocblas_int) == 4 && sizeof(rocblas_stride) == 8, "rocblas_int LP64");
#define RSIG(name, params)                                                                         \
    _Static_assert(_Generic(&name, rocblas_status(*) params : 1, default : 0), #name)
RSIG(rocblas_create_handle, (rocblas_handle *));
RSIG(rocblas_destroy_handle, (rocblas_handle));
RSIG(rocblas_set_stream, (rocblas_handle, hipStream_t));
RSIG(rocblas_get_version_string, (char *, size_t));
RSIG(rocblas_set_atomics_mode, (rocblas_handle, rocblas_atomics_mode));
RSIG(rocblas_gemm_strided_batched_ex,
     (rocblas_handle, rocblas_operation, rocblas_operation, rocblas_int, rocblas_int, rocblas_int,
      const void *, const void *, rocblas_datatype, rocblas_int, rocblas_stride, const void *,
      rocblas_datatype, rocblas_int, rocblas_stride, const void *, const void *, rocblas_datatype,
      rocblas_int, rocblas_stride, void *, rocblas_datatype, rocblas_int, rocblas_stride,
      rocblas_int, rocblas_datatype, rocblas_gemm_algo, int32_t, uint32_t));

int main(void) {
    printf("test_hip_abi: hip_api.h agrees with HIP %d.%d's hip_runtime_api.h, hip_rocblas.h with "
           "rocBLAS %d.%d\n",
           HIP_VERSION_MAJOR, HIP_VERSION_MINOR, ROCBLAS_VERSION_MAJOR, ROCBLAS_VERSION_MINOR);
    return 0;
}
