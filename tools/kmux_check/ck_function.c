/*
 * ck_function.c - function checks: a trivial kernel launches, copies round-trip bit-exactly, and
 * every op x dtype the device runs (matmul, conv in three directions, cast, amax) matches ref on
 * a small problem. GEMM and conv inputs are small integers (-2..2) with short reductions (<= 36
 * terms), so every partial sum is exact in every dtype and a correct backend matches ref exactly
 * (as benchdnn's integer fill); cast and amax must match ref bit for bit.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ck_checks.h"
#include "ck_values.h"
#include "dispatch/common/kmux_type_rules.h"

/* FAIL: the device under test returned st (its message from kmux_last_error), with `hint`. */
static ck_verdict device_failed(kmux_status st, const char *hint) {
    char detail[384];
    snprintf(detail, sizeof detail, "%s: %s", kmux_status_str(st), kmux_last_error());
    return ck_verdict_of(CK_FAIL, detail, hint);
}

/* SKIP: ref, the oracle, failed (its message from kmux_last_error): nothing to compare with. */
static ck_verdict ref_failed(void) {
    char detail[384];
    snprintf(detail, sizeof detail, "ref failed: %s", kmux_last_error());
    return ck_verdict_of(CK_SKIP, detail, NULL);
}

static void add(ck_run *run, const char *subject, const char *name, const ck_verdict *v) {
    ck_report_add(run->report, "function", subject, name, v, NAN, NAN, "");
}

/* ---- launch and copies ---------------------------------------------------------------------- */

static void check_launch(ck_run *run, kmux_device *dev, kmux_stream *s, const char *id) {
    /* A 256-element cast is one small kernel on GPUs; a tiny GEMM where casts are unsupported. */
    double in[256];
    for (int i = 0; i < 256; i++)
        in[i] = i - 128;
    void *src = ck_upload(s, KMUX_F32, in, 256), *dst = ck_upload(s, KMUX_F32, NULL, 256);
    char detail[384];
    kmux_status st = src && dst ? kmux_cast(s, 256, src, KMUX_F32, dst, KMUX_BF16, NULL)
                                : KMUX_ERR_OUT_OF_MEMORY;
    const char *what = "cast f32->bf16 (256 elements)";
    if (st == KMUX_ERR_UNSUPPORTED) {
        float one = 1.0f, zero = 0.0f;
        what = "f32 GEMM 16x16x16";
        st = kmux_gemm_ex(s, KMUX_ROW_MAJOR, KMUX_NO_TRANS, KMUX_NO_TRANS, 16, 16, 1, &one, src,
                          KMUX_F32, 1, src, KMUX_F32, 16, &zero, dst, KMUX_F32, 16,
                          KMUX_COMPUTE_F32);
    }
    if (st == KMUX_OK) st = kmux_stream_synchronize(s);
    if (st == KMUX_OK) {
        snprintf(detail, sizeof detail, "%s ran and completed", what);
        ck_verdict v = ck_verdict_of(CK_PASS, detail, NULL);
        add(run, id, "launch", &v);
    } else {
        snprintf(detail, sizeof detail, "%s: %s: %s", what, kmux_status_str(st), kmux_last_error());
        ck_verdict v =
            ck_verdict_of(CK_FAIL, detail, "run kmux-info and KMUX_VERBOSE=2 kmux-check");
        add(run, id, "launch", &v);
    }
    kmux_free(dev, src);
    kmux_free(dev, dst);
}

