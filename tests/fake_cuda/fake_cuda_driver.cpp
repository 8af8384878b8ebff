/*
 * fake_cuda_driver.cpp - a fake CUDA driver, libcuda.so.1, a TEST TOOL: the CUDA Driver API
 * functions kmux's CUDA plugin resolves (dlopen("libcuda.so.1"), KMUX_CUDA_LIB_PATH), written
 * from NVIDIA's CUDA Driver API documentation with the toolkit's cuda.h signatures, that runs
 * kmux's own kernels (kernels/gpu) through the GPU emulator, like the fake HIP runtime
 * (tests/fake_hip; both share fake_gpu_core.h). It cannot execute SASS or PTX: what it checks of
 * a module is that the fatbin carries code the device would load, and that a function name
 * asked for occurs in the image and is one of the emulated kernels.
 *
 * What it models:
 * - cuInit(0) first: every other call (but cuDriverGetVersion, cuGetErrorName/String) returns
 *   CUDA_ERROR_NOT_INITIALIZED before. $KMUX_FAKE_CUDA_DEVICES devices (default 1; 0: cuInit
 *   answers CUDA_ERROR_NO_DEVICE as the real driver on a machine without a GPU), all of compute
 *   capability $KMUX_FAKE_CUDA_SM (default 90: 9.0), reported as an H100 (132 SMs, 80 GiB);
 *   cuDriverGetVersion answers $KMUX_FAKE_CUDA_VERSION (default 13000).
 * - Contexts: one primary context per device (cuDevicePrimaryCtxRetain, refcounted; the last
 *   release destroys it, the next retain makes it anew), a per-thread stack of current contexts.
 *   Every call needing a context (memory, streams, events, modules, launches) returns
 *   CUDA_ERROR_INVALID_CONTEXT when the thread has none current; a stream, event, module or
 *   function of another context than the current one is CUDA_ERROR_INVALID_HANDLE.
 * - Memory: device memory is host memory, tracked (unified addressing: a CUdeviceptr is the host
 *   address); cuMemcpyAsync / cuMemsetD8Async refuse a range that starts in an allocation and
 *   leaves it (CUDA_ERROR_INVALID_VALUE, a fault on a real GPU); memset needs device memory;
 *   cuMemcpy3DAsync_v2 (host / device / unified sides, no CUarray) checks every row so.
 *   Everything is synchronous; events record a monotonic time.
 * - Stream capture and graphs (cuStreamBeginCapture_v2, cuStreamEndCapture, cuStreamIsCapturing,
 *   cuGraphInstantiateWithFlags, cuGraphLaunch, cuGraphExecDestroy, cuGraphDestroy): a capturing
 *   stream records its copies, memsets, launches, event records and waits as a graph that a
 *   launch replays in order; the calls that capture prohibits are refused and invalidate it
 *   (the model shared with the fake HIP runtime: fake_gpu_core.h).
 * - Modules: cuModuleLoadData takes a fatbin (nvcc --fatbin; magic 0xBA55ED50), a cubin (ELF,
 *   EM_CUDA) or PTX text; CUDA_ERROR_NO_BINARY_FOR_GPU unless it has a cubin for exactly the
 *   device's sm or PTX for an sm <= the device's; CUDA_ERROR_INVALID_IMAGE for anything else.
 *   $KMUX_FAKE_CUDA_LOAD_ERROR (a CUresult number) makes every load fail with it.
 *   cuModuleGetFunction: CUDA_ERROR_NOT_FOUND unless the name is an emulated kernel and occurs in
 *   the image (nvcc keeps cubins uncompressed; their symbol names are plain bytes).
 * - cuLaunchKernel: the documented limits (CUDA_ERROR_INVALID_VALUE: a zero dimension, a block
 *   over 1024 threads or 1024 x 1024 x 64, a grid over 2^31-1 x 65535 x 65535), extra != NULL
 *   and dynamic shared memory (the emulated kernels use static shared memory only) refused too;
 *   the kernel runs in the emulator with 32-lane warps (NVIDIA's width) and shuffled block order
 *   ($KMUX_FAKE_CUDA_SEED, default 1). A fault the emulator detects is CUDA_ERROR_LAUNCH_FAILED
 *   and, as on a real GPU, sticky: every later call on that context returns it, until the
 *   primary context is released by all and made anew.
 * Test hooks (not CUDA functions): kmux_fake_cuda_ctx_depth() (this thread's context stack),
 * kmux_fake_cuda_launches() (successful launches, a replayed graph's included),
 * kmux_fake_cuda_capture_refusals() (calls refused because a capture was open),
 * kmux_fake_cuda_graph_launches() (successful cuGraphLaunch calls), kmux_fake_cuda_stream_waits()
 * (successful cuStreamWaitEvent calls), kmux_fake_cuda_last_fault() (the emulator's reason of the
 * last failed launch), kmux_fake_cuda_fail_call(k, error) (the k-th call from now that needs a
 * context returns `error` instead of running: a vendor call failing in the middle of a plan, for
 * the faults sweep; 0 turns it off) and kmux_fake_cuda_fail_fired() (whether it did).
 */
#include <cuda.h>

#include <atomic>
#include <elf.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "fake_gpu_core.h"

/* cuda.h maps cuEventElapsedTime to cuEventElapsedTime_v2 (CUDA 12.8); the driver exports both
 * names with the same signature. */
#undef cuEventElapsedTime
extern "C" CUresult CUDAAPI cuEventElapsedTime(float *pMilliseconds, CUevent hStart, CUevent hEnd);

#define EXPORT extern "C" __attribute__((visibility("default")))

struct CUctx_st {
    int device;
    int refs = 0;
    CUresult sticky = CUDA_SUCCESS; /* CUDA_ERROR_LAUNCH_FAILED after a fault */
};
struct CUstream_st {
    CUctx_st *ctx;
    fake_gpu::capture *cap; /* cuStreamBeginCapture_v2 .. cuStreamEndCapture */
};
struct CUevent_st {
    CUctx_st *ctx;
    unsigned flags;
    double ms = -1.0;
    fake_gpu::event_capture cap{}; /* recorded in a capture: refusals of wait and sync */
};
struct CUgraph_st {
    CUctx_st *ctx;
    fake_gpu::graph *g;
};
struct CUgraphExec_st {
    CUctx_st *ctx;
    fake_gpu::graph g;
};
struct CUfunc_st {
    const fake_gpu::kernel *k;
    CUmod_st *mod;
};
struct CUmod_st {
    CUctx_st *ctx;
    std::string image; /* a copy, as the driver keeps its own */
    std::map<std::string, CUfunc_st> functions;
};

