/*
 * test_onednn_workspace.c - the memory of cpu:onednn convolutions with the default prefs
 * (kmux.h, kmux_plan_prefs): a 1-channel NCHW f16 convolution, whose preferred oneDNN
 * implementation asks about 18x its tensors in workspace and whose f32 copies ("+cvt") are 2x
 * them, gets a smaller implementation and runs its batch in image chunks: the plan's workspace
 * stays within its tensors' bytes (so the run within 2x its tensors' memory), plan_info says
 * why, and every direction agrees bit for bit with ref (small integers and powers of two: every
 * sum is exact in f32, so the chunks' order cannot change a bit).
 */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "test_util.h"

enum { N = 64, HW = 224 };

static void run_dir(kmux_context *ctx, kmux_conv_direction dir, float beta) {
    kmux_device *dnn = tu_device(ctx, "cpu:onednn"), *ref = tu_device(ctx, "ref");
    kmux_conv2d_desc d = KMUX_CONV2D_DESC_INIT;
    d.direction = dir;
    d.layout = KMUX_NCHW;
    d.n = N;
    d.c = 1;
    d.h = d.w = HW;
    d.k = 1;
    d.r = d.s = 3;
    d.pad_top = d.pad_bottom = d.pad_left = d.pad_right = 1;
    d.x_type = d.w_type = d.y_type = KMUX_F16;
    d.compute_type = KMUX_COMPUTE_F32;
    const size_t nx = (size_t)N * HW * HW, nw = 9, ny = nx;
    const size_t tensors = (nx + nw + ny) * 2;
    kmux_plan *p = NULL;
    TU_OK(kmux_conv2d_plan_create(dnn, &d, NULL, &p));
    kmux_plan_info info;
    TU_OK(kmux_plan_info_get(p, &info));
    cr_expect_leq(info.workspace_bytes, tensors,
                  "dir %d: %s asks %zu bytes of workspace for %zu bytes of tensors", (int)dir,
                  info.impl, info.workspace_bytes, tensors);
    if (strchr(info.impl, '['))
        cr_expect(strstr(info.impl, "over default workspace cap") != NULL, "impl \"%s\"",
                  info.impl);
    uint16_t *x = malloc(nx * 2), *w = malloc(nw * 2), *y = malloc(ny * 2);
    cr_assert(x && w && y);
    for (size_t i = 0; i < nx; i++)
        x[i] = (uint16_t)(i % 7 == 0 ? 0xc000 : 0x3c00); /* -2 or 1 */
    for (size_t i = 0; i < nw; i++)
        w[i] = (uint16_t)(0x3c00 + (i % 3) * 0x100); /* 1, 2, 4 */
    for (size_t i = 0; i < ny; i++)
        y[i] = (uint16_t)(i % 5 == 0 ? 0xa400 : 0x2400); /* -2^-6 or 2^-6 */
    uint16_t *out = dir == KMUX_CONV_FWD ? y : dir == KMUX_CONV_BWD_DATA ? x : w;
    size_t nout = dir == KMUX_CONV_FWD ? ny : dir == KMUX_CONV_BWD_DATA ? nx : nw;
    uint16_t *before = malloc(nout * 2), *got = malloc(nout * 2);
    cr_assert(before && got);
    memcpy(before, out, nout * 2);
    float one = 1;
    kmux_conv2d_args a = KMUX_CONV2D_ARGS_INIT;
    a.alpha = &one;
    a.beta = &beta;
    a.x = x;
    a.w = w;
    a.y = y;
    kmux_stream *s = NULL;
    TU_OK(kmux_stream_create(dnn, &s));
    TU_OK(kmux_conv2d_execute(p, s, &a));
    TU_OK(kmux_stream_destroy(s));
    TU_OK(kmux_plan_destroy(p));
    memcpy(got, out, nout * 2);
    memcpy(out, before, nout * 2);
    TU_OK(kmux_conv2d_plan_create(ref, &d, NULL, &p));
    TU_OK(kmux_stream_create(ref, &s));
    TU_OK(kmux_conv2d_execute(p, s, &a));
    size_t bad = 0, inf = 0;
    for (size_t i = 0; i < nout; i++) {
        bad += got[i] != out[i];
        inf += (got[i] & 0x7c00) == 0x7c00;
    }
    /* every image adds about 400 to each backward-weights sum (the whole batch about 2.6e4,
     * within f16): a chunk lost or counted twice shows; no sum may overflow to inf */
    cr_expect_eq(inf, 0, "dir %d: %zu of %zu outputs are inf or NaN", (int)dir, inf, nout);
    cr_expect_eq(bad, 0, "dir %d (%s): %zu of %zu elements differ from ref", (int)dir, info.impl,
                 bad, nout);
    TU_OK(kmux_stream_destroy(s));
    TU_OK(kmux_plan_destroy(p));
    free(x);
    free(w);
    free(y);
    free(before);
    free(got);
}

Test(onednn_workspace, default_prefs_stay_within_the_tensors_bytes) {
    kmux_context *ctx = tu_context();
    if (!tu_device(ctx, "cpu:onednn")) {
        kmux_context_destroy(ctx);
        cr_skip_test("cpu:onednn is not available");
    }
    run_dir(ctx, KMUX_CONV_FWD, 0.5f);
    run_dir(ctx, KMUX_CONV_BWD_DATA, 0.0f);
    run_dir(ctx, KMUX_CONV_BWD_WEIGHTS, 0.5f);
    TU_OK(kmux_context_destroy(ctx));
}
