/* kb_run.c - verify, then time, one problem on every target device, the devices interleaved
 * round by round. */
#define _POSIX_C_SOURCE 200809L /* nanosleep, clock_gettime (kmux_openblas_spin.h) */
#include "kb_run.h"

#include <math.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "kb_util.h"
#include "kb_values.h"
#include "cpu_model.h"
#include "kmux_openblas_spin.h"

/* Guard band before and after the output: 4 KiB keeps the output's alignment on every device. */
#define KB_GUARD_BYTES 4096

int kb_result_has_speed(const kb_result *r) {
    return r->timed && r->status == KMUX_OK &&
           (r->check.status == KB_VERIFY_PASSED || r->check.status == KB_VERIFY_NOT_RUN);
}

int kb_result_noisy(const kb_result *r) {
    return kb_result_has_speed(r) && r->noise.noisy;
}

typedef union scalar {
    double d;
    float f;
    int32_t i;
} scalar;

#define KB_MAX_ROTATIONS 64

typedef struct exec_ctx {
    kb_op op;
    kmux_plan *plan;
    kmux_stream *stream;
    scalar alpha, beta;
    kmux_matmul_args ma[KB_MAX_ROTATIONS];
    kmux_conv2d_args ca[KB_MAX_ROTATIONS];
    int nrot, next; /* calls cycle through nrot buffer sets (--cold) */
} exec_ctx;

static kmux_status exec_once(void *arg) {
    exec_ctx *e = arg;
    int i = e->next;
    e->next = (e->next + 1) % e->nrot;
    if (e->op == KB_OP_MATMUL) return kmux_matmul_execute(e->plan, e->stream, &e->ma[i]);
    return kmux_conv2d_execute(e->plan, e->stream, &e->ca[i]);
}

/* Extra copies of the operands for cold timing: enough sets that together they exceed
 * cold_bytes (far more than the last-level cache), so no call finds its data in the cache.
 * Set 0 is the verified one. Returns a status; rot[][] receives device buffers to free. */
static kmux_status add_rotations(exec_ctx *e, kb_target *tg, const kb_tensors *t,
                                 const size_t bytes[3], void *const host_real[3], double cold_bytes,
                                 void *rot[][3]) {
    double set = (double)(bytes[0] + bytes[1] + bytes[2]);
    int n = set > 0 ? (int)ceil(cold_bytes / set) : 1;
    if (n < 2) n = 2;
    if (n > KB_MAX_ROTATIONS) n = KB_MAX_ROTATIONS;
    kmux_status st = KMUX_OK;
    for (int k = 1; k < n && st == KMUX_OK; ++k) {
        for (int i = 0; i < 3 && st == KMUX_OK; ++i) {
            st = kmux_malloc(tg->dev, bytes[i], &rot[k][i]);
            if (st == KMUX_OK && i != t->out)
                st = kmux_memcpy(tg->stream, rot[k][i], host_real[i], bytes[i],
                                 KMUX_MEMCPY_HOST_TO_DEVICE);
        }
        if (st != KMUX_OK) break;
        e->ma[k] = e->ma[0];
        e->ma[k].A = rot[k][0], e->ma[k].B = rot[k][1], e->ma[k].C = rot[k][2];
        e->ca[k] = e->ca[0];
        e->ca[k].x = rot[k][0], e->ca[k].w = rot[k][1], e->ca[k].y = rot[k][2];
        e->nrot = k + 1;
    }
    if (st == KMUX_OK) st = kmux_stream_synchronize(tg->stream);
    return st;
}

static void set_error(kb_result *r, kmux_status st, const char *what) {
    r->status = st;
    snprintf(r->error, sizeof r->error, "%s: %s: %s", what, kmux_status_str(st), kmux_last_error());
}

/* Fills the inputs of p's direction for verification: the first input dense, the second sparse. */
static void fill_inputs_int(const kb_problem *p, const kb_tensors *t, void *host[3],
                            const kb_fill_plan *f, const kb_run_opts *o) {
    int dense, sparse;
    if (p->op == KB_OP_MATMUL || p->dir == KB_DIR_FWD)
        dense = 0, sparse = 1;
    else if (p->dir == KB_DIR_BWD_D)
        dense = 2, sparse = 1;
    else
        dense = 0, sparse = 2;
    double density = o->self_test && !strcmp(o->self_test, "zero-data") ? 0.0 : f->density_b;
    kb_fill_int(host[dense], t->dt[dense], t->count[dense], f->range_a, 1.0,
                o->seed + 11u * (unsigned)dense);
    kb_fill_int(host[sparse], t->dt[sparse], t->count[sparse], f->range_b, density,
                o->seed + 11u * (unsigned)sparse + 1u);
}

