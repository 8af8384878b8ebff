/*
 * gemm.c - GEMM cases of the conformance suite: layouts, the reproducer line, the independent
 * f64 model, the fills (sparsified until exact), and the run of one case on one device with
 * every check of conformance.h (guards, gaps, inputs unchanged, values, amax, honest
 * UNSUPPORTED answers).
 */
#include "conformance.h"

/** Rows x cols of matrix X as stored, given op(X) = r x c. */
static void cf_stored(kmux_transpose t, int64_t r, int64_t c, int64_t *sr, int64_t *sc) {
    *sr = t == KMUX_NO_TRANS ? r : c;
    *sc = t == KMUX_NO_TRANS ? c : r;
}

static int64_t cf_min_ld(kmux_order o, kmux_transpose t, int64_t r, int64_t c) {
    int64_t sr, sc;
    cf_stored(t, r, c, &sr, &sc);
    int64_t v = o == KMUX_ROW_MAJOR ? sc : sr;
    return v < 1 ? 1 : v;
}

/** Elements spanned by one stored matrix (0 when it is empty). */
int64_t cf_mat_span(kmux_order o, kmux_transpose t, int64_t r, int64_t c, int64_t ld) {
    int64_t sr, sc;
    cf_stored(t, r, c, &sr, &sc);
    if (sr == 0 || sc == 0) return 0;
    return o == KMUX_ROW_MAJOR ? (sr - 1) * ld + sc : (sc - 1) * ld + sr;
}

/** Offset of element (i, j) of op(X). */
int64_t cf_mat_off(kmux_order o, kmux_transpose t, int64_t i, int64_t j, int64_t ld) {
    int64_t si = t == KMUX_NO_TRANS ? i : j, sj = t == KMUX_NO_TRANS ? j : i;
    return o == KMUX_ROW_MAJOR ? si * ld + sj : si + sj * ld;
}

static int64_t cf_batch_span(int64_t batch, int64_t stride, int64_t mat) {
    if (batch == 0 || mat == 0) return 0;
    return (batch - 1) * stride + mat;
}

/** Sets minimal leading dimensions plus pad, and strides (packed matrices plus spad). */
void cf_gemm_layout(cf_gemm_case *c, int64_t pad, int64_t spad) {
    c->lda = cf_min_ld(c->order, c->transa, c->m, c->k) + pad;
    c->ldb = cf_min_ld(c->order, c->transb, c->k, c->n) + pad;
    c->ldc = cf_min_ld(c->order, KMUX_NO_TRANS, c->m, c->n) + pad;
    if (c->batch > 1) {
        c->stride_a = cf_mat_span(c->order, c->transa, c->m, c->k, c->lda) + spad;
        c->stride_b = cf_mat_span(c->order, c->transb, c->k, c->n, c->ldb) + spad;
        c->stride_c = cf_mat_span(c->order, KMUX_NO_TRANS, c->m, c->n, c->ldc) + spad;
    } else {
        c->stride_a = c->stride_b = c->stride_c = 0;
    }
}

kmux_matmul_desc cf_gemm_desc(const cf_gemm_case *c) {
    kmux_matmul_desc md = KMUX_MATMUL_DESC_INIT;
    md.order = c->order;
    md.transa = c->transa, md.transb = c->transb;
    md.m = c->m, md.n = c->n, md.k = c->k;
    md.a_type = c->a_type, md.b_type = c->b_type, md.c_type = c->c_type;
    md.lda = c->lda, md.ldb = c->ldb, md.ldc = c->ldc;
    md.batch_count = c->batch;
    md.stride_a = c->stride_a, md.stride_b = c->stride_b, md.stride_c = c->stride_c;
    md.compute_type = c->compute;
    md.epilogue = c->epilogue;
    md.bias_type = c->bias_type;
    return md;
}

