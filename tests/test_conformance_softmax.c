/*
 * test_conformance_softmax.c - the softmax family on every device under test against ref: every
 * algorithm (walked through kmux_softmax_alg_name), forward and backward, f32/f16/bf16, shapes
 * from 1 x 1 to rows of 1000, logits far apart (+-100: no overflow), a NaN logit, label smoothing,
 * a gradient scale, a label outside [0, cols) (NaN loss and gradient row, no crash); the
 * cross-entropy's gradient and the backward passes also against central finite differences of
 * the same device's forward.
 */
#include <math.h>

#include "conformance.h"

static const kmux_dtype dtypes[] = {KMUX_F32, KMUX_F16, KMUX_BF16};
static const int64_t shapes[][2] = {{1, 1}, {3, 10}, {64, 10}, {7, 1000}};

static int alg_count(void) {
    int n = 0;
    while (strcmp(kmux_softmax_alg_name((kmux_softmax_alg)(n + 1)), "?") != 0)
        n++;
    return n;
}

typedef struct io {
    void *x, *y, *dy, *dx; /* host, rows * cols of dtype */
    int32_t *labels, *argmax;
    float *loss, mean, scale;
} io;

static void *up(kmux_device *d, kmux_stream *s, const void *h, size_t bytes) {
    void *p = NULL;
    TU_OK(kmux_malloc(d, bytes, &p));
    if (h) TU_OK(kmux_memcpy(s, p, h, bytes, KMUX_MEMCPY_HOST_TO_DEVICE));
    return p;
}

/* One execution of implementation `step` of desc's plan on dev: the inputs of h up, the outputs
 * of h down. KMUX_ERR_LAST_IMPL: the plan has no implementation `step`. */
static kmux_status run_impl(kmux_device *dev, kmux_stream *s, const kmux_softmax_desc *d, io *h,
                            int step, char *impl, size_t impl_size) {
    kmux_plan *plan = NULL;
    kmux_status st = kmux_softmax_plan_create(dev, d, NULL, &plan);
    if (st != KMUX_OK) return st;
    st = cf_plan_step(plan, step);
    if (st != KMUX_OK) return st;
    kmux_plan_info info;
    TU_OK(kmux_plan_info_get(plan, &info));
    snprintf(impl, impl_size, "%s", info.impl);
    const size_t n = (size_t)(d->rows * d->cols) * kmux_dtype_size(d->dtype),
                 r4 = (size_t)d->rows * 4;
    void *x = up(dev, s, h->x, n), *y = up(dev, s, h->y, n), *dy = up(dev, s, h->dy, n),
         *dx = up(dev, s, NULL, n), *lab = up(dev, s, h->labels, r4), *loss = up(dev, s, NULL, r4),
         *am = up(dev, s, NULL, r4), *mean = up(dev, s, NULL, 4), *sc = up(dev, s, &h->scale, 4);
    kmux_softmax_args a = KMUX_SOFTMAX_ARGS_INIT;
    a.x = x, a.y = y, a.dy = dy, a.dx = dx, a.labels = lab, a.loss = loss, a.mean_loss = mean;
    a.argmax = am, a.grad_scale = h->scale != 1.0f ? sc : NULL;
    st = kmux_softmax_execute(plan, s, &a);
    const kmux_memcpy_kind down = KMUX_MEMCPY_DEVICE_TO_HOST;
    if (st == KMUX_OK) {
        if (d->alg != KMUX_SOFTMAX_CROSS_ENTROPY && d->prop == KMUX_PROP_FORWARD)
            TU_OK(kmux_memcpy(s, h->y, y, n, down));
        else
            TU_OK(kmux_memcpy(s, h->dx, dx, n, down));
        if (d->alg == KMUX_SOFTMAX_CROSS_ENTROPY) {
            TU_OK(kmux_memcpy(s, h->loss, loss, r4, down));
            TU_OK(kmux_memcpy(s, h->argmax, am, r4, down));
            TU_OK(kmux_memcpy(s, &h->mean, mean, 4, down));
        }
    }
    TU_OK(kmux_stream_synchronize(s));
    void *all[] = {x, y, dy, dx, lab, loss, am, mean, sc};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        TU_OK(kmux_free(dev, all[i]));
    TU_OK(kmux_plan_destroy(plan));
    return st;
}

/* The plan's first implementation. */
static kmux_status run(kmux_device *dev, kmux_stream *s, const kmux_softmax_desc *d, io *h,
                       char *impl, size_t impl_size) {
    return run_impl(dev, s, d, h, 0, impl, impl_size);
}

static io io_new(const kmux_softmax_desc *d) {
    const size_t n = (size_t)(d->rows * d->cols) * kmux_dtype_size(d->dtype), r = (size_t)d->rows;
    io h = {calloc(1, n), calloc(1, n), calloc(1, n), calloc(1, n), calloc(r, 4),
            calloc(r, 4), calloc(r, 4), 0.0f,         1.0f};
    return h;
}

