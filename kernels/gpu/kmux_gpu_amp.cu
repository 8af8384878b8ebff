/*
 * kmux_gpu_amp.cu - kmux_gpu_unscale_check_finite, kmux_gpu_loss_scale_update and
 * kmux_gpu_fp8_scale_update (see kmux_gpu_kernels.h), one source for CUDA and HIP. The scalar
 * updates run as single-thread kernels so that scale, tracker and flags never leave the device.
 */
#include "kmux_amp_rules.h"
#include "kmux_gpu_formats.cuh"
#include "kmux_gpu_kernels.h"

namespace kmux_gpu_k {

/* x *= inv in place, rounded once to T (f32: the IEEE multiply; f64: the f64 multiply; f16/bf16:
 * decoded exactly, the exact product rounded once), found_inf = 1 when an element was not
 * finite before scaling (all writers store the same value). */
template <int T>
__global__ void __launch_bounds__(KMUX_GPU_BLOCK)
    unscale_kernel(int64_t n, void *x, const float *inv_scale, float *found_inf) {
    const float inv = *inv_scale;
    const int64_t stride = (int64_t)gridDim.x * blockDim.x;
    bool bad = false;
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
        if (T == KMUX_F64) {
            double v = ((double *)x)[i];
            bad |= !isfinite(v);
            ((double *)x)[i] = v * (double)inv;
        } else if (T == KMUX_F32) {
            float v = ((float *)x)[i];
            bad |= (__float_as_uint(v) & 0x7fffffffu) > 0x7f7fffffu;
            ((float *)x)[i] = __fmul_rn(v, inv);
        } else {
            uint16_t *p = (uint16_t *)x;
            float v = kmux_gpu_decode<T>(p[i]);
            bad |= (__float_as_uint(v) & 0x7fffffffu) > 0x7f7fffffu;
            p[i] = (uint16_t)kmux_gpu_scaled_code<T>(v, inv, 0);
        }
    }
    if (bad) *found_inf = 1.0f;
}

/* torch._amp_update_scale_ (kmux_amp_rules.h's kmux_loss_scale_step, as ref and the CPUs). */
__global__ void loss_scale_kernel(float *scale, int32_t *growth_tracker, const float *found_inf,
                                  double growth_factor, double backoff_factor,
                                  int64_t growth_interval) {
    kmux_loss_scale_step(scale, growth_tracker, *found_inf, growth_factor, backoff_factor,
                         growth_interval);
}

/* Transformer Engine delayed scaling (kmux_amp_rules.h): the history's max, NaN sticking, then
 * the scale rule with the format's largest finite value fmax from the host. */
__global__ void fp8_scale_kernel(const float *history, int64_t len, double fmax, double margin,
                                 float *scale) {
    double amax = -INFINITY;
    for (int64_t i = 0; i < len; i++)
        amax = kmux_amax_history_max(amax, history[i]);
    *scale = kmux_fp8_scale_from_fmax(*scale, amax, fmax, (float)margin); /* margin: a float */
}

static unsigned blocks_for(int64_t n) {
    int64_t b = (n + KMUX_GPU_BLOCK - 1) / KMUX_GPU_BLOCK;
    if (b < 1) b = 1;
    if (b > KMUX_GPU_MAX_BLOCKS) b = KMUX_GPU_MAX_BLOCKS;
    return (unsigned)b;
}

template <int T>
int launch_unscale(kmux_gpu_stream_t st, int64_t n, void *x, const float *inv, float *found) {
    KMUX_GPU_LAUNCH(blocks_for(n), KMUX_GPU_BLOCK, st, unscale_kernel<T>)(n, x, inv, found);
    return (int)kmux_gpu_get_last_error();
}

} // namespace kmux_gpu_k

extern "C" int kmux_gpu_unscale_check_finite(void *stream, int64_t count, void *const *tensors,
                                             const int64_t *sizes, const kmux_dtype *types,
                                             const float *inv_scale, float *found_inf) {
    kmux_gpu_stream_t st = (kmux_gpu_stream_t)stream;
    for (int64_t t = 0; t < count; t++) {
        if (sizes[t] <= 0) continue;
        int e;
        switch (types[t]) {
        case KMUX_F64:
            e = kmux_gpu_k::launch_unscale<KMUX_F64>(st, sizes[t], tensors[t], inv_scale,
                                                     found_inf);
            break;
        case KMUX_F32:
            e = kmux_gpu_k::launch_unscale<KMUX_F32>(st, sizes[t], tensors[t], inv_scale,
                                                     found_inf);
            break;
        case KMUX_F16:
            e = kmux_gpu_k::launch_unscale<KMUX_F16>(st, sizes[t], tensors[t], inv_scale,
                                                     found_inf);
            break;
        case KMUX_BF16:
            e = kmux_gpu_k::launch_unscale<KMUX_BF16>(st, sizes[t], tensors[t], inv_scale,
                                                      found_inf);
            break;
        default:
            e = (int)KMUX_GPU_ERROR_INVALID_VALUE;
            break;
        }
        if (e != 0) return e;
    }
    return 0;
}

extern "C" int kmux_gpu_loss_scale_update(void *stream, float *scale, int32_t *growth_tracker,
                                          const float *found_inf, double growth_factor,
                                          double backoff_factor, int64_t growth_interval) {
    KMUX_GPU_LAUNCH(1, 1, (kmux_gpu_stream_t)stream, kmux_gpu_k::loss_scale_kernel)
    (scale, growth_tracker, found_inf, growth_factor, backoff_factor, growth_interval);
    return (int)kmux_gpu_get_last_error();
}

extern "C" int kmux_gpu_fp8_scale_update(void *stream, const float *amax_history,
                                         int64_t history_len, kmux_dtype fp8_type, float margin,
                                         float *scale) {
    if (!kmux_dtype_is_fp8(fp8_type)) return (int)KMUX_GPU_ERROR_INVALID_VALUE;
    const double fmax = kmux_dtype_desc_of(fp8_type).max_finite;
    KMUX_GPU_LAUNCH(1, 1, (kmux_gpu_stream_t)stream, kmux_gpu_k::fp8_scale_kernel)
    (amax_history, history_len, fmax, (double)margin, scale);
    return (int)kmux_gpu_get_last_error();
}
