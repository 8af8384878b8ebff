/*
 * kmux-support-matrix - which operation x direction x dtype combination x compute type each
 * device of this machine supports, as a Markdown table (docs/support-matrix.md is its output).
 *
 * The plugins themselves are asked: for every row a plan is created on every device
 * (kmux_matmul_plan_create / kmux_conv2d_plan_create, nothing is executed). A cell holds the
 * name of the implementation the plan chose, or "—" when the device answered
 * KMUX_ERR_UNSUPPORTED, with the reason in a numbered footnote (inline with --verbose). Any
 * other answer is printed as "ERROR <status>" (it is a bug: tests/test_conformance_* fail too).
 *
 * Usage: kmux-support-matrix [--verbose] [--all-impls] [--no-emulation] [--devices=ID,ID...]
 *   --verbose       reasons inline in the cells instead of footnotes
 *   --all-impls     every implementation of a plan (kmux_plan_next_impl), not only the first
 *   --no-emulation  plans with allow_emulation = 0 (no "+cvt" conversion paths)
 *   --devices=...   only these device ids (default: every available device, ref included);
 *                   each must be available (docs/support-matrix.md names its columns this way)
 * Exit status: 0 when the table was printed, 1 when no context could be created, 2 on a usage
 * error, 3 when a device named by --devices is not available (the reason on stderr).
 *
 * docs/support-matrix.md is `cmake --build build --target support-matrix`; ctest
 * support_matrix_current (tools/support-matrix.sh) fails when it is stale: when its sections,
 * columns, rows or supported / unsupported cells differ from a fresh run. Implementation names,
 * accumulation notes, reasons and the machine lines depend on the CPU and are not compared.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "kmux.h"
#include "kmux_common.h"

#define MAX_DEVICES 32
#define MAX_NOTES 512
#define CELL 512

typedef struct options {
    int verbose, all_impls, no_emulation;
    const char *devices;
} options;

typedef struct notes {
    char *text[MAX_NOTES];
    int count;
} notes;

/** Footnote number of a reason (added when new); 0 when the table is full. */
static int note_id(notes *n, const char *reason) {
    for (int i = 0; i < n->count; i++)
        if (strcmp(n->text[i], reason) == 0) return i + 1;
    if (n->count == MAX_NOTES) return 0;
    size_t len = strlen(reason) + 1;
    n->text[n->count] = malloc(len);
    if (!n->text[n->count]) return 0;
    memcpy(n->text[n->count], reason, len);
    return ++n->count;
}

/** Copies s into out (size n) with Markdown table metacharacters escaped. */
static void md_escape(const char *s, char *out, size_t n) {
    size_t j = 0;
    for (; *s && j + 3 < n; s++) {
        if (*s == '|' || *s == '*' || *s == '_' || *s == '<' || *s == '`') out[j++] = '\\';
        out[j++] = *s == '\n' ? ' ' : *s;
    }
    out[j] = '\0';
}

/** Copies s for a code span inside a table cell: only '|' needs escaping there. */
static void md_escape_code(const char *s, char *out, size_t n) {
    size_t j = 0;
    for (; *s && j + 3 < n; s++) {
        if (*s == '|') out[j++] = '\\';
        out[j++] = *s;
    }
    out[j] = '\0';
}

static void append(char *cell, size_t n, const char *s) {
    size_t len = strlen(cell);
    if (len < n) snprintf(cell + len, n - len, "%s", s);
}

/** Fills cell with what plan creation answered; takes ownership of plan. */
static void describe_answer(const options *o, notes *nt, kmux_status s, kmux_plan *plan,
                            kmux_compute_type requested, char *cell, size_t n) {
    char esc[CELL];
    cell[0] = '\0';
    if (s == KMUX_ERR_UNSUPPORTED) {
        if (o->verbose) {
            md_escape(kmux_last_error(), esc, sizeof esc);
            snprintf(cell, n, "— (%s)", esc);
        } else {
            int id = note_id(nt, kmux_last_error());
            if (id)
                snprintf(cell, n, "—&nbsp;[%d]", id);
            else
                snprintf(cell, n, "—");
        }
        return;
    }
    if (s != KMUX_OK) {
        md_escape(kmux_last_error(), esc, sizeof esc);
        snprintf(cell, n, "ERROR %s: %s", kmux_status_str(s), esc);
        return;
    }
    for (int i = 0; i < 64; i++) {
        kmux_plan_info info;
        if (kmux_plan_info_get(plan, &info) != KMUX_OK) {
            append(cell, n, "(kmux_plan_info_get failed)");
            break;
        }
        md_escape_code(info.impl ? info.impl : "?", esc, sizeof esc);
        if (i) append(cell, n, "<br>");
        append(cell, n, "`");
        append(cell, n, esc);
        append(cell, n, "`");
        if (info.effective_compute != requested) {
            append(cell, n, " (accumulates in ");
            append(cell, n, kmux_compute_type_name(info.effective_compute));
            append(cell, n, ")");
        }
        if (!o->all_impls) {
            if (kmux_plan_next_impl(plan) == KMUX_OK) append(cell, n, " (+more)");
            break;
        }
        if (kmux_plan_next_impl(plan) != KMUX_OK) break;
    }
    kmux_plan_destroy(plan);
}

