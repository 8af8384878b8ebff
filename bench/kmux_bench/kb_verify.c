/* kb_verify.c - fill planning, comparison with the oracle, zero trust and guard bands. */
#include "kb_verify.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kb_values.h"

const char *kb_verify_status_name(kb_verify_status s) {
    switch (s) {
    case KB_VERIFY_PASSED:
        return "passed";
    case KB_VERIFY_FAILED:
        return "failed";
    case KB_VERIFY_MISTRUSTED:
        return "mistrusted";
    case KB_VERIFY_ERROR:
        return "error";
    default:
        return "not_run";
    }
}

/* Terms summed into one output element (an upper bound for strided BWD_D). */
static double reduction_length(const kb_problem *p) {
    if (p->op == KB_OP_MATMUL) return (double)p->mm.k;
    const kb_conv_shape *c = &p->cv;
    switch (p->dir) {
    case KB_DIR_BWD_D:
        return (double)(c->oc / c->g) * (double)c->kh * (double)c->kw;
    case KB_DIR_BWD_W:
        return (double)kb_conv_mb(p) * (double)c->oh * (double)c->ow;
    default:
        return (double)(c->ic / c->g) * (double)c->kh * (double)c->kw;
    }
}

/*
 * benchdnn's per-driver zero trust (oneDNN tests/benchdnn):
 *  - matmul/matmul.cpp setup_cmp: cmp.set_zero_trust_percent(90.f) ("why so bad filling?"),
 *    whatever the post-ops;
 *  - conv/conv.cpp get_non_zero_trust_percent: at least 30% nonzeros, i.e. zeros up to
 *    1 - 0.3 / d, with d = sd*sh*sw for SRC (BWD_D output), kh*kw / min(kh*kw, ih*iw, oh*ow) for
 *    WEI (BWD_W output), and 1 + negative_to_zero() for DST (FWD output; ReLU with alpha 0,
 *    abs, clip... make negatives zero: 85%);
 *  - utils/compare.cpp: default 30%, raised to (100 - 30) / 2 + 30 = 65% when an eltwise
 *    post-op converts negatives to zero (a driver that keeps the default, e.g. ip/eltwise).
 */
double kb_zero_trust_limit(const kb_problem *p, int relu) {
    if (p->op == KB_OP_MATMUL) return 0.90;
    const kb_conv_shape *c = &p->cv;
    double d = 1.0;
    switch (p->dir) {
    case KB_DIR_BWD_D:
        d = (double)(c->sh > 0 ? c->sh : 1) * (double)(c->sw > 0 ? c->sw : 1);
        break;
    case KB_DIR_BWD_W: {
        double k = (double)c->kh * (double)c->kw, lo = k;
        double in = (double)c->ih * (double)c->iw, out = (double)c->oh * (double)c->ow;
        if (in < lo) lo = in;
        if (out < lo) lo = out;
        d = lo > 0.0 ? k / lo : 1.0;
        break;
    }
    default:
        /* benchdnn also counts physically padded outputs (oh > ih) as negative_to_zero */
        d = 1.0 + ((relu || c->oh > c->ih || c->ow > c->iw) ? 1.0 : 0.0);
        break;
    }
    return 1.0 - 0.3 / d;
}

void kb_plan_fill(const kb_problem *p, kb_fill_plan *f) {
    kmux_compute_type ct = kb_problem_compute(p);
    /* the dense operand is the first input, the sparse one the second (see kb_run.c) */
    int ra = kb_dtype_int_range(p->set.dt[0]), rb = kb_dtype_int_range(p->set.dt[1]);
    if (p->op == KB_OP_CONV && p->dir == KB_DIR_BWD_W) rb = kb_dtype_int_range(p->set.dt[2]);
    if (p->op == KB_OP_CONV && p->dir == KB_DIR_BWD_D) ra = kb_dtype_int_range(p->set.dt[2]);
    if (ra > 4) ra = 4;
    if (rb > 4) rb = 4;
    double k = reduction_length(p);
    /* largest integer every partial sum must stay below to be exact */
    double limit = ct == KMUX_COMPUTE_F64   ? 9007199254740992.0
                   : ct == KMUX_COMPUTE_I32 ? 2147483647.0
                   : ct == KMUX_COMPUTE_F16 ? 2048.0
                                            : 16777216.0;
    while ((double)ra * rb * k > limit && (ra > 1 || rb > 1)) {
        if (ra >= rb)
            --ra;
        else
            --rb;
    }
    f->range_a = ra;
    f->range_b = rb;
    f->k_red = k;
    /* about 32 nonzero terms per output: sums stay small (in range of f16 outputs) and are rarely
     * zero */
    f->density_b = k <= 32.0 ? 1.0 : 32.0 / k;
    f->exact = (double)ra * rb * k <= limit;
    double acc_u = ct == KMUX_COMPUTE_F16 ? ldexp(1.0, -11) : ldexp(1.0, -24);
    /* inexact accumulation: each of the ~k partial sums may round once; 32 expected nonzero
     * terms bound the typical magnitude, the margin of 4 covers the tail */
    f->tol_abs = f->exact ? 0.0 : acc_u * (double)ra * rb * 4.0 * 32.0 * sqrt(k);
    kmux_dtype ct_out = p->set.dt[2];
    if (p->op == KB_OP_CONV && p->dir == KB_DIR_BWD_D) ct_out = p->set.dt[0];
    if (p->op == KB_OP_CONV && p->dir == KB_DIR_BWD_W) ct_out = p->set.dt[1];
    /* ref and backend round the same exact sum: identical unless a backend rounds differently;
     * one unit in the last place of a narrow output is allowed */
    f->tol_rel = (ct_out == KMUX_F32 || ct_out == KMUX_F64 || kb_dtype_is_int(ct_out))
                     ? 0.0
                     : 2.0 * kb_dtype_unit_roundoff(ct_out);
    f->zero_trust = kb_zero_trust_limit(p, 0); /* kmux-bench runs no epilogue yet */
}

