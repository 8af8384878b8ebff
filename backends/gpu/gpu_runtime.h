/*
 * gpu_runtime.h - the plugin ABI's memory, stream and event slots (kmux_malloc, kmux_memcpy,
 * kmux_stream_create, kmux_event_record, ...), written once for both GPU plugins in
 * gpu_runtime.c on their vendor calls (kmux_gpu_plugin, gpu_launch.h): each slot enters the
 * device, makes one vendor call, leaves, and names a failure with the call and the device
 * ("kmux_malloc: hipMalloc(64 bytes) on hip:0: ..."). Stream destruction stays with each plugin:
 * what a stream holds besides its native handle (cuDNN handle and workspace, rocBLAS handle)
 * is the vendor's.
 */
#ifndef KMUX_GPU_RUNTIME_H
#define KMUX_GPU_RUNTIME_H

#include "gpu_launch.h"

/** A kmux event on a GPU plugin: its kmux device and the native event (CUevent, hipEvent_t). */
typedef struct kmux_gpu_event {
    int device;
    void *native;
} kmux_gpu_event;

/* The slots, as kmux_backend_ops names them (state: a plugin state beginning with its
 * kmux_gpu_plugin; stream: a plugin stream beginning with its device). Each returns KMUX_OK or
 * the status of the vendor's error with the message set (KMUX_ERR_OUT_OF_MEMORY for a host
 * allocation that failed). */
kmux_status kmux_gpu_slot_mem_alloc(void *state, int device, size_t bytes, void **ptr);
/* host_alloc / host_free (kmux_host_malloc, kmux_host_free): the vendor's pinned host memory,
 * allocated with `device` entered. */
kmux_status kmux_gpu_slot_host_alloc(void *state, int device, size_t bytes, void **ptr);
kmux_status kmux_gpu_slot_host_free(void *state, int device, void *ptr);
kmux_status kmux_gpu_slot_mem_free(void *state, int device, void *ptr);
kmux_status kmux_gpu_slot_stream_create(void *state, int device, void *native, int own,
                                        void **stream);
kmux_status kmux_gpu_slot_stream_synchronize(void *state, void *stream);
kmux_status kmux_gpu_slot_mem_copy(void *state, void *stream, void *dst, const void *src,
                                   size_t bytes, kmux_memcpy_kind kind);
kmux_status kmux_gpu_slot_mem_set(void *state, void *stream, void *dst, int value, size_t bytes);
kmux_status kmux_gpu_slot_event_create(void *state, int device, void **event);
kmux_status kmux_gpu_slot_event_destroy(void *state, void *event);
kmux_status kmux_gpu_slot_event_record(void *state, void *event, void *stream);
kmux_status kmux_gpu_slot_stream_wait_event(void *state, void *stream, void *event);
kmux_status kmux_gpu_slot_event_synchronize(void *state, void *event);
kmux_status kmux_gpu_slot_event_elapsed_ms(void *state, void *start, void *end, float *ms);

/* ---- what the op families' GPU plans share (gpu_runtime.c) ---- */
/** A plan that is a malloc'ed copy of the description (size bytes), one implementation;
 *  KMUX_ERR_OUT_OF_MEMORY naming the vendor and fn. */
kmux_status kmux_gpu_plan_copy(void *state, const char *fn, const void *desc, size_t size,
                               void **plan, int *impl_count);
/** The plan_info slot of kmux's own GPU kernels: "kmux:gpu", f32, no workspace, deterministic. */
kmux_status kmux_gpu_kernels_info(void *state, const void *plan, int impl, kmux_plan_info *info);
/** Frees a plan of kmux_gpu_plan_copy (the plan_destroy slot). */
void kmux_gpu_plan_free(void *state, void *plan);

/** The op families of both GPU plugins (gpu_eltwise.c, gpu_optimizer.c, gpu_softmax.c). */
extern const kmux_eltwise_ops kmux_gpu_eltwise_ops;
extern const kmux_optimizer_ops kmux_gpu_optimizer_ops;
extern const kmux_softmax_ops kmux_gpu_softmax_ops;
extern const kmux_binary_ops kmux_gpu_binary_ops;
extern const kmux_reduction_ops kmux_gpu_reduction_ops;
extern const kmux_pooling_ops kmux_gpu_pooling_ops;

/** The kmux_backend_ops slots that both GPU plugins fill from backends/gpu (this header's, the
 *  pinned host memory of gpu_launch.h, the mixed-precision slots of gpu_kernels.h, the op
 *  families of gpu_eltwise.c and gpu_optimizer.c), with the ABI
 *  header, for the start of each plugin's ops table: {KMUX_GPU_SHARED_SLOTS, .name = "hip", ...}.
 *  What stays the plugin's: name, init/fini/probe/version, properties, capabilities, diagnostics,
 *  stream_destroy, the matmul and conv2d plan tables, matmul_degenerate. */
#define KMUX_GPU_SHARED_SLOTS                                                                      \
    .struct_size = sizeof(kmux_backend_ops), .abi_major = KMUX_BACKEND_ABI_MAJOR,                  \
    .abi_minor = KMUX_BACKEND_ABI_MINOR, .mem_alloc = kmux_gpu_slot_mem_alloc,                     \
    .mem_free = kmux_gpu_slot_mem_free, .host_alloc = kmux_gpu_slot_host_alloc,                    \
    .host_free = kmux_gpu_slot_host_free, .stream_create = kmux_gpu_slot_stream_create,            \
    .stream_synchronize = kmux_gpu_slot_stream_synchronize, .mem_copy = kmux_gpu_slot_mem_copy,    \
    .mem_set = kmux_gpu_slot_mem_set, .event_create = kmux_gpu_slot_event_create,                  \
    .event_destroy = kmux_gpu_slot_event_destroy, .event_record = kmux_gpu_slot_event_record,      \
    .event_synchronize = kmux_gpu_slot_event_synchronize,                                          \
    .event_elapsed_ms = kmux_gpu_slot_event_elapsed_ms,                                            \
    .stream_wait_event = kmux_gpu_slot_stream_wait_event, .cast = kmux_gpu_slot_cast,              \
    .amax = kmux_gpu_slot_amax, .unscale_check_finite = kmux_gpu_slot_unscale,                     \
    .loss_scale_update = kmux_gpu_slot_loss_scale, .fp8_scale_update = kmux_gpu_slot_fp8_scale,    \
    .eltwise = &kmux_gpu_eltwise_ops, .optimizer = &kmux_gpu_optimizer_ops,                        \
    .softmax = &kmux_gpu_softmax_ops, .binary = &kmux_gpu_binary_ops,                              \
    .reduction = &kmux_gpu_reduction_ops, .pooling = &kmux_gpu_pooling_ops

/** The caller's workspace of one execute (args->workspace of a plan made with
 *  prefs.caller_workspace, not NULL) for a call that needs `bytes`: *ws = caller and KMUX_OK, or
 *  KMUX_ERR_WORKSPACE ("<fn>: backend <vendor>: this call needs N bytes of workspace,
 *  args->workspace_bytes = M") when caller_bytes is smaller. The core has checked plan_info's
 *  size; this is the call's own (both stream workspaces, cuda_stream.c and hip_stream.c). */
kmux_status kmux_gpu_caller_workspace(const kmux_backend_host *host, const char *vendor,
                                      const char *fn, size_t bytes, void *caller,
                                      size_t caller_bytes, void **ws);

#endif
