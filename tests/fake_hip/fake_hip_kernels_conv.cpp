/*
 * fake_hip_kernels_conv.cpp - kernels/gpu/kmux_gpu_conv.cu compiled for the GPU emulator, and the
 * registration of every conv_kernel instantiation the plugin can launch (dtypes x directions x
 * KMUX_GPU_TILES, as kmux_gpu_conv2d's switches).
 */
#include "kmux_gpu_conv.cu"

#include "fake_hip.h"

namespace {
template <int T, typename Acc, int D> void dir() {
#define KMUX_FAKE_TILE_(id, bm, bn, bk, tm, tn)                                                    \
    fake_hip::add<&kmux_gpu_k::conv_kernel<T, Acc, D, bm, bn, bk, tm, tn>>();
    KMUX_GPU_TILES(KMUX_FAKE_TILE_)
#undef KMUX_FAKE_TILE_
}
template <int T, typename Acc> void type() {
    dir<T, Acc, KMUX_CONV_FWD>();
    dir<T, Acc, KMUX_CONV_BWD_DATA>();
    dir<T, Acc, KMUX_CONV_BWD_WEIGHTS>();
}
} // namespace

void fake_hip::register_conv() {
    type<KMUX_F64, double>();
    type<KMUX_F32, float>();
    type<KMUX_F16, float>();
    type<KMUX_BF16, float>();
}
