/*
 * cpu_model.c - per-microarchitecture peak table, usable cores, the shared measured clock.
 *
 * Sources of the table (FMA width and pipes per core, dot-product instructions):
 *   [AMD17]  AMD Software Optimization Guide for AMD Family 17h Processors (pub. 55723) and for
 *            Family 17h Models 30h and Greater (pub. 56305): Zen/Zen+ have four 128-bit FP pipes,
 *            two of them FMA (256-bit AVX ops split in two); Zen 2 widens them to 256 bits.
 *   [AMD19]  Software Optimization Guide for AMD Family 19h Processors (pub. 56665, Zen 3) and
 *            for Family 19h Models 10h+ (pub. 57647, Zen 4): two 256-bit FMA pipes; Zen 4 runs
 *            AVX-512 (incl. AVX512_BF16 VDPBF16PS and AVX512_VNNI VPDPBUSD) on them in two
 *            halves, so 512-bit ops have half the 256-bit op throughput.
 *   [AMD1A]  Software Optimization Guide for AMD Family 1Ah Processors (pub. 58455, Zen 5): a
 *            full 512-bit datapath with two FMA pipes on desktop/server parts; the mobile parts
 *            (Strix/Krackan) keep 256-bit pipes.
 *   [INTORM] Intel 64 and IA-32 Architectures Optimization Reference Manual (248966): Haswell to
 *            Alder Lake P-cores: two 256-bit FMA ports (0 and 1); Skylake-SP, Cascade Lake,
 *            Ice Lake-SP, Sapphire/Emerald Rapids: two 512-bit FMA units (ports 0+1 fused, and
 *            port 5 on Xeon Gold 6xxx/Platinum; Xeon Bronze/Silver and some Gold 5xxx have only
 *            one - not visible in CPUID, the table assumes two); Ice Lake/Tiger Lake client:
 *            one 512-bit FMA unit. AMX (Sapphire Rapids+): 1024 BF16 FLOP and 2048 INT8 OP per
 *            cycle per core (TMUL); Granite Rapids adds AMX-FP16 at the BF16 rate.
 * Dot-product rates follow from the width: a 32-bit lane does one f32 FMA (2 FLOP), one bf16
 * pair dot (VDPBF16PS: 4 FLOP), two f16 FMAs (AVX512_FP16: 4 FLOP) or four int8 products with
 * accumulation (VPDPBUSD: 8 OP).
 */
#define _GNU_SOURCE
#include "cpu_model.h"
#include "kmux_sys_alloc.h"

#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* ---- ISA flags ------------------------------------------------------------------------------ */

static const char *const isa_names[KMUX_ISA_COUNT_] = {
    "sse4_2",      "avx",         "avx2",     "fma",      "f16c",     "avx512f",  "avx512_bf16",
    "avx512_fp16", "avx512_vnni", "avx_vnni", "amx_bf16", "amx_int8", "amx_fp16",
};

const char *kmux_cpu_isa_name(int i) {
    return i >= 0 && i < KMUX_ISA_COUNT_ ? isa_names[i] : "?";
}

/* Value after "key\t*: " on a line of the first processor block, or NULL. */
static const char *field(const char *text, const char *key, char *out, size_t cap) {
    size_t klen = strlen(key);
    for (const char *l = text; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL) {
        if (*l == '\n') return NULL; /* end of the first block */
        if (strncmp(l, key, klen) != 0 || (l[klen] != ' ' && l[klen] != '\t' && l[klen] != ':'))
            continue;
        const char *c = strchr(l, ':'), *e = strchr(l, '\n');
        if (!c || (e && c > e)) continue;
        ++c;
        while (*c == ' ' || *c == '\t')
            ++c;
        size_t n = e ? (size_t)(e - c) : strlen(c);
        if (n >= cap) n = cap - 1;
        memcpy(out, c, n);
        out[n] = '\0';
        return out;
    }
    return NULL;
}

static unsigned parse_flags(const char *flags) {
    unsigned isa = 0;
    const char *p = flags;
    while (*p) {
        while (*p == ' ')
            ++p;
        size_t n = strcspn(p, " ");
        for (int i = 0; i < KMUX_ISA_COUNT_; ++i)
            if (strlen(isa_names[i]) == n && !strncmp(p, isa_names[i], n)) isa |= 1u << i;
        p += n;
    }
    return isa;
}

