/*
 * bench_overhead.c - what going through kmux costs against calling the native libraries
 * directly, measured side by side in one run:
 *   1. GEMM f32 2048^3: kmux_gemm_ex on cpu:openblas vs cblas_sgemm, on cpu:onednn vs a oneDNN
 *      matmul primitive (target: kmux reaches >= 98% of the direct throughput);
 *   2. GEMM f32 8^3: microseconds kmux_gemm_ex (plan cache) adds per call (target <= 0.5 us);
 *   3. ResNet-50 3x3 convolution mb32ic64ih56oc64oh56kh3ph1 (NCHW, f32): a kmux conv2d plan on
 *      cpu:onednn vs the oneDNN primitive with the reorders an NCHW caller needs (>= 98%);
 *   4. bf16 GEMM vs f32 GEMM 2048^3 through kmux on each CPU device (bf16 throughput >= 80% of
 *      f32) with kmux_gemm_ex, and as information the plan's implementation on the other path
 *      (native bf16 kernel vs "+cvt", reached with kmux_plan_next_impl) where there is one.
 * Every measurement runs its contestants interleaved (A B C D, A B C D, ...) after a warm-up,
 * times each repetition with the monotonic clock and reports the median. Results of kmux and of
 * the direct call are compared once before timing (random reals; tolerance from K and the
 * type's epsilon); a timing whose result disagrees is not printed. Threads: the kmux context,
 * OpenBLAS and oneDNN's OpenMP all use the machine's cores.
 *
 * Usage: bench_overhead [conv_batch]   (default 32; the conv takes ~30-60 ms on 2 cores)
 */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "kmux.h"
#include "kmux_cpu_kernels.h"

#ifdef KMUX_BENCH_HAVE_OPENBLAS
#include <cblas.h>
#endif
#ifdef KMUX_BENCH_HAVE_DNNL
#include <oneapi/dnnl/dnnl.h>
#endif

#define MAX_REPS 64

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median(const double *v, int n) {
    double s[MAX_REPS];
    memcpy(s, v, (size_t)n * sizeof *s);
    qsort(s, (size_t)n, sizeof *s, cmp_double);
    return n % 2 ? s[n / 2] : 0.5 * (s[n / 2 - 1] + s[n / 2]);
}

/* ---- contestants ------------------------------------------------------------------------------
 */

typedef int (*run_fn)(void *arg); /* one call; returns 0 on success */

typedef struct contestant {
    const char *name;
    run_fn run;
    void *arg;
    int ok;                /* set to 0 when a call failed */
    double secs[MAX_REPS]; /* seconds per call, one entry per repetition */
} contestant;

/* Warm-up, then reps rounds; each round times `inner` calls of every contestant in turn. */
static void interleave(contestant *c, int nc, int warm, int reps, int inner) {
    for (int i = 0; i < nc; i++)
        for (int w = 0; w < warm && c[i].ok; w++)
            c[i].ok = c[i].run(c[i].arg) == 0;
    for (int r = 0; r < reps; r++)
        for (int i = 0; i < nc; i++) {
            if (!c[i].ok) continue;
            double t0 = now_s();
            for (int k = 0; k < inner && c[i].ok; k++)
                c[i].ok = c[i].run(c[i].arg) == 0;
            c[i].secs[r] = (now_s() - t0) / inner;
        }
}

/* ---- data
 * ---------------------------------------------------------------------------------------- */

static float *rand_f32(int64_t n, uint64_t seed) {
    float *p = aligned_alloc(64, ((size_t)n * 4 + 63) / 64 * 64);
    if (!p) {
        fprintf(stderr, "bench_overhead: out of memory\n");
        exit(1);
    }
    uint64_t x = seed * 0x9E3779B97F4A7C15ull + 1;
    for (int64_t i = 0; i < n; i++) {
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        p[i] =
            (float)((double)((x * 0x2545F4914F6CDD1Dull) >> 11) / 9007199254740992.0 * 2.0 - 1.0);
    }
    return p;
}

