/*
 * emu_probes.cpp - see emu_probes.h. Written like the kernels of kernels/gpu (vendor header
 * macros only), compiled for the emulator.
 */
#include "emu_probes.h"

#include "kmux_gpu_vendor.h"

namespace {

__global__ void exit_before_barrier(int *x) {
    if (threadIdx.x == 17) return;
    __syncthreads();
    x[threadIdx.x] = 1;
}

__global__ void split_barrier(int *x) {
    if (threadIdx.x % 2) {
        __syncthreads();
    } else {
        __syncthreads();
    }
    x[threadIdx.x] = 1;
}

__global__ void exit_before_shuffle(uint32_t *x) {
    if (threadIdx.x == 3) return;
    x[threadIdx.x] = KMUX_GPU_SHFL_XOR_U32(threadIdx.x, 1);
}

__global__ void wave_ops(unsigned *lane, uint32_t *shfl, uint64_t *ballot, int *any) {
    const unsigned t = threadIdx.x;
    lane[t] = KMUX_GPU_LANE();
    shfl[t] = KMUX_GPU_SHFL_XOR_U32(t, 1);
    ballot[t] = KMUX_GPU_BALLOT(t & 1);
    any[t] = KMUX_GPU_ANY(t == 3) ? 1 : 0;
}

__global__ void block_order(unsigned *counter, unsigned *order) {
    if (threadIdx.x == 0) order[atomicAdd(counter, 1u)] = blockIdx.x;
}

__global__ void shared_per_block(uint32_t *out, uint32_t *first) {
    KMUX_GPU_SHARED(uint32_t, word, 1);
    if (threadIdx.x == 0) {
        first[blockIdx.x] = word[0];
        word[0] = blockIdx.x;
    }
    __syncthreads();
    if (threadIdx.x == 31) out[blockIdx.x] = word[0];
}

__global__ void shared_overflow(int *sink) {
    KMUX_GPU_SHARED(int, arr, 16);
    arr[threadIdx.x] = (int)threadIdx.x; /* 32 threads, 16 elements */
    __syncthreads();
    sink[threadIdx.x] = arr[0];
}

__global__ void global_overflow(const int *p, int n, int *out) {
    if (threadIdx.x == 0) out[0] = p[n];
}

} // namespace

extern "C" int probe_exit_before_barrier(void) {
    int x[64] = {0};
    KMUX_GPU_LAUNCH(1, 64, nullptr, exit_before_barrier)(x);
    return kmux_gpu_get_last_error();
}

extern "C" int probe_split_barrier(void) {
    int x[64] = {0};
    KMUX_GPU_LAUNCH(1, 64, nullptr, split_barrier)(x);
    return kmux_gpu_get_last_error();
}

extern "C" int probe_exit_before_shuffle(void) {
    uint32_t x[64] = {0};
    KMUX_GPU_LAUNCH(1, 64, nullptr, exit_before_shuffle)(x);
    return kmux_gpu_get_last_error();
}

extern "C" int probe_wave_ops(unsigned threads, unsigned *lane, uint32_t *shfl, uint64_t *ballot,
                              int *any) {
    KMUX_GPU_LAUNCH(1, threads, nullptr, wave_ops)(lane, shfl, ballot, any);
    return kmux_gpu_get_last_error();
}

extern "C" int probe_block_order(unsigned blocks, unsigned *order) {
    unsigned counter = 0;
    KMUX_GPU_LAUNCH(blocks, 32, nullptr, block_order)(&counter, order);
    return kmux_gpu_get_last_error();
}

extern "C" int probe_shared_per_block(unsigned blocks, uint32_t *out, uint32_t *first) {
    KMUX_GPU_LAUNCH(blocks, 64, nullptr, shared_per_block)(out, first);
    return kmux_gpu_get_last_error();
}

extern "C" int probe_shared_overflow(void) {
    int sink[32];
    KMUX_GPU_LAUNCH(1, 32, nullptr, shared_overflow)(sink);
    return kmux_gpu_get_last_error();
}

extern "C" int probe_global_overflow(const int *p, int n, int *out) {
    KMUX_GPU_LAUNCH(1, 32, nullptr, global_overflow)(p, n, out);
    return kmux_gpu_get_last_error();
}
