/*
 * cuda_backend.c - the CUDA backend's entry point: function table, init, probe, version and the
 * per-device library handles that are created on first use.
 *
 * init and probe never need a GPU: without a driver, probe answers 0 devices and the reason
 * ("no CUDA driver (libcuda.so.1 not found (tried ...))"). Nothing here creates a CUDA context:
 * contexts (hundreds of MiB of device memory each) appear only when memory, a stream or a plan
 * is first made on a device, so kmux-info and the probe of an unused backend stay cheap.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cuda_backend.h"
#include "gpu_kernels.h"
#include "kmux_sys_alloc.h"

/* Devices older than Ampere are not offered: the plugin's kernels are built for sm_80+ only. */
#define KMUX_CUDA_MIN_SM 80

/* "CUDA driver 13.0, cuBLASLt 13.1.0, cuDNN 9.19.0" once the libraries are loaded; before,
 * "cuBLASLt found (loaded on first use)" (kmux_device_props_get loads them and reports their
 * versions); "no CUDA driver" / "cuDNN unavailable" for a library that is missing or broken. */
static void format_version(kmux_cuda_state *st) {
    int drv = 0, lt_there = 0, dnn_there = 0;
    (void)kmux_cuda_libs_present(&lt_there, &dnn_there);
    char d[32] = "no CUDA driver", lt[48] = "cuBLASLt unavailable", dnn[48] = "cuDNN unavailable";
    if (lt_there && !kmux_cuda_lib.lt_ok)
        snprintf(lt, sizeof lt, "cuBLASLt found (loaded on first use)");
    if (dnn_there && !kmux_cuda_lib.dnn_ok)
        snprintf(dnn, sizeof dnn, "cuDNN found (loaded on first use)");
    if (kmux_cuda_lib.drv_ok && cuDriverGetVersion(&drv) == CUDA_SUCCESS)
        snprintf(d, sizeof d, "CUDA driver %d.%d", drv / 1000, (drv % 1000) / 10);
    if (kmux_cuda_lib.lt_ok) {
        size_t v = cublasLtGetVersion();
        snprintf(lt, sizeof lt, "cuBLASLt %zu.%zu.%zu", v / 10000, (v % 10000) / 100, v % 100);
    }
    if (kmux_cuda_lib.dnn_ok) {
        size_t v = cudnnGetVersion();
        snprintf(dnn, sizeof dnn, "cuDNN %zu.%zu.%zu", v / 10000, (v % 10000) / 100, v % 100);
    }
    snprintf(st->version, sizeof st->version, "%s, %s, %s", d, lt, dnn);
}

static kmux_status cuda_init(const kmux_backend_host *host, void **state) {
    kmux_sys_alloc_use_host(host); /* its allocations count with the core's (KMUX_FAULT_ALLOC) */
    kmux_cuda_state *st = kmux_sys_calloc(1, sizeof *st);
    if (!st) return host->set_error(KMUX_ERR_OUT_OF_MEMORY, "cuda init: out of memory");
    st->gpu = kmux_cuda_gpu_plugin;
    st->gpu.host = host;
    st->host = host;
    /* the driver, and where cuBLASLt and cuDNN are: they are opened by the first plan */
    (void)kmux_cuda_driver_load();
    (void)kmux_cuda_libs_locate();
    format_version(st);
    *state = st;
    return KMUX_OK;
}

static void cuda_fini(void *state) {
    kmux_cuda_state *st = state;
    if (!st) return;
    for (int i = 0; i < st->device_count; i++)
        kmux_gpu_modules_unload(st, i);
    for (int i = 0; i < st->device_count; i++) {
        kmux_cuda_device *d = &st->devices[i];
        if (d->lt || d->dnn) {
            kmux_cuda_guard g;
            if (kmux_cuda_enter(st, i, "cuda fini", &g) == KMUX_OK) {
                if (d->dnn) cudnnDestroy(d->dnn);
                if (d->lt) cublasLtDestroy(d->lt);
                kmux_cuda_leave(&g);
            }
        }
        pthread_mutex_destroy(&d->lock);
    }
    kmux_cuda_guard_release(st);
    free(st->devices);
    free(st);
}

/* Writes why there is no usable device, and which cuBLASLt / cuDNN files were opened (or what
 * was tried), so that a host without a GPU still tells whether the libraries are in place.
 * e: what cuInit / cuDeviceGetCount answered; CUDA_ERROR_NOT_FOUND when libcuda.so.1 itself was
 * not opened. */
/* Why a driver older than the CUDA major version the plugin was built with offers no device. */
static void driver_too_old_reason(char *reason, size_t size) {
    int v = 0;
    (void)cuDriverGetVersion(&v);
    snprintf(
        reason, size,
        "the CUDA driver (%d.%d) is older than the CUDA %d.%d kmux-cuda was built with: update "
        "the driver, or build kmux with a CUDA %d toolkit",
        v / 1000, (v % 1000) / 10, CUDA_VERSION / 1000, (CUDA_VERSION % 1000) / 10, v / 1000);
}

