/*
 * gpu_binary.c - the binary family of the GPU plugins (plugin ABI binary), written once for CUDA
 * and HIP: one implementation ("kmux:gpu"), a module launch of kmux_gpu_binary.cu's kernel with
 * the shared parameters (dispatch/common/kmux_binary.h) by value.
 */
#include "gpu_kernels.h"
#include "gpu_runtime.h"
#include "kmux_binary.h"

void kmux_gpu_binary_caps(kmux_family_caps *c) {
    kmux_binary_full_caps(c);
}

static kmux_status plan_create(void *state, int device, const kmux_binary_desc *desc,
                               const kmux_plan_prefs *prefs, void **plan, int *impl_count) {
    return kmux_gpu_plan_copy(state, "kmux_binary_plan_create", desc, sizeof *desc, plan,
                              impl_count);
}

static kmux_status execute(void *state, const void *plan, int impl, void *stream,
                           const kmux_binary_args *a) {
    const kmux_gpu_launcher l = kmux_gpu_plugin_launcher(state, stream);
    kmux_bin_params p = kmux_bin_params_of(plan, a);
    int64_t blocks = (p.n + KMUX_GPU_HOST_BLOCK - 1) / KMUX_GPU_HOST_BLOCK;
    if (blocks > KMUX_GPU_HOST_MAX_BLOCKS) blocks = KMUX_GPU_HOST_MAX_BLOCKS;
    const unsigned grid[3] = {(unsigned)blocks, 1, 1};
    void *params[] = {&p};
    return l.launch(&l, KMUX_GPU_MOD_BINARY, "kmux_gpu_binary_kernel", grid, KMUX_GPU_HOST_BLOCK,
                    params, "kmux_binary_execute");
}

const kmux_binary_ops kmux_gpu_binary_ops = {
    .plan_create = plan_create,
    .execute = execute,
    .plan_info = kmux_gpu_kernels_info,
    .plan_destroy = kmux_gpu_plan_free,
};
