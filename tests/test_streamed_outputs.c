/*
 * test_streamed_outputs.c - the CPU kernels' paths for large tensors, which the conformance
 * sweeps' small shapes never reach: the streamed output (kernels/cpu/cpu_stream.h: an output of at
 * least kmux_cpu_stream_min_bytes(), at most 32 MiB, goes out with non-temporal stores, the inputs
 * prefetched ahead) of element-wise forward and backward, a broadcast bias-add and a scaled cast
 * to f16 and bf16, and the bias
 * gradient's per-thread partial sums (reduction.c: one cache-line-padded row of partials per
 * thread, the next run prefetched), on tensors of 36 MiB and more, on cpu:onednn and
 * cpu:openblas against ref, with an odd length (a tail after the last 16 bytes), an output not
 * 16-byte aligned (the plain-copy fallback) and 5 channels (partials not a whole cache line).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "test_util.h"

/* elements of a 36 MiB + 28 byte tensor of t: above the 32 MiB cap whatever the cache */
#define BIG ((int64_t)9 * 1024 * 1024 + 7)
#define BIG_OF(t) (BIG * 4 / (int64_t)kmux_dtype_size(t))

static kmux_context *ctx;

static void setup(void) {
    ctx = tu_context();
}

static void teardown(void) {
    kmux_context_destroy(ctx);
}

TestSuite(streamed_outputs, .init = setup, .fini = teardown);

static const char *const cpus[] = {"cpu:onednn", "cpu:openblas"};

/* d run on dev with its output at byte offset `shift` of a fresh buffer; returns that output */
static void *eltwise_on(kmux_device *dev, const kmux_eltwise_desc *d, const void *x, const void *dd,
                        size_t shift) {
    const size_t bytes = (size_t)d->n * kmux_dtype_size(d->dtype);
    char *out = malloc(bytes + shift);
    cr_assert_not_null(out);
    memset(out, 0x7f, bytes + shift);
    kmux_stream *s = NULL;
    kmux_plan *p = NULL;
    TU_OK(kmux_stream_create(dev, &s));
    TU_OK(kmux_eltwise_plan_create(dev, d, NULL, &p));
    kmux_eltwise_args a = KMUX_ELTWISE_ARGS_INIT;
    a.src = x, a.diff_dst = dd;
    if (d->prop == KMUX_PROP_FORWARD)
        a.dst = out + shift;
    else
        a.diff_src = out + shift;
    TU_OK(kmux_eltwise_execute(p, s, &a));
    TU_OK(kmux_stream_synchronize(s));
    kmux_plan_destroy(p);
    kmux_stream_destroy(s);
    return out;
}

Test(streamed_outputs, eltwise_large_matches_ref) {
    kmux_device *ref = tu_device(ctx, "ref");
    cr_assert_not_null(ref);
    const kmux_dtype dts[2] = {KMUX_F32, KMUX_BF16};
    int ran = 0;
    for (int t = 0; t < 2; t++) {
        uint64_t seed = 7;
        const int64_t n = BIG_OF(dts[t]);
        void *x = tu_fill_ints(dts[t], n, 9, TU_DENSE, &seed);
        void *dd = tu_fill_ints(dts[t], n, 5, TU_DENSE, &seed);
        for (int prop = 0; prop < 2; prop++) {
            kmux_eltwise_desc d = KMUX_ELTWISE_DESC_INIT;
            d.alg = KMUX_ELTWISE_RELU, d.alpha = 0.25f, d.dtype = dts[t], d.n = n;
            d.prop = prop ? KMUX_PROP_BACKWARD : KMUX_PROP_FORWARD;
            char *want = eltwise_on(ref, &d, x, dd, 0);
            for (int k = 0; k < 2; k++) {
                kmux_device *dev = tu_device(ctx, cpus[k]);
                if (!dev) continue;
                for (size_t shift = 0; shift <= 2; shift += 2) { /* aligned, then not */
                    char *got = eltwise_on(dev, &d, x, dd, shift);
                    char what[96];
                    snprintf(what, sizeof what, "relu %s %s, output at +%zu bytes",
                             prop ? "bwd" : "fwd", kmux_dtype_name(dts[t]), shift);
                    tu_expect_equal(what, cpus[k], got + shift, want, dts[t], n, 0, 4);
                    free(got);
                    ran++;
                }
            }
            free(want);
        }
        free(x), free(dd);
    }
    if (!ran) cr_skip_test("neither cpu:onednn nor cpu:openblas is available");
}

