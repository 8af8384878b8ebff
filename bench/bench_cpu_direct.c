/*
 * bench_cpu_direct.c - kmux on the CPU against the libraries it wraps, in ONE run (issue 14):
 * per problem, direct OpenBLAS, direct oneDNN, PyTorch (when python3 can import torch), kmux on
 * cpu:openblas, on cpu:onednn and on the routing device cpu:auto (when present), with the ratios
 * kmux/direct and auto/best. Contestants run interleaved (A B C ..., A B C ...) after one warm-up
 * each; a sample is a pause (settle), then for calls under 10 ms one untimed call and a warm
 * loop of >= 50 ms of calls, 1000 at most (sample_calls); the figure is the median rate, and a
 * ratio is the median over the rounds of the ratio within each round (ratio_cell), with a ~95%
 * interval for k:onednn / oneDNN and k:auto / best (kb_median.h); a last line counts the
 * problems where k:auto reached 0.97 of the best. The order of the contestants rotates from round
 * to round.
 * Outputs of every contestant are compared with each other once before timing; a contestant that
 * disagrees is printed as "BAD".
 *
 * Rows: the issue's table (bf16 and i8 GEMM 1024^3, the i8 GEMM again with values over the whole
 * s8 range, where kmux's exact cpu:onednn path pays for its compensation, f32 GEMM 2048^3, the
 * 3x3 convolution mb32 ic64 56^2 in both layouts) and a 20-problem mix of kmux-bench's default
 * workload, DeepBench GEMM training rows and ResNet-50 layers (bench/workloads/). For a convolution
 * (forward):
 * - "OpenBLAS" is the convolution an OpenBLAS user writes: Caffe's im2col, then one sgemm per
 *   image (user_im2col);
 * - "sgemm=" is OpenBLAS's own sgemm on the equivalent GEMM of the whole batch (NCHW: M = oc,
 *   N = mb*oh*ow, K = ic*kh*kw; NHWC: the transposed product), as bench_ob_conv: the rate the
 *   im2col + sgemm convolution of cpu:openblas is held to (>= 0.80), and no contestant for "best"
 *   (it computes no convolution);
 * - "oneDNN" is oneDNN's primitive on the caller's plain layouts, "oneDNN:any" the one oneDNN's
 *   documentation advises (format any, with the reorders to and from the caller's layouts timed
 *   inside each call, as kmux must do them); the better of the two is "direct oneDNN".
 * PyTorch runs in its own process (bench_cpu_direct_torch.py), interleaved with itself only.
 *
 * The machine's state is printed: CPU model, cores, load average before and after, steal time
 * and the CPU time other processes took during the run; the table is marked UNTRUSTWORTHY when
 * the machine was not quiet. Threads: every library uses all cores (KMUX_NUM_THREADS,
 * OPENBLAS_NUM_THREADS, OMP_NUM_THREADS as the caller sets them).
 *
 * Usage: bench_cpu_direct [--quick] [--rows=issue|mix|all] [--only=TEXT]
 *                         [--budget=SECONDS_PER_PROBLEM]
 *                         [--settle-ms=MS]   (pause before each sample; default: OpenBLAS's
 *                                             worker spin period + 20 ms where a contestant that
 *                                             may run oneDNN follows one that ran OpenBLAS,
 *                                             20 ms before the others; see settle)
 *   --quick: one tiny GEMM and one tiny convolution, 3 repetitions (the ctest smoke test).
 *   --only: the rows whose name contains TEXT (e.g. "db138", "nhwc").
 */
#define _GNU_SOURCE
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "dispatch/common/kmux_openblas_spin.h"
#include "kmux_bench/kb_median.h"
#include "kmux.h"

#ifdef KMUX_BENCH_HAVE_OPENBLAS
#include <cblas.h>
#endif
#ifdef KMUX_BENCH_HAVE_DNNL
#include <oneapi/dnnl/dnnl.h>
#endif

#define MAX_REPS 41
_Static_assert(MAX_REPS <= KB_MEDIAN_MAX, "kb_median takes at most KB_MEDIAN_MAX samples");
#define NCONT 8

/* C_SGEMM and C_DNN_ANY exist for convolutions only (see the top of the file) */
enum { C_OPENBLAS, C_SGEMM, C_ONEDNN, C_DNN_ANY, C_TORCH, C_KOB, C_KDNN, C_KAUTO };
static const char *const cont_names[NCONT] = {"OpenBLAS", "sgemm=",     "oneDNN",   "oneDNN:any",
                                              "PyTorch",  "k:openblas", "k:onednn", "k:auto"};

typedef struct problem {
    const char *name, *origin;
    int conv;
    kmux_dtype ab, c; /* GEMM types; convolutions are f32 */
    int full_range;   /* i8: values over all of [-128, 127] (else [-4, 4]) */
    int64_t m, n, k;
    int ta, tb;
    kmux_layout layout;
    int64_t mb, ic, ih, iw, oc, kh, kw, st, pad;
} problem;

#define GEMM(nm, org, AB, C, M, N, K, TA, TB)                                                      \
    { .name = nm, .origin = org, .ab = AB, .c = C, .m = M, .n = N, .k = K, .ta = TA, .tb = TB }
#define CONV(nm, org, L, MB, IC, IH, OC, KH, ST, PAD)                                              \
    {                                                                                              \
        .name = nm, .origin = org, .conv = 1, .layout = L, .mb = MB, .ic = IC, .ih = IH, .iw = IH, \
        .oc = OC, .kh = KH, .kw = KH, .st = ST, .pad = PAD                                         \
    }

static const problem issue_rows[] = {
    GEMM("bf16 1024^3", "issue14", KMUX_BF16, KMUX_F32, 1024, 1024, 1024, 0, 0),
    GEMM("i8 1024^3 s8s8s32", "issue14", KMUX_I8, KMUX_I32, 1024, 1024, 1024, 0, 0),
    /* kmux's exact i8 GEMM with oneDNN's s8 kernel out of bounds: the u8 copy and compensation */
    {.name = "i8 1024^3 full range",
     .origin = "issue14",
     .ab = KMUX_I8,
     .c = KMUX_I32,
     .full_range = 1,
     .m = 1024,
     .n = 1024,
     .k = 1024},
    GEMM("f32 2048^3", "issue14", KMUX_F32, KMUX_F32, 2048, 2048, 2048, 0, 0),
    CONV("conv3x3 mb32 nchw", "issue14", KMUX_NCHW, 32, 64, 56, 64, 3, 1, 1),
    CONV("conv3x3 mb32 nhwc", "issue14", KMUX_NHWC, 32, 64, 56, 64, 3, 1, 1),
};

