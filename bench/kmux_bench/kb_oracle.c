/* kb_oracle.c - ref results, whole or on a slice of the problem. */
#include "kb_oracle.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kb_tensor.h"
#include "kb_util.h"
#include "kb_values.h"

#define KB_FULL_MAX_OUTPUTS ((int64_t)16 << 20)

void kb_problem_tensors(const kb_problem *p, kb_tensors *t) {
    for (int i = 0; i < 3; ++i)
        t->dt[i] = p->set.dt[i];
    if (p->op == KB_OP_MATMUL) {
        kb_matmul_sizes(p, &t->count[0], &t->count[1], &t->count[2]);
        t->out = 2;
        return;
    }
    const kb_conv_shape *c = &p->cv;
    int64_t mb = kb_conv_mb(p);
    t->count[0] = mb * c->ic * c->ih * c->iw;
    t->count[1] = c->oc * (c->ic / c->g) * c->kh * c->kw;
    t->count[2] = mb * c->oc * c->oh * c->ow;
    t->out = p->dir == KB_DIR_BWD_D ? 0 : p->dir == KB_DIR_BWD_W ? 1 : 2;
}

/* ---- running ref ---------------------------------------------------------------------------- */

typedef union scalar {
    double d;
    float f;
    int32_t i;
} scalar;

static void scalars(kmux_compute_type ct, int is_gemm, scalar *one, scalar *zero) {
    if (ct == KMUX_COMPUTE_F64)
        one->d = 1.0, zero->d = 0.0;
    else if (ct == KMUX_COMPUTE_I32 && is_gemm)
        one->i = 1, zero->i = 0;
    else
        one->f = 1.0f, zero->f = 0.0f;
}

static int run_matmul(kmux_device *ref, kmux_stream *s, kmux_matmul_desc d, const void *A,
                      const void *B, void *C, kb_oracle *o) {
    kmux_plan *plan = NULL;
    kmux_status st = kmux_matmul_plan_create(ref, &d, NULL, &plan);
    if (st == KMUX_ERR_UNSUPPORTED &&
        (d.compute_type == KMUX_COMPUTE_F32_FAST_TF32 ||
         d.compute_type == KMUX_COMPUTE_F32_FAST_BF16 || d.compute_type == KMUX_COMPUTE_F16)) {
        d.compute_type = KMUX_COMPUTE_F32; /* the integer data is exact in either */
        st = kmux_matmul_plan_create(ref, &d, NULL, &plan);
    }
    if (st == KMUX_OK) {
        scalar one, zero;
        scalars(d.compute_type, 1, &one, &zero);
        kmux_matmul_args a = KMUX_MATMUL_ARGS_INIT;
        a.alpha = &one, a.beta = &zero, a.A = A, a.B = B, a.C = C;
        st = kmux_matmul_execute(plan, s, &a);
        if (st == KMUX_OK) st = kmux_stream_synchronize(s);
    }
    if (st != KMUX_OK)
        snprintf(o->message, sizeof o->message, "ref matmul: %s: %s", kmux_status_str(st),
                 kmux_last_error());
    kmux_plan_destroy(plan);
    return st == KMUX_OK;
}

static int run_conv(kmux_device *ref, kmux_stream *s, kmux_conv2d_desc d, void *x, void *w, void *y,
                    kb_oracle *o) {
    kmux_plan *plan = NULL;
    kmux_status st = kmux_conv2d_plan_create(ref, &d, NULL, &plan);
    if (st == KMUX_ERR_UNSUPPORTED && d.compute_type != KMUX_COMPUTE_F32 &&
        d.compute_type != KMUX_COMPUTE_F64) {
        d.compute_type = KMUX_COMPUTE_F32;
        st = kmux_conv2d_plan_create(ref, &d, NULL, &plan);
    }
    if (st == KMUX_OK) {
        scalar one, zero;
        scalars(d.compute_type, 0, &one, &zero);
        kmux_conv2d_args a = KMUX_CONV2D_ARGS_INIT;
        a.alpha = &one, a.beta = &zero, a.x = x, a.w = w, a.y = y;
        st = kmux_conv2d_execute(plan, s, &a);
        if (st == KMUX_OK) st = kmux_stream_synchronize(s);
    }
    if (st != KMUX_OK)
        snprintf(o->message, sizeof o->message, "ref conv2d: %s: %s", kmux_status_str(st),
                 kmux_last_error());
    kmux_plan_destroy(plan);
    return st == KMUX_OK;
}

/* ---- matmul --------------------------------------------------------------------------------- */

