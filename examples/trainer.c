/*
 * trainer.c - a mixed-precision training loop on kmux, the way a trainer uses it as its compute
 * backend: f32 master weights, bf16 copies for the forward GEMM, a scaled loss, gradients
 * unscaled and checked for Inf/NaN, and dynamic loss scaling (PyTorch GradScaler semantics).
 *
 *   ./trainer [device] [steps]      device: "auto" (default), "ref", "cpu:onednn", "cuda:0", ...
 *
 * The model is linear regression Y = X W (X: batch x in, W: in x out), small enough to read.
 * Exit status 0 when the loss fell below 1% of its start.
 */
#include <math.h>
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

enum { BATCH = 64, IN = 32, OUT = 16 };

static float frand(unsigned *seed) {
    *seed = *seed * 1664525u + 1013904223u;
    return (float)((*seed >> 8) & 0xFFFF) / 65536.0f - 0.5f;
}

int main(int argc, char **argv) {
    int steps = argc > 2 ? atoi(argv[2]) : 200;
    kmux_context *ctx;
    kmux_device *dev;
    kmux_stream *s;
    CHECK(kmux_context_create(NULL, &ctx));
    CHECK(kmux_device_find(ctx, argc > 1 ? argv[1] : "auto", &dev));
    CHECK(kmux_stream_create(dev, &s));

    /* Host data: inputs, a true weight matrix, targets. */
    static float x[BATCH * IN], w_true[IN * OUT], y[BATCH * OUT], w[IN * OUT], pred[BATCH * OUT];
    static float grad_pred[BATCH * OUT];
    unsigned seed = 42;
    for (int i = 0; i < BATCH * IN; i++)
        x[i] = frand(&seed);
    for (int i = 0; i < IN * OUT; i++)
        w_true[i] = frand(&seed), w[i] = 0;
    for (int b = 0; b < BATCH; b++)
        for (int o = 0; o < OUT; o++) {
            double acc = 0;
            for (int i = 0; i < IN; i++)
                acc += (double)x[b * IN + i] * w_true[i * OUT + o];
            y[b * OUT + o] = (float)acc;
        }

    /* Device buffers: f32 master weights and inputs, their bf16 copies, outputs, gradients,
     * and the loss-scaling state (kept on the device: no synchronisation to read it). */
    void *d_x, *d_w, *d_xb, *d_wb, *d_pred, *d_gpred, *d_gw, *d_scale, *d_inv, *d_found, *d_tracker;
    CHECK(kmux_malloc(dev, sizeof x, &d_x));
    CHECK(kmux_malloc(dev, sizeof w, &d_w));
    CHECK(kmux_malloc(dev, BATCH * IN * 2, &d_xb));
    CHECK(kmux_malloc(dev, IN * OUT * 2, &d_wb));
    CHECK(kmux_malloc(dev, sizeof pred, &d_pred));
    CHECK(kmux_malloc(dev, sizeof pred, &d_gpred));
    CHECK(kmux_malloc(dev, sizeof w, &d_gw));
    CHECK(kmux_malloc(dev, sizeof(float), &d_scale));
    CHECK(kmux_malloc(dev, sizeof(float), &d_inv));
    CHECK(kmux_malloc(dev, sizeof(float), &d_found));
    CHECK(kmux_malloc(dev, sizeof(int32_t), &d_tracker));
    float scale = 65536.0f;
    int32_t tracker = 0;
    CHECK(kmux_memcpy(s, d_x, x, sizeof x, KMUX_MEMCPY_HOST_TO_DEVICE));
    CHECK(kmux_memcpy(s, d_w, w, sizeof w, KMUX_MEMCPY_HOST_TO_DEVICE));
    CHECK(kmux_memcpy(s, d_scale, &scale, sizeof scale, KMUX_MEMCPY_HOST_TO_DEVICE));
    CHECK(kmux_memcpy(s, d_tracker, &tracker, sizeof tracker, KMUX_MEMCPY_HOST_TO_DEVICE));
    CHECK(kmux_cast(s, BATCH * IN, d_x, KMUX_F32, d_xb, KMUX_BF16, NULL));

    const float one = 1, zero = 0, lr = 8.0f;
    double first_loss = -1, loss = 0;
    int skipped = 0;
    for (int step = 0; step < steps; step++) {
        /* forward: pred = bf16(X) bf16(W), f32 accumulation and output */
        CHECK(kmux_cast(s, IN * OUT, d_w, KMUX_F32, d_wb, KMUX_BF16, NULL));
        CHECK(kmux_gemm_ex(s, KMUX_ROW_MAJOR, KMUX_NO_TRANS, KMUX_NO_TRANS, BATCH, OUT, IN, &one,
                           d_xb, KMUX_BF16, IN, d_wb, KMUX_BF16, OUT, &zero, d_pred, KMUX_F32, OUT,
                           KMUX_COMPUTE_F32));
        /* loss = mean (pred - y)^2, its gradient times the loss scale (host side, for brevity) */
        CHECK(kmux_memcpy(s, pred, d_pred, sizeof pred, KMUX_MEMCPY_DEVICE_TO_HOST));
        CHECK(kmux_memcpy(s, &scale, d_scale, sizeof scale, KMUX_MEMCPY_DEVICE_TO_HOST));
        CHECK(kmux_stream_synchronize(s));
        loss = 0;
        for (int i = 0; i < BATCH * OUT; i++) {
            double e = (double)pred[i] - y[i];
            loss += e * e / (BATCH * OUT);
            grad_pred[i] = (float)(2.0 * e / (BATCH * OUT) * scale);
        }
        if (first_loss < 0) first_loss = loss;
        CHECK(kmux_memcpy(s, d_gpred, grad_pred, sizeof grad_pred, KMUX_MEMCPY_HOST_TO_DEVICE));
        /* backward: dW = X^T dPred (scaled), f32 */
        CHECK(kmux_gemm_ex(s, KMUX_ROW_MAJOR, KMUX_TRANS, KMUX_NO_TRANS, IN, OUT, BATCH, &one, d_x,
                           KMUX_F32, IN, d_gpred, KMUX_F32, OUT, &zero, d_gw, KMUX_F32, OUT,
                           KMUX_COMPUTE_F32));
        /* unscale and check: dW *= 1/scale; found_inf = any non-finite */
        float inv = 1.0f / scale, found = 0;
        CHECK(kmux_memcpy(s, d_inv, &inv, sizeof inv, KMUX_MEMCPY_HOST_TO_DEVICE));
        CHECK(kmux_memcpy(s, d_found, &found, sizeof found, KMUX_MEMCPY_HOST_TO_DEVICE));
        void *tensors[1] = {d_gw};
        int64_t sizes[1] = {IN * OUT};
        kmux_dtype types[1] = {KMUX_F32};
        CHECK(kmux_unscale_check_finite(s, 1, tensors, sizes, types, d_inv, d_found));
        CHECK(kmux_loss_scale_update(s, d_scale, d_tracker, d_found, 2.0, 0.5, 50));
        /* optimizer step on the f32 master weights, skipped when the gradients overflowed */
        static float gw[IN * OUT];
        CHECK(kmux_memcpy(s, &found, d_found, sizeof found, KMUX_MEMCPY_DEVICE_TO_HOST));
        CHECK(kmux_memcpy(s, gw, d_gw, sizeof gw, KMUX_MEMCPY_DEVICE_TO_HOST));
        CHECK(kmux_stream_synchronize(s));
        if (found != 0) {
            skipped++;
            continue;
        }
        for (int i = 0; i < IN * OUT; i++)
            w[i] -= lr * gw[i];
        CHECK(kmux_memcpy(s, d_w, w, sizeof w, KMUX_MEMCPY_HOST_TO_DEVICE));
        if (step % 50 == 0) printf("step %4d  loss %.6f  loss scale %g\n", step, loss, scale);
    }
    CHECK(kmux_stream_synchronize(s));
    printf("device %s: loss %.6f -> %.6f after %d steps (%d skipped for overflow)\n",
           kmux_device_id(dev), first_loss, loss, steps, skipped);
    void *bufs[] = {d_x,  d_w,     d_xb,  d_wb,    d_pred,   d_gpred,
                    d_gw, d_scale, d_inv, d_found, d_tracker};
    for (size_t i = 0; i < sizeof bufs / sizeof bufs[0]; i++)
        CHECK(kmux_free(dev, bufs[i]));
    CHECK(kmux_stream_destroy(s));
    CHECK(kmux_context_destroy(ctx));
    return loss < 0.01 * first_loss ? 0 : 2;
}
