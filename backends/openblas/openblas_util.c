/*
 * openblas_util.c - small helpers of the OpenBLAS backend: blasint range, beta scaling.
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
