/*
 * tune.c - a new plan with several implementations starts at the fastest one for its exact
 * problem: the verdict of the on-disk cache (tune_cache.c) when there is one for this machine,
 * these library versions and this problem, else a measurement made here once. On a GPU the
 * scratch operands are the device's memory and a sample is timed by the device's events (the
 * calls queued back to back), as cuBLASLt's and MIOpen's own tuners time their candidates.
 *
 * The measurement runs every implementation on scratch operands of the plan's real shape (bytes
 * 0x3f: finite, moderate values in every dtype): a warm-up round (each implementation once, in
 * order), then timed rounds in serpentine order until KMUX_TUNE_BUDGET_MS (default 200 ms) has
 * passed (see measure); a sample is >= 1 ms of calls and an implementation's median sample counts
 * (its minimum only prunes: see PRUNE_FACTOR). The warm-up
 * round stops starting new implementations once the budget has passed, one timed round always
 * follows it, and no round starts after the budget, so the cost of tuning is bounded by the
 * budget plus two rounds. oneDNN's reference kernels
 * ("...:ref...") are never timed beyond the default: they are orders of magnitude slower and
 * would only burn the budget.
 */
#define _POSIX_C_SOURCE 200809L
#include "tune.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "auto.h"
#include "dispatch/common/kmux_dtype_desc.h"
#include "validate.h"
#include "verbose.h"

#define OPS(dev) ((dev)->backend->ops)
#define STATE(dev) ((dev)->backend->state)
#define KMUX_TUNE_MAX_IMPLS 16
#define KMUX_TUNE_MAX_BYTES ((size_t)1 << 30) /* scratch operands beyond this: no tuning */

static double now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec * 1e-6;
}

int kmux_tune_enabled(const kmux_plan_prefs *prefs, const kmux_device *dev) {
    if (prefs->tune == KMUX_TUNE_ON) return 1;
    if (prefs->tune == KMUX_TUNE_OFF) return 0;
    const char *e = getenv("KMUX_TUNE");
    if (!e || !e[0]) return dev->measured;
    return strcmp(e, "1") == 0 || strcmp(e, "on") == 0;
}

static double budget_ms(void) {
    const char *e = getenv("KMUX_TUNE_BUDGET_MS");
    if (e && e[0]) {
        char *end = NULL;
        double v = strtod(e, &end);
        if (end != e && *end == '\0' && v > 0 && v < 600000) return v;
    }
    return 200.0;
}

/* Tabs and newlines would break the cache's line format. */
static void sanitize(char *s) {
    for (; *s; s++)
        if (*s == '\t' || *s == '\n' || *s == '\r') *s = ' ';
}

static void make_key(const kmux_plan *pl, const kmux_plan_prefs *prefs, char *key, size_t size) {
    const kmux_device *dev = pl->dev;
    char fp[256], shape[256], types[96];
    kmux_tune_fingerprint(fp, sizeof fp);
    if (pl->kind == KMUX_PLAN_MATMUL) {
        const kmux_matmul_desc *d = &pl->desc.matmul;
        kmux_trace_problem_matmul(d, shape, sizeof shape);
        snprintf(types, sizeof types,
                 "matmul:%s:%s:%s:%s:bias_%s:epi%u:lda%lldldb%lldldc%lld:sa%lldsb%lldsc%lld",
                 kmux_dtype_name(d->a_type), kmux_dtype_name(d->b_type), kmux_dtype_name(d->c_type),
                 kmux_compute_type_name(d->compute_type), kmux_dtype_name(d->bias_type),
                 d->epilogue, (long long)d->lda, (long long)d->ldb, (long long)d->ldc,
                 (long long)d->stride_a, (long long)d->stride_b, (long long)d->stride_c);
    } else {
        const kmux_conv2d_desc *d = &pl->desc.conv;
        kmux_trace_problem_conv(d, shape, sizeof shape);
        /* the benchdnn grammar implies bottom/right padding from the output size: keep them */
        snprintf(types, sizeof types, "conv2d:%s:%s:pb%lldpr%lld", kmux_dtype_name(d->x_type),
                 kmux_compute_type_name(d->compute_type), (long long)d->pad_bottom,
                 (long long)d->pad_right);
    }
    snprintf(key, size, "%s|kmux %s|%s %s (%s)|%s|threads=%d|%s|%s|emu%d,det%d,fa%d,ws%zu", fp,
             KMUX_VERSION_STRING, dev->backend->name, dev->backend->version,
             dev->props.library_version, dev->props.id, dev->ctx->num_threads, types, shape,
             prefs->allow_emulation, prefs->require_deterministic, prefs->allow_fast_accumulation,
             prefs->max_workspace_bytes);
    sanitize(key);
}

