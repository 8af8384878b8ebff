/*
 * ck_sys.c - machine facts for kmux-check: /proc/cpuinfo, load, SMBIOS memory tables, device
 * nodes and their groups.
 */
#define _GNU_SOURCE
#include "ck_sys.h"

#include <errno.h>
#include <glob.h>
#include <grp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static int cpuinfo_field(const char *key, char *out, size_t size) {
    FILE *f = fopen("/proc/cpuinfo", "r");
    if (!f) return 0;
    /* The flags line of a large server is long (AVX-512 and AMX flags). */
    static char line[8192];
    size_t klen = strlen(key);
    int found = 0;
    while (!found && fgets(line, sizeof line, f)) {
        if (strncmp(line, key, klen) != 0 ||
            (line[klen] != ' ' && line[klen] != '\t' && line[klen] != ':'))
            continue;
        char *colon = strchr(line, ':');
        if (!colon) continue;
        colon++;
        while (*colon == ' ')
            colon++;
        colon[strcspn(colon, "\n")] = '\0';
        snprintf(out, size, "%s", colon);
        found = 1;
    }
    fclose(f);
    return found;
}

void ck_sys_cpu_flags(char *buf, size_t size) {
    if (!cpuinfo_field("flags", buf, size)) buf[0] = '\0';
}

void ck_sys_cpu_model(char *buf, size_t size) {
    if (!cpuinfo_field("model name", buf, size)) snprintf(buf, size, "unknown CPU");
}

int ck_sys_online_cpus(void) {
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n > 0 ? (int)n : 1;
}

double ck_sys_loadavg(void) {
    double l = -1;
    FILE *f = fopen("/proc/loadavg", "r");
    if (!f) return -1;
    if (fscanf(f, "%lf", &l) != 1) l = -1;
    fclose(f);
    return l;
}

int ck_sys_host_busy(void) {
    double l = ck_sys_loadavg();
    return l >= 0.75 * ck_sys_online_cpus();
}

int ck_dmi_parse_memory(const uint8_t *t, size_t n, int *modules, int *mts) {
    *modules = 0;
    *mts = 0;
    int min_speed = 0;
    for (size_t p = 0; p + 4 <= n;) {
        uint8_t type = t[p], len = t[p + 1];
        if (len < 4 || p + len > n) break;
        if (type == 17 && len >= 0x17) {
            unsigned sz = t[p + 0x0C] | (unsigned)t[p + 0x0D] << 8;
            unsigned speed = t[p + 0x15] | (unsigned)t[p + 0x16] << 8;
            if (len >= 0x22) { /* configured speed (SMBIOS 2.7+) is what the module runs at */
                unsigned conf = t[p + 0x20] | (unsigned)t[p + 0x21] << 8;
                if (conf && conf != 0xFFFF) speed = conf;
            }
            if (sz != 0 && sz != 0xFFFF && speed != 0 && speed != 0xFFFF) {
                (*modules)++;
                if (!min_speed || (int)speed < min_speed) min_speed = (int)speed;
            }
        }
        if (type == 127) break;
        /* skip the formatted area, then the string set (ends with two NULs) */
        size_t q = p + len;
        while (q + 1 < n && !(t[q] == 0 && t[q + 1] == 0))
            q++;
        p = q + 2;
    }
    *mts = min_speed;
    return *modules;
}

double ck_sys_dram_peak_gbps(char *reason, size_t size, int *modules, int *mts) {
    const char *path = "/sys/firmware/dmi/tables/DMI";
    *modules = 0;
    *mts = 0;
    FILE *f = fopen(path, "rb");
    if (!f) {
        snprintf(reason, size, "%s: %s%s", path, strerror(errno),
                 errno == EACCES ? " (root only: run as root or set cpu_mem_peak_gbps in "
                                   "--target-file)"
                                 : " (set cpu_mem_peak_gbps in --target-file)");
        return 0;
    }
    static uint8_t t[1 << 16];
    size_t n = fread(t, 1, sizeof t, f);
    fclose(f);
    if (!ck_dmi_parse_memory(t, n, modules, mts)) {
        snprintf(reason, size, "%s lists no populated memory module with a speed", path);
        return 0;
    }
    reason[0] = '\0';
    return ck_dmi_peak_gbps(*modules, *mts);
}

double ck_dmi_peak_gbps(int modules, int mts) {
    return modules * (double)mts * 1e6 * 8 / 1e9; /* 64-bit channel: 8 bytes per transfer */
}

void ck_sys_node_facts(const char *path, ck_node_facts *f, char *group_buf, size_t group_size) {
    memset(f, 0, sizeof *f);
    f->path = path;
    struct stat st;
    if (stat(path, &st) != 0) return;
    f->exists = 1;
    f->accessible = access(path, R_OK | W_OK) == 0;
    struct group *g = getgrgid(st.st_gid);
    if (g) {
        snprintf(group_buf, group_size, "%s", g->gr_name);
        f->group = group_buf;
    }
    gid_t groups[256];
    int ng = getgroups(256, groups);
    for (int i = 0; i < ng; i++)
        if (groups[i] == st.st_gid) f->in_group = 1;
    if (getegid() == st.st_gid) f->in_group = 1;
}

char **ck_sys_glob(const char *pattern) {
    glob_t g;
    if (glob(pattern, 0, NULL, &g) != 0) return NULL;
    char **out = calloc(g.gl_pathc + 1, sizeof *out);
    for (size_t i = 0; out && i < g.gl_pathc; i++)
        out[i] = strdup(g.gl_pathv[i]);
    globfree(&g);
    return out;
}

void ck_sys_free_paths(char **paths) {
    for (size_t i = 0; paths && paths[i]; i++)
        free(paths[i]);
    free(paths);
}

static int read_line(const char *path, char *buf, size_t size) {
    FILE *f = fopen(path, "r");
    if (!f) return 0;
    int ok = fgets(buf, (int)size, f) != NULL;
    fclose(f);
    if (ok) buf[strcspn(buf, "\n")] = '\0';
    return ok;
}

int ck_sys_pci_link(const char *bus_id, int *gen, int *width, int *max_gen, int *max_width) {
    *gen = *width = *max_gen = *max_width = 0;
    if (!bus_id || !*bus_id) return -1;
    /* sysfs spells the domain with 4 hex digits in lower case */
    char id[64], path[256], v[64];
    size_t i = 0;
    for (; bus_id[i] && i + 1 < sizeof id; i++)
        id[i] = (char)(bus_id[i] >= 'A' && bus_id[i] <= 'F' ? bus_id[i] - 'A' + 'a' : bus_id[i]);
    id[i] = '\0';
    const char *names[4] = {"current_link_speed", "current_link_width", "max_link_speed",
                            "max_link_width"};
    int *out[4] = {gen, width, max_gen, max_width};
    int found = 0;
    for (int k = 0; k < 4; k++) {
        snprintf(path, sizeof path, "/sys/bus/pci/devices/%s/%s", id, names[k]);
        if (!read_line(path, v, sizeof v)) continue;
        found = 1;
        *out[k] = k % 2 == 0 ? ck_pcie_gen_from_speed(v) : atoi(v);
    }
    return found ? 0 : -1;
}
