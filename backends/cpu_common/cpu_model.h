/*
 * cpu_model.h - the one peak model of the host CPU, used by every CPU plugin's device properties
 * (cpu:openblas, cpu:onednn) and, through those properties, by kmux-info and kmux-bench.
 *
 * Peak = usable cores x (operations per cycle per core of the microarchitecture) x clock, where
 *   - the microarchitecture comes from a table keyed by vendor, family and model (cpu_model.c;
 *     each row names its source): FMA vector width and FMA pipes, and the dot-product rates of
 *     bf16 (AVX512_BF16, AMX-BF16), f16 (AVX512_FP16) and int8 (AVX512_VNNI / AVX_VNNI, AMX-INT8)
 *     where the CPU's ISA flags say the instructions can run;
 *   - usable cores are the physical cores of the CPUs this process may run on
 *     (sched_getaffinity), capped by the cgroup CPU quota (cpu.max), and never more than the
 *     threads the backend uses (SMT siblings share one core's FMA units);
 *   - the clock is measured once per machine and boot (a chain of dependent integer adds: one per
 *     cycle) and cached in $XDG_CACHE_HOME/kmux/cpu-clock.json (else ~/.cache/kmux/...), so that
 *     both plugins and every tool use the same figure. KMUX_CPU_CLOCK_MHZ=<MHz> overrides it.
 */
#ifndef KMUX_CPU_MODEL_H
#define KMUX_CPU_MODEL_H

#include <stddef.h>

#include "kmux.h"

/** ISA flags that change the peak (bits of kmux_cpu_id.isa), as /proc/cpuinfo names them. */
enum {
    KMUX_ISA_SSE42 = 1u << 0,
    KMUX_ISA_AVX = 1u << 1,
    KMUX_ISA_AVX2 = 1u << 2,
    KMUX_ISA_FMA = 1u << 3,
    KMUX_ISA_F16C = 1u << 4,
    KMUX_ISA_AVX512F = 1u << 5,
    KMUX_ISA_AVX512_BF16 = 1u << 6,
    KMUX_ISA_AVX512_FP16 = 1u << 7,
    KMUX_ISA_AVX512_VNNI = 1u << 8,
    KMUX_ISA_AVX_VNNI = 1u << 9,
    KMUX_ISA_AMX_BF16 = 1u << 10,
    KMUX_ISA_AMX_INT8 = 1u << 11,
    KMUX_ISA_AMX_FP16 = 1u << 12,
    KMUX_ISA_COUNT_ = 13
};

/** /proc/cpuinfo name of ISA bit i (0 <= i < KMUX_ISA_COUNT_), e.g. "avx512_bf16". */
const char *kmux_cpu_isa_name(int i);

/** One level of cache as sysfs reports it (cpu0). */
typedef struct kmux_cpu_cache {
    int level;     /**< 1, 2, 3 */
    char type[16]; /**< "Data", "Instruction", "Unified" */
    long kib;      /**< size in KiB */
    int shared_by; /**< logical CPUs sharing it (0 when unknown) */
} kmux_cpu_cache;

/** Identity of the host CPU. */
typedef struct kmux_cpu_id {
    char vendor[16];             /**< "AMD", "Intel" or the raw vendor_id ("generic" when none) */
    char model_name[96];         /**< "AMD EPYC 9454P 48-Core Processor" */
    int family, model, stepping; /**< as /proc/cpuinfo (decimal, extended fields included) */
    unsigned isa;                /**< KMUX_ISA_* bits */
    int ncaches;
    kmux_cpu_cache caches[8];
} kmux_cpu_id;

/** Parses the text of /proc/cpuinfo (its first processor block) into *id (caches not filled). */
void kmux_cpu_id_parse(const char *cpuinfo, kmux_cpu_id *id);

/** The host's identity: /proc/cpuinfo and /sys/devices/system/cpu/cpu0/cache. Read once. */
const kmux_cpu_id *kmux_cpu_id_host(void);

