/*
 * fake_gpu_plugin.c - libkmux-fakegpu.so: a plugin (ABI v2.2) reporting one configurable fake GPU,
 * so that kmux-check's readiness logic can be fed faked device facts and faked measurements
 * through the real loader and public API (tests/test_check_plugin.c).
 *
 * The device's memory is host memory behind a non-host device (is_host = 0). Small GEMMs are
 * computed exactly (f64 accumulation, so function checks against ref pass); large ones are not
 * computed at all. Time is virtual: every operation advances its stream's clock by the time the
 * configured rates give, and events read that clock, so measured rates are exactly the rates set
 * here; kmux_stream_wait_event moves a stream's clock up to the event's (ABI 2.5 slot), so
 * cross-stream order shows in elapsed times (tests/test_stream_wait.c). Environment (read at init):
 *   KMUX_FAKE_GPU_ARCH          "gfx942"       props.arch
 *   KMUX_FAKE_GPU_TARGET        "gfx942:sramecc+:xnack-"  diag.target_id
 *   KMUX_FAKE_GPU_CODE_OBJECTS  "gfx942"       diag.code_objects
 *   KMUX_FAKE_GPU_PEAK_TFLOPS   "1307"         dense bf16/f16 peak (f32: 1/8, fp8: 2x)
 *   KMUX_FAKE_GPU_GEMM_FRAC     "0.8"          fraction of the peak GEMMs run at
 *   KMUX_FAKE_GPU_MEMBW_GBPS    "5300"         memory bandwidth
 *   KMUX_FAKE_GPU_COPY_FRAC     "0.9"          fraction of it device copies reach
 *   KMUX_FAKE_GPU_H2D_GBPS      "25"           host<->device copy rate, pageable host memory
 *   KMUX_FAKE_GPU_PINNED_GBPS   "28"           the same from kmux_host_malloc memory ("0": the
 *                                              plugin refuses pinned allocations, UNSUPPORTED)
 *   KMUX_FAKE_GPU_PCIE          "4x16"         link generation x width ("" unknown)
 *   KMUX_FAKE_GPU_ECC           "1"            1 on, 0 off
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dispatch/common/kmux_dtype_codec.h"
#include "dispatch/common/kmux_type_rules.h"
#include "kmux_backend.h"

typedef struct fake_state {
    const kmux_backend_host *host;
    char arch[32], target[64], code_objects[256];
    double peak_tflops, gemm_frac, membw, copy_frac, h2d, pinned;
    int pcie_gen, pcie_width, ecc;
} fake_state;

typedef struct fake_stream {
    double t; /* virtual clock, seconds */
} fake_stream;

typedef struct fake_event {
    double t;
} fake_event;

static const char *env_or(const char *name, const char *def) {
    const char *v = getenv(name);
    return v ? v : def;
}

static kmux_status f_init(const kmux_backend_host *host, void **state) {
    fake_state *st = calloc(1, sizeof *st);
    if (!st) return host->set_error(KMUX_ERR_OUT_OF_MEMORY, "backend fakegpu: out of memory");
    st->host = host;
    snprintf(st->arch, sizeof st->arch, "%s", env_or("KMUX_FAKE_GPU_ARCH", "gfx942"));
    snprintf(st->target, sizeof st->target, "%s",
             env_or("KMUX_FAKE_GPU_TARGET", "gfx942:sramecc+:xnack-"));
    snprintf(st->code_objects, sizeof st->code_objects, "%s",
             env_or("KMUX_FAKE_GPU_CODE_OBJECTS", "gfx942"));
    st->peak_tflops = atof(env_or("KMUX_FAKE_GPU_PEAK_TFLOPS", "1307"));
    st->gemm_frac = atof(env_or("KMUX_FAKE_GPU_GEMM_FRAC", "0.8"));
    st->membw = atof(env_or("KMUX_FAKE_GPU_MEMBW_GBPS", "5300"));
    st->copy_frac = atof(env_or("KMUX_FAKE_GPU_COPY_FRAC", "0.9"));
    st->h2d = atof(env_or("KMUX_FAKE_GPU_H2D_GBPS", "25"));
    st->pinned = atof(env_or("KMUX_FAKE_GPU_PINNED_GBPS", "28"));
    if (sscanf(env_or("KMUX_FAKE_GPU_PCIE", "4x16"), "%dx%d", &st->pcie_gen, &st->pcie_width) != 2)
        st->pcie_gen = st->pcie_width = 0;
    st->ecc = atoi(env_or("KMUX_FAKE_GPU_ECC", "1"));
    *state = st;
    return KMUX_OK;
}

