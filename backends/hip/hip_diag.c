/*
 * hip_diag.c - readiness facts of a HIP device for kmux_device_diag_get (plugin ABI 2.1
 * device_diag slot): architecture, the code objects this plugin carries, runtime and driver
 * versions, the device nodes ROCm uses, the runtime that was opened.
 * target_id is the architecture without target features (sramecc, xnack): the runtime reports
 * them only in hipDeviceProp_t.gcnArchName, whose struct layout differs between ROCm 5 and 6 and
 * which this plugin does not read (hip_props.c). ECC and the PCIe link stay unknown here;
 * kmux-check reads the link from sysfs through pci_bus_id.
 */
#include <stdio.h>

#include "hip_backend.h"

kmux_status kmux_hip_device_diag(void *state, int device, kmux_device_diag *diag) {
    kmux_hip_state *st = state;
    const kmux_hip_device *d = &st->devices[device];
    snprintf(diag->target_id, sizeof diag->target_id, "%s", d->arch);
    snprintf(diag->code_objects, sizeof diag->code_objects, "%s", kmux_hip_carried_archs());
    int rt = 0, drv = 0;
    if (st->api.hipRuntimeGetVersion(&rt) == KMUX_HIP_SUCCESS)
        snprintf(diag->runtime_version, sizeof diag->runtime_version, "HIP %d.%d.%d", rt / 10000000,
                 (rt / 100000) % 100, rt % 100000);
    if (st->api.hipDriverGetVersion(&drv) == KMUX_HIP_SUCCESS)
        snprintf(diag->driver_version, sizeof diag->driver_version, "HIP driver %d", drv);
    snprintf(diag->libraries, sizeof diag->libraries, "%s", st->lib_name);
    snprintf(diag->device_nodes, sizeof diag->device_nodes, "/dev/kfd,/dev/dri/renderD*");
    return KMUX_OK;
}
