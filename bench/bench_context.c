/*
 * bench_context.c - what the first kmux_context_create of a process costs (the plugins opened,
 * their probes run), measured in fresh child processes, so that each run pays what a program
 * that links kmux pays once: a cold start, not a cached second call.
 *
 * Variants run side by side, interleaved (A B C, A B C, ...; the order rotates each round), each
 * child timing kmux_context_create with the monotonic clock and reporting it to the parent, which
 * prints the median, min and max per variant and each variant's median over the first's. A
 * variant is a label and environment settings applied in the child before the call:
 *
 *   bench_context [--runs N] [LABEL[:VAR=VALUE[:VAR=VALUE...]]]...
 *
 * With no variant: "as-is" (the environment as it is). Examples:
 *   bench_context as-is cpu-only:KMUX_BACKENDS=ref,openblas,onednn
 *   bench_context as-is old:KMUX_BACKEND_PATH=/tmp/old/build/lib
 * VALUE may be empty ("VAR=" unsets VAR). Also printed per variant: the devices the context found
 * (a variant that finds none or fails to create says so and is not timed as a success).
 */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "kmux.h"
#include "kmux_bench/kb_median.h"

enum { MAX_VARIANTS = 8, MAX_RUNS = KB_MEDIAN_MAX };

typedef struct variant {
    const char *label;
    char *env; /* "VAR=VALUE:VAR=VALUE", owned */
    double ms[MAX_RUNS];
    int n, failed, devices;
} variant;

static double now_ms(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e3 + (double)t.tv_nsec / 1e6;
}

/* Applies "VAR=VALUE:VAR=VALUE" (an empty VALUE unsets VAR). */
static int apply_env(char *env) {
    for (char *save = NULL, *kv = strtok_r(env, ":", &save); kv; kv = strtok_r(NULL, ":", &save)) {
        char *eq = strchr(kv, '=');
        if (!eq) return -1;
        *eq = '\0';
        if (eq[1] ? setenv(kv, eq + 1, 1) : unsetenv(kv)) return -1;
    }
    return 0;
}

/* In a child: times the first kmux_context_create, writes "ms devices" (or "fail why") to fd. */
static void child(variant *v, int fd) {
    if (v->env && apply_env(v->env) != 0) {
        dprintf(fd, "fail bad environment setting in variant %s\n", v->label);
        _exit(1);
    }
    kmux_context *ctx = NULL;
    const double t0 = now_ms();
    kmux_status s = kmux_context_create(NULL, &ctx);
    const double t1 = now_ms();
    if (s != KMUX_OK) {
        dprintf(fd, "fail %s\n", kmux_last_error());
        _exit(1);
    }
    int n = 0;
    (void)kmux_device_count(ctx, &n);
    dprintf(fd, "%.3f %d\n", t1 - t0, n);
    kmux_context_destroy(ctx);
    _exit(0);
}

static int run_one(variant *v) {
    int p[2];
    if (pipe(p) != 0) return -1;
    pid_t pid = fork();
    if (pid < 0) return -1;
    if (pid == 0) {
        close(p[0]);
        child(v, p[1]);
    }
    close(p[1]);
    char buf[1024] = "";
    ssize_t got = 0, r;
    while ((r = read(p[0], buf + got, sizeof buf - 1 - (size_t)got)) > 0)
        got += r;
    buf[got > 0 ? got : 0] = '\0';
    close(p[0]);
    int status = 0;
    waitpid(pid, &status, 0);
    double ms = 0;
    int devices = 0;
    if (sscanf(buf, "%lf %d", &ms, &devices) == 2 && WIFEXITED(status) &&
        WEXITSTATUS(status) == 0) {
        v->ms[v->n++] = ms;
        v->devices = devices;
        return 0;
    }
    if (!v->failed) fprintf(stderr, "%s: %s", v->label, buf[0] ? buf : "child died\n");
    v->failed++;
    return -1;
}

int main(int argc, char **argv) {
    variant vs[MAX_VARIANTS];
    int nv = 0, runs = 11;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--runs") == 0 && i + 1 < argc) {
            runs = atoi(argv[++i]);
            if (runs < 1 || runs > MAX_RUNS) {
                fprintf(stderr, "--runs: %d, want 1 to %d\n", runs, MAX_RUNS);
                return 2;
            }
            continue;
        }
        if (nv == MAX_VARIANTS) {
            fprintf(stderr, "at most %d variants\n", MAX_VARIANTS);
            return 2;
        }
        char *colon = strchr(argv[i], ':');
        vs[nv] = (variant){.label = argv[i]};
        if (colon) {
            *colon = '\0';
            vs[nv].env = colon + 1;
        }
        nv++;
    }
    if (nv == 0) vs[nv++] = (variant){.label = "as-is"};
    for (int r = 0; r < runs; r++)
        for (int k = 0; k < nv; k++) {
            variant *v = &vs[(r + k) % nv];
            char *env = v->env ? strdup(v->env) : NULL; /* strtok_r writes into it */
            char *keep = v->env;
            v->env = env;
            (void)run_one(v);
            v->env = keep;
            free(env);
        }
    printf("kmux_context_create, first call of a process: %d runs per variant, interleaved\n",
           runs);
    printf("%-16s %10s %10s %10s %8s %8s\n", "variant", "median ms", "min ms", "max ms", "devices",
           "vs first");
    double first = 0;
    int bad = 0;
    for (int k = 0; k < nv; k++) {
        variant *v = &vs[k];
        if (v->n == 0) {
            printf("%-16s %10s (all %d runs failed)\n", v->label, "-", v->failed);
            bad = 1;
            continue;
        }
        double sorted[MAX_RUNS];
        kb_sorted_copy(v->ms, v->n, sorted);
        const double med = kb_median(v->ms, v->n);
        if (k == 0) first = med;
        printf("%-16s %10.2f %10.2f %10.2f %8d", v->label, med, sorted[0], sorted[v->n - 1],
               v->devices);
        if (k > 0 && first > 0)
            printf(" %7.2fx", med / first);
        else
            printf(" %8s", "-");
        if (v->failed) printf("  (%d runs failed)", v->failed);
        printf("\n");
    }
    return bad;
}
