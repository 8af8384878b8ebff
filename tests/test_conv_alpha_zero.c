/*
 * test_conv_alpha_zero.c - convolution with alpha == 0 on every device: the output becomes
 * beta * output and the inputs are not read, so NaN in them cannot reach the result (the same
 * rule as GEMM, kmux.h "2-D convolution").
 */
#include <math.h>
#include <string.h>

#include "test_util.h"

static void check_device(kmux_context *ctx, const char *id, kmux_conv_direction dir) {
    kmux_device *dev = tu_device(ctx, id);
    if (!dev) return;
    kmux_stream *s;
    TU_OK(kmux_stream_create(dev, &s));
    kmux_conv2d_desc d = KMUX_CONV2D_DESC_INIT;
    d.direction = dir;
    d.n = 2, d.c = 4, d.h = 5, d.w = 5, d.k = 4, d.r = 3, d.s = 3, d.groups = 2;
    d.pad_top = d.pad_bottom = d.pad_left = d.pad_right = 1;
    int64_t P, Q;
    TU_OK(kmux_conv2d_output_dims(&d, &P, &Q));
    size_t nx = 2 * 4 * 5 * 5, nw = 4 * 2 * 3 * 3, ny = (size_t)(2 * 4 * P * Q);
    float *x, *w, *y;
    TU_OK(kmux_malloc(dev, nx * 4, (void **)&x));
    TU_OK(kmux_malloc(dev, nw * 4, (void **)&w));
    TU_OK(kmux_malloc(dev, ny * 4, (void **)&y));
    float hx[256], hw[256], hy[256];
    for (size_t i = 0; i < nx; i++)
        hx[i] = NAN;
    for (size_t i = 0; i < nw; i++)
        hw[i] = NAN;
    for (size_t i = 0; i < ny; i++)
        hy[i] = NAN;
    /* the output of this direction holds 1, 2, 3, ...; the inputs hold NaN */
    float *out = dir == KMUX_CONV_FWD ? hy : dir == KMUX_CONV_BWD_DATA ? hx : hw;
    size_t nout = dir == KMUX_CONV_FWD ? ny : dir == KMUX_CONV_BWD_DATA ? nx : nw;
    for (size_t i = 0; i < nout; i++)
        out[i] = (float)(i + 1);
    TU_OK(kmux_memcpy(s, x, hx, nx * 4, KMUX_MEMCPY_HOST_TO_DEVICE));
    TU_OK(kmux_memcpy(s, w, hw, nw * 4, KMUX_MEMCPY_HOST_TO_DEVICE));
    TU_OK(kmux_memcpy(s, y, hy, ny * 4, KMUX_MEMCPY_HOST_TO_DEVICE));
    kmux_plan *plan;
    kmux_status st = kmux_conv2d_plan_create(dev, &d, NULL, &plan);
    if (st == KMUX_ERR_UNSUPPORTED) {
        kmux_stream_destroy(s);
        return;
    }
    TU_OK(st);
    const float zero = 0, half = 0.5f;
    kmux_conv2d_args a = KMUX_CONV2D_ARGS_INIT;
    a.alpha = &zero, a.beta = &half, a.x = x, a.w = w, a.y = y;
    TU_OK(kmux_conv2d_execute(plan, s, &a));
    float *dout = dir == KMUX_CONV_FWD ? y : dir == KMUX_CONV_BWD_DATA ? x : w;
    float got[256];
    TU_OK(kmux_memcpy(s, got, dout, nout * 4, KMUX_MEMCPY_DEVICE_TO_HOST));
    TU_OK(kmux_stream_synchronize(s));
    for (size_t i = 0; i < nout; i++)
        cr_expect_eq(got[i], 0.5f * (float)(i + 1), "%s dir %d: out[%zu] = %g, want %g", id, dir, i,
                     got[i], 0.5 * (double)(i + 1));
    a.beta = &zero; /* alpha == beta == 0: zeros, whatever was there */
    TU_OK(kmux_conv2d_execute(plan, s, &a));
    TU_OK(kmux_memcpy(s, got, dout, nout * 4, KMUX_MEMCPY_DEVICE_TO_HOST));
    TU_OK(kmux_stream_synchronize(s));
    for (size_t i = 0; i < nout; i++)
        cr_expect_eq(got[i], 0.0f, "%s dir %d beta 0: out[%zu] = %g", id, dir, i, got[i]);
    TU_OK(kmux_plan_destroy(plan));
    TU_OK(kmux_free(dev, x));
    TU_OK(kmux_free(dev, w));
    TU_OK(kmux_free(dev, y));
    TU_OK(kmux_stream_destroy(s));
}

Test(conv_alpha_zero, every_device_every_direction) {
    kmux_context *ctx = tu_context();
    const char **ids = tu_device_ids(ctx);
    for (int i = 0; ids[i]; i++)
        for (int dir = KMUX_CONV_FWD; dir <= KMUX_CONV_BWD_WEIGHTS; dir++)
            check_device(ctx, ids[i], (kmux_conv_direction)dir);
    TU_OK(kmux_context_destroy(ctx));
}