/* Moves a new plan to its implementation number impl_index, or (want != NULL, impl_index 0) to
 * the first one whose name matches want. Returns KMUX_OK, KMUX_ERR_LAST_IMPL (no such index) or
 * KMUX_ERR_UNSUPPORTED (no name matches) with r->error set. */
static kmux_status select_impl(kmux_plan *plan, int impl_index, const kb_run_opts *o,
                               kb_result *r) {
    for (int j = 0; j < impl_index; ++j)
        if (kmux_plan_next_impl(plan) != KMUX_OK) {
            snprintf(r->error, sizeof r->error, "no implementation %d", impl_index);
            return KMUX_ERR_LAST_IMPL;
        }
    if (!o->impl_regex || o->all_impls) return KMUX_OK;
    char tried[300] = "";
    for (;;) {
        kmux_plan_info info;
        if (kmux_plan_info_get(plan, &info) != KMUX_OK) return KMUX_ERR_INTERNAL;
        const char *name = info.impl ? info.impl : "?";
        if (regexec(o->impl_regex, name, 0, NULL, 0) == 0) return KMUX_OK;
        size_t n = strlen(tried);
        snprintf(tried + n, sizeof tried - n, "%s%s", n ? ", " : "", name);
        if (kmux_plan_next_impl(plan) != KMUX_OK) {
            snprintf(r->error, sizeof r->error,
                     "no implementation on %s matches --impl=%s (it has: %s)", r->device,
                     o->impl_pattern, tried);
            return KMUX_ERR_UNSUPPORTED;
        }
    }
}

/* One (device, implementation) of a problem: prepared once (plan, buffers, verification, data,
 * warm-up), then timed round by round, then torn down. */
typedef struct runner {
    kb_target *tg;
    kb_result *r;
    int impl_index;
    kmux_plan *plan;
    void *base[3], *dev[3];
    void *rot[KB_MAX_ROTATIONS][3];
    unsigned char *stage;
    exec_ctx e;
    kb_timer timer;
    int timing; /* prepared and waiting for its rounds (no error, verification passed) */
    kb_noise_acc acc;
} runner;

/* Everything a problem's runners share. */
typedef struct shared {
    const kb_problem *p;
    void **host_int, **host_real;
    const kb_tensors *t;
    const kb_fill_plan *fp;
    const kb_oracle *orc;
    const kb_run_opts *o;
    size_t bytes[3];
} shared;

/* Plan creation (timed), implementation choice, buffers, verification, the timing data and the
 * warm-up. On success with o->time the runner is left `timing`; otherwise r says why not. */
