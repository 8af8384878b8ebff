/*
 * kmux.h - the whole public C API of kmux ("kernel multiplexer").
 *
 * One API for GEMM, 2-D convolution and mixed-precision tensor operations, dispatched at run
 * time to a backend: CUDA (cuBLASLt, cuDNN), HIP, oneDNN, OpenBLAS, and the built-in reference
 * backend "ref" that computes in f64 and is the oracle of every test.
 *
 * Reading order: types, errors, context and devices, memory/streams/events, GEMM, plans,
 * convolution, mixed-precision utilities.
 *
 * Conventions used throughout:
 * - Every function returns a kmux_status, except the few whose comment says "Not a kmux_status"
 *   (names, sizes, the last error, lookups that cannot fail). On failure kmux_last_error()
 *   describes the cause (function, argument and value, backend, native error code). Results are
 *   returned through out-parameters, which are left untouched on failure unless documented
 *   otherwise.
 * - Every options, descriptor and argument struct starts with struct_size. Initialise it with its
 *   _INIT macro (designated initialisers: valid C11, and C++20 since the fields are named in
 *   declaration order). A caller compiled against an older kmux.h passes its older, smaller
 *   struct_size: the fields beyond it take the defaults of the _INIT macro. A struct_size too
 *   small to hold the struct's required fields (named at each struct) is
 *   KMUX_ERR_INVALID_ARGUMENT.
 * - Sizes, counts, strides and leading dimensions are int64_t and counted in ELEMENTS; memory
 *   amounts (size_t) are counted in BYTES; times are in MILLISECONDS.
 * - There is no hidden "current device" or "current stream": every operation takes a stream and
 *   the stream implies the device. Pointers passed to an operation must be memory of that device
 *   (host memory for CPU devices and "ref").
 * - The library never aborts, never exits and never prints to stdout (the KMUX_VERBOSE trace goes
 *   to stderr).
 * - Thread safety: every function may be called concurrently from several threads on the same
 *   context, except kmux_context_destroy, which must not race with any other use of that context.
 *   A stream must not be used by two threads at the same time.
 */
#ifndef KMUX_H
#define KMUX_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* KMUX_API marks the public functions: exported while libkmux itself is built (its build defines
 * KMUX_BUILDING_LIBRARY), imported by everything that uses it (dllimport on Windows; on ELF
 * platforms default visibility, so that a caller built with -fvisibility=hidden still links). */
#if defined(_WIN32)
#if defined(KMUX_BUILDING_LIBRARY)
#define KMUX_API __declspec(dllexport)
#else
#define KMUX_API __declspec(dllimport)
#endif
#elif defined(__GNUC__)
#define KMUX_API __attribute__((visibility("default")))
#else
#define KMUX_API
#endif

#define KMUX_VERSION_MAJOR 0
#define KMUX_VERSION_MINOR 1
#define KMUX_VERSION_PATCH 0

/* ============================================================================================
 * Status codes
 * ============================================================================================ */

/** Result of every kmux call. Ranges: 1xx invalid argument, 2xx unsupported, 3xx out of memory
 *  or workspace, 4xx device or native library error, 5xx backend loading, 9xx internal. */
typedef enum kmux_status {
    KMUX_OK = 0,
    KMUX_ERR_INVALID_ARGUMENT = 100,   /**< a null pointer, bad size, bad enum or bad combination */
    KMUX_ERR_NOT_FOUND = 101,          /**< no device or backend matches the name asked for */
    KMUX_ERR_UNSUPPORTED = 200,        /**< valid request the chosen device cannot honour */
    KMUX_ERR_LAST_IMPL = 201,          /**< kmux_plan_next_impl: no further implementation */
    KMUX_ERR_OUT_OF_MEMORY = 300,      /**< an allocation on the device or host failed */
    KMUX_ERR_WORKSPACE = 301,          /**< the workspace given is too small */
    KMUX_ERR_DEVICE = 400,             /**< a native library or runtime returned an error */
    KMUX_ERR_DEVICE_UNAVAILABLE = 401, /**< the device or its driver cannot be used */
    KMUX_ERR_BACKEND_LOAD = 500,       /**< a backend plugin could not be loaded */
    KMUX_ERR_ABI_MISMATCH = 501,       /**< a plugin was built for another plugin ABI major */
    KMUX_ERR_INTERNAL = 900            /**< a bug in kmux; please report it */
} kmux_status;

/** Name of a status code ("KMUX_ERR_INVALID_ARGUMENT"); "KMUX_STATUS_UNKNOWN" for a value that
 *  is not a kmux_status. Not a kmux_status: returns the name, never NULL, never fails, static
 *  storage. */
KMUX_API const char *kmux_status_str(kmux_status s);

/** The message of the last failing kmux call made by this thread: function, argument and value,
 *  backend and native error code where there is one. "" when there is no error. Thread-local;
 *  valid until the next kmux call on this thread. Not a kmux_status: returns the message, never
 *  NULL. */
KMUX_API const char *kmux_last_error(void);

/** Version of the library as "MAJOR.MINOR.PATCH" (+ git commit when known). Not a kmux_status:
 *  returns the string, never NULL, static storage. */
KMUX_API const char *kmux_version(void);

/* ============================================================================================
 * Data and compute types
 * ============================================================================================ */

/** Element types. The fp8 formats follow the OCP 8-bit Floating Point Specification (OFP8,
 *  rev 1.0): E4M3 (max 448, no Inf, NaN = S.1111.111) and E5M2 (max 57344, IEEE-like Inf/NaN),
 *  as on NVIDIA sm_89+ and AMD gfx950. The FNUZ variants are the ones of AMD gfx942 (MI300):
 *  exponent bias one higher, no Inf, no -0, a single NaN encoded 0x80 (E4M3FNUZ max 240,
 *  E5M2FNUZ max 57344). bf16 is the upper half of an IEEE binary32; f16 is IEEE binary16. */
typedef enum kmux_dtype {
    KMUX_F64 = 1,
    KMUX_F32 = 2,
    KMUX_F16 = 3,
    KMUX_BF16 = 4,
    KMUX_F8_E4M3 = 5,
    KMUX_F8_E5M2 = 6,
    KMUX_F8_E4M3_FNUZ = 7,
    KMUX_F8_E5M2_FNUZ = 8,
    KMUX_I8 = 9,
    KMUX_I32 = 10
} kmux_dtype;
#define KMUX_DTYPE_COUNT 11 /**< one more than the largest kmux_dtype, for tables */

/** Name of a dtype ("f32", "bf16", "e4m3", "e4m3fnuz", ...); "?" when unknown. Not a
 *  kmux_status: returns the name, never NULL, static storage. */
KMUX_API const char *kmux_dtype_name(kmux_dtype t);
/** Size of one element in bytes; 0 for an unknown dtype. Not a kmux_status: returns the size. */
KMUX_API size_t kmux_dtype_size(kmux_dtype t);

/** Accumulation ("compute") types, as cublasComputeType_t. F32 is strict IEEE f32 arithmetic;
 *  the FAST variants allow the backend to round inputs to TF32 or to split them into three bf16
 *  terms (bf16x3) and must be asked for explicitly: kmux never lowers precision on its own. */
typedef enum kmux_compute_type {
    KMUX_COMPUTE_F64 = 1,
    KMUX_COMPUTE_F32 = 2,
    KMUX_COMPUTE_F32_FAST_TF32 = 3,
    KMUX_COMPUTE_F32_FAST_BF16 = 4,
    KMUX_COMPUTE_F16 = 5,
    KMUX_COMPUTE_I32 = 6
} kmux_compute_type;

/** Name of a compute type ("f32", "f32_fast_tf32", ...); "?" when unknown. Not a kmux_status:
 *  returns the name, never NULL, static storage. */
KMUX_API const char *kmux_compute_type_name(kmux_compute_type t);

/** One legal combination of operand types: a GEMM row (A, B, C/D, compute) or a convolution row
 *  (x, w, y in a_type, b_type, c_type; all equal). The rows are the table kmux validates against
 *  (as cublasGemmEx's table of legal types); whether a device runs a row is its own answer
 *  (kmux_device_props.dtype_support, kmux-support-matrix). */
typedef struct kmux_type_combination {
    size_t struct_size; /**< sizeof(kmux_type_combination) */
    kmux_dtype a_type, b_type, c_type;
    kmux_compute_type compute_type;
} kmux_type_combination;

/** Number of legal GEMM type combinations (rows of the table). Returns KMUX_OK;
 *  KMUX_ERR_INVALID_ARGUMENT if count is NULL. */
KMUX_API kmux_status kmux_matmul_type_combination_count(int *count);
/** Row i (0 <= i < count) of the GEMM table into *row. Returns KMUX_OK; KMUX_ERR_INVALID_ARGUMENT
 *  if row is NULL or i is out of range. */
KMUX_API kmux_status kmux_matmul_type_combination_get(int i, kmux_type_combination *row);
/** Number of legal convolution type combinations. Returns as kmux_matmul_type_combination_count. */
KMUX_API kmux_status kmux_conv2d_type_combination_count(int *count);
/** Row i of the convolution table. Returns as kmux_matmul_type_combination_get. */
KMUX_API kmux_status kmux_conv2d_type_combination_get(int i, kmux_type_combination *row);

/** Matrix storage order, with the values of CBLAS_ORDER. */
typedef enum kmux_order { KMUX_ROW_MAJOR = 101, KMUX_COL_MAJOR = 102 } kmux_order;

/** Operation on a matrix operand, with the values of CBLAS_TRANSPOSE (real types only). */
typedef enum kmux_transpose { KMUX_NO_TRANS = 111, KMUX_TRANS = 112 } kmux_transpose;

/* ============================================================================================
 * Context, backends and devices
 * ============================================================================================ */

typedef struct kmux_context kmux_context; /**< loaded backends, devices, plan cache */
typedef struct kmux_device kmux_device;   /**< owned by its context; valid until it is destroyed */
typedef struct kmux_stream kmux_stream;   /**< an ordered queue of work on one device */
typedef struct kmux_event kmux_event;     /**< a point in a stream, for timing and waiting */
typedef struct kmux_plan kmux_plan;       /**< a prepared matmul, convolution or family op */

/** Options of kmux_context_create. Initialise with KMUX_CONTEXT_OPTIONS_INIT so that fields
 *  added in later versions get their defaults. An option that is 0/NULL falls back to the
 *  environment variable named beside it, then to the default. Required fields: struct_size and
 *  backend_path. An environment variable is read by the field's own rule: a value outside the
 *  field's range or not a whole integer (KMUX_NUM_THREADS=abc, KMUX_VERBOSE=-1) makes
 *  kmux_context_create fail with KMUX_ERR_INVALID_ARGUMENT naming the variable and its value.
 *
 *  Plugins and trust: a plugin is a shared object whose code (its constructors) runs as soon as
 *  it is opened, before kmux can check anything else of it, as with every plugin host
 *  (dlopen-based: Python extension folders, GStreamer, oneDNN's and OpenBLAS's own loaders).
 *  kmux opens every libkmux-<name>.so in the folders of backend_path / KMUX_BACKEND_PATH, the
 *  folder of libkmux.so and its kmux/ subfolder, and <libdir>/kmux: each of them, and the
 *  vendor-library folders KMUX_CUDA_LIB_PATH, KMUX_HIP_RUNTIME and ROCM_PATH, must be writable
 *  only by users trusted to run code in the process. What kmux does check: folders are absolute
 *  (a relative entry is refused) and resolved with realpath; a file that is not a regular file
 *  or is truncated is not opened; a plugin's table must carry its file's name ("ref" and "auto"
 *  are reserved) and its device ids must name it and be unique; each refusal is listed by
 *  kmux_backend_info_get with its reason. */
typedef struct kmux_context_options {
    size_t struct_size;         /**< sizeof(kmux_context_options) */
    const char *backend_path;   /**< ':'-separated ABSOLUTE plugin folders searched FIRST
                                     (KMUX_BACKEND_PATH); a relative entry or a list of 4096
                                     characters or more is KMUX_ERR_INVALID_ARGUMENT */
    const char *backends;       /**< ','-separated allow-list of backend names (KMUX_BACKENDS):
                                     "openblas", "onednn", "cuda", "hip", "auto" (the routing
                                     device cpu:auto); "ref" is always loaded */
    const char *default_device; /**< what "auto" resolves to (KMUX_DEVICE) */
    int num_threads;            /**< threads of CPU backends, [1, 4096]; 0 = KMUX_NUM_THREADS or
                                     all cores */
    int verbose;                /**< -1 = KMUX_VERBOSE; 0 off, 1 executions and host
                                     synchronisations (a "sync" line for each
                                     kmux_stream_synchronize, kmux_event_synchronize and each
                                     kmux_stream_wait_event that waits on the host), 2 +
                                     loading/plans. The trace (stderr) is process-wide: its
                                     level is the highest asked by any context alive at the
                                     time */
    int plan_cache_capacity;    /**< plans kept by kmux_gemm_ex & co (LRU), at most 65536;
                                     0 = 256, -1 = none. Room is taken as plans are cached */
} kmux_context_options;

#define KMUX_CONTEXT_OPTIONS_INIT                                                                  \
    { .struct_size = sizeof(kmux_context_options), .verbose = -1 }

