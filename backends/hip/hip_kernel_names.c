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
    i -= 2;
    if (i < NGEMM * NGEMM_TILES)
        return kmux_hip_gemm_kernel_name(gemm_pairs[i / NGEMM_TILES][0],
                                         gemm_pairs[i / NGEMM_TILES][1], i % NGEMM_TILES, buf,
                                         size);
    i -= NGEMM * NGEMM_TILES;
    if (i < NCONV * 3 * NGEMM_TILES)
        return kmux_hip_conv_kernel_name(conv_types[i / (3 * NGEMM_TILES)], i / NGEMM_TILES % 3 + 1,
                                         i % NGEMM_TILES, buf, size);
    return NULL;
}
