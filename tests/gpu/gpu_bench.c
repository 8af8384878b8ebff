/*
 * gpu_bench.c - kmux-gpu-bench: times kmux on a GPU device for the cases of tests/gpu/cases.csv
 * (the same file tests/gpu/torch_bench.py reads, so both sides run the same shapes), verifying
 * every result before its speed is printed. Run by tests/gpu/run.sh.
 *
 *   kmux-gpu-bench --cases FILE [--device cuda:0] [--out FILE] [--min-ms 100]
 *
 * Cases (one per line, '#' comments):
 *   gemm,NAME,AB,C,COMPUTE,M,N,K,TA,TB      column-major C(MxN) = op(A) op(B), as DeepBench passes
 *                                           its shapes to cuBLAS; AB/C: f32 f16 bf16 e4m3 i8 ...;
 *                                           COMPUTE: f32 tf32 f16 i32 f64
 *   conv,NAME,T,T,COMPUTE,DIR,LAYOUT,N,C,H,W,K,R,S,STRIDE,PAD   DIR: fwd bwd_data bwd_weights
 *   overhead,NAME,f32,f32,f32,M,N,K,N,N     host time per kmux_gemm_ex call (plan cache hit)
 *
 * Timing: device events around batches of back-to-back calls after two warm-up calls, each batch
 * at least --min-ms long; the median batch gives ms per call. Data: uniform random reals in
 * [-1, 1] (small random integers for int8), rounded to the input type on the host. Operands are
 * as large as the case makes them (hot L2 for shapes that fit in it), the way torch_bench.py
 * measures, so the two columns compare like with like.
 *
 * Verification: 48 random output elements per case are recomputed on the host in f64 from the
 * exactly decoded inputs; an element fails when it is off by more than
 * (4 * u_out + 2 * u_in + k * u_acc) * sum |terms| (u: unit roundoff of the output type, of
 * TF32 input rounding where allowed, of the f32 accumulator). A case that fails prints FAIL and
 * no speed.
 *
 * Output: one CSV line per case on stdout (and --out): name,kind,shape,gflop,ms,tflops,impl,check
 * (for "overhead" cases ms is microseconds per call and tflops is empty). Exit status 0 when every
 * case ran and verified, 1 when one failed, 2 when the device is not available.
 */
#define _POSIX_C_SOURCE 200809L

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "kmux.h"
#include "kmux_cpu_kernels.h"

#define CHECKS 48

static int g_threads = 8;
static double g_min_ms = 100.0;

/* ---- small helpers ---- */

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static uint64_t rng_next(uint64_t *s) {
    uint64_t x = *s;
    x ^= x >> 12, x ^= x << 25, x ^= x >> 27;
    *s = x;
    return x * 0x2545F4914F6CDD1Dull;
}

static double rng_unit(uint64_t *s) {
    return (double)(rng_next(s) >> 11) * (1.0 / 9007199254740992.0);
}

static int parse_dtype(const char *s, kmux_dtype *t) {
    static const struct {
        const char *name;
        kmux_dtype t;
    } names[] = {{"f64", KMUX_F64},   {"f32", KMUX_F32},      {"f16", KMUX_F16},
                 {"bf16", KMUX_BF16}, {"e4m3", KMUX_F8_E4M3}, {"e5m2", KMUX_F8_E5M2},
                 {"i8", KMUX_I8},     {"i32", KMUX_I32}};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (strcmp(s, names[i].name) == 0) return *t = names[i].t, 1;
    return 0;
}

static int parse_compute(const char *s, kmux_compute_type *c) {
    if (!strcmp(s, "f32")) return *c = KMUX_COMPUTE_F32, 1;
    if (!strcmp(s, "tf32")) return *c = KMUX_COMPUTE_F32_FAST_TF32, 1;
    if (!strcmp(s, "bf16x3")) return *c = KMUX_COMPUTE_F32_FAST_BF16, 1;
    if (!strcmp(s, "f16")) return *c = KMUX_COMPUTE_F16, 1;
    if (!strcmp(s, "i32")) return *c = KMUX_COMPUTE_I32, 1;
    if (!strcmp(s, "f64")) return *c = KMUX_COMPUTE_F64, 1;
    return 0;
}

