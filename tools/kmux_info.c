/*
 * kmux-info - what this machine offers: every backend kmux found (loaded or not, and why), and
 * every usable device with its properties, dtype support and peak figures.
 *
 * Usage: kmux-info [--help]
 * Exit status: 0 when the report was printed (even if no GPU backend is available), 1 when no
 * context could be created.
 */
#include <stdio.h>
#include <string.h>

#include "kmux.h"

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
    printf("  compute units   %d%s\n", p.compute_units, p.is_host ? " (threads)" : "");
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

int main(int argc, char **argv) {
    if (argc > 1 && (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0)) {
        printf("usage: kmux-info\n\nLists every kmux backend (loaded or not, with the reason) and "
               "every device.\nEnvironment: KMUX_BACKEND_PATH, KMUX_BACKENDS, KMUX_DEVICE, "
               "KMUX_NUM_THREADS, KMUX_VERBOSE=2 (loader trace on stderr).\n");
        return 0;
    }
    kmux_context *ctx = NULL;
    if (kmux_context_create(NULL, &ctx) != KMUX_OK) {
        fprintf(stderr, "kmux-info: cannot create a context: %s\n", kmux_last_error());
        return 1;
    }
    printf("kmux %s\n\nBackends\n", kmux_version());
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
    if (kmux_device_find(ctx, "auto", &autodev) == KMUX_OK)
        printf("\n\"auto\" selects %s\n", kmux_device_id(autodev));
    else
        printf("\n\"auto\" selects nothing: %s\n", kmux_last_error());
    kmux_context_destroy(ctx);
    return 0;
}
