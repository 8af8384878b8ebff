/*
 * onednn_backend.c - entry point of libkmux-onednn.so (device "cpu:onednn"): lifetime, probe,
 * device properties and the function table. Memory, streams and events are the shared CPU ones
 * (cpu_runtime.h), the mixed-precision slots the shared vectorised ones (cpu_amp.c).
 */
#include "onednn_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *runtime_name(unsigned rt) {
    switch (rt) {
    case DNNL_RUNTIME_SEQ:
        return "SEQ";
    case DNNL_RUNTIME_OMP:
        return "OMP";
    case DNNL_RUNTIME_TBB:
        return "TBB";
    case DNNL_RUNTIME_THREADPOOL:
        return "THREADPOOL";
    default:
        return "?";
    }
}

static kmux_status dnn_init(const kmux_backend_host *host, void **state) {
    char why[512];
    if (kmux_dnnl_api_load(why, sizeof why) != 0)
        return host->set_error(KMUX_ERR_BACKEND_LOAD, "backend onednn: %s", why);
    if (kmux_dnn_fork_guard_install() != 0)
        return host->set_error(KMUX_ERR_BACKEND_LOAD,
                               "backend onednn: pthread_atfork failed (the fork guard of its "
                               "OpenMP pool could not be installed)");
    kmux_dnn_state *st = calloc(1, sizeof *st);
    if (!st) return host->set_error(KMUX_ERR_OUT_OF_MEMORY, "onednn init: out of memory");
    st->hdr.host = host;
    st->hdr.num_threads = host->num_threads > 0 ? host->num_threads : 1;
    st->engine_status = dnnl_engine_create(&st->engine, dnnl_cpu, 0);
    if (st->engine_status != dnnl_success) st->engine = NULL;
    st->isa = dnnl_get_effective_cpu_isa();
    const dnnl_version_t *v = dnnl_version();
    snprintf(st->version, sizeof st->version, "oneDNN %d.%d.%d (cpu runtime %s, isa %s)", v->major,
             v->minor, v->patch, runtime_name(v->cpu_runtime), kmux_dnn_isa_name(st->isa));
    *state = st;
    return KMUX_OK;
}

static void dnn_fini(void *state) {
    kmux_dnn_state *st = state;
    if (!st) return;
    if (st->engine) dnnl_engine_destroy(st->engine);
    free(st);
}

static kmux_status dnn_probe(void *state, int *device_count, char *reason, size_t reason_size) {
    kmux_dnn_state *st = state;
    if (!st->engine) {
        *device_count = 0;
        snprintf(reason, reason_size, "oneDNN CPU engine could not be created: %s (%d)",
                 kmux_dnn_status_name(st->engine_status), (int)st->engine_status);
        return KMUX_OK;
    }
    *device_count = 1;
    if (reason_size) reason[0] = '\0';
    return KMUX_OK;
}

static const char *dnn_version(void *state) {
    return ((kmux_dnn_state *)state)->version;
}

static kmux_status dnn_device_props(void *state, int device, kmux_device_props *props) {
    kmux_dnn_state *st = state;
    kmux_cpu_fill_host_props(props, st->hdr.num_threads);
    snprintf(props->id, sizeof props->id, "cpu:onednn");
    snprintf(props->backend, sizeof props->backend, "onednn");
    snprintf(props->library_version, sizeof props->library_version, "%s", st->version);
    snprintf(props->arch, sizeof props->arch, "%s", kmux_dnn_isa_name(st->isa));
    memset(props->dtype_support, 0, sizeof props->dtype_support);
    /* f16, bf16 and fp8 run natively where oneDNN has kernels and converted to f32 otherwise
     * (with prefs.allow_emulation, the default); f64 never (oneDNN 2.x has none on CPU). */
    static const kmux_dtype ok[] = {KMUX_F32,          KMUX_F16,     KMUX_BF16,
                                    KMUX_F8_E4M3,      KMUX_F8_E5M2, KMUX_F8_E4M3_FNUZ,
                                    KMUX_F8_E5M2_FNUZ, KMUX_I8,      KMUX_I32};
    for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++)
        props->dtype_support[ok[i]] = 1;
    /* f32 peak from the host (cores x lanes x FMA); none for f64 (unsupported). The narrow
     * types' rates depend on the microarchitecture, not on the ISA oneDNN reports (avx512_bf16
     * runs at twice the f32 rate on some CPUs and below it on others): unknown, 0. */
    props->peak_flops[KMUX_F64] = 0.0;
    for (int t = 0; t < KMUX_DTYPE_COUNT; t++)
        if (t != KMUX_F32) props->peak_flops[t] = 0.0;
    return KMUX_OK;
}

static kmux_status dnn_plan_info(void *state, void *plan, kmux_plan_info *info) {
    kmux_dnn_plan *p = plan;
    info->impl = p->impl;
    info->effective_compute = p->effective_compute;
    info->workspace_bytes = p->workspace_bytes;
    /* oneDNN CPU kernels are run-to-run reproducible for a fixed thread count (set per call
     * from the context's num_threads) and ISA; no atomics-based reductions. */
    info->deterministic = 1;
    info->impl_index = p->impl_index;
    return KMUX_OK;
}

static kmux_status dnn_plan_next_impl(void *state, void *plan) {
    kmux_dnn_plan *p = plan;
    if (p->kind == KMUX_DNN_MATMUL) return kmux_dnn_matmul_next_impl(state, p);
    return kmux_dnn_conv2d_next_impl(state, p);
}

static void dnn_plan_destroy(void *state, void *plan) {
    kmux_dnn_plan *p = plan;
    if (!p) return;
    if (p->kind == KMUX_DNN_MATMUL)
        kmux_dnn_matmul_destroy(p);
    else
        kmux_dnn_conv2d_destroy(p);
}

static const kmux_backend_ops dnn_ops = {
    .struct_size = sizeof(kmux_backend_ops),
    .abi_major = KMUX_BACKEND_ABI_MAJOR,
    .abi_minor = KMUX_BACKEND_ABI_MINOR,
    .name = KMUX_DNN_NAME,
    .init = dnn_init,
    .fini = dnn_fini,
    .probe = dnn_probe,
    .version = dnn_version,
    .device_props = dnn_device_props,
    KMUX_CPU_RUNTIME_SLOTS,
    .matmul_plan_create = kmux_dnn_matmul_plan_create,
    .matmul_execute = kmux_dnn_matmul_execute,
    .conv2d_plan_create = kmux_dnn_conv2d_plan_create,
    .conv2d_execute = kmux_dnn_conv2d_execute,
    .plan_info = dnn_plan_info,
    .plan_next_impl = dnn_plan_next_impl,
    .plan_destroy = dnn_plan_destroy,
    KMUX_CPU_AMP_SLOTS,
};

/** The plugin's one exported symbol (kmux_backend.h). */
KMUX_BACKEND_EXPORT const kmux_backend_ops *kmux_backend_entry(void);

const kmux_backend_ops *kmux_backend_entry(void) {
    return &dnn_ops;
}
