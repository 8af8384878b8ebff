/*
 * openblas_util.c - small helpers of the OpenBLAS backend: blasint range, beta scaling, dtype
 * names and sizes, convolution output size.
 */
#include "openblas_internal.h"

#include <limits.h>
#include <string.h>

int kmux_ob_fits_blasint(int64_t v) {
    return v >= 0 && v <= (int64_t)INT_MAX;
}

void kmux_ob_scale_f32(float *t, int64_t rows, int64_t cols, int64_t ld, float beta) {
    if (beta == 1.0f) return;
    for (int64_t r = 0; r < rows; r++) {
        float *row = t + r * ld;
        if (beta == 0.0f) {
            memset(row, 0, (size_t)cols * sizeof(float));
        } else {
            for (int64_t c = 0; c < cols; c++)
                row[c] *= beta;
        }
    }
}

void kmux_ob_scale_f64(double *t, int64_t rows, int64_t cols, int64_t ld, double beta) {
    if (beta == 1.0) return;
    for (int64_t r = 0; r < rows; r++) {
        double *row = t + r * ld;
        if (beta == 0.0) {
            for (int64_t c = 0; c < cols; c++)
                row[c] = 0.0;
        } else {
            for (int64_t c = 0; c < cols; c++)
                row[c] *= beta;
        }
    }
}

const char *kmux_ob_dtype_name(kmux_dtype t) {
    switch (t) {
    case KMUX_F64:
        return "f64";
    case KMUX_F32:
        return "f32";
    case KMUX_F16:
        return "f16";
    case KMUX_BF16:
        return "bf16";
    case KMUX_F8_E4M3:
        return "e4m3";
    case KMUX_F8_E5M2:
        return "e5m2";
    case KMUX_F8_E4M3_FNUZ:
        return "e4m3fnuz";
    case KMUX_F8_E5M2_FNUZ:
        return "e5m2fnuz";
    case KMUX_I8:
        return "i8";
    case KMUX_I32:
        return "i32";
    }
    return "?";
}

const char *kmux_ob_compute_name(kmux_compute_type t) {
    switch (t) {
    case KMUX_COMPUTE_F64:
        return "f64";
    case KMUX_COMPUTE_F32:
        return "f32";
    case KMUX_COMPUTE_F32_FAST_TF32:
        return "f32_fast_tf32";
    case KMUX_COMPUTE_F32_FAST_BF16:
        return "f32_fast_bf16";
    case KMUX_COMPUTE_F16:
        return "f16";
    case KMUX_COMPUTE_I32:
        return "i32";
    }
    return "?";
}

size_t kmux_ob_dtype_size(kmux_dtype t) {
    switch (t) {
    case KMUX_F64:
        return 8;
    case KMUX_F32:
    case KMUX_I32:
        return 4;
    case KMUX_F16:
    case KMUX_BF16:
        return 2;
    case KMUX_F8_E4M3:
    case KMUX_F8_E5M2:
    case KMUX_F8_E4M3_FNUZ:
    case KMUX_F8_E5M2_FNUZ:
    case KMUX_I8:
        return 1;
    }
    return 0;
}

void kmux_ob_conv_output_dims(const kmux_conv2d_desc *d, int64_t *p, int64_t *q) {
    *p = (d->h + d->pad_top + d->pad_bottom - ((d->r - 1) * d->dilation_h + 1)) / d->stride_h + 1;
    *q = (d->w + d->pad_left + d->pad_right - ((d->s - 1) * d->dilation_w + 1)) / d->stride_w + 1;
}
