/*
 * bench_ob_conv.c - the OpenBLAS convolution of kmux (cpu:openblas, im2col + sgemm) against
 * OpenBLAS's own sgemm on the equivalent GEMM shape, in ONE run (issue 14: the conv must reach
 * >= 80% of that sgemm rate in every direction and layout).
 *
 * Per ResNet-50 layer, direction and layout, two contestants run interleaved after one warm-up
 * each, their order alternating between rounds (conv, sgemm, sgemm, conv, conv, sgemm, ...: each
 * runs right after the other in half the rounds, after itself in the other half); the figures are
 * median rates, the ratio the median of the ratios within each round with a ~95% interval
 * (kb_median.h). The equivalent GEMM is the convolution's implicit GEMM over the whole batch, with
 * the transposes the backend uses (NPQ = n*p*q, CRS = c*r*s; both do the same number of flops):
 *   FWD          NCHW  [K x NPQ]   = W [K x CRS]     col [CRS x NPQ]     (N, N)
 *                NHWC  [NPQ x K]   = col [NPQ x CRS] W^T                 (N, T)
 *   BWD_DATA     NCHW  [CRS x NPQ] = W^T             dy [K x NPQ]        (T, N)
 *                NHWC  [NPQ x CRS] = dy [NPQ x K]    W [K x CRS]         (N, N)
 *   BWD_WEIGHTS  NCHW  [K x CRS]   = dy [K x NPQ]    col^T               (N, T)
 *                NHWC  [K x CRS]   = dy^T            col [NPQ x CRS]     (T, N)
 *
 * Noise: the CPU time of other processes and steal are sampled around every row (kb_noise, as
 * kmux-bench does), and the two halves of the repetitions must agree; any noisy row makes the
 * verdict UNTRUSTWORTHY. The load average is printed before and after (not judged: it stays up
 * for a minute after any earlier run), and the largest thread count of the process (a check that
 * kmux's own threads and OpenBLAS's do not pile up).
 *
 * Usage: bench_ob_conv [--quick] [--mb=N] [--reps=N] [--only=TEXT]
 *   --quick: one small layer, 3 repetitions (the ctest smoke test).
 *   --only: the rows whose "layer dir layout" contains TEXT (e.g. "res2a", "fwd nchw").
 */
#define _GNU_SOURCE
#include <cblas.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "kb_median.h"
#include "kb_noise.h"
#include "kb_timing.h"
#include "kmux.h"

#define MAX_REPS 41
_Static_assert(MAX_REPS <= KB_MEDIAN_MAX, "kb_median takes at most KB_MEDIAN_MAX samples");

typedef struct layer {
    const char *name;
    int64_t c, h, k, r, stride, pad;
} layer;

/* ResNet-50 convolution layers (v1 and v1.5; He et al. 2016, torchvision resnet50) */
static const layer layers[] = {
    {"conv1 7x7s2 3>64 224", 3, 224, 64, 7, 2, 3},
    {"res2a_2b 3x3 64 56", 64, 56, 64, 3, 1, 1},
    {"res2b_2a 1x1 256>64 56", 256, 56, 64, 1, 1, 0},
    {"res3a_2b 3x3s2 128 56", 128, 56, 128, 3, 2, 1},
    {"res3a_1 1x1s2 256>512", 256, 56, 512, 1, 2, 0},
    /* v1's strided 1x1 of few outputs: the lowering reads 4 times the column matrix from x */
    {"res3a_2a 1x1s2 256>128", 256, 56, 128, 1, 2, 0},
    {"res4a_2b 3x3 256 14", 256, 14, 256, 3, 1, 1},
};
static const layer quick_layer = {"smoke 3x3 16 12", 16, 12, 16, 3, 1, 1};

static const char *const dir_names[] = {"", "fwd", "bwd_data", "bwd_wts"};

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static uint64_t g_rng = 0x9e3779b97f4a7c15ull;
static float *fill(size_t count) {
    float *p = aligned_alloc(64, (count * sizeof(float) + 63) / 64 * 64);
    if (!p) return NULL;
    for (size_t i = 0; i < count; i++) {
        g_rng ^= g_rng << 13, g_rng ^= g_rng >> 7, g_rng ^= g_rng << 17;
        p[i] = (float)((g_rng >> 11) * 0x1p-53) * 2.0f - 1.0f;
    }
    return p;
}