static double unit_roundoff(kmux_dtype t) {
    switch (t) {
    case KMUX_F64:
        return 0x1p-53;
    case KMUX_F32:
        return 0x1p-24;
    case KMUX_F16:
        return 0x1p-11;
    case KMUX_BF16:
        return 0x1p-8;
    default:
        return 0.0; /* integers */
    }
}

/* Random host tensor of `count` elements of type t, plus its exact f32 decoding. */
static void make_tensor(kmux_dtype t, size_t count, uint64_t seed, void **bits, float **values) {
    float *v = malloc(count * sizeof(float));
    void *b = malloc(count * kmux_dtype_size(t) + 1);
    if (!v || !b) {
        fprintf(stderr, "kmux-gpu-bench: out of host memory (%zu elements)\n", count);
        exit(1);
    }
    uint64_t s = seed * 0x9E3779B97F4A7C15ull + 1;
    if (t == KMUX_I8) {
        for (size_t i = 0; i < count; i++) {
            int x = (int)(rng_next(&s) % 17) - 8;
            ((int8_t *)b)[i] = (int8_t)x;
            v[i] = (float)x;
        }
    } else {
        for (size_t i = 0; i < count; i++)
            v[i] = (float)(2.0 * rng_unit(&s) - 1.0);
        if (t == KMUX_F32) {
            memcpy(b, v, count * sizeof(float));
        } else {
            kmux_cpu_cast((int64_t)count, v, KMUX_F32, b, t, 1, NULL, NULL, g_threads);
            kmux_cpu_to_f32((int64_t)count, b, t, v, g_threads); /* the values the GPU sees */
        }
    }
    *bits = b;
    *values = v;
}

static double decode_out(const void *buf, kmux_dtype t, size_t i) {
    switch (t) {
    case KMUX_F64:
        return ((const double *)buf)[i];
    case KMUX_F32:
        return ((const float *)buf)[i];
    case KMUX_F16:
        return kmux_cpu_f16_bits_to_f32(((const uint16_t *)buf)[i]);
    case KMUX_BF16:
        return kmux_cpu_bf16_bits_to_f32(((const uint16_t *)buf)[i]);
    case KMUX_I32:
        return ((const int32_t *)buf)[i];
    default:
        return NAN;
    }
}

/* ---- timing ---- */

typedef kmux_status (*op_fn)(void *arg);

typedef struct timer {
    kmux_stream *s;
    kmux_event *e0, *e1;
} timer;

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* Median ms per call over 3 batches; -1 after an error (message printed). */
static double time_op(timer *t, op_fn fn, void *arg, const char *name) {
    kmux_status st = KMUX_OK;
    for (int i = 0; i < 2 && st == KMUX_OK; i++)
        st = fn(arg);
    float ms = 0;
    if (st == KMUX_OK) st = kmux_event_record(t->e0, t->s);
    if (st == KMUX_OK) st = fn(arg);
    if (st == KMUX_OK) st = kmux_event_record(t->e1, t->s);
    if (st == KMUX_OK) st = kmux_event_synchronize(t->e1);
    if (st == KMUX_OK) st = kmux_event_elapsed_ms(t->e0, t->e1, &ms);
    if (st != KMUX_OK) {
        fprintf(stderr, "%s: %s: %s\n", name, kmux_status_str(st), kmux_last_error());
        return -1;
    }
    int reps = ms > 0 ? (int)ceil(g_min_ms / ms) : 1000;
    if (reps < 3) reps = 3;
    if (reps > 1000) reps = 1000;
    double per[3];
    for (int b = 0; b < 3; b++) {
        st = kmux_event_record(t->e0, t->s);
        for (int i = 0; i < reps && st == KMUX_OK; i++)
            st = fn(arg);
        if (st == KMUX_OK) st = kmux_event_record(t->e1, t->s);
        if (st == KMUX_OK) st = kmux_event_synchronize(t->e1);
        if (st == KMUX_OK) st = kmux_event_elapsed_ms(t->e0, t->e1, &ms);
        if (st != KMUX_OK) {
            fprintf(stderr, "%s: %s: %s\n", name, kmux_status_str(st), kmux_last_error());
            return -1;
        }
        per[b] = ms / reps;
    }
    qsort(per, 3, sizeof per[0], cmp_double);
    return per[1];
}

/* ---- result lines ---- */

static FILE *g_out;

