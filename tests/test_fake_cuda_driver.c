/*
 * test_fake_cuda_driver.c - the fake CUDA driver of tests/fake_cuda (libcuda.so.1, a test tool)
 * on its own, without the plugin: dlopened from $KMUX_CUDA_LIB_PATH (ctest sets it to the fake's
 * folder), each test in its own process (Criterion), so each starts before cuInit.
 *
 * Checked: calls before cuInit fail CUDA_ERROR_NOT_INITIALIZED; cuInit, the device count, name
 * and attributes ($KMUX_FAKE_CUDA_SM, $KMUX_FAKE_CUDA_DEVICES=0: CUDA_ERROR_NO_DEVICE); without a
 * current context CUDA_ERROR_INVALID_CONTEXT; retain + push gives one, pushes and pops balance
 * (kmux_fake_cuda_ctx_depth); an alloc / memset / copy (and a strided 3D copy) round trip and the
 * refused ranges; streams
 * and events; a fatbin nvcc built from kernels/gpu/kmux_gpu_amp.cu loads, its
 * loss_scale_kernel is found by its mangled name and runs in the emulator with the result of
 * torch._amp_update_scale_; a fatbin with sm_80 code only is CUDA_ERROR_NO_BINARY_FOR_GPU on an
 * sm_90 device; bad launch dimensions are CUDA_ERROR_INVALID_VALUE; error names and strings;
 * stream capture and graph launch.
 */
#include <criterion/criterion.h>
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cuda.h>

#define LOSS_SCALE "_ZN10kmux_gpu_k17loss_scale_kernelEPfPiPKfddl"

/* The driver calls, by their exported names (cuda.h's _v2 where it maps to one). */
static struct {
    void *lib;
    __typeof__(cuInit) *Init;
    __typeof__(cuDriverGetVersion) *DriverGetVersion;
    __typeof__(cuDeviceGetCount) *DeviceGetCount;
    __typeof__(cuDeviceGet) *DeviceGet;
    __typeof__(cuDeviceGetName) *DeviceGetName;
    __typeof__(cuDeviceTotalMem_v2) *DeviceTotalMem;
    __typeof__(cuDeviceGetAttribute) *DeviceGetAttribute;
    __typeof__(cuDevicePrimaryCtxRetain) *PrimaryCtxRetain;
    __typeof__(cuDevicePrimaryCtxRelease_v2) *PrimaryCtxRelease;
    __typeof__(cuCtxGetCurrent) *CtxGetCurrent;
    __typeof__(cuCtxPushCurrent_v2) *CtxPush;
    __typeof__(cuCtxPopCurrent_v2) *CtxPop;
    __typeof__(cuCtxGetDevice) *CtxGetDevice;
    __typeof__(cuGetErrorName) *GetErrorName;
    __typeof__(cuGetErrorString) *GetErrorString;
    __typeof__(cuMemAlloc_v2) *MemAlloc;
    __typeof__(cuMemFree_v2) *MemFree;
    __typeof__(cuMemHostAlloc) *MemHostAlloc;
    __typeof__(cuMemFreeHost) *MemFreeHost;
    __typeof__(cuMemcpyAsync) *MemcpyAsync;
    __typeof__(cuMemsetD8Async) *MemsetD8Async;
    __typeof__(cuMemGetInfo_v2) *MemGetInfo;
    __typeof__(cuMemcpy3DAsync_v2) *Memcpy3DAsync;
    __typeof__(cuStreamCreate) *StreamCreate;
    __typeof__(cuStreamDestroy_v2) *StreamDestroy;
    __typeof__(cuStreamSynchronize) *StreamSynchronize;
    __typeof__(cuStreamWaitEvent) *StreamWaitEvent;
    __typeof__(cuEventCreate) *EventCreate;
    __typeof__(cuEventDestroy_v2) *EventDestroy;
    __typeof__(cuEventRecord) *EventRecord;
    __typeof__(cuEventSynchronize) *EventSynchronize;
    __typeof__(cuEventElapsedTime_v2) *EventElapsedTime;
    __typeof__(cuEventElapsedTime_v2) *EventElapsedTimeV1;
    __typeof__(cuModuleLoadData) *ModuleLoadData;
    __typeof__(cuModuleUnload) *ModuleUnload;
    __typeof__(cuModuleGetFunction) *ModuleGetFunction;
    __typeof__(cuLaunchKernel) *LaunchKernel;
    __typeof__(cuStreamBeginCapture_v2) *StreamBeginCapture;
    __typeof__(cuStreamEndCapture) *StreamEndCapture;
    __typeof__(cuStreamIsCapturing) *StreamIsCapturing;
    __typeof__(cuGraphInstantiateWithFlags) *GraphInstantiate;
    __typeof__(cuGraphLaunch) *GraphLaunch;
    __typeof__(cuGraphExecDestroy) *GraphExecDestroy;
    __typeof__(cuGraphDestroy) *GraphDestroy;
    long (*ctx_depth)(void);
    long (*launches)(void);
    long (*stream_waits)(void);
} d;

