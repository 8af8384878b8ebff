/*
 * test_bench_verify.c - kmux-bench's verification machinery: the comparison and its verdicts,
 * guard bands, fill planning, index picking and gathers, timing statistics, and the sampled ref
 * oracle, which must agree with the full one at every element it checks.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "kb_machine.h"
#include "kb_oracle.h"
#include "kb_tensor.h"
#include "kb_timing.h"
#include "kb_values.h"
#include "kb_verify.h"
#include "test_util.h"

static kb_oracle oracle_of(const double *v, int64_t n) {
    kb_oracle o;
    memset(&o, 0, sizeof o);
    o.ok = 1;
    o.total = o.count = n;
    o.expect = malloc((size_t)n * sizeof *o.expect);
    memcpy(o.expect, v, (size_t)n * sizeof *v);
    return o;
}

static const kb_fill_plan exact_plan = {4, 4, 1.0, 16, 1, 0.0, 0.0, 0.0}; /* 30% default */

Test(bench_verify, exact_match_passes_and_one_wrong_element_fails) {
    double want[6] = {3, -7, 12, 1, -2, 40};
    float got[6] = {3, -7, 12, 1, -2, 40};
    kb_oracle o = oracle_of(want, 6);
    kb_check c;
    kb_check_init(&c);
    kb_compare(&o, &exact_plan, got, KMUX_F32, &c);
    cr_assert_eq(c.status, KB_VERIFY_PASSED, "%s", c.message);
    cr_assert_eq(c.max_abs_err, 0.0);
    got[4] = -2.0f + 1e-6f; /* f32 must be exact: any difference fails */
    kb_check_init(&c);
    kb_compare(&o, &exact_plan, got, KMUX_F32, &c);
    cr_assert_eq(c.status, KB_VERIFY_FAILED);
    cr_assert_eq(c.mismatches, 1);
    cr_assert(strstr(c.message, "element 4"), "%s", c.message);
    kb_oracle_free(&o);
}

Test(bench_verify, unwritten_outputs_fail_even_outside_the_sample) {
    double want[2] = {5, 6};
    float got[8] = {5, 6, 1, 1, 1, 1, 1, 1};
    kb_oracle o = oracle_of(want, 2);
    o.total = 8; /* sampled: only the first two are checked */
    o.sampled = 1;
    kb_fill_unwritten(&got[6], KMUX_F32, 1);
    kb_check c;
    kb_check_init(&c);
    kb_compare(&o, &exact_plan, got, KMUX_F32, &c);
    cr_assert_eq(c.status, KB_VERIFY_FAILED);
    cr_assert_eq(c.unwritten, 1);
    cr_assert(strstr(c.message, "never written"), "%s", c.message);
    kb_oracle_free(&o);
}

static kb_problem conv_problem(kb_dir dir, int64_t stride) {
    kb_problem p;
    memset(&p, 0, sizeof p);
    kb_settings_default(&p.set);
    p.op = KB_OP_CONV;
    p.dir = dir;
    kb_conv_shape c = {1, 2, 8,      14,     14, 8, 14 / stride, 14 / stride,
                       3, 3, stride, stride, 1,  1, 0,           0};
    p.cv = c;
    return p;
}

/* benchdnn: matmul 90%; conv 70% (FWD, BWD_W with a kernel smaller than the image, BWD_D at
 * stride 1), 1 - 0.3/4 at stride 2 BWD_D, 85% with ReLU; 30% only as the compare default */
