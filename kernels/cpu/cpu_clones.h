/* KMUX_CPU_CLONES: a hot loop compiled for AVX-512, AVX2 and the baseline, the variant chosen
 * once at load time by an ifunc resolver (GCC's target_clones), so one binary runs at full
 * width on every x86-64 CPU without -march.
 *
 * The AVX-512 clone is x86-64-v4 (F, BW, DQ, VL, CD: every AVX-512 CPU since Skylake-SP and Zen 4),
 * not AVX-512F alone: without BW a loop over 16-bit elements (bf16, f16 bits) stays 256 bits wide
 * and packs words through extra shuffles; bench_eltwise's bf16 ReLU ran at 0.42 of the memcpy
 * bound as avx512f on the Zen 5 VM.
 *
 * Left out where it cannot work: compilers other than GCC on x86-64 glibc, and ThreadSanitizer
 * builds, whose instrumented resolver runs during relocation, before TSan has set up its
 * thread state, and crashes the program before main (GCC 12, libtsan.so.2). */
#ifndef KMUX_CPU_CLONES_H
#define KMUX_CPU_CLONES_H

#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && defined(__GLIBC__) &&       \
    !defined(__SANITIZE_THREAD__)
#define KMUX_CPU_CLONES __attribute__((target_clones("arch=x86-64-v4", "avx2", "default")))
#else
#define KMUX_CPU_CLONES
#endif

#endif
