/*
 * context.c - contexts, backend listing and device lookup.
 */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "internal.h"
#include "verbose.h"
#include "kmux_sys_alloc.h"

/* The integer environment variables, parsed by one rule, the API field's: the whole value an
 * integer in [lo, hi]. Unset or empty leaves *out alone; anything else that is not such an
 * integer is an error naming the variable and its value (never silently ignored). */
static kmux_status env_int(const char *name, const char *field, int lo, int hi, int *out) {
    const char *v = getenv(name);
    if (!v || !*v) return KMUX_OK;
    char *end = NULL;
    errno = 0;
    long x = strtol(v, &end, 10);
    if (end == v || *end != '\0' || errno == ERANGE || x < lo || x > hi)
        return kmux_set_error(KMUX_ERR_INVALID_ARGUMENT,
                              "kmux_context_create: %s = '%.64s' is not an integer in [%d, %d] "
                              "(the range of kmux_context_options.%s)",
                              name, v, lo, hi, field);
    *out = (int)x;
    return KMUX_OK;
}

/* Plugins are loaded only from absolute folders: a relative entry ("." or "lib") would load
 * whatever the working folder holds. */
static kmux_status check_backend_path(const char *list, const char *what) {
    if (!list) return KMUX_OK;
    if (strlen(list) >= KMUX_BACKEND_PATH_MAX)
        return kmux_set_error(KMUX_ERR_INVALID_ARGUMENT,
                              "kmux_context_create: %s is %zu characters long, more than %d", what,
                              strlen(list), KMUX_BACKEND_PATH_MAX - 1);
    for (const char *p = list; *p;) {
        size_t n = strcspn(p, ":");
        if (n > 0 && p[0] != '/')
            return kmux_set_error(KMUX_ERR_INVALID_ARGUMENT,
                                  "kmux_context_create: %s entry '%.*s' is not an absolute "
                                  "folder (plugins are loaded only from absolute folders)",
                                  what, (int)(n < 200 ? n : 200), p);
        p += n;
        if (*p == ':') p++;
    }
    return KMUX_OK;
}

static kmux_status resolve_options(const kmux_context_options *opt, kmux_context_options *out) {
    kmux_context_options d = KMUX_CONTEXT_OPTIONS_INIT;
    if (opt) {
        /* Fields beyond the caller's struct_size keep their defaults (older callers). */
        size_t n = opt->struct_size < sizeof d ? opt->struct_size : sizeof d;
        memcpy(&d, opt, n);
        d.struct_size = sizeof d;
    }
    if (!d.backend_path) d.backend_path = getenv("KMUX_BACKEND_PATH");
    if (!d.backends) d.backends = getenv("KMUX_BACKENDS");
    if (!d.default_device) d.default_device = getenv("KMUX_DEVICE");
    kmux_status st = KMUX_OK;
    if (d.num_threads == 0)
        st = env_int("KMUX_NUM_THREADS", "num_threads", 1, KMUX_MAX_THREADS, &d.num_threads);
    if (st == KMUX_OK && d.num_threads == 0) {
        long n = sysconf(_SC_NPROCESSORS_ONLN);
        d.num_threads = n > 0 ? (int)(n < KMUX_MAX_THREADS ? n : KMUX_MAX_THREADS) : 1;
    }
    if (st == KMUX_OK && d.verbose == -1) {
        d.verbose = 0;
        st = env_int("KMUX_VERBOSE", "verbose", 0, 9, &d.verbose);
    }
    if (d.plan_cache_capacity == 0) d.plan_cache_capacity = 256;
    *out = d;
    return st;
}

/* Why a backend's device id cannot be taken, or NULL. An id names its backend ("<name>",
 * "<name>:<n>" or "<kind>:<name>", as "cuda:0", "cpu:onednn", "test:small") and is unique in
 * the context: a plugin cannot pose as another backend's device. */
static const char *device_id_problem(const kmux_context *c, const char *backend, const char *id) {
    size_t n = strlen(backend), len = strlen(id);
    const char *colon = strchr(id, ':');
    int names_it = strcmp(id, backend) == 0 ||
                   (colon && (size_t)(colon - id) == n && strncmp(id, backend, n) == 0) ||
                   (colon && strcmp(colon + 1, backend) == 0);
    if (len == 0 || !names_it) return "a device id must name its backend";
    for (int i = 0; i < c->device_count; i++)
        if (strcmp(c->devices[i]->props.id, id) == 0) return "another device has that id";
    return NULL;
}

