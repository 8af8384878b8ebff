/*
 * test_conformance_binary.c - the binary and reduction families on every device under test
 * against ref: every algorithm (walked through kmux_binary_alg_name / kmux_reduction_alg_name),
 * f32/f16/bf16 (and a bf16 source reduced into f32), shapes from one element to a bias of an
 * NCHW, NHWC and row-major tensor, odd sizes, size-1 axes, broadcasting and reduction over inner,
 * outer and middle axes, a full reduction large enough to be split across threads, in place
 * (dst == src0), NaN and Inf inputs, alpha and beta scales.
 */
#include <math.h>

#include "conformance.h"

static const kmux_dtype dtypes[] = {KMUX_F32, KMUX_F16, KMUX_BF16};

/* full shape, and its partner (src1 of a binary op, dst of a reduction) */
typedef struct shape {
    int nd;
    int64_t full[4], part[4];
} shape;

static const shape shapes[] = {
    {1, {1}, {1}},
    {1, {7}, {1}},
    {1, {37}, {37}},
    {2, {5, 3}, {1, 3}},                 /* row-major bias */
    {2, {5, 3}, {5, 1}},                 /* per-row */
    {4, {3, 5, 4, 6}, {1, 5, 1, 1}},     /* NCHW bias */
    {4, {3, 4, 6, 5}, {1, 1, 1, 5}},     /* NHWC bias */
    {4, {2, 130, 3, 3}, {1, 130, 1, 1}}, /* more channels than one tile */
    {3, {4, 1, 9}, {1, 1, 9}},           /* a size-1 axis */
    {3, {3, 4, 5}, {3, 1, 5}},           /* the middle axis */
    {4, {2, 3, 4, 5}, {2, 3, 4, 5}},     /* nothing broadcast or reduced */
    {2, {300, 70}, {1, 70}},             /* a short bias over many rows */
    {1, {1 << 21}, {1}},                 /* split across threads (reduction) */
    {2, {8192, 130}, {1, 130}},          /* a long bias gradient, rows split across threads */
};
/* the large shapes (the last two): reductions only, and not where cf_small() (emulated GPUs) */
#define NLARGE 2
#define NSHAPES (sizeof shapes / sizeof shapes[0])

static int count_algs(const char *(*name)(int)) {
    int n = 0;
    while (strcmp(name(n + 1), "?") != 0)
        n++;
    return n;
}
static const char *bin_name(int a) {
    return kmux_binary_alg_name((kmux_binary_alg)a);
}
static const char *red_name(int a) {
    return kmux_reduction_alg_name((kmux_reduction_alg)a);
}

static int64_t elems(int nd, const int64_t *d) {
    int64_t n = 1;
    for (int i = 0; i < nd; i++)
        n *= d[i];
    return n;
}

static void *up(kmux_device *d, kmux_stream *s, const void *h, size_t bytes) {
    void *p = NULL;
    TU_OK(kmux_malloc(d, bytes, &p));
    if (h) TU_OK(kmux_memcpy(s, p, h, bytes, KMUX_MEMCPY_HOST_TO_DEVICE));
    return p;
}

/* Implementation `step` of d's plan on (a, b) into out (host). KMUX_ERR_LAST_IMPL: the plan has
 * no implementation `step`. */
