/*
 * onednn_exec_ctx.c - the pool of execution contexts of a plan (see kmux_dnn_exec_ctx).
 *
 * oneDNN primitives may be executed concurrently from several threads as long as each
 * execution has its own scratchpad (user-managed mode) and memory objects; a oneDNN CPU stream
 * is cheap but not free to create (~0.09 us), memory objects even less so (~0.3 us each). A
 * context bundles all of them and is owned by one execute at a time.
 */
#include "onednn_internal.h"

#include <stdlib.h>
#include <string.h>

#define KMUX_DNN_ALIGN 64

static void *aligned_bytes(size_t bytes) {
    size_t rounded = (bytes + KMUX_DNN_ALIGN - 1) / KMUX_DNN_ALIGN * KMUX_DNN_ALIGN;
    if (rounded < bytes) return NULL;
    return aligned_alloc(KMUX_DNN_ALIGN, rounded ? rounded : KMUX_DNN_ALIGN);
}

void kmux_dnn_pool_init(kmux_dnn_plan *plan) {
    pthread_mutex_init(&plan->pool.lock, NULL);
    plan->pool.free_list = NULL;
}

static void ctx_forget_mems(kmux_dnn_exec_ctx *c) {
    for (int i = 0; i < KMUX_DNN_MAX_MEMS; i++) {
        if (c->mem[i]) dnnl_memory_destroy(c->mem[i]);
        c->mem[i] = NULL;
    }
}

static void ctx_destroy(kmux_dnn_exec_ctx *c) {
    ctx_forget_mems(c);
    if (c->scratch_mem) dnnl_memory_destroy(c->scratch_mem);
    if (c->stream) dnnl_stream_destroy(c->stream);
    free(c->scratch);
    free(c->work);
    free(c);
}

/* Grows the scratchpad of c to at least bytes (a 1-D u8 memory over it). */
static kmux_status ctx_scratch(kmux_dnn_state *st, kmux_dnn_exec_ctx *c, size_t bytes,
                               const char *fn) {
    if (bytes == 0 || bytes <= c->scratch_cap) return KMUX_OK;
    if (c->scratch_mem) dnnl_memory_destroy(c->scratch_mem);
    c->scratch_mem = NULL;
    free(c->scratch);
    c->scratch_cap = 0;
    c->scratch = aligned_bytes(bytes);
    if (!c->scratch) return kmux_dnn_oom(st, fn, bytes);
    dnnl_memory_desc_t md;
    dnnl_dims_t dims = {(dnnl_dim_t)bytes};
    dnnl_status_t s = dnnl_memory_desc_init_by_tag(&md, 1, dims, dnnl_u8, dnnl_a);
    if (s == dnnl_success) s = dnnl_memory_create(&c->scratch_mem, &md, st->engine, c->scratch);
    if (s != dnnl_success) return kmux_dnn_fail(st, fn, "scratchpad memory creation", s);
    c->scratch_cap = bytes;
    return KMUX_OK;
}

kmux_status kmux_dnn_ctx_acquire(const char *fn, kmux_dnn_state *st, kmux_dnn_plan *plan,
                                 size_t scratch_bytes, kmux_dnn_exec_ctx **ctx) {
    pthread_mutex_lock(&plan->pool.lock);
    kmux_dnn_exec_ctx *c = plan->pool.free_list;
    if (c) plan->pool.free_list = c->next;
    pthread_mutex_unlock(&plan->pool.lock);
    if (!c) {
        c = calloc(1, sizeof *c);
        if (!c) return kmux_dnn_oom(st, fn, sizeof *c);
        dnnl_status_t s = dnnl_stream_create(&c->stream, st->engine, dnnl_stream_default_flags);
        if (s != dnnl_success) {
            ctx_destroy(c);
            return kmux_dnn_fail(st, fn, "dnnl_stream_create", s);
        }
        if (plan->work_bytes) {
            c->work = aligned_bytes(plan->work_bytes);
            if (!c->work) {
                ctx_destroy(c);
                return kmux_dnn_oom(st, fn, plan->work_bytes);
            }
        }
    }
    kmux_status ks = ctx_scratch(st, c, scratch_bytes, fn);
    if (ks != KMUX_OK) {
        ctx_destroy(c);
        return ks;
    }
    c->next = NULL;
    c->fn = fn;
    *ctx = c;
    return KMUX_OK;
}

void kmux_dnn_ctx_release(kmux_dnn_plan *plan, kmux_dnn_exec_ctx *ctx) {
    pthread_mutex_lock(&plan->pool.lock);
    ctx->next = plan->pool.free_list;
    plan->pool.free_list = ctx;
    pthread_mutex_unlock(&plan->pool.lock);
}

void kmux_dnn_pool_destroy(kmux_dnn_plan *plan) {
    kmux_dnn_exec_ctx *c = plan->pool.free_list;
    while (c) {
        kmux_dnn_exec_ctx *next = c->next;
        ctx_destroy(c);
        c = next;
    }
    plan->pool.free_list = NULL;
    pthread_mutex_destroy(&plan->pool.lock);
}

dnnl_memory_t kmux_dnn_ctx_mem(kmux_dnn_state *st, kmux_dnn_exec_ctx *ctx, int i,
                               const dnnl_memory_desc_t *md, void *ptr, kmux_status *status) {
    const char *fn = ctx->fn ? ctx->fn : "kmux execution";
    dnnl_status_t s;
    if (!ctx->mem[i]) {
        s = dnnl_memory_create(&ctx->mem[i], md, st->engine, DNNL_MEMORY_NONE);
        if (s != dnnl_success) {
            ctx->mem[i] = NULL;
            *status = kmux_dnn_fail(st, fn, "dnnl_memory_create", s);
            return NULL;
        }
    }
    s = dnnl_memory_set_data_handle(ctx->mem[i], ptr);
    if (s != dnnl_success) {
        *status = kmux_dnn_fail(st, fn, "dnnl_memory_set_data_handle", s);
        return NULL;
    }
    return ctx->mem[i];
}