static void cf_epilogue_str(unsigned e, kmux_dtype bias_type, char *buf, size_t n) {
    if (e == KMUX_EPILOGUE_NONE) {
        snprintf(buf, n, "NONE");
        return;
    }
    snprintf(buf, n, "%s%s%s%s%s%s", (e & KMUX_EPILOGUE_BIAS) ? "BIAS(" : "",
             (e & KMUX_EPILOGUE_BIAS) ? kmux_dtype_name(bias_type) : "",
             (e & KMUX_EPILOGUE_BIAS) ? ")" : "", (e & KMUX_EPILOGUE_BIAS) && (e & ~1u) ? "|" : "",
             (e & KMUX_EPILOGUE_RELU) ? "RELU" : "", (e & KMUX_EPILOGUE_GELU) ? "GELU" : "");
}

/** One-line description of a case: everything needed to rebuild it. */
void cf_gemm_describe(const cf_gemm_case *c, char *buf, size_t n) {
    static const char *entries[] = {"kmux_matmul_plan_create+execute", "kmux_gemm_ex",
                                    "kmux_gemm_strided_batched_ex"};
    char epi[64];
    cf_epilogue_str(c->epilogue, c->bias_type, epi, sizeof epi);
    snprintf(
        buf, n,
        "%s %s transa=%c transb=%c m=%lld n=%lld k=%lld lda=%lld ldb=%lld ldc=%lld "
        "batch=%lld stride_a=%lld stride_b=%lld stride_c=%lld a=%s b=%s c=%s compute=%s "
        "epilogue=%s alpha=%g beta=%g%s%s%s%s%s fill=%s seed=0x%llx",
        entries[c->entry], c->order == KMUX_ROW_MAJOR ? "ROW_MAJOR" : "COL_MAJOR",
        c->transa == KMUX_TRANS ? 'T' : 'N', c->transb == KMUX_TRANS ? 'T' : 'N', (long long)c->m,
        (long long)c->n, (long long)c->k, (long long)c->lda, (long long)c->ldb, (long long)c->ldc,
        (long long)c->batch, (long long)c->stride_a, (long long)c->stride_b, (long long)c->stride_c,
        kmux_dtype_name(c->a_type), kmux_dtype_name(c->b_type), kmux_dtype_name(c->c_type),
        kmux_compute_type_name(c->compute), epi, c->alpha, c->beta,
        c->c_nan ? (kmux_dtype_is_int(c->c_type) ? " C=garbage" : " C=NaN") : "",
        c->ab_nan ? (kmux_dtype_is_int(c->a_type) ? " A,B=garbage" : " A,B=NaN") : "",
        c->null_ab ? " A,B=NULL" : "", c->scales ? " a_scale=2 b_scale=0.5 d_scale=0.5 amax_d" : "",
        c->misalign ? " A,B,C one element past a 256-byte boundary" : "",
        c->fill == CF_FILL_EXACT ? "exact-integers" : "random", (unsigned long long)c->seed);
}

/** Locates element e of C for messages: "(batch b, row i, col j)". */
void cf_gemm_locate_c(const void *ctx, int64_t e, char *buf, size_t n) {
    const cf_gemm_case *c = (const cf_gemm_case *)ctx;
    int64_t b = c->stride_c > 0 ? e / c->stride_c : 0;
    int64_t r = e - b * c->stride_c;
    int64_t i = c->order == KMUX_ROW_MAJOR ? r / c->ldc : r % c->ldc;
    int64_t j = c->order == KMUX_ROW_MAJOR ? r % c->ldc : r / c->ldc;
    snprintf(buf, n, "(batch %lld, row i=%lld, col j=%lld)", (long long)b, (long long)i,
             (long long)j);
}

static double cf_gelu(double x) {
    return 0.5 * x * (1.0 + tanh(0.7978845608028654 * (x + 0.044715 * x * x * x)));
}

static int cf_gemm_reads_ab(const cf_gemm_case *c) {
    return c->k > 0 && c->alpha != 0;
}

