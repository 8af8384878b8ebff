/* kb_peaks.c - measured clock and bandwidth (cached), device peaks, roofline. */
#define _POSIX_C_SOURCE 200809L
#include "kb_peaks.h"

#include <ctype.h>
#include <errno.h>
#include <jansson.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "kb_util.h"
#include "kb_workload.h"

void kb_cpu_model(char *buf, size_t cap) {
    kb_strlcpy(buf, "unknown CPU", cap);
    FILE *f = fopen("/proc/cpuinfo", "r");
    if (!f) return;
    char line[512];
    while (fgets(line, sizeof line, f)) {
        /* x86: "model name"; arm64: "Model" or "CPU part" (no name) */
        if (!strncmp(line, "model name", 10) || !strncmp(line, "Model\t", 6)) {
            char *c = strchr(line, ':');
            if (c) {
                kb_strlcpy(buf, kb_strtrim(c + 1), cap);
                break;
            }
        }
    }
    fclose(f);
}

/* ---- STREAM triad --------------------------------------------------------------------------- */

typedef struct triad_arg {
    double *a, *b, *c;
    size_t lo, hi;
    int init;
} triad_arg;

static void *triad_worker(void *p) {
    triad_arg *t = p;
    if (t->init) { /* first touch by the thread that will use the pages */
        for (size_t i = t->lo; i < t->hi; ++i)
            t->a[i] = 0.0, t->b[i] = 1.0, t->c[i] = 2.0;
        return NULL;
    }
    const double s = 3.0;
    for (size_t i = t->lo; i < t->hi; ++i)
        t->a[i] = t->b[i] + s * t->c[i];
    return NULL;
}

static volatile uint64_t triad_sink;

static double triad_pass(double *a, double *b, double *c, size_t n, int threads, int init) {
    pthread_t tid[64];
    triad_arg args[64];
    if (threads > 64) threads = 64;
    if (threads < 1) threads = 1;
    double t0 = kb_now_s();
    for (int i = 0; i < threads; ++i) {
        args[i].a = a, args[i].b = b, args[i].c = c, args[i].init = init;
        args[i].lo = n * (size_t)i / (size_t)threads;
        args[i].hi = n * (size_t)(i + 1) / (size_t)threads;
        if (i > 0 && pthread_create(&tid[i], NULL, triad_worker, &args[i]) != 0) {
            triad_worker(&args[i]); /* no thread: do it here */
            tid[i] = pthread_self();
        }
    }
    triad_worker(&args[0]);
    for (int i = 1; i < threads; ++i)
        if (!pthread_equal(tid[i], pthread_self())) pthread_join(tid[i], NULL);
    return kb_now_s() - t0;
}

double kb_measure_triad_gbps(int threads, int *stable) {
    const size_t n = (size_t)24 << 20; /* 3 x 192 MiB: far beyond any last-level cache */
    double *a = malloc(n * sizeof *a), *b = malloc(n * sizeof *b), *c = malloc(n * sizeof *c);
    double gbps = 0.0;
    if (a && b && c) {
        triad_pass(a, b, c, n, threads, 1);
        double best = 1e30, second = 1e30;
        for (int r = 0; r < 6; ++r) {
            double t = triad_pass(a, b, c, n, threads, 0);
            if (t < best)
                second = best, best = t;
            else if (t < second)
                second = t;
        }
        gbps = 24.0 * (double)n / best / 1e9;
        if (stable) *stable = second < 1.05 * best;
        triad_sink = (uint64_t)a[n / 2]; /* keep the result alive */
    }
    free(a), free(b), free(c);
    return gbps;
}

/* ---- cache ---------------------------------------------------------------------------------- */

static void cache_path(char *buf, size_t cap) {
    const char *xdg = getenv("XDG_CACHE_HOME"), *home = getenv("HOME");
    if (xdg && *xdg)
        snprintf(buf, cap, "%s/kmux/bench-host.json", xdg);
    else if (home && *home)
        snprintf(buf, cap, "%s/.cache/kmux/bench-host.json", home);
    else
        buf[0] = '\0';
}

static void mkdir_parents(const char *file) {
    char dir[512];
    kb_strlcpy(dir, file, sizeof dir);
    for (char *p = dir + 1; *p; ++p) {
        if (*p != '/') continue;
        *p = '\0';
        if (mkdir(dir, 0755) != 0 && errno != EEXIST) return;
        *p = '/';
    }
}

void kb_host_measure_get(int threads, double clock_mhz, int use_cache, kb_host_measure *m) {
    memset(m, 0, sizeof *m);
    m->clock_mhz = clock_mhz;
    kb_cpu_model(m->cpu_model, sizeof m->cpu_model);
    m->threads = threads;
    cache_path(m->cache_path, sizeof m->cache_path);
    char key[200];
    snprintf(key, sizeof key, "%s|threads=%d", m->cpu_model, threads);
    json_t *root = NULL;
    if (m->cache_path[0]) root = json_load_file(m->cache_path, 0, NULL);
    if (!json_is_object(root)) {
        json_decref(root);
        root = json_object();
    }
    json_t *e = json_object_get(root, key);
    if (use_cache && json_is_object(e)) {
        double bw = json_number_value(json_object_get(e, "triad_gbps"));
        if (bw > 0) {
            m->triad_gbps = bw, m->from_cache = 1;
            json_decref(root);
            return;
        }
    }
    /* the two best passes must agree, else the machine is too busy for the figure to be cached */
    int stable = 0;
    m->triad_gbps = kb_measure_triad_gbps(threads, &stable);
    if (!stable || m->triad_gbps <= 0) m->cache_path[0] = '\0';
    if (m->cache_path[0]) {
        char date[32];
        time_t now = time(NULL);
        struct tm tmv;
        gmtime_r(&now, &tmv);
        strftime(date, sizeof date, "%Y-%m-%dT%H:%M:%SZ", &tmv);
        json_object_set_new(root, key,
                            json_pack("{s:f, s:s}", "triad_gbps", m->triad_gbps, "measured", date));
        mkdir_parents(m->cache_path);
        if (json_dump_file(root, m->cache_path, JSON_INDENT(2)) != 0) m->cache_path[0] = '\0';
    }
    json_decref(root);
}

