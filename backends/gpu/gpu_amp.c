/*
 * gpu_amp.c - the mixed-precision slots of the GPU plugins (plugin ABI cast, amax,
 * unscale_check_finite, loss_scale_update, fp8_scale_update), written once for CUDA and HIP: the
 * plugin's launcher taken from its state (a kmux_gpu_plugin first), the options of kmux_cast
 * unpacked, one unscale launch per tensor, the fp8 format's largest finite value for the delayed
 * scaling kernel. Every format converts, FNUZ and OCP alike: a conversion of bit patterns is exact
 * on every architecture (only GEMM depends on the fp8 family of the matrix units).
 */
#include "dispatch/common/kmux_dtype_desc.h"
#include "gpu_kernels.h"

/* The launcher on a plugin's stream: every GPU plugin's state begins with a kmux_gpu_plugin. */
static kmux_gpu_launcher launcher_of(void *state, const void *stream) {
    return kmux_gpu_plugin_launcher(state, stream);
}

kmux_status kmux_gpu_slot_cast(void *state, void *stream, int64_t n, const void *src,
                               kmux_dtype src_type, void *dst, kmux_dtype dst_type,
                               const kmux_cast_options *opts) {
    const kmux_gpu_launcher l = launcher_of(state, stream);
    return kmux_gpu_host_cast(&l, n, src, src_type, dst, dst_type, opts ? opts->saturate : 0,
                              opts ? opts->scale : NULL, opts ? opts->amax : NULL);
}

kmux_status kmux_gpu_slot_amax(void *state, void *stream, int64_t n, const void *x, kmux_dtype type,
                               float *amax) {
    const kmux_gpu_launcher l = launcher_of(state, stream);
    return kmux_gpu_host_amax(&l, n, x, type, amax);
}

kmux_status kmux_gpu_slot_unscale(void *state, void *stream, int64_t count, void *const *tensors,
                                  const int64_t *sizes, const kmux_dtype *types,
                                  const float *inv_scale, float *found_inf) {
    const kmux_gpu_launcher l = launcher_of(state, stream);
    for (int64_t t = 0; t < count; t++) {
        kmux_status s =
            kmux_gpu_host_unscale(&l, sizes[t], tensors[t], types[t], inv_scale, found_inf);
        if (s != KMUX_OK) return s;
    }
    return KMUX_OK;
}

kmux_status kmux_gpu_slot_loss_scale(void *state, void *stream, float *scale,
                                     int32_t *growth_tracker, const float *found_inf,
                                     double growth_factor, double backoff_factor,
                                     int64_t growth_interval) {
    const kmux_gpu_launcher l = launcher_of(state, stream);
    return kmux_gpu_host_loss_scale(&l, scale, growth_tracker, found_inf, growth_factor,
                                    backoff_factor, growth_interval);
}

kmux_status kmux_gpu_slot_fp8_scale(void *state, void *stream, const float *amax_history,
                                    int64_t history_len, kmux_dtype fp8_type, float margin,
                                    float *scale) {
    const kmux_gpu_launcher l = launcher_of(state, stream);
    if (!kmux_dtype_is_fp8(fp8_type))
        return l.host->set_error(KMUX_ERR_UNSUPPORTED,
                                 "%s: kmux_fp8_scale_update: fp8_type %s is not an fp8 format",
                                 l.vendor, kmux_dtype_desc_of(fp8_type).name);
    return kmux_gpu_host_fp8_scale(&l, amax_history, history_len,
                                   kmux_dtype_desc_of(fp8_type).max_finite, (double)margin, scale);
}
