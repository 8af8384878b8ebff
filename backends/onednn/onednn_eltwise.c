/*
 * onednn_eltwise.c - the element-wise family on cpu:onednn: oneDNN's eltwise primitive first
 * where oneDNN has the algorithm with kmux's definition and a JIT kernel for the dtype on this
 * CPU (its vectorised exp/tanh/erf are what the shared CPU kernels lack), then kmux's CPU kernels
 * ("kmux:cpu", backends/cpu_common/cpu_eltwise.c) as the next implementation, and the only one
 * where oneDNN offers just its reference kernel or differs from the definition: ReLU (oneDNN
 * multiplies -Inf and a masked Inf gradient by 0: NaN, where kmux.h says 0; the own loop
 * vectorises and is bound by memory anyway), linear and reciprocal (oneDNN's pow goes through
 * exp/log), and GELU-tanh's backward (oneDNN 2.6 forms 1 + tanh(u), which cancels: 2e-3 relative
 * error at x = -4 and 2x at x = -5 in f32, measured by test_conformance_eltwise; the shared kernel
 * forms it as a sigmoid). A new algorithm of the table runs as "kmux:cpu" until it gets a row in
 * `dnn_alg`.
 */
#include "onednn_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct dnn_elt_plan {
    kmux_dnn_plan base; /* the execution contexts; impl names "onednn:eltwise:<kernel>" */
    kmux_eltwise_desc d;
    dnnl_primitive_t prim; /* NULL: kmux:cpu only */
    dnnl_memory_desc_t md;
    size_t scratch;
} dnn_elt_plan;

/* oneDNN's algorithm of alg, direction and alpha (*alpha: its own), 0 when it has none with
 * kmux's definition. */
static dnnl_alg_kind_t dnn_alg(const kmux_eltwise_desc *d, float *alpha) {
    *alpha = 0.0f;
    const int dst = d->prop == KMUX_PROP_BACKWARD && d->use_dst_for_bwd;
    switch (d->alg) {
    case KMUX_ELTWISE_GELU_TANH: /* backward: 1 + tanh(u) cancels, see the file comment */
        return d->prop == KMUX_PROP_FORWARD ? dnnl_eltwise_gelu_tanh : (dnnl_alg_kind_t)0;
    case KMUX_ELTWISE_GELU_ERF:
        return dnnl_eltwise_gelu_erf;
    case KMUX_ELTWISE_SIGMOID:
        return dst ? dnnl_eltwise_logistic_use_dst_for_bwd : dnnl_eltwise_logistic;
    case KMUX_ELTWISE_TANH:
        return dst ? dnnl_eltwise_tanh_use_dst_for_bwd : dnnl_eltwise_tanh;
    case KMUX_ELTWISE_SILU: /* swish: x * sigmoid(alpha x) */
        *alpha = 1.0f;
        return dnnl_eltwise_swish;
    default:
        return (dnnl_alg_kind_t)0;
    }
}

/* The primitive of d, when oneDNN runs it with a JIT kernel; NULL otherwise (no error: the
 * plan then runs kmux:cpu). */
static void make_prim(kmux_dnn_state *st, dnn_elt_plan *p) {
    const kmux_eltwise_desc *d = &p->d;
    float alpha = 0.0f;
    const dnnl_alg_kind_t alg = dnn_alg(d, &alpha);
    if (!alg || !st->engine || d->n > INT32_MAX) return; /* oneDNN 2.6: 32-bit offsets inside */
    const dnnl_dims_t dims = {d->n};
    if (dnnl_memory_desc_init_by_tag(&p->md, 1, dims, kmux_dnn_dtype(d->dtype), dnnl_a) !=
        dnnl_success)
        return;
    dnnl_primitive_attr_t attr = kmux_dnn_attr_new();
    if (!attr) return;
    dnnl_eltwise_desc_t fd, bd;
    dnnl_primitive_desc_t fpd = NULL, pd = NULL;
    /* the backward needs the forward's primitive descriptor as its hint */
    const dnnl_alg_kind_t falg = d->alg == KMUX_ELTWISE_SIGMOID ? dnnl_eltwise_logistic
                                 : d->alg == KMUX_ELTWISE_TANH  ? dnnl_eltwise_tanh
                                                                : alg;
    if (dnnl_eltwise_forward_desc_init(&fd, dnnl_forward_training, falg, &p->md, alpha, 0.0f) ==
            dnnl_success &&
        kmux_dnn_pd_create(&fd, attr, st->engine, NULL, 0, NULL, NULL, &fpd) == dnnl_success) {
        if (d->prop == KMUX_PROP_FORWARD) {
            pd = fpd;
            fpd = NULL;
        } else if (dnnl_eltwise_backward_desc_init(&bd, alg, &p->md, &p->md, alpha, 0.0f) ==
                   dnnl_success) {
            if (kmux_dnn_pd_create(&bd, attr, st->engine, fpd, 0, NULL, NULL, &pd) != dnnl_success)
                pd = NULL;
        }
    }
    if (fpd) dnnl_primitive_desc_destroy(fpd);
    dnnl_primitive_attr_destroy(attr);
    if (!pd) return;
    const char *impl = kmux_dnn_pd_impl(pd);
    if (!kmux_dnn_is_ref_kernel(impl) && dnnl_primitive_create(&p->prim, pd) == dnnl_success) {
        p->scratch = kmux_dnn_pd_scratch(pd);
        snprintf(p->base.impl, sizeof p->base.impl, "onednn:eltwise:%s", impl);
    } else {
        p->prim = NULL;
    }
    dnnl_primitive_desc_destroy(pd);
}