/** The f64 model: pre, bound, model and amax from the images of d. */
static void cf_gemm_model(const cf_gemm_case *c, cf_gemm_data *d) {
    double sab = c->scales ? (double)d->scale_a * d->scale_b : 1.0;
    double sd = c->scales ? d->scale_d : 1.0;
    const void *A = cf_data(&d->a), *B = cf_data(&d->b);
    d->amax = 0;
    for (int64_t e = 0; e < d->c.span; e++)
        d->pre[e] = d->bound[e] = d->model[e] = NAN;
    for (int64_t bt = 0; bt < c->batch; bt++)
        for (int64_t i = 0; i < c->m; i++)
            for (int64_t j = 0; j < c->n; j++) {
                double dot = 0, absdot = 0;
                if (cf_gemm_reads_ab(c))
                    for (int64_t l = 0; l < c->k; l++) {
                        double x = tu_get(c->a_type, A,
                                          bt * c->stride_a +
                                              cf_mat_off(c->order, c->transa, i, l, c->lda));
                        double y = tu_get(c->b_type, B,
                                          bt * c->stride_b +
                                              cf_mat_off(c->order, c->transb, l, j, c->ldb));
                        dot += x * y;
                        absdot += fabs(x * y);
                    }
                int64_t ec = bt * c->stride_c + cf_mat_off(c->order, KMUX_NO_TRANS, i, j, c->ldc);
                double cin = c->beta != 0 ? cf_tget(&d->c, ec) : 0;
                double bias = (c->epilogue & KMUX_EPILOGUE_BIAS) ? cf_tget(&d->bias, j) : 0;
                double pre = c->alpha * sab * dot + c->beta * cin + bias;
                double act = pre;
                if (c->epilogue & KMUX_EPILOGUE_RELU) act = pre > 0 ? pre : 0;
                if (c->epilogue & KMUX_EPILOGUE_GELU) act = cf_gelu(pre);
                d->pre[ec] = pre;
                d->bound[ec] = fabs(c->alpha * sab) * absdot + fabs(c->beta * cin) + fabs(bias);
                d->model[ec] = sd * act;
                if (fabs(act) > d->amax) d->amax = fabs(act);
            }
}

/** Fills the operands of a case (see the file comment), sparsifying B for exact fills until
 *  every partial sum is representable, and runs the model. */
