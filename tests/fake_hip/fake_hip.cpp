/*
 * fake_hip.cpp - the fake HIP runtime's exported hip* functions (see fake_hip.h). A TEST TOOL.
 *
 * Devices: $KMUX_FAKE_HIP_DEVICES (default 1; 0 makes hipGetDeviceCount answer hipErrorNoDevice),
 * all of target id $KMUX_FAKE_HIP_ARCH (default "gfx942:sramecc+:xnack-"; a processor alone,
 * "gfx90a", is a device whose target id states no feature), reported as an MI300X (304 CUs,
 * 2.1 GHz, 192 GiB). The runtime version is $KMUX_FAKE_HIP_VERSION (HIP_VERSION, default
 * 60200000: 6.2; 50700000 is ROCm 5.7, 70000000 ROCm 7.0), and the fake answers as that runtime
 * does: gcnArchName through hipGetDevicePropertiesR0600 (ROCm 6 layout; hipErrorNotSupported
 * under 6.0, where the real symbol does not exist) and through the unversioned
 * hipGetDeviceProperties (ROCm 5 layout, as ROCm 6's compatibility symbol); the gcnArch attribute
 * (10003) only under 6.0. $KMUX_FAKE_HIP_LOAD_ERROR (a hipError_t number) makes every
 * hipModuleLoadData fail with it. Memory: hipMalloc is host memory, tracked, so that a
 * copy or a kernel argument outside any allocation of the right kind is refused like a real
 * runtime would fault. Everything is synchronous (streams and events are in order by
 * construction); events record a monotonic time. Stream capture and graphs (hipStreamBeginCapture,
 * hipStreamEndCapture, hipStreamIsCapturing, hipGraphInstantiate, hipGraphLaunch,
 * hipGraphExecDestroy, hipGraphDestroy) follow the model shared with the fake CUDA driver
 * (fake_gpu_core.h): a capturing stream records, a graph launch replays, and the calls capture
 * prohibits are refused and invalidate it. Kernels run in the emulator with 64-lane waves
 * (gfx942's width) and shuffled block order ($KMUX_FAKE_HIP_SEED, default 1). The kernel
 * registry, memory tracking and launch are the core shared with the fake CUDA driver
 * (fake_gpu_core.h).
 */
#include "fake_hip.h"

#include <atomic>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <string>

#define EXPORT extern "C" __attribute__((visibility("default")))

