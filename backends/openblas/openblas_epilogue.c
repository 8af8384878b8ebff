/*
 * openblas_epilogue.c - the matmul epilogue of the OpenBLAS backend, fused into ONE pass over
 * the GEMM result: + bias, ReLU or GELU (tanh), amax, d_scale and the rounding to the output
 * type, row by row so that each row is rounded while it is still in L1.
 *
 * The pass runs after the whole GEMM rather than interleaved with it by row blocks: splitting
 * sgemm into row blocks makes OpenBLAS re-pack the other operand for every block (about 10 % at
 * 2048^3 with 256-row blocks), far more than one streaming pass over C costs.
 */
#include "openblas_internal.h"

#include <math.h>

#include "kernels/cpu/kmux_cpu_kernels.h"

/* GELU, tanh approximation (as cuBLASLt and torch's approximate="tanh"), evaluated in double so
 * that the only rounding is the final one to the output type. */
static double gelu_tanh(double x) {
    const double k = 0.7978845608028654; /* sqrt(2/pi) */
    return 0.5 * x * (1.0 + tanh(k * (x + 0.044715 * x * x * x)));
}

int kmux_ob_epilogue_active(const kmux_ob_epilogue *e) {
    return e->flags != KMUX_EPILOGUE_NONE || e->has_d_scale || e->want_amax;
}

void kmux_ob_epilogue_f32(float *t, int64_t rows, int64_t cols, int64_t ld,
                          const kmux_ob_epilogue *e, void *out, kmux_dtype out_type, int64_t out_ld,
                          float *amax) {
    const int bias = (e->flags & KMUX_EPILOGUE_BIAS) != 0;
    const int relu = (e->flags & KMUX_EPILOGUE_RELU) != 0;
    const int gelu = (e->flags & KMUX_EPILOGUE_GELU) != 0;
    const size_t out_size = kmux_common_dtype_size(out_type);
    float m = amax ? *amax : 0.0f;
    for (int64_t r = 0; r < rows; r++) {
        float *row = t + r * ld;
        if (e->flags != KMUX_EPILOGUE_NONE || e->has_d_scale || e->want_amax) {
            const float row_bias = (bias && e->bias_per_row) ? e->bias_f32[r] : 0.0f;
            for (int64_t c = 0; c < cols; c++) {
                float v = row[c];
                if (bias) v += e->bias_per_row ? row_bias : e->bias_f32[c];
                if (relu)
                    v = (v > 0.0f || v != v) ? v : 0.0f; /* NaN propagates (torch.relu); -0 -> +0 */
                else if (gelu)
                    v = (float)gelu_tanh((double)v);
                if (e->want_amax) m = fmaxf(m, fabsf(v)); /* fmaxf ignores NaN */
                if (e->has_d_scale) v *= e->d_scale;
                row[c] = v;
            }
        }
        if (out_type != KMUX_F32) {
            /* f16 / bf16 targets only: kmux_cpu_cast cannot fail for them */
            (void)kmux_cpu_cast(cols, row, KMUX_F32, (char *)out + (size_t)(r * out_ld) * out_size,
                                out_type, 0, NULL, NULL, 1);
        }
    }
    if (amax) *amax = m;
}

void kmux_ob_epilogue_f64(double *t, int64_t rows, int64_t cols, int64_t ld,
                          const kmux_ob_epilogue *e, float *amax) {
    const int bias = (e->flags & KMUX_EPILOGUE_BIAS) != 0;
    const int relu = (e->flags & KMUX_EPILOGUE_RELU) != 0;
    const int gelu = (e->flags & KMUX_EPILOGUE_GELU) != 0;
    double m = amax ? (double)*amax : 0.0;
    for (int64_t r = 0; r < rows; r++) {
        double *row = t + r * ld;
        const double row_bias = (bias && e->bias_per_row) ? e->bias_f64[r] : 0.0;
        for (int64_t c = 0; c < cols; c++) {
            double v = row[c];
            if (bias) v += e->bias_per_row ? row_bias : e->bias_f64[c];
            if (relu)
                v = (v > 0.0 || v != v) ? v : 0.0;
            else if (gelu)
                v = gelu_tanh(v);
            if (e->want_amax) m = fmax(m, fabs(v));
            if (e->has_d_scale) v *= (double)e->d_scale;
            row[c] = v;
        }
    }
    if (amax) *amax = (float)m;
}