static const problem mix_rows[] = {
    GEMM("db2 1760x64x1760", "default/deepbench", KMUX_F32, KMUX_F32, 1760, 64, 1760, 0, 0),
    GEMM("db23 1760x128x1760 T", "default/deepbench", KMUX_F32, KMUX_F32, 1760, 128, 1760, 1, 0),
    GEMM("db63 7680x128x2560", "default/deepbench", KMUX_F32, KMUX_F32, 7680, 128, 2560, 0, 0),
    GEMM("db86 1024x700x512", "default/deepbench", KMUX_F32, KMUX_F32, 1024, 700, 512, 0, 0),
    GEMM("db138 512x16x512 NT", "default/deepbench", KMUX_F32, KMUX_F32, 512, 16, 512, 0, 1),
    GEMM("db15 4096x16x4096", "deepbench", KMUX_F32, KMUX_F32, 4096, 16, 4096, 0, 0),
    GEMM("db28 2048x128x2048 T", "deepbench", KMUX_F32, KMUX_F32, 2048, 128, 2048, 1, 0),
    GEMM("db38 4096x128x4096 T", "deepbench", KMUX_F32, KMUX_F32, 4096, 128, 4096, 1, 0),
    GEMM("db65 7680x32x2560 T", "deepbench", KMUX_F32, KMUX_F32, 7680, 32, 2560, 1, 0),
    GEMM("db116 8448x16x2816 T", "deepbench", KMUX_F32, KMUX_F32, 8448, 16, 2816, 1, 0),
    CONV("r50 conv1 mb4", "default/resnet50", KMUX_NCHW, 4, 3, 224, 64, 7, 2, 3),
    CONV("r50 res2a_2b mb4", "default/resnet50", KMUX_NCHW, 4, 64, 56, 64, 3, 1, 1),
    CONV("r50 res3a_2b mb4", "default/resnet50", KMUX_NCHW, 4, 128, 28, 128, 3, 1, 1),
    CONV("r50 res4b_2a mb4", "default/resnet50", KMUX_NCHW, 4, 1024, 14, 256, 1, 1, 0),
    CONV("r50 res5a_1 mb4", "default/resnet50", KMUX_NCHW, 4, 1024, 14, 2048, 1, 2, 0),
    CONV("r50 res2a_1 mb4", "resnet50", KMUX_NCHW, 4, 64, 56, 256, 1, 1, 0),
    CONV("r50 res3a_2a mb4", "resnet50", KMUX_NCHW, 4, 256, 56, 128, 1, 2, 0),
    CONV("r50 res4a_2b mb4", "resnet50", KMUX_NCHW, 4, 256, 14, 256, 3, 1, 1),
    CONV("r50 res5a_2b mb4 nhwc", "resnet50", KMUX_NHWC, 4, 512, 7, 512, 3, 1, 1),
    CONV("r50 res2b_2a mb4 nhwc", "resnet50", KMUX_NHWC, 4, 256, 56, 64, 1, 1, 0),
};

static const problem quick_rows[] = {
    GEMM("f32 64^3", "smoke", KMUX_F32, KMUX_F32, 64, 64, 64, 0, 0),
    CONV("conv3x3 mb1 ic8 8^2", "smoke", KMUX_NCHW, 1, 8, 8, 8, 3, 1, 1),
};

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int64_t out_dim(const problem *p) {
    return (p->ih + 2 * p->pad - p->kh) / p->st + 1;
}

static double problem_ops(const problem *p) {
    if (!p->conv) return 2.0 * (double)p->m * (double)p->n * (double)p->k;
    double o = (double)out_dim(p);
    return 2.0 * (double)p->mb * (double)p->oc * o * o * (double)p->ic * (double)(p->kh * p->kw);
}

/* ---- machine state ----------------------------------------------------------------------- */

typedef struct machine {
    double load1, busy_s, steal_s, own_s, wall;
} machine;

static void machine_read(machine *m) {
    FILE *f = fopen("/proc/loadavg", "r");
    m->load1 = -1;
    if (f) {
        if (fscanf(f, "%lf", &m->load1) != 1) m->load1 = -1;
        fclose(f);
    }
    m->busy_s = m->steal_s = 0;
    f = fopen("/proc/stat", "r");
    if (f) {
        unsigned long long v[8] = {0};
        if (fscanf(f, "cpu %llu %llu %llu %llu %llu %llu %llu %llu", &v[0], &v[1], &v[2], &v[3],
                   &v[4], &v[5], &v[6], &v[7]) == 8) {
            double hz = (double)sysconf(_SC_CLK_TCK);
            m->busy_s = (double)(v[0] + v[1] + v[2] + v[5] + v[6]) / hz;
            m->steal_s = (double)v[7] / hz;
        }
        fclose(f);
    }
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    m->own_s = (double)ru.ru_utime.tv_sec + ru.ru_utime.tv_usec * 1e-6 +
               (double)ru.ru_stime.tv_sec + ru.ru_stime.tv_usec * 1e-6;
    struct rusage rc;
    getrusage(RUSAGE_CHILDREN, &rc);
    m->own_s += (double)rc.ru_utime.tv_sec + rc.ru_utime.tv_usec * 1e-6 +
                (double)rc.ru_stime.tv_sec + rc.ru_stime.tv_usec * 1e-6;
    m->wall = now_s();
}

static void cpu_model(char *buf, size_t size) {
    snprintf(buf, size, "unknown");
    FILE *f = fopen("/proc/cpuinfo", "r");
    if (!f) return;
    char line[512];
    while (fgets(line, sizeof line, f)) {
        const char *v = strchr(line, ':');
        if (strncmp(line, "model name", 10) || !v) continue;
        snprintf(buf, size, "%s", v + 2);
        buf[strcspn(buf, "\n")] = '\0';
        break;
    }
    fclose(f);
}

/* ---- data ---------------------------------------------------------------------------------- */

static uint64_t g_rng = 0x9e3779b97f4a7c15ull;
static float rnd(void) {
    g_rng ^= g_rng << 13, g_rng ^= g_rng >> 7, g_rng ^= g_rng << 17;
    return (float)((g_rng >> 11) * 0x1p-53) * 2.0f - 1.0f;
}

static uint16_t to_bf16(float f) {
    uint32_t u;
    memcpy(&u, &f, 4);
    return (uint16_t)((u + 0x7fff + ((u >> 16) & 1)) >> 16);
}

static void *fill(kmux_dtype t, size_t count, int full_range) {
    size_t es = t == KMUX_BF16 ? 2 : t == KMUX_I8 ? 1 : 4;
    void *p = aligned_alloc(64, (count * es + 63) / 64 * 64);
    if (!p) return NULL;
    for (size_t i = 0; i < count; i++) {
        float v = rnd();
        if (t == KMUX_BF16)
            ((uint16_t *)p)[i] = to_bf16(v);
        else if (t == KMUX_I8 && full_range)
            ((int8_t *)p)[i] = (int8_t)lrintf(v * 127.5f - 0.5f);
        else if (t == KMUX_I8)
            ((int8_t *)p)[i] = (int8_t)lrintf(v * 4);
        else
            ((float *)p)[i] = v;
    }
    return p;
}

/* ---- contestants ------------------------------------------------------------------------- */