static void prepare(runner *u, const shared *sh) {
    const kb_problem *p = sh->p;
    const kb_tensors *t = sh->t;
    const kb_run_opts *o = sh->o;
    const size_t *bytes = sh->bytes;
    kb_target *tg = u->tg;
    kb_result *r = u->r;
    exec_ctx *e = &u->e;
    kmux_compute_type ct = kb_problem_compute(p);

    /* plan creation, timed on its own */
    double t0 = kb_now_s();
    kmux_status st;
    if (p->op == KB_OP_MATMUL) {
        kmux_matmul_desc d;
        kb_matmul_to_desc(p, &d);
        st = kmux_matmul_plan_create(tg->dev, &d, NULL, &u->plan);
    } else {
        kmux_conv2d_desc d;
        kb_conv_to_desc(p, &d);
        st = kmux_conv2d_plan_create(tg->dev, &d, NULL, &u->plan);
    }
    r->plan_ms = 1e3 * (kb_now_s() - t0);
    if (st != KMUX_OK) {
        set_error(r, st, "plan creation");
        return;
    }
    st = select_impl(u->plan, u->impl_index, o, r);
    if (st != KMUX_OK) {
        r->status = st;
        return;
    }
    kmux_plan_info info;
    if (kmux_plan_info_get(u->plan, &info) == KMUX_OK) {
        kb_strlcpy(r->impl, info.impl ? info.impl : "?", sizeof r->impl);
        kb_strlcpy(r->effective_compute, kb_compute_name(info.effective_compute),
                   sizeof r->effective_compute);
        r->deterministic = info.deterministic;
    }

    /* device buffers; the output with a guard band on each side */
    for (int i = 0; i < 3 && st == KMUX_OK; ++i) {
        size_t extra = i == t->out ? 2 * KB_GUARD_BYTES : 0;
        st = kmux_malloc(tg->dev, bytes[i] + extra, &u->base[i]);
        u->dev[i] = (char *)u->base[i] + extra / 2;
    }
    if (st != KMUX_OK) {
        set_error(r, st, "kmux_malloc");
        return;
    }
    e->op = p->op, e->plan = u->plan, e->stream = tg->stream;
    if (ct == KMUX_COMPUTE_F64)
        e->alpha.d = 1.0, e->beta.d = 0.0;
    else if (ct == KMUX_COMPUTE_I32 && p->op == KB_OP_MATMUL)
        e->alpha.i = 1, e->beta.i = 0;
    else
        e->alpha.f = 1.0f, e->beta.f = 0.0f;
    kmux_matmul_args ma = KMUX_MATMUL_ARGS_INIT;
    ma.alpha = &e->alpha, ma.beta = &e->beta, ma.A = u->dev[0], ma.B = u->dev[1];
    ma.C = u->dev[2];
    e->ma[0] = ma;
    kmux_conv2d_args ca = KMUX_CONV2D_ARGS_INIT;
    ca.alpha = &e->alpha, ca.beta = &e->beta, ca.x = u->dev[0], ca.w = u->dev[1];
    ca.y = u->dev[2];
    e->ca[0] = ca;
    e->nrot = 1;

    if (o->verify) {
        const kb_oracle *orc = sh->orc;
        if (!orc->ok) {
            r->check.status = KB_VERIFY_ERROR;
            kb_strlcpy(r->check.message, orc->message, sizeof r->check.message);
            return;
        }
        size_t ob = bytes[t->out], G = KB_GUARD_BYTES;
        unsigned char *stage = u->stage = kb_xmalloc(ob + 2 * G);
        kb_guard_fill(stage, G, 1);
        kb_guard_fill(stage + G + ob, G, 2);
        kb_fill_unwritten(stage + G, t->dt[t->out], t->count[t->out]);
        for (int i = 0; i < 3 && st == KMUX_OK; ++i)
            st = i == t->out ? kmux_memcpy(tg->stream, u->base[i], stage, ob + 2 * G,
                                           KMUX_MEMCPY_HOST_TO_DEVICE)
                             : kmux_memcpy(tg->stream, u->dev[i], sh->host_int[i], bytes[i],
                                           KMUX_MEMCPY_HOST_TO_DEVICE);
        if (st == KMUX_OK) st = kmux_stream_synchronize(tg->stream);
        if (st != KMUX_OK) {
            set_error(r, st, "copy to device");
            return;
        }
        st = exec_once(e);
        if (st == KMUX_OK) st = kmux_stream_synchronize(tg->stream);
        if (st != KMUX_OK) {
            set_error(r, st, "execution");
            return;
        }
        st =
            kmux_memcpy(tg->stream, stage, u->base[t->out], ob + 2 * G, KMUX_MEMCPY_DEVICE_TO_HOST);
        for (int i = 0; i < 3 && st == KMUX_OK; ++i) {
            if (i == t->out) continue;
            void *back = kb_xmalloc(bytes[i]);
            st = kmux_memcpy(tg->stream, back, u->dev[i], bytes[i], KMUX_MEMCPY_DEVICE_TO_HOST);
            if (st == KMUX_OK) st = kmux_stream_synchronize(tg->stream);
            if (st == KMUX_OK && memcmp(back, sh->host_int[i], bytes[i])) r->check.inputs_ok = 0;
            free(back);
        }
        if (st == KMUX_OK) st = kmux_stream_synchronize(tg->stream);
        if (st != KMUX_OK) {
            set_error(r, st, "copy from device");
            return;
        }
        /* injected faults, to test the checker itself (--self-test) */
        if (o->self_test && !strcmp(o->self_test, "corrupt-output") && orc->count > 0) {
            int64_t idx = orc->index ? orc->index[orc->count / 2] : orc->count / 2;
            double v = kb_get(stage + G, t->dt[t->out], idx);
            kb_set(stage + G, t->dt[t->out], idx, v + 1.0);
        }
        if (o->self_test && !strcmp(o->self_test, "corrupt-guard")) stage[G + ob + 7] ^= 0x40;
        r->check.guard_ok = kb_guard_check(stage, G, 1) && kb_guard_check(stage + G + ob, G, 2);
        kb_compare(orc, sh->fp, stage + G, t->dt[t->out], &r->check);
        free(u->stage);
        u->stage = NULL;
        if (r->check.status != KB_VERIFY_PASSED) return;
    }

    if (!o->time) return;
    for (int i = 0; i < 3 && st == KMUX_OK; ++i)
        if (i != t->out)
            st = kmux_memcpy(tg->stream, u->dev[i], sh->host_real[i], bytes[i],
                             KMUX_MEMCPY_HOST_TO_DEVICE);
    if (st == KMUX_OK) st = kmux_stream_synchronize(tg->stream);
    if (st != KMUX_OK) {
        set_error(r, st, "copy to device");
        return;
    }
    if (o->cold_bytes > 0) {
        st = add_rotations(e, tg, t, bytes, (void *const *)sh->host_real, o->cold_bytes, u->rot);
        if (st != KMUX_OK) {
            set_error(r, st, "cold buffers (--cold)");
            return;
        }
    }
    r->rotations = e->nrot;
    char err[300];
    st = kb_timer_open(&u->timer, tg->dev, tg->stream, exec_once, e, &o->timing, err, sizeof err);
    if (st != KMUX_OK) {
        r->status = st;
        snprintf(r->error, sizeof r->error, "timing: %s", err);
        return;
    }
    u->timing = 1;
}

