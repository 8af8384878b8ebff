/*
 * onednn_conv.c - 2-D convolution plans on oneDNN's convolution primitives: forward,
 * backward-data and backward-weights, NCHW (filter KCRS = oneDNN goihw/oihw) and NHWC (filter
 * KRSC = gohwi/ohwi), stride, asymmetric padding, dilation (kmux 1 = oneDNN 0), groups.
 *
 * Layouts - measured on this machine (2 cores, avx512_core, oneDNN 2.6.3), ResNet-50 3x3
 * mb8ic64ih56oc64oh56kh3ph1, f32, best of 7 with the reorders of every call included:
 *   NCHW, plain nchw/oihw (gemm:jit)                fwd 10.0 ms  bwd_d 13.6 ms  bwd_w 13.1 ms
 *   NCHW, format any (jit:avx512_core, nChw16c)     fwd  7.3 ms  bwd_d  6.0 ms  bwd_w  6.3 ms
 *   NHWC, plain nhwc/ohwi                           ref:any only: ~17 s (not usable)
 *   NHWC, format any everywhere                     fwd  6.1 ms  bwd_d  6.3 ms  bwd_w  6.4 ms
 *   NHWC, activations nhwc, filter any (brgconv/jit) fwd  5.4 ms  bwd_d  5.4 ms  bwd_w  5.7 ms
 * Every plan has two lists of implementations (conv_next merges them): the activations x and y
 * in the caller's layout with the filter layout left to oneDNN, and every layout left to oneDNN,
 * x and y reordered inside each call ("+reorder"). Which wins depends on CPU and shape:
 *   - 2-core AVX2 EPYC (isa avx2), NHWC: "+reorder" faster for 3x3 layers (mb32 ic64 56^2
 *     forward: 72.6 against 66.7 GFLOP/s), slower for 1x1 ones;
 *   - 2-core Zen 5 EPYC (isa avx512_core_bf16), NCHW, mb4 forward: for 1x1 layers oneDNN's
 *     gemm:jit on plain NCHW (one GEMM per image, no im2col) was 1.3-3.3x faster than
 *     "+reorder" (brgconv_1x1 on nChw16c; res2a_1: 361 against 108 GFLOP/s); for 3x3 layers
 *     gemm:jit needs an im2col copy, and "+reorder" (brgconv) was 1.6x faster.
 * Without tuning, the caller's layout comes first unless oneDNN's first kernel for it is a
 * reference one or an im2col-based one (is_fallback_kernel): then "+reorder" does
 * (layout_first). KMUX_TUNE measures.
 *
 * Types: f32; bf16/f16 natively where oneDNN has a non-reference kernel for this CPU, otherwise
 * (with prefs.allow_emulation) widened to f32 ("+cvt"). The primitive always writes f32, and
 * alpha/beta (y = alpha * conv + beta * y, beta == 0: y not read) and the rounding to the
 * output type are applied once after it, so every result is rounded once; the forward epilogue
 * (bias, ReLU/GELU, the ReLU's mask) is fused in that same pass (finish_epilogue).
 */
#include "onednn_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dispatch/common/cpu_finish.h"
#include "kmux_cpu_kernels.h"
#include "kmux_sys_alloc.h"

static const char FN[] = "kmux_conv2d_plan_create";

enum { T_X = 0, T_W = 1, T_Y = 2 };

/** One of x, w, y as the primitive sees it. */
typedef struct conv_tensor {
    int64_t n;                  /**< elements */
    dnnl_memory_desc_t user_md; /**< the user's layout, in the primitive's data type */
    dnnl_memory_desc_t prim_md; /**< the layout the primitive chose */
    int cvt;                    /**< input widened to f32 before use */
    int reorder;                /**< prim_md differs from user_md */
    dnnl_primitive_t reorder_prim;
    size_t off_cvt, off_prim, off_tmp; /**< workspace offsets */
} conv_tensor;

/** What an implementation choice fixes (one per implementation of a plan). */
typedef struct conv_impl {
    dnnl_primitive_t prim;
    conv_tensor t[3];
    size_t scratch, work_bytes;
    size_t off_acc; /**< backward-weights in image chunks: f32 sum of the chunks' results */
    char name[64];
} conv_impl;

typedef struct kmux_dnn_conv_plan {
    kmux_dnn_plan base;
    kmux_conv2d_desc d;
    int64_t p, q;
    int cvt;      /**< run in f32 on converted data */
    int64_t nb;   /**< images per primitive call (d.n, or a divisor of it on the "+cvt" path) */
    int out;      /**< T_Y, T_X or T_W: the tensor the direction writes */
    int blocked;  /**< x and y in oneDNN's chosen layout too, reordered in every call */
    int next[2];  /**< per layout choice (blocked 0/1): next position in oneDNN's list */
    int ended[2]; /**< per layout choice: its list is used up (or not offered) */
    conv_impl impl;
} kmux_dnn_conv_plan;

