/*
 * fake_hip_kernels_reduction.cpp - kernels/gpu/kmux_gpu_reduction.cu compiled for the GPU emulator,
 * and the registration of its kernel (the reduction family).
 */
#include "kmux_gpu_reduction.cu"

#include "fake_hip.h"

void fake_hip::register_reduction() {
    fake_hip::add<&kmux_gpu_k::kmux_gpu_reduction_kernel>();
}
