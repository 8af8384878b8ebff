/*
 * ck_checks.h - the four groups of kmux-check's checks. Each runs through the public kmux API
 * (and the machine's own files for environment facts), measures, and adds its results to the
 * report through the pure rules of ck_verdict.h.
 */
#ifndef KMUX_CHECK_CHECKS_H
#define KMUX_CHECK_CHECKS_H

#include "ck_report.h"
#include "ck_sys.h"
#include "ck_targets.h"
#include "kmux.h"

/** What one run checks and how. */
typedef struct ck_run {
    kmux_context *ctx;
    kmux_device *ref;      /**< the oracle */
    kmux_device **devices; /**< the devices selected by --backend */
    int device_count;
    int want_gpu_cuda, want_gpu_hip, want_cpu; /**< backend families selected */
    int explicit_backend; /**< --backend named a family (not the default selection) */
    int quick;
    const ck_targets *targets;
    ck_report *report;
} ck_run;

/** Runtime/driver versions, plugins and their libraries, override variables, device nodes. */
void ck_check_environment(ck_run *run);
/** Identity, target id and code objects, ECC; CPU ISA against the libraries' kernel sets. */
void ck_check_devices(ck_run *run);
/** Kernel launch, bit-exact copies, every op x dtype the device claims against ref. */
void ck_check_function(ck_run *run);
/** Per GPU: the vendor libraries found (versions) and each library's implementation of a small
 *  GEMM and convolution against ref. */
void ck_check_libraries(ck_run *run);
/** GEMM per dtype, device copy, host-device copies, CPU STREAM triad and GEMM. */
void ck_check_speed(ck_run *run);

/** 1 when dev's backend is a CPU one (is_host and not ref). */
int ck_is_cpu_device(kmux_device *dev);

#endif
