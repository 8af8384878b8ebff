/*
 * cuda_libs.h - the CUDA driver (libcuda.so.1), cuBLASLt and cuDNN, opened at run time (dlopen)
 * instead of linked: the plugin has no NEEDED entry for any of them (and no CUDA runtime: it
 * calls the driver API), so it loads on a host without them (and reports which one is missing),
 * and tests put fakes in their place (tests/fake_cuda).
 *
 * Every function of the two libraries that the plugin calls is listed once below. Its pointer has
 * the type of the vendor header's own declaration (__typeof__), so a call through it is checked
 * by the compiler exactly as a direct call would be, and the macros at the end of this header
 * turn each direct call in the plugin's sources into a call through the table. A call the list
 * misses is an undefined symbol, which the plugin's -Wl,--no-undefined turns into a link error.
 *
 * Search order for each library (first hit wins), as cuBLAS/cuDNN users expect:
 *   1. already loaded in the process (a PyTorch trainer's wheel libraries: RTLD_NOLOAD);
 *   2. the folders of KMUX_CUDA_LIB_PATH (colon-separated);
 *   3. the loader's own search: LD_LIBRARY_PATH, the plugin's RUNPATH (the folders CMake found at
 *      build time), ld.so.cache;
 *   4. NVIDIA's pip-wheel folders of the running Python (<prefix>/lib/python3.X/site-packages/
 *      nvidia/{cublas,cudnn}/lib for CUDA 12's wheels, nvidia/cu13/lib for CUDA 13's, the
 *      prefix taken from VIRTUAL_ENV, ~/.local and a loaded libpython3.X or the python3.X
 *      executable; Debian's /usr/local dist-packages for /usr/bin/python3).
 * Sonames: libcublasLt.so.13 then libcublasLt.so.12; libcudnn.so.9; libcuda.so.1 (the driver:
 * steps 1 to 3 only; it is never in a wheel, and the toolkit's stubs/libcuda.so is not a driver).
 *
 * Driver calls are named as cuda.h names them: several are macros for a versioned symbol
 * (cuMemAlloc is cuMemAlloc_v2), and the table resolves the versioned name the header chose, so
 * the plugin gets the ABI it was compiled against.
 */
#ifndef KMUX_CUDA_LIBS_H
#define KMUX_CUDA_LIBS_H

#include <stddef.h>

#include <cublasLt.h>
#include <cuda.h>
#include <cudnn.h>

/* With per-thread default streams cuda.h maps the stream calls to their _ptsz symbols, which the
 * table below does not resolve; the plugin uses the legacy default stream (stream 0, as adopted
 * native streams of the caller mean it) and explicit streams only. */
#if defined(__CUDA_API_PER_THREAD_DEFAULT_STREAM)
#error "kmux-cuda is built without CUDA_API_PER_THREAD_DEFAULT_STREAM (see cuda_libs.h)"
#endif

/* The CUDA driver API functions the plugin calls (cuda.h's names; macros expand to the versioned
 * symbol, e.g. cuMemAlloc_v2). cuEventElapsedTime is resolved as _v2, else the first version
 * (same signature; drivers before 12.8 have only that one). */
#define KMUX_CUDA_DRV_FUNCS(X)                                                                     \
    X(cuInit)                                                                                      \
    X(cuDriverGetVersion)                                                                          \
    X(cuDeviceGetCount)                                                                            \
    X(cuDeviceGet)                                                                                 \
    X(cuDeviceGetName)                                                                             \
    X(cuDeviceTotalMem)                                                                            \
    X(cuDeviceGetAttribute)                                                                        \
    X(cuDeviceGetPCIBusId)                                                                         \
    X(cuDevicePrimaryCtxRetain)                                                                    \
    X(cuDevicePrimaryCtxRelease)                                                                   \
    X(cuCtxGetCurrent)                                                                             \
    X(cuCtxPushCurrent)                                                                            \
    X(cuCtxPopCurrent)                                                                             \
    X(cuGetErrorName)                                                                              \
    X(cuGetErrorString)                                                                            \
    X(cuMemAlloc)                                                                                  \
    X(cuMemFree)                                                                                   \
    X(cuMemAllocAsync)                                                                             \
    X(cuMemFreeAsync)                                                                              \
    X(cuMemHostAlloc)                                                                              \
    X(cuMemFreeHost)                                                                               \
    X(cuMemcpyAsync)                                                                               \
    X(cuMemsetD8Async)                                                                             \
    X(cuMemcpy3DAsync)                                                                             \
    X(cuStreamCreate)                                                                              \
    X(cuStreamDestroy)                                                                             \
    X(cuStreamSynchronize)                                                                         \
    X(cuStreamWaitEvent)                                                                           \
    X(cuEventCreate)                                                                               \
    X(cuEventDestroy)                                                                              \
    X(cuEventRecord)                                                                               \
    X(cuEventSynchronize)                                                                          \
    X(cuEventElapsedTime)                                                                          \
    X(cuModuleLoadData)                                                                            \
    X(cuModuleUnload)                                                                              \
    X(cuModuleGetFunction)                                                                         \
    X(cuLaunchKernel)