/* fork(): a child process may call kmux, with a context of its own or with one inherited from
 * the parent (provided no other thread of the parent was inside kmux at the time of the fork, as
 * for any library with locks). Per backend:
 * - "ref" and cpu:openblas: work in the child as in the parent (OpenBLAS's pthread pool has
 *   its own fork handler and is restarted in the child).
 * - cpu:onednn: GNU libgomp's thread pool does not survive fork(): in the child, the thread that
 *   called fork() (and only that one) runs oneDNN single-threaded when it had run a
 *   multi-threaded oneDNN call before, where libgomp would wait forever for its lost workers.
 *   Results are the same, only slower; KMUX_VERBOSE=1 says so once per thread. To keep all
 *   threads in the child, call kmux there from a thread created after the fork, fork before
 *   the first multi-threaded call, or exec (posix_spawn) instead of forking.
 * - cuda and hip: the vendor runtimes do not support use across fork(); do GPU work in a child
 *   only if it exec()s, or if the parent never created a context that found a GPU. Creating a
 *   context whose backends include cuda initialises the CUDA driver (cuInit, as probing for
 *   devices needs): a child forked afterwards cannot use CUDA, through kmux or anything else
 *   (PyTorch's DataLoader workers, say), and kmux's cuda backend there reports why. A parent
 *   that forks CUDA-using children creates its kmux contexts without the cuda backend
 *   (kmux_context_options.backends, KMUX_BACKENDS) or after the forks.
 * Each CPU plugin calls its own vendor library: OpenBLAS and oneDNN are opened by the plugin
 * and their functions resolved on that library, so a cblas_sgemm or dnnl_* function of the
 * application (or of another BLAS it links) is never called in their place. */

/* Handles. kmux_context, kmux_device, kmux_stream, kmux_event and kmux_plan pointers are
 * handles that every function taking one checks on entry. kmux never returns a handle's memory to
 * the allocator: a destroyed handle is marked dead and recycled (with a new generation) only
 * after 64 further handles of its kind were destroyed, and every address kmux ever handed out is
 * kept in a process-wide registry. Guaranteed, for ANY pointer value passed as a handle (no memory
 * is read unless the registry holds the address):
 *  - a handle destroyed (or whose context was destroyed, for devices) gives
 *    KMUX_ERR_INVALID_ARGUMENT "fn: arg 0x.. was destroyed", also for a second destroy call;
 *  - a handle of another kind (a plan passed as a stream) gives "fn: arg 0x.. is not a
 *    kmux_stream (it is a kmux_plan)";
 *  - a pointer kmux never made gives "fn: arg 0x.. is not a kmux_stream (not a handle kmux made)".
 * Not detectable: a stale pointer whose memory has been recycled into a live handle of the same
 * kind (after more than 64 destructions of that kind since) is taken as that live handle. The two
 * functions that return pointers (kmux_stream_device, kmux_device_id) return NULL for a bad
 * handle and set kmux_last_error. Destroying a handle while another thread uses it is a race the
 * check cannot make safe. */

/** Creates a context: finds backend plugins (the folder of libkmux.so, <libdir>/kmux and
 *  KMUX_BACKEND_PATH), loads each once, probes its hardware and enumerates its devices. A plugin
 *  that fails to load or finds no device is listed as unavailable with the reason; that is not an
 *  error. opt may be NULL (all defaults).
 *  Returns KMUX_OK; KMUX_ERR_INVALID_ARGUMENT if ctx is NULL or opt->struct_size is too small or
 *  an option is out of range; KMUX_ERR_OUT_OF_MEMORY. */
KMUX_API kmux_status kmux_context_create(const kmux_context_options *opt, kmux_context **ctx);

/** Destroys a context, its cached plans and its backends (its kmux_device handles go with it).
 *  Plans, streams and events created from it must have been destroyed first and memory from
 *  kmux_malloc and kmux_host_malloc freed: while any is alive it destroys nothing and returns
 *  KMUX_ERR_INVALID_ARGUMENT with a message that counts them by kind ("1 plan, 2 streams, 1
 *  memory block of this context still alive"); destroy them and call it again. NULL is a no-op.
 *  Returns KMUX_OK; KMUX_ERR_INVALID_ARGUMENT also for a destroyed or foreign ctx (see
 *  "Handles" above). */
KMUX_API kmux_status kmux_context_destroy(kmux_context *ctx);

/** Description of one backend, loaded or not. Strings live as long as the context. */
typedef struct kmux_backend_info {
    const char *name;    /**< "ref", "openblas", "onednn", "cuda", "hip", "auto" (cpu:auto) */
    const char *version; /**< version of the native library it wraps ("OpenBLAS 0.3.21"), or "" */
    const char *path;    /**< file it was loaded from; "(built in)" for ref and auto */
    int available;       /**< 1 when it has at least one usable device */
    const char *reason;  /**< why it is unavailable ("" when available) */
    int device_count;    /**< devices it contributes */
} kmux_backend_info;

/** Number of backends the context knows about: every plugin file found (loaded or rejected),
 *  "ref", and the built-in routing backend "auto" unless the allow-list leaves it out.
 *  Returns KMUX_OK; KMUX_ERR_INVALID_ARGUMENT if ctx or count is NULL. */
KMUX_API kmux_status kmux_backend_count(const kmux_context *ctx, int *count);

/** Fills *info for backend i (0 <= i < count). Returns KMUX_OK; KMUX_ERR_INVALID_ARGUMENT if a
 *  pointer is NULL or i is out of range. */
KMUX_API kmux_status kmux_backend_info_get(const kmux_context *ctx, int i, kmux_backend_info *info);

/** Number of usable devices, over all available backends ("ref" is always one).
 *  Returns KMUX_OK; KMUX_ERR_INVALID_ARGUMENT if ctx or count is NULL. */
KMUX_API kmux_status kmux_device_count(const kmux_context *ctx, int *count);

/** Device i (0 <= i < count) in the order backends were loaded. Returns KMUX_OK;
 *  KMUX_ERR_INVALID_ARGUMENT if a pointer is NULL or i is out of range. */
KMUX_API kmux_status kmux_device_get(const kmux_context *ctx, int i, kmux_device **dev);

/** Finds a device by its id: "ref", "cpu:openblas", "cpu:onednn", "cpu:auto", "cuda:0",
 *  "hip:1", or "cuda" / "hip" for index 0 of that backend, or "auto": the context's
 *  default_device (KMUX_DEVICE) when set and not "auto", else the measured choice: the device
 *  "auto", which stands for the first GPU, else the routing device cpu:auto, else cpu:onednn,
 *  cpu:openblas, ref, and runs on it (its memory, streams and implementations), under the id
 *  "auto", with one difference: its plans are tuned by default (kmux_tune: KMUX_TUNE unset means
 *  on there; "0"/"off" or prefs.tune = KMUX_TUNE_OFF turn it off), so that the first plan of each
 *  problem costs up to about KMUX_TUNE_BUDGET_MS plus two rounds, once per machine and problem
 *  (the verdict cache). It is not in the kmux_device_get list, and its streams, memory and plans
 *  are its own: use them with the "auto" handle, not with the device it stands for.
 *  "cpu:auto" is a routing device, present when cpu:onednn or cpu:openblas is (and "auto" is not
 *  left out by the KMUX_BACKENDS allow-list): each of its plans is made on every CPU device that
 *  can run the problem, its implementations are theirs in the order cpu:onednn, cpu:openblas, and
 *  the plan starts at the first one (oneDNN's default whenever oneDNN runs the problem, OpenBLAS
 *  otherwise, e.g. f64) unless prefs.tune (KMUX_TUNE) picks the fastest of all by measurement.
 *  kmux_plan_info names the backend that runs ("auto->cpu:onednn:brg:avx512_core"). Its memory is
 *  host memory, shared with the other CPU devices.
 *  Returns KMUX_OK; KMUX_ERR_INVALID_ARGUMENT if a pointer is NULL; KMUX_ERR_NOT_FOUND when no
 *  available device has that id (the message says whether its backend is unavailable and why). */
KMUX_API kmux_status kmux_device_find(const kmux_context *ctx, const char *id, kmux_device **dev);

/** Properties of a device. Fixed-size strings, always NUL-terminated. */
typedef struct kmux_device_props {
    char id[32];               /**< "cpu:onednn", "cuda:0" */
    char backend[16];          /**< "onednn", "cuda" */
    char vendor[32];           /**< "NVIDIA", "AMD", "Intel", "generic" */
    char name[128];            /**< "NVIDIA H100 80GB HBM3", "AMD Ryzen 9 5950X" */
    char arch[32];             /**< "sm_90", "gfx942", "avx2", "avx512_core" */
    char driver_version[64];   /**< GPU driver/runtime versions, "" on CPU */
    char library_version[96];  /**< native libraries used ("cuBLASLt 13.0.1, cuDNN 9.13.0") */
    char pci_bus_id[32];       /**< "0000:3b:00.0" for GPUs, "" on CPU */
    int is_host;               /**< 1 when device memory is host memory (CPU devices, ref) */
    int64_t memory_bytes;      /**< device memory in bytes (physical RAM for CPU devices) */
    int compute_units;         /**< multiprocessors / compute units / CPU cores used */
    double clock_mhz;          /**< peak core clock in MHz, 0 if unknown */
    double mem_bandwidth_gbps; /**< peak memory bandwidth in GB/s (1e9 bytes/s), 0 if unknown */
    /** dtype_support[t] != 0 when dtype t may appear in GEMM on this device. */
    unsigned char dtype_support[KMUX_DTYPE_COUNT];
    /** peak_flops[t]: peak dense GEMM rate in FLOP/s with inputs of dtype t (ops/s for I8),
     *  0 when unknown or unsupported. */
    double peak_flops[KMUX_DTYPE_COUNT];
} kmux_device_props;

/** Fills *props. Returns KMUX_OK; KMUX_ERR_INVALID_ARGUMENT if a pointer is NULL. */
KMUX_API kmux_status kmux_device_props_get(const kmux_device *dev, kmux_device_props *props);

/** The id of a device ("cuda:0"); NULL if dev is NULL. Not a kmux_status: returns the id, which
 *  lives as long as the context. */
KMUX_API const char *kmux_device_id(const kmux_device *dev);

/** Readiness facts of a device that kmux_device_props does not carry (what kmux-check reports).
 *  Set struct_size = sizeof(kmux_device_diag) before the call; strings are NUL-terminated and ""
 *  when the backend does not know them, numbers -1 (flags) or 0 (sizes, rates) when unknown. */
typedef struct kmux_device_diag {
    size_t struct_size;               /**< sizeof(kmux_device_diag) as the caller was built */
    char target_id[64];               /**< full target: "gfx942:sramecc+:xnack-", "sm_90" */
    char code_objects[256];           /**< ','-separated architectures the backend carries code for:
                                           "gfx90a,gfx942", "sm_80,sm_90,compute_90" */
    char runtime_version[64];         /**< "HIP 6.2.41133", "CUDA runtime 13.0" */
    char driver_version[64];          /**< "amdgpu 6.8.5", "CUDA driver 13.0 (580.65.06)" */
    char libraries[256];              /**< vendor libraries opened, with versions, ','-separated */
    char device_nodes[128];           /**< ','-separated device files it uses ("/dev/kfd") */
    int ecc_supported;                /**< 1 yes, 0 no, -1 unknown */
    int ecc_enabled;                  /**< 1 on, 0 off, -1 unknown */
    int pcie_gen, pcie_width;         /**< current host link (generation 1..6, lanes); 0 unknown */
    int pcie_max_gen, pcie_max_width; /**< what the device supports; 0 unknown */
    double link_rate_gbps;            /**< per-direction host link rate in GB/s when it is not PCIe
                                           (NVLink-C2C, Infinity Fabric), 0 otherwise or unknown */
} kmux_device_diag;

/** Fills *diag with the readiness facts of dev that its backend reports (the backend's
 *  device_diag slot, plugin ABI 2.1). Fields beyond the caller's diag->struct_size are not
 *  written. Returns KMUX_OK; KMUX_ERR_INVALID_ARGUMENT if a pointer is NULL or diag->struct_size
 *  is smaller than the first version of the struct (up to link_rate_gbps);
 *  KMUX_ERR_UNSUPPORTED when the backend reports no such facts (ref, CPU backends, older
 *  plugins): *diag then holds the "unknown" values; KMUX_ERR_DEVICE for a native error. */
KMUX_API kmux_status kmux_device_diag_get(const kmux_device *dev, kmux_device_diag *diag);

/* ============================================================================================
 * Memory, streams and events
 * ============================================================================================ */

/** Allocates bytes of device memory (host memory, 64-byte aligned, on CPU devices), at least
 *  256-byte aligned on GPUs. bytes == 0 gives *ptr = NULL and KMUX_OK. Returns KMUX_OK;
 *  KMUX_ERR_INVALID_ARGUMENT if dev or ptr is NULL; KMUX_ERR_OUT_OF_MEMORY; KMUX_ERR_DEVICE. */
KMUX_API kmux_status kmux_malloc(kmux_device *dev, size_t bytes, void **ptr);

/** Frees memory from kmux_malloc on the same device. NULL is a no-op. kmux keeps a record of
 *  every live block (process-wide), so a pointer kmux_malloc did not return on dev is refused
 *  and left alone, as cudaFree answers cudaErrorInvalidValue: a block freed already, one from
 *  kmux_host_malloc, malloc or a static array, one of another device or another context.
 *  Returns KMUX_OK; KMUX_ERR_INVALID_ARGUMENT if dev is NULL or ptr is not a live block of dev
 *  (the message names ptr, dev and, where known, the device that owns it); KMUX_ERR_DEVICE for
 *  a native error (the block then stays allocated and recorded). */
KMUX_API kmux_status kmux_free(kmux_device *dev, void *ptr);

/** Allocates bytes of page-locked (pinned) host memory usable for fast asynchronous copies with
 *  dev, as cudaHostAlloc / hipHostMalloc; on CPU devices and ref plain 64-byte aligned host
 *  memory. The memory is host memory: the CPU may read and write it, and kmux_memcpy takes it as
 *  the host side of HOST_TO_DEVICE / DEVICE_TO_HOST. bytes == 0 gives *ptr = NULL and KMUX_OK.
 *  Returns KMUX_OK; KMUX_ERR_INVALID_ARGUMENT if dev or ptr is NULL; KMUX_ERR_UNSUPPORTED if
 *  dev's plugin has no pinned allocation (a GPU plugin older than ABI 2.2);
 *  KMUX_ERR_OUT_OF_MEMORY; KMUX_ERR_DEVICE for a native error. */