/* max |a - b| / (max |b| + tiny) over n values: 0 for identical results */
static double rel_diff(const float *a, const float *b, int64_t n) {
    double d = 0.0, m = 1e-30;
    for (int64_t i = 0; i < n; i++) {
        double e = fabs((double)a[i] - (double)b[i]);
        if (e > d || isnan(e)) d = isnan(e) ? INFINITY : e;
        if (fabs((double)b[i]) > m) m = fabs((double)b[i]);
    }
    return d / m;
}

/* ---- GEMM contestants --------------------------------------------------------------------------
 */

typedef struct gemm_args {
    kmux_stream *stream; /* kmux */
    int64_t n;
    const void *A, *B;
    void *C;
    kmux_dtype ab_type, c_type;
#ifdef KMUX_BENCH_HAVE_DNNL
    dnnl_primitive_t prim;
    dnnl_stream_t dstream;
    dnnl_exec_arg_t args[4];
    int nargs;
#endif
} gemm_args;

static int run_kmux_gemm(void *p) {
    gemm_args *g = p;
    float one = 1.0f, zero = 0.0f;
    kmux_status s = kmux_gemm_ex(g->stream, KMUX_ROW_MAJOR, KMUX_NO_TRANS, KMUX_NO_TRANS, g->n,
                                 g->n, g->n, &one, g->A, g->ab_type, g->n, g->B, g->ab_type, g->n,
                                 &zero, g->C, g->c_type, g->n, KMUX_COMPUTE_F32);
    if (s != KMUX_OK)
        fprintf(stderr, "kmux_gemm_ex: %s: %s\n", kmux_status_str(s), kmux_last_error());
    return s != KMUX_OK;
}

#ifdef KMUX_BENCH_HAVE_OPENBLAS
static int run_cblas(void *p) {
    gemm_args *g = p;
    int n = (int)g->n;
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, n, n, n, 1.0f, g->A, n, g->B, n, 0.0f,
                g->C, n);
    return 0;
}
#endif

#ifdef KMUX_BENCH_HAVE_DNNL
static dnnl_engine_t g_engine;

static int run_dnnl(void *p) {
    gemm_args *g = p;
    return dnnl_primitive_execute(g->prim, g->dstream, g->nargs, g->args) != dnnl_success;
}

/* A row-major n x n x n f32 matmul primitive on A, B, C, as a oneDNN user writes it (default
 * attributes: library-managed scratchpad, default fpmath mode). */
static int dnnl_gemm_setup(gemm_args *g) {
    dnnl_dims_t dims = {g->n, g->n};
    dnnl_memory_desc_t md;
    dnnl_matmul_desc_t op;
    dnnl_primitive_desc_t pd = NULL;
    dnnl_memory_t m[3];
    if (dnnl_memory_desc_init_by_tag(&md, 2, dims, dnnl_f32, dnnl_ab) ||
        dnnl_matmul_desc_init(&op, &md, &md, NULL, &md) ||
        dnnl_primitive_desc_create(&pd, &op, NULL, g_engine, NULL) ||
        dnnl_primitive_create(&g->prim, pd) ||
        dnnl_stream_create(&g->dstream, g_engine, dnnl_stream_default_flags))
        return 1;
    dnnl_primitive_desc_destroy(pd);
    void *ptr[3] = {(void *)g->A, (void *)g->B, g->C};
    static const int arg[3] = {DNNL_ARG_SRC, DNNL_ARG_WEIGHTS, DNNL_ARG_DST};
    for (int i = 0; i < 3; i++) {
        if (dnnl_memory_create(&m[i], &md, g_engine, ptr[i])) return 1;
        g->args[i] = (dnnl_exec_arg_t){arg[i], m[i]};
    }
    g->nargs = 3;
    return 0;
}
#endif

/* ---- report ------------------------------------------------------------------------------------
 */

static int g_miss, g_lines;

/* One row of the table; pass: 1 PASS, 0 MISS, -1 SKIP (no device), -2 information only. */
static void line(const char *what, const char *dev, const char *a, const char *b, const char *value,
                 const char *target, int pass) {
    printf("%-34s %-13s %-13s %-13s %-12s %-11s %s\n", what, dev, a, b, value, target,
           pass == -2 ? "-"
           : pass < 0 ? "SKIP"
           : pass     ? "PASS"
                      : "MISS");
    if (pass == 0) g_miss++;
    g_lines++;
}

