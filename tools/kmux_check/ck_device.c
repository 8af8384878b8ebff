/*
 * ck_device.c - device checks: identity, target id and code objects, ECC (GPUs); the CPU's ISA
 * against the kernel set each CPU library chose.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "ck_checks.h"

int ck_is_cpu_device(kmux_device *dev) {
    kmux_device_props p;
    return kmux_device_props_get(dev, &p) == KMUX_OK && p.is_host && strcmp(p.backend, "ref") != 0;
}

static void add(ck_run *run, const char *subject, const char *name, const ck_verdict *v) {
    ck_report_add(run->report, "device", subject, name, v, NAN, NAN, "");
}

static void identity(ck_run *run, const kmux_device_props *p, const kmux_device_diag *d) {
    ck_verdict v;
    memset(&v, 0, sizeof v);
    v.status = CK_PASS;
    snprintf(v.detail, sizeof v.detail, "%s; arch %s%s%s; %d %s; %.1f GiB%s; clock %.0f MHz",
             p->name, p->arch, d && d->target_id[0] ? ", target " : "", d ? d->target_id : "",
             p->compute_units, p->is_host ? "threads" : "compute units",
             (double)p->memory_bytes / (1024.0 * 1024 * 1024), p->is_host ? " host" : "",
             p->clock_mhz);
    size_t len = strlen(v.detail);
    if (p->mem_bandwidth_gbps > 0)
        snprintf(v.detail + len, sizeof v.detail - len, "; memory %.0f GB/s",
                 p->mem_bandwidth_gbps);
    else
        snprintf(v.detail + len, sizeof v.detail - len, "; memory bandwidth not reported");
    add(run, p->id, "identity", &v);
}

/* The OpenBLAS core name inside library_version: "OpenBLAS 0.3.21 (Haswell, pthreads)". */
static void openblas_core(const char *libver, char *out, size_t size) {
    const char *p = strchr(libver, '(');
    out[0] = '\0';
    if (!p) return;
    p++;
    size_t n = strcspn(p, ",)");
    snprintf(out, size, "%.*s", (int)n, p);
}

static void cpu_kernels(ck_run *run, const kmux_device_props *p) {
    char flags[8192];
    ck_sys_cpu_flags(flags, sizeof flags);
    ck_isa cpu = ck_isa_from_cpu_flags(flags);
    ck_verdict v;
    if (strcmp(p->backend, "openblas") == 0) {
        char core[64];
        openblas_core(p->library_version, core, sizeof core);
        char fix[200];
        snprintf(fix, sizeof fix,
                 "OPENBLAS_CORETYPE=%s selects the right kernels, or use an OpenBLAS that knows "
                 "this CPU",
                 cpu >= CK_ISA_AVX512 ? "SkylakeX" : "Haswell");
        /* OpenBLAS has AVX-512 sgemm kernels (SkylakeX, Cooperlake) but no AMX sgemm. */
        v = ck_judge_cpu_kernels("OpenBLAS", cpu, ck_isa_from_openblas_core(core), CK_ISA_AVX512,
                                 fix);
        size_t len = strlen(v.detail);
        snprintf(v.detail + len, sizeof v.detail - len, " (core %s)", core[0] ? core : "?");
    } else if (strcmp(p->backend, "onednn") == 0) {
        v = ck_judge_cpu_kernels("oneDNN", cpu, ck_isa_from_onednn(p->arch), CK_ISA_AMX,
                                 "unset ONEDNN_MAX_CPU_ISA, or use a oneDNN release that knows "
                                 "this CPU");
        size_t len = strlen(v.detail);
        snprintf(v.detail + len, sizeof v.detail - len, " (isa %s)", p->arch);
    } else {
        return;
    }
    add(run, p->id, "cpu_kernels", &v);
}

void ck_check_devices(ck_run *run) {
    for (int i = 0; i < run->device_count; i++) {
        kmux_device *dev = run->devices[i];
        kmux_device_props p;
        if (kmux_device_props_get(dev, &p) != KMUX_OK) continue;
        if (p.is_host) {
            identity(run, &p, NULL);
            cpu_kernels(run, &p);
            continue;
        }
        kmux_device_diag d;
        memset(&d, 0, sizeof d);
        d.struct_size = sizeof d;
        kmux_status st = kmux_device_diag_get(dev, &d);
        identity(run, &p, st == KMUX_OK ? &d : NULL);
        ck_verdict v;
        if (st == KMUX_OK) {
            /* A full target id carries the features; fall back to the bare arch. */
            v = ck_judge_code_objects(d.target_id[0] ? d.target_id : p.arch, d.code_objects);
        } else {
            memset(&v, 0, sizeof v);
            v.status = CK_SKIP;
            snprintf(v.detail, sizeof v.detail, "the %s plugin reports no code objects: %s",
                     p.backend, kmux_last_error());
        }
        add(run, p.id, "code_objects", &v);
        int gen = 0, width = 0, max_gen = 0, max_width = 0;
        if (st == KMUX_OK && d.pcie_gen > 0) {
            gen = d.pcie_gen, width = d.pcie_width;
            max_gen = d.pcie_max_gen, max_width = d.pcie_max_width;
        } else {
            ck_sys_pci_link(p.pci_bus_id, &gen, &width, &max_gen, &max_width);
        }
        v = ck_judge_pcie_link(gen, width, max_gen, max_width);
        add(run, p.id, "pcie_link", &v);
        v = ck_judge_ecc(st == KMUX_OK ? d.ecc_enabled : -1, st == KMUX_OK ? d.ecc_supported : -1);
        add(run, p.id, "ecc", &v);
    }
}