/* Scratch operands of the plan's shape. */
typedef struct tune_bufs {
    void *p[8]; /* A, B, C, bias (matmul) or x, w, y, bias (conv); the fp8 scales on a GPU; the
                   workspace of a plan made with prefs.caller_workspace (the largest any of its
                   implementations needs: the plan itself allocates none); the epilogue's aux
                   and bias_grad */
    size_t bytes[8];
    void *ev[2]; /* on a GPU: the events around each sample */
    float scale[3];
    double alpha_d, beta_d;
    float alpha_f, beta_f;
    int32_t alpha_i, beta_i;
} tune_bufs;

/* Byte sizes of A, B, C, bias (matmul) or x, w, y, bias (conv), and of the epilogue's aux and
 * bias_grad (bytes[6], bytes[7]); 0 when out of range. */
static int operand_bytes(const kmux_plan *pl, size_t bytes[8]) {
    memset(bytes, 0, 8 * sizeof bytes[0]);
    if (pl->kind == KMUX_PLAN_MATMUL) {
        const kmux_matmul_desc *d = &pl->desc.matmul;
        kmux_matmul_operand_bytes(d, bytes);
        if (d->epilogue & KMUX_EPILOGUE_WITH_AUX) bytes[6] = kmux_matmul_aux_bytes(d);
        if (d->epilogue & (KMUX_EPILOGUE_BGRADA | KMUX_EPILOGUE_BGRADB))
            bytes[7] = (size_t)((d->epilogue & KMUX_EPILOGUE_BGRADA) ? d->m : d->n) *
                       kmux_dtype_bytes(d->bias_type);
    } else {
        kmux_conv_tensor_bytes(&pl->desc.conv, bytes);
        bytes[3] = kmux_conv_bias_bytes(&pl->desc.conv);
        bytes[6] = kmux_conv_aux_bytes(&pl->desc.conv);
    }
    size_t total = bytes[0] + bytes[1] + bytes[2] + bytes[3] + bytes[6] + bytes[7];
    return total > 0 && total <= KMUX_TUNE_MAX_BYTES;
}

static void free_bufs(kmux_device *dev, tune_bufs *b) {
    for (int i = 0; i < 8; i++)
        if (b->p[i]) OPS(dev)->mem_free(STATE(dev), dev->index, b->p[i]);
    for (int i = 0; i < 2; i++)
        if (b->ev[i]) OPS(dev)->event_destroy(STATE(dev), b->ev[i]);
}

/* The scratch operands in the device's memory, filled on `stream` (a GPU's memory is not the
 * host's: kmux_memset and kmux_memcpy, then a synchronize); on a GPU also the two events that
 * time every sample. */
static int alloc_bufs(kmux_plan *pl, void *stream, tune_bufs *b) {
    kmux_device *dev = pl->dev;
    const kmux_backend_ops *o = OPS(dev);
    if (!operand_bytes(pl, b->bytes)) return 0;
    b->scale[0] = b->scale[1] = b->scale[2] = 1.0f;
    b->bytes[4] = dev->props.is_host ? 0 : sizeof b->scale;
    for (int i = 0; pl->caller_ws && i < pl->impl_count; i++) {
        size_t need = kmux_plan_workspace_need(pl, i);
        if (need > b->bytes[5]) b->bytes[5] = need;
    }
    kmux_status st = KMUX_OK;
    for (int i = 0; i < 8 && st == KMUX_OK; i++) {
        if (!b->bytes[i]) continue;
        st = o->mem_alloc(STATE(dev), dev->index, b->bytes[i], &b->p[i]);
        if (st == KMUX_OK && (i < 4 || i >= 6))
            st = o->mem_set(STATE(dev), stream, b->p[i], 0x3f, b->bytes[i]);
    }
    if (st == KMUX_OK && b->p[4])
        st = o->mem_copy(STATE(dev), stream, b->p[4], b->scale, sizeof b->scale,
                         KMUX_MEMCPY_HOST_TO_DEVICE);
    for (int i = 0; i < 2 && st == KMUX_OK && !dev->props.is_host; i++)
        st = o->event_create(STATE(dev), dev->index, &b->ev[i]);
    if (st == KMUX_OK) st = o->stream_synchronize(STATE(dev), stream);
    if (st != KMUX_OK) {
        free_bufs(dev, b);
        return 0;
    }
    b->alpha_d = b->alpha_f = 1.0f;
    b->beta_d = b->beta_f = 0.0f;
    b->alpha_i = 1;
    b->beta_i = 0;
    return 1;
}

