/*
 * kmux-check - is this machine's ROCm, CUDA or CPU stack ready for real work? One line per check
 * (PASS / WARN / FAIL / SKIP, measured value, target, fix), a summary, or one JSON object
 * (bench/schema/kmux-check-report.schema.json). Exit status 0 only when nothing FAILed.
 */
#define _GNU_SOURCE
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "ck_checks.h"

static void usage(FILE *out) {
    ck_targets t;
    ck_targets_default(&t);
    fprintf(out,
            "usage: kmux-check [--backend=hip|cuda|cpu|all] [--json] [--quick] "
            "[--target-file=FILE]\n\n"
            "Checks whether this machine's GPU (or CPU) stack is ready for kmux: environment\n"
            "(plugins, versions, override variables, device nodes), devices (architecture,\n"
            "code objects, ECC, CPU kernel sets), function (launch, copies, every op x dtype\n"
            "against ref) and speed (GEMM, memory and host<->device bandwidth against peaks).\n\n"
            "  --backend=B        hip, cuda, cpu (openblas, onednn), all; default: every GPU\n"
            "                     backend found, the CPU ones when there is none\n"
            "  --json             one JSON object on stdout instead of text\n"
            "  --quick            smaller problems and shorter timings\n"
            "  --target-file=FILE overrides targets: key=value lines ('#' comments) or one JSON\n"
            "                     object {\"key\": number}; keys and defaults (with sources):\n");
    ck_targets_print(out, &t);
    fprintf(out, "\nExit status: 0 when no check FAILed, 1 when one did, 2 for a usage error.\n");
}

static double now_s(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

int main(int argc, char **argv) {
    const char *backend = "default", *target_file = NULL;
    int json = 0, quick = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
            usage(stdout);
            return 0;
        } else if (strcmp(a, "--json") == 0) {
            json = 1;
        } else if (strcmp(a, "--quick") == 0) {
            quick = 1;
        } else if (strncmp(a, "--backend=", 10) == 0) {
            backend = a + 10;
            if (strcmp(backend, "hip") && strcmp(backend, "cuda") && strcmp(backend, "cpu") &&
                strcmp(backend, "all")) {
                fprintf(stderr, "kmux-check: --backend=%s: expected hip, cuda, cpu or all\n",
                        backend);
                return 2;
            }
        } else if (strncmp(a, "--target-file=", 14) == 0) {
            target_file = a + 14;
        } else {
            fprintf(stderr, "kmux-check: unknown argument \"%s\" (--help lists them)\n", a);
            return 2;
        }
    }
    ck_targets targets;
    ck_targets_default(&targets);
    char err[512];
    if (target_file && ck_targets_load(target_file, &targets, err, sizeof err) != 0) {
        fprintf(stderr, "kmux-check: %s\n", err);
        return 2;
    }
    double t0 = now_s();
    kmux_context *ctx = NULL;
    if (kmux_context_create(NULL, &ctx) != KMUX_OK) {
        fprintf(stderr, "kmux-check: cannot create a kmux context: %s\n", kmux_last_error());
        return 1;
    }
    ck_report report = {0};
    ck_run run = {0};
    run.ctx = ctx;
    run.quick = quick;
    run.targets = &targets;
    run.report = &report;
    if (kmux_device_find(ctx, "ref", &run.ref) != KMUX_OK) {
        fprintf(stderr, "kmux-check: no ref device: %s\n", kmux_last_error());
        kmux_context_destroy(ctx);
        return 1;
    }
    int nd = 0, gpus = 0;
    kmux_device_count(ctx, &nd);
    kmux_device **all = calloc((size_t)nd + 1, sizeof *all);
    for (int i = 0; i < nd; i++) {
        kmux_device_props p;
        if (kmux_device_get(ctx, i, &all[i]) == KMUX_OK &&
            kmux_device_props_get(all[i], &p) == KMUX_OK && !p.is_host)
            gpus++;
    }
    int def = strcmp(backend, "default") == 0, every = strcmp(backend, "all") == 0;
    run.explicit_backend = !def && !every;
    run.want_gpu_cuda = def || every || strcmp(backend, "cuda") == 0;
    run.want_gpu_hip = def || every || strcmp(backend, "hip") == 0;
    run.want_cpu = every || strcmp(backend, "cpu") == 0 || (def && gpus == 0);
    run.devices = calloc((size_t)nd + 1, sizeof *run.devices);
    for (int i = 0; i < nd && run.devices; i++) {
        kmux_device_props p;
        if (!all[i] || kmux_device_props_get(all[i], &p) != KMUX_OK) continue;
        int take =
            (strcmp(p.backend, "cuda") == 0 && run.want_gpu_cuda) ||
            (strcmp(p.backend, "hip") == 0 && run.want_gpu_hip) ||
            (ck_is_cpu_device(all[i]) && run.want_cpu) ||
            (!p.is_host && strcmp(p.backend, "cuda") && strcmp(p.backend, "hip") && (def || every));
        if (take) run.devices[run.device_count++] = all[i];
    }
    ck_check_environment(&run);
    ck_check_devices(&run);
    ck_check_function(&run);
    ck_check_libraries(&run);
    ck_check_speed(&run);
    if (json) {
        char host[256] = "", cpu[256];
        gethostname(host, sizeof host - 1);
        ck_sys_cpu_model(cpu, sizeof cpu);
        ck_run_info info = {kmux_version(), host,           cpu,         backend,
                            quick,          targets.origin, now_s() - t0};
        ck_report_print_json(stdout, &report, &info);
    } else {
        printf("kmux-check %s: backend %s%s, targets: %s\n\n", kmux_version(), backend,
               quick ? ", quick" : "", targets.origin);
        ck_report_print_text(stdout, &report);
        printf("(%.1f s)\n", now_s() - t0);
    }
    int rc = ck_exit_status(&report.counts);
    ck_report_free(&report);
    free(run.devices);
    free(all);
    kmux_context_destroy(ctx);
    return rc;
}
