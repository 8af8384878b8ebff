/*
 * ck_env.c - environment checks: plugins and their versions, GPU runtime/driver versions,
 * override variables, device node access.
 */
#define _GNU_SOURCE
#include <link.h>
#include <math.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "ck_checks.h"

static void add(ck_run *run, const char *subject, const char *name, const ck_verdict *v) {
    ck_report_add(run->report, "environment", subject, name, v, NAN, NAN, "");
}

static int family_wanted(const ck_run *run, const char *name) {
    if (strcmp(name, "cuda") == 0) return run->want_gpu_cuda;
    if (strcmp(name, "hip") == 0) return run->want_gpu_hip;
    if (strcmp(name, "ref") == 0) return 1;
    return run->want_cpu;
}

static void check_plugins(ck_run *run) {
    int nb = 0, seen_cuda = 0, seen_hip = 0;
    kmux_backend_count(run->ctx, &nb);
    for (int i = 0; i < nb; i++) {
        kmux_backend_info b;
        if (kmux_backend_info_get(run->ctx, i, &b) != KMUX_OK) continue;
        seen_cuda |= strcmp(b.name, "cuda") == 0;
        seen_hip |= strcmp(b.name, "hip") == 0;
        int gpu = strcmp(b.name, "cuda") == 0 || strcmp(b.name, "hip") == 0;
        char detail[384];
        if (b.available) {
            snprintf(detail, sizeof detail, "%s, %d device%s [%s]", b.version[0] ? b.version : "-",
                     b.device_count, b.device_count == 1 ? "" : "s", b.path);
            ck_verdict v = ck_verdict_of(CK_PASS, detail, NULL);
            add(run, b.name, "plugin", &v);
        } else if (family_wanted(run, b.name) || gpu) {
            snprintf(detail, sizeof detail, "unavailable: %s [%s]", b.reason, b.path);
            /* Asked for by name and not usable: the stack is not ready. Found while looking
             * for what there is: a SKIP that says why. */
            int failed = gpu && run->explicit_backend && family_wanted(run, b.name);
            ck_verdict v =
                ck_verdict_of(failed ? CK_FAIL : CK_SKIP, detail,
                              failed ? "fix the reason above, then run kmux-info" : NULL);
            add(run, b.name, "plugin", &v);
        }
    }
    const char *missing[2] = {seen_cuda ? NULL : "cuda", seen_hip ? NULL : "hip"};
    for (int i = 0; i < 2; i++) {
        if (!missing[i]) continue;
        char detail[384];
        snprintf(detail, sizeof detail,
                 "no plugin: libkmux-%s.so is not in the plugin path (not built: configure "
                 "with -DKMUX_WITH_%s=ON on a machine with its toolkit, or set "
                 "KMUX_BACKEND_PATH)",
                 missing[i], i == 0 ? "CUDA" : "HIP");
        int failed = run->explicit_backend && family_wanted(run, missing[i]);
        ck_verdict v =
            ck_verdict_of(failed ? CK_FAIL : CK_SKIP, detail, failed ? "install the plugin" : NULL);
        add(run, missing[i], "plugin", &v);
    }
}

static void check_gpu_versions(ck_run *run) {
    for (int i = 0; i < run->device_count; i++) {
        kmux_device *dev = run->devices[i];
        kmux_device_props p;
        if (kmux_device_props_get(dev, &p) != KMUX_OK || p.is_host) continue;
        kmux_device_diag d;
        memset(&d, 0, sizeof d);
        d.struct_size = sizeof d;
        kmux_status st = kmux_device_diag_get(dev, &d);
        char detail[384];
        snprintf(detail, sizeof detail, "runtime %s; driver %s; libraries %s",
                 d.runtime_version[0] ? d.runtime_version : "?",
                 d.driver_version[0]   ? d.driver_version
                 : p.driver_version[0] ? p.driver_version
                                       : "?",
                 d.libraries[0] ? d.libraries : p.library_version);
        ck_verdict v =
            ck_verdict_of(st == KMUX_OK || p.driver_version[0] ? CK_PASS : CK_SKIP, detail, NULL);
        add(run, p.id, "versions", &v);
    }
}

static void check_overrides(ck_run *run) {
    static const char *vars[] = {"HSA_OVERRIDE_GFX_VERSION", "HIP_VISIBLE_DEVICES",
                                 "ROCR_VISIBLE_DEVICES",     "CUDA_VISIBLE_DEVICES",
                                 "ONEDNN_MAX_CPU_ISA",       "DNNL_MAX_CPU_ISA",
                                 "OPENBLAS_CORETYPE",        "OMP_NUM_THREADS"};
    int cpus = ck_sys_online_cpus();
    for (size_t i = 0; i < sizeof vars / sizeof vars[0]; i++) {
        const char *value = getenv(vars[i]);
        /* DNNL_MAX_CPU_ISA is the older spelling: only reported when set. */
        if (!value && strcmp(vars[i], "DNNL_MAX_CPU_ISA") == 0) continue;
        ck_verdict v = ck_judge_env_override(vars[i], value, cpus);
        add(run, "env", vars[i], &v);
    }
}

