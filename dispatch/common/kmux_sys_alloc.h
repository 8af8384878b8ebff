/*
 * kmux_sys_alloc.h - the one entry point of every host allocation made by the core and its
 * plugins (kmux_common, linked into each): malloc, calloc, realloc, aligned_alloc and strdup as
 * the C library's, except that an allocation the fault hook names fails (returns NULL) as if
 * memory had run out. The hook is the core's KMUX_FAULT_ALLOC counter (dispatch/alloc_fault.c):
 * one count across the core and every plugin, handed to a plugin in kmux_backend_host. Memory
 * from these is released with free(). Allocations inside vendor libraries are not counted.
 */
#ifndef KMUX_SYS_ALLOC_H
#define KMUX_SYS_ALLOC_H

#include <stddef.h>

#include "kmux_backend.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Installs the fault hook of this copy of kmux_common: fault() is asked before each allocation
 *  and returns 1 when it must fail. NULL: none. */
void kmux_sys_alloc_hook(int (*fault)(void));

/** In a plugin's init: installs the core's hook (host->alloc_fault, when struct_size covers it;
 *  an older core has none and nothing fails). */
void kmux_sys_alloc_use_host(const kmux_backend_host *host);

/** malloc(bytes), or NULL when the fault hook says so. */
void *kmux_sys_malloc(size_t bytes);
/** calloc(n, size), or NULL when the fault hook says so. */
void *kmux_sys_calloc(size_t n, size_t size);
/** realloc(p, bytes), or NULL (p untouched) when the fault hook says so. */
void *kmux_sys_realloc(void *p, size_t bytes);
/** aligned_alloc(align, bytes) (bytes rounded up to a multiple of align, as C11 requires), or
 *  NULL when the fault hook says so. */
void *kmux_sys_aligned_alloc(size_t align, size_t bytes);
/** strdup(s), or NULL when the fault hook says so. */
char *kmux_sys_strdup(const char *s);

#ifdef __cplusplus
}
#endif
#endif