static void result(const char *name, const char *kind, const char *shape, double gflop, double ms,
                   const char *impl, const char *check) {
    int ok = strcmp(check, "ok") == 0;
    char msb[32] = "", tf[32] = "";
    if (ok && ms > 0) snprintf(msb, sizeof msb, "%.4f", ms); /* no speed for an unverified result */
    if (ok && ms > 0 && gflop > 0) snprintf(tf, sizeof tf, "%.2f", gflop / ms);
    char im[256]; /* implementation names contain commas: keep the CSV columns intact */
    snprintf(im, sizeof im, "%s", impl);
    for (char *c = im; *c; c++)
        if (*c == ',') *c = ';';
    char line[1024];
    snprintf(line, sizeof line, "%s,%s,%s,%.4f,%s,%s,%s,%s\n", name, kind, shape, gflop, msb, tf,
             im, check);
    fputs(line, stdout);
    fflush(stdout);
    if (g_out) {
        fputs(line, g_out);
        fflush(g_out);
    }
}

/* ---- GEMM ---- */

typedef struct gemm_run {
    kmux_plan *plan;
    kmux_stream *s;
    kmux_matmul_args args;
} gemm_run;

static kmux_status gemm_exec(void *arg) {
    gemm_run *g = arg;
    return kmux_matmul_execute(g->plan, g->s, &g->args);
}

static int upload(kmux_device *dev, kmux_stream *s, const void *host, size_t bytes, void **dptr) {
    if (kmux_malloc(dev, bytes, dptr) != KMUX_OK ||
        kmux_memcpy(s, *dptr, host, bytes, KMUX_MEMCPY_HOST_TO_DEVICE) != KMUX_OK) {
        fprintf(stderr, "upload of %zu bytes: %s\n", bytes, kmux_last_error());
        return 0;
    }
    return 1;
}

