/*
 * test_conformance_edge.c - conformance checks across backends that are not one case each:
 * what an unsupported answer must look like (status, message, output untouched, the same
 * answer from plans and from kmux_gemm_ex), device properties that agree with what plans
 * accept, plan preferences (no emulation, determinism), plans reused with new data and scalars,
 * the kmux_gemm_ex plan cache under changing arguments, and element-aligned pointers.
 */
#include "conformance.h"

static cf_gemm_case simple_case(const cf_combo *cb, int entry, kmux_order o, kmux_transpose ta,
                                kmux_transpose tb, int64_t m, int64_t n, int64_t k, int64_t pad) {
    cf_gemm_case c;
    memset(&c, 0, sizeof c);
    c.entry = entry;
    c.order = o, c.transa = ta, c.transb = tb;
    c.m = m, c.n = n, c.k = k;
    c.batch = 1;
    c.a_type = cb->a_type, c.b_type = cb->b_type, c.c_type = cb->c_type;
    c.compute = cb->compute_type;
    c.bias_type = KMUX_F32;
    c.alpha = 1;
    c.beta = 1;
    c.fill = CF_FILL_EXACT;
    cf_gemm_layout(&c, pad, 0);
    return c;
}

/* Plan creation, kmux_gemm_ex and kmux_gemm_strided_batched_ex agree on what a device
 * supports; an unsupported answer carries a message and leaves C untouched; device properties
 * list the dtypes that plans accept. */
