/* kb_workload.c - CSV workloads, batch files, the default workload and problem filters. */
#define _POSIX_C_SOURCE 200809L
#include "kb_workload.h"

#include <ctype.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kb_data.h"
#include "kb_util.h"

/* ---- CSV ------------------------------------------------------------------------------------ */

typedef struct row_builder {
    char **cells;
    size_t n, cap;
} row_builder;

static void row_push(row_builder *r, char *cell) {
    if (r->n == r->cap) {
        r->cap = r->cap ? 2 * r->cap : 16;
        r->cells = kb_xrealloc(r->cells, r->cap * sizeof *r->cells);
    }
    r->cells[r->n++] = cell;
}

int kb_csv_parse(const char *text, kb_csv *csv, char *err, size_t err_cap) {
    memset(csv, 0, sizeof *csv);
    char ***rows = NULL;
    size_t *widths = NULL;
    size_t nrows = 0, caprows = 0;
    const char *p = text;
    size_t line = 1;
    while (*p) {
        row_builder r = {NULL, 0, 0};
        for (;;) { /* one field */
            kb_sb f = KB_SB_INIT;
            kb_sb_append(&f, "", 0);
            if (*p == '"') {
                ++p;
                for (;;) {
                    if (!*p) {
                        snprintf(err, err_cap, "line %zu: unterminated quoted field", line);
                        kb_sb_free(&f);
                        for (size_t i = 0; i < r.n; ++i)
                            free(r.cells[i]);
                        free(r.cells);
                        goto fail;
                    }
                    if (*p == '"' && p[1] == '"') {
                        kb_sb_append(&f, "\"", 1);
                        p += 2;
                    } else if (*p == '"') {
                        ++p;
                        break;
                    } else {
                        if (*p == '\n') ++line;
                        kb_sb_append(&f, p++, 1);
                    }
                }
            }
            while (*p && *p != ',' && *p != '\n' && *p != '\r')
                kb_sb_append(&f, p++, 1);
            row_push(&r, f.buf);
            if (*p == ',') {
                ++p;
                continue;
            }
            if (*p == '\r') ++p;
            if (*p == '\n') ++p, ++line;
            break;
        }
        if (r.n == 1 && r.cells[0][0] == '\0') { /* blank line */
            free(r.cells[0]);
            free(r.cells);
            continue;
        }
        if (nrows == caprows) {
            caprows = caprows ? 2 * caprows : 64;
            rows = kb_xrealloc(rows, caprows * sizeof *rows);
            widths = kb_xrealloc(widths, caprows * sizeof *widths);
        }
        rows[nrows] = r.cells;
        widths[nrows++] = r.n;
    }
    if (nrows == 0) {
        snprintf(err, err_cap, "empty CSV");
        goto fail;
    }
    csv->cols = widths[0];
    csv->header = rows[0];
    csv->rows = nrows - 1;
    csv->cell = kb_xcalloc(csv->rows ? csv->rows : 1, sizeof *csv->cell);
    for (size_t i = 1; i < nrows; ++i) {
        if (widths[i] < csv->cols) { /* pad short rows with "" */
            rows[i] = kb_xrealloc(rows[i], csv->cols * sizeof *rows[i]);
            for (size_t c = widths[i]; c < csv->cols; ++c)
                rows[i][c] = kb_xstrdup("");
        } else {
            for (size_t c = csv->cols; c < widths[i]; ++c)
                free(rows[i][c]);
        }
        csv->cell[i - 1] = rows[i];
    }
    free(rows);
    free(widths);
    return 1;
fail:
    for (size_t i = 0; i < nrows; ++i) {
        for (size_t c = 0; c < widths[i]; ++c)
            free(rows[i][c]);
        free(rows[i]);
    }
    free(rows);
    free(widths);
    return 0;
}

int kb_csv_col(const kb_csv *csv, const char *name) {
    for (size_t c = 0; c < csv->cols; ++c)
        if (!strcmp(csv->header[c], name)) return (int)c;
    return -1;
}

