/*
 * test_conformance_conv.c - cross-backend conformance of 2-D convolution: FWD / BWD_DATA /
 * BWD_WEIGHTS x NCHW / NHWC x groups (1, 2, depthwise, depthwise with multiplier) x strides x
 * dilations x asymmetric padding x odd spatial sizes x alpha/beta (beta = 0 with NaN in the
 * output), every row of the legal convolution table (kmux_conv2d_type_combination_get: f32 with
 * each f32 compute type, f16, bf16, f64), on every available device, against ref (itself checked
 * against an independent f64 model here). Integer fills are compared exactly, random fills
 * within a bound scaled by the number of terms; see conformance/conformance.h for the scheme.
 * One parameterized test per (dtype, direction).
 */
#include <criterion/parameterized.h>

#include "conformance.h"

typedef struct conv_param {
    int dtype; /* row of the legal convolution table (cf_conv_combos) */
    int dir;   /* kmux_conv_direction */
} conv_param;

#define MAX_CONV_TYPES 16 /* rows of the legal convolution table held */

typedef struct conv_case {
    kmux_conv2d_desc d;
    int64_t p, q;
    double alpha, beta;
    int out_nan; /* output pre-filled with NaN (beta == 0) */
    int fill;
    uint64_t seed;
} conv_case;

static const char *dir_str(kmux_conv_direction d) {
    return d == KMUX_CONV_FWD ? "FWD" : d == KMUX_CONV_BWD_DATA ? "BWD_DATA" : "BWD_WEIGHTS";
}

static void describe(const conv_case *c, char *buf, size_t n) {
    const kmux_conv2d_desc *d = &c->d;
    snprintf(buf, n,
             "conv2d %s %s n=%lld c=%lld h=%lld w=%lld k=%lld r=%lld s=%lld groups=%lld "
             "stride=%lldx%lld pad(top,bottom,left,right)=%lld,%lld,%lld,%lld "
             "dilation=%lldx%lld (p=%lld q=%lld) type=%s compute=%s alpha=%g beta=%g%s fill=%s "
             "seed=0x%llx",
             dir_str(d->direction), d->layout == KMUX_NCHW ? "NCHW/KCRS" : "NHWC/KRSC",
             (long long)d->n, (long long)d->c, (long long)d->h, (long long)d->w, (long long)d->k,
             (long long)d->r, (long long)d->s, (long long)d->groups, (long long)d->stride_h,
             (long long)d->stride_w, (long long)d->pad_top, (long long)d->pad_bottom,
             (long long)d->pad_left, (long long)d->pad_right, (long long)d->dilation_h,
             (long long)d->dilation_w, (long long)c->p, (long long)c->q, kmux_dtype_name(d->x_type),
             kmux_compute_type_name(d->compute_type), c->alpha, c->beta,
             c->out_nan ? " out=NaN" : "", c->fill == CF_FILL_EXACT ? "exact-integers" : "random",
             (unsigned long long)c->seed);
}

/* ---- tensor indexing (elements), per layout ---- */

static int64_t x_idx(const conv_case *c, int64_t n, int64_t ch, int64_t h, int64_t w) {
    const kmux_conv2d_desc *d = &c->d;
    return d->layout == KMUX_NCHW ? ((n * d->c + ch) * d->h + h) * d->w + w
                                  : ((n * d->h + h) * d->w + w) * d->c + ch;
}

static int64_t w_idx(const conv_case *c, int64_t k, int64_t cg, int64_t r, int64_t s) {
    const kmux_conv2d_desc *d = &c->d;
    int64_t C = d->c / d->groups;
    return d->layout == KMUX_NCHW ? ((k * C + cg) * d->r + r) * d->s + s
                                  : ((k * d->r + r) * d->s + s) * C + cg;
}

static int64_t y_idx(const conv_case *c, int64_t n, int64_t k, int64_t p, int64_t q) {
    const kmux_conv2d_desc *d = &c->d;
    return d->layout == KMUX_NCHW ? ((n * d->k + k) * c->p + p) * c->q + q
                                  : ((n * c->p + p) * c->q + q) * d->k + k;
}

/** Which tensor a direction writes: 0 = x, 1 = w, 2 = y. */
static int out_tensor(kmux_conv_direction dir) {
    return dir == KMUX_CONV_FWD ? 2 : dir == KMUX_CONV_BWD_DATA ? 0 : 1;
}

typedef struct locate_ctx {
    const conv_case *c;
    int which;
} locate_ctx;

