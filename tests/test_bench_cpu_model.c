/* The CPU peak model (backends/cpu_common/cpu_model.c): the microarchitecture table by vendor,
 * family, model and stepping, ISA masking, kernel names, usable cores, and that the CPU plugins'
 * device properties use it (peak = cores x FMA width x pipes x measured clock). */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backends/cpu_common/cpu_model.h"
#include "kmux.h"

#define AVX2 (KMUX_ISA_SSE42 | KMUX_ISA_AVX | KMUX_ISA_AVX2 | KMUX_ISA_FMA | KMUX_ISA_F16C)
#define AVX512 (AVX2 | KMUX_ISA_AVX512F)
#define VNNI KMUX_ISA_AVX512_VNNI
#define BF16 KMUX_ISA_AVX512_BF16
#define AMX (KMUX_ISA_AMX_BF16 | KMUX_ISA_AMX_INT8)

typedef struct row {
    const char *what, *vendor;
    int family, model, stepping;
    unsigned isa;
    const char *uarch;
    double f32, f64, bf16, f16, i8; /* per cycle per core */
} row;

/* Expected figures from the vendors' optimization manuals (sources in cpu_model.c). */
static const row table[] = {
    {"Zen 1 (EPYC 7001)", "AMD", 23, 0x01, 2, AVX2, "Zen/Zen+", 16, 8, 0, 0, 0},
    {"Zen 2 (EPYC 7002)", "AMD", 23, 0x31, 0, AVX2, "Zen 2", 32, 16, 0, 0, 0},
    {"Zen 2 (Ryzen 3000)", "AMD", 23, 0x71, 0, AVX2, "Zen 2", 32, 16, 0, 0, 0},
    {"Zen 3 (EPYC 7003)", "AMD", 25, 0x01, 1, AVX2, "Zen 3", 32, 16, 0, 0, 0},
    {"Zen 3 (Ryzen 5000)", "AMD", 25, 0x21, 0, AVX2, "Zen 3", 32, 16, 0, 0, 0},
    {"Zen 4 (EPYC 9004)", "AMD", 25, 0x11, 1, AVX512 | VNNI | BF16, "Zen 4", 32, 16, 64, 0, 128},
    {"Zen 4 (Ryzen 7000)", "AMD", 25, 0x61, 2, AVX512 | VNNI | BF16, "Zen 4", 32, 16, 64, 0, 128},
    {"Zen 4 (Bergamo)", "AMD", 25, 0xa0, 0, AVX512 | VNNI | BF16, "Zen 4", 32, 16, 64, 0, 128},
    {"Zen 5 (EPYC 9005)", "AMD", 26, 0x02, 0, AVX512 | VNNI | BF16, "Zen 5", 64, 32, 128, 0, 256},
    {"Zen 5 (Strix)", "AMD", 26, 0x24, 0, AVX512 | VNNI | BF16, "Zen 5 (mobile)", 32, 16, 64, 0,
     128},
    {"Haswell-EP", "Intel", 6, 0x3f, 2, AVX2, "Haswell", 32, 16, 0, 0, 0},
    {"Skylake-SP", "Intel", 6, 0x55, 4, AVX512, "Skylake-SP", 64, 32, 0, 0, 0},
    {"Cascade Lake", "Intel", 6, 0x55, 7, AVX512 | VNNI, "Cascade Lake", 64, 32, 0, 0, 256},
    {"Cooper Lake", "Intel", 6, 0x55, 11, AVX512 | VNNI | BF16, "Cooper Lake", 64, 32, 128, 0, 256},
    {"Ice Lake-SP", "Intel", 6, 0x6a, 6, AVX512 | VNNI, "Ice Lake-SP", 64, 32, 0, 0, 256},
    {"Ice Lake client", "Intel", 6, 0x7e, 5, AVX512 | VNNI, "Ice Lake", 32, 16, 0, 0, 128},
    {"Alder Lake P", "Intel", 6, 0x97, 2, AVX2 | KMUX_ISA_AVX_VNNI, "Alder Lake (P-core)", 32, 16,
     0, 0, 128},
    {"Sapphire Rapids", "Intel", 6, 0x8f, 8, AVX512 | VNNI | BF16 | KMUX_ISA_AVX512_FP16 | AMX,
     "Sapphire Rapids", 64, 32, 1024, 128, 2048},
    {"Sapphire Rapids, no AMX", "Intel", 6, 0x8f, 8, AVX512 | VNNI | BF16, "Sapphire Rapids", 64,
     32, 128, 0, 256},
    /* a hypervisor that hides AVX-512: the AVX2 rates, whatever the silicon */
    {"Skylake-SP without AVX-512", "Intel", 6, 0x55, 4, AVX2, "Skylake-SP", 32, 16, 0, 0, 0},
    {"Zen 4 without AVX-512", "AMD", 25, 0x11, 1, AVX2, "Zen 4", 32, 16, 0, 0, 0},
    {"unknown AVX2 CPU", "Hygon", 24, 0x00, 0, AVX2, "unknown (from ISA flags)", 32, 16, 0, 0, 0},
    {"unknown AVX-512 CPU", "Intel", 6, 0x01, 0, AVX512, "unknown (from ISA flags)", 64, 32, 0, 0,
     0},
};

