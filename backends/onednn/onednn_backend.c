/*
 * onednn_backend.c - entry point of libkmux-onednn.so (device "cpu:onednn"): lifetime, probe,
 * device properties and the function table. Memory, streams and events are the shared CPU ones
 * (cpu_runtime.h), the mixed-precision slots the shared vectorised ones (cpu_amp.c).
 */
#include "onednn_internal.h"

#include "dispatch/common/kmux_dtype_desc.h"
#include "dispatch/common/kmux_family.h"
#include "dispatch/common/kmux_type_rules.h"
#include "cpu_model.h"
#include "kmux_sys_alloc.h"

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
    kmux_sys_alloc_use_host(host); /* its allocations count with the core's (KMUX_FAULT_ALLOC) */
    char why[512];
    if (kmux_dnnl_api_load(why, sizeof why) != 0)
        return host->set_error(KMUX_ERR_BACKEND_LOAD, "backend onednn: %s", why);
    if (kmux_dnn_fork_guard_install() != 0)
        return host->set_error(KMUX_ERR_BACKEND_LOAD,
                               "backend onednn: pthread_atfork failed (the fork guard of its "
                               "OpenMP pool could not be installed)");
    kmux_dnn_state *st = kmux_sys_calloc(1, sizeof *st);
    if (!st) return host->set_error(KMUX_ERR_OUT_OF_MEMORY, "onednn init: out of memory");
    kmux_dnn_team_install();
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
    /* Peaks of the ISA oneDNN dispatches to (bf16 dot products on avx512_core_bf16/AMX). */
    kmux_cpu_model_peaks(props, st->hdr.num_threads, kmux_dnn_isa_name(st->isa),
                         KMUX_CPU_KERNELS_INT8, st->hdr.host->trace);
    return KMUX_OK;
}

/* Bit of every row of a legal type table that pred accepts. */
static uint64_t rows_where(const kmux_type_combination *rows, int n,
                           int (*pred)(const kmux_type_combination *)) {
    uint64_t bits = 0;
    for (int i = 0; i < n && i < 64; i++)
        if (pred(&rows[i])) bits |= UINT64_C(1) << i;
    return bits;
}

/* oneDNN 2.x: no f64 on CPU (never run in a lower precision). */
static int mm_runs(const kmux_type_combination *r) {
    return r->a_type != KMUX_F64;
}
/* fp8 has no oneDNN 2.x kernel: always widened to f32 ("+cvt"). bf16/f16 have native kernels
 * on some CPUs only; the plan decides (and asks for prefs.allow_emulation) itself. */
static int mm_emulated(const kmux_type_combination *r) {
    return kmux_dtype_is_fp8(r->a_type);
}
static int conv_runs(const kmux_type_combination *r) {
    return r->a_type != KMUX_F64;
}

/* oneDNN 2.6 takes 64-bit dims but divides by some of them in 32 bits (SIGFPE at m or k = 2^32)
 * and rejects huge strides or dilations: every size, leading dimension and batch is limited to
 * int32. */
static kmux_status dnn_device_caps(void *state, int device, kmux_device_caps *caps) {
    int n = 0;
    const kmux_type_combination *mm = kmux_rules_matmul_table(&n);
    kmux_op_caps *m = &caps->matmul;
    m->supported = 1;
    m->max_dim = INT32_MAX;
    m->max_batch = INT32_MAX;
    m->max_ld = INT32_MAX;
    m->epilogues = KMUX_EPILOGUE_KNOWN; /* the auxiliary and backward ones by the CPU finish */
    m->type_rows = rows_where(mm, n, mm_runs);
    m->emulated_rows = rows_where(mm, n, mm_emulated);
    const kmux_type_combination *cv = kmux_rules_conv_table(&n);
    for (int d = 0; d < 3; d++) {
        kmux_op_caps *c = &caps->conv2d[d];
        c->supported = 1;
        c->max_dim = INT32_MAX;
        c->layouts = (1u << KMUX_NCHW) | (1u << KMUX_NHWC);
        c->asymmetric_padding = 1;
        c->groups = 1;
        c->type_rows = rows_where(cv, n, conv_runs);
    }
    caps->conv2d[0].epilogues = KMUX_CONV_EPILOGUES; /* fused in onednn_conv.c's finish */
    caps->amp_dtypes = (1u << KMUX_F32) | (1u << KMUX_F16) | (1u << KMUX_BF16) |
                       (1u << KMUX_F8_E4M3) | (1u << KMUX_F8_E5M2) | (1u << KMUX_F8_E4M3_FNUZ) |
                       (1u << KMUX_F8_E5M2_FNUZ) | (1u << KMUX_F64);
    kmux_cpu_families_caps(caps);
    if (KMUX_CAPS_HAS(caps, caller_workspace)) caps->caller_workspace = 1; /* args->workspace */
    return KMUX_OK;
}