/** Names element e of tensor `which` by its coordinates, in the layout's order. */
static void locate(const void *ctx, int64_t e, char *buf, size_t n) {
    const locate_ctx *lc = (const locate_ctx *)ctx;
    const kmux_conv2d_desc *d = &lc->c->d;
    int64_t dims[4];
    const char *names[4];
    int nchw = d->layout == KMUX_NCHW;
    if (lc->which == 0) {
        int64_t v[4] = {d->n, nchw ? d->c : d->h, nchw ? d->h : d->w, nchw ? d->w : d->c};
        const char *nm[4] = {"n", nchw ? "c" : "h", nchw ? "h" : "w", nchw ? "w" : "c"};
        memcpy(dims, v, sizeof v), memcpy(names, nm, sizeof nm);
    } else if (lc->which == 1) {
        int64_t C = d->c / d->groups;
        int64_t v[4] = {d->k, nchw ? C : d->r, nchw ? d->r : d->s, nchw ? d->s : C};
        const char *nm[4] = {"k", nchw ? "c" : "r", nchw ? "r" : "s", nchw ? "s" : "c"};
        memcpy(dims, v, sizeof v), memcpy(names, nm, sizeof nm);
    } else {
        int64_t v[4] = {d->n, nchw ? d->k : lc->c->p, nchw ? lc->c->p : lc->c->q,
                        nchw ? lc->c->q : d->k};
        const char *nm[4] = {"n", nchw ? "k" : "p", nchw ? "p" : "q", nchw ? "q" : "k"};
        memcpy(dims, v, sizeof v), memcpy(names, nm, sizeof nm);
    }
    int64_t co[4];
    for (int i = 3; i >= 0; i--) {
        co[i] = e % dims[i];
        e /= dims[i];
    }
    snprintf(buf, n, "(%s=%lld %s=%lld %s=%lld %s=%lld)", names[0], (long long)co[0], names[1],
             (long long)co[1], names[2], (long long)co[2], names[3], (long long)co[3]);
}

typedef struct conv_data {
    cf_tensor t[3];              /* x, w, y */
    double *pre, *bound, *model; /* over the output tensor */
    double max_terms;            /* longest sum */
    int degenerate;
} conv_data;

/** f64 model of the case's direction from the images in d (products of exact values). */
static void conv_model(const conv_case *c, conv_data *d) {
    const kmux_conv2d_desc *ds = &c->d;
    int o = out_tensor(ds->direction);
    cf_tensor *out = &d->t[o];
    int64_t Cg = ds->c / ds->groups, Kg = ds->k / ds->groups;
    for (int64_t e = 0; e < out->span; e++)
        d->pre[e] = d->bound[e] = 0;
    for (int64_t n = 0; n < ds->n; n++)
        for (int64_t k = 0; k < ds->k; k++) {
            int64_t g = k / Kg;
            for (int64_t p = 0; p < c->p; p++)
                for (int64_t q = 0; q < c->q; q++)
                    for (int64_t cg = 0; cg < Cg; cg++)
                        for (int64_t r = 0; r < ds->r; r++) {
                            int64_t h = p * ds->stride_h - ds->pad_top + r * ds->dilation_h;
                            if (h < 0 || h >= ds->h) continue;
                            for (int64_t s = 0; s < ds->s; s++) {
                                int64_t w = q * ds->stride_w - ds->pad_left + s * ds->dilation_w;
                                if (w < 0 || w >= ds->w) continue;
                                int64_t ix = x_idx(c, n, g * Cg + cg, h, w);
                                int64_t iw = w_idx(c, k, cg, r, s);
                                int64_t iy = y_idx(c, n, k, p, q);
                                double a, b;
                                int64_t io;
                                if (ds->direction == KMUX_CONV_FWD)
                                    a = cf_tget(&d->t[0], ix), b = cf_tget(&d->t[1], iw), io = iy;
                                else if (ds->direction == KMUX_CONV_BWD_DATA)
                                    a = cf_tget(&d->t[2], iy), b = cf_tget(&d->t[1], iw), io = ix;
                                else
                                    a = cf_tget(&d->t[0], ix), b = cf_tget(&d->t[2], iy), io = iw;
                                d->pre[io] += a * b;
                                d->bound[io] += fabs(a * b);
                            }
                        }
        }
    for (int64_t e = 0; e < out->span; e++) {
        double cin = c->beta != 0 ? cf_tget(out, e) : 0;
        d->pre[e] = c->alpha * d->pre[e] + c->beta * cin;
        d->bound[e] = fabs(c->alpha) * d->bound[e] + fabs(c->beta * cin);
        d->model[e] = d->pre[e];
    }
}