/* One timing round of a prepared runner; an error ends its timing. */
static void time_round(runner *u, const kb_run_opts *o) {
    char err[300];
    kmux_status st = kb_timer_round(&u->timer, &o->timing, err, sizeof err);
    if (st != KMUX_OK) {
        u->timing = 0;
        u->r->status = st;
        snprintf(u->r->error, sizeof u->r->error, "timing: %s", err);
    }
}

/* The figures of a runner whose rounds are done. */
static void finish(runner *u, const shared *sh) {
    kb_result *r = u->r;
    const kmux_device_props *pr = &u->tg->props;
    kb_noise_acc_judge(&u->acc, pr->is_host ? pr->compute_units : 1, &r->noise);
    if (!u->timing) return;
    kb_timer_stats(&u->timer, &r->stats);
    r->timed = 1;
    r->gflops = r->flops / (r->stats.median_ms * 1e6);
    r->gflops_best = r->flops / (r->stats.min_ms * 1e6);
    kb_device_peak(pr, sh->p->set.dt[0], kb_problem_compute(sh->p), sh->o->host, sh->o->peaks_csv,
                   &r->peak);
    kb_roofline_compute(r->flops, r->min_bytes, r->gflops * 1e9, &r->peak, &r->roof);
    kb_noise_rounds(&r->noise, r->stats.rounds_spread, r->stats.rounds);
}

/* Frees everything of a runner. Returns 1 when its plan has a further implementation after the
 * one it ran (for --all-impls). */
static int teardown(runner *u) {
    int more = u->plan && kmux_plan_next_impl(u->plan) == KMUX_OK;
    kb_timer_close(&u->timer);
    free(u->stage);
    for (int i = 0; i < 3; ++i) {
        kmux_free(u->tg->dev, u->base[i]);
        for (int k = 1; k < KB_MAX_ROTATIONS; ++k)
            kmux_free(u->tg->dev, u->rot[k][i]);
    }
    kmux_plan_destroy(u->plan);
    u->plan = NULL;
    return more;
}

/* Runs f on u, adding the window to u's noise sum (only its own phases count for it). */
static void in_window(runner *u, void (*f)(runner *, const shared *), const shared *sh) {
    kb_noise_sample a, b;
    kb_noise_sample_now(&a);
    f(u, sh);
    kb_noise_sample_now(&b);
    kb_noise_acc_add(&u->acc, &a, &b);
}

static void round_step(runner *u, const shared *sh) {
    time_round(u, sh->o);
}

