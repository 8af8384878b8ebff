/*
 * openblas_backend.c - entry point of libkmux-openblas.so (device "cpu:openblas"): lifetime,
 * discovery, device properties and capabilities, and the plan slots of matmul and convolution.
 * Memory, streams, events and the mixed-precision slots are the shared CPU ones
 * (backends/cpu_common).
 */
#define _POSIX_C_SOURCE 200809L /* nanosleep, clock_gettime (kmux_openblas_spin.h) */
#include "openblas_internal.h"

#include "dispatch/common/kmux_openblas_spin.h"
#include "dispatch/common/kmux_family.h"
#include "dispatch/common/kmux_type_rules.h"
#include "cpu_model.h"
#include "kmux_sys_alloc.h"

#include <cblas.h>
#include <pthread.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- lifetime and discovery ------------------------------------------------------------- */

/* "OpenBLAS 0.3.21" from openblas_get_config() ("OpenBLAS 0.3.21 DYNAMIC_ARCH NO_AFFINITY
 * SkylakeX MAX_THREADS=64"), i.e. of the library actually loaded, else from the header. */
static void read_version(char *out, size_t size) {
    const char *cfg = openblas_get_config();
    char name[32] = "", ver[32] = "";
    if (cfg && sscanf(cfg, "%31s %31s", name, ver) == 2 && strcmp(name, "OpenBLAS") == 0) {
        snprintf(out, size, "OpenBLAS %s", ver);
        return;
    }
    /* OPENBLAS_VERSION is " OpenBLAS 0.3.21 " (with spaces) */
    const char *v = OPENBLAS_VERSION;
    while (*v == ' ')
        v++;
    snprintf(out, size, "%s", v);
    size_t n = strlen(out);
    while (n > 0 && out[n - 1] == ' ')
        out[--n] = '\0';
}

static const char *parallel_name(int mode) {
    switch (mode) {
    case OPENBLAS_SEQUENTIAL:
        return "sequential";
    case OPENBLAS_THREAD:
        return "pthread";
    case OPENBLAS_OPENMP:
        return "openmp";
    default:
        return "unknown threading";
    }
}

static kmux_status ob_init(const kmux_backend_host *host, void **state) {
    kmux_sys_alloc_use_host(host); /* its allocations count with the core's (KMUX_FAULT_ALLOC) */
    char why[512];
    if (kmux_ob_api_load(why, sizeof why) != 0)
        return host->set_error(KMUX_ERR_BACKEND_LOAD, "backend openblas: %s", why);
    kmux_ob_state *st = kmux_sys_calloc(1, sizeof *st);
    if (!st)
        return host->set_error(KMUX_ERR_OUT_OF_MEMORY,
                               "backend openblas: init: out of host memory (%zu bytes)",
                               sizeof *st);
    if (pthread_mutex_init(&st->pool.lock, NULL) != 0) {
        free(st);
        return host->set_error(KMUX_ERR_INTERNAL,
                               "backend openblas: init: pthread_mutex_init failed");
    }
    st->hdr.host = host;
    st->hdr.num_threads = host->num_threads >= 1 ? host->num_threads : 1;
    read_version(st->version, sizeof st->version);
    const char *core = openblas_get_corename();
    snprintf(st->library_version, sizeof st->library_version, "%s (%s, %s)", st->version,
             core ? core : "unknown core", parallel_name(openblas_get_parallel()));
    /* Process-wide in OpenBLAS: the last context created decides for all of them. */
    openblas_set_num_threads(st->hdr.num_threads);
    host->trace(2, "load,openblas,init,%s,threads=%d", st->library_version, st->hdr.num_threads);
    *state = st;
    return KMUX_OK;
}

static void ob_fini(void *state) {
    kmux_ob_state *st = state;
    if (!st) return;
    kmux_ob_ws_release_all(st);
    pthread_mutex_destroy(&st->pool.lock);
    free(st);
}

static kmux_status ob_probe(void *state, int *device_count, char *reason, size_t reason_size) {
    (void)state;
    /* The host CPU is always there; OpenBLAS picked its kernels when it was loaded. */
    *device_count = 1;
    if (reason && reason_size > 0) reason[0] = '\0';
    return KMUX_OK;
}

static const char *ob_version(void *state) {
    return ((kmux_ob_state *)state)->version;
}