const char *kb_csv_get(const kb_csv *csv, size_t row, const char *name) {
    int c = kb_csv_col(csv, name);
    return c < 0 || row >= csv->rows ? "" : csv->cell[row][c];
}

void kb_csv_free(kb_csv *csv) {
    for (size_t r = 0; r < csv->rows; ++r) {
        for (size_t c = 0; c < csv->cols; ++c)
            free(csv->cell[r][c]);
        free(csv->cell[r]);
    }
    for (size_t c = 0; c < csv->cols; ++c)
        free(csv->header[c]);
    free(csv->header);
    free(csv->cell);
    memset(csv, 0, sizeof *csv);
}

char *kb_workload_file(const char *file, const char *dir, char *err, size_t err_cap) {
    if (dir) {
        kb_sb path = KB_SB_INIT;
        kb_sb_printf(&path, "%s/%s", dir, file);
        char *t = kb_read_file(kb_sb_str(&path), NULL);
        if (!t) snprintf(err, err_cap, "cannot read %s", kb_sb_str(&path));
        kb_sb_free(&path);
        return t;
    }
    const char *d = kb_data_get(file, NULL);
    if (!d) {
        snprintf(err, err_cap, "workload file %s was not embedded at build time", file);
        return NULL;
    }
    return kb_xstrdup(d);
}

/* ---- workloads ------------------------------------------------------------------------------ */

static const char *const workload_names[] = {
    "default", "deepbench-gemm-train", "deepbench-conv-train", "resnet50", "resnet50-v1", NULL};

const char *const *kb_workload_names(void) {
    return workload_names;
}

const char *kb_workload_about(const char *name) {
    if (!strcmp(name, "default"))
        return "a few DeepBench training GEMMs and ResNet-50 v1.5 convolutions (mb2, every "
               "direction); what runs without arguments";
    if (!strcmp(name, "deepbench-gemm-train"))
        return "Baidu DeepBench training GEMMs (160; column-major M,N,K,transA,transB as DeepBench "
               "calls cuBLAS)";
    if (!strcmp(name, "deepbench-conv-train"))
        return "Baidu DeepBench training convolutions (94, NCHW)";
    if (!strcmp(name, "resnet50"))
        return "ResNet-50 v1.5: its 23 distinct convolutions (mb2, --mb to change), every "
               "direction, with the whole-network training-step time";
    if (!strcmp(name, "resnet50-v1"))
        return "ResNet-50 v1: its 20 distinct convolutions (mb50 as in benchdnn's file), every "
               "direction, with the whole-network training-step time";
    return "";
}

int kb_workload_is_network(const char *name) {
    return !strncmp(name, "resnet50", 8);
}

/* A name without spaces or quotes, so that descriptors stay one shell word. */
static void clean_name(char *s) {
    for (; *s; ++s)
        if (isspace((unsigned char)*s) || *s == '"') *s = '_';
}

static int parse_int_cell(const kb_csv *csv, size_t row, const char *col, int64_t *v, char *err,
                          size_t err_cap) {
    if (!kb_parse_i64(kb_csv_get(csv, row, col), v)) {
        snprintf(err, err_cap, "row %zu: bad or missing %s '%s'", row + 2, col,
                 kb_csv_get(csv, row, col));
        return 0;
    }
    return 1;
}

static int key_selected(const char *const *keys, const char *key) {
    if (!keys) return 1;
    for (; *keys; ++keys)
        if (!strcmp(*keys, key)) return 1;
    return 0;
}

