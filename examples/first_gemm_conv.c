/*
 * first_gemm_conv.c - the first kmux program: a GEMM and a convolution on any device.
 *
 *   ./first_gemm_conv [device]        device: "auto" (default), "ref", "cpu:onednn", "cuda:0", ...
 *
 * Shows the pattern every kmux program follows: context -> device -> stream -> device memory ->
 * operation -> copy back; every call returns a kmux_status and kmux_last_error() says why.
 */
#include <stdio.h>
#include <stdlib.h>

#include <kmux.h>

#define CHECK(call)                                                                                \
    do {                                                                                           \
        kmux_status s_ = (call);                                                                   \
        if (s_ != KMUX_OK) {                                                                       \
            fprintf(stderr, "%s failed: %s: %s\n", #call, kmux_status_str(s_), kmux_last_error()); \
            exit(1);                                                                               \
        }                                                                                          \
    } while (0)

int main(int argc, char **argv) {
    kmux_context *ctx;
    CHECK(kmux_context_create(NULL, &ctx));
    kmux_device *dev;
    CHECK(kmux_device_find(ctx, argc > 1 ? argv[1] : "auto", &dev));
    kmux_stream *stream;
    CHECK(kmux_stream_create(dev, &stream));
    printf("device: %s\n", kmux_device_id(dev));

    /* C(2x2) = A(2x3) * B(3x2), row-major f32 */
    const float A[6] = {1, 2, 3, 4, 5, 6}, B[6] = {7, 8, 9, 10, 11, 12};
    float C[4];
    void *dA, *dB, *dC;
    CHECK(kmux_malloc(dev, sizeof A, &dA));
    CHECK(kmux_malloc(dev, sizeof B, &dB));
    CHECK(kmux_malloc(dev, sizeof C, &dC));
    CHECK(kmux_memcpy(stream, dA, A, sizeof A, KMUX_MEMCPY_HOST_TO_DEVICE));
    CHECK(kmux_memcpy(stream, dB, B, sizeof B, KMUX_MEMCPY_HOST_TO_DEVICE));
    const float alpha = 1, beta = 0;
    CHECK(kmux_gemm_ex(stream, KMUX_ROW_MAJOR, KMUX_NO_TRANS, KMUX_NO_TRANS, 2, 2, 3, &alpha, dA,
                       KMUX_F32, 3, dB, KMUX_F32, 2, &beta, dC, KMUX_F32, 2, KMUX_COMPUTE_F32));
    CHECK(kmux_memcpy(stream, C, dC, sizeof C, KMUX_MEMCPY_DEVICE_TO_HOST));
    CHECK(kmux_stream_synchronize(stream));
    printf("gemm: [[%g %g] [%g %g]] (expected [[58 64] [139 154]])\n", C[0], C[1], C[2], C[3]);

    /* y = conv(x, w): one 1x4x4 image, one 3x3 filter of ones, padding 1 -> 4x4 output */
    kmux_conv2d_desc cd = KMUX_CONV2D_DESC_INIT;
    cd.n = 1, cd.c = 1, cd.h = 4, cd.w = 4, cd.k = 1, cd.r = 3, cd.s = 3;
    cd.pad_top = cd.pad_bottom = cd.pad_left = cd.pad_right = 1;
    int64_t P, Q;
    CHECK(kmux_conv2d_output_dims(&cd, &P, &Q));
    float x[16], w[9], y[16];
    for (int i = 0; i < 16; i++)
        x[i] = (float)i;
    for (int i = 0; i < 9; i++)
        w[i] = 1;
    void *dx, *dw, *dy;
    CHECK(kmux_malloc(dev, sizeof x, &dx));
    CHECK(kmux_malloc(dev, sizeof w, &dw));
    CHECK(kmux_malloc(dev, sizeof y, &dy));
    CHECK(kmux_memcpy(stream, dx, x, sizeof x, KMUX_MEMCPY_HOST_TO_DEVICE));
    CHECK(kmux_memcpy(stream, dw, w, sizeof w, KMUX_MEMCPY_HOST_TO_DEVICE));
    kmux_plan *plan;
    CHECK(kmux_conv2d_plan_create(dev, &cd, NULL, &plan));
    kmux_plan_info info;
    CHECK(kmux_plan_info_get(plan, &info));
    kmux_conv2d_args ca = KMUX_CONV2D_ARGS_INIT;
    ca.alpha = &alpha, ca.beta = &beta, ca.x = dx, ca.w = dw, ca.y = dy;
    CHECK(kmux_conv2d_execute(plan, stream, &ca));
    CHECK(kmux_memcpy(stream, y, dy, sizeof y, KMUX_MEMCPY_DEVICE_TO_HOST));
    CHECK(kmux_stream_synchronize(stream));
    printf("conv (%lldx%lld, impl %s): y[0] = %g (expected 10), y[5] = %g (expected 45)\n",
           (long long)P, (long long)Q, info.impl, y[0], y[5]);

    int ok = C[0] == 58 && C[3] == 154 && y[0] == 10 && y[5] == 45;
    CHECK(kmux_plan_destroy(plan));
    void *bufs[] = {dA, dB, dC, dx, dw, dy};
    for (int i = 0; i < 6; i++)
        CHECK(kmux_free(dev, bufs[i]));
    CHECK(kmux_stream_destroy(stream));
    CHECK(kmux_context_destroy(ctx));
    return ok ? 0 : 2;
}
