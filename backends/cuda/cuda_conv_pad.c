/*
 * cuda_conv_pad.c - copies into and out of the zero-padded tensor of an asymmetrically padded
 * convolution (cuda_conv_pad.h): one memset and one strided 3-D copy each way, no kernel.
 * FWD and BWD_WEIGHTS read x through the copy; BWD_DATA writes dx into it (after copying dx in,
 * since cuDNN reads beta * dx) and the interior is copied back.
 */
#include "cuda_conv_pad.h"

#include <string.h>

static cudaError_t copy3d(const kmux_cuda_conv_pad *pad, const void *src, size_t src_pitch,
                          size_t src_rows, void *dst, size_t dst_pitch, size_t dst_rows,
                          cudaStream_t stream) {
    /* (make_cudaPitchedPtr and make_cudaExtent are C++-only helpers of driver_functions.h) */
    struct cudaMemcpy3DParms m;
    memset(&m, 0, sizeof m);
    m.srcPtr.ptr = (void *)(uintptr_t)src;
    m.srcPtr.pitch = src_pitch;
    m.srcPtr.xsize = pad->width_bytes;
    m.srcPtr.ysize = src_rows;
    m.dstPtr.ptr = dst;
    m.dstPtr.pitch = dst_pitch;
    m.dstPtr.xsize = pad->width_bytes;
    m.dstPtr.ysize = dst_rows;
    m.extent.width = pad->width_bytes;
    m.extent.height = (size_t)pad->height;
    m.extent.depth = (size_t)pad->depth;
    m.kind = cudaMemcpyDeviceToDevice;
    return cudaMemcpy3DAsync(&m, stream);
}

kmux_status kmux_cuda_conv_pad_in(const kmux_cuda_state *st, int device, cudaStream_t stream,
                                  const kmux_cuda_conv_pad *pad, const void *src, void *dst) {
    cudaError_t e = cudaMemsetAsync(dst, 0, pad->bytes, stream);
    if (e == cudaSuccess)
        e = copy3d(pad, src, pad->src_pitch, (size_t)pad->height, (char *)dst + pad->dst_offset,
                   pad->dst_pitch, (size_t)pad->dst_rows, stream);
    if (e != cudaSuccess)
        return kmux_cuda_fail(st, e,
                              "kmux_conv2d_execute: zero-padded copy for asymmetric padding on "
                              "cuda:%d",
                              device);
    return KMUX_OK;
}

kmux_status kmux_cuda_conv_pad_out(const kmux_cuda_state *st, int device, cudaStream_t stream,
                                   const kmux_cuda_conv_pad *pad, const void *src, void *dst) {
    cudaError_t e = copy3d(pad, (const char *)src + pad->dst_offset, pad->dst_pitch,
                           (size_t)pad->dst_rows, dst, pad->src_pitch, (size_t)pad->height, stream);
    if (e != cudaSuccess)
        return kmux_cuda_fail(st, e,
                              "kmux_conv2d_execute: copying dx out of the padded tensor on "
                              "cuda:%d",
                              device);
    return KMUX_OK;
}
