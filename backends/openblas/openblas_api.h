/*
 * openblas_api.h - the OpenBLAS entry points this plugin calls, resolved from the OpenBLAS it
 * opened (kmux_vendor_lib.h says why: a cblas_sgemm elsewhere in the process must never be
 * called in OpenBLAS's place). Include it after <cblas.h> in every file of the plugin that calls
 * OpenBLAS: the macros below redirect the usual names (cblas_sgemm(...)) through the table, so
 * call sites read as plain CBLAS. The plugin does not link OpenBLAS (-Wl,--no-undefined catches
 * a call that bypasses the table).
 */
#ifndef KMUX_OPENBLAS_API_H
#define KMUX_OPENBLAS_API_H

#include <cblas.h>
#include <stddef.h>

/** The table; every field has the type of the function of the same name in <cblas.h>. */
typedef struct kmux_ob_api_table {
    __typeof__(&cblas_sgemm) cblas_sgemm;
    __typeof__(&cblas_dgemm) cblas_dgemm;
    __typeof__(&openblas_get_config) openblas_get_config;
    __typeof__(&openblas_get_corename) openblas_get_corename;
    __typeof__(&openblas_get_parallel) openblas_get_parallel;
    __typeof__(&openblas_set_num_threads) openblas_set_num_threads;
} kmux_ob_api_table;

/** Filled once by kmux_ob_api_load; read-only afterwards. */
extern kmux_ob_api_table kmux_ob_api;

/** Opens OpenBLAS (KMUX_OB_LIBRARY, the SONAME of the OpenBLAS found at build time) and fills
 *  kmux_ob_api, once per process (thread-safe). Returns 0, or -1 with the library name and the
 *  reason in why (e.g. "cannot open libopenblas.so.0: ...: No such file or directory"). */
int kmux_ob_api_load(char *why, size_t why_size);

#ifndef KMUX_OB_API_NO_MACROS
#define cblas_sgemm (kmux_ob_api.cblas_sgemm)
#define cblas_dgemm (kmux_ob_api.cblas_dgemm)
#define openblas_get_config (kmux_ob_api.openblas_get_config)
#define openblas_get_corename (kmux_ob_api.openblas_get_corename)
#define openblas_get_parallel (kmux_ob_api.openblas_get_parallel)
#define openblas_set_num_threads (kmux_ob_api.openblas_set_num_threads)
#endif

#endif