void kmux_cpu_id_parse(const char *text, kmux_cpu_id *id) {
    memset(id, 0, sizeof *id);
    char buf[4096];
    snprintf(id->vendor, sizeof id->vendor, "generic");
    snprintf(id->model_name, sizeof id->model_name, "unknown CPU");
    if (!text) return;
    if (field(text, "vendor_id", buf, sizeof buf))
        snprintf(id->vendor, sizeof id->vendor, "%s",
                 !strcmp(buf, "AuthenticAMD")   ? "AMD"
                 : !strcmp(buf, "GenuineIntel") ? "Intel"
                                                : buf);
    if (field(text, "model name", buf, sizeof buf) || field(text, "Model", buf, sizeof buf))
        snprintf(id->model_name, sizeof id->model_name, "%s", buf);
    if (field(text, "cpu family", buf, sizeof buf)) id->family = atoi(buf);
    if (field(text, "model", buf, sizeof buf)) id->model = atoi(buf);
    if (field(text, "stepping", buf, sizeof buf)) id->stepping = atoi(buf);
    if (field(text, "flags", buf, sizeof buf)) id->isa = parse_flags(buf);
}

static char *read_text(const char *path, size_t cap) {
    FILE *f = fopen(path, "r");
    if (!f) return NULL;
    char *s = kmux_sys_malloc(cap);
    size_t n = s ? fread(s, 1, cap - 1, f) : 0;
    fclose(f);
    if (s) s[n] = '\0';
    return s;
}

static long read_long(const char *path, long fallback) {
    char *s = read_text(path, 64);
    long v = s && *s ? strtol(s, NULL, 10) : fallback;
    free(s);
    return v;
}

static void read_caches(kmux_cpu_id *id) {
    for (int i = 0; i < 8 && id->ncaches < 8; ++i) {
        char path[128], *s;
        snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu0/cache/index%d/level", i);
        long level = read_long(path, -1);
        if (level < 0) break;
        kmux_cpu_cache *c = &id->caches[id->ncaches++];
        c->level = (int)level;
        snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu0/cache/index%d/type", i);
        if ((s = read_text(path, 64))) {
            s[strcspn(s, "\n")] = '\0';
            snprintf(c->type, sizeof c->type, "%s", s);
            free(s);
        }
        snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu0/cache/index%d/size", i);
        c->kib = read_long(path, 0); /* "32K": strtol stops at the K */
        snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu0/cache/index%d/shared_cpu_list",
                 i);
        if ((s = read_text(path, 4096))) { /* "0-1,4" */
            int n = 0;
            for (char *p = s; *p && *p != '\n';) {
                long a = strtol(p, &p, 10), b = a;
                if (*p == '-') b = strtol(p + 1, &p, 10);
                n += (int)(b - a + 1);
                if (*p == ',')
                    ++p;
                else if (*p && *p != '\n')
                    break;
            }
            c->shared_by = n;
            free(s);
        }
    }
}

static kmux_cpu_id host_id;
static pthread_once_t host_id_once = PTHREAD_ONCE_INIT;

static void host_id_init(void) {
    char *t = read_text("/proc/cpuinfo", 1 << 16);
    kmux_cpu_id_parse(t, &host_id);
    free(t);
    read_caches(&host_id);
}

const kmux_cpu_id *kmux_cpu_id_host(void) {
    pthread_once(&host_id_once, host_id_init);
    return &host_id;
}

/* ---- the table ------------------------------------------------------------------------------ */

typedef struct uarch_row {
    const char *vendor, *name, *source;
    int family, model_lo, model_hi, step_lo, step_hi;
    int fma_bits, fma_pipes;
    double amx_bf16, amx_i8, amx_f16; /* per cycle per core, 0 = no AMX */
} uarch_row;

