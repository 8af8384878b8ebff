/*
 * cpu_features.c - run-time CPU feature detection for the vectorised kernels.
 *
 * __builtin_cpu_supports reads the CPUID results that libgcc caches once per process (and checks
 * that the OS saves the AVX/AVX-512 register state), so each query is a load and a test: no
 * cache of our own is needed. On other architectures every query answers 0 and the portable C
 * paths run.
 */
#include "kmux_cpu_kernels.h"

#if defined(__x86_64__) || defined(__i386__)
#define KMUX_X86 1
#if defined(__clang__) && __clang_major__ < 16
#include <cpuid.h> /* clang < 16: __builtin_cpu_supports knows no "f16c" (scripts/fuzz.sh) */
#define KMUX_F16C_BY_CPUID 1
#endif
#endif

int kmux_cpu_has_avx2_fma(void) {
#ifdef KMUX_X86
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
#else
    return 0;
#endif
}

int kmux_cpu_has_f16c(void) {
#ifdef KMUX_X86
    __builtin_cpu_init();
    /* F16C is only usable with AVX (VEX encoding, OS-saved YMM state). */
#ifdef KMUX_F16C_BY_CPUID
    unsigned a, b, c, d;
    return __builtin_cpu_supports("avx") && __get_cpuid(1, &a, &b, &c, &d) && (c & bit_F16C);
#else
    return __builtin_cpu_supports("avx") && __builtin_cpu_supports("f16c");
#endif
#else
    return 0;
#endif
}

int kmux_cpu_has_avx512_bf16(void) {
#ifdef KMUX_X86
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bf16");
#else
    return 0;
#endif
}

int kmux_cpu_has_avx512_fp16(void) {
#if defined(KMUX_X86) && defined(__GNUC__) && !defined(__clang__) && __GNUC__ >= 12
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512fp16");
#elif defined(KMUX_X86) && defined(__clang__) && __clang_major__ >= 15
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512fp16");
#else
    return 0;
#endif
}
