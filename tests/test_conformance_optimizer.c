/*
 * test_conformance_optimizer.c - the optimizer family on every device under test against ref:
 * every algorithm of the table (walked through kmux_optimizer_alg_name), gradients in f32, f16
 * and bf16, with and without the f16/bf16 parameter copy, hyper-parameters that exercise every
 * term (momentum, dampening, Nesterov, weight decay, Adam's betas), three steps in a row (the
 * first-step rules, the bias corrections), a gradient scale, and a found_inf flag that must leave
 * every tensor untouched; sizes 1 to past the CPU kernels' block. Parameters and states are
 * compared after every step.
 */
#include <math.h>

#include "conformance.h"

static const int64_t sizes[] = {1, 7, 1000, 4099};
static const kmux_dtype grad_types[] = {KMUX_F32, KMUX_F16, KMUX_BF16};
static const int copy_types[] = {0, KMUX_BF16, KMUX_F16};

typedef struct hyper {
    float momentum, dampening, weight_decay;
    int nesterov;
} hyper;

static const hyper hypers[] = {{0, 0, 0, 0}, {0.9f, 0, 0, 1}, {0.9f, 0.1f, 0.01f, 0}};

static int alg_count(void) {
    int n = 0;
    while (strcmp(kmux_optimizer_alg_name((kmux_optimizer_alg)(n + 1)), "?") != 0)
        n++;
    return n;
}

/* The tensors of one run, on the host. */
typedef struct host_set {
    float *p, *s1, *s2;
    void *g, *copy;
} host_set;

typedef struct dev_set {
    float *p, *s1, *s2, *gs, *found;
    void *g, *copy;
} dev_set;

static void *dmalloc(kmux_device *d, size_t bytes) {
    void *p = NULL;
    TU_OK(kmux_malloc(d, bytes, &p));
    return p;
}

/* Runs `steps` steps of desc on dev from the host tensors h (updated in place with the
 * results); gs: the gradient scale (1: none passed), found: 1 = pass found_inf = 1 on the last
 * step. Returns the plan status. */
static kmux_status run_steps(kmux_device *dev, kmux_stream *s, const kmux_optimizer_desc *d,
                             host_set *h, int steps, float gs, int found, char *impl,
                             size_t impl_size) {
    kmux_plan *plan = NULL;
    kmux_status st = kmux_optimizer_plan_create(dev, d, NULL, &plan);
    if (st != KMUX_OK) return st;
    kmux_plan_info info;
    TU_OK(kmux_plan_info_get(plan, &info));
    snprintf(impl, impl_size, "%s", info.impl);
    const size_t n = (size_t)d->n, gb = n * kmux_dtype_size(d->grad_type);
    dev_set x = {dmalloc(dev, n * 4), dmalloc(dev, n * 4), dmalloc(dev, n * 4), dmalloc(dev, 4),
                 dmalloc(dev, 4),     dmalloc(dev, gb),    dmalloc(dev, n * 2)};
    const kmux_memcpy_kind up = KMUX_MEMCPY_HOST_TO_DEVICE, down = KMUX_MEMCPY_DEVICE_TO_HOST;
    TU_OK(kmux_memcpy(s, x.p, h->p, n * 4, up));
    TU_OK(kmux_memcpy(s, x.s1, h->s1, n * 4, up));
    TU_OK(kmux_memcpy(s, x.s2, h->s2, n * 4, up));
    TU_OK(kmux_memcpy(s, x.g, h->g, gb, up));
    TU_OK(kmux_memcpy(s, x.copy, h->copy, n * 2, up));
    const float one = 1.0f;
    TU_OK(kmux_memcpy(s, x.gs, &gs, 4, up));
    TU_OK(kmux_memcpy(s, x.found, &one, 4, up));
    for (int k = 1; k <= steps && st == KMUX_OK; k++) {
        kmux_optimizer_args a = KMUX_OPTIMIZER_ARGS_INIT;
        a.param = x.p, a.grad = x.g, a.state1 = x.s1, a.state2 = x.s2, a.param_copy = x.copy;
        a.lr = 0.05f * (float)k; /* a schedule: the scalars change every step */
        a.step = k;
        a.grad_scale = gs != 1.0f ? x.gs : NULL;
        a.found_inf = found && k == steps ? x.found : NULL;
        st = kmux_optimizer_execute(plan, s, &a);
    }
    if (st == KMUX_OK) {
        TU_OK(kmux_memcpy(s, h->p, x.p, n * 4, down));
        TU_OK(kmux_memcpy(s, h->s1, x.s1, n * 4, down));
        TU_OK(kmux_memcpy(s, h->s2, x.s2, n * 4, down));
        TU_OK(kmux_memcpy(s, h->copy, x.copy, n * 2, down));
    }
    TU_OK(kmux_stream_synchronize(s));
    void *all[] = {x.p, x.s1, x.s2, x.gs, x.found, x.g, x.copy};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        TU_OK(kmux_free(dev, all[i]));
    TU_OK(kmux_plan_destroy(plan));
    return st;
}