static void oracle_matmul(kmux_device *ref, kmux_stream *s, const kb_problem *p,
                          void *const host[3], double budget, kb_oracle *o) {
    kmux_matmul_desc d;
    kb_matmul_to_desc(p, &d);
    kb_tensors t;
    kb_problem_tensors(p, &t);
    o->total = t.count[2];
    double flops = kb_problem_flops(p);
    size_t ea = kb_dtype_size(d.a_type), eb = kb_dtype_size(d.b_type), ec = kb_dtype_size(d.c_type);
    if (flops <= budget && o->total <= KB_FULL_MAX_OUTPUTS) {
        void *C = kb_xmalloc((size_t)o->total * ec);
        if (run_matmul(ref, s, d, host[0], host[1], C, o)) {
            o->count = o->total;
            o->expect = kb_xmalloc((size_t)o->count * sizeof(double));
            for (int64_t i = 0; i < o->count; ++i)
                o->expect[i] = kb_get(C, d.c_type, i);
            o->ok = 1;
            o->ref_flops = flops;
        }
        free(C);
        return;
    }
    /* a sub-GEMM on sampled rows of op(A) and columns of op(B), first and last batch */
    int64_t batches[2] = {0, d.batch_count - 1};
    int nbatch = d.batch_count > 1 ? 2 : 1;
    double per_batch = budget / nbatch;
    double elems = per_batch / (2.0 * (double)d.k);
    if (elems < 64) elems = 64;
    int64_t nr, nc;
    if ((double)d.m * (double)d.n <= elems) {
        nr = d.m, nc = d.n;
    } else {
        nr = (int64_t)ceil(sqrt(elems));
        if (nr > d.m) nr = d.m;
        nc = (int64_t)(elems / (double)nr);
        if (nc > d.n) {
            nc = d.n;
            nr = (int64_t)(elems / (double)nc);
            if (nr > d.m) nr = d.m;
        }
        if (nr < 1) nr = 1;
        if (nc < 1) nc = 1;
    }
    int64_t *ri = kb_xmalloc((size_t)nr * sizeof *ri), *cj = kb_xmalloc((size_t)nc * sizeof *cj);
    nr = kb_pick_indices(d.m, nr, ri);
    nc = kb_pick_indices(d.n, nc, cj);
    void *As = kb_xmalloc((size_t)(nr * d.k) * ea), *Bs = kb_xmalloc((size_t)(d.k * nc) * eb);
    void *Cs = kb_xmalloc((size_t)(nr * nc) * ec);
    o->count = nbatch * nr * nc;
    o->index = kb_xmalloc((size_t)o->count * sizeof *o->index);
    o->expect = kb_xmalloc((size_t)o->count * sizeof *o->expect);
    kmux_matmul_desc sd = d;
    sd.order = KMUX_ROW_MAJOR, sd.transa = sd.transb = KMUX_NO_TRANS;
    sd.m = nr, sd.n = nc, sd.lda = d.k, sd.ldb = nc, sd.ldc = nc;
    sd.batch_count = 1, sd.stride_a = sd.stride_b = sd.stride_c = 0;
    int ok = 1;
    int64_t k = 0;
    for (int b = 0; b < nbatch && ok; ++b) {
        const char *A = (const char *)host[0] + (size_t)(batches[b] * d.stride_a) * ea;
        const char *B = (const char *)host[1] + (size_t)(batches[b] * d.stride_b) * eb;
        kb_gather_rows(A, ea, d.order, d.transa, d.lda, ri, nr, d.k, As);
        kb_gather_cols(B, eb, d.order, d.transb, d.ldb, d.k, cj, nc, Bs);
        ok = run_matmul(ref, s, sd, As, Bs, Cs, o);
        for (int64_t i = 0; i < nr && ok; ++i)
            for (int64_t j = 0; j < nc; ++j, ++k) {
                o->index[k] = batches[b] * d.stride_c +
                              kb_mat_off(d.order, KMUX_NO_TRANS, d.ldc, ri[i], cj[j]);
                o->expect[k] = kb_get(Cs, d.c_type, i * nc + j);
            }
    }
    if (ok) {
        o->ok = 1;
        o->sampled = 1;
        o->ref_flops = 2.0 * (double)nbatch * (double)nr * (double)nc * (double)d.k;
        snprintf(o->sample_note, sizeof o->sample_note, "%lld of %lld rows x %lld of %lld cols%s",
                 (long long)nr, (long long)d.m, (long long)nc, (long long)d.n,
                 nbatch > 1 ? ", first and last batch" : "");
    }
    free(ri), free(cj), free(As), free(Bs), free(Cs);
}

/* ---- convolution ---------------------------------------------------------------------------- */

