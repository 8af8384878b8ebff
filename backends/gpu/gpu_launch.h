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

#include <pthread.h>
#include <stdarg.h>
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
    /** Device `device`'s module slots (KMUX_GPU_MOD_COUNT, NULL: not loaded) and, in *lock, the
     *  mutex that guards them. */
    void **(*modules)(void *state, int device, pthread_mutex_t **lock);
    /** Loads module `mod` into *module on `device` (entered), *bytes: the size of its image; its
     *  failures named (no code for the device, ...). what: the kmux call, for messages. */
    kmux_status (*module_load)(void *state, int device, kmux_gpu_module_id mod, const char *what,
                               void **module, size_t *bytes);
    int (*module_unload)(void *state, void *module);
    int (*get_function)(void *state, void *module, const char *name, void **fn);
    int (*launch)(void *state, const void *stream, void *fn, const unsigned grid[3], unsigned block,
                  void **params);
    /* Memory, streams and events (gpu_runtime.c). */
    int (*mem_alloc)(void *state, void **ptr, size_t bytes);
    int (*mem_free)(void *state, void *ptr);
    size_t stream_size; /**< bytes of the plugin's stream object, allocated zeroed by the layer */
    /** Fills a new stream object (its device already set): creates a blocking native stream
     *  (ordered with the null stream) when own, else adopts `native` (NULL: the null stream). */
    int (*stream_init)(void *state, void *stream, int own, void *native);
    int (*stream_sync)(void *state, const void *stream);
    /** kind: kmux_memcpy_kind (the numbering of cudaMemcpyKind and hipMemcpyKind). */
    int (*memcpy_async)(void *state, const void *stream, void *dst, const void *src, size_t bytes,
                        int kind);
    int (*event_new)(void *state, void **event);
    int (*event_free)(void *state, void *event);
    int (*event_record)(void *state, void *event, const void *stream);
    int (*stream_wait)(void *state, const void *stream, void *event);
    int (*event_sync)(void *state, void *event);
    int (*event_elapsed)(void *state, float *ms, void *start, void *end);
    /** The vendor calls above by name, for messages ("cuMemHostAlloc", ...). */
    const char *host_alloc_name, *host_free_name, *memset_name, *get_function_name, *launch_name;
    const char *mem_alloc_name, *mem_free_name, *stream_new_name, *stream_sync_name, *memcpy_name;
    const char *event_new_name, *event_free_name, *event_record_name, *stream_wait_name,
        *event_sync_name, *event_elapsed_name;
} kmux_gpu_plugin;

/** The kmux device index of a GPU plugin's stream object (each begins with it). */
static inline int kmux_gpu_stream_device(const void *stream) {
    return *(const int *)stream;
}

/** The launcher of a GPU plugin's stream (state: its kmux_gpu_plugin first; stream: its device
 *  index first): launches and memsets through the plugin's calls under the stream's device. */
kmux_gpu_launcher kmux_gpu_plugin_launcher(void *state, const void *stream);
/** Unloads the modules device `device` has loaded (the plugin's fini), each under the device
 *  entered; a device that cannot be entered keeps nothing (its context is gone with it). */
void kmux_gpu_modules_unload(void *state, int device);
/** The name, code and description of one vendor error, and each plugin's tag around the
 *  message (prefix "hip: " or suffix " [backend cuda]"). */
typedef struct kmux_gpu_vendor_code {
    const char *name; /**< "CUDA_ERROR_OUT_OF_MEMORY", "hipErrorOutOfMemory", ... */
    int code;
    const char *desc; /**< the vendor's description, or NULL */
    const char *prefix, *suffix;
} kmux_gpu_vendor_code;

/** Sets status s with the message of a failed vendor call, one form for both plugins:
 *  "<prefix><what>: <name> (<code>): <desc><suffix>", what formatted from fmt and ap as
 *  vsnprintf. Returns s. */
kmux_status kmux_gpu_vendor_error(const kmux_backend_host *host, kmux_status s,
                                  const kmux_gpu_vendor_code *c, const char *fmt, va_list ap)
#if defined(__GNUC__)
    __attribute__((format(printf, 4, 0)))
#endif
    ;

#endif