static size_t align64(size_t v) {
    return (v + 63) / 64 * 64;
}

/* Plain memory descriptor of tensor i in the user's layout. */
static dnnl_status_t user_md(const kmux_dnn_conv_plan *p, int i, dnnl_data_type_t dt,
                             dnnl_memory_desc_t *md) {
    const kmux_conv2d_desc *d = &p->d;
    int nhwc = d->layout == KMUX_NHWC;
    if (i == T_X) {
        dnnl_dims_t dims = {p->nb, d->c, d->h, d->w};
        return dnnl_memory_desc_init_by_tag(md, 4, dims, dt, nhwc ? dnnl_nhwc : dnnl_nchw);
    }
    if (i == T_Y) {
        dnnl_dims_t dims = {p->nb, d->k, p->p, p->q};
        return dnnl_memory_desc_init_by_tag(md, 4, dims, dt, nhwc ? dnnl_nhwc : dnnl_nchw);
    }
    if (d->groups == 1) {
        dnnl_dims_t dims = {d->k, d->c, d->r, d->s};
        return dnnl_memory_desc_init_by_tag(md, 4, dims, dt, nhwc ? dnnl_ohwi : dnnl_oihw);
    }
    dnnl_dims_t dims = {d->groups, d->k / d->groups, d->c / d->groups, d->r, d->s};
    return dnnl_memory_desc_init_by_tag(md, 5, dims, dt, nhwc ? dnnl_gohwi : dnnl_goihw);
}

/* The descriptor the primitive is created with: format any where the layout policy (header
 * comment) lets oneDNN choose. */
static void op_md(const kmux_dnn_conv_plan *p, int i, const dnnl_memory_desc_t *user,
                  dnnl_memory_desc_t *md) {
    int choose = i == T_W || p->blocked;
    *md = *user;
    if (choose)
        dnnl_memory_desc_init_by_tag(md, user->ndims, user->dims, user->data_type,
                                     dnnl_format_tag_any);
}

/* Builds the (backward: forward hint and) convolution primitive descriptor for the data types
 * in_dt (inputs) and f32 (output), implementation impl_index. */
static dnnl_status_t conv_pd(kmux_dnn_state *st, const kmux_dnn_conv_plan *p,
                             dnnl_data_type_t in_dt, int impl_index, dnnl_primitive_desc_t *pd) {
    const kmux_conv2d_desc *d = &p->d;
    dnnl_memory_desc_t u[3], m[3], h[3];
    dnnl_status_t s = dnnl_success;
    for (int i = 0; i < 3 && s == dnnl_success; i++) {
        s = user_md(p, i, i == p->out ? dnnl_f32 : in_dt, &u[i]);
        if (s == dnnl_success) op_md(p, i, &u[i], &m[i]);
        if (s == dnnl_success) s = user_md(p, i, in_dt, &h[i]);
        if (s == dnnl_success) op_md(p, i, &h[i], &h[i]);
    }
    if (s != dnnl_success) return s;
    dnnl_dims_t strides = {d->stride_h, d->stride_w};
    dnnl_dims_t dil = {d->dilation_h - 1, d->dilation_w - 1};
    dnnl_dims_t pl = {d->pad_top, d->pad_left}, pr = {d->pad_bottom, d->pad_right};
    dnnl_primitive_attr_t attr = kmux_dnn_attr_new();
    if (!attr) return dnnl_out_of_memory;
    dnnl_convolution_desc_t op, fwd;
    dnnl_primitive_desc_t hint = NULL;
    if (d->direction == KMUX_CONV_FWD) {
        s = dnnl_dilated_convolution_forward_desc_init(&op, dnnl_forward_inference,
                                                       dnnl_convolution_direct, &m[T_X], &m[T_W],
                                                       NULL, &m[T_Y], strides, dil, pl, pr);
    } else {
        /* backward primitives need the forward one they belong to as a hint */
        s = dnnl_dilated_convolution_forward_desc_init(&fwd, dnnl_forward_training,
                                                       dnnl_convolution_direct, &h[T_X], &h[T_W],
                                                       NULL, &h[T_Y], strides, dil, pl, pr);
        if (s == dnnl_success) s = dnnl_primitive_desc_create(&hint, &fwd, attr, st->engine, NULL);
        if (s == dnnl_success && d->direction == KMUX_CONV_BWD_DATA)
            s = dnnl_dilated_convolution_backward_data_desc_init(
                &op, dnnl_convolution_direct, &m[T_X], &m[T_W], &m[T_Y], strides, dil, pl, pr);
        else if (s == dnnl_success)
            s = dnnl_dilated_convolution_backward_weights_desc_init(&op, dnnl_convolution_direct,
                                                                    &m[T_X], &m[T_W], NULL, &m[T_Y],
                                                                    strides, dil, pl, pr);
    }
    if (s == dnnl_success)
        s = kmux_dnn_pd_create(&op, attr, st->engine, hint, impl_index, NULL, NULL, pd);
    if (hint) dnnl_primitive_desc_destroy(hint);
    dnnl_primitive_attr_destroy(attr);
    return s;
}

