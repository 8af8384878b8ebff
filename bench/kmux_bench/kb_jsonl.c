/* kb_jsonl.c - JSON-lines records: writing (jansson) and reading back for reports. */
#include "kb_jsonl.h"

#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "kb_util.h"

/* A JSON number, or null for NaN/Inf (JSON has neither) and for "unknown" (< 0 when neg_null). */
static json_t *num(double v, int neg_null) {
    if (!isfinite(v) || (neg_null && v < 0)) return json_null();
    return json_real(v);
}

static json_t *problem_json(const kb_problem *p) {
    char desc[512], opts[256];
    kb_format_desc(p, desc, sizeof desc);
    kb_format_options(p, opts, sizeof opts);
    kb_sb repro = KB_SB_INIT;
    kb_sb_printf(&repro, "kmux-bench %s ", opts);
    kb_sb_append_shell(&repro, desc);
    json_t *shape;
    if (p->op == KB_OP_MATMUL) {
        const kb_matmul_shape *m = &p->mm;
        shape = json_pack("{s:I, s:I, s:I, s:I, s:I}", "batch_a", (json_int_t)m->batch_a, "batch_b",
                          (json_int_t)m->batch_b, "m", (json_int_t)m->m, "n", (json_int_t)m->n, "k",
                          (json_int_t)m->k);
    } else {
        const kb_conv_shape *c = &p->cv;
        shape = json_object();
        const char *keys[] = {"g",  "mb", "ic", "ih", "iw", "oc", "oh", "ow",
                              "kh", "kw", "sh", "sw", "ph", "pw", "dh", "dw"};
        const int64_t vals[] = {c->g,  kb_conv_mb(p), c->ic, c->ih, c->iw, c->oc, c->oh, c->ow,
                                c->kh, c->kw,         c->sh, c->sw, c->ph, c->pw, c->dh, c->dw};
        for (size_t i = 0; i < sizeof keys / sizeof keys[0]; ++i)
            json_object_set_new(shape, keys[i], json_integer((json_int_t)vals[i]));
        const kb_conv_depth *d = &p->depth; /* a 3-D convolution (UNSUPPORTED, not run) */
        if (d->id > 0) {
            const char *dkeys[] = {"id", "od", "kd", "sd", "pd", "dd"};
            const int64_t dvals[] = {d->id, d->od, d->kd, d->sd, d->pd, d->dd};
            for (size_t i = 0; i < sizeof dkeys / sizeof dkeys[0]; ++i)
                json_object_set_new(shape, dkeys[i], json_integer((json_int_t)dvals[i]));
        }
    }
    json_t *o = json_pack(
        "{s:s, s:s, s:s, s:s, s:s, s:s, s:s, s:{s:s, s:s, s:s}, s:s, s:o, s:f, s:f, s:i}",
        "descriptor", desc, "name", p->name, "workload", p->workload, "op", kb_problem_op_name(p),
        "direction", kb_dir_name(p->dir), "options", opts, "reproducer", kb_sb_str(&repro),
        "dtypes", "src", kb_dtype_name(p->set.dt[0]), "wei", kb_dtype_name(p->set.dt[1]), "dst",
        kb_dtype_name(p->set.dt[2]), "compute", kb_compute_name(kb_problem_compute(p)), "shape",
        shape, "flops", kb_problem_flops(p), "min_bytes", kb_problem_min_bytes(p), "occurrences",
        p->occurrences);
    if (p->op == KB_OP_CONV) {
        json_object_set_new(o, "layout", json_string(p->set.layout == KMUX_NHWC ? "nhwc" : "nchw"));
        json_object_set_new(o, "tags", json_null());
    } else {
        json_object_set_new(o, "layout", json_null());
        json_object_set_new(o, "tags",
                            json_pack("{s:s, s:s, s:s}", "src", p->set.stag ? "ba" : "ab", "wei",
                                      p->set.wtag ? "ba" : "ab", "dst", p->set.dtag ? "ba" : "ab"));
    }
    kb_sb_free(&repro);
    return o;
}

