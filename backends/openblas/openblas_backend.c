/*
 * openblas_backend.c - entry point of libkmux-openblas.so (device "cpu:openblas"): lifetime,
 * discovery, device properties and the plan slots shared by matmul and convolution. Memory,
 * streams, events and the mixed-precision slots are the shared CPU ones (backends/cpu_common).
 */
#include "openblas_internal.h"

#include <cblas.h>
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
    case 0:
        return "sequential";
    case 1:
        return "pthread";
    case 2:
        return "openmp";
    default:
        return "unknown threading";
    }
}

static kmux_status ob_init(const kmux_backend_host *host, void **state) {
    char why[512];
    if (kmux_ob_api_load(why, sizeof why) != 0)
        return host->set_error(KMUX_ERR_BACKEND_LOAD, "backend openblas: %s", why);
    kmux_ob_state *st = calloc(1, sizeof *st);
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

/* f32 flop per cycle per core of the kernels OpenBLAS chose (its DYNAMIC_ARCH core), which can be
 * far below what the CPU could do: 0.3.21 does not know recent Xeons and falls back to its SSE3
 * "Prescott" kernels (OPENBLAS_CORETYPE=SkylakeX or Haswell selects better ones). */
static double kernel_flops_per_cycle(const char *core) {
    static const char *avx512[] = {"skylakex", "cooperlake", "sapphirerapids"};
    static const char *avx2[] = {"haswell", "zen", "sandybridge", "excavator", "steamroller"};
    char lower[64] = "";
    for (size_t i = 0; core && core[i] && i + 1 < sizeof lower; i++)
        lower[i] = (char)(core[i] >= 'A' && core[i] <= 'Z' ? core[i] - 'A' + 'a' : core[i]);
    for (size_t i = 0; i < sizeof avx512 / sizeof avx512[0]; i++)
        if (strstr(lower, avx512[i])) return 64; /* 16 lanes x 2 FMA pipes x 2 */
    for (size_t i = 0; i < sizeof avx2 / sizeof avx2[0]; i++)
        if (strstr(lower, avx2[i])) return 32; /* 8 lanes x 2 FMA pipes x 2 */
    return 16; /* SSE: 4 lanes x (2 adds + 2 muls) per cycle on current cores' FP ports */
}

static kmux_status ob_device_props(void *state, int device, kmux_device_props *props) {
    kmux_ob_state *st = state;
    (void)device;
    memset(props, 0, sizeof *props);
    kmux_cpu_fill_host_props(props, st->hdr.num_threads);
    snprintf(props->id, sizeof props->id, "cpu:openblas");
    snprintf(props->backend, sizeof props->backend, "openblas");
    snprintf(props->library_version, sizeof props->library_version, "%s", st->library_version);
    /* The host figures assume the CPU's widest FMA units; scale them to the kernels in use. */
    double host = strcmp(props->arch, "avx512_core") == 0 ? 64
                  : strcmp(props->arch, "avx2") == 0      ? 32
                                                          : 16;
    double k = kernel_flops_per_cycle(openblas_get_corename());
    if (k < host) {
        props->peak_flops[KMUX_F32] *= k / host;
        props->peak_flops[KMUX_F64] *= k / host;
    }
    /* f64 and f32 natively; the narrow float types through "+cvt" (allow_emulation, the default),
     * at the f32 rate since sgemm does the work. No integer GEMM. */
    static const kmux_dtype narrow[] = {KMUX_F16,     KMUX_BF16,         KMUX_F8_E4M3,
                                        KMUX_F8_E5M2, KMUX_F8_E4M3_FNUZ, KMUX_F8_E5M2_FNUZ};
    props->dtype_support[KMUX_F64] = 1;
    props->dtype_support[KMUX_F32] = 1;
    for (size_t i = 0; i < sizeof narrow / sizeof narrow[0]; i++) {
        props->dtype_support[narrow[i]] = 1;
        props->peak_flops[narrow[i]] = props->peak_flops[KMUX_F32];
    }
    props->dtype_support[KMUX_I8] = 0;
    props->dtype_support[KMUX_I32] = 0;
    props->peak_flops[KMUX_I8] = 0.0;
    props->peak_flops[KMUX_I32] = 0.0;
    return KMUX_OK;
}

/* ---- plans -------------------------------------------------------------------------------- */

static kmux_status ob_plan_info(void *state, void *plan, kmux_plan_info *info) {
    (void)state;
    const kmux_ob_plan *p = plan;
    info->impl = p->impl;
    info->effective_compute = p->effective_compute;
    info->workspace_bytes = p->workspace_bytes;
    info->deterministic = p->deterministic;
    info->impl_index = p->impl_index;
    return KMUX_OK;
}

static kmux_status ob_plan_next_impl(void *state, void *plan) {
    kmux_ob_state *st = state;
    kmux_ob_plan *p = plan;
    if (p->kind == KMUX_OB_CONV2D) return kmux_ob_conv2d_next_impl(st, p);
    return KMUX_OB_ERROR(st, KMUX_ERR_LAST_IMPL,
                         "kmux_plan_next_impl: backend openblas: %s is the only implementation",
                         p->impl);
}

static void ob_plan_destroy(void *state, void *plan) {
    (void)state;
    free(plan);
}

/* ---- the table ---------------------------------------------------------------------------- */

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
    KMUX_CPU_RUNTIME_SLOTS,
    .matmul_plan_create = kmux_ob_matmul_plan_create,
    .matmul_execute = kmux_ob_matmul_execute,
    .conv2d_plan_create = kmux_ob_conv2d_plan_create,
    .conv2d_execute = kmux_ob_conv2d_execute,
    .plan_info = ob_plan_info,
    .plan_next_impl = ob_plan_next_impl,
    .plan_destroy = ob_plan_destroy,
    KMUX_CPU_AMP_SLOTS,
};

/** The plugin's one exported symbol (kmux_backend.h). */
KMUX_BACKEND_EXPORT const kmux_backend_ops *kmux_backend_entry(void);

KMUX_BACKEND_EXPORT const kmux_backend_ops *kmux_backend_entry(void) {
    return &ob_ops;
}