static void impl_destroy(conv_impl *im) {
    if (im->prim) dnnl_primitive_destroy(im->prim);
    for (int i = 0; i < 3; i++)
        if (im->t[i].reorder_prim) dnnl_primitive_destroy(im->t[i].reorder_prim);
    memset(im, 0, sizeof *im);
}

static const dnnl_memory_desc_t *pd_md(const_dnnl_primitive_desc_t pd, kmux_conv_direction dir,
                                       int i) {
    static const dnnl_query_t fwd[3] = {dnnl_query_src_md, dnnl_query_weights_md,
                                        dnnl_query_dst_md};
    static const dnnl_query_t bwd_d[3] = {dnnl_query_diff_src_md, dnnl_query_weights_md,
                                          dnnl_query_diff_dst_md};
    static const dnnl_query_t bwd_w[3] = {dnnl_query_src_md, dnnl_query_diff_weights_md,
                                          dnnl_query_diff_dst_md};
    const dnnl_query_t *q = dir == KMUX_CONV_FWD ? fwd : dir == KMUX_CONV_BWD_DATA ? bwd_d : bwd_w;
    return dnnl_primitive_desc_query_md(pd, q[i], 0);
}

/* A reorder primitive from -> to (user-managed scratchpad); its scratchpad size in *scratch. */
static dnnl_status_t make_reorder(kmux_dnn_state *st, const dnnl_memory_desc_t *from,
                                  const dnnl_memory_desc_t *to, dnnl_primitive_t *prim,
                                  size_t *scratch) {
    dnnl_primitive_attr_t attr = kmux_dnn_attr_new();
    if (!attr) return dnnl_out_of_memory;
    dnnl_primitive_desc_t pd = NULL;
    dnnl_status_t s =
        dnnl_reorder_primitive_desc_create(&pd, from, st->engine, to, st->engine, attr);
    dnnl_primitive_attr_destroy(attr);
    if (s != dnnl_success) return s;
    size_t sc = kmux_dnn_pd_scratch(pd);
    if (sc > *scratch) *scratch = sc;
    s = dnnl_primitive_create(prim, pd);
    dnnl_primitive_desc_destroy(pd);
    return s;
}

/* Everything the implementation impl_index fixes: primitive, layouts, reorders, workspace. */
static dnnl_status_t impl_build(kmux_dnn_state *st, const kmux_dnn_conv_plan *p, int impl_index,
                                dnnl_data_type_t in_dt, conv_impl *im) {
    dnnl_primitive_desc_t pd = NULL;
    memset(im, 0, sizeof *im);
    dnnl_status_t s = conv_pd(st, p, in_dt, impl_index, &pd);
    if (s != dnnl_success) return s;
    snprintf(im->name, sizeof im->name, "%s", kmux_dnn_pd_impl(pd));
    im->scratch = kmux_dnn_pd_scratch(pd);
    size_t off = 0;
    for (int i = 0; i < 3 && s == dnnl_success; i++) {
        conv_tensor *t = &im->t[i];
        int is_out = i == p->out;
        s = user_md(p, i, is_out ? dnnl_f32 : in_dt, &t->user_md);
        if (s != dnnl_success) break;
        t->prim_md = *pd_md(pd, p->d.direction, i);
        t->n = (int64_t)(dnnl_memory_desc_get_size(&t->user_md) /
                         (is_out || in_dt == dnnl_f32 ? 4 : 2));
        t->cvt = !is_out && p->cvt;
        t->reorder = !dnnl_memory_desc_equal(&t->user_md, &t->prim_md);
        if (t->cvt) {
            t->off_cvt = off;
            off += align64((size_t)t->n * sizeof(float));
        }
        if (t->reorder) {
            t->off_prim = off;
            off += align64(dnnl_memory_desc_get_size(&t->prim_md));
            s = is_out ? make_reorder(st, &t->prim_md, &t->user_md, &t->reorder_prim, &im->scratch)
                       : make_reorder(st, &t->user_md, &t->prim_md, &t->reorder_prim, &im->scratch);
        }
        if (is_out) { /* f32 result in the user's layout, before alpha/beta and rounding */
            t->off_tmp = off;
            off += align64((size_t)t->n * sizeof(float));
        }
        if (is_out && p->nb < p->d.n && i == T_W) { /* backward-weights: sum over image chunks */
            im->off_acc = off;
            off += align64((size_t)t->n * sizeof(float));
        }
    }
    if (s == dnnl_success) s = dnnl_primitive_create(&im->prim, pd);
    dnnl_primitive_desc_destroy(pd);
    im->work_bytes = off;
    if (s != dnnl_success) impl_destroy(im);
    return s;
}