/* The cuBLASLt functions the plugin calls (the *Init ones are the header's static inline
 * wrappers around *Init_internal, which is what the library exports). */
#define KMUX_CUDA_LT_FUNCS(X)                                                                      \
    X(cublasLtCreate)                                                                              \
    X(cublasLtDestroy)                                                                             \
    X(cublasLtGetStatusName)                                                                       \
    X(cublasLtGetStatusString)                                                                     \
    X(cublasLtGetVersion)                                                                          \
    X(cublasLtMatmul)                                                                              \
    X(cublasLtMatmulAlgoCapGetAttribute)                                                           \
    X(cublasLtMatmulAlgoConfigGetAttribute)                                                        \
    X(cublasLtMatmulAlgoGetHeuristic)                                                              \
    X(cublasLtMatmulDescInit_internal)                                                             \
    X(cublasLtMatmulDescSetAttribute)                                                              \
    X(cublasLtMatmulPreferenceInit_internal)                                                       \
    X(cublasLtMatmulPreferenceSetAttribute)                                                        \
    X(cublasLtMatrixLayoutInit_internal)                                                           \
    X(cublasLtMatrixLayoutSetAttribute)

/* cuBLAS 13.0's emulation descriptor: optional (NULL in a cuBLASLt 12), see cuda_matmul.h. */
#if defined(CUBLAS_VERSION) && CUBLAS_VERSION >= 130000
#define KMUX_CUDA_LT_OPTIONAL_FUNCS(X)                                                             \
    X(cublasLtEmulationDescInit_internal)                                                          \
    X(cublasLtEmulationDescSetAttribute)
#else
#define KMUX_CUDA_LT_OPTIONAL_FUNCS(X)
#endif

/* The cuDNN 9 functions the plugin calls (legacy convolution API of cudnn_cnn / cudnn_graph). */
#define KMUX_CUDA_DNN_FUNCS(X)                                                                     \
    X(cudnnConvolutionBackwardData)                                                                \
    X(cudnnConvolutionBackwardFilter)                                                              \
    X(cudnnConvolutionForward)                                                                     \
    X(cudnnCreate)                                                                                 \
    X(cudnnCreateConvolutionDescriptor)                                                            \
    X(cudnnCreateFilterDescriptor)                                                                 \
    X(cudnnCreateTensorDescriptor)                                                                 \
    X(cudnnDestroy)                                                                                \
    X(cudnnDestroyConvolutionDescriptor)                                                           \
    X(cudnnDestroyFilterDescriptor)                                                                \
    X(cudnnDestroyTensorDescriptor)                                                                \
    X(cudnnGetConvolutionBackwardDataAlgorithm_v7)                                                 \
    X(cudnnGetConvolutionBackwardDataWorkspaceSize)                                                \
    X(cudnnGetConvolutionBackwardFilterAlgorithm_v7)                                               \
    X(cudnnGetConvolutionBackwardFilterWorkspaceSize)                                              \
    X(cudnnGetConvolutionForwardAlgorithm_v7)                                                      \
    X(cudnnGetConvolutionForwardWorkspaceSize)                                                     \
    X(cudnnGetConvolutionNdDescriptor)                                                             \
    X(cudnnGetErrorString)                                                                         \
    X(cudnnGetVersion)                                                                             \
    X(cudnnSetConvolution2dDescriptor)                                                             \
    X(cudnnSetConvolutionGroupCount)                                                               \
    X(cudnnSetConvolutionMathType)                                                                 \
    X(cudnnSetConvolutionNdDescriptor)                                                             \
    X(cudnnSetFilter4dDescriptor)                                                                  \
    X(cudnnSetStream)                                                                              \
    X(cudnnSetTensor4dDescriptor)

