/*
 * names.c - names of dtypes, compute types and statuses, and dtype sizes (kmux_common.h).
 * Switches without a default, so that -Wswitch flags a kmux.h enumerator missing here.
 */
#include "kmux_common.h"

const char *kmux_common_dtype_name(kmux_dtype t) {
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

size_t kmux_common_dtype_size(kmux_dtype t) {
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