static void set_impl_name(kmux_dnn_conv_plan *p) {
    char chunk[32] = ""; /* "+cvt/nb16": the batch runs 16 images a call */
    if (p->nb < p->d.n) snprintf(chunk, sizeof chunk, "/nb%lld", (long long)p->nb);
    snprintf(p->base.impl, sizeof p->base.impl, "onednn:%s%s%s%s", p->impl.name,
             p->blocked ? "+reorder" : "", p->cvt ? "+cvt" : "", chunk);
    p->base.workspace_bytes = kmux_dnn_work_offset(p->impl.work_bytes) + p->impl.scratch;
    p->base.work_bytes = p->impl.work_bytes;
}

static kmux_status create_unsupported(kmux_dnn_state *st, const kmux_conv2d_desc *d,
                                      const char *why) {
    return KMUX_DNN_ERROR(st, KMUX_ERR_UNSUPPORTED,
                          "%s: backend onednn: %s convolution with %s data and compute %s: %s", FN,
                          d->direction == KMUX_CONV_FWD        ? "forward"
                          : d->direction == KMUX_CONV_BWD_DATA ? "backward-data"
                                                               : "backward-weights",
                          kmux_common_dtype_name(d->x_type),
                          kmux_common_compute_type_name(d->compute_type), why);
}

/* The f32 copies of the "+cvt" path are 2x (f16, bf16) the tensors they widen. So that a plan
 * needs at most about its tensors' bytes on top of them, the batch is run in chunks of nb images
 * (the largest divisor of n whose copies fit in half the tensors' bytes, and never below 4 MiB
 * of copies, where the per-call cost would start to show). work_bytes: the whole-batch copies. */
static int64_t cvt_chunk(const kmux_dnn_conv_plan *p, size_t work_bytes) {
    const kmux_conv2d_desc *d = &p->d;
    size_t tensors = kmux_dnn_conv_tensor_bytes(d);
    size_t budget = tensors / 2 > ((size_t)4 << 20) ? tensors / 2 : ((size_t)4 << 20);
    if (work_bytes <= budget || d->n == 1) return d->n;
    size_t per_image = work_bytes / (size_t)d->n + 1;
    int64_t best = 1;
    for (int64_t nb = 1; nb < d->n; nb++)
        if (d->n % nb == 0 && (size_t)nb * per_image <= budget) best = nb;
    return best;
}

/* A kernel that makes the caller's layout the slower choice: a reference one, or a GEMM-based one
 * ("x64:gemm:jit") where it needs an im2col copy of the whole filter window per call (a filter
 * larger than 1x1, or padding). A 1x1 unpadded convolution on plain NCHW is one GEMM per image
 * (stride 1) or one after a gather of the strided pixels (stride 2), and gemm:jit on it beat
 * "+reorder" (brgconv_1x1) on the Zen 5 EPYC (header comment), res5a_1 (stride 2) with 305
 * against 202 GFLOP/s, so strided 1x1 layers count too. With oneDNN held to AVX2 on the same
 * machine (ONEDNN_MAX_CPU_ISA=AVX2, mb4) gemm:jit also beat jit_1x1:avx2 + reorders on res2a_1,
 * res4b_2a and res5a_1 (5-40%), but not on res3a_2a (1x1 stride 2, 56^2: 88 against 110 GFLOP/s):
 * KMUX_TUNE times both lists (not measured held to AVX2). */
static int is_fallback_kernel(const kmux_conv2d_desc *d, const char *name) {
    int im2col = d->r > 1 || d->s > 1 || d->pad_top || d->pad_bottom || d->pad_left || d->pad_right;
    return kmux_dnn_is_ref_kernel(name) || (im2col && strstr(name, "gemm") != NULL);
}

/* Position 0 of the list that comes first (header comment): the caller's layout, unless its
 * kernel is a fallback one and "+reorder" offers another; the list not chosen starts over at
 * its position 0 in conv_next. */
