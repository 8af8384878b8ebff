/*
 * gpu_pooling.c - the pooling family of the GPU plugins (plugin ABI pooling), written once for
 * CUDA and HIP: one implementation ("kmux:gpu"), a module launch of kmux_gpu_pooling.cu's kernel
 * with the shared parameters (dispatch/common/kmux_pooling.h) by value, one thread an output
 * element (y forward, dx backward).
 */
#include "gpu_kernels.h"
#include "gpu_runtime.h"
#include "kmux_pooling.h"

void kmux_gpu_pooling_caps(kmux_family_caps *c) {
    kmux_pooling_full_caps(c);
}

static kmux_status plan_create(void *state, int device, const kmux_pooling_desc *desc,
                               const kmux_plan_prefs *prefs, void **plan, int *impl_count) {
    return kmux_gpu_plan_copy(state, "kmux_pooling_plan_create", desc, sizeof *desc, plan,
                              impl_count);
}

static kmux_status execute(void *state, const void *plan, int impl, void *stream,
                           const kmux_pooling_args *a) {
    const kmux_gpu_launcher l = kmux_gpu_plugin_launcher(state, stream);
    kmux_pool_params p = kmux_pool_params_of(plan, a);
    int64_t count = p.prop == KMUX_PROP_FORWARD ? p.n * p.c * p.p * p.q : p.n * p.c * p.h * p.w;
    int64_t blocks = (count + KMUX_GPU_HOST_BLOCK - 1) / KMUX_GPU_HOST_BLOCK;
    if (blocks > KMUX_GPU_HOST_MAX_BLOCKS) blocks = KMUX_GPU_HOST_MAX_BLOCKS;
    const unsigned grid[3] = {(unsigned)blocks, 1, 1};
    void *params[] = {&p, &count};
    return l.launch(&l, KMUX_GPU_MOD_POOLING, "kmux_gpu_pooling_kernel", grid, KMUX_GPU_HOST_BLOCK,
                    params, "kmux_pooling_execute");
}

const kmux_pooling_ops kmux_gpu_pooling_ops = {
    .plan_create = plan_create,
    .execute = execute,
    .plan_info = kmux_gpu_kernels_info,
    .plan_destroy = kmux_gpu_plan_free,
};
