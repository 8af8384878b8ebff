/* kb_html.c - the HTML comparison page: inline CSS and SVG, no scripts, no external resources. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "kb_report.h"
#include "kb_util.h"
#include "kb_workload.h"

/* Okabe-Ito: distinguishable with the common colour-vision deficiencies */
static const char *const palette[] = {"#0072B2", "#E69F00", "#009E73", "#D55E00",
                                      "#CC79A7", "#56B4E9", "#F0E442", "#000000"};
#define NPALETTE (sizeof palette / sizeof palette[0])

typedef double (*metric_fn)(const kb_rec *r, const kb_report_col *c);

static double metric_gflops(const kb_rec *r, const kb_report_col *c) {
    (void)c;
    return r && r->has_speed ? r->gflops : -1.0;
}

static double metric_pct(const kb_rec *r, const kb_report_col *c) {
    (void)c;
    return r && r->has_speed && r->pct_peak >= 0 ? r->pct_peak : -1.0;
}

static double metric_per_cost(const kb_rec *r, const kb_report_col *c) {
    return r && r->has_speed && c->cost > 0 ? r->gflops / c->cost : -1.0;
}

/* A "nice" axis maximum and tick step (1, 2 or 5 x 10^k) for data up to vmax. */
static void nice_axis(double vmax, double *axis_max, double *step) {
    if (vmax <= 0) vmax = 1;
    double raw = vmax / 5.0;
    double mag = pow(10.0, floor(log10(raw)));
    double f = raw / mag;
    *step = (f <= 1 ? 1 : f <= 2 ? 2 : f <= 5 ? 5 : 10) * mag;
    *axis_max = ceil(vmax / *step) * *step;
}

static void svg_legend(kb_sb *h, const kb_report *R, int y) {
    int x = 10;
    for (size_t c = 0; c < R->ncols; ++c) {
        kb_sb_printf(h, "<rect x=\"%d\" y=\"%d\" width=\"12\" height=\"12\" fill=\"%s\"/>", x, y,
                     palette[c % NPALETTE]);
        kb_sb_printf(h, "<text x=\"%d\" y=\"%d\" class=\"lg\">", x + 16, y + 10);
        kb_sb_append_xml(h, R->cols[c].name);
        kb_sb_append(h, "</text>", (size_t)-1);
        x += 40 + 7 * (int)strlen(R->cols[c].name);
    }
}

/* Grouped horizontal bars: one group per problem, one bar per column. */
static void svg_grouped_bars(kb_sb *h, const kb_report *R, const char *id, const char *unit,
                             metric_fn metric, double fixed_max) {
    const int label_w = 330, plot_w = 560, bar_h = 13, bar_gap = 2, group_gap = 10, top = 44;
    const int right = 130;
    double vmax = 0;
    for (size_t r = 0; r < R->nrows; ++r)
        for (size_t c = 0; c < R->ncols; ++c) {
            double v = metric(kb_report_cell(R, r, c), &R->cols[c]);
            if (v > vmax) vmax = v;
        }
    double axis_max, step;
    nice_axis(fixed_max > 0 ? fixed_max : vmax, &axis_max, &step);
    int group_h = (int)R->ncols * (bar_h + bar_gap) + group_gap;
    int height = top + (int)R->nrows * group_h + 30;
    int width = label_w + plot_w + right;
    kb_sb_printf(h,
                 "<svg id=\"%s\" xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" "
                 "viewBox=\"0 0 %d %d\" role=\"img\">",
                 id, width, height, width, height);
    svg_legend(h, R, 6);
    /* grid and ticks */
    for (double t = 0; t <= axis_max * 1.0000001; t += step) {
        double x = label_w + plot_w * (t / axis_max);
        kb_sb_printf(h, "<line x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\" class=\"grid\"/>", x,
                     top - 6, x, height - 26);
        kb_sb_printf(h, "<text x=\"%.1f\" y=\"%d\" class=\"tick\">%g</text>", x, height - 12, t);
        kb_sb_printf(h, "<text x=\"%.1f\" y=\"%d\" class=\"tick\">%g</text>", x, top - 10, t);
    }
    kb_sb_printf(h, "<text x=\"%d\" y=\"%d\" class=\"unit\">", label_w + plot_w + 26, height - 12);
    kb_sb_append_xml(h, unit);
    kb_sb_append(h, "</text>", (size_t)-1);
    for (size_t r = 0; r < R->nrows; ++r) {
        int gy = top + (int)r * group_h;
        if (r % 2)
            kb_sb_printf(h, "<rect x=\"0\" y=\"%d\" width=\"%d\" height=\"%d\" class=\"band\"/>",
                         gy - group_gap / 2, width, group_h);
        kb_sb_printf(h, "<text x=\"%d\" y=\"%d\" class=\"lbl\">", label_w - 8,
                     gy + ((int)R->ncols * (bar_h + bar_gap)) / 2 + 4);
        kb_sb_append_xml(h, R->rows[r].label);
        kb_sb_append(h, "</text>", (size_t)-1);
        for (size_t c = 0; c < R->ncols; ++c) {
            const kb_rec *x = kb_report_cell(R, r, c);
            double v = metric(x, &R->cols[c]);
            int y = gy + (int)c * (bar_h + bar_gap);
            if (v < 0) {
                kb_sb_printf(h, "<text x=\"%d\" y=\"%d\" class=\"na\">", label_w + 4,
                             y + bar_h - 3);
                kb_sb_append_xml(h, !x                   ? "not run"
                                    : x->has_speed       ? "n/a"
                                    : x->verification[0] ? x->verification
                                                         : "no result");
                kb_sb_append(h, "</text>", (size_t)-1);
                continue;
            }
            double w = plot_w * (v / axis_max);
            if (w < 1) w = 1;
            kb_sb_printf(h,
                         "<rect class=\"bar\" x=\"%d\" y=\"%d\" width=\"%.1f\" height=\"%d\" "
                         "fill=\"%s\"><title>",
                         label_w, y, w, bar_h, palette[c % NPALETTE]);
            kb_sb_append_xml(h, R->cols[c].name);
            kb_sb_append(h, ": ", 2);
            kb_sb_append_xml(h, x->impl);
            kb_sb_printf(h, " - %.4g %s, median %.4g ms, %s</title></rect>", v, unit, x->median_ms,
                         x->verification);
            kb_sb_printf(h, "<text x=\"%.1f\" y=\"%d\" class=\"val\">%.4g</text>", label_w + w + 4,
                         y + bar_h - 3, v);
        }
    }
    kb_sb_append(h, "</svg>\n", (size_t)-1);
}

