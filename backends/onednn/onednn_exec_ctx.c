/*
 * onednn_exec_ctx.c - the pool of execution contexts of a plan (see kmux_dnn_exec_ctx).
 *
 * oneDNN primitives may be executed concurrently from several threads as long as each
 * execution has its own scratchpad (user-managed mode) and memory objects; a oneDNN CPU stream
 * is cheap but not free to create (~0.09 us), memory objects even less so (~0.3 us each). A
 * context bundles all of them and is owned by one execute at a time.
 */
#include "onednn_internal.h"
#include "kmux_sys_alloc.h"

#include <stdlib.h>
#include <string.h>

#define KMUX_DNN_ALIGN 64

static void *aligned_bytes(size_t bytes) {
    size_t rounded = (bytes + KMUX_DNN_ALIGN - 1) / KMUX_DNN_ALIGN * KMUX_DNN_ALIGN;
    if (rounded < bytes) return NULL;
    return kmux_sys_aligned_alloc(KMUX_DNN_ALIGN, rounded ? rounded : KMUX_DNN_ALIGN);
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
    if (c->own_scratch_mem) dnnl_memory_destroy(c->own_scratch_mem);
    if (c->ext_scratch_mem) dnnl_memory_destroy(c->ext_scratch_mem);
    if (c->stream) dnnl_stream_destroy(c->stream);
    free(c->own_scratch);
    free(c->own_work);
    free(c);
}

/* A 1-D u8 memory of `bytes` over ptr (DNNL_MEMORY_NONE: no data yet) in *mem. */
static kmux_status u8_mem(kmux_dnn_state *st, size_t bytes, void *ptr, dnnl_memory_t *mem,
                          const char *fn) {
    dnnl_memory_desc_t md;
    dnnl_dims_t dims = {(dnnl_dim_t)bytes};
    dnnl_status_t s = dnnl_memory_desc_init_by_tag(&md, 1, dims, dnnl_u8, dnnl_a);
    if (s == dnnl_success) s = dnnl_memory_create(mem, &md, st->engine, ptr);
    if (s != dnnl_success) {
        *mem = NULL;
        return kmux_dnn_fail(st, fn, "scratchpad memory creation", s);
    }
    return KMUX_OK;
}

/* Grows the context's own scratchpad to at least bytes. */
static kmux_status ctx_own_scratch(kmux_dnn_state *st, kmux_dnn_exec_ctx *c, size_t bytes,
                                   const char *fn) {
    if (bytes <= c->own_scratch_cap) return KMUX_OK;
    if (c->own_scratch_mem) dnnl_memory_destroy(c->own_scratch_mem);
    c->own_scratch_mem = NULL;
    free(c->own_scratch);
    c->own_scratch_cap = 0;
    c->own_scratch = aligned_bytes(bytes);
    if (!c->own_scratch) return kmux_dnn_oom(st, fn, bytes);
    kmux_status ks = u8_mem(st, bytes, c->own_scratch, &c->own_scratch_mem, fn);
    if (ks == KMUX_OK) c->own_scratch_cap = bytes;
    return ks;
}

/* The scratchpad inside the caller's workspace at p: a memory object without data of its own
 * (remade only when a larger one is needed), its handle set to p. */
static kmux_status ctx_ext_scratch(kmux_dnn_state *st, kmux_dnn_exec_ctx *c, size_t bytes, void *p,
                                   const char *fn) {
    if (bytes > c->ext_scratch_cap) {
        if (c->ext_scratch_mem) dnnl_memory_destroy(c->ext_scratch_mem);
        c->ext_scratch_cap = 0;
        kmux_status ks = u8_mem(st, bytes, DNNL_MEMORY_NONE, &c->ext_scratch_mem, fn);
        if (ks != KMUX_OK) return ks;
        c->ext_scratch_cap = bytes;
    }
    dnnl_status_t s = dnnl_memory_set_data_handle(c->ext_scratch_mem, p);
    return s == dnnl_success ? KMUX_OK : kmux_dnn_fail(st, fn, "dnnl_memory_set_data_handle", s);
}

size_t kmux_dnn_work_offset(size_t work_bytes) {
    return (work_bytes + KMUX_DNN_ALIGN - 1) / KMUX_DNN_ALIGN * KMUX_DNN_ALIGN;
}

kmux_status kmux_dnn_ctx_acquire(const char *fn, kmux_dnn_state *st, kmux_dnn_plan *plan,
                                 size_t scratch_bytes, void *ws, size_t ws_bytes,
                                 kmux_dnn_exec_ctx **ctx) {
    const size_t off = kmux_dnn_work_offset(plan->work_bytes);
    if (ws && (off > ws_bytes || scratch_bytes > ws_bytes - off))
        /* a primitive made at execution for other alpha/beta (onednn_matmul.c) asking for more
         * scratchpad than the plan's own: not seen with oneDNN 2.6, refused rather than
         * written past the caller's memory */
        return KMUX_DNN_ERROR(st, KMUX_ERR_WORKSPACE,
                              "%s: backend onednn: this call needs %zu bytes of workspace, "
                              "args->workspace_bytes = %zu",
                              fn, off + scratch_bytes, ws_bytes);
    pthread_mutex_lock(&plan->pool.lock);
    kmux_dnn_exec_ctx *c = plan->pool.free_list;
    if (c) plan->pool.free_list = c->next;
    pthread_mutex_unlock(&plan->pool.lock);
    if (!c) {
        c = kmux_sys_calloc(1, sizeof *c);
        if (!c) return kmux_dnn_oom(st, fn, sizeof *c);
        dnnl_status_t s = dnnl_stream_create(&c->stream, st->engine, dnnl_stream_default_flags);
        if (s != dnnl_success) {
            ctx_destroy(c);
            return kmux_dnn_fail(st, fn, "dnnl_stream_create", s);
        }
    }
    kmux_status ks = KMUX_OK;
    if (ws) { /* the caller's: the workspace first, the scratchpad after it */
        c->work = ws;
        char *scratch = (char *)ws + off;
        c->scratch_mem = NULL;
        if (scratch_bytes) ks = ctx_ext_scratch(st, c, scratch_bytes, scratch, fn);
        if (scratch_bytes && ks == KMUX_OK) c->scratch_mem = c->ext_scratch_mem;
    } else {
        if (plan->work_bytes && !c->own_work) {
            c->own_work = aligned_bytes(plan->work_bytes);
            if (!c->own_work) ks = kmux_dnn_oom(st, fn, plan->work_bytes);
        }
        c->work = c->own_work;
        if (ks == KMUX_OK) ks = ctx_own_scratch(st, c, scratch_bytes, fn);
        c->scratch_mem = scratch_bytes ? c->own_scratch_mem : NULL;
    }
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
