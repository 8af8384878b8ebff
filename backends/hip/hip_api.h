/*
 * hip_api.h - the part of the HIP runtime ABI the HIP plugin uses, written out here so that the
 * plugin builds without ROCm (no HIP header is included anywhere in backends/hip).
 *
 * Calls and values whose ABI is the same in ROCm 5.x, 6.x and 7.x: plain C functions taking ints,
 * sizes, pointers and opaque handles, hipDeviceGetAttribute with attribute numbers of the
 * hipDeviceAttribute_t enum. The one struct read is hipDeviceProp_t, for gcnArchName only (the
 * full target id, "gfx942:sramecc+:xnack-"), at the offsets below: its layout changed in ROCm 6.0,
 * which exports the new layout as the versioned symbol hipGetDevicePropertiesR0600 (the
 * unversioned hipGetDeviceProperties keeps the ROCm 5 layout); the plugin picks the call by
 * hipRuntimeGetVersion (hip_props.c). test_hip_abi checks every value and offset here against the
 * HIP 5.7 headers, and test_hip_abi6 against the ROCm 6 headers (HIP 6.4).
 *
 * HIP API 7.0 changes (ROCm 7.0, "HIP API 7.0 changes" in the HIP documentation), checked against
 * every function resolved here:
 * - hipGetLastError now returns the last error of the thread rather than the last call's result:
 *   not resolved; the plugin checks each call's own return value, never the sticky error.
 * - hipPointerGetAttributes returns hipSuccess for a NULL pointer: not resolved (kmux never asks
 *   the runtime what a pointer is).
 * - hipFree no longer waits for allocations of hipMallocAsync / hipMallocFromPoolAsync: the
 *   plugin allocates with hipMalloc only, whose hipFree still synchronises.
 * - hipModuleLaunchKernel: a zero grid dimension is hipErrorInvalidValue, too many threads per
 *   block hipErrorInvalidConfiguration (was hipErrorInvalidValue), an invalid stream
 *   hipErrorContextIsDestroyed: the plugin launches no empty grid and checks the grid itself
 *   before launching (hip_modules.c); the new codes are named below for messages.
 * - hipMemcpyAsync, hipEventRecord, hipStreamDestroy no longer check the stream (an invalid one
 *   faults, as on CUDA): the plugin passes only streams it created or the caller's native stream
 *   (kmux_stream_wrap_native, whose validity is the caller's to keep; hip_stream.c).
 * - hipRTC symbols left libamdhip64: none used. hipModuleLoad's empty-file code: hipModuleLoadData
 *   is used, from memory. Signature changes (hipMemcpyHtoD, hipCtxGetApiVersion): neither used.
 * - The runtime's soname became libamdhip64.so.7 and rocBLAS's librocblas.so.5 (hip_runtime.c).
 */
#ifndef KMUX_HIP_API_H
#define KMUX_HIP_API_H

#include <stddef.h>
#include <stdint.h>

typedef int kmux_hip_error;      /* hipError_t (an enum: int-sized) */
typedef void *kmux_hip_stream;   /* hipStream_t */
typedef void *kmux_hip_event;    /* hipEvent_t */
typedef void *kmux_hip_module;   /* hipModule_t */
typedef void *kmux_hip_function; /* hipFunction_t */

enum {
    KMUX_HIP_SUCCESS = 0,
    KMUX_HIP_ERROR_INVALID_VALUE = 1,
    KMUX_HIP_ERROR_OUT_OF_MEMORY = 2,
    KMUX_HIP_ERROR_NOT_INITIALIZED = 3,
    KMUX_HIP_ERROR_INVALID_CONFIGURATION = 9, /* ROCm 7: too many threads per block */
    KMUX_HIP_ERROR_INSUFFICIENT_DRIVER = 35,
    KMUX_HIP_ERROR_NO_DEVICE = 100,
    KMUX_HIP_ERROR_INVALID_DEVICE = 101,
    KMUX_HIP_ERROR_INVALID_IMAGE = 200,
    KMUX_HIP_ERROR_NO_BINARY_FOR_GPU = 209,
    KMUX_HIP_ERROR_NOT_FOUND = 500,
    KMUX_HIP_ERROR_CONTEXT_IS_DESTROYED = 709, /* ROCm 7: a launch on an invalid stream */
    KMUX_HIP_ERROR_NOT_SUPPORTED = 801
};

