/*
 * ck_speed.c - speed checks, each against a reference rate of the device or machine and a target
 * fraction (ck_targets): GEMM per dtype vs peak_flops, device copy vs memory bandwidth,
 * host<->device copies vs the link rate, the CPU's STREAM triad vs its DRAM channels, CPU GEMM vs
 * cores x FMA width x clock (the CPU plugins' peak_flops). Timing data are random reals.
 */
#define _GNU_SOURCE
#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ck_checks.h"
#include "ck_values.h"

static double now_s(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static void add(ck_run *run, const char *subject, const char *name, const ck_verdict *v,
                double measured, double target, const char *unit) {
    ck_report_add(run->report, "speed", subject, name, v, measured, target, unit);
}

static void add_error(ck_run *run, const char *subject, const char *name, const char *what) {
    ck_verdict v;
    memset(&v, 0, sizeof v);
    v.status = CK_FAIL;
    snprintf(v.detail, sizeof v.detail, "%s: %s", what, kmux_last_error());
    snprintf(v.hint, sizeof v.hint, "rerun with KMUX_VERBOSE=2 for the native error");
    add(run, subject, name, &v, NAN, NAN, "");
}

/* Device buffer of n elements of t holding pseudo-random reals in [-1, 1). */
static void *upload_random(kmux_stream *s, kmux_dtype t, size_t n, unsigned seed) {
    size_t bytes = n * kmux_dtype_size(t);
    unsigned char *h = malloc(bytes);
    if (!h) return NULL;
    /* One random block of up to 2^20 elements, repeated: random enough for timing, and cheap
     * for the 8192^2 operands of the GPU checks. */
    uint32_t x = seed * 2654435761u + 1;
    size_t block = n < ((size_t)1 << 20) ? n : (size_t)1 << 20, esize = kmux_dtype_size(t);
    for (size_t i = 0; i < block; i++) {
        x ^= x << 13;
        x ^= x >> 17;
        x ^= x << 5;
        ck_put(t, h, i, (double)(x >> 8) / 8388608.0 - 1.0);
    }
    for (size_t i = block; i < n; i += block)
        memcpy(h + i * esize, h, (n - i < block ? n - i : block) * esize);
    void *d = NULL;
    kmux_device *dev = kmux_stream_device(s);
    if (kmux_malloc(dev, bytes, &d) != KMUX_OK ||
        kmux_memcpy(s, d, h, bytes, KMUX_MEMCPY_HOST_TO_DEVICE) != KMUX_OK ||
        kmux_stream_synchronize(s) != KMUX_OK) {
        if (d) kmux_free(dev, d);
        d = NULL;
    }
    free(h);
    return d;
}

/* Runs op once as warm-up, then until min_s has passed (3..50 times); best time in seconds
 * measured with the device's events, or -1 with kmux_last_error(). */
typedef kmux_status (*op_fn)(kmux_stream *s, void *ctx);

static double best_time(kmux_stream *s, op_fn op, void *ctx, double min_s) {
    kmux_device *dev = kmux_stream_device(s);
    kmux_event *e0 = NULL, *e1 = NULL;
    double best = -1;
    if (kmux_event_create(dev, &e0) != KMUX_OK || kmux_event_create(dev, &e1) != KMUX_OK) goto out;
    if (op(s, ctx) != KMUX_OK || kmux_stream_synchronize(s) != KMUX_OK) goto out;
    double total = 0;
    for (int rep = 0; rep < 50 && (rep < 3 || total < min_s); rep++) {
        float ms = 0;
        if (kmux_event_record(e0, s) != KMUX_OK || op(s, ctx) != KMUX_OK ||
            kmux_event_record(e1, s) != KMUX_OK || kmux_event_synchronize(e1) != KMUX_OK ||
            kmux_event_elapsed_ms(e0, e1, &ms) != KMUX_OK) {
            best = -1;
            goto out;
        }
        double t = ms * 1e-3;
        total += t;
        if (t > 0 && (best < 0 || t < best)) best = t;
    }
out:
    kmux_event_destroy(e0);
    kmux_event_destroy(e1);
    return best;
}

/* ---- GEMM ----------------------------------------------------------------------------------- */

typedef struct gemm_ctx {
    int64_t n;
    kmux_dtype a, c;
    kmux_compute_type ct;
    void *A, *B, *C;
} gemm_ctx;

static kmux_status gemm_op(kmux_stream *s, void *p) {
    gemm_ctx *g = p;
    float one = 1.0f, zero = 0.0f;
    return kmux_gemm_ex(s, KMUX_COL_MAJOR, KMUX_NO_TRANS, KMUX_NO_TRANS, g->n, g->n, g->n, &one,
                        g->A, g->a, g->n, g->B, g->a, g->n, &zero, g->C, g->c, g->n, g->ct);
}

static void check_gemm(ck_run *run, kmux_stream *s, const kmux_device_props *p, kmux_dtype a,
                       kmux_dtype c, int64_t n, int busy) {
    char name[48];
    snprintf(name, sizeof name, "gemm %s n=%lld", kmux_dtype_name(a), (long long)n);
    kmux_device *dev = kmux_stream_device(s);
    gemm_ctx g = {n, a, c, KMUX_COMPUTE_F32, NULL, NULL, NULL};
    g.A = upload_random(s, a, (size_t)(n * n), 1);
    g.B = upload_random(s, a, (size_t)(n * n), 2);
    g.C = upload_random(s, c, (size_t)(n * n), 3);
    double t = g.A && g.B && g.C ? best_time(s, gemm_op, &g, run->quick ? 0.15 : 0.5) : -1;
    if (t <= 0) {
        add_error(run, p->id, name, "GEMM failed");
    } else {
        int cpu = p->is_host;
        /* GFLOP/s on CPUs, TFLOP/s on GPUs: figures a reader compares with a datasheet. */
        double scale = cpu ? 1e9 : 1e12;
        const char *unit = cpu ? "GFLOP/s" : "TFLOP/s";
        double gflops = 2.0 * (double)n * n * n / t / scale;
        double peak = p->peak_flops[a] / scale;
        ck_rate_rule rule =
            cpu ? (ck_rate_rule){run->targets->cpu_gemm_pass_frac, run->targets->cpu_gemm_fail_frac}
                : (ck_rate_rule){run->targets->gemm_pass_frac, run->targets->gemm_fail_frac};
        const char *fix = cpu ? "check the kernels chosen (device cpu_kernels above), "
                                "KMUX_NUM_THREADS and CPU frequency scaling (cpupower)"
                              : "check clocks and power caps (nvidia-smi -q -d CLOCK,POWER / "
                                "rocm-smi), thermal throttling, and the implementation "
                                "(KMUX_VERBOSE=1)";
        ck_verdict v = ck_judge_rate(gflops, peak, rule, cpu && busy, unit,
                                     "the device reports no peak for this dtype", fix);
        add(run, p->id, name, &v, gflops, peak > 0 ? peak * rule.pass_frac : NAN, unit);
    }
    kmux_free(dev, g.A);
    kmux_free(dev, g.B);
    kmux_free(dev, g.C);
}

/* ---- copies --------------------------------------------------------------------------------- */

typedef struct copy_ctx {
    void *dst;
    const void *src;
    size_t bytes;
    kmux_memcpy_kind kind;
} copy_ctx;

static kmux_status copy_op(kmux_stream *s, void *p) {
    copy_ctx *c = p;
    return kmux_memcpy(s, c->dst, c->src, c->bytes, c->kind);
}

static void check_device_copy(ck_run *run, kmux_stream *s, const kmux_device_props *p) {
    kmux_device *dev = kmux_stream_device(s);
    size_t bytes = (size_t)(run->quick ? 256 : 1024) << 20;
    copy_ctx c = {NULL, NULL, bytes, KMUX_MEMCPY_DEVICE_TO_DEVICE};
    void *src = NULL;
    if (kmux_malloc(dev, bytes, &c.dst) != KMUX_OK || kmux_malloc(dev, bytes, &src) != KMUX_OK ||
        kmux_memset(s, src, 0x5a, bytes) != KMUX_OK) {
        add_error(run, p->id, "device_copy", "allocation");
    } else {
        c.src = src;
        double t = best_time(s, copy_op, &c, run->quick ? 0.1 : 0.3);
        if (t <= 0) {
            add_error(run, p->id, "device_copy", "copy failed");
        } else {
            double gbps = 2.0 * (double)bytes / t / 1e9; /* read + write, as BabelStream copy */
            ck_rate_rule rule = {run->targets->devmem_pass_frac, run->targets->devmem_fail_frac};
            ck_verdict v = ck_judge_rate(gbps, p->mem_bandwidth_gbps, rule, 0, "GB/s",
                                         "the device reports no memory bandwidth",
                                         "check memory clocks (nvidia-smi -q -d CLOCK / rocm-smi "
                                         "--showmclkrange) and ECC page retirement");
            add(run, p->id, "device_copy", &v, gbps,
                p->mem_bandwidth_gbps > 0 ? p->mem_bandwidth_gbps * rule.pass_frac : NAN, "GB/s");
        }
    }
    kmux_free(dev, c.dst);
    kmux_free(dev, src);
}

/* Per-direction host link rate: the target file, then the backend's facts. */
static double link_rate(ck_run *run, kmux_device *dev, char *what, size_t size) {
    if (run->targets->link_rate_gbps > 0) {
        snprintf(what, size, "link_rate_gbps of %s", run->targets->origin);
        return run->targets->link_rate_gbps;
    }
    kmux_device_diag d;
    memset(&d, 0, sizeof d);
    d.struct_size = sizeof d;
    int have = kmux_device_diag_get(dev, &d) == KMUX_OK;
    if (have && d.link_rate_gbps > 0) {
        snprintf(what, size, "link");
        return d.link_rate_gbps;
    }
    /* What the link can carry: the device's maximum (an idle GPU lowers its current speed). */
    int gen = have ? d.pcie_max_gen : 0, width = have ? d.pcie_max_width : 0;
    if (gen <= 0 || width <= 0) {
        kmux_device_props p;
        int g, w;
        if (kmux_device_props_get(dev, &p) == KMUX_OK)
            ck_sys_pci_link(p.pci_bus_id, &g, &w, &gen, &width);
    }
    double rate = ck_pcie_rate_gbps(gen, width);
    if (rate > 0)
        snprintf(what, size, "PCIe Gen%d x%d", gen, width);
    else
        snprintf(what, size,
                 "link rate unknown (no PCIe generation and width reported; set "
                 "link_rate_gbps in --target-file)");
    return rate;
}

/* Both directions between host buffer h and device buffer d, each judged against the link. */
static void measure_host_copies(ck_run *run, kmux_stream *s, const kmux_device_props *p,
                                double rate, const char *what, unsigned char *h, void *d,
                                size_t bytes, const char *const names[2], double pass_frac) {
    static const kmux_memcpy_kind kinds[2] = {KMUX_MEMCPY_HOST_TO_DEVICE,
                                              KMUX_MEMCPY_DEVICE_TO_HOST};
    for (int k = 0; k < 2; k++) {
        copy_ctx c = {k == 0 ? d : (void *)h, k == 0 ? (const void *)h : d, bytes, kinds[k]};
        double t = best_time(s, copy_op, &c, run->quick ? 0.1 : 0.3);
        if (t <= 0) {
            add_error(run, p->id, names[k], "copy failed");
            continue;
        }
        double gbps = (double)bytes / t / 1e9;
        ck_rate_rule rule = {pass_frac, 0.0};
        char fix[256];
        snprintf(fix, sizeof fix,
                 "check the link (lspci -vv: LnkSta against LnkCap; a card trained at x8 or an "
                 "older generation), NUMA placement (numactl --cpunodebind near the GPU), IOMMU "
                 "passthrough");
        ck_verdict v = ck_judge_rate(gbps, rate, rule, 0, "GB/s", what, fix);
        if (rate > 0) {
            size_t len = strlen(v.detail);
            snprintf(v.detail + len, sizeof v.detail - len, "; %s", what);
        }
        add(run, p->id, names[k], &v, gbps, rate > 0 ? rate * rule.pass_frac : NAN, "GB/s");
    }
}

static void check_host_copies(ck_run *run, kmux_stream *s, const kmux_device_props *p) {
    kmux_device *dev = kmux_stream_device(s);
    char what[160];
    double rate = link_rate(run, dev, what, sizeof what);
    size_t bytes = (size_t)(run->quick ? 64 : 256) << 20;
    void *d = NULL;
    if (kmux_malloc(dev, bytes, &d) != KMUX_OK) {
        add_error(run, p->id, "h2d_pinned", "allocation");
        return;
    }
    static const char *const pinned[2] = {"h2d_pinned", "d2h_pinned"};
    static const char *const pageable[2] = {"h2d_pageable", "d2h_pageable"};
    /* Pinned: kmux_host_malloc (cudaHostAlloc / hipHostMalloc); a plugin without it is a SKIP. */
    void *hp = NULL;
    kmux_status st = kmux_host_malloc(dev, bytes, &hp);
    if (st == KMUX_OK) {
        memset(hp, 0x3c, bytes);
        measure_host_copies(run, s, p, rate, what, hp, d, bytes, pinned,
                            run->targets->h2d_pinned_pass_frac);
        kmux_host_free(dev, hp);
    } else {
        ck_verdict skip;
        memset(&skip, 0, sizeof skip);
        skip.status = st == KMUX_ERR_UNSUPPORTED ? CK_SKIP : CK_FAIL;
        snprintf(skip.detail, sizeof skip.detail, "not measured: %s", kmux_last_error());
        if (st != KMUX_ERR_UNSUPPORTED)
            snprintf(skip.hint, sizeof skip.hint,
                     "page-locked allocation failed: check the locked-memory limit (ulimit -l) "
                     "and free host memory");
        for (int k = 0; k < 2; k++)
            add(run, p->id, pinned[k], &skip, NAN, NAN, "GB/s");
    }
    unsigned char *h = malloc(bytes);
    if (!h) {
        add_error(run, p->id, "h2d_pageable", "allocation");
    } else {
        memset(h, 0x3c, bytes);
        measure_host_copies(run, s, p, rate, what, h, d, bytes, pageable,
                            run->targets->h2d_pageable_pass_frac);
    }
    kmux_free(dev, d);
    free(h);
}

/* ---- CPU memory: STREAM triad a = b + s * c, as McCalpin's STREAM (24 bytes per element) -- */

typedef struct triad_job {
    double *a;
    const double *b, *c;
    size_t begin, end;
} triad_job;

static void *triad_worker(void *p) {
    triad_job *j = p;
    for (size_t i = j->begin; i < j->end; i++)
        j->a[i] = j->b[i] + 3.0 * j->c[i];
    return NULL;
}

static double triad_once(double *a, const double *b, const double *c, size_t n, int threads) {
    pthread_t tid[256];
    int started[256];
    triad_job jobs[256];
    if (threads > 256) threads = 256;
    double t0 = now_s();
    for (int i = 0; i < threads; i++) {
        jobs[i] = (triad_job){a, b, c, n * i / threads, n * (i + 1) / threads};
        started[i] = pthread_create(&tid[i], NULL, triad_worker, &jobs[i]) == 0;
        if (!started[i]) triad_worker(&jobs[i]); /* no thread: do its share here */
    }
    for (int i = 0; i < threads; i++)
        if (started[i]) pthread_join(tid[i], NULL);
    return now_s() - t0;
}

static void check_cpu_stream(ck_run *run, int busy) {
    size_t n = (size_t)(run->quick ? 4 : 16) << 20; /* 3 x 32 MiB (quick) or 3 x 128 MiB */
    double *a = malloc(n * sizeof *a), *b = malloc(n * sizeof *b), *c = malloc(n * sizeof *c);
    if (!a || !b || !c) {
        ck_verdict v = {CK_SKIP, "not measured: out of host memory", ""};
        add(run, "host", "stream_triad", &v, NAN, NAN, "GB/s");
        free(a), free(b), free(c);
        return;
    }
    for (size_t i = 0; i < n; i++) /* first touch, pages mapped before timing */
        a[i] = 0, b[i] = 1.0, c[i] = 2.0;
    int threads = ck_sys_online_cpus();
    double best = 1e30;
    for (int rep = 0; rep < (run->quick ? 4 : 10); rep++) {
        double t = triad_once(a, b, c, n, threads);
        if (t < best) best = t;
    }
    double gbps = 24.0 * (double)n / best / 1e9;
    char reason[256] = "", what[320];
    int modules = 0, mts = 0;
    double peak = run->targets->cpu_mem_peak_gbps;
    if (peak > 0)
        snprintf(what, sizeof what, "cpu_mem_peak_gbps of %s", run->targets->origin);
    else
        peak = ck_sys_dram_peak_gbps(reason, sizeof reason, &modules, &mts);
    if (peak > 0 && !run->targets->cpu_mem_peak_gbps)
        snprintf(what, sizeof what, "%d modules x %d MT/s x 8 B", modules, mts);
    else if (peak <= 0)
        snprintf(what, sizeof what, "DRAM peak unknown: %s", reason);
    ck_rate_rule rule = {run->targets->cpu_stream_pass_frac, 0.0};
    ck_verdict v = ck_judge_rate(gbps, peak, rule, busy, "GB/s", what,
                                 "check that every memory channel is populated (dmidecode -t "
                                 "memory) and the BIOS memory speed");
    if (peak > 0) {
        size_t len = strlen(v.detail);
        snprintf(v.detail + len, sizeof v.detail - len, "; %s; %d threads", what, threads);
    }
    add(run, "host", "stream_triad", &v, gbps, peak > 0 ? peak * rule.pass_frac : NAN, "GB/s");
    free(a);
    free(b);
    free(c);
}

void ck_check_speed(ck_run *run) {
    int busy = ck_sys_host_busy();
    if (!run->want_cpu && run->device_count == 0) return; /* nothing to time */
    if (busy) {
        ck_verdict v = {CK_WARN, "", "rerun on an idle machine for meaningful CPU figures"};
        snprintf(v.detail, sizeof v.detail,
                 "load average %.1f on %d CPUs: other work competes with the measurements",
                 ck_sys_loadavg(), ck_sys_online_cpus());
        add(run, "host", "idle", &v, ck_sys_loadavg(), NAN, "");
    }
    if (run->want_cpu) check_cpu_stream(run, busy);
    for (int i = 0; i < run->device_count; i++) {
        kmux_device *dev = run->devices[i];
        kmux_device_props p;
        kmux_stream *s = NULL;
        if (kmux_device_props_get(dev, &p) != KMUX_OK || kmux_stream_create(dev, &s) != KMUX_OK)
            continue;
        if (p.is_host) {
            check_gemm(run, s, &p, KMUX_F32, KMUX_F32, run->quick ? 768 : 2048, busy);
        } else {
            int64_t n = run->quick ? 4096 : 8192;
            static const kmux_dtype types[][2] = {{KMUX_BF16, KMUX_BF16},
                                                  {KMUX_F16, KMUX_F16},
                                                  {KMUX_F32, KMUX_F32},
                                                  {KMUX_F8_E4M3, KMUX_BF16},
                                                  {KMUX_F8_E4M3_FNUZ, KMUX_BF16}};
            for (size_t t = 0; t < sizeof types / sizeof types[0]; t++)
                if (p.dtype_support[types[t][0]])
                    check_gemm(run, s, &p, types[t][0], types[t][1], n, 0);
            check_device_copy(run, s, &p);
            check_host_copies(run, s, &p);
        }
        kmux_stream_destroy(s);
    }
}
