/*
 * loader.c - finds backend plugins, loads them, checks their ABI and probes their hardware.
 *
 * Search order (the first file found for a backend name wins, so a folder earlier in the list
 * overrides an installed plugin):
 *   1. the context's backend_path option, else $KMUX_BACKEND_PATH (':'-separated folders);
 *   2. the folder of libkmux.so itself (found with dladdr when libkmux is loaded, made absolute),
 *      which is the build tree's lib/, and its kmux/ subfolder, which is where an installed
 *      (possibly relocated) kmux keeps them;
 *   3. <libdir>/kmux as configured at build time (KMUX_PLUGIN_DIR).
 * Only absolute folders are searched, each resolved with realpath first. Trust: a plugin's code
 * (its constructors) runs when it is opened, before any check of its table, so each folder
 * searched must be writable only by trusted users (README, "Plugins and trust").
 * A plugin is a file named libkmux-<name>.so exporting KMUX_BACKEND_ENTRY_SYMBOL. Anything that
 * goes wrong with one plugin makes that backend "unavailable: <reason>", never a failure of the
 * context. Rejected plugins are unloaded at once; accepted ones are finalised when their context
 * is destroyed (after every object made from them) but stay mapped until the process exits.
 */
#define _GNU_SOURCE /* dladdr */
#include <dirent.h>
#include <dlfcn.h>
#include <limits.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backends/ref/ref_backend.h"
#include "auto.h"
#include "internal.h"
#include "kmux_so_file.h"
#include "kmux_sys_alloc.h"

#define KMUX_MAX_BACKENDS 32

/* Slots every backend must fill; the op slots after them are optional. */
static const char *missing_required_slot(const kmux_backend_ops *o) {
#define REQ(slot)                                                                                  \
    if (!o->slot) return #slot
    REQ(init);
    REQ(fini);
    REQ(probe);
    REQ(version);
    REQ(device_props);
    REQ(device_caps);
    REQ(mem_alloc);
    REQ(mem_free);
    REQ(stream_create);
    REQ(stream_destroy);
    REQ(stream_synchronize);
    REQ(mem_copy);
    REQ(mem_set);
    REQ(event_create);
    REQ(event_destroy);
    REQ(event_record);
    REQ(event_synchronize);
    REQ(event_elapsed_ms);
#undef REQ
    return NULL;
}

/* Each instance keeps its own full-size copy of the table: slots a plugin built against an
 * older minor version does not have are NULL (= unsupported). */
typedef struct ops_holder {
    kmux_backend_ops ops;
} ops_holder;

static int name_allowed(const char *allow, const char *name) {
    if (!allow || !*allow || strcmp(name, "ref") == 0) return 1;
    size_t len = strlen(name);
    for (const char *p = allow; *p;) {
        const char *end = strchr(p, ',');
        size_t n = end ? (size_t)(end - p) : strlen(p);
        while (n && *p == ' ')
            p++, n--;
        while (n && p[n - 1] == ' ')
            n--;
        if (n == len && strncmp(p, name, len) == 0) return 1;
        if (!end) break;
        p = end + 1;
    }
    return 0;
}

/* The folder of libkmux.so, absolute, found when the library is loaded: dladdr gives the name
 * the loader used, which is relative when LD_LIBRARY_PATH or a RUNPATH was, and a program that
 * changes directory before kmux_context_create would otherwise make it point elsewhere. */
static char g_self_dir[PATH_MAX];

__attribute__((constructor)) static void find_self_dir(void) {
    Dl_info info;
    if (!dladdr((void *)(uintptr_t)&find_self_dir, &info) || !info.dli_fname) return;
    char real[PATH_MAX];
    if (!realpath(info.dli_fname, real)) return;
    char *slash = strrchr(real, '/');
    if (!slash || slash == real) return;
    *slash = '\0';
    memcpy(g_self_dir, real, strlen(real) + 1);
}

static kmux_backend_instance *find_backend(kmux_context *ctx, const char *name) {
    for (int i = 0; i < ctx->backend_count; i++)
        if (strcmp(ctx->backends[i].name, name) == 0) return &ctx->backends[i];
    return NULL;
}

