/*
 * kb_report.h - `kmux-bench report A.jsonl B.jsonl ... [--html=OUT.html] [--cost=FILE:COST ...]`:
 * merges the records of several runs (machines) into one comparison, problem x (machine, device):
 * a terminal table, and a self-contained HTML page with inline SVG charts (kb_html.c).
 */
#ifndef KB_REPORT_H
#define KB_REPORT_H

#include <stddef.h>
#include "kb_jsonl.h"

/** One column of the comparison: a device of a machine. */
typedef struct kb_report_col {
    char name[200]; /**< "machine device" */
    int file;       /**< file of its first record */
    double cost;    /**< cost per hour (or any unit) from --cost; 0 when not given */
    char cpu_model[128], device_name[128], gpus[256], backends[512], kmux_version[96], date[32];
    int threads;
    double clock_mhz, triad_gbps; /**< measured on that machine (0: unknown) */
} kb_report_col;

/** One row: a problem (descriptor + options). */
typedef struct kb_report_row {
    char key[512];
    char label[200];
    char workload[32];
    int occurrences;
    char reproducer[600];
} kb_report_row;

typedef struct kb_report {
    kb_rec_list recs;
    kb_report_col *cols;
    size_t ncols;
    kb_report_row *rows;
    size_t nrows;
    long *cell; /**< cell[row * ncols + col]: index into recs, -1 when the pair did not run */
    char **files;
    int nfiles;
    size_t duplicates; /**< records of a (problem, column) pair that already had one */
    long baseline;     /**< --baseline column index, -1 = none */
} kb_report;

/** Builds the comparison from records (takes ownership of recs). file_cost[i] is the cost of
 *  file i (0 = none). */
void kb_report_build(kb_report *R, kb_rec_list *recs, char **files, int nfiles,
                     const double *file_cost);
void kb_report_free(kb_report *R);

/** Record of (row, col) or NULL. */
const kb_rec *kb_report_cell(const kb_report *R, size_t row, size_t col);

/** Geometric mean GFLOP/s of column col over the rows where every column has a speed; *count
 *  receives how many rows that is. 0 when none. */
double kb_report_geomean(const kb_report *R, size_t col, size_t *count);

/** Cells with a speed measured on a busy machine (NOISY) among the rows the geomeans use. */
size_t kb_report_noisy_common(const kb_report *R);

/** Whole-network step time (ms) of a network workload in column col: sum of median times x
 *  occurrences over its rows; < 0 when a row has no verified time; *rows receives its row count. */
double kb_report_network_ms(const kb_report *R, const char *workload, size_t col, size_t *rows);

/** Writes the terminal comparison to f. */
void kb_report_print(const kb_report *R, FILE *f);

/** Writes the HTML page (self-contained: inline CSS and SVG, no scripts or external resources).
 *  Returns 1 on success. */
int kb_html_write(const kb_report *R, const char *path);

/** The `report` subcommand; argv[0] is "report". Returns the exit status. */
int kb_report_main(int argc, char **argv);

#endif
