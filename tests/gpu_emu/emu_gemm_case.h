/*
 * emu_gemm_case.h - one GEMM case of the emulated kernel tests: operands with poisoned padding,
 * ref's result as oracle, kmux_gpu_gemm run under every emulation setting and every tile, each
 * run compared with ref (conformance tolerance) and bit for bit with the first run.
 */
#ifndef KMUX_EMU_GEMM_CASE_H
#define KMUX_EMU_GEMM_CASE_H

#include "kmux.h"

typedef struct emu_gemm_case {
    kmux_matmul_desc d;
    double alpha, beta;              /* host scalars (integers for I32 compute) */
    float a_scale, b_scale, d_scale; /* 0 = not passed */
    int amax;                        /* pass amax_d */
    int null_ab;                     /* pass NULL A and B (k == 0 or alpha == 0) */
    int c_poison;                    /* C holds NaN (beta == 0 must not read it) */
    int max_yz;                      /* grid y/z cap of the launch (0 = 65535) */
    int tiles;                       /* 0: every tile in the first and last setting, else 1 */
} emu_gemm_case;

/** A case with the layout of (order, transa, transb, m, n, k), leading dimensions padded by pad,
 *  one batch matrix, alpha 1, beta 0. */
emu_gemm_case emu_gemm_case_make(kmux_dtype a, kmux_dtype b, kmux_dtype c, kmux_compute_type ct,
                                 kmux_order o, kmux_transpose ta, kmux_transpose tb, int64_t m,
                                 int64_t n, int64_t k, int64_t pad);

/** Runs the case (asserts). tag names it in messages. */
void emu_gemm_run(const emu_gemm_case *gc, const char *tag);

#endif