Test(bench_verify, zero_trust_limits_follow_benchdnn_per_op) {
    kb_problem mm;
    memset(&mm, 0, sizeof mm);
    kb_settings_default(&mm.set);
    mm.op = KB_OP_MATMUL;
    mm.dir = KB_DIR_FWD;
    mm.mm = (kb_matmul_shape){1, 1, 8, 8, 8};
    cr_assert_float_eq(kb_zero_trust_limit(&mm, 0), 0.90, 1e-12);
    cr_assert_float_eq(kb_zero_trust_limit(&mm, 1), 0.90, 1e-12);
    kb_problem fwd = conv_problem(KB_DIR_FWD, 1);
    cr_assert_float_eq(kb_zero_trust_limit(&fwd, 0), 0.70, 1e-12);
    cr_assert_float_eq(kb_zero_trust_limit(&fwd, 1), 0.85, 1e-12);
    kb_problem bd1 = conv_problem(KB_DIR_BWD_D, 1), bd2 = conv_problem(KB_DIR_BWD_D, 2);
    cr_assert_float_eq(kb_zero_trust_limit(&bd1, 0), 0.70, 1e-12);
    cr_assert_float_eq(kb_zero_trust_limit(&bd2, 0), 1.0 - 0.3 / 4.0, 1e-12);
    kb_problem bw = conv_problem(KB_DIR_BWD_W, 1);
    cr_assert_float_eq(kb_zero_trust_limit(&bw, 0), 0.70, 1e-12);
    bw.cv.oh = bw.cv.ow = 1; /* 9-tap kernel, 1 output pixel: min = 1, d = 9 */
    cr_assert_float_eq(kb_zero_trust_limit(&bw, 0), 1.0 - 0.3 / 9.0, 1e-12);

    /* 50% zeros: between the old 30% and the new limits -> mistrusted before, trusted now */
    double want[10] = {0, 0, 0, 0, 0, 1, 2, 3, 4, 5};
    float got[10] = {0, 0, 0, 0, 0, 1, 2, 3, 4, 5};
    kb_oracle o = oracle_of(want, 10);
    kb_check c;
    kb_check_init(&c);
    kb_compare(&o, &exact_plan, got, KMUX_F32, &c);
    cr_assert_eq(c.status, KB_VERIFY_MISTRUSTED, "default 30%%: %s", c.message);
    kb_fill_plan f;
    kb_plan_fill(&mm, &f);
    cr_assert_float_eq(f.zero_trust, 0.90, 1e-12);
    kb_check_init(&c);
    kb_compare(&o, &f, got, KMUX_F32, &c);
    cr_assert_eq(c.status, KB_VERIFY_PASSED, "matmul 90%%: %s", c.message);
    kb_plan_fill(&fwd, &f);
    kb_check_init(&c);
    kb_compare(&o, &f, got, KMUX_F32, &c);
    cr_assert_eq(c.status, KB_VERIFY_PASSED, "conv FWD 70%%: %s", c.message);
    /* 80% zeros: over conv FWD's 70%, under ReLU's 85% and matmul's 90% */
    for (int i = 5; i < 8; ++i)
        o.expect[i] = 0.0, got[i] = 0.0f;
    kb_check_init(&c);
    kb_compare(&o, &f, got, KMUX_F32, &c);
    cr_assert_eq(c.status, KB_VERIFY_MISTRUSTED, "conv FWD 70%%: %s", c.message);
    cr_assert(strstr(c.message, "limit 70%"), "%s", c.message);
    f.zero_trust = kb_zero_trust_limit(&fwd, 1);
    kb_check_init(&c);
    kb_compare(&o, &f, got, KMUX_F32, &c);
    cr_assert_eq(c.status, KB_VERIFY_PASSED, "conv FWD + ReLU 85%%: %s", c.message);
    kb_oracle_free(&o);
}

Test(bench_verify, mostly_zero_results_are_mistrusted) {
    double want[10] = {0, 0, 0, 0, 1, 2, 3, 4, 5, 6};
    float got[10] = {0, 0, 0, 0, 1, 2, 3, 4, 5, 6};
    kb_oracle o = oracle_of(want, 10);
    kb_check c;
    kb_check_init(&c);
    kb_compare(&o, &exact_plan, got, KMUX_F32, &c);
    cr_assert_eq(c.status, KB_VERIFY_MISTRUSTED, "40%% zeros");
    cr_assert_float_eq(c.zero_fraction, 0.4, 1e-12);
    /* zeros by structure (strided BWD_D) do not count */
    o.trusted = calloc(10, 1);
    for (int i = 2; i < 10; ++i)
        o.trusted[i] = 1;
    kb_check_init(&c);
    kb_compare(&o, &exact_plan, got, KMUX_F32, &c);
    cr_assert_eq(c.status, KB_VERIFY_PASSED, "2 zeros of 8 trusted: %s", c.message);
    kb_oracle_free(&o);
}