typedef struct contestant {
    int ok;          /* set up and verified */
    const char *why; /* when not ok */
    void *out;       /* its own output buffer */
    kmux_plan *plan;
    kmux_stream *stream;
    char impl[96];
    int calls;          /* calls per timed sample (sample_calls) */
    int warm;           /* an untimed call before each sample */
    double t[MAX_REPS]; /* seconds per call, one per sample */
#ifdef KMUX_BENCH_HAVE_DNNL
    dnnl_primitive_t prim;
    dnnl_stream_t ds;
    dnnl_exec_arg_t args[4]; /* src, weights, dst, scratchpad */
    dnnl_memory_t mem[3], scratch;
    /* C_DNN_ANY: the primitive's own layouts and the reorders to and from the caller's */
    dnnl_memory_t own[3];
    dnnl_primitive_t reorder[3];
    dnnl_exec_arg_t reorder_args[3][2];
#endif
} contestant;

typedef struct bench {
    const problem *p;
    void *a, *b; /* GEMM A, B or conv x, w */
    float *col;  /* conv: the direct OpenBLAS convolution's im2col buffer (one image) */
    float *eqb;  /* conv: B of the equivalent GEMM (C_SGEMM) */
    size_t out_count;
    contestant c[NCONT];
} bench;

static kmux_context *g_ctx;
static int g_bad; /* contestants whose output disagreed: the exit status is 1 */
static kmux_device *g_dev[NCONT];
#ifdef KMUX_BENCH_HAVE_DNNL
static dnnl_engine_t g_engine;
static dnnl_primitive_attr_t g_attr; /* user-managed scratchpad */
#endif

static void kmux_setup(bench *b, int ci) {
    contestant *c = &b->c[ci];
    const problem *p = b->p;
    if (!g_dev[ci]) {
        c->why = "no device";
        return;
    }
    kmux_status s;
    if (!p->conv) {
        kmux_matmul_desc d = KMUX_MATMUL_DESC_INIT;
        d.m = p->m, d.n = p->n, d.k = p->k;
        d.transa = p->ta ? KMUX_TRANS : KMUX_NO_TRANS;
        d.transb = p->tb ? KMUX_TRANS : KMUX_NO_TRANS;
        d.lda = p->ta ? p->m : p->k;
        d.ldb = p->tb ? p->k : p->n;
        d.ldc = p->n;
        d.a_type = d.b_type = p->ab;
        d.c_type = p->c;
        d.compute_type = p->ab == KMUX_I8 ? KMUX_COMPUTE_I32 : KMUX_COMPUTE_F32;
        s = kmux_matmul_plan_create(g_dev[ci], &d, NULL, &c->plan);
    } else {
        kmux_conv2d_desc d = KMUX_CONV2D_DESC_INIT;
        d.layout = p->layout;
        d.n = p->mb, d.c = p->ic, d.h = p->ih, d.w = p->iw, d.k = p->oc, d.r = p->kh, d.s = p->kw;
        d.stride_h = d.stride_w = p->st;
        d.pad_top = d.pad_bottom = d.pad_left = d.pad_right = p->pad;
        s = kmux_conv2d_plan_create(g_dev[ci], &d, NULL, &c->plan);
    }
    if (s == KMUX_OK) s = kmux_stream_create(g_dev[ci], &c->stream);
    if (s != KMUX_OK) {
        c->why = "unsupported";
        return;
    }
    kmux_plan_info info;
    if (kmux_plan_info_get(c->plan, &info) == KMUX_OK)
        snprintf(c->impl, sizeof c->impl, "%s", info.impl);
    c->ok = 1;
}

static int kmux_run(bench *b, contestant *c) {
    const problem *p = b->p;
    float one = 1.0f, zero = 0.0f;
    int32_t ione = 1, izero = 0;
    kmux_status s;
    if (!p->conv) {
        kmux_matmul_args a = KMUX_MATMUL_ARGS_INIT;
        a.alpha = p->ab == KMUX_I8 ? (const void *)&ione : &one;
        a.beta = p->ab == KMUX_I8 ? (const void *)&izero : &zero;
        a.A = b->a, a.B = b->b, a.C = c->out;
        s = kmux_matmul_execute(c->plan, c->stream, &a);
    } else {
        kmux_conv2d_args a = KMUX_CONV2D_ARGS_INIT;
        a.alpha = &one, a.beta = &zero;
        a.x = b->a, a.w = b->b, a.y = c->out;
        s = kmux_conv2d_execute(c->plan, c->stream, &a);
    }
    if (s == KMUX_OK) s = kmux_stream_synchronize(c->stream);
    return s == KMUX_OK;
}

#ifdef KMUX_BENCH_HAVE_DNNL
static dnnl_data_type_t dnnl_type(kmux_dtype t) {
    return t == KMUX_BF16  ? dnnl_bf16
           : t == KMUX_I8  ? dnnl_s8
           : t == KMUX_I32 ? dnnl_s32
                           : dnnl_f32;
}

/* A oneDNN user's primitive (ci = C_ONEDNN: plain, on the caller's layouts, no reorders;
 * ci = C_DNN_ANY, convolutions only: format any, as oneDNN's documentation advises, with the
 * reorders of x, w and y to and from the caller's layouts inside every call, as kmux must do). */
