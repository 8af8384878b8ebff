/*
 * fake_cudnn.c - a fake cuDNN 9 that computes, "libcudnn.so.9", a TEST TOOL written from NVIDIA's
 * cuDNN 9 API reference (cudnn_graph / cudnn_cnn: the legacy convolution API, cudnnMathType_t,
 * cudnnConvolution*AlgoPerf_t, the status codes of cuDNN 9) and <cudnn.h>. It exports every
 * function the CUDA plugin resolves (KMUX_CUDA_DNN_FUNCS of backends/cuda/cuda_libs.h) with the
 * header's signatures, for the fake CUDA driver (fake_cuda_driver.cpp), whose "device" memory is
 * host memory and which is synchronous: a convolution computes on the spot, in the caller's
 * memory, and ignores the stream.
 *
 * Modelled:
 *   - handles and tensor / filter / convolution descriptors (NCHW and NHWC, KCRS and KRSC
 *     filters, groups, dilation, cross-correlation and convolution modes, the math type); a
 *     descriptor that was never set is CUDNN_STATUS_BAD_PARAM where used;
 *   - the problem checks of cudnnConvolution{Forward,BackwardData,BackwardFilter} (and of the
 *     algorithm and workspace queries, which take the same descriptors): BAD_PARAM for unlike
 *     data types, channels that do not match (C != filter C * groups, K not a multiple of
 *     groups) and a filter larger than the padded input; NOT_SUPPORTED for an output whose
 *     dimensions are not the convolution's (descriptors passed in the wrong order land here or
 *     on the channel check), a filter format other than the tensors', a compute type the data
 *     type does not allow (double data: double; float: float; half: float or half; bfloat16:
 *     float), tensors of 2^31 elements or more;
 *   - algorithms, per direction (table ALGOS below): their workspace (none, an index table, an
 *     im2col buffer, FFT buffers, split partials), their determinism, and which kernels they
 *     have: FMA kernels, tensor-core kernels or both. The math type rules: CUDNN_FMA_MATH
 *     restricts an algorithm to its FMA kernels (one with none is NOT_SUPPORTED under it: in the
 *     algorithm query's status field, in the workspace query and at execution); under
 *     CUDNN_DEFAULT_MATH or the TENSOR_OP maths an algorithm with tensor-core kernels runs them,
 *     which for float data is TF32 (inputs rounded to 10 mantissa bits; the device is sm_90);
 *     double data has no tensor-core kernels. FFT and Winograd have their documented limits
 *     (FFT: float, NCHW, one group, stride and dilation 1; Winograd: 3x3, stride and dilation 1,
 *     one group, float or half). DIRECT and the other algorithms this fake does not have come
 *     back with status CUDNN_STATUS_NOT_SUPPORTED, as a real cuDNN reports algorithms it has no
 *     kernel for;
 *   - cudnnGetConvolution*Algorithm_v7: every algorithm of the direction (up to the requested
 *     count), the supported ones first, fastest first (a fixed relative time per algorithm,
 *     tensor-core kernels faster), each with its status, workspace, determinism and math type;
 *   - the three convolutions with alpha/beta read from host memory (double for double data,
 *     float otherwise; beta == 0 never reads the output), accumulation in the compute type
 *     (f64, f32 with fused multiply-add, or f16 rounded after each step), one rounding to the
 *     output type; the workspace: smaller than the algorithm's query is
 *     CUDNN_STATUS_BAD_PARAM_SIZE_INSUFFICIENT, NULL with a nonzero need
 *     CUDNN_STATUS_BAD_PARAM_NULL_POINTER; what the algorithm needs is overwritten with a
 *     pattern (a caller that keeps its own data there sees it trashed, as on a GPU); a pointer
 *     not aligned to its element is CUDNN_STATUS_BAD_PARAM_MISALIGNED_POINTER.
 * FFT and Winograd compute the convolution directly here: their numerics on a GPU differ.
 *
 * Test hooks (not cuDNN's; the computing build only): kmux_fake_cudnn_fail_call(k, status) makes
 * the k-th convolution call from now fail with `status` after its checks, before it writes
 * anything; kmux_fake_cudnn_fail_fired() says whether it did; kmux_fake_cudnn_runs(direction, algo)
 * counts the convolutions each algorithm computed (direction 0 forward, 1 backward data, 2 backward
 * filter).
 *
 * Built a second time with KMUX_FAKE_DNN_NONE (tests/fake_cuda/CMakeLists.txt: the placeholder
 * next to the fake driver): the same descriptors, but a cuDNN that has no convolution algorithm
 * for any problem (the algorithm queries answer CUDNN_STATUS_NOT_SUPPORTED with no result, the
 * workspace queries and convolutions CUDNN_STATUS_NOT_SUPPORTED), so the plugin run against it
 * offers kmux's own kernels only.
 */
#include "fake_fail.h"
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cudnn.h>

#include "dispatch/common/kmux_dtype_codec.h"

#define EXPORT __attribute__((visibility("default")))

#define MAX_DIMS 8
#define MAGIC_TENSOR 0x6b54454eu
#define MAGIC_FILTER 0x6b46494cu
#define MAGIC_CONV 0x6b434f4eu
#define WS_PATTERN 0xa5

struct cudnnContext {
    cudaStream_t stream;
};
/* A 4-D tensor or filter descriptor (dim: n, c, h, w or k, c, r, s); the two cuDNN types hold
 * one each, first, so a pointer to either is a pointer to it. */
typedef struct desc4d {
    uint32_t magic;
    int set;
    cudnnDataType_t type;
    cudnnTensorFormat_t format;
    int dim[4];
} desc4d;
struct cudnnTensorStruct {
    desc4d d;
};
struct cudnnFilterStruct {
    desc4d d;
};
struct cudnnConvolutionStruct {
    uint32_t magic;
    int dims; /* spatial dimensions, 0 until set */
    int pad[MAX_DIMS], stride[MAX_DIMS], dilation[MAX_DIMS];
    cudnnConvolutionMode_t mode;
    cudnnDataType_t compute;
    int groups;
    cudnnMathType_t math;
};

/* ---- test hooks ---------------------------------------------------------------------------- */

static long fail_at;    /* the fail_at-th convolution call from the arming fails; 0: none */
static int fail_status; /* with this status */
static int fail_fired;
static long runs[3][8];

#ifndef KMUX_FAKE_DNN_NONE /* the placeholder has no hooks: nothing of it computes */
EXPORT void kmux_fake_cudnn_fail_call(long k, int status);
EXPORT int kmux_fake_cudnn_fail_fired(void);
EXPORT long kmux_fake_cudnn_runs(int direction, int algo);

EXPORT void kmux_fake_cudnn_fail_call(long k, int status) {
    __atomic_store_n(&fail_status, status, __ATOMIC_SEQ_CST);
    __atomic_store_n(&fail_fired, 0, __ATOMIC_SEQ_CST);
    __atomic_store_n(&fail_at, k, __ATOMIC_SEQ_CST);
}