/* For BWD_D: whether input row h (or column) receives any contribution; strided convolutions
 * with a kernel smaller than the stride leave some rows zero by structure. */
static unsigned char *touched_axis(int64_t in, int64_t out, int64_t k, int64_t stride, int64_t pad,
                                   int64_t dil) {
    unsigned char *t = kb_xcalloc((size_t)in, 1);
    for (int64_t h = 0; h < in; ++h)
        for (int64_t r = 0; r < k && !t[h]; ++r) {
            int64_t num = h + pad - r * dil;
            if (num >= 0 && num % stride == 0 && num / stride < out) t[h] = 1;
        }
    return t;
}

static int64_t *iota(int64_t n) {
    int64_t *v = kb_xmalloc((size_t)(n ? n : 1) * sizeof *v);
    for (int64_t i = 0; i < n; ++i)
        v[i] = i;
    return v;
}

static void oracle_conv(kmux_device *ref, kmux_stream *s, const kb_problem *p, void *const host[3],
                        double budget, kb_oracle *o) {
    kmux_conv2d_desc d;
    kb_conv_to_desc(p, &d);
    kb_tensors t;
    kb_problem_tensors(p, &t);
    int64_t P = p->cv.oh, Q = p->cv.ow, Cg = d.c / d.groups;
    const int64_t xd[4] = {d.n, d.c, d.h, d.w}, wd[4] = {d.k, Cg, d.r, d.s};
    const int64_t yd[4] = {d.n, d.k, P, Q};
    const int64_t *od = t.out == 0 ? xd : t.out == 1 ? wd : yd;
    kmux_dtype odt = t.dt[t.out];
    size_t ex = kb_dtype_size(d.x_type), ew = kb_dtype_size(d.w_type), ey = kb_dtype_size(d.y_type);
    o->total = t.count[t.out];
    double flops = kb_problem_flops(p);
    /* slices: images ni[nn], the direction's output channels ki[nk] and input channels ci[ncs] */
    int64_t nn = d.n, nk = d.k, ncs = Cg;
    int full = flops <= budget && o->total <= KB_FULL_MAX_OUTPUTS;
    if (!full) {
        if (d.direction != KMUX_CONV_BWD_WEIGHTS && nn > 2) nn = 2;
        double per = flops / (double)d.n * (double)nn / ((double)d.k * (double)Cg);
        if (d.groups == 1) {
            if (d.direction == KMUX_CONV_FWD) {
                while (per * (double)nk * (double)ncs > budget && nk > 8)
                    nk = (nk + 1) / 2;
            } else if (d.direction == KMUX_CONV_BWD_DATA) {
                while (per * (double)nk * (double)ncs > budget && ncs > 8)
                    ncs = (ncs + 1) / 2;
            } else {
                while (per * (double)nk * (double)ncs > budget && (nk > 4 || ncs > 4)) {
                    if (nk >= ncs)
                        nk = (nk + 1) / 2;
                    else
                        ncs = (ncs + 1) / 2;
                }
            }
        }
        full = nn == d.n && nk == d.k && ncs == Cg;
    }
    int64_t *ni = kb_xmalloc((size_t)nn * sizeof *ni), *ki = kb_xmalloc((size_t)nk * sizeof *ki);
    int64_t *ci = kb_xmalloc((size_t)ncs * sizeof *ci);
    nn = kb_pick_indices(d.n, nn, ni);
    nk = kb_pick_indices(d.k, nk, ki);
    ncs = kb_pick_indices(Cg, ncs, ci);
    int64_t *all_cx = iota(d.c), *all_k = iota(d.k), *all_n = iota(d.n);
    /* input channels of the slice as x sees them (grouped problems are never sliced by channel) */
    const int64_t *xc = d.groups == 1 ? ci : all_cx;

    /* the slice problem and its gathered inputs */
    kmux_conv2d_desc sd = d;
    sd.n = nn, sd.k = nk, sd.c = d.groups == 1 ? ncs : d.c;
    const int64_t sxd[4] = {sd.n, sd.c, d.h, d.w}, swd[4] = {sd.k, sd.c / d.groups, d.r, d.s};
    const int64_t syd[4] = {sd.n, sd.k, P, Q};
    void *sx = kb_xmalloc((size_t)(sxd[0] * sxd[1] * sxd[2] * sxd[3]) * ex);
    void *sw = kb_xmalloc((size_t)(swd[0] * swd[1] * swd[2] * swd[3]) * ew);
    void *sy = kb_xmalloc((size_t)(syd[0] * syd[1] * syd[2] * syd[3]) * ey);
    if (full) {
        if (t.out != 0) memcpy(sx, host[0], (size_t)t.count[0] * ex);
        if (t.out != 1) memcpy(sw, host[1], (size_t)t.count[1] * ew);
        if (t.out != 2) memcpy(sy, host[2], (size_t)t.count[2] * ey);
    } else if (d.direction == KMUX_CONV_FWD) {
        kb_gather4(host[0], ex, d.layout, xd, ni, nn, all_cx, d.c, sx);
        kb_gather4(host[1], ew, d.layout, wd, ki, nk, ci, Cg, sw);
    } else if (d.direction == KMUX_CONV_BWD_DATA) {
        kb_gather4(host[2], ey, d.layout, yd, ni, nn, all_k, d.k, sy);
        kb_gather4(host[1], ew, d.layout, wd, all_k, d.k, ci, sd.c / d.groups, sw);
    } else {
        kb_gather4(host[0], ex, d.layout, xd, all_n, d.n, xc, sd.c, sx);
        kb_gather4(host[2], ey, d.layout, yd, all_n, d.n, ki, nk, sy);
    }
    int ok = run_conv(ref, s, sd, sx, sw, sy, o);
    if (ok) {
        const void *res = t.out == 0 ? sx : t.out == 1 ? sw : sy;
        const int64_t *rd = t.out == 0 ? sxd : t.out == 1 ? swd : syd;
        /* full-tensor index of each slice index along the result's first two dims */
        const int64_t *i0 = t.out == 1 ? ki : ni;
        const int64_t *i1 = t.out == 2 ? ki : t.out == 1 ? ci : xc;
        unsigned char *th = NULL, *tw = NULL;
        if (d.direction == KMUX_CONV_BWD_DATA) {
            th = touched_axis(d.h, P, d.r, d.stride_h, d.pad_top, d.dilation_h);
            tw = touched_axis(d.w, Q, d.s, d.stride_w, d.pad_left, d.dilation_w);
        }
        o->count = rd[0] * rd[1] * rd[2] * rd[3];
        o->index = full ? NULL : kb_xmalloc((size_t)o->count * sizeof *o->index);
        o->expect = kb_xmalloc((size_t)o->count * sizeof *o->expect);
        o->trusted = th ? kb_xmalloc((size_t)o->count) : NULL;
        for (int64_t a = 0; a < rd[0]; ++a)
            for (int64_t b = 0; b < rd[1]; ++b)
                for (int64_t h = 0; h < rd[2]; ++h)
                    for (int64_t w = 0; w < rd[3]; ++w) {
                        int64_t si = kb_off4(d.layout, rd, a, b, h, w);
                        int64_t fi = kb_off4(d.layout, od, i0[a], i1[b], h, w);
                        int64_t k = full ? fi : si;
                        if (!full) o->index[k] = fi;
                        o->expect[k] = kb_get(res, odt, si);
                        if (th) o->trusted[k] = th[h] && tw[w];
                    }
        free(th), free(tw);
        o->ok = 1;
        o->sampled = !full;
        o->ref_flops = 2.0 * (double)sd.n * (double)sd.k * (double)P * (double)Q *
                       (double)(sd.c / d.groups) * (double)d.r * (double)d.s;
        if (!full) {
            kb_sb note = KB_SB_INIT;
            if (nn < d.n) kb_sb_printf(&note, "%lld of %lld images", (long long)nn, (long long)d.n);
            if (nk < d.k)
                kb_sb_printf(&note, "%s%lld of %lld output channels", note.len ? ", " : "",
                             (long long)nk, (long long)d.k);
            if (sd.c < d.c)
                kb_sb_printf(&note, "%s%lld of %lld input channels", note.len ? ", " : "",
                             (long long)sd.c, (long long)d.c);
            kb_strlcpy(o->sample_note, kb_sb_str(&note), sizeof o->sample_note);
            kb_sb_free(&note);
        }
    }
    free(ni), free(ki), free(ci), free(all_cx), free(all_k), free(all_n);
    free(sx), free(sw), free(sy);
}

void kb_oracle_compute(kmux_device *ref, kmux_stream *stream, const kb_problem *p,
                       void *const host[3], double budget_flops, kb_oracle *o) {
    memset(o, 0, sizeof *o);
    double t0 = kb_now_s();
    if (p->op == KB_OP_MATMUL)
        oracle_matmul(ref, stream, p, host, budget_flops, o);
    else
        oracle_conv(ref, stream, p, host, budget_flops, o);
    o->ref_ms = 1e3 * (kb_now_s() - t0);
    if (!o->ok) kb_oracle_free(o);
}
