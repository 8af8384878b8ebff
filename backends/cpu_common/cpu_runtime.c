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

#include "cpu_model.h"
#include "kmux_cpu_kernels.h"
#include "kmux_family.h"
#include "kmux_sys_alloc.h"

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
    void *p = kmux_sys_aligned_alloc(HOST_ALIGN, rounded);
    if (!p) return oom(state, "kmux_malloc", bytes);
    *ptr = p;
    return KMUX_OK;
}

kmux_status kmux_cpu_mem_free(void *state, int device, void *ptr) {
    free(ptr);
    return KMUX_OK;
}

kmux_status kmux_cpu_stream_create(void *state, int device, void *native, int own, void **stream) {
    cpu_stream *s = kmux_sys_malloc(sizeof *s);
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
    cpu_event *e = kmux_sys_calloc(1, sizeof *e);
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

void kmux_cpu_fill_host_props(kmux_device_props *p, int num_threads) {
    memset(p, 0, sizeof *p);
    const kmux_cpu_id *id = kmux_cpu_id_host();
    snprintf(p->vendor, sizeof p->vendor, "%s", id->vendor);
    snprintf(p->name, sizeof p->name, "%s", id->model_name);
    snprintf(p->arch, sizeof p->arch, "%s",
             (id->isa & KMUX_ISA_AVX512F)                            ? "avx512_core"
             : (id->isa & KMUX_ISA_AVX2) && (id->isa & KMUX_ISA_FMA) ? "avx2"
             : (id->isa & KMUX_ISA_SSE42)                            ? "sse4.2"
                                                                     : "generic");
    p->is_host = 1;
    long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
    p->memory_bytes = pages > 0 && page > 0 ? (int64_t)pages * page : 0;
    p->compute_units = num_threads;
}

kmux_status kmux_cpu_plan_copy(void *state, const char *fn, const void *desc, size_t size,
                               void **plan, int *impl_count) {
    void *p = kmux_sys_malloc(size);
    if (!p) {
        const kmux_cpu_state_header *h = state;
        return h->host->set_error(KMUX_ERR_OUT_OF_MEMORY, "%s: out of memory (%zu bytes)", fn,
                                  size);
    }
    memcpy(p, desc, size);
    *plan = p;
    *impl_count = 1;
    return KMUX_OK;
}

kmux_status kmux_cpu_kernels_info(kmux_plan_info *info) {
    info->impl = "kmux:cpu";
    info->effective_compute = KMUX_COMPUTE_F32;
    info->workspace_bytes = 0;
    info->deterministic = 1;
    return KMUX_OK;
}

void kmux_cpu_plan_free(void *state, void *plan) {
    free(plan);
}

void kmux_cpu_families_caps(kmux_device_caps *caps) {
    if (KMUX_CAPS_HAS(caps, eltwise)) kmux_cpu_eltwise_caps(&caps->eltwise);
    if (KMUX_CAPS_HAS(caps, optimizer)) kmux_cpu_optimizer_caps(&caps->optimizer);
    if (KMUX_CAPS_HAS(caps, softmax)) kmux_cpu_softmax_caps(&caps->softmax);
    if (KMUX_CAPS_HAS(caps, binary)) kmux_cpu_binary_caps(&caps->binary);
    if (KMUX_CAPS_HAS(caps, reduction)) kmux_cpu_reduction_caps(&caps->reduction);
    if (KMUX_CAPS_HAS(caps, pooling)) kmux_cpu_pooling_caps(&caps->pooling);
}
