/*
 * diag.c - kmux_device_diag_get: the readiness facts a backend reports through its optional
 * device_diag slot (plugin ABI 2.1), for kmux-check.
 */
#include <stddef.h>
#include <string.h>

#include "internal.h"

/* Size of the first version of kmux_device_diag: every field up to link_rate_gbps. */
#define DIAG_V1_SIZE (offsetof(kmux_device_diag, link_rate_gbps) + sizeof(double))

static void diag_unknown(kmux_device_diag *d) {
    memset(d, 0, sizeof *d);
    d->struct_size = sizeof *d;
    d->ecc_supported = -1;
    d->ecc_enabled = -1;
}

/* The plugin's table has the slot when it was built with it (struct_size covers it). */
static int has_diag_slot(const kmux_backend_ops *ops) {
    return ops && KMUX_OPS_HAS(ops, device_diag);
}

kmux_status kmux_device_diag_get(const kmux_device *dev, kmux_device_diag *diag) {
    kmux_clear_error();
    if (!dev || !diag)
        return kmux_set_error(KMUX_ERR_INVALID_ARGUMENT, "kmux_device_diag_get: %s is NULL",
                              !dev ? "dev" : "diag");
    KMUX_CHECK_HANDLE("kmux_device_diag_get", "dev", dev, KMUX_HANDLE_DEVICE);
    size_t want = diag->struct_size;
    if (want < DIAG_V1_SIZE)
        return kmux_set_error(KMUX_ERR_INVALID_ARGUMENT,
                              "kmux_device_diag_get: diag->struct_size = %zu, at least %zu "
                              "(sizeof(kmux_device_diag) of this header: %zu)",
                              want, (size_t)DIAG_V1_SIZE, sizeof(kmux_device_diag));
    if (want > sizeof(kmux_device_diag)) want = sizeof(kmux_device_diag);
    kmux_device_diag local;
    diag_unknown(&local);
    kmux_status st = KMUX_OK;
    const kmux_backend_ops *ops = dev->backend->ops;
    if (!has_diag_slot(ops)) {
        st = kmux_set_error(KMUX_ERR_UNSUPPORTED,
                            "kmux_device_diag_get: backend %s of device %s reports no readiness "
                            "facts (no device_diag slot)",
                            dev->backend->name, dev->props.id);
    } else {
        st = ops->device_diag(dev->backend->state, dev->index, &local);
        local.struct_size = sizeof local;
        /* Force termination whatever the plugin wrote. */
        local.target_id[sizeof local.target_id - 1] = '\0';
        local.code_objects[sizeof local.code_objects - 1] = '\0';
        local.runtime_version[sizeof local.runtime_version - 1] = '\0';
        local.driver_version[sizeof local.driver_version - 1] = '\0';
        local.libraries[sizeof local.libraries - 1] = '\0';
        local.device_nodes[sizeof local.device_nodes - 1] = '\0';
        if (st != KMUX_OK) {
            diag_unknown(&local);
            if (kmux_last_error()[0] == '\0')
                kmux_set_error(st, "kmux_device_diag_get: backend %s failed on device %s (%s)",
                               dev->backend->name, dev->props.id, kmux_status_str(st));
        }
    }
    size_t caller_size = diag->struct_size;
    memcpy(diag, &local, want);
    diag->struct_size = caller_size;
    return st;
}
