/* kb_jsonl.c - JSON-lines records: writing (jansson); kb_jsonl_read.c reads them back. */
#define _POSIX_C_SOURCE 200809L /* fileno, fdopen, pread, ftruncate, fsync, O_CLOEXEC */
#include "kb_jsonl.h"

#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

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
    char *text = json_dumps(rec, JSON_COMPACT | JSON_PRESERVE_ORDER);
    json_decref(rec);
    if (!text) return 0;
    const size_t len = strlen(text);
    char *line = kb_xrealloc(text, len + 2);
    line[len] = '\n', line[len + 1] = '\0';
    int ok = fflush(f) == 0; /* nothing buffered: every record goes out through write below */
    for (size_t done = 0; ok && done < len + 1;) {
        ssize_t w = write(fileno(f), line + done, len + 1 - done);
        if (w < 0 && errno == EINTR) continue;
        ok = w > 0;
        done += ok ? (size_t)w : 0;
    }
    free(line);
    return ok;
}

/* The offset just past the last newline of the file (0: none), reading backwards. */
static off_t past_last_newline(int fd, off_t size) {
    char buf[4096];
    while (size > 0) {
        size_t n = size < (off_t)sizeof buf ? (size_t)size : sizeof buf;
        ssize_t r = pread(fd, buf, n, size - (off_t)n);
        if (r != (ssize_t)n) return -1;
        for (size_t i = n; i-- > 0;)
            if (buf[i] == '\n') return size - (off_t)n + (off_t)i + 1;
        size -= (off_t)n;
    }
    return 0;
}

int kb_jsonl_open_append(const char *path, FILE **f, char *note, size_t note_cap) {
    note[0] = '\0';
    *f = NULL;
    int fd = open(path, O_RDWR | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    if (fd < 0) {
        snprintf(note, note_cap, "cannot open %s for appending: %s", path, strerror(errno));
        return 0;
    }
    struct stat st;
    char last = '\n';
    if (fstat(fd, &st) != 0 || (st.st_size > 0 && pread(fd, &last, 1, st.st_size - 1) != 1)) {
        snprintf(note, note_cap, "cannot read %s: %s", path, strerror(errno));
        close(fd);
        return 0;
    }
    if (last != '\n') {
        off_t keep = past_last_newline(fd, st.st_size);
        if (keep < 0 || ftruncate(fd, keep) != 0) {
            snprintf(note, note_cap, "%s ends in a cut-short line that could not be removed: %s",
                     path, strerror(errno));
            close(fd);
            return 0;
        }
        snprintf(note, note_cap,
                 "%s: its last line (%lld bytes, no newline) was cut short, by a run killed while "
                 "writing it: removed before appending",
                 path, (long long)(st.st_size - keep));
    }
    if (!(*f = fdopen(fd, "a"))) {
        snprintf(note, note_cap, "cannot open %s for appending: %s", path, strerror(errno));
        close(fd);
        return 0;
    }
    return 1;
}

int kb_jsonl_close(FILE *f) {
    int ok = fflush(f) == 0 && fsync(fileno(f)) == 0;
    return fclose(f) == 0 && ok;
}

void kb_problem_key(const kb_problem *p, char *buf, size_t cap) {
    char desc[512], opts[256];
    kb_format_desc(p, desc, sizeof desc);
    kb_format_options(p, opts, sizeof opts);
    snprintf(buf, cap, "%s %s", desc, opts);
}
