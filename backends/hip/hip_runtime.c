/*
 * hip_runtime.c - finding and opening ROCm libraries at run time (the HIP runtime here, rocBLAS
 * in hip_matmul.c, hipBLASLt and MIOpen later: one search for all, kmux_hip_lib_open), the HIP
 * runtime's function table, and naming its errors.
 *
 * The search, for a library with override variable ENV and sonames (newest first):
 *  1. $ENV when set and not empty, and nothing else: an override that cannot be opened (or lacks
 *     a function) makes the library unavailable with that reason, it never falls back to the
 *     search (so a test that points KMUX_HIP_RUNTIME at the fake runtime never opens a real one
 *     on a machine that has ROCm, and a user's override is never silently ignored);
 *  2. each soname in the folder of the HIP runtime that was loaded (dlinfo on its handle), so that
 *     rocBLAS comes from the same ROCm install as the runtime;
 *  3. each soname on the loader path (LD_LIBRARY_PATH, ld.so.conf: ROCm's ld.so.conf step);
 *  4. each soname in $ROCM_PATH/lib, then in /opt/rocm/lib (installs without the ld.so.conf step).
 * Folders that repeat are tried once. The HIP runtime: KMUX_HIP_RUNTIME, libamdhip64.so.7 (ROCm
 * 7.x), .so.6 (ROCm 6.x), .so.5 (ROCm 5.x), step 2 skipped. When nothing is found, the reason
 * lists what was tried ("KMUX_HIP_RUNTIME not set; no libamdhip64.so.7, libamdhip64.so.6 or
 * libamdhip64.so.5 on the loader path or in /opt/rocm/lib") and every file that was there but
 * unusable, with why. RTLD_LOCAL: the libraries' symbols never become visible to other plugins
 * (the CUDA plugin, a second copy of HIP in a host process). A library opened but refused is not
 * dlclose'd (ROCm libraries start threads and register atexit handlers at load).
 */
#define _GNU_SOURCE
#include "kmux_so_file.h"
#include <dlfcn.h>
#include <link.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hip_backend.h"

/* Appends to the string in buf[size] (truncating, never overflowing). */
static void append(char *buf, size_t size, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;
static void append(char *buf, size_t size, const char *fmt, ...) {
    size_t len = strlen(buf);
    if (len + 1 >= size) return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf + len, size - len, fmt, ap);
    va_end(ap);
}

/* Did dlopen(file) fail because file itself is not there (rather than a missing dependency, which
 * dlerror names instead, or a bad ELF file)? */
static int file_absent(const char *err, const char *file) {
    static const char tail[] = ": cannot open shared object file: No such file or directory";
    size_t n = strlen(file);
    return err && strncmp(err, file, n) == 0 && strcmp(err + n, tail) == 0;
}

/* dlopen + check of one file. 1: usable (*lib set); 0: not there; -1: there but unusable (the
 * reason appended to fails). */
static int try_file(const kmux_hip_lib_search *s, const char *file, void **lib, char *fails,
                    size_t fails_size) {
    if (strchr(file, '/')) { /* a file named by path: a truncated one would SIGBUS in dlopen */
        char why[600];
        int chk = kmux_so_file_check(file, why, sizeof why);
        if (chk == KMUX_SO_ABSENT) return 0;
        if (chk == KMUX_SO_BAD) {
            append(fails, fails_size, "; %s", why);
            return -1;
        }
    }
    dlerror();
    void *h = dlopen(file, RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        const char *e = dlerror();
        if (file_absent(e, file)) return 0;
        append(fails, fails_size, "; %s", e ? e : file);
        return -1;
    }
    const char *bad = s->check ? s->check(h, s->ctx) : NULL;
    if (bad) {
        append(fails, fails_size, "; %s: %s", file, bad);
        return -1;
    }
    *lib = h;
    return 1;
}

void *kmux_hip_lib_open(const kmux_hip_state *st, const kmux_hip_lib_search *s, char *path,
                        size_t path_size, char *why, size_t why_size) {
    void *lib = NULL;
    char fails[512] = "";
    why[0] = '\0';
    const char *env = s->env ? getenv(s->env) : NULL;
    if (env && env[0]) {
        if (try_file(s, env, &lib, fails, sizeof fails) == 1) {
            snprintf(path, path_size, "%s", env);
        } else {
            /* fails is "; <why>" when the file was there, else empty */
            snprintf(why, why_size, "%s=%s: %s (an override is used alone, no search follows)",
                     s->env, env,
                     fails[0] ? fails + 2 : "cannot open shared object file: No such file");
            return NULL;
        }
    } else {
        /* the folders, deduplicated: the runtime's, the loader path (""), $ROCM_PATH/lib,
         * /opt/rocm/lib */
        char dirs[4][1024];
        int nd = 0;
        if (st && st->lib_dir[0]) snprintf(dirs[nd++], sizeof dirs[0], "%s", st->lib_dir);
        dirs[nd++][0] = '\0';
        const char *rp = getenv("ROCM_PATH");
        if (rp && rp[0]) {
            size_t n = strlen(rp);
            while (n > 1 && rp[n - 1] == '/')
                n--;
            /* a ROCM_PATH that does not fit is reported, never searched shorter */
            if (snprintf(dirs[nd], sizeof dirs[0], "%.*s/lib", (int)n, rp) < (int)sizeof dirs[0])
                nd++;
            else
                append(fails, sizeof fails, "; ROCM_PATH (%zu characters): too long, not searched",
                       n);
        }
        snprintf(dirs[nd++], sizeof dirs[0], "/opt/rocm/lib");
        int used[4] = {0};
        for (int d = 0; d < nd; d++) {
            used[d] = 1;
            for (int e = 0; e < d; e++)
                if (used[e] && strcmp(dirs[e], dirs[d]) == 0) used[d] = 0;
        }
        for (int d = 0; d < nd && !lib; d++) {
            if (!used[d]) continue;
            for (int i = 0; s->sonames[i] && !lib; i++) {
                char file[1100];
                if (kmux_path_join(file, sizeof file, dirs[d], s->sonames[i]) != 0) continue;
                if (try_file(s, file, &lib, fails, sizeof fails) == 1)
                    snprintf(path, path_size, "%s", file);
            }
        }
        if (!lib) {
            /* "KMUX_HIP_RUNTIME not set; no libamdhip64.so.7, libamdhip64.so.6 or
             * libamdhip64.so.5 in <runtime's folder>, on the loader path or in /opt/rocm/lib" */
            snprintf(why, why_size, "%s not set; no ", s->env);
            int n = 0;
            while (s->sonames[n])
                n++;
            for (int i = 0; i < n; i++)
                append(why, why_size, "%s%s",
                       i == 0       ? ""
                       : i == n - 1 ? " or "
                                    : ", ",
                       s->sonames[i]);
            int np = 0, total = 0;
            for (int d = 0; d < nd; d++)
                total += used[d];
            for (int d = 0; d < nd; d++) {
                if (!used[d]) continue;
                const char *sep = np == 0 ? " " : np == total - 1 ? " or " : ", ";
                if (dirs[d][0])
                    append(why, why_size, "%sin %s", sep, dirs[d]);
                else
                    append(why, why_size, "%son the loader path", sep);
                np++;
            }
            append(why, why_size, "%s", fails);
            return NULL;
        }
    }
    if (st && st->host->verbose >= 2) st->host->trace(2, "load,hip,%s,%s", s->what, path);
    return lib;
}

