/*
 * test_hip_abi.c - the HIP ABI values the plugin writes out itself (backends/hip/hip_api.h, so
 * that it builds without ROCm) against the HIP headers of the gfx942 toolchain (Debian 13's HIP
 * 5.7, hip_runtime_api.h): error codes, device attribute numbers, memcpy kinds, and the
 * signatures of the resolved functions (parameter by parameter, with hipError_t read as int).
 * The same for rocBLAS (hip_rocblas.h against the toolchain's rocblas.h, rocBLAS 2.47), and
 * hipBLASLt's hipDataType values (hip_blaslt.h against HIP's library_types.h; the fp8 ones from
 * HIP 6: test_hip_abi6). hipBLASLt's own enums have no header here (no Debian package).
 * Compiled twice: test_hip_abi against the HIP 5.7 headers (KMUX_HIP_HEADERS: the ROCm 5 layout
 * of hipDeviceProp_t, hipDeviceAttributeGcnArch), test_hip_abi6 against ROCm 6 headers
 * (KMUX_HIP6_HEADERS, HIP 6.4: hipDeviceProp_tR0600 and hipGetDevicePropertiesR0600, the ROCm 5
 * layout kept as hipDeviceProp_tR0000, attribute 10003 now unused; no rocBLAS headers there, so
 * the rocBLAS part is checked where rocblas.h is found).
 * A compile-time test: it builds only when the headers are there, and then it passes by running.
 */
/* hip_api.h first: ROCm 6's header #defines hipGetDeviceProperties to hipGetDevicePropertiesR0600,
 * which would rename the plugin's field of that name (the plugin includes no HIP header) */
#include "hip_api.h"

#define __HIP_PLATFORM_AMD__ 1
#include <hip/hip_runtime_api.h>
#include <stddef.h>
#include <stdio.h>
#if HIP_VERSION_MAJOR >= 6
#include <hip/hip_deprecated.h>
#endif
#if __has_include(<rocblas/rocblas.h>)
#include <rocblas/rocblas.h>
#define HAVE_ROCBLAS 1
#else
#define HAVE_ROCBLAS 0
#endif

#include <hip/library_types.h>

#include "hip_blaslt.h"
#include "hip_rocblas.h"
#include "kmux.h"

#define SAME(a, b) _Static_assert((int)(a) == (int)(b), #a " != " #b)

SAME(KMUX_HIP_SUCCESS, hipSuccess);
SAME(KMUX_HIP_ERROR_INVALID_VALUE, hipErrorInvalidValue);
SAME(KMUX_HIP_ERROR_OUT_OF_MEMORY, hipErrorOutOfMemory);
SAME(KMUX_HIP_ERROR_NOT_INITIALIZED, hipErrorNotInitialized);
SAME(KMUX_HIP_ERROR_INVALID_CONFIGURATION, hipErrorInvalidConfiguration);
SAME(KMUX_HIP_ERROR_CONTEXT_IS_DESTROYED, hipErrorContextIsDestroyed);
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
#if HIP_VERSION_MAJOR >= 6
/* attribute 10003 is a placeholder since ROCm 6.0: the architecture comes from gcnArchName */
SAME(KMUX_HIP_ATTR_GCN_ARCH, hipDeviceAttributeUnused4);
/* hipDeviceProp_t: the ROCm 6 layout (hipGetDevicePropertiesR0600) and the ROCm 5 one kept as
 * hipDeviceProp_tR0000 (the unversioned hipGetDeviceProperties symbol) */
_Static_assert(offsetof(hipDeviceProp_tR0600, gcnArchName) == KMUX_HIP_PROPS_R0600_GCN_ARCH_NAME,
               "R0600 gcnArchName offset");
_Static_assert(sizeof(hipDeviceProp_tR0600) == KMUX_HIP_PROPS_R0600_SIZE, "R0600 size");
_Static_assert(sizeof(((hipDeviceProp_tR0600 *)0)->gcnArchName) == KMUX_HIP_GCN_ARCH_NAME_LEN,
               "R0600 gcnArchName length");
_Static_assert(offsetof(hipDeviceProp_tR0000, gcnArchName) == KMUX_HIP_PROPS_R0000_GCN_ARCH_NAME,
               "R0000 gcnArchName offset");