EXPORT int kmux_fake_cudnn_fail_fired(void) {
    return __atomic_load_n(&fail_fired, __ATOMIC_SEQ_CST);
}

EXPORT long kmux_fake_cudnn_runs(int direction, int algo) {
    if (direction < 0 || direction > 2 || algo < 0 || algo > 7) return -1;
    return __atomic_load_n(&runs[direction][algo], __ATOMIC_SEQ_CST);
}
#endif

/* The status an armed failure gives this call, or SUCCESS. */
static cudnnStatus_t injected(void) {
    long left = __atomic_load_n(&fail_at, __ATOMIC_SEQ_CST);
    if (left <= 0) return CUDNN_STATUS_SUCCESS;
    if (__atomic_sub_fetch(&fail_at, 1, __ATOMIC_SEQ_CST) != 0) return CUDNN_STATUS_SUCCESS;
    __atomic_store_n(&fail_fired, 1, __ATOMIC_SEQ_CST);
    return (cudnnStatus_t)__atomic_load_n(&fail_status, __ATOMIC_SEQ_CST);
}

/* ---- library, handle and descriptors ------------------------------------------------------- */

EXPORT size_t cudnnGetVersion(void) {
    return CUDNN_VERSION;
}

EXPORT const char *cudnnGetErrorString(cudnnStatus_t status) {
    switch (status) {
#define NAME(s)                                                                                    \
    case s:                                                                                        \
        return #s " (kmux fake cuDNN)";
        NAME(CUDNN_STATUS_SUCCESS)
        NAME(CUDNN_STATUS_NOT_INITIALIZED)
        NAME(CUDNN_STATUS_BAD_PARAM)
        NAME(CUDNN_STATUS_BAD_PARAM_NULL_POINTER)
        NAME(CUDNN_STATUS_BAD_PARAM_MISALIGNED_POINTER)
        NAME(CUDNN_STATUS_BAD_PARAM_OUT_OF_BOUND)
        NAME(CUDNN_STATUS_BAD_PARAM_SIZE_INSUFFICIENT)
        NAME(CUDNN_STATUS_BAD_PARAM_SHAPE_MISMATCH)
        NAME(CUDNN_STATUS_NOT_SUPPORTED)
        NAME(CUDNN_STATUS_NOT_SUPPORTED_SHAPE)
        NAME(CUDNN_STATUS_NOT_SUPPORTED_DATA_TYPE)
        NAME(CUDNN_STATUS_NOT_SUPPORTED_LAYOUT)
        NAME(CUDNN_STATUS_INTERNAL_ERROR)
        NAME(CUDNN_STATUS_INTERNAL_ERROR_HOST_ALLOCATION_FAILED)
        NAME(CUDNN_STATUS_INTERNAL_ERROR_DEVICE_ALLOCATION_FAILED)
        NAME(CUDNN_STATUS_EXECUTION_FAILED)
        NAME(CUDNN_STATUS_EXECUTION_FAILED_CUDA_DRIVER)
#undef NAME
    default:
        return "CUDNN_STATUS_UNKNOWN (kmux fake cuDNN)";
    }
}

EXPORT cudnnStatus_t cudnnCreate(cudnnHandle_t *handle) {
    KMUX_FAKE_FAIL_POINT("libcudnn", CUDNN_STATUS_INTERNAL_ERROR);
    if (!handle) return CUDNN_STATUS_BAD_PARAM_NULL_POINTER;
    *handle = calloc(1, sizeof(struct cudnnContext));
    return *handle ? CUDNN_STATUS_SUCCESS : CUDNN_STATUS_INTERNAL_ERROR_HOST_ALLOCATION_FAILED;
}

EXPORT cudnnStatus_t cudnnDestroy(cudnnHandle_t handle) {
    KMUX_FAKE_FAIL_POINT("libcudnn", CUDNN_STATUS_INTERNAL_ERROR);
    free(handle);
    return CUDNN_STATUS_SUCCESS;
}

EXPORT cudnnStatus_t cudnnSetStream(cudnnHandle_t handle, cudaStream_t streamId) {
    KMUX_FAKE_FAIL_POINT("libcudnn", CUDNN_STATUS_INTERNAL_ERROR);
    if (!handle) return CUDNN_STATUS_BAD_PARAM_NULL_POINTER;
    handle->stream = streamId;
    return CUDNN_STATUS_SUCCESS;
}

/* cudnnCreate{Tensor,Filter}Descriptor: a descriptor of `size` bytes, not set yet. */
static cudnnStatus_t create_4d(void **out, size_t size, uint32_t magic) {
    if (!out) return CUDNN_STATUS_BAD_PARAM_NULL_POINTER;
    desc4d *d = calloc(1, size);
    if (!d) return CUDNN_STATUS_INTERNAL_ERROR_HOST_ALLOCATION_FAILED;
    d->magic = magic;
    *out = d;
    return CUDNN_STATUS_SUCCESS;
}

/* Element size of a data type this fake computes with; 0 for the others. */
static size_t elem_size(cudnnDataType_t t) {
    switch (t) {
    case CUDNN_DATA_DOUBLE:
        return 8;
    case CUDNN_DATA_FLOAT:
        return 4;
    case CUDNN_DATA_HALF:
    case CUDNN_DATA_BFLOAT16:
        return 2;
    default:
        return 0;
    }
}

/* cudnnSet{Tensor,Filter}4dDescriptor: NCHW or NHWC (the vectorised formats need int8x4/x32
 * types, which this fake has not), positive sizes, a known type, fewer than 2^31 elements. */
static cudnnStatus_t set_4d(desc4d *d, uint32_t magic, cudnnTensorFormat_t format,
                            cudnnDataType_t type, int a, int b, int c, int e) {
    if (!d) return CUDNN_STATUS_BAD_PARAM_NULL_POINTER;
    if (d->magic != magic) return CUDNN_STATUS_BAD_PARAM_DESCRIPTOR_TYPE;
    if (a <= 0 || b <= 0 || c <= 0 || e <= 0) return CUDNN_STATUS_BAD_PARAM;
    if (format != CUDNN_TENSOR_NCHW && format != CUDNN_TENSOR_NHWC) return CUDNN_STATUS_BAD_PARAM;
    if ((unsigned)type > CUDNN_DATA_FAST_FLOAT_FOR_FP8) return CUDNN_STATUS_BAD_PARAM;
    if ((int64_t)a * b * c * e >= ((int64_t)1 << 31)) return CUDNN_STATUS_NOT_SUPPORTED;
    *d = (desc4d){magic, 1, type, format, {a, b, c, e}};
    return CUDNN_STATUS_SUCCESS;
}

EXPORT cudnnStatus_t cudnnCreateTensorDescriptor(cudnnTensorDescriptor_t *tensorDesc) {
    KMUX_FAKE_FAIL_POINT("libcudnn", CUDNN_STATUS_INTERNAL_ERROR);
    return create_4d((void **)tensorDesc, sizeof(struct cudnnTensorStruct), MAGIC_TENSOR);
}