static void f_fini(void *state) {
    free(state);
}

static kmux_status f_probe(void *state, int *count, char *reason, size_t size) {
    *count = 1;
    if (size) reason[0] = '\0';
    return KMUX_OK;
}

static const char *f_version(void *state) {
    return "fake GPU runtime 1.0";
}

static double peak_of(const fake_state *st, kmux_dtype t) {
    double p = st->peak_tflops * 1e12;
    switch (t) {
    case KMUX_BF16:
    case KMUX_F16:
        return p;
    case KMUX_F32:
        return p / 8;
    case KMUX_F8_E4M3_FNUZ:
    case KMUX_F8_E5M2_FNUZ:
    case KMUX_I8:
        return 2 * p;
    default:
        return 0;
    }
}

static kmux_status f_device_props(void *state, int device, kmux_device_props *p) {
    fake_state *st = state;
    memset(p, 0, sizeof *p);
    snprintf(p->id, sizeof p->id, "fakegpu:%d", device);
    snprintf(p->backend, sizeof p->backend, "fakegpu");
    snprintf(p->vendor, sizeof p->vendor, "AMD");
    snprintf(p->name, sizeof p->name, "Fake Instinct (test plugin)");
    snprintf(p->arch, sizeof p->arch, "%s", st->arch);
    snprintf(p->driver_version, sizeof p->driver_version, "fake driver 1.0");
    snprintf(p->library_version, sizeof p->library_version, "fake BLAS 1.0");
    p->memory_bytes = (int64_t)192 << 30;
    p->compute_units = 304;
    p->clock_mhz = 2100;
    p->mem_bandwidth_gbps = st->membw;
    static const kmux_dtype types[] = {KMUX_F32,          KMUX_F16, KMUX_BF16, KMUX_F8_E4M3_FNUZ,
                                       KMUX_F8_E5M2_FNUZ, KMUX_I8,  KMUX_I32};
    for (size_t i = 0; i < sizeof types / sizeof types[0]; i++) {
        p->dtype_support[types[i]] = 1;
        p->peak_flops[types[i]] = peak_of(st, types[i]);
    }
    return KMUX_OK;
}

static int row_supported(const kmux_type_combination *r) {
    kmux_dtype ok[] = {KMUX_F32,          KMUX_F16, KMUX_BF16, KMUX_F8_E4M3_FNUZ,
                       KMUX_F8_E5M2_FNUZ, KMUX_I8,  KMUX_I32};
    int a = 0, b = 0, c = 0;
    for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++) {
        a |= r->a_type == ok[i];
        b |= r->b_type == ok[i];
        c |= r->c_type == ok[i];
    }
    return a && b && c;
}

static kmux_status f_device_caps(void *state, int device, kmux_device_caps *caps) {
    int rows = 0;
    const kmux_type_combination *t = kmux_rules_matmul_table(&rows);
    caps->matmul.supported = 1;
    for (int i = 0; i < rows && i < 64; i++)
        if (row_supported(&t[i])) caps->matmul.type_rows |= UINT64_C(1) << i;
    return KMUX_OK;
}

static kmux_status f_device_diag(void *state, int device, kmux_device_diag *d) {
    fake_state *st = state;
    snprintf(d->target_id, sizeof d->target_id, "%s", st->target);
    snprintf(d->code_objects, sizeof d->code_objects, "%s", st->code_objects);
    snprintf(d->runtime_version, sizeof d->runtime_version, "fake runtime 1.0");
    snprintf(d->driver_version, sizeof d->driver_version, "fake driver 1.0");
    snprintf(d->libraries, sizeof d->libraries, "fake BLAS 1.0");
    d->ecc_supported = 1;
    d->ecc_enabled = st->ecc;
    d->pcie_gen = d->pcie_max_gen = st->pcie_gen;
    d->pcie_width = d->pcie_max_width = st->pcie_width;
    return KMUX_OK;
}