void cf_gemm_prepare(const cf_gemm_case *c, cf_gemm_data *d) {
    memset(d, 0, sizeof *d);
    uint64_t st = c->seed;
    int64_t sa =
        cf_batch_span(c->batch, c->stride_a, cf_mat_span(c->order, c->transa, c->m, c->k, c->lda));
    int64_t sb =
        cf_batch_span(c->batch, c->stride_b, cf_mat_span(c->order, c->transb, c->k, c->n, c->ldb));
    int64_t sc = cf_batch_span(c->batch, c->stride_c,
                               cf_mat_span(c->order, KMUX_NO_TRANS, c->m, c->n, c->ldc));
    cf_tensor_init_misaligned(&d->a, c->a_type, sa, c->misalign);
    cf_tensor_init_misaligned(&d->b, c->b_type, sb, c->misalign);
    cf_tensor_init_misaligned(&d->c, c->c_type, sc, c->misalign);
    cf_tensor_init(&d->bias, c->bias_type,
                   (c->epilogue & KMUX_EPILOGUE_BIAS) ? (c->n > 0 ? c->n : 0) : 0);
    d->pre = malloc(((size_t)sc + 1) * sizeof(double));
    d->bound = malloc(((size_t)sc + 1) * sizeof(double));
    d->model = malloc(((size_t)sc + 1) * sizeof(double));
    cr_assert(d->pre && d->bound && d->model, "out of host memory");
    d->scale_a = 2.0f;
    d->scale_b = 0.5f;
    d->scale_d = 0.5f;

    cr_assert(c->compute != KMUX_COMPUTE_I32 ||
                  (c->alpha == nearbyint(c->alpha) && c->beta == nearbyint(c->beta)),
              "test bug: integer GEMM with a non-integer alpha or beta");
    /* integers are always exact; their "random" fill uses the whole i8 range (where signed /
       unsigned compensation bugs show) */
    int exact = c->fill == CF_FILL_EXACT || kmux_dtype_is_int(c->a_type);
    int64_t lo = -3, hi = 3;
    if (kmux_dtype_is_int(c->a_type) && c->fill == CF_FILL_RANDOM) lo = -128, hi = 127;
    /* A: every element of op(A), dense; B: op(B), sparsified below when needed. Broadcast
       operands (stride 0) are written once per batch with the same positions. */
    for (int64_t bt = 0; bt < (c->stride_a ? c->batch : 1); bt++)
        for (int64_t i = 0; i < c->m; i++)
            for (int64_t l = 0; l < c->k; l++) {
                int64_t e = bt * c->stride_a + cf_mat_off(c->order, c->transa, i, l, c->lda);
                if (c->ab_nan) {
                    d->a.mask[e] = 1; /* keep the poison */
                    continue;
                }
                cf_tset(&d->a, e, cf_fill_value(&st, exact, lo, hi));
            }
    for (int64_t bt = 0; bt < (c->stride_b ? c->batch : 1); bt++)
        for (int64_t l = 0; l < c->k; l++)
            for (int64_t j = 0; j < c->n; j++) {
                int64_t e = bt * c->stride_b + cf_mat_off(c->order, c->transb, l, j, c->ldb);
                if (c->ab_nan) {
                    d->b.mask[e] = 1;
                    continue;
                }
                cf_tset(&d->b, e, cf_fill_value(&st, exact, lo, hi));
            }
    for (int64_t bt = 0; bt < c->batch; bt++)
        for (int64_t i = 0; i < c->m; i++)
            for (int64_t j = 0; j < c->n; j++) {
                int64_t e = bt * c->stride_c + cf_mat_off(c->order, KMUX_NO_TRANS, i, j, c->ldc);
                if (c->c_nan) {
                    d->c.mask[e] = 1;
                    continue;
                }
                cf_tset(&d->c, e, cf_fill_value(&st, exact, -3, 3));
            }
    for (int64_t j = 0; j < d->bias.span; j++)
        cf_tset(&d->bias, j, cf_fill_value(&st, exact, -3, 3));

    /* Exact fills: the largest magnitude every partial sum and the output may reach. */
    double limit = cf_exact_int_limit(c->c_type);
    double lim2 = cf_compute_int_limit(c->compute);
    if (lim2 < limit) limit = lim2;
    if (c->scales) limit /= 4;
    if (c->alpha != nearbyint(c->alpha) || c->beta != nearbyint(c->beta)) limit /= 2;
    for (int iter = 0;; iter++) {
        cf_gemm_model(c, d);
        if (!exact) break;
        double worst = 0;
        for (int64_t e = 0; e < sc; e++)
            if (d->c.mask[e] && d->bound[e] > worst) worst = d->bound[e];
        if (worst <= limit) break;
        cr_assert(iter < 64, "test bug: cannot make the fill exact (worst %g, limit %g)", worst,
                  limit);
        /* zero about half of the nonzero elements of B */
        for (int64_t e = 0; e < sb; e++)
            if (d->b.mask[e] && cf_tget(&d->b, e) != 0 && (tu_rand_u64(&st) & 1))
                tu_set(c->b_type, cf_data(&d->b), e, 0.0);
    }
    /* A mostly-zero answer proves little (benchdnn "mistrusted"): the test's own sanity. */
    int64_t nz = 0, cnt = 0;
    for (int64_t e = 0; e < sc; e++)
        if (d->c.mask[e]) {
            cnt++;
            nz += d->model[e] != 0;
        }
    d->degenerate =
        cnt >= 16 && cf_gemm_reads_ab(c) && !(c->epilogue & KMUX_EPILOGUE_RELU) && nz * 4 < cnt;
}

void cf_gemm_free(cf_gemm_data *d) {
    cf_tensor_free(&d->a);
    cf_tensor_free(&d->b);
    cf_tensor_free(&d->c);
    cf_tensor_free(&d->bias);
    free(d->pre);
    free(d->bound);
    free(d->model);
}