static kmux_status run_binary(kmux_device *dev, kmux_stream *s, const kmux_binary_desc *d,
                              const void *a, const void *b, void *out, int in_place, int step,
                              char *impl) {
    kmux_plan *plan = NULL;
    kmux_status st = kmux_binary_plan_create(dev, d, NULL, &plan);
    if (st != KMUX_OK) return st;
    st = cf_plan_step(plan, step);
    if (st != KMUX_OK) return st;
    kmux_plan_info info;
    TU_OK(kmux_plan_info_get(plan, &info));
    snprintf(impl, 128, "%s", info.impl);
    const size_t es = kmux_dtype_size(d->dtype), n = (size_t)elems(d->ndims, d->dims) * es,
                 n1 = (size_t)elems(d->ndims, d->src1_dims) * es;
    void *x = up(dev, s, a, n), *y = up(dev, s, b, n1), *z = in_place ? x : up(dev, s, NULL, n);
    kmux_binary_args args = KMUX_BINARY_ARGS_INIT;
    args.src0 = x, args.src1 = y, args.dst = z;
    st = kmux_binary_execute(plan, s, &args);
    if (st == KMUX_OK) TU_OK(kmux_memcpy(s, out, z, n, KMUX_MEMCPY_DEVICE_TO_HOST));
    TU_OK(kmux_stream_synchronize(s));
    TU_OK(kmux_free(dev, x));
    TU_OK(kmux_free(dev, y));
    if (!in_place) TU_OK(kmux_free(dev, z));
    TU_OK(kmux_plan_destroy(plan));
    return st;
}

static kmux_status run_reduction(kmux_device *dev, kmux_stream *s, const kmux_reduction_desc *d,
                                 const void *a, void *out, char *impl) {
    kmux_plan *plan = NULL;
    kmux_status st = kmux_reduction_plan_create(dev, d, NULL, &plan);
    if (st != KMUX_OK) return st;
    kmux_plan_info info;
    TU_OK(kmux_plan_info_get(plan, &info));
    snprintf(impl, 128, "%s", info.impl);
    const size_t n = (size_t)elems(d->ndims, d->src_dims) * kmux_dtype_size(d->src_dtype),
                 m = (size_t)elems(d->ndims, d->dst_dims) * kmux_dtype_size(d->dst_dtype);
    void *x = up(dev, s, a, n), *z = up(dev, s, NULL, m);
    kmux_reduction_args args = KMUX_REDUCTION_ARGS_INIT;
    args.src = x, args.dst = z;
    st = kmux_reduction_execute(plan, s, &args);
    if (st == KMUX_OK) TU_OK(kmux_memcpy(s, out, z, m, KMUX_MEMCPY_DEVICE_TO_HOST));
    TU_OK(kmux_stream_synchronize(s));
    TU_OK(kmux_free(dev, x));
    TU_OK(kmux_free(dev, z));
    TU_OK(kmux_plan_destroy(plan));
    return st;
}

/* within one rounding of the dtype (two for f32 against ref's f64 rounding), NaN for NaN,
 * signed zeros equal */
static int close_to(kmux_dtype t, double got, double want, double scale) {
    if (isnan(want) || isnan(got)) return isnan(want) && isnan(got);
    if (isinf(want) || isinf(got)) return got == want;
    return fabs(got - want) <= 2.0 * cf_unit_roundoff(t) * (fabs(want) + scale) + 1e-30;
}

static double value(uint64_t *seed, int64_t i, int specials) {
    if (specials && i % 11 == 3) return NAN;
    if (specials && i % 13 == 5) return i % 2 ? INFINITY : -INFINITY;
    return tu_rand_uniform(seed, -3.0, 3.0);
}

/* Every implementation of d's plan on device di against want (ref's result). */
static void check_binary(cf_env *env, int di, const kmux_binary_desc *d, const void *a,
                         const void *b, const void *want, void *got, int in_place,
                         const char *what) {
    const kmux_dtype t = d->dtype;
    const int64_t n = elems(d->ndims, d->dims);
    for (int step = 0;; step++) {
        char impl[128];
        const kmux_status st =
            run_binary(env->dev[di], env->stream[di], d, a, b, got, in_place, step, impl);
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
        for (int64_t i = 0; i < n && bad < 3; i++) {
            const double g = tu_get(t, got, i), w = tu_get(t, want, i);
            const double sc = fabs(d->alpha * tu_get(t, a, i)) + 8.0;
            if (!close_to(t, g, w, sc)) {
                bad++;
                cf_fail("%s (%s): %s: [%lld] got %.9g, ref %.9g", env->id[di], impl, what,
                        (long long)i, g, w);
            }
        }
    }
}