static const uarch_row rows[] = {
    {"AMD", "Zen/Zen+", "[AMD17]", 0x17, 0x00, 0x2f, 0, 255, 128, 2, 0, 0, 0},
    {"AMD", "Zen 2", "[AMD17]", 0x17, 0x30, 0xff, 0, 255, 256, 2, 0, 0, 0},
    {"AMD", "Zen 3", "[AMD19]", 0x19, 0x00, 0x0f, 0, 255, 256, 2, 0, 0, 0},
    {"AMD", "Zen 4", "[AMD19]", 0x19, 0x10, 0x1f, 0, 255, 256, 2, 0, 0, 0},
    {"AMD", "Zen 3", "[AMD19]", 0x19, 0x20, 0x5f, 0, 255, 256, 2, 0, 0, 0},
    {"AMD", "Zen 4", "[AMD19]", 0x19, 0x60, 0xaf, 0, 255, 256, 2, 0, 0, 0},
    {"AMD", "Zen 5", "[AMD1A]", 0x1a, 0x00, 0x1f, 0, 255, 512, 2, 0, 0, 0},
    {"AMD", "Zen 5 (mobile)", "[AMD1A]", 0x1a, 0x20, 0x3f, 0, 255, 256, 2, 0, 0, 0},
    {"AMD", "Zen 5", "[AMD1A]", 0x1a, 0x40, 0x4f, 0, 255, 512, 2, 0, 0, 0},
    {"AMD", "Zen 5 (mobile)", "[AMD1A]", 0x1a, 0x60, 0x7f, 0, 255, 256, 2, 0, 0, 0},
    {"Intel", "Haswell", "[INTORM]", 6, 0x3c, 0x3c, 0, 255, 256, 2, 0, 0, 0},
    {"Intel", "Haswell", "[INTORM]", 6, 0x3f, 0x3f, 0, 255, 256, 2, 0, 0, 0},
    {"Intel", "Haswell", "[INTORM]", 6, 0x45, 0x46, 0, 255, 256, 2, 0, 0, 0},
    {"Intel", "Broadwell", "[INTORM]", 6, 0x3d, 0x3d, 0, 255, 256, 2, 0, 0, 0},
    {"Intel", "Broadwell", "[INTORM]", 6, 0x47, 0x47, 0, 255, 256, 2, 0, 0, 0},
    {"Intel", "Broadwell", "[INTORM]", 6, 0x4f, 0x4f, 0, 255, 256, 2, 0, 0, 0},
    {"Intel", "Broadwell", "[INTORM]", 6, 0x56, 0x56, 0, 255, 256, 2, 0, 0, 0},
    {"Intel", "Skylake", "[INTORM]", 6, 0x4e, 0x4e, 0, 255, 256, 2, 0, 0, 0},
    {"Intel", "Skylake", "[INTORM]", 6, 0x5e, 0x5e, 0, 255, 256, 2, 0, 0, 0},
    {"Intel", "Kaby/Coffee Lake", "[INTORM]", 6, 0x8e, 0x8e, 0, 255, 256, 2, 0, 0, 0},
    {"Intel", "Kaby/Coffee Lake", "[INTORM]", 6, 0x9e, 0x9e, 0, 255, 256, 2, 0, 0, 0},
    {"Intel", "Comet Lake", "[INTORM]", 6, 0xa5, 0xa6, 0, 255, 256, 2, 0, 0, 0},
    {"Intel", "Skylake-SP", "[INTORM]", 6, 0x55, 0x55, 0, 4, 512, 2, 0, 0, 0},
    {"Intel", "Cascade Lake", "[INTORM]", 6, 0x55, 0x55, 5, 7, 512, 2, 0, 0, 0},
    {"Intel", "Cooper Lake", "[INTORM]", 6, 0x55, 0x55, 10, 11, 512, 2, 0, 0, 0},
    {"Intel", "Ice Lake-SP", "[INTORM]", 6, 0x6a, 0x6a, 0, 255, 512, 2, 0, 0, 0},
    {"Intel", "Ice Lake-SP", "[INTORM]", 6, 0x6c, 0x6c, 0, 255, 512, 2, 0, 0, 0},
    {"Intel", "Ice Lake", "[INTORM]", 6, 0x7d, 0x7e, 0, 255, 512, 1, 0, 0, 0},
    {"Intel", "Tiger Lake", "[INTORM]", 6, 0x8c, 0x8d, 0, 255, 512, 1, 0, 0, 0},
    {"Intel", "Rocket Lake", "[INTORM]", 6, 0xa7, 0xa7, 0, 255, 512, 1, 0, 0, 0},
    {"Intel", "Alder Lake (P-core)", "[INTORM]", 6, 0x97, 0x97, 0, 255, 256, 2, 0, 0, 0},
    {"Intel", "Alder Lake (P-core)", "[INTORM]", 6, 0x9a, 0x9a, 0, 255, 256, 2, 0, 0, 0},
    {"Intel", "Raptor Lake (P-core)", "[INTORM]", 6, 0xb7, 0xb7, 0, 255, 256, 2, 0, 0, 0},
    {"Intel", "Raptor Lake (P-core)", "[INTORM]", 6, 0xba, 0xba, 0, 255, 256, 2, 0, 0, 0},
    {"Intel", "Raptor Lake (P-core)", "[INTORM]", 6, 0xbf, 0xbf, 0, 255, 256, 2, 0, 0, 0},
    {"Intel", "Sapphire Rapids", "[INTORM]", 6, 0x8f, 0x8f, 0, 255, 512, 2, 1024, 2048, 0},
    {"Intel", "Emerald Rapids", "[INTORM]", 6, 0xcf, 0xcf, 0, 255, 512, 2, 1024, 2048, 0},
    {"Intel", "Granite Rapids", "[INTORM]", 6, 0xad, 0xae, 0, 255, 512, 2, 1024, 2048, 1024},
};

