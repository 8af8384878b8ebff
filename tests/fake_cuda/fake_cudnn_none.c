/*
 * fake_cudnn_none.c - a fake cuDNN 9, "libcudnn.so.9", a TEST TOOL that never computes: it
 * exports every cuDNN function the CUDA plugin resolves (KMUX_CUDA_DNN_FUNCS of
 * backends/cuda/cuda_libs.h) with <cudnn.h>'s signatures, and models a cuDNN that has no
 * convolution algorithm for any problem: handles and descriptors are real small allocations
 * (create / set / destroy succeed, a convolution descriptor reads back what was set),
 * cudnnGetConvolution*Algorithm_v7 answer returnedAlgoCount = 0 with CUDNN_STATUS_NOT_SUPPORTED,
 * the workspace queries and cudnnConvolution* are CUDNN_STATUS_NOT_SUPPORTED. Put next to the
 * fake driver (tests/fake_cuda), the plugin run against it offers kmux's own kernels only. A
 * computing fake cuDNN (with the graph API the plugin is to move to) is not written yet.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cudnn.h>

#define EXPORT __attribute__((visibility("default")))

#define KMUX_FAKE_DNN_MAX_DIMS 8

struct cudnnContext {
    cudaStream_t stream;
};
struct cudnnTensorStruct {
    int set;
};
struct cudnnFilterStruct {
    int set;
};
struct cudnnConvolutionStruct {
    int dims; /* spatial dimensions, 0 until set */
    int pad[KMUX_FAKE_DNN_MAX_DIMS], stride[KMUX_FAKE_DNN_MAX_DIMS],
        dilation[KMUX_FAKE_DNN_MAX_DIMS];
    cudnnConvolutionMode_t mode;
    cudnnDataType_t compute;
    int groups;
    cudnnMathType_t math;
};

EXPORT size_t cudnnGetVersion(void) {
    return CUDNN_VERSION;
}

EXPORT const char *cudnnGetErrorString(cudnnStatus_t status) {
    switch (status) {
    case CUDNN_STATUS_SUCCESS:
        return "CUDNN_STATUS_SUCCESS (kmux fake cuDNN)";
    case CUDNN_STATUS_NOT_INITIALIZED:
        return "CUDNN_STATUS_NOT_INITIALIZED (kmux fake cuDNN)";
    case CUDNN_STATUS_BAD_PARAM:
        return "CUDNN_STATUS_BAD_PARAM (kmux fake cuDNN)";
    case CUDNN_STATUS_ALLOC_FAILED:
        return "CUDNN_STATUS_ALLOC_FAILED (kmux fake cuDNN)";
    case CUDNN_STATUS_NOT_SUPPORTED:
        return "CUDNN_STATUS_NOT_SUPPORTED (kmux fake cuDNN: no algorithm for any problem)";
    default:
        return "CUDNN_STATUS_UNKNOWN (kmux fake cuDNN)";
    }
}

EXPORT cudnnStatus_t cudnnCreate(cudnnHandle_t *handle) {
    if (!handle) return CUDNN_STATUS_BAD_PARAM;
    *handle = calloc(1, sizeof(struct cudnnContext));
    return *handle ? CUDNN_STATUS_SUCCESS : CUDNN_STATUS_ALLOC_FAILED;
}

EXPORT cudnnStatus_t cudnnDestroy(cudnnHandle_t handle) {
    free(handle);
    return CUDNN_STATUS_SUCCESS;
}

EXPORT cudnnStatus_t cudnnSetStream(cudnnHandle_t handle, cudaStream_t streamId) {
    if (!handle) return CUDNN_STATUS_BAD_PARAM;
    handle->stream = streamId;
    return CUDNN_STATUS_SUCCESS;
}

EXPORT cudnnStatus_t cudnnCreateTensorDescriptor(cudnnTensorDescriptor_t *tensorDesc) {
    if (!tensorDesc) return CUDNN_STATUS_BAD_PARAM;
    *tensorDesc = calloc(1, sizeof(struct cudnnTensorStruct));
    return *tensorDesc ? CUDNN_STATUS_SUCCESS : CUDNN_STATUS_ALLOC_FAILED;
}

EXPORT cudnnStatus_t cudnnDestroyTensorDescriptor(cudnnTensorDescriptor_t tensorDesc) {
    free(tensorDesc);
    return CUDNN_STATUS_SUCCESS;
}