static void check_copies(ck_run *run, kmux_device *dev, kmux_stream *s, const char *id) {
    const size_t bytes = (size_t)1 << 20;
    unsigned char *h = malloc(bytes), *back = malloc(bytes);
    void *a = NULL, *b = NULL;
    char detail[384];
    kmux_status st = h && back ? kmux_malloc(dev, bytes, &a) : KMUX_ERR_OUT_OF_MEMORY;
    if (st == KMUX_OK) st = kmux_malloc(dev, bytes, &b);
    if (st == KMUX_OK) {
        unsigned x = 12345u; /* every byte value, in a pseudo-random order */
        for (size_t i = 0; i < bytes; i++) {
            x = x * 1103515245u + 12345u;
            h[i] = (unsigned char)(x >> 16);
            back[i] = (unsigned char)~h[i];
        }
        st = kmux_memcpy(s, a, h, bytes, KMUX_MEMCPY_HOST_TO_DEVICE);
        if (st == KMUX_OK) st = kmux_memcpy(s, b, a, bytes, KMUX_MEMCPY_DEVICE_TO_DEVICE);
        if (st == KMUX_OK) st = kmux_memcpy(s, back, b, bytes, KMUX_MEMCPY_DEVICE_TO_HOST);
        if (st == KMUX_OK) st = kmux_stream_synchronize(s);
    }
    ck_verdict v;
    if (st != KMUX_OK) {
        v = device_failed(st, "check the driver with kmux-info");
    } else {
        size_t bad = 0;
        for (size_t i = 0; i < bytes; i++)
            bad += h[i] != back[i];
        snprintf(detail, sizeof detail, "1 MiB host->device->device->host: %zu bytes differ", bad);
        v = ck_verdict_of(
            bad ? CK_FAIL : CK_PASS, detail,
            "copies corrupt data: check the device's memory (ECC errors) and the IOMMU setup");
    }
    add(run, id, "copy_roundtrip", &v);
    if (a) kmux_free(dev, a);
    if (b) kmux_free(dev, b);
    free(h);
    free(back);
}

/* ---- matmul --------------------------------------------------------------------------------- */

enum { GM = 24, GN = 20, GK = 16 };

/* C = A B (row-major) on the stream's device; out receives GM x GN values. */
static kmux_status run_gemm(kmux_stream *s, const kmux_type_combination *r, const double *A,
                            const double *B, double *out) {
    kmux_device *dev = kmux_stream_device(s);
    void *a = ck_upload(s, r->a_type, A, GM * GK), *b = ck_upload(s, r->b_type, B, GK * GN);
    void *c = ck_upload(s, r->c_type, NULL, GM * GN);
    kmux_status st = a && b && c ? KMUX_OK : KMUX_ERR_OUT_OF_MEMORY;
    double one64 = 1, zero64 = 0;
    float one32 = 1, zero32 = 0;
    int32_t one_i = 1, zero_i = 0;
    const void *alpha = r->compute_type == KMUX_COMPUTE_F64   ? (const void *)&one64
                        : r->compute_type == KMUX_COMPUTE_I32 ? (const void *)&one_i
                                                              : (const void *)&one32;
    const void *beta = r->compute_type == KMUX_COMPUTE_F64   ? (const void *)&zero64
                       : r->compute_type == KMUX_COMPUTE_I32 ? (const void *)&zero_i
                                                             : (const void *)&zero32;
    if (st == KMUX_OK)
        st = kmux_gemm_ex(s, KMUX_ROW_MAJOR, KMUX_NO_TRANS, KMUX_NO_TRANS, GM, GN, GK, alpha, a,
                          r->a_type, GK, b, r->b_type, GN, beta, c, r->c_type, GN, r->compute_type);
    if (st == KMUX_OK) st = kmux_stream_synchronize(s);
    if (st == KMUX_OK && ck_download(s, r->c_type, c, out, GM * GN) != 0) st = KMUX_ERR_DEVICE;
    kmux_free(dev, a);
    kmux_free(dev, b);
    kmux_free(dev, c);
    return st;
}

static void append(char *list, size_t size, const char *item) {
    size_t len = strlen(list);
    snprintf(list + len, size - len, "%s%s", len ? ", " : "", item);
}

static void check_matmul(ck_run *run, kmux_stream *s, kmux_stream *ref_s, const char *id,
                         char *unsupported, size_t usize) {
    int rows = 0;
    const kmux_type_combination *table = kmux_rules_matmul_table(&rows);
    double A[GM * GK], B[GK * GN], got[GM * GN], want[GM * GN];
    ck_fill_small(A, GM * GK, 1);
    ck_fill_small(B, GK * GN, 2);
    for (int i = 0; i < rows; i++) {
        const kmux_type_combination *r = &table[i];
        char name[48];
        snprintf(name, sizeof name, "matmul %s:%s:%s/%s", kmux_dtype_name(r->a_type),
                 kmux_dtype_name(r->b_type), kmux_dtype_name(r->c_type),
                 kmux_compute_type_name(r->compute_type));
        kmux_status st = run_gemm(s, r, A, B, got);
        if (st == KMUX_ERR_UNSUPPORTED) {
            append(unsupported, usize, name + 7);
            continue;
        }
        ck_verdict v;
        if (st != KMUX_OK) {
            v = device_failed(st, "rerun with KMUX_VERBOSE=2 to see the implementation");
        } else if (run_gemm(ref_s, r, A, B, want) != KMUX_OK) {
            v = ref_failed();
        } else {
            ck_compare c = ck_compare_exact(got, want, GM * GN);
            v = ck_judge_compare(&c);
        }
        add(run, id, name, &v);
    }
}

