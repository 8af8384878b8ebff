/*
 * tu_run.c - running one plan of a backend test: the device pair (ref and the device under
 * test), plan + execute once, operand spans and convolution geometry.
 */
#include <stdio.h>
#include <string.h>

#include "test_util.h"

void tu_pair_open(tu_pair *p, const char *id) {
    memset(p, 0, sizeof *p);
    snprintf(p->id, sizeof p->id, "%s", id);
    p->ctx = tu_context();
    p->ref = tu_device(p->ctx, "ref");
    p->dev = tu_device(p->ctx, id);
    if (!p->dev) snprintf(p->reason, sizeof p->reason, "%s", kmux_last_error());
}

void tu_pair_close(tu_pair *p) {
    kmux_context_destroy(p->ctx);
    memset(p, 0, sizeof *p);
}

/* Steps `plan` impl_step implementations on, names the one it runs, executes it once on a new
 * stream of dev (the matmul args mm, or the convolution args cv), synchronises and destroys it. */
static kmux_status run_plan(kmux_device *dev, kmux_plan *plan, const kmux_matmul_args *mm,
                            const kmux_conv2d_args *cv, int impl_step, char *impl, size_t impl_size,
                            kmux_plan_info *info_out) {
    for (int i = 0; i < impl_step; i++)
        TU_OK(kmux_plan_next_impl(plan));
    kmux_plan_info info;
    TU_OK(kmux_plan_info_get(plan, &info));
    if (impl) snprintf(impl, impl_size, "%s", info.impl);
    if (info_out) *info_out = info;
    kmux_stream *st = NULL;
    TU_OK(kmux_stream_create(dev, &st));
    kmux_status s = mm ? kmux_matmul_execute(plan, st, mm) : kmux_conv2d_execute(plan, st, cv);
    TU_OK(kmux_stream_synchronize(st));
    TU_OK(kmux_stream_destroy(st));
    TU_OK(kmux_plan_destroy(plan));
    return s;
}

kmux_status tu_run_matmul(kmux_device *dev, const kmux_matmul_desc *d, const kmux_plan_prefs *prefs,
                          const kmux_matmul_args *a, int impl_step, char *impl, size_t impl_size,
                          kmux_plan_info *info_out) {
    kmux_plan *plan = NULL;
    kmux_status s = kmux_matmul_plan_create(dev, d, prefs, &plan);
    if (s != KMUX_OK) return s;
    return run_plan(dev, plan, a, NULL, impl_step, impl, impl_size, info_out);
}

kmux_status tu_run_conv(kmux_device *dev, const kmux_conv2d_desc *d, const kmux_plan_prefs *prefs,
                        const kmux_conv2d_args *a, int impl_step, char *impl, size_t impl_size) {
    kmux_plan *plan = NULL;
    kmux_status s = kmux_conv2d_plan_create(dev, d, prefs, &plan);
    if (s != KMUX_OK) return s;
    s = run_plan(dev, plan, NULL, a, impl_step, impl, impl_size, NULL);
    return s;
}

int64_t tu_matrix_span(kmux_order o, int64_t rows, int64_t cols, int64_t ld, int64_t batch,
                       int64_t stride) {
    int64_t outer = o == KMUX_ROW_MAJOR ? rows : cols;
    return (batch - 1) * stride + outer * ld;
}