/* ---- device peaks --------------------------------------------------------------------------- */

static const char *csv_column(kmux_dtype a, kmux_compute_type ct) {
    if (ct == KMUX_COMPUTE_F32_FAST_TF32) return "tf32_tensor_dense_tflops";
    switch (a) {
    case KMUX_F16:
        return "fp16_tensor_dense_tflops";
    case KMUX_BF16:
        return "bf16_tensor_dense_tflops";
    case KMUX_F8_E4M3:
    case KMUX_F8_E5M2:
    case KMUX_F8_E4M3_FNUZ:
    case KMUX_F8_E5M2_FNUZ:
        return "fp8_tensor_dense_tflops";
    case KMUX_I8:
        return "int8_tensor_dense_tops";
    case KMUX_F32:
        return "fp32_vector_tflops";
    default:
        return NULL;
    }
}

static int contains_ci(const char *hay, const char *needle) {
    size_t n = strlen(needle);
    if (!n) return 0;
    for (; *hay; ++hay) {
        size_t i = 0;
        while (i < n && hay[i] &&
               tolower((unsigned char)hay[i]) == tolower((unsigned char)needle[i]))
            ++i;
        if (i == n) return 1;
    }
    return 0;
}

void kb_device_peak(const kmux_device_props *props, kmux_dtype a, kmux_compute_type ct,
                    const kb_host_measure *hm, const char *peaks_csv, kb_peak *pk) {
    memset(pk, 0, sizeof *pk);
    int idx = (int)a;
    double f = idx >= 0 && idx < KMUX_DTYPE_COUNT ? props->peak_flops[idx] : 0.0;
    if (props->is_host) {
        /* the plugins' CPU model: usable cores x per-core rate x the shared measured clock */
        if (f > 0) {
            pk->flops = f;
            snprintf(pk->flops_source, sizeof pk->flops_source,
                     "device props: %d cores x CPU model x %.0f MHz", props->compute_units,
                     props->clock_mhz);
        }
        if (hm && hm->triad_gbps > 0) {
            pk->bw_gbps = hm->triad_gbps;
            kb_strlcpy(pk->bw_source, "measured STREAM triad", sizeof pk->bw_source);
        } else if (props->mem_bandwidth_gbps > 0) {
            pk->bw_gbps = props->mem_bandwidth_gbps;
            kb_strlcpy(pk->bw_source, "device props", sizeof pk->bw_source);
        }
        return;
    }
    if (f > 0) {
        pk->flops = f;
        kb_strlcpy(pk->flops_source, "device props", sizeof pk->flops_source);
    }
    if (props->mem_bandwidth_gbps > 0) {
        pk->bw_gbps = props->mem_bandwidth_gbps;
        kb_strlcpy(pk->bw_source, "device props", sizeof pk->bw_source);
    }
    if ((pk->flops > 0 && pk->bw_gbps > 0) || !peaks_csv) return;
    kb_csv csv;
    char err[128];
    if (!kb_csv_parse(peaks_csv, &csv, err, sizeof err)) return;
    size_t best = (size_t)-1, best_len = 0;
    for (size_t r = 0; r < csv.rows; ++r) {
        const char *dev = kb_csv_get(&csv, r, "device");
        if (contains_ci(props->name, dev) && strlen(dev) > best_len)
            best = r, best_len = strlen(dev);
    }
    if (best != (size_t)-1) {
        const char *col = csv_column(a, ct);
        double v;
        if (pk->flops <= 0 && col && kb_parse_double(kb_csv_get(&csv, best, col), &v) && v > 0) {
            pk->flops = v * 1e12;
            snprintf(pk->flops_source, sizeof pk->flops_source, "peaks.csv: %s %s (%s)",
                     kb_csv_get(&csv, best, "device"), kb_csv_get(&csv, best, "variant"),
                     kb_csv_get(&csv, best, "value_status"));
        }
        if (pk->bw_gbps <= 0 && kb_parse_double(kb_csv_get(&csv, best, "mem_bandwidth_GBps"), &v) &&
            v > 0) {
            pk->bw_gbps = v;
            snprintf(pk->bw_source, sizeof pk->bw_source, "peaks.csv: %s %s",
                     kb_csv_get(&csv, best, "device"), kb_csv_get(&csv, best, "variant"));
        }
    }
    kb_csv_free(&csv);
}

void kb_roofline_compute(double flops, double bytes, double flops_per_s, const kb_peak *pk,
                         kb_roofline *r) {
    memset(r, 0, sizeof *r);
    r->ai = bytes > 0 ? flops / bytes : 0.0;
    r->pct_peak = pk->flops > 0 ? 100.0 * flops_per_s / pk->flops : -1.0;
    if (pk->flops > 0 && pk->bw_gbps > 0) {
        r->ridge = pk->flops / (pk->bw_gbps * 1e9);
        double mem = r->ai * pk->bw_gbps * 1e9;
        r->attainable = mem < pk->flops ? mem : pk->flops;
        r->bound = r->ai < r->ridge ? "memory-bound" : "compute-bound";
    }
}