EXPORT cudnnStatus_t cudnnSetTensor4dDescriptor(cudnnTensorDescriptor_t tensorDesc,
                                                cudnnTensorFormat_t format,
                                                cudnnDataType_t dataType, int n, int c, int h,
                                                int w) {
    (void)format, (void)dataType;
    if (!tensorDesc || n <= 0 || c <= 0 || h <= 0 || w <= 0) return CUDNN_STATUS_BAD_PARAM;
    tensorDesc->set = 1;
    return CUDNN_STATUS_SUCCESS;
}

EXPORT cudnnStatus_t cudnnCreateFilterDescriptor(cudnnFilterDescriptor_t *filterDesc) {
    if (!filterDesc) return CUDNN_STATUS_BAD_PARAM;
    *filterDesc = calloc(1, sizeof(struct cudnnFilterStruct));
    return *filterDesc ? CUDNN_STATUS_SUCCESS : CUDNN_STATUS_ALLOC_FAILED;
}

EXPORT cudnnStatus_t cudnnDestroyFilterDescriptor(cudnnFilterDescriptor_t filterDesc) {
    free(filterDesc);
    return CUDNN_STATUS_SUCCESS;
}

EXPORT cudnnStatus_t cudnnSetFilter4dDescriptor(cudnnFilterDescriptor_t filterDesc,
                                                cudnnDataType_t dataType,
                                                cudnnTensorFormat_t format, int k, int c, int h,
                                                int w) {
    (void)dataType, (void)format;
    if (!filterDesc || k <= 0 || c <= 0 || h <= 0 || w <= 0) return CUDNN_STATUS_BAD_PARAM;
    filterDesc->set = 1;
    return CUDNN_STATUS_SUCCESS;
}

EXPORT cudnnStatus_t cudnnCreateConvolutionDescriptor(cudnnConvolutionDescriptor_t *convDesc) {
    if (!convDesc) return CUDNN_STATUS_BAD_PARAM;
    struct cudnnConvolutionStruct *d = calloc(1, sizeof *d);
    if (!d) return CUDNN_STATUS_ALLOC_FAILED;
    d->groups = 1;
    d->compute = CUDNN_DATA_FLOAT;
    *convDesc = d;
    return CUDNN_STATUS_SUCCESS;
}

EXPORT cudnnStatus_t cudnnDestroyConvolutionDescriptor(cudnnConvolutionDescriptor_t convDesc) {
    free(convDesc);
    return CUDNN_STATUS_SUCCESS;
}

EXPORT cudnnStatus_t cudnnSetConvolution2dDescriptor(cudnnConvolutionDescriptor_t convDesc,
                                                     int pad_h, int pad_w, int u, int v,
                                                     int dilation_h, int dilation_w,
                                                     cudnnConvolutionMode_t mode,
                                                     cudnnDataType_t computeType) {
    if (!convDesc || pad_h < 0 || pad_w < 0 || u <= 0 || v <= 0 || dilation_h <= 0 ||
        dilation_w <= 0)
        return CUDNN_STATUS_BAD_PARAM;
    convDesc->dims = 2;
    convDesc->pad[0] = pad_h, convDesc->pad[1] = pad_w;
    convDesc->stride[0] = u, convDesc->stride[1] = v;
    convDesc->dilation[0] = dilation_h, convDesc->dilation[1] = dilation_w;
    convDesc->mode = mode;
    convDesc->compute = computeType;
    return CUDNN_STATUS_SUCCESS;
}

EXPORT cudnnStatus_t cudnnSetConvolutionNdDescriptor(cudnnConvolutionDescriptor_t convDesc,
                                                     int arrayLength, const int padA[],
                                                     const int filterStrideA[],
                                                     const int dilationA[],
                                                     cudnnConvolutionMode_t mode,
                                                     cudnnDataType_t computeType) {
    if (!convDesc || arrayLength <= 0 || arrayLength > KMUX_FAKE_DNN_MAX_DIMS || !padA ||
        !filterStrideA || !dilationA)
        return CUDNN_STATUS_BAD_PARAM;
    for (int i = 0; i < arrayLength; i++)
        if (padA[i] < 0 || filterStrideA[i] <= 0 || dilationA[i] <= 0)
            return CUDNN_STATUS_BAD_PARAM;
    convDesc->dims = arrayLength;
    memcpy(convDesc->pad, padA, sizeof(int) * (size_t)arrayLength);
    memcpy(convDesc->stride, filterStrideA, sizeof(int) * (size_t)arrayLength);
    memcpy(convDesc->dilation, dilationA, sizeof(int) * (size_t)arrayLength);
    convDesc->mode = mode;
    convDesc->compute = computeType;
    return CUDNN_STATUS_SUCCESS;
}

