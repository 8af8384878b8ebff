/*
 * kb_table.h - the readable output of a run: one table row per problem x device on stdout,
 * printed as results arrive, a progress line on stderr, the totals, and the ResNet-50 model view.
 */
#ifndef KB_TABLE_H
#define KB_TABLE_H

#include <stddef.h>
#include <stdio.h>
#include "kb_run.h"

/** Timings whose spread (p90 - p10) / median exceeds this are flagged "noisy". */
#define KB_NOISY_SPREAD 0.30

/** Prints the column headers. */
void kb_table_header(FILE *f);
/** Prints one row. */
void kb_table_row(FILE *f, const kb_result *r);
/** The verification column text: PASSED, PASSED~ (sampled), FAILED, MISTRUSTED, UNSUPPORTED,
 *  ERROR, or "-" (not verified). */
const char *kb_table_verdict(const kb_result *r);
/** Prints the legend and the count of each verdict, and benchdnn's summary line ("tests:N
 *  passed:P skipped:S mistrusted:M unimplemented:U failed:F": skipped = problems kmux cannot
 *  express, e.g. 3-D; unimplemented = a device's UNSUPPORTED; failed = FAILED + ERROR). Returns
 *  the number of results that failed, were mistrusted or errored (not counting UNSUPPORTED). */
int kb_table_summary(FILE *f, const kb_result *results, size_t n);

/** After the table: the n rows results[idx[k]] printed before a clock re-check found the clock
 *  moved (start_mhz -> moved_mhz), and marked NOISY(clock) since (problem, direction, device;
 *  one indented line each, not a table row). Prints nothing when n == 0. */
void kb_table_remarked(FILE *f, const kb_result *results, const size_t *idx, size_t n,
                       double start_mhz, double moved_mhz);

/** Progress on stderr: "[i/n] problem": rewritten in place on a terminal, one line otherwise. */
void kb_progress(size_t i, size_t n, const char *what);
/** Clears the progress line (terminal only). */
void kb_progress_clear(void);

/** While one problem runs: after a second, and then every few seconds, a line on stderr with
 *  `what`, the time so far and the estimate (estimate_s <= 0: none). stop ends it. */
void kb_progress_heartbeat_start(const char *what, double estimate_s);
void kb_progress_heartbeat_stop(void);

/** The model view of network workloads (ResNet-50): per device, one training step's convolution
 *  time = sum over layers of (FWD + BWD_D + BWD_W median time) x occurrences in the network.
 *  Prints nothing when no result belongs to a network workload. */
void kb_model_view(FILE *f, const kb_result *results, size_t n);

#endif
