/*
 * fake_hip_kernels_amp.cpp - kernels/gpu/kmux_gpu_amp.cu compiled for the GPU emulator, and the
 * registration of its kernels.
 */
#include "kmux_gpu_amp.cu"

#include "fake_hip.h"

void fake_hip::register_amp() {
    fake_hip::add<&kmux_gpu_k::unscale_kernel<KMUX_F64>>();
    fake_hip::add<&kmux_gpu_k::unscale_kernel<KMUX_F32>>();
    fake_hip::add<&kmux_gpu_k::unscale_kernel<KMUX_F16>>();
    fake_hip::add<&kmux_gpu_k::unscale_kernel<KMUX_BF16>>();
    fake_hip::add<&kmux_gpu_k::loss_scale_kernel>();
    fake_hip::add<&kmux_gpu_k::fp8_scale_kernel>();
}
