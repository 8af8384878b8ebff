/*
 * test_ref_conv.c - 2-D convolution on the reference device through the public API: tiny cases
 * computed by hand for each direction, stride, asymmetric padding, dilation, groups, depthwise,
 * f16/bf16 output rounding; NCHW and NHWC giving the same numbers; and the adjoint identities
 * <conv(x, w), dy> = <x, conv^T(dy, w)> = <w, corr(x, dy)>, exact with small integers.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "test_util.h"

TU_REF_SUITE(ref_conv);

/* Runs desc once; alpha/beta as double for f64 tensors, float otherwise. */
static void conv(const kmux_conv2d_desc *d, void *x, void *w, void *y, double alpha, double beta) {
    kmux_plan *plan = NULL;
    TU_OK(kmux_conv2d_plan_create(dev, d, NULL, &plan));
    kmux_conv2d_args a = KMUX_CONV2D_ARGS_INIT;
    float af = (float)alpha, bf = (float)beta;
    int f64 = d->compute_type == KMUX_COMPUTE_F64;
    a.alpha = f64 ? (const void *)&alpha : (const void *)&af;
    a.beta = f64 ? (const void *)&beta : (const void *)&bf;
    a.x = x;
    a.w = w;
    a.y = y;
    TU_OK(kmux_conv2d_execute(plan, st, &a));
    TU_OK(kmux_plan_destroy(plan));
}

/* f32 NCHW, one image, one channel in and out: H x W input, R x S filter. */
static kmux_conv2d_desc desc1(kmux_conv_direction dir, int64_t h, int64_t w, int64_t r, int64_t s) {
    kmux_conv2d_desc d = KMUX_CONV2D_DESC_INIT;
    d.direction = dir;
    d.n = d.c = d.k = 1;
    d.h = h, d.w = w, d.r = r, d.s = s;
    return d;
}

static void expect_f32(const float *got, const float *want, int n, const char *what) {
    for (int i = 0; i < n; i++)
        cr_expect_eq(got[i], want[i], "%s[%d] = %g, want %g", what, i, got[i], want[i]);
}

/* x = [1 2 3; 4 5 6; 7 8 9], w = [1 2; 3 4] throughout the hand-computed cases. */
static const float X33[9] = {1, 2, 3, 4, 5, 6, 7, 8, 9};
static const float W22[4] = {1, 2, 3, 4};

Test(ref_conv, forward) {
    /* y[p][q] = sum_rs x[p+r][q+s] w[r][s]: 1+4+12+20, 2+6+15+24, 4+10+21+32, 5+12+24+36 */
    kmux_conv2d_desc d = desc1(KMUX_CONV_FWD, 3, 3, 2, 2);
    float y[4] = {NAN, NAN, NAN, NAN};
    conv(&d, (void *)X33, (void *)W22, y, 1, 0);
    expect_f32(y, (const float[]){37, 47, 67, 77}, 4, "y");
    /* alpha = 2, beta = 1 over y = 1 */
    for (int i = 0; i < 4; i++)
        y[i] = 1;
    conv(&d, (void *)X33, (void *)W22, y, 2, 1);
    expect_f32(y, (const float[]){75, 95, 135, 155}, 4, "y (alpha 2, beta 1)");
}

Test(ref_conv, backward_data) {
    /* dx[h][w] = sum over p + r = h, q + s = w of dy[p][q] w[r][s], dy = [1 2; 3 4]:
     * [1, 2+2, 4; 3+3, 4+6+6+4, 8+8; 9, 12+12, 16] */
    kmux_conv2d_desc d = desc1(KMUX_CONV_BWD_DATA, 3, 3, 2, 2);
    float dx[9], dy[4] = {1, 2, 3, 4};
    for (int i = 0; i < 9; i++)
        dx[i] = NAN; /* beta = 0: not read */
    conv(&d, dx, (void *)W22, dy, 1, 0);
    expect_f32(dx, (const float[]){1, 4, 4, 6, 20, 16, 9, 24, 16}, 9, "dx");
}

