/*
 * gpu_launch.h - what the launch logic of kmux's own GPU kernels (gpu_kernels.c and friends)
 * needs from a vendor plugin: a module launch by mangled name and a stream-ordered memset (the
 * kmux_gpu_launcher), both built in gpu_vendor.c on the plugin's vendor calls (kmux_gpu_plugin:
 * backends/hip/hip_vendor.c on hipModuleLaunchKernel / hipMemsetAsync, backends/cuda/
 * cuda_vendor.c on cuLaunchKernel / cuMemsetD8Async). Which kernel, which grid, which arguments
 * and every grid limit common to both vendors are decided once, in backends/gpu; limits of one
 * vendor's launch shapes (HIP's 32-bit global work size) stay in that vendor's bad_shape.
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

/** What every GPU plugin's state begins with (kmux_cuda_state, kmux_hip_state): its vendor's
 *  calls, so that what the two plugins do alike is written once in backends/gpu (gpu_vendor.c:
 *  the launcher, pinned host memory; gpu_amp.c: the mixed-precision slots). A plugin's stream
 *  objects begin with their kmux device index (int). Raw calls run with the device entered and
 *  return 0 or the vendor's error code. */
typedef struct kmux_gpu_plugin {
    const char *vendor;            /**< "cuda" or "hip": "cuda:0" in messages */
    const kmux_backend_host *host; /**< set at init */
    /** Makes kmux device `device` current for this thread; *guard: what leave undoes. fn: the
     *  kmux call, for the message of a failure. */
    kmux_status (*enter)(void *state, int device, const char *fn, int *guard);
    void (*leave)(void *state, int guard);
    /** The status of vendor error err, the message naming it after `what` (the vendor's form). */
    kmux_status (*fail)(void *state, int err, const char *what);
    /** Sets status s with message msg in the vendor's form. */
    kmux_status (*error)(void *state, kmux_status s, const char *msg);
    int (*host_alloc)(void *state, void **ptr, size_t bytes);
    int (*host_free)(void *state, void *ptr);
    int (*memset_async)(void *state, const void *stream, void *dst, int value, size_t bytes);
    /** Why the vendor cannot launch grid[3] blocks of `block` threads (into buf), or NULL;
     *  *status: the answer (KMUX_ERR_INTERNAL for an empty launch: a bug of the caller). */
    const char *(*bad_shape)(const unsigned grid[3], unsigned block, char *buf, size_t size,
                             kmux_status *status);
    /** *module: module `mod` on `device` (entered), loaded on its first use (its failures named:
     *  no code for the device, ...). what: the kmux call, for messages. */
    kmux_status (*module)(void *state, int device, kmux_gpu_module_id mod, const char *what,
                          void **module);
    int (*get_function)(void *state, void *module, const char *name, void **fn);
    int (*launch)(void *state, const void *stream, void *fn, const unsigned grid[3], unsigned block,
                  void **params);
    /** The vendor calls above by name, for messages ("cuMemHostAlloc", ...). */
    const char *host_alloc_name, *host_free_name, *memset_name, *get_function_name, *launch_name;
} kmux_gpu_plugin;

/** The launcher of a GPU plugin's stream (state: its kmux_gpu_plugin first; stream: its device
 *  index first): launches and memsets through the plugin's calls under the stream's device. */
kmux_gpu_launcher kmux_gpu_plugin_launcher(void *state, const void *stream);
/** The plugin ABI's host_alloc / host_free (kmux_host_malloc, kmux_host_free): the vendor's
 *  pinned host memory, allocated with `device` entered. */
kmux_status kmux_gpu_slot_host_alloc(void *state, int device, size_t bytes, void **ptr);
kmux_status kmux_gpu_slot_host_free(void *state, int device, void *ptr);
/** Sets status s with the message of a failed vendor call, one form for both plugins:
 *  "<prefix><what>: <name> (<code>): <desc><suffix>" (prefix "hip: " or suffix " [backend cuda]":
 *  each plugin's tag). Returns s. */
kmux_status kmux_gpu_vendor_error(const kmux_backend_host *host, kmux_status s, const char *prefix,
                                  const char *what, const char *name, int code, const char *desc,
                                  const char *suffix);

#endif
