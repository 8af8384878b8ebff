/*
 * onednn_internal.h - private declarations of the oneDNN backend plugin (device "cpu:onednn"):
 * backend state, the common head of its plans, the per-execution context pool and the helpers
 * its files share. The plugin uses oneDNN's C API only (oneDNN 2.x), so it stays C11.
 */
#ifndef KMUX_ONEDNN_INTERNAL_H
#define KMUX_ONEDNN_INTERNAL_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

#include <oneapi/dnnl/dnnl.h>

#include "onednn_api.h" /* oneDNN calls go through its table */

#include "backends/cpu_common/cpu_runtime.h"
#include "dispatch/common/kmux_common.h"
#include "kmux_backend.h"

#define KMUX_DNN_NAME "onednn"

/** Backend state for one context. The CPU header must come first (cpu_runtime.h). */
typedef struct kmux_dnn_state {
    kmux_cpu_state_header hdr;
    dnnl_engine_t engine;        /**< the CPU engine; NULL when it could not be created */
    dnnl_status_t engine_status; /**< why engine is NULL */
    dnnl_cpu_isa_t isa;          /**< ISA oneDNN dispatches to on this CPU */
    char version[96];            /**< "oneDNN 2.6.3 (cpu runtime OMP, isa avx512_core_bf16)" */
} kmux_dnn_state;

/* ---- execution contexts (onednn_exec_ctx.c) ------------------------------------------------ */

#define KMUX_DNN_MAX_MEMS 12

/** What one execution needs besides the primitives: a oneDNN stream, memory objects bound to
 *  the plan's memory descriptors (their data handles are set per call, which costs ~0.04 us
 *  against ~0.9 us for creating them), the scratchpad and the workspace. A plan keeps a pool of
 *  them; each execute takes one for itself, so executes on several threads never share one. */
typedef struct kmux_dnn_exec_ctx {
    struct kmux_dnn_exec_ctx *next;
    dnnl_stream_t stream;
    dnnl_memory_t mem[KMUX_DNN_MAX_MEMS]; /**< slot meaning is the plan kind's; NULL = not made */
    /* this execution's: */
    dnnl_memory_t scratch_mem; /**< 1-D u8 memory over the scratchpad; NULL: none needed */
    void *work; /**< the plan's workspace (conversions, temporaries), plan->work_bytes */
    /* the context's own (plans that own their workspace), kept between executions: */
    dnnl_memory_t own_scratch_mem;
    void *own_scratch; /**< oneDNN scratchpad (user-managed mode) */
    size_t own_scratch_cap;
    void *own_work;
    /* over the caller's workspace (kmux_plan_prefs.caller_workspace): no data of its own */
    dnnl_memory_t ext_scratch_mem;
    size_t ext_scratch_cap;
    const char *fn; /**< public function of the execution holding it (for messages) */
} kmux_dnn_exec_ctx;

/** A plan's free execution contexts (LIFO, mutex-protected; uncontended lock ~20 ns). */
typedef struct kmux_dnn_ctx_pool {
    pthread_mutex_t lock;
    kmux_dnn_exec_ctx *free_list;
} kmux_dnn_ctx_pool;

typedef enum kmux_dnn_plan_kind {
    KMUX_DNN_MATMUL = 1,
    KMUX_DNN_CONV2D = 2,
    KMUX_DNN_FAMILY = 3 /**< an op family's plan (eltwise, pooling, binary; kmux_dnn_prim) */
} kmux_dnn_plan_kind;

/** Common head of both plan kinds: what kmux_plan_info reports, and the context pool. */
typedef struct kmux_dnn_plan {
    kmux_dnn_plan_kind kind;
    char impl[128]; /**< "onednn:brg:avx512_core", "onednn:gemm:jit+cvt" */
    kmux_compute_type effective_compute;
    size_t workspace_bytes; /**< kmux_dnn_work_offset(work_bytes) + scratchpad of one execute */
    size_t work_bytes;      /**< the workspace part (kmux_dnn_exec_ctx.work) */
    int impl_index;
    kmux_dnn_ctx_pool pool;
} kmux_dnn_plan;

/** Initialises the pool of a new plan. */
void kmux_dnn_pool_init(kmux_dnn_plan *plan);
/** Takes a free context of plan (or makes one) with a workspace of plan->work_bytes and a
 *  scratchpad of at least scratch_bytes: inside ws when it is not NULL (the caller's, of at
 *  least kmux_dnn_work_offset(work_bytes) + scratch_bytes: the workspace at ws, the scratchpad
 *  after it), else the context's own (allocated once, kept in the pool). Returns KMUX_OK,
 *  KMUX_ERR_WORKSPACE (ws_bytes too small), KMUX_ERR_OUT_OF_MEMORY or KMUX_ERR_DEVICE (message
 *  set). */