kmux_status kmux_dnn_set_make(kmux_dnn_state *st, const char *fn, kmux_dnn_plan_kind kind,
                              kmux_dnn_plan **list, int n, size_t max_ws, int default_cap,
                              void (*destroy)(kmux_dnn_plan *), kmux_dnn_plan_set **set) {
    kmux_dnn_plan_set *s = kmux_sys_calloc(1, sizeof *s);
    size_t smallest = SIZE_MAX;
    int smallest_i = 0, fits = 0;
    for (int i = 0; i < n; i++) {
        if (list[i]->workspace_bytes < smallest) {
            smallest = list[i]->workspace_bytes;
            smallest_i = i;
        }
        fits += list[i]->workspace_bytes <= max_ws;
    }
    for (int i = 0; i < n; i++) {
        /* The default cap never makes a plan impossible: then the smallest one is kept. */
        int keep = list[i]->workspace_bytes <= max_ws || (default_cap && !fits && i == smallest_i);
        if (s && keep) {
            list[i]->impl_index = s->count;
            s->impl[s->count++] = list[i];
        } else {
            destroy(list[i]);
        }
    }
    if (!s) return kmux_dnn_oom(st, fn, sizeof *s);
    if (s->count == 0) {
        free(s);
        return KMUX_DNN_ERROR(st, KMUX_ERR_UNSUPPORTED,
                              "%s: backend onednn: every implementation needs more workspace "
                              "than prefs.max_workspace_bytes = %zu (the smallest %zu bytes)",
                              fn, max_ws, smallest);
    }
    if (s->count < n) { /* plan_info says why the preferred ones are not used */
        kmux_dnn_plan *first = s->impl[0];
        size_t len = strlen(first->impl);
        snprintf(first->impl + len, sizeof first->impl - len, " [%d over %s workspace cap %zu]",
                 n - s->count, default_cap ? "default" : "prefs", max_ws);
    }
    s->kind = kind;
    *set = s;
    return KMUX_OK;
}

/* prefs.max_workspace_bytes, or for SIZE_MAX the default cap of kmux.h: 16 x the tensors, at
 * least 64 MiB, at most half of the memory available now. *is_default says which. */
static size_t workspace_cap(const kmux_plan_prefs *prefs, size_t tensor_bytes, int *is_default) {
    *is_default = prefs->max_workspace_bytes == SIZE_MAX;
    if (!*is_default) return prefs->max_workspace_bytes;
    size_t cap = tensor_bytes > SIZE_MAX / 16 ? SIZE_MAX : 16 * tensor_bytes;
    if (cap < ((size_t)64 << 20)) cap = (size_t)64 << 20;
    size_t avail = kmux_cpu_available_bytes(); /* MemAvailable: free RAM alone misses the cache */
    if (avail > 0 && avail / 2 < cap) cap = avail / 2;
    return cap;
}

size_t kmux_dnn_conv_tensor_bytes(const kmux_conv2d_desc *d) {
    int64_t p =
        kmux_conv2d_out_dim(d->h, d->pad_top, d->pad_bottom, d->r, d->dilation_h, d->stride_h);
    int64_t q =
        kmux_conv2d_out_dim(d->w, d->pad_left, d->pad_right, d->s, d->dilation_w, d->stride_w);
    double e = (double)d->n * d->c * d->h * d->w + (double)d->k * (d->c / d->groups) * d->r * d->s +
               (double)d->n * d->k * p * q;
    double b = e * (double)kmux_dtype_bytes(d->x_type);
    return b >= (double)SIZE_MAX ? SIZE_MAX : (size_t)b;
}

static void set_destroy(void *state, void *plan) {
    kmux_dnn_plan_set *s = plan;
    if (!s) return;
    for (int i = 0; i < s->count; i++)
        if (s->kind == KMUX_DNN_MATMUL)
            kmux_dnn_matmul_destroy(s->impl[i]);
        else
            kmux_dnn_conv2d_destroy(s->impl[i]);
    free(s);
}