namespace {

enum {
    kSuccess = 0,
    kInvalidValue = 1,
    kOutOfMemory = 2,
    kInvalidConfiguration = 9,
    kNoDevice = 100,
    kInvalidDevice = 101,
    kInvalidImage = 200,
    kNoBinaryForGpu = 209,
    kInvalidHandle = 400,
    kNotFound = 500,
    kIllegalState = fake_gpu::kIllegalState,
    kLaunchFailure = 719,
    kNotSupported = 801,
    kUnknown = 999
};

/* the vendor-call failure sweep's fail point (fake_gpu::fail_call) */
#define FAIL_POINT()                                                                               \
    do {                                                                                           \
        if (fake_gpu::fail_call("libamdhip64", __func__)) return kUnknown;                         \
    } while (0)

struct module {
    int device;
};
struct stream {
    int device;
    fake_gpu::capture *cap; /* hipStreamBeginCapture .. hipStreamEndCapture */
};
struct event {
    int device;
    double ms = -1.0;
    fake_gpu::event_capture cap{}; /* recorded in a capture: refusals of wait and sync */
};
struct graph_exec {
    fake_gpu::graph g;
};

/* hip_runtime_api.h's hipStreamPerThread: a handle, not a stream object of the fake's. */
void *const per_thread = reinterpret_cast<void *>(2);

/* The stream's capture state (NULL, the null stream: the legacy stream, and the per-thread
 * default stream: never capturing). */
fake_gpu::capture *cap_of(void *s) {
    return s && s != per_thread ? static_cast<stream *>(s)->cap : nullptr;
}
/* A stream operation (its arguments checked): run now, or recorded by a capturing stream. */
int submit(void *s, fake_gpu::work w) {
    return fake_gpu::submit(cap_of(s), s == nullptr, std::move(w));
}

thread_local int current = 0;

using fake_gpu::env_int;
using fake_gpu::is_device;
using fake_gpu::now_ms;

/* $KMUX_FAKE_HIP_ARCH, the full target id (gcnArchName) */
const char *target_id() {
    const char *a = getenv("KMUX_FAKE_HIP_ARCH");
    return a && a[0] ? a : "gfx942:sramecc+:xnack-";
}
/* its processor: "gfx942" */
std::string arch_name() {
    const char *t = target_id();
    return std::string(t, strcspn(t, ":"));
}
int runtime_version() {
    const char *v = getenv("KMUX_FAKE_HIP_VERSION");
    return v && v[0] ? atoi(v) : 60200000;
}
/* The processor as HIP's gcnArch: major * 100 + minor * 10 + stepping (the last two hex digits
 * are minor and stepping). */
int gcn_arch() {
    const std::string name = arch_name();
    const char *a = name.c_str() + 3;
    size_t n = strlen(a);
    if (n < 3) return 0;
    char major[8] = {0};
    memcpy(major, a, n - 2 < 7 ? n - 2 : 7);
    char minor[2] = {a[n - 2], 0}, step[2] = {a[n - 1], 0};
    return atoi(major) * 100 + (int)strtol(minor, nullptr, 16) * 10 +
           (int)strtol(step, nullptr, 16);
}
int device_count() {
    return env_int("KMUX_FAKE_HIP_DEVICES", 1);
}
bool valid_device(int d) {
    return d >= 0 && d < device_count();
}

} // namespace

EXPORT int hipGetDeviceCount(int *count) {
    if (!count) return kInvalidValue;
    *count = device_count() > 0 ? device_count() : 0;
    return device_count() > 0 ? kSuccess : kNoDevice;
}

EXPORT int hipDeviceGetAttribute(int *value, int attr, int device) {
    if (!value) return kInvalidValue;
    if (!valid_device(device)) return kInvalidDevice;
    int gcn = gcn_arch();
    switch (attr) {
    case 5:
        *value = 2100000;
        return kSuccess; /* clock rate, kHz */
    case 16:
        *value = 0;
        return kSuccess; /* integrated */
    case 23:
        *value = gcn / 100;
        return kSuccess; /* compute capability major */
    case 56:
        *value = 1024;
        return kSuccess;
    case 59:
        *value = 8192;
        return kSuccess; /* memory bus width, bits */
    case 60:
        *value = 1300000;
        return kSuccess; /* memory clock, kHz */
    case 61:
        *value = gcn / 10 % 10;
        return kSuccess;
    case 63:
        *value = 304;
        return kSuccess; /* compute units */
    case 87:
        *value = 64;
        return kSuccess; /* wavefront */
    case 10003:          /* gcnArch up to ROCm 5.7; hipDeviceAttributeUnused4 since 6.0 */
        if (runtime_version() >= 60000000) return kInvalidValue;
        *value = gcn;
        return kSuccess;
    default:
        return kNotSupported;
    }
}

EXPORT int hipDeviceGetName(char *name, int len, int device) {
    if (!name || len <= 0) return kInvalidValue;
    if (!valid_device(device)) return kInvalidDevice;
    snprintf(name, (size_t)len, "AMD Instinct MI300X (kmux fake HIP runtime)");
    return kSuccess;
}

EXPORT int hipDeviceTotalMem(size_t *bytes, int device) {
    if (!bytes) return kInvalidValue;
    if (!valid_device(device)) return kInvalidDevice;
    *bytes = (size_t)192 << 30;
    return kSuccess;
}

EXPORT int hipDeviceGetPCIBusId(char *id, int len, int device) {
    if (!id || len <= 0) return kInvalidValue;
    if (!valid_device(device)) return kInvalidDevice;
    /* a bus no KFD topology node has, so the plugin falls back to hipDeviceAttributeGcnArch */
    snprintf(id, (size_t)len, "0000:f%x:00.0", device & 0xf);
    return kSuccess;
}