KMUX_API kmux_status kmux_host_malloc(kmux_device *dev, size_t bytes, void **ptr);

/** Frees memory from kmux_host_malloc on the same device. NULL is a no-op. Returns KMUX_OK;
 *  KMUX_ERR_INVALID_ARGUMENT if dev is NULL or ptr is not a live block kmux_host_malloc returned
 *  on dev (as kmux_free); KMUX_ERR_UNSUPPORTED as for kmux_host_malloc; KMUX_ERR_DEVICE for a
 *  native error. */
KMUX_API kmux_status kmux_host_free(kmux_device *dev, void *ptr);

/** Direction of a copy, as cudaMemcpyKind. */
typedef enum kmux_memcpy_kind {
    KMUX_MEMCPY_HOST_TO_HOST = 0,
    KMUX_MEMCPY_HOST_TO_DEVICE = 1,
    KMUX_MEMCPY_DEVICE_TO_HOST = 2,
    KMUX_MEMCPY_DEVICE_TO_DEVICE = 3
} kmux_memcpy_kind;

/** Copies bytes from src to dst, ordered in stream (as cudaMemcpyAsync; on CPU devices it
 *  completes before returning). Host memory given to a GPU copy should be synchronised with
 *  kmux_stream_synchronize before it is reused. bytes == 0 is a no-op. Returns KMUX_OK;
 *  KMUX_ERR_INVALID_ARGUMENT if stream is NULL, dst or src is NULL with bytes > 0, or kind is
 *  unknown; KMUX_ERR_DEVICE. */
KMUX_API kmux_status kmux_memcpy(kmux_stream *stream, void *dst, const void *src, size_t bytes,
                                 kmux_memcpy_kind kind);

/** Sets bytes of device memory to the byte value (as cudaMemsetAsync). Returns as kmux_memcpy. */
KMUX_API kmux_status kmux_memset(kmux_stream *stream, void *dst, int value, size_t bytes);

/** Creates a stream on dev (a new cudaStream_t / hipStream_t on GPUs; CPU streams execute
 *  synchronously in the calling thread). Returns KMUX_OK; KMUX_ERR_INVALID_ARGUMENT if a pointer
 *  is NULL; KMUX_ERR_OUT_OF_MEMORY; KMUX_ERR_DEVICE. */
KMUX_API kmux_status kmux_stream_create(kmux_device *dev, kmux_stream **stream);

/** Adopts a native stream (cudaStream_t, hipStream_t) without taking ownership: destroying the
 *  kmux stream does not destroy the native one. NULL native_stream means the legacy default
 *  stream of GPU backends (a program built for per-thread default streams passes
 *  CU_STREAM_PER_THREAD / hipStreamPerThread). On cuda the stream must belong to the device's
 *  primary context (the CUDA runtime's and PyTorch's streams do; one of a cuCtxCreate or green
 *  context does not: kmux's work on it fails with the driver's error).
 *  Returns KMUX_OK; KMUX_ERR_INVALID_ARGUMENT if dev or stream is NULL; KMUX_ERR_UNSUPPORTED on
 *  devices without native streams (CPU) when native_stream != NULL. */
KMUX_API kmux_status kmux_stream_wrap_native(kmux_device *dev, void *native_stream,
                                             kmux_stream **stream);

/* Graph capture (CUDA graphs, HIP graphs). kmux's work on a GPU stream may be captured into a
 * graph with the vendor's own API on the native stream the caller wrapped (cudaStreamBeginCapture
 * or cuStreamBeginCapture, in any mode, global included; hipStreamBeginCapture; torch.cuda.graph)
 * and replayed with cudaGraphLaunch / hipGraphLaunch, when:
 *  - every plan the capture executes was created before it (plan creation allocates, loads
 *    modules and asks the libraries), and was made with kmux_plan_prefs.caller_workspace = 1
 *    with its workspace allocated before (or its stream workspace already grown to its size);
 *  - each plan was executed once on that stream before the capture (a warm-up, as PyTorch asks
 *    before torch.cuda.graph): a stream's first convolution creates its cuDNN / MIOpen handle;
 *  - nothing else in the capture is a call that waits or allocates: kmux_stream_synchronize,
 *    kmux_event_synchronize, a host-side kmux_stream_wait_event fallback, kmux_malloc /
 *    kmux_free / kmux_host_malloc / kmux_host_free, plan creation and destruction (also the
 *    first kmux_gemm_ex of a problem, which creates its cached plan), and KMUX_VERBOSE >= 1 (its
 *    trace synchronises around each execute). Those that wait or allocate fail inside a capture
 *    (global or thread-local mode) with KMUX_ERR_DEVICE and the runtime's error
 *    (CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED), which also invalidates the capture, as the runtime
 *    does for any caller.
 *
 * The executes of matmul, convolution (their epilogues included), element-wise, binary,
 * reduction, softmax, pooling and optimizer plans, the mixed-precision calls (kmux_cast,
 * kmux_unscale_check_finite, kmux_loss_scale_update, the fp8 scale updates), kmux_memset and
 * device-to-device kmux_memcpy then only queue work on the stream, which the graph records. A
 * replay reads the device memory (tensors, fp8 scales, the loss scale, a matmul's alpha and beta
 * with KMUX_POINTER_MODE_DEVICE) as it is at the replay; host scalars (alpha, beta, the op
 * descriptors' parameters) are read at the call and replay with the captured values (as cuBLAS's
 * host pointer mode). Checked by test_graph_capture (a GEMM, a convolution, an element-wise op and
 * the loss scaler, in global mode) against the fake CUDA driver and the fake HIP runtime, and on a
 * GPU by tests/gpu/run.sh (test_graph_capture_cuda).
 * CPU streams execute at the call and have no capture. */

/** Waits until all work queued on stream has finished. Returns KMUX_OK;
 *  KMUX_ERR_INVALID_ARGUMENT if stream is NULL; KMUX_ERR_DEVICE (an asynchronous error, or the
 *  stream is being captured into a graph: the runtime refuses and invalidates the capture). */
KMUX_API kmux_status kmux_stream_synchronize(kmux_stream *stream);

/** Destroys a stream after waiting for its work. NULL is a no-op. Returns KMUX_OK;
 *  KMUX_ERR_DEVICE. */
KMUX_API kmux_status kmux_stream_destroy(kmux_stream *stream);

/** The device a stream belongs to; NULL if stream is NULL. Not a kmux_status: returns the
 *  device. */
KMUX_API kmux_device *kmux_stream_device(const kmux_stream *stream);

/** Creates a timing event on dev. Returns KMUX_OK; KMUX_ERR_INVALID_ARGUMENT if a pointer is
 *  NULL; KMUX_ERR_OUT_OF_MEMORY; KMUX_ERR_DEVICE. */
KMUX_API kmux_status kmux_event_create(kmux_device *dev, kmux_event **event);

/** Records event at the current end of stream (same device). Returns KMUX_OK;
 *  KMUX_ERR_INVALID_ARGUMENT if a pointer is NULL or the devices differ; KMUX_ERR_DEVICE. */
KMUX_API kmux_status kmux_event_record(kmux_event *event, kmux_stream *stream);

/** Waits until the work before a recorded event has finished. Returns KMUX_OK;
 *  KMUX_ERR_INVALID_ARGUMENT if event is NULL or was never recorded; KMUX_ERR_DEVICE for an
 *  asynchronous error of the device. */
KMUX_API kmux_status kmux_event_synchronize(kmux_event *event);

/** Makes work submitted to stream after this call wait until the work before event's last
 *  record has finished, without blocking the calling thread (as cudaStreamWaitEvent with flags
 *  0): the cross-stream dependency of a training step (a copy stream and a compute stream, say).
 *  The event may be of another device of the same backend (cuda:1's event on a cuda:0 stream,
 *  as CUDA allows). Where the backend has no device-side wait (CPU devices, whose streams finish
 *  every call before returning; a plugin of ABI minor < 5) or the event belongs to another
 *  backend or context, kmux waits for the event on the host before returning: the same order,
 *  at the cost of blocking the caller. A later kmux_event_record of the event does not affect
 *  this wait. Returns KMUX_OK; KMUX_ERR_INVALID_ARGUMENT if a pointer is NULL or destroyed or
 *  the event was never recorded; KMUX_ERR_DEVICE for an error of the device (with the native
 *  error's name). */
KMUX_API kmux_status kmux_stream_wait_event(kmux_stream *stream, kmux_event *event);

/** Milliseconds between two recorded, completed events of one device (as
 *  cudaEventElapsedTime; monotonic clock on CPU devices). Returns KMUX_OK;
 *  KMUX_ERR_INVALID_ARGUMENT if a pointer is NULL, the devices differ or an event was never
 *  recorded; KMUX_ERR_DEVICE. */
KMUX_API kmux_status kmux_event_elapsed_ms(kmux_event *start, kmux_event *end, float *ms);

/** Destroys an event. NULL is a no-op. Returns KMUX_OK. */
KMUX_API kmux_status kmux_event_destroy(kmux_event *event);

/* ============================================================================================
 * GEMM: C = alpha * op(A) * op(B) + beta * C
 * ============================================================================================
 *
 * Shapes: op(A) is m x k, op(B) is k x n, C is m x n, in the storage order `order` with the
 * leading dimensions of CBLAS: for KMUX_ROW_MAJOR, lda >= max(1, cols of A as stored) (k when
 * transa == KMUX_NO_TRANS, else m), and likewise ldb, ldc >= max(1, n); for KMUX_COL_MAJOR the
 * row counts (lda >= m, resp. k). All sizes are elements.
 *
 * alpha and beta point to HOST scalars of the scale type of the compute type, as in
 * cublasGemmEx: double for KMUX_COMPUTE_F64, int32_t for KMUX_COMPUTE_I32, float otherwise.
 *
 * Degenerate sizes follow the reference BLAS exactly: m == 0 or n == 0 does nothing; k == 0 or
 * *alpha == 0 computes C = beta * C without reading A or B (which may then be NULL); *beta == 0
 * means C is not read, so NaN or Inf already in C does not survive. As in BLAS, C must not
 * overlap A or B (the result is then undefined).
 *
 * Supported type combinations (a_type = b_type; device support is in kmux_device_props):
 *   a/b      c            compute
 *   f64      f64          F64
 *   f32      f32          F32, F32_FAST_TF32, F32_FAST_BF16
 *   f16      f16, f32     F32, F16 (c = f16 only)
 *   bf16     bf16, f32    F32
 *   fp8 (any of the four, a and b may differ within OCP or within FNUZ)  f32, f16, bf16  F32
 *   i8       i32          I32    (not on cpu:openblas: it has no integer GEMM and refuses
 *                                  i8 with KMUX_ERR_UNSUPPORTED)
 * The result is computed in the compute type and rounded once to c_type (round to nearest even).
 */

/** GEMM with mixed types, as cublasGemmEx / cblas_?gemm. The call reuses a cached plan of the
 *  context for the same arguments, so repeated shapes pay plan creation once.
 *  Returns KMUX_OK; KMUX_ERR_INVALID_ARGUMENT for a NULL stream/alpha/beta, NULL A or B when
 *  they must be read, NULL C when m, n > 0, a negative size, a leading dimension too small, an
 *  unknown enum, a size product that overflows, or a type combination not in the table above;
 *  KMUX_ERR_UNSUPPORTED when the stream's device cannot run that combination;
 *  KMUX_ERR_OUT_OF_MEMORY; KMUX_ERR_DEVICE for a native error. */
KMUX_API kmux_status kmux_gemm_ex(kmux_stream *stream, kmux_order order, kmux_transpose transa,
                                  kmux_transpose transb, int64_t m, int64_t n, int64_t k,
                                  const void *alpha, const void *A, kmux_dtype a_type, int64_t lda,
                                  const void *B, kmux_dtype b_type, int64_t ldb, const void *beta,
                                  void *C, kmux_dtype c_type, int64_t ldc,
                                  kmux_compute_type compute_type);

/** batch_count independent GEMMs; matrix i of A starts at A + i * stride_a elements (likewise
 *  B, C), as cublasGemmStridedBatchedEx. Strides may be 0 for A and B (broadcast), never for C
 *  when batch_count > 1 (KMUX_ERR_INVALID_ARGUMENT). batch_count == 0 does nothing. Other
 *  rules and statuses as kmux_gemm_ex; negative strides or batch_count give
 *  KMUX_ERR_INVALID_ARGUMENT. */
KMUX_API kmux_status kmux_gemm_strided_batched_ex(
    kmux_stream *stream, kmux_order order, kmux_transpose transa, kmux_transpose transb, int64_t m,
    int64_t n, int64_t k, const void *alpha, const void *A, kmux_dtype a_type, int64_t lda,
    int64_t stride_a, const void *B, kmux_dtype b_type, int64_t ldb, int64_t stride_b,
    const void *beta, void *C, kmux_dtype c_type, int64_t ldc, int64_t stride_c,
    int64_t batch_count, kmux_compute_type compute_type);

/* ============================================================================================
 * Plans: matmul with epilogues and fp8 scales; implementation walking
 * ============================================================================================ */