static kmux_status ob_device_props(void *state, int device, kmux_device_props *props) {
    kmux_ob_state *st = state;
    (void)device;
    memset(props, 0, sizeof *props);
    kmux_cpu_fill_host_props(props, st->hdr.num_threads);
    snprintf(props->id, sizeof props->id, "cpu:openblas");
    snprintf(props->backend, sizeof props->backend, "openblas");
    snprintf(props->library_version, sizeof props->library_version, "%s", st->library_version);
    /* Peaks of the kernels OpenBLAS chose (its DYNAMIC_ARCH core), which can be far below what
     * the CPU could do: 0.3.21 does not know recent Xeons and falls back to SSE3 "Prescott". */
    kmux_cpu_model_peaks(props, st->hdr.num_threads, openblas_get_corename(), KMUX_CPU_KERNELS_F64,
                         st->hdr.host->trace);
    /* f64 and f32 natively; the narrow float types through "+cvt" (allow_emulation, the default),
     * at the f32 rate since sgemm does the work. No integer GEMM. */
    static const kmux_dtype narrow[] = {KMUX_F16,     KMUX_BF16,         KMUX_F8_E4M3,
                                        KMUX_F8_E5M2, KMUX_F8_E4M3_FNUZ, KMUX_F8_E5M2_FNUZ};
    props->dtype_support[KMUX_F64] = 1;
    props->dtype_support[KMUX_F32] = 1;
    for (size_t i = 0; i < sizeof narrow / sizeof narrow[0]; i++) {
        props->dtype_support[narrow[i]] = 1;
    }
    props->dtype_support[KMUX_I8] = 0;
    props->dtype_support[KMUX_I32] = 0;
    return KMUX_OK;
}

/* ---- capabilities ------------------------------------------------------------------------ */

/* Rows of the legal GEMM table OpenBLAS runs: f64 and strict f32 natively, the narrow float
 * types through "+cvt" with f32 accumulation; no TF32/bf16x3, no f16 accumulation, no i8. */
static int mm_runs(const kmux_type_combination *r) {
    if (r->a_type == KMUX_I8 || r->compute_type == KMUX_COMPUTE_F32_FAST_TF32 ||
        r->compute_type == KMUX_COMPUTE_F32_FAST_BF16 || r->compute_type == KMUX_COMPUTE_F16)
        return 0;
    return 1;
}
static int narrow(const kmux_type_combination *r) {
    return r->a_type != KMUX_F64 && r->a_type != KMUX_F32;
}
/* Convolution: strict f32, f16/bf16 by conversion. */
static int conv_runs(const kmux_type_combination *r) {
    return r->a_type != KMUX_F64 && r->compute_type == KMUX_COMPUTE_F32;
}

static uint64_t rows_where(const kmux_type_combination *rows, int n,
                           int (*pred)(const kmux_type_combination *),
                           int (*also)(const kmux_type_combination *)) {
    uint64_t bits = 0;
    for (int i = 0; i < n && i < 64; i++)
        if (pred(&rows[i]) && (!also || also(&rows[i]))) bits |= UINT64_C(1) << i;
    return bits;
}

/* The spin period is measured once per process, at the first context's device_caps: a 1 ms sleep
 * (the counter's rate is taken from CLOCK_MONOTONIC around it, so a longer sleep adds little
 * accuracy); the rate is a property of the machine, and OpenBLAS reads OPENBLAS_THREAD_TIMEOUT
 * once, when it loads. */
static double g_settle_ms;
static pthread_once_t g_settle_once = PTHREAD_ONCE_INIT;

static void measure_settle(void) {
    g_settle_ms = kmux_openblas_settle_ms(1.0);
}

/* Only the pthreads server spins (the OpenMP and sequential builds do not), and only when it has
 * workers. The thread count is this context's: OpenBLAS's is per process and the last context
 * created sets it (ob_init), so a context of one thread next to a later one of several reports 0
 * although the workers spin. */
static double settle_ms(const kmux_ob_state *st) {
    if (openblas_get_parallel() != OPENBLAS_THREAD || st->hdr.num_threads < 2) return 0;
    pthread_once(&g_settle_once, measure_settle);
    return g_settle_ms;
}

/* OpenBLAS's CBLAS takes int (blasint of the LP64 build): every size and leading dimension, and
 * every convolution GEMM dimension (bounded by the tensor sizes), must fit in 2^31 - 1. */
