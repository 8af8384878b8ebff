/*
 * errors.c - the thread-local last-error message, version, and the public status and type names
 * (whose tables are kmux_common's, shared with the plugins).
 */
#include <stdio.h>
#include <string.h>

#include "internal.h"
#include "kmux_git_commit.h" /* generated at build time (cmake/KmuxGitCommit.cmake) */
#include "verbose.h"

static _Thread_local char tls_message[1024];

const char *kmux_status_str(kmux_status s) {
    return kmux_common_status_str(s);
}

const char *kmux_last_error(void) {
    return tls_message;
}

void kmux_clear_error(void) {
    kmux_trace_flush_error();
    tls_message[0] = '\0';
}

kmux_status kmux_set_error(kmux_status status, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(tls_message, sizeof tls_message, fmt, ap);
    va_end(ap);
    kmux_trace_error(status, tls_message);
    return status;
}

const char *kmux_version(void) {
    return KMUX_VERSION_STRING " (" KMUX_GIT_COMMIT ")";
}

const char *kmux_dtype_name(kmux_dtype t) {
    return kmux_common_dtype_name(t);
}

size_t kmux_dtype_size(kmux_dtype t) {
    return kmux_common_dtype_size(t);
}

const char *kmux_compute_type_name(kmux_compute_type t) {
    return kmux_common_compute_type_name(t);
}

kmux_dtype kmux_scale_type(kmux_compute_type ct) {
    if (ct == KMUX_COMPUTE_F64) return KMUX_F64;
    if (ct == KMUX_COMPUTE_I32) return KMUX_I32;
    return KMUX_F32;
}

int kmux_scalar_is_zero(const void *p, kmux_compute_type ct) {
    switch (kmux_scale_type(ct)) {
    case KMUX_F64:
        return *(const double *)p == 0.0;
    case KMUX_I32:
        return *(const int32_t *)p == 0;
    default:
        return *(const float *)p == 0.0f;
    }
}
