/*
 * cuda_conv_pad.c - copies into and out of the zero-padded tensor of an asymmetrically padded
 * convolution (cuda_conv_pad.h): one memset and one strided 3-D copy each way, no kernel.
 * FWD and BWD_WEIGHTS read x through the copy; BWD_DATA writes dx into it (after copying dx in,
 * since cuDNN reads beta * dx) and the interior is copied back.
 */
#include "cuda_conv_pad.h"

#include <string.h>

static CUresult copy3d(const kmux_cuda_conv_pad *pad, const void *src, size_t src_pitch,
                       size_t src_rows, void *dst, size_t dst_pitch, size_t dst_rows,
                       CUstream stream) {
    CUDA_MEMCPY3D m;
    memset(&m, 0, sizeof m);
    m.srcMemoryType = CU_MEMORYTYPE_DEVICE;
    m.srcDevice = kmux_cu_ptr(src);
    m.srcPitch = src_pitch;
    m.srcHeight = src_rows;
    m.dstMemoryType = CU_MEMORYTYPE_DEVICE;
    m.dstDevice = kmux_cu_ptr(dst);
    m.dstPitch = dst_pitch;
    m.dstHeight = dst_rows;
    m.WidthInBytes = pad->width_bytes;
    m.Height = (size_t)pad->height;
    m.Depth = (size_t)pad->depth;
    return cuMemcpy3DAsync(&m, stream);
}

kmux_status kmux_cuda_conv_pad_in(const kmux_cuda_state *st, int device, CUstream stream,
                                  const kmux_cuda_conv_pad *pad, const void *src, void *dst) {
    CUresult e = kmux_cu_memset_async(dst, 0, pad->bytes, stream);
    if (e == CUDA_SUCCESS)
        e = copy3d(pad, src, pad->src_pitch, (size_t)pad->height, (char *)dst + pad->dst_offset,
                   pad->dst_pitch, (size_t)pad->dst_rows, stream);
    if (e != CUDA_SUCCESS)
        return kmux_cuda_fail(st, e,
                              "kmux_conv2d_execute: zero-padded copy for asymmetric padding on "
                              "cuda:%d",
                              device);
    return KMUX_OK;
}

kmux_status kmux_cuda_conv_pad_out(const kmux_cuda_state *st, int device, CUstream stream,
                                   const kmux_cuda_conv_pad *pad, const void *src, void *dst) {
    CUresult e = copy3d(pad, (const char *)src + pad->dst_offset, pad->dst_pitch,
                        (size_t)pad->dst_rows, dst, pad->src_pitch, (size_t)pad->height, stream);
    if (e != CUDA_SUCCESS)
        return kmux_cuda_fail(st, e,
                              "kmux_conv2d_execute: copying dx out of the padded tensor on "
                              "cuda:%d",
                              device);
    return KMUX_OK;
}