static dnnl_status_t layout_first(kmux_dnn_state *st, kmux_dnn_conv_plan *p, dnnl_data_type_t dt) {
    p->blocked = 0;
    p->next[0] = 1;
    p->next[1] = 0;
    dnnl_status_t s = impl_build(st, p, 0, dt, &p->impl);
    if (s != dnnl_success || !is_fallback_kernel(&p->d, p->impl.name)) return s;
    conv_impl plain = p->impl;
    p->blocked = 1;
    if (impl_build(st, p, 0, dt, &p->impl) == dnnl_success &&
        !is_fallback_kernel(&p->d, p->impl.name) &&
        (p->impl.t[T_X].reorder || p->impl.t[T_Y].reorder)) {
        impl_destroy(&plain);
        p->next[0] = 0;
        p->next[1] = 1;
        return dnnl_success;
    }
    if (p->impl.prim) impl_destroy(&p->impl);
    p->blocked = 0;
    p->impl = plain;
    return dnnl_success;
}

/* Native kernels first; "+cvt" when there are none (or only reference ones) and emulation is
 * allowed. */
static kmux_status choose_impl(kmux_dnn_state *st, kmux_dnn_conv_plan *p,
                               const kmux_plan_prefs *prefs) {
    const kmux_conv2d_desc *d = &p->d;
    int narrow = d->x_type != KMUX_F32;
    char why[192];
    p->cvt = 0;
    dnnl_status_t s = layout_first(st, p, kmux_dnn_dtype(d->x_type));
    if (s == dnnl_success &&
        !(narrow && kmux_dnn_is_ref_kernel(p->impl.name) && prefs->allow_emulation))
        return KMUX_OK;
    if (s == dnnl_success) impl_destroy(&p->impl); /* only a reference kernel: prefer cvt */
    if (!narrow) return kmux_dnn_fail(st, FN, "convolution primitive creation", s);
    if (!prefs->allow_emulation) {
        snprintf(why, sizeof why,
                 "oneDNN has no kernel for it on this CPU (isa %s: %s) and "
                 "prefs.allow_emulation is 0 (it would run in f32 on converted data, \"+cvt\")",
                 kmux_dnn_isa_name(st->isa), kmux_dnn_status_name(s));
        return create_unsupported(st, d, why);
    }
    p->cvt = 1;
    s = layout_first(st, p, dnnl_f32);
    if (s != dnnl_success) return kmux_dnn_fail(st, FN, "f32 convolution primitive creation", s);
    int64_t nb = cvt_chunk(p, p->impl.work_bytes);
    if (nb == p->nb) return KMUX_OK;
    conv_impl whole = p->impl;
    p->nb = nb;
    s = impl_build(st, p, 0, dnnl_f32, &p->impl);
    if (s == dnnl_success) {
        impl_destroy(&whole);
        return KMUX_OK;
    }
    p->nb = p->d.n; /* keep the whole-batch primitive */
    p->impl = whole;
    return KMUX_OK;
}

/* The plan for the implementation after cur's, on the same path (native or "+cvt"). The two
 * lists (header comment) are merged alternately so that a tuning budget that runs out after two
 * implementations still sees the best of each; a "+reorder" one that chose the caller's layout
 * anyway repeats one of the first list and is skipped. */
static kmux_status conv_next(kmux_dnn_state *st, const kmux_dnn_conv_plan *cur,
                             kmux_dnn_conv_plan **out) {
    kmux_dnn_conv_plan *p = kmux_sys_malloc(sizeof *p);
    if (!p) return KMUX_ERR_OUT_OF_MEMORY;
    *p = *cur;
    kmux_dnn_pool_init(&p->base);
    const dnnl_data_type_t dt = p->cvt ? dnnl_f32 : kmux_dnn_dtype(p->d.x_type);
    const int order[2] = {!cur->blocked, cur->blocked};
    for (int k = 0; k < 2; k++) {
        const int b = order[k];
        while (!p->ended[b]) {
            p->blocked = b;
            dnnl_status_t s = impl_build(st, p, p->next[b]++, dt, &p->impl);
            if (s != dnnl_success) {
                if (s != dnnl_iterator_ends)
                    st->hdr.host->trace(2, "plan,onednn,conv2d,%s,implementations end at %s (%d)",
                                        cur->base.impl, kmux_dnn_status_name(s), (int)s);
                p->ended[b] = 1;
                break;
            }
            if (!b || p->impl.t[T_X].reorder || p->impl.t[T_Y].reorder) {
                p->base.impl_index = cur->base.impl_index + 1;
                set_impl_name(p);
                *out = p;
                return KMUX_OK;
            }
            impl_destroy(&p->impl); /* "+reorder" that reorders nothing: a repeat */
        }
    }
    kmux_dnn_pool_destroy(&p->base);
    free(p);
    return KMUX_ERR_LAST_IMPL;
}

