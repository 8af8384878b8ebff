/* kb_run.c - verify, then time, one problem on every target device. */
#include "kb_run.h"

#include <math.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kb_util.h"
#include "kb_values.h"

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

/* Runs p on one target with implementation impl_index of its plan. Returns 1 when the plan has
 * a further implementation after that one (for --all-impls). */
static int run_target(const kb_problem *p, kb_target *tg, void *host_int[3], void *host_real[3],
                      const kb_tensors *t, const kb_fill_plan *fp, const kb_oracle *orc,
                      const kb_run_opts *o, int impl_index, kb_result *r) {
    int more = 0;
    kmux_plan *plan = NULL;
    void *base[3] = {NULL, NULL, NULL}, *dev[3] = {NULL, NULL, NULL};
    void *rot[KB_MAX_ROTATIONS][3];
    memset(rot, 0, sizeof rot);
    unsigned char *stage = NULL;
    exec_ctx e;
    memset(&e, 0, sizeof e);
    kmux_compute_type ct = kb_problem_compute(p);
    size_t bytes[3];
    for (int i = 0; i < 3; ++i)
        bytes[i] = (size_t)t->count[i] * kb_dtype_size(t->dt[i]);

    /* plan creation, timed on its own */
    double t0 = kb_now_s();
    kmux_status st;
    if (p->op == KB_OP_MATMUL) {
        kmux_matmul_desc d;
        kb_matmul_to_desc(p, &d);
        st = kmux_matmul_plan_create(tg->dev, &d, NULL, &plan);
    } else {
        kmux_conv2d_desc d;
        kb_conv_to_desc(p, &d);
        st = kmux_conv2d_plan_create(tg->dev, &d, NULL, &plan);
    }
    r->plan_ms = 1e3 * (kb_now_s() - t0);
    if (st != KMUX_OK) {
        set_error(r, st, "plan creation");
        return 0;
    }
    st = select_impl(plan, impl_index, o, r);
    if (st != KMUX_OK) {
        r->status = st;
        kmux_plan_destroy(plan);
        return 0;
    }
    kmux_plan_info info;
    if (kmux_plan_info_get(plan, &info) == KMUX_OK) {
        kb_strlcpy(r->impl, info.impl ? info.impl : "?", sizeof r->impl);
        kb_strlcpy(r->effective_compute, kb_compute_name(info.effective_compute),
                   sizeof r->effective_compute);
        r->deterministic = info.deterministic;
    }

    /* device buffers; the output with a guard band on each side */
    for (int i = 0; i < 3 && st == KMUX_OK; ++i) {
        size_t extra = i == t->out ? 2 * KB_GUARD_BYTES : 0;
        st = kmux_malloc(tg->dev, bytes[i] + extra, &base[i]);
        dev[i] = (char *)base[i] + extra / 2;
    }
    if (st != KMUX_OK) {
        set_error(r, st, "kmux_malloc");
        goto done;
    }
    e.op = p->op, e.plan = plan, e.stream = tg->stream;
    if (ct == KMUX_COMPUTE_F64)
        e.alpha.d = 1.0, e.beta.d = 0.0;
    else if (ct == KMUX_COMPUTE_I32 && p->op == KB_OP_MATMUL)
        e.alpha.i = 1, e.beta.i = 0;
    else
        e.alpha.f = 1.0f, e.beta.f = 0.0f;
    kmux_matmul_args ma = KMUX_MATMUL_ARGS_INIT;
    ma.alpha = &e.alpha, ma.beta = &e.beta, ma.A = dev[0], ma.B = dev[1], ma.C = dev[2];
    e.ma[0] = ma;
    kmux_conv2d_args ca = KMUX_CONV2D_ARGS_INIT;
    ca.alpha = &e.alpha, ca.beta = &e.beta, ca.x = dev[0], ca.w = dev[1], ca.y = dev[2];
    e.ca[0] = ca;
    e.nrot = 1;

    if (o->verify) {
        if (!orc->ok) {
            r->check.status = KB_VERIFY_ERROR;
            kb_strlcpy(r->check.message, orc->message, sizeof r->check.message);
            goto done;
        }
        size_t ob = bytes[t->out], G = KB_GUARD_BYTES;
        stage = kb_xmalloc(ob + 2 * G);
        kb_guard_fill(stage, G, 1);
        kb_guard_fill(stage + G + ob, G, 2);
        kb_fill_unwritten(stage + G, t->dt[t->out], t->count[t->out]);
        for (int i = 0; i < 3 && st == KMUX_OK; ++i)
            st = i == t->out ? kmux_memcpy(tg->stream, base[i], stage, ob + 2 * G,
                                           KMUX_MEMCPY_HOST_TO_DEVICE)
                             : kmux_memcpy(tg->stream, dev[i], host_int[i], bytes[i],
                                           KMUX_MEMCPY_HOST_TO_DEVICE);
        if (st == KMUX_OK) st = kmux_stream_synchronize(tg->stream);
        if (st != KMUX_OK) {
            set_error(r, st, "copy to device");
            goto done;
        }
        st = exec_once(&e);
        if (st == KMUX_OK) st = kmux_stream_synchronize(tg->stream);
        if (st != KMUX_OK) {
            set_error(r, st, "execution");
            goto done;
        }
        st = kmux_memcpy(tg->stream, stage, base[t->out], ob + 2 * G, KMUX_MEMCPY_DEVICE_TO_HOST);
        for (int i = 0; i < 3 && st == KMUX_OK; ++i) {
            if (i == t->out) continue;
            void *back = kb_xmalloc(bytes[i]);
            st = kmux_memcpy(tg->stream, back, dev[i], bytes[i], KMUX_MEMCPY_DEVICE_TO_HOST);
            if (st == KMUX_OK) st = kmux_stream_synchronize(tg->stream);
            if (st == KMUX_OK && memcmp(back, host_int[i], bytes[i])) r->check.inputs_ok = 0;
            free(back);
        }
        if (st == KMUX_OK) st = kmux_stream_synchronize(tg->stream);
        if (st != KMUX_OK) {
            set_error(r, st, "copy from device");
            goto done;
        }
        /* injected faults, to test the checker itself (--self-test) */
        if (o->self_test && !strcmp(o->self_test, "corrupt-output") && orc->count > 0) {
            int64_t idx = orc->index ? orc->index[orc->count / 2] : orc->count / 2;
            double v = kb_get(stage + G, t->dt[t->out], idx);
            kb_set(stage + G, t->dt[t->out], idx, v + 1.0);
        }
        if (o->self_test && !strcmp(o->self_test, "corrupt-guard")) stage[G + ob + 7] ^= 0x40;
        r->check.guard_ok = kb_guard_check(stage, G, 1) && kb_guard_check(stage + G + ob, G, 2);
        kb_compare(orc, fp, stage + G, t->dt[t->out], &r->check);
        if (r->check.status != KB_VERIFY_PASSED) goto done;
    }

    if (o->time) {
        for (int i = 0; i < 3 && st == KMUX_OK; ++i)
            if (i != t->out)
                st = kmux_memcpy(tg->stream, dev[i], host_real[i], bytes[i],
                                 KMUX_MEMCPY_HOST_TO_DEVICE);
        if (st == KMUX_OK) st = kmux_stream_synchronize(tg->stream);
        if (st != KMUX_OK) {
            set_error(r, st, "copy to device");
            goto done;
        }
        if (o->cold_bytes > 0) {
            st = add_rotations(&e, tg, t, bytes, host_real, o->cold_bytes, rot);
            if (st != KMUX_OK) {
                set_error(r, st, "cold buffers (--cold)");
                goto done;
            }
        }
        r->rotations = e.nrot;
        char err[300];
        st = kb_time(tg->dev, tg->stream, exec_once, &e, &o->timing, &r->stats, err, sizeof err);
        if (st != KMUX_OK) {
            r->status = st;
            snprintf(r->error, sizeof r->error, "timing: %s", err);
            goto done;
        }
        r->timed = 1;
        r->gflops = r->flops / (r->stats.median_ms * 1e6);
        r->gflops_best = r->flops / (r->stats.min_ms * 1e6);
        kb_device_peak(&tg->props, p->set.dt[0], ct, o->host, o->peaks_csv, &r->peak);
        kb_roofline_compute(r->flops, r->min_bytes, r->gflops * 1e9, &r->peak, &r->roof);
    }
done:
    more = kmux_plan_next_impl(plan) == KMUX_OK;
    free(stage);
    for (int i = 0; i < 3; ++i) {
        kmux_free(tg->dev, base[i]);
        for (int k = 1; k < KB_MAX_ROTATIONS; ++k)
            kmux_free(tg->dev, rot[k][i]);
    }
    kmux_plan_destroy(plan);
    return more;
}

