/*
 * onednn_binary.c - the binary family on cpu:onednn: oneDNN's binary primitive first for ADD,
 * SUB, MUL and DIV with both operand scales 1 (a layer's bias-add, a residual add: oneDNN's
 * binary_add, _sub, _mul, _div with src1 broadcast along its size-1 axes, as kmux's) where oneDNN
 * has a kernel other than its reference one for the dtype and shapes on this CPU, then kmux's CPU
 * kernels ("kmux:cpu", backends/cpu_common/cpu_binary.c) as the next implementation. MAX and MIN
 * stay on kmux:cpu: oneDNN's kernels use the max/min instructions, which return the second operand
 * when one is NaN (kmux.h, as torch.maximum, gives NaN); scaled operands stay there too.
 */
#include "onednn_internal.h"

typedef struct dnn_bin_plan {
    kmux_dnn_prim dnn; /* impl "onednn:binary:<kernel>"; prim NULL: kmux:cpu only */
    kmux_binary_desc d;
    dnnl_memory_desc_t md, md1; /* src0 and dst; src1 */
} dnn_bin_plan;

static dnnl_alg_kind_t dnn_alg(const kmux_binary_desc *d) {
    if (d->alpha != 1.0f || d->beta != 1.0f) return (dnnl_alg_kind_t)0;
    switch (d->alg) {
    case KMUX_BINARY_ADD:
        return dnnl_binary_add;
    case KMUX_BINARY_SUB:
        return dnnl_binary_sub;
    case KMUX_BINARY_MUL:
        return dnnl_binary_mul;
    case KMUX_BINARY_DIV:
        return dnnl_binary_div;
    default:
        return (dnnl_alg_kind_t)0;
    }
}

/* The primitive of p->d when oneDNN runs it with a kernel other than its reference one; p->dnn.prim
 * stays NULL otherwise (no error: the plan then runs kmux:cpu). */
static void make_prim(kmux_dnn_state *st, void *plan, const void *desc) {
    dnn_bin_plan *p = plan;
    p->d = *(const kmux_binary_desc *)desc;
    const kmux_binary_desc *d = &p->d;
    const dnnl_alg_kind_t alg = dnn_alg(d);
    const dnnl_data_type_t dt = kmux_dnn_dtype(d->dtype);
    if (!alg || !st->engine || dt == dnnl_data_type_undef) return;
    static const dnnl_format_tag_t tags[KMUX_MAX_NDIMS] = {dnnl_a,    dnnl_ab,    dnnl_abc,
                                                           dnnl_abcd, dnnl_abcde, dnnl_abcdef};
    dnnl_dims_t dims, dims1;
    int64_t n = 1;
    for (int i = 0; i < d->ndims; i++) {
        dims[i] = d->dims[i], dims1[i] = d->src1_dims[i];
        n *= d->dims[i];
    }
    if (!kmux_dnn_family_fits(n)) return;
    const dnnl_format_tag_t tag = tags[d->ndims - 1];
    if (dnnl_memory_desc_init_by_tag(&p->md, d->ndims, dims, dt, tag) != dnnl_success ||
        dnnl_memory_desc_init_by_tag(&p->md1, d->ndims, dims1, dt, tag) != dnnl_success)
        return;
    dnnl_binary_desc_t bd;
    if (dnnl_binary_desc_init(&bd, alg, &p->md, &p->md1, &p->md) != dnnl_success) return;
    kmux_dnn_prim_adopt(&p->dnn, kmux_dnn_pd_of(st, &bd, NULL), "binary");
}

static kmux_status plan_create(void *state, int device, const kmux_binary_desc *desc,
                               const kmux_plan_prefs *prefs, void **plan, int *impl_count) {
    return kmux_dnn_family_create(state, "kmux_binary_plan_create", sizeof(dnn_bin_plan), desc,
                                  make_prim, plan, impl_count);
}

static kmux_status execute(void *state, const void *plan, int impl, void *stream,
                           const kmux_binary_args *a) {
    dnn_bin_plan *p = (dnn_bin_plan *)plan;
    if (!p->dnn.prim || impl == 1) return kmux_cpu_binary_ops.execute(state, &p->d, 0, stream, a);
    const int ids[3] = {DNNL_ARG_SRC_0, DNNL_ARG_SRC_1, DNNL_ARG_DST};
    const dnnl_memory_desc_t *const mds[3] = {&p->md, &p->md1, &p->md};
    void *const ptrs[3] = {(void *)a->src0, (void *)a->src1, a->dst};
    return kmux_dnn_prim_run(state, &p->dnn, "kmux_binary_execute", 3, ids, mds, ptrs);
}

const kmux_binary_ops kmux_dnn_binary_ops = {
    .plan_create = plan_create,
    .execute = execute,
    .plan_info = kmux_dnn_family_info,
    .plan_destroy = kmux_dnn_family_destroy,
};