namespace {

using fake_gpu::env_int;

std::mutex mu; /* contexts, modules */
bool initialized = false;
int devices = 0;
int sm = 90;
/* one per device, made at cuInit, live while refs > 0; kept for the process's life as the real
 * driver keeps them (never destroyed at exit: the contexts stay reachable, not leaked) */
std::vector<CUctx_st *> &primary = *new std::vector<CUctx_st *>;
thread_local std::vector<CUctx_st *> stack;
std::atomic<long> launches{0}, stream_waits{0};
std::string last_fault;
std::atomic<long> fail_countdown{0}; /* kmux_fake_cuda_fail_call */
std::atomic<int> fail_error{CUDA_ERROR_OUT_OF_MEMORY}, fail_fired{0};

/* The calls a context needs: initialized, a current context, no sticky error. */
CUresult need_ctx(CUctx_st **out = nullptr, const char *fn = "") {
    if (!initialized) return CUDA_ERROR_NOT_INITIALIZED;
    if (fake_gpu::fail_call("libcuda", fn)) return CUDA_ERROR_UNKNOWN;
    if (stack.empty() || stack.back()->refs <= 0) return CUDA_ERROR_INVALID_CONTEXT;
    if (stack.back()->sticky != CUDA_SUCCESS) return stack.back()->sticky;
    if (fail_countdown.load() > 0 && fail_countdown.fetch_sub(1) == 1) {
        fail_fired = 1;
        return (CUresult)fail_error.load();
    }
    if (out) *out = stack.back();
    return CUDA_SUCCESS;
}
#define NEED_CTX(c)                                                                                \
    CUctx_st *c = nullptr;                                                                         \
    do {                                                                                           \
        CUresult need_ = need_ctx(&c, __func__);                                                   \
        if (need_ != CUDA_SUCCESS) return need_;                                                   \
    } while (0)

/* A stream argument: NULL, CU_STREAM_LEGACY or CU_STREAM_PER_THREAD (the current context's), or
 * one of the current context. */
bool stream_ok(CUstream s, CUctx_st *c) {
    return s == nullptr || s == CU_STREAM_LEGACY || s == CU_STREAM_PER_THREAD || s->ctx == c;
}

bool valid_device(CUdevice d) {
    return d >= 0 && d < devices;
}

const char *device_name() {
    switch (sm) {
    case 80:
        return "NVIDIA A100-SXM4-80GB (kmux fake CUDA driver)";
    case 89:
        return "NVIDIA L40S (kmux fake CUDA driver)";
    case 90:
        return "NVIDIA H100 80GB HBM3 (kmux fake CUDA driver)";
    case 100:
        return "NVIDIA B200 (kmux fake CUDA driver)";
    default:
        return "NVIDIA GPU (kmux fake CUDA driver)";
    }
}

const size_t kTotalMem = (size_t)80 << 30;

/* A device range of a copy or memset: a pointer that starts in an allocation must stay in it. */
bool range_ok(const void *p, size_t bytes) {
    if (fake_gpu::in_device(p)) return fake_gpu::is_device(p, bytes);
    if (fake_gpu::in_host(p)) return fake_gpu::is_host(p, bytes);
    return true; /* pageable host memory */
}

/* ---- stream capture: the core's model (fake_gpu_core.h) on CUDA's streams ---- */

bool legacy(CUstream s) {
    return s == nullptr || s == CU_STREAM_LEGACY;
}
fake_gpu::capture *cap_of(CUstream s) {
    return legacy(s) || s == CU_STREAM_PER_THREAD ? nullptr : s->cap;
}
bool is_capturing(CUstream s) {
    return fake_gpu::capturing(cap_of(s));
}
/* A stream operation (its arguments checked): run now, or recorded by a capturing stream. */
CUresult submit(CUstream s, std::function<CUresult()> op) {
    return (CUresult)fake_gpu::submit(cap_of(s), legacy(s), [op]() { return (int)op(); });
}
CUresult capture_unsafe() {
    return (CUresult)fake_gpu::capture_unsafe();
}

/* What the image is and whether the device loads it. size: the image's bytes. */
CUresult check_image(const unsigned char *p, size_t *size) {
    uint32_t magic;
    memcpy(&magic, p, 4);
    if (magic == 0xBA55ED50u) { /* fatbin: u32 magic, u16 version, u16 header size, u64 size */
        uint16_t hs;
        uint64_t fat;
        memcpy(&hs, p + 6, 2);
        memcpy(&fat, p + 8, 8);
        if (hs < 16 || fat > ((uint64_t)1 << 34)) return CUDA_ERROR_INVALID_IMAGE;
        *size = hs + (size_t)fat;
        bool loads = false;
        /* entries: u16 kind (1 PTX, 2 ELF), u16, u32 header size, u64 payload size, ..., u32 sm
         * at offset 28 */
        for (size_t at = hs; at + 32 <= *size;) {
            uint16_t kind;
            uint32_t ehs, arch;
            uint64_t bytes;
            memcpy(&kind, p + at, 2);
            memcpy(&ehs, p + at + 4, 4);
            memcpy(&bytes, p + at + 8, 8);
            memcpy(&arch, p + at + 28, 4);
            if (ehs < 32 || bytes > fat) return CUDA_ERROR_INVALID_IMAGE;
            if ((kind == 2 && (int)arch == sm) || (kind == 1 && (int)arch <= sm)) loads = true;
            at += ehs + bytes;
        }
        return loads ? CUDA_SUCCESS : CUDA_ERROR_NO_BINARY_FOR_GPU;
    }
    if (memcmp(p, ELFMAG, SELFMAG) == 0) { /* a cubin */
        Elf64_Ehdr eh;
        memcpy(&eh, p, sizeof eh);
        if (eh.e_ident[EI_CLASS] != ELFCLASS64 || eh.e_machine != 190 /* EM_CUDA */)
            return CUDA_ERROR_INVALID_IMAGE;
        *size = (size_t)eh.e_shoff + (size_t)eh.e_shnum * eh.e_shentsize;
        /* the sm: e_flags bits 8-15 from ELF ABI version 8 (CUDA 12.8), bits 0-7 before */
        int arch = eh.e_ident[EI_ABIVERSION] >= 8 ? (int)((eh.e_flags >> 8) & 0xff)
                                                  : (int)(eh.e_flags & 0xff);
        return arch == sm ? CUDA_SUCCESS : CUDA_ERROR_NO_BINARY_FOR_GPU;
    }
    /* PTX text, NUL-terminated: ".target sm_NN" */
    const char *t = reinterpret_cast<const char *>(p);
    size_t n = strnlen(t, (size_t)1 << 28);
    const char *target = static_cast<const char *>(memmem(t, n, ".target sm_", 11));
    if (!memmem(t, n, ".version", 8) || !target) return CUDA_ERROR_INVALID_IMAGE;
    *size = n + 1;
    return atoi(target + 11) <= sm ? CUDA_SUCCESS : CUDA_ERROR_NO_BINARY_FOR_GPU;
}

} // namespace