EXPORT cudnnStatus_t cudnnGetConvolutionNdDescriptor(const cudnnConvolutionDescriptor_t convDesc,
                                                     int arrayLengthRequested, int *arrayLength,
                                                     int padA[], int strideA[], int dilationA[],
                                                     cudnnConvolutionMode_t *mode,
                                                     cudnnDataType_t *computeType) {
    if (!convDesc || !arrayLength || !padA || !strideA || !dilationA || !mode || !computeType ||
        arrayLengthRequested < 0)
        return CUDNN_STATUS_BAD_PARAM;
    int n = convDesc->dims < arrayLengthRequested ? convDesc->dims : arrayLengthRequested;
    *arrayLength = convDesc->dims;
    for (int i = 0; i < n; i++) {
        padA[i] = convDesc->pad[i];
        strideA[i] = convDesc->stride[i];
        dilationA[i] = convDesc->dilation[i];
    }
    *mode = convDesc->mode;
    *computeType = convDesc->compute;
    return CUDNN_STATUS_SUCCESS;
}

EXPORT cudnnStatus_t cudnnSetConvolutionGroupCount(cudnnConvolutionDescriptor_t convDesc,
                                                   int groupCount) {
    if (!convDesc || groupCount <= 0) return CUDNN_STATUS_BAD_PARAM;
    convDesc->groups = groupCount;
    return CUDNN_STATUS_SUCCESS;
}

EXPORT cudnnStatus_t cudnnSetConvolutionMathType(cudnnConvolutionDescriptor_t convDesc,
                                                 cudnnMathType_t mathType) {
    if (!convDesc) return CUDNN_STATUS_BAD_PARAM;
    convDesc->math = mathType;
    return CUDNN_STATUS_SUCCESS;
}

/* No algorithm for any problem. */
EXPORT cudnnStatus_t cudnnGetConvolutionForwardAlgorithm_v7(
    cudnnHandle_t handle, const cudnnTensorDescriptor_t srcDesc,
    const cudnnFilterDescriptor_t filterDesc, const cudnnConvolutionDescriptor_t convDesc,
    const cudnnTensorDescriptor_t destDesc, const int requestedAlgoCount, int *returnedAlgoCount,
    cudnnConvolutionFwdAlgoPerf_t *perfResults) {
    (void)srcDesc, (void)filterDesc, (void)convDesc, (void)destDesc, (void)perfResults;
    if (!handle || !returnedAlgoCount || requestedAlgoCount < 1) return CUDNN_STATUS_BAD_PARAM;
    *returnedAlgoCount = 0;
    return CUDNN_STATUS_NOT_SUPPORTED;
}

EXPORT cudnnStatus_t cudnnGetConvolutionBackwardDataAlgorithm_v7(
    cudnnHandle_t handle, const cudnnFilterDescriptor_t filterDesc,
    const cudnnTensorDescriptor_t diffDesc, const cudnnConvolutionDescriptor_t convDesc,
    const cudnnTensorDescriptor_t gradDesc, const int requestedAlgoCount, int *returnedAlgoCount,
    cudnnConvolutionBwdDataAlgoPerf_t *perfResults) {
    (void)filterDesc, (void)diffDesc, (void)convDesc, (void)gradDesc, (void)perfResults;
    if (!handle || !returnedAlgoCount || requestedAlgoCount < 1) return CUDNN_STATUS_BAD_PARAM;
    *returnedAlgoCount = 0;
    return CUDNN_STATUS_NOT_SUPPORTED;
}

EXPORT cudnnStatus_t cudnnGetConvolutionBackwardFilterAlgorithm_v7(
    cudnnHandle_t handle, const cudnnTensorDescriptor_t srcDesc,
    const cudnnTensorDescriptor_t diffDesc, const cudnnConvolutionDescriptor_t convDesc,
    const cudnnFilterDescriptor_t gradDesc, const int requestedAlgoCount, int *returnedAlgoCount,
    cudnnConvolutionBwdFilterAlgoPerf_t *perfResults) {
    (void)srcDesc, (void)diffDesc, (void)convDesc, (void)gradDesc, (void)perfResults;
    if (!handle || !returnedAlgoCount || requestedAlgoCount < 1) return CUDNN_STATUS_BAD_PARAM;
    *returnedAlgoCount = 0;
    return CUDNN_STATUS_NOT_SUPPORTED;
}