static void set_reason(kmux_backend_instance *b, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
static void set_reason(kmux_backend_instance *b, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(b->reason, sizeof b->reason, fmt, ap);
    va_end(ap);
    b->available = 0;
}

/* Initialises, probes and enumerates an accepted backend table. */
static void start_backend(kmux_context *ctx, kmux_backend_instance *b,
                          const kmux_backend_ops *raw) {
    ops_holder *h = kmux_sys_calloc(1, sizeof *h);
    if (!h) {
        snprintf(b->name, sizeof b->name, "%s", raw->name ? raw->name : "?"); /* for the message */
        set_reason(b, "out of memory (%zu bytes)", sizeof *h);
        b->out_of_memory = 1;
        return;
    }
    size_t n = raw->struct_size < sizeof h->ops ? raw->struct_size : sizeof h->ops;
    memcpy(&h->ops, raw, n);
    h->ops.struct_size = (uint32_t)sizeof h->ops;
    b->ops = &h->ops;
    snprintf(b->name, sizeof b->name, "%s", raw->name ? raw->name : "?");

    const char *missing = missing_required_slot(b->ops);
    if (missing) {
        set_reason(b, "plugin table has no '%s' function", missing);
        return;
    }
    b->host.struct_size = sizeof b->host;
    b->host.set_error = kmux_set_error;
    b->host.trace = kmux_trace;
    b->host.verbose = ctx->verbose;
    b->host.num_threads = ctx->num_threads;
    b->host.alloc_fault = kmux_alloc_fault;
    kmux_clear_error();
    kmux_status st = b->ops->init(&b->host, &b->state);
    if (st != KMUX_OK) {
        b->out_of_memory = st == KMUX_ERR_OUT_OF_MEMORY;
        set_reason(b, "init failed: %s: %s", kmux_status_str(st), kmux_last_error());
        b->state = NULL;
        return;
    }
    const char *v = b->ops->version(b->state);
    snprintf(b->version, sizeof b->version, "%s", v ? v : "");
    int count = 0;
    char reason[KMUX_REASON_MAX] = "";
    st = b->ops->probe(b->state, &count, reason, sizeof reason);
    if (st != KMUX_OK) {
        b->out_of_memory = st == KMUX_ERR_OUT_OF_MEMORY;
        set_reason(b, "probe failed: %s: %s", kmux_status_str(st),
                   reason[0] ? reason : kmux_last_error());
        return;
    }
    if (count <= 0) {
        set_reason(b, "%s", reason[0] ? reason : "no device found");
        return;
    }
    if (count > KMUX_MAX_DEVICES_PER_BACKEND) {
        set_reason(b, "probe reported %d devices, more than the %d one backend may have", count,
                   KMUX_MAX_DEVICES_PER_BACKEND);
        return;
    }
    b->device_count = count;
    b->available = 1;
    b->reason[0] = '\0';
}

static void try_plugin_file(kmux_context *ctx, const char *dir, const char *file,
                            const char *allow) {
    /* libkmux-<name>.so */
    size_t flen = strlen(file);
    if (flen <= strlen("libkmux-.so") || strncmp(file, "libkmux-", 8) != 0 ||
        strcmp(file + flen - 3, ".so") != 0)
        return;
    char name[32];
    size_t nlen = flen - 8 - 3;
    if (nlen >= sizeof name) {
        kmux_trace(2, "load,?,%s/%s,skipped: a backend name is at most %zu characters", dir, file,
                   sizeof name - 1);
        return;
    }
    memcpy(name, file + 8, nlen);
    name[nlen] = '\0';
    char path[sizeof ctx->backends[0].path];
    int too_long = kmux_path_join(path, sizeof path, dir, file) != 0;

    if (strcmp(name, "ref") == 0 || strcmp(name, "auto") == 0) { /* never opened */
        kmux_trace(2, "load,%s,%s,skipped: '%s' is a built-in backend's name", name, dir, name);
        return;
    }
    kmux_backend_instance *seen = find_backend(ctx, name);
    if (seen) {
        kmux_trace(2, "load,%s,%s,skipped: already found at %s", name, path, seen->path);
        return;
    }
    if (ctx->backend_count >= KMUX_MAX_BACKENDS) return;
    kmux_backend_instance *b = &ctx->backends[ctx->backend_count++];
    memset(b, 0, sizeof *b);
    snprintf(b->name, sizeof b->name, "%s", name);
    snprintf(b->path, sizeof b->path, "%s", path);

    if (too_long) { /* never a shorter path: that would be another file */
        snprintf(b->path, sizeof b->path, "%.200s.../%s", dir, file);
        set_reason(b, "the path is longer than %zu bytes; not opened (%.200s.../%s)",
                   sizeof path - 1, dir, file);
        kmux_trace(2, "load,%s,%s,rejected: %s", name, b->path, b->reason);
        return;
    }
    if (!name_allowed(allow, name)) {
        set_reason(b, "not in the KMUX_BACKENDS allow-list (%s)", allow);
        kmux_trace(2, "load,%s,%s,rejected: %s", name, path, b->reason);
        return;
    }
    /* A truncated file would SIGBUS inside dlopen, a FIFO would block it: look first. */
    char why[KMUX_REASON_MAX - 16];
    if (kmux_so_file_check(path, why, sizeof why) != KMUX_SO_OK) {
        set_reason(b, "cannot load %s", why);
        kmux_trace(2, "load,%s,%s,rejected: %s", name, path, b->reason);
        return;
    }
    void *handle = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!handle) {
        const char *e = dlerror();
        set_reason(b, "cannot load %s: %s", path, e ? e : "unknown dlopen error");
        kmux_trace(2, "load,%s,%s,rejected: %s", name, path, b->reason);
        return;
    }
    kmux_backend_entry_fn entry = NULL;
    void *sym = dlsym(handle, KMUX_BACKEND_ENTRY_SYMBOL);
    memcpy(&entry, &sym, sizeof entry); /* object pointer -> function pointer, ISO C way */
    const kmux_backend_ops *raw = entry ? entry() : NULL;
    if (!entry || !raw) {
        set_reason(b, "%s does not export a usable '%s'", path, KMUX_BACKEND_ENTRY_SYMBOL);
    } else if (raw->struct_size < offsetof(kmux_backend_ops, init)) {
        set_reason(b, "plugin table too small (%u bytes)", (unsigned)raw->struct_size);
    } else if (!raw->name || strcmp(raw->name, name) != 0) {
        /* the file's name is the backend's name (KMUX_BACKENDS, kmux-info, device lookup): a
         * table calling itself another backend must not replace that one */
        set_reason(b, "%s calls itself '%.31s', but its file name says '%s'; rejected", path,
                   raw->name ? raw->name : "(null)", name);
    } else if (raw->abi_major != KMUX_BACKEND_ABI_MAJOR) {
        set_reason(b,
                   "built for plugin ABI %u (%u.%u); this libkmux loads ABI %d (rebuild the "
                   "plugin against this kmux_backend.h)",
                   (unsigned)raw->abi_major, (unsigned)raw->abi_major, (unsigned)raw->abi_minor,
                   KMUX_BACKEND_ABI_MAJOR);
    } else {
        b->dl_handle = handle;
        start_backend(ctx, b, raw);
        snprintf(b->path, sizeof b->path, "%s", path); /* start_backend keeps it, be explicit */
        kmux_trace(2, "load,%s,%s,%s%s", b->name, path,
                   b->available ? "available" : "unavailable: ", b->reason);
        return;
    }
    kmux_trace(2, "load,%s,%s,rejected: %s", name, path, b->reason);
    dlclose(handle);
}

