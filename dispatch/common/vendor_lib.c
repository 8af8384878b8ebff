/*
 * vendor_lib.c - see kmux_vendor_lib.h.
 */
#include "kmux_vendor_lib.h"

#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

int kmux_vendor_lib_load(const char *soname, const kmux_vendor_sym *syms, size_t n, void *table,
                         char *why, size_t why_size) {
    if (why && why_size) why[0] = '\0';
    dlerror(); /* clear a stale message */
    void *h = dlopen(soname, RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE);
    if (!h) {
        const char *e = dlerror();
        if (why && why_size)
            snprintf(why, why_size, "cannot open %s: %s", soname, e ? e : "unknown dlopen error");
        dlerror(); /* a second call frees glibc's thread-local copy of the message */
        return -1;
    }
    for (size_t i = 0; i < n; i++) {
        dlerror();
        void *p = dlsym(h, syms[i].name);
        if (!p) {
            const char *e = dlerror();
            if (why && why_size)
                snprintf(why, why_size, "%s has no symbol %s (%s)", soname, syms[i].name,
                         e ? e : "dlsym returned NULL");
            dlerror();  /* frees glibc's thread-local copy of the message */
            dlclose(h); /* RTLD_NODELETE: stays mapped, only the reference is dropped */
            return -1;
        }
        /* object pointer -> function pointer, the ISO C way */
        memcpy((char *)table + syms[i].offset, &p, sizeof p);
    }
    /* The handle is kept (never closed): the function pointers point into the library. */
    return 0;
}

int kmux_vendor_lib_load_once(kmux_vendor_lib_once *once, const char *soname,
                              const kmux_vendor_sym *syms, size_t n, void *table, char *why,
                              size_t why_size) {
    pthread_mutex_lock(&once->mu);
    if (!once->done) {
        once->rc = kmux_vendor_lib_load(soname, syms, n, table, once->why, sizeof once->why);
        once->done = 1;
    }
    int rc = once->rc;
    if (rc != 0 && why && why_size) snprintf(why, why_size, "%s", once->why);
    pthread_mutex_unlock(&once->mu);
    return rc;
}
