/*
 * internal.h - the core's private types: context, backend instances, devices, streams, events,
 * plans. Not installed; never seen by users or plugins.
 */
#ifndef KMUX_INTERNAL_H
#define KMUX_INTERNAL_H

#include <pthread.h>
#include <stddef.h>
#include <stdarg.h>

#include "dispatch/common/kmux_common.h"
#include "kmux_backend.h"

#define KMUX_REASON_MAX 512
/** The most devices one backend may report (a probe answering more is refused at load). */
#define KMUX_MAX_DEVICES_PER_BACKEND 1024
/** Limits of kmux_context_options (and their environment variables). */
#define KMUX_MAX_THREADS 4096
#define KMUX_PLAN_CACHE_MAX 65536
#define KMUX_BACKEND_PATH_MAX 4096
/** |margin| of kmux_fp8_scale_update: an exponent of 2; f32 scales span 2^-126 .. 2^128. */
#define KMUX_FP8_MARGIN_MAX 127

/** 1 when a plugin's table has the optional slot `field` set: its struct_size (the size of the
 *  table the plugin was built with) covers the slot and the slot is not NULL. Optional slots are
 *  those added in a minor ABI version (kmux_backend.h); an older plugin's table ends before them.
 */
#define KMUX_OPS_HAS(ops, field)                                                                   \
    ((ops)->struct_size >= offsetof(kmux_backend_ops, field) + sizeof((ops)->field) &&             \
     (ops)->field != NULL)

/* ---- errors (errors.c) ---- */

