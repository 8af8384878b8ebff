/*
 * onednn_pooling.c - the pooling family on cpu:onednn: oneDNN's pooling primitive first for the
 * averages (forward and backward, either padding rule: oneDNN's pooling_avg_include_padding and
 * pooling_avg_exclude_padding are kmux's AVG_INCLUDE_PAD and AVG_EXCLUDE_PAD) where oneDNN has a
 * JIT kernel for the dtype and layout on this CPU, then kmux's CPU kernels ("kmux:cpu",
 * backends/cpu_common/cpu_pooling.c) as the next implementation. MAX stays on kmux:cpu alone:
 * oneDNN's kernels keep the running maximum with "dst < src", so a NaN in a window is dropped
 * (an all-NaN window gives -FLT_MAX) where kmux.h, as PyTorch's MaxPool2d, propagates it; and its
 * backward reads a workspace of indices written by a training forward, where kmux's backward
 * takes x.
 */
#include "onednn_internal.h"

#include "dispatch/common/kmux_pooling.h"

#include <stdio.h>
#include <stdlib.h>

typedef struct dnn_pool_plan {
    kmux_dnn_plan base; /* the execution contexts; impl names "onednn:pooling:<kernel>" */
    kmux_pooling_desc d;
    dnnl_primitive_t prim; /* NULL: kmux:cpu only */
    dnnl_memory_desc_t x_md, y_md;
    size_t scratch;
} dnn_pool_plan;

/* oneDNN's algorithm of alg, 0 where oneDNN's definition differs from kmux's (MAX). */
static dnnl_alg_kind_t dnn_alg(kmux_pooling_alg alg) {
    switch (alg) {
    case KMUX_POOLING_AVG_INCLUDE_PAD:
        return dnnl_pooling_avg_include_padding;
    case KMUX_POOLING_AVG_EXCLUDE_PAD:
        return dnnl_pooling_avg_exclude_padding;
    default:
        return (dnnl_alg_kind_t)0;
    }
}

/* The primitive of p->d when oneDNN runs it with a JIT kernel; p->prim stays NULL otherwise (no
 * error: the plan then runs kmux:cpu). */