/* hipDeviceAttribute_t values */
enum {
    KMUX_HIP_ATTR_CLOCK_RATE = 5,  /* kHz */
    KMUX_HIP_ATTR_INTEGRATED = 16, /* APU (MI300A) */
    KMUX_HIP_ATTR_CC_MAJOR = 23,   /* gfx major (9 on gfx942) */
    KMUX_HIP_ATTR_MAX_THREADS_PER_BLOCK = 56,
    KMUX_HIP_ATTR_MEMORY_BUS_WIDTH = 59,  /* bits */
    KMUX_HIP_ATTR_MEMORY_CLOCK_RATE = 60, /* kHz */
    KMUX_HIP_ATTR_CC_MINOR = 61,
    KMUX_HIP_ATTR_MULTIPROCESSOR_COUNT = 63, /* compute units */
    KMUX_HIP_ATTR_WARP_SIZE = 87,
    /* major*100 + minor*10 + stepping, e.g. 942; ROCm 5 only: since ROCm 6.0 the slot is
     * hipDeviceAttributeUnused4 and answers nothing (hip_props.c reads gcnArchName instead) */
    KMUX_HIP_ATTR_GCN_ARCH = 10003
};

/* HIP_VERSION of hipRuntimeGetVersion: major * 10^7 + minor * 10^5 + patch */
enum { KMUX_HIP_VERSION_6_0 = 60000000, KMUX_HIP_VERSION_7_0 = 70000000 };

/* hipDeviceProp_t, read as bytes for gcnArchName (char[256], NUL-terminated) only:
 * - R0600: the layout of ROCm 6.0 and later (hipDeviceProp_tR0600), filled by
 *   hipGetDevicePropertiesR0600;
 * - R0000: the layout of ROCm 5.x (hipDeviceProp_t of HIP 5.7; hipDeviceProp_tR0000 of ROCm 6's
 *   hip_deprecated.h), filled by the unversioned hipGetDeviceProperties.
 * The plugin hands the runtime a KMUX_HIP_PROPS_BUFFER-byte buffer, larger than either struct, so
 * that a runtime with a longer struct still writes inside it. */
enum {
    KMUX_HIP_PROPS_R0600_GCN_ARCH_NAME = 1160,
    KMUX_HIP_PROPS_R0600_SIZE = 1472,
    KMUX_HIP_PROPS_R0000_GCN_ARCH_NAME = 396,
    KMUX_HIP_PROPS_R0000_SIZE = 792,
    KMUX_HIP_GCN_ARCH_NAME_LEN = 256,
    KMUX_HIP_PROPS_BUFFER = 8192
};

/* hipMemcpyKind: same numbering as kmux_memcpy_kind */
enum { KMUX_HIP_MEMCPY_DEFAULT = 4 };