void kmux_cpu_rates_for(const char *vendor, int family, int model, int stepping, unsigned isa,
                        kmux_cpu_rates *r) {
    memset(r, 0, sizeof *r);
    const uarch_row *row = NULL;
    for (size_t i = 0; i < sizeof rows / sizeof rows[0] && !row; ++i)
        if (vendor && !strcmp(vendor, rows[i].vendor) && family == rows[i].family &&
            model >= rows[i].model_lo && model <= rows[i].model_hi && stepping >= rows[i].step_lo &&
            stepping <= rows[i].step_hi)
            row = &rows[i];
    /* the widest vectors the ISA flags allow (a hypervisor may hide AVX-512) */
    int isa_bits = (isa & KMUX_ISA_AVX512F)                        ? 512
                   : (isa & KMUX_ISA_AVX2) && (isa & KMUX_ISA_FMA) ? 256
                                                                   : 128;
    if (row) {
        r->uarch = row->name, r->source = row->source;
        r->fma_bits = row->fma_bits < isa_bits ? row->fma_bits : isa_bits;
        r->fma_pipes = row->fma_pipes;
    } else {
        r->uarch = "unknown (from ISA flags)";
        r->source = "ISA flags, 2 FMA pipes assumed";
        r->fma_bits = isa_bits, r->fma_pipes = 2;
    }
    int has_fma = (isa & KMUX_ISA_FMA) != 0 || (isa & KMUX_ISA_AVX512F) != 0;
    if (!has_fma && r->fma_bits > 128) r->fma_bits = 128;
    /* without FMA (SSE-only kernels) a multiply and an add per pipe still make 2 FLOP per lane */
    double lanes32 = r->fma_bits / 32.0;
    r->f32 = lanes32 * r->fma_pipes * 2;
    r->f64 = r->f32 / 2;
    if (!has_fma) r->fma_bits = 0;
    int wide = r->fma_bits == 512 || (row && row->fma_bits == 256 && isa_bits == 512);
    if ((isa & KMUX_ISA_AVX512_BF16) && wide) r->bf16 = 2 * r->f32;
    if ((isa & KMUX_ISA_AVX512_FP16) && wide) r->f16 = 2 * r->f32;
    if (((isa & KMUX_ISA_AVX512_VNNI) && wide) || (isa & KMUX_ISA_AVX_VNNI)) r->i8 = 4 * r->f32;
    if (row && (isa & KMUX_ISA_AMX_BF16) && row->amx_bf16 > r->bf16) r->bf16 = row->amx_bf16;
    if (row && (isa & KMUX_ISA_AMX_INT8) && row->amx_i8 > r->i8) r->i8 = row->amx_i8;
    if (row && (isa & KMUX_ISA_AMX_FP16) && row->amx_f16 > r->f16) r->f16 = row->amx_f16;
}

/* ---- usable cores --------------------------------------------------------------------------- */

/* ceil(quota / period) of a cgroup v2 "cpu.max" text ("max 100000" or "150000 100000"); 0 = no
 * limit or unreadable. */
