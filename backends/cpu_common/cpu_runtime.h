/*
 * cpu_runtime.h - memory, streams and events shared by every CPU backend (ref, openblas, onednn).
 *
 * On a CPU device "device memory" is host memory (64-byte aligned), a stream executes
 * synchronously in the calling thread and an event records the monotonic clock. Each function
 * has the signature of its slot in kmux_backend_ops, so a CPU backend fills its table with them.
 */
#ifndef KMUX_CPU_RUNTIME_H
#define KMUX_CPU_RUNTIME_H

#include "kmux_backend.h"

/** Every CPU backend's state struct STARTS with this header, so that the shared slots below can
 *  read the host services and the thread count from any CPU backend's state pointer. */
typedef struct kmux_cpu_state_header {
    const kmux_backend_host *host;
    int num_threads; /**< >= 1 */
} kmux_cpu_state_header;

kmux_status kmux_cpu_mem_alloc(void *state, int device, size_t bytes, void **ptr);
kmux_status kmux_cpu_mem_free(void *state, int device, void *ptr);
kmux_status kmux_cpu_stream_create(void *state, int device, void *native, int own, void **stream);
kmux_status kmux_cpu_stream_destroy(void *state, void *stream);
kmux_status kmux_cpu_stream_synchronize(void *state, void *stream);
kmux_status kmux_cpu_mem_copy(void *state, void *stream, void *dst, const void *src, size_t bytes,
                              kmux_memcpy_kind kind);
kmux_status kmux_cpu_mem_set(void *state, void *stream, void *dst, int value, size_t bytes);
kmux_status kmux_cpu_event_create(void *state, int device, void **event);
kmux_status kmux_cpu_event_destroy(void *state, void *event);
kmux_status kmux_cpu_event_record(void *state, void *event, void *stream);
kmux_status kmux_cpu_event_synchronize(void *state, void *event);
kmux_status kmux_cpu_event_elapsed_ms(void *state, void *start, void *end, float *ms);

/** The memory, stream and event slots above, for the designated initializer of a CPU backend's
 *  kmux_backend_ops: { .name = ..., KMUX_CPU_RUNTIME_SLOTS, .matmul_plan_create = ... }. */
#define KMUX_CPU_RUNTIME_SLOTS                                                                     \
    .mem_alloc = kmux_cpu_mem_alloc, .mem_free = kmux_cpu_mem_free,                                \
    .stream_create = kmux_cpu_stream_create, .stream_destroy = kmux_cpu_stream_destroy,            \
    .stream_synchronize = kmux_cpu_stream_synchronize, .mem_copy = kmux_cpu_mem_copy,              \
    .mem_set = kmux_cpu_mem_set, .event_create = kmux_cpu_event_create,                            \
    .event_destroy = kmux_cpu_event_destroy, .event_record = kmux_cpu_event_record,                \
    .event_synchronize = kmux_cpu_event_synchronize, .event_elapsed_ms = kmux_cpu_event_elapsed_ms

/* Mixed-precision slots on the vectorised kernels of kernels/cpu (backends/cpu_common/cpu_amp.c),
 * used by cpu:openblas and cpu:onednn (ref has its own scalar oracle). */
kmux_status kmux_cpu_op_cast(void *state, void *stream, int64_t n, const void *src,
                             kmux_dtype src_type, void *dst, kmux_dtype dst_type,
                             const kmux_cast_options *opts);
kmux_status kmux_cpu_op_amax(void *state, void *stream, int64_t n, const void *x, kmux_dtype type,
                             float *amax);
kmux_status kmux_cpu_op_unscale_check_finite(void *state, void *stream, int64_t count,
                                             void *const *tensors, const int64_t *sizes,
                                             const kmux_dtype *types, const float *inv_scale,
                                             float *found_inf);
kmux_status kmux_cpu_op_loss_scale_update(void *state, void *stream, float *scale,
                                          int32_t *growth_tracker, const float *found_inf,
                                          double growth_factor, double backoff_factor,
                                          int64_t growth_interval);
kmux_status kmux_cpu_op_fp8_scale_update(void *state, void *stream, const float *amax_history,
                                         int64_t history_len, kmux_dtype fp8_type, float margin,
                                         float *scale);

/** The mixed-precision slots above, for the designated initializer of a backend's
 *  kmux_backend_ops (as KMUX_CPU_RUNTIME_SLOTS). */