/** Tolerance of a device compared with ref (acc = the case's compute type). */
cf_tol cf_gemm_tol(const cf_gemm_case *c, int against_model) {
    cf_tol t;
    t.inexact = c->fill == CF_FILL_RANDOM && !kmux_dtype_is_int(c->a_type);
    t.gelu = (c->epilogue & KMUX_EPILOGUE_GELU) != 0;
    /* ref accumulates in f64 from exact inputs: only its final rounding differs from the model */
    t.u_acc = against_model ? ldexp(1.0, -52) : cf_compute_roundoff(c->compute);
    t.u_out = cf_unit_roundoff(c->c_type);
    t.min_out = cf_min_subnormal(c->c_type);
    if (c->scales) t.min_out *= 2;
    t.k = (double)c->k;
    return t;
}

/** Runs case c on dev and compares C (and amax_d) with want / want_amax. Returns 1 when the
 *  device claims the case and ran it, 0 when it answered KMUX_ERR_UNSUPPORTED, -1 when a failure
 *  was reported. out (c.span doubles, may be NULL) receives the decoded C of the first
 *  implementation, out_amax its amax_d. tag names the case in messages ("case 12 of ..."). */
int cf_gemm_run(kmux_device *dev, kmux_stream *st, const cf_gemm_case *c, const cf_gemm_data *d,
                const double *want, double want_amax, const cf_tol *ts, double *out,
                double *out_amax, const char *tag) {
    const char *id = kmux_device_id(dev);
    char desc[1024];
    cf_gemm_describe(c, desc, sizeof desc);
    int result = 1;
    kmux_status s;
    cf_dbuf da = {0}, db = {0}, dc = {0}, dbias = {0}, dsc = {0};
    kmux_plan *plan = NULL;
    unsigned char *got = malloc(d->c.bytes + 1);
    unsigned char *gin =
        malloc((d->a.bytes > d->b.bytes ? d->a.bytes : d->b.bytes) + d->bias.bytes + 1);
    cr_assert(got && gin, "out of host memory");
    float scal[4] = {d->scale_a, d->scale_b, d->scale_d, -1.0f};
    cf_tensor tsc;
    cf_tensor_init(&tsc, KMUX_F32, 4);
    for (int i = 0; i < 4; i++)
        cf_tset(&tsc, i, scal[i]);

    CF_DEV(cf_upload(dev, st, &d->a, &da));
    CF_DEV(cf_upload(dev, st, &d->b, &db));
    CF_DEV(cf_upload(dev, st, &d->c, &dc));
    CF_DEV(cf_upload(dev, st, &d->bias, &dbias));
    CF_DEV(cf_upload(dev, st, &tsc, &dsc));
    const void *pa = c->null_ab ? NULL : cf_dptr(&da);
    const void *pb = c->null_ab ? NULL : cf_dptr(&db);
    cf_scalar alpha = cf_make_scalar(c->compute, c->alpha);
    cf_scalar beta = cf_make_scalar(c->compute, c->beta);

    int nimpl = 0, walked = 0; /* executed, walked */
    for (;;) {
        char impl[160];
        snprintf(impl, sizeof impl, "%s",
                 c->entry == CF_ENTRY_GEMM_EX      ? "(kmux_gemm_ex)"
                 : c->entry == CF_ENTRY_BATCHED_EX ? "(kmux_gemm_strided_batched_ex)"
                                                   : "?");
        CF_DEV(cf_reupload(st, &d->c, &dc));
        if (c->entry == CF_ENTRY_PLAN) {
            if (!plan) {
                kmux_matmul_desc md = cf_gemm_desc(c);
                kmux_plan_prefs prefs = KMUX_PLAN_PREFS_INIT;
                s = kmux_matmul_plan_create(dev, &md, &prefs, &plan);
                result = cf_plan_answer(s, "kmux_matmul_plan_create", tag, id, desc);
                if (result != 1) {
                    plan = NULL;
                    goto done;
                }
            }
            kmux_plan_info info;
            memset(&info, 0, sizeof info);
            CF_DEV(kmux_plan_info_get(plan, &info));
            if (cf_check_plan_info(&info, c->compute, impl, sizeof impl, tag, id, desc))
                result = -1;
            if (!cf_impl_wanted(walked, info.impl)) goto advance;
            kmux_matmul_args args = KMUX_MATMUL_ARGS_INIT;
            args.alpha = &alpha;
            args.beta = &beta;
            args.A = pa;
            args.B = pb;
            args.C = cf_dptr(&dc);
            args.bias = (c->epilogue & KMUX_EPILOGUE_BIAS) ? cf_dptr(&dbias) : NULL;
            if (c->scales) {
                float *sp = (float *)cf_dptr(&dsc);
                args.a_scale = sp;
                args.b_scale = sp + 1;
                args.d_scale = sp + 2;
                args.amax_d = sp + 3;
                CF_DEV(cf_reupload(st, &tsc, &dsc));
            }
            s = kmux_matmul_execute(plan, st, &args);
            if (s == KMUX_OK) s = kmux_stream_synchronize(st);
            if (s != KMUX_OK) {
                cf_fail("%s on %s impl %s: kmux_matmul_execute -> %s: %s\n  case: %s", tag, id,
                        impl, kmux_status_str(s), kmux_last_error(), desc);
                result = -1;
                goto done;
            }
        } else {
            if (c->entry == CF_ENTRY_GEMM_EX)
                s = kmux_gemm_ex(st, c->order, c->transa, c->transb, c->m, c->n, c->k, &alpha, pa,
                                 c->a_type, c->lda, pb, c->b_type, c->ldb, &beta, cf_dptr(&dc),
                                 c->c_type, c->ldc, c->compute);
            else
                s = kmux_gemm_strided_batched_ex(
                    st, c->order, c->transa, c->transb, c->m, c->n, c->k, &alpha, pa, c->a_type,
                    c->lda, c->stride_a, pb, c->b_type, c->ldb, c->stride_b, &beta, cf_dptr(&dc),
                    c->c_type, c->ldc, c->stride_c, c->batch, c->compute);
            char err[512];
            snprintf(err, sizeof err, "%s", kmux_last_error());
            if (s == KMUX_OK) s = kmux_stream_synchronize(st);
            if (s == KMUX_ERR_UNSUPPORTED) {
                result = 0;
                if (!err[0]) {
                    cf_fail("%s on %s: %s -> KMUX_ERR_UNSUPPORTED with an empty "
                            "kmux_last_error()\n  case: %s",
                            tag, id, impl, desc);
                    result = -1;
                }
                CF_DEV(cf_download(st, &dc, got));
                int64_t o = cf_any_change(&d->c, got);
                if (o >= 0) {
                    char where[256];
                    cf_describe_byte(&d->c, o, cf_gemm_locate_c, c, where, sizeof where);
                    cf_fail("%s on %s: %s answered KMUX_ERR_UNSUPPORTED but modified C (byte "
                            "%lld of the image: %s)\n  case: %s",
                            tag, id, impl, (long long)o - (long long)d->c.front, where, desc);
                    result = -1;
                }
                goto done;
            }
            if (s != KMUX_OK) {
                cf_fail("%s on %s: %s -> %s (only KMUX_OK or KMUX_ERR_UNSUPPORTED are acceptable "
                        "for a valid case): %s\n  case: %s",
                        tag, id, impl, kmux_status_str(s), err, desc);
                result = -1;
                goto done;
            }
        }

        /* ---- check this execution ---- */
        CF_DEV(cf_download(st, &dc, got));
        cf_stat.runs++;
        if (cf_check_output(&d->c, got, want, d->pre, d->bound, ts, cf_gemm_locate_c, c, "C", tag,
                            id, impl, desc))
            result = -1;
        double amax = NAN;
        if (c->scales) {
            float am;
            unsigned char sbuf[2 * CF_GUARD + 16];
            CF_DEV(cf_download(st, &dsc, sbuf));
            memcpy(&am, sbuf + CF_GUARD + 12, 4);
            amax = am;
            double tol = cf_tol_of(ts, want_amax, want_amax, want_amax * (c->k + 1));
            if (!cf_same(amax, want_amax, tol)) {
                cf_fail("%s on %s impl %s: amax_d got %.9g want %.9g (tolerance %.3g)\n  case: %s",
                        tag, id, impl, amax, want_amax, tol, desc);
                result = -1;
            }
        }
        if (nimpl == 0) {
            if (out)
                for (int64_t e = 0; e < d->c.span; e++)
                    out[e] = d->c.mask[e] ? tu_get(c->c_type, got + d->c.front, e) : NAN;
            if (out_amax) *out_amax = amax;
        }
        nimpl++;
    advance:
        walked++;
        if (c->entry != CF_ENTRY_PLAN || walked >= cf_walk_limit()) break;
        s = kmux_plan_next_impl(plan);
        if (s == KMUX_ERR_LAST_IMPL) break;
        if (s != KMUX_OK) {
            cf_fail("%s on %s: kmux_plan_next_impl -> %s (want KMUX_OK or KMUX_ERR_LAST_IMPL): "
                    "%s\n  case: %s",
                    tag, id, kmux_status_str(s), kmux_last_error(), desc);
            result = -1;
            break;
        }
    }

    /* inputs must come back unchanged, canaries included */
    {
        const cf_tensor *ins[3] = {&d->a, &d->b, &d->bias};
        const cf_dbuf *dins[3] = {&da, &db, &dbias};
        static const char *names[3] = {"A", "B", "bias"};
        for (int i = 0; i < 3; i++) {
            CF_DEV(cf_download(st, dins[i], gin));
            int64_t o = cf_any_change(ins[i], gin);
            if (o >= 0) {
                cf_fail("%s on %s: the input %s was modified (byte %lld of its image, relative "
                        "to its first element)\n  case: %s",
                        tag, id, names[i], (long long)o - (long long)ins[i]->front, desc);
                result = -1;
            }
        }
    }
done:
    if (plan) kmux_plan_destroy(plan);
    cf_dfree(&da);
    cf_dfree(&db);
    cf_dfree(&dc);
    cf_dfree(&dbias);
    cf_dfree(&dsc);
    cf_tensor_free(&tsc);
    free(got);
    free(gin);
    return result;
}