static json_t *machine_json(const kb_machine *m, int threads) {
    json_t *gpus = json_array(), *backends = json_array();
    for (int i = 0; i < m->ngpus; ++i)
        json_array_append_new(
            gpus, json_pack("{s:s, s:s, s:s, s:s, s:s, s:f}", "id", m->gpus[i].id, "name",
                            m->gpus[i].name, "arch", m->gpus[i].arch, "driver", m->gpus[i].driver,
                            "library", m->gpus[i].library, "memory_gb", m->gpus[i].memory_gb));
    for (int i = 0; i < m->nbackends; ++i)
        json_array_append_new(backends,
                              json_pack("{s:s, s:s, s:b, s:i, s:s}", "name", m->backends[i].name,
                                        "version", m->backends[i].version, "available",
                                        m->backends[i].available, "devices", m->backends[i].devices,
                                        "reason", m->backends[i].reason));
    return json_pack("{s:s, s:s, s:s, s:s, s:i, s:i, s:o, s:o, s:b, s:o, s:o, s:s, s:s}", "label",
                     m->label, "hostname", m->hostname, "os", m->os, "cpu_model", m->cpu_model,
                     "cores", m->cores, "threads", threads, "clock_mhz_measured",
                     num(m->host.clock_mhz, 1), "triad_gbps_measured", num(m->host.triad_gbps, 1),
                     "measurements_cached", m->host.from_cache, "gpus", gpus, "backends", backends,
                     "kmux_version", m->kmux_version, "kmux_commit", m->kmux_commit);
}