/** Epilogue flags of a matmul plan, as cublasLtEpilogue_t. Forward, applied in this order:
 *  D = act(alpha * op(A) op(B) + beta * C + bias). bias has n elements of bias_type and is added
 *  to every row: C[i][j] += bias[j] (as torch.addmm / nn.Linear, for either storage order).
 *  RELU and GELU are exclusive; GELU is the tanh approximation (as cuBLASLt).
 *
 *  Auxiliary outputs of the forward (args->aux, laid out as D: element (i, j) of batch b at
 *  index b * desc.stride_aux + i * aux_ld + j in row-major order, i + j * aux_ld in column-major):
 *  - RELU_AUX (with RELU, as CUBLASLT_EPILOGUE_RELU_AUX): a bit mask, bit set where the ReLU's
 *    input t = alpha * op(A) op(B) + beta * C + bias is > 0 (NaN: clear). Index x is bit x % 8 of
 *    byte x / 8; aux_ld and stride_aux count bits; aux is 4-byte aligned; only the bits of D's
 *    elements are written (so a mask may be written with one layout and read with another, as
 *    a convolution's activations are read flat by the next dense layer). cuBLASLt asks
 *    multiples of 128 and kmux does not: kmux's own GPU kernel runs these epilogues.
 *  - GELU_AUX (with GELU, as CUBLASLT_EPILOGUE_GELU_AUX): the GELU's input t, stored in aux_type
 *    (f32 or c_type), aux aligned to its element size.
 *  Backward, for the GEMM that computes a layer's input gradient (D = dY W, say), with the aux
 *  the forward wrote (read, same layout):
 *  - DRELU (as CUBLASLT_EPILOGUE_DRELU): D = bit ? t : 0 with t = alpha * op(A) op(B) + beta * C
 *    (a select, as torch's threshold_backward: a NaN or Inf gradient where the bit is clear
 *    gives 0);
 *  - DGELU (as CUBLASLT_EPILOGUE_DGELU): D = t * gelu'(aux), gelu' the derivative of the tanh
 *    form at the stored input.
 *  Bias gradients, for the GEMM that computes a weight gradient (dW = dY^T X: the bias gradient
 *  is dY summed over the batch), written to args->bias_grad in bias_type (f32 or c_type), as a
 *  sum of the input elements (before alpha, scales or rounding of D) in f64 on CPU devices and
 *  f32 on GPUs, rounded once:
 *  - BGRADA (as CUBLASLT_EPILOGUE_BGRADA): bias_grad[i] = sum_p op(A)[i][p], m values;
 *  - BGRADB (as CUBLASLT_EPILOGUE_BGRADB): bias_grad[j] = sum_p op(B)[p][j], n values.
 *  The backward and bias-gradient flags are each used alone (no BIAS, RELU, GELU or other flag
 *  beside them), on f32, f16 and bf16 inputs without fp8 scales; BGRADA/BGRADB need
 *  batch_count = 1. cuBLASLt's DRELU_BGRAD/DGELU_BGRAD are not offered: BGRADA on the weight
 *  gradient's GEMM computes the same sums. */
typedef enum kmux_epilogue {
    KMUX_EPILOGUE_NONE = 0,
    KMUX_EPILOGUE_BIAS = 1,
    KMUX_EPILOGUE_RELU = 2,
    KMUX_EPILOGUE_GELU = 4,
    KMUX_EPILOGUE_RELU_AUX = 8,
    KMUX_EPILOGUE_GELU_AUX = 16,
    KMUX_EPILOGUE_DRELU = 32,
    KMUX_EPILOGUE_DGELU = 64,
    KMUX_EPILOGUE_BGRADA = 128,
    KMUX_EPILOGUE_BGRADB = 256
} kmux_epilogue;

/** Where a plan's alpha and beta live (as cuBLASLt's CUBLASLT_MATMUL_DESC_POINTER_MODE and
 *  cuBLAS's cublasSetPointerMode):
 *  - KMUX_POINTER_MODE_HOST (0, the default): kmux_matmul_args.alpha/beta point to host memory,
 *    read at the call (a captured graph replays those values);
 *  - KMUX_POINTER_MODE_DEVICE (1): they point to device memory of the plan's device (kmux_malloc;
 *    the scale type of the compute type: double for F64, int32_t for I32, float otherwise), read
 *    when the work runs on the stream, so that a scale computed on the device (a loss scale's
 *    inverse, a learning-rate schedule) needs no host round trip and a captured graph reads them
 *    at each replay. alpha == 0 and beta == 0 keep their meaning (A and B, or C, not read), decided
 *    on the device; since the call cannot know alpha, A and B must not be NULL when k > 0.
 *    Where: every CPU device (its memory is the host's and its stream runs at the call), and
 *    cuda:N / hip:N on kmux's own GEMM kernel (the plan then lists only its tiles: cuBLASLt's,
 *    hipBLASLt's and rocBLAS's pointer modes are not mapped yet); k == 0 there is refused with
 *    KMUX_ERR_UNSUPPORTED (the degenerate path reads beta on the host). Not tuned on a GPU. */
typedef enum kmux_pointer_mode {
    KMUX_POINTER_MODE_HOST = 0,
    KMUX_POINTER_MODE_DEVICE = 1
} kmux_pointer_mode;

/** Description of a (strided batched) matmul. Initialise with KMUX_MATMUL_DESC_INIT. Fields have
 *  the meaning of kmux_gemm_strided_batched_ex. Required fields: struct_size to compute_type
 *  (epilogue, bias_type, the aux fields and pointer_mode may lie beyond an older struct_size). */
typedef struct kmux_matmul_desc {
    size_t struct_size;
    kmux_order order;
    kmux_transpose transa, transb;
    int64_t m, n, k;
    kmux_dtype a_type, b_type, c_type;
    int64_t lda, ldb, ldc;
    int64_t batch_count; /**< 1 for a plain GEMM */
    int64_t stride_a, stride_b, stride_c;
    kmux_compute_type compute_type;
    unsigned epilogue;    /**< OR of kmux_epilogue */
    kmux_dtype bias_type; /**< f32 or c_type; for BIAS, BGRADA and BGRADB */
    kmux_dtype aux_type;  /**< GELU_AUX / DGELU aux elements: f32 or c_type */
    int64_t aux_ld;       /**< aux leading dimension, elements (bits for RELU_AUX / DRELU) */
    int64_t stride_aux;   /**< aux batch stride, elements (bits); used when batch_count > 1 */
    kmux_pointer_mode pointer_mode; /**< where alpha and beta live (kmux_pointer_mode) */
} kmux_matmul_desc;

#define KMUX_MATMUL_DESC_INIT                                                                      \
    {                                                                                              \
        .struct_size = sizeof(kmux_matmul_desc), .order = KMUX_ROW_MAJOR, .transa = KMUX_NO_TRANS, \
        .transb = KMUX_NO_TRANS, .a_type = KMUX_F32, .b_type = KMUX_F32, .c_type = KMUX_F32,       \
        .batch_count = 1, .compute_type = KMUX_COMPUTE_F32, .epilogue = KMUX_EPILOGUE_NONE,        \
        .bias_type = KMUX_F32, .aux_type = KMUX_F32, .pointer_mode = KMUX_POINTER_MODE_HOST        \
    }

/** Preferences for plan creation. Initialise with KMUX_PLAN_PREFS_INIT. Required fields:
 *  struct_size and max_workspace_bytes.
 *  Workspace: an implementation whose workspace exceeds max_workspace_bytes is skipped and the
 *  next one is used (KMUX_ERR_UNSUPPORTED when none fits). SIZE_MAX (the default) means the
 *  backend's default cap; on cpu:onednn convolutions that is 16 x the bytes of the three tensors,
 *  at least 64 MiB, at most half of the host memory available at plan creation, and when no
 *  implementation fits the default cap the one with the smallest workspace is kept (the default
 *  never makes a plan fail). When implementations were skipped, kmux_plan_info.impl ends with
 *  " [<count> over default workspace cap <bytes>]" (or "prefs" for an explicit cap). The f16/bf16
 *  "+cvt" implementations hold f32 copies of the tensors in their workspace; on cpu:onednn a
 *  convolution whose copies would exceed half its tensors' bytes (and 4 MiB) runs its batch in
 *  chunks of nb images a call, named "+cvt/nb<nb>", so that its workspace stays near its
 *  tensors' size. */
typedef struct kmux_plan_prefs {
    size_t struct_size;
    size_t max_workspace_bytes;  /**< workspace the plan may use; SIZE_MAX = backend default */
    int allow_emulation;         /**< 1: a type may be run by converting it to a wider one in a
                                      workspace (f16/bf16 on CPUs without native kernels); the
                                      implementation name then says so ("+cvt") */
    int require_deterministic;   /**< 1: only bitwise reproducible implementations */
    int tune;                    /**< kmux_tune: choose the implementation by measurement */
    int allow_fast_accumulation; /**< 1: an fp8 GEMM may accumulate in the matrix unit's
                                      native precision without promoting partial sums to f32
                                      at every k-step (cuBLASLt CUBLASLT_MATMUL_DESC_FAST_ACCUM,
                                      as Transformer Engine uses for forward GEMMs; faster on
                                      sm_89/sm_90, less accurate at large K). 0 (the default):
                                      f32 accumulation. No effect on other types or on CPU
                                      backends, which always accumulate in f32; the
                                      implementation name says ",fast_accum" where it applies */
    /** 1: the workspace is the caller's (as cuBLASLt's and cuDNN's, or oneDNN's user-managed
     *  scratchpad): a matmul or convolution plan allocates none, neither at creation nor at
     *  execution; kmux_plan_info.workspace_bytes is what each execute of its current
     *  implementation needs, passed as kmux_matmul_args / kmux_conv2d_args .workspace and
     *  .workspace_bytes (query it again after kmux_plan_next_impl). The workspace is device
     *  memory of the plan's device (kmux_malloc), aligned to 256 bytes on a GPU (cuBLASLt's rule)
     *  and 64 on a CPU (kmux_malloc's memory is), used only while the execute
     *  runs (on a GPU, until the stream reaches its end): plans executed one after another on
     *  one stream can share one arena of the largest size; executes that may overlap need their
     *  own. max_workspace_bytes still bounds the choice. Element-wise, binary, reduction,
     *  softmax, pooling and optimizer plans are not affected (they hold at most the few KiB of
     *  scratchpad a oneDNN primitive asks for, counted in their plan_info).
     *  KMUX_ERR_UNSUPPORTED at plan creation on a device whose backend cannot run in the
     *  caller's memory (kmux_device_caps.caller_workspace). 0 (the default): the plan owns
     *  its workspace and the args' workspace fields are ignored. */
    int caller_workspace;
} kmux_plan_prefs;

/** kmux_plan_prefs.tune: whether a new plan with several implementations (impl_count > 1)
 *  starts at the one measured fastest for its exact problem, instead of the backend's default
 *  order (in the spirit of MIOpen's find-db and cuBLASLt's autotuning of its heuristic list):
 *  - KMUX_TUNE_DEFAULT (0, the default): as the environment variable KMUX_TUNE says: "1" or "on"
 *    means KMUX_TUNE_ON, any other value KMUX_TUNE_OFF; unset (or empty), KMUX_TUNE_ON on the
 *    device "auto" (kmux_device_find) and KMUX_TUNE_OFF on every other device.
 *  - KMUX_TUNE_OFF: no measurement, no cache: the plan starts at implementation 0.
 *  - KMUX_TUNE_ON: the verdict cache (a text file: KMUX_TUNE_CACHE, else
 *    $XDG_CACHE_HOME/kmux/tune-v1.txt, else $HOME/.cache/kmux/tune-v1.txt) is looked up by
 *    machine (CPU model, cores), kmux version, backend and library versions, device, thread
 *    count, the exact problem and these prefs; on a hit the plan starts at the cached
 *    implementation without timing. On a miss, plan creation runs every implementation on
 *    scratch operands of the real shape (a warm-up round, then timed rounds in serpentine order,
 *    0 1 .. n-1, n-1 .. 0, ..., of >= 1 ms samples; each one's median sample counts; at least one
 *    timed round) until KMUX_TUNE_BUDGET_MS milliseconds (default 200) have passed, so creation
 *    costs at most about the budget plus two rounds; on cpu:auto, the implementations of a
 *    device whose workers keep spinning after a call (cpu:openblas with OpenBLAS's pthreads
 *    server, ~0.15 s, README "Performance note") are timed first and the others after a pause
 *    of that long, which adds to the cost. It skips oneDNN reference kernels and appends the
 *    verdict to the cache. Tuning never makes plan creation fail: a corrupt or unwritable cache
 *    file, or an implementation that fails, only costs the measurement (KMUX_VERBOSE=2 says why).
 *    On a GPU (cuda:N, hip:N) the scratch operands are the device's memory (and its fp8 scales),
 *    and a sample is the calls queued back to back on a stream of the plan's device between two
 *    events, timed by the device (kmux_event_elapsed_ms), so launch latency and synchronisation
 *    are not counted; the warm-up run is waited for.
 *  Results do not depend on the choice beyond what the implementations already differ by
 *  (kmux_plan_info tells which one runs); kmux_plan_next_impl continues from the chosen index. */
typedef enum kmux_tune { KMUX_TUNE_DEFAULT = 0, KMUX_TUNE_OFF = 1, KMUX_TUNE_ON = 2 } kmux_tune;

#define KMUX_PLAN_PREFS_INIT                                                                       \
    {                                                                                              \
        .struct_size = sizeof(kmux_plan_prefs), .max_workspace_bytes = SIZE_MAX,                   \
        .allow_emulation = 1, .require_deterministic = 0, .tune = KMUX_TUNE_DEFAULT,               \
        .allow_fast_accumulation = 0, .caller_workspace = 0                                        \
    }

