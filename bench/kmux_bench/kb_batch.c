/* kb_batch.c - settings options (--dir, --dt, ...) and benchdnn-style batch files. */
#define _XOPEN_SOURCE 700 /* realpath */
#include "kb_workload.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kb_util.h"

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

/* Splits a line into tokens at white space; double quotes group (and are kept). tok has room
 * for every token the line can hold (strlen / 2 + 1). */
static size_t tokenize(char *line, char **tok) {
    size_t n = 0;
    char *p = line;
    while (*p) {
        while (*p && isspace((unsigned char)*p))
            ++p;
        if (!*p || *p == '#') break;
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

/* The files being read, outermost first: an include of one of them is a cycle, and the depth
 * is bounded (a chain of distinct files cannot exhaust the stack either). */
#define KB_BATCH_DEPTH_MAX 16
typedef struct batch_chain {
    const char *file[KB_BATCH_DEPTH_MAX];
    int n;
} batch_chain;

static int batch_load(const char *path, const kb_settings *start, kb_problem_list *out,
                      batch_chain *chain, char *err, size_t err_cap);

static int batch_parse(const char *text, size_t len, const char *origin, const char *base_dir,
                       const kb_settings *start, kb_problem_list *out, batch_chain *chain,
                       char *err, size_t err_cap) {
    const char *nul = memchr(text, '\0', len);
    if (nul) { /* a NUL byte once ended the file silently */
        int line = 1;
        for (const char *c = text; c < nul; ++c)
            line += *c == '\n';
        snprintf(err, err_cap, "%s:%d: a NUL byte (offset %zu): not a text file", origin, line,
                 (size_t)(nul - text));
        return 0;
    }
    kb_settings s = *start;
    char *copy = kb_xstrdup(text);
    char *save = NULL;
    int line = 0, ok = 1;
    for (char *l = copy; l && ok; l = save) {
        char *nl = strchr(l, '\n');
        save = nl ? nl + 1 : NULL;
        if (nl) *nl = '\0';
        ++line;
        char **tok = malloc((strlen(l) / 2 + 1) * sizeof *tok);
        if (!tok) {
            snprintf(err, err_cap, "%s:%d: out of memory", origin, line);
            ok = 0;
            break;
        }
        size_t nt = tokenize(l, tok);
        for (size_t i = 0; i < nt && ok; ++i) {
            char e[600];
            if (!strncmp(tok[i], "--batch=", 8)) {
                kb_sb path = KB_SB_INIT;
                if (tok[i][8] == '/' || !base_dir)
                    kb_sb_printf(&path, "%s", tok[i] + 8);
                else
                    kb_sb_printf(&path, "%s/%s", base_dir, tok[i] + 8);
                ok = batch_load(kb_sb_str(&path), &s, out, chain, e, sizeof e);
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
                /* a valid problem kmux cannot run (3-D) is kept, reported UNSUPPORTED when the
                 * batch runs; a descriptor that does not parse stops the batch (as benchdnn) */
                if (!kb_parse_problem(tok[i], &p, e, sizeof e)) {
                    snprintf(err, err_cap, "%s:%d: %s", origin, line, e);
                    ok = 0;
                } else {
                    kb_problem_list_push(out, &p);
                }
            }
        }
        free(tok);
    }
    free(copy);
    return ok;
}

int kb_batch_parse(const char *text, const char *origin, const char *base_dir,
                   const kb_settings *start, kb_problem_list *out, char *err, size_t err_cap) {
    batch_chain chain = {{0}, 0};
    return batch_parse(text, strlen(text), origin, base_dir, start, out, &chain, err, err_cap);
}

static int batch_load(const char *path, const kb_settings *start, kb_problem_list *out,
                      batch_chain *chain, char *err, size_t err_cap) {
    char *real = realpath(path, NULL);
    if (real) {
        for (int i = 0; i < chain->n; ++i)
            if (!strcmp(chain->file[i], real)) {
                snprintf(err, err_cap, "%s includes itself (through %d --batch= levels)", path,
                         chain->n - i);
                free(real);
                return 0;
            }
    }
    if (chain->n == KB_BATCH_DEPTH_MAX) {
        snprintf(err, err_cap, "%s: --batch= nested more than %d deep", path, KB_BATCH_DEPTH_MAX);
        free(real);
        return 0;
    }
    size_t len = 0;
    int too_big = 0;
    char *text = kb_read_file_max(path, KB_BATCH_BYTES_MAX, &len, &too_big);
    if (!text) {
        if (too_big)
            snprintf(err, err_cap, "batch file %s is larger than %d MiB (not a batch file?)", path,
                     KB_BATCH_BYTES_MAX >> 20);
        else
            snprintf(err, err_cap, "cannot read batch file %s", path);
        free(real);
        return 0;
    }
    char *dir = kb_xstrdup(path);
    char *slash = strrchr(dir, '/');
    if (slash)
        *slash = '\0';
    else
        kb_strlcpy(dir, ".", 2);
    chain->file[chain->n++] = real ? real : path;
    int ok = batch_parse(text, len, path, dir, start, out, chain, err, err_cap);
    chain->n--;
    free(dir);
    free(text);
    free(real);
    return ok;
}

int kb_batch_load(const char *path, const kb_settings *start, kb_problem_list *out, char *err,
                  size_t err_cap) {
    batch_chain chain = {{0}, 0};
    return batch_load(path, start, out, &chain, err, err_cap);
}
