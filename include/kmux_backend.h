/*
 * kmux_backend.h - the versioned plugin ABI between libkmux (the core) and a backend.
 *
 * A backend is a shared object (libkmux-<name>.so) that exports ONE symbol,
 * KMUX_BACKEND_ENTRY_SYMBOL, of type kmux_backend_entry_fn. The core calls it once per context
 * with a table of host services and gets back a constant table of function pointers that starts
 * with its size and ABI version. The core rejects a table whose abi_major differs from
 * KMUX_BACKEND_ABI_MAJOR (the reason is shown by kmux-info); a larger abi_minor is accepted, and
 * slots beyond struct_size are treated as NULL.
 *
 * Contract:
 * - The core validates every argument before calling an op; backends may assume valid input
 *   (sizes, leading dimensions, type combinations, non-NULL pointers where data is read).
 * - probe() has no side effects beyond creating the backend's own state: it answers how many
 *   devices there are, or 0 devices and a reason ("no CUDA driver (cudaErrorInsufficientDriver)").
 * - Optional slots may be NULL: the core then answers KMUX_ERR_UNSUPPORTED.
 * - Errors are reported by returning a status AND calling host->set_error with a message that
 *   names the backend and the native error code and its name.
 * - Plans are immutable after creation except through plan_next_impl; plan execute may be called
 *   concurrently from several threads with different streams.
 * - Backends never print to stdout, never abort; host->trace (stderr) is for KMUX_VERBOSE >= 2.
 */
#ifndef KMUX_BACKEND_H
#define KMUX_BACKEND_H

#include "kmux.h"

#ifdef __cplusplus
extern "C" {
#endif

#define KMUX_BACKEND_ABI_MAJOR 1
#define KMUX_BACKEND_ABI_MINOR 0
#define KMUX_BACKEND_ENTRY_SYMBOL "kmux_backend_entry"

/** Services the core offers to a plugin (valid for the lifetime of the backend instance). */
typedef struct kmux_backend_host {
    size_t struct_size;
    /** Sets the calling thread's kmux_last_error (printf format) and returns `status`. */
    kmux_status (*set_error)(kmux_status status, const char *fmt, ...)
#if defined(__GNUC__)
        __attribute__((format(printf, 2, 3)))
#endif
        ;
    /** Writes one "kmux_verbose,<what>,..." line to stderr when level <= the context's level. */
    void (*trace)(int level, const char *fmt, ...)
#if defined(__GNUC__)
        __attribute__((format(printf, 2, 3)))
#endif
        ;
    int verbose;     /**< KMUX_VERBOSE level of the context */
    int num_threads; /**< threads CPU backends should use (>= 1) */
} kmux_backend_host;

/** The function table of a backend. Slots after `name` may be NULL where marked optional. */
typedef struct kmux_backend_ops {
    uint32_t struct_size; /**< sizeof(kmux_backend_ops) as the plugin was built */
    uint16_t abi_major;   /**< KMUX_BACKEND_ABI_MAJOR */
    uint16_t abi_minor;   /**< KMUX_BACKEND_ABI_MINOR */
    const char *name;     /**< "openblas", "onednn", "cuda", "hip", "ref" */

    /* ---- lifetime and discovery (required) ---- */
    /** Creates the backend's state for one context. Must not fail because no device exists. */
    kmux_status (*init)(const kmux_backend_host *host, void **state);
    void (*fini)(void *state);
    /** Number of usable devices; when 0, reason (NUL-terminated) says why. */
    kmux_status (*probe)(void *state, int *device_count, char *reason, size_t reason_size);
    /** Version of the native libraries ("OpenBLAS 0.3.21"); static or state-owned storage. */
    const char *(*version)(void *state);
    kmux_status (*device_props)(void *state, int device, kmux_device_props *props);

    /* ---- memory, streams, events (required) ---- */
    kmux_status (*mem_alloc)(void *state, int device, size_t bytes, void **ptr);
    kmux_status (*mem_free)(void *state, int device, void *ptr);
    /** native == NULL and own == 1: create a new stream; own == 0: adopt native (may be NULL
     *  for the default stream) without taking ownership. */
    kmux_status (*stream_create)(void *state, int device, void *native, int own, void **stream);
    kmux_status (*stream_destroy)(void *state, void *stream);
    kmux_status (*stream_synchronize)(void *state, void *stream);
    kmux_status (*mem_copy)(void *state, void *stream, void *dst, const void *src, size_t bytes,
                            kmux_memcpy_kind kind);
    kmux_status (*mem_set)(void *state, void *stream, void *dst, int value, size_t bytes);
    kmux_status (*event_create)(void *state, int device, void **event);
    kmux_status (*event_destroy)(void *state, void *event);
    kmux_status (*event_record)(void *state, void *event, void *stream);
    kmux_status (*event_synchronize)(void *state, void *event);
    kmux_status (*event_elapsed_ms)(void *state, void *start, void *end, float *ms);

    /* ---- plans (optional: NULL = the operation is unsupported) ---- */
    /** desc has been validated (including the dtype table of kmux.h); the backend answers
     *  KMUX_ERR_UNSUPPORTED (with a reason) for what its device cannot do. */
    kmux_status (*matmul_plan_create)(void *state, int device, const kmux_matmul_desc *desc,
                                      const kmux_plan_prefs *prefs, void **plan);
    kmux_status (*matmul_execute)(void *state, void *plan, void *stream,
                                  const kmux_matmul_args *args);
    kmux_status (*conv2d_plan_create)(void *state, int device, const kmux_conv2d_desc *desc,
                                      const kmux_plan_prefs *prefs, void **plan);
    kmux_status (*conv2d_execute)(void *state, void *plan, void *stream,
                                  const kmux_conv2d_args *args);
    /** Fills impl, effective_compute, workspace_bytes, deterministic, impl_index (the core fills
     *  device). impl must stay valid until the next plan_next_impl or plan_destroy. */
    kmux_status (*plan_info)(void *state, void *plan, kmux_plan_info *info);
    /** Optional: KMUX_ERR_LAST_IMPL when there is no further implementation. */
    kmux_status (*plan_next_impl)(void *state, void *plan);
    void (*plan_destroy)(void *state, void *plan);

    /* ---- mixed precision (optional) ---- */
    kmux_status (*cast)(void *state, void *stream, int64_t n, const void *src, kmux_dtype src_type,
                        void *dst, kmux_dtype dst_type, const kmux_cast_options *opts);
    kmux_status (*amax)(void *state, void *stream, int64_t n, const void *x, kmux_dtype type,
                        float *amax);
    kmux_status (*unscale_check_finite)(void *state, void *stream, int64_t count,
                                        void *const *tensors, const int64_t *sizes,
                                        const kmux_dtype *types, const float *inv_scale,
                                        float *found_inf);
    kmux_status (*loss_scale_update)(void *state, void *stream, float *scale,
                                     int32_t *growth_tracker, const float *found_inf,
                                     double growth_factor, double backoff_factor,
                                     int64_t growth_interval);
    kmux_status (*fp8_scale_update)(void *state, void *stream, const float *amax_history,
                                    int64_t history_len, kmux_dtype fp8_type, float margin,
                                    float *scale);
} kmux_backend_ops;

/** The one symbol a plugin exports. Returns NULL only if the plugin cannot work at all. */
typedef const kmux_backend_ops *(*kmux_backend_entry_fn)(void);

#if defined(__GNUC__)
#define KMUX_BACKEND_EXPORT __attribute__((visibility("default")))
#else
#define KMUX_BACKEND_EXPORT
#endif

#ifdef __cplusplus
}
#endif
#endif /* KMUX_BACKEND_H */
