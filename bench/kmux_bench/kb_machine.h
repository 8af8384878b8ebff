/*
 * kb_machine.h - the machine fingerprint every record carries: host, CPU, GPUs (name, driver,
 * from device props), every backend with its library version, kmux's version and commit, date.
 */
#ifndef KB_MACHINE_H
#define KB_MACHINE_H

#include "kb_peaks.h"
#include "kmux.h"

#define KB_MAX_BACKENDS 16
#define KB_MAX_GPUS 16

typedef struct kb_machine {
    char label[128]; /**< --label, else the host name: the machine's column in reports */
    char hostname[128];
    char os[160]; /**< "Linux 6.1.0-18-amd64 x86_64" */
    char cpu_model[128];
    int cores;             /**< online logical CPUs */
    char date[32];         /**< start of the run, ISO 8601 UTC */
    char kmux_version[96]; /**< kmux_version() */
    char kmux_commit[48];  /**< the commit part of it, "unknown" if none */
    int nbackends;
    struct {
        char name[32], version[128], reason[256];
        int available, devices;
    } backends[KB_MAX_BACKENDS];
    int ngpus;
    struct {
        char id[32], name[128], arch[32], driver[64], library[96];
        double memory_gb;
    } gpus[KB_MAX_GPUS];
    kb_host_measure host; /**< measured clock and bandwidth */
} kb_machine;

/** Collects the fingerprint from the context and the system (no measurement: m->host is left
 *  zeroed for the caller to fill). label may be NULL. */
void kb_machine_collect(kmux_context *ctx, const char *label, kb_machine *m);

/** Extracts the commit from a kmux_version() string ("0.1.0+abc123", "0.1.0 (abc123)",
 *  "0.1.0-abc123"); "unknown" when there is none. */
void kb_version_commit(const char *version, char *commit, size_t cap);

#endif
