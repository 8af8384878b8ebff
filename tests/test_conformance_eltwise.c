/*
 * test_conformance_eltwise.c - the element-wise family on every device under test against ref:
 * every algorithm of the table (walked through kmux_eltwise_alg_name, so a new row is covered
 * without a change here), forward and backward (from src, and from dst where the table allows
 * it), f32/f16/bf16, sizes 1 to past the CPU kernels' block and thread split, special values
 * (0, -0, +-1, NaN, +-Inf, subnormal, +-100) in every input, in place and out of place; every
 * backward also against central finite differences of the same device's forward, and the
 * backward from dst against the one from src. KMUX_CONFORMANCE_SHAPES=small (a device in the
 * GPU emulator) leaves out the largest sizes: the kernel's grid-stride loop is still crossed at
 * 1000 elements (4 blocks of 256 threads).
 */
#include <math.h>

#include "conformance.h"
#include "dispatch/common/kmux_eltwise.h"

static const kmux_dtype dtypes[] = {KMUX_F32, KMUX_F16, KMUX_BF16};
static const int64_t sizes[] = {1, 7, 1000, 4099};
static const double params[][2] = {{0.0, 0.0}, {0.5, -0.25}};
static const double specials[] = {0.0,       -0.0,  1.0,   -1.0,   NAN, INFINITY,
                                  -INFINITY, 1e-40, 100.0, -100.0, 0.5, -3.0};
#define NSPECIAL ((int64_t)(sizeof specials / sizeof specials[0]))

/* Every algorithm, through the public name table: values 1, 2, ... until the first unknown. */
static int alg_count(void) {
    int n = 0;
    while (strcmp(kmux_eltwise_alg_name((kmux_eltwise_alg)(n + 1)), "?") != 0)
        n++;
    return n;
}

typedef struct dev_io {
    kmux_device *dev;
    kmux_stream *s;
} dev_io;

static void *up(dev_io *d, const void *h, size_t bytes) {
    void *p = NULL;
    TU_OK(kmux_malloc(d->dev, bytes, &p));
    TU_OK(kmux_memcpy(d->s, p, h, bytes, KMUX_MEMCPY_HOST_TO_DEVICE));
    return p;
}

/* Runs implementation `step` of desc's plan on the device with host inputs x (src or dst, as the
 * direction reads) and dd; the result into out (host). in_place: the output buffer is the
 * input's (x forward, dd backward). Returns the plan status (KMUX_ERR_UNSUPPORTED: the device
 * does not run it; KMUX_ERR_LAST_IMPL: the plan has no implementation `step`). */
static kmux_status run_impl(dev_io *d, const kmux_eltwise_desc *desc, const void *x, const void *dd,
                            void *out, int in_place, int step, char *impl, size_t impl_size) {
    const size_t bytes = (size_t)desc->n * kmux_dtype_size(desc->dtype);
    kmux_plan *plan = NULL;
    kmux_status st = kmux_eltwise_plan_create(d->dev, desc, NULL, &plan);
    if (st != KMUX_OK) return st;
    st = cf_plan_step(plan, step);
    if (st != KMUX_OK) return st;
    kmux_plan_info info;
    TU_OK(kmux_plan_info_get(plan, &info));
    snprintf(impl, impl_size, "%s", info.impl);
    void *dx = up(d, x, bytes), *ddd = dd ? up(d, dd, bytes) : NULL, *dout = NULL;
    if (!in_place) TU_OK(kmux_malloc(d->dev, bytes, &dout));
    kmux_eltwise_args a = KMUX_ELTWISE_ARGS_INIT;
    if (desc->prop == KMUX_PROP_FORWARD) {
        a.src = dx;
        a.dst = in_place ? dx : dout;
    } else {
        if (desc->use_dst_for_bwd)
            a.dst = dx;
        else
            a.src = dx;
        a.diff_dst = ddd;
        a.diff_src = in_place ? ddd : dout;
    }
    void *res = desc->prop == KMUX_PROP_FORWARD ? (void *)a.dst : a.diff_src;
    st = kmux_eltwise_execute(plan, d->s, &a);
    if (st == KMUX_OK) TU_OK(kmux_memcpy(d->s, out, res, bytes, KMUX_MEMCPY_DEVICE_TO_HOST));
    TU_OK(kmux_stream_synchronize(d->s));
    kmux_free(d->dev, dx);
    if (ddd) kmux_free(d->dev, ddd);
    if (dout) kmux_free(d->dev, dout);
    TU_OK(kmux_plan_destroy(plan));
    return st;
}

/* Implementation 0 (the plan's default). */
static kmux_status run(dev_io *d, const kmux_eltwise_desc *desc, const void *x, const void *dd,
                       void *out, int in_place, char *impl, size_t impl_size) {
    return run_impl(d, desc, x, dd, out, in_place, 0, impl, impl_size);
}

/* got vs want (ref, rounded to the dtype): NaN where ref has NaN, the same infinity, else within
 * a relative and absolute tolerance of the dtype (f32: the f32 formulas against ref's f64 ones;
 * f16/bf16: one unit in the last place of the result, the f32 value rounded once). */
