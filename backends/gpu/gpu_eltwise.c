/*
 * gpu_eltwise.c - the element-wise family of the GPU plugins (plugin ABI eltwise), written once
 * for CUDA and HIP: one implementation ("kmux:gpu"), a module launch of kmux_gpu_eltwise.cu's one
 * kernel with the parameters by value, a grid-stride 1-D grid as its other element-wise kernels.
 */
#include "gpu_kernels.h"
#include "gpu_runtime.h"
#include "kmux_eltwise.h"
#include "kmux_gpu_eltwise_params.h"

void kmux_gpu_eltwise_caps(kmux_family_caps *c) {
    kmux_eltwise_full_caps(c);
}

static kmux_status plan_create(void *state, int device, const kmux_eltwise_desc *desc,
                               const kmux_plan_prefs *prefs, void **plan, int *impl_count) {
    return kmux_gpu_plan_copy(state, "kmux_eltwise_plan_create", desc, sizeof *desc, plan,
                              impl_count);
}

static kmux_status execute(void *state, const void *plan, int impl, void *stream,
                           const kmux_eltwise_args *args) {
    const kmux_eltwise_desc *d = plan;
    const kmux_gpu_launcher l = kmux_gpu_plugin_launcher(state, stream);
    const int fwd = d->prop == KMUX_PROP_FORWARD;
    kmux_gpu_eltwise_params p = {
        .n = d->n,
        .x = fwd || !d->use_dst_for_bwd ? args->src : args->dst,
        .dd = fwd ? NULL : args->diff_dst,
        .out = fwd ? args->dst : args->diff_src,
        .alg = (int)d->alg,
        .prop = (int)d->prop,
        .use_dst = d->use_dst_for_bwd,
        .dtype = (int)d->dtype,
        .alpha = d->alpha,
        .beta = d->beta,
    };
    int64_t blocks = (d->n + KMUX_GPU_HOST_BLOCK - 1) / KMUX_GPU_HOST_BLOCK;
    if (blocks > KMUX_GPU_HOST_MAX_BLOCKS) blocks = KMUX_GPU_HOST_MAX_BLOCKS;
    const unsigned grid[3] = {(unsigned)blocks, 1, 1};
    void *params[] = {&p};
    return l.launch(&l, KMUX_GPU_MOD_ELTWISE, KMUX_GPU_NAME_ELTWISE, grid, KMUX_GPU_HOST_BLOCK,
                    params, "kmux_eltwise_execute");
}

const kmux_eltwise_ops kmux_gpu_eltwise_ops = {
    .plan_create = plan_create,
    .execute = execute,
    .plan_info = kmux_gpu_kernels_info,
    .plan_destroy = kmux_gpu_plan_free,
};