static void fmt_time(char *buf, size_t size, double s) {
    if (s >= 1e-3)
        snprintf(buf, size, "%.2f ms", s * 1e3);
    else
        snprintf(buf, size, "%.3f us", s * 1e6);
}

/* Ratio line: throughput of kmux relative to direct (time_direct / time_kmux). */
static void ratio_line(const char *what, const char *dev, const contestant *k, const contestant *d,
                       int reps, double target, int verified) {
    char a[32], b[32], v[32], t[32];
    if (!k->ok || !d->ok || !verified) {
        line(what, dev, k->ok ? "" : "failed", d->ok ? "" : "failed",
             verified ? "" : "WRONG RESULT", "", 0);
        return;
    }
    double tk = median(k->secs, reps), td = median(d->secs, reps);
    fmt_time(a, sizeof a, tk);
    fmt_time(b, sizeof b, td);
    snprintf(v, sizeof v, "%.2f%%", 100.0 * td / tk);
    snprintf(t, sizeof t, ">= %.0f%%", 100.0 * target);
    line(what, dev, a, b, v, t, td / tk >= target);
}

static void added_line(const char *what, const char *dev, const contestant *k, const contestant *d,
                       int reps, double target_us, int verified) {
    char a[32], b[32], v[32], t[32];
    if (!k->ok || !d->ok || !verified) {
        line(what, dev, k->ok ? "" : "failed", d->ok ? "" : "failed",
             verified ? "" : "WRONG RESULT", "", 0);
        return;
    }
    double tk = median(k->secs, reps), td = median(d->secs, reps);
    fmt_time(a, sizeof a, tk);
    fmt_time(b, sizeof b, td);
    snprintf(v, sizeof v, "%+.3f us", (tk - td) * 1e6);
    snprintf(t, sizeof t, "<= %.1f us", target_us);
    line(what, dev, a, b, v, t, (tk - td) * 1e6 <= target_us);
}

/* ---- the four measurements ---------------------------------------------------------------------
 */

typedef struct devices {
    kmux_device *ob, *dnn;
    kmux_stream *ob_s, *dnn_s;
} devices;

/* GEMM f32 n^3: kmux vs direct on both devices; per-call times (inner calls per repetition). */
static void bench_gemm(devices *dv, int64_t n, int reps, int inner, int small) {
    int64_t nn = n * n;
    float *A = rand_f32(nn, 1), *B = rand_f32(nn, 2);
    float *C[4];
    for (int i = 0; i < 4; i++)
        C[i] = rand_f32(nn, 10 + (uint64_t)i);
    gemm_args g[4];
    memset(g, 0, sizeof g);
    for (int i = 0; i < 4; i++) {
        g[i].n = n;
        g[i].A = A;
        g[i].B = B;
        g[i].C = C[i];
        g[i].ab_type = g[i].c_type = KMUX_F32;
    }
    contestant c[4] = {{"kmux cpu:openblas", run_kmux_gemm, &g[0], dv->ob != NULL, {0}},
                       {"cblas_sgemm", NULL, &g[1], 0, {0}},
                       {"kmux cpu:onednn", run_kmux_gemm, &g[2], dv->dnn != NULL, {0}},
                       {"oneDNN matmul", NULL, &g[3], 0, {0}}};
    g[0].stream = dv->ob_s;
    g[2].stream = dv->dnn_s;
#ifdef KMUX_BENCH_HAVE_OPENBLAS
    c[1].run = run_cblas;
    c[1].ok = 1;
#endif
#ifdef KMUX_BENCH_HAVE_DNNL
    c[3].run = run_dnnl;
    c[3].ok = g_engine && dnnl_gemm_setup(&g[3]) == 0;
#endif
    /* correctness first: kmux against the direct call, once */
    int verified[2] = {0, 0};
    for (int pair = 0; pair < 2; pair++) {
        contestant *k = &c[2 * pair], *d = &c[2 * pair + 1];
        if (!k->ok || !d->ok) continue;
        k->ok = k->run(k->arg) == 0;
        d->ok = d->run(d->arg) == 0;
        double tol = 8.0 * (double)n * 0x1p-24; /* f32 accumulation of n terms */
        verified[pair] = k->ok && d->ok && rel_diff(C[2 * pair], C[2 * pair + 1], nn) <= tol;
    }
    interleave(c, 4, small ? 200 : 1, reps, inner);
    char what[64];
    if (small) {
        snprintf(what, sizeof what, "GEMM f32 %lld^3, time per call", (long long)n);
        if (dv->ob) added_line(what, "cpu:openblas", &c[0], &c[1], reps, 0.5, verified[0]);
        if (dv->dnn) added_line(what, "cpu:onednn", &c[2], &c[3], reps, 0.5, verified[1]);
    } else {
        snprintf(what, sizeof what, "GEMM f32 %lld^3", (long long)n);
        if (dv->ob) ratio_line(what, "cpu:openblas", &c[0], &c[1], reps, 0.98, verified[0]);
        if (dv->dnn) ratio_line(what, "cpu:onednn", &c[2], &c[3], reps, 0.98, verified[1]);
    }
    free(A);
    free(B);
    for (int i = 0; i < 4; i++)
        free(C[i]);
}

