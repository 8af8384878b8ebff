/*
 * handles.c - the process-wide registry of handle objects (contexts, devices, streams, events,
 * plans). Handle memory is never returned to malloc: a destroyed handle keeps its header with a
 * dead tag and waits in a per-kind FIFO quarantine before it is recycled (with a bumped
 * generation). Every address ever handed out stays in a hash set, so a check of any pointer
 * value first asks the set (no memory is read for a pointer kmux never made) and then reads a
 * header that is always valid memory. The one thing that cannot be told apart: a stale pointer
 * whose slot was recycled into a live handle of the same kind (after KMUX_HANDLE_QUARANTINE
 * further destructions of that kind).
 */
#define _POSIX_C_SOURCE 200809L
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "kmux_sys_alloc.h"

#define KMUX_HANDLE_QUARANTINE 64
#define KMUX_HANDLE_DEAD 0x80000000u

typedef struct quarantine {
    kmux_handle **items; /* ring buffer of destroyed handles, oldest first */
    size_t head, count, cap;
} quarantine;

static pthread_rwlock_t g_lock = PTHREAD_RWLOCK_INITIALIZER;
static uintptr_t *g_set; /* open addressing, 0 = empty; grows at half load */
static size_t g_set_cap, g_set_count;
static quarantine g_free[KMUX_HANDLE_KIND_COUNT];
static pthread_once_t g_once = PTHREAD_ONCE_INIT;

static void fork_prepare(void) {
    pthread_rwlock_wrlock(&g_lock);
}
static void fork_parent(void) {
    pthread_rwlock_unlock(&g_lock);
}
/* The child's only thread is not the lock's owner by id: start it with a fresh, free lock. */
static void fork_child(void) {
    pthread_rwlock_t fresh = PTHREAD_RWLOCK_INITIALIZER;
    memcpy(&g_lock, &fresh, sizeof fresh);
}
static void init_once(void) {
    /* No fork may copy the registry in the middle of a change by another thread. */
    pthread_atfork(fork_prepare, fork_parent, fork_child);
}

static const char *const kind_names[KMUX_HANDLE_KIND_COUNT] = {
    "?", "kmux_context", "kmux_device", "kmux_stream", "kmux_event", "kmux_plan"};

const char *kmux_handle_kind_name(kmux_handle_kind kind) {
    return kind > 0 && kind < KMUX_HANDLE_KIND_COUNT ? kind_names[kind] : "?";
}

static size_t slot_of(uintptr_t p, size_t cap) {
    uint64_t h = (uint64_t)p * 0x9E3779B97F4A7C15ull;
    return (size_t)(h >> 17) & (cap - 1);
}

static int set_contains(uintptr_t p) {
    if (!g_set) return 0;
    for (size_t i = slot_of(p, g_set_cap);; i = (i + 1) & (g_set_cap - 1)) {
        if (g_set[i] == p) return 1;
        if (g_set[i] == 0) return 0;
    }
}

static void set_put(uintptr_t *set, size_t cap, uintptr_t p) {
    size_t i = slot_of(p, cap);
    while (set[i] != 0)
        i = (i + 1) & (cap - 1);
    set[i] = p;
}

/* Adds p (under the write lock); 0 when out of memory. */
static int set_add(uintptr_t p) {
    if (2 * (g_set_count + 1) > g_set_cap) {
        size_t cap = g_set_cap ? 2 * g_set_cap : 256;
        uintptr_t *n = kmux_sys_calloc(cap, sizeof *n);
        if (!n) return 0;
        for (size_t i = 0; i < g_set_cap; i++)
            if (g_set[i]) set_put(n, cap, g_set[i]);
        free(g_set);
        g_set = n;
        g_set_cap = cap;
    }
    set_put(g_set, g_set_cap, p);
    g_set_count++;
    return 1;
}

void *kmux_handle_alloc(kmux_handle_kind kind, size_t size) {
    pthread_once(&g_once, init_once);
    pthread_rwlock_wrlock(&g_lock);
    quarantine *q = &g_free[kind];
    kmux_handle *h = NULL;
    if (q->count > KMUX_HANDLE_QUARANTINE) {
        h = q->items[q->head];
        q->head = (q->head + 1) % q->cap;
        q->count--;
        uint32_t gen = h->gen + 1;
        memset(h, 0, size);
        h->gen = gen;
    } else {
        h = kmux_sys_calloc(1, size);
        if (h && !set_add((uintptr_t)h)) {
            free(h);
            h = NULL;
        }
    }
    if (h) __atomic_store_n(&h->tag, (uint32_t)kind, __ATOMIC_RELEASE);
    pthread_rwlock_unlock(&g_lock);
    return h;
}

void kmux_handle_release(void *p) {
    kmux_handle *h = p;
    if (!h) return;
    pthread_rwlock_wrlock(&g_lock);
    quarantine *q = &g_free[h->tag & ~KMUX_HANDLE_DEAD];
    __atomic_store_n(&h->tag, h->tag | KMUX_HANDLE_DEAD, __ATOMIC_RELEASE);
    if (q->count == q->cap) {
        size_t cap = q->cap ? 2 * q->cap : 128;
        kmux_handle **n = kmux_sys_malloc(cap * sizeof *n);
        if (n) {
            for (size_t i = 0; i < q->count; i++)
                n[i] = q->items[(q->head + i) % q->cap];
            free(q->items);
            q->items = n;
            q->head = 0;
            q->cap = cap;
        }
    }
    /* When the ring cannot grow the handle stays dead for good (still in the set, never reused). */
    if (q->count < q->cap) {
        q->items[(q->head + q->count) % q->cap] = h;
        q->count++;
    }
    pthread_rwlock_unlock(&g_lock);
}

kmux_status kmux_handle_check(const char *fn, const char *arg, const void *p,
                              kmux_handle_kind kind) {
    if (!p) return kmux_set_error(KMUX_ERR_INVALID_ARGUMENT, "%s: %s is NULL", fn, arg);
    pthread_rwlock_rdlock(&g_lock);
    int known = set_contains((uintptr_t)p);
    uint32_t tag = known ? __atomic_load_n(&((const kmux_handle *)p)->tag, __ATOMIC_ACQUIRE) : 0;
    pthread_rwlock_unlock(&g_lock);
    if (tag == (uint32_t)kind) return KMUX_OK;
    if (!known)
        return kmux_set_error(KMUX_ERR_INVALID_ARGUMENT,
                              "%s: %s %p is not a %s (not a handle kmux made)", fn, arg, p,
                              kind_names[kind]);
    if (tag == ((uint32_t)kind | KMUX_HANDLE_DEAD))
        return kmux_set_error(KMUX_ERR_INVALID_ARGUMENT, "%s: %s %p was destroyed", fn, arg, p);
    return kmux_set_error(KMUX_ERR_INVALID_ARGUMENT, "%s: %s %p is not a %s (it is a %s%s)", fn,
                          arg, p, kind_names[kind], (tag & KMUX_HANDLE_DEAD) ? "destroyed " : "",
                          kmux_handle_kind_name((kmux_handle_kind)(tag & ~KMUX_HANDLE_DEAD)));
}
