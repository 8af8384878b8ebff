/*
 * gpu_kernel_names.h - the kernels of kernels/gpu as a module launcher sees them (HIP:
 * hipModuleLaunchKernel, CUDA: cuLaunchKernel on the embedded images): which module (source) each
 * lives in, its Itanium-mangled name, and the dtypes and tiles each template is instantiated for
 * (the switches of kernels/gpu/kmux_gpu_*.cu). The kernels live in namespace kmux_gpu_k (named,
 * not anonymous: nvcc mangles an anonymous namespace with a per-file hash) and are templates on
 * the kmux_dtype value. test_hip_kernel_names prints every name kmux_gpu_host_kernel_name_at
 * gives, and test_hip_bundle checks each against the symbols of the HIP plugin's code objects, so
 * a changed kernel signature fails CI instead of a launch. No vendor call here.
 */
#ifndef KMUX_GPU_KERNEL_NAMES_H
#define KMUX_GPU_KERNEL_NAMES_H

#include <stddef.h>
#include <stdint.h>

#include "kmux.h"

/** The modules of the GPU plugins: one per kernels/gpu source, in this order. */
typedef enum {
    KMUX_GPU_MOD_CAST,      /* kmux_gpu_cast.cu */
    KMUX_GPU_MOD_AMP,       /* kmux_gpu_amp.cu */
    KMUX_GPU_MOD_GEMM,      /* kmux_gpu_gemm.cu */
    KMUX_GPU_MOD_CONV,      /* kmux_gpu_conv.cu */
    KMUX_GPU_MOD_POST,      /* kmux_gpu_post.cu */
    KMUX_GPU_MOD_ELTWISE,   /* kmux_gpu_eltwise.cu */
    KMUX_GPU_MOD_OPTIMIZER, /* kmux_gpu_optimizer.cu */
    KMUX_GPU_MOD_SOFTMAX,   /* kmux_gpu_softmax.cu */
    KMUX_GPU_MOD_BINARY,    /* kmux_gpu_binary.cu */
    KMUX_GPU_MOD_REDUCTION, /* kmux_gpu_reduction.cu */
    KMUX_GPU_MOD_POOLING,   /* kmux_gpu_pooling.cu */
    KMUX_GPU_MOD_COUNT
} kmux_gpu_module_id;

/** "cast", "amp", "gemm", "conv", "post", "eltwise", "optimizer": the
 *  module's source is
 * kernels/gpu/kmux_gpu_<name>.cu;
 *  "?" for an id out of range. */
const char *kmux_gpu_module_name(kmux_gpu_module_id id);

/* cast_kernel<S, D>(int64_t, const void *, void *, int, const float *, float *, int) */
#define KMUX_GPU_NAME_CAST "_ZN10kmux_gpu_k11cast_kernelILi%dELi%dEEEvlPKvPviPKfPfi"
/* amax_kernel<S>(int64_t, const void *, float *) */
#define KMUX_GPU_NAME_AMAX "_ZN10kmux_gpu_k11amax_kernelILi%dEEEvlPKvPf"
/* unscale_kernel<T>(int64_t, void *, const float *, float *) */
#define KMUX_GPU_NAME_UNSCALE "_ZN10kmux_gpu_k14unscale_kernelILi%dEEEvlPvPKfPf"
/* loss_scale_kernel(float *, int32_t *, const float *, double, double, int64_t) */
#define KMUX_GPU_NAME_LOSS_SCALE "_ZN10kmux_gpu_k17loss_scale_kernelEPfPiPKfddl"
/* fp8_scale_kernel(const float *, int64_t, double, double, float *) */
#define KMUX_GPU_NAME_FP8_SCALE "_ZN10kmux_gpu_k16fp8_scale_kernelEPKflddPf"
/* gemm_kernel<AT, BT, Acc, BM, BN, BK, TM, TN>(kmux_gpu_gemm_params): Acc 'd' (double), 'f'
 * (float) or 'i' (int32_t) */
#define KMUX_GPU_NAME_GEMM                                                                         \
    "_ZN10kmux_gpu_k11gemm_kernelILi%dELi%dE%cLi%dELi%dELi%dELi%dELi%dEEEv20kmux_gpu_gemm_params"