#define KMUX_CUDA_LIB_FN(name) __typeof__(name) *name;

/** The opened libraries: the driver's part filled once per process by kmux_cuda_driver_load,
 *  cuBLASLt's and cuDNN's by kmux_cuda_libs_load (their files found before by
 *  kmux_cuda_libs_locate); read-only after. */
typedef struct kmux_cuda_libs {
    int drv_ok;          /**< 1: the driver opened and every required symbol found */
    char drv_where[512]; /**< the driver file opened, or why not */
    int lt_ok;           /**< 1: cuBLASLt opened and every required symbol found */
    int dnn_ok;          /**< 1: cuDNN opened and every required symbol found */
    char lt_where[512];  /**< the file opened, or why not ("not found (tried ...)") */
    char dnn_where[512]; /**< the same for cuDNN */
    int lt_found;        /**< 1: kmux_cuda_libs_locate found cuBLASLt's file (not opened) */
    int dnn_found;       /**< the same for cuDNN */
    char lt_file[1600];  /**< the file found, and the files rejected before it */
    char dnn_file[1600]; /**< the same for cuDNN */
    struct {
        KMUX_CUDA_DRV_FUNCS(KMUX_CUDA_LIB_FN)
    } drv;
    struct {
        KMUX_CUDA_LT_FUNCS(KMUX_CUDA_LIB_FN)
        KMUX_CUDA_LT_OPTIONAL_FUNCS(KMUX_CUDA_LIB_FN)
    } lt;
    struct {
        KMUX_CUDA_DNN_FUNCS(KMUX_CUDA_LIB_FN)
    } dnn;
} kmux_cuda_libs;

/** The process's table: the driver's entries valid after kmux_cuda_driver_load, cuBLASLt's and
 *  cuDNN's after kmux_cuda_libs_load. Hidden (the plugin's own). */
extern kmux_cuda_libs kmux_cuda_lib;

/** Opens the driver once per process (thread-safe). Returns kmux_cuda_lib.drv_ok;
 *  kmux_cuda_lib.drv_where says which file, or what was tried. Never aborts, never prints. */
int kmux_cuda_driver_load(void);

/** Opens cuBLASLt and cuDNN (and the driver) once per process (thread-safe; later calls return at
 *  once): the first plan that needs them calls it, never the probe. Returns 1 when both are
 *  usable, 0 otherwise: kmux_cuda_lib.*_where say which library was opened from where, or what
 *  was tried, or which symbol is missing. Never aborts, never prints. */
int kmux_cuda_libs_load(void);

/** Finds cuBLASLt's and cuDNN's files once per process without opening them (the search of
 *  kmux_cuda_libs_load, with kmux_so_file_check for dlopen; the loader's cache is listed through
 *  the folders of /etc/ld.so.conf that ldconfig built it from; where neither is in a folder the
 *  search can list, they are loaded to ask the loader's cache). Returns 1 when both were found (or,
 *  once loaded, are usable). */
int kmux_cuda_libs_locate(void);

/** kmux_cuda_libs_locate's answer per library: usable once loaded, found before. */
int kmux_cuda_libs_present(int *lt, int *dnn);

/** Writes "cuBLASLt <file>; cuDNN <file>" (or what was missing; before the load, the files found
 *  and that they are opened on first need) into buf (size bytes). */
void kmux_cuda_libs_describe(char *buf, size_t size);
/** Writes the driver file opened (or what was tried, or its missing symbol) into buf. */
void kmux_cuda_driver_describe(char *buf, size_t size);

