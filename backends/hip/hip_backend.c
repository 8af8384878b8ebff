/*
 * hip_backend.c - the HIP backend's entry point: function table, init, probe, version.
 *
 * init never fails for want of ROCm; probe answers 0 devices and the reason:
 *   "HIP runtime not found (KMUX_HIP_RUNTIME not set; no libamdhip64.so.7, libamdhip64.so.6 or
 *    libamdhip64.so.5 on the loader path or in /opt/rocm/lib)",
 *   "HIP runtime not found (KMUX_HIP_RUNTIME=/x/libamdhip64.so: ...)" (an override that fails),
 *   "no AMD GPU (hipErrorNoDevice)",
 *   "kmux-hip carries code objects for gfx90a,gfx942,gfx1100; device 0 is gfx1030 (needs
 *    gfx1030)",
 *   "kmux-hip was built without code objects (<why, from configure>)".
 * Probe creates no context and loads no module: the device's full target id (gcnArchName,
 * "gfx942:sramecc+:xnack-") is matched against the targets the build carries by the target-id
 * rules of hip_target.h; modules are loaded on a device's first launch.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpu_kernels.h"
#include "hip_backend.h"
#include "hip_target.h"
#include "kmux_sys_alloc.h"

static kmux_status hip_init(const kmux_backend_host *host, void **state) {
    kmux_sys_alloc_use_host(host); /* its allocations count with the core's (KMUX_FAULT_ALLOC) */
    kmux_hip_state *st = kmux_sys_calloc(1, sizeof *st);
    if (!st) return host->set_error(KMUX_ERR_OUT_OF_MEMORY, "hip init: out of memory");
    st->gpu = kmux_hip_gpu_plugin;
    st->gpu.host = host;
    st->host = host;
    kmux_hip_rocblas_init(st);
    kmux_hip_blaslt_init(st);
    kmux_hip_miopen_init(st);
    snprintf(st->version, sizeof st->version, "HIP runtime not loaded");
    *state = st;
    return KMUX_OK;
}

static void hip_fini(void *state) {
    kmux_hip_state *st = state;
    if (!st) return;
    /* first: they enter the devices to destroy their handles */
    kmux_hip_blaslt_fini(st);
    kmux_hip_miopen_fini(st);
    for (int i = 0; i < st->device_count; i++) {
        kmux_gpu_modules_unload(st, i);
        pthread_mutex_destroy(&st->devices[i].lock);
    }
    free(st->devices);
    kmux_hip_rocblas_fini(st);
    kmux_hip_runtime_close(st);
    free(st);
}

