/*
 * cuda_backend.h - internal declarations of the CUDA backend plugin (libkmux-cuda.so).
 *
 * Files: cuda_backend.c (entry, init, probe, lazy library handles), cuda_caps.c (capabilities
 * the core checks), cuda_props.c (device properties and peak rates), cuda_errors.c (native
 * error -> kmux_status + message), cuda_stream.c (a stream's workspace and cuDNN handle, its
 * release), cuda_guard.c (device selection), cuda_vendor.c (the CUDA calls of the shared host
 * layer: guard, errors, pinned host memory, memset, launches, memory, streams, events:
 * backends/gpu/ gpu_vendor.c and gpu_runtime.c), cuda_matmul*.c and cuda_lt_types.c (cuBLASLt, see
 * cuda_matmul.h), cuda_conv.c and cuda_conv_pad.c (cuDNN), the mixed-precision slots
 * (backends/gpu/gpu_amp.c, shared with HIP), cuda_own.c (kmux's own GEMM and convolution kernels of
 * kernels/gpu as plan implementations), cuda_host_logic.c and cuda_impl_order.c (pure decisions,
 * tested without a GPU).
 *
 * The plugin calls the CUDA driver API (opened with dlopen, cuda_libs.h), never the runtime: its
 * own kernels are fatbins embedded in the plugin (cuda_modules.c), loaded with cuModuleLoadData and
 * launched by name through the GPU host layer shared with HIP (backends/gpu). cuBLASLt and cuDNN
 * run on the device's primary context, the one the CUDA runtime (and PyTorch) use, so streams,
 * events and device pointers pass between them and the plugin unchanged.
 *
 * Device selection: the current context is per-thread state that belongs to the caller. Every
 * entry point that needs a device makes the device's primary context current with
 * kmux_cuda_enter (cuCtxPushCurrent, unless it is current already) and restores the caller's
 * with kmux_cuda_leave (cuCtxPopCurrent), so a trainer's own device choice survives every kmux
 * call, and a thread that never chose a device is left without a context.
 */
#ifndef KMUX_CUDA_BACKEND_H
#define KMUX_CUDA_BACKEND_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

#include <cublasLt.h>
#include <cuda.h>
#include <cudnn.h>

#include "cuda_libs.h" /* after the vendor headers: routes their calls through dlopen'ed tables */
#include "dispatch/common/kmux_common.h"
#include "gpu_kernel_names.h" /* kmux_gpu_module_id */
#include "gpu_runtime.h"      /* kmux_gpu_plugin and the memory, stream and event slots */
#include "kmux_backend.h"

#define KMUX_CUDA_MIB ((size_t)1 << 20)
/** Most heuristic candidates a matmul plan keeps (its implementations). */
#define KMUX_CUDA_MAX_ALGOS 8
/** Most cuDNN algorithms a convolution plan keeps. */
#define KMUX_CUDA_MAX_CONV_ALGOS 8
/** Default workspace cap of a convolution plan when prefs leave it to the backend (bytes). */
#define KMUX_CUDA_CONV_DEFAULT_WS (256 * KMUX_CUDA_MIB)

/** One CUDA device as the backend knows it. */
typedef struct kmux_cuda_device {
    int ordinal;              /**< CUDA device ordinal */
    int sm;                   /**< 10 * major + minor, e.g. 90 */
    int memory_pools;         /**< CU_DEVICE_ATTRIBUTE_MEMORY_POOLS_SUPPORTED: stream-ordered
                                   workspace */
    size_t default_workspace; /**< cuBLASLt workspace cap: 32 MiB on sm_90, 4 MiB elsewhere */
    pthread_mutex_t lock;     /**< guards the lazily created handles below */
    CUdevice dev;             /**< the driver's handle of `ordinal` */
    CUcontext primary;        /**< its primary context, retained on first kmux_cuda_enter */
    void *modules[KMUX_GPU_MOD_COUNT]; /**< CUmodule of the embedded fatbins, loaded on first
                                            launch (under lock), unloaded at fini (gpu_vendor.c) */
    cublasLtHandle_t lt; /**< created on the first matmul plan (it creates the context) */
    cudnnHandle_t dnn;   /**< for plan-time cuDNN queries only; created on first conv plan */
} kmux_cuda_device;

/** The backend's state for one kmux context. */
typedef struct kmux_cuda_state {
    kmux_gpu_plugin gpu; /**< first: what backends/gpu's slots need (gpu_launch.h) */
    const kmux_backend_host *host;
    int probed;
    int device_count;
    CUresult probe_error;      /**< CUDA_SUCCESS or what cuInit / cuDeviceGetCount said */
    int driver_too_old;        /**< 1: the driver is older than the CUDA major built with */
    kmux_cuda_device *devices; /**< device_count entries */
    char version[160];         /**< "CUDA driver 13.0, cuBLASLt 13.1.0, cuDNN 9.19.0" */
} kmux_cuda_state;