Test(conformance_edge, unsupported_answers_are_clean) {
    cf_env env;
    cf_env_init(&env);
    cf_combo combos[64];
    int nc = cf_gemm_combos(combos, 64);
    for (int di = -1; di < env.ndev; di++) {
        kmux_device *dev = di < 0 ? env.ref : env.dev[di];
        kmux_stream *st = di < 0 ? env.ref_stream : env.stream[di];
        const char *id = kmux_device_id(dev);
        kmux_device_props props;
        TU_OK(kmux_device_props_get(dev, &props));
        int input_ok[KMUX_DTYPE_COUNT] = {0};
        for (int ci = 0; ci < nc; ci++) {
            for (int entry = 0; entry < 3; entry++) {
                cf_gemm_case c = simple_case(&combos[ci], entry, KMUX_ROW_MAJOR, KMUX_NO_TRANS,
                                             KMUX_NO_TRANS, 7, 5, 3, 1);
                if (entry == CF_ENTRY_BATCHED_EX) {
                    c.batch = 2;
                    cf_gemm_layout(&c, 1, 1);
                }
                char desc[1024];
                cf_gemm_describe(&c, desc, sizeof desc);
                kmux_matmul_desc md = cf_gemm_desc(&c);
                kmux_plan *plan = NULL;
                kmux_status ps = kmux_matmul_plan_create(dev, &md, NULL, &plan);
                char perr[512];
                snprintf(perr, sizeof perr, "%s", kmux_last_error());
                kmux_plan_destroy(plan);
                if (ps != KMUX_OK && ps != KMUX_ERR_UNSUPPORTED) {
                    cf_fail("%s: kmux_matmul_plan_create -> %s (want OK or UNSUPPORTED): %s\n  "
                            "case: %s",
                            id, kmux_status_str(ps), perr, desc);
                    continue;
                }
                if (ps == KMUX_ERR_UNSUPPORTED && !perr[0])
                    cf_fail("%s: KMUX_ERR_UNSUPPORTED without a message\n  case: %s", id, desc);
                if (di < 0 && ps != KMUX_OK)
                    cf_fail("ref must accept every combination of kmux.h: %s\n  case: %s", perr,
                            desc);
                if (ps == KMUX_OK) {
                    input_ok[c.a_type] = input_ok[c.b_type] = 1;
                    if (!props.dtype_support[c.a_type] || !props.dtype_support[c.b_type] ||
                        !props.dtype_support[c.c_type])
                        cf_fail("%s: a plan for a=%s b=%s c=%s is accepted but "
                                "kmux_device_props.dtype_support says %d/%d/%d",
                                id, kmux_dtype_name(c.a_type), kmux_dtype_name(c.b_type),
                                kmux_dtype_name(c.c_type), props.dtype_support[c.a_type],
                                props.dtype_support[c.b_type], props.dtype_support[c.c_type]);
                }
                if (entry == CF_ENTRY_PLAN) continue;
                /* the direct entry points must give the same answer and, when unsupported,
                   leave C alone */
                cf_gemm_data d;
                cf_gemm_prepare(&c, &d);
                cf_dbuf da = {0}, db = {0}, dc = {0};
                TU_OK(cf_upload(dev, st, &d.a, &da));
                TU_OK(cf_upload(dev, st, &d.b, &db));
                TU_OK(cf_upload(dev, st, &d.c, &dc));
                cf_scalar one = cf_make_scalar(c.compute, 1);
                kmux_status es;
                if (entry == CF_ENTRY_GEMM_EX)
                    es = kmux_gemm_ex(st, c.order, c.transa, c.transb, c.m, c.n, c.k, &one,
                                      cf_dptr(&da), c.a_type, c.lda, cf_dptr(&db), c.b_type, c.ldb,
                                      &one, cf_dptr(&dc), c.c_type, c.ldc, c.compute);
                else
                    es = kmux_gemm_strided_batched_ex(
                        st, c.order, c.transa, c.transb, c.m, c.n, c.k, &one, cf_dptr(&da),
                        c.a_type, c.lda, c.stride_a, cf_dptr(&db), c.b_type, c.ldb, c.stride_b,
                        &one, cf_dptr(&dc), c.c_type, c.ldc, c.stride_c, c.batch, c.compute);
                char eerr[512];
                snprintf(eerr, sizeof eerr, "%s", kmux_last_error());
                TU_OK(kmux_stream_synchronize(st));
                if (es != ps)
                    cf_fail("%s: %s -> %s but kmux_matmul_plan_create -> %s for the same "
                            "arguments (%s / %s)\n  case: %s",
                            id,
                            entry == CF_ENTRY_GEMM_EX ? "kmux_gemm_ex"
                                                      : "kmux_gemm_strided_batched_ex",
                            kmux_status_str(es), kmux_status_str(ps), eerr, perr, desc);
                if (es != KMUX_OK) {
                    unsigned char *got = malloc(d.c.bytes);
                    cr_assert(got);
                    TU_OK(cf_download(st, &dc, got));
                    int64_t o = cf_any_change(&d.c, got);
                    if (o >= 0)
                        cf_fail("%s: answered %s but modified C (byte %lld of its image)\n  "
                                "case: %s",
                                id, kmux_status_str(es), (long long)o, desc);
                    free(got);
                }
                cf_dfree(&da);
                cf_dfree(&db);
                cf_dfree(&dc);
                cf_gemm_free(&d);
            }
        }
        for (int t = 1; t < KMUX_DTYPE_COUNT; t++) {
            if (t == KMUX_I32 || !props.dtype_support[t] || input_ok[t]) continue;
            cf_fail("%s: kmux_device_props.dtype_support[%s] is set but no GEMM combination of "
                    "kmux.h with %s inputs is accepted by kmux_matmul_plan_create",
                    id, kmux_dtype_name((kmux_dtype)t), kmux_dtype_name((kmux_dtype)t));
        }
    }
    cf_summary("unsupported_answers_are_clean");
    cf_env_fini(&env);
}

/* allow_emulation = 0 never gives a converting ("+cvt") implementation; require_deterministic
 * = 1 only deterministic ones; no implementation lowers the compute type. Every implementation
 * of every plan is walked. Convolution plans are checked the same way. */
