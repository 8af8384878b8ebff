/*
 * kmux_gpu_caps.h - what kmux's own GPU kernels (kernels/gpu) support, as the capability fields
 * of the plugin ABI (kmux_device_caps): written once for the CUDA and HIP plugins, whose
 * device_caps slots (cuda_caps.c, hip_props.c) add only what their vendor libraries change.
 * Host code only (C11); no CUDA or HIP header.
 */
#ifndef KMUX_GPU_CAPS_H
#define KMUX_GPU_CAPS_H

#include <limits.h>
#include <stdint.h>

#include "kmux_backend.h"

/** Fills caps->matmul but its type rows as the own GEMM kernel (kmux_gpu_gemm.cu) serves it:
 *  m, n, k and the batch count up to INT32_MAX (32-bit indexing), no element or ld limit, no
 * *  alignment, every epilogue. The caller ORs in caps->matmul.type_rows. */
static inline void kmux_gpu_matmul_caps(kmux_device_caps *caps) {
    kmux_op_caps *m = &caps->matmul;
    m->supported = 1;
    m->max_dim = INT32_MAX;
    m->max_batch = INT32_MAX;
    m->max_elements = 0;
    m->max_ld = 0;
    m->ptr_align = 1;
    m->epilogues = KMUX_EPILOGUE_KNOWN; /* the auxiliary and backward ones on the own kernel */
}

/** Fills caps->conv2d for the three directions (forward, backward-data, backward-weights) as the
 *  own implicit-GEMM kernel (kmux_gpu_conv.cu) serves them: any size up to INT_MAX per dimension
 *  and elements, NCHW and NHWC, asymmetric padding, groups, no alignment, and the rows of the
 *  convolution type table in `type_rows` (bit i: row i of kmux_rules_conv_table runs). */
static inline void kmux_gpu_conv2d_caps(kmux_device_caps *caps, uint64_t type_rows) {
    for (int dir = 0; dir < 3; dir++) {
        kmux_op_caps *c = &caps->conv2d[dir];
        c->supported = 1;
        c->max_dim = INT_MAX;
        c->max_elements = INT_MAX;
        c->ptr_align = 1;
        c->layouts = (1u << KMUX_NCHW) | (1u << KMUX_NHWC);
        c->asymmetric_padding = 1;
        c->groups = 1;
        c->type_rows = type_rows;
    }
}

#endif