static void io_free(io *h) {
    free(h->x), free(h->y), free(h->dy), free(h->dx), free(h->labels), free(h->argmax);
    free(h->loss);
}

static int close_to(kmux_dtype t, double got, double want) {
    if (isnan(want)) return isnan(got);
    if (isinf(want)) return got == want;
    const double rel = t == KMUX_F32 ? 3e-5 : t == KMUX_F16 ? 2.0 / 1024 : 2.0 / 128;
    const double abs_tol = t == KMUX_F32 ? 1e-6 : t == KMUX_F16 ? 1e-4 : 1e-3;
    return fabs(got - want) <= abs_tol + rel * fabs(want);
}

/* Every implementation of d's plan on device di against want (ref's results); got holds the
 * inputs and receives each implementation's outputs. */
static void check_impls(cf_env *env, int di, const kmux_softmax_desc *d, const io *want, io *got,
                        const char *what) {
    const int xent = d->alg == KMUX_SOFTMAX_CROSS_ENTROPY, bwd = d->prop == KMUX_PROP_BACKWARD;
    const int64_t n = d->rows * d->cols;
    for (int step = 0;; step++) {
        char impl[128];
        const kmux_status st =
            run_impl(env->dev[di], env->stream[di], d, got, step, impl, sizeof impl);
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
        const void *g = !xent && !bwd ? got->y : got->dx;
        const void *w = !xent && !bwd ? want->y : want->dx;
        int bad = 0;
        for (int64_t i = 0; i < n && bad < 3; i++)
            if (!close_to(d->dtype, tu_get(d->dtype, g, i), tu_get(d->dtype, w, i))) {
                bad++;
                cf_fail("%s (%s): %s: [%lld] got %.9g, ref %.9g", env->id[di], impl, what,
                        (long long)i, tu_get(d->dtype, g, i), tu_get(d->dtype, w, i));
            }
        for (int64_t r = 0; xent && r < d->rows && bad < 3; r++) {
            if (!close_to(KMUX_F32, got->loss[r], want->loss[r]) ||
                got->argmax[r] != want->argmax[r]) {
                bad++;
                cf_fail("%s (%s): %s: row %lld: loss %.9g argmax %d, ref %.9g and %d", env->id[di],
                        impl, what, (long long)r, (double)got->loss[r], got->argmax[r],
                        (double)want->loss[r], want->argmax[r]);
            }
        }
        if (xent && !close_to(KMUX_F32, got->mean, want->mean))
            cf_fail("%s (%s): %s: mean loss %.9g, ref %.9g", env->id[di], impl, what,
                    (double)got->mean, (double)want->mean);
    }
}

Test(conformance_softmax, every_algorithm_matches_ref) {
    cf_env env;
    cf_env_init(&env);
    const int nalg = alg_count();
    cr_assert_geq(nalg, 3, "the softmax table lists %d algorithms", nalg);
    uint64_t seed = 13;
    for (int di = 0; di < env.ndev; di++)
        for (int alg = 1; alg <= nalg; alg++)
            for (int bwd = 0; bwd < 2; bwd++)
                for (size_t ti = 0; ti < sizeof dtypes / sizeof dtypes[0]; ti++)
                    for (size_t si = 0; si < sizeof shapes / sizeof shapes[0] - (size_t)cf_small();
                         si++) {
                        if (bwd && alg == KMUX_SOFTMAX_CROSS_ENTROPY) continue;
                        kmux_softmax_desc d = KMUX_SOFTMAX_DESC_INIT;
                        d.alg = (kmux_softmax_alg)alg;
                        d.prop = bwd ? KMUX_PROP_BACKWARD : KMUX_PROP_FORWARD;
                        d.rows = shapes[si][0], d.cols = shapes[si][1];
                        d.dtype = dtypes[ti];
                        d.label_smoothing = si % 2 ? 0.1f : 0.0f;
                        io want = io_new(&d), got = io_new(&d);
                        const int64_t n = d.rows * d.cols;
                        for (int64_t i = 0; i < n; i++) {
                            double v = tu_rand_uniform(&seed, -4.0, 4.0);
                            if (si == 2 && i == 5) v = NAN; /* one NaN logit: its row is NaN */
                            if (si == 3 && i % 97 == 0) v = i % 2 ? 100.0 : -100.0;
                            tu_set(d.dtype, want.x, i, v);
                            tu_set(d.dtype, want.dy, i, tu_rand_uniform(&seed, -1.0, 1.0));
                            tu_set(d.dtype, want.y, i,
                                   bwd && alg == KMUX_SOFTMAX ? 1.0 / (double)d.cols
                                                              : tu_rand_uniform(&seed, -3.0, 0.0));
                        }
                        for (int64_t r = 0; r < d.rows; r++)
                            want.labels[r] = (int32_t)((r * 7 + 3) % d.cols);
                        if (d.rows > 2) want.labels[1] = (int32_t)d.cols; /* out of range */
                        want.scale = si == 1 ? 0.5f : 1.0f;
                        const size_t nb = (size_t)n * kmux_dtype_size(d.dtype);
                        memcpy(got.x, want.x, nb), memcpy(got.y, want.y, nb);
                        memcpy(got.dy, want.dy, nb);
                        memcpy(got.labels, want.labels, (size_t)d.rows * 4);
                        got.scale = want.scale;
                        char rimpl[128], what[200];
                        snprintf(what, sizeof what, "%s %s %s %lldx%lld smoothing %g scale %g",
                                 kmux_softmax_alg_name(d.alg), bwd ? "backward" : "forward",
                                 kmux_dtype_name(d.dtype), (long long)d.rows, (long long)d.cols,
                                 (double)d.label_smoothing, (double)want.scale);
                        TU_OK(run(env.ref, env.ref_stream, &d, &want, rimpl, sizeof rimpl));
                        check_impls(&env, di, &d, &want, &got, what);
                        io_free(&want), io_free(&got);
                    }
    cf_summary("every_algorithm_matches_ref");
    cf_env_fini(&env);
}