/** A kmux stream on a CUDA device: the native stream plus what work on it needs. A stream is
 *  used by one thread at a time (kmux.h), so none of this needs a lock. */
typedef struct kmux_cuda_stream {
    int device;
    CUstream stream;
    int own;           /**< 1 when kmux created the native stream and destroys it */
    cudnnHandle_t dnn; /**< bound to this stream; created on its first convolution */
    void *ws;          /**< workspace of cuBLASLt/cuDNN/packing on this stream, grown on demand */
    size_t ws_size;
    int ws_async; /* ws came from cuMemAllocAsync (else cuMemAlloc: freed after a sync) */
} kmux_cuda_stream;

/** Every plan of this backend starts with this header. */
typedef enum kmux_cuda_plan_kind {
    KMUX_CUDA_PLAN_MATMUL = 1,
    KMUX_CUDA_PLAN_CONV = 2
} kmux_cuda_plan_kind;
typedef struct kmux_cuda_plan_header {
    kmux_cuda_plan_kind kind;
    int device;
} kmux_cuda_plan_header;

/* ---- cuda_backend.c ---------------------------------------------------------------------- */

/** Loads cuBLASLt and cuDNN on first need (kmux_cuda_libs_load); KMUX_ERR_DEVICE_UNAVAILABLE
 *  naming fn, the device and what failed (a missing symbol, a file dlopen refuses) when they do
 *  not load. Every entry point that calls into either library calls it first. */
kmux_status kmux_cuda_need_libs(const kmux_cuda_state *st, const char *fn, int device);
/** The cuBLASLt handle of a device, created on first use (thread-safe). Returns KMUX_OK or the
 *  mapped cuBLASLt error. The caller has entered the device. */
kmux_status kmux_cuda_lt_handle(kmux_cuda_state *st, int device, cublasLtHandle_t *lt);
/** The plan-time cuDNN handle of a device, created on first use (thread-safe); its stream is
 *  never set, it only answers queries. Call with st->devices[device].lock HELD (cuDNN handles
 *  are not safe for concurrent use). The caller has entered the device. */
kmux_status kmux_cuda_dnn_query_handle(kmux_cuda_state *st, int device, cudnnHandle_t *dnn);

/* ---- cuda_errors.c ----------------------------------------------------------------------- */

/** kmux status for a CUDA driver error: out of memory -> KMUX_ERR_OUT_OF_MEMORY, no driver or
 *  device -> KMUX_ERR_DEVICE_UNAVAILABLE, not supported / no binary for the GPU ->
 *  KMUX_ERR_UNSUPPORTED, else KMUX_ERR_DEVICE. */
kmux_status kmux_cuda_status_of(CUresult e);
/** The driver's name of e ("CUDA_ERROR_OUT_OF_MEMORY"), "CUresult <n>" for one it does not name
 *  (buf: at least 32 bytes). */
const char *kmux_cuda_error_name(CUresult e, char *buf, size_t size);
/** Reports a failed CUDA driver call through host->set_error: "<context>: CUDA_ERROR_X (n):
 *  <description>". Returns the mapped status. */