kmux_status kmux_dnn_conv2d_build(kmux_dnn_state *st, const kmux_conv2d_desc *desc,
                                  const kmux_plan_prefs *prefs,
                                  kmux_dnn_plan *list[KMUX_DNN_MAX_IMPLS], int *count) {
    const kmux_conv2d_desc *d = desc;
    kmux_dnn_conv_plan *p = kmux_sys_calloc(1, sizeof *p);
    if (!p) return kmux_dnn_oom(st, FN, sizeof *p);
    p->base.kind = KMUX_DNN_CONV2D;
    /* oneDNN accumulates in f32 (FAST_* compute types run strict f32: oneDNN 2.x has no TF32,
     * and its bf16 fpmath mode would round to bf16, below what bf16x3 promises) */
    p->base.effective_compute = KMUX_COMPUTE_F32;
    p->d = *d;
    p->p = kmux_conv2d_out_dim(d->h, d->pad_top, d->pad_bottom, d->r, d->dilation_h, d->stride_h);
    p->q = kmux_conv2d_out_dim(d->w, d->pad_left, d->pad_right, d->s, d->dilation_w, d->stride_w);
    p->nb = d->n;
    p->out = d->direction == KMUX_CONV_FWD ? T_Y : d->direction == KMUX_CONV_BWD_DATA ? T_X : T_W;
    kmux_dnn_pool_init(&p->base);
    kmux_dnn_threads th;
    kmux_dnn_threads_enter(st, &th);
    kmux_status ks = choose_impl(st, p, prefs);
    if (ks != KMUX_OK) {
        kmux_dnn_threads_leave(&th);
        kmux_dnn_conv2d_destroy(&p->base);
        return ks;
    }
    set_impl_name(p);
    /* Every implementation is prepared now: the plan never changes after creation. */
    int n = 1;
    list[0] = &p->base;
    while (n < KMUX_DNN_MAX_IMPLS) {
        kmux_dnn_conv_plan *next = NULL;
        if (conv_next(st, (const kmux_dnn_conv_plan *)list[n - 1], &next) != KMUX_OK) break;
        list[n++] = &next->base;
    }
    kmux_dnn_threads_leave(&th);
    st->hdr.host->trace(2, "plan,onednn,conv2d,%s,reorders x:%d w:%d y:%d,%d implementations",
                        p->base.impl, p->impl.t[T_X].reorder, p->impl.t[T_W].reorder,
                        p->impl.t[T_Y].reorder, n);
    *count = n;
    return KMUX_OK;
}

void kmux_dnn_conv2d_destroy(kmux_dnn_plan *plan) {
    kmux_dnn_conv_plan *p = (kmux_dnn_conv_plan *)plan;
    impl_destroy(&p->impl);
    kmux_dnn_pool_destroy(&p->base);
    free(p);
}

/* ---- execution ------------------------------------------------------------------------------ */

typedef struct conv_run {
    kmux_dnn_state *st;
    kmux_dnn_conv_plan *p;
    kmux_dnn_exec_ctx *ctx;
    kmux_status ks;
} conv_run;

/* Memory of tensor i: slot 2i in the primitive's layout, 2i+1 in the user's. */
static dnnl_memory_t mem(conv_run *r, int i, int user, void *ptr) {
    const conv_tensor *t = &r->p->impl.t[i];
    return kmux_dnn_ctx_mem(r->st, r->ctx, 2 * i + user, user ? &t->user_md : &t->prim_md, ptr,
                            &r->ks);
}

static int execute(conv_run *r, dnnl_primitive_t prim, int n, dnnl_exec_arg_t *args) {
    if (r->ctx->scratch_mem)
        args[n++] = (dnnl_exec_arg_t){DNNL_ARG_SCRATCHPAD, r->ctx->scratch_mem};
    dnnl_status_t s = dnnl_primitive_execute(prim, r->ctx->stream, n, args);
    if (s != dnnl_success) r->ks = kmux_dnn_fail(r->st, "kmux_conv2d_execute", "execute", s);
    return s == dnnl_success;
}

static int reorder(conv_run *r, int i, void *from, void *to, int to_user) {
    const conv_tensor *t = &r->p->impl.t[i];
    dnnl_memory_t mf = mem(r, i, !to_user, from);
    dnnl_memory_t mt = mf ? mem(r, i, to_user, to) : NULL;
    if (!mt) return 0;
    dnnl_exec_arg_t args[3] = {{DNNL_ARG_FROM, mf}, {DNNL_ARG_TO, mt}};
    return execute(r, t->reorder_prim, 2, args);
}

