/*
 * test_conformance_pooling.c - the pooling family on every device under test against ref: every
 * algorithm (walked through kmux_pooling_alg_name), forward and backward, f32/f16/bf16, NCHW and
 * NHWC, geometries from one element to ResNet-50's 3x3/2 max pool, asymmetric padding, padding
 * wider than the stride (y larger than x), a global pool, more channels than the CPU kernel's
 * channel block, ties in a window (the first largest wins), NaN and Inf inputs, one shape large
 * enough to be split across threads; the backward passes also against central finite
 * differences of the same device's forward; and a case worked by hand.
 */
#include <math.h>

#include "conformance.h"

static const kmux_dtype dtypes[] = {KMUX_F32, KMUX_F16, KMUX_BF16};

typedef struct geom {
    int64_t n, c, h, w, kh, kw, sh, sw, pt, pb, pl, pr;
    int values; /* 0 random, 1 small integers (ties), 2 with NaN and Inf */
} geom;

static const geom geoms[] = {
    {1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0},   /* one element */
    {2, 3, 7, 5, 3, 2, 2, 1, 1, 1, 0, 1, 0},   /* odd sizes, asymmetric padding */
    {1, 4, 8, 8, 2, 2, 2, 2, 0, 0, 0, 0, 1},   /* 2x2/2, ties */
    {2, 5, 9, 9, 3, 3, 2, 2, 1, 1, 1, 1, 2},   /* ResNet-50's 3x3/2 pad 1, NaN and Inf */
    {1, 2, 5, 6, 5, 6, 1, 1, 0, 0, 0, 0, 0},   /* global */
    {1, 3, 4, 4, 3, 3, 1, 1, 2, 2, 2, 2, 1},   /* padding wider than the stride, ties */
    {3, 70, 6, 6, 2, 2, 1, 1, 0, 1, 1, 0, 0},  /* more channels than one CPU block */
    {2, 16, 64, 64, 3, 3, 1, 1, 1, 1, 1, 1, 0} /* split across threads */
};
#define NGEOMS (sizeof geoms / sizeof geoms[0])

static int alg_count(void) {
    int n = 0;
    while (strcmp(kmux_pooling_alg_name((kmux_pooling_alg)(n + 1)), "?") != 0)
        n++;
    return n;
}

static kmux_pooling_desc desc_of(const geom *g, int alg, int prop, kmux_layout layout,
                                 kmux_dtype t) {
    kmux_pooling_desc d = KMUX_POOLING_DESC_INIT;
    d.alg = (kmux_pooling_alg)alg, d.prop = (kmux_prop)prop, d.layout = layout, d.dtype = t;
    d.n = g->n, d.c = g->c, d.h = g->h, d.w = g->w;
    d.kernel_h = g->kh, d.kernel_w = g->kw, d.stride_h = g->sh, d.stride_w = g->sw;
    d.pad_top = g->pt, d.pad_bottom = g->pb, d.pad_left = g->pl, d.pad_right = g->pr;
    return d;
}

static void *up(kmux_device *d, kmux_stream *s, const void *h, size_t bytes) {
    void *p = NULL;
    TU_OK(kmux_malloc(d, bytes, &p));
    if (h) TU_OK(kmux_memcpy(s, p, h, bytes, KMUX_MEMCPY_HOST_TO_DEVICE));
    return p;
}

/* One execution of implementation `step` of d's plan: forward x -> out (y), backward (x, dy) ->
 * out (dx). KMUX_ERR_LAST_IMPL: the plan has no implementation `step`. */
static kmux_status run_impl(kmux_device *dev, kmux_stream *s, const kmux_pooling_desc *d,
                            const void *x, const void *dy, void *out, int step, char *impl) {
    kmux_plan *plan = NULL;
    kmux_status st = kmux_pooling_plan_create(dev, d, NULL, &plan);
    if (st != KMUX_OK) return st;
    st = cf_plan_step(plan, step);
    if (st != KMUX_OK) return st;
    kmux_plan_info info;
    TU_OK(kmux_plan_info_get(plan, &info));
    snprintf(impl, 128, "%s", info.impl);
    int64_t p, q;
    TU_OK(kmux_pooling_output_dims(d, &p, &q));
    const size_t es = kmux_dtype_size(d->dtype);
    const size_t nx = (size_t)(d->n * d->c * d->h * d->w) * es,
                 ny = (size_t)(d->n * d->c * p * q) * es;
    const int fwd = d->prop == KMUX_PROP_FORWARD;
    void *dx_ = up(dev, s, x, nx), *ddy = fwd ? NULL : up(dev, s, dy, ny);
    void *dout = up(dev, s, NULL, fwd ? ny : nx);
    kmux_pooling_args a = KMUX_POOLING_ARGS_INIT;
    if (fwd)
        a.x = dx_, a.y = dout;
    else
        a.x = dx_, a.dy = ddy, a.dx = dout;
    st = kmux_pooling_execute(plan, s, &a);
    if (st == KMUX_OK) TU_OK(kmux_memcpy(s, out, dout, fwd ? ny : nx, KMUX_MEMCPY_DEVICE_TO_HOST));
    TU_OK(kmux_stream_synchronize(s));
    TU_OK(kmux_free(dev, dx_));
    if (ddy) TU_OK(kmux_free(dev, ddy));
    TU_OK(kmux_free(dev, dout));
    TU_OK(kmux_plan_destroy(plan));
    return st;
}

