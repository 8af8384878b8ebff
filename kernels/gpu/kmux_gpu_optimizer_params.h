/*
 * kmux_gpu_optimizer_params.h - the argument struct of kmux_gpu_optimizer.cu's kernel, shared by
 * host C (backends/gpu/gpu_optimizer.c, a module launch with the struct by value) and device code.
 */
#ifndef KMUX_GPU_OPTIMIZER_PARAMS_H
#define KMUX_GPU_OPTIMIZER_PARAMS_H

#include <stdint.h>

#include "kmux.h"
#include "kmux_optimizer.h"

/** Arguments of kmux_gpu_optimizer_kernel (semantics: kmux_optimizer_execute). */
typedef struct kmux_gpu_optimizer_params {
    int64_t n;
    float *param, *state1, *state2; /* state1/state2 NULL when the step does not use them */
    const void *grad;
    void *copy;                          /* NULL: no copy */
    const float *grad_scale, *found_inf; /* NULL: none */
    int alg, grad_type, copy_type;
    kmux_opt_scalars sc;
} kmux_gpu_optimizer_params;

/** The kernel's name: extern "C", so no mangled name to keep. */
#define KMUX_GPU_NAME_OPTIMIZER "kmux_gpu_optimizer_kernel"

#endif