/** Pointers of one matmul execution. alpha/beta: scalars as in kmux_gemm_ex, in host memory or,
 *  with desc.pointer_mode = KMUX_POINTER_MODE_DEVICE, in device memory. The fp8
 *  scales (device f32 scalars, NULL = 1) dequantise A and B and quantise D as cuBLASLt's
 *  CUBLASLT_MATMUL_DESC_{A,B,D}_SCALE_POINTER; with the epilogue the full formula is
 *    D = d_scale * act(a_scale * b_scale * alpha * op(A) op(B) + beta * C + bias)
 *  rounded once to c_type. amax_d (device f32, may be NULL) receives max |act(...)| over D
 *  before d_scale is applied (NaN ignored). Integer GEMM (i8 -> i32) wraps modulo 2^32 like
 *  cuBLAS integer arithmetic. Required fields: struct_size to C (bias, the scales and amax_d
 *  default to NULL). */
typedef struct kmux_matmul_args {
    size_t struct_size;
    const void *alpha, *beta;
    const void *A, *B;
    void *C;
    const void *bias;
    const float *a_scale, *b_scale, *d_scale;
    float *amax_d;
    /** The caller's workspace (plans made with kmux_plan_prefs.caller_workspace = 1; ignored
     *  otherwise): device memory of workspace_bytes >= kmux_plan_info.workspace_bytes, aligned
     *  as kmux_plan_prefs.caller_workspace says; may be NULL when the plan needs none. */
    void *workspace;
    size_t workspace_bytes;
    /** The epilogue's auxiliary matrix (kmux_epilogue): written by RELU_AUX / GELU_AUX, read by
     *  DRELU / DGELU; device memory; ignored by the other epilogues. */
    void *aux;
    /** BGRADA / BGRADB: the bias gradient written (m or n elements of bias_type); device memory;
     *  ignored by the other epilogues. */
    void *bias_grad;
} kmux_matmul_args;

#define KMUX_MATMUL_ARGS_INIT                                                                      \
    { .struct_size = sizeof(kmux_matmul_args) }

/** Prepares a matmul on dev. The plan holds everything that does not depend on the data
 *  (algorithm choice, primitives, workspace) and can be executed many times, concurrently on
 *  different streams. prefs may be NULL (defaults).
 *  Returns KMUX_OK; KMUX_ERR_INVALID_ARGUMENT as kmux_gemm_ex, plus unknown epilogue flags,
 *  RELU with GELU, any epilogue on integer (KMUX_COMPUTE_I32) GEMM, a bias_type that is
 *  neither f32 nor c_type, RELU_AUX without RELU or GELU_AUX without GELU, DRELU, DGELU, BGRADA
 *  or BGRADB with another flag or on other than f32/f16/bf16 inputs, BGRADA/BGRADB with
 *  batch_count > 1, an aux_type that is neither f32 nor c_type, an aux_ld smaller than D's
 *  (n row-major, m column-major), or a stride_aux (batch_count > 1) smaller than one aux
 *  matrix;
 *  KMUX_ERR_UNSUPPORTED when dev cannot run it under prefs (the message says why);
 *  KMUX_ERR_OUT_OF_MEMORY; KMUX_ERR_DEVICE. */
KMUX_API kmux_status kmux_matmul_plan_create(kmux_device *dev, const kmux_matmul_desc *desc,
                                             const kmux_plan_prefs *prefs, kmux_plan **plan);

/** Runs a matmul plan on stream (of the plan's device). Returns KMUX_OK;
 *  KMUX_ERR_INVALID_ARGUMENT for NULL plan/stream/args/alpha/beta, a NULL operand that must be
 *  read, a NULL bias with the BIAS epilogue, a NULL aux with an AUX, DRELU or DGELU epilogue, a
 *  NULL bias_grad with BGRADA/BGRADB (or A/B NULL there), an aux that is misaligned (4 bytes
 *  for the mask, its element size otherwise), an aux or bias_grad that overlaps C or each other,
 * fp8 scales (a_scale, b_scale, d_scale) with a backward or bias-gradient epilogue, a stream of
 * another device, or (caller_workspace plans) a workspace not aligned (256 bytes on a GPU, 64 on a
 * CPU) or overlapping an operand; KMUX_ERR_WORKSPACE (caller_workspace plans) when workspace is
 * NULL or workspace_bytes is less than the plan needs (the message says both); KMUX_ERR_DEVICE. */
KMUX_API kmux_status kmux_matmul_execute(kmux_plan *plan, kmux_stream *stream,
                                         const kmux_matmul_args *args);

/** What a plan runs. Strings live as long as the plan (until next_impl or destroy). */
typedef struct kmux_plan_info {
    const char *impl;   /**< implementation name: "onednn:brg:avx2", "openblas:sgemm+cvt",
                             "cublasLt:algo=6,tile=128x128" */
    const char *device; /**< device id */
    kmux_compute_type effective_compute; /**< what the implementation really accumulates in */
    size_t workspace_bytes;              /**< workspace held by the plan, bytes; with
                                              prefs.caller_workspace, what each execute needs
                                              in its args (the plan holds none) */
    int deterministic;                   /**< 1 when results are bitwise reproducible run to run */
    int impl_index;                      /**< 0 for the first (preferred) implementation */
} kmux_plan_info;

/** Fills *info. Returns KMUX_OK; KMUX_ERR_INVALID_ARGUMENT if a pointer is NULL. */
KMUX_API kmux_status kmux_plan_info_get(const kmux_plan *plan, kmux_plan_info *info);

/** Switches the plan to its next implementation (for benchmarks that walk them all, as
 *  cublasLtMatmulAlgoGetHeuristic's list). Returns KMUX_OK; KMUX_ERR_LAST_IMPL when the current
 *  one was the last (the plan is unchanged); KMUX_ERR_INVALID_ARGUMENT if plan is NULL. */
KMUX_API kmux_status kmux_plan_next_impl(kmux_plan *plan);

/** Destroys a plan. NULL is a no-op. Returns KMUX_OK. */
KMUX_API kmux_status kmux_plan_destroy(kmux_plan *plan);

/* ============================================================================================
 * 2-D convolution (cross-correlation, as cuDNN CUDNN_CROSS_CORRELATION and oneDNN)
 * ============================================================================================
 *
 * Tensors, in elements:
 *   x (input)   N x C x H x W    (NCHW) or N x H x W x C (NHWC)
 *   w (filter)  K x C/groups x R x S (KCRS, with NCHW) or K x R x S x C/groups (KRSC, with NHWC)
 *   y (output)  N x K x P x Q    (NCHW) or N x P x Q x K (NHWC)
 * P = (H + pad_top + pad_bottom - ((R - 1) * dilation_h + 1)) / stride_h + 1, likewise Q with
 * W, S, pad_left, pad_right, dilation_w, stride_w. Dilation follows cuDNN/PyTorch: 1 = dense
 * (oneDNN's dilation 0). Groups: C and K are divisible by groups; groups == C == K is depthwise.
 *
 * Directions (as cudnnConvolutionForward / BackwardData / BackwardFilter):
 *   FWD          y  = alpha * conv(x, w)        + beta * y
 *   BWD_DATA     dx = alpha * conv^T(dy, w)     + beta * dx     (x holds dx, y holds dy)
 *   BWD_WEIGHTS  dw = alpha * corr(x, dy)       + beta * dw     (w holds dw, y holds dy)
 * alpha and beta are host scalars: double for KMUX_COMPUTE_F64, float otherwise. beta == 0
 * means the output is not read (NaN in it does not survive); alpha == 0 means the inputs are not
 * read and the output becomes beta * output (as GEMM). The output must not overlap the inputs.
 *
 * Epilogue of a forward convolution (desc.epilogue, an OR of kmux_epilogue's forward flags, as
 * cudnnConvolutionBiasActivationForward with z = y and alpha2 = beta):
 *   y = act(alpha * conv(x, w) + beta * y + bias[k])    k: the output channel of the element
 *   BIAS      args->bias: K values of desc.bias_type (f32 or y_type)
 *   RELU      max(t, 0) (NaN kept), as the matmul epilogue; GELU: its tanh form; exclusive
 *   RELU_AUX  (with RELU) args->aux: a bit mask of y, bit e set where the ReLU's input t of the
 *             element at offset e of y (in y's layout) is > 0 (NaN: clear); bit e is bit e % 8 of
 *             byte e / 8, ceil(N K P Q / 8) bytes, aux 4-byte aligned; bits past the last element
 *             are kept. It is the mask a matmul DRELU reads (aux_ld = the row length of y's
 *             elements as the next layer reads them), or an eltwise ReLU backward's.
 * The backward flags (DRELU, DGELU, BGRADA/B) and GELU_AUX are matmul-only; a convolution's bias
 * gradient is kmux_reduction SUM over every axis but the channel.
 * Where the backend fuses it (ref, cpu:onednn, cpu:openblas: in the pass that applies alpha/beta
 * and rounds) y is rounded once; elsewhere (cpu:auto, cuda:N, hip:N) the core runs the
 * convolution and then the matmul epilogue over y in place (y + bias, act, mask), so an f16 or
 * bf16 y is rounded twice; kmux_plan_info.impl then ends with " + epilogue".
 */

typedef enum kmux_conv_direction {
    KMUX_CONV_FWD = 1,
    KMUX_CONV_BWD_DATA = 2,
    KMUX_CONV_BWD_WEIGHTS = 3
} kmux_conv_direction;

typedef enum kmux_layout { KMUX_NCHW = 1, KMUX_NHWC = 2 } kmux_layout;

/** Description of a 2-D convolution. Initialise with KMUX_CONV2D_DESC_INIT (stride 1, no
 *  padding, dilation 1, 1 group, NCHW, f32, no epilogue). Required fields: struct_size to
 *  compute_type (epilogue and bias_type may lie beyond an older struct_size). */
typedef struct kmux_conv2d_desc {
    size_t struct_size;
    kmux_conv_direction direction;
    kmux_layout layout;
    int64_t n, c, h, w; /**< input batch, channels, height, width */
    int64_t k, r, s;    /**< output channels, filter height, filter width */
    int64_t groups;
    int64_t stride_h, stride_w;
    int64_t pad_top, pad_bottom, pad_left, pad_right;
    int64_t dilation_h, dilation_w;    /**< 1 = dense */
    kmux_dtype x_type, w_type, y_type; /**< f32, f16, bf16 (all equal); f64 on ref */
    kmux_compute_type compute_type;
    unsigned epilogue;    /**< forward only: OR of KMUX_EPILOGUE_BIAS, RELU, GELU, RELU_AUX */
    kmux_dtype bias_type; /**< f32 or y_type, with KMUX_EPILOGUE_BIAS */
} kmux_conv2d_desc;

#define KMUX_CONV2D_DESC_INIT                                                                      \
    {                                                                                              \
        .struct_size = sizeof(kmux_conv2d_desc), .direction = KMUX_CONV_FWD, .layout = KMUX_NCHW,  \
        .groups = 1, .stride_h = 1, .stride_w = 1, .dilation_h = 1, .dilation_w = 1,               \
        .x_type = KMUX_F32, .w_type = KMUX_F32, .y_type = KMUX_F32,                                \
        .compute_type = KMUX_COMPUTE_F32, .epilogue = KMUX_EPILOGUE_NONE, .bias_type = KMUX_F32    \
    }

/** Output height P and width Q of desc, by the formula above.
 *  Returns KMUX_OK; KMUX_ERR_INVALID_ARGUMENT if a pointer is NULL or the description is
 *  invalid (the same checks as kmux_conv2d_plan_create). */
KMUX_API kmux_status kmux_conv2d_output_dims(const kmux_conv2d_desc *desc, int64_t *p, int64_t *q);

/** Pointers of one convolution execution; see the direction table for which are read/written.
 *  Required fields: struct_size to y. */
typedef struct kmux_conv2d_args {
    size_t struct_size;
    const void *alpha, *beta;
    void *x, *w, *y;
    /** The caller's workspace, as kmux_matmul_args.workspace (kmux_plan_prefs.caller_workspace
     *  plans; ignored otherwise; beyond the required fields). */
    void *workspace;
    size_t workspace_bytes;
    const void *bias; /**< K values of desc.bias_type (KMUX_EPILOGUE_BIAS; beyond the required) */
    void *aux;        /**< the ReLU mask (KMUX_EPILOGUE_RELU_AUX; beyond the required fields) */
} kmux_conv2d_args;

#define KMUX_CONV2D_ARGS_INIT                                                                      \
    { .struct_size = sizeof(kmux_conv2d_args) }

/** Prepares a convolution on dev; prefs may be NULL. Returns KMUX_OK;
 *  KMUX_ERR_INVALID_ARGUMENT for a NULL pointer, a size < 1 (n, c, h, w, k, r, s, groups,
 *  strides, dilations) or negative padding, C or K not divisible by groups, an empty output
 *  (P or Q < 1), a size product that overflows, an unknown enum or mixed dtypes, an epilogue
 *  on a backward direction, an epilogue flag other than BIAS, RELU, GELU, RELU_AUX, RELU with
 *  GELU, RELU_AUX without RELU, or a bias_type other than f32 or y_type;
 *  KMUX_ERR_UNSUPPORTED when dev cannot run it; KMUX_ERR_OUT_OF_MEMORY; KMUX_ERR_DEVICE. */
KMUX_API kmux_status kmux_conv2d_plan_create(kmux_device *dev, const kmux_conv2d_desc *desc,
                                             const kmux_plan_prefs *prefs, kmux_plan **plan);

/** Runs a convolution plan on stream. Returns KMUX_OK; KMUX_ERR_INVALID_ARGUMENT for a NULL
 *  plan/stream/args/alpha/beta/tensor, a matmul plan, a stream of another device, a tensor
 *  written (y forward, x backward-data, w backward-weights) that overlaps a tensor read (no
 *  in-place convolution, as kmux_cast), or (caller_workspace plans) a workspace not aligned or
 *  overlapping a tensor, as kmux_matmul_execute; a NULL bias (BIAS) or aux (RELU_AUX), an aux
 *  not 4-byte aligned, or a bias/aux overlapping y or each other; KMUX_ERR_WORKSPACE as
 *  kmux_matmul_execute; KMUX_ERR_DEVICE. */