static void *sym(const char *name) {
    void *p = dlsym(d.lib, name);
    cr_assert(p != NULL, "the fake driver exports %s", name);
    return p;
}

/* dlsym's object pointer into a function pointer, the POSIX way */
#define LOAD(field, name) (*(void **)&d.field = sym(name))

static void load(void) {
    const char *dir = getenv("KMUX_CUDA_LIB_PATH");
    cr_assert(dir && dir[0], "ctest sets KMUX_CUDA_LIB_PATH to the fake driver's folder");
    char path[4096];
    snprintf(path, sizeof path, "%s/libcuda.so.1", dir);
    d.lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    cr_assert(d.lib != NULL, "dlopen %s: %s", path, dlerror());
    LOAD(Init, "cuInit");
    LOAD(DriverGetVersion, "cuDriverGetVersion");
    LOAD(DeviceGetCount, "cuDeviceGetCount");
    LOAD(DeviceGet, "cuDeviceGet");
    LOAD(DeviceGetName, "cuDeviceGetName");
    LOAD(DeviceTotalMem, "cuDeviceTotalMem_v2");
    LOAD(DeviceGetAttribute, "cuDeviceGetAttribute");
    LOAD(PrimaryCtxRetain, "cuDevicePrimaryCtxRetain");
    LOAD(PrimaryCtxRelease, "cuDevicePrimaryCtxRelease_v2");
    LOAD(CtxGetCurrent, "cuCtxGetCurrent");
    LOAD(CtxPush, "cuCtxPushCurrent_v2");
    LOAD(CtxPop, "cuCtxPopCurrent_v2");
    LOAD(CtxGetDevice, "cuCtxGetDevice");
    LOAD(GetErrorName, "cuGetErrorName");
    LOAD(GetErrorString, "cuGetErrorString");
    LOAD(MemAlloc, "cuMemAlloc_v2");
    LOAD(MemFree, "cuMemFree_v2");
    LOAD(MemHostAlloc, "cuMemHostAlloc");
    LOAD(MemFreeHost, "cuMemFreeHost");
    LOAD(MemcpyAsync, "cuMemcpyAsync");
    LOAD(MemsetD8Async, "cuMemsetD8Async");
    LOAD(MemGetInfo, "cuMemGetInfo_v2");
    LOAD(Memcpy3DAsync, "cuMemcpy3DAsync_v2");
    LOAD(StreamCreate, "cuStreamCreate");
    LOAD(StreamDestroy, "cuStreamDestroy_v2");
    LOAD(StreamSynchronize, "cuStreamSynchronize");
    LOAD(StreamWaitEvent, "cuStreamWaitEvent");
    LOAD(EventCreate, "cuEventCreate");
    LOAD(EventDestroy, "cuEventDestroy_v2");
    LOAD(EventRecord, "cuEventRecord");
    LOAD(EventSynchronize, "cuEventSynchronize");
    LOAD(EventElapsedTime, "cuEventElapsedTime_v2");
    LOAD(EventElapsedTimeV1, "cuEventElapsedTime");
    LOAD(ModuleLoadData, "cuModuleLoadData");
    LOAD(ModuleUnload, "cuModuleUnload");
    LOAD(ModuleGetFunction, "cuModuleGetFunction");
    LOAD(LaunchKernel, "cuLaunchKernel");
    LOAD(StreamBeginCapture, "cuStreamBeginCapture_v2");
    LOAD(StreamEndCapture, "cuStreamEndCapture");
    LOAD(StreamIsCapturing, "cuStreamIsCapturing");
    LOAD(GraphInstantiate, "cuGraphInstantiateWithFlags");
    LOAD(GraphLaunch, "cuGraphLaunch");
    LOAD(GraphExecDestroy, "cuGraphExecDestroy");
    LOAD(GraphDestroy, "cuGraphDestroy");
    LOAD(ctx_depth, "kmux_fake_cuda_ctx_depth");
    LOAD(launches, "kmux_fake_cuda_launches");
    LOAD(stream_waits, "kmux_fake_cuda_stream_waits");
    /* the other exports the plugin resolves */
    static const char *const more[] = {"cuDeviceGetPCIBusId", "cuMemAllocAsync", "cuMemFreeAsync"};
    for (size_t i = 0; i < sizeof more / sizeof more[0]; i++)
        sym(more[i]);
}

#define CU_OK(call) cr_assert_eq((call), CUDA_SUCCESS, "%s", #call)
#define CU_IS(call, want) cr_assert_eq((call), (want), "%s: want %d", #call, (int)(want))