int kb_jsonl_write(FILE *f, const kb_result *r, const kb_machine *m, int threads,
                   double min_time_s) {
    json_t *rec = json_object();
    json_object_set_new(rec, "schema_version", json_integer(KB_RECORD_SCHEMA_VERSION));
    json_object_set_new(rec, "tool", json_string("kmux-bench"));
    json_object_set_new(rec, "date", json_string(m->date));
    json_object_set_new(rec, "problem", problem_json(&r->prob));
    json_object_set_new(rec, "device",
                        json_pack("{s:s, s:s, s:s, s:s, s:s}", "id", r->device, "backend",
                                  r->backend, "name", r->device_name, "arch", r->arch,
                                  "library_version", r->library_version));
    if (r->impl[0])
        json_object_set_new(rec, "implementation",
                            json_pack("{s:s, s:s, s:b, s:f}", "name", r->impl, "effective_compute",
                                      r->effective_compute, "deterministic", r->deterministic,
                                      "plan_create_ms", r->plan_ms));
    else
        json_object_set_new(rec, "implementation", json_null());
    json_object_set_new(
        rec, "status",
        json_pack("{s:s, s:s}", "code", kmux_status_str(r->status), "message", r->error));
    const kb_check *c = &r->check;
    json_t *v = json_pack("{s:s, s:s, s:b, s:s, s:I, s:I, s:I, s:I, s:o, s:o, s:f, s:f, s:f, s:b, "
                          "s:b, s:f, s:s}",
                          "result", kb_verify_status_name(c->status), "oracle", "ref", "sampled",
                          c->sampled, "sample", r->sample_note, "checked", (json_int_t)c->checked,
                          "total", (json_int_t)c->total, "mismatches", (json_int_t)c->mismatches,
                          "unwritten", (json_int_t)c->unwritten, "max_abs_error",
                          num(c->max_abs_err, 0), "max_rel_error", num(c->max_rel_err, 0),
                          "tolerance_abs", c->tol_abs, "tolerance_rel", c->tol_rel, "zero_fraction",
                          c->zero_fraction, "guard_ok", c->guard_ok, "inputs_unchanged",
                          c->inputs_ok, "oracle_ms", r->oracle_ms, "message", c->message);
    json_object_set_new(rec, "verification", v);
    if (kb_result_has_speed(r)) {
        const kb_stats *s = &r->stats;
        json_t *tm = json_pack("{s:s, s:i, s:i, s:i, s:f, s:f, s:f, s:f, s:f, s:f, s:f, s:f, s:f}",
                               "clock", "kmux_event", "warmup", s->warmup, "reps", s->reps,
                               "rotating_buffers", r->rotations > 0 ? r->rotations : 1, "min_ms",
                               s->min_ms, "median_ms", s->median_ms, "max_ms", s->max_ms, "mean_ms",
                               s->mean_ms, "p10_ms", s->p10_ms, "p90_ms", s->p90_ms, "spread",
                               s->spread, "total_s", s->total_s, "min_time_s", min_time_s);
        json_t *med = json_array();
        for (int k = 0; k < s->rounds && k < KB_MAX_ROUNDS; ++k)
            json_array_append_new(med, json_real(s->round_median_ms[k]));
        json_object_set_new(tm, "rounds", json_integer(s->rounds));
        json_object_set_new(tm, "round_median_ms", med);
        json_object_set_new(tm, "rounds_disagreement", json_real(s->rounds_spread));
        json_object_set_new(tm, "interleaved", json_boolean(r->interleaved));
        json_object_set_new(tm, "order_note", json_string(r->order_note));
        json_object_set_new(rec, "timing", tm);
        json_object_set_new(
            rec, "performance",
            json_pack("{s:f, s:f, s:o, s:s, s:o, s:o, s:s, s:f, s:o, s:o, s:o}", "gflops",
                      r->gflops, "gflops_best", r->gflops_best, "peak_gflops",
                      num(r->peak.flops > 0 ? r->peak.flops / 1e9 : -1, 1), "peak_source",
                      r->peak.flops_source, "pct_peak", num(r->roof.pct_peak, 1), "bandwidth_gbps",
                      num(r->peak.bw_gbps > 0 ? r->peak.bw_gbps : -1, 1), "bandwidth_source",
                      r->peak.bw_source, "arithmetic_intensity", r->roof.ai, "ridge_point",
                      num(r->roof.ridge > 0 ? r->roof.ridge : -1, 1), "attainable_gflops",
                      num(r->roof.attainable > 0 ? r->roof.attainable / 1e9 : -1, 1), "bound",
                      r->roof.bound ? json_string(r->roof.bound) : json_null()));
    } else {
        json_object_set_new(rec, "timing", json_null());
        json_object_set_new(rec, "performance", json_null());
    }
    json_object_set_new(rec, "machine", machine_json(m, threads));
    const kb_noise *nz = &r->noise;
    json_object_set_new(
        rec, "noise",
        json_pack("{s:b, s:b, s:f, s:f, s:f, s:f, s:f, s:f, s:s}", "measured", nz->measured,
                  "noisy", nz->noisy, "window_s", nz->wall_s, "foreign_cpus", nz->foreign_cpus,
                  "steal", nz->steal, "rounds_disagreement", nz->rounds_spread, "clock_start_mhz",
                  nz->clock_start_mhz, "clock_mhz", nz->clock_mhz, "reason", nz->reason));
    char *line = json_dumps(rec, JSON_COMPACT | JSON_PRESERVE_ORDER);
    json_decref(rec);
    if (!line) return 0;
    int ok = fprintf(f, "%s\n", line) > 0 && fflush(f) == 0;
    free(line);
    return ok;
}

/* ---- reading -------------------------------------------------------------------------------- */

/* 1 EFLOP/s: beyond any one device kmux-bench measures by orders of magnitude. */
#define KB_GFLOPS_MAX 1e9

static const char *jstr(json_t *o, const char *path) {
    /* path: "a.b.c" */
    char buf[128];
    kb_strlcpy(buf, path, sizeof buf);
    json_t *cur = o;
    for (char *tok = buf; tok && cur;) {
        char *dot = strchr(tok, '.');
        if (dot) *dot = '\0';
        cur = json_object_get(cur, tok);
        tok = dot ? dot + 1 : NULL;
    }
    return json_is_string(cur) ? json_string_value(cur) : "";
}

