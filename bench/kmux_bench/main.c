/*
 * kmux-bench - runs real workloads on every kmux device, verifies every result against the
 * reference backend, times it honestly, prints a table and writes JSON lines; `report` merges
 * the records of several machines into one comparison. See kb_options.c for the command line.
 */
#define _POSIX_C_SOURCE 200809L
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kb_jsonl.h"
#include "kb_machine.h"
#include "kb_options.h"
#include "kb_report.h"
#include "kb_run.h"
#include "kb_table.h"
#include "kb_util.h"
#include "kb_workload.h"
#include "kmux.h"

/* A thread count above the cores that can run (the CPU devices' compute_units) does not make the
 * machine faster: the peaks count the cores, and the timings suffer from oversubscription. */
static void kb_warn_threads(int requested, int cores, int any_host) {
    const char *env = getenv("KMUX_NUM_THREADS");
    long want = requested > 0 ? requested : env && *env ? strtol(env, NULL, 10) : 0;
    if (any_host && want > cores)
        fprintf(stderr,
                "kmux-bench: warning: %ld threads requested (%s) but only %d cores can run "
                "(affinity, cgroup quota); peaks count %d\n",
                want, requested > 0 ? "--threads" : "KMUX_NUM_THREADS", cores, cores);
}

static int collect_problems(const kb_options *o, kb_problem_list *out) {
    kb_problem_list raw = {NULL, 0, 0};
    char err[512];
    int ok = 1;
    if (o->nsources == 0)
        ok = kb_workload_load("default", &o->settings, o->dir_given, o->workload_dir, &raw, err,
                              sizeof err);
    for (size_t i = 0; i < o->nsources && ok; ++i) {
        const kb_source *s = &o->sources[i];
        if (s->kind == KB_SRC_WORKLOAD) {
            ok = kb_workload_load(s->text, &o->settings, o->dir_given, o->workload_dir, &raw, err,
                                  sizeof err);
        } else if (s->kind == KB_SRC_BATCH) {
            ok = kb_batch_load(s->text, &o->settings, &raw, err, sizeof err);
        } else {
            kb_problem p;
            memset(&p, 0, sizeof p);
            p.set = o->settings;
            p.occurrences = 1;
            char e[300];
            ok = kb_parse_problem(s->text, &p, e, sizeof e); /* 3-D: an UNSUPPORTED row */
            if (ok)
                kb_problem_list_push(&raw, &p);
            else
                snprintf(err, sizeof err, "%s", e);
        }
    }
    if (ok) ok = kb_filter(&raw, o->match, o->limit, err, sizeof err);
    if (!ok) {
        fprintf(stderr, "kmux-bench: %s\n", err);
        kb_problem_list_free(&raw);
        return 0;
    }
    kb_expand_directions(&raw, out);
    kb_problem_list_free(&raw);
    if (out->n == 0) {
        fprintf(stderr, "kmux-bench: no problem to run (--match / --limit left none)\n");
        return 0;
    }
    return 1;
}

static void list_devices(kmux_context *ctx) {
    int nb = 0, nd = 0;
    kmux_backend_count(ctx, &nb);
    printf("backends:\n");
    for (int i = 0; i < nb; ++i) {
        kmux_backend_info bi;
        if (kmux_backend_info_get(ctx, i, &bi) != KMUX_OK) continue;
        /* the version, then (unavailable) the reason: "cuDNN 9.19.0; no CUDA driver (...)" */
        const char *v = bi.version ? bi.version : "";
        printf("  %-10s %-12s %s%s%s\n", bi.name, bi.available ? "available" : "unavailable", v,
               !bi.available && v[0] && bi.reason[0] ? "; " : "", bi.available ? "" : bi.reason);
    }
    kmux_device_count(ctx, &nd);
    printf("devices:\n");
    for (int i = 0; i < nd; ++i) {
        kmux_device *d;
        kmux_device_props p;
        if (kmux_device_get(ctx, i, &d) != KMUX_OK || kmux_device_props_get(d, &p) != KMUX_OK)
            continue;
        printf("  %-14s %s (%s, %d units, f32 peak %.1f GFLOP/s)\n", p.id, p.name, p.arch,
               p.compute_units, p.peak_flops[KMUX_F32] / 1e9);
    }
}

/* The devices to run on: --backend, or every available one except ref. Returns the count or
 * -1 (message printed). */