static int close_enough(kmux_dtype t, double got, double want) {
    if (isnan(want)) return isnan(got);
    if (isinf(want)) return got == want;
    if (!isfinite(got)) return 0;
    const double rel = t == KMUX_F32 ? 2e-5 : t == KMUX_F16 ? 1.0 / 1024 : 1.0 / 128;
    const double abs_tol = t == KMUX_F32 ? 1e-6 : t == KMUX_F16 ? 1e-4 : 1e-3;
    return fabs(got - want) <= abs_tol + rel * fabs(want);
}

static void fill(kmux_dtype t, void *buf, int64_t n, uint64_t *seed, double lo, double hi,
                 int with_specials) {
    for (int64_t i = 0; i < n; i++) {
        double v = with_specials && i < NSPECIAL ? specials[i] : tu_rand_uniform(seed, lo, hi);
        tu_set(t, buf, i, v);
    }
}

static void describe(const kmux_eltwise_desc *d, char *buf, size_t size) {
    snprintf(buf, size, "%s %s%s %s n=%lld alpha=%g beta=%g", kmux_eltwise_alg_name(d->alg),
             d->prop == KMUX_PROP_FORWARD ? "forward" : "backward",
             d->use_dst_for_bwd ? " (from dst)" : "", kmux_dtype_name(d->dtype), (long long)d->n,
             (double)d->alpha, (double)d->beta);
}

/* One description on one device against ref: every implementation of its plan, out of place and
 * in place. */
static void check_case(cf_env *env, int di, const kmux_eltwise_desc *d, const void *x,
                       const void *dd) {
    dev_io ref = {env->ref, env->ref_stream}, dv = {env->dev[di], env->stream[di]};
    const size_t bytes = (size_t)d->n * kmux_dtype_size(d->dtype);
    void *want = malloc(bytes), *got = malloc(bytes);
    char impl[256], rimpl[256], what[256];
    describe(d, what, sizeof what);
    TU_OK(run(&ref, d, x, dd, want, 0, rimpl, sizeof rimpl));
    for (int run_no = 0; run_no < 2 * 16; run_no++) {
        const int in_place = run_no % 2, step = run_no / 2;
        tu_fill_value(d->dtype, got, d->n, NAN);
        kmux_status st = run_impl(&dv, d, x, dd, got, in_place, step, impl, sizeof impl);
        if (st == KMUX_ERR_LAST_IMPL) break;
        if (st == KMUX_ERR_UNSUPPORTED) {
            cf_stat.unsupported++;
            break;
        }
        if (st != KMUX_OK) {
            cf_fail("%s: %s: %s: %s", env->id[di], what, kmux_status_str(st), kmux_last_error());
            break;
        }
        cf_stat.runs++;
        int bad = 0;
        for (int64_t i = 0; i < d->n && bad < 3; i++) {
            const double g = tu_get(d->dtype, got, i), w = tu_get(d->dtype, want, i);
            if (close_enough(d->dtype, g, w)) continue;
            bad++;
            cf_fail("%s (%s): %s%s: [%lld] x = %.9g dd = %.9g: got %.9g, ref %.9g", env->id[di],
                    impl, what, in_place ? " in place" : "", (long long)i, tu_get(d->dtype, x, i),
                    dd ? tu_get(d->dtype, dd, i) : 0.0, g, w);
        }
    }
    free(want);
    free(got);
}

Test(conformance_eltwise, every_algorithm_matches_ref) {
    cf_env env;
    cf_env_init(&env);
    const int nalg = alg_count();
    cr_assert_geq(nalg, 7, "the element-wise table lists %d algorithms", nalg);
    uint64_t seed = 7;
    for (int di = 0; di < env.ndev; di++)
        for (int alg = 1; alg <= nalg; alg++)
            for (size_t ti = 0; ti < sizeof dtypes / sizeof dtypes[0]; ti++)
                for (size_t si = 0; si < sizeof sizes / sizeof sizes[0] - (size_t)cf_small(); si++)
                    for (size_t pi = 0; pi < sizeof params / sizeof params[0]; pi++)
                        for (int dir = 0; dir < 3; dir++) {
                            kmux_eltwise_desc d = KMUX_ELTWISE_DESC_INIT;
                            d.alg = (kmux_eltwise_alg)alg;
                            d.dtype = dtypes[ti];
                            d.n = sizes[si];
                            d.alpha = (float)params[pi][0];
                            d.beta = (float)params[pi][1];
                            d.prop = dir == 0 ? KMUX_PROP_FORWARD : KMUX_PROP_BACKWARD;
                            d.use_dst_for_bwd = dir == 2;
                            const unsigned fl = kmux_eltwise_flags(alg);
                            if (dir == 2 && (!(fl & KMUX_ELT_DST_BWD) ||
                                             ((fl & KMUX_ELT_DST_BWD_ALPHA_NONNEG) && d.alpha < 0)))
                                continue;
                            const size_t bytes = (size_t)d.n * kmux_dtype_size(d.dtype);
                            void *x = malloc(bytes), *dd = malloc(bytes);
                            fill(d.dtype, x, d.n, &seed, -6.0, 6.0, 1);
                            fill(d.dtype, dd, d.n, &seed, -2.0, 2.0, 1);
                            if (dir == 2) { /* a dst the forward could have written */
                                kmux_eltwise_desc f = d;
                                f.prop = KMUX_PROP_FORWARD;
                                f.use_dst_for_bwd = 0;
                                char impl[256];
                                dev_io ref = {env.ref, env.ref_stream};
                                void *y = malloc(bytes);
                                TU_OK(run(&ref, &f, x, NULL, y, 0, impl, sizeof impl));
                                memcpy(x, y, bytes);
                                free(y);
                            }
                            check_case(&env, di, &d, x, dir ? dd : NULL);
                            free(x);
                            free(dd);
                        }
    cf_summary("every_algorithm_matches_ref");
    cf_env_fini(&env);
}