EXPORT cudnnStatus_t cudnnDestroyTensorDescriptor(cudnnTensorDescriptor_t tensorDesc) {
    KMUX_FAKE_FAIL_POINT("libcudnn", CUDNN_STATUS_INTERNAL_ERROR);
    free(tensorDesc);
    return CUDNN_STATUS_SUCCESS;
}

EXPORT cudnnStatus_t cudnnSetTensor4dDescriptor(cudnnTensorDescriptor_t tensorDesc,
                                                cudnnTensorFormat_t format,
                                                cudnnDataType_t dataType, int n, int c, int h,
                                                int w) {
    KMUX_FAKE_FAIL_POINT("libcudnn", CUDNN_STATUS_INTERNAL_ERROR);
    return set_4d(tensorDesc ? &tensorDesc->d : NULL, MAGIC_TENSOR, format, dataType, n, c, h, w);
}

EXPORT cudnnStatus_t cudnnCreateFilterDescriptor(cudnnFilterDescriptor_t *filterDesc) {
    KMUX_FAKE_FAIL_POINT("libcudnn", CUDNN_STATUS_INTERNAL_ERROR);
    return create_4d((void **)filterDesc, sizeof(struct cudnnFilterStruct), MAGIC_FILTER);
}

EXPORT cudnnStatus_t cudnnDestroyFilterDescriptor(cudnnFilterDescriptor_t filterDesc) {
    KMUX_FAKE_FAIL_POINT("libcudnn", CUDNN_STATUS_INTERNAL_ERROR);
    free(filterDesc);
    return CUDNN_STATUS_SUCCESS;
}

EXPORT cudnnStatus_t cudnnSetFilter4dDescriptor(cudnnFilterDescriptor_t filterDesc,
                                                cudnnDataType_t dataType,
                                                cudnnTensorFormat_t format, int k, int c, int h,
                                                int w) {
    KMUX_FAKE_FAIL_POINT("libcudnn", CUDNN_STATUS_INTERNAL_ERROR);
    return set_4d(filterDesc ? &filterDesc->d : NULL, MAGIC_FILTER, format, dataType, k, c, h, w);
}

EXPORT cudnnStatus_t cudnnCreateConvolutionDescriptor(cudnnConvolutionDescriptor_t *convDesc) {
    KMUX_FAKE_FAIL_POINT("libcudnn", CUDNN_STATUS_INTERNAL_ERROR);
    if (!convDesc) return CUDNN_STATUS_BAD_PARAM_NULL_POINTER;
    struct cudnnConvolutionStruct *d = calloc(1, sizeof *d);
    if (!d) return CUDNN_STATUS_INTERNAL_ERROR_HOST_ALLOCATION_FAILED;
    d->magic = MAGIC_CONV;
    d->groups = 1;
    d->compute = CUDNN_DATA_FLOAT;
    d->math = CUDNN_DEFAULT_MATH;
    *convDesc = d;
    return CUDNN_STATUS_SUCCESS;
}

EXPORT cudnnStatus_t cudnnDestroyConvolutionDescriptor(cudnnConvolutionDescriptor_t convDesc) {
    KMUX_FAKE_FAIL_POINT("libcudnn", CUDNN_STATUS_INTERNAL_ERROR);
    free(convDesc);
    return CUDNN_STATUS_SUCCESS;
}