/* Whether a runner's implementation runs on OpenBLAS (cpu:openblas, or auto routed there). */
static int runs_openblas(const runner *u) {
    return strstr(u->r->impl, "openblas") != NULL;
}

/* The pause before timing a CPU device right after one whose implementation ran on OpenBLAS:
 * OpenBLAS's workers spin for ~0.1 s after each call (kmux_openblas_spin.h, README "Performance
 * note") and a oneDNN call in that window ran 2-3x slower on 2 cores, so that an interleaved round
 * would charge OpenBLAS's spin to whichever device came next. Measured once per process (the
 * time-stamp counter's rate); 0 with OPENBLAS_THREAD_TIMEOUT=4. */
static double settle_ms(void) {
    static double ms = -1;
    if (ms < 0) ms = kmux_openblas_settle_ms(20.0);
    return ms;
}

static void settle_after(const runner *prev, const runner *next) {
    if (!prev || !runs_openblas(prev) || runs_openblas(next) || !next->tg->props.is_host) return;
    const double ms = settle_ms();
    struct timespec ts = {(time_t)(ms / 1000), (long)(fmod(ms, 1000.0) * 1e6)};
    while (ms > 0 && nanosleep(&ts, &ts) != 0) {
    }
}

/* Times the n runners: n > 1 interleaved, each round every runner in turn with the first one
 * rotating from round to round (A B, B A, A B, ...), so that no device always goes first and a
 * change of the machine's load during the problem hits every device alike; a CPU device timed
 * right after OpenBLAS waits out OpenBLAS's spinning workers first (settle_after). */
static void run_rounds(runner *u, int n, const shared *sh) {
    int rounds = sh->o->timing.rounds < 1 ? 1 : sh->o->timing.rounds;
    if (rounds > KB_MAX_ROUNDS) rounds = KB_MAX_ROUNDS;
    for (int k = 0; k < n; ++k)
        in_window(&u[k], prepare, sh);
    const runner *prev = n > 0 ? &u[n - 1] : NULL; /* its warm-up ran last */
    for (int round = 0; round < rounds; ++round)
        for (int j = 0; j < n; ++j) {
            runner *x = &u[(round + j) % n];
            if (!x->timing) continue;
            settle_after(prev, x);
            in_window(x, round_step, sh);
            prev = x;
        }
    for (int k = 0; k < n; ++k)
        finish(&u[k], sh);
}

/* Host memory available now (MemAvailable), in bytes; 0 when unknown. The test hook
 * KMUX_BENCH_AVAILABLE_MIB replaces it. */
static double host_available_bytes(void) {
    const char *hook = getenv("KMUX_BENCH_AVAILABLE_MIB");
    if (hook && *hook) return strtod(hook, NULL) * 1048576.0;
    return (double)kmux_cpu_available_bytes();
}

double kb_problem_host_bytes(const kb_problem *p, const kb_run_opts *o, int host_devices) {
    kb_tensors t;
    kb_problem_tensors(p, &t);
    double in = 0, out = (double)t.count[t.out] * (double)kb_dtype_size(t.dt[t.out]);
    for (int i = 0; i < 3; ++i)
        if (i != t.out) in += (double)t.count[i] * (double)kb_dtype_size(t.dt[i]);
    /* integer and real copies of the inputs, the oracle's f64 output (at most its cap), and per
     * CPU device its operands, a staging copy of the output and the --cold rotations */
    double oracle = 8.0 * (double)(t.count[t.out] < (16 << 20) ? t.count[t.out] : (16 << 20));
    double dev = in + 2 * out + 2.0 * KB_GUARD_BYTES + (o->cold_bytes > 0 ? o->cold_bytes : 0);
    return (o->verify ? in + oracle : 0) + (o->time ? in : 0) + host_devices * dev;
}

double kb_problem_estimate_s(const kb_problem *p, const kb_target *targets, int ntargets,
                             const kb_run_opts *o) {
    if (p->unsupported[0]) return 0; /* not run */
    double flops = kb_problem_flops(p), s = 0;
    /* the oracle: ref accumulates in f64 at about 1 GFLOP/s, on at most its budget */
    if (o->verify) s += (flops < o->ref_budget_flops ? flops : o->ref_budget_flops) / 1e9;
    for (int k = 0; k < ntargets; ++k) {
        double peak = targets[k].props.peak_flops[p->set.dt[0]];
        double call = flops / (peak > 0 ? 0.3 * peak : 5e9); /* a third of the peak */
        if (o->verify) s += call;
        if (o->time) {
            double reps = o->timing.min_time_s / (call > 0 ? call : 1);
            if (reps < o->timing.min_reps) reps = o->timing.min_reps;
            /* the warm-up, the verified call and one re-warming call per round */
            int rounds = o->timing.rounds < 1 ? 1 : o->timing.rounds;
            s += o->timing.warmup_s + (1 + rounds) * call + reps * call;
        }
    }
    return s;
}

