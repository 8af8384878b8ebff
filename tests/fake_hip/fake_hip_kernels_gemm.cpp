/*
 * fake_hip_kernels_gemm.cpp - kernels/gpu/kmux_gpu_gemm.cu compiled for the GPU emulator, and the
 * registration of every gemm_kernel instantiation the plugin can launch (its launch()'s pairs
 * times KMUX_GPU_TILES).
 */
#include "kmux_gpu_gemm.cu"

#include "fake_hip.h"

namespace {
template <int A, int B, typename Acc> void pair() {
#define KMUX_FAKE_TILE_(id, bm, bn, bk, tm, tn)                                                    \
    fake_hip::add<&kmux_gpu_k::gemm_kernel<A, B, Acc, bm, bn, bk, tm, tn>>();
    KMUX_GPU_TILES(KMUX_FAKE_TILE_)
#undef KMUX_FAKE_TILE_
}
} // namespace

void fake_hip::register_gemm() {
    pair<KMUX_F64, KMUX_F64, double>();
    pair<KMUX_F32, KMUX_F32, float>();
    pair<KMUX_F16, KMUX_F16, float>();
    pair<KMUX_BF16, KMUX_BF16, float>();
    pair<KMUX_I8, KMUX_I8, int32_t>();
    pair<KMUX_F8_E4M3, KMUX_F8_E4M3, float>();
    pair<KMUX_F8_E4M3, KMUX_F8_E5M2, float>();
    pair<KMUX_F8_E5M2, KMUX_F8_E4M3, float>();
    pair<KMUX_F8_E5M2, KMUX_F8_E5M2, float>();
    pair<KMUX_F8_E4M3_FNUZ, KMUX_F8_E4M3_FNUZ, float>();
    pair<KMUX_F8_E4M3_FNUZ, KMUX_F8_E5M2_FNUZ, float>();
    pair<KMUX_F8_E5M2_FNUZ, KMUX_F8_E4M3_FNUZ, float>();
    pair<KMUX_F8_E5M2_FNUZ, KMUX_F8_E5M2_FNUZ, float>();
}
