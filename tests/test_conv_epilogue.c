/*
 * test_conv_epilogue.c - a forward convolution's epilogue (kmux.h: y = act(alpha conv(x, w) +
 * beta y + bias[k]), RELU_AUX's mask of y) on every CPU device and every implementation of each
 * plan, or on the device KMUX_TEST_DEVICE names (cuda:0, hip:0 through the fakes):
 * - against this file's own oracle: the convolution summed here in f64 over small integers (exact
 *   in f32, bf16 and f16), so BIAS and RELU must give exactly the rounded value, and the mask
 *   exactly t > 0 with its padding bits kept; GELU within a few units of the type;
 * - both layouts, f32/bf16/f16, alpha/beta of both kinds, alpha = 0 (the epilogue still runs),
 *   strides, asymmetric padding, groups, a 1x1 convolution;
 * - a caller-workspace plan gives the bits of the plan that owns its workspace;
 * - bad descriptors and arguments refused by name, y and the mask untouched.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "test_util.h"

static const kmux_dtype types[] = {KMUX_F32, KMUX_BF16, KMUX_F16};

static size_t esize(kmux_dtype t) {
    return t == KMUX_F32 ? 4 : 2;
}

/* A problem with its host tensors. */
typedef struct prob {
    kmux_conv2d_desc d;
    int64_t nx, nw, ny, P, Q;
    void *x, *w, *y, *bias;
    uint8_t *mask; /* ceil(ny / 8) + 4 bytes of a recognisable pattern */
    size_t nmask;
} prob;

static void prob_make(prob *p, const tu_conv_geom *g, kmux_layout layout, kmux_dtype t,
                      unsigned epi, kmux_dtype bias_type, uint64_t *seed) {
    memset(p, 0, sizeof *p);
    p->d = tu_conv_desc(g, KMUX_CONV_FWD, layout, t);
    p->d.epilogue = epi;
    p->d.bias_type = bias_type;
    tu_conv_elems(&p->d, &p->nx, &p->nw, &p->ny);
    TU_OK(kmux_conv2d_output_dims(&p->d, &p->P, &p->Q));
    p->x = tu_fill_ints(t, p->nx, 2, TU_DENSE, seed);
    p->w = tu_fill_ints(t, p->nw, 1, TU_DENSE, seed);
    p->y = tu_fill_ints(t, p->ny, 3, TU_DENSE, seed);
    p->bias = tu_fill_ints(bias_type, g->k, 3, TU_DENSE, seed);
    p->nmask = (size_t)(p->ny + 7) / 8 + 4;
    p->mask = malloc(p->nmask);
    for (size_t i = 0; i < p->nmask; i++)
        p->mask[i] = (uint8_t)tu_rand_u64(seed);
}

static void prob_free(prob *p) {
    free(p->x), free(p->w), free(p->y), free(p->bias), free(p->mask);
}

/* Offsets of x, w, y elements in the descriptor's layout. */
static int64_t x_at(const kmux_conv2d_desc *d, int64_t n, int64_t c, int64_t h, int64_t w) {
    return d->layout == KMUX_NCHW ? ((n * d->c + c) * d->h + h) * d->w + w
                                  : ((n * d->h + h) * d->w + w) * d->c + c;
}
static int64_t w_at(const kmux_conv2d_desc *d, int64_t k, int64_t c, int64_t r, int64_t s) {
    const int64_t cg = d->c / d->groups;
    return d->layout == KMUX_NCHW ? ((k * cg + c) * d->r + r) * d->s + s
                                  : ((k * d->r + r) * d->s + s) * cg + c;
}
static int64_t y_at(const prob *p, int64_t n, int64_t k, int64_t i, int64_t j) {
    const kmux_conv2d_desc *d = &p->d;
    return d->layout == KMUX_NCHW ? ((n * d->k + k) * p->P + i) * p->Q + j
                                  : ((n * p->P + i) * p->Q + j) * d->k + k;
}