EXPORT int hipRuntimeGetVersion(int *v) {
    if (!v) return kInvalidValue;
    *v = runtime_version();
    return kSuccess;
}

EXPORT int hipDriverGetVersion(int *v) {
    if (!v) return kInvalidValue;
    *v = runtime_version();
    return kSuccess;
}

/* hipDeviceProp_t: only the fields the plugin reads, at the offsets of the HIP headers (ROCm 6
 * layout R0600: name at 0, gcnArchName at 1160, 1472 bytes; ROCm 5 layout R0000: name at 0,
 * gcnArch at 392, gcnArchName at 396, 792 bytes); the rest zero. */
static void fill_props(void *prop, size_t size, size_t arch_name_at) {
    char *p = static_cast<char *>(prop);
    memset(p, 0, size);
    snprintf(p, 256, "AMD Instinct MI300X (kmux fake HIP runtime)");
    snprintf(p + arch_name_at, 256, "%s", target_id());
}

EXPORT int hipGetDevicePropertiesR0600(void *prop, int device) {
    if (runtime_version() < 60000000) return kNotSupported; /* no such symbol before ROCm 6.0 */
    if (!prop) return kInvalidValue;
    if (!valid_device(device)) return kInvalidDevice;
    fill_props(prop, 1472, 1160);
    return kSuccess;
}

EXPORT int hipGetDeviceProperties(void *prop, int device) {
    if (!prop) return kInvalidValue;
    if (!valid_device(device)) return kInvalidDevice;
    fill_props(prop, 792, 396);
    int gcn = gcn_arch();
    memcpy(static_cast<char *>(prop) + 392, &gcn, sizeof gcn);
    return kSuccess;
}

EXPORT const char *hipGetErrorName(int e) {
    switch (e) {
    case kSuccess:
        return "hipSuccess";
    case kInvalidValue:
        return "hipErrorInvalidValue";
    case kOutOfMemory:
        return "hipErrorOutOfMemory";
    case kInvalidConfiguration:
        return "hipErrorInvalidConfiguration";
    case kNoDevice:
        return "hipErrorNoDevice";
    case kInvalidDevice:
        return "hipErrorInvalidDevice";
    case kInvalidImage:
        return "hipErrorInvalidImage";
    case kNoBinaryForGpu:
        return "hipErrorNoBinaryForGpu";
    case kInvalidHandle:
        return "hipErrorInvalidHandle";
    case kNotFound:
        return "hipErrorNotFound";
    case kLaunchFailure:
        return "hipErrorLaunchFailure";
    case kNotSupported:
        return "hipErrorNotSupported";
    case kIllegalState:
        return "hipErrorIllegalState";
    case fake_gpu::kCaptureUnsupported:
        return "hipErrorStreamCaptureUnsupported";
    case fake_gpu::kCaptureInvalidated:
        return "hipErrorStreamCaptureInvalidated";
    case fake_gpu::kCaptureImplicit:
        return "hipErrorStreamCaptureImplicit";
    case fake_gpu::kCapturedEvent:
        return "hipErrorCapturedEvent";
    case fake_gpu::kCaptureWrongThread:
        return "hipErrorStreamCaptureWrongThread";
    default:
        return "hipErrorUnknown";
    }
}

EXPORT const char *hipGetErrorString(int e) {
    return e == kNoDevice ? "no ROCm-capable device is detected (fake HIP runtime)"
                          : "fake HIP runtime error";
}

EXPORT int hipGetDevice(int *d) {
    if (!d) return kInvalidValue;
    *d = current;
    return kSuccess;
}

EXPORT int hipSetDevice(int d) {
    FAIL_POINT();
    if (!valid_device(d)) return kInvalidDevice;
    current = d;
    return kSuccess;
}