Test(cpu_model, table_by_family_model) {
    for (size_t i = 0; i < sizeof table / sizeof table[0]; ++i) {
        const row *t = &table[i];
        kmux_cpu_rates r;
        kmux_cpu_rates_for(t->vendor, t->family, t->model, t->stepping, t->isa, &r);
        cr_expect_str_eq(r.uarch, t->uarch, "%s", t->what);
        cr_expect_eq(r.f32, t->f32, "%s: f32 %g per cycle, want %g", t->what, r.f32, t->f32);
        cr_expect_eq(r.f64, t->f64, "%s: f64 %g, want %g", t->what, r.f64, t->f64);
        cr_expect_eq(r.bf16, t->bf16, "%s: bf16 %g, want %g", t->what, r.bf16, t->bf16);
        cr_expect_eq(r.f16, t->f16, "%s: f16 %g, want %g", t->what, r.f16, t->f16);
        cr_expect_eq(r.i8, t->i8, "%s: i8 %g, want %g", t->what, r.i8, t->i8);
        cr_expect(r.source && *r.source, "%s: no source", t->what);
        /* the FMA description agrees with the f32 figure */
        cr_expect_eq(r.f32, r.fma_bits / 32.0 * r.fma_pipes * 2, "%s", t->what);
    }
}

Test(cpu_model, parses_cpuinfo) {
    const char *text = "processor\t: 0\nvendor_id\t: AuthenticAMD\ncpu family\t: 25\n"
                       "model\t\t: 17\nmodel name\t: AMD EPYC 9454P 48-Core Processor\n"
                       "stepping\t: 1\nflags\t\t: fpu sse4_2 avx avx2 fma f16c avx512f "
                       "avx512_bf16 avx512_vnni avx512vl\n\nprocessor\t: 1\nmodel\t\t: 99\n";
    kmux_cpu_id id;
    kmux_cpu_id_parse(text, &id);
    cr_expect_str_eq(id.vendor, "AMD");
    cr_expect_str_eq(id.model_name, "AMD EPYC 9454P 48-Core Processor");
    cr_expect_eq(id.family, 25);
    cr_expect_eq(id.model, 17, "the first processor block only, and not 'model name'");
    cr_expect_eq(id.stepping, 1);
    cr_expect_eq(id.isa, AVX512 | BF16 | VNNI, "isa %#x", id.isa);
    kmux_cpu_id_parse(NULL, &id);
    cr_expect_str_eq(id.vendor, "generic");
}

Test(cpu_model, kernel_names) {
    static const struct {
        const char *name;
        int bits, bf16, amx;
    } k[] = {{"avx2", 256, 0, 0},
             {"avx512_core", 512, 0, 0},
             {"avx512_core_bf16", 512, 1, 0},
             {"avx512_core_amx", 512, 1, 1},
             {"Haswell", 256, 0, 0},
             {"Zen", 256, 0, 0},
             {"SkylakeX", 512, 0, 0},
             {"Prescott", 128, 0, 0},
             {NULL, 128, 0, 0}};
    for (size_t i = 0; i < sizeof k / sizeof k[0]; ++i) {
        kmux_cpu_kernel_use u;
        kmux_cpu_kernel_use_of(k[i].name, &u);
        cr_expect_eq(u.simd_bits, k[i].bits, "%s", k[i].name ? k[i].name : "NULL");
        cr_expect_eq(u.native_bf16, k[i].bf16, "%s", k[i].name ? k[i].name : "NULL");
        cr_expect_eq(u.amx, k[i].amx, "%s", k[i].name ? k[i].name : "NULL");
    }
}

Test(cpu_model, usable_cores_within_online_cpus) {
    int n = kmux_cpu_usable_cores();
    cr_expect(n >= 1 && n <= 4096, "usable cores %d", n);
}

/* Every CPU plugin's f32 peak is usable cores x per-core rate x the one shared clock, and a
 * thread count above the cores does not inflate it. */
Test(cpu_model, plugin_peaks_use_the_model) {
    setenv("KMUX_CPU_CLOCK_MHZ", "2000", 1); /* deterministic: the model, not the clock */
    const kmux_cpu_id *id = kmux_cpu_id_host();
    int cores = kmux_cpu_usable_cores();
    for (int threads = 1; threads <= 64; threads *= 64) {
        kmux_context_options o;
        memset(&o, 0, sizeof o);
        o.struct_size = sizeof o;
        o.num_threads = threads;
        kmux_context *ctx = NULL;
        cr_assert_eq(kmux_context_create(&o, &ctx), KMUX_OK, "%s", kmux_last_error());
        static const char *const devs[] = {"cpu:openblas", "cpu:onednn"};
        for (size_t d = 0; d < 2; ++d) {
            kmux_device *dev = NULL;
            if (kmux_device_find(ctx, devs[d], &dev) != KMUX_OK) continue;
            kmux_device_props p;
            cr_assert_eq(kmux_device_props_get(dev, &p), KMUX_OK);
            int n = threads < cores ? threads : cores;
            cr_expect_eq(p.compute_units, n, "%s: %d threads, %d cores", devs[d], threads, cores);
            cr_expect_eq(p.clock_mhz, 2000.0, "%s", devs[d]);
            kmux_cpu_rates r;
            kmux_cpu_rates_for(id->vendor, id->family, id->model, id->stepping, id->isa, &r);
            /* the kernels may use narrower vectors than the CPU has, never wider */
            cr_expect(p.peak_flops[KMUX_F32] <= r.f32 * 2000e6 * n + 1, "%s: %g", devs[d],
                      p.peak_flops[KMUX_F32]);
            cr_expect(p.peak_flops[KMUX_F32] >= 16 * 2000e6 * n * 0.5, "%s: %g", devs[d],
                      p.peak_flops[KMUX_F32]);
        }
        kmux_context_destroy(ctx);
    }
}
