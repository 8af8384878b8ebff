/*
 * fake_hip_kernels_cast.cpp - kernels/gpu/kmux_gpu_cast.cu compiled for the GPU emulator, and the
 * registration of every kernel instantiation the plugin can launch from it.
 */
#include "kmux_gpu_cast.cu"

#include "fake_hip.h"

namespace {
template <int S, int D> void one() {
    fake_hip::add<&kmux_gpu_k::cast_kernel<S, D>>();
}
template <int S> void row() {
    one<S, KMUX_F64>();
    one<S, KMUX_F32>();
    one<S, KMUX_F16>();
    one<S, KMUX_BF16>();
    one<S, KMUX_F8_E4M3>();
    one<S, KMUX_F8_E5M2>();
    one<S, KMUX_F8_E4M3_FNUZ>();
    one<S, KMUX_F8_E5M2_FNUZ>();
    fake_hip::add<&kmux_gpu_k::amax_kernel<S>>();
}
} // namespace

void fake_hip::register_cast() {
    row<KMUX_F64>();
    row<KMUX_F32>();
    row<KMUX_F16>();
    row<KMUX_BF16>();
    row<KMUX_F8_E4M3>();
    row<KMUX_F8_E5M2>();
    row<KMUX_F8_E4M3_FNUZ>();
    row<KMUX_F8_E5M2_FNUZ>();
}
