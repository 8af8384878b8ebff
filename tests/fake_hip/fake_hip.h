/*
 * fake_hip.h - internals of the fake HIP runtime (libkmux-fake-hip.so), a TEST TOOL: it exports
 * the hip* functions the HIP plugin resolves, keeps "device" memory in host memory, and runs
 * hipModuleLaunchKernel through the GPU emulator of kernels/gpu (kmux_gpu_emu.h) on the same
 * kernel sources compiled for the host. It cannot execute gfx942 code; what it checks of a code
 * object is that the offload bundle handed to hipModuleLoadData carries one for the device's
 * architecture.
 */
#ifndef KMUX_FAKE_HIP_H
#define KMUX_FAKE_HIP_H

#include <stddef.h>

#include <tuple>
#include <type_traits>
#include <utility>

#include "kmux_gpu_emu.h"

namespace fake_hip {

/** Runs the kernel with the hipModuleLaunchKernel argument array; returns the emulator's error
 *  (0 on success). */
typedef int (*runner)(dim3 grid, dim3 block, void **params);

/** Registers a kernel by its address (its name is read from the fake's own symbol table, so it
 *  is the host compiler's mangling, independent of the plugin's name table). */
void add_kernel(const void *address, runner run);

/** Kernel registrations of each emulated source (fake_hip_kernels_*.cpp). */
void register_cast();
void register_amp();
void register_gemm();
void register_conv();

template <typename... A> constexpr size_t arity(void (*)(A...)) {
    return sizeof...(A);
}
/** Launches k in the emulator with its arguments read from params (hipModuleLaunchKernel's
 *  kernelParams: one pointer per argument, typed as k's parameters). */
template <typename... A, size_t... I>
int launch_with(dim3 grid, dim3 block, void (*k)(A...), void **params, std::index_sequence<I...>) {
    std::tuple<std::decay_t<A>...> args{*static_cast<std::decay_t<A> *>(params[I])...};
    kmux_emu::launch(grid, block, [&]() { std::apply(k, args); });
    return kmux_emu_get_last_error();
}
template <auto K> int run(dim3 grid, dim3 block, void **params) {
    return launch_with(grid, block, K, params, std::make_index_sequence<arity(K)>{});
}
template <auto K> void add() {
    add_kernel(reinterpret_cast<const void *>(K), &run<K>);
}

} // namespace fake_hip

#endif
