/*
 * cpu_features.c - run-time CPU feature detection for the vectorised kernels.
 *
 * Read once per process with CPUID and XGETBV (<cpuid.h>, the same with GCC and clang: clang 14's
 * __builtin_cpu_supports knows no "f16c"): a feature counts only when the CPU has it AND the OS
 * saves the register state it needs (YMM for AVX/F16C/FMA, opmask + ZMM for AVX-512). On other
 * architectures every query answers 0 and the portable C paths run.
 */
#define _GNU_SOURCE /* glibc: _SC_LEVEL3_CACHE_SIZE */
#include <pthread.h>
#include <unistd.h>

#include "kmux_cpu_kernels.h"

#if defined(__x86_64__) || defined(__i386__)
#define KMUX_X86 1
#include <cpuid.h>
#include <pthread.h>
#endif

#ifdef KMUX_X86
typedef struct cpu_flags {
    int avx2_fma, f16c, avx512f, avx512_bf16, avx512_fp16;
} cpu_flags;

static cpu_flags g_flags;
static pthread_once_t g_once = PTHREAD_ONCE_INIT;

static unsigned long long xgetbv0(void) {
    unsigned lo, hi;
    __asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
    return ((unsigned long long)hi << 32) | lo;
}

static void detect(void) {
    unsigned a, b, c, d;
    if (!__get_cpuid(1, &a, &b, &c, &d)) return;
    const int osxsave = (c >> 27) & 1, avx = (c >> 28) & 1, fma = (c >> 12) & 1,
              f16c = (c >> 29) & 1;
    if (!osxsave || !avx) return;
    const unsigned long long xcr0 = xgetbv0();
    const int ymm_os = (xcr0 & 0x6) == 0x6;   /* XMM and YMM state */
    const int zmm_os = (xcr0 & 0xe6) == 0xe6; /* + opmask, ZMM_Hi256, Hi16_ZMM */
    if (!ymm_os) return;
    g_flags.f16c = f16c;
    unsigned b7 = 0, d7 = 0, a71 = 0;
    if (__get_cpuid_count(7, 0, &a, &b, &c, &d)) {
        b7 = b;
        d7 = d;
    }
    if (__get_cpuid_count(7, 1, &a, &b, &c, &d)) a71 = a;
    g_flags.avx2_fma = ((b7 >> 5) & 1) && fma;
    const int avx512f = zmm_os && ((b7 >> 16) & 1);
    g_flags.avx512f = avx512f;
    g_flags.avx512_bf16 = avx512f && ((a71 >> 5) & 1);
    g_flags.avx512_fp16 = avx512f && ((d7 >> 23) & 1);
}

static const cpu_flags *flags(void) {
    pthread_once(&g_once, detect);
    return &g_flags;
}
#endif

int kmux_cpu_has_avx2_fma(void) {
#ifdef KMUX_X86
    return flags()->avx2_fma;
#else
    return 0;
#endif
}

int kmux_cpu_has_f16c(void) {
#ifdef KMUX_X86
    return flags()->f16c; /* only with AVX (VEX encoding, OS-saved YMM state) */
#else
    return 0;
#endif
}

int kmux_cpu_has_avx512f(void) {
#ifdef KMUX_X86
    return flags()->avx512f;
#else
    return 0;
#endif
}

int kmux_cpu_has_avx512_bf16(void) {
#ifdef KMUX_X86
    return flags()->avx512_bf16;
#else
    return 0;
#endif
}

int kmux_cpu_has_avx512_fp16(void) {
#ifdef KMUX_X86
    return flags()->avx512_fp16;
#else
    return 0;
#endif
}

static size_t g_stream_min;
static pthread_once_t g_stream_once = PTHREAD_ONCE_INIT;

static void stream_detect(void) {
    long l3 = -1;
#if defined(_SC_LEVEL3_CACHE_SIZE)
    l3 = sysconf(_SC_LEVEL3_CACHE_SIZE);
#endif
    /* 3/4 of it, kept within [4, 32] MiB: the 2-core VM reports the 512 MiB of every CCD of its
     * host, of which its cores use one 32 MiB slice */
    size_t lim = l3 > 0 ? (size_t)l3 / 4 * 3 : (size_t)8 << 20;
    if (lim < ((size_t)4 << 20)) lim = (size_t)4 << 20;
    if (lim > ((size_t)32 << 20)) lim = (size_t)32 << 20;
    g_stream_min = lim;
}

size_t kmux_cpu_stream_min_bytes(void) {
    pthread_once(&g_stream_once, stream_detect);
    return g_stream_min;
}