static int run_gemm(kmux_device *dev, timer *t, const char *name, char **f) {
    kmux_dtype ab, ct;
    kmux_compute_type comp;
    if (!parse_dtype(f[2], &ab) || !parse_dtype(f[3], &ct) || !parse_compute(f[4], &comp)) {
        fprintf(stderr, "%s: bad types %s/%s/%s\n", name, f[2], f[3], f[4]);
        return 0;
    }
    int64_t m = atoll(f[5]), n = atoll(f[6]), k = atoll(f[7]);
    kmux_transpose ta = f[8][0] == 'T' ? KMUX_TRANS : KMUX_NO_TRANS;
    kmux_transpose tb = f[9][0] == 'T' ? KMUX_TRANS : KMUX_NO_TRANS;
    char shape[96];
    snprintf(shape, sizeof shape, "%lldx%lldx%lld:%s%s:%s->%s:%s", (long long)m, (long long)n,
             (long long)k, f[8], f[9], f[2], f[3], f[4]);
    double gflop = 2.0 * (double)m * (double)n * (double)k / 1e9;

    kmux_matmul_desc d = KMUX_MATMUL_DESC_INIT;
    d.order = KMUX_COL_MAJOR, d.transa = ta, d.transb = tb, d.m = m, d.n = n, d.k = k;
    d.a_type = d.b_type = ab, d.c_type = ct, d.compute_type = comp;
    d.lda = ta == KMUX_NO_TRANS ? m : k;
    d.ldb = tb == KMUX_NO_TRANS ? k : n;
    d.ldc = m;
    size_t na = (size_t)(m * k), nb = (size_t)(k * n), nc = (size_t)(m * n);
    void *ha, *hb;
    float *va, *vb;
    make_tensor(ab, na, 1, &ha, &va);
    make_tensor(ab, nb, 2, &hb, &vb);
    int ok = 0;
    gemm_run g = {NULL, t->s, KMUX_MATMUL_ARGS_INIT};
    void *da = NULL, *db = NULL, *dc = NULL, *hc = NULL;
    float alpha_f = 1.0f, beta_f = 0.0f;
    double alpha_d = 1.0, beta_d = 0.0;
    int32_t alpha_i = 1, beta_i = 0;
    g.args.alpha = comp == KMUX_COMPUTE_F64   ? (const void *)&alpha_d
                   : comp == KMUX_COMPUTE_I32 ? (const void *)&alpha_i
                                              : (const void *)&alpha_f;
    g.args.beta = comp == KMUX_COMPUTE_F64   ? (const void *)&beta_d
                  : comp == KMUX_COMPUTE_I32 ? (const void *)&beta_i
                                             : (const void *)&beta_f;
    if (!upload(dev, t->s, ha, na * kmux_dtype_size(ab), &da) ||
        !upload(dev, t->s, hb, nb * kmux_dtype_size(ab), &db))
        goto done;
    if (kmux_malloc(dev, nc * kmux_dtype_size(ct), &dc) != KMUX_OK) {
        fprintf(stderr, "%s: C: %s\n", name, kmux_last_error());
        goto done;
    }
    kmux_plan_info info;
    if (kmux_matmul_plan_create(dev, &d, NULL, &g.plan) != KMUX_OK ||
        kmux_plan_info_get(g.plan, &info) != KMUX_OK) {
        fprintf(stderr, "%s: plan: %s\n", name, kmux_last_error());
        result(name, "gemm", shape, gflop, -1, "none", "UNSUPPORTED");
        goto done;
    }
    g.args.A = da, g.args.B = db, g.args.C = dc;
    double ms = time_op(t, gemm_exec, &g, name);
    if (ms < 0) {
        result(name, "gemm", shape, gflop, -1, info.impl, "ERROR");
        goto done;
    }
    /* verify */
    hc = malloc(nc * kmux_dtype_size(ct));
    if (kmux_memcpy(t->s, hc, dc, nc * kmux_dtype_size(ct), KMUX_MEMCPY_DEVICE_TO_HOST) !=
            KMUX_OK ||
        kmux_stream_synchronize(t->s) != KMUX_OK) {
        fprintf(stderr, "%s: download: %s\n", name, kmux_last_error());
        goto done;
    }
    double u_in = info.effective_compute == KMUX_COMPUTE_F32_FAST_TF32   ? 0x1p-11
                  : info.effective_compute == KMUX_COMPUTE_F32_FAST_BF16 ? 0x1p-16
                                                                         : 0.0;
    double u_acc = comp == KMUX_COMPUTE_F16   ? 0x1p-11
                   : comp == KMUX_COMPUTE_F64 ? 0x1p-53
                                              : 0x1p-24;
    uint64_t s = 42;
    int bad = 0;
    for (int c = 0; c < CHECKS; c++) {
        int64_t i = (int64_t)(rng_next(&s) % (uint64_t)m),
                j = (int64_t)(rng_next(&s) % (uint64_t)n);
        double sum = 0, mag = 0;
        for (int64_t p = 0; p < k; p++) {
            double a = ta == KMUX_NO_TRANS ? va[i + p * d.lda] : va[p + i * d.lda];
            double b = tb == KMUX_NO_TRANS ? vb[p + j * d.ldb] : vb[j + p * d.ldb];
            sum += a * b;
            mag += fabs(a * b);
        }
        double got = decode_out(hc, ct, (size_t)(i + j * m));
        double tol = (4 * unit_roundoff(ct) + 2 * u_in + (double)k * u_acc) * mag + 1e-30;
        if (!(fabs(got - sum) <= tol)) {
            if (bad < 3)
                fprintf(stderr, "%s: C[%lld,%lld] = %.9g, expected %.9g (tolerance %.3g)\n", name,
                        (long long)i, (long long)j, got, sum, tol);
            bad++;
        }
    }
    result(name, "gemm", shape, gflop, ms, info.impl, bad ? "FAIL" : "ok");
    ok = !bad;
done:
    if (g.plan) kmux_plan_destroy(g.plan);
    if (da) kmux_free(dev, da);
    if (db) kmux_free(dev, db);
    if (dc) kmux_free(dev, dc);
    free(ha), free(hb), free(va), free(vb), free(hc);
    return ok;
}

/* ---- per-call overhead ---- */