/* Marks every device's result of p as not run: it does not fit in memory. */
static void results_out_of_memory(const kb_problem *p, kb_target *targets, int ntargets,
                                  double need, double avail, kb_result *results) {
    for (int k = 0; k < ntargets; ++k) {
        kb_result *r = &results[k];
        memset(r, 0, sizeof *r);
        r->prob = *p;
        kb_check_init(&r->check);
        kb_strlcpy(r->device, targets[k].props.id, sizeof r->device);
        kb_strlcpy(r->backend, targets[k].props.backend, sizeof r->backend);
        kb_strlcpy(r->device_name, targets[k].props.name, sizeof r->device_name);
        r->flops = kb_problem_flops(p);
        r->min_bytes = kb_problem_min_bytes(p);
        r->status = KMUX_ERR_OUT_OF_MEMORY;
        snprintf(r->error, sizeof r->error,
                 "not run: needs %.1f GiB of host memory, %.1f GiB available (checked before "
                 "allocating)",
                 need / 1073741824.0, avail / 1073741824.0);
    }
}

/* The result of p on target tg before it runs: names, figures, status OK. */
static void result_init(kb_result *r, const kb_problem *p, const kb_target *tg,
                        const kb_oracle *orc) {
    memset(r, 0, sizeof *r);
    r->prob = *p;
    kb_check_init(&r->check);
    const kmux_device_props *pr = &tg->props;
    kb_strlcpy(r->device, pr->id, sizeof r->device);
    kb_strlcpy(r->backend, pr->backend, sizeof r->backend);
    kb_strlcpy(r->device_name, pr->name, sizeof r->device_name);
    kb_strlcpy(r->arch, pr->arch, sizeof r->arch);
    kb_strlcpy(r->library_version, pr->library_version, sizeof r->library_version);
    r->flops = kb_problem_flops(p);
    r->min_bytes = kb_problem_min_bytes(p);
    r->oracle_ms = orc->ref_ms;
    kb_strlcpy(r->sample_note, orc->sample_note, sizeof r->sample_note);
    r->status = KMUX_OK;
}