/* The device "auto": the device it stands for (the first GPU, else the routing device cpu:auto,
 * else cpu:onednn, cpu:openblas, ref) under the id "auto", whose plans are tuned by default
 * (tune.c): asking for "auto" asks for the measured choice, as MIOpen's find mode and
 * torch.backends.cudnn.benchmark do. */
static kmux_status make_auto_device(kmux_context *c) {
    static const char *const cpu_ids[] = {"cpu:auto", "cpu:onednn", "cpu:openblas", "ref"};
    kmux_device *t = NULL;
    for (int i = 0; !t && i < c->device_count; i++)
        if (!c->devices[i]->props.is_host) t = c->devices[i];
    for (size_t k = 0; !t && k < sizeof cpu_ids / sizeof cpu_ids[0]; k++)
        for (int i = 0; !t && i < c->device_count; i++)
            if (strcmp(c->devices[i]->props.id, cpu_ids[k]) == 0) t = c->devices[i];
    if (!t) return KMUX_OK;
    kmux_device *a = kmux_handle_alloc(KMUX_HANDLE_DEVICE, sizeof *a);
    if (!a) return kmux_set_error(KMUX_ERR_OUT_OF_MEMORY, "kmux_context_create: out of memory");
    a->ctx = c;
    a->backend = t->backend;
    a->index = t->index;
    a->props = t->props;
    a->caps = t->caps;
    a->measured = 1;
    snprintf(a->props.id, sizeof a->props.id, "auto");
    c->auto_device = a;
    return KMUX_OK;
}

/* A context create that failed half-way: destroys what exists, keeping the failure's message
 * (kmux_context_destroy clears the calling thread's error). Returns st. */
static kmux_status undo_create(kmux_context *c, kmux_status st) {
    char msg[1024];
    snprintf(msg, sizeof msg, "%s", kmux_last_error());
    kmux_context_destroy(c);
    return kmux_set_error(st, "%s", msg);
}