#ifndef KMUX_CUDA_LIBS_IMPL /* cuda_libs.c itself names the real symbols for dlsym */
/* driver calls: where cuda.h maps a name to its versioned symbol (cuMemAlloc -> cuMemAlloc_v2),
 * the versioned name is redirected, so either spelling reaches the table entry of the ABI the
 * header chose */
#define cuInit (*kmux_cuda_lib.drv.cuInit)
#define cuDriverGetVersion (*kmux_cuda_lib.drv.cuDriverGetVersion)
#define cuDeviceGetCount (*kmux_cuda_lib.drv.cuDeviceGetCount)
#define cuDeviceGet (*kmux_cuda_lib.drv.cuDeviceGet)
#define cuDeviceGetName (*kmux_cuda_lib.drv.cuDeviceGetName)
#ifdef cuDeviceTotalMem
#define cuDeviceTotalMem_v2 (*kmux_cuda_lib.drv.cuDeviceTotalMem_v2)
#else
#define cuDeviceTotalMem (*kmux_cuda_lib.drv.cuDeviceTotalMem)
#endif
#define cuDeviceGetAttribute (*kmux_cuda_lib.drv.cuDeviceGetAttribute)
#define cuDeviceGetPCIBusId (*kmux_cuda_lib.drv.cuDeviceGetPCIBusId)
#define cuDevicePrimaryCtxRetain (*kmux_cuda_lib.drv.cuDevicePrimaryCtxRetain)
#ifdef cuDevicePrimaryCtxRelease
#define cuDevicePrimaryCtxRelease_v2 (*kmux_cuda_lib.drv.cuDevicePrimaryCtxRelease_v2)
#else
#define cuDevicePrimaryCtxRelease (*kmux_cuda_lib.drv.cuDevicePrimaryCtxRelease)
#endif
#define cuCtxGetCurrent (*kmux_cuda_lib.drv.cuCtxGetCurrent)
#ifdef cuCtxPushCurrent
#define cuCtxPushCurrent_v2 (*kmux_cuda_lib.drv.cuCtxPushCurrent_v2)
#else
#define cuCtxPushCurrent (*kmux_cuda_lib.drv.cuCtxPushCurrent)
#endif
#ifdef cuCtxPopCurrent
#define cuCtxPopCurrent_v2 (*kmux_cuda_lib.drv.cuCtxPopCurrent_v2)
#else
#define cuCtxPopCurrent (*kmux_cuda_lib.drv.cuCtxPopCurrent)
#endif
#define cuGetErrorName (*kmux_cuda_lib.drv.cuGetErrorName)
#define cuGetErrorString (*kmux_cuda_lib.drv.cuGetErrorString)
#ifdef cuMemAlloc
#define cuMemAlloc_v2 (*kmux_cuda_lib.drv.cuMemAlloc_v2)
#else
#define cuMemAlloc (*kmux_cuda_lib.drv.cuMemAlloc)
#endif
#ifdef cuMemFree
#define cuMemFree_v2 (*kmux_cuda_lib.drv.cuMemFree_v2)
#else
#define cuMemFree (*kmux_cuda_lib.drv.cuMemFree)
#endif
#define cuMemAllocAsync (*kmux_cuda_lib.drv.cuMemAllocAsync)
#define cuMemFreeAsync (*kmux_cuda_lib.drv.cuMemFreeAsync)
#define cuMemHostAlloc (*kmux_cuda_lib.drv.cuMemHostAlloc)
#define cuMemFreeHost (*kmux_cuda_lib.drv.cuMemFreeHost)
#define cuMemcpyAsync (*kmux_cuda_lib.drv.cuMemcpyAsync)
#define cuMemsetD8Async (*kmux_cuda_lib.drv.cuMemsetD8Async)
#ifdef cuMemcpy3DAsync
#define cuMemcpy3DAsync_v2 (*kmux_cuda_lib.drv.cuMemcpy3DAsync_v2)
#else
#define cuMemcpy3DAsync (*kmux_cuda_lib.drv.cuMemcpy3DAsync)
#endif
#define cuStreamCreate (*kmux_cuda_lib.drv.cuStreamCreate)
#ifdef cuStreamDestroy
#define cuStreamDestroy_v2 (*kmux_cuda_lib.drv.cuStreamDestroy_v2)
#else
#define cuStreamDestroy (*kmux_cuda_lib.drv.cuStreamDestroy)
#endif
#define cuStreamSynchronize (*kmux_cuda_lib.drv.cuStreamSynchronize)
#define cuStreamWaitEvent (*kmux_cuda_lib.drv.cuStreamWaitEvent)
#define cuEventCreate (*kmux_cuda_lib.drv.cuEventCreate)
#ifdef cuEventDestroy
#define cuEventDestroy_v2 (*kmux_cuda_lib.drv.cuEventDestroy_v2)
#else
#define cuEventDestroy (*kmux_cuda_lib.drv.cuEventDestroy)
#endif
#define cuEventRecord (*kmux_cuda_lib.drv.cuEventRecord)
#define cuEventSynchronize (*kmux_cuda_lib.drv.cuEventSynchronize)
#ifdef cuEventElapsedTime
#define cuEventElapsedTime_v2 (*kmux_cuda_lib.drv.cuEventElapsedTime_v2)
#else
#define cuEventElapsedTime (*kmux_cuda_lib.drv.cuEventElapsedTime)
#endif
#define cuModuleLoadData (*kmux_cuda_lib.drv.cuModuleLoadData)
#define cuModuleUnload (*kmux_cuda_lib.drv.cuModuleUnload)
#define cuModuleGetFunction (*kmux_cuda_lib.drv.cuModuleGetFunction)
#define cuLaunchKernel (*kmux_cuda_lib.drv.cuLaunchKernel)
#define cublasLtCreate (*kmux_cuda_lib.lt.cublasLtCreate)
#define cublasLtDestroy (*kmux_cuda_lib.lt.cublasLtDestroy)
#define cublasLtGetStatusName (*kmux_cuda_lib.lt.cublasLtGetStatusName)
#define cublasLtGetStatusString (*kmux_cuda_lib.lt.cublasLtGetStatusString)
#define cublasLtGetVersion (*kmux_cuda_lib.lt.cublasLtGetVersion)
#define cublasLtMatmul (*kmux_cuda_lib.lt.cublasLtMatmul)
#define cublasLtMatmulAlgoCapGetAttribute (*kmux_cuda_lib.lt.cublasLtMatmulAlgoCapGetAttribute)
#define cublasLtMatmulAlgoConfigGetAttribute                                                       \
    (*kmux_cuda_lib.lt.cublasLtMatmulAlgoConfigGetAttribute)