typedef struct matrix {
    const options *opt;
    notes nt;
    int ndev;
    kmux_device *dev[MAX_DEVICES];
} matrix;

static void print_header_row(const matrix *mx, const char *first) {
    printf("| %s |", first);
    for (int d = 0; d < mx->ndev; d++)
        printf(" %s |", kmux_device_id(mx->dev[d]));
    printf("\n|---|");
    for (int d = 0; d < mx->ndev; d++)
        printf("---|");
    printf("\n");
}

/** Plan creation of one row on one device (a matmul or a convolution descriptor). */
typedef kmux_status (*plan_fn)(kmux_device *dev, const void *desc, const kmux_plan_prefs *prefs,
                               kmux_plan **plan);

static kmux_status plan_matmul(kmux_device *dev, const void *desc, const kmux_plan_prefs *prefs,
                               kmux_plan **plan) {
    return kmux_matmul_plan_create(dev, (const kmux_matmul_desc *)desc, prefs, plan);
}

static kmux_status plan_conv(kmux_device *dev, const void *desc, const kmux_plan_prefs *prefs,
                             kmux_plan **plan) {
    return kmux_conv2d_plan_create(dev, (const kmux_conv2d_desc *)desc, prefs, plan);
}

/** One table row: what every device answers to plan creation for desc. */
static void table_row(matrix *mx, const char *label, plan_fn create, const void *desc,
                      kmux_compute_type requested) {
    kmux_plan_prefs prefs = KMUX_PLAN_PREFS_INIT;
    prefs.allow_emulation = !mx->opt->no_emulation;
    printf("| %s |", label);
    for (int d = 0; d < mx->ndev; d++) {
        kmux_plan *plan = NULL;
        char cell[CELL];
        kmux_status s = create(mx->dev[d], desc, &prefs, &plan);
        describe_answer(mx->opt, &mx->nt, s, plan, requested, cell, sizeof cell);
        printf(" %s |", cell);
    }
    printf("\n");
}

static void matmul_row(matrix *mx, const char *label, const kmux_matmul_desc *md) {
    table_row(mx, label, plan_matmul, md, md->compute_type);
}

static void conv_row(matrix *mx, const char *label, const kmux_conv2d_desc *cd) {
    table_row(mx, label, plan_conv, cd, cd->compute_type);
}

#define MAX_ROWS 128

/** The rows of a legal type table, read through the public API (the table kmux validates
 *  against: kmux_matmul_type_combination_get / kmux_conv2d_type_combination_get). */
static int read_rows(kmux_status (*count_fn)(int *),
                     kmux_status (*get_fn)(int, kmux_type_combination *),
                     kmux_type_combination *out) {
    int n = 0;
    if (count_fn(&n) != KMUX_OK) return 0;
    if (n > MAX_ROWS) n = MAX_ROWS;
    for (int i = 0; i < n; i++)
        if (get_fn(i, &out[i]) != KMUX_OK) return i;
    return n;
}

static kmux_matmul_desc matmul_desc(const kmux_type_combination *c, int64_t batch,
                                    unsigned epilogue) {
    kmux_matmul_desc md = KMUX_MATMUL_DESC_INIT;
    md.order = KMUX_ROW_MAJOR;
    md.m = md.n = md.k = 64;
    md.lda = md.ldb = md.ldc = 64;
    md.a_type = c->a_type, md.b_type = c->b_type, md.c_type = c->c_type;
    md.compute_type = c->compute_type;
    md.batch_count = batch;
    if (batch > 1) md.stride_a = md.stride_b = md.stride_c = 64 * 64;
    md.epilogue = epilogue;
    md.bias_type = KMUX_F32;
    md.aux_ld = 64; /* the auxiliary and backward epilogues' aux, f32 where it holds values */
    return md;
}