Test(bench_verify, guard_band_and_inputs) {
    unsigned char g[64];
    kb_guard_fill(g, sizeof g, 3);
    cr_assert(kb_guard_check(g, sizeof g, 3));
    cr_assert_not(kb_guard_check(g, sizeof g, 4), "the pattern depends on the seed");
    g[63] ^= 1;
    cr_assert_not(kb_guard_check(g, sizeof g, 3));
    double want[1] = {1};
    float got[1] = {1};
    kb_oracle o = oracle_of(want, 1);
    kb_check c;
    kb_check_init(&c);
    c.guard_ok = 0;
    kb_compare(&o, &exact_plan, got, KMUX_F32, &c);
    cr_assert_eq(c.status, KB_VERIFY_FAILED);
    cr_assert(strstr(c.message, "guard"), "%s", c.message);
    kb_check_init(&c);
    c.inputs_ok = 0;
    kb_compare(&o, &exact_plan, got, KMUX_F32, &c);
    cr_assert_eq(c.status, KB_VERIFY_FAILED);
    kb_oracle_free(&o);
}

Test(bench_verify, narrow_outputs_allow_one_rounding) {
    kb_problem p;
    memset(&p, 0, sizeof p);
    kb_settings_default(&p.set);
    p.op = KB_OP_MATMUL;
    p.dir = KB_DIR_FWD;
    p.mm.m = p.mm.n = 4, p.mm.k = 64, p.mm.batch_a = p.mm.batch_b = 1;
    p.set.dt[0] = p.set.dt[1] = p.set.dt[2] = KMUX_BF16;
    kb_fill_plan f;
    kb_plan_fill(&p, &f);
    cr_assert(f.exact);
    cr_assert_float_eq(f.tol_rel, 2.0 * ldexp(1.0, -8), 1e-15);
    double want[1] = {1000.0};
    uint16_t got[1];
    kb_oracle o = oracle_of(want, 1);
    kb_check c;
    kb_set(got, KMUX_BF16, 0, 1000.0 + 4.0); /* one bf16 ulp at 1000 is 4 */
    kb_check_init(&c);
    kb_compare(&o, &f, got, KMUX_BF16, &c);
    cr_assert_eq(c.status, KB_VERIFY_PASSED, "%s", c.message);
    kb_set(got, KMUX_BF16, 0, 1000.0 + 16.0);
    kb_check_init(&c);
    kb_compare(&o, &f, got, KMUX_BF16, &c);
    cr_assert_eq(c.status, KB_VERIFY_FAILED);
    kb_oracle_free(&o);
}

Test(bench_verify, fill_plan_keeps_partial_sums_exact) {
    kb_problem p;
    memset(&p, 0, sizeof p);
    kb_settings_default(&p.set);
    p.op = KB_OP_CONV;
    p.dir = KB_DIR_BWD_W;
    /* reduction over N*P*Q = 64 * 112 * 112 = 802816 terms */
    p.cv = (kb_conv_shape){1, 64, 3, 224, 224, 64, 112, 112, 7, 7, 2, 2, 3, 3, 0, 0};
    kb_fill_plan f;
    kb_plan_fill(&p, &f);
    cr_assert_float_eq(f.k_red, 802816.0, 0.5);
    cr_assert(f.exact);
    cr_assert_leq((double)f.range_a * f.range_b * f.k_red, 16777216.0);
    cr_assert_eq(f.tol_abs, 0.0);
    cr_assert_lt(f.density_b, 1e-3, "the sparse operand keeps about 32 terms per output");
    /* f16 accumulation cannot be exact for long sums: a tolerance instead */
    p.dir = KB_DIR_FWD;
    p.cv.ic = 64; /* 64 x 7 x 7 = 3136 terms > 2048 */
    p.set.dt[0] = p.set.dt[1] = p.set.dt[2] = KMUX_F16;
    p.set.compute = KMUX_COMPUTE_F16;
    kb_plan_fill(&p, &f);
    cr_assert_not(f.exact);
    cr_assert_gt(f.tol_abs, 0.0);
}