static void dnnl_setup(bench *b, int ci) {
    contestant *c = &b->c[ci];
    const problem *p = b->p;
    const int any = ci == C_DNN_ANY;
    dnnl_memory_desc_t md[3], op_md[3];
    dnnl_primitive_desc_t pd = NULL;
    c->why = any && !p->conv ? "n/a" : "unsupported";
    if (!g_engine || (any && !p->conv)) return;
    if (!p->conv) {
        dnnl_dims_t da = {p->m, p->k}, db = {p->k, p->n}, dc = {p->m, p->n};
        if (dnnl_memory_desc_init_by_tag(&md[0], 2, da, dnnl_type(p->ab),
                                         p->ta ? dnnl_ba : dnnl_ab) ||
            dnnl_memory_desc_init_by_tag(&md[1], 2, db, dnnl_type(p->ab),
                                         p->tb ? dnnl_ba : dnnl_ab) ||
            dnnl_memory_desc_init_by_tag(&md[2], 2, dc, dnnl_type(p->c), dnnl_ab))
            return;
        dnnl_matmul_desc_t op;
        if (dnnl_matmul_desc_init(&op, &md[0], &md[1], NULL, &md[2]) ||
            dnnl_primitive_desc_create(&pd, &op, g_attr, g_engine, NULL))
            return;
    } else {
        int64_t o = out_dim(p);
        dnnl_dims_t dx = {p->mb, p->ic, p->ih, p->iw}, dw = {p->oc, p->ic, p->kh, p->kw},
                    dy = {p->mb, p->oc, o, o}, st = {p->st, p->st}, dil = {0, 0},
                    pad = {p->pad, p->pad};
        int nhwc = p->layout == KMUX_NHWC;
        if (dnnl_memory_desc_init_by_tag(&md[0], 4, dx, dnnl_f32, nhwc ? dnnl_nhwc : dnnl_nchw) ||
            dnnl_memory_desc_init_by_tag(&md[1], 4, dw, dnnl_f32, nhwc ? dnnl_ohwi : dnnl_oihw) ||
            dnnl_memory_desc_init_by_tag(&md[2], 4, dy, dnnl_f32, nhwc ? dnnl_nhwc : dnnl_nchw))
            return;
        for (int i = 0; i < 3; i++) {
            op_md[i] = md[i];
            if (any)
                dnnl_memory_desc_init_by_tag(&op_md[i], 4, md[i].dims, dnnl_f32,
                                             dnnl_format_tag_any);
        }
        dnnl_convolution_desc_t op;
        if (dnnl_dilated_convolution_forward_desc_init(
                &op, dnnl_forward_inference, dnnl_convolution_direct, &op_md[0], &op_md[1], NULL,
                &op_md[2], st, dil, pad, pad) ||
            dnnl_primitive_desc_create(&pd, &op, g_attr, g_engine, NULL))
            return;
    }
    const char *impl = NULL;
    dnnl_primitive_desc_query(pd, dnnl_query_impl_info_str, 0, &impl);
    snprintf(c->impl, sizeof c->impl, "%s", impl ? impl : "?");
    if (strstr(c->impl, "ref")) {
        /* oneDNN's reference kernel (plain NHWC on AVX2 takes ~100 s a call): not a call anyone
         * makes for speed; oneDNN:any is the direct oneDNN there */
        c->why = "ref(skip)";
        dnnl_primitive_desc_destroy(pd);
        return;
    }
    static const dnnl_query_t q[3] = {dnnl_query_src_md, dnnl_query_weights_md, dnnl_query_dst_md};
    const dnnl_memory_desc_t *chosen[3] = {&md[0], &md[1], &md[2]};
    if (any)
        for (int i = 0; i < 3; i++)
            chosen[i] = dnnl_primitive_desc_query_md(pd, q[i], 0);
    if (dnnl_primitive_create(&c->prim, pd) ||
        dnnl_stream_create(&c->ds, g_engine, dnnl_stream_default_flags)) {
        dnnl_primitive_desc_destroy(pd);
        return;
    }
    void *ptr[3] = {b->a, b->b, c->out};
    static const int arg[3] = {DNNL_ARG_SRC, DNNL_ARG_WEIGHTS, DNNL_ARG_DST};
    for (int i = 0; i < 3; i++) {
        if (dnnl_memory_create(&c->mem[i], &md[i], g_engine, ptr[i])) break;
        dnnl_memory_t use = c->mem[i];
        if (!dnnl_memory_desc_equal(chosen[i], &md[i])) {
            dnnl_primitive_desc_t rpd = NULL;
            const dnnl_memory_desc_t *from = i == 2 ? chosen[i] : &md[i],
                                     *to = i == 2 ? &md[i] : chosen[i];
            if (dnnl_memory_create(&c->own[i], chosen[i], g_engine, DNNL_MEMORY_ALLOCATE) ||
                dnnl_reorder_primitive_desc_create(&rpd, from, g_engine, to, g_engine, NULL) ||
                dnnl_primitive_create(&c->reorder[i], rpd)) {
                if (rpd) dnnl_primitive_desc_destroy(rpd);
                dnnl_primitive_desc_destroy(pd);
                return;
            }
            dnnl_primitive_desc_destroy(rpd);
            c->reorder_args[i][0] = (dnnl_exec_arg_t){DNNL_ARG_FROM, i == 2 ? c->own[i] : use};
            c->reorder_args[i][1] = (dnnl_exec_arg_t){DNNL_ARG_TO, i == 2 ? use : c->own[i]};
            use = c->own[i];
        }
        c->args[i] = (dnnl_exec_arg_t){arg[i], use};
        if (i == 2) c->ok = 1;
    }
    /* the scratchpad, allocated once as kmux does (user mode), so that both pay the same per
     * call (the default, library-managed mode may allocate it per execution) */
    const dnnl_memory_desc_t *smd = dnnl_primitive_desc_query_md(pd, dnnl_query_scratchpad_md, 0);
    if (c->ok && dnnl_memory_create(&c->scratch, smd, g_engine, DNNL_MEMORY_ALLOCATE)) c->ok = 0;
    c->args[3] = (dnnl_exec_arg_t){DNNL_ARG_SCRATCHPAD, c->scratch};
    dnnl_primitive_desc_destroy(pd);
}

static int dnnl_run(contestant *c) {
    for (int i = 0; i < 2; i++) /* x and w into the primitive's layouts */
        if (c->reorder[i] &&
            dnnl_primitive_execute(c->reorder[i], c->ds, 2, c->reorder_args[i]) != dnnl_success)
            return 0;
    if (dnnl_primitive_execute(c->prim, c->ds, 4, c->args) != dnnl_success) return 0;
    if (c->reorder[2] &&
        dnnl_primitive_execute(c->reorder[2], c->ds, 2, c->reorder_args[2]) != dnnl_success)
        return 0;
    return dnnl_stream_wait(c->ds) == dnnl_success;
}
#endif

#ifdef KMUX_BENCH_HAVE_OPENBLAS
/* Image n of x lowered as an OpenBLAS user writes it (Caffe's im2col_cpu): NCHW, col is
 * (C*R*S) x (P*Q), row (c, r, s); NHWC, col is (P*Q) x (R*S*C), row (p, q), C contiguous. */
static void user_im2col(const problem *p, const float *x, int64_t n, float *col) {
    const int64_t o = out_dim(p), C = p->ic, H = p->ih, W = p->iw;
    if (p->layout == KMUX_NCHW) {
        const float *xn = x + n * C * H * W;
        for (int64_t c = 0; c < C; c++)
            for (int64_t r = 0; r < p->kh; r++)
                for (int64_t s = 0; s < p->kw; s++)
                    for (int64_t oh = 0; oh < o; oh++) {
                        const int64_t ih = oh * p->st - p->pad + r;
                        for (int64_t ow = 0; ow < o; ow++) {
                            const int64_t iw = ow * p->st - p->pad + s;
                            *col++ = ih >= 0 && ih < H && iw >= 0 && iw < W
                                         ? xn[(c * H + ih) * W + iw]
                                         : 0.0f;
                        }
                    }
        return;
    }
    const float *xn = x + n * H * W * C;
    for (int64_t oh = 0; oh < o; oh++)
        for (int64_t ow = 0; ow < o; ow++)
            for (int64_t r = 0; r < p->kh; r++)
                for (int64_t s = 0; s < p->kw; s++, col += C) {
                    const int64_t ih = oh * p->st - p->pad + r, iw = ow * p->st - p->pad + s;
                    if (ih >= 0 && ih < H && iw >= 0 && iw < W)
                        memcpy(col, xn + (ih * W + iw) * C, (size_t)C * sizeof *col);
                    else
                        memset(col, 0, (size_t)C * sizeof *col);
                }
}

/* The GEMM a convolution of this layout is (fwd): NCHW y_n (K x PQ) = W (K x CRS) col_n, one
 * image at a time; NHWC y (N*PQ x K) = col (N*PQ x RSC) W^T, the whole batch in one GEMM. */