/* f32, 4 x 6: d(mean loss)/dx of the cross-entropy, and the backward passes as the gradient of
 * sum(w y) for a fixed w, against central differences of each device's own forward. */
Test(conformance_softmax, gradients_are_derivatives_of_forward) {
    cf_env env;
    cf_env_init(&env);
    enum { R = 4, C = 6, N = R * C };
    for (int di = -1; di < env.ndev; di++) {
        kmux_device *dev = di < 0 ? env.ref : env.dev[di];
        kmux_stream *s = di < 0 ? env.ref_stream : env.stream[di];
        const char *id = di < 0 ? "ref" : env.id[di];
        uint64_t seed = 17;
        for (int alg = 1; alg <= 3; alg++) {
            kmux_softmax_desc d = KMUX_SOFTMAX_DESC_INIT;
            d.alg = (kmux_softmax_alg)alg, d.rows = R, d.cols = C, d.label_smoothing = 0.1f;
            io h = io_new(&d);
            float w[N];
            for (int i = 0; i < N; i++) {
                ((float *)h.x)[i] = (float)tu_rand_uniform(&seed, -2.0, 2.0);
                w[i] = (float)tu_rand_uniform(&seed, -1.0, 1.0);
            }
            for (int r = 0; r < R; r++)
                h.labels[r] = r % C;
            char impl[128];
            /* the objective: the mean loss, or sum(w y) */
            double f0[2];
            float grad[N];
            if (run(dev, s, &d, &h, impl, sizeof impl) != KMUX_OK) {
                io_free(&h);
                continue;
            }
            if (alg == KMUX_SOFTMAX_CROSS_ENTROPY) {
                memcpy(grad, h.dx, sizeof grad);
            } else { /* backward with dy = w from y */
                kmux_softmax_desc b = d;
                b.prop = KMUX_PROP_BACKWARD;
                memcpy(h.dy, w, sizeof w);
                TU_OK(run(dev, s, &b, &h, impl, sizeof impl));
                memcpy(grad, h.dx, sizeof grad);
            }
            const float eps = 1e-2f;
            for (int i = 0; i < N; i++) {
                for (int k = 0; k < 2; k++) {
                    io p = io_new(&d);
                    memcpy(p.x, h.x, sizeof(float) * N);
                    memcpy(p.labels, h.labels, sizeof(int32_t) * R);
                    ((float *)p.x)[i] += k ? -eps : eps;
                    TU_OK(run(dev, s, &d, &p, impl, sizeof impl));
                    double f = 0;
                    if (alg == KMUX_SOFTMAX_CROSS_ENTROPY)
                        f = p.mean;
                    else
                        for (int j = 0; j < N; j++)
                            f += (double)w[j] * ((float *)p.y)[j];
                    f0[k] = f;
                    io_free(&p);
                }
                const double fd = (f0[0] - f0[1]) / (2.0 * eps);
                if (fabs(fd - grad[i]) > 2e-3 * (1.0 + fabs(fd)))
                    cf_fail("%s (%s): %s: d/dx[%d]: gradient %.7g, finite difference %.7g", id,
                            impl, kmux_softmax_alg_name(d.alg), i, (double)grad[i], fd);
            }
            cf_stat.runs++;
            io_free(&h);
        }
    }
    cf_summary("gradients_are_derivatives_of_forward");
    cf_env_fini(&env);
}