_Static_assert(sizeof(hipDeviceProp_tR0000) == KMUX_HIP_PROPS_R0000_SIZE, "R0000 size");
_Static_assert(_Generic(&hipGetDevicePropertiesR0600,
                        hipError_t (*)(hipDeviceProp_tR0600 *, int) : 1, default : 0),
               "hipGetDevicePropertiesR0600");
#else
SAME(KMUX_HIP_ATTR_GCN_ARCH, hipDeviceAttributeGcnArch);
/* HIP 5.x: hipDeviceProp_t is the layout the unversioned hipGetDeviceProperties fills */
_Static_assert(offsetof(hipDeviceProp_t, gcnArchName) == KMUX_HIP_PROPS_R0000_GCN_ARCH_NAME,
               "ROCm 5 gcnArchName offset");
_Static_assert(sizeof(hipDeviceProp_t) == KMUX_HIP_PROPS_R0000_SIZE, "ROCm 5 size");
_Static_assert(_Generic(&hipGetDeviceProperties, hipError_t (*)(hipDeviceProp_t *, int) : 1,
                        default : 0),
               "hipGetDeviceProperties");
#endif
_Static_assert(KMUX_HIP_PROPS_BUFFER >= KMUX_HIP_PROPS_R0600_SIZE &&
                   KMUX_HIP_PROPS_BUFFER >= KMUX_HIP_PROPS_R0000_SIZE,
               "the plugin's properties buffer holds either layout");
/* the HIP_VERSION encoding of hipRuntimeGetVersion the plugin compares with */
_Static_assert(HIP_VERSION ==
                   HIP_VERSION_MAJOR * 10000000 + HIP_VERSION_MINOR * 100000 + HIP_VERSION_PATCH,
               "HIP_VERSION encoding");
_Static_assert(KMUX_HIP_VERSION_6_0 == 6 * 10000000 && KMUX_HIP_VERSION_7_0 == 7 * 10000000,
               "version constants");
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
SIG(hipStreamWaitEvent, (hipStream_t, hipEvent_t, unsigned int));
SIG(hipModuleLoadData, (hipModule_t *, const void *));
SIG(hipModuleUnload, (hipModule_t));
SIG(hipModuleGetFunction, (hipFunction_t *, hipModule_t, const char *));
SIG(hipModuleLaunchKernel,
    (hipFunction_t, unsigned int, unsigned int, unsigned int, unsigned int, unsigned int,
     unsigned int, unsigned int, hipStream_t, void **, void **));
_Static_assert(_Generic(&hipGetErrorName, const char *(*)(hipError_t) : 1, default : 0), "name");
_Static_assert(_Generic(&hipGetErrorString, const char *(*)(hipError_t) : 1, default : 0), "str");

/* hipDataType of hip_blaslt.h against HIP's library_types.h (the fp8 values from HIP 6) */
SAME(KMUX_HIP_R_32F, HIP_R_32F);
SAME(KMUX_HIP_R_64F, HIP_R_64F);
SAME(KMUX_HIP_R_16F, HIP_R_16F);
SAME(KMUX_HIP_R_8I, HIP_R_8I);
SAME(KMUX_HIP_R_32I, HIP_R_32I);
SAME(KMUX_HIP_R_16BF, HIP_R_16BF);
#if HIP_VERSION_MAJOR >= 6
SAME(KMUX_HIP_R_8F_E4M3, HIP_R_8F_E4M3);
SAME(KMUX_HIP_R_8F_E5M2, HIP_R_8F_E5M2);
SAME(KMUX_HIP_R_8F_E4M3_FNUZ, HIP_R_8F_E4M3_FNUZ);
SAME(KMUX_HIP_R_8F_E5M2_FNUZ, HIP_R_8F_E5M2_FNUZ);
#endif

#if HAVE_ROCBLAS
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
#endif

int main(void) {
    printf("test_hip_abi: hip_api.h agrees with HIP %d.%d's hip_runtime_api.h", HIP_VERSION_MAJOR,
           HIP_VERSION_MINOR);
#if HAVE_ROCBLAS
    printf(", hip_rocblas.h with rocBLAS %d.%d", ROCBLAS_VERSION_MAJOR, ROCBLAS_VERSION_MINOR);
#else
    printf(" (no rocblas.h with these headers: rocBLAS not checked)");
#endif
    printf("\n");
    return 0;
}
