/*
 * test_gpu_emu_conv.c - kmux_gpu_conv2d (kernels/gpu/kmux_gpu_conv.cu) run in the host emulation
 * of the GPU execution model at wave 32 and 64, in index and shuffled block order, with both
 * tiles, against the ref device: every direction, both layouts, every dtype of the convolution
 * type table, on the conformance suite's quick shapes (groups, depthwise, asymmetric padding,
 * stride, dilation), with alpha/beta variants and alpha == 0 / beta == 0.
 */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../conformance/conv_quick_shapes.h"
#include "emu_common.h"
#include "kmux_dtype_desc.h"
#include "kmux_gpu_kernels.h"
#include "kmux_type_rules.h"

/* the quick shapes of tests/test_conformance_conv.c (conv_quick_shapes.h: n, c, h, w, k, r, s,
 * groups, stride h/w, pad top/bottom/left/right, dilation h/w) */
static const int64_t SHAPES[][16] = {KMUX_CONV_QUICK_SHAPES};
#define NSHAPES ((int)(sizeof SHAPES / sizeof SHAPES[0]))

static kmux_conv2d_desc make_desc(const int64_t *v, kmux_layout l, kmux_conv_direction dir,
                                  kmux_dtype t, kmux_compute_type ct) {
    kmux_conv2d_desc d = KMUX_CONV2D_DESC_INIT;
    d.direction = dir;
    d.layout = l;
    d.n = v[0], d.c = v[1], d.h = v[2], d.w = v[3], d.k = v[4], d.r = v[5], d.s = v[6];
    d.groups = v[7];
    d.stride_h = v[8], d.stride_w = v[9];
    d.pad_top = v[10], d.pad_bottom = v[11], d.pad_left = v[12], d.pad_right = v[13];
    d.dilation_h = v[14], d.dilation_w = v[15];
    d.x_type = d.w_type = d.y_type = t;
    d.compute_type = ct;
    return d;
}

typedef struct tensors {
    void *x, *w, *y;
    int64_t nx, nw, ny;
} tensors;

static void *out_of(const kmux_conv2d_desc *d, tensors *t, int64_t *n) {
    switch (d->direction) {
    case KMUX_CONV_FWD:
        *n = t->ny;
        return t->y;
    case KMUX_CONV_BWD_DATA:
        *n = t->nx;
        return t->x;
    default:
        *n = t->nw;
        return t->w;
    }
}

static void ref_run(const kmux_conv2d_desc *d, tensors *t, const void *alpha, const void *beta) {
    kmux_plan *plan = NULL;
    cr_assert_eq(kmux_conv2d_plan_create(emu_ref(), d, NULL, &plan), KMUX_OK, "%s",
                 kmux_last_error());
    kmux_conv2d_args a = KMUX_CONV2D_ARGS_INIT;
    a.alpha = alpha, a.beta = beta, a.x = t->x, a.w = t->w, a.y = t->y;
    cr_assert_eq(kmux_conv2d_execute(plan, emu_ref_stream(), &a), KMUX_OK, "%s", kmux_last_error());
    kmux_plan_destroy(plan);
}