/** The whole check of one case: model, ref against the model, every device against ref (or
 *  against the model when ref itself failed, so that a ref bug does not hide a device's). */
void cf_gemm_check_case(cf_env *env, const cf_gemm_case *c, const char *tag) {
    cf_gemm_data d;
    char desc[1024], rtag[256];
    cf_gemm_describe(c, desc, sizeof desc);
    cf_gemm_prepare(c, &d);
    cf_stat.cases++;
    if (d.degenerate)
        cf_fail("%s: test bug: the fill gives a mostly-zero answer\n  case: %s", tag, desc);
    double *ref_out = malloc(((size_t)d.c.span + 1) * sizeof(double));
    cr_assert(ref_out, "out of host memory");
    double ref_amax = NAN;
    cf_tol tm = cf_gemm_tol(c, 1);
    snprintf(rtag, sizeof rtag, "%s [ref checked against the test's independent f64 model]", tag);
    int r = cf_gemm_run(env->ref, env->ref_stream, c, &d, d.model, d.amax, &tm, ref_out, &ref_amax,
                        rtag);
    if (r == 0)
        cf_fail("%s: ref answered KMUX_ERR_UNSUPPORTED (%s): the oracle must run every valid "
                "case\n  case: %s",
                tag, kmux_last_error(), desc);
    cf_tol td = cf_gemm_tol(c, 0);
    const double *want = r == 1 ? ref_out : d.model;
    double want_amax = r == 1 ? ref_amax : d.amax;
    char dtag[256];
    snprintf(dtag, sizeof dtag, "%s%s", tag,
             r == 1 ? "" : " [compared with the model, ref having failed]");
    for (int i = 0; i < env->ndev; i++) {
        int rr =
            cf_gemm_run(env->dev[i], env->stream[i], c, &d, want, want_amax, &td, NULL, NULL, dtag);
        if (rr == 0) cf_stat.unsupported++;
    }
    free(ref_out);
    cf_gemm_free(&d);
}