/* t = alpha conv(x, w) + beta y_in + bias at output (n, k, i, j), in f64 (exact here). */
static double oracle_t(const prob *p, const void *y_in, double alpha, double beta, int64_t n,
                       int64_t k, int64_t i, int64_t j) {
    const kmux_conv2d_desc *d = &p->d;
    const int64_t cg = d->c / d->groups, g = k / (d->k / d->groups);
    double acc = 0.0;
    for (int64_t c = 0; c < cg; c++)
        for (int64_t r = 0; r < d->r; r++)
            for (int64_t s = 0; s < d->s; s++) {
                const int64_t h = i * d->stride_h - d->pad_top + r * d->dilation_h;
                const int64_t w = j * d->stride_w - d->pad_left + s * d->dilation_w;
                if (h < 0 || h >= d->h || w < 0 || w >= d->w) continue;
                acc += tu_get(d->x_type, p->x, x_at(d, n, g * cg + c, h, w)) *
                       tu_get(d->w_type, p->w, w_at(d, k, c, r, s));
            }
    double t = alpha == 0.0 ? 0.0 : alpha * acc;
    if (beta != 0.0) t += beta * tu_get(d->y_type, y_in, y_at(p, n, k, i, j));
    if (d->epilogue & KMUX_EPILOGUE_BIAS) t += tu_get(d->bias_type, p->bias, k);
    return t;
}

static double gelu(double x) {
    return 0.5 * x * (1.0 + tanh(0.7978845608028654 * (x + 0.044715 * x * x * x)));
}

/* The message of exec_staged's execute (the calls after it clear kmux_last_error). */
static char exec_msg[512];

/* Runs the plan's current implementation on dev memory staged from the host; y and the mask
 * come back into y and mask. Returns the execute's status; its message in exec_msg. */
static kmux_status exec_staged(kmux_device *dev, kmux_plan *plan, const prob *p, void *y,
                               uint8_t *mask, float alpha, float beta, int pass_bias,
                               int pass_aux) {
    kmux_stream *st = NULL;
    TU_OK(kmux_stream_create(dev, &st));
    const size_t bx = (size_t)p->nx * esize(p->d.x_type), bw = (size_t)p->nw * esize(p->d.w_type);
    const size_t by = (size_t)p->ny * esize(p->d.y_type), bb = (size_t)p->d.k * 4;
    void *dx = NULL, *dw = NULL, *dy = NULL, *db = NULL, *dm = NULL;
    TU_OK(kmux_malloc(dev, bx, &dx));
    TU_OK(kmux_malloc(dev, bw, &dw));
    TU_OK(kmux_malloc(dev, by, &dy));
    TU_OK(kmux_malloc(dev, bb, &db));
    TU_OK(kmux_malloc(dev, p->nmask, &dm));
    TU_OK(kmux_memcpy(st, dx, p->x, bx, KMUX_MEMCPY_HOST_TO_DEVICE));
    TU_OK(kmux_memcpy(st, dw, p->w, bw, KMUX_MEMCPY_HOST_TO_DEVICE));
    TU_OK(kmux_memcpy(st, dy, y, by, KMUX_MEMCPY_HOST_TO_DEVICE));
    TU_OK(kmux_memcpy(st, db, p->bias, (size_t)p->d.k * esize(p->d.bias_type),
                      KMUX_MEMCPY_HOST_TO_DEVICE));
    TU_OK(kmux_memcpy(st, dm, mask, p->nmask, KMUX_MEMCPY_HOST_TO_DEVICE));
    kmux_plan_info info;
    TU_OK(kmux_plan_info_get(plan, &info));
    void *ws = NULL;
    if (info.workspace_bytes) TU_OK(kmux_malloc(dev, info.workspace_bytes, &ws));
    kmux_conv2d_args a = KMUX_CONV2D_ARGS_INIT;
    a.alpha = &alpha, a.beta = &beta, a.x = dx, a.w = dw, a.y = dy;
    a.bias = pass_bias ? db : NULL, a.aux = pass_aux ? dm : NULL;
    a.workspace = ws, a.workspace_bytes = info.workspace_bytes;
    kmux_status s = kmux_conv2d_execute(plan, st, &a);
    snprintf(exec_msg, sizeof exec_msg, "%s", kmux_last_error());
    TU_OK(kmux_stream_synchronize(st));
    TU_OK(kmux_memcpy(st, y, dy, by, KMUX_MEMCPY_DEVICE_TO_HOST));
    TU_OK(kmux_memcpy(st, mask, dm, p->nmask, KMUX_MEMCPY_DEVICE_TO_HOST));
    TU_OK(kmux_stream_synchronize(st));
    void *bufs[] = {dx, dw, dy, db, dm, ws};
    for (int i = 0; i < 6; i++)
        TU_OK(kmux_free(dev, bufs[i]));
    TU_OK(kmux_stream_destroy(st));
    return s;
}

