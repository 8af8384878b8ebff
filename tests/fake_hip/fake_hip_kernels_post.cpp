/*
 * fake_hip_kernels_post.cpp - kernels/gpu/kmux_gpu_post.cu compiled for the GPU emulator, and the
 * registration of its kernels (the completion of a vendor GEMM and byte packing, which the CUDA
 * plugin launches after cuBLASLt and the fake CUDA driver runs).
 */
#include "kmux_gpu_post.cu"

#include "fake_hip.h"

void fake_hip::register_post() {
    fake_hip::add<&kmux_gpu_k::post_kernel<double>>();
    fake_hip::add<&kmux_gpu_k::post_kernel<float>>();
    fake_hip::add<&kmux_gpu_k::post_kernel_i32>();
    fake_hip::add<&kmux_gpu_k::pack_bytes_kernel>();
}
