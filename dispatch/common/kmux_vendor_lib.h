/*
 * kmux_vendor_lib.h - opens a plugin's vendor library (libopenblas.so.0, libdnnl.so.2, ...) and
 * resolves its entry points from that library itself, into a table of function pointers.
 *
 * Why: a plugin that links its vendor library normally calls e.g. cblas_sgemm through the PLT,
 * which the dynamic linker resolves in the GLOBAL scope first: the executable and everything it
 * was linked with. When that scope already holds a cblas_sgemm (another BLAS the application
 * links, or a CBLAS interface of the application's own, possibly built on kmux), the plugin
 * would run that function under OpenBLAS's name, or recurse into kmux until the stack overflows.
 * dlsym() on the handle of the library the plugin opened only searches that library (and its
 * dependencies), so the plugin always runs the library it reports. RTLD_DEEPBIND is not used: it
 * is incompatible with the sanitizer runtimes (they refuse such a dlopen) and with interposed
 * allocators.
 */
#ifndef KMUX_VENDOR_LIB_H
#define KMUX_VENDOR_LIB_H

#include <pthread.h>
#include <stddef.h>

/** One entry point: its name in the library and the offset of its function pointer in the
 *  caller's table (offsetof). Every field of the table is a function pointer. */
typedef struct kmux_vendor_sym {
    const char *name;
    size_t offset;
} kmux_vendor_sym;

/** Opens `soname` with RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE (the library is never unloaded:
 *  its thread pools outlive any context) and stores the address of each of the n symbols,
 *  resolved on that handle, into table + syms[i].offset. Returns 0 on success. On failure
 *  returns -1, leaves the table partly filled (the caller must not use it) and writes into why
 *  (why_size bytes, may be 0) which library and which symbol, with dlerror()'s text, e.g.
 *  "cannot open libopenblas.so.0: libopenblas.so.0: cannot open shared object file: ...". */
int kmux_vendor_lib_load(const char *soname, const kmux_vendor_sym *syms, size_t n, void *table,
                         char *why, size_t why_size);

/** The outcome of a plugin's one load of its vendor library (one static per library). */
typedef struct kmux_vendor_lib_once {
    pthread_mutex_t mu;
    int done, rc;
    char why[512];
} kmux_vendor_lib_once;
#define KMUX_VENDOR_LIB_ONCE_INIT                                                                  \
    { PTHREAD_MUTEX_INITIALIZER, 0, -1, "" }

/** kmux_vendor_lib_load, run once per `once` (thread-safe): later calls return the first call's
 *  result and copy its failure text into why. Returns 0 or -1 as kmux_vendor_lib_load. */
int kmux_vendor_lib_load_once(kmux_vendor_lib_once *once, const char *soname,
                              const kmux_vendor_sym *syms, size_t n, void *table, char *why,
                              size_t why_size);

#endif
