/*
 * hip_amp.c - the mixed-precision slots (cast, amax, unscale_check_finite, loss_scale_update,
 * fp8_scale_update) on the kernels of kernels/gpu (kmux_gpu_cast.cu, kmux_gpu_amp.cu), launched
 * from the embedded code objects (hip_kernels.c). Semantics: kmux_gpu_kernels.h, bit for bit the
 * CPU kernels. Every format converts, FNUZ and OCP alike: a conversion of bit patterns is exact
 * on every architecture (only GEMM depends on the fp8 family of the matrix units).
 */
#include "dispatch/common/kmux_dtype_desc.h"
#include "hip_backend.h"
#include "kmux_gpu_caps.h"

kmux_status kmux_hip_amp_cast(void *state, void *stream, int64_t n, const void *src,
                              kmux_dtype src_type, void *dst, kmux_dtype dst_type,
                              const kmux_cast_options *opts) {
    int saturate = opts ? opts->saturate : 0;
    const float *scale = opts ? opts->scale : NULL;
    float *amax = opts ? opts->amax : NULL;
    return kmux_hip_k_cast(state, stream, n, src, src_type, dst, dst_type, saturate, scale, amax);
}

kmux_status kmux_hip_amp_amax(void *state, void *stream, int64_t n, const void *x, kmux_dtype type,
                              float *amax) {
    return kmux_hip_k_amax(state, stream, n, x, type, amax);
}

kmux_status kmux_hip_amp_unscale(void *state, void *stream, int64_t count, void *const *tensors,
                                 const int64_t *sizes, const kmux_dtype *types,
                                 const float *inv_scale, float *found_inf) {
    for (int64_t t = 0; t < count; t++) {
        kmux_status s =
            kmux_hip_k_unscale(state, stream, sizes[t], tensors[t], types[t], inv_scale, found_inf);
        if (s != KMUX_OK) return s;
    }
    return KMUX_OK;
}

kmux_status kmux_hip_amp_loss_scale(void *state, void *stream, float *scale,
                                    int32_t *growth_tracker, const float *found_inf,
                                    double growth_factor, double backoff_factor,
                                    int64_t growth_interval) {
    return kmux_hip_k_loss_scale(state, stream, scale, growth_tracker, found_inf, growth_factor,
                                 backoff_factor, growth_interval);
}

kmux_status kmux_hip_amp_fp8_scale(void *state, void *stream, const float *amax_history,
                                   int64_t history_len, kmux_dtype fp8_type, float margin,
                                   float *scale) {
    kmux_hip_state *st = state;
    if (!kmux_dtype_is_fp8(fp8_type))
        return st->host->set_error(KMUX_ERR_UNSUPPORTED,
                                   "hip: kmux_fp8_scale_update: fp8_type %s is not an fp8 format",
                                   kmux_dtype_desc_of(fp8_type).name);
    return kmux_hip_k_fp8_scale(st, stream, amax_history, history_len,
                                kmux_dtype_desc_of(fp8_type).max_finite, (double)margin, scale);
}

uint32_t kmux_hip_amp_dtypes(void) {
    return kmux_gpu_amp_dtypes();
}
