/*
 * test_onednn_workspace.c - the default workspace cap of cpu:onednn (kmux.h, kmux_plan_prefs):
 * a 1-channel NCHW f16 backward-data convolution whose preferred oneDNN implementation asks
 * about 18x its tensors gets the next implementation, plan_info says why, and it runs and agrees
 * with ref.
 */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "test_util.h"

Test(onednn_workspace, default_cap_falls_back_to_a_smaller_implementation) {
    kmux_context *ctx = tu_context();
    kmux_device *dnn = tu_device(ctx, "cpu:onednn"), *ref = tu_device(ctx, "ref");
    if (!dnn) {
        kmux_context_destroy(ctx);
        cr_skip_test("cpu:onednn is not available");
    }
    kmux_conv2d_desc d = KMUX_CONV2D_DESC_INIT;
    d.direction = KMUX_CONV_BWD_DATA;
    d.layout = KMUX_NCHW;
    d.n = 64;
    d.c = 1;
    d.h = d.w = 224;
    d.k = 1;
    d.r = d.s = 3;
    d.pad_top = d.pad_bottom = d.pad_left = d.pad_right = 1;
    d.x_type = d.w_type = d.y_type = KMUX_F16;
    d.compute_type = KMUX_COMPUTE_F32;
    const size_t nx = 64 * 224 * 224, nw = 9, ny = nx;
    const size_t tensors = (nx + nw + ny) * 2;
    kmux_plan *p = NULL;
    TU_OK(kmux_conv2d_plan_create(dnn, &d, NULL, &p));
    kmux_plan_info info;
    TU_OK(kmux_plan_info_get(p, &info));
    cr_expect_leq(info.workspace_bytes, 16 * tensors,
                  "%s asks %zu bytes of workspace for %zu bytes of tensors", info.impl,
                  info.workspace_bytes, tensors);
    if (strchr(info.impl, '['))
        cr_expect(strstr(info.impl, "over default workspace cap") != NULL, "impl \"%s\"",
                  info.impl);
    uint16_t *w = malloc(nw * 2), *dy = malloc(ny * 2), *dx1 = malloc(nx * 2),
             *dx2 = malloc(nx * 2);
    cr_assert(w && dy && dx1 && dx2);
    for (size_t i = 0; i < nw; i++)
        w[i] = (uint16_t)(0x3c00 + (i % 3) * 0x100); /* 1, 2, 4 */
    for (size_t i = 0; i < ny; i++)
        dy[i] = (uint16_t)(i % 5 == 0 ? 0xbc00 : 0x3800); /* -1 or 0.5 */
    float one = 1, zero = 0;
    kmux_conv2d_args a = KMUX_CONV2D_ARGS_INIT;
    a.alpha = &one;
    a.beta = &zero;
    a.w = w;
    a.y = dy;
    a.x = dx1;
    kmux_stream *s = NULL;
    TU_OK(kmux_stream_create(dnn, &s));
    TU_OK(kmux_conv2d_execute(p, s, &a));
    TU_OK(kmux_stream_destroy(s));
    TU_OK(kmux_plan_destroy(p));
    TU_OK(kmux_conv2d_plan_create(ref, &d, NULL, &p));
    TU_OK(kmux_stream_create(ref, &s));
    a.x = dx2;
    TU_OK(kmux_conv2d_execute(p, s, &a));
    /* small integers and halves: both are exact in f16 */
    cr_expect(memcmp(dx1, dx2, nx * 2) == 0, "cpu:onednn and ref differ");
    TU_OK(kmux_stream_destroy(s));
    TU_OK(kmux_plan_destroy(p));
    free(w);
    free(dy);
    free(dx1);
    free(dx2);
    TU_OK(kmux_context_destroy(ctx));
}
