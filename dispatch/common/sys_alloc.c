/* sys_alloc.c - kmux_sys_alloc.h: the C library's allocators behind the fault hook. */
#include "kmux_sys_alloc.h"

#include <stdatomic.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

typedef int (*fault_fn)(void);
static _Atomic(fault_fn) g_fault;

void kmux_sys_alloc_hook(int (*fault)(void)) {
    atomic_store_explicit(&g_fault, fault, memory_order_relaxed);
}

void kmux_sys_alloc_use_host(const kmux_backend_host *host) {
    if (host &&
        host->struct_size >= offsetof(kmux_backend_host, alloc_fault) + sizeof host->alloc_fault)
        kmux_sys_alloc_hook(host->alloc_fault);
}

static int fails(void) {
    fault_fn f = atomic_load_explicit(&g_fault, memory_order_relaxed);
    return f && f();
}

void *kmux_sys_malloc(size_t bytes) {
    return fails() ? NULL : malloc(bytes);
}

void *kmux_sys_calloc(size_t n, size_t size) {
    return fails() ? NULL : calloc(n, size);
}

void *kmux_sys_realloc(void *p, size_t bytes) {
    return fails() ? NULL : realloc(p, bytes);
}

void *kmux_sys_aligned_alloc(size_t align, size_t bytes) {
    if (fails()) return NULL;
    size_t rounded = (bytes + align - 1) / align * align;
    return rounded < bytes ? NULL : aligned_alloc(align, rounded);
}

char *kmux_sys_strdup(const char *s) {
    size_t n = strlen(s) + 1;
    char *d = kmux_sys_malloc(n);
    if (d) memcpy(d, s, n);
    return d;
}
