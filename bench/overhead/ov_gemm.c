/* ov_gemm.c - bench_overhead's GEMM measurements: f32 large and small, bf16 vs f32. */
#define _POSIX_C_SOURCE 200809L
#include "ov_common.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "kmux_cpu_kernels.h"

#ifdef KMUX_BENCH_HAVE_OPENBLAS
#include <cblas.h>
#endif

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

/* ---- the four measurements ---------------------------------------------------------------------
 */

/* GEMM f32 n^3: kmux vs direct on both devices; per-call times (inner calls per repetition). */
void bench_gemm(devices *dv, int64_t n, int reps, int inner, int small) {
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
void bench_bf16(kmux_device *dev, kmux_stream *s, const char *id, int64_t n, int reps) {
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