/* ---- convolution ---------------------------------------------------------------------------- */

static kmux_conv2d_desc conv_desc(kmux_conv_direction dir, const kmux_type_combination *r) {
    kmux_conv2d_desc d = KMUX_CONV2D_DESC_INIT;
    d.direction = dir;
    d.n = 1;
    d.c = 4;
    d.h = d.w = 6;
    d.k = 4;
    d.r = d.s = 3;
    d.pad_top = d.pad_bottom = d.pad_left = d.pad_right = 1;
    d.x_type = r->a_type;
    d.w_type = r->b_type;
    d.y_type = r->c_type;
    d.compute_type = r->compute_type;
    return d;
}

enum { CX = 1 * 4 * 6 * 6, CW = 4 * 4 * 3 * 3, CY = 1 * 4 * 6 * 6 };

static kmux_status run_conv(kmux_stream *s, const kmux_conv2d_desc *d, const double *x,
                            const double *w, const double *y, double *out, size_t *out_n) {
    kmux_device *dev = kmux_stream_device(s);
    kmux_plan *plan = NULL;
    kmux_status st = kmux_conv2d_plan_create(dev, d, NULL, &plan);
    if (st != KMUX_OK) return st;
    int fwd = d->direction == KMUX_CONV_FWD, bwd_d = d->direction == KMUX_CONV_BWD_DATA;
    void *dx = ck_upload(s, d->x_type, bwd_d ? NULL : x, CX);
    void *dw = ck_upload(s, d->w_type, fwd || bwd_d ? w : NULL, CW);
    void *dy = ck_upload(s, d->y_type, fwd ? NULL : y, CY);
    double one64 = 1, zero64 = 0;
    float one32 = 1, zero32 = 0;
    int f64 = d->compute_type == KMUX_COMPUTE_F64;
    kmux_conv2d_args args = KMUX_CONV2D_ARGS_INIT;
    args.alpha = f64 ? (const void *)&one64 : (const void *)&one32;
    args.beta = f64 ? (const void *)&zero64 : (const void *)&zero32;
    args.x = dx;
    args.w = dw;
    args.y = dy;
    st = dx && dw && dy ? KMUX_OK : KMUX_ERR_OUT_OF_MEMORY;
    if (st == KMUX_OK) {
        st = kmux_conv2d_execute(plan, s, &args);
        if (st == KMUX_OK) st = kmux_stream_synchronize(s);
        const void *res = fwd ? dy : bwd_d ? dx : dw;
        kmux_dtype rt = fwd ? d->y_type : bwd_d ? d->x_type : d->w_type;
        *out_n = fwd ? CY : bwd_d ? CX : CW;
        if (st == KMUX_OK && ck_download(s, rt, res, out, *out_n) != 0) st = KMUX_ERR_DEVICE;
    }
    kmux_plan_destroy(plan);
    kmux_free(dev, dx);
    kmux_free(dev, dw);
    kmux_free(dev, dy);
    return st;
}