static int quota_cores(const char *text) {
    if (!text || !strncmp(text, "max", 3)) return 0;
    char *end;
    double q = strtod(text, &end), p = strtod(end, NULL);
    return q > 0 && p > 0 ? (int)ceil(q / p) : 0;
}

static int cgroup_quota_cores(void) {
    int best = 0;
    char *cg = read_text("/proc/self/cgroup", 4096), path[4400];
    /* v2: "0::/path"; the quota of every ancestor applies, the root's file does not exist */
    char *v2 = cg ? strstr(cg, "0::") : NULL;
    if (v2) {
        v2 += 3;
        v2[strcspn(v2, "\n")] = '\0';
        for (;;) {
            snprintf(path, sizeof path, "/sys/fs/cgroup%s/cpu.max", strcmp(v2, "/") ? v2 : "");
            char *t = read_text(path, 128);
            int n = quota_cores(t);
            free(t);
            if (n > 0 && (best == 0 || n < best)) best = n;
            char *slash = strrchr(v2, '/');
            if (!slash || slash == v2) {
                if (strcmp(v2, "/") == 0) break;
                strcpy(v2, "/");
                continue;
            }
            *slash = '\0';
        }
    }
    free(cg);
    long q = read_long("/sys/fs/cgroup/cpu/cpu.cfs_quota_us", -1); /* v1 */
    long p = read_long("/sys/fs/cgroup/cpu/cpu.cfs_period_us", -1);
    if (q > 0 && p > 0) {
        int n = (int)((q + p - 1) / p);
        if (best == 0 || n < best) best = n;
    }
    return best;
}

int kmux_cpu_usable_cores(void) {
    cpu_set_t set;
    int n = 0;
    if (sched_getaffinity(0, sizeof set, &set) == 0) {
        /* distinct (package, core) pairs: SMT siblings share one core's FMA units */
        long seen[CPU_SETSIZE];
        for (int c = 0; c < CPU_SETSIZE; ++c) {
            if (!CPU_ISSET(c, &set)) continue;
            char path[128];
            snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu%d/topology/core_id", c);
            long core = read_long(path, c);
            snprintf(path, sizeof path,
                     "/sys/devices/system/cpu/cpu%d/topology/physical_package_id", c);
            long key = read_long(path, 0) * 1000000L + core;
            int dup = 0;
            for (int i = 0; i < n && !dup; ++i)
                dup = seen[i] == key;
            if (!dup) seen[n++] = key;
        }
    }
    if (n <= 0) {
        long c = sysconf(_SC_NPROCESSORS_ONLN);
        n = c > 0 ? (int)c : 1;
    }
    int q = cgroup_quota_cores();
    if (q > 0 && q < n) n = q;
    return n;
}

/* ---- clock ---------------------------------------------------------------------------------- */

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* Cycles of `iters` x 8 steps of x = (x + y) ^ z: an add and a xor that depend on each other, one
 * cycle of latency each on every current core, and no closed form for the compiler to find. */
static volatile uint64_t clock_seed = 3;
static volatile uint64_t clock_sink;

static double clock_pass(uint64_t iters) {
    uint64_t x = clock_seed, y = clock_seed * 7 + 1, z = clock_seed * 13 + 5;
    double t0 = now_s();
    for (uint64_t i = 0; i < iters; ++i) {
        x = (x + y) ^ z;
        x = (x + y) ^ z;
        x = (x + y) ^ z;
        x = (x + y) ^ z;
        x = (x + y) ^ z;
        x = (x + y) ^ z;
        x = (x + y) ^ z;
        x = (x + y) ^ z;
    }
    double t = now_s() - t0;
    clock_sink = x;
    return t;
}

double kmux_cpu_measure_clock_mhz(void) {
    /* many short passes (2^20 steps = 2^21 cycles, under a millisecond at 3 GHz): the best one
     * ran without being preempted even on a busy machine */
    const uint64_t iters = (uint64_t)1 << 17;
    double best = 1e30;
    clock_pass(iters * 8); /* wake the core up */
    for (int r = 0; r < 40; ++r) {
        double t = clock_pass(iters);
        if (t < best) best = t;
    }
    return best > 0 ? (double)iters * 16.0 / best / 1e6 : 0.0;
}

