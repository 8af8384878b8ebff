/*
 * openblas_api.c - fills the OpenBLAS entry-point table (openblas_api.h) from the OpenBLAS this
 * plugin opens itself.
 */
#define KMUX_OB_API_NO_MACROS
#include "openblas_api.h"

#include <pthread.h>
#include <stdio.h>

#include "dispatch/common/kmux_vendor_lib.h"

#ifndef KMUX_OB_LIBRARY
#define KMUX_OB_LIBRARY "libopenblas.so.0"
#endif

kmux_ob_api_table kmux_ob_api;

#define SYM(f)                                                                                     \
    { #f, offsetof(kmux_ob_api_table, f) }
static const kmux_vendor_sym syms[] = {
    SYM(cblas_sgemm),           SYM(cblas_dgemm),           SYM(openblas_get_config),
    SYM(openblas_get_corename), SYM(openblas_get_parallel), SYM(openblas_set_num_threads),
};
#undef SYM

static pthread_once_t once = PTHREAD_ONCE_INIT;
static int load_rc = -1;
static char load_why[512];

static void load_once(void) {
    load_rc = kmux_vendor_lib_load(KMUX_OB_LIBRARY, syms, sizeof syms / sizeof syms[0],
                                   &kmux_ob_api, load_why, sizeof load_why);
}

int kmux_ob_api_load(char *why, size_t why_size) {
    pthread_once(&once, load_once);
    if (load_rc != 0 && why && why_size) snprintf(why, why_size, "%s", load_why);
    return load_rc;
}
