/* kb_options.c - kmux-bench command line and help text. */
#include "kb_options.h"

#include <regex.h>

#include <stdlib.h>
#include <string.h>

#include "kb_timing.h"
#include "kb_util.h"
#include "kb_workload.h"

static const char *value_of(const char *arg, const char *name) {
    size_t n = strlen(name);
    return !strncmp(arg, name, n) && arg[n] == '=' ? arg + n + 1 : NULL;
}

int kb_options_parse(int argc, char **argv, kb_options *o, char *err, size_t err_cap) {
    memset(o, 0, sizeof *o);
    kb_settings_default(&o->settings);
    kb_settings defaults = o->settings;
    o->verify = o->time = 1;
    o->min_time = 0.5;
    o->min_reps = 3;
    o->max_reps = 100000;
    o->rounds = 3;
    o->ref_budget_gflop = 0.25;
    o->limit = -1;
    o->use_cache = 1;
    o->seed = 1;
    o->sources = kb_xcalloc((size_t)argc, sizeof *o->sources);
    for (int i = 1; i < argc; ++i) {
        const char *a = argv[i], *v;
        char e[256];
        int r = kb_settings_apply(&o->settings, &defaults, a, &o->dir_given, e, sizeof e);
        if (r < 0) {
            snprintf(err, err_cap, "%s", e);
            return 0;
        }
        if (r > 0) continue;
        if (!strcmp(a, "--help") || !strcmp(a, "-h"))
            o->help = 1;
        else if (!strcmp(a, "--version"))
            o->version = 1;
        else if (!strcmp(a, "--list-workloads"))
            o->list_workloads = 1;
        else if (!strcmp(a, "--list-devices"))
            o->list_devices = 1;
        else if (!strcmp(a, "--remeasure"))
            o->use_cache = 0;
        else if (!strcmp(a, "--resume"))
            o->resume = 1;
        else if (!strcmp(a, "--all-impls"))
            o->all_impls = 1;
        else if ((v = value_of(a, "--impl"))) {
            regex_t re;
            if (!*v || regcomp(&re, v, REG_EXTENDED | REG_NOSUB) != 0) {
                snprintf(err, err_cap, "--impl=%s: not a POSIX extended regular expression", v);
                return 0;
            }
            regfree(&re);
            o->impl = v;
        } else if (!strcmp(a, "--cold"))
            o->cold_mib = 2048;
        else if ((v = value_of(a, "--cold"))) {
            if (!kb_parse_double(v, &o->cold_mib) || o->cold_mib < 0) {
                snprintf(err, err_cap, "--cold=%s: want MiB >= 0", v);
                return 0;
            }
        } else if (!strcmp(a, "--quiet") || !strcmp(a, "-q"))
            o->quiet = 1;
        else if ((v = value_of(a, "--backend")) || (v = value_of(a, "--engine")))
            o->backends = v;
        else if ((v = value_of(a, "--mode"))) {
            if (kb_strieq(v, "C"))
                o->verify = 1, o->time = 0;
            else if (kb_strieq(v, "P"))
                o->verify = 0, o->time = 1;
            else if (kb_strieq(v, "CP") || kb_strieq(v, "PC"))
                o->verify = o->time = 1;
            else {
                snprintf(err, err_cap, "--mode=%s: want C, P or CP", v);
                return 0;
            }
        } else if ((v = value_of(a, "--out")))
            o->out = v;
        else if ((v = value_of(a, "--min-time"))) {
            if (!kb_parse_double(v, &o->min_time) || o->min_time < 0) {
                snprintf(err, err_cap, "--min-time=%s: want seconds >= 0", v);
                return 0;
            }
        } else if ((v = value_of(a, "--min-reps")) || (v = value_of(a, "--max-reps"))) {
            int64_t n;
            if (!kb_parse_i64(v, &n) || n < 1 || n > 100000000) {
                snprintf(err, err_cap, "%s: want a count >= 1", a);
                return 0;
            }
            if (a[3] == 'i')
                o->min_reps = (int)n;
            else
                o->max_reps = (int)n;
        } else if ((v = value_of(a, "--rounds"))) {
            int64_t n;
            if (!kb_parse_i64(v, &n) || n < 1 || n > KB_MAX_ROUNDS) {
                snprintf(err, err_cap, "--rounds=%s: want a count from 1 to %d", v, KB_MAX_ROUNDS);
                return 0;
            }
            o->rounds = (int)n;
        } else if ((v = value_of(a, "--ref-budget"))) {
            if (!kb_parse_double(v, &o->ref_budget_gflop) || o->ref_budget_gflop <= 0) {
                snprintf(err, err_cap, "--ref-budget=%s: want GFLOP > 0", v);
                return 0;
            }
        } else if ((v = value_of(a, "--match")))
            o->match = v;
        else if ((v = value_of(a, "--limit"))) {
            int64_t n;
            if (!kb_parse_i64(v, &n) || n < 0) {
                snprintf(err, err_cap, "--limit=%s: want a count >= 0", v);
                return 0;
            }
            o->limit = (long)n;
        } else if ((v = value_of(a, "--workload-dir")))
            o->workload_dir = v;
        else if ((v = value_of(a, "--threads"))) {
            int64_t n;
            if (!kb_parse_i64(v, &n) || n < 0 || n > 4096) {
                snprintf(err, err_cap, "--threads=%s: want a count >= 0", v);
                return 0;
            }
            o->threads = (int)n;
        } else if ((v = value_of(a, "--label")))
            o->label = v;
        else if ((v = value_of(a, "--seed"))) {
            int64_t n;
            if (!kb_parse_i64(v, &n)) {
                snprintf(err, err_cap, "--seed=%s: want an integer", v);
                return 0;
            }
            o->seed = (uint64_t)n;
        } else if ((v = value_of(a, "--self-test"))) {
            if (strcmp(v, "corrupt-output") && strcmp(v, "corrupt-guard") &&
                strcmp(v, "zero-data")) {
                snprintf(err, err_cap,
                         "--self-test=%s: want corrupt-output, corrupt-guard or "
                         "zero-data",
                         v);
                return 0;
            }
            o->self_test = v;
        } else if ((v = value_of(a, "--batch"))) {
            o->sources[o->nsources].kind = KB_SRC_BATCH;
            o->sources[o->nsources++].text = v;
        } else if ((v = value_of(a, "--workload"))) {
            o->sources[o->nsources].kind = KB_SRC_WORKLOAD;
            o->sources[o->nsources++].text = v;
        } else if (a[0] == '-') {
            snprintf(err, err_cap, "unknown option %s (see --help)", a);
            return 0;
        } else {
            o->sources[o->nsources].kind = KB_SRC_DESC;
            o->sources[o->nsources++].text = a;
        }
    }
    if (o->resume && !o->out) {
        snprintf(err, err_cap, "--resume needs --out=FILE.jsonl (the records to resume)");
        return 0;
    }
    return 1;
}