static void clock_cache_path(char *buf, size_t cap) {
    const char *xdg = getenv("XDG_CACHE_HOME"), *home = getenv("HOME");
    if (xdg && *xdg)
        snprintf(buf, cap, "%s/kmux/cpu-clock.txt", xdg);
    else if (home && *home)
        snprintf(buf, cap, "%s/.cache/kmux/cpu-clock.txt", home);
    else
        buf[0] = '\0';
}

/* The cache holds one line "<boot id> <pid or 0> <MHz> <model name>". pid 0: two measurements
 * agreed (good for every process of this boot); else only for that process (a busy machine, but
 * both plugins of one process must still agree). */
static int clock_cache_read(const char *path, const char *boot, const char *model, double *mhz) {
    char *t = read_text(path, 1024);
    if (!t) return 0;
    char b[64];
    long pid = -1;
    double v = 0;
    int n = 0, ok = 0;
    if (sscanf(t, "%63s %ld %lf %n", b, &pid, &v, &n) == 3 && !strcmp(b, boot) && v > 0 &&
        (pid == 0 || pid == (long)getpid())) {
        char *m = t + n;
        m[strcspn(m, "\n")] = '\0';
        ok = !strcmp(m, model);
    }
    free(t);
    if (ok) *mhz = v;
    return ok;
}

static void clock_cache_write(const char *path, const char *boot, const char *model, long pid,
                              double mhz) {
    char dir[512];
    snprintf(dir, sizeof dir, "%s", path);
    for (char *p = dir + 1; *p; ++p) {
        if (*p != '/') continue;
        *p = '\0';
        if (mkdir(dir, 0755) != 0 && errno != EEXIST) return;
        *p = '/';
    }
    char tmp[560];
    snprintf(tmp, sizeof tmp, "%s.%ld", path, (long)getpid());
    FILE *f = fopen(tmp, "w");
    if (!f) return;
    int ok = fprintf(f, "%s %ld %.1f %s\n", boot, pid, mhz, model) > 0;
    ok = fclose(f) == 0 && ok;
    if (!ok || rename(tmp, path) != 0) remove(tmp); /* rename: readers never see half a line */
}

static double clock_value;
static const char *clock_source = "measured";
static pthread_once_t clock_once = PTHREAD_ONCE_INIT;

static void clock_init(void) {
    const char *env = getenv("KMUX_CPU_CLOCK_MHZ");
    if (env && atof(env) > 0) {
        clock_value = atof(env), clock_source = "KMUX_CPU_CLOCK_MHZ";
        return;
    }
    char path[512], boot[64] = "unknown";
    clock_cache_path(path, sizeof path);
    char *b = read_text("/proc/sys/kernel/random/boot_id", 64);
    if (b) {
        sscanf(b, "%63s", boot);
        free(b);
    }
    const char *model = kmux_cpu_id_host()->model_name;
    const char *again = getenv("KMUX_CPU_CLOCK_REMEASURE");
    if (path[0] && !(again && *again && strcmp(again, "0")) &&
        clock_cache_read(path, boot, model, &clock_value)) {
        clock_source = "cached";
        return;
    }
    double c1 = kmux_cpu_measure_clock_mhz(), c2 = kmux_cpu_measure_clock_mhz();
    clock_value = c1 > c2 ? c1 : c2;
    int stable = c1 > 0 && c2 > 0 && fabs(c1 - c2) <= 0.03 * clock_value;
    if (path[0] && clock_value > 0)
        clock_cache_write(path, boot, model, stable ? 0 : (long)getpid(), clock_value);
}

double kmux_cpu_clock_mhz(const char **source) {
    pthread_once(&clock_once, clock_init);
    if (source) *source = clock_source;
    return clock_value;
}

/* ---- device properties ---------------------------------------------------------------------- */

static int has_ci(const char *hay, const char *needle) {
    size_t n = strlen(needle);
    for (; *hay; ++hay) {
        size_t i = 0;
        while (i < n && hay[i] &&
               (hay[i] >= 'A' && hay[i] <= 'Z' ? hay[i] + ('a' - 'A') : hay[i]) == needle[i])
            ++i;
        if (i == n) return 1;
    }
    return 0;
}