/* The plan's first implementation. */
static kmux_status run(kmux_device *dev, kmux_stream *s, const kmux_pooling_desc *d, const void *x,
                       const void *dy, void *out, char *impl) {
    return run_impl(dev, s, d, x, dy, out, 0, impl);
}

static double value(uint64_t *seed, int64_t i, int kind) {
    if (kind == 1) return floor(tu_rand_uniform(seed, 0.0, 4.0)); /* 0..3: many ties */
    if (kind == 2 && i % 17 == 3) return NAN;
    if (kind == 2 && i % 19 == 5) return i % 2 ? INFINITY : -INFINITY;
    return tu_rand_uniform(seed, -3.0, 3.0);
}

/* within a rounding of the dtype of |want| + scale (two for f32 against ref's f64), NaN for
 * NaN, infinities equal */
static int close_to(kmux_dtype t, double got, double want, double scale) {
    if (isnan(want) || isnan(got)) return isnan(want) && isnan(got);
    if (isinf(want) || isinf(got)) return got == want;
    return fabs(got - want) <= 2.0 * cf_unit_roundoff(t) * (fabs(want) + scale) + 1e-30;
}

/* Every implementation of d's plan on device di against want (ref's result, no elements). */
static void check_impls(cf_env *env, int di, const kmux_pooling_desc *d, const geom *g,
                        const void *x, const void *dy, const void *want, void *got, int64_t no,
                        const char *what) {
    const kmux_dtype t = d->dtype;
    const int fwd = d->prop == KMUX_PROP_FORWARD;
    /* a dx sums up to (kh / sh + 1)(kw / sw + 1) terms of |dy| <= 2 */
    const double scale = fwd ? 3.0 : 2.0 * (double)((g->kh / g->sh + 1) * (g->kw / g->sw + 1));
    for (int step = 0;; step++) {
        char impl[128];
        const kmux_status st = run_impl(env->dev[di], env->stream[di], d, x, dy, got, step, impl);
        if (st == KMUX_ERR_LAST_IMPL) return;
        if (st == KMUX_ERR_UNSUPPORTED) {
            cf_stat.unsupported++;
            return;
        }
        if (st != KMUX_OK) {
            cf_fail("%s: %s: %s: %s", env->id[di], what, kmux_status_str(st), kmux_last_error());
            return;
        }
        cf_stat.runs++;
        int bad = 0;
        for (int64_t i = 0; i < no && bad < 3; i++) {
            const double gv = tu_get(t, got, i), wv = tu_get(t, want, i);
            if (!close_to(t, gv, wv, scale)) {
                bad++;
                cf_fail("%s (%s): %s: [%lld] got %.9g, ref %.9g", env->id[di], impl, what,
                        (long long)i, gv, wv);
            }
        }
    }
}

