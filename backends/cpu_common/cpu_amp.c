/*
 * cpu_amp.c - the mixed-precision slots of the CPU backends (cpu:openblas, cpu:onednn) on the
 * vectorised kernels of kernels/cpu. The core has validated every argument; "device" scalars are
 * host memory. Semantics: the doc comments of kmux.h.
 */
#include <float.h>
#include <math.h>

#include "cpu_runtime.h"
#include "kmux_amp_rules.h"
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

/* The shared rules of dispatch/common/kmux_amp_rules.h (torch GradScaler, Transformer Engine). */
kmux_status kmux_cpu_op_loss_scale_update(void *state, void *stream, float *scale,
                                          int32_t *growth_tracker, const float *found_inf,
                                          double growth_factor, double backoff_factor,
                                          int64_t growth_interval) {
    (void)state, (void)stream;
    kmux_loss_scale_step(scale, growth_tracker, *found_inf, growth_factor, backoff_factor,
                         growth_interval);
    return KMUX_OK;
}

kmux_status kmux_cpu_op_fp8_scale_update(void *state, void *stream, const float *amax_history,
                                         int64_t history_len, kmux_dtype fp8_type, float margin,
                                         float *scale) {
    (void)state, (void)stream;
    double amax = -INFINITY;
    for (int64_t i = 0; i < history_len; i++)
        amax = kmux_amax_history_max(amax, amax_history[i]);
    *scale = kmux_fp8_scale_from_amax(*scale, amax, fp8_type, margin);
    return KMUX_OK;
}
