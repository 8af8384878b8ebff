/*
 * kmux_gpu_emu.h - host emulation of the GPU execution model, the third target of
 * kmux_gpu_vendor.h (KMUX_GPU_EMU): the .cu files of kernels/gpu compiled as C++ for the CPU and
 * run with grids, blocks and threads (one cooperative fiber per thread, ucontext), per-block
 * shared memory (heap storage per block and declaration, poisoned with 0xff bytes, so that
 * AddressSanitizer sees an overflow and a read before any write shows as NaN), __syncthreads
 * barriers, atomics and wavefront operations at a width chosen per launch (32 or 64 lanes).
 * Blocks run one after the other in a shuffled (seeded) order, the threads of a block in a
 * shuffled order between barriers.
 *
 * It detects, and reports as a failed launch (kmux_emu_get_last_error() != 0, the reason in
 * kmux_gpu_emu_message()): a barrier not reached by every thread of the block (a thread exited
 * or waits at another barrier), a wavefront operation not reached by every lane of its wave,
 * shared memory declared with two sizes. Out-of-bounds accesses are left to AddressSanitizer
 * (the emulated tests are built with it). Results that depend on the wave width or on the block
 * order are found by running a kernel under several settings and comparing.
 *
 * A TEST TOOL: it is never a device, never listed by kmux-info, never linked into libkmux.
 * Only for C++ translation units compiled with KMUX_GPU_EMU; the C test API is
 * kmux_gpu_emu_api.h.
 */
#ifndef KMUX_GPU_EMU_H
#define KMUX_GPU_EMU_H

#ifndef __cplusplus
#error "kmux_gpu_emu.h is for the C++ compile of kernels/gpu; C code includes kmux_gpu_emu_api.h"
#endif

#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <functional>

#include "kmux_gpu_emu_api.h"

#define __global__
#define __device__
#define __host__
#define __forceinline__ inline
#define __launch_bounds__(...)

struct uint3 {
    unsigned x, y, z;
};
struct dim3 {
    unsigned x, y, z;
    dim3(unsigned a = 1, unsigned b = 1, unsigned c = 1) : x(a), y(b), z(c) {}
};
struct alignas(16) float4 {
    float x, y, z, w;
};

/* The running thread's coordinates. */
const uint3 &kmux_emu_thread_idx();
const uint3 &kmux_emu_block_idx();
const dim3 &kmux_emu_block_dim();
const dim3 &kmux_emu_grid_dim();
#define threadIdx (kmux_emu_thread_idx())
#define blockIdx (kmux_emu_block_idx())
#define blockDim (kmux_emu_block_dim())
#define gridDim (kmux_emu_grid_dim())

void kmux_emu_syncthreads(const char *file, int line);
#define __syncthreads() kmux_emu_syncthreads(__FILE__, __LINE__)

/* Shared memory of the running block for the declaration `site` (same storage for every thread
 * of the block, fresh and poisoned for every block). */
void *kmux_emu_shared(const void *site, size_t bytes, const char *name);

unsigned kmux_emu_wave_size();
unsigned kmux_emu_lane_id();
uint32_t kmux_emu_shfl_xor_u32(uint32_t v, unsigned mask);
double kmux_emu_shfl_xor_f64(double v, unsigned mask);
uint64_t kmux_emu_ballot(bool p);
bool kmux_emu_any(bool p);

int kmux_emu_get_last_error();
int kmux_emu_memset_async(void *p, int value, size_t bytes, void *stream);

/* Device functions CUDA and HIP provide. Threads are cooperative fibers on one OS thread, so a
 * plain read-modify-write is atomic. */
inline uint32_t __float_as_uint(float x) {
    uint32_t u;
    memcpy(&u, &x, sizeof u);
    return u;
}
inline float __uint_as_float(uint32_t u) {
    float x;
    memcpy(&x, &u, sizeof x);
    return x;
}
inline int __float_as_int(float x) {
    int u;
    memcpy(&u, &x, sizeof u);
    return u;
}
inline long long __double_as_longlong(double x) {
    long long u;
    memcpy(&u, &x, sizeof u);
    return u;
}
inline double __longlong_as_double(long long u) {
    double x;
    memcpy(&x, &u, sizeof x);
    return x;
}
inline float __fmul_rn(float a, float b) {
    return a * b;
}
inline float __fadd_rn(float a, float b) {
    return a + b;
}
inline unsigned max(unsigned a, unsigned b) {
    return a > b ? a : b;
}
inline unsigned min(unsigned a, unsigned b) {
    return a < b ? a : b;
}
inline int max(int a, int b) {
    return a > b ? a : b;
}
inline int min(int a, int b) {
    return a < b ? a : b;
}
inline unsigned atomicMax(unsigned *p, unsigned v) {
    unsigned old = *p;
    if (v > old) *p = v;
    return old;
}
inline int atomicMax(int *p, int v) {
    int old = *p;
    if (v > old) *p = v;
    return old;
}
inline unsigned atomicAdd(unsigned *p, unsigned v) {
    unsigned old = *p;
    *p = old + v;
    return old;
}
inline unsigned atomicOr(unsigned *p, unsigned v) {
    unsigned old = *p;
    *p = old | v;
    return old;
}
inline unsigned atomicAnd(unsigned *p, unsigned v) {
    unsigned old = *p;
    *p = old & v;
    return old;
}
inline unsigned atomicCAS(unsigned *p, unsigned cmp, unsigned v) {
    unsigned old = *p;
    if (old == cmp) *p = v;
    return old;
}

namespace kmux_emu {

/* Runs body once per thread of a grid x block launch (the emulated <<<grid, block>>>). */
void launch(dim3 grid, dim3 block, const std::function<void()> &body);

/* KMUX_GPU_LAUNCH(grid, block, stream, kernel)(args...) in emulation. */
template <typename F> struct launcher_t {
    dim3 grid, block;
    F *fn;
    template <typename... A> void operator()(A... a) const {
        F *f = fn;
        launch(grid, block, [=]() { f(a...); });
    }
};
template <typename F> launcher_t<F> launcher(dim3 grid, dim3 block, F *fn) {
    return launcher_t<F>{grid, block, fn};
}

} // namespace kmux_emu

#endif
