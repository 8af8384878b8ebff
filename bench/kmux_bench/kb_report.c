/* kb_report.c - merging records of several runs into one comparison; terminal output. */
#include "kb_report.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kb_util.h"
#include "kb_workload.h"

void kb_report_build(kb_report *R, kb_rec_list *recs, char **files, int nfiles,
                     const double *file_cost) {
    memset(R, 0, sizeof *R);
    R->recs = *recs;
    memset(recs, 0, sizeof *recs);
    R->files = files;
    R->nfiles = nfiles;
    R->baseline = -1;
    size_t capc = 0, capr = 0;
    long *rec_row = kb_xmalloc((R->recs.n ? R->recs.n : 1) * sizeof *rec_row);
    long *rec_col = kb_xmalloc((R->recs.n ? R->recs.n : 1) * sizeof *rec_col);
    for (size_t i = 0; i < R->recs.n; ++i) {
        const kb_rec *r = &R->recs.v[i];
        size_t c = 0;
        while (c < R->ncols && strcmp(R->cols[c].name, r->column))
            ++c;
        if (c == R->ncols) {
            if (R->ncols == capc) {
                capc = capc ? 2 * capc : 8;
                R->cols = kb_xrealloc(R->cols, capc * sizeof *R->cols);
            }
            kb_report_col *col = &R->cols[R->ncols++];
            memset(col, 0, sizeof *col);
            kb_strlcpy(col->name, r->column, sizeof col->name);
            col->file = r->file;
            col->cost = file_cost ? file_cost[r->file] : 0.0;
            kb_strlcpy(col->cpu_model, r->cpu_model, sizeof col->cpu_model);
            kb_strlcpy(col->device_name, r->device_name, sizeof col->device_name);
            kb_strlcpy(col->gpus, r->gpus, sizeof col->gpus);
            kb_strlcpy(col->backends, r->backends, sizeof col->backends);
            kb_strlcpy(col->kmux_version, r->kmux_version, sizeof col->kmux_version);
            kb_strlcpy(col->date, r->date, sizeof col->date);
            col->threads = r->threads;
            col->clock_mhz = r->clock_mhz;
            col->triad_gbps = r->triad_gbps;
        }
        size_t w = 0;
        while (w < R->nrows && strcmp(R->rows[w].key, r->problem))
            ++w;
        if (w == R->nrows) {
            if (R->nrows == capr) {
                capr = capr ? 2 * capr : 64;
                R->rows = kb_xrealloc(R->rows, capr * sizeof *R->rows);
            }
            kb_report_row *row = &R->rows[R->nrows++];
            kb_strlcpy(row->key, r->problem, sizeof row->key);
            kb_strlcpy(row->label, r->label, sizeof row->label);
            kb_strlcpy(row->workload, r->workload, sizeof row->workload);
            kb_strlcpy(row->reproducer, r->reproducer, sizeof row->reproducer);
            row->occurrences = r->occurrences;
        }
        rec_row[i] = (long)w;
        rec_col[i] = (long)c;
    }
    size_t cells = R->nrows * R->ncols;
    R->cell = kb_xmalloc((cells ? cells : 1) * sizeof *R->cell);
    for (size_t i = 0; i < cells; ++i)
        R->cell[i] = -1;
    /* the same problem on the same column twice (repeated runs): keep the fastest verified one */
    for (size_t i = 0; i < R->recs.n; ++i) {
        long *cell = &R->cell[(size_t)rec_row[i] * R->ncols + (size_t)rec_col[i]];
        const kb_rec *r = &R->recs.v[i];
        if (*cell < 0) {
            *cell = (long)i;
            continue;
        }
        ++R->duplicates;
        const kb_rec *old = &R->recs.v[*cell];
        if ((r->has_speed && !old->has_speed) ||
            (r->has_speed && old->has_speed && r->gflops > old->gflops))
            *cell = (long)i;
    }
    free(rec_row);
    free(rec_col);
}

void kb_report_free(kb_report *R) {
    kb_rec_list_free(&R->recs);
    free(R->cols);
    free(R->rows);
    free(R->cell);
    memset(R, 0, sizeof *R);
}

const kb_rec *kb_report_cell(const kb_report *R, size_t row, size_t col) {
    long i = R->cell[row * R->ncols + col];
    return i < 0 ? NULL : &R->recs.v[i];
}

double kb_report_geomean(const kb_report *R, size_t col, size_t *count) {
    double logsum = 0;
    size_t n = 0;
    for (size_t r = 0; r < R->nrows; ++r) {
        int all = 1;
        for (size_t c = 0; c < R->ncols && all; ++c) {
            const kb_rec *x = kb_report_cell(R, r, c);
            all = x && x->has_speed && x->gflops > 0;
        }
        if (!all) continue;
        logsum += log(kb_report_cell(R, r, col)->gflops);
        ++n;
    }
    if (count) *count = n;
    return n ? exp(logsum / (double)n) : 0.0;
}