static int openblas_run(bench *b, int ci, contestant *c) {
    const problem *p = b->p;
    if (!p->conv) {
        cblas_sgemm(CblasRowMajor, p->ta ? CblasTrans : CblasNoTrans,
                    p->tb ? CblasTrans : CblasNoTrans, (int)p->m, (int)p->n, (int)p->k, 1.0f, b->a,
                    p->ta ? (int)p->m : (int)p->k, b->b, p->tb ? (int)p->k : (int)p->n, 0.0f,
                    c->out, (int)p->n);
        return 1;
    }
    const int64_t o = out_dim(p), K = p->ic * p->kh * p->kw, PQ = o * o;
    float *y = c->out;
    if (ci == C_SGEMM) { /* the equivalent GEMM of the whole batch, one call (bench_ob_conv) */
        if (p->layout == KMUX_NCHW)
            cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (int)p->oc, (int)(p->mb * PQ),
                        (int)K, 1.0f, b->b, (int)K, b->eqb, (int)(p->mb * PQ), 0.0f, y,
                        (int)(p->mb * PQ));
        else
            cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, (int)(p->mb * PQ), (int)p->oc,
                        (int)K, 1.0f, b->eqb, (int)K, b->b, (int)K, 0.0f, y, (int)p->oc);
        return 1;
    }
    for (int64_t n = 0; n < p->mb; n++) { /* the direct convolution: im2col + sgemm per image */
        user_im2col(p, b->a, n, b->col);
        if (p->layout == KMUX_NCHW)
            cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (int)p->oc, (int)PQ, (int)K,
                        1.0f, b->b, (int)K, b->col, (int)PQ, 0.0f, y + n * p->oc * PQ, (int)PQ);
        else
            cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, (int)PQ, (int)p->oc, (int)K, 1.0f,
                        b->col, (int)K, b->b, (int)K, 0.0f, y + n * PQ * p->oc, (int)p->oc);
    }
    return 1;
}
#endif

static int run(bench *b, int ci) {
    contestant *c = &b->c[ci];
    switch (ci) {
#ifdef KMUX_BENCH_HAVE_OPENBLAS
    case C_OPENBLAS:
    case C_SGEMM:
        return openblas_run(b, ci, c);
#endif
#ifdef KMUX_BENCH_HAVE_DNNL
    case C_ONEDNN:
    case C_DNN_ANY:
        return dnnl_run(c);
#endif
    case C_KOB:
    case C_KDNN:
    case C_KAUTO:
        return kmux_run(b, c);
    default:
        return 0;
    }
}

/* Calls per timed sample: a call of SHORT_CALL_S or more is a sample by itself; a shorter one is
 * repeated to last SAMPLE_MIN_S (1000 calls at most). A single call of 0.1 ms right after the
 * pause also times waking the library's sleeping worker threads, and its timer resolution is
 * coarse against it; so, as benchdnn and kmux-bench time warm loops, each sample of a short call
 * is one untimed call after the pause, then `calls` timed calls. (The 7 ms that oneDNN's
 * 512x16x512 GEMM showed here, 0.12 ms in kmux-bench, came from OpenBLAS's spinning workers, see
 * settle, not from the sample length.) The first milliseconds after the pause still run slow at
 * times: with 10 ms samples that 512x16x512 GEMM (0.02 ms a call) gave k:auto / best 0.82, 1.05,
 * 0.98, 0.93 and k:openblas / OpenBLAS 0.79, 0.70, 0.80, 1.27 in four runs on the 2-core Zen 5;
 * with 50 ms (1000 calls: 20-30 ms) 0.93, 0.98, 1.02, 1.01 and 1.05, 1.02, 1.02, 0.99, and direct
 * oneDNN 320-354 GFLOP/s instead of 235-326. A tight loop without pauses put cpu:auto and
 * cpu:onednn at the same 21.3-21.5 us a call. */
#define SHORT_CALL_S 0.01
#define SAMPLE_MIN_S 0.05

static int sample_calls(double t_call) {
    if (t_call <= 0 || t_call >= SHORT_CALL_S) return 1;
    double n = SAMPLE_MIN_S / t_call;
    return n > 1000 ? 1000 : (int)n + 1;
}

/* A pause before each timed run, so that every contestant starts on an idle machine.
 * - After every oneDNN call libgomp's workers spin-wait for the next parallel region
 *   (GOMP_SPINCOUNT, ~5-8 ms of CPU measured on the 2-core VM), taking a core from whatever runs
 *   next (this made cpu:openblas look 9% slower than cblas_sgemm in bench_overhead).
 * - After every OpenBLAS call its workers spin (sched_yield) for 2^OPENBLAS_THREAD_TIMEOUT cycles
 *   of the time-stamp counter (default 2^28, ~0.1 s) before they sleep. A oneDNN call in that
 *   window ran 2-3x slower on 2 cores (1760x64x1760: 24 GFLOP/s after OpenBLAS, 74 alone), and a
 *   20 ms pause did not cover it. The pause before a contestant that may run oneDNN, right after
 *   one that ran OpenBLAS, is therefore that spin period plus 20 ms (kmux_openblas_settle_ms),
 *   20 ms before the others, unless --settle-ms sets one pause for all.
 * Processes that use both libraries (cpu:auto, or cpu:openblas next to cpu:onednn) meet the same
 * slowdown; README "Performance note" gives the remedy (OPENBLAS_THREAD_TIMEOUT). */
static double g_settle_ms = -1; /* -1: kmux_openblas_settle_ms() before contestants that may run
                                   oneDNN, 20 before the others (--settle-ms: that, before all) */
static double g_settle_short_ms = 20;

/* whether the last call before the next pause may have left OpenBLAS's workers spinning */
static int g_after_openblas = 1;

/* Whether contestant i may run OpenBLAS (cpu:auto: where it routed there) or oneDNN. */
static int runs_openblas(const bench *b, int i) {
    return i == C_OPENBLAS || i == C_SGEMM || i == C_KOB ||
           (i == C_KAUTO && strstr(b->c[i].impl, "openblas"));
}
static int runs_onednn(int i) {
    return i == C_ONEDNN || i == C_DNN_ANY || i == C_KDNN || i == C_KAUTO;
}

/* The pause before contestant i: the long one only where oneDNN may run right after OpenBLAS
 * (within its spin); otherwise the short one, which waits out libgomp's few-ms spin. Rounds run
 * the OpenBLAS contestants next to each other (round_order), so one pause a round is long: the
 * 0.12 s pauses before each of the four oneDNN contestants had made half a round's time. */
static double settle_ms(int i, int after_openblas) {
    return after_openblas && runs_onednn(i) ? g_settle_ms : g_settle_short_ms;
}

static void settle(const bench *b, int i) {
    const double ms = settle_ms(i, g_after_openblas);
    g_after_openblas = runs_openblas(b, i);
    if (ms <= 0) return;
    struct timespec ts = {(time_t)(ms / 1000), (long)(fmod(ms, 1000.0) * 1e6)};
    nanosleep(&ts, NULL);
}

/* The order of a round, the OpenBLAS contestants first (rotated from round to round) */
static const int round_order[NCONT] = {C_OPENBLAS, C_SGEMM, C_KOB,  C_ONEDNN,
                                       C_DNN_ANY,  C_TORCH, C_KDNN, C_KAUTO};

