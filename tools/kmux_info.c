/*
 * kmux-info - what this machine offers: the host CPU (vendor, family, model, microarchitecture,
 * ISA flags, caches, usable cores, the measured clock and the per-core rates of the peak model),
 * every backend kmux found (loaded or not, and why), and every usable device with its
 * properties, dtype support and peak figures.
 *
 * Usage: kmux-info [--json] [--help]
 * Exit status: 0 when the report was printed (even if no GPU backend is available), 1 when no
 * context could be created, 2 on a usage error (an unknown option).
 */
#include <jansson.h>
#include <stdio.h>
#include <string.h>

#include "cpu_model.h"
#include "kmux.h"

static const char usage[] =
    "usage: kmux-info [--json] [--help]\n\n"
    "Lists the host CPU, every kmux backend (loaded or not, with the reason) and every device.\n"
    "  --json   the same report as one JSON object on stdout\n"
    "Environment: KMUX_BACKEND_PATH, KMUX_BACKENDS, KMUX_DEVICE, KMUX_NUM_THREADS,\n"
    "KMUX_CPU_CLOCK_MHZ (use this clock instead of the measured one), KMUX_VERBOSE=2 (loader\n"
    "trace on stderr).\n";

/* ---- host CPU ------------------------------------------------------------------------------- */

typedef struct host_info {
    const kmux_cpu_id *id;
    kmux_cpu_rates rates;
    int cores;
    double clock_mhz;
    const char *clock_source;
} host_info;

static void host_collect(host_info *h) {
    h->id = kmux_cpu_id_host();
    kmux_cpu_rates_for(h->id->vendor, h->id->family, h->id->model, h->id->stepping, h->id->isa,
                       &h->rates);
    h->cores = kmux_cpu_usable_cores();
    h->clock_mhz = kmux_cpu_clock_mhz(&h->clock_source);
}

static void cache_name(const kmux_cpu_cache *c, char *buf, size_t cap) {
    snprintf(buf, cap, "L%d%s", c->level,
             !strcmp(c->type, "Data")          ? "d"
             : !strcmp(c->type, "Instruction") ? "i"
                                               : "");
}

static void host_print(const host_info *h) {
    const kmux_cpu_id *id = h->id;
    const kmux_cpu_rates *r = &h->rates;
    printf("\nHost CPU\n");
    printf("  name            %s\n", id->model_name);
    printf("  vendor          %s, family %d (0x%x), model %d (0x%x), stepping %d\n", id->vendor,
           id->family, id->family, id->model, id->model, id->stepping);
    printf("  uarch           %s: %d x %d-bit FMA per core, f32 %.0f f64 %.0f FLOP/cycle", r->uarch,
           r->fma_pipes, r->fma_bits, r->f32, r->f64);
    if (r->bf16 > 0) printf(", bf16 %.0f", r->bf16);
    if (r->f16 > 0) printf(", f16 %.0f", r->f16);
    if (r->i8 > 0) printf(", int8 %.0f OP/cycle", r->i8);
    printf(" (%s)\n", r->source);
    printf("  ISA            ");
    for (int i = 0; i < KMUX_ISA_COUNT_; ++i)
        if (id->isa & (1u << i)) printf(" %s", kmux_cpu_isa_name(i));
    printf("\n  caches         ");
    for (int i = 0; i < id->ncaches; ++i) {
        char n[8];
        cache_name(&id->caches[i], n, sizeof n);
        printf(" %s %ld KiB", n, id->caches[i].kib);
        if (id->caches[i].shared_by > 1) printf(" (%d CPUs)", id->caches[i].shared_by);
        if (i + 1 < id->ncaches) printf(",");
    }
    printf("%s\n", id->ncaches ? "" : " unknown");
    printf("  usable cores    %d (physical cores of the affinity mask, cgroup quota)\n", h->cores);
    printf("  clock           %.0f MHz (%s)\n", h->clock_mhz, h->clock_source);
    printf("  f32 peak        %.1f GFLOP/s = %d cores x %.0f FLOP/cycle x %.0f MHz\n",
           h->cores * r->f32 * h->clock_mhz * 1e-3, h->cores, r->f32, h->clock_mhz);
}

