/*
 * test_amp.c - kmux_amax, kmux_unscale_check_finite, kmux_loss_scale_update and
 * kmux_fp8_scale_update (and its history, kmux_fp8_amax_history_record) on every available device
 * (device memory through kmux_memcpy) and, for amax and unscale, on the CPU kernels directly:
 * hand-computed expectations, comparisons with "ref" on large random inputs, and the subnormal
 * guarantees with a caller in FTZ/DAZ mode.
 */
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#if defined(__x86_64__) || defined(__i386__)
#include <xmmintrin.h>
#endif

#include "kmux_cpu_kernels.h"
#include "test_util.h"

/* A device, a stream on it, and copies to and from device memory. */
typedef struct target {
    const char *id;
    kmux_device *dev;
    kmux_stream *s;
} target;

static target open_target(kmux_context *ctx, const char *id) {
    target t = {id, tu_device(ctx, id), NULL};
    cr_assert(t.dev, "device %s", id);
    TU_OK(kmux_stream_create(t.dev, &t.s));
    return t;
}

static void close_target(target *t) {
    TU_OK(kmux_stream_destroy(t->s));
}

static void *up(target *t, const void *h, size_t bytes) {
    void *d = NULL;
    TU_OK(kmux_malloc(t->dev, bytes ? bytes : 1, &d));
    if (bytes) TU_OK(kmux_memcpy(t->s, d, h, bytes, KMUX_MEMCPY_HOST_TO_DEVICE));
    return d;
}

static void down(target *t, void *h, void *d, size_t bytes) {
    if (bytes) TU_OK(kmux_memcpy(t->s, h, d, bytes, KMUX_MEMCPY_DEVICE_TO_HOST));
    TU_OK(kmux_stream_synchronize(t->s));
}

/* amax of n elements on id ("kernels": kmux_cpu_amax with 2 threads). */
static float amax_on(kmux_context *ctx, const char *id, int64_t n, const void *x, kmux_dtype ty) {
    if (strcmp(id, "kernels") == 0) return kmux_cpu_amax(n, x, ty, 2);
    target t = open_target(ctx, id);
    void *dx = up(&t, x, (size_t)n * kmux_dtype_size(ty));
    float m = -1.0f, *dm = up(&t, &m, sizeof m);
    TU_OK(kmux_amax(t.s, n, n ? dx : NULL, ty, dm));
    down(&t, &m, dm, sizeof m);
    TU_OK(kmux_free(t.dev, dx));
    TU_OK(kmux_free(t.dev, dm));
    close_target(&t);
    return m;
}

/* "kernels" (the CPU kernels called directly), then every available device. */
static const char **targets(kmux_context *ctx) {
    static const char *t[66];
    const char **ids = tu_device_ids(ctx);
    int n = 0;
    t[n++] = "kernels";
    for (int i = 0; ids[i] && n < 65; i++)
        t[n++] = ids[i];
    t[n] = NULL;
    return t;
}

#define FOR_TARGETS(ctx, id) for (const char **tp_ = targets(ctx), *id; (id = *tp_) != NULL; tp_++)

