/* ov_conv.c - bench_overhead's ResNet-50 3x3 convolution: a kmux plan vs the oneDNN primitive. */
#define _POSIX_C_SOURCE 200809L
#include "ov_common.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* ---- convolution -------------------------------------------------------------------------------
 */

typedef struct conv_args {
    kmux_plan *plan;
    kmux_stream *stream;
    float *x, *w, *y;
#ifdef KMUX_BENCH_HAVE_DNNL
    dnnl_stream_t dstream;
    dnnl_primitive_t prim, reorder[3];
    int has_reorder[3];
    dnnl_exec_arg_t conv_args[3], reorder_args[3][2];
#endif
} conv_args;

static int run_kmux_conv(void *p) {
    conv_args *c = p;
    float one = 1.0f, zero = 0.0f;
    kmux_conv2d_args a = KMUX_CONV2D_ARGS_INIT;
    a.alpha = &one;
    a.beta = &zero;
    a.x = c->x;
    a.w = c->w;
    a.y = c->y;
    kmux_status s = kmux_conv2d_execute(c->plan, c->stream, &a);
    if (s != KMUX_OK) fprintf(stderr, "kmux_conv2d_execute: %s\n", kmux_last_error());
    return s != KMUX_OK;
}

#ifdef KMUX_BENCH_HAVE_DNNL
/* The oneDNN way for NCHW data: let the convolution choose its layouts (format any), reorder
 * x and w in, run, reorder y out. */
static int run_dnnl_conv(void *p) {
    conv_args *c = p;
    for (int i = 0; i < 2; i++)
        if (c->has_reorder[i] &&
            dnnl_primitive_execute(c->reorder[i], c->dstream, 2, c->reorder_args[i]))
            return 1;
    if (dnnl_primitive_execute(c->prim, c->dstream, 3, c->conv_args)) return 1;
    if (c->has_reorder[2] &&
        dnnl_primitive_execute(c->reorder[2], c->dstream, 2, c->reorder_args[2]))
        return 1;
    return 0;
}

static int dnnl_conv_setup(conv_args *c, int64_t mb) {
    dnnl_dims_t dims[3] = {{mb, 64, 56, 56}, {64, 64, 3, 3}, {mb, 64, 56, 56}}; /* x, w, y */
    dnnl_dims_t strides = {1, 1}, dil = {0, 0}, pad = {1, 1};
    dnnl_memory_desc_t user[3], any[3];
    static const dnnl_format_tag_t tags[3] = {dnnl_nchw, dnnl_oihw, dnnl_nchw};
    for (int i = 0; i < 3; i++)
        if (dnnl_memory_desc_init_by_tag(&user[i], 4, dims[i], dnnl_f32, tags[i]) ||
            dnnl_memory_desc_init_by_tag(&any[i], 4, dims[i], dnnl_f32, dnnl_format_tag_any))
            return 1;
    dnnl_convolution_desc_t op;
    dnnl_primitive_desc_t pd;
    if (dnnl_dilated_convolution_forward_desc_init(&op, dnnl_forward_inference,
                                                   dnnl_convolution_direct, &any[0], &any[1], NULL,
                                                   &any[2], strides, dil, pad, pad) ||
        dnnl_primitive_desc_create(&pd, &op, NULL, g_engine, NULL) ||
        dnnl_primitive_create(&c->prim, pd) ||
        dnnl_stream_create(&c->dstream, g_engine, dnnl_stream_default_flags))
        return 1;
    static const dnnl_query_t q[3] = {dnnl_query_src_md, dnnl_query_weights_md, dnnl_query_dst_md};
    static const int arg[3] = {DNNL_ARG_SRC, DNNL_ARG_WEIGHTS, DNNL_ARG_DST};
    float *ptr[3] = {c->x, c->w, c->y};
    for (int i = 0; i < 3; i++) {
        const dnnl_memory_desc_t *pm = dnnl_primitive_desc_query_md(pd, q[i], 0);
        dnnl_memory_t um, im;
        if (dnnl_memory_create(&um, &user[i], g_engine, ptr[i])) return 1;
        c->has_reorder[i] = !dnnl_memory_desc_equal(pm, &user[i]);
        if (!c->has_reorder[i]) {
            c->conv_args[i] = (dnnl_exec_arg_t){arg[i], um};
            continue;
        }
        if (dnnl_memory_create(&im, pm, g_engine, DNNL_MEMORY_ALLOCATE)) return 1;
        c->conv_args[i] = (dnnl_exec_arg_t){arg[i], im};
        dnnl_primitive_desc_t rpd;
        int out = i == 2;
        if (dnnl_reorder_primitive_desc_create(&rpd, out ? pm : &user[i], g_engine,
                                               out ? &user[i] : pm, g_engine, NULL) ||
            dnnl_primitive_create(&c->reorder[i], rpd))
            return 1;
        dnnl_primitive_desc_destroy(rpd);
        c->reorder_args[i][0] = (dnnl_exec_arg_t){DNNL_ARG_FROM, out ? im : um};
        c->reorder_args[i][1] = (dnnl_exec_arg_t){DNNL_ARG_TO, out ? um : im};
    }
    dnnl_primitive_desc_destroy(pd);
    return 0;
}
#endif

void bench_conv(devices *dv, int64_t mb, int reps) {
    char what[64];
    snprintf(what, sizeof what, "conv mb%lldic64ih56oc64oh56kh3ph1", (long long)mb);
    if (!dv->dnn) {
        line(what, "cpu:onednn", "", "", "no device", "", -1);
        return;
    }
    int64_t nx = mb * 64 * 56 * 56, nw = 64 * 64 * 9;
    float *x = rand_f32(nx, 6), *w = rand_f32(nw, 7), *y[2] = {rand_f32(nx, 8), rand_f32(nx, 9)};
    conv_args c[2];
    memset(c, 0, sizeof c);
    kmux_conv2d_desc d = KMUX_CONV2D_DESC_INIT;
    d.n = mb;
    d.c = d.k = 64;
    d.h = d.w = 56;
    d.r = d.s = 3;
    d.pad_top = d.pad_bottom = d.pad_left = d.pad_right = 1;
    contestant ct[2] = {{"kmux cpu:onednn", run_kmux_conv, &c[0], 0, {0}},
                        {"oneDNN conv", NULL, &c[1], 0, {0}}};
    for (int i = 0; i < 2; i++) {
        c[i].x = x;
        c[i].w = w;
        c[i].y = y[i];
    }
    c[0].stream = dv->dnn_s;
    ct[0].ok = kmux_conv2d_plan_create(dv->dnn, &d, NULL, &c[0].plan) == KMUX_OK;
#ifdef KMUX_BENCH_HAVE_DNNL
    ct[1].run = run_dnnl_conv;
    ct[1].ok = g_engine && dnnl_conv_setup(&c[1], mb) == 0;
#endif
    int verified = 0;
    if (ct[0].ok && ct[1].ok) {
        ct[0].ok = run_kmux_conv(&c[0]) == 0;
        ct[1].ok = ct[1].run(&c[1]) == 0;
        verified = ct[0].ok && ct[1].ok && rel_diff(y[0], y[1], nx) <= 8.0 * 576 * 0x1p-24;
    }
    interleave(ct, 2, 1, reps, 1);
    ratio_line(what, "cpu:onednn", &ct[0], &ct[1], reps, 0.98, verified);
    if (c[0].plan) kmux_plan_destroy(c[0].plan);
    free(x);
    free(w);
    free(y[0]);
    free(y[1]);
}
