/*
 * fake_gpu_core.h - the vendor-neutral core of kmux's fake GPU runtimes (TEST TOOLS): the fake
 * HIP runtime (libkmux-fake-hip.so, fake_hip.cpp) and the fake CUDA driver (libcuda.so.1,
 * tests/fake_cuda/fake_cuda_driver.cpp). Both run the kernel sources of kernels/gpu, compiled for
 * the host, in the GPU emulator (kmux_gpu_emu.h); what this core gives them:
 *
 * - the kernel registry: every kernel instantiation a plugin can launch is registered by its
 *   address (fake_hip_kernels_*.cpp, built once as an object library linked into both fakes)
 *   and named from the ELF symbol table of the shared object the core is linked into, i.e. the
 *   host compiler's Itanium mangling, which is also nvcc's and clang's for the device code, and
 *   independent of any name table of a plugin;
 * - "device" memory: host memory, tracked, so that a copy, a memset or a free outside an
 *   allocation is refused as a real runtime would fault; pinned host memory tracked apart;
 * - the launch: the emulator at a given wave width (AMD 64, NVIDIA 32) with shuffled block order,
 *   one launch at a time (the emulator's state is global);
 * - a monotonic clock for events.
 *
 * Every symbol here is hidden (kmux_target_defaults), so that two fakes loaded in one process
 * keep their own registry, allocations and emulator.
 */
#ifndef KMUX_FAKE_GPU_CORE_H
#define KMUX_FAKE_GPU_CORE_H

#include <stddef.h>
#include <stdint.h>

#include <string>
#include <tuple>
#include <type_traits>
#include <utility>

#include "kmux_gpu_emu.h"

namespace fake_gpu {

/** Runs the kernel with a module-launch argument array (kernelParams: one pointer per
 *  argument); returns the emulator's error (0 on success). */
typedef int (*runner)(dim3 grid, dim3 block, void **params);

/** Registers a kernel by its address, with its number of parameters (its name is read from the
 *  fake's own symbol table). */
void add_kernel(const void *address, runner run, size_t params);

/** Kernel registrations of each emulated source (fake_hip_kernels_*.cpp). */
void register_cast();
void register_amp();
void register_gemm();
void register_conv();
void register_post();
void register_eltwise();
void register_optimizer();
void register_softmax();
void register_binary();
void register_reduction();
void register_pooling();

struct kernel {
    std::string name; /* mangled, as in the device code's symbol table */
    runner run;
    size_t params; /* number of kernel parameters */
};

/** The registered kernel of that mangled name, or NULL. */
const kernel *find_kernel(const char *name);

/** Device memory (host memory, aligned, tracked): NULL when out of memory. */
void *device_alloc(size_t bytes, size_t align);
/** Frees what device_alloc returned; false for any other pointer. */
bool device_free(void *p);
/** [p, p + bytes) inside one device allocation? */
bool is_device(const void *p, size_t bytes);
/** Does p lie inside some device allocation (its first byte)? */
bool in_device(const void *p);
/** Bytes held by device allocations. */
size_t device_bytes();

/** Pinned host memory, tracked apart from device memory. */
void *host_alloc(size_t bytes, size_t align);
bool host_free(void *p);
bool is_host(const void *p, size_t bytes);
bool in_host(const void *p);

/** Runs k in the emulator at wave width `wave` (32 or 64) with block-order seed `seed`; one
 *  launch at a time. Returns the emulator's error (0 on success), its reason in *why when not
 *  NULL. */
int launch(const kernel *k, dim3 grid, dim3 block, void **params, unsigned wave, uint64_t seed,
           std::string *why = nullptr);

/** CLOCK_MONOTONIC in milliseconds. */
double now_ms();

/** $name as an int, dflt when unset or empty. */
int env_int(const char *name, int dflt);

template <typename... A> constexpr size_t arity(void (*)(A...)) {
    return sizeof...(A);
}
/** Launches k in the emulator with its arguments read from params (kernelParams: one pointer per
 *  argument, typed as k's parameters). */
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
    add_kernel(reinterpret_cast<const void *>(K), &run<K>, arity(K));
}

} // namespace fake_gpu

#endif