/* Tries every plugin file of a folder. KMUX_ERR_OUT_OF_MEMORY when the list of its names could
 * not be made (a plugin would be left out), KMUX_OK otherwise (a folder that is not there too). */
static kmux_status scan_dir(kmux_context *ctx, const char *folder, const char *allow) {
    /* Absolute and canonical, so that what is loaded never depends on the working folder
     * (relative entries are refused by kmux_context_create; this is the second guard). */
    char dir[PATH_MAX];
    if (folder[0] != '/' || !realpath(folder, dir)) {
        kmux_trace(2, "load,search,%s,%s (not an error)", folder,
                   folder[0] != '/' ? "relative folder skipped" : "folder not found");
        return KMUX_OK;
    }
    DIR *d = opendir(dir);
    if (!d) {
        kmux_trace(2, "load,search,%s,folder not found (not an error)", dir);
        return KMUX_OK;
    }
    kmux_trace(2, "load,search,%s", dir);
    /* Sorted so the order of backends (and devices) does not depend on the file system. */
    char *names[256];
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL && n < 256) {
        if (strncmp(e->d_name, "libkmux-", 8) != 0) continue;
        if (!(names[n] = kmux_sys_strdup(e->d_name))) {
            closedir(d);
            while (n > 0)
                free(names[--n]);
            return kmux_set_error(KMUX_ERR_OUT_OF_MEMORY,
                                  "kmux_context_create: out of memory listing the plugins of %s",
                                  dir);
        }
        n++;
    }
    closedir(d);
    for (int i = 1; i < n; i++)
        for (int j = i; j > 0 && strcmp(names[j - 1], names[j]) > 0; j--) {
            char *t = names[j];
            names[j] = names[j - 1];
            names[j - 1] = t;
        }
    for (int i = 0; i < n; i++) {
        try_plugin_file(ctx, dir, names[i], allow);
        free(names[i]);
    }
    return KMUX_OK;
}

