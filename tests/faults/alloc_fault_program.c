/*
 * alloc_fault_program.c - the representative program of the fault sweeps (issue 51,
 * tests/faults/fault_sweep.sh runs it with KMUX_FAULT_ALLOC = 1, 2, 3, ..., or with --vendor and
 * the fake GPU libraries' KMUX_FAKE_FAIL_CALL = 1, 2, 3, ...): a context, then on
 * every device named in argv (default: ref, cpu:openblas, cpu:onednn, cpu:auto where present) a
 * stream, device memory, a GEMM through kmux_gemm_ex (the plan cache), a convolution plan
 * forward, a ReLU plan, a cast to bf16 with amax, each result checked.
 *
 * Every kmux call must return KMUX_OK or KMUX_ERR_OUT_OF_MEMORY with a message (--vendor: any
 * error status whose message names the failing library's error, as each fake returns it);
 * a call that failed so is made once more and must then succeed (only one allocation or vendor
 * call fails: the context is still usable). Prints "oom: CALL: MESSAGE" for each such call and
 * "ran on DEVICE" for each device it finished. Exit 0: every call clean; 1: a call returned
 * anything else (printed as "UNCLEAN: ..."), or a result was wrong.
 *
 * --missing=SYMBOL (tests/faults/missing_symbol_sweep.sh: a vendor library without SYMBOL): no
 * fault is injected; a device that is not available says so ("unavailable: ID: MESSAGE"), and a
 * call whose status message names SYMBOL ends that device's run cleanly ("refused: ...").
 */
#include <stdio.h>
#include <string.h>

#include <kmux.h>

static int unclean;
static int vendor;          /* --vendor: the injected failure is a vendor call's */
static const char *missing; /* --missing=SYMBOL */

/* after a status from `call`: 1 to make the call again (it failed as the sweep injects, and said
 * why) */
static int again(kmux_status s, const char *call) {
    const char *msg = kmux_last_error();
    if (vendor) {
        /* the status each fake returns when failed (fake_fail.h), by the name the plugin gives */
        static const char *const names[] = {"hipErrorUnknown",
                                            "CUDA_ERROR_UNKNOWN",
                                            "CUBLAS_STATUS_INTERNAL_ERROR",
                                            "CUDNN_STATUS_INTERNAL_ERROR",
                                            "miopenStatusInternalError",
                                            "rocblas_status_internal_error",
                                            "HIPBLAS_STATUS_INTERNAL_ERROR"};
        int named = 0;
        for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
            named |= strstr(msg, names[i]) != NULL;
        if (s == KMUX_OK || !named) return 0;
        fprintf(stderr, "failed: %s: %s: %s\n", call, kmux_status_str(s), msg);
        return 1;
    }
    if (s != KMUX_ERR_OUT_OF_MEMORY) return 0;
    fprintf(stderr, "oom: %s: %s\n", call, msg);
    if (!msg[0]) {
        fprintf(stderr, "UNCLEAN: %s: KMUX_ERR_OUT_OF_MEMORY without a message\n", call);
        unclean++;
    }
    return 1;
}

static int clean(kmux_status s, const char *call) {
    if (s == KMUX_OK) return 1;
    if (missing && strstr(kmux_last_error(), missing)) {
        fprintf(stderr, "refused: %s: %s: %s\n", call, kmux_status_str(s), kmux_last_error());
        return 0;
    }
    fprintf(stderr, "UNCLEAN: %s: %s: %s\n", call, kmux_status_str(s), kmux_last_error());
    unclean++;
    return 0;
}

