/*
 * ck_verdict.h - kmux-check's readiness logic: PURE functions that turn facts (device
 * properties, environment values, measurements, targets) into a verdict and a fix hint. They read
 * no global state, touch no device and print nothing, so that tests can feed them faked facts.
 */
#ifndef KMUX_CHECK_VERDICT_H
#define KMUX_CHECK_VERDICT_H

#include <stddef.h>

/** Verdict of one check, in increasing severity except SKIP (nothing could be judged). */
typedef enum ck_status { CK_PASS = 0, CK_WARN = 1, CK_FAIL = 2, CK_SKIP = 3 } ck_status;

/** "PASS", "WARN", "FAIL", "SKIP". */
const char *ck_status_name(ck_status s);

/** A verdict and why: detail says what was found, hint what to do (both "" when nothing). */
typedef struct ck_verdict {
    ck_status status;
    char detail[384];
    char hint[256];
} ck_verdict;

/* ---- speed ---------------------------------------------------------------------------------- */

/** Rule for a rate measured against a reference rate (peak or link rate): PASS when
 *  measured >= pass_frac * reference, WARN when >= fail_frac * reference, else FAIL (fail_frac
 *  0: never FAIL). */
typedef struct ck_rate_rule {
    double pass_frac;
    double fail_frac;
} ck_rate_rule;

/** A verdict of status s with `detail`, and `hint` (NULL: none) kept only when s is not PASS. */
ck_verdict ck_verdict_of(ck_status s, const char *detail, const char *hint);

/** Judges `measured` (units as reference, > 0) against reference * rule. reference <= 0 (not
 *  known) gives SKIP with `what_unknown` ("DRAM peak unknown: ..."). busy != 0 (the host was loaded
 * by other work while measuring) turns a FAIL into a WARN that says so. fix: the hint used when not
 * PASS. */
ck_verdict ck_judge_rate(double measured, double reference, ck_rate_rule rule, int busy,
                         const char *unit, const char *what_unknown, const char *fix);

/** Per-direction data rate of a PCIe link in GB/s (1e9 B/s) after line encoding: generation
 *  1..6, width lanes (1..32). Gen1/2 8b/10b, Gen3-5 128b/130b, Gen6 PAM4 with FLIT (242/256).
 *  0 when gen or width is unknown (<= 0) or out of range. Gen4 x16: 31.5; Gen5 x16: 63.0. */
double ck_pcie_rate_gbps(int gen, int width);

/** PCIe generation of a sysfs link speed ("16.0 GT/s PCIe", "2.5 GT/s"): 1..6, 0 unknown. */
int ck_pcie_gen_from_speed(const char *speed);

/** Judges a device's PCIe link: current against maximum generation and width. A width below the
 *  maximum is a WARN (the card trained at fewer lanes: seat, riser, slot); a generation below it
 *  is reported but not judged (GPUs lower the link speed while idle). Unknown (0): SKIP. */
ck_verdict ck_judge_pcie_link(int gen, int width, int max_gen, int max_width);

/* ---- code objects --------------------------------------------------------------------------- */

/** Does a plugin carry code for this device? target: the device's full target id
 *  ("gfx942:sramecc+:xnack-", "sm_90"); carried: comma-separated code-object architectures in
 *  the plugin ("gfx90a,gfx942:xnack-", "sm_80,sm_90,compute_90").
 *  AMD: PASS when one entry has the same processor and each feature it names (sramecc, xnack)
 *  equals the device's setting (a feature the entry does not name matches any setting), else
 *  FAIL ("no binary for GPU"). NVIDIA: PASS for SASS sm_XY of the same major and minor <= the
 *  device's (sm_90a only on sm_90); WARN when only PTX compute_XY with XY <= the device exists
 *  (JIT at first launch); else FAIL. Empty target or carried: SKIP. */
ck_verdict ck_judge_code_objects(const char *target, const char *carried);

/* ---- environment ---------------------------------------------------------------------------- */