/* cuInit, then the primary context of device 0 retained and pushed. */
static CUcontext init_and_push(void) {
    load();
    CU_OK(d.Init(0));
    CUcontext c = NULL;
    CU_OK(d.PrimaryCtxRetain(&c, 0));
    cr_assert(c != NULL);
    CU_OK(d.CtxPush(c));
    return c;
}

static void pop_and_release(CUcontext c) {
    CUcontext popped = NULL;
    CU_OK(d.CtxPop(&popped));
    cr_assert_eq(popped, c);
    CU_OK(d.PrimaryCtxRelease(0));
    cr_assert_eq(d.ctx_depth(), 0, "pushes and pops balance");
}

/* The whole file, or NULL (size in *n). */
static void *read_file(const char *name, size_t *n) {
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", KMUX_TEST_FATBIN_DIR, name);
    FILE *f = fopen(path, "rb");
    cr_assert(f != NULL, "nvcc's fatbin %s was built", path);
    fseek(f, 0, SEEK_END);
    long len = ftell(f);
    fseek(f, 0, SEEK_SET);
    void *p = malloc((size_t)len);
    cr_assert(p != NULL);
    cr_assert_eq(fread(p, 1, (size_t)len, f), (size_t)len);
    fclose(f);
    *n = (size_t)len;
    return p;
}

Test(fake_cuda, calls_before_cuInit_fail_not_initialized) {
    load();
    int n = -1;
    CU_IS(d.DeviceGetCount(&n), CUDA_ERROR_NOT_INITIALIZED);
    CUdevice dev;
    CU_IS(d.DeviceGet(&dev, 0), CUDA_ERROR_NOT_INITIALIZED);
    CUdeviceptr p;
    CU_IS(d.MemAlloc(&p, 16), CUDA_ERROR_NOT_INITIALIZED);
    CUcontext c;
    CU_IS(d.PrimaryCtxRetain(&c, 0), CUDA_ERROR_NOT_INITIALIZED);
    CU_IS(d.CtxGetCurrent(&c), CUDA_ERROR_NOT_INITIALIZED);
    /* these work before cuInit */
    int v = 0;
    CU_OK(d.DriverGetVersion(&v));
    cr_assert_eq(v, 13000);
    const char *s = NULL;
    CU_OK(d.GetErrorName(CUDA_ERROR_NOT_INITIALIZED, &s));
    cr_assert_str_eq(s, "CUDA_ERROR_NOT_INITIALIZED");
    CU_IS(d.Init(1), CUDA_ERROR_INVALID_VALUE);
    CU_IS(d.DeviceGetCount(&n), CUDA_ERROR_NOT_INITIALIZED);
    CU_OK(d.Init(0));
    CU_OK(d.DeviceGetCount(&n));
    cr_assert_eq(n, 1);
}

Test(fake_cuda, device_and_attributes) {
    load();
    CU_OK(d.Init(0));
    int n = 0;
    CU_OK(d.DeviceGetCount(&n));
    cr_assert_eq(n, 1);
    CUdevice dev = -1;
    CU_OK(d.DeviceGet(&dev, 0));
    cr_assert_eq(dev, 0);
    CU_IS(d.DeviceGet(&dev, 1), CUDA_ERROR_INVALID_DEVICE);
    char name[256];
    CU_OK(d.DeviceGetName(name, sizeof name, 0));
    cr_assert(strstr(name, "H100") && strstr(name, "kmux fake"), "%s", name);
    size_t total = 0;
    CU_OK(d.DeviceTotalMem(&total, 0));
    cr_assert_eq(total, (size_t)80 << 30);
    static const struct {
        CUdevice_attribute a;
        int v;
    } want[] = {
        {CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, 9},
        {CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, 0},
        {CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, 132},
        {CU_DEVICE_ATTRIBUTE_WARP_SIZE, 32},
        {CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK, 1024},
        {CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X, 2147483647},
        {CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y, 65535},
        {CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Z, 65535},
        {CU_DEVICE_ATTRIBUTE_MEMORY_POOLS_SUPPORTED, 1},
    };
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
        int v = -1;
        CU_OK(d.DeviceGetAttribute(&v, want[i].a, 0));
        cr_assert_eq(v, want[i].v, "attribute %d: %d, want %d", (int)want[i].a, v, want[i].v);
    }
    static const CUdevice_attribute positive[] = {
        CU_DEVICE_ATTRIBUTE_CLOCK_RATE, CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE,
        CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH, CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE,
        CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK};
    for (size_t i = 0; i < sizeof positive / sizeof positive[0]; i++) {
        int v = -1;
        CU_OK(d.DeviceGetAttribute(&v, positive[i], 0));
        cr_assert_gt(v, 0);
    }
    int v;
    CU_IS(d.DeviceGetAttribute(&v, CU_DEVICE_ATTRIBUTE_MAX_PITCH, 0), CUDA_ERROR_INVALID_VALUE);
    CU_IS(d.DeviceGetAttribute(&v, CU_DEVICE_ATTRIBUTE_WARP_SIZE, 1), CUDA_ERROR_INVALID_DEVICE);
}