/* ---- memory, streams, events: host memory, virtual time ---- */

static kmux_status f_alloc(void *state, int device, size_t bytes, void **ptr) {
    *ptr = bytes ? aligned_alloc(256, (bytes + 255) / 256 * 256) : NULL;
    if (bytes && !*ptr)
        return ((fake_state *)state)
            ->host->set_error(KMUX_ERR_OUT_OF_MEMORY, "backend fakegpu: %zu bytes", bytes);
    return KMUX_OK;
}

static kmux_status f_free(void *state, int device, void *ptr) {
    free(ptr);
    return KMUX_OK;
}

/* Pinned allocations, so that copies from and to them run at the pinned rate. kmux-check and the
 * tests hold a few at a time, from one thread. */
#define FAKE_PINNED_MAX 16
static struct {
    unsigned char *p;
    size_t bytes;
} pinned_blocks[FAKE_PINNED_MAX];

static kmux_status f_host_alloc(void *state, int device, size_t bytes, void **ptr) {
    fake_state *st = state;
    if (st->pinned <= 0)
        return st->host->set_error(KMUX_ERR_UNSUPPORTED, "backend fakegpu: no pinned host memory "
                                                         "(KMUX_FAKE_GPU_PINNED_GBPS=0)");
    for (int i = 0; i < FAKE_PINNED_MAX; i++) {
        if (pinned_blocks[i].p) continue;
        pinned_blocks[i].p = aligned_alloc(4096, (bytes + 4095) / 4096 * 4096);
        if (!pinned_blocks[i].p) break;
        pinned_blocks[i].bytes = bytes;
        *ptr = pinned_blocks[i].p;
        return KMUX_OK;
    }
    return st->host->set_error(KMUX_ERR_OUT_OF_MEMORY, "backend fakegpu: %zu pinned bytes", bytes);
}

static kmux_status f_host_free(void *state, int device, void *ptr) {
    for (int i = 0; i < FAKE_PINNED_MAX; i++) {
        if (pinned_blocks[i].p != ptr) continue;
        free(ptr);
        pinned_blocks[i].p = NULL;
        return KMUX_OK;
    }
    return ((fake_state *)state)
        ->host->set_error(KMUX_ERR_DEVICE, "backend fakegpu: %p is not pinned memory", ptr);
}

static int is_pinned(const void *p) {
    const unsigned char *q = p;
    for (int i = 0; i < FAKE_PINNED_MAX; i++)
        if (pinned_blocks[i].p && q >= pinned_blocks[i].p &&
            q < pinned_blocks[i].p + pinned_blocks[i].bytes)
            return 1;
    return 0;
}

static kmux_status f_stream_create(void *state, int device, void *native, int own, void **s) {
    *s = calloc(1, sizeof(fake_stream));
    return *s ? KMUX_OK : KMUX_ERR_OUT_OF_MEMORY;
}

static kmux_status f_stream_destroy(void *state, void *s) {
    free(s);
    return KMUX_OK;
}

static kmux_status f_sync(void *state, void *s) {
    return KMUX_OK;
}

/* Data move only for small copies: large ones exist to be timed (virtual time). */
#define FAKE_REAL_COPY_MAX ((size_t)16 << 20)

static kmux_status f_copy(void *state, void *stream, void *dst, const void *src, size_t bytes,
                          kmux_memcpy_kind kind) {
    fake_state *st = state;
    fake_stream *s = stream;
    if (bytes <= FAKE_REAL_COPY_MAX) memcpy(dst, src, bytes);
    if (kind == KMUX_MEMCPY_DEVICE_TO_DEVICE)
        s->t += 2.0 * (double)bytes / (st->copy_frac * st->membw * 1e9);
    else if (kind != KMUX_MEMCPY_HOST_TO_HOST)
        s->t +=
            (double)bytes /
            ((is_pinned(kind == KMUX_MEMCPY_HOST_TO_DEVICE ? src : dst) ? st->pinned : st->h2d) *
             1e9);
    return KMUX_OK;
}