EXPORT int hipMalloc(void **p, size_t bytes) {
    FAIL_POINT();
    if (!p) return kInvalidValue;
    if (int u = fake_gpu::capture_unsafe()) return u;
    void *q = fake_gpu::device_alloc(bytes, 256);
    if (!q) return kOutOfMemory;
    *p = q;
    return kSuccess;
}

EXPORT int hipFree(void *p) {
    if (!p) return kSuccess;
    if (int u = fake_gpu::capture_unsafe()) return u;
    return fake_gpu::device_free(p) ? kSuccess : kInvalidValue;
}

/* Pinned host memory: tracked apart from device memory, so that freeing one with the other's
 * function fails as on ROCm. */

EXPORT int hipHostMalloc(void **p, size_t bytes, unsigned flags) {
    FAIL_POINT();
    if (!p || flags != 0) return kInvalidValue;
    if (int u = fake_gpu::capture_unsafe()) return u;
    void *q = fake_gpu::host_alloc(bytes, 4096);
    if (!q) return kOutOfMemory;
    *p = q;
    return kSuccess;
}

EXPORT int hipHostFree(void *p) {
    if (!p) return kSuccess;
    if (int u = fake_gpu::capture_unsafe()) return u;
    return fake_gpu::host_free(p) ? kSuccess : kInvalidValue;
}

EXPORT int hipMemcpyAsync(void *dst, const void *src, size_t bytes, int kind, void *s) {
    FAIL_POINT();
    /* hipMemcpyKind: 0 H2H, 1 H2D, 2 D2H, 3 D2D, 4 default */
    bool dd = is_device(dst, bytes), sd = is_device(src, bytes);
    if (kind < 0 || kind > 4 || (kind == 1 && (!dd || sd)) || (kind == 2 && (dd || !sd)) ||
        (kind == 3 && (!dd || !sd)) || (kind == 0 && (dd || sd)))
        return kInvalidValue;
    return submit(s, [=]() {
        memmove(dst, src, bytes);
        return (int)kSuccess;
    });
}

EXPORT int hipMemsetAsync(void *dst, int value, size_t bytes, void *s) {
    FAIL_POINT();
    if (!is_device(dst, bytes)) return kInvalidValue;
    return submit(s, [=]() {
        memset(dst, value, bytes);
        return (int)kSuccess;
    });
}

EXPORT int hipStreamCreate(void **s) {
    FAIL_POINT();
    if (!s) return kInvalidValue;
    *s = new stream{current, fake_gpu::capture_new()};
    return kSuccess;
}

EXPORT int hipStreamDestroy(void *s) {
    if (!s || s == per_thread) return kInvalidHandle;
    fake_gpu::capture_delete(static_cast<stream *>(s)->cap); /* its capture ends with it */
    delete static_cast<stream *>(s);
    return kSuccess;
}

EXPORT int hipStreamSynchronize(void *s) {
    FAIL_POINT();
    return fake_gpu::capture_sync(cap_of(s), s == nullptr);
}

EXPORT int hipEventCreate(void **e) {
    FAIL_POINT();
    if (!e) return kInvalidValue;
    *e = new event{current};
    return kSuccess;
}

EXPORT int hipEventDestroy(void *e) {
    if (!e) return kInvalidHandle;
    delete static_cast<event *>(e);
    return kSuccess;
}

EXPORT int hipEventRecord(void *e, void *s) {
    FAIL_POINT();
    if (!e) return kInvalidHandle;
    event *ev = static_cast<event *>(e);
    ev->cap.record(cap_of(s));
    return submit(s, [ev]() {
        ev->ms = now_ms();
        return (int)kSuccess;
    });
}

/* Streams of the fake run every call before returning, so a wait has nothing to order; it checks
 * its arguments as HIP documents them (flags must be 0) and is counted, so that tests can tell
 * the plugin's device-side wait from the core's host-side fallback. */
static std::atomic<int> stream_waits{0};

