/*
 * hip_api.h - the part of the HIP runtime ABI the HIP plugin uses, written out here so that the
 * plugin builds without ROCm (no HIP header is included anywhere in backends/hip).
 *
 * Only calls and values whose ABI is the same in ROCm 5.x and 6.x are used: plain C functions
 * taking ints, sizes, pointers and opaque handles, hipDeviceGetAttribute with attribute numbers
 * of the hipDeviceAttribute_t enum (unchanged since ROCm 5.0: new entries were appended before
 * hipDeviceAttributeCudaCompatibleEnd), never the hipDeviceProp_t layout (which changed in ROCm
 * 6.0, hence the versioned hipGetDevicePropertiesR0600 symbol). Values below are those of the
 * HIP 5.7 / 6.x headers (hip_runtime_api.h).
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
    KMUX_HIP_ERROR_INSUFFICIENT_DRIVER = 35,
    KMUX_HIP_ERROR_NO_DEVICE = 100,
    KMUX_HIP_ERROR_INVALID_DEVICE = 101,
    KMUX_HIP_ERROR_INVALID_IMAGE = 200,
    KMUX_HIP_ERROR_NO_BINARY_FOR_GPU = 209,
    KMUX_HIP_ERROR_NOT_FOUND = 500,
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
    KMUX_HIP_ATTR_GCN_ARCH = 10003 /* major*100 + minor*10 + stepping, e.g. 942 */
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
    kmux_hip_error (*hipModuleLoadData)(kmux_hip_module *module, const void *image);
    kmux_hip_error (*hipModuleUnload)(kmux_hip_module module);
    kmux_hip_error (*hipModuleGetFunction)(kmux_hip_function *fn, kmux_hip_module module,
                                           const char *name);
    kmux_hip_error (*hipModuleLaunchKernel)(kmux_hip_function fn, unsigned gx, unsigned gy,
                                            unsigned gz, unsigned bx, unsigned by, unsigned bz,
                                            unsigned shared_bytes, kmux_hip_stream stream,
                                            void **params, void **extra);
} kmux_hip_api;

/** Names of the kmux_hip_api fields, in order (hip_runtime.c resolves them one by one). */
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
    X(hipModuleLoadData)                                                                           \
    X(hipModuleUnload)                                                                             \
    X(hipModuleGetFunction)                                                                        \
    X(hipModuleLaunchKernel)

#endif