static void conv_prepare(const conv_case *c, conv_data *d) {
    const kmux_conv2d_desc *ds = &c->d;
    memset(d, 0, sizeof *d);
    uint64_t st = c->seed;
    int64_t spans[3] = {ds->n * ds->c * ds->h * ds->w, ds->k * (ds->c / ds->groups) * ds->r * ds->s,
                        ds->n * ds->k * c->p * c->q};
    int o = out_tensor(ds->direction);
    int exact = c->fill == CF_FILL_EXACT;
    for (int i = 0; i < 3; i++) {
        cf_tensor_init(&d->t[i], ds->x_type, spans[i]);
        for (int64_t e = 0; e < spans[i]; e++) {
            if (i == o && c->out_nan) {
                d->t[i].mask[e] = 1;
                continue;
            }
            cf_tset(&d->t[i], e, cf_fill_value(&st, exact, -3, 3));
        }
    }
    d->pre = malloc((size_t)spans[o] * sizeof(double));
    d->bound = malloc((size_t)spans[o] * sizeof(double));
    d->model = malloc((size_t)spans[o] * sizeof(double));
    cr_assert(d->pre && d->bound && d->model, "out of host memory");
    int64_t Cg = ds->c / ds->groups, Kg = ds->k / ds->groups;
    d->max_terms = ds->direction == KMUX_CONV_FWD        ? (double)(Cg * ds->r * ds->s)
                   : ds->direction == KMUX_CONV_BWD_DATA ? (double)(Kg * ds->r * ds->s)
                                                         : (double)(ds->n * c->p * c->q);
    /* the operand made sparse: w for FWD and BWD_DATA, dy for BWD_WEIGHTS */
    int sparse = ds->direction == KMUX_CONV_BWD_WEIGHTS ? 2 : 1;
    double limit = cf_exact_int_limit(ds->x_type);
    double lim2 = cf_compute_int_limit(ds->compute_type);
    if (lim2 < limit) limit = lim2;
    for (int iter = 0;; iter++) {
        conv_model(c, d);
        if (!exact) break;
        double worst = 0;
        for (int64_t e = 0; e < spans[o]; e++)
            if (d->bound[e] > worst) worst = d->bound[e];
        if (worst <= limit) break;
        cr_assert(iter < 64, "test bug: cannot make the fill exact");
        for (int64_t e = 0; e < spans[sparse]; e++)
            if (cf_tget(&d->t[sparse], e) != 0 && (tu_rand_u64(&st) & 1))
                tu_set(ds->x_type, cf_data(&d->t[sparse]), e, 0.0);
    }
    int64_t nz = 0;
    for (int64_t e = 0; e < spans[o]; e++)
        nz += d->model[e] != 0;
    d->degenerate = spans[o] >= 16 && nz * 4 < spans[o];
}

static void conv_free(conv_data *d) {
    for (int i = 0; i < 3; i++)
        cf_tensor_free(&d->t[i]);
    free(d->pre);
    free(d->bound);
    free(d->model);
}