kmux_status kmux_context_create(const kmux_context_options *opt, kmux_context **ctx) {
    kmux_clear_error();
    kmux_alloc_fault_install();
    if (!ctx) return kmux_set_error(KMUX_ERR_INVALID_ARGUMENT, "kmux_context_create: ctx is NULL");
    if (opt && opt->struct_size < offsetof(kmux_context_options, backend_path) + sizeof(char *))
        return kmux_set_error(KMUX_ERR_INVALID_ARGUMENT,
                              "kmux_context_create: opt->struct_size = %zu is too small (use "
                              "KMUX_CONTEXT_OPTIONS_INIT)",
                              opt->struct_size);
    kmux_context_options o;
    const char *opt_path =
        opt && opt->struct_size >= offsetof(kmux_context_options, backend_path) + sizeof(char *)
            ? opt->backend_path
            : NULL;
    kmux_status st = resolve_options(opt, &o);
    if (st != KMUX_OK) return st;
    if (o.num_threads < 1 || o.num_threads > KMUX_MAX_THREADS)
        return kmux_set_error(KMUX_ERR_INVALID_ARGUMENT,
                              "kmux_context_create: num_threads = %d is out of range [1, %d]",
                              o.num_threads, KMUX_MAX_THREADS);
    if (o.verbose < 0 || o.verbose > 9)
        return kmux_set_error(KMUX_ERR_INVALID_ARGUMENT,
                              "kmux_context_create: verbose = %d is out of range [0, 9]",
                              o.verbose);
    if (o.plan_cache_capacity < -1 || o.plan_cache_capacity > KMUX_PLAN_CACHE_MAX)
        return kmux_set_error(KMUX_ERR_INVALID_ARGUMENT,
                              "kmux_context_create: plan_cache_capacity = %d is out of range "
                              "[-1, %d]",
                              o.plan_cache_capacity, KMUX_PLAN_CACHE_MAX);
    st = check_backend_path(o.backend_path, opt_path ? "backend_path" : "KMUX_BACKEND_PATH");
    if (st != KMUX_OK) return st;

    kmux_context *c = kmux_handle_alloc(KMUX_HANDLE_CONTEXT, sizeof *c);
    if (!c) return kmux_set_error(KMUX_ERR_OUT_OF_MEMORY, "kmux_context_create: out of memory");
    c->num_threads = o.num_threads;
    c->verbose = o.verbose;
    kmux_verbose_acquire(o.verbose);
    snprintf(c->default_device, sizeof c->default_device, "%s",
             o.default_device ? o.default_device : "");

    st = kmux_plan_cache_create(o.plan_cache_capacity, &c->plan_cache);
    if (st == KMUX_OK) st = kmux_load_backends(c, o.backend_path, o.backends);
    if (st != KMUX_OK) return undo_create(c, st);
    for (int i = 0; i < c->backend_count; i++)
        if (c->backends[i].out_of_memory) {
            kmux_set_error(KMUX_ERR_OUT_OF_MEMORY, "kmux_context_create: backend %s: %s",
                           c->backends[i].name, c->backends[i].reason);
            return undo_create(c, KMUX_ERR_OUT_OF_MEMORY);
        }

    /* each count is at most KMUX_MAX_DEVICES_PER_BACKEND (loader.c): the sum cannot wrap */
    size_t total = 0;
    for (int i = 0; i < c->backend_count; i++)
        if (c->backends[i].available) total += (size_t)c->backends[i].device_count;
    c->devices = kmux_sys_calloc(total > 0 ? total : 1, sizeof *c->devices);
    if (!c->devices) {
        kmux_context_destroy(c);
        return kmux_set_error(KMUX_ERR_OUT_OF_MEMORY, "kmux_context_create: out of memory");
    }
    for (int i = 0; i < c->backend_count; i++) {
        kmux_backend_instance *b = &c->backends[i];
        if (!b->available) continue;
        int usable = 0;
        for (int d = 0; d < b->device_count; d++) {
            kmux_device *dev = kmux_handle_alloc(KMUX_HANDLE_DEVICE, sizeof *dev);
            if (!dev) {
                kmux_context_destroy(c);
                return kmux_set_error(KMUX_ERR_OUT_OF_MEMORY, "kmux_context_create: out of memory");
            }
            dev->ctx = c;
            dev->backend = b;
            dev->index = d;
            kmux_clear_error();
            st = b->ops->device_props(b->state, d, &dev->props);
            if (st == KMUX_ERR_OUT_OF_MEMORY) {
                kmux_handle_release(dev);
                return undo_create(c, st);
            }
            if (st != KMUX_OK) {
                kmux_trace(2, "load,%s,device %d,unusable: %s", b->name, d, kmux_last_error());
                kmux_handle_release(dev);
                continue;
            }
            dev->props.id[sizeof dev->props.id - 1] = '\0';
            const char *bad_id = device_id_problem(c, b->name, dev->props.id);
            if (bad_id) {
                kmux_set_error(KMUX_ERR_INVALID_ARGUMENT, "device %d has id '%s': %s", d,
                               dev->props.id, bad_id);
                kmux_trace(2, "load,%s,device %d,unusable: %s", b->name, d, kmux_last_error());
                kmux_handle_release(dev);
                continue;
            }
            /* Capabilities are read once: dispatch/caps.c checks every plan against them. */
            memset(&dev->caps, 0, sizeof dev->caps);
            dev->caps.struct_size = (uint32_t)sizeof dev->caps;
            st = b->ops->device_caps(b->state, d, &dev->caps);
            if (st == KMUX_ERR_OUT_OF_MEMORY) {
                kmux_handle_release(dev);
                return undo_create(c, st);
            }
            if (st != KMUX_OK) {
                kmux_trace(2, "load,%s,device %d,unusable: device_caps: %s", b->name, d,
                           kmux_last_error());
                kmux_handle_release(dev);
                continue;
            }
            kmux_trace(2, "load,%s,device,%s,%s", b->name, dev->props.id, dev->props.name);
            c->devices[c->device_count++] = dev;
            usable++;
        }
        if (usable == 0) {
            b->available = 0;
            snprintf(b->reason, sizeof b->reason, "no device could be queried: %s",
                     kmux_last_error());
        }
        b->device_count = usable;
    }
    st = make_auto_device(c);
    if (st != KMUX_OK) return undo_create(c, st);
    kmux_clear_error();
    kmux_trace_header(c);
    *ctx = c;
    return KMUX_OK;
}

