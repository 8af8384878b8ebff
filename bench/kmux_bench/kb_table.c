/* kb_table.c - terminal table, progress line, summary and model view of a run. */
#define _POSIX_C_SOURCE 200809L
#include "kb_table.h"

#include <pthread.h>
#include <time.h>

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kb_noise.h"
#include "kb_util.h"
#include "kb_workload.h"

/* Copies s into buf of width w (+1), cutting the middle with "~" when it is too long. */
static const char *fit(const char *s, size_t w, char *buf) {
    size_t n = strlen(s);
    if (n <= w) {
        memcpy(buf, s, n + 1);
        return buf;
    }
    size_t head = (w - 1) / 2, tail = w - 1 - head;
    memcpy(buf, s, head);
    buf[head] = '~';
    memcpy(buf + head + 1, s + n - tail, tail + 1);
    return buf;
}

static void problem_label(const kb_problem *p, char *buf, size_t cap) {
    if (p->name[0])
        kb_strlcpy(buf, p->name, cap);
    else
        kb_format_desc(p, buf, cap);
}

void kb_table_header(FILE *f) {
    fprintf(f, "%-36s %-5s %-13s %-24s %-6s %-10s %9s %9s %9s %6s %-7s\n", "problem", "dir",
            "device", "implementation", "acc", "verify", "ms(min)", "ms(med)", "GFLOP/s", "%peak",
            "bound");
}

const char *kb_table_verdict(const kb_result *r) {
    if (r->status == KMUX_ERR_UNSUPPORTED) return "UNSUPPORTED";
    if (r->status != KMUX_OK) return "ERROR";
    switch (r->check.status) {
    case KB_VERIFY_PASSED:
        return r->check.sampled ? "PASSED~" : "PASSED";
    case KB_VERIFY_FAILED:
        return "FAILED";
    case KB_VERIFY_MISTRUSTED:
        return "MISTRUSTED";
    case KB_VERIFY_ERROR:
        return "ERROR";
    default:
        return "-";
    }
}

void kb_table_row(FILE *f, const kb_result *r) {
    char label[200], b1[64], b2[64], b3[64];
    problem_label(&r->prob, label, sizeof label);
    /* acc: the compute type the implementation really used (kmux_plan_info) */
    fprintf(f, "%-36s %-5s %-13s %-24s %-6s %-10s", fit(label, 36, b1),
            r->prob.op == KB_OP_CONV ? kb_dir_name(r->prob.dir) : "", fit(r->device, 13, b2),
            fit(r->impl[0] ? r->impl : "-", 24, b3),
            r->effective_compute[0] ? r->effective_compute : "-", kb_table_verdict(r));
    if (kb_result_has_speed(r)) {
        fprintf(f, " %9.3f %9.3f %9.1f", r->stats.min_ms, r->stats.median_ms, r->gflops);
        if (r->roof.pct_peak > 100.0) /* faster than the stated peak: the peak is wrong */
            fprintf(f, " %5.0f!", r->roof.pct_peak);
        else if (r->roof.pct_peak >= 0)
            fprintf(f, " %5.1f%%", r->roof.pct_peak);
        else
            fprintf(f, " %6s", "?");
        fprintf(f, " %-7s", r->roof.bound ? (r->roof.bound[0] == 'c' ? "compute" : "memory") : "?");
        if (r->noise.noisy) { /* never ranked; every cause, e.g. NOISY(load,clock) */
            const char *why = r->noise.reason;
            int steal = strstr(why, "stole") != NULL, rounds = strstr(why, "rounds") != NULL;
            int clock = strstr(why, "clock:") != NULL;
            int load = strstr(why, "other processes") != NULL || !(steal || rounds || clock);
            fprintf(f, " NOISY(%s%s%s%s%s%s%s)", load ? "load" : "", load && steal ? "," : "",
                    steal ? "steal" : "", (load || steal) && rounds ? "," : "",
                    rounds ? "rounds" : "", (load || steal || rounds) && clock ? "," : "",
                    clock ? "clock" : "");
        }
        if (r->stats.spread > KB_NOISY_SPREAD) fprintf(f, " noisy(%.0f%%)", 100 * r->stats.spread);
    }
    fputc('\n', f);
    /* why it did not pass, on the next line */
    if (r->status != KMUX_OK)
        fprintf(f, "    %s\n", r->error);
    else if (r->check.status != KB_VERIFY_PASSED && r->check.status != KB_VERIFY_NOT_RUN)
        fprintf(f, "    %s\n", r->check.message);
    if (kb_result_has_speed(r) && r->order_note[0]) fprintf(f, "    %s\n", r->order_note);
    fflush(f);
}

