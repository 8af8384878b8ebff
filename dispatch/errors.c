/*
 * errors.c - status names, the thread-local last-error message, version and type names.
 */
#include <stdio.h>
#include <string.h>

#include "internal.h"

static _Thread_local char tls_message[1024];

const char *kmux_status_str(kmux_status s) {
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

const char *kmux_last_error(void) {
    return tls_message;
}

void kmux_clear_error(void) {
    tls_message[0] = '\0';
}

kmux_status kmux_set_error(kmux_status status, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(tls_message, sizeof tls_message, fmt, ap);
    va_end(ap);
    if (kmux_verbose_level() >= 2)
        kmux_trace(2, "error,%s,%s", kmux_status_str(status), tls_message);
    return status;
}

const char *kmux_version(void) {
    return KMUX_VERSION_STRING " (" KMUX_GIT_COMMIT ")";
}

const char *kmux_dtype_name(kmux_dtype t) {
    switch (t) {
    case KMUX_F64:
        return "f64";
    case KMUX_F32:
        return "f32";
    case KMUX_F16:
        return "f16";
    case KMUX_BF16:
        return "bf16";
    case KMUX_F8_E4M3:
        return "e4m3";
    case KMUX_F8_E5M2:
        return "e5m2";
    case KMUX_F8_E4M3_FNUZ:
        return "e4m3fnuz";
    case KMUX_F8_E5M2_FNUZ:
        return "e5m2fnuz";
    case KMUX_I8:
        return "i8";
    case KMUX_I32:
        return "i32";
    }
    return "?";
}

size_t kmux_dtype_size(kmux_dtype t) {
    switch (t) {
    case KMUX_F64:
        return 8;
    case KMUX_F32:
    case KMUX_I32:
        return 4;
    case KMUX_F16:
    case KMUX_BF16:
        return 2;
    case KMUX_F8_E4M3:
    case KMUX_F8_E5M2:
    case KMUX_F8_E4M3_FNUZ:
    case KMUX_F8_E5M2_FNUZ:
    case KMUX_I8:
        return 1;
    }
    return 0;
}

const char *kmux_compute_type_name(kmux_compute_type t) {
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