/* y and mask of one run against the oracle. */
static void check(const prob *p, const char *what, const void *y, const uint8_t *mask, double alpha,
                  double beta) {
    const kmux_conv2d_desc *d = &p->d;
    const unsigned e = d->epilogue;
    for (int64_t n = 0; n < d->n; n++)
        for (int64_t k = 0; k < d->k; k++)
            for (int64_t i = 0; i < p->P; i++)
                for (int64_t j = 0; j < p->Q; j++) {
                    const int64_t o = y_at(p, n, k, i, j);
                    const double t = oracle_t(p, p->y, alpha, beta, n, k, i, j);
                    double want = t;
                    if ((e & KMUX_EPILOGUE_RELU) && !(t > 0.0)) want = 0.0;
                    if (e & KMUX_EPILOGUE_GELU) want = gelu(t);
                    double got = tu_get(d->y_type, y, o);
                    if (e & KMUX_EPILOGUE_GELU) {
                        /* a few units of the type (bf16: 2^-8 relative), and of 1e-6 near 0 */
                        const double ulp = d->y_type == KMUX_F32    ? 0x1p-22
                                           : d->y_type == KMUX_BF16 ? 0x1p-6
                                                                    : 0x1p-9;
                        cr_assert(fabs(got - want) <= ulp * fabs(want) + 1e-6,
                                  "%s: y[%lld] = %.9g, want gelu(%g) = %.9g", what, (long long)o,
                                  got, t, want);
                    } else {
                        void *one = malloc(4);
                        tu_set(d->y_type, one, 0, want);
                        want = tu_get(d->y_type, one, 0);
                        free(one);
                        cr_assert(got == want && signbit(got) == signbit(want),
                                  "%s: y[%lld] (n %lld k %lld p %lld q %lld) = %g, want %g", what,
                                  (long long)o, (long long)n, (long long)k, (long long)i,
                                  (long long)j, got, want);
                    }
                    if (e & KMUX_EPILOGUE_RELU_AUX)
                        cr_assert_eq((mask[o / 8] >> (o % 8)) & 1, t > 0.0,
                                     "%s: mask bit %lld = %d, t = %g", what, (long long)o,
                                     (mask[o / 8] >> (o % 8)) & 1, t);
                }
    if (!(e & KMUX_EPILOGUE_RELU_AUX)) {
        cr_assert(memcmp(mask, p->mask, p->nmask) == 0, "%s: the mask was written", what);
        return;
    }
    for (int64_t b = p->ny; b < (int64_t)p->nmask * 8; b++) /* past y: kept */
        cr_assert_eq((mask[b / 8] >> (b % 8)) & 1, (p->mask[b / 8] >> (b % 8)) & 1,
                     "%s: mask bit %lld past y was changed", what, (long long)b);
}