int kb_table_summary(FILE *f, const kb_result *results, size_t n) {
    size_t passed = 0, sampled = 0, failed = 0, mistrusted = 0, errors = 0, unsupported = 0,
           unverified = 0, skipped = 0;
    for (size_t i = 0; i < n; ++i) {
        const char *v = kb_table_verdict(&results[i]);
        skipped += results[i].prob.unsupported[0] != '\0'; /* kmux cannot express it (3-D) */
        if (!strcmp(v, "PASSED"))
            ++passed;
        else if (!strcmp(v, "PASSED~"))
            ++passed, ++sampled;
        else if (!strcmp(v, "FAILED"))
            ++failed;
        else if (!strcmp(v, "MISTRUSTED"))
            ++mistrusted;
        else if (!strcmp(v, "UNSUPPORTED"))
            ++unsupported;
        else if (!strcmp(v, "ERROR"))
            ++errors;
        else
            ++unverified;
    }
    fprintf(f,
            "\n%zu results: %zu passed (%zu on a sampled subset, marked ~), %zu failed, %zu "
            "mistrusted, %zu errors, %zu unsupported, %zu not verified.\n",
            n, passed, sampled, failed, mistrusted, errors, unsupported, unverified);
    /* benchdnn's counts (one test per row): a problem kmux cannot express is skipped, a device
     * without an implementation unimplemented; failed includes errors */
    fprintf(f, "tests:%zu passed:%zu skipped:%zu mistrusted:%zu unimplemented:%zu failed:%zu\n", n,
            passed, skipped, mistrusted, unsupported - skipped, failed + errors);
    size_t noisy = 0;
    for (size_t i = 0; i < n; ++i)
        noisy += kb_result_has_speed(&results[i]) && results[i].stats.spread > KB_NOISY_SPREAD;
    size_t over = 0;
    for (size_t i = 0; i < n; ++i)
        over += kb_result_has_speed(&results[i]) && results[i].roof.pct_peak > 100.0;
    if (over)
        fprintf(f,
                "%zu results ran faster than their device's stated peak (%%peak marked !): that "
                "device's peak figure (kmux_device_props) is too low.\n",
                over);
    if (noisy)
        fprintf(f,
                "%zu timings are noisy: (p90 - p10) / median above %.0f%% (a busy machine?); "
                "compare them with care.\n",
                noisy, 100 * KB_NOISY_SPREAD);
    size_t loud = 0;
    const kb_result *first = NULL;
    for (size_t i = 0; i < n; ++i)
        if (kb_result_noisy(&results[i])) {
            ++loud;
            if (!first) first = &results[i];
        }
    if (loud)
        fprintf(f,
                "%zu timings are NOISY: measured while the machine was busy (e.g. %s: %s); they "
                "are shown but not ranked. Rerun on a quiet machine.\n",
                loud, first->device, first->noise.reason);
    fprintf(f, "GFLOP/s at the median time; %%peak against the device's peak for the input "
               "dtype; bound: roofline (arithmetic intensity vs peak/bandwidth). No speed is "
               "shown for a result that did not pass.\n");
    return (int)(failed + mistrusted + errors);
}

void kb_table_remarked(FILE *f, const kb_result *results, const size_t *idx, size_t n,
                       double start_mhz, double moved_mhz) {
    if (n == 0) return;
    fprintf(f,
            "\nNOISY(clock) too: %zu rows printed above before the re-check that found the clock "
            "moved (%.0f -> %.0f MHz); they ran after the last check that found it unmoved (or "
            "the start), and their records are marked:\n",
            n, start_mhz, moved_mhz);
    for (size_t k = 0; k < n; ++k) {
        const kb_result *r = &results[idx[k]];
        char label[200];
        problem_label(&r->prob, label, sizeof label);
        fprintf(f, "  %s%s%s on %s\n", label, r->prob.op == KB_OP_CONV ? " " : "",
                r->prob.op == KB_OP_CONV ? kb_dir_name(r->prob.dir) : "", r->device);
    }
}