static host_set host_new(const kmux_optimizer_desc *d, uint64_t *seed) {
    const size_t n = (size_t)d->n;
    host_set h = {malloc(n * 4), malloc(n * 4), malloc(n * 4),
                  malloc(n * kmux_dtype_size(d->grad_type)), malloc(n * 2)};
    for (size_t i = 0; i < n; i++) {
        h.p[i] = (float)tu_rand_uniform(seed, -1.0, 1.0);
        h.s1[i] = h.s2[i] = 0.0f;
        tu_set(d->grad_type, h.g, (int64_t)i, tu_rand_uniform(seed, -1.0, 1.0));
        ((uint16_t *)h.copy)[i] = 0x7e00; /* poison: must be overwritten when a copy is asked */
    }
    return h;
}

static host_set host_dup(const kmux_optimizer_desc *d, const host_set *o) {
    const size_t n = (size_t)d->n, gb = n * kmux_dtype_size(d->grad_type);
    host_set h = {tu_dup(o->p, n * 4), tu_dup(o->s1, n * 4), tu_dup(o->s2, n * 4), tu_dup(o->g, gb),
                  tu_dup(o->copy, n * 2)};
    return h;
}

static void host_free(host_set *h) {
    free(h->p), free(h->s1), free(h->s2), free(h->g), free(h->copy);
}

static int close_f32(double got, double want) {
    if (isnan(want)) return isnan(got);
    return fabs(got - want) <= 1e-6 + 2e-5 * fabs(want);
}

static void compare(const char *id, const char *impl, const char *what,
                    const kmux_optimizer_desc *d, const host_set *got, const host_set *want) {
    int bad = 0;
    for (int64_t i = 0; i < d->n && bad < 3; i++) {
        const struct {
            const char *name;
            double g, w;
        } v[] = {{"param", got->p[i], want->p[i]},
                 {"state1", got->s1[i], want->s1[i]},
                 {"state2", got->s2[i], want->s2[i]}};
        for (int k = 0; k < 3; k++)
            if (!close_f32(v[k].g, v[k].w)) {
                bad++;
                cf_fail("%s (%s): %s: %s[%lld] = %.9g, ref %.9g", id, impl, what, v[k].name,
                        (long long)i, v[k].g, v[k].w);
            }
        if (d->copy_type) {
            const kmux_dtype ct = (kmux_dtype)d->copy_type;
            const double g = tu_get(ct, got->copy, i), w = tu_get(ct, want->copy, i);
            const double ulp = ct == KMUX_BF16 ? 1.0 / 128 : 1.0 / 1024;
            if (!(fabs(g - w) <= ulp * fabs(w) + 1e-7)) {
                bad++;
                cf_fail("%s (%s): %s: param_copy[%lld] = %.9g, ref %.9g (param %.9g)", id, impl,
                        what, (long long)i, g, w, (double)want->p[i]);
            }
        }
    }
}

Test(conformance_optimizer, every_algorithm_matches_ref) {
    cf_env env;
    cf_env_init(&env);
    const int nalg = alg_count();
    cr_assert_geq(nalg, 3, "the optimizer table lists %d algorithms", nalg);
    uint64_t seed = 5;
    for (int di = 0; di < env.ndev; di++)
        for (int alg = 1; alg <= nalg; alg++)
            for (size_t hi = 0; hi < sizeof hypers / sizeof hypers[0]; hi++)
                for (size_t gi = 0; gi < sizeof grad_types / sizeof grad_types[0]; gi++)
                    for (size_t si = 0; si < sizeof sizes / sizeof sizes[0] - (size_t)cf_small();
                         si++) {
                        kmux_optimizer_desc d = KMUX_OPTIMIZER_DESC_INIT;
                        d.alg = (kmux_optimizer_alg)alg;
                        d.n = sizes[si];
                        d.grad_type = grad_types[gi];
                        d.copy_type = copy_types[(hi + gi) % 3];
                        d.weight_decay = hypers[hi].weight_decay;
                        if (alg == KMUX_OPTIMIZER_SGD) {
                            d.momentum = hypers[hi].momentum;
                            d.dampening = hypers[hi].dampening;
                            d.nesterov = hypers[hi].nesterov;
                        } else if (hi == 1) {
                            d.beta1 = 0.8f, d.beta2 = 0.99f, d.eps = 1e-6f;
                        }
                        const float gs = hi == 2 ? 0.5f : 1.0f;
                        char what[256], impl[128], rimpl[128];
                        snprintf(what, sizeof what,
                                 "%s n=%lld grad %s copy %s momentum %g dampening %g wd %g "
                                 "nesterov %d betas %g/%g eps %g grad_scale %g, 3 steps",
                                 kmux_optimizer_alg_name(d.alg), (long long)d.n,
                                 kmux_dtype_name(d.grad_type),
                                 d.copy_type ? kmux_dtype_name((kmux_dtype)d.copy_type) : "none",
                                 (double)d.momentum, (double)d.dampening, (double)d.weight_decay,
                                 d.nesterov, (double)d.beta1, (double)d.beta2, (double)d.eps,
                                 (double)gs);
                        host_set init = host_new(&d, &seed);
                        for (int found = 0; found < 2; found++) {
                            host_set want = host_dup(&d, &init), got = host_dup(&d, &init);
                            TU_OK(run_steps(env.ref, env.ref_stream, &d, &want, 3, gs, found, rimpl,
                                            sizeof rimpl));
                            kmux_status st = run_steps(env.dev[di], env.stream[di], &d, &got, 3, gs,
                                                       found, impl, sizeof impl);
                            if (st == KMUX_ERR_UNSUPPORTED)
                                cf_stat.unsupported++;
                            else if (st != KMUX_OK)
                                cf_fail("%s: %s: %s: %s", env.id[di], what, kmux_status_str(st),
                                        kmux_last_error());
                            else {
                                cf_stat.runs++;
                                compare(env.id[di], impl, what, &d, &got, &want);
                            }
                            host_free(&want), host_free(&got);
                        }
                        host_free(&init);
                    }
    cf_summary("every_algorithm_matches_ref");
    cf_env_fini(&env);
}