/* y = alpha * t + beta * y over n elements, rounded once to the user's type. */
static void combine(const float *t, void *y, kmux_dtype type, int64_t n, double alpha,
                    double beta) {
    for (int64_t i = 0; i < n; i++) {
        double v = alpha * (double)t[i];
        if (beta != 0.0) v += beta * kmux_dnn_load(y, type, i);
        kmux_dnn_store(y, type, i, v);
    }
}

static kmux_status finish(conv_run *r, float *res, void *out, double alpha, double beta,
                          const kmux_conv2d_args *a, int64_t image);

/* One primitive call on the images of user[] (nb of them, the first being image `image`). sum:
 * backward-weights in chunks, the f32 result is added into the accumulator (first chunk: copied)
 * and not yet finished. */
static kmux_status run_chunk(conv_run *r, const kmux_conv2d_args *a, void *user[3], int sum,
                             int first, int64_t image) {
    kmux_dnn_conv_plan *p = r->p;
    char *ws = r->ctx->work;
    static const int fwd_args[3] = {DNNL_ARG_SRC, DNNL_ARG_WEIGHTS, DNNL_ARG_DST};
    static const int bwd_d_args[3] = {DNNL_ARG_DIFF_SRC, DNNL_ARG_WEIGHTS, DNNL_ARG_DIFF_DST};
    static const int bwd_w_args[3] = {DNNL_ARG_SRC, DNNL_ARG_DIFF_WEIGHTS, DNNL_ARG_DIFF_DST};
    const int *arg_of = p->d.direction == KMUX_CONV_FWD        ? fwd_args
                        : p->d.direction == KMUX_CONV_BWD_DATA ? bwd_d_args
                                                               : bwd_w_args;
    double alpha = *(const float *)a->alpha, beta = *(const float *)a->beta;
    kmux_dtype type = p->d.x_type;
    int plain_out = alpha == 1.0 && beta == 0.0 && type == KMUX_F32 && !sum;
    dnnl_exec_arg_t args[4];
    void *prim_ptr[3];
    for (int i = 0; i < 3; i++) {
        conv_tensor *t = &p->impl.t[i];
        if (i == p->out) {
            prim_ptr[i] = t->reorder ? ws + t->off_prim : plain_out ? user[i] : ws + t->off_tmp;
            continue;
        }
        void *src = user[i];
        if (t->cvt) {
            kmux_cpu_to_f32(t->n, src, type, (float *)(ws + t->off_cvt), r->st->hdr.num_threads);
            src = ws + t->off_cvt;
        }
        if (t->reorder) {
            if (!reorder(r, i, src, ws + t->off_prim, 0)) return r->ks;
            src = ws + t->off_prim;
        }
        prim_ptr[i] = src;
    }
    for (int i = 0; i < 3; i++) {
        dnnl_memory_t m = mem(r, i, 0, prim_ptr[i]);
        if (!m) return r->ks;
        args[i] = (dnnl_exec_arg_t){arg_of[i], m};
    }
    if (!execute(r, p->impl.prim, 3, args)) return r->ks;
    conv_tensor *o = &p->impl.t[p->out];
    float *res = prim_ptr[p->out];
    if (o->reorder) {
        void *to = plain_out ? user[p->out] : ws + o->off_tmp;
        if (!reorder(r, p->out, res, to, 1)) return r->ks;
        res = to;
    }
    if (sum) {
        float *acc = (float *)(ws + p->impl.off_acc);
        if (first)
            memcpy(acc, res, (size_t)o->n * sizeof(float));
        else
            for (int64_t i = 0; i < o->n; i++)
                acc[i] += res[i];
        return KMUX_OK;
    }
    return finish(r, res, user[p->out], alpha, beta, a, image);
}

/* The forward epilogue (kmux.h; KMUX_CONV_EPILOGUES) fused in the finish of images [image, image
 * + nb): y = act(alpha * res + beta * y + bias[k]) and the mask of its input, rounded once. With
 * alpha = 1, beta = 0 and no GELU by the GEMM epilogue kernel over the f32 result on oneDNN's
 * team (the trainer's case); otherwise element by element in f64, as the shared CPU finish. */