/* Hand values: NaN ignored, Inf counts, signs dropped, subnormals kept, n == 0 gives 0. */
Test(amp, amax_hand) {
    kmux_context *ctx = tu_context();
    const float f32a[5] = {-3.0f, 2.0f, NAN, 1.0f, -0.0f};
    const float f32b[3] = {1.0f, -INFINITY, NAN};
    const uint32_t sub[3] = {0x00000001, 0x80000002, 0x7fc00000}; /* 2^-149, -2^-148, NaN */
    const uint16_t f16[3] = {0x0001, 0x8002, 0xfe00};             /* 2^-24, -2^-23, NaN */
    const uint16_t bf16[2] = {0xc040, 0x7fc0};                    /* -3, NaN */
    const uint8_t e4m3[3] = {0x01, 0xfe, 0x7f};                   /* 2^-9, -448, NaN */
    const uint8_t e5m2[2] = {0xfc, 0x7e};                         /* -Inf, NaN */
    const uint8_t e4fz[2] = {0x80, 0xff};                         /* NaN, -240 */
    const uint8_t e5fz[2] = {0x80, 0xff};                         /* NaN, -57344 */
    const double f64[3] = {-0.5, 0.25, NAN};
    struct {
        const void *x;
        int64_t n;
        kmux_dtype t;
        float want;
    } c[] = {
        {f32a, 5, KMUX_F32, 3.0f},
        {f32b, 3, KMUX_F32, INFINITY},
        {sub, 3, KMUX_F32, 0x1p-148f},
        {f16, 3, KMUX_F16, 0x1p-23f},
        {bf16, 2, KMUX_BF16, 3.0f},
        {e4m3, 3, KMUX_F8_E4M3, 448.0f},
        {e5m2, 2, KMUX_F8_E5M2, INFINITY},
        {e4fz, 2, KMUX_F8_E4M3_FNUZ, 240.0f},
        {e5fz, 2, KMUX_F8_E5M2_FNUZ, 57344.0f},
        {f64, 3, KMUX_F64, 0.5f},
        {f32a, 0, KMUX_F32, 0.0f},
    };
    FOR_TARGETS(ctx, id) {
        for (size_t i = 0; i < sizeof c / sizeof c[0]; i++) {
            float m = amax_on(ctx, id, c[i].n, c[i].x, c[i].t);
            cr_expect(m == c[i].want, "%s: amax case %zu (%s): %a, want %a", id, i,
                      kmux_dtype_name(c[i].t), (double)m, (double)c[i].want);
        }
    }
    TU_OK(kmux_context_destroy(ctx));
}

/* Large random inputs of every floating type (threads split them), a planted maximum, ref. */
Test(amp, amax_large, .timeout = 300) {
    kmux_context *ctx = tu_context();
    const kmux_dtype types[8] = {KMUX_F64,     KMUX_F32,     KMUX_F16,          KMUX_BF16,
                                 KMUX_F8_E4M3, KMUX_F8_E5M2, KMUX_F8_E4M3_FNUZ, KMUX_F8_E5M2_FNUZ};
    /* more elements than one pass of a GPU grid (8192 blocks of 256 threads in kernels/gpu), so
     * that the grid-stride loop runs; KMUX_CONFORMANCE_SHAPES=small (a device in the host
     * emulation of the GPU, tests/fake_hip) keeps that size for f32 and e4m3fnuz only and uses
     * some hundred blocks for the other types */
    const char *shapes = getenv("KMUX_CONFORMANCE_SHAPES");
    const int small = shapes && strcmp(shapes, "small") == 0;
    uint64_t s = 31;
    for (int k = 0; k < 8; k++) {
        kmux_dtype t = types[k];
        const int64_t n = !small || t == KMUX_F32 || t == KMUX_F8_E4M3_FNUZ ? 3000017 : 300007;
        char *x = malloc((size_t)n * kmux_dtype_size(t));
        cr_assert(x);
        for (int64_t i = 0; i < n; i++) {
            double v = tu_rand_uniform(&s, -100.0, 100.0);
            if (t == KMUX_F64)
                ((double *)(void *)x)[i] = v;
            else if (t == KMUX_F32)
                ((float *)(void *)x)[i] = (float)v;
            else if (kmux_dtype_size(t) == 2)
                ((uint16_t *)(void *)x)[i] = (uint16_t)tu_rand_u64(&s) & 0x5fff;
            else
                x[i] = (char)(tu_rand_u64(&s) & 0x4f); /* exponents below the top: < planted */
        }
        /* planted maximum (negative) near the end of the last thread's range */
        int64_t at = n - 5;
        float planted;
        if (t == KMUX_F64)
            ((double *)(void *)x)[at] = -200.0, planted = 200.0f;
        else if (t == KMUX_F32)
            ((float *)(void *)x)[at] = -200.0f, planted = 200.0f;
        else if (t == KMUX_F16)
            ((uint16_t *)(void *)x)[at] = 0xe248, planted = 804.0f; /* -2^9 * 1.5703125 */
        else if (t == KMUX_BF16)
            ((uint16_t *)(void *)x)[at] = 0xe000, planted = 0x1p65f;
        else if (t == KMUX_F8_E4M3)
            x[at] = (char)0xf0, planted = 128.0f; /* -2^(14-7) */
        else if (t == KMUX_F8_E5M2)
            x[at] = (char)0xf0, planted = 8192.0f; /* -2^(28-15) */
        else if (t == KMUX_F8_E4M3_FNUZ)
            x[at] = (char)0xf0, planted = 64.0f; /* -2^(14-8) */
        else
            x[at] = (char)0xf0, planted = 4096.0f; /* -2^(28-16) */
        float want = amax_on(ctx, "ref", n, x, t);
        cr_expect(want == planted, "ref %s: %a, planted %a", kmux_dtype_name(t), (double)want,
                  (double)planted);
        FOR_TARGETS(ctx, id) {
            float m = amax_on(ctx, id, n, x, t);
            cr_expect(m == planted, "%s %s: %a, want %a", id, kmux_dtype_name(t), (double)m,
                      (double)planted);
        }
        free(x);
    }
    TU_OK(kmux_context_destroy(ctx));
}

