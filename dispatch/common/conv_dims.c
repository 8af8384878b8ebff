/*
 * conv_dims.c - the output size of a 2-D convolution along one axis (kmux_common.h).
 */
#include "kmux_common.h"

int64_t kmux_conv2d_out_dim(int64_t in, int64_t pad_lo, int64_t pad_hi, int64_t r, int64_t dilation,
                            int64_t stride) {
    return (in + pad_lo + pad_hi - kmux_conv2d_extent(r, dilation)) / stride + 1;
}