static kmux_status scan_path_list(kmux_context *ctx, const char *list, const char *allow) {
    char buf[4096];
    snprintf(buf, sizeof buf, "%s", list);
    char *save = NULL;
    kmux_status st = KMUX_OK;
    for (char *dir = strtok_r(buf, ":", &save); dir && st == KMUX_OK;
         dir = strtok_r(NULL, ":", &save))
        if (*dir) st = scan_dir(ctx, dir, allow);
    return st;
}

kmux_status kmux_load_backends(kmux_context *ctx, const char *backend_path, const char *allow) {
    ctx->backends = kmux_sys_calloc(KMUX_MAX_BACKENDS, sizeof *ctx->backends);
    if (!ctx->backends)
        return kmux_set_error(KMUX_ERR_OUT_OF_MEMORY, "kmux_context_create: out of memory");

    kmux_backend_instance *ref = &ctx->backends[ctx->backend_count++];
    snprintf(ref->path, sizeof ref->path, "(built in)");
    start_backend(ctx, ref, kmux_ref_backend_ops());
    snprintf(ref->path, sizeof ref->path, "(built in)");

    kmux_status st = KMUX_OK;
    if (backend_path && *backend_path) st = scan_path_list(ctx, backend_path, allow);
    if (st == KMUX_OK && g_self_dir[0]) {
        st = scan_dir(ctx, g_self_dir, allow);
        char sub[PATH_MAX];
        if (st == KMUX_OK && kmux_path_join(sub, sizeof sub, g_self_dir, "kmux") == 0)
            st = scan_dir(ctx, sub, allow);
    }
    if (st == KMUX_OK) st = scan_dir(ctx, KMUX_PLUGIN_DIR, allow);
    if (st != KMUX_OK) return st;

    /* the routing device cpu:auto (auto.c), after the plugins it routes to */
    if (name_allowed(allow, "auto") && ctx->backend_count < KMUX_MAX_BACKENDS) {
        kmux_backend_instance *a = &ctx->backends[ctx->backend_count++];
        kmux_auto_prepare(ctx);
        start_backend(ctx, a, kmux_auto_backend_ops());
        snprintf(a->path, sizeof a->path, "(built in)");
        kmux_trace(2, "load,auto,(built in),%s%s",
                   a->available ? "available" : "unavailable: ", a->reason);
    }
    return KMUX_OK;
}

void kmux_unload_backends(kmux_context *ctx) {
    if (!ctx->backends) return;
    for (int i = ctx->backend_count - 1; i >= 0; i--) {
        kmux_backend_instance *b = &ctx->backends[i];
        if (b->ops && b->state) b->ops->fini(b->state);
        if (b->ops) free((ops_holder *)(void *)b->ops);
        /* Accepted plugins are deliberately never dlclose()d: the libraries they pull in (libgomp
         * and OpenBLAS thread pools, the CUDA runtime) keep worker threads that run their code
         * until process exit, and unloading that code under them crashes at exit. A later
         * context's dlopen of the same file just finds it loaded. */
    }
    free(ctx->backends);
    ctx->backends = NULL;
    ctx->backend_count = 0;
}