/* Queues one run of implementation impl on the stream. */
static kmux_status launch(kmux_plan *pl, void *stream, int impl, tune_bufs *b) {
    kmux_device *dev = pl->dev;
    const float *scale = b->p[4] ? (const float *)b->p[4] : b->scale; /* the device's memory */
    kmux_status st;
    if (pl->kind == KMUX_PLAN_MATMUL) {
        const kmux_matmul_desc *d = &pl->desc.matmul;
        kmux_matmul_args a = KMUX_MATMUL_ARGS_INIT;
        a.alpha = d->compute_type == KMUX_COMPUTE_F64   ? (const void *)&b->alpha_d
                  : d->compute_type == KMUX_COMPUTE_I32 ? (const void *)&b->alpha_i
                                                        : (const void *)&b->alpha_f;
        a.beta = d->compute_type == KMUX_COMPUTE_F64   ? (const void *)&b->beta_d
                 : d->compute_type == KMUX_COMPUTE_I32 ? (const void *)&b->beta_i
                                                       : (const void *)&b->beta_f;
        a.A = b->p[0];
        a.B = b->p[1];
        a.C = b->p[2];
        a.bias = b->p[3];
        a.aux = b->p[6];
        a.bias_grad = b->p[7];
        if (kmux_dtype_is_fp8(d->a_type)) a.a_scale = &scale[0];
        if (kmux_dtype_is_fp8(d->b_type)) a.b_scale = &scale[1];
        if (kmux_dtype_is_fp8(d->c_type)) a.d_scale = &scale[2];
        a.workspace = b->p[5];
        a.workspace_bytes = b->bytes[5];
        st = OPS(dev)->matmul->execute(STATE(dev), pl->native, impl, stream, &a);
    } else {
        kmux_conv2d_args a = KMUX_CONV2D_ARGS_INIT;
        a.alpha = &b->alpha_f;
        a.beta = &b->beta_f;
        a.x = b->p[0];
        a.w = b->p[1];
        a.y = b->p[2];
        a.bias = b->p[3];
        a.aux = b->p[6];
        a.workspace = b->p[5];
        a.workspace_bytes = b->bytes[5];
        st = OPS(dev)->conv2d->execute(STATE(dev), pl->native, impl, stream, &a);
    }
    return st;
}

/* One run of implementation impl, waited for; its time in ms (the host's clock), < 0 on
 * failure. */
static double run_once(kmux_plan *pl, void *stream, int impl, tune_bufs *b) {
    kmux_device *dev = pl->dev;
    double t0 = now_ms();
    kmux_status st = launch(pl, stream, impl, b);
    if (st == KMUX_OK) st = OPS(dev)->stream_synchronize(STATE(dev), stream);
    return st == KMUX_OK ? now_ms() - t0 : -1.0;
}

static const char *impl_name(kmux_plan *pl, int impl, kmux_plan_info *info) {
    int saved = pl->impl;
    pl->impl = impl;
    kmux_status st = kmux_plan_info_get(pl, info);
    pl->impl = saved;
    return st == KMUX_OK ? info->impl : "?";
}

/* Calls per sample: enough for SAMPLE_MIN_MS, so that a 0.1 ms call is not timed alone
 * (timer and thread wake-up noise); at most SAMPLE_MAX_CALLS. */
#define SAMPLE_MIN_MS 1.0
#define SAMPLE_MAX_CALLS 64
#define MAX_ROUNDS 16
/* After two timed rounds, an implementation slower than this factor times the best so far is
 * not timed again: it cannot win, and the budget goes to the close contenders. */