kmux_status kmux_dnn_ctx_acquire(const char *fn, kmux_dnn_state *st, kmux_dnn_plan *plan,
                                 size_t scratch_bytes, void *ws, size_t ws_bytes,
                                 kmux_dnn_exec_ctx **ctx);
/** Where the scratchpad starts in a caller's workspace: work_bytes rounded up to 64. */
size_t kmux_dnn_work_offset(size_t work_bytes);
/** Gives a context back to its plan's pool. */
void kmux_dnn_ctx_release(kmux_dnn_plan *plan, kmux_dnn_exec_ctx *ctx);
/** Destroys every pooled context (plan destruction; no execute may be running). */
void kmux_dnn_pool_destroy(kmux_dnn_plan *plan);
/** Memory object of slot i of ctx for md (created on first use, no data handle), with its data
 *  handle set to ptr. NULL on failure (message set in *status). */
dnnl_memory_t kmux_dnn_ctx_mem(kmux_dnn_state *st, kmux_dnn_exec_ctx *ctx, int i,
                               const dnnl_memory_desc_t *md, void *ptr, kmux_status *status);
/* ---- threads (onednn_util.c) ---------------------------------------------------------------- */

/** The OpenMP runtime oneDNN was built with reads the calling thread's nthreads-var when it opens
 *  a parallel region (and at primitive creation, to size the blocking). omp_set_num_threads sets
 *  only the calling thread's value, so every create/execute sets it to the context's thread count
 *  and restores the caller's value afterwards: per call, per thread, no global state. */
typedef struct kmux_dnn_threads {
    int saved;
} kmux_dnn_threads;

void kmux_dnn_threads_enter(const kmux_dnn_state *st, kmux_dnn_threads *t);
void kmux_dnn_threads_leave(const kmux_dnn_threads *t);

/* ---- fork() (onednn_fork.c) ------------------------------------------------------------------ */

/** Registers the pthread_atfork child handler (once per process). 0, or pthread_atfork's error. */
int kmux_dnn_fork_guard_install(void);
/** OpenMP threads for a call of the calling thread: the context's count, or 1 when this thread
 *  is the fork() child of a thread whose libgomp pool was active (its pool is stale there). */
int kmux_dnn_fork_threads(const kmux_dnn_state *st);
/* Whether this thread may run an OpenMP region of n threads now: 0 in the fork() child of a
 * thread whose pool was active (onednn_fork.c); else 1, remembering a pool of n > 1 as used. */
int kmux_dnn_pool_usable(int n);
/* kmux's own kernels' parallel loops on oneDNN's OpenMP team (onednn_team.c); at init. */
void kmux_dnn_team_install(void);

/* ---- oneDNN helpers (onednn_util.c) --------------------------------------------------------- */

/** Name of a dnnl_status_t ("dnnl_unimplemented"). */
const char *kmux_dnn_status_name(dnnl_status_t s);
/** Sets the error "<fn>: oneDNN <what> failed: <dnnl status name> (<code>)" and returns the
 *  kmux status it maps to (unimplemented -> UNSUPPORTED, out_of_memory -> OUT_OF_MEMORY,
 *  anything else -> DEVICE). */
kmux_status kmux_dnn_fail(const kmux_dnn_state *st, const char *fn, const char *what,
                          dnnl_status_t s);
/** Sets an out-of-memory error for `bytes` and returns KMUX_ERR_OUT_OF_MEMORY. */
kmux_status kmux_dnn_oom(const kmux_dnn_state *st, const char *fn, size_t bytes);

/** A primitive attribute with user-managed scratchpad and strict f32 math (oneDNN's default
 *  fpmath mode can be changed by ONEDNN_DEFAULT_FPMATH_MODE, so it is always set). NULL on
 *  failure. */
dnnl_primitive_attr_t kmux_dnn_attr_new(void);

/** Creates the primitive descriptor of op_desc for implementation number impl_index (0 = the
 *  first oneDNN offers; reference "ref:" implementations, and those whose name contains `avoid`
 *  when it is not NULL, are only counted when nothing else is offered), or, when want_impl is
 *  not NULL, the first implementation with that name (falling back to index 0). Returns
 *  dnnl_success, dnnl_iterator_ends when impl_index is past the last, or oneDNN's error. */
dnnl_status_t kmux_dnn_pd_create(const_dnnl_op_desc_t op_desc, const_dnnl_primitive_attr_t attr,
                                 dnnl_engine_t engine, const_dnnl_primitive_desc_t hint,
                                 int impl_index, const char *want_impl, const char *avoid,
                                 dnnl_primitive_desc_t *pd);