/* Every implementation of p's plan on dev, alpha/beta in two kinds and alpha = 0. */
static void run_all(kmux_device *dev, const prob *p, int caller_ws) {
    kmux_plan_prefs prefs = KMUX_PLAN_PREFS_INIT;
    prefs.caller_workspace = caller_ws;
    kmux_plan *plan = NULL;
    TU_OK(kmux_conv2d_plan_create(dev, &p->d, &prefs, &plan));
    const float ab[3][2] = {{1.0f, 0.0f}, {0.5f, 2.0f}, {0.0f, 1.0f}};
    for (int impl = 0;; impl++) {
        kmux_plan_info info;
        TU_OK(kmux_plan_info_get(plan, &info));
        for (int c = 0; c < 3; c++) {
            void *y = tu_dup(p->y, (size_t)p->ny * esize(p->d.y_type));
            uint8_t *mask = tu_dup(p->mask, p->nmask);
            TU_OK(exec_staged(dev, plan, p, y, mask, ab[c][0], ab[c][1], 1, 1));
            char what[320];
            snprintf(what, sizeof what,
                     "%s %s %s epilogue 0x%x bias %s alpha %g beta %g impl %d (%s)%s",
                     kmux_device_id(dev), p->d.layout == KMUX_NCHW ? "NCHW" : "NHWC",
                     kmux_dtype_name(p->d.y_type), p->d.epilogue, kmux_dtype_name(p->d.bias_type),
                     ab[c][0], ab[c][1], impl, info.impl, caller_ws ? " caller workspace" : "");
            check(p, what, y, mask, ab[c][0], ab[c][1]);
            free(y), free(mask);
        }
        if (kmux_plan_next_impl(plan) == KMUX_ERR_LAST_IMPL) break;
    }
    TU_OK(kmux_plan_destroy(plan));
}

/* n c h w k r s groups stride_h stride_w pads (t b l r) dilation (h w) */
static const tu_conv_geom geoms[] = {
    {2, 3, 5, 5, 4, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1},   /* "same" 3x3 */
    {1, 2, 7, 6, 5, 3, 2, 1, 2, 1, 1, 0, 0, 1, 1, 1},   /* strides, asymmetric pads, odd sizes */
    {3, 4, 4, 3, 6, 1, 1, 2, 1, 1, 0, 0, 0, 0, 1, 1},   /* 1x1, 2 groups, 3 images */
    {2, 1, 14, 14, 9, 3, 3, 1, 2, 2, 1, 1, 1, 1, 1, 1}, /* the trainer's conv1, fewer channels */
    {2, 3, 6, 6, 16, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1}   /* whole mask bytes: the threaded kernel */
};
static const unsigned epilogues[] = {
    KMUX_EPILOGUE_BIAS, KMUX_EPILOGUE_RELU, KMUX_EPILOGUE_BIAS | KMUX_EPILOGUE_RELU,
    KMUX_EPILOGUE_BIAS | KMUX_EPILOGUE_RELU | KMUX_EPILOGUE_RELU_AUX,
    KMUX_EPILOGUE_BIAS | KMUX_EPILOGUE_GELU};

Test(conv_epilogue, matches_the_oracle_on_every_implementation) {
    kmux_context *ctx = tu_context();
    const char *ids[4];
    const int ndev = tu_devices_under_test(ids);
    uint64_t seed = 0xc0de;
    for (int di = 0; di < ndev; di++) {
        kmux_device *dev = tu_device(ctx, ids[di]);
        if (!dev) continue; /* tu_device said why; ref always runs */
        for (int ti = 0; ti < 3; ti++)
            for (int gi = 0; gi < (int)(sizeof geoms / sizeof *geoms); gi++)
                for (int li = 0; li < 2; li++)
                    for (int ei = 0; ei < (int)(sizeof epilogues / sizeof *epilogues); ei++) {
                        /* the bias in f32 and, every other case, in y's type */
                        const kmux_dtype bt = (gi + ei) % 2 ? types[ti] : KMUX_F32;
                        prob p;
                        prob_make(&p, &geoms[gi], li ? KMUX_NHWC : KMUX_NCHW, types[ti],
                                  epilogues[ei], bt, &seed);
                        run_all(dev, &p, 0);
                        prob_free(&p);
                    }
    }
    TU_OK(kmux_context_destroy(ctx));
}

