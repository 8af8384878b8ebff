/*
 * ck_targets.c - default targets with their sources, and the target-file parser.
 */
#define _POSIX_C_SOURCE 200809L /* stat */
#include "ck_targets.h"

#include <ctype.h>
#include <errno.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

typedef struct target_key {
    const char *key;
    size_t offset;
    double def;
    int is_frac; /* 1: a fraction in [0, 1]; 0: a rate >= 0 */
    const char *source;
} target_key;

#define T(field, def, frac, src)                                                                   \
    { #field, offsetof(ck_targets, field), def, frac, src }

static const target_key keys[] = {
    T(gemm_pass_frac, 0.70, 1,
      "70% of the datasheet dense peak for a large GEMM: what cuBLASLt/hipBLASLt reach on "
      "square bf16/f16 GEMMs of 8192 (issue 12)"),
    T(gemm_fail_frac, 0.50, 1, "below half the peak is a misconfiguration, not a tuning gap"),
    T(cpu_gemm_pass_frac, 0.60, 1,
      "60% of cores x FMA width x max clock: all-core clocks run below the single-core maximum"),
    T(cpu_gemm_fail_frac, 0.30, 1, "below 30% the BLAS runs old kernels or too few threads"),
    T(devmem_pass_frac, 0.80, 1,
      "80% of the datasheet memory bandwidth for a device copy (issue 12; BabelStream copy on "
      "H100/MI300X reaches 80-90%)"),
    T(devmem_fail_frac, 0.50, 1, "below half the bandwidth: clocks, ECC scrubbing or a bad part"),
    T(h2d_pinned_pass_frac, 0.70, 1,
      "70% of the link's per-direction rate for pinned copies (PCIe Gen4 x16 31.5 GB/s gives "
      "~22; measured cards reach 24-26); a shortfall is a WARN"),
    T(h2d_pageable_pass_frac, 0.50, 1,
      "50% of the link rate for pageable copies: they are staged through a pinned bounce "
      "buffer, which costs about half; a shortfall is a WARN"),
    T(cpu_stream_pass_frac, 0.60, 1,
      "60% of channels x MT/s x 8 bytes for a STREAM triad (STREAM results on servers: 60-80%); "
      "WARN only"),
    T(link_rate_gbps, 0.0, 0, "0: from the device's PCIe generation and width"),
    T(cpu_mem_peak_gbps, 0.0, 0, "0: from the DMI memory device tables (type 17)"),
};

#define NKEYS (sizeof keys / sizeof keys[0])

void ck_targets_default(ck_targets *t) {
    memset(t, 0, sizeof *t);
    for (size_t i = 0; i < NKEYS; i++)
        *(double *)((char *)t + keys[i].offset) = keys[i].def;
    snprintf(t->origin, sizeof t->origin, "defaults");
}

static int set_key(ck_targets *t, const char *key, double v, char *err, size_t err_size) {
    for (size_t i = 0; i < NKEYS; i++) {
        if (strcmp(keys[i].key, key) != 0) continue;
        if (v != v || v < 0 || (keys[i].is_frac && v > 1) || v > 1e6) {
            snprintf(err, err_size, "target %s=%g is out of range (%s)", key, v,
                     keys[i].is_frac ? "a fraction in [0, 1]" : "a rate >= 0 in GB/s");
            return -1;
        }
        *(double *)((char *)t + keys[i].offset) = v;
        return 0;
    }
    snprintf(err, err_size, "unknown target key \"%s\" (kmux-check --help lists them)", key);
    return -1;
}

static int parse_json(const char *text, ck_targets *t, char *err, size_t err_size) {
    json_error_t je;
    json_t *root = json_loads(text, 0, &je);
    if (!root) {
        snprintf(err, err_size, "target file: JSON error at line %d: %s", je.line, je.text);
        return -1;
    }
    int rc = 0;
    if (!json_is_object(root)) {
        snprintf(err, err_size, "target file: the JSON value must be an object of numbers");
        rc = -1;
    }
    const char *key;
    json_t *value;
    json_object_foreach(root, key, value) {
        if (rc) break;
        if (!json_is_number(value)) {
            snprintf(err, err_size, "target %s: value is not a number", key);
            rc = -1;
        } else {
            rc = set_key(t, key, json_number_value(value), err, err_size);
        }
    }
    json_decref(root);
    return rc;
}

/* A pass threshold below its fail threshold would make a value both pass and fail. */
static int check_pairs(const ck_targets *t, char *err, size_t err_size) {
    static const struct {
        const char *pass, *fail;
        size_t po, fo;
    } pairs[] = {
        {"gemm_pass_frac", "gemm_fail_frac", offsetof(ck_targets, gemm_pass_frac),
         offsetof(ck_targets, gemm_fail_frac)},
        {"cpu_gemm_pass_frac", "cpu_gemm_fail_frac", offsetof(ck_targets, cpu_gemm_pass_frac),
         offsetof(ck_targets, cpu_gemm_fail_frac)},
        {"devmem_pass_frac", "devmem_fail_frac", offsetof(ck_targets, devmem_pass_frac),
         offsetof(ck_targets, devmem_fail_frac)},
    };
    for (size_t i = 0; i < sizeof pairs / sizeof pairs[0]; i++) {
        double pass = *(const double *)((const char *)t + pairs[i].po);
        double fail = *(const double *)((const char *)t + pairs[i].fo);
        if (pass < fail) {
            snprintf(err, err_size,
                     "targets contradict: %s=%g is below %s=%g (a value between them would "
                     "both pass and fail)",
                     pairs[i].pass, pass, pairs[i].fail, fail);
            return -1;
        }
    }
    return 0;
}

static int parse_text(const char *text, ck_targets *t, char *err, size_t err_size);

int ck_targets_parse(const char *text, ck_targets *t, char *err, size_t err_size) {
    const char *p = text;
    while (isspace((unsigned char)*p))
        p++;
    ck_targets next = *t; /* all or nothing: a file that fails half-way changes no target */
    int rc =
        *p == '{' ? parse_json(p, &next, err, err_size) : parse_text(text, &next, err, err_size);
    if (rc == 0) rc = check_pairs(&next, err, err_size);
    if (rc == 0) *t = next;
    return rc;
}

static int parse_text(const char *text, ck_targets *t, char *err, size_t err_size) {
    int line_no = 0;
    while (*text) {
        line_no++;
        size_t len = strcspn(text, "\n");
        char line[512];
        if (len >= sizeof line) { /* cut, a padded value once read as another one */
            snprintf(err, err_size, "target file line %d: longer than %zu characters", line_no,
                     sizeof line - 1);
            return -1;
        }
        snprintf(line, sizeof line, "%.*s", (int)len, text);
        text += len + (text[len] == '\n');
        line[strcspn(line, "#")] = '\0';
        char *s = line;
        while (isspace((unsigned char)*s))
            s++;
        if (!*s) continue;
        char *eq = strchr(s, '=');
        if (!eq) {
            snprintf(err, err_size, "target file line %d: expected key=value, got \"%s\"", line_no,
                     s);
            return -1;
        }
        *eq = '\0';
        char *k_end = eq;
        while (k_end > s && isspace((unsigned char)k_end[-1]))
            *--k_end = '\0';
        char *end = NULL;
        errno = 0;
        double v = strtod(eq + 1, &end);
        while (end && isspace((unsigned char)*end))
            end++;
        if (end == eq + 1 || (end && *end) || errno) {
            snprintf(err, err_size, "target file line %d: %s: \"%s\" is not a number", line_no, s,
                     eq + 1);
            return -1;
        }
        if (set_key(t, s, v, err, err_size) != 0) return -1;
    }
    return 0;
}

int ck_targets_load(const char *path, ck_targets *t, char *err, size_t err_size) {
    struct stat sb;
    if (stat(path, &sb) == 0 && !S_ISREG(sb.st_mode)) { /* a folder, a FIFO (would block), ... */
        snprintf(err, err_size, "--target-file=%s: not a regular file (%s)", path,
                 S_ISDIR(sb.st_mode)    ? "a directory"
                 : S_ISFIFO(sb.st_mode) ? "a FIFO"
                                        : "a device");
        return -1;
    }
    FILE *f = fopen(path, "r");
    if (!f) {
        snprintf(err, err_size, "--target-file=%s: cannot open: %s", path, strerror(errno));
        return -1;
    }
    char buf[16384];
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    int read_error = ferror(f), too_big = !read_error && !feof(f);
    fclose(f);
    if (read_error) {
        snprintf(err, err_size, "--target-file=%s: cannot read", path);
        return -1;
    }
    if (too_big) {
        snprintf(err, err_size, "--target-file=%s: larger than %zu bytes", path, sizeof buf - 1);
        return -1;
    }
    if (memchr(buf, '\0', n)) {
        snprintf(err, err_size, "--target-file=%s: a NUL byte at offset %zu (not a text file)",
                 path, (size_t)((char *)memchr(buf, '\0', n) - buf));
        return -1;
    }
    buf[n] = '\0';
    if (ck_targets_parse(buf, t, err, err_size) != 0) return -1;
    snprintf(t->origin, sizeof t->origin, "%s", path);
    return 0;
}

void ck_targets_print(FILE *out, const ck_targets *t) {
    for (size_t i = 0; i < NKEYS; i++)
        fprintf(out, "  %s=%g\n      # %s\n", keys[i].key,
                *(const double *)((const char *)t + keys[i].offset), keys[i].source);
}
