/*
 * ck_report.c - collecting results and printing them as text or JSON (jansson).
 */
#include "ck_report.h"

#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

int ck_report_add(ck_report *r, const char *category, const char *subject, const char *name,
                  const ck_verdict *v, double measured, double target, const char *unit) {
    if (r->count == r->capacity) {
        int cap = r->capacity ? 2 * r->capacity : 64;
        ck_result *items = realloc(r->items, (size_t)cap * sizeof *items);
        if (!items) return -1;
        r->items = items;
        r->capacity = cap;
    }
    ck_result *x = &r->items[r->count++];
    memset(x, 0, sizeof *x);
    snprintf(x->category, sizeof x->category, "%s", category);
    snprintf(x->subject, sizeof x->subject, "%s", subject);
    snprintf(x->name, sizeof x->name, "%s", name);
    x->status = v->status;
    x->measured = measured;
    x->target = target;
    snprintf(x->unit, sizeof x->unit, "%s", unit ? unit : "");
    snprintf(x->detail, sizeof x->detail, "%s", v->detail);
    snprintf(x->hint, sizeof x->hint, "%s", v->hint);
    ck_counts_add(&r->counts, v->status);
    return 0;
}

void ck_report_free(ck_report *r) {
    free(r->items);
    memset(r, 0, sizeof *r);
}

void ck_report_print_text(FILE *out, const ck_report *r) {
    const char *last_cat = "";
    for (int i = 0; i < r->count; i++) {
        const ck_result *x = &r->items[i];
        if (strcmp(last_cat, x->category) != 0) {
            fprintf(out, "%s%s\n", i ? "\n" : "", x->category);
            last_cat = x->category;
        }
        fprintf(out, "  %s  %-13s %-22s", ck_status_name(x->status), x->subject, x->name);
        if (!isnan(x->measured)) fprintf(out, " %.4g %s", x->measured, x->unit);
        if (!isnan(x->target)) fprintf(out, " (target %.4g %s)", x->target, x->unit);
        if (x->detail[0]) fprintf(out, "  %s", x->detail);
        if (x->hint[0]) fprintf(out, "  -> %s", x->hint);
        fputc('\n', out);
    }
    const ck_counts *c = &r->counts;
    fprintf(out, "\nsummary: %d checks: %d PASS, %d WARN, %d FAIL, %d SKIP -> %s\n", r->count,
            c->pass, c->warn, c->fail, c->skip,
            c->fail   ? "NOT READY (see FAIL lines)"
            : c->warn ? "ready, with warnings"
                      : "ready");
}

static json_t *num_or_null(double v) {
    return isnan(v) || isinf(v) ? json_null() : json_real(v);
}

int ck_report_print_json(FILE *out, const ck_report *r, const ck_run_info *info) {
    json_t *checks = json_array();
    for (int i = 0; i < r->count; i++) {
        const ck_result *x = &r->items[i];
        json_array_append_new(checks,
                              json_pack("{s:s, s:s, s:s, s:s, s:o, s:o, s:s, s:s, s:s}", "category",
                                        x->category, "subject", x->subject, "name", x->name,
                                        "status", ck_status_name(x->status), "measured",
                                        num_or_null(x->measured), "target", num_or_null(x->target),
                                        "unit", x->unit, "detail", x->detail, "hint", x->hint));
    }
    const ck_counts *c = &r->counts;
    json_t *root = json_pack(
        "{s:s, s:i, s:{s:s, s:s, s:s}, s:{s:s, s:b, s:s}, s:f, s:o, s:{s:i, s:i, s:i, s:i, s:i}}",
        "tool", "kmux-check", "format_version", 1, "machine", "kmux_version", info->kmux_version,
        "hostname", info->hostname, "cpu", info->cpu, "options", "backend", info->backend_filter,
        "quick", info->quick, "targets", info->targets_origin, "seconds", info->seconds, "checks",
        checks, "summary", "pass", c->pass, "warn", c->warn, "fail", c->fail, "skip", c->skip,
        "exit_status", ck_exit_status(c));
    if (!root) return -1;
    int rc = json_dumpf(root, out, JSON_COMPACT | JSON_REAL_PRECISION(6));
    fputc('\n', out);
    json_decref(root);
    return rc == 0 ? 0 : -1;
}