/** One microarchitecture's per-core rates, in operations per cycle (an FMA counts 2). */
typedef struct kmux_cpu_rates {
    const char *uarch;  /**< "Zen 4", "Sapphire Rapids", or "unknown (from ISA flags)" */
    const char *source; /**< where the figures come from */
    int fma_bits;       /**< width of the FMA datapath: 128, 256, 512 (0: no FMA) */
    int fma_pipes;      /**< FMA units of that width per core */
    double f64, f32;    /**< FLOP/cycle/core */
    double bf16;        /**< native bf16 dot products (0: none, runs through f32) */
    double f16;         /**< native f16 arithmetic (0: none, runs through f32) */
    double i8;          /**< int8 dot products, OP/cycle/core (0: none) */
} kmux_cpu_rates;

/** Rates of the CPU with this vendor ("AMD"/"Intel"), family, model, stepping and ISA bits: the
 *  table row for it, with every rate whose instructions the ISA bits lack set to 0, and every
 *  rate capped at what the ISA's widest vectors can do (a VM that hides AVX-512 gets AVX2
 *  rates). An unknown CPU gets rates derived from its ISA bits alone (2 FMA pipes). */
void kmux_cpu_rates_for(const char *vendor, int family, int model, int stepping, unsigned isa,
                        kmux_cpu_rates *r);

/** Physical cores this process can run on: distinct (package, core) pairs of its affinity mask,
 *  capped by the cgroup v2 cpu.max (or v1 cfs) quota rounded up. >= 1. */
int kmux_cpu_usable_cores(void);

/** Host memory available now, in bytes: /proc/meminfo's MemAvailable (free memory plus the
 *  page cache and buffers the kernel can reclaim), else free pages (sysconf _SC_AVPHYS_PAGES);
 *  0 when neither is known. */
size_t kmux_cpu_available_bytes(void);

/** The host's clock in MHz: KMUX_CPU_CLOCK_MHZ, else the cached measurement of this machine and
 *  boot, else measured now (and cached when two measurements agree within 3%). source (may be
 *  NULL) receives "measured", "cached" or "KMUX_CPU_CLOCK_MHZ". Measured once per process. */
double kmux_cpu_clock_mhz(const char **source);

/** Measures the clock now, single thread, best of many short passes (about 30 ms). */
double kmux_cpu_measure_clock_mhz(void);

/** What a backend's kernels can use, for kmux_cpu_model_peaks. */
typedef struct kmux_cpu_kernel_use {
    int simd_bits;   /**< widest vectors of the kernels in use: 128, 256, 512 */
    int native_bf16; /**< bf16 GEMM on bf16 dot products (else: converted, at the f32 rate) */
    int amx;         /**< kernels use AMX where the CPU has it */
} kmux_cpu_kernel_use;

/** What the kernels named `kernel_isa` can use: a oneDNN ISA name ("avx2", "avx512_core",
 *  "avx512_core_bf16", "avx512_core_amx") or an OpenBLAS core name ("Haswell", "Zen",
 *  "SkylakeX", "Prescott"); NULL or unknown names: 128-bit kernels. */
void kmux_cpu_kernel_use_of(const char *kernel_isa, kmux_cpu_kernel_use *use);

/** Flags of kmux_cpu_model_peaks: GEMM types the backend offers besides f32 and the converted
 *  narrow float types. */
enum { KMUX_CPU_KERNELS_F64 = 1u << 0, KMUX_CPU_KERNELS_INT8 = 1u << 1 };

/** Fills the host part of a CPU device's properties from the model: vendor, name, compute_units,
 *  clock_mhz (the shared measured clock) and peak_flops[] (all other entries 0): f32; f64 with
 *  KMUX_CPU_KERNELS_F64; bf16 on bf16 dot products where the kernels of `kernel_isa` and the CPU
 *  have them, else at the f32 rate (converted), as f16 and fp8; i8 with KMUX_CPU_KERNELS_INT8
 *  on VNNI/AMX (0, unknown, without them). Counted on min(num_threads, usable cores), which is
 *  also compute_units. Writes a level-1 trace line through `trace` (the plugin's host->trace;
 *  may be NULL) when num_threads exceeds the usable cores. */
void kmux_cpu_model_peaks(kmux_device_props *props, int num_threads, const char *kernel_isa,
                          unsigned kernels, void (*trace)(int level, const char *fmt, ...));

#endif