size_t kb_run_problem(const kb_problem *p, kmux_device *ref, kmux_stream *ref_stream,
                      kb_target *targets, int ntargets, const kb_run_opts *o, kb_result *results,
                      size_t cap) {
    if (p->unsupported[0]) { /* kmux cannot express it (3-D): UNSUPPORTED everywhere, not run */
        kb_oracle none;
        memset(&none, 0, sizeof none);
        size_t n = 0;
        for (int k = 0; k < ntargets && n < cap; ++k, ++n) {
            result_init(&results[n], p, &targets[k], &none);
            results[n].status = KMUX_ERR_UNSUPPORTED;
            kb_strlcpy(results[n].error, p->unsupported, sizeof results[n].error);
        }
        return n;
    }
    int host_devices = 0;
    for (int k = 0; k < ntargets; ++k)
        host_devices += targets[k].props.is_host;
    /* interleaving keeps every device's buffers at once; one after another needs one set */
    double need_all = kb_problem_host_bytes(p, o, host_devices);
    double need_one = kb_problem_host_bytes(p, o, host_devices > 0 ? 1 : 0);
    double avail = host_available_bytes();
    if (avail > 0 && need_one > 0.9 * avail) {
        results_out_of_memory(p, targets, ntargets, need_one, avail, results);
        return (size_t)ntargets;
    }
    int interleave = ntargets > 1 && o->time && !(avail > 0 && need_all > 0.9 * avail);
    kb_tensors t;
    kb_problem_tensors(p, &t);
    kb_fill_plan fp;
    kb_plan_fill(p, &fp);
    void *host_int[3] = {NULL, NULL, NULL}, *host_real[3] = {NULL, NULL, NULL};
    kb_oracle orc;
    memset(&orc, 0, sizeof orc);
    if (o->verify) {
        for (int i = 0; i < 3; ++i)
            if (i != t.out) host_int[i] = kb_xmalloc((size_t)t.count[i] * kb_dtype_size(t.dt[i]));
        fill_inputs_int(p, &t, host_int, &fp, o);
        kb_oracle_compute(ref, ref_stream, p, host_int, o->ref_budget_flops, &orc);
    }
    if (o->time)
        for (int i = 0; i < 3; ++i)
            if (i != t.out) {
                host_real[i] = kb_xmalloc((size_t)t.count[i] * kb_dtype_size(t.dt[i]));
                kb_fill_real(host_real[i], t.dt[i], t.count[i], o->seed + 101u * (unsigned)i);
            }
    shared sh = {p, host_int, host_real, &t, &fp, &orc, o, {0, 0, 0}};
    for (int i = 0; i < 3; ++i)
        sh.bytes[i] = (size_t)t.count[i] * kb_dtype_size(t.dt[i]);

    /* slot (k, j): implementation j of target k; with --all-impls the implementations are walked
     * together, j-th of every device interleaved, so that memory holds one set per device */
    int per = o->all_impls ? KB_MAX_IMPLS : 1;
    kb_result *slot = kb_xcalloc((size_t)ntargets * (size_t)per, sizeof *slot);
    int *count = kb_xcalloc((size_t)ntargets, sizeof *count); /* slots filled per target */
    int *more = kb_xcalloc((size_t)ntargets, sizeof *more);
    runner *u = kb_xcalloc((size_t)ntargets, sizeof *u);
    int *which = kb_xcalloc((size_t)ntargets, sizeof *which);
    int *next = kb_xcalloc((size_t)ntargets, sizeof *next); /* a further implementation */
    for (int k = 0; k < ntargets; ++k)
        more[k] = 1;
    char note[sizeof slot->order_note] = "";
    if (!interleave && ntargets > 1 && o->time)
        snprintf(note, sizeof note,
                 "timed one device after another, not interleaved: every device at once needs "
                 "%.1f GiB of host memory, %.1f GiB available",
                 need_all / 1073741824.0, avail / 1073741824.0);
    for (int j = 0; j < per; ++j) {
        int n = 0;
        for (int k = 0; k < ntargets; ++k) {
            if (!more[k]) continue;
            memset(&u[n], 0, sizeof u[n]);
            u[n].tg = &targets[k];
            u[n].impl_index = j;
            u[n].r = &slot[(size_t)k * (size_t)per + (size_t)j];
            result_init(u[n].r, p, &targets[k], &orc);
            kb_strlcpy(u[n].r->order_note, note, sizeof u[n].r->order_note);
            which[n++] = k;
        }
        if (n == 0) break;
        for (int x = 0; x < n; ++x)
            u[x].r->interleaved = interleave && n > 1;
        if (interleave) {
            run_rounds(u, n, &sh);
            for (int x = 0; x < n; ++x)
                next[x] = teardown(&u[x]);
        } else { /* one device's buffers at a time */
            for (int x = 0; x < n; ++x) {
                run_rounds(&u[x], 1, &sh);
                next[x] = teardown(&u[x]);
            }
        }
        for (int x = 0; x < n; ++x) {
            int k = which[x];
            if (u[x].r->status == KMUX_ERR_LAST_IMPL) { /* walked past the last one */
                more[k] = 0;
                continue;
            }
            count[k] = j + 1;
            more[k] = o->all_impls && next[x];
        }
    }
    /* in target order; --all-impls --impl=RE: only the implementations whose names match */
    size_t nres = 0;
    for (int k = 0; k < ntargets; ++k)
        for (int j = 0; j < count[k] && nres < cap; ++j) {
            const kb_result *r = &slot[(size_t)k * (size_t)per + (size_t)j];
            int keep = !(o->all_impls && o->impl_regex && r->impl[0] &&
                         regexec(o->impl_regex, r->impl, 0, NULL, 0) != 0);
            if (keep) results[nres++] = *r;
        }
    free(slot);
    free(count);
    free(more);
    free(u);
    free(which);
    free(next);
    kb_oracle_free(&orc);
    for (int i = 0; i < 3; ++i) {
        free(host_int[i]);
        free(host_real[i]);
    }
    return nres;
}