static kmux_status do_probe(kmux_hip_state *st) {
    if (!kmux_hip_runtime_open(st)) {
        snprintf(st->probe_reason, sizeof st->probe_reason, "HIP runtime not found (%s)",
                 st->load_error);
        return KMUX_OK;
    }
    int rt = 0;
    if (st->api.hipRuntimeGetVersion(&rt) != KMUX_HIP_SUCCESS) rt = 0;
    st->runtime_version = rt; /* picks the hipDeviceProp_t call (hip_props.c) */
    /* HIP_VERSION = major * 10^7 + minor * 10^5 + patch */
    snprintf(st->version, sizeof st->version, "HIP runtime %d.%d (%s)", rt / 10000000,
             (rt / 100000) % 100, st->lib_name);
    int n = 0;
    kmux_hip_error e = st->api.hipGetDeviceCount(&n);
    if (e == KMUX_HIP_ERROR_NO_DEVICE || (e == KMUX_HIP_SUCCESS && n <= 0)) {
        snprintf(st->probe_reason, sizeof st->probe_reason, "no AMD GPU (%s)",
                 e == KMUX_HIP_SUCCESS ? "hipGetDeviceCount gave 0 devices"
                                       : kmux_hip_error_name(st, e));
        return KMUX_OK;
    }
    if (e != KMUX_HIP_SUCCESS) {
        const char *d = st->api.hipGetErrorString(e);
        snprintf(st->probe_reason, sizeof st->probe_reason,
                 "hipGetDeviceCount failed (%s (%d): %s)", kmux_hip_error_name(st, e), (int)e,
                 d ? d : "");
        return KMUX_OK;
    }
    const char *archs = kmux_hip_carried_archs();
    if (!archs[0]) {
        snprintf(st->probe_reason, sizeof st->probe_reason,
                 "kmux-hip was built without code objects (%s); rebuild with the gfx942 toolchain",
                 KMUX_HIP_NO_CODE_OBJECTS_REASON);
        return KMUX_OK;
    }
    st->devices = kmux_sys_calloc((size_t)n, sizeof *st->devices);
    if (!st->devices)
        return st->host->set_error(KMUX_ERR_OUT_OF_MEMORY,
                                   "hip probe: out of memory (%d devices' records)", n);
    char skipped[480] = "";
    for (int ord = 0; ord < n; ord++) {
        char arch[32], id[64], needs[96];
        kmux_hip_read_arch(st, ord, arch, sizeof arch, id, sizeof id);
        if (!kmux_hip_target_find(id, archs, NULL, 0)) {
            size_t len = strlen(skipped);
            if (len + 1 < sizeof skipped)
                snprintf(skipped + len, sizeof skipped - len, "%sdevice %d is %s (%s%s)",
                         len ? ", " : "", ord, id, strchr(id, '?') ? "unread: " : "needs ",
                         strchr(id, '?') ? kmux_hip_arch_unread_reason(st)
                                         : kmux_hip_target_needs(id, needs, sizeof needs));
            continue;
        }
        kmux_hip_device *d = &st->devices[st->device_count++];
        d->ordinal = ord;
        snprintf(d->arch, sizeof d->arch, "%s", arch);
        snprintf(d->target_id, sizeof d->target_id, "%s", id);
        (void)st->api.hipDeviceGetAttribute(&d->integrated, KMUX_HIP_ATTR_INTEGRATED, ord);
        if (st->api.hipDeviceGetAttribute(&d->wave, KMUX_HIP_ATTR_WARP_SIZE, ord) != 0)
            d->wave = 64;
        pthread_mutex_init(&d->lock, NULL);
    }
    if (st->device_count == 0)
        snprintf(st->probe_reason, sizeof st->probe_reason,
                 "kmux-hip carries code objects for %s; %s", archs, skipped);
    else if (skipped[0] && st->host->verbose >= 2)
        st->host->trace(2, "probe,hip,skipped,%s (code objects for %s)", skipped, archs);
    return KMUX_OK;
}

static kmux_status hip_probe(void *state, int *device_count, char *reason, size_t reason_size) {
    kmux_hip_state *st = state;
    if (!st->probed) {
        kmux_status e = do_probe(st);
        if (e != KMUX_OK) return e;
        st->probed = 1;
    }
    *device_count = st->device_count;
    if (st->device_count == 0 && reason_size) snprintf(reason, reason_size, "%s", st->probe_reason);
    return KMUX_OK;
}

static const char *hip_version(void *state) {
    return ((kmux_hip_state *)state)->version;
}

static const kmux_backend_ops hip_ops = {
    KMUX_GPU_SHARED_SLOTS,
    .name = "hip",
    .init = hip_init,
    .fini = hip_fini,
    .probe = hip_probe,
    .version = hip_version,
    .device_props = kmux_hip_device_props,
    .device_caps = kmux_hip_device_caps,
    .device_diag = kmux_hip_device_diag,
    .stream_destroy = kmux_hip_stream_destroy,
    .matmul = &kmux_hip_matmul_ops,
    .conv2d = &kmux_hip_conv2d_ops,
    .matmul_degenerate = kmux_hip_matmul_degenerate,
};

KMUX_BACKEND_EXPORT const kmux_backend_ops *kmux_backend_entry(void);
KMUX_BACKEND_EXPORT const kmux_backend_ops *kmux_backend_entry(void) {
    return &hip_ops;
}