/** Runs a case on dev; as cf_gemm_run: 1 ran, 0 unsupported, -1 failure reported. */
static int conv_run(kmux_device *dev, kmux_stream *st, const conv_case *c, const conv_data *d,
                    const double *want, const cf_tol *ts, double *out, const char *tag) {
    static const char *names[3] = {"x", "w", "y"};
    const char *id = kmux_device_id(dev);
    char desc[1024];
    describe(c, desc, sizeof desc);
    int o = out_tensor(c->d.direction);
    const cf_tensor *to = &d->t[o];
    locate_ctx lc = {c, o};
    int result = 1;
    kmux_status s;
    kmux_plan *plan = NULL;
    cf_dbuf db[3];
    memset(db, 0, sizeof db);
    size_t maxb = 0;
    for (int i = 0; i < 3; i++)
        if (d->t[i].bytes > maxb) maxb = d->t[i].bytes;
    unsigned char *got = malloc(maxb);
    cr_assert(got, "out of host memory");

    for (int i = 0; i < 3; i++)
        CF_DEV(cf_upload(dev, st, &d->t[i], &db[i]));
    kmux_plan_prefs prefs = KMUX_PLAN_PREFS_INIT;
    s = kmux_conv2d_plan_create(dev, &c->d, &prefs, &plan);
    result = cf_plan_answer(s, "kmux_conv2d_plan_create", tag, id, desc);
    if (result != 1) {
        plan = NULL;
        goto done;
    }
    cf_scalar alpha = cf_make_scalar(c->d.compute_type, c->alpha);
    cf_scalar beta = cf_make_scalar(c->d.compute_type, c->beta);
    for (int nimpl = 0;; nimpl++) {
        kmux_plan_info info;
        memset(&info, 0, sizeof info);
        CF_DEV(kmux_plan_info_get(plan, &info));
        char impl[160];
        if (cf_check_plan_info(&info, c->d.compute_type, impl, sizeof impl, tag, id, desc))
            result = -1;
        if (!cf_impl_wanted(nimpl, info.impl)) goto advance;
        CF_DEV(cf_reupload(st, to, &db[o]));
        kmux_conv2d_args args = KMUX_CONV2D_ARGS_INIT;
        args.alpha = &alpha;
        args.beta = &beta;
        args.x = cf_dptr(&db[0]);
        args.w = cf_dptr(&db[1]);
        args.y = cf_dptr(&db[2]);
        s = kmux_conv2d_execute(plan, st, &args);
        if (s == KMUX_OK) s = kmux_stream_synchronize(st);
        if (s != KMUX_OK) {
            cf_fail("%s on %s impl %s: kmux_conv2d_execute -> %s: %s\n  case: %s", tag, id, impl,
                    kmux_status_str(s), kmux_last_error(), desc);
            result = -1;
            goto done;
        }
        CF_DEV(cf_download(st, &db[o], got));
        cf_stat.runs++;
        if (cf_check_output(to, got, want, d->pre, d->bound, ts, locate, &lc, names[o], tag, id,
                            impl, desc))
            result = -1;
        if (nimpl == 0 && out)
            for (int64_t e = 0; e < to->span; e++)
                out[e] = tu_get(to->type, got + to->front, e);
    advance:
        if (nimpl + 1 >= cf_walk_limit()) break;
        s = kmux_plan_next_impl(plan);
        if (s == KMUX_ERR_LAST_IMPL) break;
        if (s != KMUX_OK) {
            cf_fail("%s on %s: kmux_plan_next_impl -> %s: %s\n  case: %s", tag, id,
                    kmux_status_str(s), kmux_last_error(), desc);
            result = -1;
            break;
        }
    }
    for (int i = 0; i < 3; i++) {
        if (i == o) continue;
        CF_DEV(cf_download(st, &db[i], got));
        int64_t ob = cf_any_change(&d->t[i], got);
        if (ob >= 0) {
            cf_fail("%s on %s: the input %s was modified (byte %lld relative to its first "
                    "element)\n  case: %s",
                    tag, id, names[i], (long long)ob - (long long)d->t[i].front, desc);
            result = -1;
        }
    }
done:
    if (plan) kmux_plan_destroy(plan);
    for (int i = 0; i < 3; i++)
        cf_dfree(&db[i]);
    free(got);
    return result;
}

static void check_case(cf_env *env, const conv_case *c, const char *tag) {
    conv_data d;
    char desc[1024], rtag[256], dtag[256];
    describe(c, desc, sizeof desc);
    conv_prepare(c, &d);
    cf_stat.cases++;
    if (d.degenerate)
        cf_fail("%s: test bug: the fill gives a mostly-zero answer\n  case: %s", tag, desc);
    int o = out_tensor(c->d.direction);
    double *ref_out = malloc(((size_t)d.t[o].span + 1) * sizeof(double));
    cr_assert(ref_out, "out of host memory");
    cf_tol tm, td;
    tm.inexact = td.inexact = c->fill == CF_FILL_RANDOM;
    tm.gelu = td.gelu = 0;
    tm.u_out = td.u_out = cf_unit_roundoff(c->d.x_type);
    tm.min_out = td.min_out = cf_min_subnormal(c->d.x_type);
    tm.k = td.k = d.max_terms;
    tm.u_acc = ldexp(1.0, -52);
    td.u_acc = cf_compute_roundoff(c->d.compute_type);
    snprintf(rtag, sizeof rtag, "%s [ref checked against the test's independent f64 model]", tag);
    int r = conv_run(env->ref, env->ref_stream, c, &d, d.model, &tm, ref_out, rtag);
    if (r == 0)
        cf_fail("%s: ref answered KMUX_ERR_UNSUPPORTED (%s): the oracle must run every valid "
                "case\n  case: %s",
                tag, kmux_last_error(), desc);
    snprintf(dtag, sizeof dtag, "%s%s", tag,
             r == 1 ? "" : " [compared with the model, ref having failed]");
    for (int i = 0; i < env->ndev; i++)
        if (conv_run(env->dev[i], env->stream[i], c, &d, r == 1 ? ref_out : d.model, &td, NULL,
                     dtag) == 0)
            cf_stat.unsupported++;
    free(ref_out);
    conv_free(&d);
}