#define PRUNE_FACTOR 1.5

typedef struct tune_cand {
    int alive, calls;
    double best; /* ms per call, the minimum over its samples (the warm-up run until timed) */
    double samples[MAX_ROUNDS]; /* ms per call of each timed round */
    int n;                      /* timed samples */
} tune_cand;

/* The median of an implementation's timed samples (the warm-up run when none was timed), the
 * score of its verdict: the minimum let a transient speed-up decide (a 2-core VM's clock moved
 * between 3.3 and 4.0 GHz within a run, and ResNet-50 res5a_branch2a backward-data went to
 * jit_1x1 at 1.12 ms over gemm:jit at 1.05 in one tuning out of three), the median of the
 * serpentine rounds does not. */
static double score(const tune_cand *c) {
    if (c->n == 0) return c->best;
    double v[MAX_ROUNDS];
    memcpy(v, c->samples, (size_t)c->n * sizeof v[0]);
    for (int i = 1; i < c->n; i++) /* insertion sort: at most MAX_ROUNDS samples */
        for (int j = i; j > 0 && v[j] < v[j - 1]; j--) {
            double t = v[j];
            v[j] = v[j - 1];
            v[j - 1] = t;
        }
    return c->n % 2 ? v[c->n / 2] : 0.5 * (v[c->n / 2 - 1] + v[c->n / 2]);
}

/* On a GPU: cd->calls runs queued back to back between two events, ms per run by the device's
 * clock (as cudaEventElapsedTime), so that neither the launch latency nor the synchronisation
 * is counted; < 0 on failure. */
static double sample_device(kmux_plan *pl, void *stream, int i, const tune_cand *cd, tune_bufs *b) {
    kmux_device *dev = pl->dev;
    const kmux_backend_ops *o = OPS(dev);
    float ms = -1.0f;
    kmux_status st = o->event_record(STATE(dev), b->ev[0], stream);
    for (int k = 0; k < cd->calls && st == KMUX_OK; k++)
        st = launch(pl, stream, i, b);
    if (st == KMUX_OK) st = o->event_record(STATE(dev), b->ev[1], stream);
    if (st == KMUX_OK) st = o->event_synchronize(STATE(dev), b->ev[1]);
    if (st == KMUX_OK) st = o->event_elapsed_ms(STATE(dev), b->ev[0], b->ev[1], &ms);
    if (st != KMUX_OK) (void)o->stream_synchronize(STATE(dev), stream); /* nothing left queued */
    return st == KMUX_OK && ms >= 0.0f ? (double)ms / cd->calls : -1.0;
}

/* One sample of implementation i: cd->calls runs, ms per run; < 0 on failure. */
static double sample(kmux_plan *pl, void *stream, int i, const tune_cand *cd, tune_bufs *b) {
    if (!pl->dev->props.is_host) return sample_device(pl, stream, i, cd, b);
    double sum = 0;
    for (int k = 0; k < cd->calls; k++) {
        double t = run_once(pl, stream, i, b);
        if (t < 0) return -1;
        sum += t;
    }
    return sum / cd->calls;
}