EXPORT int hipStreamWaitEvent(void *s, void *e, unsigned flags) {
    FAIL_POINT();
    /* s NULL: the default stream */
    if (!e) return kInvalidHandle;
    if (flags != 0) return kInvalidValue;
    if (int r = static_cast<event *>(e)->cap.wait(cap_of(s))) return r;
    int r = submit(s, []() { return (int)kSuccess; }); /* in order: nothing to wait for */
    if (r == kSuccess) stream_waits++;
    return r;
}

/** Test hook, not a HIP function: how many hipStreamWaitEvent calls succeeded. */
EXPORT int kmux_fake_hip_stream_waits(void) {
    return stream_waits.load();
}

EXPORT int hipEventSynchronize(void *e) {
    FAIL_POINT();
    if (!e) return kInvalidHandle;
    return static_cast<event *>(e)->cap.synchronize();
}

/* ---- stream capture and graphs: the core's model (fake_gpu_core.h) on HIP's streams ---- */

EXPORT int hipStreamBeginCapture(void *s, int mode) {
    FAIL_POINT();
    if (!s) return fake_gpu::kCaptureUnsupported; /* the null stream cannot capture */
    if (s == per_thread) return kNotSupported;    /* not modelled */
    return fake_gpu::capture_begin(cap_of(s), mode);
}

EXPORT int hipStreamEndCapture(void *s, void **graph) {
    FAIL_POINT();
    if (!graph) return kInvalidValue;
    *graph = nullptr;
    if (!s || s == per_thread) return kIllegalState;
    fake_gpu::graph *g = nullptr;
    int e = fake_gpu::capture_end(cap_of(s), &g);
    if (e == kSuccess) *graph = g;
    return e;
}

/* hipStreamCaptureStatus: None 0, Active 1, Invalidated 2 */
EXPORT int hipStreamIsCapturing(void *s, int *status) {
    if (!status) return kInvalidValue;
    *status = !fake_gpu::capturing(cap_of(s))            ? 0
              : fake_gpu::capture_invalidated(cap_of(s)) ? 2
                                                         : 1;
    return kSuccess;
}

EXPORT int hipGraphInstantiate(void **exec, void *graph, void *error_node, char *log,
                               size_t log_size) {
    FAIL_POINT();
    (void)error_node, (void)log, (void)log_size;
    if (!exec || !graph) return kInvalidValue;
    *exec = new graph_exec{*static_cast<fake_gpu::graph *>(graph)};
    return kSuccess;
}

/* Runs the graph's nodes in their captured order; into a capturing stream: not modelled. */
EXPORT int hipGraphLaunch(void *exec, void *s) {
    FAIL_POINT();
    if (!exec) return kInvalidHandle;
    if (fake_gpu::capturing(cap_of(s))) return kNotSupported;
    const fake_gpu::graph *g = &static_cast<graph_exec *>(exec)->g;
    return submit(s, [g]() { return fake_gpu::graph_run(*g); });
}

EXPORT int hipGraphExecDestroy(void *exec) {
    if (!exec) return kInvalidValue;
    delete static_cast<graph_exec *>(exec);
    return kSuccess;
}

EXPORT int hipGraphDestroy(void *graph) {
    if (!graph) return kInvalidValue;
    delete static_cast<fake_gpu::graph *>(graph);
    return kSuccess;
}

EXPORT int hipEventElapsedTime(float *ms, void *a, void *b) {
    FAIL_POINT();
    if (!ms || !a || !b) return kInvalidValue;
    const event *x = static_cast<event *>(a), *y = static_cast<event *>(b);
    if (x->ms < 0 || y->ms < 0) return kInvalidHandle; /* hipErrorNotReady on a real runtime */
    *ms = (float)(y->ms - x->ms);
    return kSuccess;
}

/* Can a device of target id `device` load a code object of target id `code` ("gfx942",
 * "gfx942:xnack-")? Same processor, and every feature the code object specifies equal to the
 * device's (LLVM's target-id rules; written here independently of the plugin's hip_target.h). */