Test(conformance_edge, plan_preferences_are_honoured) {
    cf_env env;
    cf_env_init(&env);
    cf_combo combos[64];
    int nc = cf_gemm_combos(combos, 64);
    for (int di = 0; di < env.ndev; di++) {
        const char *id = env.id[di];
        for (int ci = 0; ci < nc + 12; ci++) {
            for (int mode = 0; mode < 3; mode++) {
                kmux_plan_prefs prefs = KMUX_PLAN_PREFS_INIT;
                if (mode == 1) prefs.allow_emulation = 0;
                if (mode == 2) prefs.require_deterministic = 1;
                kmux_plan *plan = NULL;
                kmux_status s;
                char desc[1024];
                kmux_compute_type want;
                if (ci < nc) {
                    cf_gemm_case c = simple_case(&combos[ci], CF_ENTRY_PLAN, KMUX_COL_MAJOR,
                                                 KMUX_TRANS, KMUX_NO_TRANS, 33, 17, 9, 0);
                    cf_gemm_describe(&c, desc, sizeof desc);
                    kmux_matmul_desc md = cf_gemm_desc(&c);
                    want = c.compute;
                    s = kmux_matmul_plan_create(env.dev[di], &md, &prefs, &plan);
                } else {
                    static const kmux_dtype ct[4] = {KMUX_F32, KMUX_F16, KMUX_BF16, KMUX_F64};
                    int j = ci - nc;
                    kmux_conv2d_desc cd = KMUX_CONV2D_DESC_INIT;
                    cd.direction = (kmux_conv_direction)(KMUX_CONV_FWD + j % 3);
                    cd.layout = (j / 3) % 2 ? KMUX_NHWC : KMUX_NCHW;
                    cd.n = 2, cd.c = 4, cd.h = 9, cd.w = 7, cd.k = 6, cd.r = 3, cd.s = 3;
                    cd.pad_top = cd.pad_bottom = cd.pad_left = cd.pad_right = 1;
                    cd.x_type = cd.w_type = cd.y_type = ct[j / 3];
                    cd.compute_type = ct[j / 3] == KMUX_F64 ? KMUX_COMPUTE_F64 : KMUX_COMPUTE_F32;
                    want = cd.compute_type;
                    snprintf(desc, sizeof desc,
                             "conv2d direction=%d layout=%s 2x4x9x7 k=6 3x3 "
                             "pad 1 type=%s",
                             (int)cd.direction, cd.layout == KMUX_NCHW ? "NCHW" : "NHWC",
                             kmux_dtype_name(cd.x_type));
                    s = kmux_conv2d_plan_create(env.dev[di], &cd, &prefs, &plan);
                }
                if (s != KMUX_OK) {
                    if (s != KMUX_ERR_UNSUPPORTED)
                        cf_fail("%s: plan creation -> %s (want OK or UNSUPPORTED): %s\n  "
                                "prefs: allow_emulation=%d require_deterministic=%d\n  case: %s",
                                id, kmux_status_str(s), kmux_last_error(), prefs.allow_emulation,
                                prefs.require_deterministic, desc);
                    continue;
                }
                for (int guard = 0; guard < 256; guard++) {
                    kmux_plan_info info;
                    memset(&info, 0, sizeof info);
                    TU_OK(kmux_plan_info_get(plan, &info));
                    const char *impl = info.impl ? info.impl : "(NULL)";
                    if (mode == 1 && strstr(impl, "+cvt"))
                        cf_fail("%s impl %s: an emulated implementation with allow_emulation = "
                                "0\n  case: %s",
                                id, impl, desc);
                    if (mode == 2 && !info.deterministic)
                        cf_fail("%s impl %s: not deterministic with require_deterministic = 1\n"
                                "  case: %s",
                                id, impl, desc);
                    if (!cf_compute_ok(want, info.effective_compute))
                        cf_fail("%s impl %s: effective compute %s for requested %s\n  case: %s", id,
                                impl, kmux_compute_type_name(info.effective_compute),
                                kmux_compute_type_name(want), desc);
                    if (info.impl_index != guard)
                        cf_fail("%s impl %s: impl_index %d, want %d\n  case: %s", id, impl,
                                info.impl_index, guard, desc);
                    if (!info.device || strcmp(info.device, id) != 0)
                        cf_fail("%s impl %s: plan info names device %s\n  case: %s", id, impl,
                                info.device ? info.device : "(NULL)", desc);
                    kmux_status ns = kmux_plan_next_impl(plan);
                    if (ns == KMUX_ERR_LAST_IMPL) break;
                    if (ns != KMUX_OK) {
                        cf_fail("%s: kmux_plan_next_impl -> %s: %s\n  case: %s", id,
                                kmux_status_str(ns), kmux_last_error(), desc);
                        break;
                    }
                }
                kmux_plan_destroy(plan);
            }
        }
    }
    cf_summary("plan_preferences_are_honoured");
    cf_env_fini(&env);
}