static int select_targets(kmux_context *ctx, const char *list, kb_target *t, int cap) {
    int n = 0;
    if (list) {
        char *copy = kb_xstrdup(list);
        for (char *tok = copy; tok && n < cap;) {
            char *comma = strchr(tok, ',');
            if (comma) *comma = '\0';
            kmux_device *d = NULL;
            kmux_status s = kmux_device_find(ctx, kb_strtrim(tok), &d);
            if (s != KMUX_OK) {
                fprintf(stderr, "kmux-bench: --backend: %s: %s: %s\n", tok, kmux_status_str(s),
                        kmux_last_error());
                free(copy);
                return -1;
            }
            t[n++].dev = d;
            tok = comma ? comma + 1 : NULL;
        }
        free(copy);
    } else {
        int nd = 0;
        kmux_device_count(ctx, &nd);
        for (int i = 0; i < nd && n < cap; ++i) {
            kmux_device *d = NULL;
            if (kmux_device_get(ctx, i, &d) != KMUX_OK) continue;
            if (!strcmp(kmux_device_id(d), "ref")) continue;
            t[n++].dev = d;
        }
    }
    for (int i = 0; i < n; ++i) {
        kmux_status s = kmux_device_props_get(t[i].dev, &t[i].props);
        if (s == KMUX_OK) s = kmux_stream_create(t[i].dev, &t[i].stream);
        if (s != KMUX_OK) { /* the message first: kmux_device_id is a kmux call and clears it */
            char msg[1024];
            snprintf(msg, sizeof msg, "%s", kmux_last_error());
            fprintf(stderr, "kmux-bench: %s: %s: %s\n", kmux_device_id(t[i].dev),
                    kmux_status_str(s), msg);
            return -1;
        }
    }
    return n;
}

/* --resume: drops from `problems` those that the record file `path` already holds for every
 * target device on this machine (its --label, else host name). Returns 0 (said on stderr) when
 * the file cannot be read as records. */
static int skip_recorded(const char *path, kb_problem_list *problems, const kb_target *targets,
                         int ntargets, const char *machine) {
    kb_rec_list recs = {NULL, 0, 0};
    char err[640];
    int rd = kb_jsonl_read(path, 0, &recs, err, sizeof err);
    if (!rd) {
        fprintf(stderr, "kmux-bench: --resume: %s\n", err);
        return 0;
    }
    if (rd == 2) fprintf(stderr, "kmux-bench: --resume: warning: %s\n", err);
    size_t kept = 0;
    for (size_t i = 0; i < problems->n; ++i) {
        char key[800];
        kb_problem_key(&problems->v[i], key, sizeof key);
        int on_all = 1;
        for (int t = 0; t < ntargets && on_all; ++t) {
            int found = 0;
            for (size_t r = 0; r < recs.n && !found; ++r)
                found = !strcmp(recs.v[r].problem, key) &&
                        !strcmp(recs.v[r].device, targets[t].props.id) &&
                        !strcmp(recs.v[r].machine, machine);
            on_all = found;
        }
        if (!on_all) problems->v[kept++] = problems->v[i];
    }
    problems->n = kept;
    kb_rec_list_free(&recs);
    return 1;
}