/* Compares c's output with ref's: 1 when they agree within a tolerance for the types. */
static int agrees(const bench *b, const contestant *c, const contestant *ref) {
    const problem *p = b->p;
    double k = p->conv ? (double)(p->ic * p->kh * p->kw) : (double)p->k;
    double tol = (p->ab == KMUX_BF16 ? 1e-2 : 1e-4) * sqrt(k) + 1e-5;
    for (size_t i = 0; i < b->out_count; i++) {
        double x, y;
        if (!p->conv && p->c == KMUX_I32) {
            x = ((const int32_t *)c->out)[i];
            y = ((const int32_t *)ref->out)[i];
            if (x != y) return 0;
            continue;
        }
        x = ((const float *)c->out)[i];
        y = ((const float *)ref->out)[i];
        if (!(fabs(x - y) <= tol * (1 + fabs(y)))) return 0;
    }
    return 1;
}

/* ---- PyTorch (separate process) ------------------------------------------------------------ */

static double g_torch_ms[64];

static int torch_measure(const problem *rows, int n) {
    if (system("python3 -c 'import torch' >/dev/null 2>&1") != 0) return 0;
    char in_path[] = "/tmp/kmux-bench-torch-XXXXXX";
    int fd = mkstemp(in_path);
    if (fd < 0) return 0;
    FILE *f = fdopen(fd, "w");
    for (int i = 0; i < n; i++) {
        const problem *p = &rows[i];
        if (!p->conv)
            fprintf(f, "gemm %s %lld %lld %lld %d %d\n",
                    p->ab == KMUX_BF16 ? "bf16"
                    : p->ab == KMUX_I8 ? "i8"
                                       : "f32",
                    (long long)p->m, (long long)p->n, (long long)p->k, p->ta, p->tb);
        else
            fprintf(f, "conv %s %lld %lld %lld %lld %lld %lld %lld\n",
                    p->layout == KMUX_NHWC ? "nhwc" : "nchw", (long long)p->mb, (long long)p->ic,
                    (long long)p->ih, (long long)p->oc, (long long)p->kh, (long long)p->st,
                    (long long)p->pad);
    }
    fclose(f);
    char cmd[1024];
    snprintf(cmd, sizeof cmd, "python3 %s < %s", KMUX_BENCH_TORCH_SCRIPT, in_path);
    FILE *pp = popen(cmd, "r");
    int got = 0;
    if (pp) {
        for (int i = 0; i < n && i < 64; i++)
            if (fscanf(pp, "%lf", &g_torch_ms[i]) == 1) got++;
        pclose(pp);
    }
    unlink(in_path);
    return got == n;
}

/* ---- one problem ---------------------------------------------------------------------------- */

static void fmt_rate(char *buf, size_t size, double rate) {
    if (rate > 0)
        snprintf(buf, size, rate < 10 ? "%.3g" : "%.1f", rate);
    else
        snprintf(buf, size, "-");
}

/* The ratio of contestant a's rate to b's, "-" where either did not run: the median over the
 * rounds of the ratio within each round (both compute the same number of operations, so it is
 * t_b / t_a), and its ~95% interval in [*lo, *hi] (0 when there is none). Pairing the samples of
 * one round cancels what slows a whole round (on the 2-core VM one round of db2 ran every
 * contestant at ~220 GFLOP/s, the others at ~400); what changes from one sample to the next does
 * not cancel (two back-to-back samples of the same kernel differed by up to 1.7x), hence the
 * interval. PyTorch, timed in its own process, has no rounds: its ratio is that of the medians. */
static double ratio_cell(char *cell, size_t size, const bench *b, const double *rate, int a, int bi,
                         int reps, double *lo, double *hi) {
    *lo = *hi = 0;
    if (!(rate[a] > 0 && rate[bi] > 0)) return 0;
    if (bi == C_TORCH) {
        snprintf(cell, size, "%.2f", rate[a] / rate[bi]);
        return rate[a] / rate[bi];
    }
    const double m = kb_paired_ratio(b->c[a].t, b->c[bi].t, reps, lo, hi);
    snprintf(cell, size, "%.2f", m);
    return m;
}

/* auto / best over the problems: how many reached 0.97, and of those that did not, how many have
 * an interval that reaches it (below within the noise) */
static int g_auto_rows, g_auto_ok, g_auto_noise;

