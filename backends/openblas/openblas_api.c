/*
 * openblas_api.c - fills the OpenBLAS entry-point table (openblas_api.h) from the OpenBLAS this
 * plugin opens itself.
 */
#define KMUX_OB_API_NO_MACROS
#include "openblas_api.h"

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

static kmux_vendor_lib_once once = KMUX_VENDOR_LIB_ONCE_INIT;

int kmux_ob_api_load(char *why, size_t why_size) {
    return kmux_vendor_lib_load_once(&once, KMUX_OB_LIBRARY, syms, sizeof syms / sizeof syms[0],
                                     &kmux_ob_api, why, why_size);
}