void kb_oracle_free(kb_oracle *o) {
    free(o->index);
    free(o->expect);
    free(o->trusted);
    o->index = NULL;
    o->expect = NULL;
    o->trusted = NULL;
}

void kb_check_init(kb_check *c) {
    memset(c, 0, sizeof *c);
    c->status = KB_VERIFY_NOT_RUN;
    c->guard_ok = 1;
    c->inputs_ok = 1;
}

static int is_unwritten(const void *out, kmux_dtype t, int64_t i) {
    switch (kb_dtype_size(t)) {
    case 8:
        return ((const uint64_t *)out)[i] == UINT64_MAX;
    case 4:
        return ((const uint32_t *)out)[i] == UINT32_MAX;
    case 2:
        return ((const uint16_t *)out)[i] == UINT16_MAX;
    default:
        return ((const uint8_t *)out)[i] == UINT8_MAX;
    }
}

void kb_compare(const kb_oracle *o, const kb_fill_plan *f, const void *out, kmux_dtype t,
                kb_check *c) {
    c->sampled = o->sampled;
    c->checked = o->count;
    c->total = o->total;
    c->tol_abs = f->tol_abs;
    c->tol_rel = f->tol_rel;
    int64_t zeros = 0, trusted = 0;
    int float_out = !kb_dtype_is_int(t);
    for (int64_t i = 0; i < o->count; ++i) {
        int64_t idx = o->index ? o->index[i] : i;
        double got = kb_get(out, t, idx), want = o->expect[i];
        double err = fabs(got - want);
        double rel = want != 0.0 ? err / fabs(want) : err;
        int bad = isnan(got) || isinf(got) || err > f->tol_abs + f->tol_rel * fabs(want);
        if (isnan(got)) err = rel = INFINITY;
        if (err > c->max_abs_err) c->max_abs_err = err;
        if (rel > c->max_rel_err) c->max_rel_err = rel;
        if (bad) {
            if (c->mismatches == 0)
                snprintf(c->message, sizeof c->message,
                         "first mismatch at output element %lld: got %.9g, want %.9g",
                         (long long)idx, got, want);
            ++c->mismatches;
        }
        if (!o->trusted || o->trusted[i]) {
            ++trusted;
            if (want == 0.0) ++zeros;
        }
    }
    /* elements never written anywhere in the output (the NaN pre-fill survives) */
    if (float_out)
        for (int64_t i = 0; i < o->total; ++i)
            if (is_unwritten(out, t, i)) ++c->unwritten;
    c->zero_fraction = trusted ? (double)zeros / (double)trusted : 1.0;
    double zero_limit = f->zero_trust > 0.0 ? f->zero_trust : KB_ZERO_TRUST_FRACTION;

    if (!c->guard_ok) {
        c->status = KB_VERIFY_FAILED;
        snprintf(c->message, sizeof c->message, "guard band around the output was overwritten");
    } else if (!c->inputs_ok) {
        c->status = KB_VERIFY_FAILED;
        snprintf(c->message, sizeof c->message, "an input was modified by the backend");
    } else if (c->unwritten) {
        c->status = KB_VERIFY_FAILED;
        snprintf(c->message, sizeof c->message, "%lld output elements were never written",
                 (long long)c->unwritten);
    } else if (c->mismatches) {
        c->status = KB_VERIFY_FAILED;
    } else if (c->zero_fraction > zero_limit || o->count == 0) {
        c->status = KB_VERIFY_MISTRUSTED;
        snprintf(c->message, sizeof c->message,
                 "%.0f%% of the checked outputs are zero (limit %.0f%%): the check proves little",
                 100.0 * c->zero_fraction, 100.0 * zero_limit);
    } else {
        c->status = KB_VERIFY_PASSED;
    }
}

static unsigned char canary(size_t i, unsigned seed) {
    return (unsigned char)((i * 131u + seed * 17u + 0x5au) & 0xffu);
}

void kb_guard_fill(unsigned char *p, size_t bytes, unsigned seed) {
    for (size_t i = 0; i < bytes; ++i)
        p[i] = canary(i, seed);
}

int kb_guard_check(const unsigned char *p, size_t bytes, unsigned seed) {
    for (size_t i = 0; i < bytes; ++i)
        if (p[i] != canary(i, seed)) return 0;
    return 1;
}