/* One plan executed on two data sets with different scalars (and the first one again): a plan
 * must hold no pointer or scalar of a previous execution, must not write to an earlier C, and a
 * deterministic implementation gives bitwise the same result twice. */
Test(conformance_edge, plan_reused_with_new_data) {
    cf_env env;
    cf_env_init(&env);
    cf_combo combos[64];
    int nc = cf_gemm_combos(combos, 64);
    for (int ci = 0; ci < nc; ci++) {
        cf_gemm_case c[2];
        c[0] = simple_case(&combos[ci], CF_ENTRY_PLAN, KMUX_ROW_MAJOR, KMUX_TRANS, KMUX_NO_TRANS,
                           13, 11, 19, 2);
        c[0].alpha = 1, c[0].beta = 0, c[0].c_nan = 1;
        c[1] = c[0];
        c[1].alpha = 2, c[1].beta = -1, c[1].c_nan = 0;
        cf_gemm_data d[2];
        double *ref[2];
        char desc[2][1024];
        for (int i = 0; i < 2; i++) {
            c[i].seed = cf_seed(1000 + (uint64_t)ci, (uint64_t)i);
            cf_gemm_describe(&c[i], desc[i], sizeof desc[i]);
            cf_gemm_prepare(&c[i], &d[i]);
            ref[i] = malloc((size_t)d[i].c.span * sizeof(double));
            cr_assert(ref[i]);
            cf_tol tm = cf_gemm_tol(&c[i], 1);
            cr_assert(cf_gemm_run(env.ref, env.ref_stream, &c[i], &d[i], d[i].model, 0, &tm, ref[i],
                                  NULL, "plan_reused_with_new_data (ref)") == 1,
                      "ref failed: %s", desc[i]);
        }
        for (int di = 0; di < env.ndev; di++) {
            kmux_device *dev = env.dev[di];
            kmux_stream *st = env.stream[di];
            const char *id = env.id[di];
            kmux_matmul_desc md = cf_gemm_desc(&c[0]);
            kmux_plan *plan = NULL;
            if (kmux_matmul_plan_create(dev, &md, NULL, &plan) != KMUX_OK) continue;
            kmux_plan_info info;
            TU_OK(kmux_plan_info_get(plan, &info));
            cf_dbuf da[2], db[2], dc[2];
            unsigned char *got[3];
            for (int i = 0; i < 2; i++) {
                TU_OK(cf_upload(dev, st, &d[i].a, &da[i]));
                TU_OK(cf_upload(dev, st, &d[i].b, &db[i]));
                TU_OK(cf_upload(dev, st, &d[i].c, &dc[i]));
            }
            for (int i = 0; i < 3; i++) {
                got[i] = malloc(d[0].c.bytes);
                cr_assert(got[i]);
            }
            /* executions: data 0, data 1, then data 0 again into a fresh copy of C 0 */
            for (int run = 0; run < 3; run++) {
                int i = run == 1;
                if (run == 2) TU_OK(cf_reupload(st, &d[0].c, &dc[0]));
                cf_scalar al = cf_make_scalar(c[i].compute, c[i].alpha);
                cf_scalar be = cf_make_scalar(c[i].compute, c[i].beta);
                kmux_matmul_args args = KMUX_MATMUL_ARGS_INIT;
                args.alpha = &al, args.beta = &be;
                args.A = cf_dptr(&da[i]), args.B = cf_dptr(&db[i]), args.C = cf_dptr(&dc[i]);
                TU_OK(kmux_matmul_execute(plan, st, &args));
                TU_OK(kmux_stream_synchronize(st));
                if (run == 1) TU_OK(cf_download(st, &dc[0], got[0])); /* C 0 after run 1 */
                if (run == 1) TU_OK(cf_download(st, &dc[1], got[1]));
                if (run == 2) TU_OK(cf_download(st, &dc[0], got[2]));
            }
            for (int i = 0; i < 3; i++) {
                int j = i == 1;
                cf_tol td = cf_gemm_tol(&c[j], 0);
                cf_cmp r;
                cf_compare(&d[j].c, got[i], ref[j], d[j].pre, d[j].bound, &td, &r);
                int64_t o = cf_foreign_write(&d[j].c, got[i]);
                if (r.bad || o >= 0)
                    cf_fail("%s impl %s: plan reused (execution %d of 3, data set %d): %lld "
                            "elements of C differ (first %lld: got %.9g want %.9g), foreign "
                            "write at image byte %lld\n  case: %s",
                            id, info.impl, i + 1, j, (long long)r.bad, (long long)r.first, r.got,
                            r.want, (long long)o, desc[j]);
            }
            if (info.deterministic && memcmp(got[0], got[2], d[0].c.bytes) != 0)
                cf_fail("%s impl %s: reports deterministic but two executions on the same data "
                        "differ bitwise\n  case: %s",
                        id, info.impl, desc[0]);
            for (int i = 0; i < 2; i++) {
                cf_dfree(&da[i]);
                cf_dfree(&db[i]);
                cf_dfree(&dc[i]);
            }
            for (int i = 0; i < 3; i++)
                free(got[i]);
            kmux_plan_destroy(plan);
        }
        for (int i = 0; i < 2; i++) {
            cf_gemm_free(&d[i]);
            free(ref[i]);
        }
    }
    cf_summary("plan_reused_with_new_data");
    cf_env_fini(&env);
}