static int run_overhead(kmux_device *dev, timer *t, const char *name, char **f) {
    int64_t m = atoll(f[5]), n = atoll(f[6]), k = atoll(f[7]);
    char shape[64];
    snprintf(shape, sizeof shape, "%lldx%lldx%lld:f32", (long long)m, (long long)n, (long long)k);
    void *ha, *hb;
    float *va, *vb;
    make_tensor(KMUX_F32, (size_t)(m * k), 3, &ha, &va);
    make_tensor(KMUX_F32, (size_t)(k * n), 4, &hb, &vb);
    void *da = NULL, *db = NULL, *dc = NULL;
    int ok = 0;
    const float one = 1.0f, zero = 0.0f;
    if (!upload(dev, t->s, ha, (size_t)(m * k) * 4, &da) ||
        !upload(dev, t->s, hb, (size_t)(k * n) * 4, &db) ||
        kmux_malloc(dev, (size_t)(m * n) * 4, &dc) != KMUX_OK)
        goto done;
    kmux_status st = KMUX_OK;
    for (int i = 0; i < 100 && st == KMUX_OK; i++) /* warm-up: plan cache, workspace */
        st = kmux_gemm_ex(t->s, KMUX_COL_MAJOR, KMUX_NO_TRANS, KMUX_NO_TRANS, m, n, k, &one, da,
                          KMUX_F32, m, db, KMUX_F32, k, &zero, dc, KMUX_F32, m, KMUX_COMPUTE_F32);
    if (st == KMUX_OK) st = kmux_stream_synchronize(t->s);
    const int calls = 2000;
    double t0 = now_s();
    for (int i = 0; i < calls && st == KMUX_OK; i++)
        st = kmux_gemm_ex(t->s, KMUX_COL_MAJOR, KMUX_NO_TRANS, KMUX_NO_TRANS, m, n, k, &one, da,
                          KMUX_F32, m, db, KMUX_F32, k, &zero, dc, KMUX_F32, m, KMUX_COMPUTE_F32);
    if (st == KMUX_OK) st = kmux_stream_synchronize(t->s);
    double us = (now_s() - t0) / calls * 1e6;
    if (st != KMUX_OK) {
        fprintf(stderr, "%s: %s\n", name, kmux_last_error());
        result(name, "overhead", shape, 0, -1, "kmux_gemm_ex", "ERROR");
        goto done;
    }
    result(name, "overhead", shape, 0, us, "kmux_gemm_ex", "ok");
    ok = 1;
done:
    if (da) kmux_free(dev, da);
    if (db) kmux_free(dev, db);
    if (dc) kmux_free(dev, dc);
    free(ha), free(hb), free(va), free(vb);
    return ok;
}

/* ---- convolution ---- */

typedef struct conv_run {
    kmux_plan *plan;
    kmux_stream *s;
    kmux_conv2d_args args;
} conv_run;

static kmux_status conv_exec(void *arg) {
    conv_run *c = arg;
    return kmux_conv2d_execute(c->plan, c->s, &c->args);
}

typedef struct geom {
    kmux_conv2d_desc d;
    int64_t p, q, cg, kg;
} geom;

static size_t xi(const geom *g, int64_t n, int64_t c, int64_t h, int64_t w) {
    const kmux_conv2d_desc *d = &g->d;
    return (size_t)(d->layout == KMUX_NHWC ? ((n * d->h + h) * d->w + w) * d->c + c
                                           : ((n * d->c + c) * d->h + h) * d->w + w);
}
static size_t yi(const geom *g, int64_t n, int64_t k, int64_t p, int64_t q) {
    const kmux_conv2d_desc *d = &g->d;
    return (size_t)(d->layout == KMUX_NHWC ? ((n * g->p + p) * g->q + q) * d->k + k
                                           : ((n * d->k + k) * g->p + p) * g->q + q);
}
static size_t wi(const geom *g, int64_t k, int64_t c, int64_t r, int64_t s) {
    const kmux_conv2d_desc *d = &g->d;
    return (size_t)(d->layout == KMUX_NHWC ? ((k * d->r + r) * d->s + s) * g->cg + c
                                           : ((k * g->cg + c) * d->r + r) * d->s + s);
}

