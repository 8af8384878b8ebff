/*
 * cpu_softmax.c - the softmax family on kmux's own CPU kernels (kernels/cpu/softmax.c), shared by
 * cpu:openblas and cpu:onednn. One implementation, "kmux:cpu"; the plan is the description.
 */
#include <stdlib.h>

#include "cpu_runtime.h"
#include "kmux_cpu_kernels.h"
#include "kmux_softmax.h"

void kmux_cpu_softmax_caps(kmux_family_caps *c) {
    c->algs = kmux_softmax_all_algs();
    c->dtypes = (1u << KMUX_F32) | (1u << KMUX_F16) | (1u << KMUX_BF16);
    c->props = (1u << KMUX_PROP_FORWARD) | (1u << KMUX_PROP_BACKWARD);
    c->max_elements = 0;
}

static kmux_status plan_create(void *state, int device, const kmux_softmax_desc *desc,
                               const kmux_plan_prefs *prefs, void **plan, int *impl_count) {
    kmux_softmax_desc *p = malloc(sizeof *p);
    if (!p) {
        const kmux_cpu_state_header *h = state;
        return h->host->set_error(KMUX_ERR_OUT_OF_MEMORY,
                                  "kmux_softmax_plan_create: out of memory (%zu bytes)", sizeof *p);
    }
    *p = *desc;
    *plan = p;
    *impl_count = 1;
    return KMUX_OK;
}

static kmux_status execute(void *state, const void *plan, int impl, void *stream,
                           const kmux_softmax_args *args) {
    const kmux_cpu_state_header *h = state;
    kmux_cpu_softmax(plan, args, h->num_threads > 0 ? h->num_threads : 1);
    return KMUX_OK;
}

static kmux_status plan_info(void *state, const void *plan, int impl, kmux_plan_info *info) {
    info->impl = "kmux:cpu";
    info->effective_compute = KMUX_COMPUTE_F32;
    info->workspace_bytes = 0;
    info->deterministic = 1;
    return KMUX_OK;
}

static void plan_destroy(void *state, void *plan) {
    free(plan);
}

const kmux_softmax_ops kmux_cpu_softmax_ops = {
    .plan_create = plan_create,
    .execute = execute,
    .plan_info = plan_info,
    .plan_destroy = plan_destroy,
};
