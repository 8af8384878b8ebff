/*
 * fake_hip_kernels_pooling.cpp - kernels/gpu/kmux_gpu_pooling.cu compiled for the GPU emulator,
 * and the registration of its kernel (the pooling family).
 */
#include "kmux_gpu_pooling.cu"

#include "fake_hip.h"

void fake_hip::register_pooling() {
    fake_hip::add<&kmux_gpu_k::kmux_gpu_pooling_kernel>();
}