/* kmux_gemm_ex caches plans in the context: calls with the same m, n, k but another order,
 * transpose, leading dimension, dtype, compute type or scalar must not reuse a wrong plan. */
Test(conformance_edge, gemm_ex_plan_cache_keys) {
    cf_env env;
    cf_env_init(&env);
    cf_combo combos[64];
    int nc = cf_gemm_combos(combos, 64);
    static const kmux_order orders[2] = {KMUX_ROW_MAJOR, KMUX_COL_MAJOR};
    static const kmux_transpose tr[2] = {KMUX_NO_TRANS, KMUX_TRANS};
    int idx = 0;
    long only = cf_only_case();
    for (int round = 0; round < 2; round++)
        for (int ci = 0; ci < nc; ci++)
            for (int v = 0; v < 16; v++, idx++) {
                if (only >= 0 && idx != only) continue;
                cf_gemm_case c =
                    simple_case(&combos[ci], v & 8 ? CF_ENTRY_BATCHED_EX : CF_ENTRY_GEMM_EX,
                                orders[v & 1], tr[(v >> 1) & 1], tr[(v >> 2) & 1], 6, 5, 4, round);
                c.alpha = (v & 4) ? 2 : 1;
                c.beta = round ? 0 : -1;
                c.c_nan = c.beta == 0;
                if (c.entry == CF_ENTRY_BATCHED_EX) {
                    c.batch = 2 + round;
                    cf_gemm_layout(&c, round, 1);
                }
                c.seed = cf_seed(77, (uint64_t)idx);
                char tag[160];
                snprintf(tag, sizeof tag,
                         "[gemm_ex_plan_cache_keys, case %d; rerun alone with "
                         "KMUX_CONFORMANCE_CASE=%d]",
                         idx, idx);
                cf_gemm_check_case(&env, &c, tag);
            }
    cf_summary("gemm_ex_plan_cache_keys");
    cf_env_fini(&env);
}

/* Operands that are element-aligned but not 16-byte aligned (a sub-matrix of a larger one):
 * the answer is right or the device declines with KMUX_ERR_UNSUPPORTED. */
Test(conformance_edge, element_aligned_pointers) {
    cf_env env;
    cf_env_init(&env);
    cf_combo combos[64];
    int nc = cf_gemm_combos(combos, 64);
    long only = cf_only_case();
    int idx = 0;
    for (int ci = 0; ci < nc; ci++)
        for (int entry = 0; entry < 2; entry++, idx++) {
            if (only >= 0 && idx != only) continue;
            cf_gemm_case c =
                simple_case(&combos[ci], entry, entry ? KMUX_COL_MAJOR : KMUX_ROW_MAJOR,
                            KMUX_NO_TRANS, KMUX_TRANS, 7, 17, 33, 1);
            c.misalign = 1;
            c.seed = cf_seed(99, (uint64_t)idx);
            char tag[160];
            snprintf(tag, sizeof tag,
                     "[element_aligned_pointers, case %d; rerun alone with "
                     "KMUX_CONFORMANCE_CASE=%d]",
                     idx, idx);
            cf_gemm_check_case(&env, &c, tag);
        }
    cf_summary("element_aligned_pointers");
    cf_env_fini(&env);
}