Test(bench_verify, integer_fills) {
    float a[4096], b[4096];
    kb_fill_int(a, KMUX_F32, 4096, 3, 1.0, 7);
    kb_fill_int(b, KMUX_F32, 4096, 3, 1.0, 7);
    cr_assert_eq(memcmp(a, b, sizeof a), 0, "deterministic");
    int seen[7] = {0};
    for (int i = 0; i < 4096; ++i) {
        cr_assert(a[i] == floorf(a[i]) && fabsf(a[i]) <= 3.0f, "a[%d] = %g", i, a[i]);
        seen[(int)a[i] + 3]++;
    }
    /* density 1: no sparsity and no zeros at all (a short reduction must not look empty) */
    cr_assert_eq(seen[3], 0, "0 appears %d times in a dense fill", seen[3]);
    for (int v = 0; v < 7; ++v)
        if (v != 3) cr_assert_gt(seen[v], 550, "value %d appears %d times", v - 3, seen[v]);
    kb_fill_int(b, KMUX_F32, 4096, 3, 0.125, 9);
    int nz = 0;
    for (int i = 0; i < 4096; ++i)
        nz += b[i] != 0.0f;
    cr_assert(nz > 400 && nz < 624, "density 1/8: %d nonzeros of 4096", nz);
    kb_fill_int(b, KMUX_F32, 4096, 3, 0.0, 9);
    for (int i = 0; i < 4096; ++i)
        cr_assert_eq(b[i], 0.0f);
    uint8_t e[256];
    kb_fill_int(e, KMUX_F8_E5M2, 256, kb_dtype_int_range(KMUX_F8_E5M2), 1.0, 1);
    for (int i = 0; i < 256; ++i) {
        double v = kb_get(e, KMUX_F8_E5M2, i);
        cr_assert(v == floor(v) && fabs(v) <= 8, "e5m2 holds the integer exactly: %g", v);
    }
}

Test(bench_verify, pick_indices) {
    int64_t v[64];
    cr_assert_eq(kb_pick_indices(10, 64, v), 10);
    for (int i = 0; i < 10; ++i)
        cr_assert_eq(v[i], i);
    int64_t n = kb_pick_indices(1000, 40, v);
    cr_assert_eq(n, 40);
    cr_assert_eq(v[0], 0);
    cr_assert_eq(v[39], 999);
    cr_assert_eq(v[36], 996, "the last 4 (tails of blocked loops)");
    for (int i = 1; i < 40; ++i)
        cr_assert_gt(v[i], v[i - 1]);
    n = kb_pick_indices(17, 16, v);
    cr_assert_eq(n, 16);
    for (int i = 1; i < 16; ++i)
        cr_assert(v[i] > v[i - 1] && v[i] < 17);
}

Test(bench_verify, gathers_follow_the_layouts) {
    const int64_t d[4] = {3, 5, 4, 2};
    int32_t src[120], dst[2 * 2 * 8];
    const int64_t ni[2] = {2, 0}, ci[2] = {4, 1};
    for (int l = 0; l < 2; ++l) {
        kmux_layout lay = l ? KMUX_NHWC : KMUX_NCHW;
        for (int n = 0; n < 3; ++n)
            for (int c = 0; c < 5; ++c)
                for (int h = 0; h < 4; ++h)
                    for (int w = 0; w < 2; ++w)
                        src[kb_off4(lay, d, n, c, h, w)] = 1000 * n + 100 * c + 10 * h + w;
        kb_gather4(src, sizeof(int32_t), lay, d, ni, 2, ci, 2, dst);
        const int64_t od[4] = {2, 2, 4, 2};
        for (int a = 0; a < 2; ++a)
            for (int b = 0; b < 2; ++b)
                for (int h = 0; h < 4; ++h)
                    for (int w = 0; w < 2; ++w)
                        cr_assert_eq(dst[kb_off4(lay, od, a, b, h, w)],
                                     1000 * ni[a] + 100 * ci[b] + 10 * h + w);
    }
    /* op(A) rows of a column-major transposed matrix: A stored 3 x 4 col-major, op(A) 4 x 3 */
    float A[12], rows[6];
    for (int i = 0; i < 12; ++i)
        A[i] = (float)i;
    const int64_t r[2] = {3, 1};
    kb_gather_rows(A, sizeof(float), KMUX_COL_MAJOR, KMUX_TRANS, 3, r, 2, 3, rows);
    for (int a = 0; a < 2; ++a)
        for (int j = 0; j < 3; ++j) /* op(A)[i][j] = A[j][i] = A[j + 3 i] */
            cr_assert_eq(rows[a * 3 + j], (float)(j + 3 * r[a]));
}

Test(bench_verify, timing_statistics) {
    double ms[10] = {5, 1, 4, 2, 3, 10, 6, 8, 7, 9};
    kb_stats s;
    kb_stats_compute(ms, 10, &s);
    cr_assert_eq(s.reps, 10);
    cr_assert_float_eq(s.min_ms, 1.0, 1e-12);
    cr_assert_float_eq(s.max_ms, 10.0, 1e-12);
    cr_assert_float_eq(s.median_ms, 5.5, 1e-12);
    cr_assert_float_eq(s.p10_ms, 1.9, 1e-12);
    cr_assert_float_eq(s.p90_ms, 9.1, 1e-12);
    cr_assert_float_eq(s.spread, (9.1 - 1.9) / 5.5, 1e-12);
    cr_assert_float_eq(s.mean_ms, 5.5, 1e-12);
}