/** Sets this thread's kmux_last_error (printf format) and returns status. */
kmux_status kmux_set_error(kmux_status status, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
/** Clears this thread's message; every public entry point calls it first. */
void kmux_clear_error(void);

/** KMUX_FAULT_ALLOC's counter (alloc_fault.c): 1 when this allocation must fail. */
int kmux_alloc_fault(void);
/** Installs kmux_alloc_fault as the core's kmux_sys_alloc hook (plugins get it through
 *  kmux_backend_host.alloc_fault). */
void kmux_alloc_fault_install(void);

/* ---- verbose trace (verbose.c) ---- */

/** Level of the process-wide trace: the largest level asked by any live context (0 when none). */
int kmux_verbose_level(void);
/** A context with this level starts (acquire) or ends (release). */
void kmux_verbose_acquire(int level);
void kmux_verbose_release(int level);
/** Writes "kmux_verbose,<fmt...>\n" to stderr in one write when level <= kmux_verbose_level(). */
void kmux_trace(int level, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

/* ---- handles (handles.c) ---- */

typedef enum kmux_handle_kind {
    KMUX_HANDLE_CONTEXT = 1,
    KMUX_HANDLE_DEVICE,
    KMUX_HANDLE_STREAM,
    KMUX_HANDLE_EVENT,
    KMUX_HANDLE_PLAN,
    KMUX_HANDLE_KIND_COUNT
} kmux_handle_kind;

/** First member of every handle object: its kind (high bit set once destroyed) and the number of
 *  times its memory was recycled. */
typedef struct kmux_handle {
    uint32_t tag;
    uint32_t gen;
} kmux_handle;

/** A zeroed handle object of size bytes (recycled from the quarantine or new); NULL when out of
 *  memory. Its memory is never returned to malloc. */
void *kmux_handle_alloc(kmux_handle_kind kind, size_t size);
/** Marks a handle destroyed and queues it for recycling. */
void kmux_handle_release(void *h);
/** KMUX_OK when p is a live handle of this kind; otherwise KMUX_ERR_INVALID_ARGUMENT with
 *  "fn: arg is NULL", "fn: arg 0x.. was destroyed" or "fn: arg 0x.. is not a kind". Reads no
 *  memory kmux did not allocate as a handle. */
kmux_status kmux_handle_check(const char *fn, const char *arg, const void *p,
                              kmux_handle_kind kind);
const char *kmux_handle_kind_name(kmux_handle_kind kind);
/** Returns from the calling function when h is not a live handle of this kind. */
#define KMUX_CHECK_HANDLE(fn, arg, h, kind)                                                        \
    do {                                                                                           \
        kmux_status hst_ = kmux_handle_check(fn, arg, h, kind);                                    \
        if (hst_ != KMUX_OK) return hst_;                                                          \
    } while (0)

/* ---- backends and devices ---- */

typedef struct kmux_backend_instance {
    char name[32];   /**< from the table, or from the file name when not loaded */
    char path[1024]; /**< file it came from, "(built in)" for ref */
    char version[160];
    char reason[KMUX_REASON_MAX]; /**< why unavailable; "" when available */
    int out_of_memory;            /**< init or probe ran out of memory: unavailable only for now, so
                                       kmux_context_create fails (KMUX_ERR_OUT_OF_MEMORY) rather than
                                       leave the backend out */
    void *dl_handle;              /**< dlopen handle; NULL for ref and for rejected files */
    const kmux_backend_ops *ops;  /**< NULL when the plugin was rejected */
    void *state;                  /**< the plugin's state for this context */
    int device_count;
    int available;
    kmux_backend_host host;
} kmux_backend_instance;

struct kmux_device {
    kmux_handle hdr; /**< first: see handles.c */
    kmux_context *ctx;
    kmux_backend_instance *backend;
    int index; /**< index within its backend */
    kmux_device_props props;
    kmux_device_caps caps; /**< read once at context creation (device_caps slot) */
    int measured; /**< 1 for the "auto" device: its plans are tuned unless told otherwise */
};

struct kmux_stream {
    kmux_handle hdr; /**< first: see handles.c */
    kmux_device *dev;
    void *native; /**< the backend's stream object */
};

struct kmux_event {
    kmux_handle hdr; /**< first: see handles.c */
    kmux_device *dev;
    void *native;
    int recorded;
};

typedef enum kmux_plan_kind {
    KMUX_PLAN_MATMUL = 1,
    KMUX_PLAN_CONV2D = 2,
    KMUX_PLAN_ELTWISE = 3,
    KMUX_PLAN_OPTIMIZER = 4,
    KMUX_PLAN_SOFTMAX = 5,
    KMUX_PLAN_BINARY = 6,
    KMUX_PLAN_REDUCTION = 7,
    KMUX_PLAN_POOLING = 8
} kmux_plan_kind;

#define KMUX_PLAN_IMPL_NAME 192

struct kmux_plan {
    kmux_handle hdr; /**< first: see handles.c */
    kmux_device *dev;
    kmux_plan_kind kind;
    void *native;   /**< the backend's plan; NULL when the core runs the plan itself (empty
                         problems, k == 0) */
    int impl;       /**< current implementation (kmux_plan_next_impl advances it) */
    int impl_count; /**< implementations the backend prepared (>= 1) */
    union {
        kmux_matmul_desc matmul;
        kmux_conv2d_desc conv;
        kmux_eltwise_desc eltwise;
        kmux_optimizer_desc optimizer;
        kmux_softmax_desc softmax;
        kmux_binary_desc binary;
        kmux_reduction_desc reduction;
        kmux_pooling_desc pooling;
    } desc;
    int caller_ws; /**< made with prefs.caller_workspace: executes run in args' workspace */
    /** A convolution whose epilogue the core runs after the backend's (which was given the
     *  descriptor without it): its implementations' names with " + epilogue" (impl_count). */
    int conv_epi_core;
    char (*impl_names)[KMUX_PLAN_IMPL_NAME];
    int cached;  /**< owned by the plan cache: kmux_plan_destroy refuses it */
    int counted; /**< counted in ctx->live_plans (a caller's plan); kmux_plan_free uncounts it */
};

typedef struct kmux_plan_cache kmux_plan_cache;

struct kmux_context {
    kmux_handle hdr; /**< first: see handles.c */
    kmux_backend_instance *backends;
    int backend_count;
    kmux_device **devices; /**< usable devices only */
    int device_count;
    /** The device "auto" (kmux_device_find): the first GPU, else cpu:auto, else a CPU device,
     *  under the id "auto" and measured; not in devices[] (a request, not one more device). */
    kmux_device *auto_device;
    char default_device[128];
    int num_threads;
    int verbose;
    kmux_plan_cache *plan_cache;
    /* Objects the user created and has not destroyed (kmux_context_destroy refuses while any is
     * alive); atomics: streams of one context may be made on several threads. */
    int live_streams, live_events, live_plans;
    long live_allocs;
};

/** Adds delta to a live counter of ctx. */
#define KMUX_LIVE_ADD(ctx, field, delta)                                                           \
    __atomic_add_fetch(&(ctx)->field, (delta), __ATOMIC_RELAXED)

/* ---- alloc_record.c: what kmux_malloc / kmux_host_malloc returned, process-wide ---- */

typedef enum kmux_alloc_kind { KMUX_ALLOC_DEVICE = 1, KMUX_ALLOC_HOST = 2 } kmux_alloc_kind;
/** Records a block a backend just returned (counts it in dev->ctx->live_allocs).
 *  KMUX_ERR_OUT_OF_MEMORY (message set) when the record cannot grow: free the block then. */
kmux_status kmux_alloc_record_add(kmux_device *dev, void *ptr, size_t bytes, kmux_alloc_kind kind);
/** Removes ptr's record before it is freed; KMUX_ERR_INVALID_ARGUMENT (message names fn, ptr and
 *  the devices) when ptr is not a live block of this kind on dev. *bytes: its size (may be NULL).
 */
kmux_status kmux_alloc_record_take(kmux_device *dev, void *ptr, kmux_alloc_kind kind,
                                   const char *fn, size_t *bytes);

/* ---- loader.c ---- */

/** Finds, loads and probes every backend (ref first) into ctx->backends. Never fails because a
 *  plugin is broken: such a plugin is recorded as unavailable with the reason. */
kmux_status kmux_load_backends(kmux_context *ctx, const char *backend_path, const char *allow);
/** Finalises and unloads every backend of ctx. */
void kmux_unload_backends(kmux_context *ctx);

/* ---- plan_cache.c ---- */

kmux_status kmux_plan_cache_create(int capacity, kmux_plan_cache **cache);
void kmux_plan_cache_destroy(kmux_plan_cache *cache);
/** Returns the cached matmul plan for (dev, desc) or creates, caches and returns one. The plan
 *  stays valid until the context is destroyed (evicted plans are kept alive while in use). */
kmux_status kmux_plan_cache_get_matmul(kmux_plan_cache *cache, kmux_device *dev,
                                       const kmux_matmul_desc *desc, kmux_plan **plan);
/** Releases a plan obtained from kmux_plan_cache_get_matmul. */
void kmux_plan_cache_release(kmux_plan_cache *cache, kmux_plan *plan);

/* ---- plan.c ---- */

/** Creates a matmul plan without validation (the caller validated desc). The plan is not
 *  counted as the caller's (ctx->live_plans): the core's own plans (the plan cache, cpu:auto's
 *  sub-plans) are made this way. */
kmux_status kmux_matmul_plan_create_unchecked(kmux_device *dev, const kmux_matmul_desc *desc,
                                              const kmux_plan_prefs *prefs, kmux_plan **plan);
/** The same for a convolution plan (desc resolved and validated by the caller). */
kmux_status kmux_conv2d_plan_create_unchecked(kmux_device *dev, const kmux_conv2d_desc *desc,
                                              const kmux_plan_prefs *prefs, kmux_plan **plan);
/** Destroys any plan, cached or not. */
void kmux_plan_free(kmux_plan *plan);
/** Executes a validated matmul plan with validated args, with the KMUX_VERBOSE trace. */
kmux_status kmux_matmul_execute_unchecked(kmux_plan *plan, kmux_stream *stream,
                                          const kmux_matmul_args *args);
/** Runs a validated matmul (desc and args) on stream with the context's cached plan for it. */
kmux_status kmux_matmul_run_cached(kmux_stream *stream, const kmux_matmul_desc *desc,
                                   const kmux_matmul_args *args);

/** The degenerate matmul (k == 0 or alpha == 0, m, n, batch_count >= 1) of a validated desc and
 *  args: the shared CPU finish routine on host devices, the backend's matmul_degenerate slot
 *  elsewhere. fn names the public entry point in messages. */
kmux_status kmux_matmul_run_degenerate(const char *fn, kmux_stream *stream,
                                       const kmux_matmul_desc *desc, const kmux_matmul_args *args);
/** The epilogue of a forward convolution (valid desc and args), over y in place, for a device
 *  that ran the convolution without it (dispatch/conv_epilogue.c). */
kmux_status kmux_conv_epilogue_run(const char *fn, kmux_stream *stream, const kmux_conv2d_desc *d,
                                   const kmux_conv2d_args *a);

/* ---- plan.c: what every plan kind shares (eltwise.c and the later families use it) ---- */

/** The slots every kind's ops struct has alike, and the kind in messages ("an optimizer"). */
typedef struct kmux_plan_slots {
    kmux_status (*plan_info)(void *state, const void *plan, int impl, kmux_plan_info *info);
    void (*plan_destroy)(void *state, void *plan);
    const char *noun;
} kmux_plan_slots;
/** The slots of plan kind `kind` in backend table o: the one switch over kinds. */
kmux_plan_slots kmux_plan_kind_slots(const kmux_backend_ops *o, kmux_plan_kind kind);

/** Checks the arguments of plan creation (NULL pointers, the handle, prefs resolved into *out). */
kmux_status kmux_plan_check_create(const char *fn, const kmux_device *dev, const void *desc,
                                   kmux_plan *const *plan, const kmux_plan_prefs *prefs,
                                   kmux_plan_prefs *out);
/** A new plan handle of `kind` on dev (impl_count 1, no native plan yet). */
kmux_status kmux_plan_new(kmux_device *dev, kmux_plan_kind kind, kmux_plan **out);
/** Checks the arguments of an execution: non-NULL pointers, a plan of `kind`, a stream of the
 *  plan's device. */
kmux_status kmux_plan_check_execute(const char *fn, const kmux_plan *plan, const kmux_stream *s,
                                    const void *args, kmux_plan_kind kind);
/** A backend's failure st as the caller sees it (a message made when the backend left none). */
kmux_status kmux_plan_backend_failed(kmux_status st, const char *fn, const kmux_device *dev);
/** The backend's plan of one op family for a validated, caps-checked description. */
typedef kmux_status (*kmux_family_create_fn)(kmux_device *dev, const void *desc,
                                             const kmux_plan_prefs *prefs, void **native,
                                             int *impl_count);
/** A plan of an op family: desc (desc_size bytes) copied into it, the backend's plan made by
 *  create unless `empty` (nothing to do: the core runs it), impl_count checked, traced; not
 *  counted as the caller's. fn names the public function in messages. */
kmux_status kmux_plan_create_family(kmux_device *dev, kmux_plan_kind kind, const char *fn,
                                    const void *desc, size_t desc_size, int empty,
                                    const kmux_plan_prefs *prefs, kmux_family_create_fn create,
                                    kmux_plan **plan);
/** A plan made through the public API: counted in ctx->live_plans until it is freed (the core's
 *  own plans, made by the _unchecked functions, are not). */
void kmux_plan_count_as_callers(kmux_plan *pl);
/** kmux_eltwise_plan_create for a validated description (the auto device's sub-plans): the
 *  caps check, the backend's plan; not counted as the caller's. */
kmux_status kmux_eltwise_plan_create_unchecked(kmux_device *dev, const kmux_eltwise_desc *desc,
                                               const kmux_plan_prefs *prefs, kmux_plan **plan);
/** The same for a validated optimizer description. */
kmux_status kmux_optimizer_plan_create_unchecked(kmux_device *dev, const kmux_optimizer_desc *desc,
                                                 const kmux_plan_prefs *prefs, kmux_plan **plan);
/** The same for a validated softmax description. */
kmux_status kmux_softmax_plan_create_unchecked(kmux_device *dev, const kmux_softmax_desc *desc,
                                               const kmux_plan_prefs *prefs, kmux_plan **plan);
/** The same for a validated binary description. */
kmux_status kmux_binary_plan_create_unchecked(kmux_device *dev, const kmux_binary_desc *desc,
                                              const kmux_plan_prefs *prefs, kmux_plan **plan);
/** The same for a validated reduction description. */
kmux_status kmux_reduction_plan_create_unchecked(kmux_device *dev, const kmux_reduction_desc *desc,
                                                 const kmux_plan_prefs *prefs, kmux_plan **plan);
/** The same for a validated pooling description. */
kmux_status kmux_pooling_plan_create_unchecked(kmux_device *dev, const kmux_pooling_desc *desc,
                                               const kmux_plan_prefs *prefs, kmux_plan **plan);
/** Around a backend's execute: the start time for the level-1 trace (0 without it), and the
 *  trace line (KMUX_VERBOSE >= 1; a GPU stream is synchronised around the call). */
double kmux_plan_exec_begin(kmux_plan *plan, kmux_stream *stream);
void kmux_plan_exec_end(kmux_plan *plan, kmux_stream *stream, double t0);

/* ---- caps.c: capability checks, once for every backend ---- */

/** Refuses (KMUX_ERR_UNSUPPORTED, message naming the limit and the device) a validated matmul
 *  description beyond dev's capabilities (sizes, batch, leading dimensions, operand spans,
 *  epilogue, type row, emulation under prefs). */
kmux_status kmux_caps_check_matmul(const char *fn, const kmux_device *dev,
                                   const kmux_matmul_desc *d, const kmux_plan_prefs *prefs);
/** The same for a validated convolution description. */
kmux_status kmux_caps_check_conv(const char *fn, const kmux_device *dev, const kmux_conv2d_desc *d,
                                 const kmux_plan_prefs *prefs);
/** What a family op asks of a device, for kmux_caps_check_family. */
typedef struct kmux_family_query {
    int alg;
    const char *alg_name;
    kmux_dtype dtype;
    const char *dtype_field; /**< "dtype", "grad_type": the field named in a refusal */
    int prop;                /**< kmux_prop, or 0 when the family has no direction */
    int64_t n;
    const char *n_field; /**< how a refusal of n names it ("dims" product); NULL: "n" */
} kmux_family_query;
/** Refuses (KMUX_ERR_UNSUPPORTED, one message for every backend) what a device's caps of one op
 *  family (`family`: "element-wise", "optimizer") do not list; has_ops: the backend has the
 *  family's ABI entry. */
kmux_status kmux_caps_check_family(const char *fn, const kmux_device *dev, int has_ops,
                                   const kmux_family_caps *c, const char *family,
                                   const kmux_family_query *q);
/** Operand pointers against the device's ptr_align (op: "matmul" caps or conv direction caps). */
kmux_status kmux_caps_check_align(const char *fn, const kmux_device *dev, const kmux_op_caps *c,
                                  const void *const *ptrs, const char *const *names, int count);

/* ---- compat.c: structs of an older, shorter struct_size ---- */

/** Copies *in into *out, today's full struct: fields beyond in->struct_size take their _INIT
 *  defaults; KMUX_ERR_INVALID_ARGUMENT (fn in the message) when in->struct_size does not hold the
 *  struct's required fields (kmux.h names them). prefs and opts may be NULL (all defaults). */
kmux_status kmux_resolve_matmul_desc(const char *fn, const kmux_matmul_desc *in,
                                     kmux_matmul_desc *out);
kmux_status kmux_resolve_matmul_args(const char *fn, const kmux_matmul_args *in,
                                     kmux_matmul_args *out);
kmux_status kmux_resolve_conv_desc(const char *fn, const kmux_conv2d_desc *in,
                                   kmux_conv2d_desc *out);
kmux_status kmux_resolve_conv_args(const char *fn, const kmux_conv2d_args *in,
                                   kmux_conv2d_args *out);
kmux_status kmux_resolve_plan_prefs(const char *fn, const kmux_plan_prefs *in,
                                    kmux_plan_prefs *out);
kmux_status kmux_resolve_cast_options(const char *fn, const kmux_cast_options *in,
                                      kmux_cast_options *out);

/* ---- shared helpers ---- */

/** The scale type of a compute type: KMUX_F64, KMUX_I32 or KMUX_F32 (as cublasGemmEx). */
kmux_dtype kmux_scale_type(kmux_compute_type ct);
/** 1 when the host scalar p (of the scale type of ct) is zero. */
int kmux_scalar_is_zero(const void *p, kmux_compute_type ct);

#endif