Test(fake_cuda, sm_and_devices_from_the_environment) {
    setenv("KMUX_FAKE_CUDA_SM", "80", 1);
    setenv("KMUX_FAKE_CUDA_DEVICES", "2", 1);
    load();
    CU_OK(d.Init(0));
    int n = 0, major = 0, minor = -1;
    CU_OK(d.DeviceGetCount(&n));
    cr_assert_eq(n, 2);
    CU_OK(d.DeviceGetAttribute(&major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, 1));
    CU_OK(d.DeviceGetAttribute(&minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, 1));
    cr_assert_eq(major * 10 + minor, 80);
}

Test(fake_cuda, no_device_is_cuInit_no_device) {
    setenv("KMUX_FAKE_CUDA_DEVICES", "0", 1);
    load();
    CU_IS(d.Init(0), CUDA_ERROR_NO_DEVICE);
    int n;
    CU_IS(d.DeviceGetCount(&n), CUDA_ERROR_NOT_INITIALIZED);
}

Test(fake_cuda, no_current_context_is_invalid_context) {
    load();
    CU_OK(d.Init(0));
    CUcontext c = (CUcontext)1;
    CU_OK(d.CtxGetCurrent(&c));
    cr_assert_null(c);
    CUdevice dev;
    CU_IS(d.CtxGetDevice(&dev), CUDA_ERROR_INVALID_CONTEXT);
    CU_IS(d.CtxPop(&c), CUDA_ERROR_INVALID_CONTEXT);
    CUdeviceptr p;
    CU_IS(d.MemAlloc(&p, 16), CUDA_ERROR_INVALID_CONTEXT);
    CUstream s;
    CU_IS(d.StreamCreate(&s, 0), CUDA_ERROR_INVALID_CONTEXT);
    CUevent e;
    CU_IS(d.EventCreate(&e, 0), CUDA_ERROR_INVALID_CONTEXT);
    CUmodule m;
    static const char junk[64] = {0};
    CU_IS(d.ModuleLoadData(&m, junk), CUDA_ERROR_INVALID_CONTEXT);
    /* a released primary context is no context either */
    CU_OK(d.PrimaryCtxRetain(&c, 0));
    CU_OK(d.PrimaryCtxRelease(0));
    CU_IS(d.CtxPush(c), CUDA_ERROR_INVALID_CONTEXT);
    CU_IS(d.PrimaryCtxRelease(0), CUDA_ERROR_INVALID_CONTEXT);
}

Test(fake_cuda, retain_push_gives_a_context_and_pops_balance) {
    CUcontext c = init_and_push();
    cr_assert_eq(d.ctx_depth(), 1);
    CUcontext cur = NULL, again = NULL;
    CU_OK(d.CtxGetCurrent(&cur));
    cr_assert_eq(cur, c);
    CU_OK(d.PrimaryCtxRetain(&again, 0));
    cr_assert_eq(again, c, "one primary context per device");
    CU_OK(d.CtxPush(again));
    cr_assert_eq(d.ctx_depth(), 2);
    CUdevice dev = -1;
    CU_OK(d.CtxGetDevice(&dev));
    cr_assert_eq(dev, 0);
    CU_OK(d.CtxPop(NULL));
    CU_OK(d.PrimaryCtxRelease(0));
    cr_assert_eq(d.ctx_depth(), 1);
    pop_and_release(c);
    CU_OK(d.CtxGetCurrent(&cur));
    cr_assert_null(cur);
}

