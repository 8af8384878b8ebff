/*
 * fake_fail.h - the vendor-call failure sweep's fail point (issue 51, tests/faults), shared by
 * every fake vendor library (C and C++): KMUX_FAKE_FAIL_CALL=K makes the K-th call counted
 * through kmux_fake_fail_call in this library fail, said on stderr ("fake: KMUX_FAKE_FAIL_CALL=K:
 * LIB FN fails"); KMUX_FAKE_FAIL_LIB=LIB (libamdhip64, librocblas, libhipblaslt, libMIOpen,
 * libcuda, libcublasLt, libcudnn) arms it in that library only. Releases (a name with Destroy,
 * Free or Unload, any case) are never failed nor counted: a library's release of a valid handle
 * does not fail, and kmux's destroy functions have no status to carry it. One counter per
 * library (each fake is one shared object; this header's static state is per translation unit,
 * and each fake counts in one).
 */
#ifndef KMUX_FAKE_FAIL_H
#define KMUX_FAKE_FAIL_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static inline int kmux_fake_fail_call(const char *lib, const char *fn) {
    static long at = -1;
    static long calls = 0;
    if (__atomic_load_n(&at, __ATOMIC_RELAXED) < 0) {
        const char *v = getenv("KMUX_FAKE_FAIL_CALL"), *only = getenv("KMUX_FAKE_FAIL_LIB");
        long k = v && *v ? strtol(v, NULL, 10) : 0;
        if (only && *only && strcmp(only, lib) != 0) k = 0;
        __atomic_store_n(&at, k > 0 ? k : 0, __ATOMIC_RELAXED);
    }
    const long k = __atomic_load_n(&at, __ATOMIC_RELAXED);
    if (k == 0 || strstr(fn, "Destroy") || strstr(fn, "destroy") || strstr(fn, "Free") ||
        strstr(fn, "Unload"))
        return 0;
    if (__atomic_add_fetch(&calls, 1, __ATOMIC_RELAXED) != k) return 0;
    fprintf(stderr, "fake: KMUX_FAKE_FAIL_CALL=%ld: %s %s fails\n", k, lib, fn);
    return 1;
}

/* at the top of an exported function: returns `status` when the sweep fails this call */
#define KMUX_FAKE_FAIL_POINT(lib, status)                                                          \
    do {                                                                                           \
        if (kmux_fake_fail_call(lib, __func__)) return status;                                     \
    } while (0)

#endif
