/*
 * ck_verdict.c - the readiness rules of kmux-check (see ck_verdict.h). Pure: no I/O, no globals.
 */
#include "ck_verdict.h"

#include <ctype.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *ck_status_name(ck_status s) {
    switch (s) {
    case CK_PASS:
        return "PASS";
    case CK_WARN:
        return "WARN";
    case CK_FAIL:
        return "FAIL";
    default:
        return "SKIP";
    }
}

static ck_verdict verdict(ck_status s, const char *hint, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

static ck_verdict verdict(ck_status s, const char *hint, const char *fmt, ...) {
    ck_verdict v;
    memset(&v, 0, sizeof v);
    v.status = s;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(v.detail, sizeof v.detail, fmt, ap);
    va_end(ap);
    snprintf(v.hint, sizeof v.hint, "%s", s == CK_PASS || !hint ? "" : hint);
    return v;
}

ck_verdict ck_verdict_of(ck_status s, const char *detail, const char *hint) {
    return verdict(s, hint, "%s", detail);
}

/* ---- speed ---------------------------------------------------------------------------------- */

ck_verdict ck_judge_rate(double measured, double reference, ck_rate_rule rule, int busy,
                         const char *unit, const char *what_unknown, const char *fix) {
    if (!(reference > 0))
        return verdict(CK_SKIP, "", "measured %.3g %s; no target: %s", measured, unit,
                       what_unknown ? what_unknown : "reference rate unknown");
    double frac = measured / reference;
    ck_status s = frac >= rule.pass_frac ? CK_PASS : frac >= rule.fail_frac ? CK_WARN : CK_FAIL;
    if (s == CK_FAIL && busy) s = CK_WARN;
    ck_verdict v = verdict(s, fix, "%.0f%% of %.4g %s (pass >= %.0f%%%s)", frac * 100.0, reference,
                           unit, rule.pass_frac * 100.0, rule.fail_frac > 0 ? "" : ", never FAIL");
    if (rule.fail_frac > 0) {
        size_t len = strlen(v.detail) - 1; /* before the closing parenthesis */
        snprintf(v.detail + len, sizeof v.detail - len, ", FAIL < %.0f%%)", rule.fail_frac * 100.0);
    }
    if (busy && s != CK_PASS) {
        size_t len = strlen(v.detail);
        snprintf(v.detail + len, sizeof v.detail - len,
                 "; the host was busy with other work while measuring");
        snprintf(v.hint, sizeof v.hint, "rerun on an idle machine; if it stays low: %s",
                 fix ? fix : "");
    }
    return v;
}

double ck_pcie_rate_gbps(int gen, int width) {
    /* GT/s per lane and encoding efficiency of each generation (PCI-SIG base specifications). */
    static const double gts[] = {0, 2.5, 5.0, 8.0, 16.0, 32.0, 64.0};
    static const double eff[] = {0, 0.8, 0.8, 128.0 / 130, 128.0 / 130, 128.0 / 130, 242.0 / 256};
    if (gen < 1 || gen > 6 || width < 1 || width > 32) return 0.0;
    /* Gen6 PAM4: 64 GT/s per lane carries 64 Gb/s; 8 bits per byte. */
    return gts[gen] * eff[gen] * width / 8.0;
}

int ck_pcie_gen_from_speed(const char *speed) {
    double gts = speed ? atof(speed) : 0.0;
    static const double rates[] = {2.5, 5.0, 8.0, 16.0, 32.0, 64.0};
    for (int i = 0; i < 6; i++)
        if (gts > rates[i] * 0.9 && gts < rates[i] * 1.1) return i + 1;
    return 0;
}

ck_verdict ck_judge_pcie_link(int gen, int width, int max_gen, int max_width) {
    if (gen <= 0 || width <= 0 || max_gen <= 0 || max_width <= 0)
        return verdict(CK_SKIP, "", "PCIe link state unknown");
    if (width < max_width)
        return verdict(CK_WARN,
                       "reseat the card, check the riser and that the slot is wired x16 (lspci "
                       "-vv: LnkSta against LnkCap)",
                       "link trained at x%d of x%d (Gen%d now, Gen%d max): %.0f%% of the "
                       "bandwidth",
                       width, max_width, gen, max_gen, 100.0 * width / max_width);
    return verdict(CK_PASS, "", "Gen%d x%d now, Gen%d x%d max%s", gen, width, max_gen, max_width,
                   gen < max_gen ? " (GPUs lower the link speed while idle)" : "");
}

/* ---- code objects --------------------------------------------------------------------------- */

/* Next comma-separated item of *s (spaces trimmed) into buf; 0 at the end. */
static int next_item(const char **s, char *buf, size_t size) {
    while (**s == ',' || isspace((unsigned char)**s))
        (*s)++;
    if (!**s) return 0;
    size_t n = 0;
    while (**s && **s != ',') {
        if (n + 1 < size) buf[n++] = **s;
        (*s)++;
    }
    while (n > 0 && isspace((unsigned char)buf[n - 1]))
        n--;
    buf[n] = '\0';
    return 1;
}

/* Setting of feature ("sramecc", "xnack") in a target id: '+', '-', or 0 when not named. */
static char amd_feature(const char *id, const char *feature) {
    size_t fl = strlen(feature);
    for (const char *p = strchr(id, ':'); p; p = strchr(p + 1, ':'))
        if (strncmp(p + 1, feature, fl) == 0 && (p[1 + fl] == '+' || p[1 + fl] == '-'))
            return p[1 + fl];
    return 0;
}

/* A bundle id ("hipv4-amdgcn-amd-amdhsa--gfx942:xnack-") reduced to its target id. */
static const char *amd_strip_bundle(const char *id) {
    const char *p = strstr(id, "--");
    return p ? p + 2 : id;
}

static int amd_compatible(const char *target, const char *entry) {
    entry = amd_strip_bundle(entry);
    size_t tl = strcspn(target, ":"), el = strcspn(entry, ":");
    if (tl != el || strncmp(target, entry, tl) != 0) return 0;
    static const char *features[] = {"sramecc", "xnack"};
    for (size_t i = 0; i < 2; i++) {
        char want = amd_feature(entry, features[i]), have = amd_feature(target, features[i]);
        if (want && have && want != have) return 0;
    }
    return 1;
}

/* "sm_90a" -> 90 and suffix 'a'; "compute_80" -> 80. 0 when not of that form. */
static int nv_number(const char *s, const char *prefix, char *suffix) {
    size_t pl = strlen(prefix);
    if (strncmp(s, prefix, pl) != 0 || !isdigit((unsigned char)s[pl])) return 0;
    char *end = NULL;
    long v = strtol(s + pl, &end, 10);
    *suffix = end && *end ? *end : 0;
    return v > 0 && v < 1000 ? (int)v : 0;
}

static ck_verdict judge_nvidia(const char *target, const char *carried) {
    char tsuf = 0, suf = 0, item[64];
    int dev = nv_number(target, "sm_", &tsuf);
    if (!dev) return verdict(CK_SKIP, "", "device architecture \"%s\" not understood", target);
    int ptx_ok = 0;
    const char *s = carried;
    while (next_item(&s, item, sizeof item)) {
        int v = nv_number(item, "sm_", &suf);
        /* SASS runs on the same major with an equal or higher minor; "a" variants only on their
         * exact architecture (CUDA C Programming Guide, "Binary Compatibility"). */
        if (v && v / 10 == dev / 10 && v % 10 <= dev % 10 && (suf != 'a' || v == dev))
            return verdict(CK_PASS, "", "device %s; plugin carries %s (matches %s)", target,
                           carried, item);
        v = nv_number(item, "compute_", &suf);
        if (v && v <= dev && suf != 'a') ptx_ok = 1;
    }
    char fix[192];
    snprintf(fix, sizeof fix,
             "rebuild the CUDA plugin with CMAKE_CUDA_ARCHITECTURES including %d (-gencode "
             "arch=compute_%d,code=sm_%d)",
             dev, dev, dev);
    if (ptx_ok)
        return verdict(CK_WARN, fix,
                       "device %s; plugin carries %s: only PTX fits, JIT-compiled at first "
                       "launch (slow start, cached in ~/.nv/ComputeCache)",
                       target, carried);
    return verdict(CK_FAIL, fix,
                   "device %s; plugin carries %s: no binary for this GPU "
                   "(cudaErrorNoKernelImageForDevice at launch)",
                   target, carried);
}

ck_verdict ck_judge_code_objects(const char *target, const char *carried) {
    if (!target || !*target) return verdict(CK_SKIP, "", "device target id unknown");
    if (!carried || !*carried)
        return verdict(CK_SKIP, "", "the plugin does not say which code objects it carries");
    if (strncmp(target, "sm_", 3) == 0) return judge_nvidia(target, carried);
    if (strncmp(target, "gfx", 3) != 0)
        return verdict(CK_SKIP, "", "no code objects to check for architecture \"%s\"", target);
    char item[96];
    const char *s = carried;
    while (next_item(&s, item, sizeof item))
        if (amd_compatible(target, item))
            return verdict(CK_PASS, "", "device %s; plugin carries %s (matches %s)", target,
                           carried, item);
    size_t pl = strcspn(target, ":");
    char fix[192];
    snprintf(fix, sizeof fix,
             "rebuild the HIP plugin's code objects with --offload-arch=%s (a code object for "
             "another gfx target never loads)",
             target);
    return verdict(CK_FAIL, fix,
                   "device %s; plugin carries %s: no code object for %.*s "
                   "(\"no binary for GPU\", hipErrorNoBinaryForGpu at load)",
                   target, carried, (int)pl, target);
}

/* ---- environment ---------------------------------------------------------------------------- */

ck_verdict ck_judge_env_override(const char *name, const char *value, int online_cpus) {
    if (!value) return verdict(CK_PASS, "", "%s not set", name);
    if (strcmp(name, "HSA_OVERRIDE_GFX_VERSION") == 0)
        return verdict(CK_WARN, "unset HSA_OVERRIDE_GFX_VERSION unless this GPU truly needs it",
                       "%s=%s: the ROCm runtime reports a spoofed gfx target, so code objects "
                       "and results belong to another architecture",
                       name, value);
    if (strcmp(name, "ONEDNN_MAX_CPU_ISA") == 0 || strcmp(name, "DNNL_MAX_CPU_ISA") == 0 ||
        strcmp(name, "OPENBLAS_CORETYPE") == 0)
        return verdict(CK_WARN, "unset it to let the library use the CPU's best kernels",
                       "%s=%s: the library's kernel set is forced, not chosen for this CPU", name,
                       value);
    if (strstr(name, "VISIBLE_DEVICES")) {
        if (!*value || strcmp(value, "-1") == 0)
            return verdict(CK_WARN, "unset it or list the devices to use",
                           "%s=\"%s\" hides every device", name, value);
        return verdict(CK_PASS, "", "%s=%s (only these devices are visible)", name, value);
    }
    if (strcmp(name, "OMP_NUM_THREADS") == 0) {
        char *end = NULL;
        long n = strtol(value, &end, 10);
        if (!*value || (end && *end) || n < 1)
            return verdict(CK_WARN, "set a positive thread count or unset it",
                           "%s=\"%s\" is not a positive integer", name, value);
        if (online_cpus > 0 && n > online_cpus)
            return verdict(CK_WARN, "set it to the core count or below",
                           "%s=%ld oversubscribes %d online CPUs", name, n, online_cpus);
        return verdict(CK_PASS, "", "%s=%ld", name, n);
    }
    return verdict(CK_PASS, "", "%s=%s", name, value);
}

ck_verdict ck_judge_device_node(const ck_node_facts *f, const char *driver) {
    if (!f->exists)
        return verdict(CK_SKIP, "", "%s does not exist (the %s driver is not loaded)", f->path,
                       driver ? driver : "device");
    if (f->accessible) return verdict(CK_PASS, "", "%s readable and writable", f->path);
    char hint[200];
    if (f->group && !f->in_group)
        snprintf(hint, sizeof hint, "join group %s: sudo usermod -aG %s $USER, then log in again",
                 f->group, f->group);
    else if (f->group)
        snprintf(hint, sizeof hint,
                 "you are in group %s but the node is not group-writable: check the udev rules",
                 f->group);
    else
        snprintf(hint, sizeof hint, "ask the administrator for access to %s", f->path);
    return verdict(CK_FAIL, hint, "%s denied (group %s)", f->path, f->group ? f->group : "?");
}

/* ---- CPU kernels ---------------------------------------------------------------------------- */

const char *ck_isa_name(ck_isa isa) {
    static const char *names[] = {"unknown", "sse", "avx", "avx2", "avx512", "amx"};
    return isa >= CK_ISA_UNKNOWN && isa <= CK_ISA_AMX ? names[isa] : "unknown";
}

/* 1 when flags (space-separated) contains the word w. */
static int has_word(const char *flags, const char *w) {
    size_t wl = strlen(w);
    for (const char *p = flags; (p = strstr(p, w)) != NULL; p += wl)
        if ((p == flags || p[-1] == ' ' || p[-1] == '\t') &&
            (p[wl] == '\0' || p[wl] == ' ' || p[wl] == '\n' || p[wl] == '\t'))
            return 1;
    return 0;
}

ck_isa ck_isa_from_cpu_flags(const char *flags) {
    if (!flags || !*flags) return CK_ISA_UNKNOWN;
    if (has_word(flags, "amx_tile") && has_word(flags, "avx512f")) return CK_ISA_AMX;
    if (has_word(flags, "avx512f")) return CK_ISA_AVX512;
    if (has_word(flags, "avx2") && has_word(flags, "fma")) return CK_ISA_AVX2;
    if (has_word(flags, "avx")) return CK_ISA_AVX;
    return CK_ISA_SSE;
}

static void lower_copy(const char *s, char *out, size_t size) {
    size_t i = 0;
    for (; s && s[i] && i + 1 < size; i++)
        out[i] = (char)tolower((unsigned char)s[i]);
    out[i] = '\0';
}

ck_isa ck_isa_from_openblas_core(const char *core) {
    /* OpenBLAS's DYNAMIC_ARCH core names (driver/others/dynamic.c) by the kernels they use. */
    static const char *const avx512[] = {"skylakex", "cooperlake", "sapphirerapids"};
    static const char *const avx2[] = {"haswell", "zen", "excavator"};
    static const char *const avx[] = {"sandybridge", "bulldozer", "piledriver", "steamroller"};
    static const char *const sse[] = {"prescott",   "core2",     "penryn", "dunnington", "nehalem",
                                      "barcelona",  "opteron",   "atom",   "nano",       "katmai",
                                      "coppermine", "northwood", "banias"};
    char l[64];
    lower_copy(core, l, sizeof l);
    if (!l[0]) return CK_ISA_UNKNOWN;
    for (size_t i = 0; i < sizeof avx512 / sizeof *avx512; i++)
        if (strstr(l, avx512[i])) return CK_ISA_AVX512;
    for (size_t i = 0; i < sizeof avx2 / sizeof *avx2; i++)
        if (strstr(l, avx2[i])) return CK_ISA_AVX2;
    for (size_t i = 0; i < sizeof avx / sizeof *avx; i++)
        if (strstr(l, avx[i])) return CK_ISA_AVX;
    for (size_t i = 0; i < sizeof sse / sizeof *sse; i++)
        if (strstr(l, sse[i])) return CK_ISA_SSE;
    return CK_ISA_UNKNOWN;
}

ck_isa ck_isa_from_onednn(const char *isa) {
    char l[64];
    lower_copy(isa, l, sizeof l);
    if (!l[0] || strcmp(l, "generic") == 0) return CK_ISA_UNKNOWN;
    if (strstr(l, "amx")) return CK_ISA_AMX;
    if (strstr(l, "avx512")) return CK_ISA_AVX512;
    if (strstr(l, "avx2")) return CK_ISA_AVX2;
    if (strstr(l, "avx")) return CK_ISA_AVX;
    if (strstr(l, "sse")) return CK_ISA_SSE;
    return CK_ISA_UNKNOWN;
}

ck_verdict ck_judge_cpu_kernels(const char *library, ck_isa cpu, ck_isa chosen, ck_isa lib_max,
                                const char *fix) {
    if (cpu == CK_ISA_UNKNOWN || chosen == CK_ISA_UNKNOWN)
        return verdict(CK_SKIP, "", "%s: CPU ISA %s, kernel set %s: cannot compare", library,
                       ck_isa_name(cpu), ck_isa_name(chosen));
    ck_isa best = lib_max != CK_ISA_UNKNOWN && lib_max < cpu ? lib_max : cpu;
    if (chosen >= best)
        return verdict(CK_PASS, "", "%s uses %s kernels; the CPU has %s%s", library,
                       ck_isa_name(chosen), ck_isa_name(cpu),
                       best < cpu ? " (beyond what this library version uses)" : "");
    return verdict(CK_WARN, fix,
                   "%s fell back to %s kernels on a CPU with %s: GEMM runs at a fraction of the "
                   "CPU's rate",
                   library, ck_isa_name(chosen), ck_isa_name(cpu));
}

/* ---- function ------------------------------------------------------------------------------- */

ck_compare ck_compare_exact(const double *got, const double *want, size_t n) {
    ck_compare c = {(long long)n, 0, 0.0, 0.0, 0.0};
    long long nonzero = 0;
    for (size_t i = 0; i < n; i++) {
        double e = fabs(got[i] - want[i]);
        if (!(e <= c.tolerance)) c.mismatches++;
        if (e > c.max_abs_err || e != e) c.max_abs_err = e;
        nonzero += got[i] != 0.0;
    }
    c.nonzero_frac = n ? (double)nonzero / (double)n : 0.0;
    return c;
}

ck_verdict ck_judge_compare(const ck_compare *c) {
    if (c->n <= 0) return verdict(CK_SKIP, "", "nothing compared");
    if (c->mismatches > 0)
        return verdict(CK_FAIL,
                       "report it with KMUX_VERBOSE=1 output (the implementation that ran)",
                       "%lld of %lld elements differ from ref (max |err| %.3g, tolerance %.3g)",
                       c->mismatches, c->n, c->max_abs_err, c->tolerance);
    if (c->nonzero_frac < 0.5)
        return verdict(CK_FAIL, "the output is mostly zeros: the kernel may not have run",
                       "mistrusted: only %.0f%% of %lld outputs are non-zero",
                       c->nonzero_frac * 100.0, c->n);
    return verdict(CK_PASS, "", "%lld elements match ref (max |err| %.3g, tolerance %.3g)", c->n,
                   c->max_abs_err, c->tolerance);
}

/* ---- ECC ------------------------------------------------------------------------------------ */

ck_verdict ck_judge_ecc(int ecc, int supported) {
    if (ecc < 0) return verdict(CK_SKIP, "", "ECC state unknown");
    if (ecc) return verdict(CK_PASS, "", "ECC enabled");
    if (supported)
        return verdict(CK_WARN,
                       "enable it (nvidia-smi -e 1 / rocm-smi) unless you chose speed over "
                       "detection of memory errors",
                       "ECC disabled on a device that has it");
    return verdict(CK_PASS, "", "device has no ECC");
}

/* ---- summary -------------------------------------------------------------------------------- */

void ck_counts_add(ck_counts *c, ck_status s) {
    switch (s) {
    case CK_PASS:
        c->pass++;
        break;
    case CK_WARN:
        c->warn++;
        break;
    case CK_FAIL:
        c->fail++;
        break;
    default:
        c->skip++;
        break;
    }
}

int ck_exit_status(const ck_counts *c) {
    return c->fail > 0 ? 1 : 0;
}
