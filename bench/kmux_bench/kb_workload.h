/*
 * kb_workload.h - where problems come from: the CSV workloads of bench/workloads (embedded in
 * the program at build time, or read from --workload-dir), benchdnn-style batch files, the
 * default workload, and the --match / --limit filters.
 */
#ifndef KB_WORKLOAD_H
#define KB_WORKLOAD_H

#include <stddef.h>
#include "kb_csv.h"
#include "kb_problem.h"

/** Text of a workload file ("resnet50_conv.csv"): from dir when dir is non-NULL, else the copy
 *  embedded at build time. Caller frees. NULL with a message in err when unavailable. */
char *kb_workload_file(const char *file, const char *dir, char *err, size_t err_cap);

/** Names of the workloads --workload accepts, NULL-terminated. */
const char *const *kb_workload_names(void);
/** One line describing a workload (for --help / --list-workloads); "" if unknown. */
const char *kb_workload_about(const char *name);
/** True for the workloads of whole networks (ResNet-50), which get the model view. */
int kb_workload_is_network(const char *name);

/** Appends the problems of workload `name` to out, each with settings *base (for a network
 *  workload without an explicit direction, every direction: pass dir_given = 0).
 *  Returns 1 on success; 0 with a message in err. */
int kb_workload_load(const char *name, const kb_settings *base, int dir_given, const char *dir,
                     kb_problem_list *out, char *err, size_t err_cap);

/** Applies one option that a batch line or the command line may set for the problems after it
 *  (--dir, --dt, --compute, --layout, --mb, --stag, --wtag, --dtag; --reset restores *defaults).
 *  Returns 1 when applied, 0 when `opt` is not such an option, -1 (message in err) when its value
 *  is bad. dir_given (may be NULL) is set to 1 by --dir. */
int kb_settings_apply(kb_settings *s, const kb_settings *defaults, const char *opt, int *dir_given,
                      char *err, size_t err_cap);

/** Parses batch-file text: one or more whitespace-separated tokens per line, '#' starts a
 *  comment; options (as kb_settings_apply) apply to the descriptors after them in the file,
 *  "--batch=FILE" includes another file (relative to `base_dir`). Appends to out.
 *  Returns 1 on success; 0 with "file:line: message" in err. */
int kb_batch_parse(const char *text, const char *origin, const char *base_dir,
                   const kb_settings *start, kb_problem_list *out, char *err, size_t err_cap);

/** Batch files are text of at most this many bytes (without a NUL byte). */
#define KB_BATCH_BYTES_MAX (64 << 20)

/** Reads and parses a batch file (see kb_batch_parse): at most KB_BATCH_BYTES_MAX bytes, no NUL
 *  byte, includes nested at most 16 deep and never of a file being read (a cycle). */
int kb_batch_load(const char *path, const kb_settings *start, kb_problem_list *out, char *err,
                  size_t err_cap);

/** Keeps the problems whose name or canonical descriptor matches the POSIX extended regular
 *  expression `regex` (NULL: all), then the first `limit` (< 0: all). Returns 1; 0 with a message
 *  in err for a bad expression. */
int kb_filter(kb_problem_list *l, const char *regex, long limit, char *err, size_t err_cap);

/** Expands every problem into one problem per direction of its dir_mask (conv; matmul: FWD). */
void kb_expand_directions(const kb_problem_list *in, kb_problem_list *out);

#endif