size_t kb_report_noisy_common(const kb_report *R) {
    size_t noisy = 0;
    for (size_t r = 0; r < R->nrows; ++r) {
        int all = 1;
        size_t here = 0;
        for (size_t c = 0; c < R->ncols && all; ++c) {
            const kb_rec *x = kb_report_cell(R, r, c);
            all = x && x->has_speed && x->gflops > 0;
            here += x && x->noisy;
        }
        if (all) noisy += here;
    }
    return noisy;
}

double kb_report_network_ms(const kb_report *R, const char *workload, size_t col, size_t *rows) {
    double ms = 0;
    size_t n = 0;
    int complete = 1;
    for (size_t r = 0; r < R->nrows; ++r) {
        if (strcmp(R->rows[r].workload, workload)) continue;
        ++n;
        const kb_rec *x = kb_report_cell(R, r, col);
        if (!x || !x->has_speed)
            complete = 0;
        else
            ms += x->median_ms * R->rows[r].occurrences;
    }
    if (rows) *rows = n;
    return complete && n ? ms : -1.0;
}

static const char *cell_text(const kb_rec *x, char *buf, size_t cap) {
    if (!x)
        snprintf(buf, cap, "-");
    else if (x->has_speed && x->pct_peak >= 0)
        snprintf(buf, cap, "%.1f (%.0f%%)%s", x->gflops, x->pct_peak, x->noisy ? " NOISY" : "");
    else if (x->has_speed)
        snprintf(buf, cap, "%.1f%s", x->gflops, x->noisy ? " NOISY" : "");
    else if (!strcmp(x->status, "KMUX_ERR_UNSUPPORTED"))
        snprintf(buf, cap, "UNSUPPORTED*");
    else if (x->status[0] && strcmp(x->status, "KMUX_OK"))
        snprintf(buf, cap, "ERROR*");
    else if (!strcmp(x->verification, "passed"))
        snprintf(buf, cap, "verified only");
    else if (x->verification[0] && strcmp(x->verification, "not_run")) {
        snprintf(buf, cap, "%s", x->verification);
        for (char *p = buf; *p; ++p)
            if (*p >= 'a' && *p <= 'z') *p = (char)(*p - 'a' + 'A');
    } else
        snprintf(buf, cap, "no result");
    return buf;
}

/* Speedup of every column over the --baseline column, per row and as a geometric mean. */
static void print_baseline(const kb_report *R, FILE *f, int lw, int cw) {
    if (R->baseline < 0 || (size_t)R->baseline >= R->ncols) return;
    size_t b = (size_t)R->baseline;
    fprintf(f, "\nSpeedup over [%zu] %s (GFLOP/s ratio; NOISY cells excluded)\n", b + 1,
            R->cols[b].name);
    double logsum[64] = {0};
    size_t cnt[64] = {0};
    for (size_t r = 0; r < R->nrows; ++r) {
        const kb_rec *base = kb_report_cell(R, r, b);
        char lab[64];
        snprintf(lab, sizeof lab, "%.*s", lw, R->rows[r].label);
        fprintf(f, "%-*s", lw, lab);
        for (size_t c = 0; c < R->ncols; ++c) {
            const kb_rec *x = kb_report_cell(R, r, c);
            char t[32] = "-";
            if (x && base && x->has_speed && base->has_speed && !x->noisy && !base->noisy &&
                base->gflops > 0 && x->gflops > 0) {
                double s = x->gflops / base->gflops;
                snprintf(t, sizeof t, "%.2fx", s);
                if (c < 64) logsum[c] += log(s), cnt[c]++;
            }
            fprintf(f, " %*s", cw, t);
        }
        fputc('\n', f);
    }
    fprintf(f, "%-*s", lw, "geomean speedup");
    for (size_t c = 0; c < R->ncols; ++c) {
        char t[32] = "-";
        if (c < 64 && cnt[c]) snprintf(t, sizeof t, "%.2fx", exp(logsum[c] / (double)cnt[c]));
        fprintf(f, " %*s", cw, t);
    }
    fputc('\n', f);
}

/* Why the starred cells have no speed, and every row's reproducer. */
static void print_notes(const kb_report *R, FILE *f) {
    int head = 0;
    for (size_t r = 0; r < R->nrows; ++r)
        for (size_t c = 0; c < R->ncols; ++c) {
            const kb_rec *x = kb_report_cell(R, r, c);
            if (!x || !x->status[0] || !strcmp(x->status, "KMUX_OK")) continue;
            if (!head++) fprintf(f, "\n* why there is no result:\n");
            fprintf(f, "  %s on [%zu]: %s: %s\n", R->rows[r].label, c + 1, x->status, x->reason);
        }
    fprintf(f, "\nReproducers:\n");
    for (size_t r = 0; r < R->nrows; ++r)
        fprintf(f, "  %s: %s\n", R->rows[r].label, R->rows[r].reproducer);
}