Test(fake_cuda, memory_round_trip_and_refused_ranges) {
    CUcontext c = init_and_push();
    CUdeviceptr a = 0, b = 0;
    CU_OK(d.MemAlloc(&a, 1000));
    CU_OK(d.MemAlloc(&b, 1000));
    cr_assert(a != 0 && a % 256 == 0);
    CU_IS(d.MemAlloc(&b, 0), CUDA_ERROR_INVALID_VALUE);
    size_t free_b = 0, total = 0;
    CU_OK(d.MemGetInfo(&free_b, &total));
    cr_assert_eq(total, (size_t)80 << 30);
    cr_assert_leq(free_b, total - 2000);

    unsigned char host[1000], back[1000];
    for (int i = 0; i < 1000; i++)
        host[i] = (unsigned char)(i * 7 + 1);
    CU_OK(d.MemsetD8Async(a, 0x5a, 1000, NULL));
    CU_OK(d.MemcpyAsync((CUdeviceptr)back, a, 1000, NULL));
    for (int i = 0; i < 1000; i++)
        cr_assert_eq(back[i], 0x5a);
    CU_OK(d.MemcpyAsync(a, (CUdeviceptr)host, 1000, NULL));
    CU_OK(d.MemcpyAsync(b, a, 1000, NULL));
    memset(back, 0, sizeof back);
    CU_OK(d.MemcpyAsync((CUdeviceptr)back, b, 1000, NULL));
    cr_assert_arr_eq(back, host, 1000);

    /* a device range leaving its allocation: refused */
    CU_IS(d.MemcpyAsync((CUdeviceptr)back, a + 500, 501, NULL), CUDA_ERROR_INVALID_VALUE);
    CU_IS(d.MemcpyAsync(a + 1, (CUdeviceptr)host, 1000, NULL), CUDA_ERROR_INVALID_VALUE);
    CU_IS(d.MemsetD8Async(a, 0, 1001, NULL), CUDA_ERROR_INVALID_VALUE);
    CU_IS(d.MemsetD8Async((CUdeviceptr)host, 0, 10, NULL), CUDA_ERROR_INVALID_VALUE);

    void *pinned = NULL;
    CU_OK(d.MemHostAlloc(&pinned, 4096, 0));
    CU_OK(d.MemcpyAsync((CUdeviceptr)pinned, a, 1000, NULL));
    cr_assert_arr_eq(pinned, host, 1000);
    CU_IS(d.MemcpyAsync((CUdeviceptr)pinned + 100, a, 4000, NULL), CUDA_ERROR_INVALID_VALUE);
    CU_IS(d.MemFree((CUdeviceptr)pinned), CUDA_ERROR_INVALID_VALUE);
    CU_IS(d.MemFreeHost((void *)a), CUDA_ERROR_INVALID_VALUE);
    CU_OK(d.MemFreeHost(pinned));
    CU_OK(d.MemFree(a));
    CU_OK(d.MemFree(b));
    CU_IS(d.MemFree(a), CUDA_ERROR_INVALID_VALUE);
    pop_and_release(c);
}

Test(fake_cuda, strided_3d_copy) {
    CUcontext c = init_and_push();
    /* a 3 x 4 block at (x 2 bytes, y 1) of a device image 5 rows of 16 bytes, to host */
    unsigned char img[80], out[12];
    for (int i = 0; i < 80; i++)
        img[i] = (unsigned char)i;
    CUdeviceptr a;
    CU_OK(d.MemAlloc(&a, sizeof img));
    CU_OK(d.MemcpyAsync(a, (CUdeviceptr)img, sizeof img, NULL));
    CUDA_MEMCPY3D p;
    memset(&p, 0, sizeof p);
    p.srcMemoryType = CU_MEMORYTYPE_DEVICE;
    p.srcDevice = a;
    p.srcXInBytes = 2;
    p.srcY = 1;
    p.srcPitch = 16;
    p.srcHeight = 5;
    p.dstMemoryType = CU_MEMORYTYPE_HOST;
    p.dstHost = out;
    p.dstPitch = 4;
    p.dstHeight = 3;
    p.WidthInBytes = 4;
    p.Height = 3;
    p.Depth = 1;
    CU_OK(d.Memcpy3DAsync(&p, NULL));
    for (int y = 0; y < 3; y++)
        for (int x = 0; x < 4; x++)
            cr_assert_eq(out[y * 4 + x], (unsigned char)((1 + y) * 16 + 2 + x));
    p.srcY = 3; /* rows 3 to 5: the last one leaves the allocation */
    CU_IS(d.Memcpy3DAsync(&p, NULL), CUDA_ERROR_INVALID_VALUE);
    CU_OK(d.MemFree(a));
    pop_and_release(c);
}

Test(fake_cuda, streams_and_events) {
    CUcontext c = init_and_push();
    CUstream s = NULL;
    CU_OK(d.StreamCreate(&s, CU_STREAM_NON_BLOCKING));
    CUevent e0, e1, unrecorded;
    CU_OK(d.EventCreate(&e0, 0));
    CU_OK(d.EventCreate(&e1, 0));
    CU_OK(d.EventCreate(&unrecorded, 0));
    CU_OK(d.EventRecord(e0, s));
    CU_OK(d.EventRecord(e1, s));
    float ms = -1;
    CU_OK(d.EventElapsedTime(&ms, e0, e1));
    cr_assert_geq(ms, 0.0f);
    CU_OK(d.EventElapsedTimeV1(&ms, e0, e1));
    CU_IS(d.EventElapsedTime(&ms, e0, unrecorded), CUDA_ERROR_INVALID_HANDLE);
    long waits = d.stream_waits();
    CU_OK(d.StreamWaitEvent(s, e1, 0));
    CU_IS(d.StreamWaitEvent(s, e1, 7), CUDA_ERROR_INVALID_VALUE);
    cr_assert_eq(d.stream_waits(), waits + 1);
    CU_OK(d.StreamSynchronize(s));
    CU_OK(d.EventDestroy(e0));
    CU_OK(d.EventDestroy(e1));
    CU_OK(d.EventDestroy(unrecorded));
    CU_OK(d.StreamDestroy(s));
    pop_and_release(c);
}

