/*
 * hip_runtime.c - opening the HIP runtime at run time and naming its errors.
 *
 * Candidates, in order: libamdhip64.so.6 (ROCm 6.x), libamdhip64.so.5 (ROCm 5.x), then the file
 * named by $KMUX_HIP_RUNTIME (a runtime outside the loader path, or the fake runtime of the tests).
 * RTLD_LOCAL: the runtime's symbols never become visible to other plugins (the CUDA plugin, a
 * second copy of HIP in a host process).
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hip_backend.h"

/* Resolves every function of kmux_hip_api; returns the first missing name or NULL. */
static const char *resolve(kmux_hip_state *st) {
#define X(fn)                                                                                      \
    *(void **)&st->api.fn = dlsym(st->lib, #fn);                                                   \
    if (!st->api.fn) return #fn;
    KMUX_HIP_API_NAMES
#undef X
    return NULL;
}

int kmux_hip_runtime_open(kmux_hip_state *st) {
    const char *env = getenv("KMUX_HIP_RUNTIME");
    const char *cands[3] = {"libamdhip64.so.6", "libamdhip64.so.5", env && env[0] ? env : NULL};
    char why[3][256] = {"", "", ""};
    for (int i = 0; i < 3; i++) {
        if (!cands[i]) continue;
        dlerror();
        st->lib = dlopen(cands[i], RTLD_NOW | RTLD_LOCAL);
        if (!st->lib) {
            const char *e = dlerror();
            snprintf(why[i], sizeof why[i], "%s", e ? e : cands[i]);
            continue;
        }
        const char *missing = resolve(st);
        if (missing) {
            snprintf(why[i], sizeof why[i], "%s: no symbol %s", cands[i], missing);
            dlclose(st->lib);
            st->lib = NULL;
            memset(&st->api, 0, sizeof st->api);
            continue;
        }
        snprintf(st->lib_name, sizeof st->lib_name, "%s", cands[i]);
        if (st->host->verbose >= 2) st->host->trace(2, "load,hip,runtime,%s", cands[i]);
        return 1;
    }
    /* "libamdhip64.so.6: cannot open shared object file: No such file or directory; ..." */
    snprintf(st->load_error, sizeof st->load_error, "%s; %s; %s%s", why[0], why[1],
             cands[2] ? "KMUX_HIP_RUNTIME=" : "KMUX_HIP_RUNTIME not set", cands[2] ? why[2] : "");
    if (st->host->verbose >= 2) st->host->trace(2, "load,hip,runtime not found,%s", st->load_error);
    return 0;
}

void kmux_hip_runtime_close(kmux_hip_state *st) {
    /* The runtime is never dlclose'd: ROCm's runtime registers atexit handlers and threads that
     * outlive an unload. The handle stays for the process (as the CUDA driver does). */
    st->lib = NULL;
}

const char *kmux_hip_error_name(const kmux_hip_state *st, kmux_hip_error e) {
    const char *n = st->api.hipGetErrorName ? st->api.hipGetErrorName(e) : NULL;
    return n ? n : "hipError (unnamed)";
}

kmux_status kmux_hip_status_of(kmux_hip_error e) {
    switch (e) {
    case KMUX_HIP_ERROR_OUT_OF_MEMORY:
        return KMUX_ERR_OUT_OF_MEMORY;
    case KMUX_HIP_ERROR_NO_DEVICE:
    case KMUX_HIP_ERROR_INSUFFICIENT_DRIVER:
    case KMUX_HIP_ERROR_NOT_INITIALIZED:
        return KMUX_ERR_DEVICE_UNAVAILABLE;
    case KMUX_HIP_ERROR_NOT_SUPPORTED:
        return KMUX_ERR_UNSUPPORTED;
    default:
        return KMUX_ERR_DEVICE;
    }
}

kmux_status kmux_hip_fail(const kmux_hip_state *st, kmux_hip_error e, const char *fmt, ...) {
    char what[384];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    const char *desc = st->api.hipGetErrorString ? st->api.hipGetErrorString(e) : NULL;
    return st->host->set_error(kmux_hip_status_of(e), "hip: %s: %s (%d): %s", what,
                               kmux_hip_error_name(st, e), (int)e, desc ? desc : "");
}

kmux_status kmux_hip_enter(const kmux_hip_state *st, int device, const char *fn,
                           kmux_hip_guard *g) {
    g->previous = -1;
    int ord = st->devices[device].ordinal, cur = -1;
    if (st->api.hipGetDevice(&cur) != KMUX_HIP_SUCCESS) cur = -1;
    if (cur == ord) return KMUX_OK;
    kmux_hip_error e = st->api.hipSetDevice(ord);
    if (e != KMUX_HIP_SUCCESS) return kmux_hip_fail(st, e, "%s: hipSetDevice(%d)", fn, ord);
    g->previous = cur;
    return KMUX_OK;
}

void kmux_hip_leave(const kmux_hip_state *st, const kmux_hip_guard *g) {
    if (g->previous >= 0) (void)st->api.hipSetDevice(g->previous);
}