void kmux_cpu_kernel_use_of(const char *name, kmux_cpu_kernel_use *use) {
    memset(use, 0, sizeof *use);
    use->simd_bits = 128;
    if (!name) return;
    static const char *const w512[] = {"avx512", "skylakex", "cooperlake", "sapphirerapids"};
    static const char *const w256[] = {"avx2", "haswell", "zen"};
    for (size_t i = 0; i < sizeof w256 / sizeof w256[0]; ++i)
        if (has_ci(name, w256[i])) use->simd_bits = 256;
    for (size_t i = 0; i < sizeof w512 / sizeof w512[0]; ++i)
        if (has_ci(name, w512[i])) use->simd_bits = 512;
    use->amx = has_ci(name, "amx");
    use->native_bf16 = use->amx || has_ci(name, "_bf16");
}

void kmux_cpu_model_peaks(kmux_device_props *p, int num_threads, const char *kernel_isa,
                          unsigned kernels, void (*trace)(int level, const char *fmt, ...)) {
    const kmux_cpu_id *id = kmux_cpu_id_host();
    kmux_cpu_kernel_use use;
    kmux_cpu_kernel_use_of(kernel_isa, &use);
    snprintf(p->vendor, sizeof p->vendor, "%s", id->vendor);
    snprintf(p->name, sizeof p->name, "%s", id->model_name);
    unsigned isa = id->isa;
    if (use.simd_bits < 512)
        isa &= ~(unsigned)(KMUX_ISA_AVX512F | KMUX_ISA_AVX512_BF16 | KMUX_ISA_AVX512_FP16 |
                           KMUX_ISA_AVX512_VNNI);
    if (use.simd_bits < 256) isa &= ~(unsigned)(KMUX_ISA_AVX2 | KMUX_ISA_AVX_VNNI);
    if (!use.amx) isa &= ~(unsigned)(KMUX_ISA_AMX_BF16 | KMUX_ISA_AMX_INT8 | KMUX_ISA_AMX_FP16);
    kmux_cpu_rates r;
    kmux_cpu_rates_for(id->vendor, id->family, id->model, id->stepping, isa, &r);
    int cores = kmux_cpu_usable_cores();
    if (num_threads < 1) num_threads = 1;
    if (num_threads > cores && trace)
        trace(1,
              "warning,cpu,threads,\"%d threads requested (KMUX_NUM_THREADS or num_threads) "
              "but only %d cores can run: peaks count %d\"",
              num_threads, cores, cores);
    int n = num_threads < cores ? num_threads : cores;
    p->compute_units = n;
    p->clock_mhz = kmux_cpu_clock_mhz(NULL);
    double hz = p->clock_mhz * 1e6 * n, f32 = r.f32 * hz;
    for (int t = 0; t < KMUX_DTYPE_COUNT; ++t)
        p->peak_flops[t] = 0.0;
    p->peak_flops[KMUX_F32] = f32;
    if (kernels & KMUX_CPU_KERNELS_F64) p->peak_flops[KMUX_F64] = r.f64 * hz;
    p->peak_flops[KMUX_BF16] = use.native_bf16 && r.bf16 > 0 ? r.bf16 * hz : f32;
    p->peak_flops[KMUX_F16] = f32; /* no native f16 GEMM kernels in the CPU plugins */
    static const kmux_dtype fp8[] = {KMUX_F8_E4M3, KMUX_F8_E5M2, KMUX_F8_E4M3_FNUZ,
                                     KMUX_F8_E5M2_FNUZ};
    for (size_t i = 0; i < sizeof fp8 / sizeof fp8[0]; ++i)
        p->peak_flops[fp8[i]] = f32; /* converted, then the f32 kernels */
    if (kernels & KMUX_CPU_KERNELS_INT8) p->peak_flops[KMUX_I8] = r.i8 * hz;
}

size_t kmux_cpu_available_bytes(void) {
    FILE *f = fopen("/proc/meminfo", "r");
    unsigned long long kib = 0;
    char line[256];
    int found = 0;
    while (f && !found && fgets(line, sizeof line, f))
        found = sscanf(line, "MemAvailable: %llu kB", &kib) == 1;
    if (f) fclose(f);
    if (found) return kib > SIZE_MAX / 1024 ? SIZE_MAX : (size_t)kib * 1024;
    long pages = sysconf(_SC_AVPHYS_PAGES), page = sysconf(_SC_PAGESIZE);
    return pages > 0 && page > 0 ? (size_t)pages * (size_t)page : 0;
}