Test(conformance_binary, every_binary_algorithm_matches_ref) {
    cf_env env;
    cf_env_init(&env);
    const int nalg = count_algs(bin_name);
    cr_assert_geq(nalg, 6, "the binary table lists %d algorithms", nalg);
    uint64_t seed = 7;
    for (int di = 0; di < env.ndev; di++)
        for (int alg = 1; alg <= nalg; alg++)
            for (size_t ti = 0; ti < 3; ti++)
                for (size_t si = 0; si < NSHAPES - NLARGE; si++) {
                    const shape *sh = &shapes[si];
                    const kmux_dtype t = dtypes[ti];
                    kmux_binary_desc d = KMUX_BINARY_DESC_INIT;
                    d.alg = (kmux_binary_alg)alg, d.dtype = t, d.ndims = sh->nd;
                    memcpy(d.dims, sh->full, sizeof sh->full);
                    memcpy(d.src1_dims, sh->part, sizeof sh->part);
                    if (si % 3 == 1) d.alpha = 0.5f, d.beta = -2.0f;
                    const int in_place = si % 2, specials = si % 4 == 2;
                    const int64_t n = elems(d.ndims, d.dims), n1 = elems(d.ndims, d.src1_dims);
                    const size_t es = kmux_dtype_size(t);
                    void *a = calloc((size_t)n, es), *b = calloc((size_t)n1, es),
                         *want = calloc((size_t)n, es), *got = calloc((size_t)n, es);
                    for (int64_t i = 0; i < n; i++)
                        tu_set(t, a, i, value(&seed, i, specials));
                    for (int64_t i = 0; i < n1; i++) /* no zero divisor but one */
                        tu_set(t, b, i, i == 2 ? 0.0 : value(&seed, i + 1, specials) + 0.01);
                    char rimpl[128], what[200];
                    snprintf(what, sizeof what, "%s %s shape %zu alpha %g beta %g%s", bin_name(alg),
                             kmux_dtype_name(t), si, (double)d.alpha, (double)d.beta,
                             in_place ? " in place" : "");
                    TU_OK(run_binary(env.ref, env.ref_stream, &d, a, b, want, 0, 0, rimpl));
                    check_binary(&env, di, &d, a, b, want, got, in_place, what);
                    free(a), free(b), free(want), free(got);
                }
    cf_summary("every_binary_algorithm_matches_ref");
    cf_env_fini(&env);
}