Test(ref_conv, backward_weights) {
    /* dw[r][s] = sum_pq x[p+r][q+s] dy[p][q], dy = [1 -1; 2 0]: x[r][s] - x[r][s+1] + 2 x[r+1][s]
     * = [1-2+8, 2-3+10; 4-5+14, 5-6+16]; then alpha = 1, beta = 1 over dw = 10. */
    kmux_conv2d_desc d = desc1(KMUX_CONV_BWD_WEIGHTS, 3, 3, 2, 2);
    float dw[4] = {NAN, NAN, NAN, NAN}, dy[4] = {1, -1, 2, 0};
    conv(&d, (void *)X33, dw, dy, 1, 0);
    expect_f32(dw, (const float[]){7, 9, 13, 15}, 4, "dw");
    for (int i = 0; i < 4; i++)
        dw[i] = 10;
    conv(&d, (void *)X33, dw, dy, 1, 1);
    expect_f32(dw, (const float[]){17, 19, 23, 25}, 4, "dw (beta 1)");
}

Test(ref_conv, stride2_asymmetric_padding) {
    /* pad top 1, bottom 0, left 0, right 1, stride 2: P = (3+1-2)/2+1 = 2, Q = (3+1-2)/2+1 = 2.
     * Windows start at (2p - 1, 2q): rows -1..0 / 1..2, cols 0..1 / 2..3 of the padded x:
     * [0+0+3+8, 0+0+9+0; 4+10+21+32, 6+0+27+0] */
    kmux_conv2d_desc d = desc1(KMUX_CONV_FWD, 3, 3, 2, 2);
    d.stride_h = d.stride_w = 2;
    d.pad_top = 1, d.pad_right = 1;
    int64_t p = 0, q = 0;
    TU_OK(kmux_conv2d_output_dims(&d, &p, &q));
    cr_assert(p == 2 && q == 2, "P = %lld, Q = %lld", (long long)p, (long long)q);
    float y[4];
    conv(&d, (void *)X33, (void *)W22, y, 1, 0);
    expect_f32(y, (const float[]){11, 9, 67, 33}, 4, "y");
}

Test(ref_conv, dilation2) {
    /* dilation 2, pad 1 on every side: taps at (p - 1 + 2r, q - 1 + 2s), P = Q = (5 - 3) + 1.
     * e.g. y[1][1] = x00 + 2 x02 + 3 x20 + 4 x22 = 1 + 6 + 21 + 36; y[0][0] = 4 x11 = 20. */
    kmux_conv2d_desc d = desc1(KMUX_CONV_FWD, 3, 3, 2, 2);
    d.dilation_h = d.dilation_w = 2;
    d.pad_top = d.pad_bottom = d.pad_left = d.pad_right = 1;
    float y[9];
    conv(&d, (void *)X33, (void *)W22, y, 1, 0);
    expect_f32(y, (const float[]){20, 36, 15, 36, 64, 26, 10, 16, 5}, 9, "y");
}

Test(ref_conv, groups2) {
    /* C = 4, K = 2, groups = 2, 1x1 filter, H = 1, W = 2. x channels [1 2] [3 4] [5 6] [7 8];
     * k0 sees c0, c1 with weights 1, 10; k1 sees c2, c3 with weights 100, 1000:
     * y0 = [1 + 30, 2 + 40], y1 = [500 + 7000, 600 + 8000]. */
    kmux_conv2d_desc d = desc1(KMUX_CONV_FWD, 1, 2, 1, 1);
    d.c = 4, d.k = 2, d.groups = 2;
    float x[8] = {1, 2, 3, 4, 5, 6, 7, 8}, w[4] = {1, 10, 100, 1000}, y[4];
    conv(&d, x, w, y, 1, 0);
    expect_f32(y, (const float[]){31, 42, 7500, 8600}, 4, "y");
}

Test(ref_conv, depthwise) {
    /* C = K = groups = 2: channel 0 is the 3x3 case with w = [1 2; 3 4]; channel 1 has
     * x = [9 8 7; 6 5 4; 3 2 1], w = [1 0; 0 1]: y1[p][q] = x[p][q] + x[p+1][q+1]. */
    kmux_conv2d_desc d = desc1(KMUX_CONV_FWD, 3, 3, 2, 2);
    d.c = d.k = d.groups = 2;
    float x[18], w[8] = {1, 2, 3, 4, 1, 0, 0, 1}, y[8];
    for (int i = 0; i < 9; i++)
        x[i] = X33[i], x[9 + i] = (float)(9 - i);
    conv(&d, x, w, y, 1, 0);
    expect_f32(y, (const float[]){37, 47, 67, 77, 14, 12, 8, 6}, 8, "y");
}

