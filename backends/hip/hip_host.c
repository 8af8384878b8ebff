/*
 * hip_host.c - page-locked host memory of the HIP backend (plugin ABI 2.2 host_alloc /
 * host_free): hipHostMalloc / hipHostFree with the device made current, so that the pages are
 * mapped for that device's DMA engines.
 */
#include "hip_backend.h"

#define KMUX_HIP_HOST_MALLOC_DEFAULT 0u /* hipHostMallocDefault */

kmux_status kmux_hip_host_alloc(void *state, int device, size_t bytes, void **ptr) {
    kmux_hip_state *st = state;
    kmux_hip_guard g;
    kmux_status ks = kmux_hip_enter(st, device, "kmux_host_malloc", &g);
    if (ks != KMUX_OK) return ks;
    void *p = NULL;
    kmux_hip_error e = st->api.hipHostMalloc(&p, bytes, KMUX_HIP_HOST_MALLOC_DEFAULT);
    kmux_hip_leave(st, &g);
    if (e != KMUX_HIP_SUCCESS)
        return kmux_hip_fail(st, e, "kmux_host_malloc: hipHostMalloc(%zu bytes) on hip:%d", bytes,
                             device);
    *ptr = p;
    return KMUX_OK;
}

kmux_status kmux_hip_host_free(void *state, int device, void *ptr) {
    kmux_hip_state *st = state;
    kmux_hip_guard g;
    kmux_status ks = kmux_hip_enter(st, device, "kmux_host_free", &g);
    if (ks != KMUX_OK) return ks;
    kmux_hip_error e = st->api.hipHostFree(ptr);
    kmux_hip_leave(st, &g);
    if (e != KMUX_HIP_SUCCESS)
        return kmux_hip_fail(st, e, "kmux_host_free: hipHostFree(%p) on hip:%d", ptr, device);
    return KMUX_OK;
}
