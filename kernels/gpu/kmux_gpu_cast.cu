/*
 * kmux_gpu_cast.cu - kmux_gpu_cast and kmux_gpu_amax (see kmux_gpu_kernels.h), one source for CUDA
 * and HIP (and the host emulation). One kernel per (source, destination) dtype pair, grid-stride
 * loops, f32 sources read as float4 when aligned, amax reduced per block in shared memory and
 * merged with atomicMax on the bits of the (non-negative) f32 result.
 */
#include "kmux_gpu_formats.cuh"
#include "kmux_gpu_kernels.h"

namespace kmux_gpu_k {

/* Converts element i: returns the amax bits of the source value. */
template <int S, int D>
KMUX_DEV uint32_t cast_one(const void *src, void *dst, int64_t i, int saturate, bool has_scale,
                           float s) {
    if (S == KMUX_F64) {
        double x = ((const double *)src)[i];
        kmux_gpu_store_from_f64<D>(dst, i, x, saturate, has_scale, s);
        return kmux_gpu_amax_bits_f64(x);
    } else {
        float x = kmux_gpu_load_f32<S>(src, i);
        kmux_gpu_store_from_f32<D>(dst, i, x, saturate, has_scale, s);
        return kmux_gpu_amax_bits(x);
    }
}

/* vec4: src is f32 and 16-byte aligned, so groups of 4 are read as one float4. */
template <int S, int D>
__global__ void __launch_bounds__(KMUX_GPU_BLOCK)
    cast_kernel(int64_t n, const void *src, void *dst, int saturate, const float *scale,
                float *amax, int vec4) {
    const bool has_scale = scale != nullptr;
    const float s = has_scale ? *scale : 1.0f;
    const int64_t stride = (int64_t)gridDim.x * blockDim.x;
    int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    uint32_t m = 0;
    int64_t done = 0;
    if (S == KMUX_F32 && vec4) {
        const int64_t n4 = n / 4;
        for (int64_t j = i; j < n4; j += stride) {
            float4 v = ((const float4 *)src)[j];
            kmux_gpu_store_from_f32<D>(dst, 4 * j, v.x, saturate, has_scale, s);
            kmux_gpu_store_from_f32<D>(dst, 4 * j + 1, v.y, saturate, has_scale, s);
            kmux_gpu_store_from_f32<D>(dst, 4 * j + 2, v.z, saturate, has_scale, s);
            kmux_gpu_store_from_f32<D>(dst, 4 * j + 3, v.w, saturate, has_scale, s);
            uint32_t a = max(max(kmux_gpu_amax_bits(v.x), kmux_gpu_amax_bits(v.y)),
                             max(kmux_gpu_amax_bits(v.z), kmux_gpu_amax_bits(v.w)));
            m = max(m, a);
        }
        done = 4 * n4;
    }
    for (int64_t j = done + i; j < n; j += stride)
        m = max(m, cast_one<S, D>(src, dst, j, saturate, has_scale, s));
    if (amax) kmux_gpu_block_max_to(m, amax);
}

template <int S>
__global__ void __launch_bounds__(KMUX_GPU_BLOCK)
    amax_kernel(int64_t n, const void *x, float *amax) {
    const int64_t stride = (int64_t)gridDim.x * blockDim.x;
    uint32_t m = 0;
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
        if (S == KMUX_F64)
            m = max(m, kmux_gpu_amax_bits_f64(((const double *)x)[i]));
        else
            m = max(m, kmux_gpu_amax_bits(kmux_gpu_load_f32<S>(x, i)));
    }
    kmux_gpu_block_max_to(m, amax);
}

static unsigned blocks_for(int64_t n, int per_thread) {
    int64_t b =
        (n + (int64_t)KMUX_GPU_BLOCK * per_thread - 1) / ((int64_t)KMUX_GPU_BLOCK * per_thread);
    if (b < 1) b = 1;
    if (b > KMUX_GPU_MAX_BLOCKS) b = KMUX_GPU_MAX_BLOCKS;
    return (unsigned)b;
}

template <int S, int D>
int launch_cast(kmux_gpu_stream_t st, int64_t n, const void *src, void *dst, int saturate,
                const float *scale, float *amax) {
    int vec4 = S == KMUX_F32 && ((uintptr_t)src & 15u) == 0;
    KMUX_GPU_LAUNCH(blocks_for(n, vec4 ? 4 : 1), KMUX_GPU_BLOCK, st, cast_kernel<S, D>)
    (n, src, dst, saturate, scale, amax, vec4);
    return (int)kmux_gpu_get_last_error();
}

