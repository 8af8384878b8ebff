/*
 * hip_amp.c - the mixed-precision slots (cast, amax, unscale_check_finite, loss_scale_update,
 * fp8_scale_update) on the kernels of kernels/gpu (kmux_gpu_cast.cu, kmux_gpu_amp.cu), launched
 * from the embedded code objects (hip_kernels.c: the launcher) by the launch logic shared by both
 * GPU plugins (backends/gpu/gpu_amp.c, gpu_elementwise.c). Semantics: kmux_gpu_kernels.h, bit for
 * bit the CPU kernels.
 */
#include "gpu_kernels.h"
#include "hip_backend.h"

kmux_status kmux_hip_amp_cast(void *state, void *stream, int64_t n, const void *src,
                              kmux_dtype src_type, void *dst, kmux_dtype dst_type,
                              const kmux_cast_options *opts) {
    const kmux_gpu_launcher l = kmux_hip_launcher(state, stream);
    return kmux_gpu_amp_cast(&l, n, src, src_type, dst, dst_type, opts);
}

kmux_status kmux_hip_amp_amax(void *state, void *stream, int64_t n, const void *x, kmux_dtype type,
                              float *amax) {
    const kmux_gpu_launcher l = kmux_hip_launcher(state, stream);
    return kmux_gpu_host_amax(&l, n, x, type, amax);
}

kmux_status kmux_hip_amp_unscale(void *state, void *stream, int64_t count, void *const *tensors,
                                 const int64_t *sizes, const kmux_dtype *types,
                                 const float *inv_scale, float *found_inf) {
    const kmux_gpu_launcher l = kmux_hip_launcher(state, stream);
    return kmux_gpu_amp_unscale(&l, count, tensors, sizes, types, inv_scale, found_inf);
}

kmux_status kmux_hip_amp_loss_scale(void *state, void *stream, float *scale,
                                    int32_t *growth_tracker, const float *found_inf,
                                    double growth_factor, double backoff_factor,
                                    int64_t growth_interval) {
    const kmux_gpu_launcher l = kmux_hip_launcher(state, stream);
    return kmux_gpu_host_loss_scale(&l, scale, growth_tracker, found_inf, growth_factor,
                                    backoff_factor, growth_interval);
}

kmux_status kmux_hip_amp_fp8_scale(void *state, void *stream, const float *amax_history,
                                   int64_t history_len, kmux_dtype fp8_type, float margin,
                                   float *scale) {
    const kmux_gpu_launcher l = kmux_hip_launcher(state, stream);
    return kmux_gpu_amp_fp8_scale(&l, amax_history, history_len, fp8_type, margin, scale);
}

uint32_t kmux_hip_amp_dtypes(void) {
    return kmux_gpu_host_amp_dtypes();
}