/* found_inf != 0 writes nothing, on ref too (which the other test trusts). */
Test(conformance_optimizer, found_inf_skips_the_step) {
    cf_env env;
    cf_env_init(&env);
    uint64_t seed = 9;
    for (int di = -1; di < env.ndev; di++) {
        kmux_device *dev = di < 0 ? env.ref : env.dev[di];
        kmux_stream *s = di < 0 ? env.ref_stream : env.stream[di];
        kmux_optimizer_desc d = KMUX_OPTIMIZER_DESC_INIT;
        d.alg = KMUX_OPTIMIZER_ADAMW;
        d.n = 33;
        d.copy_type = KMUX_BF16;
        d.weight_decay = 0.1f;
        host_set init = host_new(&d, &seed), got = host_dup(&d, &init);
        char impl[128];
        if (run_steps(dev, s, &d, &got, 1, 1.0f, 1, impl, sizeof impl) != KMUX_OK) {
            host_free(&init), host_free(&got);
            continue;
        }
        cf_stat.runs++;
        if (memcmp(got.p, init.p, 33 * 4) || memcmp(got.s1, init.s1, 33 * 4) ||
            memcmp(got.s2, init.s2, 33 * 4) || memcmp(got.copy, init.copy, 33 * 2))
            cf_fail("%s (%s): a step with found_inf = 1 wrote to its tensors",
                    di < 0 ? "ref" : env.id[di], impl);
        host_free(&init), host_free(&got);
    }
    cf_summary("found_inf_skips_the_step");
    cf_env_fini(&env);
}

/* Values worked by hand on ref: one SGD+momentum step and two Adam steps of one parameter. */
Test(conformance_optimizer, ref_hand_computed_steps) {
    cf_env env;
    cf_env_init(&env);
    kmux_optimizer_desc d = KMUX_OPTIMIZER_DESC_INIT;
    d.n = 1;
    d.momentum = 0.9f;
    d.weight_decay = 0.5f;
    host_set h = host_new(&d, &(uint64_t){1});
    h.p[0] = 2.0f;
    h.s1[0] = 7.0f; /* ignored at step 1: buf = g */
    tu_set(KMUX_F32, h.g, 0, 1.0);
    char impl[64];
    TU_OK(run_steps(env.ref, env.ref_stream, &d, &h, 1, 1.0f, 0, impl, sizeof impl));
    /* g = 1 + 0.5 * 2 = 2; buf = 2; p = 2 - 0.05 * 2 = 1.9 */
    cr_expect_float_eq(h.s1[0], 2.0f, 1e-7f);
    cr_expect_float_eq(h.p[0], 1.9f, 1e-6f);
    host_free(&h);
    d = (kmux_optimizer_desc)KMUX_OPTIMIZER_DESC_INIT;
    d.alg = KMUX_OPTIMIZER_ADAM;
    d.n = 1;
    d.beta1 = 0.5f, d.beta2 = 0.75f; /* exact in f32, so that the steps are worked by hand */
    h = host_new(&d, &(uint64_t){1});
    h.p[0] = 1.0f;
    tu_set(KMUX_F32, h.g, 0, 0.5);
    TU_OK(run_steps(env.ref, env.ref_stream, &d, &h, 2, 1.0f, 0, impl, sizeof impl));
    /* step 1 (lr 0.05): m = 0.25, v = 0.0625, m/(1-b1) = 0.5, v/(1-b2) = 0.25: p -= 0.05 * 0.5 /
     * (0.5 + eps); step 2 (lr 0.1): m = 0.375, v = 0.109375, bias-corrected 0.5 and 0.25 again */
    const double p2 = 1.0 - 0.05 * 0.5 / (0.5 + 1e-8) - 0.1 * 0.5 / (0.5 + 1e-8);
    cr_expect_float_eq(h.s1[0], 0.375f, 1e-7f);
    cr_expect_float_eq(h.s2[0], 0.109375f, 1e-8f);
    cr_expect(fabs(h.p[0] - p2) < 1e-6, "p = %.9g, want %.9g", (double)h.p[0], p2);
    host_free(&h);
    cf_env_fini(&env);
}