static kmux_status f_set(void *state, void *stream, void *dst, int value, size_t bytes) {
    memset(dst, value, bytes);
    return KMUX_OK;
}

static kmux_status f_event_create(void *state, int device, void **e) {
    *e = calloc(1, sizeof(fake_event));
    return *e ? KMUX_OK : KMUX_ERR_OUT_OF_MEMORY;
}

static kmux_status f_event_destroy(void *state, void *e) {
    free(e);
    return KMUX_OK;
}

static kmux_status f_event_record(void *state, void *e, void *s) {
    ((fake_event *)e)->t = ((fake_stream *)s)->t;
    return KMUX_OK;
}

/* The stream's clock jumps to the event's when the event is later (as a GPU stream idles until
 * the other stream's work before the event is done). */
static kmux_status f_stream_wait(void *state, void *s, void *e) {
    fake_stream *fs = s;
    const fake_event *fe = e;
    if (fe->t > fs->t) fs->t = fe->t;
    return KMUX_OK;
}

static kmux_status f_event_sync(void *state, void *e) {
    return KMUX_OK;
}

static kmux_status f_elapsed(void *state, void *a, void *b, float *ms) {
    *ms = (float)((((fake_event *)b)->t - ((fake_event *)a)->t) * 1e3);
    return KMUX_OK;
}

/* ---- matmul ---- */

static double get(kmux_dtype t, const void *p, int64_t i) {
    switch (t) {
    case KMUX_F32:
        return ((const float *)p)[i];
    case KMUX_I8:
        return ((const int8_t *)p)[i];
    case KMUX_I32:
        return ((const int32_t *)p)[i];
    default:
        return kmux_dtype_bytes(t) == 2 ? kmux_decode_f64(((const uint16_t *)p)[i], t)
                                        : kmux_decode_f64(((const uint8_t *)p)[i], t);
    }
}

static void put(kmux_dtype t, void *p, int64_t i, double v) {
    switch (t) {
    case KMUX_F32:
        ((float *)p)[i] = (float)v;
        return;
    case KMUX_I32:
        ((int32_t *)p)[i] = (int32_t)v;
        return;
    default:
        if (kmux_dtype_bytes(t) == 2)
            ((uint16_t *)p)[i] = (uint16_t)kmux_encode_f64(v, t, 0);
        else
            ((uint8_t *)p)[i] = (uint8_t)kmux_encode_f64(v, t, 0);
    }
}

/* Element (i, j) of an operand: rows x cols after op(), storage order and leading dim ld. */
static int64_t at(kmux_order order, kmux_transpose tr, int64_t i, int64_t j, int64_t ld) {
    if (tr == KMUX_TRANS) {
        int64_t x = i;
        i = j;
        j = x;
    }
    return order == KMUX_ROW_MAJOR ? i * ld + j : i + j * ld;
}

static double scalar(kmux_compute_type ct, const void *p) {
    return ct == KMUX_COMPUTE_I32 ? *(const int32_t *)p : *(const float *)p;
}

static kmux_status f_plan_create(void *state, int device, const kmux_matmul_desc *desc,
                                 const kmux_plan_prefs *prefs, void **plan, int *impl_count) {
    kmux_type_combination row = {sizeof row, desc->a_type, desc->b_type, desc->c_type,
                                 desc->compute_type};
    if (!row_supported(&row))
        return ((fake_state *)state)
            ->host->set_error(KMUX_ERR_UNSUPPORTED, "backend fakegpu: %s inputs unsupported",
                              kmux_dtype_name(desc->a_type));
    kmux_matmul_desc *d = malloc(sizeof *d);
    if (!d) return KMUX_ERR_OUT_OF_MEMORY;
    *d = *desc;
    *plan = d;
    *impl_count = 1;
    return KMUX_OK;
}