void kb_report_print(const kb_report *R, FILE *f) {
    const int lw = 40, cw = 24;
    fprintf(f,
            "Comparison of %d file(s), %zu problems, %zu machine/device columns. Cells: "
            "GFLOP/s at the median time (%% of the device's peak).\n\n",
            R->nfiles, R->nrows, R->ncols);
    for (size_t c = 0; c < R->ncols; ++c) {
        const kb_report_col *k = &R->cols[c];
        fprintf(f, "  [%zu] %s: %s%s%s; %d threads", c + 1, k->name, k->device_name,
                k->gpus[0] ? "; GPUs: " : "", k->gpus, k->threads);
        if (k->clock_mhz > 0) fprintf(f, ", %.0f MHz measured", k->clock_mhz);
        if (k->triad_gbps > 0) fprintf(f, ", %.1f GB/s triad", k->triad_gbps);
        fprintf(f, "; kmux %s; %s\n", k->kmux_version, k->date);
    }
    fprintf(f, "\n%-*s", lw, "problem");
    for (size_t c = 0; c < R->ncols; ++c) {
        char h[32];
        snprintf(h, sizeof h, "[%zu] %.*s", c + 1, cw - 6, R->cols[c].name);
        fprintf(f, " %*s", cw, h);
    }
    fputc('\n', f);
    for (size_t r = 0; r < R->nrows; ++r) {
        char lab[64];
        snprintf(lab, sizeof lab, "%.*s", lw, R->rows[r].label);
        fprintf(f, "%-*s", lw, lab);
        for (size_t c = 0; c < R->ncols; ++c) {
            char t[64];
            fprintf(f, " %*s", cw, cell_text(kb_report_cell(R, r, c), t, sizeof t));
        }
        fputc('\n', f);
    }
    size_t common = 0, noisy = kb_report_noisy_common(R);
    fprintf(f, "\n%-*s", lw, "geomean GFLOP/s (common problems)");
    for (size_t c = 0; c < R->ncols; ++c) {
        double g = kb_report_geomean(R, c, &common);
        char t[32];
        if (noisy)
            snprintf(t, sizeof t, "not ranked");
        else if (g > 0)
            snprintf(t, sizeof t, "%.1f", g);
        else
            snprintf(t, sizeof t, "-");
        fprintf(f, " %*s", cw, t);
    }
    fprintf(f, "\n%-*s", lw, "  over problems");
    for (size_t c = 0; c < R->ncols; ++c)
        fprintf(f, " %*zu", cw, common);
    int any_cost = 0;
    for (size_t c = 0; c < R->ncols; ++c)
        any_cost |= R->cols[c].cost > 0;
    if (any_cost) {
        fprintf(f, "\n%-*s", lw, "geomean GFLOP/s per unit of cost");
        for (size_t c = 0; c < R->ncols; ++c) {
            double g = kb_report_geomean(R, c, NULL);
            char t[32];
            if (R->cols[c].cost > 0 && g > 0)
                snprintf(t, sizeof t, "%.2f (cost %g)", g / R->cols[c].cost, R->cols[c].cost);
            else
                snprintf(t, sizeof t, "-");
            fprintf(f, " %*s", cw, t);
        }
    }
    fputc('\n', f);
    if (noisy)
        fprintf(f,
                "not ranked: %zu of the cells compared were measured on a busy machine (NOISY); "
                "rerun them on a quiet machine\n",
                noisy);
    print_baseline(R, f, lw, cw);
    print_notes(R, f);
    if (R->duplicates)
        fprintf(f,
                "%zu duplicate record(s) of a problem on the same machine and device: the "
                "fastest verified one is shown\n",
                R->duplicates);
    /* whole-network view of network workloads */
    for (size_t r = 0; r < R->nrows; ++r) {
        const char *wl = R->rows[r].workload;
        if (!kb_workload_is_network(wl)) continue;
        int first = 1;
        for (size_t q = 0; q < r; ++q)
            first &= strcmp(R->rows[q].workload, wl) != 0;
        if (!first) continue;
        size_t nrows = 0;
        char lab[80];
        snprintf(lab, sizeof lab, "%s training step, conv ms", wl);
        fprintf(f, "%-*s", lw, lab);
        for (size_t c = 0; c < R->ncols; ++c) {
            double ms = kb_report_network_ms(R, wl, c, &nrows);
            char t[32];
            if (ms >= 0)
                snprintf(t, sizeof t, "%.2f", ms);
            else
                snprintf(t, sizeof t, "incomplete");
            fprintf(f, " %*s", cw, t);
        }
        fputc('\n', f);
    }
}

