/*
 * hip_kernel_names.c - the list of kernel names of hip_kernel_names.h (no HIP calls: the name
 * test links this file alone).
 */
#include <stdio.h>

#include "hip_kernel_names.h"

const char *kmux_hip_kernel_name_at(int i, char *buf, size_t size) {
    if (i < NCAST * NCAST) {
        snprintf(buf, size, NAME_CAST, (int)cast_types[i / NCAST], (int)cast_types[i % NCAST]);
        return buf;
    }
    i -= NCAST * NCAST;
    if (i < NCAST) {
        snprintf(buf, size, NAME_AMAX, (int)cast_types[i]);
        return buf;
    }
    i -= NCAST;
    if (i < NUNSCALE) {
        snprintf(buf, size, NAME_UNSCALE, (int)unscale_types[i]);
        return buf;
    }
    i -= NUNSCALE;
    if (i == 0) return snprintf(buf, size, NAME_LOSS_SCALE), buf;
    if (i == 1) return snprintf(buf, size, NAME_FP8_SCALE), buf;
    return NULL;
}