#define KMUX_CPU_AMP_SLOTS                                                                         \
    .cast = kmux_cpu_op_cast, .amax = kmux_cpu_op_amax,                                            \
    .unscale_check_finite = kmux_cpu_op_unscale_check_finite,                                      \
    .loss_scale_update = kmux_cpu_op_loss_scale_update,                                            \
    .fp8_scale_update = kmux_cpu_op_fp8_scale_update

/* ---- what the op families' CPU plans share (cpu_runtime.c) ---- */
/** A plan that is a malloc'ed copy of the description (size bytes), one implementation;
 *  KMUX_ERR_OUT_OF_MEMORY naming fn. */
kmux_status kmux_cpu_plan_copy(void *state, const char *fn, const void *desc, size_t size,
                               void **plan, int *impl_count);
/** The plan_info of kmux's own CPU kernels: "kmux:cpu", f32, no workspace, deterministic. */
kmux_status kmux_cpu_kernels_info(kmux_plan_info *info);
/** Frees a plan of kmux_cpu_plan_copy (the plan_destroy slot). */
void kmux_cpu_plan_free(void *state, void *plan);

/* The element-wise family on kmux's CPU kernels (cpu_eltwise.c): every algorithm of the table,
 * f32/f16/bf16, both directions; one implementation, "kmux:cpu". */
extern const kmux_eltwise_ops kmux_cpu_eltwise_ops;
/** Fills a device's caps.eltwise with what kmux_cpu_eltwise_ops runs. */
void kmux_cpu_eltwise_caps(kmux_family_caps *c);
/** The pieces of kmux_cpu_eltwise_ops, for a backend that puts its own implementation first
 *  (cpu:onednn): the plan (a copy of the description) and one run of the kernels on the
 *  backend's threads; its plan_info is kmux_cpu_kernels_info. */
kmux_status kmux_cpu_eltwise_plan_create(void *state, int device, const kmux_eltwise_desc *desc,
                                         const kmux_plan_prefs *prefs, void **plan,
                                         int *impl_count);
kmux_status kmux_cpu_eltwise_run(void *state, const kmux_eltwise_desc *d,
                                 const kmux_eltwise_args *args);

/* The optimizer family on kmux's CPU kernels (cpu_optimizer.c): SGD, Adam, AdamW, f32/f16/bf16
 * gradients; "kmux:cpu". */
extern const kmux_optimizer_ops kmux_cpu_optimizer_ops;
/** Fills a device's caps.optimizer with what kmux_cpu_optimizer_ops runs. */
void kmux_cpu_optimizer_caps(kmux_family_caps *c);

/* The softmax family on kmux's CPU kernels (cpu_softmax.c); "kmux:cpu". */
extern const kmux_softmax_ops kmux_cpu_softmax_ops;
/** Fills a device's caps.softmax with what kmux_cpu_softmax_ops runs. */
void kmux_cpu_softmax_caps(kmux_family_caps *c);

/* The binary and reduction families on kmux's CPU kernels (cpu_binary.c, cpu_reduction.c);
 * "kmux:cpu". */
extern const kmux_binary_ops kmux_cpu_binary_ops;
extern const kmux_reduction_ops kmux_cpu_reduction_ops;
void kmux_cpu_binary_caps(kmux_family_caps *c);
void kmux_cpu_reduction_caps(kmux_family_caps *c);
/* The pooling family on kmux's CPU kernels (cpu_pooling.c); "kmux:cpu". */
extern const kmux_pooling_ops kmux_cpu_pooling_ops;
void kmux_cpu_pooling_caps(kmux_family_caps *c);

/** Writes the caps of every op family kmux's CPU kernels run (eltwise, optimizer, softmax,
 *  binary, reduction, pooling) into caps, each where caps->struct_size covers it (an older core's
 * struct is shorter). */
void kmux_cpu_families_caps(kmux_device_caps *caps);

/** Fills the host part of a CPU device's properties: vendor and model name (/proc/cpuinfo),
 *  arch ("avx512_core", "avx2", "sse4.2", "generic" from the CPU's ISA flags), physical memory,
 *  compute_units = num_threads; no clock and no peaks (kmux_cpu_model_peaks in cpu_model.h
 *  fills those for a backend that is a speed path). id, backend, library_version and
 *  dtype_support are the caller's. */
void kmux_cpu_fill_host_props(kmux_device_props *props, int num_threads);

/** Monotonic clock in seconds. */
double kmux_cpu_now_s(void);

#endif