KMUX_API kmux_status kmux_conv2d_execute(kmux_plan *plan, kmux_stream *stream,
                                         const kmux_conv2d_args *args);

/* ============================================================================================
 * Element-wise ops (as oneDNN's eltwise primitive and cuDNN's pointwise modes)
 * ============================================================================================
 *
 * One op family, planned and executed like GEMM: kmux_eltwise_plan_create -> kmux_eltwise_execute
 * (many times, on any stream of the plan's device) -> kmux_plan_destroy; kmux_plan_info_get names
 * the implementation ("onednn:eltwise:jit:avx512_core", "kmux:cpu", "kmux:gpu"). The tensors are
 * dense vectors of n elements of one dtype (f32, f16 or bf16; each device's kmux_device_caps says
 * which it runs); f16/bf16 are computed in f32 and rounded once to the dtype (RNE), as oneDNN.
 *
 *   FORWARD                          dst      = f(src)
 *   BACKWARD                         diff_src = diff_dst * f'(src)
 *   BACKWARD with use_dst_for_bwd    diff_src = diff_dst * f'(x) computed from dst = f(x) (as
 *                                    oneDNN's *_use_dst_for_bwd: the forward's input need not be
 *                                    kept); only for the algorithms marked "dst" below.
 *
 * Algorithms (alpha and beta are read only where named):
 *   RELU        x > 0 ? x : alpha * x (alpha: negative slope, 0 = ReLU; -Inf -> 0 when alpha = 0;
 *               the gradient at x = 0 is alpha * diff_dst; with alpha = 0 a masked gradient is 0,
 *               as PyTorch's threshold_backward). dst when alpha >= 0.
 *   GELU_TANH   x/2 (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))   (PyTorch gelu approximate="tanh")
 *   GELU_ERF    x/2 (1 + erf(x / sqrt(2)))                       (PyTorch gelu)
 *   SIGMOID     1 / (1 + exp(-x)) (oneDNN's logistic). dst.
 *   TANH        tanh(x). dst.
 *   LINEAR      alpha * x + beta. dst.
 *   RECIPROCAL  1 / x. dst.
 *   SILU        x * sigmoid(x) (swish with beta 1; PyTorch silu)
 * NaN inputs give NaN (ReLU's masked gradient excepted); results are those of the f32 formulas
 * within a few units in the last place (transcendental functions are not correctly rounded on
 * any backend; ref computes in f64 and rounds once).
 */
typedef enum kmux_eltwise_alg {
    KMUX_ELTWISE_RELU = 1,
    KMUX_ELTWISE_GELU_TANH = 2,
    KMUX_ELTWISE_GELU_ERF = 3,
    KMUX_ELTWISE_SIGMOID = 4,
    KMUX_ELTWISE_TANH = 5,
    KMUX_ELTWISE_LINEAR = 6,
    KMUX_ELTWISE_RECIPROCAL = 7,
    KMUX_ELTWISE_SILU = 8
} kmux_eltwise_alg;

/** Name of an element-wise algorithm ("relu", "gelu_tanh", ...); "?" when unknown. Not a
 *  kmux_status: returns the name, never NULL, static storage. */
KMUX_API const char *kmux_eltwise_alg_name(kmux_eltwise_alg alg);

/** Direction of an op of the families (as oneDNN's prop_kind; forward_training and
 *  forward_inference are the same here). */
typedef enum kmux_prop { KMUX_PROP_FORWARD = 1, KMUX_PROP_BACKWARD = 2 } kmux_prop;

/** Description of an element-wise op. Initialise with KMUX_ELTWISE_DESC_INIT (ReLU forward, f32,
 *  alpha = beta = 0). Required fields: all of them. */
typedef struct kmux_eltwise_desc {
    size_t struct_size;
    kmux_eltwise_alg alg;
    kmux_prop prop;
    int use_dst_for_bwd; /**< 1: BACKWARD reads dst (the forward's output) instead of src */
    kmux_dtype dtype;    /**< of every tensor: f32, f16 or bf16 */
    int64_t n;           /**< elements (>= 0) */
    float alpha, beta;   /**< the algorithm's parameters (finite), see the table above */
} kmux_eltwise_desc;

#define KMUX_ELTWISE_DESC_INIT                                                                     \
    {                                                                                              \
        .struct_size = sizeof(kmux_eltwise_desc), .alg = KMUX_ELTWISE_RELU,                        \
        .prop = KMUX_PROP_FORWARD, .use_dst_for_bwd = 0, .dtype = KMUX_F32, .n = 0, .alpha = 0.0f, \
        .beta = 0.0f                                                                               \
    }

/** Pointers of one element-wise execution (device memory, n elements of the plan's dtype each).
 *  FORWARD reads src and writes dst; BACKWARD reads diff_dst and src (dst with use_dst_for_bwd)
 *  and writes diff_src. The fields a direction does not use are ignored. In place is allowed
 *  (dst == src; diff_src == diff_dst), any other overlap of the written tensor with one read is
 *  not. Required fields: all of them. */
typedef struct kmux_eltwise_args {
    size_t struct_size;
    const void *src;
    void *dst;
    const void *diff_dst;
    void *diff_src;
} kmux_eltwise_args;

#define KMUX_ELTWISE_ARGS_INIT                                                                     \
    { .struct_size = sizeof(kmux_eltwise_args) }

/** Prepares an element-wise op on dev; prefs may be NULL (only its tune and
 *  require_deterministic fields apply: every implementation is deterministic). Returns KMUX_OK;
 *  KMUX_ERR_INVALID_ARGUMENT for a NULL pointer, a struct_size too small, an unknown alg, prop
 *  or dtype, a dtype other than f32/f16/bf16, n < 0 or n elements overflowing the address space,
 *  a non-finite alpha or beta, or use_dst_for_bwd not 0/1 or set for an algorithm without a
 *  "dst" backward (or RELU with alpha < 0); KMUX_ERR_UNSUPPORTED when dev does not run this
 *  algorithm or dtype (its caps), or has no element-wise ops at all; KMUX_ERR_OUT_OF_MEMORY;
 *  KMUX_ERR_DEVICE. */
KMUX_API kmux_status kmux_eltwise_plan_create(kmux_device *dev, const kmux_eltwise_desc *desc,
                                              const kmux_plan_prefs *prefs, kmux_plan **plan);

/** Runs an element-wise plan on stream (of the plan's device). Returns KMUX_OK;
 *  KMUX_ERR_INVALID_ARGUMENT for a NULL plan/stream/args, a plan of another kind, a stream of
 *  another device, a NULL tensor the direction reads or writes (n > 0), or a written tensor that
 *  overlaps a read one other than exactly (in place); KMUX_ERR_DEVICE. */
KMUX_API kmux_status kmux_eltwise_execute(kmux_plan *plan, kmux_stream *stream,
                                          const kmux_eltwise_args *args);

/* ============================================================================================
 * Softmax, log-softmax and softmax cross-entropy (as torch.softmax, log_softmax and
 * torch.nn.functional.cross_entropy; oneDNN's softmax primitive)
 * ============================================================================================
 *
 * One op family over a row-major rows x cols tensor (dense), the softmax along each row; every
 * tensor of one dtype (f32, f16 or bf16, computed in f32, rounded once), labels int32, losses
 * f32. Per row, with m = max x and s = sum exp(x - m):
 *   SOFTMAX                FORWARD y = exp(x - m) / s;  BACKWARD dx = y (dy - sum(dy y))
 *   LOG_SOFTMAX            FORWARD y = x - m - log s;   BACKWARD dx = dy - exp(y) sum(dy)
 *   SOFTMAX_CROSS_ENTROPY  FORWARD only, fused: with label l and label_smoothing e, the target
 *                          t = (1 - e) onehot(l) + e / cols; loss[r] = sum t (logsumexp(x) - x)
 *                          (torch.nn.functional.cross_entropy, reduction "none"), mean_loss =
 *                          the mean of loss over rows (reduction "mean", summed in row order in
 *                          f64: deterministic), dx = (softmax(x) - t) * grad_scale / rows (the
 *                          gradient of mean_loss times the loss scale), argmax[r] = the first
 *                          largest logit (the prediction). A label outside [0, cols) gives a NaN
 *                          loss and a NaN gradient row, never a read outside x.
 */
typedef enum kmux_softmax_alg {
    KMUX_SOFTMAX = 1,
    KMUX_LOG_SOFTMAX = 2,
    KMUX_SOFTMAX_CROSS_ENTROPY = 3
} kmux_softmax_alg;

/** Name of a softmax algorithm ("softmax", "log_softmax", "cross_entropy"); "?" when unknown.
 *  Not a kmux_status: returns the name, never NULL, static storage. */
KMUX_API const char *kmux_softmax_alg_name(kmux_softmax_alg alg);

/** Description of a softmax op. Initialise with KMUX_SOFTMAX_DESC_INIT (softmax forward, f32).
 *  Required fields: all of them. */
typedef struct kmux_softmax_desc {
    size_t struct_size;
    kmux_softmax_alg alg;
    kmux_prop prop;
    int64_t rows, cols;    /**< rows >= 0, cols >= 1 (when rows > 0), rows * cols elements */
    kmux_dtype dtype;      /**< x, y, dy, dx: f32, f16 or bf16 */
    float label_smoothing; /**< SOFTMAX_CROSS_ENTROPY: in [0, 1] */
} kmux_softmax_desc;

#define KMUX_SOFTMAX_DESC_INIT                                                                     \
    {                                                                                              \
        .struct_size = sizeof(kmux_softmax_desc), .alg = KMUX_SOFTMAX, .prop = KMUX_PROP_FORWARD,  \
        .rows = 0, .cols = 1, .dtype = KMUX_F32, .label_smoothing = 0.0f                           \
    }

/** Tensors of one softmax execution (device memory). FORWARD reads x and writes y (SOFTMAX,
 *  LOG_SOFTMAX); BACKWARD reads y and dy and writes dx; SOFTMAX_CROSS_ENTROPY reads x and labels
 *  (rows) and writes loss (rows), and mean_loss (one f32), dx and argmax (rows) where not NULL;
 *  grad_scale (device f32, NULL = 1) multiplies its gradient. The fields an algorithm does not
 *  use are ignored. No written tensor may overlap one read. Required fields: all of them. */
typedef struct kmux_softmax_args {
    size_t struct_size;
    const void *x;
    void *y;
    const void *dy;
    void *dx;
    const int32_t *labels;
    float *loss;
    float *mean_loss;
    int32_t *argmax;
    const float *grad_scale;
} kmux_softmax_args;

#define KMUX_SOFTMAX_ARGS_INIT                                                                     \
    { .struct_size = sizeof(kmux_softmax_args) }

/** Prepares a softmax op on dev; prefs may be NULL. Returns KMUX_OK; KMUX_ERR_INVALID_ARGUMENT
 *  for a NULL pointer, a struct_size too small, an unknown alg or prop, BACKWARD of
 *  SOFTMAX_CROSS_ENTROPY (its forward writes the gradient), rows < 0, cols < 1, rows * cols
 *  overflowing, a dtype other than f32/f16/bf16, or label_smoothing outside [0, 1];
 *  KMUX_ERR_UNSUPPORTED when dev does not run it (its caps); KMUX_ERR_OUT_OF_MEMORY. */
KMUX_API kmux_status kmux_softmax_plan_create(kmux_device *dev, const kmux_softmax_desc *desc,
                                              const kmux_plan_prefs *prefs, kmux_plan **plan);

/** Runs a softmax plan on stream. Returns KMUX_OK; KMUX_ERR_INVALID_ARGUMENT for a NULL
 *  plan/stream/args, a plan of another kind, a stream of another device, a NULL tensor the
 *  algorithm needs (rows > 0), or a written tensor overlapping a read one; KMUX_ERR_DEVICE. */
KMUX_API kmux_status kmux_softmax_execute(kmux_plan *plan, kmux_stream *stream,
                                          const kmux_softmax_args *args);

/* ============================================================================================
 * Optimizer step (as torch.optim.SGD, Adam and AdamW, single-tensor path)
 * ============================================================================================
 *
 * One op family, planned and executed like the others: kmux_optimizer_plan_create ->
 * kmux_optimizer_execute (once per training step, on any stream of the plan's device) ->
 * kmux_plan_destroy. It updates n f32 master parameters in place from a gradient in grad_type
 * (f32, f16 or bf16, decoded exactly), keeps the optimizer's state in f32 tensors the caller
 * owns (zero-filled before the first step), and can write a f16/bf16 copy of the updated
 * parameters in the same pass (copy_type), the copy a mixed-precision forward reads. Formulas,
 * in PyTorch's order of operations (f32 arithmetic; the step's scalars in f64):
 *   SGD    g += weight_decay p; with momentum: buf = (step 1 ? g : momentum buf + (1 - dampening)
 * g), g = nesterov ? g + momentum buf : buf; p -= lr g                  (state1 = buf) ADAM   g +=
 * weight_decay p; m += (1 - beta1)(g - m); v = beta2 v + (1 - beta2) g^2; p -= lr / (1 -
 * beta1^step) m / (sqrt(v) / sqrt(1 - beta2^step) + eps) (state1 = m, state2 = v) ADAMW  p *= 1 -
 * lr weight_decay, then ADAM without the weight decay on g Mixed precision: grad_scale (device f32,
 * may be NULL) multiplies every gradient first (the unscale of GradScaler), and when found_inf
 * (device f32, may be NULL) is not 0 nothing is written at all (GradScaler.step skips the step), so
 * a step needs no host synchronisation.
 */
typedef enum kmux_optimizer_alg {
    KMUX_OPTIMIZER_SGD = 1,
    KMUX_OPTIMIZER_ADAM = 2,
    KMUX_OPTIMIZER_ADAMW = 3
} kmux_optimizer_alg;