static json_t *host_json(const host_info *h) {
    const kmux_cpu_id *id = h->id;
    const kmux_cpu_rates *r = &h->rates;
    json_t *isa = json_array(), *caches = json_array();
    for (int i = 0; i < KMUX_ISA_COUNT_; ++i)
        if (id->isa & (1u << i)) json_array_append_new(isa, json_string(kmux_cpu_isa_name(i)));
    for (int i = 0; i < id->ncaches; ++i) {
        char n[8];
        cache_name(&id->caches[i], n, sizeof n);
        json_array_append_new(caches, json_pack("{s:s, s:i, s:s, s:I, s:i}", "name", n, "level",
                                                id->caches[i].level, "type", id->caches[i].type,
                                                "kib", (json_int_t)id->caches[i].kib, "shared_by",
                                                id->caches[i].shared_by));
    }
    json_t *rates = json_pack("{s:i, s:i, s:f, s:f, s:f, s:f, s:f, s:s}", "fma_bits", r->fma_bits,
                              "fma_pipes", r->fma_pipes, "f32", r->f32, "f64", r->f64, "bf16",
                              r->bf16, "f16", r->f16, "int8", r->i8, "source", r->source);
    return json_pack("{s:s, s:s, s:i, s:i, s:i, s:s, s:o, s:o, s:o, s:i, s:f, s:s, s:f}", "name",
                     id->model_name, "vendor", id->vendor, "family", id->family, "model", id->model,
                     "stepping", id->stepping, "uarch", r->uarch, "per_cycle_per_core", rates,
                     "isa", isa, "caches", caches, "usable_cores", h->cores, "clock_mhz",
                     h->clock_mhz, "clock_source", h->clock_source, "f32_peak_flops",
                     h->cores * r->f32 * h->clock_mhz * 1e6);
}

/* ---- devices -------------------------------------------------------------------------------- */

static void print_device(kmux_device *dev) {
    kmux_device_props p;
    if (kmux_device_props_get(dev, &p) != KMUX_OK) {
        printf("  (properties unavailable: %s)\n", kmux_last_error());
        return;
    }
    printf("\n%s\n", p.id);
    printf("  name            %s\n", p.name);
    printf("  vendor / arch   %s / %s\n", p.vendor, p.arch);
    printf("  backend         %s%s%s\n", p.backend, p.library_version[0] ? " - " : "",
           p.library_version);
    if (p.driver_version[0]) printf("  driver          %s\n", p.driver_version);
    if (p.pci_bus_id[0]) printf("  PCI bus id      %s\n", p.pci_bus_id);
    printf("  memory          %.1f GiB%s\n", (double)p.memory_bytes / (1024.0 * 1024 * 1024),
           p.is_host ? " (host memory)" : "");
    printf("  compute units   %d%s\n", p.compute_units, p.is_host ? " (cores)" : "");
    if (p.clock_mhz > 0) printf("  clock           %.0f MHz\n", p.clock_mhz);
    if (p.mem_bandwidth_gbps > 0) printf("  bandwidth       %.0f GB/s\n", p.mem_bandwidth_gbps);
    printf("  GEMM dtypes    ");
    for (int t = 1; t < KMUX_DTYPE_COUNT; t++)
        if (p.dtype_support[t]) printf(" %s", kmux_dtype_name((kmux_dtype)t));
    printf("\n  peak (dense)   ");
    int any = 0;
    for (int t = 1; t < KMUX_DTYPE_COUNT; t++)
        if (p.peak_flops[t] > 0) {
            printf(" %s %.1f %s", kmux_dtype_name((kmux_dtype)t), p.peak_flops[t] / 1e9,
                   t == KMUX_I8 ? "GOP/s" : "GFLOP/s");
            any = 1;
        }
    printf("%s\n", any ? "" : " n/a (reference backend: correctness oracle, not a speed path)");
}

static json_t *device_json(kmux_device *dev) {
    kmux_device_props p;
    if (kmux_device_props_get(dev, &p) != KMUX_OK) {
        json_t *err = json_string(kmux_last_error()); /* first: kmux_device_id clears it */
        return json_pack("{s:s, s:o}", "id", kmux_device_id(dev), "error", err);
    }
    json_t *dts = json_array(), *peaks = json_object();
    for (int t = 1; t < KMUX_DTYPE_COUNT; t++) {
        if (p.dtype_support[t]) json_array_append_new(dts, json_string(kmux_dtype_name(t)));
        if (p.peak_flops[t] > 0)
            json_object_set_new(peaks, kmux_dtype_name(t), json_real(p.peak_flops[t]));
    }
    return json_pack("{s:s, s:s, s:s, s:s, s:s, s:s, s:s, s:s, s:b, s:I, s:i, s:f, s:f, s:o, "
                     "s:o}",
                     "id", p.id, "backend", p.backend, "vendor", p.vendor, "name", p.name, "arch",
                     p.arch, "library_version", p.library_version, "driver_version",
                     p.driver_version, "pci_bus_id", p.pci_bus_id, "is_host", p.is_host,
                     "memory_bytes", (json_int_t)p.memory_bytes, "compute_units", p.compute_units,
                     "clock_mhz", p.clock_mhz, "mem_bandwidth_gbps", p.mem_bandwidth_gbps,
                     "gemm_dtypes", dts, "peak_flops", peaks);
}

