/* kb_workload.c - the CSV workloads, the default workload and problem filters (CSV reading:
 * kb_csv.c; batch files and settings options: kb_batch.c). */
#define _POSIX_C_SOURCE 200809L
#include "kb_workload.h"

#include <ctype.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kb_data.h"
#include "kb_util.h"

char *kb_workload_file(const char *file, const char *dir, char *err, size_t err_cap) {
    if (dir) {
        kb_sb path = KB_SB_INIT;
        kb_sb_printf(&path, "%s/%s", dir, file);
        size_t len = 0;
        int too_big = 0;
        char *t = kb_read_file_max(kb_sb_str(&path), KB_BATCH_BYTES_MAX, &len, &too_big);
        if (!t && too_big)
            snprintf(err, err_cap, "%s is larger than %d MiB", kb_sb_str(&path),
                     KB_BATCH_BYTES_MAX >> 20);
        else if (!t)
            snprintf(err, err_cap, "cannot read %s", kb_sb_str(&path));
        else if (memchr(t, '\0', len)) { /* the rows after it would be dropped */
            snprintf(err, err_cap, "%s: a NUL byte: not a CSV file", kb_sb_str(&path));
            free(t);
            t = NULL;
        }
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