/* f32 on one device: (f(x + h) - f(x - h)) / 2h against the backward with diff_dst = 1, at
 * points away from kinks and poles (|x| in [0.25, 3]); and the backward from dst against the
 * one from src. ref is checked too: it is the oracle of the other test. */
Test(conformance_eltwise, backward_is_the_derivative_of_forward) {
    cf_env env;
    cf_env_init(&env);
    const int nalg = alg_count();
    enum { N = 64 };
    for (int di = -1; di < env.ndev; di++) {
        dev_io dv = {di < 0 ? env.ref : env.dev[di], di < 0 ? env.ref_stream : env.stream[di]};
        const char *id = di < 0 ? "ref" : env.id[di];
        for (int alg = 1; alg <= nalg; alg++) {
            float x[N], xp[N], xm[N], yp[N], ym[N], ones[N], g[N], y[N], gd[N];
            const float h = 1e-2f;
            uint64_t seed = 11;
            for (int i = 0; i < N; i++) {
                double m = tu_rand_uniform(&seed, 0.25, 3.0);
                x[i] = (float)(i % 2 ? m : -m);
                xp[i] = x[i] + h;
                xm[i] = x[i] - h;
                ones[i] = 1.0f;
            }
            kmux_eltwise_desc d = KMUX_ELTWISE_DESC_INIT;
            d.alg = (kmux_eltwise_alg)alg;
            d.n = N;
            d.alpha = 0.5f;
            d.beta = -0.25f;
            char impl[256], what[256];
            if (run(&dv, &d, xp, NULL, yp, 0, impl, sizeof impl) == KMUX_ERR_UNSUPPORTED) continue;
            TU_OK(run(&dv, &d, xm, NULL, ym, 0, impl, sizeof impl));
            TU_OK(run(&dv, &d, x, NULL, y, 0, impl, sizeof impl));
            d.prop = KMUX_PROP_BACKWARD;
            TU_OK(run(&dv, &d, x, ones, g, 0, impl, sizeof impl));
            describe(&d, what, sizeof what);
            for (int i = 0; i < N; i++) {
                const double fd = ((double)yp[i] - (double)ym[i]) / (2.0 * h);
                if (fabs(fd - g[i]) > 2e-3 * (1.0 + fabs(fd)))
                    cf_fail("%s (%s): %s: x = %.7g: backward %.7g, finite difference %.7g", id,
                            impl, what, (double)x[i], (double)g[i], fd);
            }
            cf_stat.runs++;
            const unsigned fl = kmux_eltwise_flags(alg);
            if (!(fl & KMUX_ELT_DST_BWD)) continue;
            d.use_dst_for_bwd = 1;
            TU_OK(run(&dv, &d, y, ones, gd, 0, impl, sizeof impl));
            describe(&d, what, sizeof what);
            for (int i = 0; i < N; i++)
                if (fabs((double)gd[i] - g[i]) > 1e-5 * (1.0 + fabs((double)g[i])))
                    cf_fail("%s (%s): %s: x = %.7g: from dst %.9g, from src %.9g", id, impl, what,
                            (double)x[i], (double)gd[i], (double)g[i]);
        }
    }
    cf_summary("backward_is_the_derivative_of_forward");
    cf_env_fini(&env);
}

/* Past the CPU kernels' thread split (KMUX_CAST_PARALLEL_MIN elements): the ranges cover every
 * element once. */
Test(conformance_eltwise, large_tensor_matches_ref) {
    cf_env env;
    cf_env_init(&env);
    uint64_t seed = 3;
    if (cf_small()) cr_skip_test("KMUX_CONFORMANCE_SHAPES=small: no tensor of a million elements");
    for (int di = 0; di < env.ndev; di++) {
        kmux_eltwise_desc d = KMUX_ELTWISE_DESC_INIT;
        d.alg = KMUX_ELTWISE_GELU_TANH;
        d.dtype = KMUX_BF16;
        d.n = (1 << 20) + 4099;
        const size_t bytes = (size_t)d.n * 2;
        void *x = malloc(bytes);
        fill(d.dtype, x, d.n, &seed, -6.0, 6.0, 1);
        check_case(&env, di, &d, x, NULL);
        free(x);
    }
    cf_summary("large_tensor_matches_ref");
    cf_env_fini(&env);
}