/* the bias-add of an NCHW (bias per H x W run) or NHWC (bias alongside each C run) tensor */
static void *bias_add_on(kmux_device *dev, kmux_dtype t, int nhwc, const void *x, const void *b) {
    const int64_t N = 3, C = 5, HW = BIG_OF(t) / 15 + 1;
    const size_t bytes = (size_t)(N * C * HW) * kmux_dtype_size(t);
    void *out = malloc(bytes);
    cr_assert_not_null(out);
    kmux_binary_desc bd = KMUX_BINARY_DESC_INIT;
    bd.alg = KMUX_BINARY_ADD, bd.dtype = t, bd.ndims = 3;
    const int64_t full[3] = {N, nhwc ? HW : C, nhwc ? C : HW};
    const int64_t part[3] = {1, nhwc ? 1 : C, nhwc ? C : 1};
    memcpy(bd.dims, full, sizeof full), memcpy(bd.src1_dims, part, sizeof part);
    kmux_stream *s = NULL;
    kmux_plan *p = NULL;
    TU_OK(kmux_stream_create(dev, &s));
    TU_OK(kmux_binary_plan_create(dev, &bd, NULL, &p));
    kmux_binary_args a = KMUX_BINARY_ARGS_INIT;
    a.src0 = x, a.src1 = b, a.dst = out;
    TU_OK(kmux_binary_execute(p, s, &a));
    TU_OK(kmux_stream_synchronize(s));
    kmux_plan_destroy(p);
    kmux_stream_destroy(s);
    return out;
}

Test(streamed_outputs, bias_add_large_matches_ref) {
    kmux_device *ref = tu_device(ctx, "ref");
    cr_assert_not_null(ref);
    const kmux_dtype dts[2] = {KMUX_F32, KMUX_BF16};
    int ran = 0;
    for (int t = 0; t < 2; t++)
        for (int nhwc = 0; nhwc < 2; nhwc++) {
            const int64_t n = 3 * 5 * (BIG_OF(dts[t]) / 15 + 1);
            uint64_t seed = 11;
            void *x = tu_fill_ints(dts[t], n, 9, TU_DENSE, &seed);
            void *b = tu_fill_ints(dts[t], 5, 3, TU_DENSE, &seed);
            void *want = bias_add_on(ref, dts[t], nhwc, x, b);
            for (int k = 0; k < 2; k++) {
                kmux_device *dev = tu_device(ctx, cpus[k]);
                if (!dev) continue;
                void *got = bias_add_on(dev, dts[t], nhwc, x, b);
                char what[64];
                snprintf(what, sizeof what, "bias-add %s %s", nhwc ? "nhwc" : "nchw",
                         kmux_dtype_name(dts[t]));
                tu_expect_equal(what, cpus[k], got, want, dts[t], n, 0, 4);
                free(got);
                ran++;
            }
            free(want), free(x), free(b);
        }
    if (!ran) cr_skip_test("neither cpu:onednn nor cpu:openblas is available");
}

/* The bias gradient (a SUM over every axis but the channel, into f32) of an NCHW or NHWC tensor */
static void bias_grad_on(kmux_device *dev, kmux_dtype t, int nhwc, const void *x, float *db) {
    const int64_t N = 3, C = 5, HW = BIG_OF(t) / 15 + 1;
    kmux_reduction_desc rd = KMUX_REDUCTION_DESC_INIT;
    rd.alg = KMUX_REDUCTION_SUM, rd.src_dtype = t, rd.dst_dtype = KMUX_F32, rd.ndims = 3;
    const int64_t full[3] = {N, nhwc ? HW : C, nhwc ? C : HW};
    const int64_t part[3] = {1, nhwc ? 1 : C, nhwc ? C : 1};
    memcpy(rd.src_dims, full, sizeof full), memcpy(rd.dst_dims, part, sizeof part);
    kmux_stream *s = NULL;
    kmux_plan *p = NULL;
    TU_OK(kmux_stream_create(dev, &s));
    TU_OK(kmux_reduction_plan_create(dev, &rd, NULL, &p));
    kmux_reduction_args a = KMUX_REDUCTION_ARGS_INIT;
    a.src = x, a.dst = db;
    TU_OK(kmux_reduction_execute(p, s, &a));
    TU_OK(kmux_stream_synchronize(s));
    kmux_plan_destroy(p);
    kmux_stream_destroy(s);
}