/* One output element of the direction, in f64 (sum and sum of |terms|). */
static void conv_ref(const geom *g, const float *x, const float *w, const float *y, size_t idx[4],
                     double *sum, double *mag) {
    const kmux_conv2d_desc *d = &g->d;
    *sum = *mag = 0;
    if (d->direction == KMUX_CONV_FWD) {
        int64_t n = (int64_t)idx[0], k = (int64_t)idx[1], p = (int64_t)idx[2], q = (int64_t)idx[3];
        int64_t grp = k / g->kg;
        for (int64_t c = 0; c < g->cg; c++)
            for (int64_t r = 0; r < d->r; r++)
                for (int64_t s = 0; s < d->s; s++) {
                    int64_t h = p * d->stride_h - d->pad_top + r * d->dilation_h;
                    int64_t ww = q * d->stride_w - d->pad_left + s * d->dilation_w;
                    if (h < 0 || h >= d->h || ww < 0 || ww >= d->w) continue;
                    double t = (double)x[xi(g, n, grp * g->cg + c, h, ww)] * w[wi(g, k, c, r, s)];
                    *sum += t, *mag += fabs(t);
                }
    } else if (d->direction == KMUX_CONV_BWD_DATA) {
        int64_t n = (int64_t)idx[0], c = (int64_t)idx[1], h = (int64_t)idx[2], ww = (int64_t)idx[3];
        int64_t grp = c / g->cg;
        for (int64_t k = grp * g->kg; k < (grp + 1) * g->kg; k++)
            for (int64_t r = 0; r < d->r; r++)
                for (int64_t s = 0; s < d->s; s++) {
                    int64_t ph = h + d->pad_top - r * d->dilation_h,
                            qw = ww + d->pad_left - s * d->dilation_w;
                    if (ph < 0 || qw < 0 || ph % d->stride_h || qw % d->stride_w) continue;
                    int64_t p = ph / d->stride_h, q = qw / d->stride_w;
                    if (p >= g->p || q >= g->q) continue;
                    double t = (double)y[yi(g, n, k, p, q)] * w[wi(g, k, c - grp * g->cg, r, s)];
                    *sum += t, *mag += fabs(t);
                }
    } else {
        int64_t k = (int64_t)idx[0], c = (int64_t)idx[1], r = (int64_t)idx[2], s = (int64_t)idx[3];
        int64_t grp = k / g->kg;
        for (int64_t n = 0; n < d->n; n++)
            for (int64_t p = 0; p < g->p; p++)
                for (int64_t q = 0; q < g->q; q++) {
                    int64_t h = p * d->stride_h - d->pad_top + r * d->dilation_h;
                    int64_t ww = q * d->stride_w - d->pad_left + s * d->dilation_w;
                    if (h < 0 || h >= d->h || ww < 0 || ww >= d->w) continue;
                    double t = (double)y[yi(g, n, k, p, q)] * x[xi(g, n, grp * g->cg + c, h, ww)];
                    *sum += t, *mag += fabs(t);
                }
    }
}