#define cublasLtMatmulAlgoGetHeuristic (*kmux_cuda_lib.lt.cublasLtMatmulAlgoGetHeuristic)
#define cublasLtMatmulDescSetAttribute (*kmux_cuda_lib.lt.cublasLtMatmulDescSetAttribute)
#define cublasLtMatmulPreferenceSetAttribute                                                       \
    (*kmux_cuda_lib.lt.cublasLtMatmulPreferenceSetAttribute)
#define cublasLtMatrixLayoutSetAttribute (*kmux_cuda_lib.lt.cublasLtMatrixLayoutSetAttribute)
/* the header's static inline *Init wrappers, as they are written there */
#define cublasLtMatmulDescInit(desc, compute, scale)                                               \
    (kmux_cuda_lib.lt.cublasLtMatmulDescInit_internal((desc), sizeof(*(desc)), (compute), (scale)))
#define cublasLtMatmulPreferenceInit(pref)                                                         \
    (kmux_cuda_lib.lt.cublasLtMatmulPreferenceInit_internal((pref), sizeof(*(pref))))
#define cublasLtMatrixLayoutInit(layout, type, rows, cols, ld)                                     \
    (kmux_cuda_lib.lt.cublasLtMatrixLayoutInit_internal((layout), sizeof(*(layout)), (type),       \
                                                        (rows), (cols), (ld)))
#if defined(CUBLAS_VERSION) && CUBLAS_VERSION >= 130000
#define cublasLtEmulationDescInit(desc)                                                            \
    (kmux_cuda_lib.lt.cublasLtEmulationDescInit_internal                                           \
         ? kmux_cuda_lib.lt.cublasLtEmulationDescInit_internal((desc), sizeof(*(desc)))            \
         : CUBLAS_STATUS_NOT_SUPPORTED)
