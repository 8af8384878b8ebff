/*
 * ck_targets.h - kmux-check's targets: the fraction of a reference rate (device peak, link rate,
 * memory bandwidth) each speed check must reach, with the source of every default, and their
 * override by a file (--target-file=FILE).
 *
 * File format: either key=value lines ('#' starts a comment, blank lines ignored), or one JSON
 * object {"key": number, ...} (a file whose first non-blank character is '{'). Keys are the
 * names in the table of ck_targets.c (kmux-check --help lists them with their defaults). An
 * unknown key, a value that is not a number, or a fraction outside [0, 1] is an error.
 */
#ifndef KMUX_CHECK_TARGETS_H
#define KMUX_CHECK_TARGETS_H

#include <stddef.h>
#include <stdio.h>

typedef struct ck_targets {
    double gemm_pass_frac, gemm_fail_frac;         /* GPU GEMM vs peak_flops[dtype] */
    double cpu_gemm_pass_frac, cpu_gemm_fail_frac; /* CPU GEMM vs peak_flops[f32] */
    double devmem_pass_frac, devmem_fail_frac;     /* device copy vs mem_bandwidth_gbps */
    double h2d_pinned_pass_frac;                   /* host<->device, pinned, vs link rate */
    double h2d_pageable_pass_frac;                 /* host<->device, pageable, vs link rate */
    double cpu_stream_pass_frac;                   /* CPU triad vs channels x MT/s x 8 B */
    double link_rate_gbps;    /* per direction; 0: from the device's PCIe link */
    double cpu_mem_peak_gbps; /* 0: from the DMI memory tables */
    char origin[256];         /* "defaults" or the file the values came from */
} ck_targets;

/** Fills t with the defaults. */
void ck_targets_default(ck_targets *t);

/** Applies the overrides in text (format above) to t. Returns 0, or -1 with err naming the line
 *  or key and the value. */
int ck_targets_parse(const char *text, ck_targets *t, char *err, size_t err_size);

/** Reads path and applies it (ck_targets_parse). Returns 0, or -1 with err. */
int ck_targets_load(const char *path, ck_targets *t, char *err, size_t err_size);

/** Writes "key=value  # source" for every key (for --help and the documentation). */
void ck_targets_print(FILE *out, const ck_targets *t);

#endif
