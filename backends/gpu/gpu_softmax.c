/*
 * gpu_softmax.c - the softmax family of the GPU plugins (plugin ABI softmax), written once for
 * CUDA and HIP: one implementation ("kmux:gpu"), a module launch of kmux_gpu_softmax.cu's row
 * kernel with the shared row parameters by value, then its mean kernel when the mean loss is
 * asked. The gradient coefficient grad_scale / rows needs the device's grad_scale: it is folded
 * on the device (the row kernel reads grad_scale itself through grad_coef_ptr).
 */
#include "gpu_kernels.h"
#include "gpu_runtime.h"
#include "kmux_softmax.h"

#define KMUX_GPU_NAME_SOFTMAX "kmux_gpu_softmax_kernel"
#define KMUX_GPU_NAME_SOFTMAX_MEAN "kmux_gpu_softmax_mean_kernel"

void kmux_gpu_softmax_caps(kmux_family_caps *c) {
    kmux_softmax_full_caps(c);
}

static kmux_status plan_create(void *state, int device, const kmux_softmax_desc *desc,
                               const kmux_plan_prefs *prefs, void **plan, int *impl_count) {
    return kmux_gpu_plan_copy(state, "kmux_softmax_plan_create", desc, sizeof *desc, plan,
                              impl_count);
}

static kmux_status execute(void *state, const void *plan, int impl, void *stream,
                           const kmux_softmax_args *a) {
    const kmux_softmax_desc *d = plan;
    const kmux_gpu_launcher l = kmux_gpu_plugin_launcher(state, stream);
    kmux_smx_params p = kmux_smx_params_of(d, a);
    int64_t blocks = (d->rows + KMUX_GPU_HOST_BLOCK - 1) / KMUX_GPU_HOST_BLOCK;
    if (blocks > KMUX_GPU_HOST_MAX_BLOCKS) blocks = KMUX_GPU_HOST_MAX_BLOCKS;
    const unsigned grid[3] = {(unsigned)blocks, 1, 1};
    void *params[] = {&p};
    kmux_status st = l.launch(&l, KMUX_GPU_MOD_SOFTMAX, KMUX_GPU_NAME_SOFTMAX, grid,
                              KMUX_GPU_HOST_BLOCK, params, "kmux_softmax_execute");
    if (st != KMUX_OK || d->alg != KMUX_SOFTMAX_CROSS_ENTROPY || !a->mean_loss) return st;
    const unsigned one[3] = {1, 1, 1};
    int64_t rows = d->rows;
    void *mp[] = {(void *)&a->loss, &rows, (void *)&a->mean_loss};
    return l.launch(&l, KMUX_GPU_MOD_SOFTMAX, KMUX_GPU_NAME_SOFTMAX_MEAN, one, 1, mp,
                    "kmux_softmax_execute");
}

const kmux_softmax_ops kmux_gpu_softmax_ops = {
    .plan_create = plan_create,
    .execute = execute,
    .plan_info = kmux_gpu_kernels_info,
    .plan_destroy = kmux_gpu_plan_free,
};