Test(ref_conv, f16_bf16_rounding) {
    /* 1x1 filter, C = 2, K = 1, W = 2, w = [1 1]: y = x_c0 + x_c1.
     * f16: [1 + 2^-11 (tie -> 0x3C00), 1 + 2^-10 + 2^-11 (tie -> 0x3C02)] */
    kmux_conv2d_desc d = desc1(KMUX_CONV_FWD, 1, 2, 1, 1);
    d.c = 2;
    d.x_type = d.w_type = d.y_type = KMUX_F16;
    uint16_t x[4] = {0x3C00, 0x3C01, 0x1000, 0x1000}, w[2] = {0x3C00, 0x3C00}, y[2];
    conv(&d, x, w, y, 1, 0);
    cr_expect(y[0] == 0x3C00 && y[1] == 0x3C02, "f16 y = 0x%04x 0x%04x", y[0], y[1]);
    /* bf16: 1 = 0x3F80, 1 + 2^-7 = 0x3F81, 2^-8 = 0x3B80 */
    d.x_type = d.w_type = d.y_type = KMUX_BF16;
    uint16_t xb[4] = {0x3F80, 0x3F81, 0x3B80, 0x3B80}, wb[2] = {0x3F80, 0x3F80};
    conv(&d, xb, wb, y, 1, 0);
    cr_expect(y[0] == 0x3F80 && y[1] == 0x3F82, "bf16 y = 0x%04x 0x%04x", y[0], y[1]);
}

/* ---- random integer problems: layouts and adjoints ---- */

/* N=2, C=4, H=5, W=6, K=6, R=2, S=3, groups 2, stride (2,1), pads (1,0,2,1), dilation (1,2):
 * P = (5+1 - 2)/2 + 1 = 3, Q = (6+3 - 5)/1 + 1 = 5. */
static kmux_conv2d_desc big_desc(kmux_conv_direction dir, kmux_layout layout) {
    kmux_conv2d_desc d = KMUX_CONV2D_DESC_INIT;
    d.direction = dir;
    d.layout = layout;
    d.n = 2, d.c = 4, d.h = 5, d.w = 6, d.k = 6, d.r = 2, d.s = 3, d.groups = 2;
    d.stride_h = 2, d.stride_w = 1;
    d.pad_top = 1, d.pad_bottom = 0, d.pad_left = 2, d.pad_right = 1;
    d.dilation_h = 1, d.dilation_w = 2;
    d.x_type = d.w_type = d.y_type = KMUX_F64;
    d.compute_type = KMUX_COMPUTE_F64;
    return d;
}
enum { BN = 2, BC = 4, BH = 5, BW = 6, BK = 6, BR = 2, BS = 3, BCG = 2, BP = 3, BQ = 5 };
enum { NX = BN * BC * BH * BW, NW = BK * BCG * BR * BS, NY = BN * BK * BP * BQ };

static void fill_ints(double *v, int n, uint64_t *seed) {
    for (int i = 0; i < n; i++)
        v[i] = (double)(int)(tu_rand_u64(seed) % 7) - 3.0;
}

/* NCHW-family (dims d0 x d1 x d2 x d3) -> the same tensor with d1 moved last. */
static void to_channels_last(const double *src, double *dst, int d0, int d1, int d2, int d3) {
    for (int a = 0; a < d0; a++)
        for (int b = 0; b < d1; b++)
            for (int c = 0; c < d2; c++)
                for (int e = 0; e < d3; e++)
                    dst[((a * d2 + c) * d3 + e) * d1 + b] = src[((a * d1 + b) * d2 + c) * d3 + e];
}

static double dot(const double *a, const double *b, int n) {
    double s = 0;
    for (int i = 0; i < n; i++)
        s += a[i] * b[i];
    return s;
}

