/*
 * cuda_kernels.h - the CUDA backend's names for the post-processing and byte-packing kernels,
 * which live in kernels/gpu/kmux_gpu_post.cu (one source for CUDA, HIP and the host emulation
 * that tests them; compiled into this plugin with the other .cu files of kernels/gpu). See
 * kmux_gpu_kernels.h for the semantics. Note: beta is the multiplier of D for every d_type, i32
 * included (there is no separate integer beta).
 */
#ifndef KMUX_CUDA_KERNELS_H
#define KMUX_CUDA_KERNELS_H

#include "kmux_gpu_kernels.h"

typedef kmux_gpu_act kmux_cuda_act;
#define KMUX_CUDA_ACT_NONE KMUX_GPU_ACT_NONE
#define KMUX_CUDA_ACT_RELU KMUX_GPU_ACT_RELU
#define KMUX_CUDA_ACT_GELU KMUX_GPU_ACT_GELU

typedef kmux_gpu_post_args kmux_cuda_post_args;
#define kmux_cuda_post_launch kmux_gpu_post_launch
#define kmux_cuda_pack_bytes kmux_gpu_pack_bytes

#endif
