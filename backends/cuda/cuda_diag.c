/*
 * cuda_diag.c - readiness facts of a CUDA device for kmux_device_diag_get (plugin ABI 2.1
 * device_diag slot): target id, the architectures this plugin carries code for, ECC, versions.
 * The driver has no PCIe link query (that is NVML's); the link fields stay 0 ("unknown") and
 * kmux-check reads them from sysfs through the device's pci_bus_id.
 */
#include <stdio.h>

#include "cuda_backend.h"

kmux_status kmux_cuda_device_diag(void *state, int device, kmux_device_diag *diag) {
    kmux_cuda_state *st = state;
    const kmux_cuda_device *d = &st->devices[device];
    snprintf(diag->target_id, sizeof diag->target_id, "sm_%d", d->sm);
    snprintf(diag->code_objects, sizeof diag->code_objects, "%s", kmux_cuda_carried_archs());
    int drv = 0;
    /* no CUDA runtime in the plugin: the driver API, as compiled against cuda.h */
    snprintf(diag->runtime_version, sizeof diag->runtime_version,
             "none (CUDA driver API, kmux-cuda built with CUDA %d.%d)", CUDA_VERSION / 1000,
             (CUDA_VERSION % 1000) / 10);
    if (cuDriverGetVersion(&drv) == CUDA_SUCCESS)
        snprintf(diag->driver_version, sizeof diag->driver_version, "CUDA driver %d.%d", drv / 1000,
                 (drv % 1000) / 10);
    if (kmux_cuda_libs_load()) {
        size_t lt = cublasLtGetVersion(), dnn = cudnnGetVersion();
        snprintf(diag->libraries, sizeof diag->libraries, "cuBLASLt %zu.%zu.%zu,cuDNN %zu.%zu.%zu",
                 lt / 10000, (lt % 10000) / 100, lt % 100, dnn / 10000, (dnn % 10000) / 100,
                 dnn % 100);
    } else {
        kmux_cuda_libs_describe(diag->libraries, sizeof diag->libraries);
    }
    /* Not /dev/nvidia<ordinal>: with CUDA_VISIBLE_DEVICES the ordinal is not the minor number. */
    snprintf(diag->device_nodes, sizeof diag->device_nodes, "/dev/nvidiactl,/dev/nvidia-uvm");
    /* CU_DEVICE_ATTRIBUTE_ECC_ENABLED: 1 when ECC is on. A device reporting 0 may lack ECC or have
     * it off; the driver does not say which, so "supported" stays unknown then. */
    int ecc = 0;
    if (cuDeviceGetAttribute(&ecc, CU_DEVICE_ATTRIBUTE_ECC_ENABLED, d->dev) == CUDA_SUCCESS) {
        diag->ecc_enabled = ecc ? 1 : 0;
        if (ecc) diag->ecc_supported = 1;
    }
    return KMUX_OK;
}