/* A bf16 plan walked (kmux_plan_next_impl) to its first implementation on the other path than
 * its default (native kernel vs "+cvt"), if it has one; NULL otherwise. */
static kmux_plan *alt_plan(kmux_device *dev, int64_t n, char *impl, size_t impl_size) {
    kmux_matmul_desc d = KMUX_MATMUL_DESC_INIT;
    d.m = d.n = d.k = d.lda = d.ldb = d.ldc = n;
    d.a_type = d.b_type = d.c_type = KMUX_BF16;
    kmux_plan *plan = NULL;
    if (kmux_matmul_plan_create(dev, &d, NULL, &plan) != KMUX_OK) return NULL;
    int first_cvt = -1;
    for (int i = 0; i < 16; i++) {
        kmux_plan_info info;
        if (kmux_plan_info_get(plan, &info) != KMUX_OK) break;
        int cvt = strstr(info.impl, "+cvt") != NULL;
        if (i == 0) first_cvt = cvt;
        if (cvt != first_cvt) {
            snprintf(impl, impl_size, "%s", info.impl);
            return plan;
        }
        if (kmux_plan_next_impl(plan) != KMUX_OK) break;
    }
    kmux_plan_destroy(plan);
    return NULL;
}

typedef struct plan_args {
    kmux_plan *plan;
    kmux_stream *stream;
    const void *A, *B;
    void *C;
} plan_args;

static int run_plan(void *p) {
    plan_args *g = p;
    float one = 1.0f, zero = 0.0f;
    kmux_matmul_args a = KMUX_MATMUL_ARGS_INIT;
    a.alpha = &one;
    a.beta = &zero;
    a.A = g->A;
    a.B = g->B;
    a.C = g->C;
    return kmux_matmul_execute(g->plan, g->stream, &a) != KMUX_OK;
}

/* bf16 vs f32 GEMM n^3 through kmux on one device: throughput ratio (bf16 in, bf16 out), with
 * kmux_gemm_ex (the default implementation), and, as information, the plan's implementation on
 * the other path (native kernel vs "+cvt") where there is one. */