void tu_matmul_layout(kmux_matmul_desc *d, int64_t pad, int bcast_a, int bcast_b, int64_t *na,
                      int64_t *nb, int64_t *nc) {
    const int rm = d->order == KMUX_ROW_MAJOR;
    const int64_t ar = d->transa == KMUX_NO_TRANS ? d->m : d->k;
    const int64_t ac = d->transa == KMUX_NO_TRANS ? d->k : d->m;
    const int64_t br = d->transb == KMUX_NO_TRANS ? d->k : d->n;
    const int64_t bc = d->transb == KMUX_NO_TRANS ? d->n : d->k;
    d->lda = (rm ? ac : ar) + pad;
    d->ldb = (rm ? bc : br) + pad;
    d->ldc = (rm ? d->n : d->m) + pad;
    d->stride_a = bcast_a ? 0 : tu_matrix_span(d->order, ar, ac, d->lda, 1, 0) + 3;
    d->stride_b = bcast_b ? 0 : tu_matrix_span(d->order, br, bc, d->ldb, 1, 0) + 5;
    d->stride_c = tu_matrix_span(d->order, d->m, d->n, d->ldc, 1, 0) + 7;
    *na = tu_matrix_span(d->order, ar, ac, d->lda, d->batch_count, d->stride_a);
    *nb = tu_matrix_span(d->order, br, bc, d->ldb, d->batch_count, d->stride_b);
    *nc = tu_matrix_span(d->order, d->m, d->n, d->ldc, d->batch_count, d->stride_c);
}

kmux_conv2d_desc tu_conv_desc(const tu_conv_geom *g, kmux_conv_direction dir, kmux_layout layout,
                              kmux_dtype t) {
    kmux_conv2d_desc d = KMUX_CONV2D_DESC_INIT;
    d.direction = dir;
    d.layout = layout;
    d.n = g->n, d.c = g->c, d.h = g->h, d.w = g->w;
    d.k = g->k, d.r = g->r, d.s = g->s;
    d.groups = g->groups;
    d.stride_h = g->sh, d.stride_w = g->sw;
    d.pad_top = g->pt, d.pad_bottom = g->pb, d.pad_left = g->pl, d.pad_right = g->pr;
    d.dilation_h = g->dh, d.dilation_w = g->dw;
    d.x_type = d.w_type = d.y_type = t;
    return d;
}

void tu_conv_elems(const kmux_conv2d_desc *d, int64_t *nx, int64_t *nw, int64_t *ny) {
    int64_t p = 0, q = 0;
    TU_OK(kmux_conv2d_output_dims(d, &p, &q));
    *nx = d->n * d->c * d->h * d->w;
    *nw = d->k * (d->c / d->groups) * d->r * d->s;
    *ny = d->n * d->k * p * q;
}

void tu_cast_on_device(kmux_device *dev, int64_t n, const void *src, kmux_dtype st, void *dst,
                       kmux_dtype dt, int saturate, const float *scale, float *amax) {
    kmux_stream *s;
    void *ds = NULL, *dd = NULL, *dscale = NULL, *damax = NULL;
    TU_OK(kmux_stream_create(dev, &s));
    TU_OK(kmux_malloc(dev, (size_t)n * kmux_dtype_size(st), &ds));
    TU_OK(kmux_malloc(dev, (size_t)n * kmux_dtype_size(dt), &dd));
    TU_OK(kmux_memcpy(s, ds, src, (size_t)n * kmux_dtype_size(st), KMUX_MEMCPY_HOST_TO_DEVICE));
    kmux_cast_options o = KMUX_CAST_OPTIONS_INIT;
    o.saturate = saturate;
    if (scale) {
        TU_OK(kmux_malloc(dev, sizeof(float), &dscale));
        TU_OK(kmux_memcpy(s, dscale, scale, sizeof(float), KMUX_MEMCPY_HOST_TO_DEVICE));
        o.scale = dscale;
    }
    if (amax) {
        TU_OK(kmux_malloc(dev, sizeof(float), &damax));
        o.amax = damax;
    }
    TU_OK(kmux_cast(s, n, ds, st, dd, dt, &o));
    TU_OK(kmux_memcpy(s, dst, dd, (size_t)n * kmux_dtype_size(dt), KMUX_MEMCPY_DEVICE_TO_HOST));
    if (amax) TU_OK(kmux_memcpy(s, amax, damax, sizeof(float), KMUX_MEMCPY_DEVICE_TO_HOST));
    TU_OK(kmux_stream_synchronize(s));
    TU_OK(kmux_free(dev, ds));
    TU_OK(kmux_free(dev, dd));
    TU_OK(kmux_free(dev, dscale));
    TU_OK(kmux_free(dev, damax));
    TU_OK(kmux_stream_destroy(s));
}
