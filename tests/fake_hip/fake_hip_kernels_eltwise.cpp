/*
 * fake_hip_kernels_eltwise.cpp - kernels/gpu/kmux_gpu_eltwise.cu compiled for the GPU emulator,
 * and the registration of its one kernel (the element-wise family).
 */
#include "kmux_gpu_eltwise.cu"

#include "fake_hip.h"

void fake_hip::register_eltwise() {
    fake_hip::add<&kmux_gpu_k::kmux_gpu_eltwise_kernel>();
}