/* Summary bars: one bar per column (geomean over common problems, or per cost). */
static void svg_summary(kb_sb *h, const kb_report *R, const char *id, const char *unit,
                        int per_cost) {
    const int label_w = 330, plot_w = 560, bar_h = 18, gap = 6, top = 20;
    double vals[256];
    double vmax = 0;
    size_t n = R->ncols < 256 ? R->ncols : 256;
    for (size_t c = 0; c < n; ++c) {
        double g = kb_report_geomean(R, c, NULL);
        vals[c] = per_cost ? (R->cols[c].cost > 0 && g > 0 ? g / R->cols[c].cost : -1) : g;
        if (vals[c] > vmax) vmax = vals[c];
    }
    double axis_max, step;
    nice_axis(vmax, &axis_max, &step);
    int height = top + (int)n * (bar_h + gap) + 30, width = label_w + plot_w + 130;
    kb_sb_printf(h,
                 "<svg id=\"%s\" xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" "
                 "viewBox=\"0 0 %d %d\" role=\"img\">",
                 id, width, height, width, height);
    for (double t = 0; t <= axis_max * 1.0000001; t += step) {
        double x = label_w + plot_w * (t / axis_max);
        kb_sb_printf(h, "<line x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\" class=\"grid\"/>", x,
                     top - 6, x, height - 26);
        kb_sb_printf(h, "<text x=\"%.1f\" y=\"%d\" class=\"tick\">%g</text>", x, height - 12, t);
    }
    kb_sb_printf(h, "<text x=\"%d\" y=\"%d\" class=\"unit\">", label_w + plot_w + 26, height - 12);
    kb_sb_append_xml(h, unit);
    kb_sb_append(h, "</text>", (size_t)-1);
    for (size_t c = 0; c < n; ++c) {
        int y = top + (int)c * (bar_h + gap);
        kb_sb_printf(h, "<text x=\"%d\" y=\"%d\" class=\"lbl\">", label_w - 8, y + bar_h - 5);
        kb_sb_append_xml(h, R->cols[c].name);
        kb_sb_append(h, "</text>", (size_t)-1);
        if (vals[c] < 0 || vmax <= 0) {
            kb_sb_printf(h, "<text x=\"%d\" y=\"%d\" class=\"na\">n/a</text>", label_w + 4,
                         y + bar_h - 5);
            continue;
        }
        double w = plot_w * (vals[c] / axis_max);
        if (w < 1) w = 1;
        kb_sb_printf(h,
                     "<rect class=\"bar\" x=\"%d\" y=\"%d\" width=\"%.1f\" height=\"%d\" "
                     "fill=\"%s\"><title>%.4g</title></rect>",
                     label_w, y, w, bar_h, palette[c % NPALETTE], vals[c]);
        kb_sb_printf(h, "<text x=\"%.1f\" y=\"%d\" class=\"val\">%.4g</text>", label_w + w + 4,
                     y + bar_h - 5, vals[c]);
    }
    kb_sb_append(h, "</svg>\n", (size_t)-1);
}

