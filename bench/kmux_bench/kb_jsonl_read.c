/* kb_jsonl_read.c - reading kmux-bench's JSON lines back (kmux-bench report): on its own, so
 * that the reader needs only kb_util (and the fuzz target fuzz_jsonl links nothing else). */
#include "kb_jsonl.h"

#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "kb_util.h"

/* 1 EFLOP/s: beyond any one device kmux-bench measures by orders of magnitude. */
#define KB_GFLOPS_MAX 1e9
/* A record is about 2 KiB: over 100,000 of them fit. */
#define KB_JSONL_BYTES_MAX (256 << 20)

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
    int too_big = 0;
    size_t len = 0;
    char *text = kb_read_file_max(path, KB_JSONL_BYTES_MAX, &len, &too_big);
    if (!text) { /* /dev/zero once read until memory ran out */
        if (too_big)
            snprintf(err, err_cap, "%s is larger than %d MiB (not a kmux-bench record file?)", path,
                     KB_JSONL_BYTES_MAX >> 20);
        else
            snprintf(err, err_cap, "cannot read %s", path);
        return 0;
    }
    const char *nul = memchr(text, '\0', len);
    if (nul) { /* the lines after it would be dropped without a word */
        snprintf(err, err_cap, "%s: a NUL byte at offset %zu: not a JSON-lines file", path,
                 (size_t)(nul - text));
        free(text);
        return 0;
    }
    int line = 0, ok = 1;
    char *save;
    for (char *l = text; l && ok; l = save) {
        char *nl = strchr(l, '\n');
        save = nl ? nl + 1 : NULL;
        if (nl) *nl = '\0';
        ++line;
        const size_t raw = strlen(l);
        if (!*kb_strtrim(l)) continue;
        json_error_t je;
        json_t *o = json_loads(l, 0, &je);
        if (!o && !nl) { /* the last line, cut short: a run killed while writing it */
            snprintf(err, err_cap,
                     "%s:%d: the last line (%zu bytes, no newline) is cut short, by a run killed "
                     "while writing it: ignored",
                     path, line, raw);
            ok = 2;
            break;
        }
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
        /* kb_problem_key's form, which --resume matches */
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