static int run_conv(kmux_device *dev, timer *t, const char *name, char **f) {
    kmux_dtype dt;
    kmux_compute_type comp;
    if (!parse_dtype(f[2], &dt) || !parse_compute(f[4], &comp)) {
        fprintf(stderr, "%s: bad types\n", name);
        return 0;
    }
    geom g;
    kmux_conv2d_desc d = KMUX_CONV2D_DESC_INIT;
    d.direction = !strcmp(f[5], "fwd")        ? KMUX_CONV_FWD
                  : !strcmp(f[5], "bwd_data") ? KMUX_CONV_BWD_DATA
                                              : KMUX_CONV_BWD_WEIGHTS;
    d.layout = !strcmp(f[6], "NHWC") ? KMUX_NHWC : KMUX_NCHW;
    d.n = atoll(f[7]), d.c = atoll(f[8]), d.h = atoll(f[9]), d.w = atoll(f[10]);
    d.k = atoll(f[11]), d.r = atoll(f[12]), d.s = atoll(f[13]);
    d.stride_h = d.stride_w = atoll(f[14]);
    d.pad_top = d.pad_bottom = d.pad_left = d.pad_right = atoll(f[15]);
    d.x_type = d.w_type = d.y_type = dt, d.compute_type = comp;
    if (kmux_conv2d_output_dims(&d, &g.p, &g.q) != KMUX_OK) {
        fprintf(stderr, "%s: %s\n", name, kmux_last_error());
        return 0;
    }
    g.d = d, g.cg = d.c / d.groups, g.kg = d.k / d.groups;
    char shape[128];
    snprintf(shape, sizeof shape, "n%lldc%lldh%lldw%lldk%lldr%llds%lldst%lldp%lld:%s:%s:%s",
             (long long)d.n, (long long)d.c, (long long)d.h, (long long)d.w, (long long)d.k,
             (long long)d.r, (long long)d.s, (long long)d.stride_h, (long long)d.pad_top, f[5],
             f[6], f[2]);
    double gflop = 2.0 * (double)(d.n * d.k * g.p * g.q) * (double)(g.cg * d.r * d.s) / 1e9;
    size_t nx = (size_t)(d.n * d.c * d.h * d.w), nw = (size_t)(d.k * g.cg * d.r * d.s),
           ny = (size_t)(d.n * d.k * g.p * g.q);
    void *hx, *hw, *hy, *hout = NULL;
    float *vx, *vw, *vy;
    make_tensor(dt, nx, 5, &hx, &vx);
    make_tensor(dt, nw, 6, &hw, &vw);
    make_tensor(dt, ny, 7, &hy, &vy);
    size_t es = kmux_dtype_size(dt);
    conv_run c = {NULL, t->s, KMUX_CONV2D_ARGS_INIT};
    void *dx = NULL, *dw = NULL, *dy = NULL;
    int ok = 0;
    const float one = 1.0f, zero = 0.0f;
    c.args.alpha = &one, c.args.beta = &zero;
    if (!upload(dev, t->s, hx, nx * es, &dx) || !upload(dev, t->s, hw, nw * es, &dw) ||
        !upload(dev, t->s, hy, ny * es, &dy))
        goto done;
    c.args.x = dx, c.args.w = dw, c.args.y = dy;
    kmux_plan_info info;
    if (kmux_conv2d_plan_create(dev, &d, NULL, &c.plan) != KMUX_OK ||
        kmux_plan_info_get(c.plan, &info) != KMUX_OK) {
        fprintf(stderr, "%s: plan: %s\n", name, kmux_last_error());
        result(name, "conv", shape, gflop, -1, "none", "UNSUPPORTED");
        goto done;
    }
    double ms = time_op(t, conv_exec, &c, name);
    if (ms < 0) {
        result(name, "conv", shape, gflop, -1, info.impl, "ERROR");
        goto done;
    }
    void *out = d.direction == KMUX_CONV_FWD ? dy : d.direction == KMUX_CONV_BWD_DATA ? dx : dw;
    size_t nout = d.direction == KMUX_CONV_FWD ? ny : d.direction == KMUX_CONV_BWD_DATA ? nx : nw;
    hout = malloc(nout * es);
    if (kmux_memcpy(t->s, hout, out, nout * es, KMUX_MEMCPY_DEVICE_TO_HOST) != KMUX_OK ||
        kmux_stream_synchronize(t->s) != KMUX_OK) {
        fprintf(stderr, "%s: download: %s\n", name, kmux_last_error());
        goto done;
    }
    double u_in = info.effective_compute == KMUX_COMPUTE_F32_FAST_TF32 ? 0x1p-11 : 0.0;
    int64_t terms = d.direction == KMUX_CONV_BWD_WEIGHTS ? d.n * g.p * g.q
                    : d.direction == KMUX_CONV_FWD       ? g.cg * d.r * d.s
                                                         : g.kg * d.r * d.s;
    uint64_t s = 43;
    int bad = 0;
    for (int i = 0; i < CHECKS / 3; i++) {
        size_t idx[4];
        int64_t dims[4];
        if (d.direction == KMUX_CONV_FWD)
            dims[0] = d.n, dims[1] = d.k, dims[2] = g.p, dims[3] = g.q;
        else if (d.direction == KMUX_CONV_BWD_DATA)
            dims[0] = d.n, dims[1] = d.c, dims[2] = d.h, dims[3] = d.w;
        else
            dims[0] = d.k, dims[1] = g.cg, dims[2] = d.r, dims[3] = d.s;
        for (int a = 0; a < 4; a++)
            idx[a] = (size_t)(rng_next(&s) % (uint64_t)dims[a]);
        double sum, mag;
        conv_ref(&g, vx, vw, vy, idx, &sum, &mag);
        size_t at =
            d.direction == KMUX_CONV_FWD
                ? yi(&g, (int64_t)idx[0], (int64_t)idx[1], (int64_t)idx[2], (int64_t)idx[3])
            : d.direction == KMUX_CONV_BWD_DATA
                ? xi(&g, (int64_t)idx[0], (int64_t)idx[1], (int64_t)idx[2], (int64_t)idx[3])
                : wi(&g, (int64_t)idx[0], (int64_t)idx[1], (int64_t)idx[2], (int64_t)idx[3]);
        double got = decode_out(hout, dt, at);
        double tol = (4 * unit_roundoff(dt) + 2 * u_in + (double)terms * 0x1p-24) * mag + 1e-30;
        if (!(fabs(got - sum) <= tol)) {
            if (bad < 3)
                fprintf(stderr, "%s: element %zu = %.9g, expected %.9g (tolerance %.3g)\n", name,
                        at, got, sum, tol);
            bad++;
        }
    }
    result(name, "conv", shape, gflop, ms, info.impl, bad ? "FAIL" : "ok");
    ok = !bad;
done:
    if (c.plan) kmux_plan_destroy(c.plan);
    if (dx) kmux_free(dev, dx);
    if (dw) kmux_free(dev, dw);
    if (dy) kmux_free(dev, dy);
    free(hx), free(hw), free(hy), free(vx), free(vw), free(vy), free(hout);
    return ok;
}