/* Times implementations [lo, hi) within budget ms into cd[] (see measure). */
static void measure_range(kmux_plan *pl, void *stream, tune_bufs *b, int lo, int hi, double budget,
                          tune_cand *cd) {
    kmux_device *dev = pl->dev;
    const double t_start = now_ms();
    kmux_plan_info info;
    for (int i = lo; i < hi; i++) {
        const char *name = impl_name(pl, i, &info);
        if (i > lo && now_ms() - t_start > budget) {
            kmux_trace(2, "tune,%s,budget of %.0f ms spent: %s and later not timed", dev->props.id,
                       budget, name);
            break;
        }
        if (i > 0 && strstr(name, ":ref")) continue;
        double t = run_once(pl, stream, i, b);
        if (t < 0) {
            kmux_trace(2, "tune,%s,%s failed: %s", dev->props.id, name, kmux_last_error());
            continue;
        }
        cd[i].alive = 1;
        cd[i].best = t;
        cd[i].calls = t >= SAMPLE_MIN_MS                     ? 1
                      : t * SAMPLE_MAX_CALLS < SAMPLE_MIN_MS ? SAMPLE_MAX_CALLS
                                                             : (int)(SAMPLE_MIN_MS / t) + 1;
    }
    /* at least one timed round: when the warm-up alone spends the budget (calls of tens of ms,
     * a convolution of mb32 with 8 implementations), its runs carry each implementation's
     * one-time costs (first touch of its workspace, tens of MB for the "+reorder" ones) and
     * picked the wrong one (conv 3x3 mb32 ic64 56^2 NCHW: gemm:jit at 190 GFLOP/s over
     * brgconv+reorder at 305, Zen 5 EPYC) */
    int rounds = 0;
    for (; rounds < MAX_ROUNDS && (rounds == 0 || now_ms() - t_start < budget); rounds++) {
        for (int j = lo; j < hi; j++) {
            const int i = rounds % 2 ? hi - 1 - (j - lo) : j;
            if (!cd[i].alive) continue;
            double t = sample(pl, stream, i, &cd[i], b);
            if (t < 0) {
                kmux_trace(2, "tune,%s,%s failed: %s", dev->props.id, impl_name(pl, i, &info),
                           kmux_last_error());
                cd[i].alive = 0;
                cd[i].best = -1;
            } else {
                if (rounds == 0 || t < cd[i].best)
                    cd[i].best = t; /* round 0 replaces the warm-up run and its one-time costs */
                if (cd[i].n < MAX_ROUNDS) cd[i].samples[cd[i].n++] = t;
            }
        }
        if (rounds >= 1) {
            double lead = -1;
            for (int i = lo; i < hi; i++)
                if (cd[i].alive && (lead < 0 || cd[i].best < lead)) lead = cd[i].best;
            for (int i = lo; i < hi; i++)
                if (cd[i].alive && cd[i].best > PRUNE_FACTOR * lead) cd[i].alive = 0;
        }
    }
    kmux_trace(2, "tune,%s,implementations %d..%d: %d timed rounds in %.1f ms", dev->props.id, lo,
               hi - 1, rounds, now_ms() - t_start);
}

static void pause_ms(double ms) {
    struct timespec ts = {(time_t)(ms / 1000), (long)(fmod(ms, 1000.0) * 1e6)};
    while (nanosleep(&ts, &ts) != 0) {
    }
}

/* Times the implementations; the index of the fastest (0 when nothing could be timed).
 *
 * Warm-up round: each implementation runs once in order (primitive caches, JIT, page faults); it
 * sets the calls per sample. Then timed rounds in serpentine order (0 1 .. n-1, n-1 .. 1 0, ...,
 * as kmux-bench's rounds) until the budget is spent, so that a machine that slows down for a while
 * slows every implementation, not only the ones timed in that while. The median sample counts
 * (score); the minimum prunes.
 *
 * Implementations on a device whose workers keep running after a call (kmux_device_caps
 * settle_ms, reported by cpu:openblas with its pthreads server) are timed first, and the others
 * after a pause of that long: OpenBLAS's workers spin for ~0.1 s after every call and slowed a
 * oneDNN call in that window 2-3x on 2 cores (README "Performance note"), which made oneDNN lose
 * verdicts on cpu:auto it wins alone (1760x64x1760: 10.6 ms timed after OpenBLAS, 4.4 ms alone). */
