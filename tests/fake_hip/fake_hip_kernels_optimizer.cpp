/*
 * fake_hip_kernels_optimizer.cpp - kernels/gpu/kmux_gpu_optimizer.cu compiled for the GPU
 * emulator, and the registration of its one kernel (the optimizer family).
 */
#include "kmux_gpu_optimizer.cu"

#include "fake_hip.h"

void fake_hip::register_optimizer() {
    fake_hip::add<&kmux_gpu_k::kmux_gpu_optimizer_kernel>();
}