static void finish_epilogue(conv_run *r, const float *res, void *out, double alpha, double beta,
                            const kmux_conv2d_args *a, int64_t image) {
    const kmux_dnn_conv_plan *p = r->p;
    kmux_conv2d_desc d = p->d;
    d.n = p->nb;
    const int64_t per_image = p->impl.t[T_Y].n / p->nb, first = image * per_image;
    const float one = 1.0f;
    kmux_matmul_desc md;
    kmux_matmul_args ma;
    kmux_conv_epilogue_matmul(&d, out, a->bias, a->aux ? (uint8_t *)a->aux + first / 8 : NULL, &one,
                              &md, &ma);
    if (alpha == 1.0 && beta == 0.0 && first % 8 == 0 && kmux_cpu_matmul_epilogue_runs(&md, &ma)) {
        kmux_dnn_epilogue_on_team(&md, &ma, res, d.layout == KMUX_NHWC ? d.k : per_image / d.k,
                                  md.stride_c);
        return;
    }
    const unsigned e = d.epilogue;
    const int64_t pq = per_image / d.k;
    uint8_t *mask = a->aux;
    for (int64_t i = 0; i < p->impl.t[T_Y].n; i++) {
        double v = alpha * (double)res[i];
        if (beta != 0.0) v += beta * kmux_dnn_load(out, d.y_type, i);
        const int64_t ch = d.layout == KMUX_NHWC ? i % d.k : (i / pq) % d.k;
        if (e & KMUX_EPILOGUE_BIAS) v += kmux_dnn_load(a->bias, d.bias_type, ch);
        const int64_t x = first + i;
        if (e & KMUX_EPILOGUE_RELU_AUX)
            mask[x / 8] = (uint8_t)((mask[x / 8] & ~(1u << (x % 8))) | ((v > 0.0) << (x % 8)));
        if ((e & KMUX_EPILOGUE_RELU) && !(v > 0.0) && v == v) v = 0.0;
        if (e & KMUX_EPILOGUE_GELU) v = kmux_gelu_tanh(v);
        kmux_dnn_store(out, d.y_type, i, v);
    }
}

/* The f32 result res (o->n elements) into the user's output: y = alpha * res + beta * y, one
 * rounding (and the forward epilogue of images [image, image + nb) in the same pass). */
static kmux_status finish(conv_run *r, float *res, void *out, double alpha, double beta,
                          const kmux_conv2d_args *a, int64_t image) {
    const conv_tensor *o = &r->p->impl.t[r->p->out];
    kmux_dtype type = r->p->d.x_type;
    if (r->p->d.epilogue && r->p->out == T_Y) {
        finish_epilogue(r, res, out, alpha, beta, a, image);
        return KMUX_OK;
    }
    if (res == out) return KMUX_OK;
    if (alpha == 1.0 && beta == 0.0) {
        kmux_status ks =
            kmux_cpu_cast(o->n, res, KMUX_F32, out, type, 0, NULL, NULL, r->st->hdr.num_threads);
        if (ks != KMUX_OK)
            return KMUX_DNN_ERROR(r->st, ks,
                                  "kmux_conv2d_execute: backend onednn: f32 -> %s "
                                  "rounding failed",
                                  kmux_common_dtype_name(type));
        return KMUX_OK;
    }
    combine(res, out, type, o->n, alpha, beta);
    return KMUX_OK;
}

/* The batch in chunks of nb images (x and y: images outermost in NCHW and NHWC alike). */
static kmux_status run(conv_run *r, const kmux_conv2d_args *a) {
    kmux_dnn_conv_plan *p = r->p;
    void *user[3] = {a->x, a->w, a->y};
    if (p->nb == p->d.n) return run_chunk(r, a, user, 0, 1, 0);
    size_t es = kmux_common_dtype_size(p->d.x_type);
    int bwd_w = p->out == T_W;
    for (int64_t c = 0; c < p->d.n / p->nb; c++) {
        void *u[3] = {(char *)a->x + (size_t)c * (size_t)p->impl.t[T_X].n * es, a->w,
                      (char *)a->y + (size_t)c * (size_t)p->impl.t[T_Y].n * es};
        kmux_status ks = run_chunk(r, a, u, bwd_w, c == 0, c * p->nb);
        if (ks != KMUX_OK) return ks;
    }
    if (!bwd_w) return KMUX_OK;
    return finish(r, (float *)((char *)r->ctx->work + p->impl.off_acc), a->w,
                  *(const float *)a->alpha, *(const float *)a->beta, a, 0);
}

kmux_status kmux_dnn_conv2d_run(kmux_dnn_state *st, kmux_dnn_plan *plan,
                                const kmux_conv2d_args *args) {
    conv_run r = {st, (kmux_dnn_conv_plan *)plan, NULL, KMUX_OK};
    kmux_dnn_threads th;
    kmux_dnn_threads_enter(r.st, &th);
    kmux_status ks =
        kmux_dnn_ctx_acquire("kmux_conv2d_execute", r.st, &r.p->base, r.p->impl.scratch,
                             args->workspace, args->workspace_bytes, &r.ctx);
    if (ks == KMUX_OK) {
        ks = run(&r, args);
        kmux_dnn_ctx_release(&r.p->base, r.ctx);
    }
    kmux_dnn_threads_leave(&th);
    return ks;
}