static kmux_status ob_device_caps(void *state, int device, kmux_device_caps *caps) {
    int n = 0;
    const kmux_type_combination *mm = kmux_rules_matmul_table(&n);
    kmux_op_caps *m = &caps->matmul;
    m->supported = 1;
    m->max_dim = INT32_MAX;
    m->max_ld = INT32_MAX;
    m->epilogues = KMUX_EPILOGUE_KNOWN; /* the auxiliary and backward ones by the CPU finish */
    m->type_rows = rows_where(mm, n, mm_runs, NULL);
    m->emulated_rows = rows_where(mm, n, mm_runs, narrow);
    const kmux_type_combination *cv = kmux_rules_conv_table(&n);
    for (int d = 0; d < 3; d++) {
        kmux_op_caps *c = &caps->conv2d[d];
        c->supported = 1;
        c->max_dim = INT32_MAX;
        c->max_elements = INT32_MAX;
        c->layouts = (1u << KMUX_NCHW) | (1u << KMUX_NHWC);
        c->asymmetric_padding = 1;
        c->groups = 1;
        c->type_rows = rows_where(cv, n, conv_runs, NULL);
        c->emulated_rows = rows_where(cv, n, conv_runs, narrow);
    }
    caps->conv2d[0].epilogues = KMUX_CONV_EPILOGUES; /* fused: openblas_conv2d.c's epilogue */
    caps->amp_dtypes = (1u << KMUX_F64) | (1u << KMUX_F32) | (1u << KMUX_F16) | (1u << KMUX_BF16) |
                       (1u << KMUX_F8_E4M3) | (1u << KMUX_F8_E5M2) | (1u << KMUX_F8_E4M3_FNUZ) |
                       (1u << KMUX_F8_E5M2_FNUZ);
    if (caps->struct_size >= offsetof(kmux_device_caps, settle_ms) + sizeof caps->settle_ms)
        caps->settle_ms = settle_ms(state);
    kmux_cpu_families_caps(caps);
    if (KMUX_CAPS_HAS(caps, caller_workspace)) caps->caller_workspace = 1; /* args->workspace */
    return KMUX_OK;
}

/* ---- plans -------------------------------------------------------------------------------- */

static void fill_info(const kmux_ob_plan *p, kmux_plan_info *info) {
    info->impl = p->impl;
    info->effective_compute = p->effective_compute;
    info->workspace_bytes = p->workspace_bytes;
    info->deterministic = p->deterministic;
}

static kmux_status ob_matmul_info(void *state, const void *plan, int impl, kmux_plan_info *info) {
    fill_info(plan, info);
    return KMUX_OK;
}

static kmux_status ob_conv2d_info(void *state, const void *plan, int impl, kmux_plan_info *info) {
    fill_info(kmux_ob_conv2d_head(plan, impl), info);
    return KMUX_OK;
}

static void ob_plan_destroy(void *state, void *plan) {
    (void)state;
    free(plan);
}

/* ---- the table ---------------------------------------------------------------------------- */

static const kmux_matmul_ops ob_matmul_ops = {
    .plan_create = kmux_ob_matmul_plan_create,
    .execute = kmux_ob_matmul_execute,
    .plan_info = ob_matmul_info,
    .plan_destroy = ob_plan_destroy,
};

static const kmux_conv2d_ops ob_conv2d_ops = {
    .plan_create = kmux_ob_conv2d_plan_create,
    .execute = kmux_ob_conv2d_execute,
    .plan_info = ob_conv2d_info,
    .plan_destroy = ob_plan_destroy,
};

static const kmux_backend_ops ob_ops = {
    .struct_size = sizeof(kmux_backend_ops),
    .abi_major = KMUX_BACKEND_ABI_MAJOR,
    .abi_minor = KMUX_BACKEND_ABI_MINOR,
    .name = KMUX_OB_NAME,
    .init = ob_init,
    .fini = ob_fini,
    .probe = ob_probe,
    .version = ob_version,
    .device_props = ob_device_props,
    .device_caps = ob_device_caps,
    KMUX_CPU_RUNTIME_SLOTS,
    .matmul = &ob_matmul_ops,
    .conv2d = &ob_conv2d_ops,
    KMUX_CPU_AMP_SLOTS,
    .eltwise = &kmux_cpu_eltwise_ops,
    .optimizer = &kmux_cpu_optimizer_ops,
    .softmax = &kmux_cpu_softmax_ops,
    .binary = &kmux_cpu_binary_ops,
    .reduction = &kmux_cpu_reduction_ops,
    .pooling = &kmux_cpu_pooling_ops,
};

/** The plugin's one exported symbol (kmux_backend.h). */
KMUX_BACKEND_EXPORT const kmux_backend_ops *kmux_backend_entry(void);

KMUX_BACKEND_EXPORT const kmux_backend_ops *kmux_backend_entry(void) {
    return &ob_ops;
}