Test(conformance_binary, every_reduction_algorithm_matches_ref) {
    cf_env env;
    cf_env_init(&env);
    const int nalg = count_algs(red_name);
    cr_assert_geq(nalg, 6, "the reduction table lists %d algorithms", nalg);
    static const kmux_dtype pairs[][2] = {
        {KMUX_F32, KMUX_F32}, {KMUX_BF16, KMUX_F32}, {KMUX_F16, KMUX_F16}, {KMUX_BF16, KMUX_BF16}};
    uint64_t seed = 11;
    for (int di = 0; di < env.ndev; di++)
        for (int alg = 1; alg <= nalg; alg++)
            for (size_t pi = 0; pi < 4; pi++)
                for (size_t si = 0; si < NSHAPES - NLARGE * (size_t)cf_small(); si++) {
                    const shape *sh = &shapes[si];
                    const kmux_dtype ts = pairs[pi][0], td = pairs[pi][1];
                    kmux_reduction_desc d = KMUX_REDUCTION_DESC_INIT;
                    d.alg = (kmux_reduction_alg)alg, d.src_dtype = ts, d.dst_dtype = td;
                    d.ndims = sh->nd;
                    memcpy(d.src_dims, sh->full, sizeof sh->full);
                    memcpy(d.dst_dims, sh->part, sizeof sh->part);
                    const int specials = si == 5 || si == 9;
                    const int64_t n = elems(d.ndims, d.src_dims), m = elems(d.ndims, d.dst_dims);
                    void *a = calloc((size_t)n, kmux_dtype_size(ts));
                    void *want = calloc((size_t)m, kmux_dtype_size(td)),
                         *got = calloc((size_t)m, kmux_dtype_size(td));
                    double sum_abs = 0.0;
                    for (int64_t i = 0; i < n; i++) {
                        /* NaN in one output of the special shapes; Inf where it cannot meet NaN */
                        const double v = specials && i == 4 ? NAN
                                         : specials && i == n - 1
                                             ? INFINITY
                                             : tu_rand_uniform(&seed, -3.0, 3.0);
                        tu_set(ts, a, i, v);
                        if (isfinite(v)) sum_abs += fabs(tu_get(ts, a, i));
                    }
                    char impl[128], rimpl[128], what[200];
                    snprintf(what, sizeof what, "%s %s->%s shape %zu", red_name(alg),
                             kmux_dtype_name(ts), kmux_dtype_name(td), si);
                    TU_OK(run_reduction(env.ref, env.ref_stream, &d, a, want, rimpl));
                    kmux_status st = run_reduction(env.dev[di], env.stream[di], &d, a, got, impl);
                    if (st == KMUX_ERR_UNSUPPORTED) {
                        cf_stat.unsupported++;
                    } else if (st != KMUX_OK) {
                        cf_fail("%s: %s: %s: %s", env.id[di], what, kmux_status_str(st),
                                kmux_last_error());
                    } else {
                        cf_stat.runs++;
                        int bad = 0;
                        for (int64_t j = 0; j < m && bad < 3; j++) {
                            const double g = tu_get(td, got, j), w = tu_get(td, want, j);
                            /* f64 accumulation in another order: within 1e-12 of the sum of
                             * magnitudes, then one rounding */
                            if (!close_to(td, g, w, 0.0) && !(fabs(g - w) <= 1e-12 * sum_abs)) {
                                bad++;
                                cf_fail("%s (%s): %s: [%lld] got %.9g, ref %.9g", env.id[di], impl,
                                        what, (long long)j, g, w);
                            }
                        }
                    }
                    free(a), free(want), free(got);
                }
    cf_summary("every_reduction_algorithm_matches_ref");
    cf_env_fini(&env);
}

/* The bias-add and its gradient as a layer uses them, by hand: y = x + b over NCHW, then
 * db = sum over N, H, W of dy, on every device. */
Test(conformance_binary, bias_add_and_bias_gradient_by_hand) {
    cf_env env;
    cf_env_init(&env);
    for (int di = 0; di < env.ndev; di++) {
        float x[2 * 3 * 2], b[3] = {1.0f, 10.0f, 100.0f}, y[12], db[3];
        for (int i = 0; i < 12; i++)
            x[i] = (float)i;
        kmux_binary_desc d = KMUX_BINARY_DESC_INIT;
        d.ndims = 3;
        const int64_t full[3] = {2, 3, 2}, part[3] = {1, 3, 1};
        memcpy(d.dims, full, sizeof full), memcpy(d.src1_dims, part, sizeof part);
        char impl[128];
        kmux_status st = run_binary(env.dev[di], env.stream[di], &d, x, b, y, 0, 0, impl);
        if (st == KMUX_ERR_UNSUPPORTED) continue;
        TU_OK(st);
        for (int i = 0; i < 12; i++)
            cr_expect_eq(y[i], (float)i + b[(i / 2) % 3], "%s: y[%d] = %g", env.id[di], i,
                         (double)y[i]);
        kmux_reduction_desc r = KMUX_REDUCTION_DESC_INIT;
        r.ndims = 3;
        memcpy(r.src_dims, full, sizeof full), memcpy(r.dst_dims, part, sizeof part);
        TU_OK(run_reduction(env.dev[di], env.stream[di], &r, x, db, impl));
        /* channel c: x = 2c, 2c+1 (n 0) and 6+2c, 7+2c (n 1): 14 + 8c */
        for (int c = 0; c < 3; c++)
            cr_expect_eq(db[c], 14.0f + 8.0f * (float)c, "%s: db[%d] = %g", env.id[di], c,
                         (double)db[c]);
        cf_stat.runs++;
    }
    cf_summary("bias_add_and_bias_gradient_by_hand");
    cf_env_fini(&env);
}