static void bench_bf16(kmux_device *dev, kmux_stream *s, const char *id, int64_t n, int reps) {
    int64_t nn = n * n;
    float *A = rand_f32(nn, 3), *B = rand_f32(nn, 4), *C = rand_f32(nn, 5);
    uint16_t *Ah = malloc((size_t)nn * 2), *Bh = malloc((size_t)nn * 2);
    uint16_t *Ch[2] = {malloc((size_t)nn * 2), malloc((size_t)nn * 2)};
    float *Cw = malloc((size_t)nn * 4);
    if (!Ah || !Bh || !Ch[0] || !Ch[1] || !Cw) exit(1);
    for (int64_t i = 0; i < nn; i++) {
        Ah[i] = kmux_cpu_f32_to_bf16_bits(A[i]);
        Bh[i] = kmux_cpu_f32_to_bf16_bits(B[i]);
    }
    gemm_args g[2];
    memset(g, 0, sizeof g);
    g[0] = (gemm_args){
        .stream = s, .n = n, .A = A, .B = B, .C = C, .ab_type = KMUX_F32, .c_type = KMUX_F32};
    g[1] = (gemm_args){.stream = s,
                       .n = n,
                       .A = Ah,
                       .B = Bh,
                       .C = Ch[0],
                       .ab_type = KMUX_BF16,
                       .c_type = KMUX_BF16};
    char alt_impl[128] = "";
    plan_args pa = {alt_plan(dev, n, alt_impl, sizeof alt_impl), s, Ah, Bh, Ch[1]};
    contestant c[3] = {{"f32", run_kmux_gemm, &g[0], 1, {0}},
                       {"bf16", run_kmux_gemm, &g[1], 1, {0}},
                       {"bf16 other impl", run_plan, &pa, pa.plan != NULL, {0}}};
    int nc = pa.plan ? 3 : 2;
    /* the bf16 results must agree with f32 within bf16 input and output rounding */
    int verified[3] = {0, 0, 0};
    double tol = 4.0 * 0x1p-8 + 8.0 * (double)n * 0x1p-24;
    for (int i = 0; i < nc; i++)
        c[i].ok = c[i].run(c[i].arg) == 0;
    for (int i = 1; i < nc; i++) {
        for (int64_t j = 0; j < nn; j++)
            Cw[j] = kmux_cpu_bf16_bits_to_f32(Ch[i - 1][j]);
        verified[i] = c[0].ok && c[i].ok && rel_diff(Cw, C, nn) <= tol;
    }
    interleave(c, nc, 1, reps, 1);
    for (int i = 1; i < nc; i++) {
        char what[64], a[32], b[32], v[32];
        snprintf(what, sizeof what, "GEMM bf16 vs f32 %lld^3%s", (long long)n,
                 i == 1 ? " (gemm_ex)" : " (alt impl)");
        if (!c[0].ok || !c[i].ok || !verified[i]) {
            line(what, id, "", "", verified[i] ? "failed" : "WRONG RESULT", "", 0);
            continue;
        }
        double t32 = median(c[0].secs, reps), t16 = median(c[i].secs, reps);
        snprintf(a, sizeof a, "bf16 %.0f ms", t16 * 1e3);
        snprintf(b, sizeof b, "f32 %.0f ms", t32 * 1e3);
        snprintf(v, sizeof v, "%.1f%%", 100.0 * t32 / t16);
        line(what, id, a, b, v, i == 1 ? ">= 80%" : "(info)", i == 1 ? t32 / t16 >= 0.8 : -2);
    }
    if (pa.plan) {
        printf("%-34s %-13s (alt impl = %s, reached with kmux_plan_next_impl; info only)\n", "", "",
               alt_impl);
        kmux_plan_destroy(pa.plan);
    }
    free(A);
    free(B);
    free(C);
    free(Ah);
    free(Bh);
    free(Ch[0]);
    free(Ch[1]);
    free(Cw);
}

/* ---- convolution -------------------------------------------------------------------------------
 */

typedef struct conv_args {
    kmux_plan *plan;
    kmux_stream *stream;
    float *x, *w, *y;
#ifdef KMUX_BENCH_HAVE_DNNL
    dnnl_stream_t dstream;
    dnnl_primitive_t prim, reorder[3];
    int has_reorder[3];
    dnnl_exec_arg_t conv_args[3], reorder_args[3][2];
#endif
} conv_args;

static int run_kmux_conv(void *p) {
    conv_args *c = p;
    float one = 1.0f, zero = 0.0f;
    kmux_conv2d_args a = KMUX_CONV2D_ARGS_INIT;
    a.alpha = &one;
    a.beta = &zero;
    a.x = c->x;
    a.w = c->w;
    a.y = c->y;
    kmux_status s = kmux_conv2d_execute(c->plan, c->stream, &a);
    if (s != KMUX_OK) fprintf(stderr, "kmux_conv2d_execute: %s\n", kmux_last_error());
    return s != KMUX_OK;
}

#ifdef KMUX_BENCH_HAVE_DNNL
/* The oneDNN way for NCHW data: let the convolution choose its layouts (format any), reorder
 * x and w in, run, reorder y out. */
