/*
 * kmux_gpu_eltwise_params.h - the argument struct of kmux_gpu_eltwise.cu's kernel, shared by host
 * C (backends/gpu/gpu_eltwise.c fills it for a module launch, the struct by value in
 * kernelParams) and device code, so that both agree on layout and values.
 */
#ifndef KMUX_GPU_ELTWISE_PARAMS_H
#define KMUX_GPU_ELTWISE_PARAMS_H

#include <stdint.h>

#include "kmux.h"

/** Arguments of kmux_gpu_eltwise_kernel: out[i] = f(x[i]) forward, out[i] = dd[i] * f'(x[i])
 *  backward (x: the saved src, or dst with use_dst), i < n, every tensor of dtype. */
typedef struct kmux_gpu_eltwise_params {
    int64_t n;
    const void *x, *dd; /* dd: diff_dst (backward only) */
    void *out;          /* dst forward, diff_src backward */
    int alg, prop, use_dst, dtype;
    float alpha, beta;
} kmux_gpu_eltwise_params;

/** The kernel's name: extern "C", so no mangled name to keep. */
#define KMUX_GPU_NAME_ELTWISE "kmux_gpu_eltwise_kernel"

#endif