/* A caller running with FTZ and DAZ (as code built with -ffast-math does) must still get
 * subnormals: kmux does not assume the IEEE default control register, and restores the
 * caller's. */
Test(amp, subnormals_with_caller_ftz_daz) {
#if defined(__x86_64__) || defined(__i386__)
    kmux_context *ctx = tu_context();
    const unsigned saved = _mm_getcsr();
    _mm_setcsr(saved | 0x8040u);                                   /* FTZ | DAZ */
    const uint32_t sub[20] = {0x00000003, 0x80000005, 0x00000001}; /* rest +0 */
    FOR_TARGETS(ctx, id) {
        float m = amax_on(ctx, id, 20, sub, KMUX_F32);
        cr_expect(m == 0x1p-147f * 1.25f, "%s: amax of subnormals %a", id, (double)m);
    }
    /* scaled cast f32 -> f32 into the subnormals, and f16 subnormal outputs */
    float x[20], y[20], half = 0.5f;
    uint16_t h[20];
    for (int i = 0; i < 20; i++)
        x[i] = 0x1p-140f * (float)(i + 1);
    const char **ids = tu_device_ids(ctx);
    for (int d = 0; ids[d]; d++) {
        target t = open_target(ctx, ids[d]);
        void *dx = up(&t, x, sizeof x), *dy = up(&t, y, sizeof y), *dh = up(&t, h, sizeof h);
        float *ds = up(&t, &half, sizeof half);
        kmux_cast_options o = KMUX_CAST_OPTIONS_INIT;
        o.scale = ds;
        TU_OK(kmux_cast(t.s, 20, dx, KMUX_F32, dy, KMUX_F32, &o));
        down(&t, y, dy, sizeof y);
        for (int i = 0; i < 20; i++)
            cr_expect(y[i] == 0x1p-141f * (float)(i + 1), "%s: %a * 0.5 -> %a", ids[d],
                      (double)x[i], (double)y[i]);
        float small[20];
        for (int i = 0; i < 20; i++)
            small[i] = 0x1p-24f * (float)(i + 1); /* f16 subnormals */
        TU_OK(kmux_memcpy(t.s, dx, small, sizeof small, KMUX_MEMCPY_HOST_TO_DEVICE));
        TU_OK(kmux_cast(t.s, 20, dx, KMUX_F32, dh, KMUX_F16, NULL));
        down(&t, h, dh, sizeof h);
        for (int i = 0; i < 20; i++)
            cr_expect_eq(h[i], (uint16_t)(i + 1), "%s: f16 subnormal %d -> 0x%04x", ids[d], i + 1,
                         h[i]);
        TU_OK(kmux_free(t.dev, dx));
        TU_OK(kmux_free(t.dev, dy));
        TU_OK(kmux_free(t.dev, dh));
        TU_OK(kmux_free(t.dev, ds));
        close_target(&t);
    }
    unsigned after = _mm_getcsr();
    _mm_setcsr(saved);
    cr_expect_eq(after & 0xffc0u, (saved | 0x8040u) & 0xffc0u, "caller's MXCSR restored: 0x%x",
                 after);
    TU_OK(kmux_context_destroy(ctx));
#else
    cr_skip_test("x86 MXCSR only");
#endif
}

