/*
 * cuda_amp.c - the mixed-precision slots (cast, amax, unscale_check_finite, loss_scale_update,
 * fp8_scale_update) on the kernels of kernels/gpu, which are written once for CUDA and HIP and
 * compiled into this plugin (kernels/gpu/kmux_gpu_kernels.h). Without those kernels in the build
 * the slots stay NULL and the core answers KMUX_ERR_UNSUPPORTED.
 */
#include "cuda_backend.h"

#if defined(KMUX_CUDA_HAVE_GPU_KERNELS)

#include "kmux_gpu_caps.h"
#include "kmux_gpu_kernels.h"

/* Runs one launcher on the stream's device; names the operation in any error. */
#define LAUNCH(st, s, what, call)                                                                  \
    do {                                                                                           \
        kmux_cuda_guard g_;                                                                        \
        kmux_status ks_ = kmux_cuda_enter((st), (s)->device, (what), &g_);                         \
        if (ks_ != KMUX_OK) return ks_;                                                            \
        int e_ = (call);                                                                           \
        kmux_cuda_leave(&g_);                                                                      \
        if (e_ != 0)                                                                               \
            return kmux_cuda_fail((st), (cudaError_t)e_, "%s: kernel launch on cuda:%d", (what),   \
                                  (s)->device);                                                    \
        return KMUX_OK;                                                                            \
    } while (0)

kmux_status kmux_cuda_amp_cast(void *state, void *stream, int64_t n, const void *src,
                               kmux_dtype src_type, void *dst, kmux_dtype dst_type,
                               const kmux_cast_options *opts) {
    kmux_cuda_state *st = state;
    kmux_cuda_stream *s = stream;
    /* FNUZ formats are converted too: no NVIDIA unit computes in them, but a conversion of bit
     * patterns is exact and lets data move between AMD and NVIDIA machines */
    int saturate = opts ? opts->saturate : 0;
    const float *scale = opts ? opts->scale : NULL;
    float *amax = opts ? opts->amax : NULL;
    LAUNCH(st, s, "kmux_cast",
           kmux_gpu_cast(s->stream, n, src, src_type, dst, dst_type, saturate, scale, amax));
}

kmux_status kmux_cuda_amp_amax(void *state, void *stream, int64_t n, const void *x, kmux_dtype type,
                               float *amax) {
    kmux_cuda_state *st = state;
    kmux_cuda_stream *s = stream;
    LAUNCH(st, s, "kmux_amax", kmux_gpu_amax(s->stream, n, x, type, amax));
}

kmux_status kmux_cuda_amp_unscale(void *state, void *stream, int64_t count, void *const *tensors,
                                  const int64_t *sizes, const kmux_dtype *types,
                                  const float *inv_scale, float *found_inf) {
    kmux_cuda_state *st = state;
    kmux_cuda_stream *s = stream;
    LAUNCH(st, s, "kmux_unscale_check_finite",
           kmux_gpu_unscale_check_finite(s->stream, count, tensors, sizes, types, inv_scale,
                                         found_inf));
}

kmux_status kmux_cuda_amp_loss_scale(void *state, void *stream, float *scale,
                                     int32_t *growth_tracker, const float *found_inf,
                                     double growth_factor, double backoff_factor,
                                     int64_t growth_interval) {
    kmux_cuda_state *st = state;
    kmux_cuda_stream *s = stream;
    LAUNCH(st, s, "kmux_loss_scale_update",
           kmux_gpu_loss_scale_update(s->stream, scale, growth_tracker, found_inf, growth_factor,
                                      backoff_factor, growth_interval));
}

kmux_status kmux_cuda_amp_fp8_scale(void *state, void *stream, const float *amax_history,
                                    int64_t history_len, kmux_dtype fp8_type, float margin,
                                    float *scale) {
    kmux_cuda_state *st = state;
    kmux_cuda_stream *s = stream;
    LAUNCH(
        st, s, "kmux_fp8_scale_update",
        kmux_gpu_fp8_scale_update(s->stream, amax_history, history_len, fp8_type, margin, scale));
}

uint32_t kmux_cuda_amp_dtypes(void) {
    return kmux_gpu_amp_dtypes();
}

#else

uint32_t kmux_cuda_amp_dtypes(void) {
    return 0;
}

#endif