/* ---- main ---- */

int main(int argc, char **argv) {
    const char *cases = NULL, *devname = "cuda:0", *outname = NULL;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--cases") && i + 1 < argc)
            cases = argv[++i];
        else if (!strcmp(argv[i], "--device") && i + 1 < argc)
            devname = argv[++i];
        else if (!strcmp(argv[i], "--out") && i + 1 < argc)
            outname = argv[++i];
        else if (!strcmp(argv[i], "--min-ms") && i + 1 < argc)
            g_min_ms = atof(argv[++i]);
        else {
            fprintf(stderr,
                    "usage: %s --cases FILE [--device cuda:0] [--out FILE] [--min-ms 100]\n",
                    argv[0]);
            return 1;
        }
    }
    if (!cases) {
        fprintf(stderr, "kmux-gpu-bench: --cases FILE is required\n");
        return 1;
    }
    kmux_context *ctx = NULL;
    kmux_device *dev = NULL;
    if (kmux_context_create(NULL, &ctx) != KMUX_OK) {
        fprintf(stderr, "kmux-gpu-bench: kmux_context_create: %s\n", kmux_last_error());
        return 1;
    }
    if (kmux_device_find(ctx, devname, &dev) != KMUX_OK) {
        fprintf(stderr, "kmux-gpu-bench: %s is not available: %s\n", devname, kmux_last_error());
        kmux_context_destroy(ctx);
        return 2;
    }
    kmux_device_props p;
    kmux_device_props_get(dev, &p);
    fprintf(stderr, "kmux-gpu-bench: %s = %s (%s, %d SMs, %.0f MHz), driver %s, %s\n", p.id, p.name,
            p.arch, p.compute_units, p.clock_mhz, p.driver_version, p.library_version);
    FILE *in = fopen(cases, "r");
    if (!in) {
        fprintf(stderr, "kmux-gpu-bench: cannot open %s\n", cases);
        kmux_context_destroy(ctx);
        return 1;
    }
    if (outname) g_out = fopen(outname, "w");
    const char *header = "name,kind,shape,gflop,ms,tflops,impl,check\n";
    fputs(header, stdout);
    if (g_out) fputs(header, g_out);
    timer t = {NULL, NULL, NULL};
    if (kmux_stream_create(dev, &t.s) != KMUX_OK || kmux_event_create(dev, &t.e0) != KMUX_OK ||
        kmux_event_create(dev, &t.e1) != KMUX_OK) {
        fprintf(stderr, "kmux-gpu-bench: stream/events: %s\n", kmux_last_error());
        return 1;
    }
    int failures = 0;
    char line[512];
    while (fgets(line, sizeof line, in)) {
        line[strcspn(line, "\r\n")] = '\0';
        if (!line[0] || line[0] == '#') continue;
        char *fields[20] = {0};
        int nf = 0;
        for (char *tok = strtok(line, ","); tok && nf < 20; tok = strtok(NULL, ","))
            fields[nf++] = tok;
        if (nf < 10) {
            fprintf(stderr, "kmux-gpu-bench: short line for %s\n", fields[1] ? fields[1] : "?");
            failures++;
            continue;
        }
        int ok;
        if (!strcmp(fields[0], "gemm"))
            ok = run_gemm(dev, &t, fields[1], fields);
        else if (!strcmp(fields[0], "conv") && nf >= 16)
            ok = run_conv(dev, &t, fields[1], fields);
        else if (!strcmp(fields[0], "overhead"))
            ok = run_overhead(dev, &t, fields[1], fields);
        else {
            fprintf(stderr, "kmux-gpu-bench: unknown case kind '%s'\n", fields[0]);
            ok = 0;
        }
        failures += !ok;
    }
    fclose(in);
    if (g_out) fclose(g_out);
    kmux_event_destroy(t.e0);
    kmux_event_destroy(t.e1);
    kmux_stream_destroy(t.s);
    kmux_context_destroy(ctx);
    return failures ? 1 : 0;
}