Test(conformance_pooling, every_algorithm_matches_ref) {
    cf_env env;
    cf_env_init(&env);
    const int nalg = alg_count();
    cr_assert_geq(nalg, 3, "the pooling table lists %d algorithms", nalg);
    uint64_t seed = 5;
    for (int di = 0; di < env.ndev; di++)
        for (int alg = 1; alg <= nalg; alg++)
            for (int prop = KMUX_PROP_FORWARD; prop <= KMUX_PROP_BACKWARD; prop++)
                for (size_t ti = 0; ti < 3; ti++)
                    for (int li = 0; li < 2; li++)
                        for (size_t gi = 0; gi < NGEOMS - (size_t)cf_small(); gi++) {
                            const geom *g = &geoms[gi];
                            const kmux_dtype t = dtypes[ti];
                            const kmux_pooling_desc d =
                                desc_of(g, alg, prop, li ? KMUX_NHWC : KMUX_NCHW, t);
                            int64_t p, q;
                            TU_OK(kmux_pooling_output_dims(&d, &p, &q));
                            const int64_t nx = g->n * g->c * g->h * g->w, ny = g->n * g->c * p * q;
                            const int fwd = prop == KMUX_PROP_FORWARD;
                            const int64_t no = fwd ? ny : nx;
                            const size_t es = kmux_dtype_size(t);
                            void *x = calloc((size_t)nx, es), *dy = calloc((size_t)ny, es);
                            void *want = calloc((size_t)no, es), *got = calloc((size_t)no, es);
                            for (int64_t i = 0; i < nx; i++)
                                tu_set(t, x, i, value(&seed, i, g->values));
                            for (int64_t i = 0; i < ny; i++)
                                tu_set(t, dy, i, tu_rand_uniform(&seed, -2.0, 2.0));
                            char rimpl[128], what[240];
                            snprintf(what, sizeof what, "%s %s %s %s geometry %zu",
                                     kmux_pooling_alg_name(d.alg), fwd ? "forward" : "backward",
                                     kmux_dtype_name(t), li ? "NHWC" : "NCHW", gi);
                            TU_OK(run(env.ref, env.ref_stream, &d, x, dy, want, rimpl));
                            check_impls(&env, di, &d, g, x, dy, want, got, no, what);
                            free(x), free(dy), free(want), free(got);
                        }
    cf_summary("every_algorithm_matches_ref");
    cf_env_fini(&env);
}

/* f32: dx of backward with dy = w is the gradient of sum(w y(x)); against central differences
 * of each device's own forward. x distinct (spaced 0.1 apart), so a 1e-2 step never changes a
 * window's maximum. */
Test(conformance_pooling, backward_is_the_derivative_of_forward) {
    cf_env env;
    cf_env_init(&env);
    static const geom gs[] = {{1, 2, 5, 5, 3, 3, 2, 2, 1, 1, 1, 1, 0},
                              {2, 1, 4, 5, 2, 3, 1, 2, 1, 0, 0, 2, 0}};
    for (int di = -1; di < env.ndev; di++) {
        kmux_device *dev = di < 0 ? env.ref : env.dev[di];
        kmux_stream *s = di < 0 ? env.ref_stream : env.stream[di];
        const char *id = di < 0 ? "ref" : env.id[di];
        for (size_t gi = 0; gi < 2; gi++)
            for (int alg = 1; alg <= alg_count(); alg++)
                for (int li = 0; li < 2; li++) {
                    const geom *g = &gs[gi];
                    kmux_pooling_desc f =
                        desc_of(g, alg, KMUX_PROP_FORWARD, li ? KMUX_NHWC : KMUX_NCHW, KMUX_F32);
                    int64_t p, q;
                    TU_OK(kmux_pooling_output_dims(&f, &p, &q));
                    const int nx = (int)(g->n * g->c * g->h * g->w),
                              ny = (int)(g->n * g->c * p * q);
                    float x[64], w[128], y[128], dx[64];
                    cr_assert_leq(nx, 64);
                    cr_assert_leq(ny, 128);
                    uint64_t seed = 23;
                    for (int i = 0; i < nx; i++) /* a permutation of 0.1 k */
                        x[i] = 0.1f * (float)((i * 37 + 11) % nx) - 1.0f;
                    for (int i = 0; i < ny; i++)
                        w[i] = (float)tu_rand_uniform(&seed, -1.0, 1.0);
                    kmux_pooling_desc b = f;
                    b.prop = KMUX_PROP_BACKWARD;
                    char impl[128];
                    const kmux_status st = run(dev, s, &b, x, w, dx, impl);
                    if (st == KMUX_ERR_UNSUPPORTED) continue;
                    TU_OK(st);
                    const float eps = 1e-2f;
                    for (int i = 0; i < nx; i++) {
                        double fpm[2];
                        for (int k = 0; k < 2; k++) {
                            float xp[64];
                            memcpy(xp, x, sizeof xp);
                            xp[i] += k ? -eps : eps;
                            TU_OK(run(dev, s, &f, xp, NULL, y, impl));
                            double sum = 0.0;
                            for (int j = 0; j < ny; j++)
                                sum += (double)w[j] * y[j];
                            fpm[k] = sum;
                        }
                        const double fd = (fpm[0] - fpm[1]) / (2.0 * eps);
                        if (fabs(fd - dx[i]) > 2e-3 * (1.0 + fabs(fd)))
                            cf_fail("%s (%s): %s %s geometry %zu: d/dx[%d]: backward %.7g, finite "
                                    "difference %.7g",
                                    id, impl, kmux_pooling_alg_name(f.alg), li ? "NHWC" : "NCHW",
                                    gi, i, (double)dx[i], fd);
                    }
                    cf_stat.runs++;
                }
    }
    cf_summary("backward_is_the_derivative_of_forward");
    cf_env_fini(&env);
}

