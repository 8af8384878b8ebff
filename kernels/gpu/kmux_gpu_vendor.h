/*
 * kmux_gpu_vendor.h - the few runtime names the GPU kernels need, mapped to CUDA or HIP, so that
 * every .cu file of kernels/gpu is one source for both. Compiled as HIP when the compiler says so
 * (hip-clang defines __HIP__ and __HIPCC__; nvcc defines __CUDACC__).
 *
 * Deliberately no vendor number types (__nv_bfloat16, hip_bfloat16, __nv_fp8_*): the FNUZ fp8
 * formats have no CUDA type and the vendors' conversions differ in NaN and saturation details, so
 * every format is converted by the bit manipulation of kmux_gpu_formats.cuh, identical on both.
 * No kernel assumes a warp width: reductions go through shared memory with __syncthreads.
 */
#ifndef KMUX_GPU_VENDOR_H
#define KMUX_GPU_VENDOR_H

#if defined(__HIP__) || defined(__HIPCC__)
#include <hip/hip_runtime.h>
#define KMUX_GPU_HIP 1
typedef hipStream_t kmux_gpu_stream_t;
typedef hipError_t kmux_gpu_error_t;
#define KMUX_GPU_SUCCESS hipSuccess
#define KMUX_GPU_ERROR_INVALID_VALUE hipErrorInvalidValue
#define kmux_gpu_get_last_error hipGetLastError
#define kmux_gpu_memset_async hipMemsetAsync
#else
#include <cuda_runtime.h>
#define KMUX_GPU_CUDA 1
typedef cudaStream_t kmux_gpu_stream_t;
typedef cudaError_t kmux_gpu_error_t;
#define KMUX_GPU_SUCCESS cudaSuccess
#define KMUX_GPU_ERROR_INVALID_VALUE cudaErrorInvalidValue
#define kmux_gpu_get_last_error cudaGetLastError
#define kmux_gpu_memset_async cudaMemsetAsync
#endif

/* Threads per block of every kernel (a multiple of any warp/wavefront width, power of two). */
#define KMUX_GPU_BLOCK 256
/* Most blocks of a grid-stride launch: enough to fill any current GPU several times over. */
#define KMUX_GPU_MAX_BLOCKS 8192

#endif
