/*
 * kmux_gpu_eltwise.cu - the element-wise family on the GPU, one source for CUDA, HIP and the
 * host emulation: ONE kernel (extern "C", its name is KMUX_GPU_NAME_ELTWISE) that expands the
 * row list of dispatch/common/kmux_eltwise.h into one functor per algorithm and one grid-stride
 * loop per (dtype, algorithm), chosen by uniform switches before the loop. A new algorithm of the
 * table is compiled in here without a change to this file.
 */
#include "kmux_gpu_formats.cuh" /* first: the vendor runtime the shared codec's intrinsics need */

#include "kmux_eltwise.h"
#include "kmux_gpu_eltwise_params.h"
#include "kmux_gpu_kernels.h"

namespace kmux_gpu_k {

/* Each algorithm of the table as a functor of the shared f32 definitions. */
#define KMUX_GPU_ELT_OP_(E, f, nm, fl)                                                             \
    struct elt_##f {                                                                               \
        static KMUX_DEV float fwd(float x, float a, float b) {                                     \
            return kmux_elt_##f##_fwd(x, a, b);                                                    \
        }                                                                                          \
        static KMUX_DEV float bwd(float dd, float x, float a, float b) {                           \
            return kmux_elt_##f##_bwd(dd, x, a, b);                                                \
        }                                                                                          \
        static KMUX_DEV float bwd_dst(float dd, float y, float a, float b) {                       \
            return kmux_elt_##f##_bwd_dst(dd, y, a, b);                                            \
        }                                                                                          \
    };
KMUX_ELTWISE_ALGS(KMUX_GPU_ELT_OP_)
#undef KMUX_GPU_ELT_OP_

/* f32 element i; f16/bf16 decoded exactly */
template <int T> KMUX_DEV float eload(const void *p, int64_t i) {
    if (T == KMUX_F32) return ((const float *)p)[i];
    return kmux_gpu_decode<T>(((const uint16_t *)p)[i]);
}

/* v rounded once to T (RNE) */
template <int T> KMUX_DEV void estore(void *p, int64_t i, float v) {
    if (T == KMUX_F32)
        ((float *)p)[i] = v;
    else
        ((uint16_t *)p)[i] = (uint16_t)kmux_gpu_encode_f32<T>(v, 0);
}

template <int T, class Op> KMUX_DEV void elt_loop(const kmux_gpu_eltwise_params &p) {
    const int64_t stride = (int64_t)gridDim.x * blockDim.x;
    const int64_t first = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (p.prop == KMUX_PROP_FORWARD) {
        for (int64_t i = first; i < p.n; i += stride)
            estore<T>(p.out, i, Op::fwd(eload<T>(p.x, i), p.alpha, p.beta));
    } else if (p.use_dst) {
        for (int64_t i = first; i < p.n; i += stride)
            estore<T>(p.out, i, Op::bwd_dst(eload<T>(p.dd, i), eload<T>(p.x, i), p.alpha, p.beta));
    } else {
        for (int64_t i = first; i < p.n; i += stride)
            estore<T>(p.out, i, Op::bwd(eload<T>(p.dd, i), eload<T>(p.x, i), p.alpha, p.beta));
    }
}

template <int T> KMUX_DEV void elt_by_alg(const kmux_gpu_eltwise_params &p) {
    switch (p.alg) {
#define KMUX_GPU_ELT_CASE_(E, f, nm, fl)                                                           \
    case KMUX_ELTWISE_##E:                                                                         \
        elt_loop<T, elt_##f>(p);                                                                   \
        break;
        KMUX_ELTWISE_ALGS(KMUX_GPU_ELT_CASE_)
#undef KMUX_GPU_ELT_CASE_
    default:
        break;
    }
}

extern "C" __global__ void __launch_bounds__(KMUX_GPU_BLOCK)
    kmux_gpu_eltwise_kernel(kmux_gpu_eltwise_params p) {
    switch (p.dtype) {
    case KMUX_F32:
        elt_by_alg<KMUX_F32>(p);
        break;
    case KMUX_F16:
        elt_by_alg<KMUX_F16>(p);
        break;
    case KMUX_BF16:
        elt_by_alg<KMUX_BF16>(p);
        break;
    default:
        break;
    }
}

} // namespace kmux_gpu_k