static int thread_count(void) {
    FILE *f = fopen("/proc/self/status", "r");
    int n = 0;
    char line[256];
    while (f && fgets(line, sizeof line, f))
        if (sscanf(line, "Threads: %d", &n) == 1) break;
    if (f) fclose(f);
    return n;
}

static double load1(void) {
    double l = -1;
    FILE *f = fopen("/proc/loadavg", "r");
    if (f && fscanf(f, "%lf", &l) != 1) l = -1;
    if (f) fclose(f);
    return l;
}

typedef struct gemm_shape {
    int ta, tb;
    int64_t m, n, k;
} gemm_shape;

static gemm_shape equivalent(const kmux_conv2d_desc *d, int64_t p, int64_t q) {
    const int64_t npq = d->n * p * q, crs = d->c * d->r * d->s;
    const int nhwc = d->layout == KMUX_NHWC;
    switch (d->direction) {
    case KMUX_CONV_FWD:
        return nhwc ? (gemm_shape){0, 1, npq, d->k, crs} : (gemm_shape){0, 0, d->k, npq, crs};
    case KMUX_CONV_BWD_DATA:
        return nhwc ? (gemm_shape){0, 0, npq, crs, d->k} : (gemm_shape){1, 0, crs, npq, d->k};
    default:
        return nhwc ? (gemm_shape){1, 0, d->k, crs, npq} : (gemm_shape){0, 1, d->k, crs, npq};
    }
}

static void sgemm_run(const gemm_shape *g, const float *a, const float *b, float *c) {
    cblas_sgemm(CblasRowMajor, g->ta ? CblasTrans : CblasNoTrans, g->tb ? CblasTrans : CblasNoTrans,
                (int)g->m, (int)g->n, (int)g->k, 1.0f, a, g->ta ? (int)g->m : (int)g->k, b,
                g->tb ? (int)g->k : (int)g->n, 0.0f, c, (int)g->n);
}

static int g_noisy, g_max_threads;
/* cells measured, at >= 0.80, and below it with an interval that reaches it (within the noise) */
static int g_cells, g_cells_ok, g_cells_noise;