static int load_deepbench_gemm(const kb_csv *csv, const kb_settings *base, const char *const *keys,
                               kb_problem_list *out, char *err, size_t err_cap) {
    for (size_t r = 0; r < csv->rows; ++r) {
        if (!key_selected(keys, kb_csv_get(csv, r, "index_in_set"))) continue;
        kb_problem p;
        memset(&p, 0, sizeof p);
        p.op = KB_OP_MATMUL;
        p.set = *base;
        p.occurrences = 1;
        int64_t m, n, k;
        if (!parse_int_cell(csv, r, "M", &m, err, err_cap) ||
            !parse_int_cell(csv, r, "N", &n, err, err_cap) ||
            !parse_int_cell(csv, r, "K", &k, err, err_cap))
            return 0;
        const char *ta = kb_csv_get(csv, r, "transA"), *tb = kb_csv_get(csv, r, "transB");
        if ((strcmp(ta, "N") && strcmp(ta, "T")) || (strcmp(tb, "N") && strcmp(tb, "T"))) {
            snprintf(err, err_cap, "row %zu: transA/transB must be N or T", r + 2);
            return 0;
        }
        p.mm.m = m, p.mm.n = n, p.mm.k = k, p.mm.batch_a = p.mm.batch_b = 1;
        /* DeepBench calls column-major cuBLAS: C (MxN) is column-major ("ba"); A is stored
         * M x K column-major when transA = N ("ba"), K x M column-major = M x K row-major
         * ("ab") when transA = T; likewise B. */
        p.set.dtag = 1;
        p.set.stag = !strcmp(ta, "N");
        p.set.wtag = !strcmp(tb, "N");
        snprintf(p.name, sizeof p.name, "deepbench-gemm-train:%s:%s",
                 kb_csv_get(csv, r, "index_in_set"), kb_csv_get(csv, r, "application"));
        clean_name(p.name);
        kb_strlcpy(p.workload, "deepbench-gemm-train", sizeof p.workload);
        kb_problem_list_push(out, &p);
    }
    return 1;
}

static int load_deepbench_conv(const kb_csv *csv, const kb_settings *base, const char *const *keys,
                               kb_problem_list *out, char *err, size_t err_cap) {
    for (size_t r = 0; r < csv->rows; ++r) {
        if (!key_selected(keys, kb_csv_get(csv, r, "index_in_set"))) continue;
        kb_problem p;
        memset(&p, 0, sizeof p);
        p.op = KB_OP_CONV;
        p.set = *base;
        p.occurrences = 1;
        int64_t W, H, C, N, K, S, R, pw, ph, sw, sh;
        if (!parse_int_cell(csv, r, "W", &W, err, err_cap) ||
            !parse_int_cell(csv, r, "H", &H, err, err_cap) ||
            !parse_int_cell(csv, r, "C", &C, err, err_cap) ||
            !parse_int_cell(csv, r, "N", &N, err, err_cap) ||
            !parse_int_cell(csv, r, "K", &K, err, err_cap) ||
            !parse_int_cell(csv, r, "S_filter_w", &S, err, err_cap) ||
            !parse_int_cell(csv, r, "R_filter_h", &R, err, err_cap) ||
            !parse_int_cell(csv, r, "pad_w", &pw, err, err_cap) ||
            !parse_int_cell(csv, r, "pad_h", &ph, err, err_cap) ||
            !parse_int_cell(csv, r, "stride_w", &sw, err, err_cap) ||
            !parse_int_cell(csv, r, "stride_h", &sh, err, err_cap))
            return 0;
        char desc[256], derr[256];
        snprintf(desc, sizeof desc,
                 "mb%lldic%lldih%lldiw%lldoc%lldkh%lldkw%lldsh%lldsw%lldph%lldpw%lld", (long long)N,
                 (long long)C, (long long)H, (long long)W, (long long)K, (long long)R, (long long)S,
                 (long long)sh, (long long)sw, (long long)ph, (long long)pw);
        if (!kb_parse_conv_desc(desc, &p.cv, NULL, 0, derr, sizeof derr)) {
            snprintf(err, err_cap, "row %zu: %s", r + 2, derr);
            return 0;
        }
        snprintf(p.name, sizeof p.name, "deepbench-conv-train:%s:%s",
                 kb_csv_get(csv, r, "index_in_set"), kb_csv_get(csv, r, "application"));
        clean_name(p.name);
        kb_strlcpy(p.workload, "deepbench-conv-train", sizeof p.workload);
        kb_problem_list_push(out, &p);
    }
    return 1;
}

