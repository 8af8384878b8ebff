/*
 * hip_kernel_names.h - the mangled names of the kernels of kernels/gpu the HIP plugin launches
 * (anonymous-namespace templates on the kmux_dtype value, Itanium ABI), and the dtypes each is
 * instantiated for (the switches of kmux_gpu_cast.cu and kmux_gpu_amp.cu).
 */
#ifndef KMUX_HIP_KERNEL_NAMES_H
#define KMUX_HIP_KERNEL_NAMES_H

#include <stddef.h>

#include "kmux.h"

#define NAME_CAST "_ZN12_GLOBAL__N_111cast_kernelILi%dELi%dEEEvlPKvPviPKfPfi"
#define NAME_AMAX "_ZN12_GLOBAL__N_111amax_kernelILi%dEEEvlPKvPf"
#define NAME_UNSCALE "_ZN12_GLOBAL__N_114unscale_kernelILi%dEEEvlPvPKfPf"
#define NAME_LOSS_SCALE "_ZN12_GLOBAL__N_117loss_scale_kernelEPfPiPKfddl"
#define NAME_FP8_SCALE "_ZN12_GLOBAL__N_116fp8_scale_kernelEPKflddPf"

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