static void combo_label(const kmux_type_combination *c, const char *extra, char *buf, size_t n) {
    if (c->a_type == c->b_type)
        snprintf(buf, n, "%s → %s, compute %s%s", kmux_dtype_name(c->a_type),
                 kmux_dtype_name(c->c_type), kmux_compute_type_name(c->compute_type), extra);
    else
        snprintf(buf, n, "%s × %s → %s, compute %s%s", kmux_dtype_name(c->a_type),
                 kmux_dtype_name(c->b_type), kmux_dtype_name(c->c_type),
                 kmux_compute_type_name(c->compute_type), extra);
}

static void gemm_tables(matrix *mx) {
    kmux_type_combination cs[MAX_ROWS];
    int n = read_rows(kmux_matmul_type_combination_count, kmux_matmul_type_combination_get, cs);
    char label[160];
    printf("\n## GEMM\n\nkmux_matmul_plan_create with m = n = k = 64, row-major, no transpose, "
           "lda = ldb = ldc = 64 (kmux_gemm_ex and kmux_gemm_strided_batched_ex use the same "
           "plans).\n\n");
    print_header_row(mx, "a → c, compute");
    for (int i = 0; i < n; i++) {
        combo_label(&cs[i], "", label, sizeof label);
        kmux_matmul_desc md = matmul_desc(&cs[i], 1, KMUX_EPILOGUE_NONE);
        matmul_row(mx, label, &md);
    }

    printf("\n## Strided batched GEMM\n\nAs above with batch_count = 16 (packed strides).\n\n");
    print_header_row(mx, "a → c, compute");
    for (int i = 0; i < n; i++) {
        combo_label(&cs[i], "", label, sizeof label);
        kmux_matmul_desc md = matmul_desc(&cs[i], 16, KMUX_EPILOGUE_NONE);
        matmul_row(mx, label, &md);
    }

    static const struct {
        unsigned e;
        const char *name;
    } epis[] = {
        {KMUX_EPILOGUE_BIAS, "bias"},
        {KMUX_EPILOGUE_RELU, "relu"},
        {KMUX_EPILOGUE_GELU, "gelu"},
        {KMUX_EPILOGUE_BIAS | KMUX_EPILOGUE_RELU, "bias+relu"},
        {KMUX_EPILOGUE_BIAS | KMUX_EPILOGUE_GELU, "bias+gelu"},
        {KMUX_EPILOGUE_BIAS | KMUX_EPILOGUE_RELU | KMUX_EPILOGUE_RELU_AUX, "bias+relu+relu_aux"},
        {KMUX_EPILOGUE_BIAS | KMUX_EPILOGUE_GELU | KMUX_EPILOGUE_GELU_AUX, "bias+gelu+gelu_aux"},
        {KMUX_EPILOGUE_DRELU, "drelu"},
        {KMUX_EPILOGUE_DGELU, "dgelu"},
        {KMUX_EPILOGUE_BGRADA, "bgrada"},
        {KMUX_EPILOGUE_BGRADB, "bgradb"}};
    printf("\n## GEMM epilogues\n\nAs the GEMM table, with an epilogue (bias of f32; aux_ld = "
           "64, GELU's aux in f32; the backward and bias-gradient epilogues only on f32, f16 and "
           "bf16 inputs, where kmux.h defines them). Integer GEMM has no epilogue in kmux.h.\n\n");
    print_header_row(mx, "epilogue: a → c, compute");
    for (size_t e = 0; e < sizeof epis / sizeof epis[0]; e++)
        for (int i = 0; i < n; i++) {
            if (cs[i].c_type == KMUX_I32) continue;
            if (cs[i].a_type != cs[i].b_type ||
                (cs[i].a_type != cs[i].c_type && cs[i].c_type != KMUX_F32))
                continue;
            const unsigned bwd = KMUX_EPILOGUE_DRELU | KMUX_EPILOGUE_DGELU | KMUX_EPILOGUE_BGRADA |
                                 KMUX_EPILOGUE_BGRADB;
            if ((epis[e].e & bwd) && cs[i].a_type != KMUX_F32 && cs[i].a_type != KMUX_F16 &&
                cs[i].a_type != KMUX_BF16)
                continue;
            char body[128];
            combo_label(&cs[i], "", body, sizeof body);
            snprintf(label, sizeof label, "%s: %s", epis[e].name, body);
            kmux_matmul_desc md = matmul_desc(&cs[i], 1, epis[e].e);
            matmul_row(mx, label, &md);
        }
}

