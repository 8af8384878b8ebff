/*
 * openblas_workspace.c - scratch memory of executes (f32 copies for "+cvt", im2col columns).
 *
 * Plans hold no buffer: every execute takes its own, so several threads may execute one plan at
 * the same time, as the plugin ABI allows. Allocating afresh on every call is not free, though:
 * measured on the development VM (glibc 2.36), filling a 48 MiB buffer costs 3-7 ms when it is
 * reused and ~50 ms when it is freshly allocated, because glibc serves blocks above 32 MiB with
 * mmap and every page then faults again (~4 us each); below that, fresh blocks cost 20-70 % more
 * to fill. So buffers given back are pooled in the backend state: at most KMUX_OB_POOL_SLOTS of
 * them, each at most POOL_MAX_BYTES (retained memory <= 256 MiB), the largest ones kept. A
 * mutex guards the pool only while a buffer is taken or given back (~50 ns).
 */
#include "openblas_internal.h"
#include "kmux_sys_alloc.h"

#include <stdlib.h>

#define POOL_MAX_BYTES ((size_t)64 << 20)
#define HEADER 64 /* keeps the user pointer 64-byte aligned; holds the capacity */

static size_t capacity_of(void *p) {
    return *(size_t *)((char *)p - HEADER);
}

void *kmux_ob_ws_get(kmux_ob_state *st, size_t bytes) {
    kmux_ob_pool *pool = &st->pool;
    void *found = NULL;
    pthread_mutex_lock(&pool->lock);
    int best = -1;
    for (int i = 0; i < KMUX_OB_POOL_SLOTS; i++)
        if (pool->buf[i] && pool->cap[i] >= bytes && (best < 0 || pool->cap[i] < pool->cap[best]))
            best = i;
    if (best >= 0) {
        found = pool->buf[best];
        pool->buf[best] = NULL;
    }
    pthread_mutex_unlock(&pool->lock);
    if (found) return found;

    if (bytes > SIZE_MAX - HEADER - 63) return NULL;
    size_t cap = (bytes + 63) & ~(size_t)63;
    char *raw = kmux_sys_aligned_alloc(64, HEADER + cap);
    if (!raw) return NULL;
    *(size_t *)raw = cap;
    return raw + HEADER;
}

void kmux_ob_ws_put(kmux_ob_state *st, void *p) {
    if (!p) return;
    const size_t cap = capacity_of(p);
    void *evict = p; /* what ends up freed: p itself, or the smaller buffer it replaces */
    if (cap <= POOL_MAX_BYTES) {
        kmux_ob_pool *pool = &st->pool;
        pthread_mutex_lock(&pool->lock);
        int slot = -1;
        for (int i = 0; i < KMUX_OB_POOL_SLOTS; i++) {
            if (!pool->buf[i]) {
                slot = i;
                break;
            }
            if (pool->cap[i] < cap && (slot < 0 || pool->cap[i] < pool->cap[slot])) slot = i;
        }
        if (slot >= 0) {
            evict = pool->buf[slot];
            pool->buf[slot] = p;
            pool->cap[slot] = cap;
        }
        pthread_mutex_unlock(&pool->lock);
    }
    if (evict) free((char *)evict - HEADER);
}

void kmux_ob_ws_release_all(kmux_ob_state *st) {
    for (int i = 0; i < KMUX_OB_POOL_SLOTS; i++) {
        if (st->pool.buf[i]) free((char *)st->pool.buf[i] - HEADER);
        st->pool.buf[i] = NULL;
    }
}