static int progress_tty = -1;

void kb_progress(size_t i, size_t n, const char *what) {
    if (progress_tty < 0) progress_tty = isatty(2);
    if (progress_tty)
        fprintf(stderr, "\r\033[K[%zu/%zu] %s", i, n, what);
    else
        fprintf(stderr, "kmux-bench: [%zu/%zu] %s\n", i, n, what);
    fflush(stderr);
}

void kb_progress_clear(void) {
    if (progress_tty > 0) {
        fprintf(stderr, "\r\033[K");
        fflush(stderr);
    }
}

/* Step time of one device over the workload's problems; -1 when one has no verified time. */
static double step_ms(const kb_result *results, size_t n, const char *wl, const char *dev,
                      size_t *noisy) {
    double ms = 0;
    size_t want = 0, have = 0;
    for (size_t q = 0; q < n; ++q) {
        const kb_result *s = &results[q];
        if (strcmp(s->prob.workload, wl) || strcmp(s->device, dev)) continue;
        ++want;
        if (kb_result_has_speed(s)) {
            ++have;
            ms += s->stats.median_ms * s->prob.occurrences;
            if (s->noise.noisy) ++*noisy;
        }
    }
    return have == want && have > 0 ? ms : -1.0;
}

/* The ranking line of a model view: fastest device and its lead, or why there is none. */
static void rank_devices(FILE *f, const kb_result *results, size_t n, const char *wl) {
    const char *best = NULL, *second = NULL;
    double best_ms = 0, second_ms = 0;
    size_t noisy = 0, devices = 0;
    const char *seen[64];
    for (size_t j = 0; j < n; ++j) {
        const kb_result *r = &results[j];
        if (strcmp(r->prob.workload, wl)) continue;
        int dup = 0;
        for (size_t k = 0; k < devices; ++k)
            dup |= !strcmp(seen[k], r->device);
        if (dup || devices == 64) continue;
        seen[devices++] = r->device;
        double ms = step_ms(results, n, wl, r->device, &noisy);
        if (ms <= 0) continue;
        if (!best || ms < best_ms) {
            second = best, second_ms = best_ms;
            best = r->device, best_ms = ms;
        } else if (!second || ms < second_ms) {
            second = r->device, second_ms = ms;
        }
    }
    if (noisy)
        fprintf(f,
                "  not ranked: %zu of these timings were measured on a busy machine (NOISY); "
                "a ranking from them could be the wrong way round\n",
                noisy);
    else if (best && second)
        fprintf(f, "  fastest: %s, %.2fx %s\n", best, second_ms / best_ms, second);
}

/* ---- heartbeat of a long problem ---------------------------------------------------------------
 */

static struct {
    pthread_t tid;
    pthread_mutex_t lock;
    pthread_cond_t cond;
    int running, stop;
    double t0, estimate_s;
    char what[600];
} hb = {.lock = PTHREAD_MUTEX_INITIALIZER, .cond = PTHREAD_COND_INITIALIZER};

static void *heartbeat(void *arg) {
    (void)arg;
    pthread_mutex_lock(&hb.lock);
    double next = hb.t0 + 1.0; /* only problems that take more than a second */
    while (!hb.stop) {
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        double wait = next - kb_now_s();
        if (wait > 0) {
            ts.tv_sec += (time_t)wait;
            ts.tv_nsec += (long)((wait - (double)(time_t)wait) * 1e9);
            if (ts.tv_nsec >= 1000000000L) ts.tv_sec++, ts.tv_nsec -= 1000000000L;
            pthread_cond_timedwait(&hb.cond, &hb.lock, &ts);
            continue;
        }
        double el = kb_now_s() - hb.t0;
        if (hb.estimate_s > 0)
            fprintf(stderr, "kmux-bench: %s: %.0f s (estimate %.0f s)\n", hb.what, el,
                    hb.estimate_s);
        else
            fprintf(stderr, "kmux-bench: %s: %.0f s\n", hb.what, el);
        fflush(stderr);
        next = kb_now_s() + (el < 10 ? 2.0 : 10.0);
    }
    pthread_mutex_unlock(&hb.lock);
    return NULL;
}