static void check_node(ck_run *run, const char *subject, const char *path, const char *driver) {
    ck_node_facts f;
    char group[64] = "";
    ck_sys_node_facts(path, &f, group, sizeof group);
    ck_verdict v = ck_judge_device_node(&f, driver);
    char name[48];
    snprintf(name, sizeof name, "node %s", path);
    add(run, subject, name, &v);
}

static void check_node_family(ck_run *run, const char *subject, const char *pattern,
                              const char *driver) {
    char **paths = ck_sys_glob(pattern);
    if (!paths || !paths[0]) {
        check_node(run, subject, pattern, driver); /* does not exist: SKIP with the reason */
    } else {
        for (int i = 0; paths[i]; i++)
            check_node(run, subject, paths[i], driver);
    }
    ck_sys_free_paths(paths);
}

/* Vendor libraries the plugins opened, as the dynamic loader sees them (real file names carry
 * the versions: libopenblasp-r0.3.21.so, libcudnn.so.9.13.0). */
static const char *const vendor_libs[] = {
    "libopenblas", "libblas.so",       "libdnnl",    "libgomp",      "libomp",   "libtbb",
    "libcuda.so",  "libcudart",        "libcublas",  "libcublasLt",  "libcudnn", "libnvrtc",
    "libamdhip64", "libhsa-runtime64", "librocblas", "libhipblaslt", "libMIOpen"};

typedef struct lib_list {
    char text[1024];
} lib_list;

static int collect_lib(struct dl_phdr_info *info, size_t size, void *data) {
    lib_list *l = data;
    const char *name = info->dlpi_name, *base = name ? strrchr(name, '/') : NULL;
    base = base ? base + 1 : name;
    if (!base || !*base) return 0;
    for (size_t i = 0; i < sizeof vendor_libs / sizeof vendor_libs[0]; i++) {
        if (strncmp(base, vendor_libs[i], strlen(vendor_libs[i])) != 0) continue;
        char real[512];
        /* the real file's base name: short, and it carries the version */
        const char *shown = realpath(name, real) ? real : name, *slash = strrchr(shown, '/');
        shown = slash ? slash + 1 : shown;
        size_t len = strlen(l->text);
        if (!strstr(l->text, shown))
            snprintf(l->text + len, sizeof l->text - len, "%s%s", len ? ", " : "", shown);
        break;
    }
    return 0;
}

static void check_vendor_libraries(ck_run *run) {
    lib_list l = {""};
    dl_iterate_phdr(collect_lib, &l);
    ck_verdict v =
        ck_verdict_of(l.text[0] ? CK_PASS : CK_SKIP,
                      l.text[0] ? l.text : "no vendor library loaded by the plugins", NULL);
    add(run, "host", "vendor_libraries", &v);
}

/* The kernel driver's version as the kernel reports it, without any plugin: the first line of
 * path (/sys/module/amdgpu/version, /proc/driver/nvidia/version). module: its /sys/module name. */
static void check_kernel_driver(ck_run *run, const char *subject, const char *module,
                                const char *path) {
    char dir[128], line[256] = "", detail[384];
    snprintf(dir, sizeof dir, "/sys/module/%s", module);
    FILE *f = fopen(path, "r");
    if (f) {
        if (!fgets(line, sizeof line, f)) line[0] = '\0';
        fclose(f);
        line[strcspn(line, "\n")] = '\0';
    }
    ck_verdict v;
    if (line[0]) {
        snprintf(detail, sizeof detail, "%s kernel driver: %s", module, line);
        v = ck_verdict_of(CK_PASS, detail, NULL);
    } else if (access(dir, F_OK) == 0) {
        snprintf(detail, sizeof detail, "%s kernel module loaded (version not readable from %s)",
                 module, path);
        v = ck_verdict_of(CK_PASS, detail, NULL);
    } else {
        snprintf(detail, sizeof detail, "%s kernel module not loaded (no %s)", module, dir);
        v = ck_verdict_of(CK_SKIP, detail, NULL);
    }
    add(run, subject, "kernel_driver", &v);
}

void ck_check_environment(ck_run *run) {
    char detail[384];
    snprintf(detail, sizeof detail, "kmux %s", kmux_version());
    ck_verdict v = ck_verdict_of(CK_PASS, detail, NULL);
    add(run, "kmux", "library", &v);
    check_plugins(run);
    check_vendor_libraries(run);
    check_gpu_versions(run);
    check_overrides(run);
    if (run->want_gpu_hip) {
        check_kernel_driver(run, "hip", "amdgpu", "/sys/module/amdgpu/version");
        check_node(run, "hip", "/dev/kfd", "amdgpu");
        check_node_family(run, "hip", "/dev/dri/renderD*", "amdgpu");
    }
    if (run->want_gpu_cuda) {
        check_kernel_driver(run, "cuda", "nvidia", "/proc/driver/nvidia/version");
        check_node(run, "cuda", "/dev/nvidiactl", "nvidia");
        check_node_family(run, "cuda", "/dev/nvidia[0-9]*", "nvidia");
        check_node(run, "cuda", "/dev/nvidia-uvm", "nvidia-uvm");
    }
}