static int report_json(kmux_context *ctx, const host_info *h) {
    json_t *backends = json_array(), *devices = json_array();
    int nb = 0, nd = 0;
    kmux_backend_count(ctx, &nb);
    for (int i = 0; i < nb; i++) {
        kmux_backend_info b;
        if (kmux_backend_info_get(ctx, i, &b) != KMUX_OK) continue;
        json_array_append_new(backends,
                              json_pack("{s:s, s:b, s:i, s:s, s:s, s:s}", "name", b.name,
                                        "available", b.available, "devices", b.device_count,
                                        "version", b.version, "path", b.path, "reason", b.reason));
    }
    kmux_device_count(ctx, &nd);
    for (int i = 0; i < nd; i++) {
        kmux_device *dev = NULL;
        if (kmux_device_get(ctx, i, &dev) == KMUX_OK)
            json_array_append_new(devices, device_json(dev));
    }
    kmux_device *autodev = NULL;
    json_t *autoj = kmux_device_find(ctx, "auto", &autodev) == KMUX_OK
                        ? json_string(kmux_device_id(autodev))
                        : json_null();
    json_t *root = json_pack("{s:s, s:o, s:o, s:o, s:o}", "kmux_version", kmux_version(), "host",
                             host_json(h), "backends", backends, "devices", devices, "auto", autoj);
    int ok = root && json_dumpf(root, stdout, JSON_INDENT(2)) == 0;
    printf("\n");
    json_decref(root);
    return ok ? 0 : 1;
}

int main(int argc, char **argv) {
    int json = 0;
    for (int i = 1; i < argc; ++i) {
        if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
            fputs(usage, stdout);
            return 0;
        } else if (!strcmp(argv[i], "--json")) {
            json = 1;
        } else {
            fprintf(stderr, "kmux-info: unknown argument '%s'\n%s", argv[i], usage);
            return 2;
        }
    }
    kmux_context *ctx = NULL;
    if (kmux_context_create(NULL, &ctx) != KMUX_OK) {
        fprintf(stderr, "kmux-info: cannot create a context: %s\n", kmux_last_error());
        return 1;
    }
    host_info h;
    host_collect(&h);
    if (json) {
        int rc = report_json(ctx, &h);
        kmux_context_destroy(ctx);
        return rc;
    }
    printf("kmux %s\n", kmux_version());
    host_print(&h);
    printf("\nBackends\n");
    int nb = 0;
    kmux_backend_count(ctx, &nb);
    for (int i = 0; i < nb; i++) {
        kmux_backend_info b;
        if (kmux_backend_info_get(ctx, i, &b) != KMUX_OK) continue;
        if (b.available)
            printf("  %-9s available   %d device%s  %s  [%s]\n", b.name, b.device_count,
                   b.device_count == 1 ? " " : "s", b.version, b.path);
        else
            printf("  %-9s unavailable: %s  [%s]\n", b.name, b.reason, b.path);
    }
    int nd = 0;
    kmux_device_count(ctx, &nd);
    printf("\nDevices (%d)\n", nd);
    for (int i = 0; i < nd; i++) {
        kmux_device *dev = NULL;
        if (kmux_device_get(ctx, i, &dev) == KMUX_OK) print_device(dev);
    }
    kmux_device *autodev = NULL;
    kmux_device_props ap;
    if (kmux_device_find(ctx, "auto", &autodev) == KMUX_OK &&
        kmux_device_props_get(autodev, &ap) == KMUX_OK)
        printf("\n\"auto\" selects %s (backend %s, %s%s)\n", ap.id, ap.backend, ap.name,
               strcmp(ap.id, "auto") == 0 ? "; plans tuned unless KMUX_TUNE=off" : "");
    else
        printf("\n\"auto\" selects nothing: %s\n", kmux_last_error());
    kmux_context_destroy(ctx);
    return 0;
}