Test(conv_epilogue, caller_workspace_plans_and_the_impl_name) {
    kmux_context *ctx = tu_context();
    const char *ids[4];
    const int ndev = tu_devices_under_test(ids);
    uint64_t seed = 0xbeef;
    for (int di = 0; di < ndev; di++) {
        kmux_device *dev = tu_device(ctx, ids[di]);
        if (!dev) continue;
        /* the devices whose library fuses it (one rounding); elsewhere the core runs it after */
        const int fused = !strcmp(ids[di], "ref") || !strcmp(ids[di], "cpu:onednn") ||
                          !strcmp(ids[di], "cpu:openblas");
        for (int ti = 0; ti < 3; ti++) {
            prob p;
            const unsigned e = KMUX_EPILOGUE_BIAS | KMUX_EPILOGUE_RELU | KMUX_EPILOGUE_RELU_AUX;
            prob_make(&p, &geoms[3], ti % 2 ? KMUX_NCHW : KMUX_NHWC, types[ti], e, KMUX_F32, &seed);
            kmux_plan_prefs prefs = KMUX_PLAN_PREFS_INIT;
            prefs.caller_workspace = 1;
            kmux_plan *plan = NULL;
            if (kmux_conv2d_plan_create(dev, &p.d, &prefs, &plan) == KMUX_OK) {
                TU_OK(kmux_plan_destroy(plan));
                run_all(dev, &p, 1);
            }
            /* a device whose library does not fuse it says so in the implementation's name */
            TU_OK(kmux_conv2d_plan_create(dev, &p.d, NULL, &plan));
            kmux_plan_info info;
            TU_OK(kmux_plan_info_get(plan, &info));
            const char *tail = strstr(info.impl, " + epilogue");
            cr_assert_eq(tail != NULL, !fused, "%s: impl %s", ids[di], info.impl);
            TU_OK(kmux_plan_destroy(plan));
            prob_free(&p);
        }
    }
    TU_OK(kmux_context_destroy(ctx));
}

/* A refused descriptor: status and a message that names `name`. */
static void refused_desc(kmux_device *dev, const kmux_conv2d_desc *d, const char *name) {
    kmux_plan *plan = NULL;
    cr_assert_eq(kmux_conv2d_plan_create(dev, d, NULL, &plan), KMUX_ERR_INVALID_ARGUMENT,
                 "%s: accepted (want a refusal naming %s)", kmux_device_id(dev), name);
    cr_assert(strstr(kmux_last_error(), name), "%s: message '%s' does not name %s",
              kmux_device_id(dev), kmux_last_error(), name);
    cr_assert_null(plan);
}

Test(conv_epilogue, bad_descriptors_are_refused_by_name) {
    kmux_context *ctx = tu_context();
    const char *ids[4];
    const int ndev = tu_devices_under_test(ids);
    for (int di = 0; di < ndev; di++) {
        kmux_device *dev = tu_device(ctx, ids[di]);
        if (!dev) continue;
        kmux_conv2d_desc d = tu_conv_desc(&geoms[0], KMUX_CONV_BWD_DATA, KMUX_NCHW, KMUX_F32);
        d.epilogue = KMUX_EPILOGUE_BIAS;
        refused_desc(dev, &d, "backward-data");
        d.direction = KMUX_CONV_BWD_WEIGHTS;
        refused_desc(dev, &d, "backward-weights");
        d.direction = KMUX_CONV_FWD;
        d.epilogue = KMUX_EPILOGUE_DRELU;
        refused_desc(dev, &d, "DRELU");
        d.epilogue = KMUX_EPILOGUE_BIAS | KMUX_EPILOGUE_BGRADB;
        refused_desc(dev, &d, "BGRADB");
        d.epilogue = KMUX_EPILOGUE_GELU | KMUX_EPILOGUE_GELU_AUX;
        refused_desc(dev, &d, "GELU_AUX");
        d.epilogue = 1u << 20;
        refused_desc(dev, &d, "epilogue = 0x100000");
        d.epilogue = KMUX_EPILOGUE_RELU_AUX;
        refused_desc(dev, &d, "RELU_AUX needs RELU");
        d.epilogue = KMUX_EPILOGUE_RELU | KMUX_EPILOGUE_GELU;
        refused_desc(dev, &d, "exclusive");
        d.epilogue = KMUX_EPILOGUE_BIAS;
        d.bias_type = KMUX_F16;
        refused_desc(dev, &d, "bias_type = f16");
        d.bias_type = (kmux_dtype)99;
        refused_desc(dev, &d, "bias_type");
    }
    TU_OK(kmux_context_destroy(ctx));
}