/* the call, made again once after KMUX_ERR_OUT_OF_MEMORY; on anything but KMUX_OK: goto out */
#define STEP(call)                                                                                 \
    do {                                                                                           \
        kmux_status s_ = (call);                                                                   \
        if (again(s_, #call)) s_ = (call);                                                         \
        if (!clean(s_, #call)) goto out;                                                           \
    } while (0)

#define EXPECT(cond)                                                                               \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            fprintf(stderr, "UNCLEAN: %s: wrong result: %s\n", kmux_device_id(dev), #cond);        \
            unclean++;                                                                             \
            goto out;                                                                              \
        }                                                                                          \
    } while (0)

/* the workload on dev; 1 when every step ran */
static int run_on(kmux_device *dev) {
    int done = 0;
    kmux_stream *s = NULL;
    kmux_plan *conv = NULL, *relu = NULL;
    void *d[6] = {NULL, NULL, NULL, NULL, NULL, NULL};
    const size_t bytes = 64 * sizeof(float);
    STEP(kmux_stream_create(dev, &s));
    for (int i = 0; i < 6; i++)
        STEP(kmux_malloc(dev, bytes, &d[i]));
    float a[64], b[64], c[64];
    for (int i = 0; i < 64; i++)
        a[i] = (float)(i % 7) - 3, b[i] = (float)(i % 5) - 2;
    STEP(kmux_memcpy(s, d[0], a, bytes, KMUX_MEMCPY_HOST_TO_DEVICE));
    STEP(kmux_memcpy(s, d[1], b, bytes, KMUX_MEMCPY_HOST_TO_DEVICE));

    /* C (8x8) = A (8x8) B (8x8) */
    const float one = 1, zero = 0;
    STEP(kmux_gemm_ex(s, KMUX_ROW_MAJOR, KMUX_NO_TRANS, KMUX_NO_TRANS, 8, 8, 8, &one, d[0],
                      KMUX_F32, 8, d[1], KMUX_F32, 8, &zero, d[2], KMUX_F32, 8, KMUX_COMPUTE_F32));
    STEP(kmux_memcpy(s, c, d[2], bytes, KMUX_MEMCPY_DEVICE_TO_HOST));
    STEP(kmux_stream_synchronize(s));
    float want = 0;
    for (int k = 0; k < 8; k++)
        want += a[2 * 8 + k] * b[k * 8 + 5];
    EXPECT(c[2 * 8 + 5] == want);

    /* y (1x1x8x8) = x (1x1x8x8) conv w (1x1x3x3), padding 1 */
    kmux_conv2d_desc cd = KMUX_CONV2D_DESC_INIT;
    cd.n = 1, cd.c = 1, cd.h = 8, cd.w = 8, cd.k = 1, cd.r = 3, cd.s = 3;
    cd.pad_top = cd.pad_bottom = cd.pad_left = cd.pad_right = 1;
    STEP(kmux_conv2d_plan_create(dev, &cd, NULL, &conv));
    kmux_conv2d_args ca = KMUX_CONV2D_ARGS_INIT;
    ca.alpha = &one, ca.beta = &zero, ca.x = d[0], ca.w = d[1], ca.y = d[3];
    STEP(kmux_conv2d_execute(conv, s, &ca));
    STEP(kmux_memcpy(s, c, d[3], bytes, KMUX_MEMCPY_DEVICE_TO_HOST));
    STEP(kmux_stream_synchronize(s));
    want = 0;
    for (int r = 0; r < 3; r++)
        for (int q = 0; q < 3; q++)
            want += a[(2 + r) * 8 + 2 + q] * b[r * 3 + q]; /* output (3, 3) */
    EXPECT(c[3 * 8 + 3] == want);

    /* ReLU, then a cast to bf16 with its amax */
    kmux_eltwise_desc ed = KMUX_ELTWISE_DESC_INIT;
    ed.n = 64;
    STEP(kmux_eltwise_plan_create(dev, &ed, NULL, &relu));
    kmux_eltwise_args ea = KMUX_ELTWISE_ARGS_INIT;
    ea.src = d[0], ea.dst = d[4];
    STEP(kmux_eltwise_execute(relu, s, &ea));
    kmux_cast_options co = KMUX_CAST_OPTIONS_INIT;
    co.amax = (float *)d[5] + 32;
    STEP(kmux_cast(s, 64, d[4], KMUX_F32, d[5], KMUX_BF16, &co));
    float amax = -1;
    STEP(kmux_memcpy(s, &amax, co.amax, sizeof amax, KMUX_MEMCPY_DEVICE_TO_HOST));
    STEP(kmux_stream_synchronize(s));
    EXPECT(amax == 3.0f);
    done = 1;
out:
    kmux_plan_destroy(relu);
    kmux_plan_destroy(conv);
    for (int i = 0; i < 6; i++)
        if (d[i]) kmux_free(dev, d[i]);
    /* the stream is gone whatever it returns: an injected failure of its last wait is reported,
     * not made again */
    kmux_status st = kmux_stream_destroy(s);
    if (st != KMUX_OK && !again(st, "kmux_stream_destroy(s)")) clean(st, "kmux_stream_destroy(s)");
    return done;
}

int main(int argc, char **argv) {
    static const char *const dflt[] = {"ref", "cpu:openblas", "cpu:onednn", "cpu:auto"};
    vendor = argc > 1 && strcmp(argv[1], "--vendor") == 0;
    argc -= vendor, argv += vendor;
    if (argc > 1 && strncmp(argv[1], "--missing=", 10) == 0) {
        missing = argv[1] + 10;
        argc--, argv++;
    }
    const char *const *ids = argc > 1 ? (const char *const *)argv + 1 : dflt;
    const int n = argc > 1 ? argc - 1 : 4;
    kmux_context *ctx = NULL;
    STEP(kmux_context_create(NULL, &ctx));
    for (int i = 0; i < n; i++) {
        kmux_device *dev = NULL;
        kmux_status st = kmux_device_find(ctx, ids[i], &dev);
        if (again(st, "kmux_device_find")) st = kmux_device_find(ctx, ids[i], &dev);
        if (st == KMUX_ERR_NOT_FOUND) { /* not on this machine */
            if (missing) printf("unavailable: %s: %s\n", ids[i], kmux_last_error());
            continue;
        }
        if (!clean(st, "kmux_device_find")) continue;
        if (run_on(dev)) printf("ran on %s\n", ids[i]);
    }
out:
    if (ctx) {
        kmux_status st = kmux_context_destroy(ctx);
        if (st != KMUX_OK) clean(st, "kmux_context_destroy");
    }
    return unclean ? 1 : 0;
}
