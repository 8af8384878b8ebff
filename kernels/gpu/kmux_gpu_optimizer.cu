/*
 * kmux_gpu_optimizer.cu - the optimizer family on the GPU, one source for CUDA, HIP and the host
 * emulation: ONE kernel (extern "C", KMUX_GPU_NAME_OPTIMIZER) over the row list of
 * dispatch/common/kmux_optimizer.h, chosen by uniform switches before a grid-stride loop. The
 * found_inf flag and the gradient scale are read on the device, so a skipped step needs no host
 * round trip.
 */
#include "kmux_gpu_formats.cuh"
#include "kmux_gpu_kernels.h"
#include "kmux_gpu_optimizer_params.h"
#include "kmux_optimizer.h"

namespace kmux_gpu_k {

#define KMUX_GPU_OPT_OP_(E, f, nm, fl)                                                             \
    struct opt_##f {                                                                               \
        static KMUX_DEV void step(float *p, float g, float *s1, float *s2,                         \
                                  const kmux_opt_scalars *s) {                                     \
            kmux_opt_##f(p, g, s1, s2, s);                                                         \
        }                                                                                          \
    };
KMUX_OPTIMIZER_ALGS(KMUX_GPU_OPT_OP_)
#undef KMUX_GPU_OPT_OP_

template <int G> KMUX_DEV float gload(const void *p, int64_t i) {
    if (G == KMUX_F32) return ((const float *)p)[i];
    return kmux_gpu_decode<G>(((const uint16_t *)p)[i]);
}

template <int G, class Op> KMUX_DEV void opt_loop(const kmux_gpu_optimizer_params &p, float gs) {
    const int64_t stride = (int64_t)gridDim.x * blockDim.x;
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < p.n; i += stride) {
        float g = gload<G>(p.grad, i);
        if (gs != 1.0f) g *= gs;
        Op::step(&p.param[i], g, p.state1 ? &p.state1[i] : (float *)0,
                 p.state2 ? &p.state2[i] : (float *)0, &p.sc);
        if (p.copy_type == KMUX_BF16)
            ((uint16_t *)p.copy)[i] = (uint16_t)kmux_gpu_encode_f32<KMUX_BF16>(p.param[i], 0);
        else if (p.copy_type == KMUX_F16)
            ((uint16_t *)p.copy)[i] = (uint16_t)kmux_gpu_encode_f32<KMUX_F16>(p.param[i], 0);
    }
}

template <int G> KMUX_DEV void opt_by_alg(const kmux_gpu_optimizer_params &p, float gs) {
    switch (p.alg) {
#define KMUX_GPU_OPT_CASE_(E, f, nm, fl)                                                           \
    case KMUX_OPTIMIZER_##E:                                                                       \
        opt_loop<G, opt_##f>(p, gs);                                                               \
        break;
        KMUX_OPTIMIZER_ALGS(KMUX_GPU_OPT_CASE_)
#undef KMUX_GPU_OPT_CASE_
    default:
        break;
    }
}

extern "C" __global__ void __launch_bounds__(KMUX_GPU_BLOCK)
    kmux_gpu_optimizer_kernel(kmux_gpu_optimizer_params p) {
    if (p.found_inf && *p.found_inf != 0.0f) return; /* GradScaler.step: skipped */
    const float gs = p.grad_scale ? *p.grad_scale : 1.0f;
    switch (p.grad_type) {
    case KMUX_F32:
        opt_by_alg<KMUX_F32>(p, gs);
        break;
    case KMUX_F16:
        opt_by_alg<KMUX_F16>(p, gs);
        break;
    case KMUX_BF16:
        opt_by_alg<KMUX_BF16>(p, gs);
        break;
    default:
        break;
    }
}

} // namespace kmux_gpu_k
