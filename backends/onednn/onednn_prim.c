/*
 * onednn_prim.c - one oneDNN primitive behind an op family's plan (eltwise, pooling, binary):
 * made from its primitive descriptor when oneDNN has a kernel better than its reference one,
 * run over the caller's tensors through the plan's pooled execution contexts, reported and
 * freed. What differs between families (the descriptor, which tensor is which argument) stays
 * in each family's file.
 */
#include "onednn_internal.h"
#include "kmux_sys_alloc.h"

#include <stdio.h>
#include <stdlib.h>

void kmux_dnn_prim_init(kmux_dnn_prim *p) {
    p->base.kind = KMUX_DNN_FAMILY;
    p->base.effective_compute = KMUX_COMPUTE_F32;
    kmux_dnn_pool_init(&p->base);
}

dnnl_primitive_desc_t kmux_dnn_pd_of(const kmux_dnn_state *st, const_dnnl_op_desc_t fwd,
                                     const_dnnl_op_desc_t bwd) {
    dnnl_primitive_attr_t attr = kmux_dnn_attr_new();
    if (!attr) return NULL;
    dnnl_primitive_desc_t fpd = NULL, pd = NULL;
    if (kmux_dnn_pd_create(fwd, attr, st->engine, NULL, 0, NULL, NULL, &fpd) != dnnl_success) {
        fpd = NULL;
    } else if (!bwd) {
        pd = fpd, fpd = NULL;
    } else if (kmux_dnn_pd_create(bwd, attr, st->engine, fpd, 0, NULL, NULL, &pd) != dnnl_success) {
        pd = NULL;
    }
    if (fpd) dnnl_primitive_desc_destroy(fpd);
    dnnl_primitive_attr_destroy(attr);
    return pd;
}

void kmux_dnn_prim_adopt(kmux_dnn_prim *p, dnnl_primitive_desc_t pd, const char *family) {
    p->prim = NULL;
    if (!pd) return;
    const char *impl = kmux_dnn_pd_impl(pd);
    if (!kmux_dnn_is_ref_kernel(impl) && dnnl_primitive_create(&p->prim, pd) == dnnl_success) {
        p->scratch = kmux_dnn_pd_scratch(pd);
        p->base.workspace_bytes = p->scratch;
        snprintf(p->base.impl, sizeof p->base.impl, "onednn:%s:%s", family, impl);
    } else {
        p->prim = NULL;
    }
    dnnl_primitive_desc_destroy(pd);
}

kmux_status kmux_dnn_prim_run(kmux_dnn_state *st, kmux_dnn_prim *p, const char *fn, int n,
                              const int *arg_ids, const dnnl_memory_desc_t *const *mds,
                              void *const *ptrs) {
    kmux_dnn_threads th;
    kmux_dnn_threads_enter(st, &th);
    kmux_dnn_exec_ctx *ctx = NULL;
    kmux_status ks = kmux_dnn_ctx_acquire(fn, st, &p->base, p->scratch, NULL, 0, &ctx);
    if (ks == KMUX_OK) {
        dnnl_exec_arg_t args[KMUX_DNN_MAX_MEMS + 1];
        int k = 0;
        for (int i = 0; i < n && i < KMUX_DNN_MAX_MEMS && ks == KMUX_OK; i++) {
            dnnl_memory_t m = kmux_dnn_ctx_mem(st, ctx, i, mds[i], ptrs[i], &ks);
            if (m) args[k++] = (dnnl_exec_arg_t){arg_ids[i], m};
        }
        if (ks == KMUX_OK && ctx->scratch_mem)
            args[k++] = (dnnl_exec_arg_t){DNNL_ARG_SCRATCHPAD, ctx->scratch_mem};
        if (ks == KMUX_OK) {
            const dnnl_status_t s = dnnl_primitive_execute(p->prim, ctx->stream, k, args);
            if (s != dnnl_success) ks = kmux_dnn_fail(st, fn, "dnnl_primitive_execute", s);
        }
        kmux_dnn_ctx_release(&p->base, ctx);
    }
    kmux_dnn_threads_leave(&th);
    return ks;
}

kmux_status kmux_dnn_prim_info(const kmux_dnn_prim *p, kmux_plan_info *info) {
    info->impl = p->base.impl;
    info->effective_compute = KMUX_COMPUTE_F32;
    info->workspace_bytes = p->scratch;
    info->deterministic = 1;
    return KMUX_OK;
}

void kmux_dnn_prim_fini(kmux_dnn_prim *p) {
    kmux_dnn_pool_destroy(&p->base);
    if (p->prim) dnnl_primitive_destroy(p->prim);
}

kmux_status kmux_dnn_family_create(kmux_dnn_state *st, const char *fn, size_t size,
                                   const void *desc,
                                   void (*make)(kmux_dnn_state *, void *, const void *),
                                   void **plan, int *impl_count) {
    kmux_dnn_prim *p = kmux_sys_calloc(1, size);
    if (!p) return kmux_dnn_oom(st, fn, size);
    kmux_dnn_prim_init(p);
    kmux_dnn_threads th;
    kmux_dnn_threads_enter(st, &th);
    make(st, p, desc);
    kmux_dnn_threads_leave(&th);
    *plan = p;
    *impl_count = p->prim ? 2 : 1;
    return KMUX_OK;
}

kmux_status kmux_dnn_family_info(void *state, const void *plan, int impl, kmux_plan_info *info) {
    const kmux_dnn_prim *p = plan;
    if (!p->prim || impl == 1) return kmux_cpu_kernels_info(info);
    return kmux_dnn_prim_info(p, info);
}

void kmux_dnn_family_destroy(void *state, void *plan) {
    kmux_dnn_prim_fini(plan);
    free(plan);
}