EXPORT cudnnStatus_t cudnnSetConvolutionNdDescriptor(cudnnConvolutionDescriptor_t convDesc,
                                                     int arrayLength, const int padA[],
                                                     const int filterStrideA[],
                                                     const int dilationA[],
                                                     cudnnConvolutionMode_t mode,
                                                     cudnnDataType_t computeType) {
    KMUX_FAKE_FAIL_POINT("libcudnn", CUDNN_STATUS_INTERNAL_ERROR);
    if (!convDesc || !padA || !filterStrideA || !dilationA)
        return CUDNN_STATUS_BAD_PARAM_NULL_POINTER;
    if (convDesc->magic != MAGIC_CONV) return CUDNN_STATUS_BAD_PARAM_DESCRIPTOR_TYPE;
    if (arrayLength <= 0 || arrayLength > MAX_DIMS) return CUDNN_STATUS_BAD_PARAM;
    if (mode != CUDNN_CONVOLUTION && mode != CUDNN_CROSS_CORRELATION) return CUDNN_STATUS_BAD_PARAM;
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

EXPORT cudnnStatus_t cudnnSetConvolution2dDescriptor(cudnnConvolutionDescriptor_t convDesc,
                                                     int pad_h, int pad_w, int u, int v,
                                                     int dilation_h, int dilation_w,
                                                     cudnnConvolutionMode_t mode,
                                                     cudnnDataType_t computeType) {
    KMUX_FAKE_FAIL_POINT("libcudnn", CUDNN_STATUS_INTERNAL_ERROR);
    const int pad[2] = {pad_h, pad_w}, stride[2] = {u, v}, dil[2] = {dilation_h, dilation_w};
    return cudnnSetConvolutionNdDescriptor(convDesc, 2, pad, stride, dil, mode, computeType);
}

EXPORT cudnnStatus_t cudnnGetConvolutionNdDescriptor(const cudnnConvolutionDescriptor_t convDesc,
                                                     int arrayLengthRequested, int *arrayLength,
                                                     int padA[], int strideA[], int dilationA[],
                                                     cudnnConvolutionMode_t *mode,
                                                     cudnnDataType_t *computeType) {
    KMUX_FAKE_FAIL_POINT("libcudnn", CUDNN_STATUS_INTERNAL_ERROR);
    if (!convDesc || !arrayLength || !padA || !strideA || !dilationA || !mode || !computeType)
        return CUDNN_STATUS_BAD_PARAM_NULL_POINTER;
    if (convDesc->magic != MAGIC_CONV) return CUDNN_STATUS_BAD_PARAM_DESCRIPTOR_TYPE;
    if (arrayLengthRequested < 0 || convDesc->dims == 0) return CUDNN_STATUS_BAD_PARAM;
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
    KMUX_FAKE_FAIL_POINT("libcudnn", CUDNN_STATUS_INTERNAL_ERROR);
    if (!convDesc) return CUDNN_STATUS_BAD_PARAM_NULL_POINTER;
    if (convDesc->magic != MAGIC_CONV) return CUDNN_STATUS_BAD_PARAM_DESCRIPTOR_TYPE;
    if (groupCount <= 0) return CUDNN_STATUS_BAD_PARAM;
    convDesc->groups = groupCount;
    return CUDNN_STATUS_SUCCESS;
}

EXPORT cudnnStatus_t cudnnSetConvolutionMathType(cudnnConvolutionDescriptor_t convDesc,
                                                 cudnnMathType_t mathType) {
    KMUX_FAKE_FAIL_POINT("libcudnn", CUDNN_STATUS_INTERNAL_ERROR);
    if (!convDesc) return CUDNN_STATUS_BAD_PARAM_NULL_POINTER;
    if (convDesc->magic != MAGIC_CONV) return CUDNN_STATUS_BAD_PARAM_DESCRIPTOR_TYPE;
    if (mathType != CUDNN_DEFAULT_MATH && mathType != CUDNN_TENSOR_OP_MATH &&
        mathType != CUDNN_TENSOR_OP_MATH_ALLOW_CONVERSION && mathType != CUDNN_FMA_MATH)
        return CUDNN_STATUS_BAD_PARAM;
    convDesc->math = mathType;
    return CUDNN_STATUS_SUCCESS;
}

/* ---- the problem ----------------------------------------------------------------------------- */

enum { DIR_FWD = 0, DIR_BWD_DATA = 1, DIR_BWD_FILTER = 2 };

typedef struct problem {
    int dir;
    cudnnDataType_t type, compute;
    cudnnTensorFormat_t format;
    cudnnMathType_t math;
    int flip; /* CUDNN_CONVOLUTION: the filter is applied flipped */
    int64_t n, c, h, w, k, r, s, groups, p, q;
    int64_t ph, pw, sh, sw, dh, dw;
} problem;

/* The checks every convolution call makes of its descriptors (x and y: the input and output
 * tensors of the forward convolution, whatever the direction). */
static cudnnStatus_t make_problem(int dir, cudnnHandle_t h, const cudnnTensorDescriptor_t x,
                                  const cudnnFilterDescriptor_t w,
                                  const cudnnConvolutionDescriptor_t cd,
                                  const cudnnTensorDescriptor_t y, problem *p) {
    if (!h || !x || !w || !cd || !y) return CUDNN_STATUS_BAD_PARAM_NULL_POINTER;
    const desc4d *xd = &x->d, *wd = &w->d, *yd = &y->d;
    if (xd->magic != MAGIC_TENSOR || yd->magic != MAGIC_TENSOR || wd->magic != MAGIC_FILTER ||
        cd->magic != MAGIC_CONV)
        return CUDNN_STATUS_BAD_PARAM_DESCRIPTOR_TYPE;
    if (!xd->set || !yd->set || !wd->set || cd->dims == 0) return CUDNN_STATUS_BAD_PARAM;
    if (cd->dims != 2) return CUDNN_STATUS_BAD_PARAM; /* 4-D tensors: 2 spatial dimensions */
    if (xd->type != yd->type || xd->type != wd->type) return CUDNN_STATUS_BAD_PARAM;
    memset(p, 0, sizeof *p);
    *p = (problem){.dir = dir,
                   .type = xd->type,
                   .compute = cd->compute,
                   .format = xd->format,
                   .math = cd->math,
                   .flip = cd->mode == CUDNN_CONVOLUTION,
                   .n = xd->dim[0],
                   .c = xd->dim[1],
                   .h = xd->dim[2],
                   .w = xd->dim[3],
                   .k = wd->dim[0],
                   .r = wd->dim[2],
                   .s = wd->dim[3],
                   .groups = cd->groups,
                   .ph = cd->pad[0],
                   .pw = cd->pad[1],
                   .sh = cd->stride[0],
                   .sw = cd->stride[1],
                   .dh = cd->dilation[0],
                   .dw = cd->dilation[1]};
    if (p->c != (int64_t)wd->dim[1] * p->groups || p->k % p->groups != 0)
        return CUDNN_STATUS_BAD_PARAM;
    const int64_t er = (p->r - 1) * p->dh + 1, es = (p->s - 1) * p->dw + 1;
    if (er > p->h + 2 * p->ph || es > p->w + 2 * p->pw) return CUDNN_STATUS_BAD_PARAM;
    p->p = (p->h + 2 * p->ph - er) / p->sh + 1;
    p->q = (p->w + 2 * p->pw - es) / p->sw + 1;
    if (yd->format != xd->format || wd->format != xd->format)
        return CUDNN_STATUS_NOT_SUPPORTED_LAYOUT;
    if (yd->dim[0] != p->n || yd->dim[1] != p->k || yd->dim[2] != p->p || yd->dim[3] != p->q)
        return CUDNN_STATUS_NOT_SUPPORTED_SHAPE;
    switch (p->type) {
    case CUDNN_DATA_DOUBLE:
        if (p->compute != CUDNN_DATA_DOUBLE) return CUDNN_STATUS_NOT_SUPPORTED_DATA_TYPE;
        break;
    case CUDNN_DATA_FLOAT:
    case CUDNN_DATA_BFLOAT16:
        if (p->compute != CUDNN_DATA_FLOAT) return CUDNN_STATUS_NOT_SUPPORTED_DATA_TYPE;
        break;
    case CUDNN_DATA_HALF:
        if (p->compute != CUDNN_DATA_FLOAT && p->compute != CUDNN_DATA_HALF)
            return CUDNN_STATUS_NOT_SUPPORTED_DATA_TYPE;
        break;
    default:
        return CUDNN_STATUS_NOT_SUPPORTED_DATA_TYPE;
    }
    return CUDNN_STATUS_SUCCESS;
}

/* ---- algorithms -------------------------------------------------------------------------------
 */

enum { K_FMA = 1, K_TC = 2 }; /* the kernels an algorithm has */
enum { RULE_NEVER, RULE_ANY, RULE_NO_F64, RULE_F32_F64, RULE_FFT, RULE_WINOGRAD };
enum { WS_NONE, WS_INDEX, WS_IM2COL, WS_FFT, WS_PARTIALS };

typedef struct algo_spec {
    int algo;
    unsigned kernels;
    int deterministic;
    int rule;
    int ws;
    float time; /* relative, with the FMA kernels; tensor-core kernels take half */
} algo_spec;

#define NEVER(a)                                                                                   \
    { a, 0, 1, RULE_NEVER, WS_NONE, 0 }
static const algo_spec ALGOS[3][8] = {
    {
        {CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM, K_FMA, 1, RULE_ANY, WS_NONE, 3.0f},
        {CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_PRECOMP_GEMM, K_TC, 1, RULE_NO_F64, WS_INDEX, 2.0f},
        {CUDNN_CONVOLUTION_FWD_ALGO_GEMM, K_FMA, 1, RULE_F32_F64, WS_IM2COL, 2.5f},
        NEVER(CUDNN_CONVOLUTION_FWD_ALGO_DIRECT),
        {CUDNN_CONVOLUTION_FWD_ALGO_FFT, K_FMA, 1, RULE_FFT, WS_FFT, 1.5f},
        NEVER(CUDNN_CONVOLUTION_FWD_ALGO_FFT_TILING),
        {CUDNN_CONVOLUTION_FWD_ALGO_WINOGRAD, K_FMA | K_TC, 1, RULE_WINOGRAD, WS_NONE, 1.2f},
        NEVER(CUDNN_CONVOLUTION_FWD_ALGO_WINOGRAD_NONFUSED),
    },
    {
        {CUDNN_CONVOLUTION_BWD_DATA_ALGO_0, K_FMA, 0, RULE_ANY, WS_NONE, 2.0f},
        {CUDNN_CONVOLUTION_BWD_DATA_ALGO_1, K_FMA | K_TC, 1, RULE_ANY, WS_NONE, 2.2f},
        {CUDNN_CONVOLUTION_BWD_DATA_ALGO_FFT, K_FMA, 1, RULE_FFT, WS_FFT, 1.5f},
        NEVER(CUDNN_CONVOLUTION_BWD_DATA_ALGO_FFT_TILING),
        {CUDNN_CONVOLUTION_BWD_DATA_ALGO_WINOGRAD, K_FMA | K_TC, 1, RULE_WINOGRAD, WS_NONE, 1.2f},
        NEVER(CUDNN_CONVOLUTION_BWD_DATA_ALGO_WINOGRAD_NONFUSED),
        {-1, 0, 0, RULE_NEVER, WS_NONE, 0},
        {-1, 0, 0, RULE_NEVER, WS_NONE, 0},
    },
    {
        {CUDNN_CONVOLUTION_BWD_FILTER_ALGO_0, K_FMA, 0, RULE_ANY, WS_NONE, 2.0f},
        {CUDNN_CONVOLUTION_BWD_FILTER_ALGO_1, K_FMA | K_TC, 1, RULE_ANY, WS_NONE, 2.4f},
        {CUDNN_CONVOLUTION_BWD_FILTER_ALGO_FFT, K_FMA, 1, RULE_FFT, WS_FFT, 1.5f},
        {CUDNN_CONVOLUTION_BWD_FILTER_ALGO_3, K_TC, 0, RULE_NO_F64, WS_PARTIALS, 2.2f},
        NEVER(CUDNN_CONVOLUTION_BWD_FILTER_ALGO_WINOGRAD),
        NEVER(CUDNN_CONVOLUTION_BWD_FILTER_ALGO_WINOGRAD_NONFUSED),
        NEVER(CUDNN_CONVOLUTION_BWD_FILTER_ALGO_FFT_TILING),
        {-1, 0, 0, RULE_NEVER, WS_NONE, 0},
    },
};
static const int ALGO_COUNT[3] = {CUDNN_CONVOLUTION_FWD_ALGO_COUNT,
                                  CUDNN_CONVOLUTION_BWD_DATA_ALGO_COUNT,
                                  CUDNN_CONVOLUTION_BWD_FILTER_ALGO_COUNT};

static const algo_spec *spec_of(int dir, int algo) {
    if (algo < 0 || algo >= ALGO_COUNT[dir]) return NULL;
    return &ALGOS[dir][algo]; /* the table is indexed by the enumerators' values */
}

/* How spec runs p: its status, and (on success) whether it runs tensor-core kernels. */
static cudnnStatus_t algo_runs(const algo_spec *a, const problem *p, int *tc) {
    *tc = 0;
#ifdef KMUX_FAKE_DNN_NONE
    (void)a, (void)p;
    return CUDNN_STATUS_NOT_SUPPORTED;
#else
    const int unit = p->sh == 1 && p->sw == 1 && p->dh == 1 && p->dw == 1;
    switch (a->rule) {
    case RULE_NEVER:
        return CUDNN_STATUS_NOT_SUPPORTED;
    case RULE_ANY:
        break;
    case RULE_NO_F64:
        if (p->type == CUDNN_DATA_DOUBLE) return CUDNN_STATUS_NOT_SUPPORTED_DATA_TYPE;
        break;
    case RULE_F32_F64:
        if (p->type != CUDNN_DATA_FLOAT && p->type != CUDNN_DATA_DOUBLE)
            return CUDNN_STATUS_NOT_SUPPORTED_DATA_TYPE;
        break;
    case RULE_FFT:
        if (p->type != CUDNN_DATA_FLOAT) return CUDNN_STATUS_NOT_SUPPORTED_DATA_TYPE;
        if (p->format != CUDNN_TENSOR_NCHW) return CUDNN_STATUS_NOT_SUPPORTED_LAYOUT;
        if (!unit || p->groups != 1) return CUDNN_STATUS_NOT_SUPPORTED_SHAPE;
        break;
    case RULE_WINOGRAD:
        if (p->type != CUDNN_DATA_FLOAT && p->type != CUDNN_DATA_HALF)
            return CUDNN_STATUS_NOT_SUPPORTED_DATA_TYPE;
        if (!unit || p->groups != 1 || p->r != 3 || p->s != 3)
            return CUDNN_STATUS_NOT_SUPPORTED_SHAPE;
        break;
    }
    /* the math type: FMA_MATH keeps an algorithm to its FMA kernels; double data has no
     * tensor-core kernels; otherwise tensor-core kernels run where the algorithm has them */
    const int tc_ok = p->math != CUDNN_FMA_MATH && p->type != CUDNN_DATA_DOUBLE;
    if (tc_ok && (a->kernels & K_TC))
        *tc = 1;
    else if (!(a->kernels & K_FMA))
        return CUDNN_STATUS_NOT_SUPPORTED;
    return CUDNN_STATUS_SUCCESS;
#endif
}

/* The workspace of spec on p, in bytes. */
static size_t ws_bytes(const algo_spec *a, const problem *p) {
    const size_t es = elem_size(p->type);
    const int64_t cg = p->c / p->groups;
    switch (a->ws) {
    case WS_INDEX: /* the precomputed offsets of the filter taps */
        return (((size_t)(cg * p->r * p->s) * sizeof(int)) + 255) / 256 * 256;
    case WS_IM2COL: /* one image's lowered input */
        return (size_t)(cg * p->r * p->s * p->p * p->q) * es;
    case WS_FFT: { /* complex spectra of the padded input, the filters and the output */
        int64_t fh = 1, fw = 1;
        while (fh < p->h + 2 * p->ph)
            fh *= 2;
        while (fw < p->w + 2 * p->pw)
            fw *= 2;
        return (size_t)((p->n * p->c + p->k * p->c + p->n * p->k) * fh * (fw / 2 + 1)) * 8;
    }
    case WS_PARTIALS: /* f32 partial filter gradients of two halves of the batch */
        return (size_t)(2 * p->k * cg * p->r * p->s) * sizeof(float);
    default:
        return 0;
    }
}

/* cudnnMathType_t an algorithm reports: FMA under FMA_MATH; the descriptor's when it runs
 * tensor-core kernels; DEFAULT for FMA kernels under the other maths. */
static cudnnMathType_t reported_math(const problem *p, int tc) {
    if (p->math == CUDNN_FMA_MATH) return CUDNN_FMA_MATH;
    return tc ? p->math : CUDNN_DEFAULT_MATH;
}

typedef struct ranked {
    int algo;
    cudnnStatus_t status;
    float time;
    size_t memory;
    int deterministic;
    cudnnMathType_t math;
} ranked;

static int by_time(const void *a, const void *b) {
    const ranked *x = a, *y = b;
    const int xs = x->status != CUDNN_STATUS_SUCCESS, ys = y->status != CUDNN_STATUS_SUCCESS;
    if (xs != ys) return xs - ys;
    if (x->time != y->time) return x->time < y->time ? -1 : 1;
    return x->algo - y->algo;
}

/* Every algorithm of p's direction, ranked; returns how many (at most requested). */
static int rank_algos(const problem *p, int requested, ranked *out) {
    ranked all[8];
    int n = 0;
    for (int a = 0; a < ALGO_COUNT[p->dir]; a++) {
        const algo_spec *sp = spec_of(p->dir, a);
        int tc = 0;
        cudnnStatus_t s = algo_runs(sp, p, &tc);
        all[n++] = (ranked){a,
                            s,
                            s == CUDNN_STATUS_SUCCESS ? (tc ? sp->time / 2 : sp->time) : -1.0f,
                            s == CUDNN_STATUS_SUCCESS ? ws_bytes(sp, p) : 0,
                            sp->deterministic,
                            reported_math(p, tc)};
    }
    qsort(all, (size_t)n, sizeof all[0], by_time);
    if (requested < n) n = requested;
    memcpy(out, all, sizeof all[0] * (size_t)n);
    return n;
}

/* The shared body of the three algorithm queries: the statuses as cuDNN's: every algorithm is
 * listed with its own status; SUCCESS when the problem is valid. The placeholder build answers
 * NOT_SUPPORTED with none. */
#define PERF_QUERY(dir, x, w, cd, y)                                                               \
    problem p;                                                                                     \
    if (!returnedAlgoCount || !perfResults) return CUDNN_STATUS_BAD_PARAM_NULL_POINTER;            \
    *returnedAlgoCount = 0;                                                                        \
    if (requestedAlgoCount < 1) return CUDNN_STATUS_BAD_PARAM;                                     \
    cudnnStatus_t st = make_problem(dir, handle, x, w, cd, y, &p);                                 \
    if (st != CUDNN_STATUS_SUCCESS) return st;                                                     \
    ranked r[8];                                                                                   \
    int n = rank_algos(&p, requestedAlgoCount, r);                                                 \
    if (KMUX_FAKE_DNN_HAS_ALGOS == 0) return CUDNN_STATUS_NOT_SUPPORTED;                           \
    for (int i = 0; i < n; i++) {                                                                  \
        memset(&perfResults[i], 0, sizeof perfResults[i]);                                         \
        perfResults[i].algo = r[i].algo;                                                           \
        perfResults[i].status = r[i].status;                                                       \
        perfResults[i].time = r[i].time;                                                           \
        perfResults[i].memory = r[i].memory;                                                       \
        perfResults[i].determinism =                                                               \
            r[i].deterministic ? CUDNN_DETERMINISTIC : CUDNN_NON_DETERMINISTIC;                    \
        perfResults[i].mathType = r[i].math;                                                       \
    }                                                                                              \
    *returnedAlgoCount = n;                                                                        \
    return CUDNN_STATUS_SUCCESS

#ifdef KMUX_FAKE_DNN_NONE
#define KMUX_FAKE_DNN_HAS_ALGOS 0
#else
#define KMUX_FAKE_DNN_HAS_ALGOS 1
#endif

EXPORT cudnnStatus_t cudnnGetConvolutionForwardAlgorithm_v7(
    cudnnHandle_t handle, const cudnnTensorDescriptor_t srcDesc,
    const cudnnFilterDescriptor_t filterDesc, const cudnnConvolutionDescriptor_t convDesc,
    const cudnnTensorDescriptor_t destDesc, const int requestedAlgoCount, int *returnedAlgoCount,
    cudnnConvolutionFwdAlgoPerf_t *perfResults) {
    KMUX_FAKE_FAIL_POINT("libcudnn", CUDNN_STATUS_INTERNAL_ERROR);
    PERF_QUERY(DIR_FWD, srcDesc, filterDesc, convDesc, destDesc);
}

EXPORT cudnnStatus_t cudnnGetConvolutionBackwardDataAlgorithm_v7(
    cudnnHandle_t handle, const cudnnFilterDescriptor_t filterDesc,
    const cudnnTensorDescriptor_t diffDesc, const cudnnConvolutionDescriptor_t convDesc,
    const cudnnTensorDescriptor_t gradDesc, const int requestedAlgoCount, int *returnedAlgoCount,
    cudnnConvolutionBwdDataAlgoPerf_t *perfResults) {
    KMUX_FAKE_FAIL_POINT("libcudnn", CUDNN_STATUS_INTERNAL_ERROR);
    PERF_QUERY(DIR_BWD_DATA, gradDesc, filterDesc, convDesc, diffDesc);
}

EXPORT cudnnStatus_t cudnnGetConvolutionBackwardFilterAlgorithm_v7(
    cudnnHandle_t handle, const cudnnTensorDescriptor_t srcDesc,
    const cudnnTensorDescriptor_t diffDesc, const cudnnConvolutionDescriptor_t convDesc,
    const cudnnFilterDescriptor_t gradDesc, const int requestedAlgoCount, int *returnedAlgoCount,
    cudnnConvolutionBwdFilterAlgoPerf_t *perfResults) {
    KMUX_FAKE_FAIL_POINT("libcudnn", CUDNN_STATUS_INTERNAL_ERROR);
    PERF_QUERY(DIR_BWD_FILTER, srcDesc, gradDesc, convDesc, diffDesc);
}

/* The workspace query of one algorithm (the same checks as the convolution itself). */
static cudnnStatus_t ws_query(int dir, cudnnHandle_t handle, const cudnnTensorDescriptor_t x,
                              const cudnnFilterDescriptor_t w,
                              const cudnnConvolutionDescriptor_t cd,
                              const cudnnTensorDescriptor_t y, int algo, size_t *bytes) {
    if (!bytes) return CUDNN_STATUS_BAD_PARAM_NULL_POINTER;
    *bytes = 0;
    problem p;
    cudnnStatus_t s = make_problem(dir, handle, x, w, cd, y, &p);
    if (s != CUDNN_STATUS_SUCCESS) return s;
    const algo_spec *sp = spec_of(dir, algo);
    if (!sp) return CUDNN_STATUS_BAD_PARAM;
    int tc;
    if ((s = algo_runs(sp, &p, &tc)) != CUDNN_STATUS_SUCCESS) return s;
    *bytes = ws_bytes(sp, &p);
    return CUDNN_STATUS_SUCCESS;
}

EXPORT cudnnStatus_t cudnnGetConvolutionForwardWorkspaceSize(
    cudnnHandle_t handle, const cudnnTensorDescriptor_t xDesc, const cudnnFilterDescriptor_t wDesc,
    const cudnnConvolutionDescriptor_t convDesc, const cudnnTensorDescriptor_t yDesc,
    cudnnConvolutionFwdAlgo_t algo, size_t *sizeInBytes) {
    KMUX_FAKE_FAIL_POINT("libcudnn", CUDNN_STATUS_INTERNAL_ERROR);
    return ws_query(DIR_FWD, handle, xDesc, wDesc, convDesc, yDesc, (int)algo, sizeInBytes);
}

EXPORT cudnnStatus_t cudnnGetConvolutionBackwardDataWorkspaceSize(
    cudnnHandle_t handle, const cudnnFilterDescriptor_t wDesc, const cudnnTensorDescriptor_t dyDesc,
    const cudnnConvolutionDescriptor_t convDesc, const cudnnTensorDescriptor_t dxDesc,
    cudnnConvolutionBwdDataAlgo_t algo, size_t *sizeInBytes) {
    KMUX_FAKE_FAIL_POINT("libcudnn", CUDNN_STATUS_INTERNAL_ERROR);
    return ws_query(DIR_BWD_DATA, handle, dxDesc, wDesc, convDesc, dyDesc, (int)algo, sizeInBytes);
}

EXPORT cudnnStatus_t cudnnGetConvolutionBackwardFilterWorkspaceSize(
    cudnnHandle_t handle, const cudnnTensorDescriptor_t xDesc, const cudnnTensorDescriptor_t dyDesc,
    const cudnnConvolutionDescriptor_t convDesc, const cudnnFilterDescriptor_t gradDesc,
    cudnnConvolutionBwdFilterAlgo_t algo, size_t *sizeInBytes) {
    KMUX_FAKE_FAIL_POINT("libcudnn", CUDNN_STATUS_INTERNAL_ERROR);
    return ws_query(DIR_BWD_FILTER, handle, xDesc, gradDesc, convDesc, dyDesc, (int)algo,
                    sizeInBytes);
}

/* ---- computing --------------------------------------------------------------------------------
 */

static size_t x_at(const problem *p, int64_t n, int64_t c, int64_t h, int64_t w) {
    if (p->format == CUDNN_TENSOR_NHWC) return (size_t)(((n * p->h + h) * p->w + w) * p->c + c);
    return (size_t)(((n * p->c + c) * p->h + h) * p->w + w);
}

static size_t y_at(const problem *p, int64_t n, int64_t k, int64_t i, int64_t j) {
    if (p->format == CUDNN_TENSOR_NHWC) return (size_t)(((n * p->p + i) * p->q + j) * p->k + k);
    return (size_t)(((n * p->k + k) * p->p + i) * p->q + j);
}

/* Filter element (k, c within the group, r, s); CUDNN_CONVOLUTION mode applies it flipped. */
static size_t w_at(const problem *p, int64_t k, int64_t c, int64_t r, int64_t s) {
    const int64_t cg = p->c / p->groups;
    if (p->flip) r = p->r - 1 - r, s = p->s - 1 - s;
    if (p->format == CUDNN_TENSOR_NHWC) return (size_t)(((k * p->r + r) * p->s + s) * cg + c);
    return (size_t)(((k * cg + c) * p->r + r) * p->s + s);
}

static double load(const problem *p, const void *base, size_t i, int tf32) {
    switch (p->type) {
    case CUDNN_DATA_DOUBLE:
        return ((const double *)base)[i];
    case CUDNN_DATA_FLOAT: {
        float v = ((const float *)base)[i];
        if (tf32) { /* TF32: nearest, ties to even, at 10 mantissa bits */
            uint32_t u = kmux_f32_bits(v);
            if ((u & 0x7f800000u) != 0x7f800000u)
                v = kmux_f32_from_bits((u + 0x0fffu + ((u >> 13) & 1u)) & ~0x1fffu);
        }
        return v;
    }
    case CUDNN_DATA_HALF:
        return kmux_decode_f32(((const uint16_t *)base)[i], KMUX_F16);
    default:
        return kmux_decode_f32(((const uint16_t *)base)[i], KMUX_BF16);
    }
}

/* Accumulation in the compute type: f64, f32 with fused multiply-add, or f16 (each step
 * rounded to half). */
static double acc_step(const problem *p, double acc, double a, double b) {
    if (p->compute == CUDNN_DATA_DOUBLE) return fma(a, b, acc);
    float r = fmaf((float)a, (float)b, (float)acc);
    if (p->compute == CUDNN_DATA_HALF)
        r = kmux_decode_f32(kmux_encode_f32(r, KMUX_F16, 0), KMUX_F16);
    return r;
}

/* out[i] = alpha * acc + beta * out[i], in the scaling type (double for double data, float
 * otherwise), rounded once to the output type; beta == 0 never reads out[i]. */
static void store(const problem *p, void *base, size_t i, double acc, const void *alpha,
                  const void *beta) {
    if (p->type == CUDNN_DATA_DOUBLE) {
        double a = *(const double *)alpha, b = *(const double *)beta;
        double *o = (double *)base + i;
        *o = b == 0 ? a * acc : a * acc + b * *o;
        return;
    }
    float a = *(const float *)alpha, b = *(const float *)beta, v = a * (float)acc;
    if (b != 0) v += b * (float)load(p, base, i, 0);
    if (p->type == CUDNN_DATA_FLOAT)
        ((float *)base)[i] = v;
    else
        ((uint16_t *)base)[i] =
            (uint16_t)kmux_encode_f32(v, p->type == CUDNN_DATA_HALF ? KMUX_F16 : KMUX_BF16, 0);
}

static void conv_fwd(const problem *p, int tc, const void *alpha, const void *x, const void *w,
                     const void *beta, void *y) {
    const int64_t cg = p->c / p->groups, kg = p->k / p->groups;
    for (int64_t n = 0; n < p->n; n++)
        for (int64_t k = 0; k < p->k; k++)
            for (int64_t i = 0; i < p->p; i++)
                for (int64_t j = 0; j < p->q; j++) {
                    double acc = 0;
                    const int64_t g = k / kg;
                    for (int64_t c = 0; c < cg; c++)
                        for (int64_t r = 0; r < p->r; r++) {
                            int64_t h = i * p->sh - p->ph + r * p->dh;
                            if (h < 0 || h >= p->h) continue;
                            for (int64_t s = 0; s < p->s; s++) {
                                int64_t ww = j * p->sw - p->pw + s * p->dw;
                                if (ww < 0 || ww >= p->w) continue;
                                acc =
                                    acc_step(p, acc, load(p, x, x_at(p, n, g * cg + c, h, ww), tc),
                                             load(p, w, w_at(p, k, c, r, s), tc));
                            }
                        }
                    store(p, y, y_at(p, n, k, i, j), acc, alpha, beta);
                }
}

static void conv_bwd_data(const problem *p, int tc, const void *alpha, const void *w,
                          const void *dy, const void *beta, void *dx) {
    const int64_t cg = p->c / p->groups, kg = p->k / p->groups;
    for (int64_t n = 0; n < p->n; n++)
        for (int64_t ci = 0; ci < p->c; ci++)
            for (int64_t h = 0; h < p->h; h++)
                for (int64_t ww = 0; ww < p->w; ww++) {
                    double acc = 0;
                    const int64_t g = ci / cg, c = ci % cg;
                    for (int64_t k = g * kg; k < (g + 1) * kg; k++)
                        for (int64_t r = 0; r < p->r; r++) {
                            int64_t hi = h + p->ph - r * p->dh;
                            if (hi < 0 || hi % p->sh != 0 || hi / p->sh >= p->p) continue;
                            for (int64_t s = 0; s < p->s; s++) {
                                int64_t wj = ww + p->pw - s * p->dw;
                                if (wj < 0 || wj % p->sw != 0 || wj / p->sw >= p->q) continue;
                                acc = acc_step(
                                    p, acc, load(p, dy, y_at(p, n, k, hi / p->sh, wj / p->sw), tc),
                                    load(p, w, w_at(p, k, c, r, s), tc));
                            }
                        }
                    store(p, dx, x_at(p, n, ci, h, ww), acc, alpha, beta);
                }
}

static void conv_bwd_filter(const problem *p, int tc, const void *alpha, const void *x,
                            const void *dy, const void *beta, void *dw) {
    const int64_t cg = p->c / p->groups, kg = p->k / p->groups;
    for (int64_t k = 0; k < p->k; k++)
        for (int64_t c = 0; c < cg; c++)
            for (int64_t r = 0; r < p->r; r++)
                for (int64_t s = 0; s < p->s; s++) {
                    double acc = 0;
                    const int64_t ci = k / kg * cg + c;
                    for (int64_t n = 0; n < p->n; n++)
                        for (int64_t i = 0; i < p->p; i++) {
                            int64_t h = i * p->sh - p->ph + r * p->dh;
                            if (h < 0 || h >= p->h) continue;
                            for (int64_t j = 0; j < p->q; j++) {
                                int64_t ww = j * p->sw - p->pw + s * p->dw;
                                if (ww < 0 || ww >= p->w) continue;
                                acc = acc_step(p, acc, load(p, x, x_at(p, n, ci, h, ww), tc),
                                               load(p, dy, y_at(p, n, k, i, j), tc));
                            }
                        }
                    store(p, dw, w_at(p, k, c, r, s), acc, alpha, beta);
                }
}

static int misaligned(const void *ptr, size_t es) {
    return es && (uintptr_t)ptr % es != 0;
}

/* The checks and the computation of one convolution call; a, b: its two inputs, out: its
 * output, in the order of the direction's call. */
static cudnnStatus_t convolve(int dir, cudnnHandle_t handle, const void *alpha,
                              const cudnnTensorDescriptor_t x, const cudnnFilterDescriptor_t w,
                              const cudnnConvolutionDescriptor_t cd,
                              const cudnnTensorDescriptor_t y, int algo, void *ws, size_t ws_size,
                              const void *beta, const void *a, const void *b, void *out) {
    problem p;
    cudnnStatus_t s = make_problem(dir, handle, x, w, cd, y, &p);
    if (s != CUDNN_STATUS_SUCCESS) return s;
    const algo_spec *sp = spec_of(dir, algo);
    if (!sp) return CUDNN_STATUS_BAD_PARAM;
    int tc;
    if ((s = algo_runs(sp, &p, &tc)) != CUDNN_STATUS_SUCCESS) return s;
    if (!alpha || !beta || !a || !b || !out) return CUDNN_STATUS_BAD_PARAM_NULL_POINTER;
    const size_t es = elem_size(p.type);
    if (misaligned(a, es) || misaligned(b, es) || misaligned(out, es))
        return CUDNN_STATUS_BAD_PARAM_MISALIGNED_POINTER;
    const size_t need = ws_bytes(sp, &p);
    if (ws_size < need) return CUDNN_STATUS_BAD_PARAM_SIZE_INSUFFICIENT;
    if (need && !ws) return CUDNN_STATUS_BAD_PARAM_NULL_POINTER;
    if ((s = injected()) != CUDNN_STATUS_SUCCESS) return s;
    if (need) memset(ws, WS_PATTERN, need); /* the algorithm's scratch */
    if (dir == DIR_FWD)
        conv_fwd(&p, tc, alpha, a, b, beta, out);
    else if (dir == DIR_BWD_DATA)
        conv_bwd_data(&p, tc, alpha, a, b, beta, out);
    else
        conv_bwd_filter(&p, tc, alpha, a, b, beta, out);
    __atomic_add_fetch(&runs[dir][algo], 1, __ATOMIC_SEQ_CST);
    return CUDNN_STATUS_SUCCESS;
}

EXPORT cudnnStatus_t cudnnConvolutionForward(cudnnHandle_t handle, const void *alpha,
                                             const cudnnTensorDescriptor_t xDesc, const void *x,
                                             const cudnnFilterDescriptor_t wDesc, const void *w,
                                             const cudnnConvolutionDescriptor_t convDesc,
                                             cudnnConvolutionFwdAlgo_t algo, void *workSpace,
                                             size_t workSpaceSizeInBytes, const void *beta,
                                             const cudnnTensorDescriptor_t yDesc, void *y) {
    KMUX_FAKE_FAIL_POINT("libcudnn", CUDNN_STATUS_INTERNAL_ERROR);
    return convolve(DIR_FWD, handle, alpha, xDesc, wDesc, convDesc, yDesc, (int)algo, workSpace,
                    workSpaceSizeInBytes, beta, x, w, y);
}

EXPORT cudnnStatus_t cudnnConvolutionBackwardData(
    cudnnHandle_t handle, const void *alpha, const cudnnFilterDescriptor_t wDesc, const void *w,
    const cudnnTensorDescriptor_t dyDesc, const void *dy,
    const cudnnConvolutionDescriptor_t convDesc, cudnnConvolutionBwdDataAlgo_t algo,
    void *workSpace, size_t workSpaceSizeInBytes, const void *beta,
    const cudnnTensorDescriptor_t dxDesc, void *dx) {
    KMUX_FAKE_FAIL_POINT("libcudnn", CUDNN_STATUS_INTERNAL_ERROR);
    return convolve(DIR_BWD_DATA, handle, alpha, dxDesc, wDesc, convDesc, dyDesc, (int)algo,
                    workSpace, workSpaceSizeInBytes, beta, w, dy, dx);
}

EXPORT cudnnStatus_t cudnnConvolutionBackwardFilter(
    cudnnHandle_t handle, const void *alpha, const cudnnTensorDescriptor_t xDesc, const void *x,
    const cudnnTensorDescriptor_t dyDesc, const void *dy,
    const cudnnConvolutionDescriptor_t convDesc, cudnnConvolutionBwdFilterAlgo_t algo,
    void *workSpace, size_t workSpaceSizeInBytes, const void *beta,
    const cudnnFilterDescriptor_t dwDesc, void *dw) {
    KMUX_FAKE_FAIL_POINT("libcudnn", CUDNN_STATUS_INTERNAL_ERROR);
    return convolve(DIR_BWD_FILTER, handle, alpha, xDesc, dwDesc, convDesc, dyDesc, (int)algo,
                    workSpace, workSpaceSizeInBytes, beta, x, dy, dw);
}
