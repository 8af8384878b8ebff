/*
 * alloc_fault.c - KMUX_FAULT_ALLOC=N, a test hook (issue 51, as SQLite's fault injection): the
 * N-th host allocation made through kmux_sys_alloc.h, counted across the core and every plugin
 * from the process's first, fails as if memory had run out; every other allocation succeeds.
 * The failing one is said on stderr ("kmux: KMUX_FAULT_ALLOC=N: allocation N fails"), so that
 * a sweep over N = 1, 2, ... knows when a run no longer reaches N. Unset, empty or not a
 * positive integer: off (the hook then costs one load per allocation).
 */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>

#include "internal.h"
#include "kmux_sys_alloc.h"

static long g_fail_at; /* 0: off */
static atomic_long g_count;
static pthread_once_t g_once = PTHREAD_ONCE_INIT;

static void read_env(void) {
    const char *v = getenv("KMUX_FAULT_ALLOC");
    if (!v || !*v) return;
    char *end;
    errno = 0;
    long n = strtol(v, &end, 10);
    if (errno == 0 && *end == '\0' && n > 0) g_fail_at = n;
}

int kmux_alloc_fault(void) {
    pthread_once(&g_once, read_env);
    if (g_fail_at == 0) return 0;
    long k = atomic_fetch_add_explicit(&g_count, 1, memory_order_relaxed) + 1;
    if (k != g_fail_at) return 0;
    fprintf(stderr, "kmux: KMUX_FAULT_ALLOC=%ld: allocation %ld fails\n", g_fail_at, k);
    return 1;
}

void kmux_alloc_fault_install(void) {
    kmux_sys_alloc_hook(kmux_alloc_fault);
}