static void bench_problem(const problem *p, double budget, int reps_max, double torch_ms) {
    bench b;
    memset(&b, 0, sizeof b);
    b.p = p;
    size_t na, nb, nc;
    if (!p->conv) {
        na = (size_t)(p->m * p->k), nb = (size_t)(p->k * p->n), nc = (size_t)(p->m * p->n);
        b.a = fill(p->ab, na, p->full_range);
        b.b = fill(p->ab, nb, p->full_range);
    } else {
        int64_t o = out_dim(p);
        na = (size_t)(p->mb * p->ic * p->ih * p->iw);
        nb = (size_t)(p->oc * p->ic * p->kh * p->kw);
        nc = (size_t)(p->mb * p->oc * o * o);
        b.a = fill(KMUX_F32, na, 0);
        b.b = fill(KMUX_F32, nb, 0);
        b.col = fill(KMUX_F32, (size_t)(p->ic * p->kh * p->kw * o * o), 0);
        b.eqb = fill(KMUX_F32, (size_t)(p->mb * p->ic * p->kh * p->kw * o * o), 0);
    }
    b.out_count = nc;
    for (int i = 0; i < NCONT; i++) {
        b.c[i].out = aligned_alloc(64, (nc * 4 + 63) / 64 * 64);
        memset(b.c[i].out, 0, nc * 4);
        b.c[i].why = "n/a";
    }
#ifdef KMUX_BENCH_HAVE_OPENBLAS
    b.c[C_OPENBLAS].ok = p->conv || p->ab == KMUX_F32;
    b.c[C_SGEMM].ok = p->conv;
    snprintf(b.c[C_OPENBLAS].impl, sizeof b.c[C_OPENBLAS].impl, p->conv ? "im2col+sgemm" : "sgemm");
#endif
#ifdef KMUX_BENCH_HAVE_DNNL
    dnnl_setup(&b, C_ONEDNN);
    dnnl_setup(&b, C_DNN_ANY);
#endif
    kmux_setup(&b, C_KOB);
    kmux_setup(&b, C_KDNN);
    kmux_setup(&b, C_KAUTO);
    /* warm-up, verification against the first kmux contestant that ran (the equivalent GEMM of
     * a convolution, C_SGEMM, computes something else and is not compared) */
    double t_round = 0, t_pauses = 0; /* one round: the calls, and the pauses before them */
    const contestant *ref = NULL;
    for (int i = 0; i < NCONT; i++) {
        contestant *c = &b.c[i];
        if (!c->ok) continue;
        /* the pause before the warm-up too: a oneDNN warm-up inside OpenBLAS's spin left this
         * 0.12 ms GEMM at 2.1 ms a call for the whole run, whatever the pauses before samples
         * (OMP_WAIT_POLICY=active or OPENBLAS_THREAD_TIMEOUT=4 also cured it; the guess is that
         * libgomp's worker was placed on the master's core while OpenBLAS spun on the other) */
        settle(&b, i);
        double t0 = now_s();
        if (!run(&b, i)) {
            c->ok = 0;
            c->why = "failed";
            continue;
        }
        double t_call = now_s() - t0;
        /* the first call pays JIT and page faults, and the first calls after a pause wake the
         * library's threads and the VM's idle cores (a 0.12 ms oneDNN call took 2 ms there): the
         * calls per sample come from the fastest of 5 more calls, for calls under 0.1 s */
        for (int k = 0; k < 5 && t_call < 0.1; k++) {
            t0 = now_s();
            run(&b, i);
            const double t = now_s() - t0;
            if (k == 0 || t < t_call) t_call = t;
        }
        c->calls = sample_calls(t_call);
        /* the untimed call only where a call is short against a sample: a long call (oneDNN's
         * ref:any NHWC convolution takes ~100 s) is not distorted by a wake-up */
        c->warm = t_call < SHORT_CALL_S;
        t_round += t_call * (c->calls + c->warm);
    }
    /* the pauses of a round: those of NCONT rounds in their rotated orders, each pause after the
     * contestant before it, over NCONT */
    for (int r = 0, prev = -1; r <= NCONT; r++)
        for (int slot = 0; slot < NCONT; slot++) {
            const int i = round_order[(slot + r) % NCONT];
            if (!b.c[i].ok) continue;
            if (r > 0)
                t_pauses += settle_ms(i, prev >= 0 && runs_openblas(&b, prev)) * 1e-3 / NCONT;
            prev = i;
        }
    for (int i = C_KOB; i <= C_KAUTO && !ref; i++)
        if (b.c[i].ok) ref = &b.c[i];
    if (!ref && b.c[C_ONEDNN].ok) ref = &b.c[C_ONEDNN];
    for (int i = 0; i < NCONT && ref; i++) {
        contestant *c = &b.c[i];
        if (!c->ok || c == ref || i == C_SGEMM) continue;
        if (!agrees(&b, c, ref)) {
            c->ok = 0;
            c->why = "BAD";
            g_bad++;
        }
    }
    /* the budget is for the calls; the pauses may take up to 3 budgets more. A 0.1 ms GEMM got
     * 5 repetitions when the pauses counted against the budget, too few for a median on this VM,
     * where a 2-thread oneDNN call flips between two speeds (0.12 and 0.20 ms) from one sample
     * to the next even with no other library in the process */
    int reps = t_round > 0 ? (int)(budget / t_round) : reps_max;
    if (t_pauses > 0 && reps * (t_round + t_pauses) > 4 * budget)
        reps = (int)(4 * budget / (t_round + t_pauses));
    if (reps < 3) reps = 3;
    if (reps > reps_max) reps = reps_max;
    /* round_order, rotated from round to round: no contestant always runs first or last */
    for (int r = 0; r < reps; r++)
        for (int slot = 0; slot < NCONT; slot++) {
            const int i = round_order[(slot + r) % NCONT];
            contestant *c = &b.c[i];
            if (!c->ok) continue;
            settle(&b, i);
            if (c->warm) run(&b, i); /* wakes the library's threads; not timed */
            double t0 = now_s();
            for (int k = 0; k < c->calls; k++)
                run(&b, i);
            c->t[r] = (now_s() - t0) / c->calls;
        }
    double ops = problem_ops(p), rate[NCONT] = {0};
    for (int i = 0; i < NCONT; i++)
        if (b.c[i].ok) rate[i] = ops / kb_median(b.c[i].t, reps) * 1e-9;
    if (torch_ms > 0) rate[C_TORCH] = ops / (torch_ms * 1e-3) * 1e-9;
    char cell[NCONT][16];
    printf("%-24s", p->name);
    for (int i = 0; i < NCONT; i++) {
        if (b.c[i].ok || (i == C_TORCH && rate[i] > 0))
            fmt_rate(cell[i], sizeof cell[i], rate[i]);
        else
            snprintf(cell[i], sizeof cell[i], "%s", i == C_TORCH ? "-" : b.c[i].why);
        printf(" %10s", cell[i]);
    }
    /* the best direct call of each library, and of all (the equivalent GEMM is no convolution:
     * it is the bound k:openblas is held to, not a contestant for "best") */
    const double dnn = rate[C_ONEDNN] > rate[C_DNN_ANY] ? rate[C_ONEDNN] : rate[C_DNN_ANY];
    double best = rate[C_OPENBLAS] > dnn ? rate[C_OPENBLAS] : dnn;
    if (rate[C_TORCH] > best) best = rate[C_TORCH];
    const int dnn_i = rate[C_ONEDNN] > rate[C_DNN_ANY] ? C_ONEDNN : C_DNN_ANY;
    int best_i = rate[C_OPENBLAS] > dnn ? C_OPENBLAS : dnn_i;
    if (rate[C_TORCH] > 0 && rate[C_TORCH] >= best) best_i = C_TORCH;
    char r1[16] = "-", r2[16] = "-", r3[16] = "-", r4[16] = "-", ci[2][24] = {"-", "-"};
    double lo, hi;
    ratio_cell(r1, sizeof r1, &b, rate, C_KOB, C_OPENBLAS, reps, &lo, &hi);
    ratio_cell(r2, sizeof r2, &b, rate, C_KOB, C_SGEMM, reps, &lo, &hi);
    ratio_cell(r3, sizeof r3, &b, rate, C_KDNN, dnn_i, reps, &lo, &hi);
    if (hi > 0) snprintf(ci[0], sizeof ci[0], "%.2f-%.2f", lo, hi);
    const double ra = ratio_cell(r4, sizeof r4, &b, rate, C_KAUTO, best_i, reps, &lo, &hi);
    if (hi > 0) snprintf(ci[1], sizeof ci[1], "%.2f-%.2f", lo, hi);
    if (ra > 0) { /* judged as printed, to two decimals */
        g_auto_rows++;
        if (kb_reaches(ra, 0.97))
            g_auto_ok++;
        else if (kb_reaches(hi, 0.97))
            g_auto_noise++;
    }
    printf(" %8s %8s %8s %8s %10s %10s  %d  %s | %s | %s | %s\n", r1, r2, r3, r4, ci[0], ci[1],
           reps, b.c[C_ONEDNN].impl, p->conv ? b.c[C_DNN_ANY].impl : "-", b.c[C_KDNN].impl,
           b.c[C_KAUTO].ok ? b.c[C_KAUTO].impl : b.c[C_KOB].impl);
    fflush(stdout);
    for (int i = 0; i < NCONT; i++) {
        contestant *c = &b.c[i];
        if (c->plan) kmux_plan_destroy(c->plan);
        if (c->stream) kmux_stream_destroy(c->stream);
#ifdef KMUX_BENCH_HAVE_DNNL
        for (int j = 0; j < 3; j++) {
            if (c->mem[j]) dnnl_memory_destroy(c->mem[j]);
            if (c->own[j]) dnnl_memory_destroy(c->own[j]);
            if (c->reorder[j]) dnnl_primitive_destroy(c->reorder[j]);
        }
        if (c->scratch) dnnl_memory_destroy(c->scratch);
        if (c->prim) dnnl_primitive_destroy(c->prim);
        if (c->ds) dnnl_stream_destroy(c->ds);
#endif
        free(c->out);
    }
    free(b.a);
    free(b.b);
    free(b.col);
    free(b.eqb);
}

