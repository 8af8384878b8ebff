/*
 * cuda_kernels.cu - the CUDA backend's own kernels: GEMM post-processing and byte packing
 * (see cuda_kernels.h). CUDA C++ only for the kernels; the launchers have C linkage.
 */
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include "cuda_kernels.h"

namespace {

constexpr int kThreads = 256;
constexpr int64_t kMaxBlocks = 65535;

unsigned blocks_for(int64_t total) {
    int64_t b = (total + kThreads - 1) / kThreads;
    if (b > kMaxBlocks) b = kMaxBlocks;
    if (b < 1) b = 1;
    return static_cast<unsigned>(b);
}

template <typename T> struct io;
template <> struct io<double> {
    static __device__ double load(const void *p, int64_t i) {
        return static_cast<const double *>(p)[i];
    }
    static __device__ void store(void *p, int64_t i, double v) {
        static_cast<double *>(p)[i] = v;
    }
};
template <> struct io<float> {
    static __device__ float load(const void *p, int64_t i) {
        return static_cast<const float *>(p)[i];
    }
    static __device__ void store(void *p, int64_t i, float v) {
        static_cast<float *>(p)[i] = v;
    }
};
template <> struct io<__half> {
    static __device__ float load(const void *p, int64_t i) {
        return __half2float(static_cast<const __half *>(p)[i]);
    }
    static __device__ void store(void *p, int64_t i, float v) {
        static_cast<__half *>(p)[i] = __float2half_rn(v);
    }
};
template <> struct io<__nv_bfloat16> {
    static __device__ float load(const void *p, int64_t i) {
        return __bfloat162float(static_cast<const __nv_bfloat16 *>(p)[i]);
    }
    static __device__ void store(void *p, int64_t i, float v) {
        static_cast<__nv_bfloat16 *>(p)[i] = __float2bfloat16_rn(v);
    }
};

template <typename A> __device__ A gelu_tanh(A x) {
    const A k0 = A(0.7978845608028654); /* sqrt(2 / pi) */
    const A k1 = A(0.044715);
    return A(0.5) * x * (A(1) + tanh(k0 * (x + k1 * x * x * x)));
}

/* Max of non-negative floats through their bit patterns (monotonic for x >= 0). */
__device__ void atomic_max_nonneg(float *addr, float v) {
    atomicMax(reinterpret_cast<int *>(addr), __float_as_int(v));
}

/* D element type T, arithmetic type A (double for f64, float otherwise), bias element type B. */
template <typename T, typename A, typename B> __global__ void post_kernel(kmux_cuda_post_args a) {
    const int64_t total = a.rows * a.cols * a.batch;
    float local_amax = 0.0f;
    for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < total;
         i += (int64_t)gridDim.x * blockDim.x) {
        int64_t r = i % a.rows;
        int64_t rest = i / a.rows;
        int64_t c = rest % a.cols;
        int64_t b = rest / a.cols;
        int64_t di = b * a.stride_d + r + c * a.ldd;
        A v = A(0);
        if (a.acc) v = A(a.acc[b * a.stride_acc + r + c * a.ld_acc]);
        if (a.read_c) v += A(a.beta) * A(io<T>::load(a.d, di));
        if (a.bias) v += A(io<B>::load(a.bias, a.bias_per_row ? r : c));
        if (a.act == KMUX_CUDA_ACT_RELU)
            v = v > A(0) ? v : A(0);
        else if (a.act == KMUX_CUDA_ACT_GELU)
            v = gelu_tanh(v);
        if (a.amax) {
            float m = fabsf(float(v));
            if (!(m != m) && m > local_amax) local_amax = m;
        }
        if (a.d_scale) v *= A(*a.d_scale);
        io<T>::store(a.d, di, v);
    }
    if (a.amax) {
        /* block reduction, one atomic per block */
        __shared__ float red[kThreads];
        red[threadIdx.x] = local_amax;
        __syncthreads();
        for (int s = blockDim.x / 2; s > 0; s >>= 1) {
            if (threadIdx.x < s && red[threadIdx.x + s] > red[threadIdx.x])
                red[threadIdx.x] = red[threadIdx.x + s];
            __syncthreads();
        }
        if (threadIdx.x == 0) atomic_max_nonneg(a.amax, red[0]);
    }
}

