/*
 * kmux_gpu_vendor.h - the few runtime names the GPU kernels need, mapped to one of three targets,
 * so that every .cu file of kernels/gpu is one source for all of them:
 *   - HIP when the compiler says so (hip-clang defines __HIP__ and __HIPCC__);
 *   - the host emulation of the GPU execution model when KMUX_GPU_EMU is defined (the .cu files
 *     compiled as C++ for the CPU; see kmux_gpu_emu.h: a TEST TOOL, never a device);
 *   - CUDA otherwise (nvcc defines __CUDACC__).
 *
 * Deliberately no vendor number types (__nv_bfloat16, hip_bfloat16, __nv_fp8_*): the FNUZ fp8
 * formats have no CUDA type and the vendors' conversions differ in NaN and saturation details, so
 * every format is converted by the shared codec (dispatch/common/kmux_dtype_codec.h).
 *
 * No kernel assumes a warp width: the wavefront width is kmux_gpu_wave_size() (32 on NVIDIA, 64 on
 * gfx942, either in the emulator, chosen at launch), and every lane-level operation goes through
 * the kmux_gpu_lane_id / kmux_gpu_shfl_xor / kmux_gpu_ballot / kmux_gpu_any wrappers below.
 * Kernels are launched with KMUX_GPU_LAUNCH(grid, block, stream, kernel)(args...) and declare
 * shared memory with KMUX_GPU_SHARED(type, name, count) (per-block heap storage in the emulator,
 * so that AddressSanitizer sees an out-of-bounds shared access).
 */
#ifndef KMUX_GPU_VENDOR_H
#define KMUX_GPU_VENDOR_H

#include <stdint.h>

#if defined(KMUX_GPU_EMU)
#include "kmux_gpu_emu.h"
#define KMUX_GPU_EMULATED 1
typedef void *kmux_gpu_stream_t;
typedef int kmux_gpu_error_t;
#define KMUX_GPU_SUCCESS 0
#define KMUX_GPU_ERROR_INVALID_VALUE 1
#define kmux_gpu_get_last_error kmux_emu_get_last_error
#define kmux_gpu_memset_async kmux_emu_memset_async
#define KMUX_GPU_LAUNCH(grid, block, stream, ...) kmux_emu::launcher(grid, block, &__VA_ARGS__)
#define KMUX_GPU_SHARED(T, name, count)                                                            \
    static const char name##_site_ = 0;                                                            \
    T *const name = (T *)kmux_emu_shared(&name##_site_, sizeof(T) * (size_t)(count), #name)
#define KMUX_GPU_WAVE() kmux_emu_wave_size()
#define KMUX_GPU_LANE() kmux_emu_lane_id()
#define KMUX_GPU_SHFL_XOR_U32(v, m) kmux_emu_shfl_xor_u32((v), (m))
#define KMUX_GPU_SHFL_XOR_F64(v, m) kmux_emu_shfl_xor_f64((v), (m))
#define KMUX_GPU_BALLOT(p) kmux_emu_ballot((p) != 0)
#define KMUX_GPU_ANY(p) kmux_emu_any((p) != 0)

#elif defined(__HIP__) || defined(__HIPCC__)
#include <hip/hip_runtime.h>
#define KMUX_GPU_HIP 1
typedef hipStream_t kmux_gpu_stream_t;
typedef hipError_t kmux_gpu_error_t;
#define KMUX_GPU_SUCCESS hipSuccess
#define KMUX_GPU_ERROR_INVALID_VALUE hipErrorInvalidValue
#define kmux_gpu_get_last_error hipGetLastError
#define kmux_gpu_memset_async hipMemsetAsync
#define KMUX_GPU_LAUNCH(grid, block, stream, ...) __VA_ARGS__<<<(grid), (block), 0, (stream)>>>
#define KMUX_GPU_SHARED(T, name, count) __shared__ T name[(count)]
#define KMUX_GPU_WAVE() ((unsigned)warpSize)
#define KMUX_GPU_LANE() ((unsigned)__lane_id())
#define KMUX_GPU_SHFL_XOR_U32(v, m) ((uint32_t)__shfl_xor((int)(v), (int)(m)))
#define KMUX_GPU_SHFL_XOR_F64(v, m) __shfl_xor((double)(v), (int)(m))
#define KMUX_GPU_BALLOT(p) ((uint64_t)__ballot((p) != 0))
#define KMUX_GPU_ANY(p) (__any((p) != 0) != 0)

#else
#include <cuda_runtime.h>
#define KMUX_GPU_CUDA 1
typedef cudaStream_t kmux_gpu_stream_t;
typedef cudaError_t kmux_gpu_error_t;
#define KMUX_GPU_SUCCESS cudaSuccess
#define KMUX_GPU_ERROR_INVALID_VALUE cudaErrorInvalidValue
#define kmux_gpu_get_last_error cudaGetLastError
#define kmux_gpu_memset_async cudaMemsetAsync
#define KMUX_GPU_LAUNCH(grid, block, stream, ...) __VA_ARGS__<<<(grid), (block), 0, (stream)>>>
#define KMUX_GPU_SHARED(T, name, count) __shared__ T name[(count)]
#define KMUX_GPU_WAVE() ((unsigned)warpSize)
/* blocks are 1-D in kernels/gpu, so the lane is the thread index modulo the warp width */
#define KMUX_GPU_LANE() ((unsigned)threadIdx.x % (unsigned)warpSize)
#define KMUX_GPU_SHFL_XOR_U32(v, m) __shfl_xor_sync(0xffffffffu, (uint32_t)(v), (int)(m))
#define KMUX_GPU_SHFL_XOR_F64(v, m) __shfl_xor_sync(0xffffffffu, (double)(v), (int)(m))
#define KMUX_GPU_BALLOT(p) ((uint64_t)__ballot_sync(0xffffffffu, (p) != 0))
#define KMUX_GPU_ANY(p) (__any_sync(0xffffffffu, (p) != 0) != 0)
#endif

/* Threads per block of the element-wise kernels (a multiple of any warp/wavefront width, a power
 * of two). */
#define KMUX_GPU_BLOCK 256
/* Smallest wavefront width of any target (sizes per-wave scratch arrays: blockDim / 32 slots). */
#define KMUX_GPU_MIN_WAVE 32
/* Most blocks of a grid-stride launch: enough to fill any current GPU several times over. */
#define KMUX_GPU_MAX_BLOCKS 8192
/* Largest gridDim.y and gridDim.z of CUDA and HIP; kernels loop beyond them. */
#define KMUX_GPU_MAX_GRID_YZ 65535

/* Planted bugs (tests/gpu_emu): a build with -DKMUX_GPU_PLANT=<n> must FAIL the emulated suite. */
#define KMUX_GPU_PLANT_TILE_EDGE 1  /* off-by-one at the edge of a GEMM tile */
#define KMUX_GPU_PLANT_NO_BARRIER 2 /* the barrier after the shared-memory tile load is missing */
#define KMUX_GPU_PLANT_WAVE32 3     /* a wave reduction that hard-codes 32 lanes */
#ifndef KMUX_GPU_PLANT
#define KMUX_GPU_PLANT 0
#endif

#endif