/** The implementation string of pd ("brg:avx512_core"); "?" if it cannot be queried. */
const char *kmux_dnn_pd_impl(const_dnnl_primitive_desc_t pd);
/** Bytes of pd's scratchpad (0 when it needs none). */
size_t kmux_dnn_pd_scratch(const_dnnl_primitive_desc_t pd);
/** 1 for the name of one of oneDNN's reference kernels ("ref:any", "ref_int8:any", ...): what
 *  oneDNN falls back to where it has no optimised kernel, orders of magnitude slower. */
int kmux_dnn_is_ref_kernel(const char *impl);

/** oneDNN data type of a kmux dtype; dnnl_data_type_undef for those oneDNN 2.x lacks (f64, fp8). */
dnnl_data_type_t kmux_dnn_dtype(kmux_dtype t);
/** Name of a oneDNN ISA ("avx512_core_bf16"). */
const char *kmux_dnn_isa_name(dnnl_cpu_isa_t isa);

/* ---- element-wise helpers (onednn_elementwise.c) -------------------------------------------- */

/** kmux_cpu_matmul_epilogue (where kmux_cpu_matmul_epilogue_runs) of every batch of d, batch b
 *  from t + b * bstride, on oneDNN's OpenMP team, awake after a primitive (onednn_matmul_exec.c:
 *  new threads beside it spin against it). */
void kmux_dnn_epilogue_on_team(const kmux_matmul_desc *d, const kmux_matmul_args *a, const float *t,
                               int64_t ldt, int64_t bstride);
/** Loads element i of an f32/f16/bf16/i32 array as double (exact). */
double kmux_dnn_load(const void *p, kmux_dtype t, int64_t i);
/** Stores v rounded ONCE to t (f32/f16/bf16: RNE, via round-to-odd f32; i32: RNE, saturated). */
void kmux_dnn_store(void *p, kmux_dtype t, int64_t i, double v);

/* ---- plans (onednn_backend.c) -------------------------------------------------------------- */

#define KMUX_DNN_MAX_IMPLS 8

/** What the core holds: every implementation of one plan, each a complete single-implementation
 *  plan (its primitives, descriptors, workspace layout and context pool), all built at plan
 *  creation; nothing changes after that (the core passes the index of the one to run). */
typedef struct kmux_dnn_plan_set {
    kmux_dnn_plan_kind kind;
    int count;
    kmux_dnn_plan *impl[KMUX_DNN_MAX_IMPLS];
} kmux_dnn_plan_set;

/** Keeps the implementations of a fully built list whose workspace fits max_ws (in order) in a
 *  new set, destroys the others with destroy; UNSUPPORTED (fn in the message) when none fits,
 *  except with default_cap (max_ws is the default cap, not the caller's): then the smallest is
 *  kept. When some were dropped, the first kept one's impl name says so ("[2 over default
 *  workspace cap N]"). */
kmux_status kmux_dnn_set_make(kmux_dnn_state *st, const char *fn, kmux_dnn_plan_kind kind,
                              kmux_dnn_plan **list, int n, size_t max_ws, int default_cap,
                              void (*destroy)(kmux_dnn_plan *), kmux_dnn_plan_set **set);

/* ---- one primitive behind an op family's plan (onednn_prim.c) ------------------------------ */

/** A family plan's oneDNN side: its primitive (NULL: the plan runs kmux:cpu only) and the
 *  scratchpad it needs. The head of each family's plan struct. */
typedef struct kmux_dnn_prim {
    kmux_dnn_plan base; /**< contexts; impl "onednn:<family>:<oneDNN kernel>" */
    dnnl_primitive_t prim;
    size_t scratch;
} kmux_dnn_prim;

/** 1 when a family op of `elements` elements (its largest tensor) may go to oneDNN: 2.6 keeps
 *  32-bit offsets inside some of its kernels, so larger tensors stay on kmux:cpu. */
static inline int kmux_dnn_family_fits(int64_t elements) {
    return elements >= 1 && elements <= INT32_MAX;
}
/** Readies p (kind, f32 compute, an empty context pool); no primitive yet. */
void kmux_dnn_prim_init(kmux_dnn_prim *p);
/** The primitive descriptor of the forward op descriptor fwd (bwd NULL), or of the backward bwd
 *  with fwd's as its hint (as oneDNN's backward primitives need), with kmux_dnn_attr_new's
 *  attributes; NULL when oneDNN has no implementation. */
dnnl_primitive_desc_t kmux_dnn_pd_of(const kmux_dnn_state *st, const_dnnl_op_desc_t fwd,
                                     const_dnnl_op_desc_t bwd);
/** Makes p's primitive from pd unless pd is NULL or oneDNN offers only its reference kernel
 *  (p->prim stays NULL: no error, the family runs kmux:cpu); destroys pd either way. */