static conv_case make_case(const tu_conv_geom *sh, kmux_layout layout, kmux_conv_direction dir,
                           kmux_dtype t, kmux_compute_type ct, double alpha, double beta,
                           int fill) {
    conv_case c;
    memset(&c, 0, sizeof c);
    kmux_conv2d_desc d = tu_conv_desc(sh, dir, layout, t);
    d.compute_type = ct;
    c.d = d;
    c.p = (d.h + d.pad_top + d.pad_bottom - ((d.r - 1) * d.dilation_h + 1)) / d.stride_h + 1;
    c.q = (d.w + d.pad_left + d.pad_right - ((d.s - 1) * d.dilation_w + 1)) / d.stride_w + 1;
    c.alpha = alpha;
    c.beta = beta;
    c.out_nan = beta == 0;
    c.fill = fill;
    return c;
}

ParameterizedTestParameters(conformance_conv, case) {
    static conv_param params[3 * MAX_CONV_TYPES];
    cf_combo types[MAX_CONV_TYPES];
    int nt = cf_conv_combos(types, MAX_CONV_TYPES);
    int n = 0;
    for (int t = 0; t < nt; t++)
        for (int dir = KMUX_CONV_FWD; dir <= KMUX_CONV_BWD_WEIGHTS; dir++)
            params[n++] = (conv_param){t, dir};
    return cr_make_param_array(conv_param, params, (size_t)n);
}

ParameterizedTest(conv_param *p, conformance_conv, case) {
    cf_combo types[MAX_CONV_TYPES];
    int nt = cf_conv_combos(types, MAX_CONV_TYPES);
    cr_assert(p->dtype < nt);
    kmux_dtype t = types[p->dtype].a_type;
    kmux_compute_type ct = types[p->dtype].compute_type;
    kmux_conv_direction dir = (kmux_conv_direction)p->dir;
    static const kmux_layout layouts[2] = {KMUX_NCHW, KMUX_NHWC};
    conv_case *cases = malloc(400 * sizeof *cases);
    cr_assert(cases);
    int n = 0;
    int nq = 0, nf = 0;
    const tu_conv_geom *quick = cf_conv_shapes(0, &nq), *full = cf_conv_shapes(1, &nf);
    if (!cf_full()) nf = 0;
    /* KMUX_CONFORMANCE_SHAPES=small (an emulated device): every shape in both layouts, one of
     * the two integer cases each (beta = 0 with NaN in the output, or alpha = 2, beta = -1,
     * alternating so that each layout gets both), random fills on every fourth shape, again
     * alternating the layout */
    const int small = cf_small();
    for (int l = 0; l < 2; l++) {
        for (int i = 0; i < nq + nf; i++) {
            const tu_conv_geom *sh = i < nq ? &quick[i] : &full[i - nq];
            if (!small || (i + l) % 2 == 0)
                cases[n++] = make_case(sh, layouts[l], dir, t, ct, 1, 0, CF_FILL_EXACT);
            if (!small || (i + l) % 2 == 1)
                cases[n++] = make_case(sh, layouts[l], dir, t, ct, 2, -1, CF_FILL_EXACT);
            if (small ? (i + 2 * l) % 4 == 0 : (i % 2 == 0 || i >= nq))
                cases[n++] = make_case(sh, layouts[l], dir, t, ct, 0.75, 0.5, CF_FILL_RANDOM);
        }
    }
    /* kmux_conv2d_output_dims agrees with the formula of kmux.h */
    for (int i = 0; i < n; i++) {
        int64_t pp = 0, qq = 0;
        TU_OK(kmux_conv2d_output_dims(&cases[i].d, &pp, &qq));
        cr_expect(pp == cases[i].p && qq == cases[i].q,
                  "kmux_conv2d_output_dims: p=%lld q=%lld, kmux.h formula: p=%lld q=%lld",
                  (long long)pp, (long long)qq, (long long)cases[i].p, (long long)cases[i].q);
    }
    char name[128];
    snprintf(name, sizeof name, "conv2d %s type=%s compute=%s", dir_str(dir), kmux_dtype_name(t),
             kmux_compute_type_name(ct));
    long only = cf_only_case();
    cf_env env;
    cf_env_init(&env);
    for (int i = 0; i < n; i++) {
        if (only >= 0 && i != only) continue;
        cases[i].seed = cf_seed((uint64_t)(p->dtype * 8 + p->dir), (uint64_t)i);
        char tag[256];
        snprintf(tag, sizeof tag, "[%s, case %d; rerun alone with KMUX_CONFORMANCE_CASE=%d]", name,
                 i, i);
        check_case(&env, &cases[i], tag);
    }
    cf_summary(name);
    cf_env_fini(&env);
    free(cases);
}
