/*
 * cuda_impl_order.h - which implementations a CUDA plan offers, in which order, and which one a
 * call runs: the vendor library's (cuBLASLt for matmul, cuDNN for convolution) and kmux's own
 * kernels of kernels/gpu (kmux_gpu_gemm, kmux_gpu_conv2d, one implementation per tile). Pure host
 * decisions, free of CUDA headers, so that tests/test_cuda_host.c checks them without a GPU.
 *
 * The rule: the library first where it runs the problem (cuDNN through a zero-padded copy for
 * asymmetric padding too: still at cuDNN's speed); kmux's own kernel first (the default) where
 * the library refuses it: no cuBLASLt candidate (FNUZ fp8 on NVIDIA, fp8 before sm_89, e5m2 x
 * e5m2, a workspace cap), no cuDNN algorithm, and at execution a call that no cuBLASLt
 * implementation of the plan serves (its pointers' alignment, a configuration the plan lacks,
 * a_scale/b_scale on non-fp8 inputs).
 */
#ifndef KMUX_CUDA_IMPL_ORDER_H
#define KMUX_CUDA_IMPL_ORDER_H

#include "cuda_host_logic.h"
#include "kmux.h"

/** kmux_cuda_impl_key.cfg of an implementation that runs kmux's own GEMM kernel (not a cuBLASLt
 *  configuration: kmux_cuda_pick_impl never picks it). */
#define KMUX_CUDA_CFG_OWN (-1)

/** 1 when kmux's own GEMM kernel runs the legal description d (every row of the type table:
 *  equal inputs among f64, f32, f16, bf16 and i8, or two fp8 formats of one family, decoded in
 *  software, so FNUZ runs on NVIDIA too). */
int kmux_cuda_own_gemm_runs(const kmux_matmul_desc *d);
/** 1 when kmux's own convolution kernel runs d: x, w and y of one type among f64, f32, f16 and
 *  bf16 (every direction, layout, stride, dilation, group count and padding). */
int kmux_cuda_own_conv_runs(const kmux_conv2d_desc *d);

/** Order of a plan's implementations. */
typedef enum kmux_cuda_impl_order {
    KMUX_CUDA_ORDER_NONE = 0,      /**< neither runs it: the plan is refused */
    KMUX_CUDA_ORDER_LIB_ONLY = 1,  /**< the library's only */
    KMUX_CUDA_ORDER_LIB_FIRST = 2, /**< the library's (the default), then kmux's own */
    KMUX_CUDA_ORDER_OWN_FIRST = 3, /**< kmux's own (the default), then the library's */
    KMUX_CUDA_ORDER_OWN_ONLY = 4   /**< kmux's own only */
} kmux_cuda_impl_order;
/** lib_count: implementations the library offered for the problem; lib_native: 1 when it runs
 *  the problem as given, 0 when only through a workaround (asymmetric padding through a padded
 *  copy); own_runs: kmux_cuda_own_*_runs. */
kmux_cuda_impl_order kmux_cuda_order_of(int lib_count, int lib_native, int own_runs);

/** Rows m and columns n of the implicit GEMM of convolution d (kmux_gpu_conv.cu: FWD N*P*Q x
 *  K/groups, BWD_DATA N*H*W x C/groups, BWD_WEIGHTS K/groups x C/groups*R*S), for the tile
 *  choice. */
void kmux_cuda_conv_gemm_mn(const kmux_conv2d_desc *d, int64_t *m, int64_t *n);

/** The tiles (0 .. tile_count-1) of the own-kernel implementations, in order: `preferred`
 *  (kmux_gpu_pick_tile's) first, then the others ascending. Returns how many (tile_count, at
 *  most 8). */
int kmux_cuda_own_tiles(int preferred, int tile_count, int out[8]);

/** The implementation a matmul call runs. keys/n: the plan's; requested: the core's current
 *  index; lib_run: for a cuBLASLt `requested`, the cuBLASLt implementation that serves the call
 *  (kmux_cuda_pick_impl), or -1 when none does. Returns `requested` when it is an own kernel,
 *  lib_run when >= 0, else the plan's first own-kernel implementation, else -1 (refused). */
int kmux_cuda_run_choice(const kmux_cuda_impl_key *keys, int n, int requested, int lib_run);

#endif