static void no_device_reason(CUresult e, char *reason, size_t size) {
    char libs[3300], drv[600], buf[32];
    kmux_cuda_libs_describe(libs, sizeof libs);
    const char *desc = NULL;
    if (!kmux_cuda_lib.drv_ok) {
        kmux_cuda_driver_describe(drv, sizeof drv);
        snprintf(reason, size, "no CUDA driver (libcuda.so.1 %s)", drv);
    } else {
        if (cuGetErrorString(e, &desc) != CUDA_SUCCESS || !desc) desc = "no description";
        const char *name = kmux_cuda_error_name(e, buf, sizeof buf);
        if (e == CUDA_ERROR_NO_DEVICE)
            snprintf(reason, size, "no CUDA device (%s: %s)", name, desc);
        else if (e == CUDA_ERROR_NOT_INITIALIZED) /* cuInit in a child of an initialised parent */
            snprintf(reason, size,
                     "CUDA cannot be initialised in this process (%s: %s): was CUDA initialised "
                     "in a parent before fork()? (kmux.h, fork())",
                     name, desc);
        else if (e == CUDA_ERROR_STUB_LIBRARY || e == CUDA_ERROR_SYSTEM_DRIVER_MISMATCH)
            snprintf(reason, size, "no usable CUDA driver (%s: %s)", name, desc);
        else
            snprintf(reason, size, "cuInit / cuDeviceGetCount failed (%s (%d): %s)", name, (int)e,
                     desc);
    }
    size_t len = strlen(reason);
    if (len + 1 < size) snprintf(reason + len, size - len, "; %s", libs);
}

/* Writes which of cuBLASLt / cuDNN could not be opened, and where each was looked for. */
static void no_library_reason(char *reason, size_t size) {
    char libs[3300];
    int lt = 0, dnn = 0;
    (void)kmux_cuda_libs_present(&lt, &dnn);
    kmux_cuda_libs_describe(libs, sizeof libs);
    snprintf(reason, size, "%s%s%s missing (%s)", lt ? "" : "cuBLASLt", !lt && !dnn ? " and " : "",
             dnn ? "" : "cuDNN", libs);
}

static kmux_status cuda_probe(void *state, int *device_count, char *reason, size_t reason_size) {
    kmux_cuda_state *st = state;
    if (st->probed) {
        *device_count = st->device_count;
        if (st->device_count == 0 && reason_size) {
            if (st->driver_too_old)
                driver_too_old_reason(reason, reason_size);
            else if (st->probe_error != CUDA_SUCCESS)
                no_device_reason(st->probe_error, reason, reason_size);
            else if (!kmux_cuda_libs_locate())
                no_library_reason(reason, reason_size);
            else
                snprintf(reason, reason_size, "no CUDA device of sm_%d or newer", KMUX_CUDA_MIN_SM);
        }
        return KMUX_OK;
    }
    st->probed = 1;
    *device_count = 0;
    int n = 0;
    CUresult e = kmux_cuda_driver_load() ? cuInit(0) : CUDA_ERROR_NOT_FOUND;
    if (e == CUDA_SUCCESS) e = cuDeviceGetCount(&n);
    if (e == CUDA_SUCCESS && n <= 0) e = CUDA_ERROR_NO_DEVICE;
    if (e != CUDA_SUCCESS) {
        st->probe_error = e;
        if (reason_size) no_device_reason(e, reason, reason_size);
        return KMUX_OK;
    }
    int drv = 0;
    if (cuDriverGetVersion(&drv) == CUDA_SUCCESS && drv / 1000 < CUDA_VERSION / 1000) {
        /* the fatbins, cuBLASLt and cuDNN of a newer major version need its driver */
        st->driver_too_old = 1;
        if (reason_size) driver_too_old_reason(reason, reason_size);
        return KMUX_OK;
    }
    if (!kmux_cuda_libs_locate()) { /* no device is offered without both libraries' files */
        if (reason_size) no_library_reason(reason, reason_size);
        return KMUX_OK;
    }
    st->devices = kmux_sys_calloc((size_t)n, sizeof *st->devices);
    if (!st->devices)
        return st->host->set_error(KMUX_ERR_OUT_OF_MEMORY, "cuda probe: out of memory");
    char skipped[256] = "";
    for (int ord = 0; ord < n; ord++) {
        int major = 0, minor = 0, pools = 0;
        CUdevice dev = 0;
        if (cuDeviceGet(&dev, ord) != CUDA_SUCCESS ||
            cuDeviceGetAttribute(&major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, dev) !=
                CUDA_SUCCESS ||
            cuDeviceGetAttribute(&minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, dev) !=
                CUDA_SUCCESS)
            continue;
        if (major * 10 + minor < KMUX_CUDA_MIN_SM) {
            size_t len = strlen(skipped);
            snprintf(skipped + len, sizeof skipped - len, "%sdevice %d is sm_%d%d", len ? ", " : "",
                     ord, major, minor);
            continue;
        }
        if (cuDeviceGetAttribute(&pools, CU_DEVICE_ATTRIBUTE_MEMORY_POOLS_SUPPORTED, dev) !=
            CUDA_SUCCESS)
            pools = 0;
        kmux_cuda_device *d = &st->devices[st->device_count++];
        d->ordinal = ord;
        d->dev = dev;
        d->sm = major * 10 + minor;
        d->memory_pools = pools;
        d->default_workspace = d->sm >= 90 ? 32 * KMUX_CUDA_MIB : 4 * KMUX_CUDA_MIB;
        pthread_mutex_init(&d->lock, NULL);
    }
    *device_count = st->device_count;
    if (st->device_count == 0 && reason_size)
        snprintf(reason, reason_size, "no CUDA device of sm_%d or newer (%s); kmux-cuda carries %s",
                 KMUX_CUDA_MIN_SM, skipped, kmux_cuda_carried_archs());
    return KMUX_OK;
}