/* One row; returns 0 when kmux failed (printed). */
static int bench_row(kmux_device *dev, const layer *ly, kmux_conv_direction dir, kmux_layout lay,
                     int64_t mb, int reps, int threads) {
    kmux_conv2d_desc d = KMUX_CONV2D_DESC_INIT;
    d.direction = dir, d.layout = lay;
    d.n = mb, d.c = ly->c, d.h = d.w = ly->h, d.k = ly->k, d.r = d.s = ly->r;
    d.stride_h = d.stride_w = ly->stride;
    d.pad_top = d.pad_bottom = d.pad_left = d.pad_right = ly->pad;
    int64_t p, q;
    kmux_plan *plan = NULL;
    kmux_stream *stream = NULL;
    if (kmux_conv2d_output_dims(&d, &p, &q) != KMUX_OK ||
        kmux_conv2d_plan_create(dev, &d, NULL, &plan) != KMUX_OK ||
        kmux_stream_create(dev, &stream) != KMUX_OK) {
        printf("%-24s %-8s %-4s kmux: %s\n", ly->name, dir_names[dir],
               lay == KMUX_NHWC ? "nhwc" : "nchw", kmux_last_error());
        if (plan) kmux_plan_destroy(plan);
        return 0;
    }
    kmux_plan_info info;
    char impl[96] = "?";
    if (kmux_plan_info_get(plan, &info) == KMUX_OK) snprintf(impl, sizeof impl, "%s", info.impl);
    const size_t nx = (size_t)(d.n * d.c * d.h * d.w), nw = (size_t)(d.k * d.c * d.r * d.s),
                 ny = (size_t)(d.n * d.k * p * q);
    float *x = fill(nx), *w = fill(nw), *y = fill(ny);
    const gemm_shape g = equivalent(&d, p, q);
    float *ga = fill((size_t)(g.m * g.k)), *gb = fill((size_t)(g.k * g.n)),
          *gc = fill((size_t)(g.m * g.n));
    const float one = 1.0f, zero = 0.0f;
    kmux_conv2d_args args = KMUX_CONV2D_ARGS_INIT;
    args.alpha = &one, args.beta = &zero, args.x = x, args.w = w, args.y = y;
    double tc[MAX_REPS], tg[MAX_REPS];
    int ok = x && w && y && ga && gb && gc;
    kb_noise_sample s0, s1;
    kb_noise_sample_now(&s0);
    for (int r = -1; r < reps && ok; r++) { /* r = -1: warm-up */
        /* odd rounds time the sgemm first (what ran before, its cache contents and OpenBLAS's
         * spinning workers, affects the next) */
        const int gemm_first = r >= 0 && r % 2 == 1;
        double t0 = now_s(), tgemm = 0;
        if (gemm_first) {
            sgemm_run(&g, ga, gb, gc);
            tgemm = now_s() - t0;
            t0 = now_s();
        }
        ok = kmux_conv2d_execute(plan, stream, &args) == KMUX_OK &&
             kmux_stream_synchronize(stream) == KMUX_OK;
        const double t1 = now_s();
        if (!gemm_first) {
            sgemm_run(&g, ga, gb, gc);
            tgemm = now_s() - t1;
        }
        if (r >= 0) tc[r] = t1 - t0, tg[r] = tgemm;
        int nt = thread_count();
        if (nt > g_max_threads) g_max_threads = nt;
    }
    kb_noise_sample_now(&s1);
    if (ok) {
        kb_noise n;
        kb_noise_between(&s0, &s1, threads, &n);
        /* drift during the row: the medians of the two halves of each contestant's rounds */
        double sc = kb_rounds_spread(tc, reps, 2), sg = kb_rounds_spread(tg, reps, 2);
        kb_noise_rounds(&n, sc > sg ? sc : sg, 2); /* the two halves of the repetitions */
        g_noisy |= n.noisy;
        const double flops = 2.0 * (double)g.m * (double)g.n * (double)g.k;
        const double rc = flops / kb_median(tc, reps) * 1e-9,
                     rg = flops / kb_median(tg, reps) * 1e-9;
        char shape[48];
        snprintf(shape, sizeof shape, "%s%s %lldx%lldx%lld", g.ta ? "T" : "N", g.tb ? "T" : "N",
                 (long long)g.m, (long long)g.n, (long long)g.k);
        /* the ratio within each round, its median over the rounds, and its
         * interval (none for fewer than 6 rounds: --quick, --reps=5) */
        double lo, hi;
        const double m = kb_paired_ratio(tc, tg, reps, &lo, &hi);
        char interval[24] = "-";
        if (hi > 0) snprintf(interval, sizeof interval, "%4.2f-%4.2f", lo, hi);
        g_cells++;
        g_cells_ok += kb_reaches(m, 0.80);
        g_cells_noise += !kb_reaches(m, 0.80) && kb_reaches(hi, 0.80);
        printf("%-24s %-8s %-4s %8.1f %8.1f %6.2f %9s  %-26s %s%s%s\n", ly->name, dir_names[dir],
               lay == KMUX_NHWC ? "nhwc" : "nchw", rc, rg, m, interval, shape, impl,
               n.noisy ? "  NOISY: " : "", n.noisy ? n.reason : "");
    } else {
        printf("%-24s %-8s %-4s kmux execute failed: %s\n", ly->name, dir_names[dir],
               lay == KMUX_NHWC ? "nhwc" : "nchw", kmux_last_error());
    }
    fflush(stdout);
    free(x), free(w), free(y), free(ga), free(gb), free(gc);
    kmux_stream_destroy(stream);
    kmux_plan_destroy(plan);
    return ok;
}