static int load_resnet(const kb_csv *csv, const char *variant, const char *wl_name,
                       const kb_settings *base, const char *const *keys, kb_problem_list *out,
                       char *err, size_t err_cap) {
    for (size_t r = 0; r < csv->rows; ++r) {
        if (strcmp(kb_csv_get(csv, r, "variant"), variant)) continue;
        if (!key_selected(keys, kb_csv_get(csv, r, "layer"))) continue;
        kb_problem p;
        memset(&p, 0, sizeof p);
        p.set = *base;
        char derr[256];
        if (!kb_parse_desc(kb_csv_get(csv, r, "benchdnn_descriptor"), &p, derr, sizeof derr) ||
            p.op != KB_OP_CONV) {
            snprintf(err, err_cap, "row %zu: %s", r + 2, derr);
            return 0;
        }
        int64_t mb, occ;
        if (!parse_int_cell(csv, r, "N_benchdnn_mb", &mb, err, err_cap) ||
            !parse_int_cell(csv, r, "occurrences_in_net", &occ, err, err_cap))
            return 0;
        p.cv.mb = mb;
        p.occurrences = (int)occ;
        clean_name(p.name);
        kb_strlcpy(p.workload, wl_name, sizeof p.workload);
        kb_problem_list_push(out, &p);
    }
    return 1;
}

static int load_rows(const char *name, const kb_settings *base, const char *dir,
                     const char *const *keys, kb_problem_list *out, char *err, size_t err_cap) {
    const char *file = !strcmp(name, "deepbench-gemm-train")   ? "deepbench_gemm_train.csv"
                       : !strcmp(name, "deepbench-conv-train") ? "deepbench_conv_train.csv"
                       : kb_workload_is_network(name)          ? "resnet50_conv.csv"
                                                               : NULL;
    if (!file) {
        snprintf(err, err_cap, "unknown workload '%s' (see --list-workloads)", name);
        return 0;
    }
    char ferr[256];
    char *text = kb_workload_file(file, dir, ferr, sizeof ferr);
    if (!text) {
        snprintf(err, err_cap, "%s", ferr);
        return 0;
    }
    kb_csv csv;
    int ok = kb_csv_parse(text, &csv, ferr, sizeof ferr);
    free(text);
    if (!ok) {
        snprintf(err, err_cap, "%s: %s", file, ferr);
        return 0;
    }
    char rerr[300];
    if (!strcmp(name, "deepbench-gemm-train"))
        ok = load_deepbench_gemm(&csv, base, keys, out, rerr, sizeof rerr);
    else if (!strcmp(name, "deepbench-conv-train"))
        ok = load_deepbench_conv(&csv, base, keys, out, rerr, sizeof rerr);
    else if (!strcmp(name, "resnet50"))
        ok = load_resnet(&csv, "resnet50_v1.5", name, base, keys, out, rerr, sizeof rerr);
    else
        ok = load_resnet(&csv, "resnet50_v1", name, base, keys, out, rerr, sizeof rerr);
    if (!ok) snprintf(err, err_cap, "%s: %s", file, rerr);
    kb_csv_free(&csv);
    return ok;
}

/* The default workload: small enough for a 2-core CPU in about a minute with ref + OpenBLAS +
 * oneDNN, varied enough to show the comparison (square, skinny and transposed GEMMs; 7x7, 3x3,
 * strided and 1x1 convolutions in every direction). */
static const char *const default_gemm_rows[] = {"2", "23", "63", "86", "138", NULL};
static const char *const default_conv_layers[] = {
    "conv1", "res2a_branch2b", "res3a_branch2b", "res4b_branch2a", "res5a_branch1", NULL};

