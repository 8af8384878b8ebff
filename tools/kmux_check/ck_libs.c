/*
 * ck_libs.c - library checks: on each GPU device, which vendor libraries the plugin found (with
 * their versions, kmux_device_diag.libraries), and whether each library it runs GEMM and
 * convolution with computes a small problem correctly. A plan lists its implementations by
 * library (the name up to its first ':' : "hipblaslt", "rocblas_gemm_ex", "miopen", "cublasLt",
 * "cudnn", "kmux-gpu" for kmux's own kernels); the first implementation of each library is run
 * (kmux_plan_next_impl up to it) and compared with ref exactly (small-integer inputs), so that
 * "is hipBLASLt there for my GPU and does it compute" and "does MIOpen run here" get one answer
 * each, before a benchmark says how fast.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ck_checks.h"
#include "ck_values.h"

static void add(ck_run *run, const char *subject, const char *name, const ck_verdict *v) {
    ck_report_add(run->report, "function", subject, name, v, NAN, NAN, "");
}

enum { LM = 24, LN = 20, LK = 16 };
enum { LX = 2 * 8 * 6 * 6, LW = 8 * 8 * 3 * 3, LY = 2 * 8 * 6 * 6 };

typedef struct lib_problem {
    int conv; /* 0: f32 GEMM LM x LN x LK (row-major); 1: f16 forward convolution */
    kmux_matmul_desc md;
    kmux_conv2d_desc cd;
} lib_problem;

static lib_problem problem(int conv) {
    lib_problem p;
    memset(&p, 0, sizeof p);
    p.conv = conv;
    kmux_matmul_desc md = KMUX_MATMUL_DESC_INIT;
    md.order = KMUX_ROW_MAJOR;
    md.m = LM, md.n = LN, md.k = LK, md.lda = LK, md.ldb = LN, md.ldc = LN;
    p.md = md;
    kmux_conv2d_desc cd = KMUX_CONV2D_DESC_INIT;
    cd.n = 2, cd.c = 8, cd.h = cd.w = 6, cd.k = 8, cd.r = cd.s = 3;
    cd.pad_top = cd.pad_bottom = cd.pad_left = cd.pad_right = 1;
    cd.x_type = cd.w_type = cd.y_type = KMUX_F16;
    p.cd = cd;
    return p;
}

static kmux_status plan_of(kmux_device *dev, const lib_problem *p, kmux_plan **plan) {
    return p->conv ? kmux_conv2d_plan_create(dev, &p->cd, NULL, plan)
                   : kmux_matmul_plan_create(dev, &p->md, NULL, plan);
}

/* kmux_last_error() of the last run_plan that failed (the frees after it clear the error). */
static char run_error[384];

/* Runs the plan's current implementation on s; the result into out (n values). */
static kmux_status run_plan(kmux_stream *s, kmux_plan *plan, const lib_problem *p, double *out,
                            size_t *n) {
    kmux_device *dev = kmux_stream_device(s);
    double a[LX], b[LW];
    ck_fill_small(a, LX, 7);
    ck_fill_small(b, LW, 8);
    const float one = 1.0f, zero = 0.0f;
    kmux_status st;
    void *x, *w, *y;
    if (p->conv) {
        x = ck_upload(s, KMUX_F16, a, LX), w = ck_upload(s, KMUX_F16, b, LW);
        y = ck_upload(s, KMUX_F16, NULL, LY);
        kmux_conv2d_args args = KMUX_CONV2D_ARGS_INIT;
        args.alpha = &one, args.beta = &zero, args.x = x, args.w = w, args.y = y;
        st = x && w && y ? kmux_conv2d_execute(plan, s, &args) : KMUX_ERR_OUT_OF_MEMORY;
        *n = LY;
    } else {
        x = ck_upload(s, KMUX_F32, a, LM * LK), w = ck_upload(s, KMUX_F32, b, LK * LN);
        y = ck_upload(s, KMUX_F32, NULL, LM * LN);
        kmux_matmul_args args = KMUX_MATMUL_ARGS_INIT;
        args.alpha = &one, args.beta = &zero, args.A = x, args.B = w, args.C = y;
        st = x && w && y ? kmux_matmul_execute(plan, s, &args) : KMUX_ERR_OUT_OF_MEMORY;
        *n = LM * LN;
    }
    if (st == KMUX_OK) st = kmux_stream_synchronize(s);
    if (st == KMUX_OK && ck_download(s, p->conv ? KMUX_F16 : KMUX_F32, y, out, *n) != 0)
        st = KMUX_ERR_DEVICE;
    if (st != KMUX_OK) snprintf(run_error, sizeof run_error, "%s", kmux_last_error());
    kmux_free(dev, x);
    kmux_free(dev, w);
    kmux_free(dev, y);
    return st;
}

