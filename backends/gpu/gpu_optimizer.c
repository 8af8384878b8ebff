/*
 * gpu_optimizer.c - the optimizer family of the GPU plugins (plugin ABI optimizer), written once
 * for CUDA and HIP: one implementation ("kmux:gpu"), a module launch of kmux_gpu_optimizer.cu's
 * one kernel with the step's scalars formed here (kmux_opt_scalars_of) and passed by value.
 */
#include "gpu_kernels.h"
#include "gpu_runtime.h"
#include "kmux_gpu_optimizer_params.h"

void kmux_gpu_optimizer_caps(kmux_family_caps *c) {
    kmux_optimizer_full_caps(c);
}

static kmux_status plan_create(void *state, int device, const kmux_optimizer_desc *desc,
                               const kmux_plan_prefs *prefs, void **plan, int *impl_count) {
    return kmux_gpu_plan_copy(state, "kmux_optimizer_plan_create", desc, sizeof *desc, plan,
                              impl_count);
}

static kmux_status execute(void *state, const void *plan, int impl, void *stream,
                           const kmux_optimizer_args *a) {
    const kmux_optimizer_desc *d = plan;
    const kmux_gpu_launcher l = kmux_gpu_plugin_launcher(state, stream);
    kmux_gpu_optimizer_params p = {
        .n = d->n,
        .param = a->param,
        .state1 = a->state1,
        .state2 = a->state2,
        .grad = a->grad,
        .copy = d->copy_type ? a->param_copy : NULL,
        .grad_scale = a->grad_scale,
        .found_inf = a->found_inf,
        .alg = (int)d->alg,
        .grad_type = (int)d->grad_type,
        .copy_type = d->copy_type,
        .sc = kmux_opt_scalars_of(d, a->lr, a->step),
    };
    int64_t blocks = (d->n + KMUX_GPU_HOST_BLOCK - 1) / KMUX_GPU_HOST_BLOCK;
    if (blocks > KMUX_GPU_HOST_MAX_BLOCKS) blocks = KMUX_GPU_HOST_MAX_BLOCKS;
    const unsigned grid[3] = {(unsigned)blocks, 1, 1};
    void *params[] = {&p};
    return l.launch(&l, KMUX_GPU_MOD_OPTIMIZER, KMUX_GPU_NAME_OPTIMIZER, grid, KMUX_GPU_HOST_BLOCK,
                    params, "kmux_optimizer_execute");
}

const kmux_optimizer_ops kmux_gpu_optimizer_ops = {
    .plan_create = plan_create,
    .execute = execute,
    .plan_info = kmux_gpu_kernels_info,
    .plan_destroy = kmux_gpu_plan_free,
};
