/*
 * kmux_openblas_spin.h - THE period OpenBLAS's pthreads workers keep spinning after each call
 * before they sleep, for the OpenBLAS plugin (its devices' settle_ms, which the tuner waits out
 * before it times another device's implementations, dispatch/tune.c) and bench_cpu_direct (which
 * waits it out before it times oneDNN): README "Performance note".
 *
 * OpenBLAS's blas_server spins until 2^OPENBLAS_THREAD_TIMEOUT ticks of its cycle counter have
 * passed (the variable is clamped to 4..30 and defaults to 28, as OpenBLAS reads it); on x86 the
 * counter is the time-stamp counter, whose rate is measured here against CLOCK_MONOTONIC over
 * sleep_ms (1 GHz is assumed elsewhere). Measured on a 2-core EPYC VM: the TSC ran at 2.0 GHz
 * and a worker's CPU use dropped from 100% to 0 between 133 and 143 ms after the last call.
 * Needs _POSIX_C_SOURCE >= 199309L (nanosleep, clock_gettime) in the including file.
 */
#ifndef KMUX_OPENBLAS_SPIN_H
#define KMUX_OPENBLAS_SPIN_H

#include <math.h>
#include <stdlib.h>
#include <time.h>
#if defined(__x86_64__) || defined(__i386__)
#include <x86intrin.h>
#endif

/** The spin period in ms, the counter rate measured over sleep_ms (> 0). */
static inline double kmux_openblas_spin_ms(double sleep_ms) {
    int e = 28;
    const char *env = getenv("OPENBLAS_THREAD_TIMEOUT");
    if (env && atoi(env) > 0) e = atoi(env) < 4 ? 4 : atoi(env) > 30 ? 30 : atoi(env);
    double hz = 1e9;
#if defined(__x86_64__) || defined(__i386__)
    struct timespec a, b, pause = {0, (long)(sleep_ms * 1e6)};
    clock_gettime(CLOCK_MONOTONIC, &a);
    const unsigned long long c0 = __rdtsc();
    nanosleep(&pause, NULL);
    const unsigned long long c1 = __rdtsc();
    clock_gettime(CLOCK_MONOTONIC, &b);
    const double dt = (double)(b.tv_sec - a.tv_sec) + (double)(b.tv_nsec - a.tv_nsec) * 1e-9;
    if (dt > 0 && c1 > c0) hz = (double)(c1 - c0) / dt;
#else
    (void)sleep_ms;
#endif
    return ldexp(1.0, e) / hz * 1e3;
}

/** How long to wait after an OpenBLAS call before timing another library fairly, in ms: the spin
 *  period (counter rate measured over sleep_ms) plus 20 ms for the last worker to notice; 0 when
 *  the period is below 1 ms (OPENBLAS_THREAD_TIMEOUT=4: the workers sleep at once). */
static inline double kmux_openblas_settle_ms(double sleep_ms) {
    const double spin = kmux_openblas_spin_ms(sleep_ms);
    return spin < 1.0 ? 0 : spin + 20.0;
}

#endif