static const char *dir_name(kmux_conv_direction d) {
    return d == KMUX_CONV_FWD ? "FWD" : d == KMUX_CONV_BWD_DATA ? "BWD_DATA" : "BWD_WEIGHTS";
}

static void conv_tables(matrix *mx) {
    kmux_type_combination types[MAX_ROWS];
    int nt = read_rows(kmux_conv2d_type_combination_count, kmux_conv2d_type_combination_get, types);
    static const struct {
        int64_t groups;
        const char *name;
    } grouping[] = {{1, ""}, {2, ", 2 groups"}, {32, ", depthwise"}};
    printf("\n## 2-D convolution\n\nkmux_conv2d_plan_create with n = 2, c = k = 32, h = w = 14, "
           "3x3 filter, padding 1, stride 1, dilation 1 (groups as labelled).\n\n");
    print_header_row(mx, "direction, type, compute, layout");
    for (int g = 0; g < 3; g++)
        for (int dir = KMUX_CONV_FWD; dir <= KMUX_CONV_BWD_WEIGHTS; dir++)
            for (int t = 0; t < nt; t++)
                for (int l = 0; l < 2; l++) {
                    if (g > 0 && types[t].a_type == KMUX_F64) continue;
                    kmux_conv2d_desc cd = KMUX_CONV2D_DESC_INIT;
                    cd.direction = (kmux_conv_direction)dir;
                    cd.layout = l ? KMUX_NHWC : KMUX_NCHW;
                    cd.n = 2, cd.c = 32, cd.h = 14, cd.w = 14, cd.k = 32, cd.r = 3, cd.s = 3;
                    cd.groups = grouping[g].groups;
                    cd.pad_top = cd.pad_bottom = cd.pad_left = cd.pad_right = 1;
                    cd.x_type = cd.w_type = cd.y_type = types[t].a_type;
                    cd.compute_type = types[t].compute_type;
                    char label[160];
                    snprintf(label, sizeof label, "%s %s, compute %s, %s%s", dir_name(cd.direction),
                             kmux_dtype_name(types[t].a_type),
                             kmux_compute_type_name(types[t].compute_type), l ? "NHWC" : "NCHW",
                             grouping[g].name);
                    conv_row(mx, label, &cd);
                }
}

static int selected(const char *list, const char *id) {
    return kmux_common_name_listed(list, id);
}

/** Every id of the comma-separated list is one of the selected devices; else 0 with the
 *  missing id's reason on stderr. */
static int all_listed(const kmux_context *ctx, const matrix *mx, const char *list) {
    for (const char *p = list; p && *p;) {
        const char *end = strchr(p, ',');
        size_t len = end ? (size_t)(end - p) : strlen(p);
        int found = 0;
        for (int d = 0; d < mx->ndev && !found; d++) {
            const char *id = kmux_device_id(mx->dev[d]);
            found = strlen(id) == len && strncmp(id, p, len) == 0;
        }
        if (!found && len) {
            char id[64];
            snprintf(id, sizeof id, "%.*s", (int)len, p);
            kmux_device *dev = NULL;
            const char *why = kmux_device_find(ctx, id, &dev) == KMUX_OK
                                  ? "an id kmux_device_find resolves, not a device id"
                                  : kmux_last_error();
            fprintf(stderr, "kmux-support-matrix: --devices names %s, which is not available: %s\n",
                    id, why);
            return 0;
        }
        if (!end) break;
        p = end + 1;
    }
    return 1;
}

static void usage(FILE *f) {
    fprintf(f, "usage: kmux-support-matrix [--verbose] [--all-impls] [--no-emulation] "
               "[--devices=ID,ID...]\n"
               "Prints, as Markdown, which GEMM and convolution combinations every device "
               "supports (plan creation only).\n");
}