Test(bench_verify, version_commit) {
    char c[48];
    kb_version_commit("0.1.0 (64277b113a26)", c, sizeof c);
    cr_assert_str_eq(c, "64277b113a26");
    kb_version_commit("0.1.0+abcdef1234", c, sizeof c);
    cr_assert_str_eq(c, "abcdef1234");
    kb_version_commit("0.1.0", c, sizeof c);
    cr_assert_str_eq(c, "unknown");
}

/* The sampled oracle computes a slice of the problem; at every element it checks it must give
 * the value the full oracle gives there. */
static void sampled_matches_full(kb_problem *p) {
    kmux_context *ctx = tu_context();
    kmux_device *ref = tu_device(ctx, "ref");
    kmux_stream *s = NULL;
    TU_OK(kmux_stream_create(ref, &s));
    kb_tensors t;
    kb_problem_tensors(p, &t);
    kb_fill_plan f;
    kb_plan_fill(p, &f);
    void *host[3] = {NULL, NULL, NULL};
    for (int i = 0; i < 3; ++i) {
        host[i] = malloc((size_t)t.count[i] * kb_dtype_size(t.dt[i]));
        kb_fill_int(host[i], t.dt[i], t.count[i], 3, 1.0, 40 + (uint64_t)i);
    }
    kb_oracle full, part;
    kb_oracle_compute(ref, s, p, host, 1e12, &full);
    cr_assert(full.ok, "%s", full.message);
    cr_assert_not(full.sampled);
    cr_assert_eq(full.count, t.count[t.out]);
    kb_oracle_compute(ref, s, p, host, 1.0, &part);
    cr_assert(part.ok, "%s", part.message);
    cr_assert(part.sampled, "a tiny budget samples");
    cr_assert_lt(part.count, full.count);
    cr_assert_gt(part.count, 0);
    cr_assert_neq(part.sample_note[0], '\0');
    for (int64_t i = 0; i < part.count; ++i) {
        int64_t idx = part.index[i];
        cr_assert(idx >= 0 && idx < full.total);
        cr_assert_eq(part.expect[i], full.expect[idx], "element %lld: %g vs %g", (long long)idx,
                     part.expect[i], full.expect[idx]);
    }
    kb_oracle_free(&full);
    kb_oracle_free(&part);
    for (int i = 0; i < 3; ++i)
        free(host[i]);
    kmux_stream_destroy(s);
    kmux_context_destroy(ctx);
}

Test(bench_oracle, sampled_gemm_matches_full) {
    kb_problem p;
    memset(&p, 0, sizeof p);
    kb_settings_default(&p.set);
    p.op = KB_OP_MATMUL;
    p.dir = KB_DIR_FWD;
    p.mm = (kb_matmul_shape){3, 3, 37, 29, 23};
    for (int tags = 0; tags < 8; ++tags) {
        p.set.stag = tags & 1, p.set.wtag = (tags >> 1) & 1, p.set.dtag = (tags >> 2) & 1;
        sampled_matches_full(&p);
    }
    p.mm.batch_b = 1; /* broadcast B */
    sampled_matches_full(&p);
}

Test(bench_oracle, sampled_conv_matches_full_in_every_direction_and_layout) {
    kb_problem p;
    memset(&p, 0, sizeof p);
    kb_settings_default(&p.set);
    p.op = KB_OP_CONV;
    /* g, mb, ic, ih, iw, oc, oh, ow, kh, kw, sh, sw, ph, pw, dh, dw */
    p.cv = (kb_conv_shape){1, 5, 20, 9, 7, 18, 5, 3, 3, 2, 2, 2, 1, 0, 0, 0};
    const kb_dir dirs[3] = {KB_DIR_FWD, KB_DIR_BWD_D, KB_DIR_BWD_W};
    for (int l = 0; l < 2; ++l)
        for (int d = 0; d < 3; ++d) {
            p.set.layout = l ? KMUX_NHWC : KMUX_NCHW;
            p.dir = dirs[d];
            sampled_matches_full(&p);
        }
    /* grouped: sliced by images only */
    p.cv = (kb_conv_shape){2, 4, 8, 6, 6, 6, 6, 6, 3, 3, 1, 1, 1, 1, 0, 0};
    p.dir = KB_DIR_FWD;
    sampled_matches_full(&p);
}
