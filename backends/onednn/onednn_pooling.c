/*
 * onednn_pooling.c - the pooling family on cpu:onednn: oneDNN's pooling primitive first for the
 * averages (forward and backward, either padding rule: oneDNN's pooling_avg_include_padding and
 * pooling_avg_exclude_padding are kmux's AVG_INCLUDE_PAD and AVG_EXCLUDE_PAD) where oneDNN has a
 * kernel other than its reference one for the dtype and layout on this CPU (a JIT kernel, or
 * simple_nchw for plain NCHW), then kmux's CPU kernels ("kmux:cpu", cpu_common/cpu_pooling.c)
 * as the next implementation. MAX stays on kmux:cpu alone:
 * oneDNN 2.6's max pooling drops a NaN in a window (test_conformance_pooling with it enabled: a
 * finite value or Inf where ref, as kmux.h and PyTorch's MaxPool2d, gives NaN), and its backward
 * reads a workspace of indices written by a training forward, where kmux's backward takes x.
 */
#include "onednn_internal.h"

#include "dispatch/common/kmux_pooling.h"

typedef struct dnn_pool_plan {
    kmux_dnn_prim dnn; /* impl "onednn:pooling:<kernel>"; prim NULL: kmux:cpu only */
    kmux_pooling_desc d;
    dnnl_memory_desc_t x_md, y_md;
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

/* The primitive of p->d when oneDNN runs it with a kernel other than its reference one; p->dnn.prim
 * stays NULL otherwise (no error: the plan then runs kmux:cpu). */
static void make_prim(kmux_dnn_state *st, void *plan, const void *desc) {
    dnn_pool_plan *p = plan;
    p->d = *(const kmux_pooling_desc *)desc;
    const kmux_pooling_desc *d = &p->d;
    const dnnl_alg_kind_t alg = dnn_alg(d->alg);
    const dnnl_data_type_t dt = kmux_dnn_dtype(d->dtype);
    if (!alg || !st->engine || dt == dnnl_data_type_undef) return;
    const int64_t oh = kmux_pool_out_dim(d->h, d->kernel_h, d->stride_h, d->pad_top, d->pad_bottom);
    const int64_t ow = kmux_pool_out_dim(d->w, d->kernel_w, d->stride_w, d->pad_left, d->pad_right);
    const int64_t nx = d->n * d->c * d->h * d->w, ny = d->n * d->c * oh * ow; /* y may be larger */
    if (!kmux_dnn_family_fits(nx > ny ? nx : ny)) return;
    const dnnl_format_tag_t tag = d->layout == KMUX_NHWC ? dnnl_nhwc : dnnl_nchw;
    const dnnl_dims_t xd = {d->n, d->c, d->h, d->w}, yd = {d->n, d->c, oh, ow};
    const dnnl_dims_t strides = {d->stride_h, d->stride_w}, kernel = {d->kernel_h, d->kernel_w};
    const dnnl_dims_t pad_l = {d->pad_top, d->pad_left}, pad_r = {d->pad_bottom, d->pad_right};
    if (dnnl_memory_desc_init_by_tag(&p->x_md, 4, xd, dt, tag) != dnnl_success ||
        dnnl_memory_desc_init_by_tag(&p->y_md, 4, yd, dt, tag) != dnnl_success)
        return;
    const int bwd = d->prop == KMUX_PROP_BACKWARD;
    dnnl_pooling_desc_t fd, bd;
    if (dnnl_pooling_forward_desc_init(&fd, bwd ? dnnl_forward_training : dnnl_forward_inference,
                                       alg, &p->x_md, &p->y_md, strides, kernel, pad_l,
                                       pad_r) != dnnl_success)
        return;
    if (bwd && dnnl_pooling_backward_desc_init(&bd, alg, &p->x_md, &p->y_md, strides, kernel, pad_l,
                                               pad_r) != dnnl_success)
        return;
    kmux_dnn_prim_adopt(&p->dnn, kmux_dnn_pd_of(st, &fd, bwd ? &bd : NULL), "pooling");
}

static kmux_status plan_create(void *state, int device, const kmux_pooling_desc *desc,
                               const kmux_plan_prefs *prefs, void **plan, int *impl_count) {
    return kmux_dnn_family_create(state, "kmux_pooling_plan_create", sizeof(dnn_pool_plan), desc,
                                  make_prim, plan, impl_count);
}

static kmux_status execute(void *state, const void *plan, int impl, void *stream,
                           const kmux_pooling_args *a) {
    dnn_pool_plan *p = (dnn_pool_plan *)plan;
    if (!p->dnn.prim || impl == 1) return kmux_cpu_pooling_ops.execute(state, &p->d, 0, stream, a);
    const int fwd = p->d.prop == KMUX_PROP_FORWARD;
    /* forward: x -> y; backward: dy -> dx */
    const int ids[2] = {fwd ? DNNL_ARG_SRC : DNNL_ARG_DIFF_DST,
                        fwd ? DNNL_ARG_DST : DNNL_ARG_DIFF_SRC};
    const dnnl_memory_desc_t *const mds[2] = {fwd ? &p->x_md : &p->y_md, fwd ? &p->y_md : &p->x_md};
    void *const ptrs[2] = {fwd ? (void *)a->x : (void *)a->dy, fwd ? a->y : a->dx};
    return kmux_dnn_prim_run(state, &p->dnn, "kmux_pooling_execute", 2, ids, mds, ptrs);
}

const kmux_pooling_ops kmux_dnn_pooling_ops = {
    .plan_create = plan_create,
    .execute = execute,
    .plan_info = kmux_dnn_family_info,
    .plan_destroy = kmux_dnn_family_destroy,
};