/* Host memory available now (MemAvailable), in bytes; 0 when unknown. */
static double host_available_bytes(void) {
    FILE *f = fopen("/proc/meminfo", "r");
    double kib = 0;
    char line[256];
    while (f && fgets(line, sizeof line, f))
        if (sscanf(line, "MemAvailable: %lf kB", &kib) == 1) break;
    if (f) fclose(f);
    return kib * 1024.0;
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
            s += o->timing.warmup_s + call + reps * call;
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

size_t kb_run_problem(const kb_problem *p, kmux_device *ref, kmux_stream *ref_stream,
                      kb_target *targets, int ntargets, const kb_run_opts *o, kb_result *results,
                      size_t cap) {
    int host_devices = 0;
    for (int k = 0; k < ntargets; ++k)
        host_devices += targets[k].props.is_host;
    double need = kb_problem_host_bytes(p, o, host_devices), avail = host_available_bytes();
    if (avail > 0 && need > 0.9 * avail) {
        results_out_of_memory(p, targets, ntargets, need, avail, results);
        return (size_t)ntargets;
    }
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
    size_t nres = 0;
    for (int k = 0; k < ntargets; ++k)
        for (int impl = 0; nres < cap; ++impl) {
            kb_result *r = &results[nres];
            memset(r, 0, sizeof *r);
            r->prob = *p;
            kb_check_init(&r->check);
            const kmux_device_props *pr = &targets[k].props;
            kb_strlcpy(r->device, pr->id, sizeof r->device);
            kb_strlcpy(r->backend, pr->backend, sizeof r->backend);
            kb_strlcpy(r->device_name, pr->name, sizeof r->device_name);
            kb_strlcpy(r->arch, pr->arch, sizeof r->arch);
            kb_strlcpy(r->library_version, pr->library_version, sizeof r->library_version);
            r->flops = kb_problem_flops(p);
            r->min_bytes = kb_problem_min_bytes(p);
            r->oracle_ms = orc.ref_ms;
            kb_strlcpy(r->sample_note, orc.sample_note, sizeof r->sample_note);
            r->status = KMUX_OK;
            kb_noise_sample before, after;
            kb_noise_sample_now(&before);
            int more = run_target(p, &targets[k], host_int, host_real, &t, &fp, &orc, o, impl, r);
            kb_noise_sample_now(&after);
            kb_noise_between(&before, &after, pr->is_host ? pr->compute_units : 1, &r->noise);
            if (r->timed) kb_noise_rounds(&r->noise, r->stats.rounds_spread);
            if (r->status == KMUX_ERR_LAST_IMPL) break; /* walked past the last one */
            /* --all-impls --impl=RE: only the implementations whose names match */
            int keep = !(o->all_impls && o->impl_regex && r->impl[0] &&
                         regexec(o->impl_regex, r->impl, 0, NULL, 0) != 0);
            if (keep) ++nres;
            if (!o->all_impls || !more) break;
        }
    kb_oracle_free(&orc);
    for (int i = 0; i < 3; ++i) {
        free(host_int[i]);
        free(host_real[i]);
    }
    return nres;
}
