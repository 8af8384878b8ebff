/* kb_noise.c - foreign load and steal time around a run, from /proc/stat and getrusage. */
#define _POSIX_C_SOURCE 200809L
#include "kb_noise.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "cpu_model.h"
#include "kb_timing.h"
#include "kb_util.h"

void kb_noise_sample_now(kb_noise_sample *s) {
    memset(s, 0, sizeof *s);
    struct rusage ru;
    if (getrusage(RUSAGE_SELF, &ru) == 0)
        s->self_s = (double)ru.ru_utime.tv_sec + 1e-6 * (double)ru.ru_utime.tv_usec +
                    (double)ru.ru_stime.tv_sec + 1e-6 * (double)ru.ru_stime.tv_usec;
    FILE *f = fopen("/proc/stat", "r");
    if (f) {
        unsigned long long v[8] = {0};
        /* cpu  user nice system idle iowait irq softirq steal (guest is inside user) */
        if (fscanf(f, "cpu %llu %llu %llu %llu %llu %llu %llu %llu", &v[0], &v[1], &v[2], &v[3],
                   &v[4], &v[5], &v[6], &v[7]) == 8) {
            double tick = 1.0 / (double)sysconf(_SC_CLK_TCK);
            s->busy_s = (double)(v[0] + v[1] + v[2] + v[5] + v[6]) * tick;
            s->steal_s = (double)v[7] * tick;
            s->ok = 1;
        }
        fclose(f);
    }
    s->wall_s = kb_now_s();
}

void kb_noise_judge(double wall_s, double busy_s, double steal_s, double self_s, int online_cpus,
                    int threads, kb_noise *n) {
    memset(n, 0, sizeof *n);
    n->wall_s = wall_s;
    n->online_cpus = online_cpus;
    n->threads = threads;
    if (wall_s < KB_NOISE_MIN_WALL_S || online_cpus < 1) return;
    n->measured = 1;
    n->foreign_cpus = (busy_s - self_s) / wall_s;
    if (n->foreign_cpus < 0) n->foreign_cpus = 0;
    n->steal = steal_s / (wall_s * online_cpus);
    int free_cpus = online_cpus > threads ? online_cpus - threads : 0;
    if (n->foreign_cpus > free_cpus + KB_NOISE_FOREIGN_CPUS) {
        n->noisy = 1;
        snprintf(n->reason, sizeof n->reason,
                 "other processes kept %.2f CPUs busy (%d of %d left free)", n->foreign_cpus,
                 free_cpus, online_cpus);
    } else if (n->steal > KB_NOISE_STEAL) {
        n->noisy = 1;
        snprintf(n->reason, sizeof n->reason, "the hypervisor stole %.0f%% of the CPU time",
                 100 * n->steal);
    }
}

void kb_noise_between(const kb_noise_sample *a, const kb_noise_sample *b, int threads,
                      kb_noise *n) {
    long online = sysconf(_SC_NPROCESSORS_ONLN);
    if (!a->ok || !b->ok) {
        memset(n, 0, sizeof *n);
        return;
    }
    kb_noise_judge(b->wall_s - a->wall_s, b->busy_s - a->busy_s, b->steal_s - a->steal_s,
                   b->self_s - a->self_s, online > 0 ? (int)online : 1, threads, n);
}

void kb_noise_rounds(kb_noise *n, double rounds_spread) {
    n->rounds_spread = rounds_spread;
    if (n->noisy || rounds_spread <= KB_NOISE_ROUNDS) return;
    n->noisy = 1;
    snprintf(n->reason, sizeof n->reason, "the medians of the %d timing rounds disagree by %.0f%%",
             KB_TIMING_ROUNDS, 100 * rounds_spread);
}

int kb_noise_clock(kb_noise *n, double start_mhz, double now_mhz) {
    if (start_mhz <= 0 || now_mhz <= 0) return 0;
    n->clock_start_mhz = start_mhz;
    n->clock_mhz = now_mhz;
    double moved = now_mhz / start_mhz - 1.0;
    if (fabs(moved) <= KB_NOISE_CLOCK) return 0;
    char why[96];
    snprintf(why, sizeof why, "clock: %.0f MHz at the start, %.0f MHz now (%+.0f%%)", start_mhz,
             now_mhz, 100 * moved);
    if (n->noisy && n->reason[0]) {
        size_t len = strlen(n->reason);
        snprintf(n->reason + len, sizeof n->reason - len, "; %s", why);
    } else {
        kb_strlcpy(n->reason, why, sizeof n->reason);
    }
    n->noisy = 1;
    return 1;
}

double kb_noise_recheck_clock_mhz(void) {
    const char *hook = getenv("KMUX_BENCH_RECHECK_CLOCK_MHZ");
    if (hook && *hook) return strtod(hook, NULL);
    /* a clock given by the user is not a measurement to compare with */
    const char *given = getenv("KMUX_CPU_CLOCK_MHZ");
    if (given && *given) return 0.0;
    return kmux_cpu_measure_clock_mhz();
}
