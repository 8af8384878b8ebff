/*
 * kmux_gpu_post.cu - kmux_gpu_post_launch and kmux_gpu_pack_bytes (see kmux_gpu_kernels.h): the
 * element-wise completion of a vendor GEMM and the byte packing of fp8/i8 operands, one source for
 * CUDA, HIP and the host emulation (moved from backends/cuda/cuda_kernels.cu onto the shared
 * codec). Arithmetic as ref: f64 for f64 D, f32 otherwise; ReLU keeps NaN; GELU is the tanh form;
 * one rounding to d_type. i32 D: wrapping beta * D without d_scale and amax, otherwise in f64
 * rounded to nearest even and saturated (as ref's scaled integer GEMM).
 */
#include "kmux_gpu_formats.cuh"
#include "kmux_gpu_kernels.h"

namespace kmux_gpu_k {

/* Grid-stride launches: at most this many blocks. */
constexpr int64_t kMaxBlocks = 65535;

static unsigned blocks_for(int64_t total) {
    int64_t b = (total + KMUX_GPU_BLOCK - 1) / KMUX_GPU_BLOCK;
    if (b > kMaxBlocks) b = kMaxBlocks;
    if (b < 1) b = 1;
    return (unsigned)b;
}

template <typename A> KMUX_DEV A act(A v, int a) {
    if (a == KMUX_GPU_ACT_RELU) return v > (A)0 ? v : (v != v ? v : (A)0);
    if (a == KMUX_GPU_ACT_GELU) {
        const A k0 = (A)0.7978845608028654; /* sqrt(2 / pi) */
        const A k1 = (A)0.044715;
        return (A)0.5 * v * ((A)1 + tanh(k0 * (v + k1 * v * v * v)));
    }
    return v;
}

static KMUX_DEV uint32_t bits_of(float v) {
    return kmux_gpu_amax_bits(v);
}
static KMUX_DEV uint32_t bits_of(double v) {
    return kmux_gpu_amax_bits_f64(v);
}

/* (r, c, b) of flat index i, and the element of D. */
static KMUX_DEV int64_t d_index(const kmux_gpu_post_args &a, int64_t i, int64_t &r, int64_t &c,
                                int64_t &b) {
    r = i % a.rows;
    const int64_t rest = i / a.rows;
    c = rest % a.cols;
    b = rest / a.cols;
    return b * a.stride_d + r + c * a.ldd;
}

/* Floating D, arithmetic type A (double for f64 D, float otherwise). */
template <typename A>
__global__ void __launch_bounds__(KMUX_GPU_BLOCK) post_kernel(kmux_gpu_post_args a) {
    const int64_t total = a.rows * a.cols * a.batch;
    uint32_t local = 0;
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < total;
         i += (int64_t)gridDim.x * blockDim.x) {
        int64_t r, c, b;
        const int64_t di = d_index(a, i, r, c, b);
        A v = (A)0;
        if (a.acc) v = (A)a.acc[b * a.stride_acc + r + c * a.ld_acc];
        if (a.read_c) v += (A)a.beta * kmux_gpu_load_rt<A>(a.d, di, a.d_type);
        if (a.bias) v += kmux_gpu_load_rt<A>(a.bias, a.bias_per_row ? r : c, a.bias_type);
        v = act(v, a.act);
        local = max(local, bits_of(v));
        if (a.d_scale) v *= (A)*a.d_scale;
        if constexpr (sizeof(A) == sizeof(double))
            kmux_gpu_store_rt_f64(a.d, di, v, a.d_type);
        else
            kmux_gpu_store_rt_f32(a.d, di, v, a.d_type);
    }
    if (a.amax) kmux_gpu_block_max_to(local, a.amax);
}

static KMUX_DEV int32_t to_i32(double v) {
    if (v != v) return 0;
    if (v <= -2147483648.0) return INT32_MIN;
    if (v >= 2147483647.0) return INT32_MAX;
    return (int32_t)rint(v);
}

