/*
 * ref_backend.c - the reference backend's function table (device "ref"), its lifetime and
 * discovery slots, and the plan slots shared by matmul and convolution. Memory, streams and
 * events are the shared CPU runtime's (backends/cpu_common).
 */
#include "ref_backend.h"
#include "ref_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

kmux_status kmux_ref_oom(void *state, const char *fn, size_t bytes) {
    const ref_state *st = state;
    if (st && st->hdr.host && st->hdr.host->set_error)
        return st->hdr.host->set_error(KMUX_ERR_OUT_OF_MEMORY,
                                       "%s: backend ref: out of memory allocating %zu bytes", fn,
                                       bytes);
    return KMUX_ERR_OUT_OF_MEMORY;
}

static kmux_status ref_init(const kmux_backend_host *host, void **state) {
    ref_state *st = calloc(1, sizeof *st);
    if (!st) {
        if (host && host->set_error)
            return host->set_error(KMUX_ERR_OUT_OF_MEMORY,
                                   "kmux_context_create: backend ref: out of memory allocating "
                                   "%zu bytes",
                                   sizeof *st);
        return KMUX_ERR_OUT_OF_MEMORY;
    }
    st->hdr.host = host;
    st->hdr.num_threads = 1; /* ref runs every operation in the calling thread */
    *state = st;
    return KMUX_OK;
}

static void ref_fini(void *state) {
    free(state);
}

static kmux_status ref_probe(void *state, int *device_count, char *reason, size_t reason_size) {
    *device_count = 1;
    if (reason && reason_size > 0) reason[0] = '\0';
    return KMUX_OK;
}

static const char *ref_version(void *state) {
    return "kmux reference";
}

static kmux_status ref_device_props(void *state, int device, kmux_device_props *props) {
    memset(props, 0, sizeof *props);
    kmux_cpu_fill_host_props(props, 1);
    snprintf(props->id, sizeof props->id, "ref");
    snprintf(props->backend, sizeof props->backend, "ref");
    snprintf(props->vendor, sizeof props->vendor, "kmux");
    snprintf(props->name, sizeof props->name, "reference (f64 accumulation)");
    snprintf(props->library_version, sizeof props->library_version, "kmux reference");
    props->is_host = 1;
    for (int t = 0; t < KMUX_DTYPE_COUNT; t++) {
        props->dtype_support[t] = 1;
        props->peak_flops[t] = 0.0; /* an oracle, not a speed path */
    }
    return KMUX_OK;
}

kmux_status kmux_ref_plan_info(void *state, void *plan, kmux_plan_info *info) {
    const ref_plan *p = plan;
    if (p->kind == REF_PLAN_MATMUL) {
        /* integer GEMM is exact; everything else accumulates in f64 */
        info->impl = p->mm.compute_type == KMUX_COMPUTE_I32 ? "ref:i64" : "ref:f64";
        info->effective_compute =
            p->mm.compute_type == KMUX_COMPUTE_I32 ? KMUX_COMPUTE_I32 : KMUX_COMPUTE_F64;
    } else {
        info->impl = "ref:direct";
        info->effective_compute = KMUX_COMPUTE_F64;
    }
    info->workspace_bytes = 0;
    info->deterministic = 1;
    info->impl_index = 0;
    return KMUX_OK;
}

/* ref has one implementation per plan. */
static kmux_status ref_plan_next_impl(void *state, void *plan) {
    const ref_state *st = state;
    const ref_plan *p = plan;
    const char *impl = p->kind == REF_PLAN_MATMUL ? "ref:f64" : "ref:direct";
    if (st && st->hdr.host && st->hdr.host->set_error)
        return st->hdr.host->set_error(KMUX_ERR_LAST_IMPL,
                                       "kmux_plan_next_impl: backend ref: %s is the only "
                                       "implementation",
                                       impl);
    return KMUX_ERR_LAST_IMPL;
}

void kmux_ref_plan_destroy(void *state, void *plan) {
    free(plan);
}

static const kmux_backend_ops ref_ops = {
    .struct_size = sizeof(kmux_backend_ops),
    .abi_major = KMUX_BACKEND_ABI_MAJOR,
    .abi_minor = KMUX_BACKEND_ABI_MINOR,
    .name = "ref",
    .init = ref_init,
    .fini = ref_fini,
    .probe = ref_probe,
    .version = ref_version,
    .device_props = ref_device_props,
    KMUX_CPU_RUNTIME_SLOTS,
    .matmul_plan_create = kmux_ref_matmul_plan_create,
    .matmul_execute = kmux_ref_matmul_execute,
    .conv2d_plan_create = kmux_ref_conv2d_plan_create,
    .conv2d_execute = kmux_ref_conv2d_execute,
    .plan_info = kmux_ref_plan_info,
    .plan_next_impl = ref_plan_next_impl,
    .plan_destroy = kmux_ref_plan_destroy,
    .cast = kmux_ref_cast,
    .amax = kmux_ref_amax,
    .unscale_check_finite = kmux_ref_unscale_check_finite,
    .loss_scale_update = kmux_ref_loss_scale_update,
    .fp8_scale_update = kmux_ref_fp8_scale_update,
};

const kmux_backend_ops *kmux_ref_backend_ops(void) {
    return &ref_ops;
}