kmux_status kmux_cuda_fail(const kmux_cuda_state *st, CUresult e, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;
/** As kmux_cuda_fail for cuBLASLt: CUBLAS_STATUS_ALLOC_FAILED -> KMUX_ERR_OUT_OF_MEMORY,
 *  NOT_SUPPORTED -> KMUX_ERR_UNSUPPORTED, else KMUX_ERR_DEVICE. */
kmux_status kmux_cuda_fail_lt(const kmux_cuda_state *st, cublasStatus_t s, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;
/** As kmux_cuda_fail for cuDNN: ALLOC_FAILED -> OUT_OF_MEMORY, NOT_SUPPORTED* -> UNSUPPORTED,
 *  else KMUX_ERR_DEVICE. */
kmux_status kmux_cuda_fail_dnn(const kmux_cuda_state *st, cudnnStatus_t s, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;
/** Reports a kmux-level condition (unsupported combination, ...) with the given status. */
kmux_status kmux_cuda_error(const kmux_cuda_state *st, kmux_status status, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

/* ---- cuda_stream.c ---------------------------------------------------------------------- */

/** What kmux_cuda_enter changed, undone by kmux_cuda_leave. */
typedef struct kmux_cuda_guard {
    int pushed; /**< 1: the device's primary context was pushed and is popped by leave */
} kmux_cuda_guard;

/** Makes `device`'s primary context current for this thread (retained on first use; pushed
 *  unless it is current already), remembering it in *g. Returns KMUX_OK or the mapped error
 *  (message names `fn`). Implemented in cuda_guard.c. */
kmux_status kmux_cuda_enter(const kmux_cuda_state *st, int device, const char *fn,
                            kmux_cuda_guard *g);
/** Restores what kmux_cuda_enter changed (errors are ignored: the caller's operation has already
 *  succeeded or failed on its own). */
void kmux_cuda_leave(const kmux_cuda_guard *g);
/** Releases the primary contexts kmux_cuda_enter retained (backend fini). */
void kmux_cuda_guard_release(kmux_cuda_state *st);

/** The workspace of one execute, `bytes` large: the caller's when `caller` is not NULL (args'
 *  workspace of a plan made with prefs.caller_workspace; KMUX_ERR_WORKSPACE when caller_bytes is
 *  smaller), else s->ws, made at least `bytes` large (256-byte aligned), stream-ordered where the
 *  device has memory pools. *ws receives the workspace (NULL when bytes == 0). Returns KMUX_OK
 *  or KMUX_ERR_OUT_OF_MEMORY / KMUX_ERR_DEVICE with a message naming `fn`. The device is
 *  entered. */
kmux_status kmux_cuda_stream_workspace(kmux_cuda_state *st, kmux_cuda_stream *s, size_t bytes,
                                       void *caller, size_t caller_bytes, const char *fn,
                                       void **ws);

/** cuDNN handle bound to stream s, created on first use. The device is entered. */
kmux_status kmux_cuda_stream_dnn(kmux_cuda_state *st, kmux_cuda_stream *s, cudnnHandle_t *dnn);

/* cuda_diag.c: readiness facts (device_diag). */
kmux_status kmux_cuda_device_diag(void *state, int device, kmux_device_diag *diag);
/** The plugin ABI's stream_destroy: drains the stream, releases its workspace, cuDNN handle and
 *  (when owned) the native stream. The other memory, stream and event slots: gpu_runtime.h. */
kmux_status kmux_cuda_stream_destroy(void *state, void *stream);

/* ---- cuda_props.c ------------------------------------------------------------------------ */

/** Fills the properties of device `device` from the driver (no context is created). */
kmux_status kmux_cuda_device_props(void *state, int device, kmux_device_props *props);

/** Dense peak rates in FLOP (ops for int8) per clock per SM for an architecture, from NVIDIA's
 *  architecture whitepapers; 0 where the architecture has no such unit or is unknown. `geforce`
 *  selects the consumer parts of sm_86/sm_89, whose tensor cores run f32-accumulate at half
 *  rate. Fields are indexed by kmux_dtype (F64, F32, F16, BF16, F8_E4M3, F8_E5M2, I8); tf32 is
 *  separate. tensor_clock_ratio: the clock NVIDIA's tensor-core figures assume, as a fraction of
 *  the reported max boost clock (1 except Hopper). */
typedef struct kmux_cuda_arch_rates {
    double per_clock_sm[KMUX_DTYPE_COUNT];
    double tf32;
    double tensor_clock_ratio;
} kmux_cuda_arch_rates;
/** Returns 1 and fills *r for a known architecture, 0 otherwise (*r zeroed). */
int kmux_cuda_arch_rates_get(int sm, int geforce, kmux_cuda_arch_rates *r);

/* ---- cuda_caps.c ------------------------------------------------------------------------- */

kmux_status kmux_cuda_device_caps(void *state, int device, kmux_device_caps *caps);

/* ---- cuda_matmul_*.c (cuda_matmul.h) ----------------------------------------------------- */

kmux_status kmux_cuda_matmul_plan_create(void *state, int device, const kmux_matmul_desc *desc,
                                         const kmux_plan_prefs *prefs, void **plan,
                                         int *impl_count);
kmux_status kmux_cuda_matmul_execute(void *state, const void *plan, int impl, void *stream,
                                     const kmux_matmul_args *args);
kmux_status kmux_cuda_matmul_plan_info(void *state, const void *plan, int impl,
                                       kmux_plan_info *info);
void kmux_cuda_matmul_plan_destroy(void *state, void *plan);
/** The degenerate matmul slot: k == 0 or alpha == 0 (cuda_matmul_post.c). */
kmux_status kmux_cuda_matmul_degenerate(void *state, void *stream, const kmux_matmul_desc *desc,
                                        const kmux_matmul_args *args);

/* ---- cuda_conv.c ------------------------------------------------------------------------- */

kmux_status kmux_cuda_conv2d_plan_create(void *state, int device, const kmux_conv2d_desc *desc,
                                         const kmux_plan_prefs *prefs, void **plan,
                                         int *impl_count);
kmux_status kmux_cuda_conv2d_execute(void *state, const void *plan, int impl, void *stream,
                                     const kmux_conv2d_args *args);
kmux_status kmux_cuda_conv_plan_info(void *state, const void *plan, int impl, kmux_plan_info *info);
void kmux_cuda_conv_plan_destroy(void *state, void *plan);

/* ---- cuda_own.c: kmux's own kernels (kernels/gpu) as plan implementations ---------------- */

/** Runs kmux's own GEMM kernel (tile `tile`) for d and a on cs, through the shared GPU host
 *  layer (whose messages name the device and the kernel). Returns KMUX_OK or the mapped launch
 *  error. */
kmux_status kmux_cuda_own_gemm(kmux_cuda_state *st, const kmux_cuda_stream *cs,
                               const kmux_matmul_desc *d, const kmux_matmul_args *a, int tile);
/** Runs kmux's own convolution kernel likewise. */
kmux_status kmux_cuda_own_conv(kmux_cuda_state *st, const kmux_cuda_stream *cs,
                               const kmux_conv2d_desc *d, const kmux_conv2d_args *a, int tile);

/* ---- cuda_modules.c: the embedded fatbins and launches ---------------------------------- */

/** The kmux_gpu_plugin of the CUDA plugin (cuda_vendor.c), copied to the head of its state. */
extern const kmux_gpu_plugin kmux_cuda_gpu_plugin;
/** kmux_gpu_plugin.module_load: module `mod` on `device` (entered) with cuModuleLoadData. */
kmux_status kmux_cuda_module_load(void *state, int device, kmux_gpu_module_id mod, const char *what,
                                  void **module, size_t *bytes);
/** kmux_gpu_plugin.get_function: cuModuleGetFunction. */
int kmux_cuda_get_function(void *state, void *module, const char *name, void **fn);
/** kmux_gpu_plugin.launch: cuLaunchKernel on the stream (a kmux_cuda_stream). */
int kmux_cuda_launch_kernel(void *state, const void *stream, void *fn, const unsigned grid[3],
                            unsigned block, void **params);
/** kmux_gpu_plugin.bad_shape: CUDA's limits (gridDim.x < 2^31, y and z <= 65535, at most 1024
 *  threads per block). */
const char *kmux_cuda_bad_shape(const unsigned grid[3], unsigned block, char *buf, size_t size,
                                kmux_status *status);
/** "sm_80,sm_86,sm_89,sm_90,compute_90": the code the fatbins carry (from the build). */
const char *kmux_cuda_carried_archs(void);

/* ---- driver calls on void * device pointers (CUdeviceptr is an integer) ------------------ */

static inline CUdeviceptr kmux_cu_ptr(const void *p) {
    return (CUdeviceptr)(uintptr_t)p;
}
static inline CUresult kmux_cu_malloc(void **p, size_t bytes) {
    CUdeviceptr d = 0;
    CUresult e = cuMemAlloc(&d, bytes);
    *p = e == CUDA_SUCCESS ? (void *)(uintptr_t)d : NULL;
    return e;
}
static inline CUresult kmux_cu_malloc_async(void **p, size_t bytes, CUstream s) {
    CUdeviceptr d = 0;
    CUresult e = cuMemAllocAsync(&d, bytes, s);
    *p = e == CUDA_SUCCESS ? (void *)(uintptr_t)d : NULL;
    return e;
}
static inline CUresult kmux_cu_free(void *p) {
    return cuMemFree(kmux_cu_ptr(p));
}
static inline CUresult kmux_cu_memset_async(void *p, int value, size_t bytes, CUstream s) {
    return cuMemsetD8Async(kmux_cu_ptr(p), (unsigned char)value, bytes, s);
}
/** Any direction (unified addressing: the driver tells host from device pointers). */
static inline CUresult kmux_cu_memcpy_async(void *dst, const void *src, size_t bytes, CUstream s) {
    return cuMemcpyAsync(kmux_cu_ptr(dst), kmux_cu_ptr(src), bytes, s);
}

/* ---- cuda_lt_names.c (generated) --------------------------------------------------------- */

/** "128x256" for a cublasLtMatmulTile_t value; NULL when unknown. */
const char *kmux_cuda_lt_tile_name(int tile);
/** "64x3" for a cublasLtMatmulStages_t value; NULL when unknown. */
const char *kmux_cuda_lt_stages_name(int stages_id);
/** "2x1x1" for a cublasLtClusterShape_t value; NULL when unknown. */
const char *kmux_cuda_lt_cluster_name(int cluster);

/* ---- small helpers ----------------------------------------------------------------------- */

/** Rounds x up to a multiple of a (a power of two). */
static inline size_t kmux_cuda_align_up(size_t x, size_t a) {
    return (x + a - 1) & ~(a - 1);
}

#endif
