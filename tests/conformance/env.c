/*
 * env.c - the devices under test: every available device of a default context but "ref" (the
 * oracle), optionally narrowed by KMUX_CONFORMANCE_DEVICES, each with a stream.
 */
#include "conformance.h"

#include "kmux_common.h"

static int device_selected(const char *id) {
    const char *sel = getenv("KMUX_CONFORMANCE_DEVICES");
    return !sel || !sel[0] || kmux_common_name_listed(sel, id);
}

void cf_env_init(cf_env *env) {
    memset(env, 0, sizeof *env);
    env->ctx = tu_context();
    TU_OK(kmux_device_find(env->ctx, "ref", &env->ref));
    TU_OK(kmux_stream_create(env->ref, &env->ref_stream));
    int n = 0;
    TU_OK(kmux_device_count(env->ctx, &n));
    for (int i = 0; i < n && env->ndev < CF_MAX_DEVICES; i++) {
        kmux_device *d = NULL;
        TU_OK(kmux_device_get(env->ctx, i, &d));
        const char *id = kmux_device_id(d);
        cr_assert(id != NULL, "kmux_device_id(device %d) is NULL", i);
        if (d == env->ref || strcmp(id, "ref") == 0 || !device_selected(id)) continue;
        env->dev[env->ndev] = d;
        env->id[env->ndev] = id;
        TU_OK(kmux_stream_create(d, &env->stream[env->ndev]));
        env->ndev++;
    }
    if (env->ndev == 0)
        fprintf(stderr, "conformance: no device besides ref; only ref is checked against the "
                        "test's model\n");
}

void cf_env_fini(cf_env *env) {
    for (int i = 0; i < env->ndev; i++)
        kmux_stream_destroy(env->stream[i]);
    kmux_stream_destroy(env->ref_stream);
    kmux_context_destroy(env->ctx);
}

kmux_status cf_plan_step(kmux_plan *plan, int step) {
    kmux_status st = KMUX_OK;
    for (int k = 0; k < step && st == KMUX_OK; k++)
        st = kmux_plan_next_impl(plan);
    if (st != KMUX_OK) TU_OK(kmux_plan_destroy(plan));
    return st;
}