int main(int argc, char **argv) {
    options opt = {0, 0, 0, NULL};
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--verbose") == 0)
            opt.verbose = 1;
        else if (strcmp(argv[i], "--all-impls") == 0)
            opt.all_impls = 1;
        else if (strcmp(argv[i], "--no-emulation") == 0)
            opt.no_emulation = 1;
        else if (strncmp(argv[i], "--devices=", 10) == 0)
            opt.devices = argv[i] + 10;
        else if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
            usage(stdout);
            return 0;
        } else {
            fprintf(stderr, "kmux-support-matrix: unknown argument '%s'\n", argv[i]);
            usage(stderr);
            return 2;
        }
    }
    kmux_context *ctx = NULL;
    if (kmux_context_create(NULL, &ctx) != KMUX_OK) {
        fprintf(stderr, "kmux-support-matrix: kmux_context_create: %s\n", kmux_last_error());
        return 1;
    }
    matrix mx;
    memset(&mx, 0, sizeof mx);
    mx.opt = &opt;
    int ndev = 0;
    kmux_device_count(ctx, &ndev);
    for (int i = 0; i < ndev && mx.ndev < MAX_DEVICES; i++) {
        kmux_device *d = NULL;
        if (kmux_device_get(ctx, i, &d) == KMUX_OK && selected(opt.devices, kmux_device_id(d)))
            mx.dev[mx.ndev++] = d;
    }
    if (opt.devices && !all_listed(ctx, &mx, opt.devices)) {
        kmux_context_destroy(ctx);
        return 3;
    }

    /* ---- header: how, where and when this was generated ---- */
    char date[64] = "?";
    time_t now = time(NULL);
    struct tm *tm = gmtime(&now);
    if (tm) strftime(date, sizeof date, "%Y-%m-%d %H:%M UTC", tm);
    printf("# kmux support matrix\n\n");
    printf("Generated by `kmux-support-matrix%s%s%s%s%s` (kmux %s) on %s. Each cell is what the "
           "device's plugin answered to plan creation for that row (nothing was executed): the "
           "implementation it chose, or — when it answered KMUX_ERR_UNSUPPORTED, with the reason "
           "%s. The implementations, their notes and the reasons depend on the machine, the "
           "libraries found and their versions: regenerate it on the machine you care about. "
           "Which rows and columns there are and which cells are supported do not depend on the "
           "CPU: `ctest -R "
           "support_matrix_current` checks them against a fresh run (`cmake --build build "
           "--target support-matrix` regenerates this file). Whether a supported combination "
           "gives the right answer is what `ctest -R conformance` checks.\n\n",
           opt.verbose ? " --verbose" : "", opt.all_impls ? " --all-impls" : "",
           opt.no_emulation ? " --no-emulation" : "", opt.devices ? " --devices=" : "",
           opt.devices ? opt.devices : "", kmux_version(), date,
           opt.verbose ? "in brackets" : "in the footnote");
    /* the host CPU, as a CPU backend names it (ref does not) */
    const char *host = "unknown";
    kmux_device_props hp;
    for (int i = 0; i < ndev; i++) {
        kmux_device *d = NULL;
        if (kmux_device_get(ctx, i, &d) == KMUX_OK && kmux_device_props_get(d, &hp) == KMUX_OK &&
            hp.is_host && strcmp(hp.backend, "ref") != 0 && hp.name[0]) {
            host = hp.name;
            break;
        }
    }
    char host_esc[256];
    md_escape(host, host_esc, sizeof host_esc);
    printf("Machine: %s. Backends and devices:\n\n", host_esc);
    int nb = 0;
    kmux_backend_count(ctx, &nb);
    for (int i = 0; i < nb; i++) {
        kmux_backend_info bi;
        if (kmux_backend_info_get(ctx, i, &bi) != KMUX_OK) continue;
        char esc[CELL];
        md_escape(bi.available ? "" : bi.reason, esc, sizeof esc);
        printf("- backend **%s**%s%s: %s%s\n", bi.name, bi.version && bi.version[0] ? " " : "",
               bi.version ? bi.version : "", bi.available ? "available" : "unavailable — ", esc);
    }
    for (int d = 0; d < mx.ndev; d++) {
        kmux_device_props p;
        if (kmux_device_props_get(mx.dev[d], &p) != KMUX_OK) continue;
        char name[256];
        md_escape(p.name, name, sizeof name);
        printf("- device `%s`: %s, arch %s, %s %d%s%s\n", p.id, name, p.arch,
               p.is_host ? "threads" : "compute units", p.compute_units,
               p.library_version[0] ? ", " : "", p.library_version);
    }

    gemm_tables(&mx);
    conv_tables(&mx);

    if (!opt.verbose && mx.nt.count) {
        printf("\n## Reasons\n\n");
        for (int i = 0; i < mx.nt.count; i++) {
            char esc[CELL * 2];
            md_escape(mx.nt.text[i], esc, sizeof esc);
            printf("%d. %s\n", i + 1, esc);
            free(mx.nt.text[i]);
        }
    }
    kmux_context_destroy(ctx);
    return 0;
}