static int measure(kmux_plan *pl, double *best_ms) {
    kmux_device *dev = pl->dev;
    tune_bufs b;
    memset(&b, 0, sizeof b);
    *best_ms = 0;
    if (pl->kind == KMUX_PLAN_MATMUL && !dev->props.is_host &&
        pl->desc.matmul.pointer_mode == KMUX_POINTER_MODE_DEVICE) {
        /* its alpha and beta would have to be device memory too; its implementations are the own
         * kernel's tiles, which the default order already ranks */
        kmux_trace(2, "tune,%s,not timed: alpha and beta in device memory (pointer_mode)",
                   dev->props.id);
        return 0;
    }
    void *stream = NULL;
    if (OPS(dev)->stream_create(STATE(dev), dev->index, NULL, 1, &stream) != KMUX_OK) {
        kmux_trace(2, "tune,%s,not timed: no stream: %s", dev->props.id, kmux_last_error());
        return 0;
    }
    if (!alloc_bufs(pl, stream, &b)) {
        kmux_trace(2, "tune,%s,not timed: scratch operands too large or out of memory",
                   dev->props.id);
        OPS(dev)->stream_destroy(STATE(dev), stream);
        return 0;
    }
    const double budget = budget_ms();
    const int count = pl->impl_count < KMUX_TUNE_MAX_IMPLS ? pl->impl_count : KMUX_TUNE_MAX_IMPLS;
    tune_cand cd[KMUX_TUNE_MAX_IMPLS];
    memset(cd, 0, sizeof cd);
    /* Runs of consecutive implementations: one per settling device (a cpu:auto plan has one run
     * per routed device), while neighbours that do not settle stay in one run, so that they are
     * timed in one rotation and pruned against one leader. The settling runs are timed first,
     * each followed by its pause when anything is left, then the others; the budget is shared by
     * implementation count. */
    int run_lo[KMUX_TUNE_MAX_IMPLS], run_hi[KMUX_TUNE_MAX_IMPLS], runs = 0;
    for (int i = 0; i < count; i++) {
        const kmux_device *d = kmux_auto_impl_device(pl, i), *prev = NULL;
        if (i > 0) prev = kmux_auto_impl_device(pl, i - 1);
        const int calm = d->caps.settle_ms <= 0, prev_calm = prev && prev->caps.settle_ms <= 0;
        if (i == 0 || (d != prev && !(calm && prev_calm))) run_lo[runs++] = i;
        run_hi[runs - 1] = i + 1;
    }
    for (int pass = 0, timed = 0; pass < 2; pass++) {
        for (int r = 0; r < runs; r++) {
            const double settle = kmux_auto_impl_device(pl, run_lo[r])->caps.settle_ms;
            if ((settle > 0) != (pass == 0)) continue;
            measure_range(pl, stream, &b, run_lo[r], run_hi[r],
                          budget * (run_hi[r] - run_lo[r]) / count, cd);
            timed += run_hi[r] - run_lo[r];
            if (settle > 0 && timed < count) {
                kmux_trace(2, "tune,%s,pause of %.0f ms for %s's workers to settle", dev->props.id,
                           settle, kmux_auto_impl_device(pl, run_lo[r])->props.id);
                pause_ms(settle);
            }
        }
    }
    int best = 0;
    double best_t = -1;
    kmux_plan_info info;
    for (int i = 0; i < count; i++) {
        if (cd[i].best <= 0) continue;
        const double t = score(&cd[i]);
        kmux_trace(2, "tune,%s,impl %d,%s,%.4f ms (median of %d, min %.4f)", dev->props.id, i,
                   impl_name(pl, i, &info), t, cd[i].n, cd[i].best);
        if (best_t < 0 || t < best_t) {
            best_t = t;
            best = i;
        }
    }
    OPS(dev)->stream_destroy(STATE(dev), stream);
    free_bufs(dev, &b);
    kmux_clear_error();
    *best_ms = best_t < 0 ? 0 : best_t;
    return best;
}

void kmux_tune_plan(kmux_plan *pl, const kmux_plan_prefs *prefs) {
    if (!pl->native || pl->impl_count < 2) return;
    char key[2048], path[1024], cached[256];
    make_key(pl, prefs, key, sizeof key);
    int have_path = kmux_tune_cache_path(path, sizeof path);
    int idx = 0;
    kmux_plan_info info;
    if (have_path && kmux_tune_cache_lookup(path, key, &idx, cached, sizeof cached)) {
        if (idx < pl->impl_count && strcmp(impl_name(pl, idx, &info), cached) == 0) {
            pl->impl = idx;
            kmux_trace(2, "tune,%s,cached verdict %d (%s) from %s", pl->dev->props.id, idx, cached,
                       path);
            return;
        }
        kmux_trace(2, "tune,%s,cached verdict %d (%s) from %s does not match this plan: retimed",
                   pl->dev->props.id, idx, cached, path);
    }
    double ms = 0;
    idx = measure(pl, &ms);
    pl->impl = idx;
    const char *name = impl_name(pl, idx, &info);
    kmux_trace(2, "tune,%s,verdict %d (%s) %.4f ms", pl->dev->props.id, idx, name, ms);
    if (have_path && ms > 0) {
        char n[256];
        snprintf(n, sizeof n, "%s", name);
        sanitize(n);
        kmux_tune_cache_store(path, key, idx, n, ms);
    }
}