/* ---- the subcommand ------------------------------------------------------------------------- */

static void report_usage(FILE *f) {
    fprintf(f,
            "usage: kmux-bench report A.jsonl [B.jsonl ...] [--html=OUT.html] "
            "[--cost=FILE.jsonl:COST ...] [--baseline=COLUMN]\n"
            "  Merges kmux-bench records of several runs/machines into one comparison: a table\n"
            "  (problem x machine/device: GFLOP/s and %% of peak) on stdout and, with --html, a\n"
            "  self-contained HTML page with SVG charts. --cost gives the cost of the machine\n"
            "  that wrote FILE (e.g. dollars per hour) and adds throughput per unit of cost.\n"
            "  --baseline=N|NAME adds every column's speedup over that column ([N] or\n"
            "  \"machine device\"). NOISY cells are marked and never ranked.\n");
}

int kb_report_main(int argc, char **argv) {
    char **files = kb_xcalloc((size_t)argc, sizeof *files);
    int nfiles = 0;
    const char *html = NULL, *baseline = NULL;
    char *costs[64];
    int ncosts = 0;
    for (int i = 1; i < argc; ++i) {
        if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
            report_usage(stdout);
            free(files);
            return 0;
        } else if (!strncmp(argv[i], "--html=", 7)) {
            html = argv[i] + 7;
        } else if (!strncmp(argv[i], "--baseline=", 11)) {
            baseline = argv[i] + 11;
        } else if (!strncmp(argv[i], "--cost=", 7) && ncosts < 64) {
            costs[ncosts++] = argv[i] + 7;
        } else if (argv[i][0] == '-') {
            fprintf(stderr, "kmux-bench report: unknown option %s\n", argv[i]);
            report_usage(stderr);
            free(files);
            return 2;
        } else {
            files[nfiles++] = argv[i];
        }
    }
    if (nfiles == 0) {
        report_usage(stderr);
        free(files);
        return 2;
    }
    double *file_cost = kb_xcalloc((size_t)nfiles, sizeof *file_cost);
    for (int k = 0; k < ncosts; ++k) {
        char *colon = strrchr(costs[k], ':');
        double v = 0;
        int found = 0;
        if (colon) {
            *colon = '\0';
            if (kb_parse_double(colon + 1, &v) && v > 0)
                for (int i = 0; i < nfiles; ++i)
                    if (!strcmp(files[i], costs[k])) file_cost[i] = v, found = 1;
        }
        if (!found) {
            fprintf(stderr,
                    "kmux-bench report: --cost=%s%s%s: want FILE:COST with FILE one of the "
                    "inputs and COST > 0\n",
                    costs[k], colon ? ":" : "", colon ? colon + 1 : "");
            free(file_cost);
            free(files);
            return 2;
        }
    }
    kb_rec_list recs = {NULL, 0, 0};
    for (int i = 0; i < nfiles; ++i) {
        char err[512];
        int rd = kb_jsonl_read(files[i], i, &recs, err, sizeof err);
        if (rd == 2) fprintf(stderr, "kmux-bench report: warning: %s\n", err);
        if (!rd) {
            fprintf(stderr, "kmux-bench report: %s\n", err);
            kb_rec_list_free(&recs);
            free(file_cost);
            free(files);
            return 2;
        }
    }
    if (recs.n == 0) {
        fprintf(stderr, "kmux-bench report: no records in %s%s\n", files[0],
                nfiles > 1 ? " and the other inputs" : "");
        kb_rec_list_free(&recs);
        free(file_cost);
        free(files);
        return 2;
    }
    kb_report R;
    kb_report_build(&R, &recs, files, nfiles, file_cost);
    if (baseline) { /* a column number (as printed: [N]) or a column name */
        char *end;
        long n = strtol(baseline, &end, 10);
        if (*baseline && !*end && n >= 1 && (size_t)n <= R.ncols) R.baseline = n - 1;
        for (size_t c = 0; c < R.ncols && R.baseline < 0; ++c)
            if (!strcmp(R.cols[c].name, baseline)) R.baseline = (long)c;
        if (R.baseline < 0) {
            fprintf(stderr,
                    "kmux-bench report: --baseline=%s: want a column number 1..%zu or a column "
                    "name (\"machine device\")\n",
                    baseline, R.ncols);
            kb_report_free(&R);
            free(file_cost);
            free(files);
            return 2;
        }
    }
    kb_report_print(&R, stdout);
    int rc = 0;
    if (html) {
        if (kb_html_write(&R, html)) {
            printf("\nHTML report: %s\n", html);
        } else {
            fprintf(stderr, "kmux-bench report: cannot write %s\n", html);
            rc = 1;
        }
    }
    kb_report_free(&R);
    free(file_cost);
    free(files);
    return rc;
}