static const char *css =
    "body{font-family:system-ui,-apple-system,'Segoe UI',Roboto,sans-serif;margin:24px;"
    "color:#222;max-width:1100px}"
    "h1{font-size:22px}h2{font-size:17px;margin-top:32px;border-bottom:1px solid #ddd}"
    "table{border-collapse:collapse;font-size:12px;margin:8px 0}"
    "td,th{border:1px solid #ddd;padding:3px 6px;text-align:left;vertical-align:top}"
    "th{background:#f4f4f4}td.num{text-align:right;font-variant-numeric:tabular-nums}"
    "td.bad{color:#b00020;font-weight:600}"
    "p.note{font-size:12px;color:#555}"
    "svg text{font-family:sans-serif}"
    ".lbl{font-size:11px;text-anchor:end;fill:#222}.tick{font-size:10px;text-anchor:middle;"
    "fill:#666}.val{font-size:10px;fill:#222}.na{font-size:10px;fill:#999;font-style:italic}"
    ".unit{font-size:10px;fill:#666}.lg{font-size:11px;fill:#222}"
    ".grid{stroke:#e4e4e4;stroke-width:1}.band{fill:#fafafa}\n";

int kb_html_write(const kb_report *R, const char *path) {
    kb_sb h = KB_SB_INIT;
    char now[32];
    time_t t = time(NULL);
    strftime(now, sizeof now, "%Y-%m-%d %H:%M UTC", gmtime(&t));
    kb_sb_printf(&h,
                 "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
                 "<title>kmux-bench comparison</title><style>%s</style></head><body>\n",
                 css);
    kb_sb_printf(&h, "<h1>kmux-bench comparison</h1><p class=\"note\">Generated %s from", now);
    for (int i = 0; i < R->nfiles; ++i) {
        kb_sb_append(&h, i ? ", " : " ", (size_t)-1);
        kb_sb_append_xml(&h, R->files[i]);
    }
    kb_sb_printf(&h,
                 ": %zu problems on %zu machine/device columns. Every speed shown was "
                 "verified against kmux's reference backend first; a problem that failed or "
                 "was mistrusted has no bar.</p>\n",
                 R->nrows, R->ncols);

    kb_sb_append(&h,
                 "<h2>Machines and devices</h2><table><tr><th>column</th><th>device</th>"
                 "<th>CPU</th><th>GPUs</th><th>backends</th><th>kmux</th><th>date</th>"
                 "<th>cost</th></tr>\n",
                 (size_t)-1);
    for (size_t c = 0; c < R->ncols; ++c) {
        const kb_report_col *col = &R->cols[c];
        const char *cells[] = {col->name,     col->device_name,  col->cpu_model, col->gpus,
                               col->backends, col->kmux_version, col->date};
        kb_sb_printf(&h, "<tr><td><span style=\"color:%s\">&#9632;</span> ", palette[c % NPALETTE]);
        for (size_t k = 0; k < sizeof cells / sizeof cells[0]; ++k) {
            if (k) kb_sb_append(&h, "<td>", (size_t)-1);
            kb_sb_append_xml(&h, cells[k][0] ? cells[k] : "-");
            kb_sb_append(&h, "</td>", (size_t)-1);
        }
        if (col->cost > 0)
            kb_sb_printf(&h, "<td class=\"num\">%g</td></tr>\n", col->cost);
        else
            kb_sb_append(&h, "<td>-</td></tr>\n", (size_t)-1);
    }
    kb_sb_append(&h, "</table>\n", (size_t)-1);

    size_t common = 0;
    kb_report_geomean(R, 0, &common);
    kb_sb_printf(&h,
                 "<h2>Summary: geometric mean speed</h2><p class=\"note\">Over the %zu "
                 "problems every column ran and verified.</p>\n",
                 common);
    svg_summary(&h, R, "chart-summary", "GFLOP/s", 0);
    int any_cost = 0;
    for (size_t c = 0; c < R->ncols; ++c)
        any_cost |= R->cols[c].cost > 0;
    if (any_cost) {
        kb_sb_append(&h,
                     "<h2>Throughput per unit of cost</h2><p class=\"note\">Geometric mean "
                     "GFLOP/s divided by the cost given with --cost.</p>\n",
                     (size_t)-1);
        svg_summary(&h, R, "chart-cost-summary", "GFLOP/s per cost", 1);
    }

    kb_sb_append(&h,
                 "<h2>Speed by problem</h2><p class=\"note\">GFLOP/s at the median time "
                 "(exact operation count: 2MNK per GEMM; 2NKPQCRS/g per convolution in every "
                 "direction). Hover a bar for the implementation.</p>\n",
                 (size_t)-1);
    svg_grouped_bars(&h, R, "chart-speed", "GFLOP/s", metric_gflops, 0);
    kb_sb_append(&h,
                 "<h2>Percent of peak</h2><p class=\"note\">Achieved FLOP/s over the "
                 "device's peak for the input dtype (CPU: device properties at the measured "
                 "clock; GPU: device properties or the datasheet table).</p>\n",
                 (size_t)-1);
    svg_grouped_bars(&h, R, "chart-peak", "% of peak", metric_pct, 100.0);
    if (any_cost) {
        kb_sb_append(&h, "<h2>Speed per unit of cost by problem</h2>\n", (size_t)-1);
        svg_grouped_bars(&h, R, "chart-cost", "GFLOP/s per cost", metric_per_cost, 0);
    }

    /* whole-network step times */
    for (size_t r = 0; r < R->nrows; ++r) {
        const char *wl = R->rows[r].workload;
        int first = kb_workload_is_network(wl);
        for (size_t q = 0; q < r && first; ++q)
            first = strcmp(R->rows[q].workload, wl) != 0;
        if (!first) continue;
        kb_sb_append(&h, "<h2>Model view: ", (size_t)-1);
        kb_sb_append_xml(&h, wl);
        kb_sb_append(&h,
                     "</h2><p class=\"note\">One training step's convolutions: the sum over "
                     "layers and directions of the median time times the layer's occurrences "
                     "in the network.</p><table><tr><th>column</th><th>step ms</th></tr>",
                     (size_t)-1);
        for (size_t c = 0; c < R->ncols; ++c) {
            size_t n = 0;
            double ms = kb_report_network_ms(R, wl, c, &n);
            kb_sb_append(&h, "<tr><td>", (size_t)-1);
            kb_sb_append_xml(&h, R->cols[c].name);
            if (ms >= 0)
                kb_sb_printf(&h, "</td><td class=\"num\">%.2f</td></tr>", ms);
            else
                kb_sb_append(&h, "</td><td>incomplete</td></tr>", (size_t)-1);
        }
        kb_sb_append(&h, "</table>\n", (size_t)-1);
    }

    /* every number */
    kb_sb_append(&h, "<h2>All results</h2><table><tr><th>problem</th>", (size_t)-1);
    for (size_t c = 0; c < R->ncols; ++c) {
        kb_sb_append(&h, "<th>", 4);
        kb_sb_append_xml(&h, R->cols[c].name);
        kb_sb_append(&h, "<br>GFLOP/s (% peak)</th>", (size_t)-1);
    }
    kb_sb_append(&h, "</tr>\n", (size_t)-1);
    for (size_t r = 0; r < R->nrows; ++r) {
        kb_sb_append(&h, "<tr><td>", (size_t)-1);
        kb_sb_append_xml(&h, R->rows[r].label);
        kb_sb_append(&h, "</td>", (size_t)-1);
        for (size_t c = 0; c < R->ncols; ++c) {
            const kb_rec *x = kb_report_cell(R, r, c);
            if (!x)
                kb_sb_append(&h, "<td>-</td>", (size_t)-1);
            else if (x->has_speed && x->pct_peak >= 0)
                kb_sb_printf(&h, "<td class=\"num\">%.1f (%.0f%%)</td>", x->gflops, x->pct_peak);
            else if (x->has_speed)
                kb_sb_printf(&h, "<td class=\"num\">%.1f</td>", x->gflops);
            else {
                kb_sb_append(&h, "<td class=\"bad\">", (size_t)-1);
                kb_sb_append_xml(&h, x->verification[0] ? x->verification : "no result");
                kb_sb_append(&h, "</td>", (size_t)-1);
            }
        }
        kb_sb_append(&h, "</tr>\n", (size_t)-1);
    }
    kb_sb_append(&h, "</table></body></html>\n", (size_t)-1);

    FILE *f = fopen(path, "w");
    int ok = f && fwrite(h.buf, 1, h.len, f) == h.len;
    if (f) ok = (fclose(f) == 0) && ok;
    kb_sb_free(&h);
    return ok;
}