/** Judges one override variable by name (HSA_OVERRIDE_GFX_VERSION, ONEDNN_MAX_CPU_ISA,
 *  OPENBLAS_CORETYPE: ISA overrides, WARN when set; *_VISIBLE_DEVICES: WARN when set to a value
 *  that hides every device ("" or "-1"), else PASS; OMP_NUM_THREADS: WARN when above online_cpus
 *  or not a positive integer). value NULL: unset, PASS. */
ck_verdict ck_judge_env_override(const char *name, const char *value, int online_cpus);

/** Facts about a device node, as stat() and access(R_OK|W_OK) saw them. */
typedef struct ck_node_facts {
    const char *path;  /**< "/dev/kfd" */
    int exists;        /**< stat() succeeded */
    int accessible;    /**< access(path, R_OK | W_OK) == 0 */
    const char *group; /**< name of the node's group ("render", "video"), NULL if unknown */
    int in_group;      /**< the user is a member of that group */
} ck_node_facts;

/** PASS when accessible; FAIL when it exists but is denied (hint: join its group); SKIP when it
 *  does not exist (driver: the module that creates it, "amdgpu", "nvidia"). */
ck_verdict ck_judge_device_node(const ck_node_facts *f, const char *driver);

/* ---- CPU kernels ---------------------------------------------------------------------------- */

/** ISA levels of x86 kernel sets, in order. */
typedef enum ck_isa {
    CK_ISA_UNKNOWN = 0,
    CK_ISA_SSE = 1,
    CK_ISA_AVX = 2,
    CK_ISA_AVX2 = 3,
    CK_ISA_AVX512 = 4,
    CK_ISA_AMX = 5
} ck_isa;

/** "sse", "avx", "avx2", "avx512", "amx", "unknown". */
const char *ck_isa_name(ck_isa isa);
/** Level of a /proc/cpuinfo "flags" line (the best of avx, avx2+fma, avx512f, amx_tile). */
ck_isa ck_isa_from_cpu_flags(const char *flags);
/** Level of an OpenBLAS core name ("Haswell", "SkylakeX", "Prescott", "Zen", "SapphireRapids"). */
ck_isa ck_isa_from_openblas_core(const char *core);
/** Level of a oneDNN ISA name ("avx2", "avx512_core_bf16", "avx512_core_amx", "sse41"). */
ck_isa ck_isa_from_onednn(const char *isa);

/** PASS when the library's kernels use the CPU's best level (or the CPU's best level above what
 *  the library knows to use at all, lib_max); WARN when the library chose an older kernel set
 *  than the CPU supports, with fix (for instance "OPENBLAS_CORETYPE=Haswell"). Unknown: SKIP. */
ck_verdict ck_judge_cpu_kernels(const char *library, ck_isa cpu, ck_isa chosen, ck_isa lib_max,
                                const char *fix);

/* ---- function ------------------------------------------------------------------------------- */

/** Result of comparing a backend's output with ref: n elements, mismatches beyond tolerance,
 *  the largest absolute error and its tolerance, and the fraction of non-zero outputs. */
typedef struct ck_compare {
    long long n, mismatches;
    double max_abs_err, tolerance;
    double nonzero_frac;
} ck_compare;

/** got against want element by element, exactly (tolerance 0: the checks' inputs make every
 *  partial sum exact), with the share of non-zero outputs. */
ck_compare ck_compare_exact(const double *got, const double *want, size_t n);

/** PASS when nothing mismatched and at least half the outputs are non-zero; FAIL for a mismatch;
 *  FAIL ("mistrusted") for mostly-zero output (as benchdnn). */
ck_verdict ck_judge_compare(const ck_compare *c);

/* ---- ECC, driver ---------------------------------------------------------------------------- */

/** ecc: 1 on, 0 off, -1 unknown. Off on a device that has it (supported = 1): WARN; unknown: SKIP.
 */
ck_verdict ck_judge_ecc(int ecc, int supported);

/* ---- summary -------------------------------------------------------------------------------- */

/** Count of each status in a run. */
typedef struct ck_counts {
    int pass, warn, fail, skip;
} ck_counts;

void ck_counts_add(ck_counts *c, ck_status s);
/** Process exit status: 0 when nothing FAILed, 1 otherwise. */
int ck_exit_status(const ck_counts *c);

#endif