/* unscale on four tensors of mixed dtypes, on id ("kernels": kmux_cpu_unscale_check_finite). */
enum { NT = 4 };
static const kmux_dtype UT[NT] = {KMUX_F32, KMUX_F16, KMUX_BF16, KMUX_F64};
static const int64_t US[NT] = {1003, (1 << 20) + 5, 777, 100};

static float unscale_on(kmux_context *ctx, const char *id, void *const *host, float inv,
                        float found) {
    if (strcmp(id, "kernels") == 0) {
        int f = 0;
        for (int i = 0; i < NT; i++)
            f |= kmux_cpu_unscale_check_finite(US[i], host[i], UT[i], inv, 2);
        return f ? 1.0f : found;
    }
    target t = open_target(ctx, id);
    void *d[NT];
    for (int i = 0; i < NT; i++)
        d[i] = up(&t, host[i], (size_t)US[i] * kmux_dtype_size(UT[i]));
    float *dinv = up(&t, &inv, sizeof inv), *dfound = up(&t, &found, sizeof found);
    TU_OK(kmux_unscale_check_finite(t.s, NT, d, US, UT, dinv, dfound));
    for (int i = 0; i < NT; i++) {
        down(&t, host[i], d[i], (size_t)US[i] * kmux_dtype_size(UT[i]));
        TU_OK(kmux_free(t.dev, d[i]));
    }
    down(&t, &found, dfound, sizeof found);
    TU_OK(kmux_free(t.dev, dinv));
    TU_OK(kmux_free(t.dev, dfound));
    close_target(&t);
    return found;
}

static void fill_grads(void **g, uint64_t seed) {
    uint64_t s = seed;
    for (int i = 0; i < NT; i++)
        for (int64_t k = 0; k < US[i]; k++) {
            double v = tu_rand_uniform(&s, -8.0, 8.0) * exp2(tu_rand_uniform(&s, -30.0, 10.0));
            if (UT[i] == KMUX_F32)
                ((float *)g[i])[k] = (float)v;
            else if (UT[i] == KMUX_F64)
                ((double *)g[i])[k] = v;
            else
                ((uint16_t *)g[i])[k] = (uint16_t)(tu_rand_u64(&s) & 0x77ff); /* finite only */
        }
    /* hand-checkable heads: 2 and -4 in every type */
    ((float *)g[0])[0] = 2.0f, ((float *)g[0])[1] = -4.0f;
    ((uint16_t *)g[1])[0] = 0x4000, ((uint16_t *)g[1])[1] = 0xc400;
    ((uint16_t *)g[2])[0] = 0x4000, ((uint16_t *)g[2])[1] = 0xc080;
    ((double *)g[3])[0] = 2.0, ((double *)g[3])[1] = -4.0;
}