Test(streamed_outputs, bias_grad_large_matches_ref) {
    kmux_device *ref = tu_device(ctx, "ref");
    cr_assert_not_null(ref);
    const kmux_dtype dts[2] = {KMUX_F32, KMUX_BF16};
    int ran = 0;
    for (int t = 0; t < 2; t++)
        for (int nhwc = 0; nhwc < 2; nhwc++) {
            uint64_t seed = 13;
            const int64_t n = 3 * 5 * (BIG_OF(dts[t]) / 15 + 1);
            void *x = tu_fill_ints(dts[t], n, 9, TU_DENSE, &seed);
            float want[5], got[5];
            bias_grad_on(ref, dts[t], nhwc, x, want);
            for (int k = 0; k < 2; k++) {
                kmux_device *dev = tu_device(ctx, cpus[k]);
                if (!dev) continue;
                memset(got, 0xff, sizeof got); /* NaN: an unwritten output fails */
                bias_grad_on(dev, dts[t], nhwc, x, got);
                char what[64];
                snprintf(what, sizeof what, "bias gradient %s %s", nhwc ? "nhwc" : "nchw",
                         kmux_dtype_name(dts[t]));
                /* integer sums, exact in the f64 accumulators of both: one rounding to f32 */
                tu_expect_equal(what, cpus[k], got, want, KMUX_F32, 5, 0, 1);
                ran++;
            }
            free(x);
        }
    if (!ran) cr_skip_test("neither cpu:onednn nor cpu:openblas is available");
}

/* a scaled cast of n f32 to t on dev with its output at byte offset `shift`; *amax receives the
 * input's max |x| */
static void *cast_on(kmux_device *dev, kmux_dtype t, const float *x, int64_t n, size_t shift,
                     float *amax) {
    const size_t bytes = (size_t)n * kmux_dtype_size(t);
    char *out = malloc(bytes + shift);
    cr_assert_not_null(out);
    memset(out, 0x7f, bytes + shift);
    const float scale = 0.37f; /* not a power of two: every output is rounded */
    kmux_cast_options o = KMUX_CAST_OPTIONS_INIT;
    o.scale = &scale, o.amax = amax;
    kmux_stream *s = NULL;
    TU_OK(kmux_stream_create(dev, &s));
    TU_OK(kmux_cast(s, n, x, KMUX_F32, out + shift, t, &o));
    TU_OK(kmux_stream_synchronize(s));
    kmux_stream_destroy(s);
    return out;
}

/* kmux_cast's streamed path (cast.c, cast_avx2.c: the output streamed out under the same
 * kmux_cpu_stream_worth rule as the element-wise kernels) to f16 and bf16 outputs of 36 MiB */
Test(streamed_outputs, cast_large_matches_ref) {
    kmux_device *ref = tu_device(ctx, "ref");
    cr_assert_not_null(ref);
    const kmux_dtype dts[2] = {KMUX_F16, KMUX_BF16};
    const int64_t n = BIG_OF(KMUX_BF16);
    uint64_t seed = 17;
    float *x = tu_fill_ints(KMUX_F32, n, 1000, TU_DENSE, &seed);
    int ran = 0;
    for (int t = 0; t < 2; t++) {
        float want_amax = -1.0f;
        char *want = cast_on(ref, dts[t], x, n, 0, &want_amax);
        for (int k = 0; k < 2; k++) {
            kmux_device *dev = tu_device(ctx, cpus[k]);
            if (!dev) continue;
            for (size_t shift = 0; shift <= 2; shift += 2) { /* aligned, then not */
                float amax = -1.0f;
                char *got = cast_on(dev, dts[t], x, n, shift, &amax);
                char what[96];
                snprintf(what, sizeof what, "cast f32 to %s, output at +%zu bytes",
                         kmux_dtype_name(dts[t]), shift);
                tu_expect_equal(what, cpus[k], got + shift, want, dts[t], n, 0, 4);
                cr_expect_eq(amax, want_amax, "%s on %s: amax %g, ref %g", what, cpus[k],
                             (double)amax, (double)want_amax);
                free(got);
                ran++;
            }
        }
        free(want);
    }
    free(x);
    if (!ran) cr_skip_test("neither cpu:onednn nor cpu:openblas is available");
}