static kmux_status plan_create(void *state, int device, const kmux_eltwise_desc *desc,
                               const kmux_plan_prefs *prefs, void **plan, int *impl_count) {
    kmux_dnn_state *st = state;
    dnn_elt_plan *p = calloc(1, sizeof *p);
    if (!p) return kmux_dnn_oom(st, "kmux_eltwise_plan_create", sizeof *p);
    p->d = *desc;
    p->base.kind = KMUX_DNN_ELTWISE;
    p->base.effective_compute = KMUX_COMPUTE_F32;
    kmux_dnn_pool_init(&p->base);
    kmux_dnn_threads th;
    kmux_dnn_threads_enter(st, &th);
    make_prim(st, p);
    kmux_dnn_threads_leave(&th);
    p->base.workspace_bytes = p->scratch;
    *plan = p;
    *impl_count = p->prim ? 2 : 1;
    return KMUX_OK;
}

static kmux_status run_prim(kmux_dnn_state *st, dnn_elt_plan *p, const kmux_eltwise_args *a) {
    const char *fn = "kmux_eltwise_execute";
    kmux_dnn_exec_ctx *ctx = NULL;
    kmux_status ks = kmux_dnn_ctx_acquire(fn, st, &p->base, p->scratch, &ctx);
    if (ks != KMUX_OK) return ks;
    const int fwd = p->d.prop == KMUX_PROP_FORWARD;
    /* (argument, pointer) of the direction, in memory slots 0.. */
    const int ids[3] = {fwd                    ? DNNL_ARG_SRC
                        : p->d.use_dst_for_bwd ? DNNL_ARG_DST
                                               : DNNL_ARG_SRC,
                        fwd ? DNNL_ARG_DST : DNNL_ARG_DIFF_DST, DNNL_ARG_DIFF_SRC};
    void *ptrs[3] = {(void *)(fwd || !p->d.use_dst_for_bwd ? a->src : a->dst),
                     fwd ? a->dst : (void *)a->diff_dst, a->diff_src};
    dnnl_exec_arg_t args[4];
    int n = 0;
    for (int i = 0; i < (fwd ? 2 : 3) && ks == KMUX_OK; i++) {
        dnnl_memory_t m = kmux_dnn_ctx_mem(st, ctx, i, &p->md, ptrs[i], &ks);
        if (m) args[n++] = (dnnl_exec_arg_t){ids[i], m};
    }
    if (ks == KMUX_OK && ctx->scratch_mem)
        args[n++] = (dnnl_exec_arg_t){DNNL_ARG_SCRATCHPAD, ctx->scratch_mem};
    if (ks == KMUX_OK) {
        dnnl_status_t s = dnnl_primitive_execute(p->prim, ctx->stream, n, args);
        if (s != dnnl_success) ks = kmux_dnn_fail(st, fn, "dnnl_primitive_execute", s);
    }
    kmux_dnn_ctx_release(&p->base, ctx);
    return ks;
}

static kmux_status execute(void *state, const void *plan, int impl, void *stream,
                           const kmux_eltwise_args *args) {
    dnn_elt_plan *p = (dnn_elt_plan *)plan;
    if (!p->prim || impl == 1) return kmux_cpu_eltwise_run(state, &p->d, args);
    kmux_dnn_state *st = state;
    kmux_dnn_threads th;
    kmux_dnn_threads_enter(st, &th);
    kmux_status ks = run_prim(st, p, args);
    kmux_dnn_threads_leave(&th);
    return ks;
}

static kmux_status plan_info(void *state, const void *plan, int impl, kmux_plan_info *info) {
    const dnn_elt_plan *p = plan;
    if (!p->prim || impl == 1) return kmux_cpu_kernels_info(info);
    info->impl = p->base.impl;
    info->effective_compute = KMUX_COMPUTE_F32;
    info->workspace_bytes = p->scratch;
    info->deterministic = 1;
    return KMUX_OK;
}

static void plan_destroy(void *state, void *plan) {
    dnn_elt_plan *p = plan;
    kmux_dnn_pool_destroy(&p->base);
    if (p->prim) dnnl_primitive_destroy(p->prim);
    free(p);
}

const kmux_eltwise_ops kmux_dnn_eltwise_ops = {
    .plan_create = plan_create,
    .execute = execute,
    .plan_info = plan_info,
    .plan_destroy = plan_destroy,
};