static void run_unscale_case(kmux_context *ctx, float inv, int poison) {
    void *want[NT], *got[NT];
    for (int i = 0; i < NT; i++) {
        want[i] = malloc((size_t)US[i] * kmux_dtype_size(UT[i]));
        got[i] = malloc((size_t)US[i] * kmux_dtype_size(UT[i]));
        cr_assert(want[i] && got[i]);
    }
    fill_grads(want, 5);
    if (poison == 1) ((uint16_t *)want[2])[500] = 0xff80; /* bf16 -Inf */
    if (poison == 2) ((double *)want[3])[99] = NAN;
    int expect_found = poison != 0;
    float fw = unscale_on(ctx, "ref", want, inv, 0.0f);
    cr_expect_eq(fw, expect_found ? 1.0f : 0.0f, "ref found_inf %g", (double)fw);
    if (inv == 0.5f) { /* x * 0.5 is exact here: 1 and -2 */
        cr_expect(((float *)want[0])[0] == 1.0f && ((float *)want[0])[1] == -2.0f);
        cr_expect(((uint16_t *)want[1])[0] == 0x3c00 && ((uint16_t *)want[1])[1] == 0xc000);
        cr_expect(((uint16_t *)want[2])[0] == 0x3f80 && ((uint16_t *)want[2])[1] == 0xc000);
        cr_expect(((double *)want[3])[0] == 1.0 && ((double *)want[3])[1] == -2.0);
    }
    FOR_TARGETS(ctx, id) {
        if (strcmp(id, "ref") == 0) continue;
        fill_grads(got, 5);
        if (poison == 1) ((uint16_t *)got[2])[500] = 0xff80;
        if (poison == 2) ((double *)got[3])[99] = NAN;
        float f = unscale_on(ctx, id, got, inv, 0.0f);
        cr_expect_eq(f, fw, "%s: found_inf %g, ref %g", id, (double)f, (double)fw);
        for (int i = 0; i < NT; i++) {
            int64_t bad = 0;
            for (int64_t k = 0; k < US[i]; k++) {
                size_t es = kmux_dtype_size(UT[i]);
                const char *a = (char *)got[i] + k * es, *b = (char *)want[i] + k * es;
                int nan_a = UT[i] == KMUX_F64 ? isnan(*(const double *)(const void *)a) : 0;
                int nan_b = UT[i] == KMUX_F64 ? isnan(*(const double *)(const void *)b) : 0;
                if (memcmp(a, b, es) && !(nan_a && nan_b) && bad++ < 3)
                    cr_log_error("%s: %s tensor element %lld differs", id, kmux_dtype_name(UT[i]),
                                 (long long)k);
            }
            cr_expect_eq(bad, 0, "%s: inv=%a %s tensor: %lld elements differ from ref", id,
                         (double)inv, kmux_dtype_name(UT[i]), (long long)bad);
        }
        /* found_inf is never cleared: start at 1 with finite data */
        if (!poison) {
            fill_grads(got, 5);
            cr_expect_eq(unscale_on(ctx, id, got, inv, 1.0f), 1.0f, "%s: found_inf cleared", id);
        }
    }
    for (int i = 0; i < NT; i++) {
        free(want[i]);
        free(got[i]);
    }
}

Test(amp, unscale_mixed_dtypes, .timeout = 300) {
    kmux_context *ctx = tu_context();
    run_unscale_case(ctx, 0.5f, 0);
    run_unscale_case(ctx, 1.0f / 3.0f, 0); /* inexact products, rounded once */
    run_unscale_case(ctx, 0.5f, 1);
    run_unscale_case(ctx, 0.25f, 2);
    TU_OK(kmux_context_destroy(ctx));
}

/* GradScaler (torch.cuda.amp, torch._amp_update_scale_) step by step: the expected scale and
 * tracker are computed here from the rule, with products in double rounded to f32. */
Test(amp, loss_scale_update_sequence) {
    kmux_context *ctx = tu_context();
    const float found[] = {0, 0, 1, 0, 0, 0, 0, 0, 0, 1, 1, 0, NAN, 0, 0, 0, 0, 0, 0, 0};
    const int steps = (int)(sizeof found / sizeof found[0]);
    const char **ids = tu_device_ids(ctx);
    for (int d = 0; ids[d]; d++) {
        for (int big = 0; big < 2; big++) {
            target t = open_target(ctx, ids[d]);
            float scale0 = big ? 0x1p126f : 65536.0f; /* big: growth would overflow f32 */
            int32_t tr0 = 0;
            float *ds = up(&t, &scale0, sizeof scale0);
            int32_t *dt = up(&t, &tr0, sizeof tr0);
            float *df = up(&t, &found[0], sizeof(float));
            float want_scale = scale0;
            int32_t want_tr = 0;
            for (int i = 0; i < steps; i++) {
                TU_OK(kmux_memcpy(t.s, df, &found[i], sizeof(float), KMUX_MEMCPY_HOST_TO_DEVICE));
                TU_OK(kmux_loss_scale_update(t.s, ds, dt, df, 2.0, 0.5, 3));
                if (found[i] != 0.0f) { /* NaN counts as found, as torch's `if (*found_inf)` */
                    want_scale = (float)((double)want_scale * 0.5);
                    want_tr = 0;
                } else if (want_tr + 1 == 3) {
                    float g = (float)((double)want_scale * 2.0);
                    if (isfinite(g)) want_scale = g;
                    want_tr = 0;
                } else {
                    want_tr++;
                }
                float got_scale;
                int32_t got_tr;
                down(&t, &got_scale, ds, sizeof got_scale);
                down(&t, &got_tr, dt, sizeof got_tr);
                cr_expect(got_scale == want_scale && got_tr == want_tr,
                          "%s step %d (found %g): scale %a tracker %d, want %a %d", ids[d], i,
                          (double)found[i], (double)got_scale, got_tr, (double)want_scale, want_tr);
            }
            TU_OK(kmux_free(t.dev, ds));
            TU_OK(kmux_free(t.dev, dt));
            TU_OK(kmux_free(t.dev, df));
            close_target(&t);
        }
    }
    TU_OK(kmux_context_destroy(ctx));
}

