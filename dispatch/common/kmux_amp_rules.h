/*
 * kmux_amp_rules.h - THE scalar rules of dynamic loss scaling and delayed fp8 scaling, for ref,
 * the CPU plugins and the GPU kernels (CUDA, HIP, host emulation): one routine per behaviour.
 * Compiles as C11, C++ and device code.
 *   - loss scale: torch._amp_update_scale_ (GradScaler): products in double rounded to f32, a
 *     grown scale that is not finite is dropped, the tracker is compared with == the interval;
 *   - fp8 scale: NVIDIA Transformer Engine, amax_compute_algo "max": a NaN in the history makes
 *     the amax NaN (torch.max) and keeps the scale; (fmax / amax) / 2^margin formed in double and
 *     rounded once; a quotient beyond the f32 range becomes FLT_MAX, one below the smallest
 *     normal f32 (0 included) becomes FLT_MIN: a scale is never 0, Inf or subnormal.
 */
#ifndef KMUX_AMP_RULES_H
#define KMUX_AMP_RULES_H

#include <math.h>
#include <stdint.h>

#include "kmux_dtype_desc.h"

#ifdef __cplusplus
extern "C" {
#endif

/** One step of dynamic loss scaling on the scalars *scale and *growth_tracker. */
static inline KMUX_DTYPE_HD void kmux_loss_scale_step(float *scale, int32_t *growth_tracker,
                                                      float found_inf, double growth_factor,
                                                      double backoff_factor,
                                                      int64_t growth_interval) {
    if (found_inf != 0.0f) { /* NaN counts as found, as C++ `if (*found_inf)` in torch */
        *scale = (float)((double)*scale * backoff_factor);
        *growth_tracker = 0;
        return;
    }
    int64_t successful = (int64_t)*growth_tracker + 1;
    if (successful == growth_interval) {
        float grown = (float)((double)*scale * growth_factor);
        if (isfinite(grown)) *scale = grown;
        *growth_tracker = 0;
    } else {
        *growth_tracker = successful > INT32_MAX ? INT32_MAX : (int32_t)successful;
    }
}

/** The running "max" of a delayed-scaling amax history: call with acc = -INFINITY first; NaN
 *  sticks. */
static inline KMUX_DTYPE_HD double kmux_amax_history_max(double acc, float entry) {
    double v = (double)entry;
    if (isnan(acc) || isnan(v)) return NAN;
    return v > acc ? v : acc;
}

/** kmux_fp8_scale_from_amax with fmax, the largest finite value of the fp8 format, given (a GPU
 *  kernel receives it from the host's dtype table). */
static inline KMUX_DTYPE_HD float kmux_fp8_scale_from_fmax(float old_scale, double amax,
                                                           double fmax, float margin) {
    if (!isfinite(amax) || !(amax > 0.0)) return old_scale;
    double q = fmax / amax / exp2((double)margin);
    if (q >= 3.402823466e38) return 3.402823466e38f;
    if (!(q >= 1.175494351e-38)) return 1.175494351e-38f; /* 0 would zero every cast */
    return (float)q;
}

/** The new fp8 scale for amax (the max of the history) and margin, or the old scale when amax is
 *  NaN, infinite or not > 0. fmax is the largest finite value of fp8_type (dtype table). */
static inline KMUX_DTYPE_HD float kmux_fp8_scale_from_amax(float old_scale, double amax,
                                                           kmux_dtype fp8_type, float margin) {
    return kmux_fp8_scale_from_fmax(old_scale, amax, kmux_dtype_desc_of(fp8_type).max_finite,
                                    margin);
}

#ifdef __cplusplus
}
#endif
#endif /* KMUX_AMP_RULES_H */
