/*
 * cuda_guard.c - device selection for one kmux call without touching the caller's state.
 *
 * The runtime's current device is per-thread state that belongs to the caller. On a thread that
 * has a context, kmux_cuda_enter switches with cudaSetDevice and kmux_cuda_leave switches back.
 * On a thread that never chose a device, cudaGetDevice answers 0 although nothing is current;
 * "restoring" device 0 there would create a context on GPU 0 (hundreds of MiB) for a user of
 * cuda:1 only. Such a thread instead gets the device's primary context pushed (the runtime uses
 * a current context as it finds it) and popped afterwards, leaving it as it came. Whether a
 * context is current is the driver's answer (cuCtxGetCurrent), reached through the runtime's
 * driver entry points, so the plugin still links no libcuda. The decision itself is
 * kmux_cuda_guard_decide (cuda_host_logic.c).
 */
#include <string.h>

#include <cuda.h>

#include "cuda_backend.h"
#include "cuda_host_logic.h"

typedef CUresult (*ctx_get_fn)(CUcontext *);
typedef CUresult (*ctx_push_fn)(CUcontext);
typedef CUresult (*ctx_pop_fn)(CUcontext *);
typedef CUresult (*primary_retain_fn)(CUcontext *, CUdevice);
typedef CUresult (*primary_release_fn)(CUdevice);
typedef CUresult (*device_get_fn)(CUdevice *, int);

static struct {
    ctx_get_fn get;
    ctx_push_fn push;
    ctx_pop_fn pop;
    primary_retain_fn retain;
    primary_release_fn release;
    device_get_fn device_get;
    int ok;
} drv;
static pthread_once_t drv_once = PTHREAD_ONCE_INIT;

static void *entry(const char *name) {
    void *fn = NULL;
    enum cudaDriverEntryPointQueryResult q = cudaDriverEntryPointSymbolNotFound;
#if CUDART_VERSION >= 12050
    cudaError_t e = cudaGetDriverEntryPointByVersion(name, &fn, 12000, cudaEnableDefault, &q);
#else
    cudaError_t e = cudaGetDriverEntryPoint(name, &fn, cudaEnableDefault, &q);
#endif
    if (e != cudaSuccess || q != cudaDriverEntryPointSuccess) {
        (void)cudaGetLastError();
        return NULL;
    }
    return fn;
}

/* An entry point into a function pointer (POSIX: same representation; ISO C has no cast). */
#define LOAD(field, name)                                                                          \
    do {                                                                                           \
        void *v_ = entry(name);                                                                    \
        memcpy(&drv.field, &v_, sizeof drv.field);                                                 \
    } while (0)

static void load_driver(void) {
    LOAD(get, "cuCtxGetCurrent");
    LOAD(push, "cuCtxPushCurrent");
    LOAD(pop, "cuCtxPopCurrent");
    LOAD(retain, "cuDevicePrimaryCtxRetain");
    LOAD(release, "cuDevicePrimaryCtxRelease");
    LOAD(device_get, "cuDeviceGet");
    drv.ok = drv.get && drv.push && drv.pop && drv.retain && drv.release && drv.device_get;
}

/* The device's primary context, retained once (under the device lock). */
static kmux_status primary_of(const kmux_cuda_state *st, int device, const char *fn,
                              CUcontext *ctx) {
    kmux_cuda_device *d = &st->devices[device];
    kmux_status s = KMUX_OK;
    pthread_mutex_lock(&d->lock);
    if (!d->primary) {
        CUdevice dev = 0;
        CUcontext c = NULL;
        CUresult r = drv.device_get(&dev, d->ordinal);
        if (r == CUDA_SUCCESS) r = drv.retain(&c, dev);
        if (r == CUDA_SUCCESS)
            d->primary = c;
        else
            s = kmux_cuda_error(
                st, r == CUDA_ERROR_OUT_OF_MEMORY ? KMUX_ERR_OUT_OF_MEMORY : KMUX_ERR_DEVICE,
                "%s: cuDevicePrimaryCtxRetain(%d) for cuda:%d failed (CUresult %d)", fn, d->ordinal,
                device, (int)r);
    }
    *ctx = d->primary;
    pthread_mutex_unlock(&d->lock);
    return s;
}

kmux_status kmux_cuda_enter(const kmux_cuda_state *st, int device, const char *fn,
                            kmux_cuda_guard *g) {
    pthread_once(&drv_once, load_driver);
    int ordinal = st->devices[device].ordinal;
    int cur = -1;
    g->action = KMUX_CUDA_GUARD_NONE;
    g->previous = -1;
    if (cudaGetDevice(&cur) != cudaSuccess) {
        (void)cudaGetLastError();
        cur = -1;
    }
    int known = 0, had = 0;
    if (drv.ok) {
        CUcontext c = NULL;
        CUresult r = drv.get(&c);
        /* an uninitialised driver has no context on any thread */
        known = r == CUDA_SUCCESS || r == CUDA_ERROR_NOT_INITIALIZED;
        had = r == CUDA_SUCCESS && c != NULL;
    }
    kmux_cuda_guard_action a = kmux_cuda_guard_decide(known, had, cur, ordinal);
    if (a == KMUX_CUDA_GUARD_NONE) return KMUX_OK;
    if (a == KMUX_CUDA_GUARD_PUSH_POP) {
        CUcontext ctx;
        kmux_status s = primary_of(st, device, fn, &ctx);
        if (s != KMUX_OK) return s;
        CUresult r = drv.push(ctx);
        if (r != CUDA_SUCCESS)
            return kmux_cuda_error(st, KMUX_ERR_DEVICE,
                                   "%s: cuCtxPushCurrent for cuda:%d failed (CUresult %d)", fn,
                                   device, (int)r);
        g->action = a;
        return KMUX_OK;
    }
    cudaError_t e = cudaSetDevice(ordinal);
    if (e != cudaSuccess)
        return kmux_cuda_fail(st, e, "%s: cudaSetDevice(%d) for cuda:%d", fn, ordinal, device);
    g->action = a;
    g->previous = cur;
    return KMUX_OK;
}

void kmux_cuda_leave(const kmux_cuda_guard *g) {
    if (g->action == KMUX_CUDA_GUARD_PUSH_POP) {
        CUcontext c = NULL;
        (void)drv.pop(&c);
    } else if (g->action == KMUX_CUDA_GUARD_SET_RESTORE && g->previous >= 0) {
        (void)cudaSetDevice(g->previous);
        (void)cudaGetLastError();
    }
}

void kmux_cuda_guard_release(kmux_cuda_state *st) {
    for (int i = 0; i < st->device_count; i++) {
        kmux_cuda_device *d = &st->devices[i];
        if (!d->primary) continue;
        CUdevice dev = 0;
        if (drv.device_get(&dev, d->ordinal) == CUDA_SUCCESS) (void)drv.release(dev);
        d->primary = NULL;
    }
}