static void check_conv(ck_run *run, kmux_stream *s, kmux_stream *ref_s, const char *id,
                       char *unsupported, size_t usize) {
    static const char *dir_names[] = {"", "fwd", "bwd_data", "bwd_weights"};
    int rows = 0;
    const kmux_type_combination *table = kmux_rules_conv_table(&rows);
    double x[CX], w[CW], y[CY], got[CX + CW + CY], want[CX + CW + CY];
    ck_fill_small(x, CX, 3);
    ck_fill_small(w, CW, 4);
    ck_fill_small(y, CY, 5);
    for (int dir = KMUX_CONV_FWD; dir <= KMUX_CONV_BWD_WEIGHTS; dir++) {
        for (int i = 0; i < rows; i++) {
            kmux_conv2d_desc d = conv_desc((kmux_conv_direction)dir, &table[i]);
            char name[48];
            snprintf(name, sizeof name, "conv_%s %s/%s", dir_names[dir], kmux_dtype_name(d.x_type),
                     kmux_compute_type_name(d.compute_type));
            size_t n = 0, n_ref = 0;
            kmux_status st = run_conv(s, &d, x, w, y, got, &n);
            if (st == KMUX_ERR_UNSUPPORTED) {
                append(unsupported, usize, name);
                continue;
            }
            ck_verdict v;
            if (st != KMUX_OK) {
                v = device_failed(st, "rerun with KMUX_VERBOSE=2 to see the implementation");
            } else if (run_conv(ref_s, &d, x, w, y, want, &n_ref) != KMUX_OK) {
                v = ref_failed();
            } else {
                ck_compare c = ck_compare_exact(got, want, n);
                v = ck_judge_compare(&c);
            }
            add(run, id, name, &v);
        }
    }
}

/* ---- cast ----------------------------------------------------------------------------------- */

static void check_cast(ck_run *run, kmux_stream *s, kmux_stream *ref_s, const char *id,
                       char *unsupported, size_t usize) {
    static const kmux_dtype targets[] = {KMUX_F16,     KMUX_BF16,         KMUX_F8_E4M3,
                                         KMUX_F8_E5M2, KMUX_F8_E4M3_FNUZ, KMUX_F8_E5M2_FNUZ};
    enum { N = 512 };
    double in[N], got[N], want[N];
    for (int i = 0; i < N; i++) /* values around every format's range and rounding ties */
        in[i] = ldexp((double)((i * 37) % 257 - 128) / 16.0, (i % 24) - 12);
    for (size_t t = 0; t < sizeof targets / sizeof targets[0]; t++) {
        char name[48], detail[384];
        snprintf(name, sizeof name, "cast f32->%s", kmux_dtype_name(targets[t]));
        double *res[2] = {got, want};
        kmux_stream *ss[2] = {s, ref_s};
        kmux_status st[2] = {KMUX_OK, KMUX_OK};
        for (int k = 0; k < 2; k++) {
            kmux_device *dev = kmux_stream_device(ss[k]);
            void *src = ck_upload(ss[k], KMUX_F32, in, N),
                 *dst = ck_upload(ss[k], targets[t], NULL, N);
            st[k] = src && dst ? kmux_cast(ss[k], N, src, KMUX_F32, dst, targets[t], NULL)
                               : KMUX_ERR_OUT_OF_MEMORY;
            if (st[k] == KMUX_OK) st[k] = kmux_stream_synchronize(ss[k]);
            if (st[k] == KMUX_OK && ck_download(ss[k], targets[t], dst, res[k], N) != 0)
                st[k] = KMUX_ERR_DEVICE;
            kmux_free(dev, src);
            kmux_free(dev, dst);
            if (st[k] != KMUX_OK) break;
        }
        if (st[0] == KMUX_ERR_UNSUPPORTED) {
            append(unsupported, usize, name);
            continue;
        }
        ck_verdict v;
        if (st[0] != KMUX_OK || st[1] != KMUX_OK) {
            snprintf(detail, sizeof detail, "%s%s: %s", st[0] != KMUX_OK ? "" : "ref: ",
                     kmux_status_str(st[0] != KMUX_OK ? st[0] : st[1]), kmux_last_error());
            v = ck_verdict_of(st[0] != KMUX_OK ? CK_FAIL : CK_SKIP, detail, NULL);
        } else {
            ck_compare c = ck_compare_exact(got, want, N);
            /* Bit-exact rounding: NaN == NaN counts as a match. */
            c.mismatches = 0;
            c.max_abs_err = 0;
            for (int i = 0; i < N; i++) {
                int both_nan = got[i] != got[i] && want[i] != want[i];
                c.mismatches += !(got[i] == want[i] || both_nan);
                double e = both_nan ? 0.0 : fabs(got[i] - want[i]);
                if (!(e <= c.max_abs_err)) c.max_abs_err = e;
            }
            c.nonzero_frac = 1.0; /* tiny inputs legitimately round to zero */
            v = ck_judge_compare(&c);
        }
        add(run, id, name, &v);
    }
}