/* Runs one convolution case under every setting and tile, compared with ref. */
static void run_case(const kmux_conv2d_desc *d, double alpha, double beta, const char *tag) {
    int64_t p = 0, q = 0;
    cr_assert_eq(kmux_conv2d_output_dims(d, &p, &q), KMUX_OK, "%s: %s", tag, kmux_last_error());
    const kmux_dtype t = d->x_type;
    const size_t eb = kmux_dtype_bytes(t);
    tensors in = {0}, mag = {0};
    in.nx = d->n * d->c * d->h * d->w;
    in.nw = d->k * (d->c / d->groups) * d->r * d->s;
    in.ny = d->n * d->k * p * q;
    uint64_t st = 0x51ed2701ull + (uint64_t)(in.nx * 31 + in.nw * 7 + in.ny);
    void **tp[3] = {&in.x, &in.w, &in.y};
    void **mp[3] = {&mag.x, &mag.w, &mag.y};
    int64_t ns[3] = {in.nx, in.nw, in.ny};
    mag.nx = in.nx, mag.nw = in.nw, mag.ny = in.ny;
    for (int i = 0; i < 3; i++) {
        *tp[i] = emu_alloc((size_t)ns[i] * eb);
        *mp[i] = emu_alloc((size_t)ns[i] * eb);
        emu_fill(t, *tp[i], ns[i], 2.0, &st);
        for (int64_t e = 0; e < ns[i]; e++)
            emu_set(t, *mp[i], e, fabs(emu_get(t, *tp[i], e)));
    }
    int64_t nout = 0;
    void *out = out_of(d, &in, &nout);
    void *mout = out_of(d, &mag, &nout);
    if (beta == 0)
        for (int64_t e = 0; e < nout; e++)
            emu_poison(t, out, e); /* beta == 0 must not read the output */
    const int f64 = d->compute_type == KMUX_COMPUTE_F64;
    double a64 = alpha, b64 = beta, aabs = fabs(alpha), zero64 = 0;
    float a32 = (float)alpha, b32 = (float)beta, aabs32 = (float)aabs, zero32 = 0;
    const void *pa = f64 ? (const void *)&a64 : (const void *)&a32;
    const void *pb = f64 ? (const void *)&b64 : (const void *)&b32;

    /* bound: ref on the magnitudes (the sum of |terms|), plus |beta * out| */
    ref_run(d, &mag, f64 ? (const void *)&aabs : (const void *)&aabs32,
            f64 ? (const void *)&zero64 : (const void *)&zero32);
    double *bound = emu_alloc(sizeof(double) * (size_t)nout);
    for (int64_t e = 0; e < nout; e++)
        bound[e] =
            emu_get(t, mout, e) * (1 + 0x1p-7) + (beta != 0 ? fabs(beta * emu_get(t, out, e)) : 0);
    unsigned char *init = emu_alloc((size_t)nout * eb), *want = emu_alloc((size_t)nout * eb);
    unsigned char *first = emu_alloc((size_t)nout * eb);
    memcpy(init, out, (size_t)nout * eb);
    ref_run(d, &in, pa, pb);
    memcpy(want, out, (size_t)nout * eb);

    const int64_t kmax = d->direction == KMUX_CONV_BWD_WEIGHTS ? d->n * p * q
                         : d->direction == KMUX_CONV_FWD       ? (d->c / d->groups) * d->r * d->s
                                                               : (d->k / d->groups) * d->r * d->s;
    const double u_acc = t == KMUX_F64 ? ldexp(1.0, -53) : ldexp(1.0, -24);
    const double u_out = emu_unit_roundoff(t), min_out = emu_min_subnormal(t);
    int runs = 0;
    kmux_conv2d_args a = KMUX_CONV2D_ARGS_INIT;
    a.alpha = pa, a.beta = pb;
    for (int si = 0; si < EMU_SETTING_COUNT; si++) {
        int last_tile = si == 0 || si == EMU_SETTING_COUNT - 1 ? KMUX_GPU_TILE_COUNT - 1 : 0;
        for (int tile = 0; tile <= last_tile; tile++) {
            const emu_setting *s = &EMU_SETTINGS[si];
            emu_apply(s);
            memcpy(out, init, (size_t)nout * eb);
            a.x = in.x, a.w = in.w, a.y = in.y;
            if (alpha == 0) { /* the inputs must not be read */
                a.x = out == in.x ? in.x : NULL;
                a.w = out == in.w ? in.w : NULL;
                a.y = out == in.y ? in.y : NULL;
            }
            char what[200];
            snprintf(what, sizeof what, "%s [wave %u, seed %llu, tile %d]", tag, s->wave,
                     (unsigned long long)s->seed, tile);
            emu_check_launch(kmux_gpu_conv2d(NULL, d, &a, tile, 0), what);
            for (int64_t e = 0; e < nout; e++) {
                double w = emu_get(t, want, e), g = emu_get(t, out, e);
                double tol = emu_tol(w, bound[e], (double)kmax, u_acc, u_out, min_out, 0);
                cr_assert(emu_same(g, w, tol), "%s: element %lld: got %.9g want %.9g (tol %.3g)",
                          what, (long long)e, g, w, tol);
            }
            if (runs++ == 0)
                memcpy(first, out, (size_t)nout * eb);
            else
                cr_assert(memcmp(first, out, (size_t)nout * eb) == 0,
                          "%s: result differs bitwise from the first run", what);
        }
    }
    for (int i = 0; i < 3; i++) {
        free(*tp[i]);
        free(*mp[i]);
    }
    free(bound);
    free(init);
    free(want);
    free(first);
}