static kmux_status dnn_plan_info(void *state, const void *plan, int impl, kmux_plan_info *info) {
    const kmux_dnn_plan *p = ((const kmux_dnn_plan_set *)plan)->impl[impl];
    info->impl = p->impl;
    info->effective_compute = p->effective_compute;
    info->workspace_bytes = p->workspace_bytes;
    /* oneDNN CPU kernels are run-to-run reproducible for a fixed thread count (set per call
     * from the context's num_threads) and ISA; no atomics-based reductions. */
    info->deterministic = 1;
    return KMUX_OK;
}

static kmux_status dnn_matmul_create(void *state, int device, const kmux_matmul_desc *desc,
                                     const kmux_plan_prefs *prefs, void **plan, int *impl_count) {
    kmux_dnn_plan *list[KMUX_DNN_MAX_IMPLS];
    int n = 0;
    kmux_status ks = kmux_dnn_matmul_build(state, desc, prefs, list, &n);
    kmux_dnn_plan_set *set = NULL;
    if (ks == KMUX_OK)
        ks = kmux_dnn_set_make(state, "kmux_matmul_plan_create", KMUX_DNN_MATMUL, list, n,
                               prefs->max_workspace_bytes, 0, kmux_dnn_matmul_destroy, &set);
    if (ks != KMUX_OK) return ks;
    *plan = set;
    *impl_count = set->count;
    return KMUX_OK;
}

static kmux_status dnn_matmul_execute(void *state, const void *plan, int impl, void *stream,
                                      const kmux_matmul_args *args) {
    return kmux_dnn_matmul_run(state, ((const kmux_dnn_plan_set *)plan)->impl[impl], args);
}

static kmux_status dnn_conv2d_create(void *state, int device, const kmux_conv2d_desc *desc,
                                     const kmux_plan_prefs *prefs, void **plan, int *impl_count) {
    kmux_dnn_plan *list[KMUX_DNN_MAX_IMPLS];
    int n = 0;
    kmux_status ks = kmux_dnn_conv2d_build(state, desc, prefs, list, &n);
    kmux_dnn_plan_set *set = NULL;
    int is_default = 0;
    size_t cap = workspace_cap(prefs, kmux_dnn_conv_tensor_bytes(desc), &is_default);
    if (ks == KMUX_OK)
        ks = kmux_dnn_set_make(state, "kmux_conv2d_plan_create", KMUX_DNN_CONV2D, list, n, cap,
                               is_default, kmux_dnn_conv2d_destroy, &set);
    if (ks != KMUX_OK) return ks;
    *plan = set;
    *impl_count = set->count;
    return KMUX_OK;
}

static kmux_status dnn_conv2d_execute(void *state, const void *plan, int impl, void *stream,
                                      const kmux_conv2d_args *args) {
    return kmux_dnn_conv2d_run(state, ((const kmux_dnn_plan_set *)plan)->impl[impl], args);
}

static const kmux_matmul_ops dnn_matmul_ops = {
    .plan_create = dnn_matmul_create,
    .execute = dnn_matmul_execute,
    .plan_info = dnn_plan_info,
    .plan_destroy = set_destroy,
};

static const kmux_conv2d_ops dnn_conv2d_ops = {
    .plan_create = dnn_conv2d_create,
    .execute = dnn_conv2d_execute,
    .plan_info = dnn_plan_info,
    .plan_destroy = set_destroy,
};

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
    .device_caps = dnn_device_caps,
    KMUX_CPU_RUNTIME_SLOTS,
    .matmul = &dnn_matmul_ops,
    .conv2d = &dnn_conv2d_ops,
    KMUX_CPU_AMP_SLOTS,
    .eltwise = &kmux_dnn_eltwise_ops,
    .optimizer = &kmux_cpu_optimizer_ops,
    /* not oneDNN's softmax: its 2.6 JIT kernels drop a NaN logit (the row comes out 0 or -inf
       where kmux.h and torch.softmax give NaN) and its log is approximate (log_softmax of one
       element 1.4e-6, not 0), both measured by test_conformance_softmax */
    .softmax = &kmux_cpu_softmax_ops,
    .binary = &kmux_dnn_binary_ops,
    .reduction = &kmux_cpu_reduction_ops,
    .pooling = &kmux_dnn_pooling_ops,
};

/** The plugin's one exported symbol (kmux_backend.h). */
KMUX_BACKEND_EXPORT const kmux_backend_ops *kmux_backend_entry(void);

const kmux_backend_ops *kmux_backend_entry(void) {
    return &dnn_ops;
}
