/*
 * cuda_host.c - page-locked host memory of the CUDA backend (plugin ABI 2.2 host_alloc /
 * host_free): cuMemHostAlloc / cuMemFreeHost with the device entered, so that the allocation
 * belongs to that device's context (portable flag: usable from every context).
 */
#include "cuda_backend.h"

kmux_status kmux_cuda_host_alloc(void *state, int device, size_t bytes, void **ptr) {
    kmux_cuda_state *st = state;
    kmux_cuda_guard g;
    kmux_status s = kmux_cuda_enter(st, device, "kmux_host_malloc", &g);
    if (s != KMUX_OK) return s;
    void *p = NULL;
    CUresult e = cuMemHostAlloc(&p, bytes, CU_MEMHOSTALLOC_PORTABLE);
    kmux_cuda_leave(&g);
    if (e != CUDA_SUCCESS)
        return kmux_cuda_fail(st, e, "kmux_host_malloc: cuMemHostAlloc(%zu bytes) on cuda:%d",
                              bytes, device);
    *ptr = p;
    return KMUX_OK;
}

kmux_status kmux_cuda_host_free(void *state, int device, void *ptr) {
    kmux_cuda_state *st = state;
    kmux_cuda_guard g;
    kmux_status s = kmux_cuda_enter(st, device, "kmux_host_free", &g);
    if (s != KMUX_OK) return s;
    CUresult e = cuMemFreeHost(ptr);
    kmux_cuda_leave(&g);
    if (e != CUDA_SUCCESS)
        return kmux_cuda_fail(st, e, "kmux_host_free: cuMemFreeHost(%p) on cuda:%d", ptr, device);
    return KMUX_OK;
}