static kmux_status f_execute(void *state, const void *plan, int impl, void *stream,
                             const kmux_matmul_args *args) {
    fake_state *st = state;
    const kmux_matmul_desc *d = plan;
    double flops = 2.0 * (double)d->m * d->n * d->k * d->batch_count;
    ((fake_stream *)stream)->t += flops / (st->gemm_frac * peak_of(st, d->a_type));
    if ((double)d->m * d->n * d->k > (double)(1 << 21)) return KMUX_OK; /* timed, not computed */
    double alpha = scalar(d->compute_type, args->alpha), beta = scalar(d->compute_type, args->beta);
    for (int64_t b = 0; b < d->batch_count; b++)
        for (int64_t i = 0; i < d->m; i++)
            for (int64_t j = 0; j < d->n; j++) {
                double acc = 0;
                for (int64_t p = 0; p < d->k; p++)
                    acc += get(d->a_type, args->A,
                               b * d->stride_a + at(d->order, d->transa, i, p, d->lda)) *
                           get(d->b_type, args->B,
                               b * d->stride_b + at(d->order, d->transb, p, j, d->ldb));
                int64_t ci = b * d->stride_c + at(d->order, KMUX_NO_TRANS, i, j, d->ldc);
                double c = beta != 0 ? beta * get(d->c_type, args->C, ci) : 0.0;
                put(d->c_type, args->C, ci, alpha * acc + c);
            }
    return KMUX_OK;
}

static kmux_status f_plan_info(void *state, const void *plan, int impl, kmux_plan_info *info) {
    info->impl = "fakegpu:naive";
    info->effective_compute = ((const kmux_matmul_desc *)plan)->compute_type;
    info->workspace_bytes = 0;
    info->deterministic = 1;
    return KMUX_OK;
}

static void f_plan_destroy(void *state, void *plan) {
    free(plan);
}

static kmux_status f_degenerate(void *state, void *stream, const kmux_matmul_desc *d,
                                const kmux_matmul_args *args) {
    double beta = scalar(d->compute_type, args->beta);
    for (int64_t b = 0; b < d->batch_count; b++)
        for (int64_t i = 0; i < d->m; i++)
            for (int64_t j = 0; j < d->n; j++) {
                int64_t ci = b * d->stride_c + at(d->order, KMUX_NO_TRANS, i, j, d->ldc);
                put(d->c_type, args->C, ci, beta != 0 ? beta * get(d->c_type, args->C, ci) : 0.0);
            }
    return KMUX_OK;
}

static const kmux_matmul_ops matmul_ops = {f_plan_create, f_execute, f_plan_info, f_plan_destroy};

static const kmux_backend_ops ops = {
    .struct_size = sizeof(kmux_backend_ops),
    .abi_major = KMUX_BACKEND_ABI_MAJOR,
    .abi_minor = KMUX_BACKEND_ABI_MINOR,
    .name = "fakegpu",
    .init = f_init,
    .fini = f_fini,
    .probe = f_probe,
    .version = f_version,
    .device_props = f_device_props,
    .device_caps = f_device_caps,
    .mem_alloc = f_alloc,
    .mem_free = f_free,
    .stream_create = f_stream_create,
    .stream_destroy = f_stream_destroy,
    .stream_synchronize = f_sync,
    .mem_copy = f_copy,
    .mem_set = f_set,
    .event_create = f_event_create,
    .event_destroy = f_event_destroy,
    .event_record = f_event_record,
    .event_synchronize = f_event_sync,
    .event_elapsed_ms = f_elapsed,
    .matmul = &matmul_ops,
    .matmul_degenerate = f_degenerate,
    .device_diag = f_device_diag,
    .host_alloc = f_host_alloc,
    .host_free = f_host_free,
    .stream_wait_event = f_stream_wait,
};

KMUX_BACKEND_EXPORT const kmux_backend_ops *kmux_backend_entry(void);
const kmux_backend_ops *kmux_backend_entry(void) {
    return &ops;
}