static int run_dnnl_conv(void *p) {
    conv_args *c = p;
    for (int i = 0; i < 2; i++)
        if (c->has_reorder[i] &&
            dnnl_primitive_execute(c->reorder[i], c->dstream, 2, c->reorder_args[i]))
            return 1;
    if (dnnl_primitive_execute(c->prim, c->dstream, 3, c->conv_args)) return 1;
    if (c->has_reorder[2] &&
        dnnl_primitive_execute(c->reorder[2], c->dstream, 2, c->reorder_args[2]))
        return 1;
    return 0;
}

static int dnnl_conv_setup(conv_args *c, int64_t mb) {
    dnnl_dims_t dims[3] = {{mb, 64, 56, 56}, {64, 64, 3, 3}, {mb, 64, 56, 56}}; /* x, w, y */
    dnnl_dims_t strides = {1, 1}, dil = {0, 0}, pad = {1, 1};
    dnnl_memory_desc_t user[3], any[3];
    static const dnnl_format_tag_t tags[3] = {dnnl_nchw, dnnl_oihw, dnnl_nchw};
    for (int i = 0; i < 3; i++)
        if (dnnl_memory_desc_init_by_tag(&user[i], 4, dims[i], dnnl_f32, tags[i]) ||
            dnnl_memory_desc_init_by_tag(&any[i], 4, dims[i], dnnl_f32, dnnl_format_tag_any))
            return 1;
    dnnl_convolution_desc_t op;
    dnnl_primitive_desc_t pd;
    if (dnnl_dilated_convolution_forward_desc_init(&op, dnnl_forward_inference,
                                                   dnnl_convolution_direct, &any[0], &any[1], NULL,
                                                   &any[2], strides, dil, pad, pad) ||
        dnnl_primitive_desc_create(&pd, &op, NULL, g_engine, NULL) ||
        dnnl_primitive_create(&c->prim, pd) ||
        dnnl_stream_create(&c->dstream, g_engine, dnnl_stream_default_flags))
        return 1;
    static const dnnl_query_t q[3] = {dnnl_query_src_md, dnnl_query_weights_md, dnnl_query_dst_md};
    static const int arg[3] = {DNNL_ARG_SRC, DNNL_ARG_WEIGHTS, DNNL_ARG_DST};
    float *ptr[3] = {c->x, c->w, c->y};
    for (int i = 0; i < 3; i++) {
        const dnnl_memory_desc_t *pm = dnnl_primitive_desc_query_md(pd, q[i], 0);
        dnnl_memory_t um, im;
        if (dnnl_memory_create(&um, &user[i], g_engine, ptr[i])) return 1;
        c->has_reorder[i] = !dnnl_memory_desc_equal(pm, &user[i]);
        if (!c->has_reorder[i]) {
            c->conv_args[i] = (dnnl_exec_arg_t){arg[i], um};
            continue;
        }
        if (dnnl_memory_create(&im, pm, g_engine, DNNL_MEMORY_ALLOCATE)) return 1;
        c->conv_args[i] = (dnnl_exec_arg_t){arg[i], im};
        dnnl_primitive_desc_t rpd;
        int out = i == 2;
        if (dnnl_reorder_primitive_desc_create(&rpd, out ? pm : &user[i], g_engine,
                                               out ? &user[i] : pm, g_engine, NULL) ||
            dnnl_primitive_create(&c->reorder[i], rpd))
            return 1;
        dnnl_primitive_desc_destroy(rpd);
        c->reorder_args[i][0] = (dnnl_exec_arg_t){DNNL_ARG_FROM, out ? im : um};
        c->reorder_args[i][1] = (dnnl_exec_arg_t){DNNL_ARG_TO, out ? um : im};
    }
    dnnl_primitive_desc_destroy(pd);
    return 0;
}
#endif