static double jnum(json_t *o, const char *a, const char *b, double dflt) {
    json_t *x = json_object_get(json_object_get(o, a), b);
    return json_is_number(x) ? json_number_value(x) : dflt;
}

static void rec_push(kb_rec_list *l, const kb_rec *r) {
    if (l->n == l->cap) {
        l->cap = l->cap ? 2 * l->cap : 64;
        l->v = kb_xrealloc(l->v, l->cap * sizeof *l->v);
    }
    l->v[l->n++] = *r;
}

int kb_jsonl_read(const char *path, int file, kb_rec_list *out, char *err, size_t err_cap) {
    char *text = kb_read_file(path, NULL);
    if (!text) {
        snprintf(err, err_cap, "cannot read %s", path);
        return 0;
    }
    int line = 0, ok = 1;
    char *save;
    for (char *l = text; l && ok; l = save) {
        char *nl = strchr(l, '\n');
        save = nl ? nl + 1 : NULL;
        if (nl) *nl = '\0';
        ++line;
        if (!*kb_strtrim(l)) continue;
        json_error_t je;
        json_t *o = json_loads(l, 0, &je);
        if (!json_is_object(o) || !json_is_object(json_object_get(o, "problem")) ||
            !json_is_object(json_object_get(o, "device"))) {
            snprintf(err, err_cap, "%s:%d: not a kmux-bench record%s%s", path, line, o ? "" : ": ",
                     o ? "" : je.text);
            json_decref(o);
            ok = 0;
            break;
        }
        kb_rec r;
        memset(&r, 0, sizeof r);
        r.file = file;
        const char *desc = jstr(o, "problem.descriptor"), *name = jstr(o, "problem.name");
        kb_strlcpy(r.op, jstr(o, "problem.op"), sizeof r.op);
        kb_strlcpy(r.direction, jstr(o, "problem.direction"), sizeof r.direction);
        kb_strlcpy(r.workload, jstr(o, "problem.workload"), sizeof r.workload);
        snprintf(r.problem, sizeof r.problem, "%s %s", desc, jstr(o, "problem.options"));
        /* row names say the direction (conv) and the dtypes: "res2 BWD_D bf16" */
        const char *s0 = jstr(o, "problem.dtypes.src"), *s1 = jstr(o, "problem.dtypes.wei"),
                   *s2 = jstr(o, "problem.dtypes.dst");
        char dt[48];
        if (!strcmp(s0, s1) && !strcmp(s1, s2))
            snprintf(dt, sizeof dt, "%s", s0);
        else
            snprintf(dt, sizeof dt, "%s:%s:%s", s0, s1, s2);
        if (!strcmp(r.op, "conv2d") || !strcmp(r.op, "conv3d"))
            snprintf(r.label, sizeof r.label, "%s %s %s", *name ? name : desc, r.direction, dt);
        else
            snprintf(r.label, sizeof r.label, "%s %s", *name ? name : desc, dt);
        kb_strlcpy(r.reproducer, jstr(o, "problem.reproducer"), sizeof r.reproducer);
        kb_strlcpy(r.status, jstr(o, "status.code"), sizeof r.status);
        kb_strlcpy(r.reason, jstr(o, "status.message"), sizeof r.reason);
        if (!r.reason[0]) kb_strlcpy(r.reason, jstr(o, "verification.message"), sizeof r.reason);
        json_t *mach = json_object_get(o, "machine");
        json_t *th = json_object_get(mach, "threads");
        r.threads = json_is_integer(th) ? (int)json_integer_value(th) : 0;
        r.clock_mhz = jnum(o, "machine", "clock_mhz_measured", 0);
        r.triad_gbps = jnum(o, "machine", "triad_gbps_measured", 0);
        json_t *occ = json_object_get(json_object_get(o, "problem"), "occurrences");
        r.occurrences = json_is_integer(occ) ? (int)json_integer_value(occ) : 1;
        kb_strlcpy(r.machine, jstr(o, "machine.label"), sizeof r.machine);
        if (!r.machine[0]) kb_strlcpy(r.machine, jstr(o, "machine.hostname"), sizeof r.machine);
        kb_strlcpy(r.device, jstr(o, "device.id"), sizeof r.device);
        kb_strlcpy(r.device_name, jstr(o, "device.name"), sizeof r.device_name);
        snprintf(r.column, sizeof r.column, "%s %s", r.machine, r.device);
        kb_strlcpy(r.impl, jstr(o, "implementation.name"), sizeof r.impl);
        kb_strlcpy(r.verification, jstr(o, "verification.result"), sizeof r.verification);
        json_t *perf = json_object_get(o, "performance");
        r.has_speed = json_is_object(perf) &&
                      (!strcmp(r.verification, "passed") || !strcmp(r.verification, "not_run"));
        r.gflops = jnum(o, "performance", "gflops", 0);
        r.pct_peak = jnum(o, "performance", "pct_peak", -1);
        r.median_ms = jnum(o, "timing", "median_ms", 0);
        r.min_ms = jnum(o, "timing", "min_ms", 0);
        kb_strlcpy(r.bound, jstr(o, "performance.bound"), sizeof r.bound);
        r.noisy = json_is_true(json_object_get(json_object_get(o, "noise"), "noisy"));
        kb_strlcpy(r.cpu_model, jstr(o, "machine.cpu_model"), sizeof r.cpu_model);
        kb_strlcpy(r.kmux_version, jstr(o, "machine.kmux_version"), sizeof r.kmux_version);
        kb_strlcpy(r.date, jstr(o, "date"), sizeof r.date);
        kb_sb sb = KB_SB_INIT;
        json_t *gpus = json_object_get(json_object_get(o, "machine"), "gpus");
        for (size_t i = 0; i < json_array_size(gpus); ++i)
            kb_sb_printf(&sb, "%s%s (driver %s)", i ? "; " : "",
                         jstr(json_array_get(gpus, i), "name"),
                         jstr(json_array_get(gpus, i), "driver"));
        kb_strlcpy(r.gpus, kb_sb_str(&sb), sizeof r.gpus);
        kb_sb_free(&sb);
        json_t *bks = json_object_get(json_object_get(o, "machine"), "backends");
        for (size_t i = 0; i < json_array_size(bks); ++i) {
            json_t *b = json_array_get(bks, i);
            if (!json_is_true(json_object_get(b, "available"))) continue;
            kb_sb_printf(&sb, "%s%s %s", sb.len ? ", " : "", jstr(b, "name"), jstr(b, "version"));
        }
        kb_strlcpy(r.backends, kb_sb_str(&sb), sizeof r.backends);
        kb_sb_free(&sb);
        /* Text from a file goes to a terminal and an HTML page: no control characters. */
        char *texts[] = {r.problem,      r.label,    r.op,        r.direction,    r.workload,
                         r.column,       r.machine,  r.device,    r.device_name,  r.impl,
                         r.verification, r.bound,    r.cpu_model, r.kmux_version, r.date,
                         r.gpus,         r.backends, r.status,    r.reason,       r.reproducer};
        for (size_t i = 0; i < sizeof texts / sizeof texts[0]; ++i)
            kb_text_clean(texts[i]);
        /* A rate no device reaches (1e308 printed as a 300-digit number) is not a record. */
        if (!isfinite(r.gflops) || r.gflops < 0 || r.gflops > KB_GFLOPS_MAX ||
            !isfinite(r.pct_peak) || r.pct_peak > 1e4) {
            snprintf(err, err_cap,
                     "%s:%d: performance.gflops = %g or pct_peak = %g is not a plausible value "
                     "(at most %g GFLOP/s)",
                     path, line, r.gflops, r.pct_peak, KB_GFLOPS_MAX);
            json_decref(o);
            ok = 0;
            break;
        }
        rec_push(out, &r);
        json_decref(o);
    }
    free(text);
    return ok;
}

void kb_rec_list_free(kb_rec_list *l) {
    free(l->v);
    l->v = NULL;
    l->n = l->cap = 0;
}