int main(int argc, char **argv) {
    if (argc > 1 && !strcmp(argv[1], "report")) return kb_report_main(argc - 1, argv + 1);
    kb_options o;
    char err[512];
    if (!kb_options_parse(argc, argv, &o, err, sizeof err)) {
        fprintf(stderr, "kmux-bench: %s\n", err);
        kb_options_free(&o);
        return 2;
    }
    if (o.help) {
        kb_print_help(stdout);
        kb_options_free(&o);
        return 0;
    }
    if (o.version) {
        printf("kmux-bench (kmux %s)\n", kmux_version());
        kb_options_free(&o);
        return 0;
    }
    if (o.list_workloads) {
        for (const char *const *w = kb_workload_names(); *w; ++w)
            printf("%-22s %s\n", *w, kb_workload_about(*w));
        kb_options_free(&o);
        return 0;
    }
    /* line-buffered even into a file or a pipe: rows appear as each problem finishes */
    setvbuf(stdout, NULL, _IOLBF, 0);
    kb_problem_list problems = {NULL, 0, 0};
    if (!o.list_devices && !collect_problems(&o, &problems)) {
        kb_options_free(&o);
        return 2;
    }

    /* --remeasure: the CPU plugins measure their clock again instead of reading the cache */
    if (!o.use_cache) setenv("KMUX_CPU_CLOCK_REMEASURE", "1", 1);
    kmux_context_options copt = KMUX_CONTEXT_OPTIONS_INIT;
    copt.num_threads = o.threads;
    kmux_context *ctx = NULL;
    kmux_status st = kmux_context_create(&copt, &ctx);
    if (st != KMUX_OK) {
        fprintf(stderr, "kmux-bench: kmux_context_create: %s: %s\n", kmux_status_str(st),
                kmux_last_error());
        kb_problem_list_free(&problems);
        kb_options_free(&o);
        return 1;
    }
    int rc = 0;
    kb_target targets[64];
    memset(targets, 0, sizeof targets);
    int ntargets = 0;
    kmux_device *ref = NULL;
    kmux_stream *ref_stream = NULL;
    FILE *out = NULL;
    kb_result *results = NULL;
    char *peaks_csv = NULL;
    if (o.list_devices) {
        list_devices(ctx);
        goto done;
    }
    ntargets = select_targets(ctx, o.backends, targets, 64);
    if (ntargets < 0) {
        rc = 2;
        ntargets = 0;
        goto done;
    }
    if (ntargets == 0) {
        fprintf(stderr, "kmux-bench: no device to run on (see --list-devices)\n");
        rc = 1;
        goto done;
    }
    st = kmux_device_find(ctx, "ref", &ref);
    if (st == KMUX_OK) st = kmux_stream_create(ref, &ref_stream);
    if (st != KMUX_OK && o.verify) {
        fprintf(stderr, "kmux-bench: the ref oracle is unavailable: %s: %s\n", kmux_status_str(st),
                kmux_last_error());
        rc = 1;
        goto done;
    }
    if (o.out) {
        char note[1024];
        if (!kb_jsonl_open_append(o.out, &out, note, sizeof note)) {
            fprintf(stderr, "kmux-bench: %s\n", note);
            rc = 2;
            goto done;
        }
        if (note[0]) fprintf(stderr, "kmux-bench: warning: %s\n", note);
    }

    /* machine fingerprint and, for CPU devices, the measured clock and bandwidth */
    kb_machine machine;
    kb_machine_collect(ctx, o.label, &machine);
    int threads = 0, any_host = 0;
    double clock_mhz = 0;
    for (int i = 0; i < ntargets; ++i)
        if (targets[i].props.is_host) {
            any_host = 1;
            if (targets[i].props.compute_units > threads) threads = targets[i].props.compute_units;
            if (targets[i].props.clock_mhz > clock_mhz) clock_mhz = targets[i].props.clock_mhz;
        }
    if (threads == 0) threads = o.threads > 0 ? o.threads : machine.cores;
    kb_warn_threads(o.threads, threads, any_host);
    machine.host.clock_mhz = clock_mhz;
    if (any_host && o.time) {
        if (!o.quiet) fprintf(stderr, "kmux-bench: measuring memory bandwidth...\n");
        kb_host_measure_get(threads, clock_mhz, o.use_cache, &machine.host);
    }
    peaks_csv = kb_workload_file("peaks.csv", o.workload_dir, err, sizeof err);
    if (o.resume) {
        size_t all = problems.n;
        if (!skip_recorded(o.out, &problems, targets, ntargets, machine.label)) {
            rc = 2;
            goto done;
        }
        printf("--resume: %zu of %zu problems already recorded in %s on every device: skipped\n",
               all - problems.n, all, o.out);
        if (problems.n == 0) goto done;
    }

    printf("kmux-bench, kmux %s on %s: %s, %d logical CPUs", machine.kmux_version, machine.hostname,
           machine.cpu_model, machine.cores);
    if (machine.host.clock_mhz > 0)
        printf(", measured %.0f MHz and %.1f GB/s triad%s", machine.host.clock_mhz,
               machine.host.triad_gbps, machine.host.from_cache ? " (cached)" : "");
    printf("\ndevices:");
    for (int i = 0; i < ntargets; ++i)
        printf(" %s [%s%s%s]", targets[i].props.id, targets[i].props.name,
               targets[i].props.library_version[0] ? ", " : "", targets[i].props.library_version);
    printf("\noracle: %s; %zu problems; mode %s%s; min time %.2f s in %d rounds%s; %s caches\n\n",
           o.verify ? "ref" : "none (--mode=P: unverified)", problems.n, o.verify ? "C" : "",
           o.time ? "P" : "", o.min_time, o.rounds, ntargets > 1 ? ", devices interleaved" : "",
           o.cold_mib > 0 ? "cold" : "hot");
    kb_table_header(stdout);

    kb_run_opts ro;
    memset(&ro, 0, sizeof ro);
    ro.verify = o.verify;
    ro.time = o.time;
    ro.timing.min_time_s = o.min_time;
    ro.timing.min_reps = o.min_reps;
    ro.timing.max_reps = o.max_reps < o.min_reps ? o.min_reps : o.max_reps;
    ro.timing.warmup_s = o.min_time / 5 < 0.1 ? o.min_time / 5 : 0.1;
    ro.timing.rounds = o.rounds;
    ro.ref_budget_flops = o.ref_budget_gflop * 1e9;
    ro.cold_bytes = o.cold_mib * 1048576.0;
    ro.seed = o.seed;
    ro.self_test = o.self_test;
    ro.host = &machine.host;
    ro.peaks_csv = peaks_csv;
    regex_t impl_re;
    if (o.impl && regcomp(&impl_re, o.impl, REG_EXTENDED | REG_NOSUB) == 0) {
        ro.impl_regex = &impl_re;
        ro.impl_pattern = o.impl;
    }
    ro.all_impls = o.all_impls;
    size_t per_problem = (size_t)ntargets * (o.all_impls ? KB_MAX_IMPLS : 1), nres = 0;

    results = kb_xcalloc(problems.n * per_problem, sizeof *results);
    double t_start = kb_now_s();
    double clock_moved_mhz = 0; /* > 0: a re-check found the clock moved; later rows are noisy */
    int can_recheck = any_host && o.time && clock_mhz > 0;
    /* results[unchecked .. nres): rows since the last re-check that found the clock where it was.
     * The clock may have moved during any of them, so their records wait for the next re-check;
     * a failing one marks them all (their table rows, printed already, are listed after it). */
    size_t unchecked = 0, *remarked = kb_xcalloc(problems.n * per_problem + 1, sizeof *remarked);
    size_t nremarked = 0;
    for (size_t i = 0; i < problems.n; ++i) {
        double t_problem = kb_now_s();
        const kb_problem *p = &problems.v[i];
        char desc[512], what[640];
        kb_format_desc(p, desc, sizeof desc);
        if (!o.quiet && problems.n > 1) {
            snprintf(what, sizeof what, "%s %s (%.0f s so far)", desc,
                     p->op == KB_OP_CONV ? kb_dir_name(p->dir) : "", kb_now_s() - t_start);
            kb_progress(i + 1, problems.n, what);
        }
        if (!o.quiet) { /* a problem that takes more than a second says so while it runs */
            snprintf(what, sizeof what, "[%zu/%zu] %s%s%s running", i + 1, problems.n, desc,
                     p->op == KB_OP_CONV ? " " : "",
                     p->op == KB_OP_CONV ? kb_dir_name(p->dir) : "");
            kb_progress_heartbeat_start(what, kb_problem_estimate_s(p, targets, ntargets, &ro));
        }
        kb_result *r = &results[nres];
        size_t got = kb_run_problem(p, ref, ref_stream, targets, ntargets, &ro, r, per_problem);
        nres += got;
        /* re-check the clock (about 30 ms) after a long problem, every 8 problems and at the
         * end; once it moved, the rows since the last good re-check and all later ones are
         * marked "clock" */
        int due = kb_now_s() - t_problem > 1.0 || (i + 1) % 8 == 0 || i + 1 == problems.n;
        double checked_mhz = clock_moved_mhz; /* this problem's rows record the re-check */
        int resolved = !can_recheck || clock_moved_mhz > 0;
        if (can_recheck && clock_moved_mhz == 0 && due) {
            kb_noise probe;
            memset(&probe, 0, sizeof probe);
            checked_mhz = kb_noise_recheck_clock_mhz();
            if (kb_noise_clock(&probe, clock_mhz, checked_mhz)) {
                clock_moved_mhz = checked_mhz;
                for (size_t q = unchecked; q + got < nres; ++q)
                    if (results[q].timed) {
                        kb_noise_clock(&results[q].noise, clock_mhz, checked_mhz);
                        remarked[nremarked++] = q;
                    }
            }
            resolved = 1;
        }
        if (checked_mhz > 0)
            for (size_t k = 0; k < got; ++k)
                if (r[k].timed) kb_noise_clock(&r[k].noise, clock_mhz, checked_mhz);
        kb_progress_heartbeat_stop();
        if (!o.quiet && problems.n > 1) kb_progress_clear();
        for (size_t k = 0; k < got; ++k)
            kb_table_row(stdout, &r[k]);
        for (; resolved && unchecked < nres; ++unchecked)
            if (out && !kb_jsonl_write(out, &results[unchecked], &machine, threads, o.min_time)) {
                fprintf(stderr, "kmux-bench: writing %s failed\n", o.out);
                rc = 1;
            }
    }
    kb_table_remarked(stdout, results, remarked, nremarked, clock_mhz, clock_moved_mhz);
    free(remarked);
    if (ro.impl_regex) regfree(&impl_re);
    if (kb_table_summary(stdout, results, nres) > 0) rc = 1;
    kb_model_view(stdout, results, nres);
    printf("\nWall time %.1f s.%s%s\n", kb_now_s() - t_start, out ? " Records: " : "",
           out ? o.out : "");

done:
    if (out && !kb_jsonl_close(out)) {
        fprintf(stderr, "kmux-bench: writing %s failed\n", o.out);
        rc = rc ? rc : 1;
    }
    free(results);
    free(peaks_csv);
    for (int i = 0; i < ntargets; ++i)
        kmux_stream_destroy(targets[i].stream);
    kmux_stream_destroy(ref_stream);
    kmux_context_destroy(ctx);
    kb_problem_list_free(&problems);
    kb_options_free(&o);
    return rc;
}