/* conv_kernel<T, Acc, D, BM, BN, BK, TM, TN>(kmux_gpu_conv_params), D the kmux_conv_direction */
#define KMUX_GPU_NAME_CONV                                                                         \
    "_ZN10kmux_gpu_k11conv_kernelILi%dE%cLi%dELi%dELi%dELi%dELi%dELi%dEEEv20kmux_gpu_conv_params"
/* post_kernel<double> / post_kernel<float>(kmux_gpu_post_args) */
#define KMUX_GPU_NAME_POST_F64 "_ZN10kmux_gpu_k11post_kernelIdEEv18kmux_gpu_post_args"
#define KMUX_GPU_NAME_POST_F32 "_ZN10kmux_gpu_k11post_kernelIfEEv18kmux_gpu_post_args"
/* post_kernel_i32(kmux_gpu_post_args) */
#define KMUX_GPU_NAME_POST_I32 "_ZN10kmux_gpu_k15post_kernel_i32E18kmux_gpu_post_args"
/* pack_bytes_kernel(const uint8_t *, int64_t x 5, uint8_t *, int64_t x 3) */
#define KMUX_GPU_NAME_PACK_BYTES "_ZN10kmux_gpu_k17pack_bytes_kernelEPKhlllllPhlll"

/** One tile configuration of KMUX_GPU_TILES (kernels/gpu/kmux_gpu_tile.cuh). */
typedef struct kmux_gpu_host_tile_shape {
    int bm, bn, bk, tm, tn;
} kmux_gpu_host_tile_shape;

/** Number of tile configurations (KMUX_GPU_TILE_COUNT of kmux_gpu_kernels.h). */
int kmux_gpu_host_tile_count(void);
/** Shape of tile `tile` (0 .. count-1), NULL for an unknown tile. */
const kmux_gpu_host_tile_shape *kmux_gpu_host_tile_at(int tile);
/** Threads per block of the tiled kernels (every tile: (BM / TM) * (BN / TN) = 256). */
unsigned kmux_gpu_host_tile_threads(int tile);

/** 1 when cast_kernel and amax_kernel are instantiated for dtype t (the floating dtypes). */
int kmux_gpu_host_cast_type(kmux_dtype t);
/** The dtypes the mixed-precision slots run, as the mask of kmux_device_caps.amp_dtypes (bit t
 *  for dtype t): those the cast kernels are instantiated for (f64, f32, f16, bf16 and the four
 *  fp8 formats, OCP and FNUZ, converted in software on every architecture). */
uint32_t kmux_gpu_host_amp_dtypes(void);
/** 1 when unscale_kernel is instantiated for dtype t (f64, f32, f16, bf16). */
int kmux_gpu_host_unscale_type(kmux_dtype t);
/** 1 when gemm_kernel is instantiated for inputs (a, b) (kmux_gpu_gemm.cu's launch()). */
int kmux_gpu_host_gemm_has_kernel(kmux_dtype a, kmux_dtype b);
/** 1 when conv_kernel is instantiated for dtype t (x, w and y of one dtype: f64, f32, f16,
 *  bf16). */
int kmux_gpu_host_conv_type(kmux_dtype t);

/** The mangled name of gemm_kernel for inputs (a, b) and tile into buf (buf; NULL for an unknown
 *  tile). The pair is not checked: see kmux_gpu_host_gemm_has_kernel. */
const char *kmux_gpu_host_gemm_kernel_name(kmux_dtype a, kmux_dtype b, int tile, char *buf,
                                           size_t size);
/** The mangled name of conv_kernel for dtype t, direction dir (kmux_conv_direction) and tile
 *  into buf (buf; NULL for an unknown tile). */
const char *kmux_gpu_host_conv_kernel_name(kmux_dtype t, int dir, int tile, char *buf, size_t size);

/** Every kernel name the module launchers of backends/gpu can launch, one per i = 0, 1, ...
 *  (NULL past the end), written to buf: the cast, amp, GEMM and convolution kernels, then the
 *  post and pack-bytes kernels (kmux_gpu_post.cu), the element-wise and optimizer families' one
 *  kernel each (kmux_gpu_eltwise.cu, kmux_gpu_optimizer.cu). */
const char *kmux_gpu_host_kernel_name_at(int i, char *buf, size_t size);

#endif
