/*
 * cuda_diag.c - readiness facts of a CUDA device for kmux_device_diag_get (plugin ABI 2.1
 * device_diag slot): target id, the architectures this plugin carries code for, ECC, versions.
 * The runtime has no PCIe link query (that is NVML's); the link fields stay 0 ("unknown") and
 * kmux-check reads them from sysfs through the device's pci_bus_id.
 */
#include <stdio.h>

#include "cuda_backend.h"

/* Set by CMake from CMAKE_CUDA_ARCHITECTURES: "sm_80,sm_90,compute_90". */
#ifndef KMUX_CUDA_CODE_OBJECTS
#define KMUX_CUDA_CODE_OBJECTS ""
#endif

kmux_status kmux_cuda_device_diag(void *state, int device, kmux_device_diag *diag) {
    kmux_cuda_state *st = state;
    const kmux_cuda_device *d = &st->devices[device];
    snprintf(diag->target_id, sizeof diag->target_id, "sm_%d", d->sm);
    snprintf(diag->code_objects, sizeof diag->code_objects, "%s", KMUX_CUDA_CODE_OBJECTS);
    int rt = 0, drv = 0;
    if (cudaRuntimeGetVersion(&rt) == cudaSuccess)
        snprintf(diag->runtime_version, sizeof diag->runtime_version, "CUDA runtime %d.%d",
                 rt / 1000, (rt % 1000) / 10);
    if (cudaDriverGetVersion(&drv) == cudaSuccess)
        snprintf(diag->driver_version, sizeof diag->driver_version, "CUDA driver %d.%d", drv / 1000,
                 (drv % 1000) / 10);
    size_t lt = cublasLtGetVersion(), dnn = cudnnGetVersion();
    snprintf(diag->libraries, sizeof diag->libraries, "cuBLASLt %zu.%zu.%zu,cuDNN %zu.%zu.%zu",
             lt / 10000, (lt % 10000) / 100, lt % 100, dnn / 10000, (dnn % 10000) / 100, dnn % 100);
    /* Not /dev/nvidia<ordinal>: with CUDA_VISIBLE_DEVICES the ordinal is not the minor number. */
    snprintf(diag->device_nodes, sizeof diag->device_nodes, "/dev/nvidiactl,/dev/nvidia-uvm");
    /* cudaDevAttrEccEnabled: 1 when ECC is on. A device reporting 0 may lack ECC or have it
     * off; the runtime does not say which, so "supported" stays unknown then. */
    int ecc = 0;
    if (cudaDeviceGetAttribute(&ecc, cudaDevAttrEccEnabled, d->ordinal) == cudaSuccess) {
        diag->ecc_enabled = ecc ? 1 : 0;
        if (ecc) diag->ecc_supported = 1;
    } else {
        (void)cudaGetLastError();
    }
    return KMUX_OK;
}
