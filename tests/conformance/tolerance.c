/*
 * tolerance.c - precision figures of storage and compute types, from which the error bounds of
 * compare.c are built. Storage types read THE dtype table (significand width, bias, range);
 * compute types are not storage formats and are described here.
 */
#include "conformance.h"

double cf_unit_roundoff(kmux_dtype t) {
    return kmux_dtype_is_float(t) ? kmux_dtype_desc_of(t).epsilon / 2 : 0;
}

double cf_min_subnormal(kmux_dtype t) {
    const kmux_dtype_desc f = kmux_dtype_desc_of(t);
    return kmux_dtype_is_float(t) ? ldexp(1.0, 1 - f.bias - f.mbits) : 0;
}

double cf_exact_int_limit(kmux_dtype t) {
    const kmux_dtype_desc f = kmux_dtype_desc_of(t);
    if (kmux_dtype_is_int(t)) return f.max_finite;
    return kmux_dtype_is_float(t) ? ldexp(1.0, f.mbits + 1) : 0;
}

double cf_compute_roundoff(kmux_compute_type c) {
    switch (c) {
    case KMUX_COMPUTE_F64:
        return ldexp(1.0, -53);
    case KMUX_COMPUTE_F32:
        return ldexp(1.0, -24);
    case KMUX_COMPUTE_F32_FAST_TF32:
        return ldexp(1.0, -10);
    case KMUX_COMPUTE_F32_FAST_BF16:
        return ldexp(1.0, -20);
    case KMUX_COMPUTE_F16:
        return ldexp(1.0, -11);
    case KMUX_COMPUTE_I32:
        return 0;
    }
    return 1;
}

double cf_compute_int_limit(kmux_compute_type c) {
    switch (c) {
    case KMUX_COMPUTE_F64:
        return ldexp(1.0, 53);
    case KMUX_COMPUTE_F16:
        return 2048;
    case KMUX_COMPUTE_I32:
        return 2147483647.0;
    default:
        return ldexp(1.0, 24);
    }
}

int cf_compute_ok(kmux_compute_type requested, kmux_compute_type effective) {
    switch (requested) {
    case KMUX_COMPUTE_F64:
        return effective == KMUX_COMPUTE_F64;
    case KMUX_COMPUTE_F32:
        return effective == KMUX_COMPUTE_F32 || effective == KMUX_COMPUTE_F64;
    case KMUX_COMPUTE_F32_FAST_TF32:
    case KMUX_COMPUTE_F32_FAST_BF16:
        return effective == requested || effective == KMUX_COMPUTE_F32 ||
               effective == KMUX_COMPUTE_F64;
    case KMUX_COMPUTE_F16:
        return effective == KMUX_COMPUTE_F16 || effective == KMUX_COMPUTE_F32 ||
               effective == KMUX_COMPUTE_F64;
    case KMUX_COMPUTE_I32:
        return effective == KMUX_COMPUTE_I32;
    }
    return 0;
}
