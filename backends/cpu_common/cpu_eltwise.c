/*
 * cpu_eltwise.c - the element-wise family on kmux's own CPU kernels (kernels/cpu/eltwise.c):
 * cpu:openblas's implementation, and cpu:onednn's second one behind oneDNN's primitive. One
 * implementation ("kmux:cpu"); the plan is the validated description.
 */
#include "cpu_runtime.h"
#include "kmux_cpu_kernels.h"
#include "kmux_eltwise.h"

void kmux_cpu_eltwise_caps(kmux_family_caps *c) {
    kmux_eltwise_full_caps(c);
}

kmux_status kmux_cpu_eltwise_plan_create(void *state, int device, const kmux_eltwise_desc *desc,
                                         const kmux_plan_prefs *prefs, void **plan,
                                         int *impl_count) {
    return kmux_cpu_plan_copy(state, "kmux_eltwise_plan_create", desc, sizeof *desc, plan,
                              impl_count);
}

kmux_status kmux_cpu_eltwise_run(void *state, const kmux_eltwise_desc *d,
                                 const kmux_eltwise_args *args) {
    const kmux_cpu_state_header *h = state;
    kmux_cpu_eltwise(d, args, h->num_threads > 0 ? h->num_threads : 1);
    return KMUX_OK;
}

static kmux_status execute(void *state, const void *plan, int impl, void *stream,
                           const kmux_eltwise_args *args) {
    return kmux_cpu_eltwise_run(state, plan, args);
}

static kmux_status plan_info(void *state, const void *plan, int impl, kmux_plan_info *info) {
    return kmux_cpu_kernels_info(info);
}

const kmux_eltwise_ops kmux_cpu_eltwise_ops = {
    .plan_create = kmux_cpu_eltwise_plan_create,
    .execute = execute,
    .plan_info = plan_info,
    .plan_destroy = kmux_cpu_plan_free,
};