Test(ref_conv, nchw_and_nhwc_agree) {
    /* NX is the largest of the three tensors: every output fits in NX elements */
    static double x[NX], w[NW], y[NY], xl[NX], wl[NW], yl[NY], out[NX], outl[NX], conv_l[NX];
    uint64_t seed = 42;
    fill_ints(x, NX, &seed);
    fill_ints(w, NW, &seed);
    fill_ints(y, NY, &seed);
    to_channels_last(x, xl, BN, BC, BH, BW);
    to_channels_last(w, wl, BK, BCG, BR, BS);
    to_channels_last(y, yl, BN, BK, BP, BQ);
    const kmux_conv_direction dirs[] = {KMUX_CONV_FWD, KMUX_CONV_BWD_DATA, KMUX_CONV_BWD_WEIGHTS};
    for (int i = 0; i < 3; i++) {
        kmux_conv2d_desc dn = big_desc(dirs[i], KMUX_NCHW), dl = big_desc(dirs[i], KMUX_NHWC);
        int n = 0;
        if (dirs[i] == KMUX_CONV_FWD) {
            conv(&dn, x, w, out, 1, 0);
            conv(&dl, xl, wl, outl, 1, 0);
            to_channels_last(out, conv_l, BN, BK, BP, BQ);
            n = NY;
        } else if (dirs[i] == KMUX_CONV_BWD_DATA) {
            conv(&dn, out, w, y, 1, 0);
            conv(&dl, outl, wl, yl, 1, 0);
            to_channels_last(out, conv_l, BN, BC, BH, BW);
            n = NX;
        } else {
            conv(&dn, x, out, y, 1, 0);
            conv(&dl, xl, outl, yl, 1, 0);
            to_channels_last(out, conv_l, BK, BCG, BR, BS);
            n = NW;
        }
        int nonzero = 0;
        for (int j = 0; j < n; j++) {
            cr_expect_eq(outl[j], conv_l[j], "direction %d element %d: NHWC %g, NCHW %g",
                         (int)dirs[i], j, outl[j], conv_l[j]);
            nonzero += conv_l[j] != 0;
        }
        cr_expect(nonzero > n / 2, "direction %d: result mostly zeros", (int)dirs[i]);
    }
}

Test(ref_conv, adjoint_identities) {
    static double x[NX], w[NW], dy[NY], y[NY], dx[NX], dw[NW];
    const kmux_layout layouts[] = {KMUX_NCHW, KMUX_NHWC};
    for (int li = 0; li < 2; li++) {
        uint64_t seed = 7 + (uint64_t)li;
        fill_ints(x, NX, &seed);
        fill_ints(w, NW, &seed);
        fill_ints(dy, NY, &seed);
        kmux_conv2d_desc f = big_desc(KMUX_CONV_FWD, layouts[li]);
        kmux_conv2d_desc bd = big_desc(KMUX_CONV_BWD_DATA, layouts[li]);
        kmux_conv2d_desc bw = big_desc(KMUX_CONV_BWD_WEIGHTS, layouts[li]);
        conv(&f, x, w, y, 1, 0);
        conv(&bd, dx, w, dy, 1, 0);
        conv(&bw, x, dw, dy, 1, 0);
        double lhs = dot(y, dy, NY), via_x = dot(x, dx, NX), via_w = dot(w, dw, NW);
        cr_expect_eq(lhs, via_x, "layout %d: <conv(x,w),dy> = %g, <x,conv^T(dy,w)> = %g",
                     (int)layouts[li], lhs, via_x);
        cr_expect_eq(lhs, via_w, "layout %d: <conv(x,w),dy> = %g, <w,corr(x,dy)> = %g",
                     (int)layouts[li], lhs, via_w);
        cr_expect(lhs != 0, "degenerate test data");
    }
}

Test(ref_conv, plan_info) {
    kmux_conv2d_desc d = desc1(KMUX_CONV_FWD, 3, 3, 2, 2);
    kmux_plan *plan = NULL;
    TU_OK(kmux_conv2d_plan_create(dev, &d, NULL, &plan));
    kmux_plan_info info;
    TU_OK(kmux_plan_info_get(plan, &info));
    cr_expect_str_eq(info.impl, "ref:direct");
    cr_expect_eq(info.effective_compute, KMUX_COMPUTE_F64);
    cr_expect_eq(info.deterministic, 1);
    TU_OK(kmux_plan_destroy(plan));
}