/* Stream capture as the Driver API documents it: work on a capturing stream is recorded, not
 * run, and a graph launch runs it (each time, on the memory as it is then); an allocation, a
 * synchronisation of the capturing stream or the legacy stream inside the capture is refused and
 * invalidates it; begin/end in the wrong state. */
Test(fake_cuda, stream_capture_records_and_a_graph_launch_replays) {
    CUcontext c = init_and_push();
    CUstream s = NULL;
    CU_OK(d.StreamCreate(&s, CU_STREAM_NON_BLOCKING));
    CUdeviceptr a, b;
    CU_OK(d.MemAlloc(&a, 64));
    CU_OK(d.MemAlloc(&b, 64));
    CU_OK(d.MemsetD8Async(a, 1, 64, s));
    CU_OK(d.MemsetD8Async(b, 0, 64, s));

    CUgraph g = NULL;
    CU_IS(d.StreamEndCapture(s, &g), CUDA_ERROR_ILLEGAL_STATE);
    CU_IS(d.StreamBeginCapture(NULL, CU_STREAM_CAPTURE_MODE_GLOBAL),
          CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED);
    CU_OK(d.StreamBeginCapture(s, CU_STREAM_CAPTURE_MODE_GLOBAL));
    CU_IS(d.StreamBeginCapture(s, CU_STREAM_CAPTURE_MODE_GLOBAL), CUDA_ERROR_ILLEGAL_STATE);
    CUstreamCaptureStatus st;
    CU_OK(d.StreamIsCapturing(s, &st));
    cr_assert_eq(st, CU_STREAM_CAPTURE_STATUS_ACTIVE);
    CU_OK(d.MemsetD8Async(a, 7, 32, s));
    CU_OK(d.MemcpyAsync(b, a, 64, s));
    CU_OK(d.StreamEndCapture(s, &g));
    cr_assert_not_null(g);
    unsigned char h[64];
    CU_OK(d.MemcpyAsync((CUdeviceptr)h, b, 64, s));
    cr_assert_eq(h[0], 0, "nothing ran during the capture");
    CUgraphExec x = NULL;
    CU_OK(d.GraphInstantiate(&x, g, 0));
    CU_OK(d.GraphLaunch(x, s));
    CU_OK(d.MemcpyAsync((CUdeviceptr)h, b, 64, s));
    cr_assert(h[0] == 7 && h[31] == 7 && h[32] == 1 && h[63] == 1, "the graph ran in order");
    CU_OK(d.MemsetD8Async(a, 2, 64, s)); /* the graph reads memory at its launch */
    CU_OK(d.GraphLaunch(x, s));
    CU_OK(d.MemcpyAsync((CUdeviceptr)h, b, 64, s));
    cr_assert(h[0] == 7 && h[32] == 2);

    /* prohibited calls: each refused, the capture invalidated, its end says so */
    CUdeviceptr p = 0;
    CU_OK(d.StreamBeginCapture(s, CU_STREAM_CAPTURE_MODE_GLOBAL));
    CU_IS(d.MemAlloc(&p, 64), CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED);
    CU_OK(d.StreamIsCapturing(s, &st));
    cr_assert_eq(st, CU_STREAM_CAPTURE_STATUS_INVALIDATED);
    CU_IS(d.MemsetD8Async(a, 0, 64, s), CUDA_ERROR_STREAM_CAPTURE_INVALIDATED);
    CUgraph bad = (CUgraph)1;
    CU_IS(d.StreamEndCapture(s, &bad), CUDA_ERROR_STREAM_CAPTURE_INVALIDATED);
    cr_assert_null(bad);
    CU_OK(d.StreamBeginCapture(s, CU_STREAM_CAPTURE_MODE_GLOBAL));
    CU_IS(d.StreamSynchronize(s), CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED);
    CU_IS(d.StreamEndCapture(s, &bad), CUDA_ERROR_STREAM_CAPTURE_INVALIDATED);
    CU_OK(d.StreamBeginCapture(s, CU_STREAM_CAPTURE_MODE_GLOBAL));
    CU_IS(d.MemsetD8Async(a, 0, 64, NULL), CUDA_ERROR_STREAM_CAPTURE_IMPLICIT);
    CU_IS(d.StreamEndCapture(s, &bad), CUDA_ERROR_STREAM_CAPTURE_INVALIDATED);
    /* RELAXED: an allocation is allowed */
    CU_OK(d.StreamBeginCapture(s, CU_STREAM_CAPTURE_MODE_RELAXED));
    CU_OK(d.MemAlloc(&p, 64));
    CU_OK(d.StreamEndCapture(s, &bad));
    CU_OK(d.GraphDestroy(bad));
    CU_OK(d.StreamSynchronize(s)); /* the stream works after the captures */

    /* an event recorded in a capture: the host cannot wait on it, nor can a stream outside the
     * capture (a join, not modelled); recorded again outside, both work */
    CUevent e = NULL;
    CUstream other = NULL;
    CU_OK(d.EventCreate(&e, CU_EVENT_DISABLE_TIMING));
    CU_OK(d.StreamCreate(&other, CU_STREAM_NON_BLOCKING));
    CU_OK(d.StreamBeginCapture(s, CU_STREAM_CAPTURE_MODE_GLOBAL));
    CU_OK(d.EventRecord(e, s));
    CU_OK(d.StreamWaitEvent(s, e, 0)); /* within the capture */
    CU_IS(d.StreamWaitEvent(other, e, 0), CUDA_ERROR_NOT_SUPPORTED);
    CU_OK(d.StreamEndCapture(s, &bad));
    CU_OK(d.GraphDestroy(bad));
    CU_IS(d.EventSynchronize(e), CUDA_ERROR_CAPTURED_EVENT);
    CU_OK(d.EventRecord(e, s));
    CU_OK(d.EventSynchronize(e));
    CU_OK(d.StreamWaitEvent(other, e, 0));
    CU_OK(d.StreamDestroy(other));
    CU_OK(d.EventDestroy(e));

    CU_OK(d.GraphExecDestroy(x));
    CU_OK(d.GraphDestroy(g));
    CU_OK(d.MemFree(p));
    CU_OK(d.MemFree(a));
    CU_OK(d.MemFree(b));
    CU_OK(d.StreamDestroy(s));
    pop_and_release(c);
}