/* ---- initialization, version, errors ---- */

EXPORT CUresult CUDAAPI cuInit(unsigned int Flags) {
    if (Flags != 0) return CUDA_ERROR_INVALID_VALUE;
    std::lock_guard<std::mutex> g(mu);
    if (initialized) return CUDA_SUCCESS;
    int n = env_int("KMUX_FAKE_CUDA_DEVICES", 1);
    if (n <= 0) return CUDA_ERROR_NO_DEVICE;
    devices = n;
    sm = env_int("KMUX_FAKE_CUDA_SM", 90);
    for (int d = 0; d < n; d++)
        primary.push_back(new CUctx_st{d});
    initialized = true;
    return CUDA_SUCCESS;
}

EXPORT CUresult CUDAAPI cuDriverGetVersion(int *driverVersion) {
    if (!driverVersion) return CUDA_ERROR_INVALID_VALUE;
    *driverVersion = env_int("KMUX_FAKE_CUDA_VERSION", 13000);
    return CUDA_SUCCESS;
}

namespace {
struct error_text {
    CUresult e;
    const char *name, *text;
};
/* NVIDIA's names and descriptions (cuGetErrorString) of the codes the fake returns */
const error_text errors[] = {
    {CUDA_SUCCESS, "CUDA_SUCCESS", "no error"},
    {CUDA_ERROR_INVALID_VALUE, "CUDA_ERROR_INVALID_VALUE", "invalid argument"},
    {CUDA_ERROR_OUT_OF_MEMORY, "CUDA_ERROR_OUT_OF_MEMORY", "out of memory"},
    {CUDA_ERROR_UNKNOWN, "CUDA_ERROR_UNKNOWN", "unknown error"}, /* KMUX_FAKE_FAIL_CALL */
    {CUDA_ERROR_NOT_INITIALIZED, "CUDA_ERROR_NOT_INITIALIZED", "initialization error"},
    {CUDA_ERROR_NO_DEVICE, "CUDA_ERROR_NO_DEVICE", "no CUDA-capable device is detected"},
    {CUDA_ERROR_INVALID_DEVICE, "CUDA_ERROR_INVALID_DEVICE", "invalid device ordinal"},
    {CUDA_ERROR_INVALID_IMAGE, "CUDA_ERROR_INVALID_IMAGE", "device kernel image is invalid"},
    {CUDA_ERROR_INVALID_CONTEXT, "CUDA_ERROR_INVALID_CONTEXT", "invalid device context"},
    {CUDA_ERROR_NO_BINARY_FOR_GPU, "CUDA_ERROR_NO_BINARY_FOR_GPU",
     "no kernel image is available for execution on the device"},
    {CUDA_ERROR_INVALID_HANDLE, "CUDA_ERROR_INVALID_HANDLE", "invalid resource handle"},
    {CUDA_ERROR_NOT_FOUND, "CUDA_ERROR_NOT_FOUND", "named symbol not found"},
    {CUDA_ERROR_LAUNCH_FAILED, "CUDA_ERROR_LAUNCH_FAILED", "unspecified launch failure"},
    {CUDA_ERROR_NOT_SUPPORTED, "CUDA_ERROR_NOT_SUPPORTED", "operation not supported"},
    {CUDA_ERROR_ILLEGAL_STATE, "CUDA_ERROR_ILLEGAL_STATE",
     "the operation cannot be performed in the present state"},
    {CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED, "CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED",
     "operation not permitted when stream is capturing"},
    {CUDA_ERROR_STREAM_CAPTURE_INVALIDATED, "CUDA_ERROR_STREAM_CAPTURE_INVALIDATED",
     "operation failed due to a previous error during capture"},
    {CUDA_ERROR_STREAM_CAPTURE_IMPLICIT, "CUDA_ERROR_STREAM_CAPTURE_IMPLICIT",
     "operation would make the legacy stream depend on a capturing blocking stream"},
    {CUDA_ERROR_CAPTURED_EVENT, "CUDA_ERROR_CAPTURED_EVENT",
     "operation not permitted on an event last recorded in a capturing stream"},
    {CUDA_ERROR_STREAM_CAPTURE_WRONG_THREAD, "CUDA_ERROR_STREAM_CAPTURE_WRONG_THREAD",
     "attempt to terminate a thread-local capture sequence from another thread"},
};
const error_text *find_error(CUresult e) {
    for (const error_text &t : errors)
        if (t.e == e) return &t;
    return nullptr;
}
} // namespace