/* Appends ", <n> <kind>s" to buf when n > 0. */
static void add_live(char *buf, size_t size, long n, const char *kind) {
    if (n <= 0) return;
    size_t len = strlen(buf);
    snprintf(buf + len, size - len, "%s%ld %s%s", len ? ", " : "", n, kind, n == 1 ? "" : "s");
}

kmux_status kmux_context_destroy(kmux_context *ctx) {
    kmux_clear_error();
    if (!ctx) return KMUX_OK;
    kmux_status st = kmux_handle_check("kmux_context_destroy", "ctx", ctx, KMUX_HANDLE_CONTEXT);
    if (st != KMUX_OK) return st;
    char live[256] = "";
    add_live(live, sizeof live, __atomic_load_n(&ctx->live_plans, __ATOMIC_RELAXED), "plan");
    add_live(live, sizeof live, __atomic_load_n(&ctx->live_streams, __ATOMIC_RELAXED), "stream");
    add_live(live, sizeof live, __atomic_load_n(&ctx->live_events, __ATOMIC_RELAXED), "event");
    add_live(live, sizeof live, __atomic_load_n(&ctx->live_allocs, __ATOMIC_RELAXED),
             "memory block"); /* kmux_malloc and kmux_host_malloc */
    if (live[0])
        return kmux_set_error(KMUX_ERR_INVALID_ARGUMENT,
                              "kmux_context_destroy: %s of this context still alive (destroy or "
                              "free them first); nothing was destroyed",
                              live);
    /* Plans first: they belong to plugins that are unloaded below. */
    kmux_plan_cache_destroy(ctx->plan_cache);
    for (int i = 0; i < ctx->device_count; i++)
        kmux_handle_release(ctx->devices[i]);
    free(ctx->devices);
    if (ctx->auto_device) kmux_handle_release(ctx->auto_device);
    kmux_unload_backends(ctx);
    kmux_verbose_release(ctx->verbose);
    kmux_handle_release(ctx);
    return KMUX_OK;
}

kmux_status kmux_backend_count(const kmux_context *ctx, int *count) {
    kmux_clear_error();
    if (!ctx || !count)
        return kmux_set_error(KMUX_ERR_INVALID_ARGUMENT, "kmux_backend_count: %s is NULL",
                              !ctx ? "ctx" : "count");
    {
        kmux_status hst = kmux_handle_check("kmux_backend_count", "ctx", ctx, KMUX_HANDLE_CONTEXT);
        if (hst != KMUX_OK) return hst;
    }
    *count = ctx->backend_count;
    return KMUX_OK;
}

kmux_status kmux_backend_info_get(const kmux_context *ctx, int i, kmux_backend_info *info) {
    kmux_clear_error();
    if (!ctx || !info)
        return kmux_set_error(KMUX_ERR_INVALID_ARGUMENT, "kmux_backend_info_get: %s is NULL",
                              !ctx ? "ctx" : "info");
    {
        kmux_status hst =
            kmux_handle_check("kmux_backend_info_get", "ctx", ctx, KMUX_HANDLE_CONTEXT);
        if (hst != KMUX_OK) return hst;
    }
    if (i < 0 || i >= ctx->backend_count)
        return kmux_set_error(KMUX_ERR_INVALID_ARGUMENT,
                              "kmux_backend_info_get: i = %d is out of range [0, %d)", i,
                              ctx->backend_count);
    const kmux_backend_instance *b = &ctx->backends[i];
    info->name = b->name;
    info->version = b->version;
    info->path = b->path;
    info->available = b->available;
    info->reason = b->reason;
    info->device_count = b->available ? b->device_count : 0;
    return KMUX_OK;
}

kmux_status kmux_device_count(const kmux_context *ctx, int *count) {
    kmux_clear_error();
    if (!ctx || !count)
        return kmux_set_error(KMUX_ERR_INVALID_ARGUMENT, "kmux_device_count: %s is NULL",
                              !ctx ? "ctx" : "count");
    {
        kmux_status hst = kmux_handle_check("kmux_device_count", "ctx", ctx, KMUX_HANDLE_CONTEXT);
        if (hst != KMUX_OK) return hst;
    }
    *count = ctx->device_count;
    return KMUX_OK;
}