/* 1 x 1 x 4 x 4 of 0..15 pooled 2x2/2, and 1 x 1 x 2 x 2 of 1..4 pooled 2x2/1 with padding 1 all
 * round (3 x 3 windows, each corner holding one element), by hand, on ref and every device. */
Test(conformance_pooling, worked_by_hand) {
    cf_env env;
    cf_env_init(&env);
    for (int di = -1; di < env.ndev; di++) {
        kmux_device *dev = di < 0 ? env.ref : env.dev[di];
        kmux_stream *s = di < 0 ? env.ref_stream : env.stream[di];
        const char *id = di < 0 ? "ref" : env.id[di];
        float x[16], y[9], dx[16];
        for (int i = 0; i < 16; i++)
            x[i] = (float)i;
        const geom a = {1, 1, 4, 4, 2, 2, 2, 2, 0, 0, 0, 0, 0};
        char impl[128];
        kmux_pooling_desc d = desc_of(&a, KMUX_POOLING_MAX, KMUX_PROP_FORWARD, KMUX_NCHW, KMUX_F32);
        kmux_status st = run(dev, s, &d, x, NULL, y, impl);
        if (st == KMUX_ERR_UNSUPPORTED) continue;
        TU_OK(st);
        const float max4[4] = {5, 7, 13, 15}, avg4[4] = {2.5f, 4.5f, 10.5f, 12.5f};
        for (int i = 0; i < 4; i++)
            cr_expect_eq(y[i], max4[i], "%s: max y[%d] = %g", id, i, (double)y[i]);
        d.alg = KMUX_POOLING_AVG_INCLUDE_PAD;
        TU_OK(run(dev, s, &d, x, NULL, y, impl));
        for (int i = 0; i < 4; i++)
            cr_expect_eq(y[i], avg4[i], "%s: avg y[%d] = %g", id, i, (double)y[i]);
        /* max backward: dy = 1, 2, 3, 4 lands on 5, 7, 13, 15 */
        const float dy4[4] = {1, 2, 3, 4};
        d.alg = KMUX_POOLING_MAX, d.prop = KMUX_PROP_BACKWARD;
        TU_OK(run(dev, s, &d, x, dy4, dx, impl));
        for (int i = 0; i < 16; i++) {
            const float want = i == 5 ? 1 : i == 7 ? 2 : i == 13 ? 3 : i == 15 ? 4 : 0;
            cr_expect_eq(dx[i], want, "%s: max dx[%d] = %g", id, i, (double)dx[i]);
        }
        const geom b = {1, 1, 2, 2, 2, 2, 1, 1, 1, 1, 1, 1, 0};
        const float x4[4] = {1, 2, 3, 4};
        /* include padding: every window / 4; exclude: the corners are the element itself, the
         * edges the mean of two, the centre of all four */
        const float inc[9] = {0.25f, 0.75f, 0.5f, 1.0f, 2.5f, 1.5f, 0.75f, 1.75f, 1.0f};
        const float exc[9] = {1, 1.5f, 2, 2, 2.5f, 3, 3, 3.5f, 4};
        d = desc_of(&b, KMUX_POOLING_AVG_INCLUDE_PAD, KMUX_PROP_FORWARD, KMUX_NCHW, KMUX_F32);
        TU_OK(run(dev, s, &d, x4, NULL, y, impl));
        for (int i = 0; i < 9; i++)
            cr_expect_eq(y[i], inc[i], "%s: include-pad y[%d] = %g", id, i, (double)y[i]);
        d.alg = KMUX_POOLING_AVG_EXCLUDE_PAD;
        TU_OK(run(dev, s, &d, x4, NULL, y, impl));
        for (int i = 0; i < 9; i++)
            cr_expect_eq(y[i], exc[i], "%s: exclude-pad y[%d] = %g", id, i, (double)y[i]);
        cf_stat.runs++;
    }
    cf_summary("worked_by_hand");
    cf_env_fini(&env);
}