static const char *dir_name(kmux_conv_direction d) {
    return d == KMUX_CONV_FWD ? "fwd" : d == KMUX_CONV_BWD_DATA ? "bwd_data" : "bwd_weights";
}

/* Every shape, both layouts, alpha 1 beta 0 (and alpha 0.75 beta 0.5 on every other shape, as
 * the conformance suite), for the dtype rows of the
 * convolution type table with a_type t (strict compute types: the FAST ones run as strict f32). */
static void run_dir(kmux_conv_direction dir, int dtype_group) {
    int count = 0;
    const kmux_type_combination *rows = kmux_rules_conv_table(&count);
    int ran = 0;
    for (int r = 0; r < count; r++) {
        kmux_dtype t = rows[r].a_type;
        int group = t == KMUX_F64 || t == KMUX_F32 ? 0 : 1;
        if (group != dtype_group) continue;
        if (rows[r].compute_type == KMUX_COMPUTE_F32_FAST_TF32 ||
            rows[r].compute_type == KMUX_COMPUTE_F32_FAST_BF16)
            continue; /* same kernel as F32 (strict f32 is what runs) */
        for (int l = 0; l < 2; l++)
            for (int s = 0; s < NSHAPES; s++)
                for (int v = 0; v < (s % 2 == 0 ? 2 : 1); v++) {
                    kmux_conv2d_desc d = make_desc(SHAPES[s], l ? KMUX_NHWC : KMUX_NCHW, dir, t,
                                                   rows[r].compute_type);
                    char tag[128];
                    snprintf(tag, sizeof tag, "conv %s %s %s shape %d variant %d", dir_name(dir),
                             l ? "nhwc" : "nchw", kmux_dtype_desc_of(t).name, s, v);
                    run_case(&d, v ? 0.75 : 1, v ? 0.5 : 0, tag);
                }
        ran++;
    }
    cr_assert_eq(ran, 2, "dtype rows run: %d", ran);
}

Test(gpu_emu_conv, fwd_f64_f32) {
    run_dir(KMUX_CONV_FWD, 0);
}
Test(gpu_emu_conv, fwd_f16_bf16) {
    run_dir(KMUX_CONV_FWD, 1);
}
Test(gpu_emu_conv, bwd_data_f64_f32) {
    run_dir(KMUX_CONV_BWD_DATA, 0);
}
Test(gpu_emu_conv, bwd_data_f16_bf16) {
    run_dir(KMUX_CONV_BWD_DATA, 1);
}
Test(gpu_emu_conv, bwd_weights_f64_f32) {
    run_dir(KMUX_CONV_BWD_WEIGHTS, 0);
}
Test(gpu_emu_conv, bwd_weights_f16_bf16) {
    run_dir(KMUX_CONV_BWD_WEIGHTS, 1);
}

/* alpha == 0: out = beta * out without reading the inputs (NULL here); every direction. */
Test(gpu_emu_conv, alpha_zero_reads_no_input) {
    for (int dir = KMUX_CONV_FWD; dir <= KMUX_CONV_BWD_WEIGHTS; dir++) {
        kmux_conv2d_desc d =
            make_desc(SHAPES[1], KMUX_NHWC, (kmux_conv_direction)dir, KMUX_F32, KMUX_COMPUTE_F32);
        run_case(&d, 0, -2, "alpha == 0");
    }
}

Test(gpu_emu_conv, implementation_names) {
    kmux_conv2d_desc d = KMUX_CONV2D_DESC_INIT;
    d.direction = KMUX_CONV_BWD_DATA, d.layout = KMUX_NHWC;
    d.x_type = d.w_type = d.y_type = KMUX_F16;
    char buf[128];
    cr_assert_eq(kmux_gpu_conv2d_name(&d, 0, buf, sizeof buf), 0);
    cr_assert_str_eq(buf, "kmux-gpu:conv2d:bwd_data:nhwc:f16:acc=f32:tile=64x64x16/4x4");
    cr_assert_eq(kmux_gpu_conv2d_name(&d, -1, buf, sizeof buf), -1);
}
