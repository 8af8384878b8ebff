/*
 * ck_report.h - the results of one kmux-check run: one record per check, printed as text (one
 * line each and a summary) or as one JSON object (bench/schema/kmux-check-report.schema.json).
 */
#ifndef KMUX_CHECK_REPORT_H
#define KMUX_CHECK_REPORT_H

#include <stdio.h>

#include "ck_verdict.h"

/** One check's outcome. measured/target are NaN when they do not apply. */
typedef struct ck_result {
    char category[16]; /**< "environment", "device", "function", "speed" */
    char subject[40];  /**< backend or device id ("cuda", "cpu:openblas", "host") */
    char name[48];     /**< "gemm_bf16", "code_objects", "node:/dev/kfd" */
    ck_status status;
    double measured;
    double target;
    char unit[16];
    char detail[384];
    char hint[256];
} ck_result;

typedef struct ck_report {
    ck_result *items;
    int count, capacity;
    ck_counts counts;
} ck_report;

/** Appends a result built from a verdict (measured, target: NaN when not applicable).
 *  Returns 0, -1 when out of memory. */
int ck_report_add(ck_report *r, const char *category, const char *subject, const char *name,
                  const ck_verdict *v, double measured, double target, const char *unit);

void ck_report_free(ck_report *r);

/** One line per result and a summary line. */
void ck_report_print_text(FILE *out, const ck_report *r);

/** Facts of the run for the JSON header. */
typedef struct ck_run_info {
    const char *kmux_version;
    const char *hostname;
    const char *cpu;
    const char *backend_filter; /**< --backend value */
    int quick;
    const char *targets_origin;
    double seconds;
} ck_run_info;

/** The whole report as one JSON object on one line. Returns 0, -1 on error. */
int ck_report_print_json(FILE *out, const ck_report *r, const ck_run_info *info);

#endif
