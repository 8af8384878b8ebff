/*
 * gpu_launch.h - what the launch logic of kmux's own GPU kernels (gpu_kernels.c and friends)
 * needs from a vendor plugin: a module launch by mangled name and a stream-ordered memset. The
 * HIP plugin implements it on hipModuleLaunchKernel / hipMemsetAsync (backends/hip/hip_kernels.c),
 * the CUDA plugin on cuLaunchKernel / cuMemsetD8Async. Which kernel, which grid, which arguments
 * and every grid limit common to both vendors are decided once, in backends/gpu; limits of one
 * vendor's launch shapes (HIP's 32-bit global work size) stay in that vendor's callback.
 */
#ifndef KMUX_GPU_LAUNCH_H
#define KMUX_GPU_LAUNCH_H

#include <stddef.h>

#include "gpu_kernel_names.h"
#include "kmux_backend.h"

/* Launch shapes of kernels/gpu (kmux_gpu_vendor.h, kmux_gpu_post.cu), for C. */
#define KMUX_GPU_HOST_BLOCK 256       /* KMUX_GPU_BLOCK: threads of the element-wise kernels */
#define KMUX_GPU_HOST_MAX_BLOCKS 8192 /* KMUX_GPU_MAX_BLOCKS: cast, amax, unscale */
#define KMUX_GPU_HOST_POST_MAX_BLOCKS 65535 /* kmux_gpu_post.cu's kMaxBlocks: post, pack bytes */
#define KMUX_GPU_HOST_MAX_GRID_YZ 65535     /* KMUX_GPU_MAX_GRID_YZ: tiled kernels loop beyond */

typedef struct kmux_gpu_launcher kmux_gpu_launcher;

/** One vendor plugin's stream, as the shared launch logic uses it. */
struct kmux_gpu_launcher {
    void *state;                   /**< the vendor plugin's state */
    const void *stream;            /**< the vendor plugin's stream object */
    int device;                    /**< kmux device index, for messages */
    const char *vendor;            /**< "hip" or "cuda": message prefix, "hip:0" */
    const kmux_backend_host *host; /**< set_error */
    /** Launches kernel `name` of module `mod`: grid[3] blocks of `block` threads (1-D blocks),
     *  params as cuLaunchKernel/hipModuleLaunchKernel kernelParams. what: the kmux call, for
     *  messages. Returns KMUX_OK or a status with the message set. */
    kmux_status (*launch)(const kmux_gpu_launcher *l, kmux_gpu_module_id mod, const char *name,
                          const unsigned grid[3], unsigned block, void **params, const char *what);
    /** dst[0..bytes) = value (byte), stream-ordered. Returns KMUX_OK or a status with the message
     *  set. */
    kmux_status (*memset_async)(const kmux_gpu_launcher *l, void *dst, int value, size_t bytes,
                                const char *what);
};

/** What every GPU plugin's state begins with (kmux_cuda_state, kmux_hip_state), so that the slots
 *  written once in backends/gpu (gpu_amp.c) reach the vendor from the plugin ABI's (state, stream)
 *  pair. */
typedef struct kmux_gpu_plugin {
    /** A launcher on `stream` (the plugin's own stream object) of plugin state `state`. */
    kmux_gpu_launcher (*launcher)(void *state, const void *stream);
} kmux_gpu_plugin;

#endif
