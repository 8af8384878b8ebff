/*
 * ref_backend.c - the reference backend's function table (device "ref"), its lifetime and
 * discovery slots, and the plan slots shared by matmul and convolution. Memory, streams and
 * events are the shared CPU runtime's (backends/cpu_common).
 */
#include "ref_backend.h"
#include "ref_internal.h"

#include "dispatch/common/kmux_binary.h"
#include "dispatch/common/kmux_family.h"
#include "dispatch/common/kmux_pooling.h"
#include "dispatch/common/kmux_reduction.h"
#include "dispatch/common/kmux_type_rules.h"
#include "kmux_sys_alloc.h"

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
    ref_state *st = kmux_sys_calloc(1, sizeof *st);
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
    st->panel_elems = kmux_ref_panel_elems_from_env();
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

/* ref runs every operation and every type combination, without size limits (int64 indexing),
 * on any pointer alignment. */
static kmux_status ref_device_caps(void *state, int device, kmux_device_caps *caps) {
    int rows = 0;
    kmux_rules_matmul_table(&rows);
    caps->matmul.supported = 1;
    caps->matmul.epilogues = KMUX_EPILOGUE_KNOWN;
    caps->matmul.type_rows = rows >= 64 ? ~UINT64_C(0) : (UINT64_C(1) << rows) - 1;
    kmux_rules_conv_table(&rows);
    for (int d = 0; d < 3; d++) {
        kmux_op_caps *c = &caps->conv2d[d];
        c->supported = 1;
        c->layouts = (1u << KMUX_NCHW) | (1u << KMUX_NHWC);
        c->asymmetric_padding = 1;
        c->groups = 1;
        c->type_rows = (UINT64_C(1) << rows) - 1;
    }
    caps->conv2d[0].epilogues = KMUX_CONV_EPILOGUES; /* fused: ref_conv.c, one rounding */
    if (KMUX_CAPS_HAS(caps, caller_workspace)) caps->caller_workspace = 1; /* ref needs none */
    caps->amp_dtypes = 0;
    for (int t = KMUX_F64; t <= KMUX_F8_E5M2_FNUZ; t++)
        caps->amp_dtypes |= 1u << t;
    caps->eltwise.algs = kmux_ref_eltwise_algs();
    caps->eltwise.dtypes = KMUX_FAMILY_DTYPES;
    caps->eltwise.props = (1u << KMUX_PROP_FORWARD) | (1u << KMUX_PROP_BACKWARD);
    caps->optimizer.algs = (UINT64_C(1) << KMUX_OPTIMIZER_SGD) |
                           (UINT64_C(1) << KMUX_OPTIMIZER_ADAM) |
                           (UINT64_C(1) << KMUX_OPTIMIZER_ADAMW);
    caps->optimizer.dtypes = KMUX_FAMILY_DTYPES;
    caps->softmax.algs = (UINT64_C(1) << KMUX_SOFTMAX) | (UINT64_C(1) << KMUX_LOG_SOFTMAX) |
                         (UINT64_C(1) << KMUX_SOFTMAX_CROSS_ENTROPY);
    caps->softmax.dtypes = caps->eltwise.dtypes;
    caps->softmax.props = caps->eltwise.props;
    caps->binary.algs = kmux_binary_all_algs();
    caps->binary.dtypes = KMUX_FAMILY_DTYPES;
    caps->binary.props = 1u << KMUX_PROP_FORWARD;
    caps->reduction.algs = kmux_reduction_all_algs();
    caps->reduction.dtypes = KMUX_FAMILY_DTYPES;
    caps->reduction.props = 1u << KMUX_PROP_FORWARD;
    kmux_pooling_full_caps(&caps->pooling);
    return KMUX_OK;
}

/* One implementation per plan (impl is always 0). */
static kmux_status ref_matmul_plan_info(void *state, const void *plan, int impl,
                                        kmux_plan_info *info) {
    const ref_plan *p = plan;
    /* integer GEMM is exact; everything else accumulates in f64 */
    info->impl = p->mm.compute_type == KMUX_COMPUTE_I32 ? "ref:i64" : "ref:f64";
    info->effective_compute =
        p->mm.compute_type == KMUX_COMPUTE_I32 ? KMUX_COMPUTE_I32 : KMUX_COMPUTE_F64;
    info->workspace_bytes = 0;
    info->deterministic = 1;
    return KMUX_OK;
}

