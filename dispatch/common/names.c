/*
 * names.c - names of dtypes, compute types and statuses, and dtype sizes (kmux_common.h).
 * Switches without a default, so that -Wswitch flags a kmux.h enumerator missing here (for
 * dtypes: missing from KMUX_DTYPE_TABLE, whose rows expand into the cases).
 */
#include "kmux_common.h"

#include <string.h>

#include "kmux_dtype_desc.h"

/* Names and sizes are columns of THE dtype table (kmux_dtype_desc.h). */
#define NAME_CASE(id, nm, by, ...)                                                                 \
    case id:                                                                                       \
        return nm;
#define SIZE_CASE(id, nm, by, ...)                                                                 \
    case id:                                                                                       \
        return by;

const char *kmux_common_dtype_name(kmux_dtype t) {
    switch (t) { KMUX_DTYPE_TABLE(NAME_CASE) }
    return "?";
}

size_t kmux_common_dtype_size(kmux_dtype t) {
    switch (t) { KMUX_DTYPE_TABLE(SIZE_CASE) }
    return 0;
}

const char *kmux_common_compute_type_name(kmux_compute_type t) {
    switch (t) {
    case KMUX_COMPUTE_F64:
        return "f64";
    case KMUX_COMPUTE_F32:
        return "f32";
    case KMUX_COMPUTE_F32_FAST_TF32:
        return "f32_fast_tf32";
    case KMUX_COMPUTE_F32_FAST_BF16:
        return "f32_fast_bf16";
    case KMUX_COMPUTE_F16:
        return "f16";
    case KMUX_COMPUTE_I32:
        return "i32";
    }
    return "?";
}

const char *kmux_common_status_str(kmux_status s) {
    switch (s) {
    case KMUX_OK:
        return "KMUX_OK";
    case KMUX_ERR_INVALID_ARGUMENT:
        return "KMUX_ERR_INVALID_ARGUMENT";
    case KMUX_ERR_NOT_FOUND:
        return "KMUX_ERR_NOT_FOUND";
    case KMUX_ERR_UNSUPPORTED:
        return "KMUX_ERR_UNSUPPORTED";
    case KMUX_ERR_LAST_IMPL:
        return "KMUX_ERR_LAST_IMPL";
    case KMUX_ERR_OUT_OF_MEMORY:
        return "KMUX_ERR_OUT_OF_MEMORY";
    case KMUX_ERR_WORKSPACE:
        return "KMUX_ERR_WORKSPACE";
    case KMUX_ERR_DEVICE:
        return "KMUX_ERR_DEVICE";
    case KMUX_ERR_DEVICE_UNAVAILABLE:
        return "KMUX_ERR_DEVICE_UNAVAILABLE";
    case KMUX_ERR_BACKEND_LOAD:
        return "KMUX_ERR_BACKEND_LOAD";
    case KMUX_ERR_ABI_MISMATCH:
        return "KMUX_ERR_ABI_MISMATCH";
    case KMUX_ERR_INTERNAL:
        return "KMUX_ERR_INTERNAL";
    }
    return "KMUX_STATUS_UNKNOWN";
}

int kmux_common_name_listed(const char *list, const char *name) {
    if (!list) return 1;
    size_t n = strlen(name);
    for (const char *p = list; *p;) {
        const char *end = strchr(p, ',');
        size_t len = end ? (size_t)(end - p) : strlen(p);
        if (len == n && strncmp(p, name, n) == 0) return 1;
        if (!end) break;
        p = end + 1;
    }
    return 0;
}