static bool loads(const std::string &device, const std::string &code) {
    auto processor = [](const std::string &t) { return t.substr(0, t.find(':')); };
    if (processor(device) != processor(code)) return false;
    size_t at = code.find(':');
    while (at != std::string::npos) {
        size_t next = code.find(':', at + 1);
        std::string f = code.substr(at + 1, next == std::string::npos ? next : next - at - 1);
        if (f.size() < 2) return false;
        std::string name = f.substr(0, f.size() - 1);
        size_t d = (device + ":").find(":" + name);
        if (d != std::string::npos) {
            char have = (device + ":")[d + 1 + name.size()];
            if (have != f.back()) return false;
        }
        at = next;
    }
    return true;
}

/* The image must be a clang offload bundle holding a code object the current device loads, as
 * the real runtime requires (it would then load that code object). */
EXPORT int hipModuleLoadData(void **m, const void *image) {
    FAIL_POINT();
    if (!m || !image) return kInvalidValue;
    int forced = env_int("KMUX_FAKE_HIP_LOAD_ERROR", 0);
    if (forced) return forced;
    static const char magic[] = "__CLANG_OFFLOAD_BUNDLE__";
    const char *p = static_cast<const char *>(image);
    if (memcmp(p, magic, sizeof magic - 1) != 0) return kInvalidImage;
    uint64_t n;
    memcpy(&n, p + 24, sizeof n);
    static const char triple[] = "amdgcn-amd-amdhsa--";
    const char *q = p + 32;
    bool found = false;
    for (uint64_t i = 0; i < n && i < 64; i++) {
        uint64_t len;
        memcpy(&len, q + 16, sizeof len); /* offset, size, id length, id */
        std::string id(q + 24, (size_t)len);
        size_t t = id.find(triple);
        if (t != std::string::npos && loads(target_id(), id.substr(t + sizeof triple - 1)))
            found = true;
        q += 24 + len;
    }
    if (!found) return kNoBinaryForGpu;
    *m = new module{current};
    return kSuccess;
}

EXPORT int hipModuleUnload(void *m) {
    if (!m) return kInvalidHandle;
    delete static_cast<module *>(m);
    return kSuccess;
}

EXPORT int hipModuleGetFunction(void **fn, void *m, const char *name) {
    FAIL_POINT();
    if (!fn || !m || !name) return kInvalidValue;
    const fake_gpu::kernel *k = fake_gpu::find_kernel(name);
    if (!k) return kNotFound;
    *fn = const_cast<fake_gpu::kernel *>(k);
    return kSuccess;
}

EXPORT int hipModuleLaunchKernel(void *fn, unsigned gx, unsigned gy, unsigned gz, unsigned bx,
                                 unsigned by, unsigned bz, unsigned shared, void *s, void **params,
                                 void **extra) {
    FAIL_POINT();
    (void)s;
    if (!fn || extra || shared != 0) return kInvalidValue;
    if (gx == 0 || gy == 0 || gz == 0 || bx == 0 || by == 0 || bz == 0) return kInvalidValue;
    /* HIP's global work size per dimension is 32-bit; more threads per block than 1024 is
     * hipErrorInvalidConfiguration from ROCm 7.0 on (hipErrorInvalidValue before) */
    if ((uint64_t)gx * bx > UINT32_MAX || (uint64_t)gy * by > UINT32_MAX ||
        (uint64_t)gz * bz > UINT32_MAX)
        return kInvalidConfiguration;
    if ((uint64_t)bx * by * bz > 1024)
        return runtime_version() >= 70000000 ? kInvalidConfiguration : kInvalidValue;
    const fake_gpu::kernel *k = static_cast<const fake_gpu::kernel *>(fn);
    const dim3 grid(gx, gy, gz), block(bx, by, bz);
    fake_gpu::bound run = k->bind(params); /* the arguments' values, now */
    return submit(s, [grid, block, run]() {
        int e = fake_gpu::launch_bound(run, grid, block, 64,
                                       (uint64_t)env_int("KMUX_FAKE_HIP_SEED", 1));
        return e == 0 ? (int)kSuccess : (int)kLaunchFailure;
    });
}