/** Name of an optimizer algorithm ("sgd", "adam", "adamw"); "?" when unknown. Not a
 *  kmux_status: returns the name, never NULL, static storage. */
KMUX_API const char *kmux_optimizer_alg_name(kmux_optimizer_alg alg);

/** Description of an optimizer step. Initialise with KMUX_OPTIMIZER_DESC_INIT (SGD without
 *  momentum, f32 gradients, no copy, Adam's betas 0.9 / 0.999, eps 1e-8). Required fields: all. */
typedef struct kmux_optimizer_desc {
    size_t struct_size;
    kmux_optimizer_alg alg;
    int64_t n;            /**< parameters (>= 0) */
    kmux_dtype grad_type; /**< f32, f16 or bf16 */
    int copy_type;        /**< 0: no copy; KMUX_F16 or KMUX_BF16: write the updated parameters
                               rounded (RNE) to param_copy */
    float momentum;       /**< SGD: >= 0 (0: no momentum buffer) */
    float dampening;      /**< SGD: in [0, 1] */
    float weight_decay;   /**< >= 0 */
    int nesterov;         /**< SGD: 0 or 1; 1 needs momentum > 0 and dampening 0 (as PyTorch) */
    float beta1, beta2;   /**< ADAM, ADAMW: in [0, 1) */
    float eps;            /**< ADAM, ADAMW: > 0 */
} kmux_optimizer_desc;

#define KMUX_OPTIMIZER_DESC_INIT                                                                   \
    {                                                                                              \
        .struct_size = sizeof(kmux_optimizer_desc), .alg = KMUX_OPTIMIZER_SGD, .n = 0,             \
        .grad_type = KMUX_F32, .copy_type = 0, .momentum = 0.0f, .dampening = 0.0f,                \
        .weight_decay = 0.0f, .nesterov = 0, .beta1 = 0.9f, .beta2 = 0.999f, .eps = 1e-8f          \
    }

/** Tensors and per-step values of one optimizer step (device memory, n elements each). */
typedef struct kmux_optimizer_args {
    size_t struct_size;
    float *param;            /**< f32 master parameters, updated in place */
    const void *grad;        /**< grad_type */
    float *state1;           /**< SGD with momentum: the momentum buffer; ADAM/ADAMW: m */
    float *state2;           /**< ADAM/ADAMW: v; otherwise ignored */
    void *param_copy;        /**< copy_type != 0: the copy written; otherwise ignored */
    float lr;                /**< learning rate of this step (host; >= 0, finite) */
    int64_t step;            /**< this step's number, 1 for the first (host) */
    const float *grad_scale; /**< device f32 multiplying every gradient, or NULL */
    const float *found_inf;  /**< device f32: not 0 = skip the step; or NULL */
} kmux_optimizer_args;

#define KMUX_OPTIMIZER_ARGS_INIT                                                                   \
    { .struct_size = sizeof(kmux_optimizer_args), .step = 1 }

/** Prepares an optimizer step on dev; prefs may be NULL. Returns KMUX_OK;
 *  KMUX_ERR_INVALID_ARGUMENT for a NULL pointer, a struct_size too small, an unknown alg, n < 0 or
 *  overflowing, a grad_type other than f32/f16/bf16, a copy_type other than 0/f16/bf16, a
 *  hyper-parameter out of its range above (named with its value), or nesterov without momentum
 *  or with dampening; KMUX_ERR_UNSUPPORTED when dev does not run it (its caps);
 *  KMUX_ERR_OUT_OF_MEMORY; KMUX_ERR_DEVICE. */
KMUX_API kmux_status kmux_optimizer_plan_create(kmux_device *dev, const kmux_optimizer_desc *desc,
                                                const kmux_plan_prefs *prefs, kmux_plan **plan);

/** Runs one optimizer step. Returns KMUX_OK; KMUX_ERR_INVALID_ARGUMENT for a NULL
 *  plan/stream/args, a plan of another kind, a stream of another device, a NULL tensor the step
 *  uses (n > 0), lr negative or not finite, step < 1, or two of the tensors overlapping;
 *  KMUX_ERR_DEVICE. */
KMUX_API kmux_status kmux_optimizer_execute(kmux_plan *plan, kmux_stream *stream,
                                            const kmux_optimizer_args *args);

/* ============================================================================================
 * Binary ops with broadcasting (as oneDNN's binary primitive and cudnnOpTensor)
 * ============================================================================================
 *
 * One op family: dst = op(alpha * src0, beta * src1) over dense row-major tensors of ndims
 * dimensions (1 <= ndims <= KMUX_MAX_NDIMS). src0 and dst have the shape `dims`; src1 has
 * `src1_dims`, each either dims[i] or 1 (broadcast along that axis, as oneDNN's binary and NumPy
 * broadcasting of the second operand). Every tensor has one dtype (f32, f16 or bf16, computed in
 * f32 and rounded once, RNE). The bias-add of a layer is ADD with src1 the bias:
 *   NCHW  dims {N, C, H, W}, src1_dims {1, C, 1, 1}
 *   NHWC  dims {N, H, W, C}, src1_dims {1, 1, 1, C}
 *   row-major rows x cols   dims {rows, cols}, src1_dims {1, cols}
 * and alpha * x + beta * y is ADD with two tensors of one shape.
 *
 *   ADD  a + b     SUB  a - b     MUL  a * b     DIV  a / b (IEEE: x/0 = +-Inf, 0/0 = NaN)
 *   MAX  the larger, MIN  the smaller; a NaN operand gives NaN (as torch.maximum / minimum)
 * with a = alpha * src0 and b = beta * src1 formed in f32. There is no backward op: the
 * gradients are dst's gradient scaled (the element-wise LINEAR op) and, for a broadcast operand,
 * summed over the broadcast axes (the reduction family: the bias gradient is a SUM reduction).
 * kmux_plan_info names the implementation: "onednn:binary:<oneDNN kernel>" (ADD, SUB, MUL, DIV
 * with alpha = beta = 1 on cpu:onednn where oneDNN has a kernel other than its reference one;
 * "kmux:cpu" is the plan's next implementation), "kmux:cpu", "kmux:gpu".
 */
typedef enum kmux_binary_alg {
    KMUX_BINARY_ADD = 1,
    KMUX_BINARY_SUB = 2,
    KMUX_BINARY_MUL = 3,
    KMUX_BINARY_DIV = 4,
    KMUX_BINARY_MAX = 5,
    KMUX_BINARY_MIN = 6
} kmux_binary_alg;

/** Most dimensions of a binary or reduction tensor (as cuDNN's CUDNN_DIM_MAX, smaller). */
#define KMUX_MAX_NDIMS 6

/** Name of a binary algorithm ("add", "sub", "mul", "div", "max", "min"); "?" when unknown. Not a
 *  kmux_status: returns the name, never NULL, static storage. */
KMUX_API const char *kmux_binary_alg_name(kmux_binary_alg alg);

/** Description of a binary op. Initialise with KMUX_BINARY_DESC_INIT (ADD, f32, alpha = beta = 1,
 *  ndims 0: set ndims and the dims). Required fields: all of them; dims beyond ndims are
 *  ignored. */
typedef struct kmux_binary_desc {
    size_t struct_size;
    kmux_binary_alg alg;
    kmux_dtype dtype;                  /**< of every tensor: f32, f16 or bf16 */
    int ndims;                         /**< 1 .. KMUX_MAX_NDIMS */
    int64_t dims[KMUX_MAX_NDIMS];      /**< src0 and dst, row-major (the last index fastest) */
    int64_t src1_dims[KMUX_MAX_NDIMS]; /**< each dims[i] or 1 (broadcast) */
    float alpha, beta;                 /**< the operands' scales (finite) */
} kmux_binary_desc;

#define KMUX_BINARY_DESC_INIT                                                                      \
    {                                                                                              \
        .struct_size = sizeof(kmux_binary_desc), .alg = KMUX_BINARY_ADD, .dtype = KMUX_F32,        \
        .ndims = 0, .alpha = 1.0f, .beta = 1.0f                                                    \
    }

/** Tensors of one binary execution (device memory, dense, of the plan's dtype). dst may be src0
 *  exactly (in place, as a bias-add usually is); no other overlap of dst with src0 or src1.
 *  Required fields: all of them. */
typedef struct kmux_binary_args {
    size_t struct_size;
    const void *src0;
    const void *src1;
    void *dst;
} kmux_binary_args;

#define KMUX_BINARY_ARGS_INIT                                                                      \
    { .struct_size = sizeof(kmux_binary_args) }

/** Prepares a binary op on dev; prefs may be NULL. Returns KMUX_OK; KMUX_ERR_INVALID_ARGUMENT for
 *  a NULL pointer, a struct_size too small, an unknown alg, a dtype other than f32/f16/bf16,
 *  ndims outside [1, KMUX_MAX_NDIMS], a negative dims[i], a src1_dims[i] neither dims[i] nor 1,
 *  an element count overflowing, or a non-finite alpha or beta; KMUX_ERR_UNSUPPORTED when dev
 *  does not run it (its caps); KMUX_ERR_OUT_OF_MEMORY. A shape with a 0 is an op that writes
 *  nothing. */
KMUX_API kmux_status kmux_binary_plan_create(kmux_device *dev, const kmux_binary_desc *desc,
                                             const kmux_plan_prefs *prefs, kmux_plan **plan);

/** Runs a binary plan on stream. Returns KMUX_OK; KMUX_ERR_INVALID_ARGUMENT for a NULL
 *  plan/stream/args, a plan of another kind, a stream of another device, a NULL tensor (when
 *  the shape is not empty), or dst overlapping src1 or src0 other than exactly; KMUX_ERR_DEVICE.
 */
KMUX_API kmux_status kmux_binary_execute(kmux_plan *plan, kmux_stream *stream,
                                         const kmux_binary_args *args);

/* ============================================================================================
 * Reductions over axes (as oneDNN's reduction primitive and cudnnReduceTensor)
 * ============================================================================================
 *
 * One op family: dst = the reduction of src over every axis i with dst_dims[i] == 1 (the
 * others are kept: dst_dims[i] == src_dims[i]), dense row-major tensors of ndims dimensions
 * (1 <= ndims <= KMUX_MAX_NDIMS), src in src_dtype and dst in dst_dtype (each f32, f16 or bf16: a
 * bf16 gradient reduced into an f32 bias gradient is one op). Accumulated in f64 on the CPU
 * backends and ref, in f32 or f64 on the GPU (see each backend), rounded once to dst_dtype: SUM sum
 * x                    MEAN   sum x / count MAX    largest x                MIN    smallest x (a
 * NaN gives NaN, as torch.amax) AMAX   largest |x| (NaN gives NaN; kmux_amax, which ignores NaN, is
 * the scaling statistic) NORM2  sqrt(sum x^2) (the gradient norm of clipping, as
 * torch.linalg.vector_norm) The bias gradient of a layer is SUM over every axis but the channel:
 * src {N, C, H, W}, dst {1, C, 1, 1} (NCHW); src {N, H, W, C}, dst {1, 1, 1, C} (NHWC); src {rows,
 * cols}, dst {1, cols} (row-major). Reducing an axis of size 0 gives the algorithm's identity (SUM,
 * AMAX, NORM2: 0; MAX: -Inf; MIN: +Inf; MEAN: NaN, as torch.mean of nothing).
 */
typedef enum kmux_reduction_alg {
    KMUX_REDUCTION_SUM = 1,
    KMUX_REDUCTION_MEAN = 2,
    KMUX_REDUCTION_MAX = 3,
    KMUX_REDUCTION_MIN = 4,
    KMUX_REDUCTION_AMAX = 5,
    KMUX_REDUCTION_NORM2 = 6
} kmux_reduction_alg;

/** Name of a reduction algorithm ("sum", "mean", "max", "min", "amax", "norm2"); "?" when
 *  unknown. Not a kmux_status: returns the name, never NULL, static storage. */
KMUX_API const char *kmux_reduction_alg_name(kmux_reduction_alg alg);

/** Description of a reduction. Initialise with KMUX_REDUCTION_DESC_INIT (SUM, f32 to f32, ndims
 *  0: set ndims and the dims). Required fields: all of them; dims beyond ndims are ignored. */
typedef struct kmux_reduction_desc {
    size_t struct_size;
    kmux_reduction_alg alg;
    kmux_dtype src_dtype, dst_dtype;  /**< each f32, f16 or bf16 */
    int ndims;                        /**< 1 .. KMUX_MAX_NDIMS */
    int64_t src_dims[KMUX_MAX_NDIMS]; /**< row-major (the last index fastest) */
    int64_t dst_dims[KMUX_MAX_NDIMS]; /**< each src_dims[i] (kept) or 1 (reduced) */
} kmux_reduction_desc;

#define KMUX_REDUCTION_DESC_INIT                                                                   \
    {                                                                                              \
        .struct_size = sizeof(kmux_reduction_desc), .alg = KMUX_REDUCTION_SUM,                     \
        .src_dtype = KMUX_F32, .dst_dtype = KMUX_F32, .ndims = 0                                   \
    }

/** Tensors of one reduction (device memory, dense). dst may not overlap src. Required fields:
 *  all of them. */
typedef struct kmux_reduction_args {
    size_t struct_size;
    const void *src;
    void *dst;
} kmux_reduction_args;

#define KMUX_REDUCTION_ARGS_INIT                                                                   \
    { .struct_size = sizeof(kmux_reduction_args) }

