/* kb_machine.c - machine fingerprint. */
#define _POSIX_C_SOURCE 200809L
#include "kb_machine.h"

#include <ctype.h>
#include <stdio.h>
#include <string.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include "kb_util.h"

void kb_version_commit(const char *version, char *commit, size_t cap) {
    kb_strlcpy(commit, "unknown", cap);
    const char *p = strpbrk(version, "+(- ");
    while (p && (*p == '+' || *p == '(' || *p == '-' || *p == ' '))
        ++p;
    if (!p || !*p) return;
    if (!strncmp(p, "commit", 6)) p += 6;
    while (*p == ' ' || *p == ':' || *p == '=')
        ++p;
    size_t n = 0;
    while (isxdigit((unsigned char)p[n]))
        ++n;
    if (n >= 7 && n < cap) {
        memcpy(commit, p, n);
        commit[n] = '\0';
    } else if (!strncmp(p, "unknown", 7)) {
        kb_strlcpy(commit, "unknown", cap);
    }
}

void kb_machine_collect(kmux_context *ctx, const char *label, kb_machine *m) {
    memset(m, 0, sizeof *m);
    if (gethostname(m->hostname, sizeof m->hostname - 1) != 0)
        kb_strlcpy(m->hostname, "unknown-host", sizeof m->hostname);
    kb_strlcpy(m->label, label && *label ? label : m->hostname, sizeof m->label);
    struct utsname u;
    if (uname(&u) == 0) snprintf(m->os, sizeof m->os, "%s %s %s", u.sysname, u.release, u.machine);
    kb_cpu_model(m->cpu_model, sizeof m->cpu_model);
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    m->cores = n > 0 ? (int)n : 1;
    time_t now = time(NULL);
    struct tm tmv;
    gmtime_r(&now, &tmv);
    strftime(m->date, sizeof m->date, "%Y-%m-%dT%H:%M:%SZ", &tmv);
    kb_strlcpy(m->kmux_version, kmux_version(), sizeof m->kmux_version);
    kb_version_commit(m->kmux_version, m->kmux_commit, sizeof m->kmux_commit);

    int nb = 0;
    if (kmux_backend_count(ctx, &nb) == KMUX_OK) {
        for (int i = 0; i < nb && m->nbackends < KB_MAX_BACKENDS; ++i) {
            kmux_backend_info bi;
            if (kmux_backend_info_get(ctx, i, &bi) != KMUX_OK) continue;
            int k = m->nbackends++;
            kb_strlcpy(m->backends[k].name, bi.name ? bi.name : "?", sizeof m->backends[k].name);
            kb_strlcpy(m->backends[k].version, bi.version ? bi.version : "",
                       sizeof m->backends[k].version);
            kb_strlcpy(m->backends[k].reason, bi.reason ? bi.reason : "",
                       sizeof m->backends[k].reason);
            m->backends[k].available = bi.available;
            m->backends[k].devices = bi.device_count;
        }
    }
    int nd = 0;
    if (kmux_device_count(ctx, &nd) == KMUX_OK) {
        for (int i = 0; i < nd && m->ngpus < KB_MAX_GPUS; ++i) {
            kmux_device *dev = NULL;
            kmux_device_props pr;
            if (kmux_device_get(ctx, i, &dev) != KMUX_OK ||
                kmux_device_props_get(dev, &pr) != KMUX_OK || pr.is_host)
                continue;
            int k = m->ngpus++;
            kb_strlcpy(m->gpus[k].id, pr.id, sizeof m->gpus[k].id);
            kb_strlcpy(m->gpus[k].name, pr.name, sizeof m->gpus[k].name);
            kb_strlcpy(m->gpus[k].arch, pr.arch, sizeof m->gpus[k].arch);
            kb_strlcpy(m->gpus[k].driver, pr.driver_version, sizeof m->gpus[k].driver);
            kb_strlcpy(m->gpus[k].library, pr.library_version, sizeof m->gpus[k].library);
            m->gpus[k].memory_gb = (double)pr.memory_bytes / 1e9;
        }
    }
}
