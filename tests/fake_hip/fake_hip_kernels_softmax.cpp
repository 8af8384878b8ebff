/*
 * fake_hip_kernels_softmax.cpp - kernels/gpu/kmux_gpu_softmax.cu compiled for the GPU emulator,
 * and the registration of its two kernels (the softmax family).
 */
#include "kmux_gpu_softmax.cu"

#include "fake_hip.h"

void fake_hip::register_softmax() {
    fake_hip::add<&kmux_gpu_k::kmux_gpu_softmax_kernel>();
    fake_hip::add<&kmux_gpu_k::kmux_gpu_softmax_mean_kernel>();
}