/** Prepares a reduction on dev; prefs may be NULL. Returns KMUX_OK; KMUX_ERR_INVALID_ARGUMENT for
 *  a NULL pointer, a struct_size too small, an unknown alg, a dtype other than f32/f16/bf16,
 *  ndims outside [1, KMUX_MAX_NDIMS], a negative src_dims[i], a dst_dims[i] neither src_dims[i]
 *  nor 1, or an element count overflowing; KMUX_ERR_UNSUPPORTED when dev does not run it (its
 *  caps, naming the algorithm or dtype); KMUX_ERR_OUT_OF_MEMORY. A dst with no element is an op
 *  that writes nothing. */
KMUX_API kmux_status kmux_reduction_plan_create(kmux_device *dev, const kmux_reduction_desc *desc,
                                                const kmux_plan_prefs *prefs, kmux_plan **plan);

/** Runs a reduction plan on stream. Returns KMUX_OK; KMUX_ERR_INVALID_ARGUMENT for a NULL
 *  plan/stream/args, a plan of another kind, a stream of another device, a NULL src (when src
 *  has elements) or dst (when dst has elements), or dst overlapping src; KMUX_ERR_DEVICE. */
KMUX_API kmux_status kmux_reduction_execute(kmux_plan *plan, kmux_stream *stream,
                                            const kmux_reduction_args *args);

/* ============================================================================================
 * 2-D pooling (as torch.nn.MaxPool2d / AvgPool2d, oneDNN's pooling primitive, cudnnPooling*)
 * ============================================================================================
 *
 * One op family over a 4-D tensor x of n x c x h x w (layout NCHW or NHWC, dense) and y of
 * n x c x p x q, with the window kernel_h x kernel_w moved by stride_h, stride_w over x padded by
 * pad_top, pad_bottom, pad_left, pad_right (floor mode, as PyTorch's default and oneDNN):
 *   p = (h + pad_top + pad_bottom - kernel_h) / stride_h + 1, q likewise with w.
 * Every window overlaps x (each pad is smaller than the kernel along its axis), so no output is
 * of padding alone. Every tensor has one dtype (f32, f16 or bf16), computed in f32, rounded once.
 *   MAX               y = the largest x of the window (padding is not a value; a NaN gives NaN,
 *                     as MaxPool2d). BACKWARD: each dy goes to its window's first largest x in
 *                     row-major order within the window (MaxPool2d's index), the window recomputed
 *                     from x as cudnnPoolingBackward does; dx sums what every window sends it
 *   AVG_INCLUDE_PAD   y = the window's sum / (kernel_h kernel_w): padding counts as zeros
 *                     (count_include_pad = True, PyTorch's default; oneDNN's
 *                     pooling_avg_include_padding)
 *   AVG_EXCLUDE_PAD   y = the window's sum / the x elements in it (count_include_pad = False;
 *                     pooling_avg_exclude_padding)
 * BACKWARD of the averages: dx[i] = sum over the windows holding i of dy / that window's divisor.
 * dx is written, never accumulated into (as cudnnPoolingBackward with beta = 0).
 * kmux_plan_info names the implementation: "onednn:pooling:<oneDNN kernel>" (the averages on
 * cpu:onednn where oneDNN has a kernel other than its reference one for the dtype and layout,
 * e.g. "onednn:pooling:jit:avx512_core" or "onednn:pooling:simple_nchw:any"; "kmux:cpu" is the
 * plan's next implementation), "kmux:cpu", "kmux:gpu".
 */
typedef enum kmux_pooling_alg {
    KMUX_POOLING_MAX = 1,
    KMUX_POOLING_AVG_INCLUDE_PAD = 2,
    KMUX_POOLING_AVG_EXCLUDE_PAD = 3
} kmux_pooling_alg;

/** Name of a pooling algorithm ("max", "avg_include_pad", "avg_exclude_pad"); "?" when
 *  unknown. Not a kmux_status: returns the name, never NULL, static storage. */
KMUX_API const char *kmux_pooling_alg_name(kmux_pooling_alg alg);

/** Description of a pooling op. Initialise with KMUX_POOLING_DESC_INIT (MAX forward, NCHW, f32,
 *  stride 1, no padding: set the sizes and the kernel). Required fields: all of them. */
typedef struct kmux_pooling_desc {
    size_t struct_size;
    kmux_pooling_alg alg;
    kmux_prop prop;
    kmux_layout layout;         /**< of x, y, dx, dy: NCHW or NHWC */
    kmux_dtype dtype;           /**< of every tensor: f32, f16 or bf16 */
    int64_t n, c, h, w;         /**< x's batch, channels, height, width: n, c >= 0; h, w >= 1 */
    int64_t kernel_h, kernel_w; /**< >= 1 */
    int64_t stride_h, stride_w; /**< >= 1 */
    int64_t pad_top, pad_bottom, pad_left, pad_right; /**< >= 0, smaller than the kernel */
} kmux_pooling_desc;

#define KMUX_POOLING_DESC_INIT                                                                     \
    {                                                                                              \
        .struct_size = sizeof(kmux_pooling_desc), .alg = KMUX_POOLING_MAX,                         \
        .prop = KMUX_PROP_FORWARD, .layout = KMUX_NCHW, .dtype = KMUX_F32, .stride_h = 1,          \
        .stride_w = 1                                                                              \
    }

/** Output height p and width q of desc, by the formula above. Returns KMUX_OK;
 *  KMUX_ERR_INVALID_ARGUMENT if a pointer is NULL or the description is invalid (the same checks
 *  as kmux_pooling_plan_create, each naming the field and its value). */
KMUX_API kmux_status kmux_pooling_output_dims(const kmux_pooling_desc *desc, int64_t *p,
                                              int64_t *q);

/** Tensors of one pooling execution (device memory, dense, the plan's layout and dtype).
 *  FORWARD reads x (n c h w) and writes y (n c p q). BACKWARD reads dy (n c p q) and, for MAX, x,
 *  and writes dx (n c h w). The fields a direction does not use are ignored. No written tensor
 *  may overlap one read. Required fields: all of them. */
typedef struct kmux_pooling_args {
    size_t struct_size;
    const void *x;
    void *y;
    const void *dy;
    void *dx;
} kmux_pooling_args;

#define KMUX_POOLING_ARGS_INIT                                                                     \
    { .struct_size = sizeof(kmux_pooling_args) }

/** Prepares a pooling op on dev; prefs may be NULL. Returns KMUX_OK; KMUX_ERR_INVALID_ARGUMENT
 *  for a NULL pointer, a struct_size too small, an unknown alg, prop or layout, a dtype other
 *  than f32/f16/bf16, n or c negative, h, w, a kernel size or a stride below 1, a pad negative or
 *  not smaller than the kernel along its axis, an empty output (p or q < 1), or an element count
 *  overflowing; KMUX_ERR_UNSUPPORTED when dev does not run it (its caps, naming the algorithm,
 *  dtype or direction); KMUX_ERR_OUT_OF_MEMORY. n or c 0 is an op that writes nothing. */
KMUX_API kmux_status kmux_pooling_plan_create(kmux_device *dev, const kmux_pooling_desc *desc,
                                              const kmux_plan_prefs *prefs, kmux_plan **plan);

/** Runs a pooling plan on stream. Returns KMUX_OK; KMUX_ERR_INVALID_ARGUMENT for a NULL
 *  plan/stream/args, a plan of another kind, a stream of another device, a NULL tensor the
 *  direction needs (when n c > 0), or the written tensor overlapping a read one; KMUX_ERR_DEVICE.
 */
KMUX_API kmux_status kmux_pooling_execute(kmux_plan *plan, kmux_stream *stream,
                                          const kmux_pooling_args *args);

/* ============================================================================================
 * Mixed precision
 * ============================================================================================
 *
 * Scalars and flags (scale, amax, found_inf, growth tracker) live in DEVICE memory (host memory
 * on CPU devices), so a GPU trainer never has to synchronise to read them.
 */

/** Options of kmux_cast. Initialise with KMUX_CAST_OPTIONS_INIT. Required fields: struct_size and
 *  saturate (scale and amax default to NULL). */
typedef struct kmux_cast_options {
    size_t struct_size;
    int saturate;       /**< 1: values beyond the target's largest finite value become that value
                             with their sign (Inf too), as cuda_fp8's __NV_SATFINITE; 0: they
                             become Inf, or NaN in formats without Inf (e4m3, FNUZ) */
    const float *scale; /**< device f32: multiply by *scale before rounding; NULL = 1 */
    float *amax;        /**< device f32: receives max |x| over the input (before scaling, NaN
                             ignored); NULL = not wanted */
} kmux_cast_options;

#define KMUX_CAST_OPTIONS_INIT                                                                     \
    { .struct_size = sizeof(kmux_cast_options), .saturate = 0 }

/** Converts n elements from src_type to dst_type: f32 <-> f16, bf16, the four fp8 formats, and
 *  f64 <-> f32 (and any pair among those, through exact f32/f64 decoding). Rounding is to
 *  nearest, ties to even, once. NaN stays NaN (any payload; the FNUZ formats' single NaN);
 *  -0 stays -0 except in FNUZ formats (no -0: it becomes +0); subnormals are kept, never
 *  flushed; overflow: see kmux_cast_options.saturate. src and dst must not overlap. opts may be
 *  NULL. Returns KMUX_OK; KMUX_ERR_INVALID_ARGUMENT for a NULL stream, NULL src/dst with n > 0,
 *  n < 0, an unknown dtype or a pair not listed (i8, i32); KMUX_ERR_UNSUPPORTED; KMUX_ERR_DEVICE.
 */
KMUX_API kmux_status kmux_cast(kmux_stream *stream, int64_t n, const void *src, kmux_dtype src_type,
                               void *dst, kmux_dtype dst_type, const kmux_cast_options *opts);

/** Writes max |x_i| over n elements of a floating-point dtype to the device f32 *amax (0 for
 *  n == 0; NaN elements are ignored, Inf counts). Returns KMUX_OK; KMUX_ERR_INVALID_ARGUMENT
 *  for a NULL pointer (x may be NULL when n == 0), n < 0, or an integer dtype; KMUX_ERR_DEVICE. */
KMUX_API kmux_status kmux_amax(kmux_stream *stream, int64_t n, const void *x, kmux_dtype type,
                               float *amax);

/** For each of count tensors (tensors[i]: sizes[i] elements of types[i], f32/f16/bf16/f64),
 *  multiplies every element in place by *inv_scale (device f32) and sets *found_inf (device f32)
 *  to 1.0 if any element, BEFORE scaling, was Inf or NaN; *found_inf is not cleared otherwise,
 *  as torch._amp_foreach_non_finite_check_and_unscale_. Returns KMUX_OK;
 *  KMUX_ERR_INVALID_ARGUMENT for a NULL pointer, count < 0, sizes[i] < 0 or an unsupported
 *  dtype; KMUX_ERR_DEVICE. */
KMUX_API kmux_status kmux_unscale_check_finite(kmux_stream *stream, int64_t count,
                                               void *const *tensors, const int64_t *sizes,
                                               const kmux_dtype *types, const float *inv_scale,
                                               float *found_inf);

/** Dynamic loss scaling, as torch.cuda.amp.GradScaler (torch._amp_update_scale_): if
 *  *found_inf != 0: *scale *= backoff_factor and *growth_tracker = 0; else
 *  ++*growth_tracker, and when it reaches growth_interval: *scale *= growth_factor (only if the
 *  result is finite) and *growth_tracker = 0. scale, growth_tracker, found_inf: device memory.
 *  Returns KMUX_OK; KMUX_ERR_INVALID_ARGUMENT for a NULL pointer, growth_factor <= 1 or not
 *  finite, backoff_factor outside (0, 1), growth_interval < 1; KMUX_ERR_DEVICE. */
KMUX_API kmux_status kmux_loss_scale_update(kmux_stream *stream, float *scale,
                                            int32_t *growth_tracker, const float *found_inf,
                                            double growth_factor, double backoff_factor,
                                            int64_t growth_interval);

/** Delayed-scaling fp8 recipe, as NVIDIA Transformer Engine (amax_compute_algo "max"):
 *  amax = max over the history_len entries of amax_history (device f32); if amax is finite and
 *  > 0, *scale = (fmax(fp8_type) / amax) / 2^margin, else *scale is unchanged. fmax is 448
 *  (e4m3), 57344 (e5m2, e5m2fnuz), 240 (e4m3fnuz). The scale is clamped to [FLT_MIN, FLT_MAX]:
 *  never 0 (which would cast everything to 0), Inf or subnormal. Returns KMUX_OK;
 *  KMUX_ERR_INVALID_ARGUMENT for a NULL pointer, history_len < 1, a non-fp8 type or a margin
 *  that is not finite or outside [-127, 127]; KMUX_ERR_DEVICE. */
KMUX_API kmux_status kmux_fp8_scale_update(kmux_stream *stream, const float *amax_history,
                                           int64_t history_len, kmux_dtype fp8_type, float margin,
                                           float *scale);

/** Records this step's amax (device f32 *amax, e.g. a matmul's amax_d or kmux_amax's output) in
 *  the delayed-scaling history on the stream, with no host round trip: amax_history[step %
 *  history_len] = *amax (device f32, history_len entries, zeros to start). The history is a
 *  ring: kmux_fp8_scale_update takes the max over every entry, so the order of the entries does
 *  not matter (Transformer Engine rolls its history; the max, hence the scale, is the same).
 *  step is the caller's step counter (host, >= 0), so a training step that records, updates
 *  the scale and runs the next fp8 GEMM never synchronises. Returns KMUX_OK;
 *  KMUX_ERR_INVALID_ARGUMENT for a NULL pointer, history_len < 1 or step < 0;
 *  KMUX_ERR_DEVICE. */
KMUX_API kmux_status kmux_fp8_amax_history_record(kmux_stream *stream, float *amax_history,
                                                  int64_t history_len, int64_t step,
                                                  const float *amax);

#ifdef __cplusplus
}
#endif
#endif /* KMUX_H */
