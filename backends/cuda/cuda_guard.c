/*
 * cuda_guard.c - device selection for one kmux call without touching the caller's state.
 *
 * The current context is per-thread state that belongs to the caller (a trainer's
 * cudaSetDevice makes its device's primary context current). kmux_cuda_enter makes the kmux
 * device's primary context current: nothing to do when it is current already (the common case
 * of a trainer on that device), else it is pushed, and kmux_cuda_leave pops it, leaving the
 * thread with exactly the context it came with, none included (no hidden context on GPU 0 for a
 * user of cuda:1 only). Primary contexts are retained on first use and released at fini; they
 * are the contexts the CUDA runtime, cuBLASLt, cuDNN and PyTorch use, so memory, streams and
 * events pass between them unchanged.
 */
#include "cuda_backend.h"

/* The device's primary context, retained once (under the device lock). */
static kmux_status primary_of(const kmux_cuda_state *st, int device, const char *fn,
                              CUcontext *ctx) {
    kmux_cuda_device *d = &st->devices[device];
    kmux_status s = KMUX_OK;
    pthread_mutex_lock(&d->lock);
    if (!d->primary) {
        CUcontext c = NULL;
        CUresult r = cuDevicePrimaryCtxRetain(&c, d->dev);
        if (r == CUDA_SUCCESS)
            d->primary = c;
        else
            s = kmux_cuda_fail(st, r, "%s: cuDevicePrimaryCtxRetain(device %d) for cuda:%d", fn,
                               d->ordinal, device);
    }
    *ctx = d->primary;
    pthread_mutex_unlock(&d->lock);
    return s;
}

kmux_status kmux_cuda_enter(const kmux_cuda_state *st, int device, const char *fn,
                            kmux_cuda_guard *g) {
    g->pushed = 0;
    CUcontext want = NULL, cur = NULL;
    kmux_status s = primary_of(st, device, fn, &want);
    if (s != KMUX_OK) return s;
    if (cuCtxGetCurrent(&cur) == CUDA_SUCCESS && cur == want) return KMUX_OK;
    CUresult r = cuCtxPushCurrent(want);
    if (r != CUDA_SUCCESS)
        return kmux_cuda_fail(st, r, "%s: cuCtxPushCurrent for cuda:%d", fn, device);
    g->pushed = 1;
    return KMUX_OK;
}

void kmux_cuda_leave(const kmux_cuda_guard *g) {
    if (!g->pushed) return;
    CUcontext c = NULL;
    (void)cuCtxPopCurrent(&c);
}

void kmux_cuda_guard_release(kmux_cuda_state *st) {
    for (int i = 0; i < st->device_count; i++) {
        kmux_cuda_device *d = &st->devices[i];
        if (!d->primary) continue;
        (void)cuDevicePrimaryCtxRelease(d->dev);
        d->primary = NULL;
    }
}