/* loss_scale_kernel(float *scale, int32_t *growth_tracker, const float *found_inf,
 * double growth_factor, double backoff_factor, int64_t growth_interval) */
static void loss_scale(CUfunction f, CUdeviceptr buf, float scale, int tracker, float found,
                       float *scale_out, int *tracker_out) {
    struct {
        float scale;
        int32_t tracker;
        float found;
    } h = {scale, tracker, found};
    CU_OK(d.MemcpyAsync(buf, (CUdeviceptr)&h, sizeof h, NULL));
    CUdeviceptr ps = buf, pt = buf + 4, pf = buf + 8;
    double growth = 2.0, backoff = 0.5;
    int64_t interval = 2000;
    void *args[] = {&ps, &pt, &pf, &growth, &backoff, &interval};
    CU_OK(d.LaunchKernel(f, 1, 1, 1, 1, 1, 1, 0, NULL, args, NULL));
    CU_OK(d.MemcpyAsync((CUdeviceptr)&h, buf, sizeof h, NULL));
    *scale_out = h.scale;
    *tracker_out = h.tracker;
}

Test(fake_cuda, amp_fatbin_loads_and_loss_scale_kernel_runs) {
    CUcontext c = init_and_push();
    size_t n;
    void *image = read_file("kmux_gpu_amp_sm90.fatbin", &n);
    CUmodule m = NULL;
    CU_OK(d.ModuleLoadData(&m, image));
    free(image); /* the driver keeps its own copy */
    CUfunction f = NULL;
    CU_OK(d.ModuleGetFunction(&f, m, LOSS_SCALE));
    cr_assert(f != NULL);
    CUfunction g = NULL;
    CU_IS(d.ModuleGetFunction(&g, m, "_ZN10kmux_gpu_k17no_such_kernelEv"), CUDA_ERROR_NOT_FOUND);
    /* a kernel the fake emulates but this module does not carry (kmux_gpu_cast.cu's) */
    CU_IS(d.ModuleGetFunction(&g, m, "_ZN10kmux_gpu_k11amax_kernelILi1EEEvlPKvPf"),
          CUDA_ERROR_NOT_FOUND);

    CUdeviceptr buf;
    CU_OK(d.MemAlloc(&buf, 16));
    long before = d.launches();
    float s;
    int t;
    /* torch._amp_update_scale_: no inf, the interval's last step: the scale grows, the tracker
     * restarts */
    loss_scale(f, buf, 1024.0f, 1999, 0.0f, &s, &t);
    cr_assert_eq(s, 2048.0f);
    cr_assert_eq(t, 0);
    /* no inf within the interval: only the tracker counts */
    loss_scale(f, buf, 1024.0f, 5, 0.0f, &s, &t);
    cr_assert_eq(s, 1024.0f);
    cr_assert_eq(t, 6);
    /* an inf: backoff, tracker reset */
    loss_scale(f, buf, 1024.0f, 5, 1.0f, &s, &t);
    cr_assert_eq(s, 512.0f);
    cr_assert_eq(t, 0);
    cr_assert_eq(d.launches(), before + 3);

    CU_OK(d.MemFree(buf));
    CU_OK(d.ModuleUnload(m));
    pop_and_release(c);
}

