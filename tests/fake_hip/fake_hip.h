/*
 * fake_hip.h - the fake HIP runtime (libkmux-fake-hip.so), a TEST TOOL: it exports the hip*
 * functions the HIP plugin resolves, keeps "device" memory in host memory, and runs
 * hipModuleLaunchKernel through the GPU emulator of kernels/gpu (kmux_gpu_emu.h) on the same
 * kernel sources compiled for the host. It cannot execute gfx942 code; what it checks of a code
 * object is that the offload bundle handed to hipModuleLoadData carries one for the device's
 * architecture.
 *
 * The kernel registry, memory tracking and emulator launch are the vendor-neutral core
 * (fake_gpu_core.h), shared with the fake CUDA driver (tests/fake_cuda). The kernel registration
 * sources (fake_hip_kernels_*.cpp) include this header and name the core fake_hip::.
 */
#ifndef KMUX_FAKE_HIP_H
#define KMUX_FAKE_HIP_H

#include "fake_gpu_core.h"

namespace fake_hip = fake_gpu;

#endif