/* i32 D: only the degenerate C = beta * C (k == 0 or alpha == 0), with wrapping arithmetic. */
__global__ void post_kernel_i32(kmux_cuda_post_args a) {
    const int64_t total = a.rows * a.cols * a.batch;
    int32_t *d = static_cast<int32_t *>(a.d);
    for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < total;
         i += (int64_t)gridDim.x * blockDim.x) {
        int64_t r = i % a.rows;
        int64_t rest = i / a.rows;
        int64_t c = rest % a.cols;
        int64_t b = rest / a.cols;
        int64_t di = b * a.stride_d + r + c * a.ldd;
        uint32_t v = a.read_c ? static_cast<uint32_t>(a.beta_i) * static_cast<uint32_t>(d[di]) : 0u;
        d[di] = static_cast<int32_t>(v);
    }
}

template <typename T, typename A>
cudaError_t launch_with_bias(cudaStream_t s, const kmux_cuda_post_args &a) {
    unsigned blocks = blocks_for(a.rows * a.cols * a.batch);
    if (!a.bias || a.bias_type == KMUX_F32)
        post_kernel<T, A, float><<<blocks, kThreads, 0, s>>>(a);
    else
        post_kernel<T, A, T><<<blocks, kThreads, 0, s>>>(a);
    return cudaGetLastError();
}

__global__ void pack_bytes_kernel(const uint8_t *src, int64_t rows, int64_t cols, int64_t rs,
                                  int64_t cs, int64_t bs, uint8_t *dst, int64_t ldd, int64_t dbs,
                                  int64_t batch) {
    const int64_t total = rows * cols * batch;
    for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < total;
         i += (int64_t)gridDim.x * blockDim.x) {
        int64_t r = i % rows;
        int64_t rest = i / rows;
        int64_t c = rest % cols;
        int64_t b = rest / cols;
        dst[b * dbs + r + c * ldd] = src[b * bs + r * rs + c * cs];
    }
}

} // namespace

extern "C" int kmux_cuda_post_launch(void *stream, const kmux_cuda_post_args *a) {
    cudaStream_t s = static_cast<cudaStream_t>(stream);
    if (a->amax) {
        cudaError_t e = cudaMemsetAsync(a->amax, 0, sizeof(float), s);
        if (e != cudaSuccess) return static_cast<int>(e);
    }
    cudaError_t e;
    switch (a->d_type) {
    case KMUX_F64:
        e = launch_with_bias<double, double>(s, *a);
        break;
    case KMUX_F32:
        e = launch_with_bias<float, float>(s, *a);
        break;
    case KMUX_F16:
        e = launch_with_bias<__half, float>(s, *a);
        break;
    case KMUX_BF16:
        e = launch_with_bias<__nv_bfloat16, float>(s, *a);
        break;
    case KMUX_I32:
        post_kernel_i32<<<blocks_for(a->rows * a->cols * a->batch), kThreads, 0, s>>>(*a);
        e = cudaGetLastError();
        break;
    default:
        e = cudaErrorInvalidValue;
        break;
    }
    return static_cast<int>(e);
}

extern "C" int kmux_cuda_pack_bytes(void *stream, const void *src, int64_t rows, int64_t cols,
                                    int64_t src_rs, int64_t src_cs, int64_t src_bs, void *dst,
                                    int64_t ldd, int64_t dst_bs, int64_t batch) {
    cudaStream_t s = static_cast<cudaStream_t>(stream);
    pack_bytes_kernel<<<blocks_for(rows * cols * batch), kThreads, 0, s>>>(
        static_cast<const uint8_t *>(src), rows, cols, src_rs, src_cs, src_bs,
        static_cast<uint8_t *>(dst), ldd, dst_bs, batch);
    return static_cast<int>(cudaGetLastError());
}
