/*
 * hip_conv.c - convolution plans of the HIP backend on kmux's own implicit-GEMM kernel
 * (kernels/gpu/kmux_gpu_conv.cu, conv_kernel): FWD, BWD_DATA, BWD_WEIGHTS, NCHW/KCRS and
 * NHWC/KRSC, stride, dilation, groups (depthwise included), asymmetric padding; x, w and y of one
 * dtype among f64, f32, f16, bf16 (accumulation f64 for f64, f32 otherwise). Tile, name, grid
 * and arguments come from the shared launch logic (backends/gpu/gpu_tiled.c), the module launch
 * from the plugin's launcher (hip_vendor.c: hipModuleLaunchKernel). One implementation per plan
 * (MIOpen is not opened: TODO), named by the kernel and its tile.
 */
#include <stdio.h>
#include <stdlib.h>

#include "dispatch/common/kmux_dtype_desc.h"
#include "gpu_kernels.h"
#include "hip_backend.h"
#include "kmux_gpu_gemm_params.h"

typedef struct hip_conv_plan {
    kmux_conv2d_desc d;
    int tile;
    char name[128];
} hip_conv_plan;

static kmux_status conv_plan_create(void *state, int device, const kmux_conv2d_desc *desc,
                                    const kmux_plan_prefs *prefs, void **plan, int *impl_count) {
    (void)prefs; /* one deterministic implementation: every preference is met */
    kmux_hip_state *st = state;
    const kmux_hip_device *dv = &st->devices[device];
    const kmux_dtype t = desc->x_type;
    if (desc->w_type != t || desc->y_type != t || !kmux_gpu_host_conv_type(t))
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
    /* arch 0: the tile rule is the same on every current target */
    p->tile = kmux_gpu_host_conv2d_pick_tile(0, desc);
    if (kmux_gpu_host_conv2d_name(desc, p->tile, p->name, sizeof p->name) != 0)
        snprintf(p->name, sizeof p->name, "kmux-gpu:conv2d");
    *plan = p;
    *impl_count = 1;
    return KMUX_OK;
}

static kmux_status conv_execute(void *state, const void *plan, int impl, void *stream,
                                const kmux_conv2d_args *args) {
    (void)impl;
    const hip_conv_plan *p = plan;
    const kmux_gpu_launcher l = kmux_gpu_plugin_launcher(state, stream);
    return kmux_gpu_host_conv2d(&l, &p->d, args, p->tile);
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