static void make_prim(kmux_dnn_state *st, dnn_pool_plan *p) {
    const kmux_pooling_desc *d = &p->d;
    const dnnl_alg_kind_t alg = dnn_alg(d->alg);
    const dnnl_data_type_t dt = kmux_dnn_dtype(d->dtype);
    if (!alg || !st->engine || dt == dnnl_data_type_undef) return;
    const int64_t oh = kmux_pool_out_dim(d->h, d->kernel_h, d->stride_h, d->pad_top, d->pad_bottom);
    const int64_t ow = kmux_pool_out_dim(d->w, d->kernel_w, d->stride_w, d->pad_left, d->pad_right);
    /* oneDNN 2.6 offsets are 32-bit inside some kernels: the larger tensor must fit */
    if (d->n * d->c * d->h * d->w > INT32_MAX) return;
    const dnnl_format_tag_t tag = d->layout == KMUX_NHWC ? dnnl_nhwc : dnnl_nchw;
    const dnnl_dims_t xd = {d->n, d->c, d->h, d->w}, yd = {d->n, d->c, oh, ow};
    const dnnl_dims_t strides = {d->stride_h, d->stride_w}, kernel = {d->kernel_h, d->kernel_w};
    const dnnl_dims_t pad_l = {d->pad_top, d->pad_left}, pad_r = {d->pad_bottom, d->pad_right};
    if (dnnl_memory_desc_init_by_tag(&p->x_md, 4, xd, dt, tag) != dnnl_success ||
        dnnl_memory_desc_init_by_tag(&p->y_md, 4, yd, dt, tag) != dnnl_success)
        return;
    dnnl_primitive_attr_t attr = kmux_dnn_attr_new();
    if (!attr) return;
    dnnl_pooling_desc_t fd, bd;
    dnnl_primitive_desc_t fpd = NULL, pd = NULL;
    const dnnl_prop_kind_t prop =
        d->prop == KMUX_PROP_FORWARD ? dnnl_forward_inference : dnnl_forward_training;
    if (dnnl_pooling_forward_desc_init(&fd, prop, alg, &p->x_md, &p->y_md, strides, kernel, pad_l,
                                       pad_r) == dnnl_success &&
        kmux_dnn_pd_create(&fd, attr, st->engine, NULL, 0, NULL, NULL, &fpd) == dnnl_success) {
        if (d->prop == KMUX_PROP_FORWARD) {
            pd = fpd;
            fpd = NULL;
        } else if (dnnl_pooling_backward_desc_init(&bd, alg, &p->x_md, &p->y_md, strides, kernel,
                                                   pad_l, pad_r) == dnnl_success) {
            /* the backward needs the forward's primitive descriptor as its hint */
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
        snprintf(p->base.impl, sizeof p->base.impl, "onednn:pooling:%s", impl);
    } else {
        p->prim = NULL;
    }
    dnnl_primitive_desc_destroy(pd);
}

static kmux_status plan_create(void *state, int device, const kmux_pooling_desc *desc,
                               const kmux_plan_prefs *prefs, void **plan, int *impl_count) {
    kmux_dnn_state *st = state;
    dnn_pool_plan *p = calloc(1, sizeof *p);
    if (!p) return kmux_dnn_oom(st, "kmux_pooling_plan_create", sizeof *p);
    p->d = *desc;
    p->base.kind = KMUX_DNN_FAMILY;
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

static kmux_status run_prim(kmux_dnn_state *st, dnn_pool_plan *p, const kmux_pooling_args *a) {
    const char *fn = "kmux_pooling_execute";
    kmux_dnn_exec_ctx *ctx = NULL;
    kmux_status ks = kmux_dnn_ctx_acquire(fn, st, &p->base, p->scratch, &ctx);
    if (ks != KMUX_OK) return ks;
    const int fwd = p->d.prop == KMUX_PROP_FORWARD;
    /* (argument, descriptor, pointer) of the direction, in memory slots 0 and 1 */
    const int ids[2] = {fwd ? DNNL_ARG_SRC : DNNL_ARG_DIFF_DST,
                        fwd ? DNNL_ARG_DST : DNNL_ARG_DIFF_SRC};
    const dnnl_memory_desc_t *mds[2] = {fwd ? &p->x_md : &p->y_md, fwd ? &p->y_md : &p->x_md};
    void *ptrs[2] = {fwd ? (void *)a->x : (void *)a->dy, fwd ? a->y : a->dx};
    dnnl_exec_arg_t args[3];
    int n = 0;
    for (int i = 0; i < 2 && ks == KMUX_OK; i++) {
        dnnl_memory_t m = kmux_dnn_ctx_mem(st, ctx, i, mds[i], ptrs[i], &ks);
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
                           const kmux_pooling_args *args) {
    dnn_pool_plan *p = (dnn_pool_plan *)plan;
    if (!p->prim || impl == 1) return kmux_cpu_pooling_ops.execute(state, &p->d, 0, stream, args);
    kmux_dnn_state *st = state;
    kmux_dnn_threads th;
    kmux_dnn_threads_enter(st, &th);
    kmux_status ks = run_prim(st, p, args);
    kmux_dnn_threads_leave(&th);
    return ks;
}

static kmux_status plan_info(void *state, const void *plan, int impl, kmux_plan_info *info) {
    const dnn_pool_plan *p = plan;
    if (!p->prim || impl == 1) return kmux_cpu_kernels_info(info);
    info->impl = p->base.impl;
    info->effective_compute = KMUX_COMPUTE_F32;
    info->workspace_bytes = p->scratch;
    info->deterministic = 1;
    return KMUX_OK;
}

static void plan_destroy(void *state, void *plan) {
    dnn_pool_plan *p = plan;
    kmux_dnn_pool_destroy(&p->base);
    if (p->prim) dnnl_primitive_destroy(p->prim);
    free(p);
}

const kmux_pooling_ops kmux_dnn_pooling_ops = {
    .plan_create = plan_create,
    .execute = execute,
    .plan_info = plan_info,
    .plan_destroy = plan_destroy,
};