/* ---- amax ----------------------------------------------------------------------------------- */

/* max |x| of n values of type t on the stream's device (kmux_amax), into *out. */
static kmux_status run_amax(kmux_stream *s, kmux_dtype t, const double *in, size_t n, double *out) {
    kmux_device *dev = kmux_stream_device(s);
    void *x = ck_upload(s, t, in, n), *amax = ck_upload(s, KMUX_F32, NULL, 1);
    kmux_status st = x && amax ? kmux_amax(s, (int64_t)n, x, t, amax) : KMUX_ERR_OUT_OF_MEMORY;
    if (st == KMUX_OK) st = kmux_stream_synchronize(s);
    if (st == KMUX_OK && ck_download(s, KMUX_F32, amax, out, 1) != 0) st = KMUX_ERR_DEVICE;
    kmux_free(dev, x);
    kmux_free(dev, amax);
    return st;
}

static void check_amax(ck_run *run, kmux_stream *s, kmux_stream *ref_s, const char *id,
                       char *unsupported, size_t usize) {
    static const kmux_dtype types[] = {KMUX_F32,         KMUX_F16,     KMUX_BF16,
                                       KMUX_F8_E4M3,     KMUX_F8_E5M2, KMUX_F8_E4M3_FNUZ,
                                       KMUX_F8_E5M2_FNUZ};
    enum { N = 1000 };
    double in[N];
    for (int i = 0; i < N; i++) /* the largest magnitude sits in the middle, negative */
        in[i] = i == N / 2 ? -3.5 : (double)((i * 29) % 23 - 11) / 8.0;
    for (size_t t = 0; t < sizeof types / sizeof types[0]; t++) {
        char name[48];
        snprintf(name, sizeof name, "amax %s", kmux_dtype_name(types[t]));
        double got = 0, want = 0;
        kmux_status st = run_amax(s, types[t], in, N, &got);
        if (st == KMUX_ERR_UNSUPPORTED) {
            append(unsupported, usize, name);
            continue;
        }
        ck_verdict v;
        if (st != KMUX_OK) {
            v = device_failed(st, "rerun with KMUX_VERBOSE=2 for the native error");
        } else if (run_amax(ref_s, types[t], in, N, &want) != KMUX_OK) {
            v = ref_failed();
        } else {
            ck_compare c = ck_compare_exact(&got, &want, 1);
            v = ck_judge_compare(&c);
            snprintf(v.detail, sizeof v.detail, "%s: %g, ref %g",
                     c.mismatches ? "differs" : "matches ref", got, want);
        }
        add(run, id, name, &v);
    }
}

void ck_check_function(ck_run *run) {
    kmux_stream *ref_s = NULL;
    if (kmux_stream_create(run->ref, &ref_s) != KMUX_OK) {
        ck_verdict v =
            ck_verdict_of(CK_FAIL, kmux_last_error(), "the reference backend must always work");
        add(run, "ref", "stream", &v);
        return;
    }
    for (int i = 0; i < run->device_count; i++) {
        kmux_device *dev = run->devices[i];
        const char *id = kmux_device_id(dev);
        kmux_stream *s = NULL;
        if (kmux_stream_create(dev, &s) != KMUX_OK) {
            ck_verdict v =
                ck_verdict_of(CK_FAIL, kmux_last_error(), "check the driver with kmux-info");
            add(run, id, "stream", &v);
            continue;
        }
        check_launch(run, dev, s, id);
        check_copies(run, dev, s, id);
        char unsupported[2048] = "";
        check_matmul(run, s, ref_s, id, unsupported, sizeof unsupported);
        check_conv(run, s, ref_s, id, unsupported, sizeof unsupported);
        check_cast(run, s, ref_s, id, unsupported, sizeof unsupported);
        check_amax(run, s, ref_s, id, unsupported, sizeof unsupported);
        if (unsupported[0]) {
            char detail[384];
            snprintf(detail, sizeof detail, "not run (the device does not support them): %.330s%s",
                     unsupported, strlen(unsupported) > 330 ? "..." : "");
            ck_verdict v = ck_verdict_of(CK_SKIP, detail, NULL);
            add(run, id, "unsupported", &v);
        }
        kmux_stream_destroy(s);
    }
    kmux_stream_destroy(ref_s);
}