Test(conv_epilogue, bad_arguments_are_refused_and_nothing_is_written) {
    kmux_context *ctx = tu_context();
    const char *ids[4];
    const int ndev = tu_devices_under_test(ids);
    uint64_t seed = 7;
    for (int di = 0; di < ndev; di++) {
        kmux_device *dev = tu_device(ctx, ids[di]);
        if (!dev) continue;
        prob p;
        prob_make(&p, &geoms[0], KMUX_NHWC, KMUX_F32,
                  KMUX_EPILOGUE_BIAS | KMUX_EPILOGUE_RELU | KMUX_EPILOGUE_RELU_AUX, KMUX_F32,
                  &seed);
        kmux_plan *plan = NULL;
        TU_OK(kmux_conv2d_plan_create(dev, &p.d, NULL, &plan));
        void *y = tu_dup(p.y, (size_t)p.ny * 4);
        uint8_t *mask = tu_dup(p.mask, p.nmask);
        cr_assert_eq(exec_staged(dev, plan, &p, y, mask, 1.0f, 0.0f, 0, 1),
                     KMUX_ERR_INVALID_ARGUMENT, "%s: NULL bias accepted", ids[di]);
        cr_assert(strstr(exec_msg, "args->bias is NULL"), "%s: %s", ids[di], exec_msg);
        cr_assert_eq(exec_staged(dev, plan, &p, y, mask, 1.0f, 0.0f, 1, 0),
                     KMUX_ERR_INVALID_ARGUMENT, "%s: NULL aux accepted", ids[di]);
        cr_assert(strstr(exec_msg, "args->aux is NULL"), "%s: %s", ids[di], exec_msg);
        cr_assert(memcmp(y, p.y, (size_t)p.ny * 4) == 0, "%s: y written by a refused call",
                  ids[di]);
        cr_assert(memcmp(mask, p.mask, p.nmask) == 0, "%s: mask written by a refused call",
                  ids[di]);
        /* overlaps and alignment, on device memory */
        kmux_stream *st = NULL;
        TU_OK(kmux_stream_create(dev, &st));
        void *buf = NULL;
        const size_t by = (size_t)p.ny * 4;
        TU_OK(kmux_malloc(dev, by * 4, &buf));
        char *b = buf;
        float one = 1.0f, zero = 0.0f;
        kmux_conv2d_args a = KMUX_CONV2D_ARGS_INIT;
        a.alpha = &one, a.beta = &zero;
        a.x = b + by, a.w = b + 2 * by, a.y = b, a.bias = b + 3 * by, a.aux = b + 3 * by + 64;
        a.bias = b + 8; /* inside y */
        cr_assert_eq(kmux_conv2d_execute(plan, st, &a), KMUX_ERR_INVALID_ARGUMENT);
        cr_assert(strstr(kmux_last_error(), "bias"), "%s: %s", ids[di], kmux_last_error());
        a.bias = b + 3 * by, a.aux = b + 4; /* inside y */
        cr_assert_eq(kmux_conv2d_execute(plan, st, &a), KMUX_ERR_INVALID_ARGUMENT);
        cr_assert(strstr(kmux_last_error(), "aux"), "%s: %s", ids[di], kmux_last_error());
        a.aux = b + 3 * by + 66; /* not 4-byte aligned */
        cr_assert_eq(kmux_conv2d_execute(plan, st, &a), KMUX_ERR_INVALID_ARGUMENT);
        cr_assert(strstr(kmux_last_error(), "aligned"), "%s: %s", ids[di], kmux_last_error());
        a.aux = b + 3 * by + 64, a.bias = b + 3 * by + 68; /* bias inside the mask */
        cr_assert_eq(kmux_conv2d_execute(plan, st, &a), KMUX_ERR_INVALID_ARGUMENT);
        cr_assert(strstr(kmux_last_error(), "overlaps"), "%s: %s", ids[di], kmux_last_error());
        TU_OK(kmux_free(dev, buf));
        TU_OK(kmux_stream_destroy(st));
        TU_OK(kmux_plan_destroy(plan));
        free(y), free(mask);
        prob_free(&p);
    }
    TU_OK(kmux_context_destroy(ctx));
}
