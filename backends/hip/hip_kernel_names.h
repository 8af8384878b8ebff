/*
 * hip_kernel_names.h - the mangled names of the kernels of kernels/gpu the HIP plugin launches
 * (anonymous-namespace templates on the kmux_dtype value, Itanium ABI), and the dtypes each is
 * instantiated for (the switches of kmux_gpu_cast.cu and kmux_gpu_amp.cu).
 */
#ifndef KMUX_HIP_KERNEL_NAMES_H
#define KMUX_HIP_KERNEL_NAMES_H

#include <stddef.h>
#include <stdio.h>

#include "kmux.h"

#define NAME_CAST "_ZN12_GLOBAL__N_111cast_kernelILi%dELi%dEEEvlPKvPviPKfPfi"
#define NAME_AMAX "_ZN12_GLOBAL__N_111amax_kernelILi%dEEEvlPKvPf"
#define NAME_UNSCALE "_ZN12_GLOBAL__N_114unscale_kernelILi%dEEEvlPvPKfPf"
#define NAME_LOSS_SCALE "_ZN12_GLOBAL__N_117loss_scale_kernelEPfPiPKfddl"
#define NAME_FP8_SCALE "_ZN12_GLOBAL__N_116fp8_scale_kernelEPKflddPf"

/* gemm_kernel<AT, BT, Acc, BM, BN, BK, TM, TN>(kmux_gpu_gemm_params): Acc 'd' (double), 'f'
 * (float) or 'i' (int32_t) */
#define NAME_GEMM                                                                                  \
    "_ZN12_GLOBAL__N_111gemm_kernelILi%dELi%dE%cLi%dELi%dELi%dELi%dELi%dEEEv20kmux_gpu_gemm_"      \
    "params"

/* The (A, B) pairs gemm_kernel is instantiated for (kmux_gpu_gemm.cu's launch()), and its tiles
 * (kmux_gpu_tile.cuh's KMUX_GPU_TILES: BM, BN, BK, TM, TN). */
static const kmux_dtype gemm_pairs[][2] = {
    {KMUX_F64, KMUX_F64},
    {KMUX_F32, KMUX_F32},
    {KMUX_F16, KMUX_F16},
    {KMUX_BF16, KMUX_BF16},
    {KMUX_I8, KMUX_I8},
    {KMUX_F8_E4M3, KMUX_F8_E4M3},
    {KMUX_F8_E4M3, KMUX_F8_E5M2},
    {KMUX_F8_E5M2, KMUX_F8_E4M3},
    {KMUX_F8_E5M2, KMUX_F8_E5M2},
    {KMUX_F8_E4M3_FNUZ, KMUX_F8_E4M3_FNUZ},
    {KMUX_F8_E4M3_FNUZ, KMUX_F8_E5M2_FNUZ},
    {KMUX_F8_E5M2_FNUZ, KMUX_F8_E4M3_FNUZ},
    {KMUX_F8_E5M2_FNUZ, KMUX_F8_E5M2_FNUZ},
};
#define NGEMM ((int)(sizeof gemm_pairs / sizeof gemm_pairs[0]))
static const int gemm_tiles[][5] = {{64, 64, 16, 4, 4}, {32, 32, 8, 2, 2}};
#define NGEMM_TILES 2
/** The mangled gemm_kernel name for pair (a, b) and tile into buf. */
static inline const char *kmux_hip_gemm_kernel_name(kmux_dtype a, kmux_dtype b, int tile, char *buf,
                                                    size_t size) {
    const int *t = gemm_tiles[tile];
    char acc = a == KMUX_F64 ? 'd' : a == KMUX_I8 ? 'i' : 'f';
    snprintf(buf, size, NAME_GEMM, (int)a, (int)b, acc, t[0], t[1], t[2], t[3], t[4]);
    return buf;
}

/* conv_kernel<T, Acc, D, BM, BN, BK, TM, TN>(kmux_gpu_conv_params), D the kmux_conv_direction */
#define NAME_CONV                                                                                  \
    "_ZN12_GLOBAL__N_111conv_kernelILi%dE%cLi%dELi%dELi%dELi%dELi%dELi%dEEEv20kmux_gpu_conv_"      \
    "params"
static const kmux_dtype conv_types[] = {KMUX_F64, KMUX_F32, KMUX_F16, KMUX_BF16};
#define NCONV 4
/** The mangled conv_kernel name for dtype t, direction dir and tile into buf. */
static inline const char *kmux_hip_conv_kernel_name(kmux_dtype t, int dir, int tile, char *buf,
                                                    size_t size) {
    const int *s = gemm_tiles[tile];
    snprintf(buf, size, NAME_CONV, (int)t, t == KMUX_F64 ? 'd' : 'f', dir, s[0], s[1], s[2], s[3],
             s[4]);
    return buf;
}

/* Floating dtypes the cast kernels are instantiated for (kmux_gpu_cast.cu's switches). */
static const kmux_dtype cast_types[] = {KMUX_F64,          KMUX_F32,         KMUX_F16,
                                        KMUX_BF16,         KMUX_F8_E4M3,     KMUX_F8_E5M2,
                                        KMUX_F8_E4M3_FNUZ, KMUX_F8_E5M2_FNUZ};
#define NCAST ((int)(sizeof cast_types / sizeof cast_types[0]))
static const kmux_dtype unscale_types[] = {KMUX_F64, KMUX_F32, KMUX_F16, KMUX_BF16};
#define NUNSCALE ((int)(sizeof unscale_types / sizeof unscale_types[0]))

/** Every name hip_kernels.c can launch, one per i = 0, 1, ... (NULL past the end), written to
 *  buf; for test_hip_kernel_names, which checks them against the gfx942 code object. */
const char *kmux_hip_kernel_name_at(int i, char *buf, size_t size);

#endif