int kb_workload_load(const char *name, const kb_settings *base, int dir_given, const char *dir,
                     kb_problem_list *out, char *err, size_t err_cap) {
    kb_settings s = *base;
    if (!strcmp(name, "default")) {
        if (!load_rows("deepbench-gemm-train", &s, dir, default_gemm_rows, out, err, err_cap))
            return 0;
        if (!dir_given) s.dir_mask = KB_DIR_ALL;
        return load_rows("resnet50", &s, dir, default_conv_layers, out, err, err_cap);
    }
    if (kb_workload_is_network(name) && !dir_given) s.dir_mask = KB_DIR_ALL;
    return load_rows(name, &s, dir, NULL, out, err, err_cap);
}

/* ---- settings options and batch files ------------------------------------------------------- */

static int tag_value(const char *v, int *tag) {
    if (!strcmp(v, "ab") || !strcmp(v, "abc") || !strcmp(v, "row") || !strcmp(v, "any")) {
        *tag = 0;
        return 1;
    }
    if (!strcmp(v, "ba") || !strcmp(v, "acb") || !strcmp(v, "col")) {
        *tag = 1;
        return 1;
    }
    return 0;
}

int kb_settings_apply(kb_settings *s, const kb_settings *defaults, const char *opt, int *dir_given,
                      char *err, size_t err_cap) {
    if (!strcmp(opt, "--reset")) {
        *s = *defaults;
        return 1;
    }
    if (strncmp(opt, "--", 2)) return 0;
    const char *eq = strchr(opt, '=');
    if (!eq) return 0;
    char key[32];
    size_t kl = (size_t)(eq - opt - 2);
    if (kl >= sizeof key) return 0;
    memcpy(key, opt + 2, kl);
    key[kl] = '\0';
    const char *v = eq + 1;
    if (!strcmp(key, "dir")) {
        if (!kb_parse_dir(v, &s->dir_mask)) goto bad;
        if (dir_given) *dir_given = 1;
    } else if (!strcmp(key, "dt") || !strcmp(key, "cfg")) {
        if (!kb_parse_dt_triple(v, s->dt)) goto bad;
    } else if (!strcmp(key, "compute")) {
        if (!strcmp(v, "auto") || !strcmp(v, ""))
            s->compute = (kmux_compute_type)0;
        else if (!kb_parse_compute(v, &s->compute))
            goto bad;
    } else if (!strcmp(key, "layout")) {
        if (kb_strieq(v, "nchw"))
            s->layout = KMUX_NCHW;
        else if (kb_strieq(v, "nhwc"))
            s->layout = KMUX_NHWC;
        else
            goto bad;
    } else if (!strcmp(key, "mb")) {
        int64_t mb;
        if (!kb_parse_i64(v, &mb) || mb < 0 || mb > KB_DESC_VALUE_MAX) goto bad;
        s->mb = mb;
    } else if (!strcmp(key, "stag")) {
        if (!tag_value(v, &s->stag)) goto bad;
    } else if (!strcmp(key, "wtag")) {
        if (!tag_value(v, &s->wtag)) goto bad;
    } else if (!strcmp(key, "dtag")) {
        if (!tag_value(v, &s->dtag)) goto bad;
    } else {
        return 0;
    }
    return 1;
bad:
    snprintf(err, err_cap, "bad value in %s", opt);
    return -1;
}

/* Splits a line into tokens at white space; double quotes group (and are kept). */
static size_t tokenize(char *line, char **tok, size_t max) {
    size_t n = 0;
    char *p = line;
    while (*p) {
        while (*p && isspace((unsigned char)*p))
            ++p;
        if (!*p || *p == '#') break;
        if (n == max) break;
        tok[n++] = p;
        int q = 0;
        while (*p && (q || !isspace((unsigned char)*p))) {
            if (*p == '"') q = !q;
            ++p;
        }
        if (*p) *p++ = '\0';
    }
    return n;
}