int main(int argc, char **argv) {
    int quick = 0, reps = 11;
    const char *only = NULL;
    int64_t mb = 4;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--quick"))
            quick = 1;
        else if (!strncmp(argv[i], "--mb=", 5) && atoi(argv[i] + 5) > 0)
            mb = atoi(argv[i] + 5);
        else if (!strncmp(argv[i], "--only=", 7))
            only = argv[i] + 7;
        else if (!strncmp(argv[i], "--reps=", 7) && atoi(argv[i] + 7) > 0)
            reps = atoi(argv[i] + 7) > MAX_REPS ? MAX_REPS : atoi(argv[i] + 7);
        else {
            fprintf(stderr, "usage: %s [--quick] [--mb=N] [--reps=N (<= %d)] [--only=TEXT]\n",
                    argv[0], MAX_REPS);
            return 2;
        }
    }
    if (quick) reps = 3, mb = 2;
    kmux_context *ctx;
    kmux_device *dev;
    kmux_context_options o = KMUX_CONTEXT_OPTIONS_INIT;
    if (kmux_context_create(&o, &ctx) != KMUX_OK) {
        fprintf(stderr, "bench_ob_conv: kmux_context_create: %s\n", kmux_last_error());
        return 1;
    }
    if (kmux_device_find(ctx, "cpu:openblas", &dev) != KMUX_OK) {
        printf("bench_ob_conv: no cpu:openblas device (%s): nothing to measure\n",
               kmux_last_error());
        kmux_context_destroy(ctx);
        return 77;
    }
    const long cores = sysconf(_SC_NPROCESSORS_ONLN);
    const int threads = cores > 0 ? (int)cores : 1;
    const double l0 = load1();
    printf("bench_ob_conv: kmux %s, %s, %ld cores, mb %lld, %d interleaved repetitions; load "
           "average before %.2f\n",
           kmux_version(), openblas_get_config(), cores, (long long)mb, reps, l0);
    printf("GFLOP/s (medians); ratio = conv / sgemm on the equivalent GEMM, the median of the "
           "ratios within each round (target >= 0.80), with its ~95%% interval\n");
    printf("%-24s %-8s %-4s %8s %8s %6s %9s  %-26s %s\n", "layer", "dir", "lay", "conv", "sgemm",
           "ratio", "95%", "equivalent GEMM", "impl");
    int failed = 0;
    const layer *list = quick ? &quick_layer : layers;
    const int nl = quick ? 1 : (int)(sizeof layers / sizeof layers[0]);
    for (int l = 0; l < nl; l++)
        for (int dir = KMUX_CONV_FWD; dir <= KMUX_CONV_BWD_WEIGHTS; dir++)
            for (int lay = KMUX_NCHW; lay <= KMUX_NHWC; lay++) {
                char key[96];
                snprintf(key, sizeof key, "%s %s %s", list[l].name, dir_names[dir],
                         lay == KMUX_NHWC ? "nhwc" : "nchw");
                if (only && !strstr(key, only)) continue;
                failed += !bench_row(dev, &list[l], (kmux_conv_direction)dir, (kmux_layout)lay, mb,
                                     reps, threads);
            }
    /* the load average is printed only, as in bench_cpu_direct: it decays over minutes, so it
     * stays high for a minute after any earlier run and condemned runs in which no other process
     * took CPU time (the per-row samples of kb_noise decide) */
    const double l1 = load1();
    printf("machine: load average before %.2f, after %.2f; at most %d threads in this process\n",
           l0, l1, g_max_threads);
    if (g_cells)
        printf("cells at >= 0.80: %d of %d; of the %d below, %d within the noise (95%% interval "
               "reaching 0.80)\n",
               g_cells_ok, g_cells, g_cells - g_cells_ok, g_cells_noise);
    printf("verdict: %s\n", g_noisy ? "UNTRUSTWORTHY (the machine was not quiet: rerun on an idle "
                                      "machine)"
                                    : "quiet machine: figures usable");
    kmux_context_destroy(ctx);
    return failed ? 1 : 0;
}
