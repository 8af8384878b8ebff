/*
 * cpu_pooling.c - the pooling family on kmux's own CPU kernels (kernels/cpu/pooling.c),
 * shared by cpu:openblas and cpu:onednn. One implementation, "kmux:cpu"; the plan is the
 * description.
 */
#include "cpu_runtime.h"
#include "kmux_cpu_kernels.h"
#include "kmux_pooling.h"

void kmux_cpu_pooling_caps(kmux_family_caps *c) {
    kmux_pooling_full_caps(c);
}

static kmux_status plan_create(void *state, int device, const kmux_pooling_desc *desc,
                               const kmux_plan_prefs *prefs, void **plan, int *impl_count) {
    return kmux_cpu_plan_copy(state, "kmux_pooling_plan_create", desc, sizeof *desc, plan,
                              impl_count);
}

static kmux_status execute(void *state, const void *plan, int impl, void *stream,
                           const kmux_pooling_args *args) {
    const kmux_cpu_state_header *h = state;
    kmux_cpu_pooling(plan, args, h->num_threads > 0 ? h->num_threads : 1);
    return KMUX_OK;
}

static kmux_status plan_info(void *state, const void *plan, int impl, kmux_plan_info *info) {
    return kmux_cpu_kernels_info(info);
}

const kmux_pooling_ops kmux_cpu_pooling_ops = {
    .plan_create = plan_create,
    .execute = execute,
    .plan_info = plan_info,
    .plan_destroy = kmux_cpu_plan_free,
};
