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

typedef struct dnn_elt_plan {
    kmux_dnn_prim dnn; /* impl "onednn:eltwise:<kernel>"; prim NULL: kmux:cpu only */
    kmux_eltwise_desc d;
    dnnl_memory_desc_t md;
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
static void make_prim(kmux_dnn_state *st, void *plan, const void *desc) {
    dnn_elt_plan *p = plan;
    p->d = *(const kmux_eltwise_desc *)desc;
    const kmux_eltwise_desc *d = &p->d;
    float alpha = 0.0f;
    const dnnl_alg_kind_t alg = dnn_alg(d, &alpha);
    if (!alg || !st->engine || !kmux_dnn_family_fits(d->n)) return;
    const dnnl_dims_t dims = {d->n};
    if (dnnl_memory_desc_init_by_tag(&p->md, 1, dims, kmux_dnn_dtype(d->dtype), dnnl_a) !=
        dnnl_success)
        return;
    /* the backward needs the forward as its hint */
    const dnnl_alg_kind_t falg = d->alg == KMUX_ELTWISE_SIGMOID ? dnnl_eltwise_logistic
                                 : d->alg == KMUX_ELTWISE_TANH  ? dnnl_eltwise_tanh
                                                                : alg;
    dnnl_eltwise_desc_t fd, bd;
    if (dnnl_eltwise_forward_desc_init(&fd, dnnl_forward_training, falg, &p->md, alpha, 0.0f) !=
        dnnl_success)
        return;
    const int bwd = d->prop == KMUX_PROP_BACKWARD;
    if (bwd &&
        dnnl_eltwise_backward_desc_init(&bd, alg, &p->md, &p->md, alpha, 0.0f) != dnnl_success)
        return;
    dnnl_primitive_desc_t pd = kmux_dnn_pd_of(st, &fd, bwd ? &bd : NULL);
    kmux_dnn_prim_adopt(&p->dnn, pd, "eltwise");
}

static kmux_status plan_create(void *state, int device, const kmux_eltwise_desc *desc,
                               const kmux_plan_prefs *prefs, void **plan, int *impl_count) {
    return kmux_dnn_family_create(state, "kmux_eltwise_plan_create", sizeof(dnn_elt_plan), desc,
                                  make_prim, plan, impl_count);
}

static kmux_status execute(void *state, const void *plan, int impl, void *stream,
                           const kmux_eltwise_args *a) {
    dnn_elt_plan *p = (dnn_elt_plan *)plan;
    if (!p->dnn.prim || impl == 1) return kmux_cpu_eltwise_run(state, &p->d, a);
    const int fwd = p->d.prop == KMUX_PROP_FORWARD, dst = !fwd && p->d.use_dst_for_bwd;
    /* the direction's (argument, pointer) pairs; every tensor has the one descriptor md */
    const int ids[3] = {dst ? DNNL_ARG_DST : DNNL_ARG_SRC, fwd ? DNNL_ARG_DST : DNNL_ARG_DIFF_DST,
                        DNNL_ARG_DIFF_SRC};
    void *const ptrs[3] = {(void *)(dst ? a->dst : a->src), fwd ? a->dst : (void *)a->diff_dst,
                           a->diff_src};
    const dnnl_memory_desc_t *const mds[3] = {&p->md, &p->md, &p->md};
    return kmux_dnn_prim_run(state, &p->dnn, "kmux_eltwise_execute", fwd ? 2 : 3, ids, mds, ptrs);
}

const kmux_eltwise_ops kmux_dnn_eltwise_ops = {
    .plan_create = plan_create,
    .execute = execute,
    .plan_info = kmux_dnn_family_info,
    .plan_destroy = kmux_dnn_family_destroy,
};