void kb_progress_heartbeat_start(const char *what, double estimate_s) {
    kb_progress_heartbeat_stop();
    kb_strlcpy(hb.what, what, sizeof hb.what);
    hb.estimate_s = estimate_s;
    hb.t0 = kb_now_s();
    hb.stop = 0;
    hb.running = pthread_create(&hb.tid, NULL, heartbeat, NULL) == 0;
}

void kb_progress_heartbeat_stop(void) {
    if (!hb.running) return;
    pthread_mutex_lock(&hb.lock);
    hb.stop = 1;
    pthread_cond_signal(&hb.cond);
    pthread_mutex_unlock(&hb.lock);
    pthread_join(hb.tid, NULL);
    hb.running = 0;
}

void kb_model_view(FILE *f, const kb_result *results, size_t n) {
    /* one block per network workload present, one line per device */
    const char *done_wl[8];
    size_t nwl = 0;
    for (size_t i = 0; i < n; ++i) {
        const char *wl = results[i].prob.workload;
        if (!kb_workload_is_network(wl)) continue;
        int seen = 0;
        for (size_t k = 0; k < nwl; ++k)
            seen |= !strcmp(done_wl[k], wl);
        if (seen || nwl == 8) continue;
        done_wl[nwl++] = wl;

        /* distinct layers and directions of this workload in the run */
        size_t layers = 0, problems = 0;
        int occ_total = 0;
        int64_t mb = kb_conv_mb(&results[i].prob);
        char last[512] = "";
        for (size_t j = 0; j < n; ++j) {
            if (strcmp(results[j].prob.workload, wl) ||
                strcmp(results[j].device, results[i].device))
                continue;
            ++problems;
            char d[512];
            kb_format_desc(&results[j].prob, d, sizeof d);
            if (strcmp(d, last)) {
                ++layers;
                occ_total += results[j].prob.occurrences;
                kb_strlcpy(last, d, sizeof last);
            }
        }
        fprintf(f,
                "\nModel view: %s, one training step, convolutions only (mb=%lld; %zu distinct "
                "layers = %d of the network's convolutions; FWD + BWD_D + BWD_W, each layer "
                "weighted by its occurrences)\n",
                wl, (long long)mb, layers, occ_total);
        fprintf(f, "  %-14s %12s %10s  %s\n", "device", "step ms", "images/s", "coverage");
        const char *done_dev[64];
        size_t ndev = 0;
        for (size_t j = 0; j < n; ++j) {
            const kb_result *r = &results[j];
            if (strcmp(r->prob.workload, wl)) continue;
            int dseen = 0;
            for (size_t k = 0; k < ndev; ++k)
                dseen |= !strcmp(done_dev[k], r->device);
            if (dseen || ndev == 64) continue;
            done_dev[ndev++] = r->device;
            double ms = 0;
            size_t have = 0, want = 0;
            unsigned dirs = 0;
            for (size_t q = 0; q < n; ++q) {
                const kb_result *s = &results[q];
                if (strcmp(s->prob.workload, wl) || strcmp(s->device, r->device)) continue;
                ++want;
                dirs |= (unsigned)s->prob.dir;
                if (kb_result_has_speed(s)) {
                    ++have;
                    ms += s->stats.median_ms * s->prob.occurrences;
                }
            }
            if (have == want && have > 0) {
                fprintf(f, "  %-14s %12.2f %10.1f  %zu/%zu problems%s\n", r->device, ms,
                        1e3 * (double)mb / ms, have, want,
                        dirs == KB_DIR_ALL ? "" : " (not every direction: partial step)");
            } else {
                fprintf(f, "  %-14s %12s %10s  %zu/%zu problems have a verified time: no total\n",
                        r->device, "-", "-", have, want);
            }
        }
        rank_devices(f, results, n, wl);
        if (problems > 0 && occ_total < 53) /* ResNet-50 has 53 convolutions */
            fprintf(f,
                    "  (a subset of the network's layers ran: the step time covers only them)\n");
    }
}