/* The library an implementation name belongs to: its text up to the first ':'. */
static void family(const char *impl, char *out, size_t size) {
    snprintf(out, size, "%.*s", (int)strcspn(impl, ":"), impl);
}

static void check_problem(ck_run *run, kmux_device *dev, kmux_stream *s, kmux_stream *ref_s,
                          const lib_problem *p) {
    const char *id = kmux_device_id(dev), *what = p->conv ? "conv_fwd f16" : "matmul f32";
    static double got[LY > LM * LN ? LY : LM * LN], want[LY > LM * LN ? LY : LM * LN];
    kmux_plan *plan = NULL, *ref_plan = NULL;
    size_t n = 0, n_ref = 0;
    char name[96];
    kmux_status st = plan_of(run->ref, p, &ref_plan);
    if (st == KMUX_OK) st = run_plan(ref_s, ref_plan, p, want, &n_ref);
    kmux_plan_destroy(ref_plan);
    if (st != KMUX_OK) return; /* the function checks report ref */
    st = plan_of(dev, p, &plan);
    if (st != KMUX_OK) {
        snprintf(name, sizeof name, "library %s", what);
        ck_verdict v =
            ck_verdict_of(st == KMUX_ERR_UNSUPPORTED ? CK_SKIP : CK_FAIL, kmux_last_error(), NULL);
        add(run, id, name, &v);
        return;
    }
    char seen[512] = "";
    do {
        kmux_plan_info info;
        if (kmux_plan_info_get(plan, &info) != KMUX_OK) break;
        char fam[48], key[52];
        family(info.impl, fam, sizeof fam);
        snprintf(key, sizeof key, "|%s|", fam);
        if (strstr(seen, key)) continue;
        size_t len = strlen(seen);
        snprintf(seen + len, sizeof seen - len, "%s", key);
        snprintf(name, sizeof name, "library %s %s", fam, what);
        st = run_plan(s, plan, p, got, &n);
        ck_verdict v;
        if (st != KMUX_OK) {
            char detail[384];
            snprintf(detail, sizeof detail, "%s: %s: %s", info.impl, kmux_status_str(st),
                     run_error);
            v = ck_verdict_of(CK_FAIL, detail,
                              "the library is there but fails: check its install for this "
                              "GPU, or pin another with KMUX_HIP_IMPL / KMUX_VERBOSE=2");
        } else {
            ck_compare c = ck_compare_exact(got, want, n);
            v = ck_judge_compare(&c);
            size_t dl = strlen(v.detail);
            snprintf(v.detail + dl, sizeof v.detail - dl, " (%s)", info.impl);
        }
        add(run, id, name, &v);
    } while (kmux_plan_next_impl(plan) == KMUX_OK);
    kmux_plan_destroy(plan);
}

void ck_check_libraries(ck_run *run) {
    kmux_stream *ref_s = NULL;
    if (kmux_stream_create(run->ref, &ref_s) != KMUX_OK) return;
    for (int i = 0; i < run->device_count; i++) {
        kmux_device *dev = run->devices[i];
        kmux_device_props props;
        if (kmux_device_props_get(dev, &props) != KMUX_OK || props.is_host) continue;
        const char *id = kmux_device_id(dev);
        kmux_device_diag d;
        memset(&d, 0, sizeof d);
        d.struct_size = sizeof d;
        ck_verdict v;
        if (kmux_device_diag_get(dev, &d) == KMUX_OK && d.libraries[0])
            v = ck_verdict_of(CK_PASS, d.libraries, NULL);
        else
            v = ck_verdict_of(CK_SKIP, "the plugin names no vendor library", NULL);
        add(run, id, "libraries", &v);
        kmux_stream *s = NULL;
        if (kmux_stream_create(dev, &s) != KMUX_OK) continue; /* the function checks say why */
        for (int conv = 0; conv < 2; conv++) {
            lib_problem p = problem(conv);
            check_problem(run, dev, s, ref_s, &p);
        }
        kmux_stream_destroy(s);
    }
    kmux_stream_destroy(ref_s);
}