/* i32 D: v = beta * D (beta an integer), then amax and d_scale. */
__global__ void __launch_bounds__(KMUX_GPU_BLOCK) post_kernel_i32(kmux_gpu_post_args a) {
    const int64_t total = a.rows * a.cols * a.batch;
    int32_t *d = (int32_t *)a.d;
    const bool plain = !a.d_scale && !a.amax;
    uint32_t local = 0;
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < total;
         i += (int64_t)gridDim.x * blockDim.x) {
        int64_t r, c, b;
        const int64_t di = d_index(a, i, r, c, b);
        if (plain) { /* modulo 2^32, as cuBLAS integer arithmetic */
            d[di] = a.read_c ? (int32_t)((uint32_t)(int32_t)a.beta * (uint32_t)d[di]) : 0;
            continue;
        }
        double v = a.read_c ? a.beta * (double)d[di] : 0.0;
        local = max(local, kmux_gpu_amax_bits_f64(v));
        if (a.d_scale) v *= (double)*a.d_scale;
        d[di] = to_i32(v);
    }
    if (a.amax) kmux_gpu_block_max_to(local, a.amax);
}

__global__ void __launch_bounds__(KMUX_GPU_BLOCK)
    pack_bytes_kernel(const uint8_t *src, int64_t rows, int64_t cols, int64_t rs, int64_t cs,
                      int64_t bs, uint8_t *dst, int64_t ldd, int64_t dbs, int64_t batch) {
    const int64_t total = rows * cols * batch;
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < total;
         i += (int64_t)gridDim.x * blockDim.x) {
        const int64_t r = i % rows, rest = i / rows;
        const int64_t c = rest % cols, b = rest / cols;
        dst[b * dbs + r + c * ldd] = src[b * bs + r * rs + c * cs];
    }
}

} // namespace kmux_gpu_k

extern "C" int kmux_gpu_post_launch(void *stream, const kmux_gpu_post_args *a) {
    kmux_gpu_stream_t st = (kmux_gpu_stream_t)stream;
    if (a->amax) {
        kmux_gpu_error_t e = kmux_gpu_memset_async(a->amax, 0, sizeof(float), st);
        if (e != KMUX_GPU_SUCCESS) return (int)e;
    }
    const int64_t total = a->rows * a->cols * a->batch;
    if (total <= 0) return 0;
    const unsigned blocks = kmux_gpu_k::blocks_for(total);
    switch (a->d_type) {
    case KMUX_F64:
        KMUX_GPU_LAUNCH(blocks, KMUX_GPU_BLOCK, st, kmux_gpu_k::post_kernel<double>)(*a);
        break;
    case KMUX_F32:
    case KMUX_F16:
    case KMUX_BF16:
        if (a->bias && a->bias_type != KMUX_F32 && a->bias_type != a->d_type)
            return (int)KMUX_GPU_ERROR_INVALID_VALUE;
        KMUX_GPU_LAUNCH(blocks, KMUX_GPU_BLOCK, st, kmux_gpu_k::post_kernel<float>)(*a);
        break;
    case KMUX_I32:
        KMUX_GPU_LAUNCH(blocks, KMUX_GPU_BLOCK, st, kmux_gpu_k::post_kernel_i32)(*a);
        break;
    default:
        return (int)KMUX_GPU_ERROR_INVALID_VALUE;
    }
    return (int)kmux_gpu_get_last_error();
}

extern "C" int kmux_gpu_pack_bytes(void *stream, const void *src, int64_t rows, int64_t cols,
                                   int64_t src_rs, int64_t src_cs, int64_t src_bs, void *dst,
                                   int64_t ldd, int64_t dst_bs, int64_t batch) {
    const int64_t total = rows * cols * batch;
    if (total <= 0) return 0;
    KMUX_GPU_LAUNCH(kmux_gpu_k::blocks_for(total), KMUX_GPU_BLOCK, (kmux_gpu_stream_t)stream,
                    kmux_gpu_k::pack_bytes_kernel)
    ((const uint8_t *)src, rows, cols, src_rs, src_cs, src_bs, (uint8_t *)dst, ldd, dst_bs, batch);
    return (int)kmux_gpu_get_last_error();
}