#define cublasLtEmulationDescSetAttribute(...)                                                     \
    (kmux_cuda_lib.lt.cublasLtEmulationDescSetAttribute                                            \
         ? kmux_cuda_lib.lt.cublasLtEmulationDescSetAttribute(__VA_ARGS__)                         \
         : CUBLAS_STATUS_NOT_SUPPORTED)
#endif
#define cudnnConvolutionBackwardData (*kmux_cuda_lib.dnn.cudnnConvolutionBackwardData)
#define cudnnConvolutionBackwardFilter (*kmux_cuda_lib.dnn.cudnnConvolutionBackwardFilter)
#define cudnnConvolutionForward (*kmux_cuda_lib.dnn.cudnnConvolutionForward)
#define cudnnCreate (*kmux_cuda_lib.dnn.cudnnCreate)
#define cudnnCreateConvolutionDescriptor (*kmux_cuda_lib.dnn.cudnnCreateConvolutionDescriptor)
#define cudnnCreateFilterDescriptor (*kmux_cuda_lib.dnn.cudnnCreateFilterDescriptor)
#define cudnnCreateTensorDescriptor (*kmux_cuda_lib.dnn.cudnnCreateTensorDescriptor)
#define cudnnDestroy (*kmux_cuda_lib.dnn.cudnnDestroy)
#define cudnnDestroyConvolutionDescriptor (*kmux_cuda_lib.dnn.cudnnDestroyConvolutionDescriptor)
#define cudnnDestroyFilterDescriptor (*kmux_cuda_lib.dnn.cudnnDestroyFilterDescriptor)
#define cudnnDestroyTensorDescriptor (*kmux_cuda_lib.dnn.cudnnDestroyTensorDescriptor)
#define cudnnGetConvolutionBackwardDataAlgorithm_v7                                                \
    (*kmux_cuda_lib.dnn.cudnnGetConvolutionBackwardDataAlgorithm_v7)
#define cudnnGetConvolutionBackwardDataWorkspaceSize                                               \
    (*kmux_cuda_lib.dnn.cudnnGetConvolutionBackwardDataWorkspaceSize)
#define cudnnGetConvolutionBackwardFilterAlgorithm_v7                                              \
    (*kmux_cuda_lib.dnn.cudnnGetConvolutionBackwardFilterAlgorithm_v7)
#define cudnnGetConvolutionBackwardFilterWorkspaceSize                                             \
    (*kmux_cuda_lib.dnn.cudnnGetConvolutionBackwardFilterWorkspaceSize)
#define cudnnGetConvolutionForwardAlgorithm_v7                                                     \
    (*kmux_cuda_lib.dnn.cudnnGetConvolutionForwardAlgorithm_v7)
#define cudnnGetConvolutionForwardWorkspaceSize                                                    \
    (*kmux_cuda_lib.dnn.cudnnGetConvolutionForwardWorkspaceSize)
#define cudnnGetConvolutionNdDescriptor (*kmux_cuda_lib.dnn.cudnnGetConvolutionNdDescriptor)
#define cudnnGetErrorString (*kmux_cuda_lib.dnn.cudnnGetErrorString)
#define cudnnGetVersion (*kmux_cuda_lib.dnn.cudnnGetVersion)
#define cudnnSetConvolution2dDescriptor (*kmux_cuda_lib.dnn.cudnnSetConvolution2dDescriptor)
#define cudnnSetConvolutionGroupCount (*kmux_cuda_lib.dnn.cudnnSetConvolutionGroupCount)
#define cudnnSetConvolutionMathType (*kmux_cuda_lib.dnn.cudnnSetConvolutionMathType)
#define cudnnSetConvolutionNdDescriptor (*kmux_cuda_lib.dnn.cudnnSetConvolutionNdDescriptor)
#define cudnnSetFilter4dDescriptor (*kmux_cuda_lib.dnn.cudnnSetFilter4dDescriptor)
#define cudnnSetStream (*kmux_cuda_lib.dnn.cudnnSetStream)
#define cudnnSetTensor4dDescriptor (*kmux_cuda_lib.dnn.cudnnSetTensor4dDescriptor)
#endif

#endif