static kmux_status ref_conv2d_plan_info(void *state, const void *plan, int impl,
                                        kmux_plan_info *info) {
    info->impl = "ref:direct";
    info->effective_compute = KMUX_COMPUTE_F64;
    info->workspace_bytes = 0;
    info->deterministic = 1;
    return KMUX_OK;
}

/* The op families' plans: one f64 implementation each. */
static kmux_status ref_family_plan_info(void *state, const void *plan, int impl,
                                        kmux_plan_info *info) {
    info->impl = "ref:f64";
    info->effective_compute = KMUX_COMPUTE_F64;
    info->workspace_bytes = 0;
    info->deterministic = 1;
    return KMUX_OK;
}

static void ref_plan_destroy(void *state, void *plan) {
    free(plan);
}

static const kmux_matmul_ops ref_matmul_ops = {
    .plan_create = kmux_ref_matmul_plan_create,
    .execute = kmux_ref_matmul_execute,
    .plan_info = ref_matmul_plan_info,
    .plan_destroy = ref_plan_destroy,
};

static const kmux_conv2d_ops ref_conv2d_ops = {
    .plan_create = kmux_ref_conv2d_plan_create,
    .execute = kmux_ref_conv2d_execute,
    .plan_info = ref_conv2d_plan_info,
    .plan_destroy = ref_plan_destroy,
};

static const kmux_eltwise_ops ref_eltwise_ops = {
    .plan_create = kmux_ref_eltwise_plan_create,
    .execute = kmux_ref_eltwise_execute,
    .plan_info = ref_family_plan_info,
    .plan_destroy = ref_plan_destroy,
};

static const kmux_optimizer_ops ref_optimizer_ops = {
    .plan_create = kmux_ref_optimizer_plan_create,
    .execute = kmux_ref_optimizer_execute,
    .plan_info = ref_family_plan_info,
    .plan_destroy = ref_plan_destroy,
};

static const kmux_softmax_ops ref_softmax_ops = {
    .plan_create = kmux_ref_softmax_plan_create,
    .execute = kmux_ref_softmax_execute,
    .plan_info = ref_family_plan_info,
    .plan_destroy = ref_plan_destroy,
};

static const kmux_binary_ops ref_binary_ops = {
    .plan_create = kmux_ref_binary_plan_create,
    .execute = kmux_ref_binary_execute,
    .plan_info = ref_family_plan_info,
    .plan_destroy = ref_plan_destroy,
};

static const kmux_reduction_ops ref_reduction_ops = {
    .plan_create = kmux_ref_reduction_plan_create,
    .execute = kmux_ref_reduction_execute,
    .plan_info = ref_family_plan_info,
    .plan_destroy = ref_plan_destroy,
};

static const kmux_pooling_ops ref_pooling_ops = {
    .plan_create = kmux_ref_pooling_plan_create,
    .execute = kmux_ref_pooling_execute,
    .plan_info = ref_family_plan_info,
    .plan_destroy = ref_plan_destroy,
};

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
    .device_caps = ref_device_caps,
    KMUX_CPU_RUNTIME_SLOTS,
    .matmul = &ref_matmul_ops,
    .conv2d = &ref_conv2d_ops,
    .cast = kmux_ref_cast,
    .amax = kmux_ref_amax,
    .unscale_check_finite = kmux_ref_unscale_check_finite,
    /* the scaling rules are the CPU plugins' (dispatch/common/kmux_amp_rules.h) */
    .loss_scale_update = kmux_cpu_op_loss_scale_update,
    .fp8_scale_update = kmux_cpu_op_fp8_scale_update,
    .eltwise = &ref_eltwise_ops,
    .optimizer = &ref_optimizer_ops,
    .softmax = &ref_softmax_ops,
    .binary = &ref_binary_ops,
    .reduction = &ref_reduction_ops,
    .pooling = &ref_pooling_ops,
};

const kmux_backend_ops *kmux_ref_backend_ops(void) {
    return &ref_ops;
}