Test(fake_cuda, bad_launch_dimensions_are_invalid_value) {
    CUcontext c = init_and_push();
    size_t n;
    void *image = read_file("kmux_gpu_amp_sm90.fatbin", &n);
    CUmodule m;
    CU_OK(d.ModuleLoadData(&m, image));
    free(image);
    CUfunction f;
    CU_OK(d.ModuleGetFunction(&f, m, LOSS_SCALE));
    CUdeviceptr buf;
    CU_OK(d.MemAlloc(&buf, 16));
    CUdeviceptr ps = buf, pt = buf + 4, pf = buf + 8;
    double growth = 2.0, backoff = 0.5;
    int64_t interval = 2000;
    void *args[] = {&ps, &pt, &pf, &growth, &backoff, &interval};
    void *extra[] = {CU_LAUNCH_PARAM_END};
    long before = d.launches();
    CU_IS(d.LaunchKernel(f, 0, 1, 1, 1, 1, 1, 0, NULL, args, NULL), CUDA_ERROR_INVALID_VALUE);
    CU_IS(d.LaunchKernel(f, 1, 1, 1, 1, 0, 1, 0, NULL, args, NULL), CUDA_ERROR_INVALID_VALUE);
    CU_IS(d.LaunchKernel(f, 1, 1, 1, 1025, 1, 1, 0, NULL, args, NULL), CUDA_ERROR_INVALID_VALUE);
    CU_IS(d.LaunchKernel(f, 1, 1, 1, 64, 32, 1, 0, NULL, args, NULL), CUDA_ERROR_INVALID_VALUE);
    CU_IS(d.LaunchKernel(f, 1, 65536, 1, 1, 1, 1, 0, NULL, args, NULL), CUDA_ERROR_INVALID_VALUE);
    CU_IS(d.LaunchKernel(f, 1, 1, 65536, 1, 1, 1, 0, NULL, args, NULL), CUDA_ERROR_INVALID_VALUE);
    CU_IS(d.LaunchKernel(f, 2147483648u, 1, 1, 1, 1, 1, 0, NULL, args, NULL),
          CUDA_ERROR_INVALID_VALUE);
    CU_IS(d.LaunchKernel(f, 1, 1, 1, 1, 1, 1, 0, NULL, args, extra), CUDA_ERROR_INVALID_VALUE);
    cr_assert_eq(d.launches(), before, "no refused launch ran");
    CU_OK(d.MemFree(buf));
    CU_OK(d.ModuleUnload(m));
    pop_and_release(c);
}

Test(fake_cuda, sm80_only_fatbin_is_no_binary_for_an_sm90_device) {
    CUcontext c = init_and_push();
    size_t n;
    void *image = read_file("kmux_gpu_amp_sm80.fatbin", &n);
    CUmodule m;
    CU_IS(d.ModuleLoadData(&m, image), CUDA_ERROR_NO_BINARY_FOR_GPU);
    free(image);
    static const char junk[256] = "not a fatbin";
    CU_IS(d.ModuleLoadData(&m, junk), CUDA_ERROR_INVALID_IMAGE);
    pop_and_release(c);
}

Test(fake_cuda, sm80_fatbin_loads_on_an_sm80_device) {
    setenv("KMUX_FAKE_CUDA_SM", "80", 1);
    CUcontext c = init_and_push();
    size_t n;
    void *image = read_file("kmux_gpu_amp_sm80.fatbin", &n);
    CUmodule m;
    CU_OK(d.ModuleLoadData(&m, image));
    CUfunction f;
    CU_OK(d.ModuleGetFunction(&f, m, LOSS_SCALE));
    CU_OK(d.ModuleUnload(m));
    free(image);
    pop_and_release(c);
}

Test(fake_cuda, forced_load_error) {
    setenv("KMUX_FAKE_CUDA_LOAD_ERROR", "218", 1);
    CUcontext c = init_and_push();
    size_t n;
    void *image = read_file("kmux_gpu_amp_sm90.fatbin", &n);
    CUmodule m;
    CU_IS(d.ModuleLoadData(&m, image), (CUresult)218);
    free(image);
    pop_and_release(c);
}

Test(fake_cuda, error_names_and_strings) {
    load();
    const char *s = NULL;
    CU_OK(d.GetErrorName(CUDA_ERROR_INVALID_CONTEXT, &s));
    cr_assert_str_eq(s, "CUDA_ERROR_INVALID_CONTEXT");
    CU_OK(d.GetErrorString(CUDA_ERROR_NO_BINARY_FOR_GPU, &s));
    cr_assert_str_eq(s, "no kernel image is available for execution on the device");
    CU_OK(d.GetErrorString(CUDA_ERROR_LAUNCH_FAILED, &s));
    cr_assert_str_eq(s, "unspecified launch failure");
    s = "x";
    CU_IS(d.GetErrorName((CUresult)9999, &s), CUDA_ERROR_INVALID_VALUE);
    cr_assert_null(s);
    s = "x";
    CU_IS(d.GetErrorString((CUresult)9999, &s), CUDA_ERROR_INVALID_VALUE);
    cr_assert_null(s);
}
