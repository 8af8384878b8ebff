/*
 * ref_amp.c - mixed-precision utilities of the reference backend, scalar loops in double with
 * the semantics of their kmux.h doc comments. "Device" scalars are host memory on ref.
 */
#include "ref_internal.h"
#include "ref_dtype.h"

#include <float.h>
#include <math.h>

/* max |x_i| in double, NaN ignored (Inf counts); 0 for n == 0. */
static double ref_absmax(int64_t n, const void *x, kmux_dtype t) {
    double m = 0.0;
    for (int64_t i = 0; i < n; i++) {
        double a = fabs(kmux_ref_load(x, t, i));
        if (a > m) m = a; /* false for NaN */
    }
    return m;
}

kmux_status kmux_ref_cast(void *state, void *stream, int64_t n, const void *src,
                          kmux_dtype src_type, void *dst, kmux_dtype dst_type,
                          const kmux_cast_options *opts) {
    int saturate = opts ? opts->saturate : 0;
    const float *scale = opts ? opts->scale : NULL;
    float *amax = opts ? opts->amax : NULL;
    double sc = scale ? (double)*scale : 1.0;
    double m = 0.0;
    for (int64_t i = 0; i < n; i++) {
        double x = kmux_ref_load(src, src_type, i);
        if (fabs(x) > m) m = fabs(x);
        /* x * sc is exact unless src is f64 (24 + 24 bits fit in 53), so one rounding. */
        kmux_ref_store(dst, dst_type, i, scale ? x * sc : x, saturate);
    }
    if (amax) *amax = (float)m;
    return KMUX_OK;
}

kmux_status kmux_ref_amax(void *state, void *stream, int64_t n, const void *x, kmux_dtype type,
                          float *amax) {
    *amax = (float)ref_absmax(n, x, type);
    return KMUX_OK;
}

kmux_status kmux_ref_unscale_check_finite(void *state, void *stream, int64_t count,
                                          void *const *tensors, const int64_t *sizes,
                                          const kmux_dtype *types, const float *inv_scale,
                                          float *found_inf) {
    double inv = (double)*inv_scale;
    int found = 0;
    for (int64_t t = 0; t < count; t++)
        for (int64_t i = 0; i < sizes[t]; i++) {
            double x = kmux_ref_load(tensors[t], types[t], i);
            if (!isfinite(x)) found = 1;
            kmux_ref_store(tensors[t], types[t], i, x * inv, 0);
        }
    if (found) *found_inf = 1.0f; /* never cleared here, as torch */
    return KMUX_OK;
}
