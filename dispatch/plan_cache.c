/*
 * plan_cache.c - the context's bounded LRU cache of matmul plans, so that repeated kmux_gemm_ex
 * calls with the same arguments pay plan creation (a oneDNN primitive, a cuBLASLt heuristic
 * query) once.
 *
 * Key: the device and every field of the descriptor, copied into a canonical array of int64 (no
 * struct padding is compared). Entries in use by a running call are reference-counted: an entry
 * is only evicted when no call holds it; when every entry is busy the new plan is handed out
 * uncached and destroyed on release. One mutex guards the table; plan creation happens under it,
 * which serialises only first-time shapes.
 */
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "kmux_sys_alloc.h"

#define KEY_WORDS 20

typedef struct cache_entry {
    int64_t key[KEY_WORDS];
    uint64_t hash;
    const kmux_device *dev;
    kmux_plan *plan;
    int refs;
    uint64_t last_use;
} cache_entry;

struct kmux_plan_cache {
    pthread_mutex_t lock;
    cache_entry *entries; /* grown on demand up to capacity: a large capacity costs nothing
                             until plans are cached */
    int capacity;         /* <= 0: no caching */
    int count, allocated;
    uint64_t clock;
};

static void make_key(const kmux_matmul_desc *d, int64_t key[KEY_WORDS]) {
    int64_t k[KEY_WORDS] = {d->order,
                            d->transa,
                            d->transb,
                            d->m,
                            d->n,
                            d->k,
                            d->a_type,
                            d->b_type,
                            d->c_type,
                            d->lda,
                            d->ldb,
                            d->ldc,
                            d->batch_count,
                            d->stride_a,
                            d->stride_b,
                            d->stride_c,
                            d->compute_type,
                            (int64_t)d->epilogue,
                            d->bias_type,
                            0};
    memcpy(key, k, sizeof k);
}

static uint64_t hash_key(const kmux_device *dev, const int64_t key[KEY_WORDS]) {
    uint64_t h = 1469598103934665603ull ^ (uint64_t)(uintptr_t)dev;
    for (int i = 0; i < KEY_WORDS; i++) {
        h ^= (uint64_t)key[i];
        h *= 1099511628211ull;
    }
    return h;
}

kmux_status kmux_plan_cache_create(int capacity, kmux_plan_cache **cache) {
    kmux_plan_cache *c = kmux_sys_calloc(1, sizeof *c);
    if (!c) return kmux_set_error(KMUX_ERR_OUT_OF_MEMORY, "kmux_context_create: out of memory");
    c->capacity = capacity;
    pthread_mutex_init(&c->lock, NULL);
    *cache = c;
    return KMUX_OK;
}

void kmux_plan_cache_destroy(kmux_plan_cache *cache) {
    if (!cache) return;
    for (int i = 0; i < cache->count; i++)
        kmux_plan_free(cache->entries[i].plan);
    free(cache->entries);
    pthread_mutex_destroy(&cache->lock);
    free(cache);
}

kmux_status kmux_plan_cache_get_matmul(kmux_plan_cache *cache, kmux_device *dev,
                                       const kmux_matmul_desc *desc, kmux_plan **plan) {
    int64_t key[KEY_WORDS];
    make_key(desc, key);
    uint64_t h = hash_key(dev, key);
    pthread_mutex_lock(&cache->lock);
    for (int i = 0; i < cache->count; i++) {
        cache_entry *e = &cache->entries[i];
        if (e->hash == h && e->dev == dev && memcmp(e->key, key, sizeof key) == 0) {
            e->refs++;
            e->last_use = ++cache->clock;
            *plan = e->plan;
            pthread_mutex_unlock(&cache->lock);
            return KMUX_OK;
        }
    }
    kmux_plan *p = NULL;
    kmux_status st = kmux_matmul_plan_create_unchecked(dev, desc, NULL, &p);
    if (st != KMUX_OK) {
        pthread_mutex_unlock(&cache->lock);
        return st;
    }
    int slot = -1;
    if (cache->capacity > 0) {
        if (cache->count == cache->allocated && cache->count < cache->capacity) {
            int n = cache->allocated ? cache->allocated * 2 : 16;
            if (n > cache->capacity) n = cache->capacity;
            cache_entry *grown = kmux_sys_realloc(cache->entries, (size_t)n * sizeof *grown);
            if (grown) { /* else: evict below, as when full */
                cache->entries = grown;
                cache->allocated = n;
            }
        }
        if (cache->count < cache->allocated) {
            slot = cache->count++;
        } else {
            uint64_t oldest = UINT64_MAX;
            for (int i = 0; i < cache->count; i++)
                if (cache->entries[i].refs == 0 && cache->entries[i].last_use < oldest) {
                    oldest = cache->entries[i].last_use;
                    slot = i;
                }
            if (slot >= 0) {
                kmux_trace(2, "cache,evict,%s", cache->entries[slot].plan->dev->props.id);
                kmux_plan_free(cache->entries[slot].plan);
            }
        }
    }
    if (slot >= 0) {
        cache_entry *e = &cache->entries[slot];
        memcpy(e->key, key, sizeof key);
        e->hash = h;
        e->dev = dev;
        e->plan = p;
        e->refs = 1;
        e->last_use = ++cache->clock;
        p->cached = 1;
    }
    pthread_mutex_unlock(&cache->lock);
    *plan = p;
    return KMUX_OK;
}

void kmux_plan_cache_release(kmux_plan_cache *cache, kmux_plan *plan) {
    if (!plan->cached) { /* handed out uncached: cache disabled or full of busy entries */
        kmux_plan_free(plan);
        return;
    }
    pthread_mutex_lock(&cache->lock);
    for (int i = 0; i < cache->count; i++)
        if (cache->entries[i].plan == plan) {
            cache->entries[i].refs--;
            break;
        }
    pthread_mutex_unlock(&cache->lock);
}