static void bench_conv(devices *dv, int64_t mb, int reps) {
    char what[64];
    snprintf(what, sizeof what, "conv mb%lldic64ih56oc64oh56kh3ph1", (long long)mb);
    if (!dv->dnn) {
        line(what, "cpu:onednn", "", "", "no device", "", -1);
        return;
    }
    int64_t nx = mb * 64 * 56 * 56, nw = 64 * 64 * 9;
    float *x = rand_f32(nx, 6), *w = rand_f32(nw, 7), *y[2] = {rand_f32(nx, 8), rand_f32(nx, 9)};
    conv_args c[2];
    memset(c, 0, sizeof c);
    kmux_conv2d_desc d = KMUX_CONV2D_DESC_INIT;
    d.n = mb;
    d.c = d.k = 64;
    d.h = d.w = 56;
    d.r = d.s = 3;
    d.pad_top = d.pad_bottom = d.pad_left = d.pad_right = 1;
    contestant ct[2] = {{"kmux cpu:onednn", run_kmux_conv, &c[0], 0, {0}},
                        {"oneDNN conv", NULL, &c[1], 0, {0}}};
    for (int i = 0; i < 2; i++) {
        c[i].x = x;
        c[i].w = w;
        c[i].y = y[i];
    }
    c[0].stream = dv->dnn_s;
    ct[0].ok = kmux_conv2d_plan_create(dv->dnn, &d, NULL, &c[0].plan) == KMUX_OK;
#ifdef KMUX_BENCH_HAVE_DNNL
    ct[1].run = run_dnnl_conv;
    ct[1].ok = g_engine && dnnl_conv_setup(&c[1], mb) == 0;
#endif
    int verified = 0;
    if (ct[0].ok && ct[1].ok) {
        ct[0].ok = run_kmux_conv(&c[0]) == 0;
        ct[1].ok = ct[1].run(&c[1]) == 0;
        verified = ct[0].ok && ct[1].ok && rel_diff(y[0], y[1], nx) <= 8.0 * 576 * 0x1p-24;
    }
    interleave(ct, 2, 1, reps, 1);
    ratio_line(what, "cpu:onednn", &ct[0], &ct[1], reps, 0.98, verified);
    if (c[0].plan) kmux_plan_destroy(c[0].plan);
    free(x);
    free(w);
    free(y[0]);
    free(y[1]);
}

int main(int argc, char **argv) {
    int64_t conv_mb = argc > 1 ? atoll(argv[1]) : 32;
    if (conv_mb < 1) conv_mb = 32;
    double t_start = now_s();
    kmux_context *ctx = NULL;
    if (kmux_context_create(NULL, &ctx) != KMUX_OK) {
        fprintf(stderr, "kmux_context_create: %s\n", kmux_last_error());
        return 1;
    }
    devices dv = {0};
    if (kmux_device_find(ctx, "cpu:openblas", &dv.ob) != KMUX_OK) dv.ob = NULL;
    if (kmux_device_find(ctx, "cpu:onednn", &dv.dnn) != KMUX_OK) dv.dnn = NULL;
    if (dv.ob) kmux_stream_create(dv.ob, &dv.ob_s);
    if (dv.dnn) kmux_stream_create(dv.dnn, &dv.dnn_s);
#ifdef KMUX_BENCH_HAVE_DNNL
    if (dnnl_engine_create(&g_engine, dnnl_cpu, 0) != dnnl_success) g_engine = NULL;
#endif
    kmux_device_props props;
    memset(&props, 0, sizeof props);
    if (dv.dnn)
        kmux_device_props_get(dv.dnn, &props);
    else if (dv.ob)
        kmux_device_props_get(dv.ob, &props);
    printf("kmux overhead benchmark: kmux %s, %s, %d threads, %s\n", kmux_version(), props.name,
           props.compute_units, props.library_version);
    printf("medians of interleaved repetitions, monotonic clock, after warm-up; results of kmux "
           "and the direct call compared first\n\n");
    printf("%-34s %-13s %-13s %-13s %-12s %-11s %s\n", "case", "device", "kmux", "direct",
           "kmux/direct", "target", "result");

    bench_gemm(&dv, 2048, 11, 1, 0);
    bench_gemm(&dv, 8, 31, 2000, 1);
    bench_conv(&dv, conv_mb, 15);
    if (dv.dnn) bench_bf16(dv.dnn, dv.dnn_s, "cpu:onednn", 2048, 7);
    if (dv.ob) bench_bf16(dv.ob, dv.ob_s, "cpu:openblas", 2048, 7);

    printf("\n%d lines, %d MISS, %.1f s\n", g_lines, g_miss, now_s() - t_start);
    if (dv.ob_s) kmux_stream_destroy(dv.ob_s);
    if (dv.dnn_s) kmux_stream_destroy(dv.dnn_s);
    kmux_context_destroy(ctx);
    return 0;
}
