/*
 * kb_jsonl.h - the JSON-lines records of kmux-bench (one per problem x device), written with
 * jansson and read back by `kmux-bench report`. The record's JSON Schema is
 * bench/schema/kmux-bench-record.schema.json; KB_RECORD_SCHEMA_VERSION is its "schema_version".
 */
#ifndef KB_JSONL_H
#define KB_JSONL_H

#include <stddef.h>
#include <stdio.h>
#include "kb_machine.h"
#include "kb_run.h"

#define KB_RECORD_SCHEMA_VERSION 1

/** Opens a record file for appending (created if missing). A last line without its newline (a
 *  run killed while writing it) is cut off first, so that appended records start on a line of
 *  their own; `note` then says so (else it is ""). Returns 1 and *f; 0 with the reason in
 *  `note`. */
int kb_jsonl_open_append(const char *path, FILE **f, char *note, size_t note_cap);

/** Writes one record: one line of compact JSON, handed to the kernel by one write(2) (no stdio
 *  buffer splitting it), so that a run killed between records leaves only whole lines.
 *  threads: CPU threads of the run. Returns 1 on success. */
int kb_jsonl_write(FILE *f, const kb_result *r, const kb_machine *m, int threads,
                   double min_time_s);

/** Flushes a record file to storage (fsync) and closes it. Returns 1 on success. */
int kb_jsonl_close(FILE *f);

/** The key that identifies a problem in records ("descriptor options", kb_rec.problem). */
void kb_problem_key(const kb_problem *p, char *buf, size_t cap);

/** The fields of a record that reports use. */
typedef struct kb_rec {
    int file;          /**< index of the file it came from */
    char problem[512]; /**< problem key: descriptor, direction, dtypes, layout/tags */
    char label[200];   /**< what a reader sees: name, else descriptor (+ direction) */
    char op[16], direction[8], workload[32];
    int occurrences;
    char column[200]; /**< machine label + " " + device id */
    char machine[128], device[32], device_name[128], impl[128];
    char verification[16];
    int has_speed; /**< a speed may be shown (passed or not verified, and timed) */
    int noisy;     /**< measured on a busy machine ("noise": {"noisy": true}): never ranked */
    double gflops, pct_peak, median_ms, min_ms; /**< pct_peak < 0 when unknown */
    char bound[16];
    char cpu_model[128], kmux_version[96], date[32], gpus[256], backends[512];
    char status[32];  /**< status.code: "KMUX_OK", "KMUX_ERR_UNSUPPORTED", ... */
    char reason[400]; /**< why there is no speed: status or verification message */
    char reproducer[600];
    int threads;       /**< machine.threads */
    double clock_mhz;  /**< machine.clock_mhz_measured (0: unknown) */
    double triad_gbps; /**< machine.triad_gbps_measured (0: unknown) */
} kb_rec;

/** A growable list of records. */
typedef struct kb_rec_list {
    kb_rec *v;
    size_t n, cap;
} kb_rec_list;

/** Reads every record of a JSONL file into out (file index `file`). Lines that are not records
 *  are an error, except a last line without its newline (a run killed while writing it), which
 *  is ignored. Returns 1; 2 when such a line was ignored ("path:line: ..." in err, a warning);
 *  0 with "path:line: message" in err. */
int kb_jsonl_read(const char *path, int file, kb_rec_list *out, char *err, size_t err_cap);

void kb_rec_list_free(kb_rec_list *l);

#endif