/* Transformer Engine delayed scaling: scale = (fp8_max / max(history)) / 2^margin, kept when the
 * amax is 0, Inf or NaN. Expected values by hand. */
Test(amp, fp8_scale_update_hand) {
    kmux_context *ctx = tu_context();
    const float h1[3] = {1.0f, 4.0f, 2.0f};
    const float hz[2] = {0.0f, 0.0f};
    const float hinf[2] = {1.0f, INFINITY};
    const float hnan[3] = {1.0f, NAN, 2.0f};
    const float hbig[1] = {3e38f};
    struct {
        const float *h;
        int64_t n;
        kmux_dtype t;
        float margin, want;
    } c[] = {
        {h1, 3, KMUX_F8_E4M3, 0.0f, 112.0f},       /* 448 / 4 */
        {h1, 3, KMUX_F8_E4M3, 1.0f, 56.0f},        /* / 2^1 */
        {h1, 3, KMUX_F8_E4M3, -1.0f, 224.0f},      /* / 2^-1 */
        {h1, 3, KMUX_F8_E5M2, 0.0f, 14336.0f},     /* 57344 / 4 */
        {h1, 3, KMUX_F8_E4M3_FNUZ, 0.0f, 60.0f},   /* 240 / 4 */
        {h1, 3, KMUX_F8_E5M2_FNUZ, 2.0f, 3584.0f}, /* 57344 / 4 / 4 */
        {h1, 1, KMUX_F8_E4M3, 0.0f, 448.0f},       /* history of one: amax 1 */
        {hz, 2, KMUX_F8_E4M3, 0.0f, 7.0f},         /* amax 0: unchanged */
        {hinf, 2, KMUX_F8_E4M3, 0.0f, 7.0f},       /* amax Inf: unchanged */
        {hnan, 3, KMUX_F8_E4M3, 0.0f, 7.0f},       /* amax NaN: unchanged */
        /* issue 50: a quotient below the f32 range once gave a scale of 0 */
        {hbig, 1, KMUX_F8_E4M3, 10.0f, FLT_MIN},  /* 448 / 3e38 / 2^10: subnormal */
        {hbig, 1, KMUX_F8_E4M3, 127.0f, FLT_MIN}, /* rounds to 0 in f32 */
        {h1, 3, KMUX_F8_E4M3, -127.0f, FLT_MAX},  /* 112 * 2^127: beyond f32 */
    };
    const char **ids = tu_device_ids(ctx);
    for (int d = 0; ids[d]; d++)
        for (size_t i = 0; i < sizeof c / sizeof c[0]; i++) {
            target t = open_target(ctx, ids[d]);
            float s = 7.0f;
            void *dh = up(&t, c[i].h, (size_t)c[i].n * sizeof(float));
            float *ds = up(&t, &s, sizeof s);
            TU_OK(kmux_fp8_scale_update(t.s, dh, c[i].n, c[i].t, c[i].margin, ds));
            down(&t, &s, ds, sizeof s);
            cr_expect(s == c[i].want, "%s case %zu: scale %a, want %a", ids[d], i, (double)s,
                      (double)c[i].want);
            TU_OK(kmux_free(t.dev, dh));
            TU_OK(kmux_free(t.dev, ds));
            close_target(&t);
        }
    /* a margin outside [-127, 127] (200 and 1e9 once gave 0, -200 FLT_MAX) is refused */
    const float bad[] = {200.0f, 1e9f, -200.0f, 127.5f};
    for (int d = 0; ids[d]; d++)
        for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
            target t = open_target(ctx, ids[d]);
            float s = 7.0f;
            void *dh = up(&t, h1, sizeof h1);
            float *ds = up(&t, &s, sizeof s);
            TU_STATUS(KMUX_ERR_INVALID_ARGUMENT,
                      kmux_fp8_scale_update(t.s, dh, 3, KMUX_F8_E4M3, bad[i], ds));
            cr_expect(strstr(kmux_last_error(), "is not in [-127, 127]") != NULL, "%s",
                      kmux_last_error());
            down(&t, &s, ds, sizeof s);
            cr_expect(s == 7.0f, "%s: the scale changed to %g", ids[d], (double)s);
            TU_OK(kmux_free(t.dev, dh));
            TU_OK(kmux_free(t.dev, ds));
            close_target(&t);
        }
    TU_OK(kmux_context_destroy(ctx));
}