void kb_options_free(kb_options *o) {
    free(o->sources);
    o->sources = NULL;
}

void kb_print_help(FILE *f) {
    fprintf(
        f,
        "usage: kmux-bench [options] [descriptor ...] [--batch=FILE] [--workload=NAME]\n"
        "       kmux-bench report A.jsonl [B.jsonl ...] [--html=OUT.html] [--cost=FILE:COST]\n"
        "\n"
        "Runs convolution and matmul problems on every kmux device it finds, verifies each\n"
        "result against the reference backend (ref), then times it, and prints a table (stdout)\n"
        "and JSON lines (--out). Without problems it runs the default workload (below).\n"
        "\n"
        "Problems (oneDNN benchdnn grammar):\n"
        "  convolution  [gG]mbN icC ihH [iwW] ocK [ohP] [owQ] khR [kwS] [shX] [swX] [phX] [pwX]\n"
        "               [dhX] [dwX] [n\"name\"], e.g. mb32ic64ih56oc64oh56kh3ph1n\"res2\": mb\n"
        "               defaults to 2, missing w-values copy h-values, output sizes and padding\n"
        "               are derived from each other; dilation 0 = dense (benchdnn's convention)\n"
        "  matmul       MxK:KxN, batched BxMxK:BxKxN (one side may broadcast with 1xMxK),\n"
        "               [n\"name\"]; storage with --stag/--wtag/--dtag=ab|ba (row/column-major)\n"
        "  --batch=FILE     one or more descriptors per line, '#' comments; options on a line\n"
        "                   (--dir --dt --compute --layout --mb --stag --wtag --dtag --reset)\n"
        "                   apply to the descriptors after them in that file\n"
        "  --workload=NAME  a built-in workload (--list-workloads):\n");
    for (const char *const *w = kb_workload_names(); *w; ++w)
        fprintf(f, "                     %-21s %s\n", *w, kb_workload_about(*w));
    fprintf(
        f,
        "  --match=REGEX    keep problems whose name or descriptor matches (POSIX extended)\n"
        "  --limit=N        keep the first N problems (before directions are expanded)\n"
        "\n"
        "Settings (apply to every problem unless a batch line changes them):\n"
        "  --dir=FWD|BWD_D|BWD_W|ALL   convolution direction(s) (default FWD; ALL for resnet50)\n"
        "  --dt=T | --dt=SRC:WEI:DST   f32 (default), f64, f16, bf16, e4m3, e5m2, e4m3fnuz,\n"
        "                              e5m2fnuz, i8 (= i8:i8:i32)\n"
        "  --compute=f32|tf32|bf16x3|f16|f64|i32   accumulation (default: natural for the dtype)\n"
        "  --layout=nchw|nhwc          convolution layout (default nchw)\n"
        "  --mb=N                      override the convolution minibatch\n"
        "  --stag= --wtag= --dtag=ab|ba  matmul storage of A, B, C (default ab = row-major)\n"
        "\n"
        "Running:\n"
        "  --backend=LIST   devices, comma-separated: cpu:onednn,cpu:openblas,cuda:0,ref ...\n"
        "                   (default: every available device except ref, the oracle)\n"
        "  --mode=C|P|CP    correctness only, performance only (unverified), both (default)\n"
        "  --min-time=S     time each problem for at least S seconds (default 0.5)\n"
        "  --min-reps=N --max-reps=N   bounds on timed repetitions (default 3, 100000)\n"
        "  --rounds=N       split that timing into N rounds (default 3, at most 16); each round\n"
        "                   times every device once in turn, the first one rotating (A B, B A,\n"
        "                   A B): the median of the round medians is the result, rounds that\n"
        "                   disagree by more than 15%% mark the row NOISY(rounds); a CPU device\n"
        "                   timed right after OpenBLAS first waits out OpenBLAS's spinning\n"
        "                   workers (~0.15 s; none with OPENBLAS_THREAD_TIMEOUT=4)\n"
        "  --ref-budget=G   verify on a sampled slice when the problem exceeds G GFLOP\n"
        "                   (default 0.25; the record says \"sampled\")\n"
        "  --cold[=MiB]     cold-cache timing: calls cycle through copies of the operands\n"
        "                   adding up to MiB (default 2048), far beyond any cache\n"
        "  --impl=REGEX     run the first implementation of each plan whose name matches\n"
        "                   (benchdnn's --impl; walks kmux_plan_next_impl); none: UNSUPPORTED\n"
        "  --all-impls      one row per implementation of each plan (as cuBLASLt's heuristic\n"
        "                   list; with --impl only the matching ones)\n"
        "  --threads=N      CPU threads of the backends (default: all cores)\n"
        "  --out=FILE.jsonl append one JSON record per problem x device (each a whole line,\n"
        "                   written by one write; a cut-short last line left by a killed run\n"
        "                   is dropped, with a warning, before appending)\n"
        "  --resume         with --out: skip the problems FILE already records on every\n"
        "                   device of this run and machine (--label), run the rest\n"
        "  --label=NAME     the machine's name in records and reports (default: host name)\n"
        "  --remeasure      measure clock and memory bandwidth again (else cached)\n"
        "  --workload-dir=DIR  read workload CSVs from DIR instead of the built-in copies\n"
        "  --seed=N         data seed (default 1)\n"
        "  --self-test=corrupt-output|corrupt-guard|zero-data   inject a fault after each run to\n"
        "                   show that the checker catches it (for testing kmux-bench)\n"
        "  --list-devices --list-workloads --version --quiet --help\n"
        "\n"
        "Verification: integer inputs (one operand sparse) make every partial sum exact, so f32\n"
        "must match ref exactly and narrower outputs within one rounding; mostly-zero results\n"
        "are MISTRUSTED; outputs are pre-filled with NaN and guarded on both sides. PASSED~\n"
        "means a sampled slice was checked (large problems). No speed is shown unless passed.\n"
        "Exit status: 0 when every check passed (UNSUPPORTED is not an error), 1 otherwise,\n"
        "2 for usage errors.\n"
        "\n"
        "The default workload:\n");
    kb_settings s;
    kb_settings_default(&s);
    kb_problem_list l = {NULL, 0, 0};
    char err[256];
    if (kb_workload_load("default", &s, 0, NULL, &l, err, sizeof err)) {
        for (size_t i = 0; i < l.n; ++i) {
            char desc[512], opts[256];
            kb_format_desc(&l.v[i], desc, sizeof desc);
            kb_format_options(&l.v[i], opts, sizeof opts);
            fprintf(f, "  %s %s\n", opts, desc);
        }
    } else {
        fprintf(f, "  (unavailable: %s)\n", err);
    }
    kb_problem_list_free(&l);
}
