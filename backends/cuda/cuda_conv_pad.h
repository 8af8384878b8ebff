/*
 * cuda_conv_pad.h - the zero-padded copy that runs an asymmetrically padded convolution on
 * cuDNN (whose descriptor has one padding per axis): geometry from kmux_cuda_conv_pad_plan
 * (cuda_host_logic.c), copies here (cuda_conv_pad.c).
 */
#ifndef KMUX_CUDA_CONV_PAD_H
#define KMUX_CUDA_CONV_PAD_H

#include "cuda_backend.h"
#include "cuda_host_logic.h"

/** Zeroes the copy `dst` and copies the caller's tensor `src` into its interior (BWD_DATA too:
 *  cuDNN reads beta * dx). */
kmux_status kmux_cuda_conv_pad_in(const kmux_cuda_state *st, int device, CUstream stream,
                                  const kmux_cuda_conv_pad *pad, const void *src, void *dst);
/** Copies the interior of the padded copy `src` back to the caller's tensor `dst` (BWD_DATA). */
kmux_status kmux_cuda_conv_pad_out(const kmux_cuda_state *st, int device, CUstream stream,
                                   const kmux_cuda_conv_pad *pad, const void *src, void *dst);

#endif