kmux_status kmux_device_get(const kmux_context *ctx, int i, kmux_device **dev) {
    kmux_clear_error();
    if (!ctx || !dev)
        return kmux_set_error(KMUX_ERR_INVALID_ARGUMENT, "kmux_device_get: %s is NULL",
                              !ctx ? "ctx" : "dev");
    {
        kmux_status hst = kmux_handle_check("kmux_device_get", "ctx", ctx, KMUX_HANDLE_CONTEXT);
        if (hst != KMUX_OK) return hst;
    }
    if (i < 0 || i >= ctx->device_count)
        return kmux_set_error(KMUX_ERR_INVALID_ARGUMENT,
                              "kmux_device_get: i = %d is out of range [0, %d)", i,
                              ctx->device_count);
    *dev = ctx->devices[i];
    return KMUX_OK;
}

static kmux_device *lookup(const kmux_context *ctx, const char *id) {
    for (int i = 0; i < ctx->device_count; i++) {
        kmux_device *d = ctx->devices[i];
        if (strcmp(d->props.id, id) == 0) return d;
        /* "cuda" means "cuda:0" */
        if (strcmp(d->props.backend, id) == 0 && d->index == 0 && !d->props.is_host) return d;
    }
    return NULL;
}

kmux_status kmux_device_find(const kmux_context *ctx, const char *id, kmux_device **dev) {
    kmux_clear_error();
    if (!ctx || !id || !dev)
        return kmux_set_error(KMUX_ERR_INVALID_ARGUMENT, "kmux_device_find: %s is NULL",
                              !ctx  ? "ctx"
                              : !id ? "id"
                                    : "dev");
    kmux_status hst = kmux_handle_check("kmux_device_find", "ctx", ctx, KMUX_HANDLE_CONTEXT);
    if (hst != KMUX_OK) return hst;
    kmux_device *d = NULL;
    if (strcmp(id, "auto") == 0) {
        if (ctx->default_device[0] && strcmp(ctx->default_device, "auto") != 0) {
            d = lookup(ctx, ctx->default_device);
            if (!d)
                return kmux_set_error(KMUX_ERR_NOT_FOUND,
                                      "kmux_device_find: \"auto\" resolves to the default device "
                                      "\"%s\" (KMUX_DEVICE), which is not available",
                                      ctx->default_device);
        }
        if (!d) d = ctx->auto_device;
    } else {
        d = lookup(ctx, id);
    }
    if (!d) {
        /* Say why: the backend may exist but be unavailable. */
        char backend[32];
        const char *colon = strchr(id, ':');
        size_t n = colon ? (size_t)(colon - id) : strlen(id);
        if (n >= sizeof backend) n = sizeof backend - 1;
        memcpy(backend, id, n);
        backend[n] = '\0';
        if (strcmp(backend, "cpu") == 0 && colon)
            snprintf(backend, sizeof backend, "%s", colon + 1);
        for (int i = 0; i < ctx->backend_count; i++) {
            const kmux_backend_instance *b = &ctx->backends[i];
            if (strcmp(b->name, backend) == 0 && !b->available)
                return kmux_set_error(
                    KMUX_ERR_NOT_FOUND,
                    "kmux_device_find: device \"%s\": backend %s is unavailable: %s", id, b->name,
                    b->reason);
        }
        return kmux_set_error(KMUX_ERR_NOT_FOUND,
                              "kmux_device_find: no available device \"%s\" (kmux-info lists them)",
                              id);
    }
    *dev = d;
    return KMUX_OK;
}

kmux_status kmux_device_props_get(const kmux_device *dev, kmux_device_props *props) {
    kmux_clear_error();
    if (!dev || !props)
        return kmux_set_error(KMUX_ERR_INVALID_ARGUMENT, "kmux_device_props_get: %s is NULL",
                              !dev ? "dev" : "props");
    kmux_status st = kmux_handle_check("kmux_device_props_get", "dev", dev, KMUX_HANDLE_DEVICE);
    if (st != KMUX_OK) return st;
    *props = dev->props;
    return KMUX_OK;
}

const char *kmux_device_id(const kmux_device *dev) {
    kmux_clear_error();
    if (kmux_handle_check("kmux_device_id", "dev", dev, KMUX_HANDLE_DEVICE) != KMUX_OK) return NULL;
    return dev->props.id;
}
