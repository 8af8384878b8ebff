/*
 * cpu_runtime.c - host memory, synchronous streams and clock events for CPU backends, and the
 * host part of a CPU device's properties.
 */
#define _POSIX_C_SOURCE 200809L
#include "cpu_runtime.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "kmux_cpu_kernels.h"

#define HOST_ALIGN 64

typedef struct cpu_stream {
    int device;
} cpu_stream;

typedef struct cpu_event {
    double t;
} cpu_event;

static kmux_status oom(void *state, const char *fn, size_t bytes) {
    const kmux_cpu_state_header *h = state;
    return h->host->set_error(KMUX_ERR_OUT_OF_MEMORY,
                              "%s: cannot allocate %zu bytes of host memory", fn, bytes);
}

double kmux_cpu_now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

kmux_status kmux_cpu_mem_alloc(void *state, int device, size_t bytes, void **ptr) {
    size_t rounded = (bytes + HOST_ALIGN - 1) / HOST_ALIGN * HOST_ALIGN;
    if (rounded < bytes) return oom(state, "kmux_malloc", bytes);
    void *p = aligned_alloc(HOST_ALIGN, rounded);
    if (!p) return oom(state, "kmux_malloc", bytes);
    *ptr = p;
    return KMUX_OK;
}

kmux_status kmux_cpu_mem_free(void *state, int device, void *ptr) {
    free(ptr);
    return KMUX_OK;
}

kmux_status kmux_cpu_stream_create(void *state, int device, void *native, int own, void **stream) {
    cpu_stream *s = malloc(sizeof *s);
    if (!s) return oom(state, "kmux_stream_create", sizeof *s);
    s->device = device;
    *stream = s;
    return KMUX_OK;
}

kmux_status kmux_cpu_stream_destroy(void *state, void *stream) {
    free(stream);
    return KMUX_OK;
}

kmux_status kmux_cpu_stream_synchronize(void *state, void *stream) {
    return KMUX_OK; /* CPU streams complete every call before returning */
}

kmux_status kmux_cpu_mem_copy(void *state, void *stream, void *dst, const void *src, size_t bytes,
                              kmux_memcpy_kind kind) {
    memmove(dst, src, bytes);
    return KMUX_OK;
}

kmux_status kmux_cpu_mem_set(void *state, void *stream, void *dst, int value, size_t bytes) {
    memset(dst, value, bytes);
    return KMUX_OK;
}

kmux_status kmux_cpu_event_create(void *state, int device, void **event) {
    cpu_event *e = calloc(1, sizeof *e);
    if (!e) return oom(state, "kmux_event_create", sizeof *e);
    *event = e;
    return KMUX_OK;
}

kmux_status kmux_cpu_event_destroy(void *state, void *event) {
    free(event);
    return KMUX_OK;
}

kmux_status kmux_cpu_event_record(void *state, void *event, void *stream) {
    ((cpu_event *)event)->t = kmux_cpu_now_s();
    return KMUX_OK;
}

kmux_status kmux_cpu_event_synchronize(void *state, void *event) {
    return KMUX_OK;
}

kmux_status kmux_cpu_event_elapsed_ms(void *state, void *start, void *end, float *ms) {
    *ms = (float)((((cpu_event *)end)->t - ((cpu_event *)start)->t) * 1e3);
    return KMUX_OK;
}

/* Value of the first "key : value" line of /proc/cpuinfo with that key. */
static int cpuinfo_field(const char *key, char *out, size_t size) {
    FILE *f = fopen("/proc/cpuinfo", "r");
    if (!f) return 0;
    char line[512];
    int found = 0;
    size_t klen = strlen(key);
    while (!found && fgets(line, sizeof line, f)) {
        if (strncmp(line, key, klen) != 0) continue;
        char *colon = strchr(line, ':');
        if (!colon) continue;
        colon++;
        while (*colon == ' ' || *colon == '\t')
            colon++;
        colon[strcspn(colon, "\n")] = '\0';
        snprintf(out, size, "%s", colon);
        found = 1;
    }
    fclose(f);
    return found;
}

/* Nominal maximum clock in MHz: cpufreq when the kernel exposes it, else /proc/cpuinfo. */
static double max_clock_mhz(void) {
    FILE *f = fopen("/sys/devices/system/cpu/cpu0/cpufreq/cpuinfo_max_freq", "r");
    if (f) {
        double khz = 0;
        int ok = fscanf(f, "%lf", &khz) == 1;
        fclose(f);
        if (ok && khz > 0) return khz / 1e3;
    }
    char buf[64];
    if (cpuinfo_field("cpu MHz", buf, sizeof buf)) return atof(buf);
    return 0;
}

void kmux_cpu_fill_host_props(kmux_device_props *p, int num_threads) {
    memset(p, 0, sizeof *p);
    char buf[128];
    if (cpuinfo_field("vendor_id", buf, sizeof buf))
        snprintf(p->vendor, sizeof p->vendor, "%s",
                 strcmp(buf, "AuthenticAMD") == 0   ? "AMD"
                 : strcmp(buf, "GenuineIntel") == 0 ? "Intel"
                                                    : buf);
    else
        snprintf(p->vendor, sizeof p->vendor, "generic");
    if (!cpuinfo_field("model name", p->name, sizeof p->name))
        snprintf(p->name, sizeof p->name, "unknown CPU");

    int avx512 = kmux_cpu_has_avx512_bf16() || kmux_cpu_has_avx512_fp16();
    int avx2 = kmux_cpu_has_avx2_fma();
    snprintf(p->arch, sizeof p->arch, "%s", avx512 ? "avx512_core" : avx2 ? "avx2" : "generic");
    p->is_host = 1;
    long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
    p->memory_bytes = pages > 0 && page > 0 ? (int64_t)pages * page : 0;
    p->compute_units = num_threads;
    p->clock_mhz = max_clock_mhz();

    /* Peak = threads x f32 lanes x 2 FMA pipes x 2 flop per FMA x clock. Two FMA pipes is right
     * for Zen 2-4 and Intel server cores since Haswell; a lead to compare with, not a promise
     * (kmux-bench measures the clock it really gets). */
    double lanes = avx512 ? 16 : avx2 ? 8 : 4;
    double f32 = num_threads * lanes * 2 * 2 * p->clock_mhz * 1e6;
    p->peak_flops[KMUX_F32] = f32;
    p->peak_flops[KMUX_F64] = f32 / 2;
    /* f16/bf16/fp8 run through f32 arithmetic on CPUs without native kernels. */
    p->peak_flops[KMUX_F16] = f32;
    p->peak_flops[KMUX_BF16] = f32;
}