template <int S>
int launch_cast_to(kmux_gpu_stream_t st, int64_t n, const void *src, void *dst, int dt,
                   int saturate, const float *scale, float *amax) {
    switch (dt) {
    case KMUX_F64:
        return launch_cast<S, KMUX_F64>(st, n, src, dst, saturate, scale, amax);
    case KMUX_F32:
        return launch_cast<S, KMUX_F32>(st, n, src, dst, saturate, scale, amax);
    case KMUX_F16:
        return launch_cast<S, KMUX_F16>(st, n, src, dst, saturate, scale, amax);
    case KMUX_BF16:
        return launch_cast<S, KMUX_BF16>(st, n, src, dst, saturate, scale, amax);
    case KMUX_F8_E4M3:
        return launch_cast<S, KMUX_F8_E4M3>(st, n, src, dst, saturate, scale, amax);
    case KMUX_F8_E5M2:
        return launch_cast<S, KMUX_F8_E5M2>(st, n, src, dst, saturate, scale, amax);
    case KMUX_F8_E4M3_FNUZ:
        return launch_cast<S, KMUX_F8_E4M3_FNUZ>(st, n, src, dst, saturate, scale, amax);
    case KMUX_F8_E5M2_FNUZ:
        return launch_cast<S, KMUX_F8_E5M2_FNUZ>(st, n, src, dst, saturate, scale, amax);
    default:
        return (int)KMUX_GPU_ERROR_INVALID_VALUE;
    }
}

template <int S> int launch_amax(kmux_gpu_stream_t st, int64_t n, const void *x, float *amax) {
    KMUX_GPU_LAUNCH(blocks_for(n, 4), KMUX_GPU_BLOCK, st, amax_kernel<S>)(n, x, amax);
    return (int)kmux_gpu_get_last_error();
}

} // namespace kmux_gpu_k

extern "C" int kmux_gpu_cast(void *stream, int64_t n, const void *src, kmux_dtype src_type,
                             void *dst, kmux_dtype dst_type, int saturate, const float *scale,
                             float *amax) {
    kmux_gpu_stream_t st = (kmux_gpu_stream_t)stream;
    if (!kmux_dtype_is_float(src_type) || !kmux_dtype_is_float(dst_type))
        return (int)KMUX_GPU_ERROR_INVALID_VALUE; /* i8, i32: not a cast of kmux_cast */
    if (amax) { /* the kernel merges into *amax with atomicMax: start from +0 */
        kmux_gpu_error_t e = kmux_gpu_memset_async(amax, 0, sizeof(float), st);
        if (e != KMUX_GPU_SUCCESS) return (int)e;
    }
    if (n <= 0) return 0;
    switch (src_type) {
    case KMUX_F64:
        return kmux_gpu_k::launch_cast_to<KMUX_F64>(st, n, src, dst, dst_type, saturate, scale,
                                                    amax);
    case KMUX_F32:
        return kmux_gpu_k::launch_cast_to<KMUX_F32>(st, n, src, dst, dst_type, saturate, scale,
                                                    amax);
    case KMUX_F16:
        return kmux_gpu_k::launch_cast_to<KMUX_F16>(st, n, src, dst, dst_type, saturate, scale,
                                                    amax);
    case KMUX_BF16:
        return kmux_gpu_k::launch_cast_to<KMUX_BF16>(st, n, src, dst, dst_type, saturate, scale,
                                                     amax);
    case KMUX_F8_E4M3:
        return kmux_gpu_k::launch_cast_to<KMUX_F8_E4M3>(st, n, src, dst, dst_type, saturate, scale,
                                                        amax);
    case KMUX_F8_E5M2:
        return kmux_gpu_k::launch_cast_to<KMUX_F8_E5M2>(st, n, src, dst, dst_type, saturate, scale,
                                                        amax);
    case KMUX_F8_E4M3_FNUZ:
        return kmux_gpu_k::launch_cast_to<KMUX_F8_E4M3_FNUZ>(st, n, src, dst, dst_type, saturate,
                                                             scale, amax);
    case KMUX_F8_E5M2_FNUZ:
        return kmux_gpu_k::launch_cast_to<KMUX_F8_E5M2_FNUZ>(st, n, src, dst, dst_type, saturate,
                                                             scale, amax);
    default:
        return (int)KMUX_GPU_ERROR_INVALID_VALUE;
    }
}

extern "C" int kmux_gpu_amax(void *stream, int64_t n, const void *x, kmux_dtype type, float *amax) {
    kmux_gpu_stream_t st = (kmux_gpu_stream_t)stream;
    kmux_gpu_error_t e = kmux_gpu_memset_async(amax, 0, sizeof(float), st);
    if (e != KMUX_GPU_SUCCESS) return (int)e;
    if (n <= 0) return 0;
    switch (type) {
    case KMUX_F64:
        return kmux_gpu_k::launch_amax<KMUX_F64>(st, n, x, amax);
    case KMUX_F32:
        return kmux_gpu_k::launch_amax<KMUX_F32>(st, n, x, amax);
    case KMUX_F16:
        return kmux_gpu_k::launch_amax<KMUX_F16>(st, n, x, amax);
    case KMUX_BF16:
        return kmux_gpu_k::launch_amax<KMUX_BF16>(st, n, x, amax);
    case KMUX_F8_E4M3:
        return kmux_gpu_k::launch_amax<KMUX_F8_E4M3>(st, n, x, amax);
    case KMUX_F8_E5M2:
        return kmux_gpu_k::launch_amax<KMUX_F8_E5M2>(st, n, x, amax);
    case KMUX_F8_E4M3_FNUZ:
        return kmux_gpu_k::launch_amax<KMUX_F8_E4M3_FNUZ>(st, n, x, amax);
    case KMUX_F8_E5M2_FNUZ:
        return kmux_gpu_k::launch_amax<KMUX_F8_E5M2_FNUZ>(st, n, x, amax);
    default:
        return (int)KMUX_GPU_ERROR_INVALID_VALUE;
    }
}