/* Resolves every function of kmux_hip_api (the optional ones may stay NULL); returns the first
 * missing name or NULL. */
static const char *resolve(kmux_hip_state *st, void *lib) {
#define X(fn)                                                                                      \
    *(void **)&st->api.fn = dlsym(lib, #fn);                                                       \
    if (!st->api.fn) return #fn;
    KMUX_HIP_API_NAMES
#undef X
#define X(fn) *(void **)&st->api.fn = dlsym(lib, #fn);
    KMUX_HIP_API_OPTIONAL_NAMES
#undef X
    return NULL;
}

typedef struct runtime_check {
    kmux_hip_state *st;
    char why[96];
} runtime_check;

static const char *check_runtime(void *lib, void *ctx) {
    runtime_check *c = ctx;
    const char *missing = resolve(c->st, lib);
    if (!missing) return NULL;
    memset(&c->st->api, 0, sizeof c->st->api);
    snprintf(c->why, sizeof c->why, "no symbol %s", missing);
    return c->why;
}

int kmux_hip_lib_once(kmux_hip_state *st, kmux_hip_lib *l, const kmux_hip_lib_search *s,
                      const char *name, const char *(*opened)(kmux_hip_state *st)) {
    pthread_mutex_lock(&l->lock);
    if (!l->tried) {
        l->tried = 1;
        char path[256], why[sizeof l->why - 64];
        l->lib = kmux_hip_lib_open(st, s, path, sizeof path, why, sizeof why);
        const char *refused = l->lib && opened ? opened(st) : NULL;
        if (refused) {
            snprintf(l->why, sizeof l->why, "%s (%s): %s", name, path, refused);
            l->lib = NULL; /* not dlclose'd: see the file comment */
        } else if (!l->lib) {
            snprintf(l->why, sizeof l->why, "%s not found (%s)", name, why);
        } else if (st->host->verbose >= 2) {
            st->host->trace(2, "load,hip,%s,%s,%s", s->what, path, l->version);
        }
    }
    pthread_mutex_unlock(&l->lock);
    return l->lib != NULL;
}

int kmux_hip_runtime_open(kmux_hip_state *st) {
    static const char *const sonames[] = {"libamdhip64.so.7", "libamdhip64.so.6",
                                          "libamdhip64.so.5", NULL};
    runtime_check c = {st, ""};
    const kmux_hip_lib_search s = {"runtime", "KMUX_HIP_RUNTIME", sonames, check_runtime, &c};
    st->lib_dir[0] = '\0';
    st->lib = kmux_hip_lib_open(st, &s, st->lib_name, sizeof st->lib_name, st->load_error,
                                sizeof st->load_error);
    if (!st->lib) {
        if (st->host->verbose >= 2)
            st->host->trace(2, "load,hip,runtime not found,%s", st->load_error);
        return 0;
    }
    /* the folder the runtime was loaded from (a soname resolves to a full path in the link map),
     * where rocBLAS and the other ROCm libraries are looked for first */
    struct link_map *lm = NULL;
    if (dlinfo(st->lib, RTLD_DI_LINKMAP, &lm) == 0 && lm && lm->l_name && lm->l_name[0] == '/') {
        const char *slash = strrchr(lm->l_name, '/');
        int n = (int)(slash == lm->l_name ? 1 : slash - lm->l_name);
        if (n < (int)sizeof st->lib_dir) /* a folder that does not fit is not searched at all */
            snprintf(st->lib_dir, sizeof st->lib_dir, "%.*s", n, lm->l_name);
    }
    return 1;
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
    const kmux_gpu_vendor_code c = {kmux_hip_error_name(st, e), (int)e,
                                    st->api.hipGetErrorString ? st->api.hipGetErrorString(e) : NULL,
                                    "hip: ", ""};
    va_list ap;
    va_start(ap, fmt);
    kmux_status s = kmux_gpu_vendor_error(st->host, kmux_hip_status_of(e), &c, fmt, ap);
    va_end(ap);
    return s;
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
