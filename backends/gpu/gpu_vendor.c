/*
 * gpu_vendor.c - what the CUDA and HIP plugins do alike on their vendor's calls
 * (kmux_gpu_plugin, gpu_launch.h), written once: a kernel launch (the vendor's shape check, the
 * device entered, the kernel found in its module, the launch, the trace), a stream-ordered memset
 * and the module cache, each failure named with the vendor call and device.
 */
#include <stdio.h>

#include "gpu_launch.h"

/* Module `id` on `device` (entered), loaded on its first use under the device's module lock and
 * kept until the plugin's fini. */
static kmux_status module_of(void *state, int device, kmux_gpu_module_id id, const char *what,
                             void **out) {
    const kmux_gpu_plugin *p = state;
    pthread_mutex_t *lock = NULL;
    void **loaded = p->modules(state, device, &lock);
    kmux_status s = KMUX_OK;
    pthread_mutex_lock(lock);
    if (!loaded[id]) {
        void *m = NULL;
        size_t bytes = 0;
        s = p->module_load(state, device, id, what, &m, &bytes);
        loaded[id] = s == KMUX_OK ? m : NULL;
        if (s == KMUX_OK && p->host->verbose >= 2)
            p->host->trace(2, "load,%s:%d,module,kmux_gpu_%s.cu,%zu bytes", p->vendor, device,
                           kmux_gpu_module_name(id), bytes);
    }
    *out = loaded[id];
    pthread_mutex_unlock(lock);
    return s;
}

void kmux_gpu_modules_unload(void *state, int device) {
    const kmux_gpu_plugin *p = state;
    pthread_mutex_t *lock = NULL;
    void **loaded = p->modules(state, device, &lock);
    for (int i = 0; i < KMUX_GPU_MOD_COUNT; i++) {
        if (!loaded[i]) continue;
        int guard = 0;
        if (p->enter(state, device, "kmux_context_destroy", &guard) == KMUX_OK) {
            (void)p->module_unload(state, loaded[i]);
            p->leave(state, guard);
        }
        loaded[i] = NULL;
    }
}

static kmux_status launch(const kmux_gpu_launcher *l, kmux_gpu_module_id mod, const char *name,
                          const unsigned grid[3], unsigned block, void **params, const char *what) {
    const kmux_gpu_plugin *p = l->state;
    char msg[512], why[160];
    kmux_status bad = KMUX_OK;
    if (p->bad_shape(grid, block, why, sizeof why, &bad)) {
        snprintf(msg, sizeof msg, "%s on %s:%d: kernel %s: %s", what, p->vendor, l->device, name,
                 why);
        return p->error(l->state, bad, msg);
    }
    int guard = 0;
    kmux_status s = p->enter(l->state, l->device, what, &guard);
    if (s != KMUX_OK) return s;
    void *m = NULL, *fn = NULL;
    s = module_of(l->state, l->device, mod, what, &m);
    if (s != KMUX_OK) {
        p->leave(l->state, guard);
        return s;
    }
    int e = p->get_function(l->state, m, name, &fn);
    if (e != 0) {
        p->leave(l->state, guard);
        snprintf(msg, sizeof msg, "%s: %s(%s) in kmux_gpu_%s.cu", what, p->get_function_name, name,
                 kmux_gpu_module_name(mod));
        return p->fail(l->state, e, msg);
    }
    e = p->launch(l->state, l->stream, fn, grid, block, params);
    p->leave(l->state, guard);
    if (e != 0) {
        snprintf(msg, sizeof msg, "%s: %s(%s, grid %ux%ux%u, block %u) on %s:%d", what,
                 p->launch_name, name, grid[0], grid[1], grid[2], block, p->vendor, l->device);
        return p->fail(l->state, e, msg);
    }
    if (p->host->verbose >= 2)
        p->host->trace(2, "launch,%s:%d,%s,%s,grid=%ux%ux%u,block=%u", p->vendor, l->device, what,
                       name, grid[0], grid[1], grid[2], block);
    return KMUX_OK;
}

static kmux_status memset_async(const kmux_gpu_launcher *l, void *dst, int value, size_t bytes,
                                const char *what) {
    const kmux_gpu_plugin *p = l->state;
    int guard = 0;
    kmux_status s = p->enter(l->state, l->device, what, &guard);
    if (s != KMUX_OK) return s;
    int e = p->memset_async(l->state, l->stream, dst, value, bytes);
    p->leave(l->state, guard);
    if (e != 0) {
        char msg[256];
        snprintf(msg, sizeof msg, "%s: %s(%p, %d, %zu bytes) on %s:%d", what, p->memset_name, dst,
                 value, bytes, p->vendor, l->device);
        return p->fail(l->state, e, msg);
    }
    return KMUX_OK;
}

kmux_gpu_launcher kmux_gpu_plugin_launcher(void *state, const void *stream) {
    const kmux_gpu_plugin *p = state;
    kmux_gpu_launcher l = {
        .state = state,
        .stream = stream,
        .device = kmux_gpu_stream_device(stream),
        .vendor = p->vendor,
        .host = p->host,
        .launch = launch,
        .memset_async = memset_async,
    };
    return l;
}

kmux_status kmux_gpu_vendor_error(const kmux_backend_host *host, kmux_status s,
                                  const kmux_gpu_vendor_code *c, const char *fmt, va_list ap) {
    char what[512];
    vsnprintf(what, sizeof what, fmt, ap);
    return host->set_error(s, "%s%s: %s (%d): %s%s", c->prefix, what, c->name, c->code,
                           c->desc ? c->desc : "", c->suffix);
}
