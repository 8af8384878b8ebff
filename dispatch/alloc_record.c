/*
 * alloc_record.c - the one record of every block kmux_malloc and kmux_host_malloc returned, so that
 * kmux_free / kmux_host_free refuse a pointer they did not return (a double free, a static array,
 * a malloc'd block, a block of another device or another context) with KMUX_ERR_INVALID_ARGUMENT,
 * as cudaFree answers cudaErrorInvalidValue, instead of handing it to free() or a vendor runtime.
 *
 * Process-wide (a block freed through another context's device is named as such): open
 * addressing keyed by the pointer, backward-shift deletion, grows at half load; one mutex, fork
 * safe like the handle registry (handles.c).
 */
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "kmux_sys_alloc.h"

typedef struct entry {
    uintptr_t ptr; /* 0 = empty */
    kmux_device *dev;
    size_t bytes;
    kmux_alloc_kind kind;
} entry;

static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;
static entry *g_tab;
static size_t g_cap, g_count;
static pthread_once_t g_once = PTHREAD_ONCE_INIT;

static void fork_prepare(void) {
    pthread_mutex_lock(&g_lock);
}
static void fork_parent(void) {
    pthread_mutex_unlock(&g_lock);
}
static void fork_child(void) {
    pthread_mutex_t fresh = PTHREAD_MUTEX_INITIALIZER;
    memcpy(&g_lock, &fresh, sizeof fresh);
}
static void init_once(void) {
    pthread_atfork(fork_prepare, fork_parent, fork_child);
}

static size_t slot_of(uintptr_t p, size_t cap) {
    uint64_t h = (uint64_t)p * 0x9E3779B97F4A7C15ull;
    return (size_t)(h >> 19) & (cap - 1);
}

static size_t find(uintptr_t p) { /* index of p, or g_cap when absent */
    if (!g_cap) return 0;
    for (size_t i = slot_of(p, g_cap);; i = (i + 1) & (g_cap - 1)) {
        if (g_tab[i].ptr == p) return i;
        if (g_tab[i].ptr == 0) return g_cap;
    }
}

static void place(entry e) {
    size_t i = slot_of(e.ptr, g_cap);
    while (g_tab[i].ptr)
        i = (i + 1) & (g_cap - 1);
    g_tab[i] = e;
}

static int grow(void) {
    size_t cap = g_cap ? g_cap * 2 : 64;
    entry *old = g_tab, *tab = kmux_sys_calloc(cap, sizeof *tab);
    if (!tab) return 0;
    size_t old_cap = g_cap;
    g_tab = tab;
    g_cap = cap;
    for (size_t i = 0; i < old_cap; i++)
        if (old[i].ptr) place(old[i]);
    free(old);
    return 1;
}

static const char *kind_fn(kmux_alloc_kind kind) {
    return kind == KMUX_ALLOC_HOST ? "kmux_host_malloc" : "kmux_malloc";
}

kmux_status kmux_alloc_record_add(kmux_device *dev, void *ptr, size_t bytes, kmux_alloc_kind kind) {
    pthread_once(&g_once, init_once);
    pthread_mutex_lock(&g_lock);
    kmux_status st = KMUX_OK;
    if ((g_count + 1) * 2 > g_cap && !grow()) {
        st = kmux_set_error(KMUX_ERR_OUT_OF_MEMORY, "%s: out of memory recording the block",
                            kind_fn(kind));
    } else {
        /* A backend that hands out a live block twice is a bug of that backend; the newer
         * record wins so that the next free of it succeeds once. */
        size_t i = find((uintptr_t)ptr);
        if (i < g_cap) {
            g_tab[i].dev = dev, g_tab[i].bytes = bytes, g_tab[i].kind = kind;
        } else {
            place((entry){(uintptr_t)ptr, dev, bytes, kind});
            g_count++;
            KMUX_LIVE_ADD(dev->ctx, live_allocs, 1);
        }
    }
    pthread_mutex_unlock(&g_lock);
    return st;
}

/* Removes the entry at i, shifting back the entries of its probe run. */
static void remove_at(size_t i) {
    size_t j = i;
    for (;;) {
        g_tab[i].ptr = 0;
        for (;;) {
            j = (j + 1) & (g_cap - 1);
            if (g_tab[j].ptr == 0) return;
            size_t k = slot_of(g_tab[j].ptr, g_cap);
            /* j's entry may move to i when its home k is not cyclically in (i, j] */
            if (i <= j ? (i < k && k <= j) : (i < k || k <= j)) continue;
            break;
        }
        g_tab[i] = g_tab[j];
        i = j;
    }
}

kmux_status kmux_alloc_record_take(kmux_device *dev, void *ptr, kmux_alloc_kind kind,
                                   const char *fn, size_t *bytes) {
    pthread_once(&g_once, init_once);
    pthread_mutex_lock(&g_lock);
    size_t i = find((uintptr_t)ptr);
    kmux_status st = KMUX_OK;
    if (i >= g_cap) {
        st = kmux_set_error(KMUX_ERR_INVALID_ARGUMENT,
                            "%s: ptr = %p on %s was not returned by %s (or was freed already); "
                            "nothing was freed",
                            fn, ptr, dev->props.id, kind_fn(kind));
    } else if (g_tab[i].kind != kind) {
        st = kmux_set_error(KMUX_ERR_INVALID_ARGUMENT,
                            "%s: ptr = %p on %s was returned by %s, not %s: free it with %s", fn,
                            ptr, dev->props.id, kind_fn(g_tab[i].kind), kind_fn(kind),
                            g_tab[i].kind == KMUX_ALLOC_HOST ? "kmux_host_free" : "kmux_free");
    } else if (g_tab[i].dev != dev) {
        const kmux_device *owner = g_tab[i].dev;
        st = kmux_set_error(KMUX_ERR_INVALID_ARGUMENT,
                            "%s: ptr = %p was allocated on %s%s, not on dev = %s; nothing was "
                            "freed",
                            fn, ptr, owner->props.id,
                            owner->ctx != dev->ctx ? " of another context" : "", dev->props.id);
    } else {
        if (bytes) *bytes = g_tab[i].bytes;
        remove_at(i);
        g_count--;
        KMUX_LIVE_ADD(dev->ctx, live_allocs, -1);
    }
    pthread_mutex_unlock(&g_lock);
    return st;
}