int kb_batch_parse(const char *text, const char *origin, const char *base_dir,
                   const kb_settings *start, kb_problem_list *out, char *err, size_t err_cap) {
    kb_settings s = *start;
    char *copy = kb_xstrdup(text);
    char *save = NULL;
    int line = 0, ok = 1;
    for (char *l = copy; l && ok; l = save) {
        char *nl = strchr(l, '\n');
        save = nl ? nl + 1 : NULL;
        if (nl) *nl = '\0';
        ++line;
        char *tok[64];
        size_t nt = tokenize(l, tok, 64);
        for (size_t i = 0; i < nt && ok; ++i) {
            char e[300];
            if (!strncmp(tok[i], "--batch=", 8)) {
                kb_sb path = KB_SB_INIT;
                if (tok[i][8] == '/' || !base_dir)
                    kb_sb_printf(&path, "%s", tok[i] + 8);
                else
                    kb_sb_printf(&path, "%s/%s", base_dir, tok[i] + 8);
                ok = kb_batch_load(kb_sb_str(&path), &s, out, e, sizeof e);
                kb_sb_free(&path);
                if (!ok) snprintf(err, err_cap, "%s:%d: %s", origin, line, e);
                continue;
            }
            int r = kb_settings_apply(&s, start, tok[i], NULL, e, sizeof e);
            if (r < 0 || (r == 0 && tok[i][0] == '-')) {
                snprintf(err, err_cap, "%s:%d: %s", origin, line,
                         r < 0 ? e : "option not allowed in a batch file");
                ok = 0;
            } else if (r == 0) {
                kb_problem p;
                memset(&p, 0, sizeof p);
                p.set = s;
                p.occurrences = 1;
                if (!kb_parse_desc(tok[i], &p, e, sizeof e)) {
                    snprintf(err, err_cap, "%s:%d: %s", origin, line, e);
                    ok = 0;
                } else {
                    kb_problem_list_push(out, &p);
                }
            }
        }
    }
    free(copy);
    return ok;
}

int kb_batch_load(const char *path, const kb_settings *start, kb_problem_list *out, char *err,
                  size_t err_cap) {
    char *text = kb_read_file(path, NULL);
    if (!text) {
        snprintf(err, err_cap, "cannot read batch file %s", path);
        return 0;
    }
    char *dir = kb_xstrdup(path);
    char *slash = strrchr(dir, '/');
    if (slash)
        *slash = '\0';
    else
        kb_strlcpy(dir, ".", 2);
    int ok = kb_batch_parse(text, path, dir, start, out, err, err_cap);
    free(dir);
    free(text);
    return ok;
}

int kb_filter(kb_problem_list *l, const char *regex, long limit, char *err, size_t err_cap) {
    size_t keep = 0;
    regex_t re;
    if (regex) {
        int rc = regcomp(&re, regex, REG_EXTENDED | REG_NOSUB);
        if (rc) {
            char msg[128];
            regerror(rc, &re, msg, sizeof msg);
            snprintf(err, err_cap, "--match=%s: %s", regex, msg);
            return 0;
        }
    }
    for (size_t i = 0; i < l->n; ++i) {
        if (limit >= 0 && keep >= (size_t)limit) break;
        int match = 1;
        if (regex) {
            char desc[512];
            kb_format_desc(&l->v[i], desc, sizeof desc);
            match =
                regexec(&re, desc, 0, NULL, 0) == 0 || regexec(&re, l->v[i].name, 0, NULL, 0) == 0;
        }
        if (match) l->v[keep++] = l->v[i];
    }
    l->n = keep;
    if (regex) regfree(&re);
    return 1;
}

void kb_expand_directions(const kb_problem_list *in, kb_problem_list *out) {
    static const kb_dir dirs[] = {KB_DIR_FWD, KB_DIR_BWD_D, KB_DIR_BWD_W};
    for (size_t i = 0; i < in->n; ++i) {
        kb_problem p = in->v[i];
        if (p.op == KB_OP_MATMUL) {
            p.dir = KB_DIR_FWD;
            kb_problem_list_push(out, &p);
            continue;
        }
        for (size_t d = 0; d < 3; ++d)
            if (p.set.dir_mask & (unsigned)dirs[d]) {
                p.dir = dirs[d];
                kb_problem_list_push(out, &p);
            }
    }
}
