/*
 * cuda_libs.h - cuBLASLt and cuDNN, opened at run time (dlopen) instead of linked: the plugin has
 * no NEEDED entry for either, so it loads on a host without them (and reports which one is
 * missing), and tests can put fakes in their place.
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
 *      nvidia/{cublas,cudnn}/lib, the prefix taken from VIRTUAL_ENV and from a loaded
 *      libpython3.X or the python3.X executable).
 * Sonames: libcublasLt.so.13 then libcublasLt.so.12; libcudnn.so.9.
 */
#ifndef KMUX_CUDA_LIBS_H
#define KMUX_CUDA_LIBS_H

#include <stddef.h>

#include <cublasLt.h>
#include <cudnn.h>

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

/** The opened libraries: filled once per process by kmux_cuda_libs_load, read-only after it. */
typedef struct kmux_cuda_libs {
    int lt_ok;           /**< 1: cuBLASLt opened and every required symbol found */
    int dnn_ok;          /**< 1: cuDNN opened and every required symbol found */
    char lt_where[512];  /**< the file opened, or why not ("not found (tried ...)") */
    char dnn_where[512]; /**< the same for cuDNN */
    struct {
        KMUX_CUDA_LT_FUNCS(KMUX_CUDA_LIB_FN)
        KMUX_CUDA_LT_OPTIONAL_FUNCS(KMUX_CUDA_LIB_FN)
    } lt;
    struct {
        KMUX_CUDA_DNN_FUNCS(KMUX_CUDA_LIB_FN)
    } dnn;
} kmux_cuda_libs;

/** The process's table; valid after kmux_cuda_libs_load. Hidden (the plugin's own). */
extern kmux_cuda_libs kmux_cuda_lib;

/** Opens cuBLASLt and cuDNN once per process (thread-safe; later calls return at once).
 *  Returns 1 when both are usable, 0 otherwise: kmux_cuda_lib.lt_where / dnn_where say which
 *  library was opened from where, or what was tried. Never aborts, never prints. */
int kmux_cuda_libs_load(void);

/** Writes "cuBLASLt <file>; cuDNN <file>" (or what was missing) into buf (size bytes). */
void kmux_cuda_libs_describe(char *buf, size_t size);

#ifndef KMUX_CUDA_LIBS_IMPL /* cuda_libs.c itself names the real symbols for dlsym */
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