void kmux_dnn_prim_adopt(kmux_dnn_prim *p, dnnl_primitive_desc_t pd, const char *family);
/** Runs p's primitive with n tensors: argument arg_ids[i] is ptrs[i] described by mds[i] (memory
 *  slot i of the context; n <= KMUX_DNN_MAX_MEMS), under the context's thread count. KMUX_OK,
 *  or the status of a failed context or execute (message naming fn). */
kmux_status kmux_dnn_prim_run(kmux_dnn_state *st, kmux_dnn_prim *p, const char *fn, int n,
                              const int *arg_ids, const dnnl_memory_desc_t *const *mds,
                              void *const *ptrs);
/** plan_info of p's primitive (f32 compute, deterministic, its scratchpad). KMUX_OK. */
kmux_status kmux_dnn_prim_info(const kmux_dnn_prim *p, kmux_plan_info *info);
/** Frees p's contexts and primitive (not p). */
void kmux_dnn_prim_fini(kmux_dnn_prim *p);
/** A family's plan_create: a plan of `size` bytes whose head is a kmux_dnn_prim, filled by
 *  make(st, plan, desc) under the context's thread count (make copies desc and makes the
 *  primitive, or leaves it NULL). *impl_count: 2 with a primitive (it, then kmux:cpu), else 1.
 *  KMUX_OK or KMUX_ERR_OUT_OF_MEMORY (naming fn). */
kmux_status kmux_dnn_family_create(kmux_dnn_state *st, const char *fn, size_t size,
                                   const void *desc,
                                   void (*make)(kmux_dnn_state *, void *, const void *),
                                   void **plan, int *impl_count);
/** A family's plan_info: its primitive's, or kmux:cpu's (impl 1, or no primitive). */
kmux_status kmux_dnn_family_info(void *state, const void *plan, int impl, kmux_plan_info *info);
/** A family's plan_destroy. */
void kmux_dnn_family_destroy(void *state, void *plan);

/* ---- element-wise family (onednn_eltwise.c) ---- */

/** oneDNN's eltwise primitive first where it has the algorithm, then kmux:cpu. */
extern const kmux_eltwise_ops kmux_dnn_eltwise_ops;
/** oneDNN's pooling primitive for the averages, then kmux:cpu (onednn_pooling.c). */
extern const kmux_pooling_ops kmux_dnn_pooling_ops;
/** oneDNN's binary primitive for add/sub/mul/div without scales, then kmux:cpu
 *  (onednn_binary.c). */
extern const kmux_binary_ops kmux_dnn_binary_ops;

/* ---- matmul (onednn_matmul.c, onednn_matmul_exec.c) ----------------------------------------- */

/** Every implementation of a matmul (m, n, k, batch_count >= 1, within the device's caps), in
 *  the order they are offered: *n receives how many (>= 1 on success). UNSUPPORTED for bf16/f16
 *  without a native oneDNN kernel unless prefs->allow_emulation. */
kmux_status kmux_dnn_matmul_build(kmux_dnn_state *st, const kmux_matmul_desc *desc,
                                  const kmux_plan_prefs *prefs,
                                  kmux_dnn_plan *list[KMUX_DNN_MAX_IMPLS], int *n);
/** Runs one implementation (alpha != 0). */
kmux_status kmux_dnn_matmul_run(kmux_dnn_state *st, kmux_dnn_plan *plan,
                                const kmux_matmul_args *args);
/** Frees one matmul implementation. */
void kmux_dnn_matmul_destroy(kmux_dnn_plan *plan);

/* ---- convolution (onednn_conv.c) ------------------------------------------------------------ */

/** Bytes of a convolution's x, w and y (SIZE_MAX when that overflows; onednn_backend.c). */
size_t kmux_dnn_conv_tensor_bytes(const kmux_conv2d_desc *d);

/** Every implementation of a convolution: f32; bf16/f16 natively where oneDNN has kernels, else
 *  with prefs->allow_emulation in f32 ("+cvt"). */
kmux_status kmux_dnn_conv2d_build(kmux_dnn_state *st, const kmux_conv2d_desc *desc,
                                  const kmux_plan_prefs *prefs,
                                  kmux_dnn_plan *list[KMUX_DNN_MAX_IMPLS], int *n);
/** Runs one implementation. */
kmux_status kmux_dnn_conv2d_run(kmux_dnn_state *st, kmux_dnn_plan *plan,
                                const kmux_conv2d_args *args);
/** Frees one conv implementation. */
void kmux_dnn_conv2d_destroy(kmux_dnn_plan *plan);

/** Sets the error of the calling thread through the host (returns status). */
#define KMUX_DNN_ERROR(st, status, ...) ((st)->hdr.host->set_error((status), __VA_ARGS__))

#endif
