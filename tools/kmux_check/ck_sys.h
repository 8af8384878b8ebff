/*
 * ck_sys.h - facts kmux-check reads from the machine itself (procfs, sysfs, /dev), kept apart
 * from the rules so that the rules stay pure.
 */
#ifndef KMUX_CHECK_SYS_H
#define KMUX_CHECK_SYS_H

#include <stddef.h>
#include <stdint.h>

#include "ck_verdict.h"

/** The "flags" line of /proc/cpuinfo into buf ("" when unreadable). */
void ck_sys_cpu_flags(char *buf, size_t size);
/** "model name" of /proc/cpuinfo ("unknown CPU"). */
void ck_sys_cpu_model(char *buf, size_t size);
/** Online CPUs (>= 1). */
int ck_sys_online_cpus(void);
/** 1-minute load average, -1 when unknown. */
double ck_sys_loadavg(void);
/** 1 when other work loads the host (load average >= 3/4 of the CPUs) and timings are noise. */
int ck_sys_host_busy(void);

/** Peak memory bandwidth of the host from the SMBIOS memory devices (type 17: populated
 *  modules x configured MT/s x 8 bytes; assumes one module per channel). Returns GB/s, or 0
 *  with reason saying why not (tables unreadable without root, no speed recorded). */
double ck_sys_dram_peak_gbps(char *reason, size_t size, int *modules, int *mts);

/** PCIe link of the device at bus_id ("0000:3b:00.0") from /sys/bus/pci/devices: current and
 *  maximum generation and width, 0 where unknown. Returns 0 when sysfs has the device. */
int ck_sys_pci_link(const char *bus_id, int *gen, int *width, int *max_gen, int *max_width);

/** Pure: counts the populated memory devices (SMBIOS type 17 structures with a size and a speed)
 *  of a raw SMBIOS table (the contents of /sys/firmware/dmi/tables/DMI) and their lowest
 *  configured speed in MT/s. Returns the module count. */
int ck_dmi_parse_memory(const uint8_t *table, size_t n, int *modules, int *mts);
/** modules x MT/s x 8 bytes, in GB/s (one 64-bit channel per module). */
double ck_dmi_peak_gbps(int modules, int mts);

/** stat() and access() of a device node, with its group's name (into group_buf) and whether the
 *  user is in it. */
void ck_sys_node_facts(const char *path, ck_node_facts *f, char *group_buf, size_t group_size);

/** Paths matching a glob pattern ("/dev/dri/render*") into a NULL-terminated array the caller
 *  frees with ck_sys_free_paths; NULL when none. */
char **ck_sys_glob(const char *pattern);
void ck_sys_free_paths(char **paths);

#endif