/** The runtime functions the plugin resolves (dlsym), nothing else. */
typedef struct kmux_hip_api {
    kmux_hip_error (*hipGetDeviceCount)(int *count);
    kmux_hip_error (*hipDeviceGetAttribute)(int *value, int attr, int device);
    kmux_hip_error (*hipDeviceGetName)(char *name, int len, int device);
    kmux_hip_error (*hipDeviceTotalMem)(size_t *bytes, int device);
    kmux_hip_error (*hipDeviceGetPCIBusId)(char *id, int len, int device);
    kmux_hip_error (*hipRuntimeGetVersion)(int *version);
    kmux_hip_error (*hipDriverGetVersion)(int *version);
    const char *(*hipGetErrorName)(kmux_hip_error e);
    const char *(*hipGetErrorString)(kmux_hip_error e);
    kmux_hip_error (*hipGetDevice)(int *device);
    kmux_hip_error (*hipSetDevice)(int device);
    kmux_hip_error (*hipMalloc)(void **ptr, size_t bytes);
    kmux_hip_error (*hipFree)(void *ptr);
    kmux_hip_error (*hipHostMalloc)(void **ptr, size_t bytes, unsigned flags);
    kmux_hip_error (*hipHostFree)(void *ptr);
    kmux_hip_error (*hipMemcpyAsync)(void *dst, const void *src, size_t bytes, int kind,
                                     kmux_hip_stream stream);
    kmux_hip_error (*hipMemsetAsync)(void *dst, int value, size_t bytes, kmux_hip_stream stream);
    kmux_hip_error (*hipStreamCreate)(kmux_hip_stream *stream);
    kmux_hip_error (*hipStreamDestroy)(kmux_hip_stream stream);
    kmux_hip_error (*hipStreamSynchronize)(kmux_hip_stream stream);
    kmux_hip_error (*hipEventCreate)(kmux_hip_event *event);
    kmux_hip_error (*hipEventDestroy)(kmux_hip_event event);
    kmux_hip_error (*hipEventRecord)(kmux_hip_event event, kmux_hip_stream stream);
    kmux_hip_error (*hipEventSynchronize)(kmux_hip_event event);
    kmux_hip_error (*hipEventElapsedTime)(float *ms, kmux_hip_event start, kmux_hip_event stop);
    kmux_hip_error (*hipStreamWaitEvent)(kmux_hip_stream stream, kmux_hip_event event,
                                         unsigned flags);
    kmux_hip_error (*hipModuleLoadData)(kmux_hip_module *module, const void *image);
    kmux_hip_error (*hipModuleUnload)(kmux_hip_module module);
    kmux_hip_error (*hipModuleGetFunction)(kmux_hip_function *fn, kmux_hip_module module,
                                           const char *name);
    kmux_hip_error (*hipModuleLaunchKernel)(kmux_hip_function fn, unsigned gx, unsigned gy,
                                            unsigned gz, unsigned bx, unsigned by, unsigned bz,
                                            unsigned shared_bytes, kmux_hip_stream stream,
                                            void **params, void **extra);
    /* optional (NULL when the runtime lacks them; resolved by KMUX_HIP_API_OPTIONAL_NAMES) */
    kmux_hip_error (*hipGetDevicePropertiesR0600)(void *prop, int device); /**< ROCm >= 6.0 */
    kmux_hip_error (*hipGetDeviceProperties)(void *prop, int device);      /**< ROCm 5 layout */
} kmux_hip_api;

/** Names of the kmux_hip_api fields a runtime must have, in order (hip_runtime.c resolves them one
 * by one). */
#define KMUX_HIP_API_NAMES                                                                         \
    X(hipGetDeviceCount)                                                                           \
    X(hipDeviceGetAttribute)                                                                       \
    X(hipDeviceGetName)                                                                            \
    X(hipDeviceTotalMem)                                                                           \
    X(hipDeviceGetPCIBusId)                                                                        \
    X(hipRuntimeGetVersion)                                                                        \
    X(hipDriverGetVersion)                                                                         \
    X(hipGetErrorName)                                                                             \
    X(hipGetErrorString)                                                                           \
    X(hipGetDevice)                                                                                \
    X(hipSetDevice)                                                                                \
    X(hipMalloc)                                                                                   \
    X(hipFree)                                                                                     \
    X(hipHostMalloc)                                                                               \
    X(hipHostFree)                                                                                 \
    X(hipMemcpyAsync)                                                                              \
    X(hipMemsetAsync)                                                                              \
    X(hipStreamCreate)                                                                             \
    X(hipStreamDestroy)                                                                            \
    X(hipStreamSynchronize)                                                                        \
    X(hipEventCreate)                                                                              \
    X(hipEventDestroy)                                                                             \
    X(hipEventRecord)                                                                              \
    X(hipEventSynchronize)                                                                         \
    X(hipEventElapsedTime)                                                                         \
    X(hipStreamWaitEvent)                                                                          \
    X(hipModuleLoadData)                                                                           \
    X(hipModuleUnload)                                                                             \
    X(hipModuleGetFunction)                                                                        \
    X(hipModuleLaunchKernel)

/** Names of the optional kmux_hip_api fields (a runtime without them is still used). */
#define KMUX_HIP_API_OPTIONAL_NAMES                                                                \
    X(hipGetDevicePropertiesR0600)                                                                 \
    X(hipGetDeviceProperties)

#endif
