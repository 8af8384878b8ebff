/*
 * compat.c - structs from callers compiled against an older kmux.h: a struct_size smaller than
 * today's sizeof is accepted as long as it holds the struct's required fields; the fields beyond
 * it take the defaults of the struct's _INIT macro (as kmux_context_options always did). Every
 * public entry point resolves its structs here first, so the rest of the core (and every
 * backend) only ever sees full, current structs.
 */
#include <stdio.h>
#include <string.h>

#include "internal.h"

/* Copies the caller's first `given` bytes over `dflt` (today's full struct with its defaults)
 * after checking that they hold the first `required` bytes. */
static kmux_status resolve(const char *fn, const char *what, const char *init, const void *in,
                           size_t given, size_t required, void *dflt, size_t full) {
    if (given < required)
        return kmux_set_error(KMUX_ERR_INVALID_ARGUMENT,
                              "%s: %s->struct_size = %zu is too small: its required fields need "
                              "%zu bytes (initialise it with %s)",
                              fn, what, given, required, init);
    memcpy(dflt, in, given < full ? given : full);
    *(size_t *)dflt = full; /* struct_size is the first member of every such struct */
    return KMUX_OK;
}

#define END_OF(type, field) (offsetof(type, field) + sizeof(((type *)0)->field))

kmux_status kmux_resolve_matmul_desc(const char *fn, const kmux_matmul_desc *in,
                                     kmux_matmul_desc *out) {
    const kmux_matmul_desc d = KMUX_MATMUL_DESC_INIT;
    *out = d;
    return resolve(fn, "desc", "KMUX_MATMUL_DESC_INIT", in, in->struct_size,
                   END_OF(kmux_matmul_desc, compute_type), out, sizeof *out);
}

kmux_status kmux_resolve_matmul_args(const char *fn, const kmux_matmul_args *in,
                                     kmux_matmul_args *out) {
    const kmux_matmul_args a = KMUX_MATMUL_ARGS_INIT;
    *out = a;
    return resolve(fn, "args", "KMUX_MATMUL_ARGS_INIT", in, in->struct_size,
                   END_OF(kmux_matmul_args, C), out, sizeof *out);
}

kmux_status kmux_resolve_conv_desc(const char *fn, const kmux_conv2d_desc *in,
                                   kmux_conv2d_desc *out) {
    const kmux_conv2d_desc d = KMUX_CONV2D_DESC_INIT;
    *out = d;
    return resolve(fn, "desc", "KMUX_CONV2D_DESC_INIT", in, in->struct_size,
                   END_OF(kmux_conv2d_desc, compute_type), out, sizeof *out);
}

kmux_status kmux_resolve_conv_args(const char *fn, const kmux_conv2d_args *in,
                                   kmux_conv2d_args *out) {
    const kmux_conv2d_args a = KMUX_CONV2D_ARGS_INIT;
    *out = a;
    return resolve(fn, "args", "KMUX_CONV2D_ARGS_INIT", in, in->struct_size,
                   END_OF(kmux_conv2d_args, y), out, sizeof *out);
}

kmux_status kmux_resolve_plan_prefs(const char *fn, const kmux_plan_prefs *in,
                                    kmux_plan_prefs *out) {
    const kmux_plan_prefs p = KMUX_PLAN_PREFS_INIT;
    *out = p;
    if (!in) return KMUX_OK;
    return resolve(fn, "prefs", "KMUX_PLAN_PREFS_INIT", in, in->struct_size,
                   END_OF(kmux_plan_prefs, max_workspace_bytes), out, sizeof *out);
}

kmux_status kmux_resolve_cast_options(const char *fn, const kmux_cast_options *in,
                                      kmux_cast_options *out) {
    const kmux_cast_options o = KMUX_CAST_OPTIONS_INIT;
    *out = o;
    if (!in) return KMUX_OK;
    return resolve(fn, "opts", "KMUX_CAST_OPTIONS_INIT", in, in->struct_size,
                   END_OF(kmux_cast_options, saturate), out, sizeof *out);
}
