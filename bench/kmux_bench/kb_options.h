/*
 * kb_options.h - the command line of kmux-bench (the `report` subcommand has its own, in
 * kb_report.c).
 */
#ifndef KB_OPTIONS_H
#define KB_OPTIONS_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include "kb_problem.h"

/** Where problems come from, in command-line order. */
typedef enum kb_source_kind { KB_SRC_DESC, KB_SRC_BATCH, KB_SRC_WORKLOAD } kb_source_kind;

typedef struct kb_source {
    kb_source_kind kind;
    const char *text; /**< descriptor, batch file path or workload name */
} kb_source;

typedef struct kb_options {
    kb_settings settings; /**< --dir --dt --compute --layout --mb --stag --wtag --dtag */
    int dir_given;
    const char *backends; /**< --backend list, NULL = every available device except ref */
    int verify, time;     /**< --mode */
    const char *out;      /**< --out */
    int resume;           /**< --resume: skip the problems --out already records */
    double min_time;      /**< --min-time, seconds */
    int min_reps, max_reps;
    int rounds; /**< --rounds: the timing budget split into rounds, devices interleaved */
    double ref_budget_gflop; /**< --ref-budget */
    double cold_mib;         /**< --cold[=MiB]: rotating operand copies of this many MiB; 0 = hot */
    const char *match;       /**< --match */
    long limit;              /**< --limit, -1 = none */
    const char *workload_dir;
    int threads;           /**< --threads, 0 = library default */
    const char *label;     /**< --label */
    const char *self_test; /**< --self-test */
    int use_cache;         /**< 0 with --remeasure */
    int quiet;             /**< --quiet: no progress line */
    const char *impl;      /**< --impl=REGEX: the first implementation whose name matches */
    int all_impls;         /**< --all-impls: every implementation of each plan */
    uint64_t seed;
    int help, version, list_workloads, list_devices;
    kb_source *sources;
    size_t nsources;
} kb_options;

/** Parses argv (argv[0] is the program). Returns 1 on success; 0 with a message in err. */
int kb_options_parse(int argc, char **argv, kb_options *o, char *err, size_t err_cap);
void kb_options_free(kb_options *o);

/** Prints the usage text, with the problems of the default workload. */
void kb_print_help(FILE *f);

#endif