int main(int argc, char **argv) {
    int quick = 0, which = 3; /* 1 issue, 2 mix, 3 all */
    const char *only = NULL;
    double budget = 1.5;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--quick"))
            quick = 1;
        else if (!strcmp(argv[i], "--rows=issue"))
            which = 1;
        else if (!strcmp(argv[i], "--rows=mix"))
            which = 2;
        else if (!strcmp(argv[i], "--rows=all"))
            which = 3;
        else if (!strncmp(argv[i], "--only=", 7))
            only = argv[i] + 7;
        else if (!strncmp(argv[i], "--budget=", 9) && atof(argv[i] + 9) > 0)
            budget = atof(argv[i] + 9);
        else if (!strncmp(argv[i], "--settle-ms=", 12) && atof(argv[i] + 12) >= 0)
            g_settle_ms = g_settle_short_ms = atof(argv[i] + 12);
        else {
            fprintf(stderr,
                    "usage: %s [--quick] [--rows=issue|mix|all] [--only=TEXT] "
                    "[--budget=SECONDS_PER_PROBLEM] [--settle-ms=MS]\n",
                    argv[0]);
            return 2;
        }
    }
    if (g_settle_ms < 0) g_settle_ms = fmax(kmux_openblas_settle_ms(20.0), g_settle_short_ms);
    problem rows[64];
    int n = 0;
    if (quick) {
        memcpy(rows, quick_rows, sizeof quick_rows);
        n = (int)(sizeof quick_rows / sizeof quick_rows[0]);
        budget = 0.01;
    } else {
        if (which & 1) {
            memcpy(rows + n, issue_rows, sizeof issue_rows);
            n += (int)(sizeof issue_rows / sizeof issue_rows[0]);
        }
        if (which & 2) {
            memcpy(rows + n, mix_rows, sizeof mix_rows);
            n += (int)(sizeof mix_rows / sizeof mix_rows[0]);
        }
    }
    if (only) {
        int kept = 0;
        for (int i = 0; i < n; i++)
            if (strstr(rows[i].name, only)) rows[kept++] = rows[i];
        n = kept;
        if (!n) {
            fprintf(stderr, "bench_cpu_direct: --only=%s matches no row\n", only);
            return 2;
        }
    }
    kmux_context_options o = KMUX_CONTEXT_OPTIONS_INIT;
    if (kmux_context_create(&o, &g_ctx) != KMUX_OK) {
        fprintf(stderr, "bench_cpu_direct: kmux_context_create: %s\n", kmux_last_error());
        return 1;
    }
    static const char *const ids[NCONT] = {
        [C_KOB] = "cpu:openblas", [C_KDNN] = "cpu:onednn", [C_KAUTO] = "cpu:auto"};
    for (int i = C_KOB; i <= C_KAUTO; i++)
        if (kmux_device_find(g_ctx, ids[i], &g_dev[i]) != KMUX_OK) g_dev[i] = NULL;
#ifdef KMUX_BENCH_HAVE_DNNL
    if (dnnl_engine_create(&g_engine, dnnl_cpu, 0) != dnnl_success ||
        dnnl_primitive_attr_create(&g_attr) != dnnl_success ||
        dnnl_primitive_attr_set_scratchpad_mode(g_attr, dnnl_scratchpad_mode_user) != dnnl_success)
        g_engine = NULL;
#endif
    char model[256];
    cpu_model(model, sizeof model);
    machine m0, m1;
    machine_read(&m0);
    int have_torch = !quick && torch_measure(rows, n);
    printf("bench_cpu_direct: CPU %s, %ld cores; kmux %s; load average before %.2f; KMUX_TUNE=%s; "
           "pause before each sample %.0f ms where oneDNN may run after OpenBLAS, else %.0f ms\n",
           model, sysconf(_SC_NPROCESSORS_ONLN), kmux_version(), m0.load1,
           getenv("KMUX_TUNE") ? getenv("KMUX_TUNE") : "(unset)", g_settle_ms, g_settle_short_ms);
    printf("GFLOP/s (GOP/s for i8), medians of interleaved repetitions; ratios (medians of the "
           "ratios within each round): k:openblas / OpenBLAS, k:openblas / sgemm= (convolutions: "
           "OpenBLAS's sgemm on the equivalent GEMM), k:onednn / the better oneDNN, k:auto / best "
           "direct convolution or GEMM (PyTorch %s)\n",
           have_torch ? "included, run in its own process" : "not importable: left out");
    printf("%-24s", "problem");
    for (int i = 0; i < NCONT; i++)
        printf(" %10s", cont_names[i]);
    printf(" %8s %8s %8s %8s %10s %10s  reps  impl: oneDNN | oneDNN:any | k:onednn | k:auto (or "
           "k:openblas)\n",
           "kob/ob", "kob/sg=", "kdnn/dnn", "auto/bst", "kdnn 95%", "auto 95%");
    for (int i = 0; i < n; i++)
        bench_problem(&rows[i], budget, quick ? 3 : MAX_REPS, have_torch ? g_torch_ms[i] : 0);
    machine_read(&m1);
    double wall = m1.wall - m0.wall;
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    double foreign = (m1.busy_s - m0.busy_s) - (m1.own_s - m0.own_s);
    double foreign_frac = wall > 0 ? foreign / (wall * (double)cores) : 0;
    double steal_frac = wall > 0 ? (m1.steal_s - m0.steal_s) / (wall * (double)cores) : 0;
    /* The verdict rests on what was measured during the run: other processes' CPU time and steal.
     * The load average before is printed only: it decays over minutes, so it stayed above 0.5 for
     * a minute after any earlier run and condemned runs during which nothing else ran (0% other
     * CPU time, 0.1% steal). */
    int noisy = foreign_frac > 0.05 || steal_frac > 0.02;
    printf("machine: load average before %.2f after %.2f; other processes used %.0f%% of the CPU "
           "time, steal %.1f%%, over %.0f s\n",
           m0.load1, m1.load1, 100 * foreign_frac, 100 * steal_frac, wall);
    if (g_auto_rows)
        printf("k:auto / best: %d of %d problems at >= 0.97; of the %d below, %d within the noise "
               "(95%% interval reaching 0.97)\n",
               g_auto_ok, g_auto_rows, g_auto_rows - g_auto_ok, g_auto_noise);
    printf("verdict: %s\n", noisy ? "UNTRUSTWORTHY (the machine was not quiet: rerun on an idle "
                                    "machine)"
                                  : "quiet machine: figures usable");
#ifdef KMUX_BENCH_HAVE_DNNL
    if (g_engine) dnnl_engine_destroy(g_engine);
    if (g_attr) dnnl_primitive_attr_destroy(g_attr);
#endif
    kmux_context_destroy(g_ctx);
    if (g_bad)
        fprintf(stderr, "bench_cpu_direct: %d contestant(s) computed a wrong result\n", g_bad);
    return g_bad ? 1 : 0;
}