EXPORT CUresult CUDAAPI cuGetErrorName(CUresult error, const char **pStr) {
    if (!pStr) return CUDA_ERROR_INVALID_VALUE;
    const error_text *t = find_error(error);
    *pStr = t ? t->name : nullptr;
    return t ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

EXPORT CUresult CUDAAPI cuGetErrorString(CUresult error, const char **pStr) {
    if (!pStr) return CUDA_ERROR_INVALID_VALUE;
    const error_text *t = find_error(error);
    *pStr = t ? t->text : nullptr;
    return t ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

/* ---- devices ---- */

EXPORT CUresult CUDAAPI cuDeviceGetCount(int *count) {
    if (!initialized) return CUDA_ERROR_NOT_INITIALIZED;
    if (!count) return CUDA_ERROR_INVALID_VALUE;
    *count = devices;
    return CUDA_SUCCESS;
}

EXPORT CUresult CUDAAPI cuDeviceGet(CUdevice *device, int ordinal) {
    if (!initialized) return CUDA_ERROR_NOT_INITIALIZED;
    if (!device) return CUDA_ERROR_INVALID_VALUE;
    if (!valid_device(ordinal)) return CUDA_ERROR_INVALID_DEVICE;
    *device = ordinal;
    return CUDA_SUCCESS;
}

EXPORT CUresult CUDAAPI cuDeviceGetName(char *name, int len, CUdevice dev) {
    if (!initialized) return CUDA_ERROR_NOT_INITIALIZED;
    if (!name || len <= 0) return CUDA_ERROR_INVALID_VALUE;
    if (!valid_device(dev)) return CUDA_ERROR_INVALID_DEVICE;
    snprintf(name, (size_t)len, "%s", device_name());
    return CUDA_SUCCESS;
}

EXPORT CUresult CUDAAPI cuDeviceTotalMem_v2(size_t *bytes, CUdevice dev) {
    if (!initialized) return CUDA_ERROR_NOT_INITIALIZED;
    if (!bytes) return CUDA_ERROR_INVALID_VALUE;
    if (!valid_device(dev)) return CUDA_ERROR_INVALID_DEVICE;
    *bytes = kTotalMem;
    return CUDA_SUCCESS;
}

EXPORT CUresult CUDAAPI cuDeviceGetAttribute(int *pi, CUdevice_attribute attrib, CUdevice dev) {
    if (!initialized) return CUDA_ERROR_NOT_INITIALIZED;
    if (!pi) return CUDA_ERROR_INVALID_VALUE;
    if (!valid_device(dev)) return CUDA_ERROR_INVALID_DEVICE;
    int v;
    switch (attrib) {
    case CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK:
    case CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X:
    case CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Y:
        v = 1024;
        break;
    case CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Z:
        v = 64;
        break;
    case CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X:
        v = 2147483647;
        break;
    case CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y:
    case CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Z:
        v = 65535;
        break;
    case CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK:
        v = 49152;
        break;
    case CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN:
        v = 232448;
        break;
    case CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR:
        v = 233472;
        break;
    case CU_DEVICE_ATTRIBUTE_TOTAL_CONSTANT_MEMORY:
        v = 65536;
        break;
    case CU_DEVICE_ATTRIBUTE_WARP_SIZE:
        v = 32;
        break;
    case CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_BLOCK:
    case CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_MULTIPROCESSOR:
        v = 65536;
        break;
    case CU_DEVICE_ATTRIBUTE_CLOCK_RATE:
        v = 1980000; /* kHz */
        break;
    case CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT:
        v = 132;
        break;
    case CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR:
        v = 2048;
        break;
    case CU_DEVICE_ATTRIBUTE_INTEGRATED:
    case CU_DEVICE_ATTRIBUTE_TCC_DRIVER:
    case CU_DEVICE_ATTRIBUTE_COMPUTE_MODE:
    case CU_DEVICE_ATTRIBUTE_PCI_DOMAIN_ID:
    case CU_DEVICE_ATTRIBUTE_PCI_DEVICE_ID:
        v = 0;
        break;
    case CU_DEVICE_ATTRIBUTE_PCI_BUS_ID:
        v = 0x10 + dev;
        break;
    case CU_DEVICE_ATTRIBUTE_CONCURRENT_KERNELS:
    case CU_DEVICE_ATTRIBUTE_ECC_ENABLED:
    case CU_DEVICE_ATTRIBUTE_UNIFIED_ADDRESSING:
    case CU_DEVICE_ATTRIBUTE_MEMORY_POOLS_SUPPORTED:
        v = 1;
        break;
    case CU_DEVICE_ATTRIBUTE_ASYNC_ENGINE_COUNT:
        v = 3;
        break;
    case CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE:
        v = 2619000; /* kHz */
        break;
    case CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH:
        v = 5120; /* bits */
        break;
    case CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE:
        v = 50 << 20;
        break;
    case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR:
        v = sm / 10;
        break;
    case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR:
        v = sm % 10;
        break;
    default:
        return CUDA_ERROR_INVALID_VALUE;
    }
    *pi = v;
    return CUDA_SUCCESS;
}

EXPORT CUresult CUDAAPI cuDeviceGetPCIBusId(char *pciBusId, int len, CUdevice dev) {
    if (!initialized) return CUDA_ERROR_NOT_INITIALIZED;
    if (!pciBusId || len <= 0) return CUDA_ERROR_INVALID_VALUE;
    if (!valid_device(dev)) return CUDA_ERROR_INVALID_DEVICE;
    snprintf(pciBusId, (size_t)len, "00000000:%02X:00.0", 0x10 + dev);
    return CUDA_SUCCESS;
}

/* ---- contexts ---- */

EXPORT CUresult CUDAAPI cuDevicePrimaryCtxRetain(CUcontext *pctx, CUdevice dev) {
    if (!initialized) return CUDA_ERROR_NOT_INITIALIZED;
    if (!pctx) return CUDA_ERROR_INVALID_VALUE;
    if (!valid_device(dev)) return CUDA_ERROR_INVALID_DEVICE;
    std::lock_guard<std::mutex> g(mu);
    CUctx_st *c = primary[(size_t)dev];
    if (c->refs++ == 0) c->sticky = CUDA_SUCCESS; /* made anew */
    *pctx = c;
    return CUDA_SUCCESS;
}

EXPORT CUresult CUDAAPI cuDevicePrimaryCtxRelease_v2(CUdevice dev) {
    if (!initialized) return CUDA_ERROR_NOT_INITIALIZED;
    if (!valid_device(dev)) return CUDA_ERROR_INVALID_DEVICE;
    std::lock_guard<std::mutex> g(mu);
    CUctx_st *c = primary[(size_t)dev];
    if (c->refs <= 0) return CUDA_ERROR_INVALID_CONTEXT; /* not retained */
    c->refs--;
    return CUDA_SUCCESS;
}

EXPORT CUresult CUDAAPI cuCtxPushCurrent_v2(CUcontext ctx) {
    if (!initialized) return CUDA_ERROR_NOT_INITIALIZED;
    bool known = false; /* one of the primary contexts, and retained */
    for (CUctx_st *p : primary)
        known |= p == ctx;
    if (!known || ctx->refs <= 0) return CUDA_ERROR_INVALID_CONTEXT;
    stack.push_back(ctx);
    return CUDA_SUCCESS;
}

EXPORT CUresult CUDAAPI cuCtxPopCurrent_v2(CUcontext *pctx) {
    if (!initialized) return CUDA_ERROR_NOT_INITIALIZED;
    if (stack.empty()) return CUDA_ERROR_INVALID_CONTEXT;
    if (pctx) *pctx = stack.back();
    stack.pop_back();
    return CUDA_SUCCESS;
}

EXPORT CUresult CUDAAPI cuCtxGetCurrent(CUcontext *pctx) {
    if (!initialized) return CUDA_ERROR_NOT_INITIALIZED;
    if (!pctx) return CUDA_ERROR_INVALID_VALUE;
    *pctx = stack.empty() ? nullptr : stack.back();
    return CUDA_SUCCESS;
}

EXPORT CUresult CUDAAPI cuCtxGetDevice(CUdevice *device) {
    if (!initialized) return CUDA_ERROR_NOT_INITIALIZED;
    if (!device) return CUDA_ERROR_INVALID_VALUE;
    if (stack.empty() || stack.back()->refs <= 0) return CUDA_ERROR_INVALID_CONTEXT;
    *device = stack.back()->device;
    return CUDA_SUCCESS;
}

/* ---- memory ---- */

EXPORT CUresult CUDAAPI cuMemAlloc_v2(CUdeviceptr *dptr, size_t bytesize) {
    NEED_CTX(c);
    if (!dptr || bytesize == 0) return CUDA_ERROR_INVALID_VALUE;
    CUresult u = capture_unsafe();
    if (u != CUDA_SUCCESS) return u;
    if (bytesize > kTotalMem - fake_gpu::device_bytes()) return CUDA_ERROR_OUT_OF_MEMORY;
    void *p = fake_gpu::device_alloc(bytesize, 256);
    if (!p) return CUDA_ERROR_OUT_OF_MEMORY;
    *dptr = (CUdeviceptr)(uintptr_t)p;
    return CUDA_SUCCESS;
}

EXPORT CUresult CUDAAPI cuMemFree_v2(CUdeviceptr dptr) {
    NEED_CTX(c);
    if (dptr == 0) return CUDA_SUCCESS;
    CUresult u = capture_unsafe();
    if (u != CUDA_SUCCESS) return u;
    return fake_gpu::device_free(reinterpret_cast<void *>(dptr)) ? CUDA_SUCCESS
                                                                 : CUDA_ERROR_INVALID_VALUE;
}

EXPORT CUresult CUDAAPI cuMemAllocAsync(CUdeviceptr *dptr, size_t bytesize, CUstream hStream) {
    NEED_CTX(c);
    if (!stream_ok(hStream, c)) return CUDA_ERROR_INVALID_HANDLE;
    return cuMemAlloc_v2(dptr, bytesize);
}

EXPORT CUresult CUDAAPI cuMemFreeAsync(CUdeviceptr dptr, CUstream hStream) {
    NEED_CTX(c);
    if (!stream_ok(hStream, c)) return CUDA_ERROR_INVALID_HANDLE;
    if (dptr == 0) return CUDA_ERROR_INVALID_VALUE;
    return cuMemFree_v2(dptr);
}

EXPORT CUresult CUDAAPI cuMemHostAlloc(void **pp, size_t bytesize, unsigned int Flags) {
    NEED_CTX(c);
    const unsigned known =
        CU_MEMHOSTALLOC_PORTABLE | CU_MEMHOSTALLOC_DEVICEMAP | CU_MEMHOSTALLOC_WRITECOMBINED;
    if (!pp || bytesize == 0 || (Flags & ~known)) return CUDA_ERROR_INVALID_VALUE;
    CUresult u = capture_unsafe();
    if (u != CUDA_SUCCESS) return u;
    void *p = fake_gpu::host_alloc(bytesize, 4096);
    if (!p) return CUDA_ERROR_OUT_OF_MEMORY;
    *pp = p;
    return CUDA_SUCCESS;
}

EXPORT CUresult CUDAAPI cuMemFreeHost(void *p) {
    NEED_CTX(c);
    CUresult u = capture_unsafe();
    if (u != CUDA_SUCCESS) return u;
    return fake_gpu::host_free(p) ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

EXPORT CUresult CUDAAPI cuMemcpyAsync(CUdeviceptr dst, CUdeviceptr src, size_t ByteCount,
                                      CUstream hStream) {
    NEED_CTX(c);
    if (!stream_ok(hStream, c)) return CUDA_ERROR_INVALID_HANDLE;
    if (ByteCount == 0) return CUDA_SUCCESS;
    void *d = reinterpret_cast<void *>(dst);
    const void *s = reinterpret_cast<const void *>(src);
    if (!d || !s || !range_ok(d, ByteCount) || !range_ok(s, ByteCount))
        return CUDA_ERROR_INVALID_VALUE;
    return submit(hStream, [=]() {
        memmove(d, s, ByteCount);
        return CUDA_SUCCESS;
    });
}

EXPORT CUresult CUDAAPI cuMemsetD8Async(CUdeviceptr dstDevice, unsigned char uc, size_t N,
                                        CUstream hStream) {
    NEED_CTX(c);
    if (!stream_ok(hStream, c)) return CUDA_ERROR_INVALID_HANDLE;
    void *d = reinterpret_cast<void *>(dstDevice);
    if (!fake_gpu::in_device(d) || !fake_gpu::is_device(d, N)) return CUDA_ERROR_INVALID_VALUE;
    return submit(hStream, [=]() {
        memset(d, uc, N);
        return CUDA_SUCCESS;
    });
}

namespace {
/* One side of a 3D copy: its base address (host or device; CUarray is not modelled). */
CUresult copy3d_base(CUmemorytype type, const void *host, CUdeviceptr dev, CUarray array,
                     const char **base) {
    switch (type) {
    case CU_MEMORYTYPE_HOST:
        *base = static_cast<const char *>(host);
        break;
    case CU_MEMORYTYPE_DEVICE:
    case CU_MEMORYTYPE_UNIFIED:
        *base = reinterpret_cast<const char *>(dev);
        break;
    case CU_MEMORYTYPE_ARRAY:
        (void)array;
        return CUDA_ERROR_NOT_SUPPORTED; /* the plugin copies no arrays */
    default:
        return CUDA_ERROR_INVALID_VALUE;
    }
    return *base ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}
/* A row of one side: device memory must be one allocation's; host or unified, as range_ok. */
bool side_ok(CUmemorytype type, const void *p, size_t bytes) {
    return type == CU_MEMORYTYPE_DEVICE ? fake_gpu::is_device(p, bytes) : range_ok(p, bytes);
}
} // namespace

/* Strided copy of Depth x Height rows of WidthInBytes (the pitches and heights of each side as
 * documented: srcHeight may be 0 when Depth == 1); every row of a device side must lie in one
 * allocation. */
EXPORT CUresult CUDAAPI cuMemcpy3DAsync_v2(const CUDA_MEMCPY3D *p, CUstream hStream) {
    NEED_CTX(c);
    if (!stream_ok(hStream, c)) return CUDA_ERROR_INVALID_HANDLE;
    if (!p || p->reserved0 || p->reserved1 || p->srcLOD || p->dstLOD)
        return CUDA_ERROR_INVALID_VALUE;
    if (p->WidthInBytes == 0 || p->Height == 0 || p->Depth == 0) return CUDA_SUCCESS;
    const char *src, *dst;
    CUresult e = copy3d_base(p->srcMemoryType, p->srcHost, p->srcDevice, p->srcArray, &src);
    if (e == CUDA_SUCCESS)
        e = copy3d_base(p->dstMemoryType, p->dstHost, p->dstDevice, p->dstArray, &dst);
    if (e != CUDA_SUCCESS) return e;
    if (p->srcPitch < p->srcXInBytes + p->WidthInBytes ||
        p->dstPitch < p->dstXInBytes + p->WidthInBytes)
        return CUDA_ERROR_INVALID_VALUE;
    if (p->Depth > 1 && (p->srcHeight < p->srcY + p->Height || p->dstHeight < p->dstY + p->Height))
        return CUDA_ERROR_INVALID_VALUE;
    const CUDA_MEMCPY3D q = *p; /* a captured copy keeps its parameters */
    auto rows = [q, src, dst](bool copy) {
        for (size_t z = 0; z < q.Depth; z++)
            for (size_t y = 0; y < q.Height; y++) {
                const char *s =
                    src + ((q.srcZ + z) * q.srcHeight + q.srcY + y) * q.srcPitch + q.srcXInBytes;
                char *d = const_cast<char *>(dst) +
                          ((q.dstZ + z) * q.dstHeight + q.dstY + y) * q.dstPitch + q.dstXInBytes;
                if (copy)
                    memmove(d, s, q.WidthInBytes);
                else if (!side_ok(q.srcMemoryType, s, q.WidthInBytes) ||
                         !side_ok(q.dstMemoryType, d, q.WidthInBytes))
                    return CUDA_ERROR_INVALID_VALUE;
            }
        return CUDA_SUCCESS;
    };
    e = rows(false); /* every row checked before any is written */
    if (e != CUDA_SUCCESS) return e;
    return submit(hStream, [rows]() { return rows(true); });
}

EXPORT CUresult CUDAAPI cuMemGetInfo_v2(size_t *free, size_t *total) {
    NEED_CTX(c);
    if (!free || !total) return CUDA_ERROR_INVALID_VALUE;
    size_t used = fake_gpu::device_bytes();
    *total = kTotalMem;
    *free = used < kTotalMem ? kTotalMem - used : 0;
    return CUDA_SUCCESS;
}

/* ---- streams and events (all work is done when a call returns) ---- */

EXPORT CUresult CUDAAPI cuStreamCreate(CUstream *phStream, unsigned int Flags) {
    NEED_CTX(c);
    if (!phStream || (Flags & ~(unsigned)CU_STREAM_NON_BLOCKING)) return CUDA_ERROR_INVALID_VALUE;
    *phStream = new CUstream_st{c, fake_gpu::capture_new()};
    return CUDA_SUCCESS;
}

EXPORT CUresult CUDAAPI cuStreamDestroy_v2(CUstream hStream) {
    NEED_CTX(c);
    if (!hStream || hStream == CU_STREAM_LEGACY || hStream == CU_STREAM_PER_THREAD ||
        hStream->ctx != c)
        return CUDA_ERROR_INVALID_HANDLE;
    fake_gpu::capture_delete(hStream->cap); /* its capture ends with it */
    delete hStream;
    return CUDA_SUCCESS;
}

EXPORT CUresult CUDAAPI cuStreamSynchronize(CUstream hStream) {
    NEED_CTX(c);
    if (!stream_ok(hStream, c)) return CUDA_ERROR_INVALID_HANDLE;
    return (CUresult)fake_gpu::capture_sync(cap_of(hStream), legacy(hStream));
}

/* The event may be of another context (a cross-device wait); flags: CU_EVENT_WAIT_DEFAULT or
 * CU_EVENT_WAIT_EXTERNAL. Counted, so that tests can tell a device-side wait from a host-side
 * one. */
EXPORT CUresult CUDAAPI cuStreamWaitEvent(CUstream hStream, CUevent hEvent, unsigned int Flags) {
    NEED_CTX(c);
    if (!stream_ok(hStream, c) || !hEvent) return CUDA_ERROR_INVALID_HANDLE;
    if (Flags & ~(unsigned)CU_EVENT_WAIT_EXTERNAL) return CUDA_ERROR_INVALID_VALUE;
    if (int r = hEvent->cap.wait(cap_of(hStream))) return (CUresult)r;
    CUresult e = submit(hStream, []() { return CUDA_SUCCESS; }); /* in-order: nothing to wait */
    if (e == CUDA_SUCCESS) stream_waits++;
    return e;
}

EXPORT CUresult CUDAAPI cuEventCreate(CUevent *phEvent, unsigned int Flags) {
    NEED_CTX(c);
    const unsigned known = CU_EVENT_BLOCKING_SYNC | CU_EVENT_DISABLE_TIMING | CU_EVENT_INTERPROCESS;
    if (!phEvent || (Flags & ~known)) return CUDA_ERROR_INVALID_VALUE;
    /* CU_EVENT_INTERPROCESS needs CU_EVENT_DISABLE_TIMING */
    if ((Flags & CU_EVENT_INTERPROCESS) && !(Flags & CU_EVENT_DISABLE_TIMING))
        return CUDA_ERROR_INVALID_VALUE;
    *phEvent = new CUevent_st{c, Flags};
    return CUDA_SUCCESS;
}

EXPORT CUresult CUDAAPI cuEventDestroy_v2(CUevent hEvent) {
    NEED_CTX(c);
    if (!hEvent) return CUDA_ERROR_INVALID_HANDLE;
    delete hEvent;
    return CUDA_SUCCESS;
}

/* The event and the stream must be of one context (CUDA_ERROR_INVALID_HANDLE otherwise). */
EXPORT CUresult CUDAAPI cuEventRecord(CUevent hEvent, CUstream hStream) {
    NEED_CTX(c);
    if (!hEvent || hEvent->ctx != c || !stream_ok(hStream, c)) return CUDA_ERROR_INVALID_HANDLE;
    hEvent->cap.record(cap_of(hStream));
    return submit(hStream, [hEvent]() {
        hEvent->ms = fake_gpu::now_ms();
        return CUDA_SUCCESS;
    });
}

EXPORT CUresult CUDAAPI cuEventSynchronize(CUevent hEvent) {
    NEED_CTX(c);
    if (!hEvent) return CUDA_ERROR_INVALID_HANDLE;
    return (CUresult)hEvent->cap.synchronize();
}

/* An event not recorded, or created with CU_EVENT_DISABLE_TIMING: CUDA_ERROR_INVALID_HANDLE. */
EXPORT CUresult CUDAAPI cuEventElapsedTime_v2(float *pMilliseconds, CUevent hStart, CUevent hEnd) {
    NEED_CTX(c);
    if (!pMilliseconds) return CUDA_ERROR_INVALID_VALUE;
    if (!hStart || !hEnd || hStart->ms < 0 || hEnd->ms < 0 ||
        ((hStart->flags | hEnd->flags) & CU_EVENT_DISABLE_TIMING))
        return CUDA_ERROR_INVALID_HANDLE;
    *pMilliseconds = (float)(hEnd->ms - hStart->ms);
    return CUDA_SUCCESS;
}

EXPORT CUresult CUDAAPI cuEventElapsedTime(float *pMilliseconds, CUevent hStart, CUevent hEnd) {
    return cuEventElapsedTime_v2(pMilliseconds, hStart, hEnd);
}

/* ---- modules and launches ---- */

EXPORT CUresult CUDAAPI cuModuleLoadData(CUmodule *module, const void *image) {
    NEED_CTX(c);
    if (!module || !image) return CUDA_ERROR_INVALID_VALUE;
    int forced = env_int("KMUX_FAKE_CUDA_LOAD_ERROR", 0);
    if (forced) return (CUresult)forced;
    size_t size = 0;
    CUresult e = check_image(static_cast<const unsigned char *>(image), &size);
    if (e != CUDA_SUCCESS) return e;
    CUmod_st *m = new CUmod_st;
    m->ctx = c;
    m->image.assign(static_cast<const char *>(image), size);
    *module = m;
    return CUDA_SUCCESS;
}

EXPORT CUresult CUDAAPI cuModuleUnload(CUmodule hmod) {
    NEED_CTX(c);
    if (!hmod || hmod->ctx != c) return CUDA_ERROR_INVALID_HANDLE;
    delete hmod;
    return CUDA_SUCCESS;
}

EXPORT CUresult CUDAAPI cuModuleGetFunction(CUfunction *hfunc, CUmodule hmod, const char *name) {
    NEED_CTX(c);
    if (!hfunc || !name) return CUDA_ERROR_INVALID_VALUE;
    if (!hmod || hmod->ctx != c) return CUDA_ERROR_INVALID_HANDLE;
    std::lock_guard<std::mutex> g(mu);
    auto it = hmod->functions.find(name);
    if (it == hmod->functions.end()) {
        const fake_gpu::kernel *k = fake_gpu::find_kernel(name);
        size_t n = strlen(name);
        /* the symbol's name with its terminating NUL, as in the cubin's string table */
        if (!k || !memmem(hmod->image.data(), hmod->image.size(), name, n + 1))
            return CUDA_ERROR_NOT_FOUND;
        it = hmod->functions.emplace(name, CUfunc_st{k, hmod}).first;
    }
    *hfunc = &it->second;
    return CUDA_SUCCESS;
}

EXPORT CUresult CUDAAPI cuLaunchKernel(CUfunction f, unsigned int gridDimX, unsigned int gridDimY,
                                       unsigned int gridDimZ, unsigned int blockDimX,
                                       unsigned int blockDimY, unsigned int blockDimZ,
                                       unsigned int sharedMemBytes, CUstream hStream,
                                       void **kernelParams, void **extra) {
    NEED_CTX(c);
    if (!f || f->mod->ctx != c || !stream_ok(hStream, c)) return CUDA_ERROR_INVALID_HANDLE;
    if (extra || sharedMemBytes != 0) return CUDA_ERROR_INVALID_VALUE;
    if (gridDimX == 0 || gridDimY == 0 || gridDimZ == 0 || blockDimX == 0 || blockDimY == 0 ||
        blockDimZ == 0)
        return CUDA_ERROR_INVALID_VALUE;
    if (gridDimX > 2147483647u || gridDimY > 65535u || gridDimZ > 65535u)
        return CUDA_ERROR_INVALID_VALUE;
    if (blockDimX > 1024u || blockDimY > 1024u || blockDimZ > 64u ||
        (uint64_t)blockDimX * blockDimY * blockDimZ > 1024u)
        return CUDA_ERROR_INVALID_VALUE;
    if (f->k->params > 0 && !kernelParams) return CUDA_ERROR_INVALID_VALUE;
    const dim3 grid(gridDimX, gridDimY, gridDimZ), block(blockDimX, blockDimY, blockDimZ);
    fake_gpu::bound run = f->k->bind(kernelParams); /* the arguments' values, now */
    return submit(hStream, [c, f, grid, block, run]() {
        std::string why;
        int e = fake_gpu::launch_bound(run, grid, block, 32,
                                       (uint64_t)env_int("KMUX_FAKE_CUDA_SEED", 1), &why);
        if (e != 0) {
            std::lock_guard<std::mutex> g(mu);
            c->sticky = CUDA_ERROR_LAUNCH_FAILED;
            last_fault = f->k->name + ": " + why;
            return CUDA_ERROR_LAUNCH_FAILED;
        }
        launches++;
        return CUDA_SUCCESS;
    });
}

/* ---- stream capture and graphs (see "stream capture" above) ---- */

EXPORT CUresult CUDAAPI cuStreamBeginCapture_v2(CUstream hStream, CUstreamCaptureMode mode) {
    NEED_CTX(c);
    if (!stream_ok(hStream, c)) return CUDA_ERROR_INVALID_HANDLE;
    if (legacy(hStream)) return CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;
    if (hStream == CU_STREAM_PER_THREAD) return CUDA_ERROR_NOT_SUPPORTED; /* not modelled */
    return (CUresult)fake_gpu::capture_begin(hStream->cap, (int)mode);
}

EXPORT CUresult CUDAAPI cuStreamEndCapture(CUstream hStream, CUgraph *phGraph) {
    NEED_CTX(c);
    if (!phGraph) return CUDA_ERROR_INVALID_VALUE;
    if (!stream_ok(hStream, c)) return CUDA_ERROR_INVALID_HANDLE;
    *phGraph = nullptr;
    if (!is_capturing(hStream)) return CUDA_ERROR_ILLEGAL_STATE;
    fake_gpu::graph *g = nullptr;
    CUresult e = (CUresult)fake_gpu::capture_end(hStream->cap, &g);
    if (e == CUDA_SUCCESS) *phGraph = new CUgraph_st{c, g};
    return e;
}

EXPORT CUresult CUDAAPI cuStreamIsCapturing(CUstream hStream,
                                            CUstreamCaptureStatus *captureStatus) {
    NEED_CTX(c);
    if (!captureStatus) return CUDA_ERROR_INVALID_VALUE;
    if (!stream_ok(hStream, c)) return CUDA_ERROR_INVALID_HANDLE;
    *captureStatus = !is_capturing(hStream) ? CU_STREAM_CAPTURE_STATUS_NONE
                     : fake_gpu::capture_invalidated(cap_of(hStream))
                         ? CU_STREAM_CAPTURE_STATUS_INVALIDATED
                         : CU_STREAM_CAPTURE_STATUS_ACTIVE;
    return CUDA_SUCCESS;
}

/* flags other than 0 (auto-free on launch, upload, device launch, priority) are not modelled. */
EXPORT CUresult CUDAAPI cuGraphInstantiateWithFlags(CUgraphExec *phGraphExec, CUgraph hGraph,
                                                    unsigned long long flags) {
    NEED_CTX(c);
    if (!phGraphExec || !hGraph) return CUDA_ERROR_INVALID_VALUE;
    if (flags != 0) return CUDA_ERROR_NOT_SUPPORTED;
    *phGraphExec = new CUgraphExec_st{hGraph->ctx, *hGraph->g};
    return CUDA_SUCCESS;
}

/* Runs the graph's nodes in their captured order (the first failure is returned); a launch into
 * a capturing stream (a child graph node) is not modelled. */
EXPORT CUresult CUDAAPI cuGraphLaunch(CUgraphExec hGraphExec, CUstream hStream) {
    NEED_CTX(c);
    if (!hGraphExec || hGraphExec->ctx != c || !stream_ok(hStream, c))
        return CUDA_ERROR_INVALID_HANDLE;
    if (is_capturing(hStream)) return CUDA_ERROR_NOT_SUPPORTED;
    const fake_gpu::graph *g = &hGraphExec->g;
    return submit(hStream, [g]() { return (CUresult)fake_gpu::graph_run(*g); });
}

EXPORT CUresult CUDAAPI cuGraphExecDestroy(CUgraphExec hGraphExec) {
    NEED_CTX(c);
    if (!hGraphExec) return CUDA_ERROR_INVALID_VALUE;
    delete hGraphExec;
    return CUDA_SUCCESS;
}

EXPORT CUresult CUDAAPI cuGraphDestroy(CUgraph hGraph) {
    NEED_CTX(c);
    if (!hGraph) return CUDA_ERROR_INVALID_VALUE;
    delete hGraph->g;
    delete hGraph;
    return CUDA_SUCCESS;
}

/* ---- test hooks ---- */

/* Calls refused because a capture was open (each invalidated it). */
EXPORT long kmux_fake_cuda_capture_refusals(void) {
    return fake_gpu::capture_refusals();
}

/* Graphs launched and run through. */
EXPORT long kmux_fake_cuda_graph_launches(void) {
    return fake_gpu::graph_runs();
}

EXPORT long kmux_fake_cuda_ctx_depth(void) {
    return (long)stack.size();
}

EXPORT long kmux_fake_cuda_launches(void) {
    return launches.load();
}

EXPORT long kmux_fake_cuda_stream_waits(void) {
    return stream_waits.load();
}

EXPORT void kmux_fake_cuda_fail_call(long k, int error) {
    fail_error = error;
    fail_fired = 0;
    fail_countdown = k;
}

EXPORT int kmux_fake_cuda_fail_fired(void) {
    return fail_fired.load();
}

EXPORT const char *kmux_fake_cuda_last_fault(void) {
    return last_fault.c_str();
}
