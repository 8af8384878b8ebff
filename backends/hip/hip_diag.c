/*
 * hip_diag.c - readiness facts of a HIP device for kmux_device_diag_get (plugin ABI 2.1
 * device_diag slot): architecture, the code objects this plugin carries, runtime and driver
 * versions, the device nodes ROCm uses, the runtime that was opened and AMD's libraries (rocBLAS,
 * hipBLASLt, MIOpen) with their versions, or "no <library>" where the search found none.
 * target_id is the device's full target id from hipDeviceProp_t.gcnArchName
 * ("gfx942:sramecc+:xnack-", read through the call of the runtime's version: hip_props.c), the
 * processor alone when the runtime did not give it; code_objects the targets carried. kmux-check
 * matches the two with the same target-id rules as the probe's hip_target.h (its own
 * amd_compatible, tools/kmux_check/ck_verdict.c). ECC and the PCIe link stay unknown here;
 * kmux-check reads the link from sysfs through pci_bus_id.
 */
#include <stdio.h>

#include "hip_backend.h"

kmux_status kmux_hip_device_diag(void *state, int device, kmux_device_diag *diag) {
    kmux_hip_state *st = state;
    const kmux_hip_device *d = &st->devices[device];
    snprintf(diag->target_id, sizeof diag->target_id, "%s", d->target_id);
    snprintf(diag->code_objects, sizeof diag->code_objects, "%s", kmux_hip_carried_archs());
    int rt = 0, drv = 0;
    if (st->api.hipRuntimeGetVersion(&rt) == KMUX_HIP_SUCCESS)
        snprintf(diag->runtime_version, sizeof diag->runtime_version, "HIP %d.%d.%d", rt / 10000000,
                 (rt / 100000) % 100, rt % 100000);
    if (st->api.hipDriverGetVersion(&drv) == KMUX_HIP_SUCCESS)
        snprintf(diag->driver_version, sizeof diag->driver_version, "HIP driver %d", drv);
    /* the runtime's file, then AMD's libraries with their versions, opened here if no plan did */
    const char *lt = kmux_hip_blaslt_version(st, device);
    snprintf(diag->libraries, sizeof diag->libraries, "%s, %s, %s, %s", st->lib_name,
             kmux_hip_rocblas_available(st) ? st->rocblas.base.version : "no rocBLAS",
             lt ? lt : "no hipBLASLt",
             kmux_hip_miopen_available(st) ? st->miopen.base.version : "no MIOpen");
    snprintf(diag->device_nodes, sizeof diag->device_nodes, "/dev/kfd,/dev/dri/renderD*");
    return KMUX_OK;
}
