/*
 * hip_conv.c - convolution plans of the HIP backend on kmux's own implicit-GEMM kernel
 * (kernels/gpu/kmux_gpu_conv.cu, conv_kernel): FWD, BWD_DATA, BWD_WEIGHTS, NCHW/KCRS and
 * NHWC/KRSC, stride, dilation, groups (depthwise included), asymmetric padding; x, w and y of one
 * dtype among f64, f32, f16, bf16 (accumulation f64 for f64, f32 otherwise). Launched by its
 * mangled name from the embedded code object with hipModuleLaunchKernel, the argument struct
 * (kmux_gpu_conv_params.h, shared with the device code) by value in kernelParams. One
 * implementation per plan (MIOpen is not opened: TODO), named by the kernel and its tile.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dispatch/common/kmux_dtype_desc.h"
#include "hip_backend.h"
#include "hip_kernel_names.h"
#include "kmux_gpu_conv_params.h"
#include "kmux_gpu_gemm_params.h"

#define CONV_THREADS 256
#define MAX_GRID_YZ 65535

typedef struct hip_conv_plan {
    kmux_conv2d_desc d;
    int tile;
    char name[128];
} hip_conv_plan;

static const char *dir_name(kmux_conv_direction d) {
    return d == KMUX_CONV_FWD ? "fwd" : d == KMUX_CONV_BWD_DATA ? "bwd_data" : "bwd_weights";
}

static kmux_status conv_plan_create(void *state, int device, const kmux_conv2d_desc *desc,
                                    const kmux_plan_prefs *prefs, void **plan, int *impl_count) {
    (void)prefs; /* one deterministic implementation: every preference is met */
    kmux_hip_state *st = state;
    const kmux_hip_device *dv = &st->devices[device];
    const kmux_dtype t = desc->x_type;
    if (desc->w_type != t || desc->y_type != t ||
        (t != KMUX_F64 && t != KMUX_F32 && t != KMUX_F16 && t != KMUX_BF16))
        return st->host->set_error(KMUX_ERR_UNSUPPORTED,
                                   "hip: kmux_conv2d_plan_create on hip:%d (%s): kmux-gpu:conv2d "
                                   "runs x, w and y of one dtype among f64, f32, f16 and bf16 "
                                   "(got x %s, w %s, y %s); MIOpen is not used",
                                   device, dv->arch, kmux_dtype_desc_of(t).name,
                                   kmux_dtype_desc_of(desc->w_type).name,
                                   kmux_dtype_desc_of(desc->y_type).name);
    hip_conv_plan *p = calloc(1, sizeof *p);
    if (!p) return st->host->set_error(KMUX_ERR_OUT_OF_MEMORY, "hip: conv plan: out of memory");
    p->d = *desc;
    /* the tile of kmux_gpu_pick_tile for the implicit GEMM's m x n */
    kmux_gpu_conv_params q;
    memset(&q, 0, sizeof q);
    kmux_conv2d_args none;
    memset(&none, 0, sizeof none);
    const double one = 1.0;
    none.alpha = none.beta = &one; /* read as float or double: only the sizes are used here */
    kmux_gpu_conv_params_fill(&q, desc, &none);
    int64_t gm, gn, gk;
    kmux_gpu_conv_gemm_dims(&q, desc->direction, &gm, &gn, &gk);
    p->tile = gm * gn >= (int64_t)64 * 64 * 16 ? 0 : 1;
    const int *s = gemm_tiles[p->tile];
    snprintf(p->name, sizeof p->name, "kmux-gpu:conv2d:%s:%s:%s:acc=%s:tile=%dx%dx%d/%dx%d",
             dir_name(desc->direction), desc->layout == KMUX_NHWC ? "nhwc" : "nchw",
             kmux_dtype_desc_of(t).name, t == KMUX_F64 ? "f64" : "f32", s[0], s[1], s[2], s[3],
             s[4]);
    *plan = p;
    *impl_count = 1;
    return KMUX_OK;
}

static kmux_status conv_execute(void *state, const void *plan, int impl, void *stream,
                                const kmux_conv2d_args *args) {
    (void)impl;
    kmux_hip_state *st = state;
    const hip_conv_plan *p = plan;
    const kmux_hip_stream_t *s = stream;
    const kmux_conv2d_desc *d = &p->d;
    kmux_gpu_conv_params q;
    memset(&q, 0, sizeof q);
    kmux_gpu_conv_params_fill(&q, d, args);
    int64_t gm, gn, gk;
    kmux_gpu_conv_gemm_dims(&q, d->direction, &gm, &gn, &gk);
    if (gm == 0 || gn == 0 || q.groups == 0) return KMUX_OK; /* an empty output */
    const int *t = gemm_tiles[p->tile];
    const int64_t gx = (gm + t[0] - 1) / t[0], gy = (gn + t[1] - 1) / t[1];
    if (gx > INT32_MAX)
        return st->host->set_error(KMUX_ERR_UNSUPPORTED,
                                   "hip: kmux_conv2d_execute on hip:%d: the implicit GEMM has "
                                   "%lld rows, more than a grid's x dimension of tiles",
                                   s->device, (long long)gm);
    const unsigned grid[3] = {(unsigned)gx, (unsigned)(gy < MAX_GRID_YZ ? gy : MAX_GRID_YZ),
                              (unsigned)(q.groups < MAX_GRID_YZ ? q.groups : MAX_GRID_YZ)};
    char name[160];
    kmux_hip_conv_kernel_name(d->x_type, d->direction, p->tile, name, sizeof name);
    void *params[] = {&q};
    return kmux_hip_launch_3d(st, s, KMUX_HIP_MOD_CONV, name, grid, CONV_THREADS, params,
                              "kmux_conv2d_execute");
}

static kmux_status conv_plan_info(void *state, const void *plan, int impl, kmux_plan_info *info) {
    (void)state, (void)impl;
    const hip_conv_plan *p = plan;
    info->impl = p->name;
    info->effective_compute = kmux_gpu_own_effective_compute(p->d.compute_type);
    info->workspace_bytes = 0;
    info->deterministic = 1; /* fixed-order accumulation, no atomics */
    return KMUX_OK;
}

static void conv_plan_destroy(void *state, void *plan) {
    (void)state;
    free(plan);
}

const kmux_conv2d_ops kmux_hip_conv2d_ops = {
    .plan_create = conv_plan_create,
    .execute = conv_execute,
    .plan_info = conv_plan_info,
    .plan_destroy = conv_plan_destroy,
};
