/*
 * fake_hip_kernels_binary.cpp - kernels/gpu/kmux_gpu_binary.cu compiled for the GPU emulator, and
 * the registration of its kernel (the binary family).
 */
#include "kmux_gpu_binary.cu"

#include "fake_hip.h"

void fake_hip::register_binary() {
    fake_hip::add<&kmux_gpu_k::kmux_gpu_binary_kernel>();
}
