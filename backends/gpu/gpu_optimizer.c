/*
 * gpu_optimizer.c - the optimizer family of the GPU plugins (plugin ABI optimizer), written once
 * for CUDA and HIP: one implementation ("kmux:gpu"), a module launch of kmux_gpu_optimizer.cu's
 * one kernel with the step's scalars formed here (kmux_opt_scalars_of) and passed by value.
 */
#include <stdlib.h>

#include "gpu_kernels.h"
#include "kmux_gpu_optimizer_params.h"

void kmux_gpu_optimizer_caps(kmux_family_caps *c) {
    c->algs = kmux_optimizer_all_algs();
    c->dtypes = (1u << KMUX_F32) | (1u << KMUX_F16) | (1u << KMUX_BF16);
    c->props = 0;
    c->max_elements = 0;
}

static kmux_status plan_create(void *state, int device, const kmux_optimizer_desc *desc,
                               const kmux_plan_prefs *prefs, void **plan, int *impl_count) {
    kmux_optimizer_desc *p = malloc(sizeof *p);
    if (!p) {
        const kmux_gpu_plugin *g = state;
        return g->host->set_error(KMUX_ERR_OUT_OF_MEMORY,
                                  "%s: kmux_optimizer_plan_create: out of memory (%zu bytes)",
                                  g->vendor, sizeof *p);
    }
    *p = *desc;
    *plan = p;
    *impl_count = 1;
    return KMUX_OK;
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

static kmux_status plan_info(void *state, const void *plan, int impl, kmux_plan_info *info) {
    info->impl = "kmux:gpu";
    info->effective_compute = KMUX_COMPUTE_F32;
    info->workspace_bytes = 0;
    info->deterministic = 1;
    return KMUX_OK;
}

static void plan_destroy(void *state, void *plan) {
    free(plan);
}

const kmux_optimizer_ops kmux_gpu_optimizer_ops = {
    .plan_create = plan_create,
    .execute = execute,
    .plan_info = plan_info,
    .plan_destroy = plan_destroy,
};
