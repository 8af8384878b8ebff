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
 * - Plans are immutable after creation: every implementation is prepared by plan_create, the
 *   core passes the index of the current one; execute may be called concurrently from several
 *   threads with different streams.
 * - The core owns empty problems (m, n or batch_count = 0: nothing to do) and degenerate ones
 *   (k = 0 or alpha = 0: D = d_scale * act(beta * C + bias)); capability limits (kmux_device_caps)
 *   are checked by the core once, with one message for every backend.
 * - ABI v2 (this version): plan slots per kind (kmux_matmul_ops, kmux_conv2d_ops) with an
 *   implementation index, device_caps, matmul_degenerate. v1 plugins are rejected with a reason.
 * - ABI 2.1 appended device_diag; ABI 2.2 appended host_alloc / host_free (page-locked host
 *   memory); ABI 2.3 appended dtype_instead / dtype_instead_note to kmux_device_caps (the dtype
 *   a device runs in place of one it does not); ABI 2.4 appended settle_ms to kmux_device_caps;
 *   ABI 2.5 appended stream_wait_event. ABI 2.6 appended the op families: eltwise,
 *   optimizer and softmax to kmux_device_caps (a kmux_family_caps each) and to kmux_backend_ops
 *   (a kmux_<family>_ops each), one entry per family, never one per algorithm. ABI 2.7 appended
 *   the binary and reduction families the same way, ABI 2.8 the pooling family. ABI 2.9 appended
 * caller_workspace to kmux_device_caps (and workspace/workspace_bytes to the matmul and conv2d
 * args, which older plugins ignore). ABI 2.10 added the backward and auxiliary epilogues
 * (RELU_AUX, GELU_AUX, DRELU, DGELU, BGRADA, BGRADB; aux_type, aux_ld, stride_aux in the matmul
 * desc, aux and bias_grad in its args): a device runs them only when its caps.matmul.epilogues
 * says so, so older plugins never see them. ABI 2.11 added the forward convolution epilogue
 * (epilogue, bias_type in the conv2d desc; bias, aux in its args): a plugin runs it only when
 * caps.conv2d[0].epilogues says so; otherwise the core gives it the convolution without it and
 * runs the epilogue itself after (its matmul_degenerate slot, k = 0). ABI 2.12 added
 * pointer_mode to the matmul desc: a device other than the host's sees DEVICE only when its
 * caps.matmul_device_scalars says it reads alpha and beta from device memory. ABI 2.13 appended
 * alloc_fault to kmux_backend_host (the core's KMUX_FAULT_ALLOC counter). Slots appended at
 * the end are optional: NULL or beyond struct_size = absent.
 * - Backends never print to stdout, never abort; host->trace (stderr) is for KMUX_VERBOSE >= 2.
 */
#ifndef KMUX_BACKEND_H
#define KMUX_BACKEND_H

#include "kmux.h"

#ifdef __cplusplus
extern "C" {
#endif

#define KMUX_BACKEND_ABI_MAJOR 2
#define KMUX_BACKEND_ABI_MINOR 13
#define KMUX_BACKEND_ENTRY_SYMBOL "kmux_backend_entry"

/** Groups of kmux_epilogue flags: every flag; the flags used alone (backward and bias
 *  gradients); the flags with an aux matrix. */
#define KMUX_EPILOGUE_KNOWN 0x1ffu
#define KMUX_EPILOGUE_ALONE                                                                        \
    (KMUX_EPILOGUE_DRELU | KMUX_EPILOGUE_DGELU | KMUX_EPILOGUE_BGRADA | KMUX_EPILOGUE_BGRADB)
#define KMUX_EPILOGUE_WITH_AUX                                                                     \
    (KMUX_EPILOGUE_RELU_AUX | KMUX_EPILOGUE_GELU_AUX | KMUX_EPILOGUE_DRELU | KMUX_EPILOGUE_DGELU)
/** The flags a forward convolution takes (kmux_conv2d_desc.epilogue). */
#define KMUX_CONV_EPILOGUES                                                                        \
    (KMUX_EPILOGUE_BIAS | KMUX_EPILOGUE_RELU | KMUX_EPILOGUE_GELU | KMUX_EPILOGUE_RELU_AUX)

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
    /** ABI 2.13: the core's allocation-fault hook (KMUX_FAULT_ALLOC, a test hook): a plugin
     *  installs it with kmux_sys_alloc_hook so that its host allocations count with the core's;
     *  1 means "fail this allocation". Read it only when struct_size covers it. */
    int (*alloc_fault)(void);
} kmux_backend_host;

/* ---- capabilities (ABI v2): what the core checks ONCE, for every backend alike ---- */

/** Limits of one operation (matmul, or one convolution direction) on one device. The core refuses
 *  a problem beyond them with KMUX_ERR_UNSUPPORTED and one message, naming the limit and the
 *  device, before the backend is called; a backend may assume its limits hold. 0 in a limit field
 *  means "no limit" (int64_t range). */
typedef struct kmux_op_caps {
    int supported;        /**< 0: the device has no such operation (the other fields are unused) */
    int64_t max_dim;      /**< largest single size: m, n, k (matmul); n, c, h, w, k, r, s, p, q,
                               strides, paddings, dilations (conv); e.g. INT32_MAX for
                               libraries that take int */
    int64_t max_batch;    /**< largest batch_count (matmul) */
    int64_t max_elements; /**< largest element span of any one operand (index + 1; conv: the
                               element count of x, w and y), e.g. 2^31-1 for 32-bit indexing */
    int64_t max_ld;       /**< largest leading dimension (matmul); batch strides are bounded
                               through max_elements (the span includes them) */
    uint32_t ptr_align; /**< every operand pointer must be a multiple of this (bytes); 0/1: none */
    uint32_t epilogues; /**< OR of kmux_epilogue the device runs (matmul; conv2d[0]: fused in
                             its forward convolution, KMUX_CONV_EPILOGUES at most) */
    uint32_t layouts;   /**< conv: bit (1 << kmux_layout) for each layout it runs */
    int asymmetric_padding; /**< conv: 1 when pad_top != pad_bottom (left/right) is supported */
    int groups;             /**< conv: 1 when groups > 1 is supported */
    /** Bit i set: row i of the legal type table (kmux_matmul_type_combination_get, or
     *  kmux_conv2d_type_combination_get for convolutions) runs on this device. */
    uint64_t type_rows;
    /** Bit i set: row i runs only by emulation (prefs->allow_emulation, "+cvt"). */
    uint64_t emulated_rows;
} kmux_op_caps;

/** What a device runs of one op family (ABI minor 6). The core refuses anything else with
 *  KMUX_ERR_UNSUPPORTED and one message naming the algorithm or dtype and the device. */
typedef struct kmux_family_caps {
    uint64_t algs;        /**< bit (1 << alg) for each algorithm of the family's enum it runs */
    uint32_t dtypes;      /**< bit (1 << kmux_dtype) for each dtype it runs */
    uint32_t props;       /**< bit (1 << kmux_prop) for each direction it runs */
    int64_t max_elements; /**< largest tensor, elements; 0: no limit */
} kmux_family_caps;

/** Capabilities of a device (ABI v2). Filled by the plugin's device_caps slot; the core zeroes the
 *  struct first. */
typedef struct kmux_device_caps {
    uint32_t struct_size;
    kmux_op_caps matmul;
    kmux_op_caps conv2d[3]; /**< indexed by kmux_conv_direction - 1: FWD, BWD_DATA, BWD_WEIGHTS */
    /** dtypes kmux_cast/amax/unscale run on (bit 1 << kmux_dtype), 0 when the slots are NULL. */
    uint32_t amp_dtypes;
    /* ---- ABI minor 3 (the core zeroes them; a plugin writes them only when struct_size
     *      covers them, so that an older core is not written beyond its struct) ---- */
    /** dtype_instead[t] != 0: dtype t does not run on this device (no matmul or conv row of
     *  type_rows has it) and dtype_instead[t] is the kmux_dtype it runs in its place, e.g. on
     *  gfx942 (FNUZ fp8 only): [KMUX_F8_E4M3] = KMUX_F8_E4M3_FNUZ. The core's refusal of such a
     *  problem then names it: "a_type = e4m3 (OCP) is not supported by hip:0 (gfx942, FNUZ fp8
     *  only): use e4m3fnuz". Sized for growth of kmux_dtype (KMUX_DTYPE_COUNT <= 32). */
    uint8_t dtype_instead[32];
    /** Why, in a few words, shown in that message ("gfx942, FNUZ fp8 only"); NULL: none. Static
     *  or backend-state storage (lives as long as the backend instance). */
    const char *dtype_instead_note;
    /* ---- ABI minor 4 (written only when struct_size covers it, as minor 3) ---- */
    /** Milliseconds the device's worker threads keep running on the CPU cores after a call has
     *  returned (OpenBLAS's pthreads server spins for 2^OPENBLAS_THREAD_TIMEOUT cycles before its
     *  workers sleep); 0: they stop with the call. Another library's call in that window competes
     *  for the cores, so the tuner (dispatch/tune.c) times this device's implementations first
     *  and waits this long before it times another device's. */
    double settle_ms;
    /* ---- ABI minor 6 (written only when struct_size covers it, as minor 3) ---- */
    /** The element-wise family (kmux_eltwise_*): which algorithms and dtypes run. */
    kmux_family_caps eltwise;
    /** The optimizer family (kmux_optimizer_*): algorithms, gradient dtypes (props unused). */
    kmux_family_caps optimizer;
    /** The softmax family (kmux_softmax_*): algorithms, dtypes, directions. */
    kmux_family_caps softmax;
    /* ---- ABI minor 7 (written only when struct_size covers it, as minor 3) ---- */
    /** The binary family (kmux_binary_*): algorithms, dtypes; max_elements of dst. */
    kmux_family_caps binary;
    /** The reduction family (kmux_reduction_*): algorithms, dtypes (of src and of dst);
     *  max_elements of src. */
    kmux_family_caps reduction;
    /* ---- ABI minor 8 (written only when struct_size covers it, as minor 3) ---- */
    /** The pooling family (kmux_pooling_*): algorithms, dtypes, directions; max_elements of x. */
    kmux_family_caps pooling;
    /* ---- ABI minor 9 (written only when struct_size covers it, as minor 3) ---- */
    /** 1: matmul and convolution plans run in the caller's workspace (kmux_plan_prefs.
     *  caller_workspace): plan_create allocates no workspace under that preference, and an
     *  execute whose args->workspace is not NULL runs in it and allocates none (the core has
     *  checked that it holds plan_info's workspace_bytes, is aligned to 64 bytes on host
     *  devices and 256 on others, and overlaps no operand). args->workspace NULL: the plan's own
     * workspace, as before. */
    int caller_workspace;
    /* ---- ABI minor 12 (written only when struct_size covers it, as minor 3) ---- */
    /** 1: matmul plans run with desc.pointer_mode = KMUX_POINTER_MODE_DEVICE: execute reads alpha
     *  and beta from device memory when the work runs, deciding alpha == 0 / beta == 0 there (it
     *  is then called whatever their values, and never with k == 0). Host devices need not set
     *  it: the core reads their scalars at the call. */
    int matmul_device_scalars;
} kmux_device_caps;

/* ---- plan slots per kind (ABI v2) ----
 *
 * A plan is created once with ALL its implementations (impl_count >= 1) and is immutable after
 * that: no alternate plan built lazily, no lock needed to execute it. The core keeps which
 * implementation is current (kmux_plan_next_impl advances it) and passes its index to every
 * call. Plan creation receives a validated, capability-checked description with m, n, k,
 * batch_count >= 1 (the core runs empty and degenerate problems itself, see matmul_degenerate);
 * execute receives validated arguments with alpha != 0 (conv: alpha != 0), but for
 * KMUX_POINTER_MODE_DEVICE matmul plans (caps.matmul_device_scalars). */

/** Matmul plans (as cublasLtMatmul: D = d_scale * act(alpha * op(A) op(B) + beta * C + bias)). */
typedef struct kmux_matmul_ops {
    kmux_status (*plan_create)(void *state, int device, const kmux_matmul_desc *desc,
                               const kmux_plan_prefs *prefs, void **plan, int *impl_count);
    kmux_status (*execute)(void *state, const void *plan, int impl, void *stream,
                           const kmux_matmul_args *args);
    /** Fills impl, effective_compute, workspace_bytes, deterministic for implementation `impl`
     *  (the core fills device and impl_index). Strings live as long as the plan. */
    kmux_status (*plan_info)(void *state, const void *plan, int impl, kmux_plan_info *info);
    void (*plan_destroy)(void *state, void *plan);
} kmux_matmul_ops;

/** Convolution plans (as cudnnConvolutionForward / BackwardData / BackwardFilter).
 *  plan_create's prefs are complete (defaults filled in) and their tune field
 *  is resolved to KMUX_TUNE_ON or KMUX_TUNE_OFF (KMUX_TUNE, the device "auto"): ON means the core
 *  will time the plan's implementations, so a backend may run its library's own measurement
 *  (MIOpen's find step) instead of its heuristic. */
typedef struct kmux_conv2d_ops {
    kmux_status (*plan_create)(void *state, int device, const kmux_conv2d_desc *desc,
                               const kmux_plan_prefs *prefs, void **plan, int *impl_count);
    kmux_status (*execute)(void *state, const void *plan, int impl, void *stream,
                           const kmux_conv2d_args *args);
    kmux_status (*plan_info)(void *state, const void *plan, int impl, kmux_plan_info *info);
    void (*plan_destroy)(void *state, void *plan);
} kmux_conv2d_ops;

/** Element-wise plans (kmux_eltwise_plan_create): the description is validated and within the
 *  device's caps.eltwise, n >= 1 (the core runs n = 0 itself). execute receives the pointers the
 *  direction uses, non-NULL. */
typedef struct kmux_eltwise_ops {
    kmux_status (*plan_create)(void *state, int device, const kmux_eltwise_desc *desc,
                               const kmux_plan_prefs *prefs, void **plan, int *impl_count);
    kmux_status (*execute)(void *state, const void *plan, int impl, void *stream,
                           const kmux_eltwise_args *args);
    kmux_status (*plan_info)(void *state, const void *plan, int impl, kmux_plan_info *info);
    void (*plan_destroy)(void *state, void *plan);
} kmux_eltwise_ops;

/** Optimizer plans (kmux_optimizer_plan_create): the description validated and within
 *  caps.optimizer, n >= 1. execute receives the tensors the step uses (non-NULL), lr >= 0 and
 *  step >= 1; grad_scale and found_inf may be NULL. */
typedef struct kmux_optimizer_ops {
    kmux_status (*plan_create)(void *state, int device, const kmux_optimizer_desc *desc,
                               const kmux_plan_prefs *prefs, void **plan, int *impl_count);
    kmux_status (*execute)(void *state, const void *plan, int impl, void *stream,
                           const kmux_optimizer_args *args);
    kmux_status (*plan_info)(void *state, const void *plan, int impl, kmux_plan_info *info);
    void (*plan_destroy)(void *state, void *plan);
} kmux_optimizer_ops;

/** Softmax plans (kmux_softmax_plan_create): the description validated and within
 *  caps.softmax, rows >= 1. execute receives the tensors the algorithm needs (non-NULL; mean_loss,
 *  dx of SOFTMAX_CROSS_ENTROPY, argmax and grad_scale may be NULL). */
typedef struct kmux_softmax_ops {
    kmux_status (*plan_create)(void *state, int device, const kmux_softmax_desc *desc,
                               const kmux_plan_prefs *prefs, void **plan, int *impl_count);
    kmux_status (*execute)(void *state, const void *plan, int impl, void *stream,
                           const kmux_softmax_args *args);
    kmux_status (*plan_info)(void *state, const void *plan, int impl, kmux_plan_info *info);
    void (*plan_destroy)(void *state, void *plan);
} kmux_softmax_ops;

/** Binary plans (kmux_binary_plan_create): the description validated and within caps.binary,
 *  every dims[i] >= 1 (the core runs empty shapes itself). execute receives src0, src1 and dst
 *  non-NULL; dst == src0 is allowed (in place). */
typedef struct kmux_binary_ops {
    kmux_status (*plan_create)(void *state, int device, const kmux_binary_desc *desc,
                               const kmux_plan_prefs *prefs, void **plan, int *impl_count);
    kmux_status (*execute)(void *state, const void *plan, int impl, void *stream,
                           const kmux_binary_args *args);
    kmux_status (*plan_info)(void *state, const void *plan, int impl, kmux_plan_info *info);
    void (*plan_destroy)(void *state, void *plan);
} kmux_binary_ops;

/** Reduction plans (kmux_reduction_plan_create): the description validated and within
 *  caps.reduction, every dst_dims[i] >= 1 (a src_dims[i] may be 0: a reduced axis of size 0 gives
 *  the identity). execute receives dst non-NULL, src non-NULL when src has elements. */
typedef struct kmux_reduction_ops {
    kmux_status (*plan_create)(void *state, int device, const kmux_reduction_desc *desc,
                               const kmux_plan_prefs *prefs, void **plan, int *impl_count);
    kmux_status (*execute)(void *state, const void *plan, int impl, void *stream,
                           const kmux_reduction_args *args);
    kmux_status (*plan_info)(void *state, const void *plan, int impl, kmux_plan_info *info);
    void (*plan_destroy)(void *state, void *plan);
} kmux_reduction_ops;

/** Pooling plans (kmux_pooling_plan_create): the description validated and within
 *  caps.pooling, n >= 1 and c >= 1 (the core runs empty batches itself). execute receives the
 *  tensors the direction uses non-NULL (x and y forward; dy, dx and, for MAX, x backward). */
typedef struct kmux_pooling_ops {
    kmux_status (*plan_create)(void *state, int device, const kmux_pooling_desc *desc,
                               const kmux_plan_prefs *prefs, void **plan, int *impl_count);
    kmux_status (*execute)(void *state, const void *plan, int impl, void *stream,
                           const kmux_pooling_args *args);
    kmux_status (*plan_info)(void *state, const void *plan, int impl, kmux_plan_info *info);
    void (*plan_destroy)(void *state, void *plan);
} kmux_pooling_ops;

/** The function table of a backend (constant, static storage). Slots may be NULL where marked
 *  optional. */
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
    /** Capabilities of the device (required in v2). */
    kmux_status (*device_caps)(void *state, int device, kmux_device_caps *caps);

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

    /* ---- operations (optional: NULL = the operation is unsupported) ---- */
    const kmux_matmul_ops *matmul;
    const kmux_conv2d_ops *conv2d;
    /** The degenerate matmul (k == 0 or alpha == 0) on a device whose memory is not host memory:
     *  D = d_scale * act(beta * C + bias), amax_d, A and B unread. Required for non-host devices
     *  with matmul; host devices (is_host) leave it NULL and the core runs the shared CPU finish
     *  routine of dispatch/common itself. */
    kmux_status (*matmul_degenerate)(void *state, void *stream, const kmux_matmul_desc *desc,
                                     const kmux_matmul_args *args);

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
    /* ---- readiness facts (optional, ABI minor 1; NULL or beyond struct_size: none) ---- */
    /** Fills the facts of kmux_device_diag the backend knows (the core set every field to
     *  "unknown" first). Writes no field beyond diag->struct_size. */
    kmux_status (*device_diag)(void *state, int device, kmux_device_diag *diag);
    /* ---- page-locked host memory (optional, ABI minor 2; NULL or beyond struct_size: the core
     *      uses 64-byte aligned malloc on host devices, KMUX_ERR_UNSUPPORTED otherwise) ---- */
    /** bytes > 0: page-locked host memory for fast asynchronous copies with `device`
     *  (cudaHostAlloc, hipHostMalloc). */
    kmux_status (*host_alloc)(void *state, int device, size_t bytes, void **ptr);
    /** Frees memory from host_alloc (ptr != NULL). */
    kmux_status (*host_free)(void *state, int device, void *ptr);
    /* ---- cross-stream dependency (optional, ABI minor 5; NULL or beyond struct_size: the core
     *      waits for the event on the host instead) ---- */
    /** Work submitted to `stream` after this call waits until `event` (recorded, of this
     *  backend, possibly of another device) has completed; returns without waiting on the host
     *  (as cudaStreamWaitEvent / hipStreamWaitEvent with flags 0). */
    kmux_status (*stream_wait_event)(void *state, void *stream, void *event);
    /* ---- op families (optional, ABI minor 6; NULL or beyond struct_size: the family is
     *      unsupported on this backend) ---- */
    const kmux_eltwise_ops *eltwise;
    const kmux_optimizer_ops *optimizer;
    const kmux_softmax_ops *softmax;
    /* ---- ABI minor 7 (optional, as minor 6) ---- */
    const kmux_binary_ops *binary;
    const kmux_reduction_ops *reduction;
    /* ---- ABI minor 8 (optional, as minor 6) ---- */
    const kmux_pooling_ops *pooling;
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