static const char *cuda_version(void *state) {
    return ((kmux_cuda_state *)state)->version;
}

kmux_status kmux_cuda_need_libs(const kmux_cuda_state *st, const char *fn, int device) {
    if (kmux_cuda_libs_load()) return KMUX_OK;
    char libs[3300];
    kmux_cuda_libs_describe(libs, sizeof libs);
    return kmux_cuda_error(st, KMUX_ERR_DEVICE_UNAVAILABLE,
                           "%s: cuda:%d cannot be used: its libraries were found by the probe but "
                           "do not load: %s",
                           fn, device, libs);
}

kmux_status kmux_cuda_lt_handle(kmux_cuda_state *st, int device, cublasLtHandle_t *lt) {
    kmux_cuda_device *d = &st->devices[device];
    kmux_status s = KMUX_OK;
    pthread_mutex_lock(&d->lock);
    if (!d->lt) {
        cublasStatus_t cs = cublasLtCreate(&d->lt);
        if (cs != CUBLAS_STATUS_SUCCESS) {
            d->lt = NULL;
            s = kmux_cuda_fail_lt(st, cs, "cublasLtCreate on cuda:%d", device);
        }
    }
    *lt = d->lt;
    pthread_mutex_unlock(&d->lock);
    return s;
}

kmux_status kmux_cuda_dnn_query_handle(kmux_cuda_state *st, int device, cudnnHandle_t *dnn) {
    kmux_cuda_device *d = &st->devices[device];
    if (!d->dnn) {
        cudnnStatus_t cs = cudnnCreate(&d->dnn);
        if (cs != CUDNN_STATUS_SUCCESS) {
            d->dnn = NULL;
            return kmux_cuda_fail_dnn(st, cs, "cudnnCreate on cuda:%d", device);
        }
    }
    *dnn = d->dnn;
    return KMUX_OK;
}

static const kmux_matmul_ops cuda_matmul_ops = {
    .plan_create = kmux_cuda_matmul_plan_create,
    .execute = kmux_cuda_matmul_execute,
    .plan_info = kmux_cuda_matmul_plan_info,
    .plan_destroy = kmux_cuda_matmul_plan_destroy,
};

static const kmux_conv2d_ops cuda_conv2d_ops = {
    .plan_create = kmux_cuda_conv2d_plan_create,
    .execute = kmux_cuda_conv2d_execute,
    .plan_info = kmux_cuda_conv_plan_info,
    .plan_destroy = kmux_cuda_conv_plan_destroy,
};

static const kmux_backend_ops cuda_ops = {
    KMUX_GPU_SHARED_SLOTS,
    .name = "cuda",
    .init = cuda_init,
    .fini = cuda_fini,
    .probe = cuda_probe,
    .version = cuda_version,
    .device_props = kmux_cuda_device_props,
    .device_caps = kmux_cuda_device_caps,
    .stream_destroy = kmux_cuda_stream_destroy,
    .matmul = &cuda_matmul_ops,
    .conv2d = &cuda_conv2d_ops,
    .matmul_degenerate = kmux_cuda_matmul_degenerate,
    .device_diag = kmux_cuda_device_diag,
};

KMUX_BACKEND_EXPORT const kmux_backend_ops *kmux_backend_entry(void);
KMUX_BACKEND_EXPORT const kmux_backend_ops *kmux_backend_entry(void) {
    return &cuda_ops;
}