/* Delayed scaling on the stream: each step's amax (kmux_amax of a tensor) recorded in a ring of
 * H entries, the scale updated from it: 448 / max of the last H amaxes, an old large amax
 * leaving the window after H steps. */
Test(amp, fp8_amax_history_ring) {
    kmux_context *ctx = tu_context();
    enum { H = 3, STEPS = 7 };
    const float amaxes[STEPS] = {4.0f, 1.0f, 2.0f, 0.5f, 1.0f, 7.0f, 0.25f};
    const char **ids = tu_device_ids(ctx);
    for (int d = 0; ids[d]; d++) {
        target t = open_target(ctx, ids[d]);
        const float zeros[H] = {0};
        float *dh = up(&t, zeros, sizeof zeros), s = 1.0f, *ds = up(&t, &s, sizeof s);
        float x[2], *dm = up(&t, &s, sizeof s);
        void *dx = up(&t, x, sizeof x);
        for (int step = 0; step < STEPS; step++) {
            x[0] = -amaxes[step], x[1] = amaxes[step] / 2;
            TU_OK(kmux_memcpy(t.s, dx, x, sizeof x, KMUX_MEMCPY_HOST_TO_DEVICE));
            TU_OK(kmux_amax(t.s, 2, dx, KMUX_F32, dm));
            TU_OK(kmux_fp8_amax_history_record(t.s, dh, H, step, dm));
            TU_OK(kmux_fp8_scale_update(t.s, dh, H, KMUX_F8_E4M3, 0.0f, ds));
            down(&t, &s, ds, sizeof s);
            float most = 0.0f;
            for (int i = step - H + 1 < 0 ? 0 : step - H + 1; i <= step; i++)
                most = amaxes[i] > most ? amaxes[i] : most;
            cr_expect(s == 448.0f / most, "%s step %d: scale %g, want 448 / %g", ids[d], step,
                      (double)s, (double)most);
        }
        float h[H];
        down(&t, h, dh, sizeof h); /* steps 6, 4, 5 in slots 0, 1, 2 */
        cr_expect(h[0] == 0.25f && h[1] == 1.0f && h[2] == 7.0f, "%s: history %g %g %g", ids[d],
                  (double)h[0], (double)h[1], (double)h[2]);
        TU_STATUS(KMUX_ERR_INVALID_ARGUMENT, kmux_fp8_amax_history_record(t.s, dh, 0, 1, dm));
        cr_expect(strstr(kmux_last_error(), "history_len = 0") != NULL, "%s", kmux_last_error());
        TU_STATUS(KMUX_ERR_INVALID_ARGUMENT, kmux_fp8_amax_history_record(t.s, dh, H, -1, dm));
        cr_expect(strstr(kmux_last_error(), "step = -1") != NULL, "%s", kmux_last_error());
        TU_STATUS(KMUX_ERR_INVALID_ARGUMENT, kmux_fp8_amax_history_record(t.s, dh, H, 1, NULL));
        cr_expect(strstr(kmux_last_error(), "amax is NULL") != NULL, "%s", kmux_last_error());
        TU_OK(kmux_free(t.dev, dh));
        TU_OK(kmux_free(t.dev, ds));
        TU_OK(kmux_free(t.dev, dm));
        TU_OK(kmux_free(t.dev, dx));
        close_target(&t);
    }
    TU_OK(kmux_context_destroy(ctx));
}
