/*
 * cpu_amp.c - the mixed-precision slots of the CPU backends (cpu:openblas, cpu:onednn) on the
 * vectorised kernels of kernels/cpu. The core has validated every argument; "device" scalars are
 * host memory. Semantics: the doc comments of kmux.h.
 */
#include <float.h>
#include <math.h>

#include "cpu_runtime.h"
#include "kmux_common.h"
#include "kmux_cpu_kernels.h"

static int threads_of(const void *state) {
    const kmux_cpu_state_header *h = state;
    return h->num_threads > 0 ? h->num_threads : 1;
}

kmux_status kmux_cpu_op_cast(void *state, void *stream, int64_t n, const void *src,
                             kmux_dtype src_type, void *dst, kmux_dtype dst_type,
                             const kmux_cast_options *opts) {
    const kmux_cpu_state_header *h = state;
    int saturate = opts ? opts->saturate : 0;
    const float *scale = opts ? opts->scale : NULL;
    float *amax = opts ? opts->amax : NULL;
    kmux_status st =
        kmux_cpu_cast(n, src, src_type, dst, dst_type, saturate, scale, amax, threads_of(state));
    if (st != KMUX_OK)
        return h->host->set_error(st,
                                  "kmux_cast: the CPU kernels do not convert %s (%d) to %s (%d)",
                                  kmux_common_dtype_name(src_type), (int)src_type,
                                  kmux_common_dtype_name(dst_type), (int)dst_type);
    return KMUX_OK;
}

kmux_status kmux_cpu_op_amax(void *state, void *stream, int64_t n, const void *x, kmux_dtype type,
                             float *amax) {
    *amax = kmux_cpu_amax(n, x, type, threads_of(state));
    return KMUX_OK;
}

kmux_status kmux_cpu_op_unscale_check_finite(void *state, void *stream, int64_t count,
                                             void *const *tensors, const int64_t *sizes,
                                             const kmux_dtype *types, const float *inv_scale,
                                             float *found_inf) {
    const float inv = *inv_scale;
    int found = 0;
    for (int64_t t = 0; t < count; t++)
        found |=
            kmux_cpu_unscale_check_finite(sizes[t], tensors[t], types[t], inv, threads_of(state));
    if (found) *found_inf = 1.0f; /* never cleared here, as torch */
    return KMUX_OK;
}

/* torch._amp_update_scale_ (aten/src/ATen/native/cuda/AmpKernels.cu): the products are formed in
 * double (float * double) and rounded to f32; a grown scale that is not finite is dropped. The
 * tracker is compared with ==, as torch, so a tracker already at or past the interval keeps
 * counting (it cannot get there through this function). */
kmux_status kmux_cpu_op_loss_scale_update(void *state, void *stream, float *scale,
                                          int32_t *growth_tracker, const float *found_inf,
                                          double growth_factor, double backoff_factor,
                                          int64_t growth_interval) {
    if (*found_inf != 0.0f) { /* NaN counts as found, as in C++ `if (*found_inf)` */
        *scale = (float)((double)*scale * backoff_factor);
        *growth_tracker = 0;
        return KMUX_OK;
    }
    int64_t successful = (int64_t)*growth_tracker + 1;
    if (successful == growth_interval) {
        float grown = (float)((double)*scale * growth_factor);
        if (isfinite(grown)) *scale = grown;
        *growth_tracker = 0;
    } else {
        *growth_tracker = successful > INT32_MAX ? INT32_MAX : (int32_t)successful;
    }
    return KMUX_OK;
}

/* Transformer Engine's delayed scaling with amax_compute_algo "max": amax = torch.max(history)
 * (a NaN entry makes it NaN), scale = (fp8_max / amax) / 2^margin where amax is finite and > 0.
 * The quotient is formed in f64 and rounded to f32 once; one beyond the f32 range becomes
 * FLT_MAX, so the scale stays finite. */
kmux_status kmux_cpu_op_fp8_scale_update(void *state, void *stream, const float *amax_history,
                                         int64_t history_len, kmux_dtype fp8_type, float margin,
                                         float *scale) {
    double amax = -INFINITY;
    for (int64_t i = 0; i < history_len; i++) {
        double v = (double)amax_history[i];
        if (isnan(v)) return KMUX_OK; /* amax is NaN: scale unchanged */
        if (v > amax) amax = v;
    }
    if (!isfinite(amax) || !(amax > 0.0)) return KMUX_OK;
    double fmax;
    switch (fp8_type) {
    case KMUX_F8_E4M3:
        fmax = 448.0;
        break;
    case KMUX_F8_E4M3_FNUZ:
        fmax = 240.0;
        break;
    default:
        fmax = 57344.0;
        break; /* e5m2, e5m2fnuz */
    }
    float s = (float)(fmax / amax / exp2((double)margin));
    if (isinf(s)) s = FLT_MAX;
    *scale = s;
    return KMUX_OK;
}