EXPORT cudnnStatus_t cudnnGetConvolutionForwardWorkspaceSize(
    cudnnHandle_t handle, const cudnnTensorDescriptor_t xDesc, const cudnnFilterDescriptor_t wDesc,
    const cudnnConvolutionDescriptor_t convDesc, const cudnnTensorDescriptor_t yDesc,
    cudnnConvolutionFwdAlgo_t algo, size_t *sizeInBytes) {
    (void)handle, (void)xDesc, (void)wDesc, (void)convDesc, (void)yDesc, (void)algo;
    if (sizeInBytes) *sizeInBytes = 0;
    return CUDNN_STATUS_NOT_SUPPORTED;
}

EXPORT cudnnStatus_t cudnnGetConvolutionBackwardDataWorkspaceSize(
    cudnnHandle_t handle, const cudnnFilterDescriptor_t wDesc, const cudnnTensorDescriptor_t dyDesc,
    const cudnnConvolutionDescriptor_t convDesc, const cudnnTensorDescriptor_t dxDesc,
    cudnnConvolutionBwdDataAlgo_t algo, size_t *sizeInBytes) {
    (void)handle, (void)wDesc, (void)dyDesc, (void)convDesc, (void)dxDesc, (void)algo;
    if (sizeInBytes) *sizeInBytes = 0;
    return CUDNN_STATUS_NOT_SUPPORTED;
}

EXPORT cudnnStatus_t cudnnGetConvolutionBackwardFilterWorkspaceSize(
    cudnnHandle_t handle, const cudnnTensorDescriptor_t xDesc, const cudnnTensorDescriptor_t dyDesc,
    const cudnnConvolutionDescriptor_t convDesc, const cudnnFilterDescriptor_t gradDesc,
    cudnnConvolutionBwdFilterAlgo_t algo, size_t *sizeInBytes) {
    (void)handle, (void)xDesc, (void)dyDesc, (void)convDesc, (void)gradDesc, (void)algo;
    if (sizeInBytes) *sizeInBytes = 0;
    return CUDNN_STATUS_NOT_SUPPORTED;
}

EXPORT cudnnStatus_t cudnnConvolutionForward(cudnnHandle_t handle, const void *alpha,
                                             const cudnnTensorDescriptor_t xDesc, const void *x,
                                             const cudnnFilterDescriptor_t wDesc, const void *w,
                                             const cudnnConvolutionDescriptor_t convDesc,
                                             cudnnConvolutionFwdAlgo_t algo, void *workSpace,
                                             size_t workSpaceSizeInBytes, const void *beta,
                                             const cudnnTensorDescriptor_t yDesc, void *y) {
    (void)handle, (void)alpha, (void)xDesc, (void)x, (void)wDesc, (void)w, (void)convDesc;
    (void)algo, (void)workSpace, (void)workSpaceSizeInBytes, (void)beta, (void)yDesc, (void)y;
    return CUDNN_STATUS_NOT_SUPPORTED;
}

EXPORT cudnnStatus_t cudnnConvolutionBackwardData(
    cudnnHandle_t handle, const void *alpha, const cudnnFilterDescriptor_t wDesc, const void *w,
    const cudnnTensorDescriptor_t dyDesc, const void *dy,
    const cudnnConvolutionDescriptor_t convDesc, cudnnConvolutionBwdDataAlgo_t algo,
    void *workSpace, size_t workSpaceSizeInBytes, const void *beta,
    const cudnnTensorDescriptor_t dxDesc, void *dx) {
    (void)handle, (void)alpha, (void)wDesc, (void)w, (void)dyDesc, (void)dy, (void)convDesc;
    (void)algo, (void)workSpace, (void)workSpaceSizeInBytes, (void)beta, (void)dxDesc, (void)dx;
    return CUDNN_STATUS_NOT_SUPPORTED;
}

EXPORT cudnnStatus_t cudnnConvolutionBackwardFilter(
    cudnnHandle_t handle, const void *alpha, const cudnnTensorDescriptor_t xDesc, const void *x,
    const cudnnTensorDescriptor_t dyDesc, const void *dy,
    const cudnnConvolutionDescriptor_t convDesc, cudnnConvolutionBwdFilterAlgo_t algo,
    void *workSpace, size_t workSpaceSizeInBytes, const void *beta,
    const cudnnFilterDescriptor_t dwDesc, void *dw) {
    (void)handle, (void)alpha, (void)xDesc, (void)x, (void)dyDesc, (void)dy, (void)convDesc;
    (void)algo, (void)workSpace, (void)workSpaceSizeInBytes, (void)beta, (void)dwDesc, (void)dw;
    return CUDNN_STATUS_NOT_SUPPORTED;
}
