/*
 * auto.c - the routing device "cpu:auto": each plan is made on the real CPU devices that can run
 * it (cpu:onednn, then cpu:openblas) and its implementations are theirs, concatenated: oneDNN's
 * first, then OpenBLAS's. Without tuning the plan runs implementation 0, i.e. oneDNN's default
 * whenever oneDNN can run the problem (it is at least at parity with OpenBLAS on f32 GEMM and
 * ahead on convolutions, bf16 and i8 in the measurements of issue 14), OpenBLAS otherwise (f64).
 * With prefs.tune / KMUX_TUNE the core times all of them (tune.c), so the fastest backend wins per
 * problem. kmux_plan_next_impl walks every implementation of both. The implementation name says
 * which backend runs: "auto->cpu:onednn:brg:avx512_core", "auto->cpu:openblas:sgemm".
 *
 * Memory, streams and events are host memory and the synchronous CPU streams of every CPU
 * backend (backends/cpu_common), so a sub-plan runs on the auto device's stream as is.
 * Capabilities are the union of the devices routed to (the strictest pointer alignment); a
 * problem one device cannot run is simply not planned on it.
 */
#define _POSIX_C_SOURCE 200809L
#include "auto.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backends/cpu_common/cpu_runtime.h"
#include "kmux_sys_alloc.h"

#define AUTO_MAX_SUBS 2
#define AUTO_MAX_IMPLS 32

static const char *const sub_ids[AUTO_MAX_SUBS] = {"cpu:onednn", "cpu:openblas"};

static _Thread_local kmux_context *g_pending;

void kmux_auto_prepare(kmux_context *ctx) {
    g_pending = ctx;
}

typedef struct auto_state {
    kmux_cpu_state_header hdr;
    kmux_context *ctx;
} auto_state;

static kmux_device *sub_device(const auto_state *st, int i) {
    for (int d = 0; d < st->ctx->device_count; d++)
        if (strcmp(st->ctx->devices[d]->props.id, sub_ids[i]) == 0) return st->ctx->devices[d];
    return NULL;
}

static kmux_status a_init(const kmux_backend_host *host, void **state) {
    auto_state *st = kmux_sys_calloc(1, sizeof *st);
    if (!st) return host->set_error(KMUX_ERR_OUT_OF_MEMORY, "backend auto: out of memory");
    st->hdr.host = host;
    st->hdr.num_threads = host->num_threads;
    st->ctx = g_pending;
    g_pending = NULL;
    *state = st;
    return st->ctx ? KMUX_OK
                   : host->set_error(KMUX_ERR_INTERNAL, "backend auto: started without a context");
}

static void a_fini(void *state) {
    free(state);
}

/* Backends are started before devices exist: count the available backends routed to. */
static kmux_status a_probe(void *state, int *count, char *reason, size_t reason_size) {
    const auto_state *st = state;
    *count = 0;
    for (int b = 0; b < st->ctx->backend_count; b++) {
        const kmux_backend_instance *bi = &st->ctx->backends[b];
        if (bi->available && (!strcmp(bi->name, "onednn") || !strcmp(bi->name, "openblas")))
            *count = 1;
    }
    if (!*count) snprintf(reason, reason_size, "neither cpu:onednn nor cpu:openblas is available");
    return KMUX_OK;
}

static const char *a_version(void *state) {
    return "kmux routing (cpu:onednn, cpu:openblas)";
}

/* The first routed device's host properties, under the routing device's name, with the dtypes
 * of every routed device. */
static kmux_status a_props(void *state, int device, kmux_device_props *props) {
    const auto_state *st = state;
    memset(props, 0, sizeof *props);
    kmux_cpu_fill_host_props(props, st->hdr.num_threads);
    char lib[96] = "";
    int first = 1;
    for (int i = 0; i < AUTO_MAX_SUBS; i++) {
        kmux_device *d = sub_device(st, i);
        if (!d) continue;
        if (first) *props = d->props;
        first = 0;
        for (int t = 0; t < KMUX_DTYPE_COUNT; t++) /* a dtype either device runs */
            props->dtype_support[t] |= d->props.dtype_support[t];
        size_t n = strlen(lib);
        snprintf(lib + n, sizeof lib - n, "%s%s", n ? ", " : "", d->props.library_version);
    }
    snprintf(props->id, sizeof props->id, "cpu:auto");
    snprintf(props->backend, sizeof props->backend, "auto");
    snprintf(props->library_version, sizeof props->library_version, "%s", lib);
    return KMUX_OK;
}

static int64_t limit_max(int64_t a, int64_t b) {
    return (a == 0 || b == 0) ? 0 : (a > b ? a : b);
}

static void caps_union(kmux_op_caps *u, const kmux_op_caps *c) {
    if (!c->supported) return;
    if (!u->supported) {
        *u = *c;
        return;
    }
    u->max_dim = limit_max(u->max_dim, c->max_dim);
    u->max_batch = limit_max(u->max_batch, c->max_batch);
    u->max_elements = limit_max(u->max_elements, c->max_elements);
    u->max_ld = limit_max(u->max_ld, c->max_ld);
    if (c->ptr_align > u->ptr_align) u->ptr_align = c->ptr_align;
    u->epilogues |= c->epilogues;
    u->layouts |= c->layouts;
    u->asymmetric_padding |= c->asymmetric_padding;
    u->groups |= c->groups;
    /* a row native on either device is native here */
    uint64_t native = (u->type_rows & ~u->emulated_rows) | (c->type_rows & ~c->emulated_rows);
    u->type_rows |= c->type_rows;
    u->emulated_rows = u->type_rows & ~native;
}

/* An op family runs where either device runs it. */
static void family_union(kmux_family_caps *u, const kmux_family_caps *c) {
    if (!c->algs || !c->dtypes) return;
    u->max_elements = u->algs ? limit_max(u->max_elements, c->max_elements) : c->max_elements;
    u->algs |= c->algs;
    u->dtypes |= c->dtypes;
    u->props |= c->props;
}

static kmux_status a_caps(void *state, int device, kmux_device_caps *caps) {
    const auto_state *st = state;
    int subs = 0, caller_ws = 0; /* the caller's workspace where every routed device runs in it */
    for (int i = 0; i < AUTO_MAX_SUBS; i++) {
        kmux_device *d = sub_device(st, i);
        if (!d) continue;
        caller_ws += d->caps.caller_workspace;
        subs++;
        caps_union(&caps->matmul, &d->caps.matmul);
        for (int k = 0; k < 3; k++)
            caps_union(&caps->conv2d[k], &d->caps.conv2d[k]);
        caps->amp_dtypes =
            caps->amp_dtypes ? caps->amp_dtypes & d->caps.amp_dtypes : d->caps.amp_dtypes;
        if (d->caps.settle_ms > caps->settle_ms) caps->settle_ms = d->caps.settle_ms;
        family_union(&caps->eltwise, &d->caps.eltwise);
        family_union(&caps->optimizer, &d->caps.optimizer);
        family_union(&caps->softmax, &d->caps.softmax);
        family_union(&caps->binary, &d->caps.binary);
        family_union(&caps->reduction, &d->caps.reduction);
        family_union(&caps->pooling, &d->caps.pooling);
    }
    caps->caller_workspace = subs > 0 && caller_ws == subs;
    /* a convolution's epilogue runs in the core after the routed plan (an execute here calls the
     * routed backend directly, past the core that would run an epilogue it does not fuse) */
    caps->conv2d[0].epilogues = 0;
    return KMUX_OK;
}

/* ---- plans ------------------------------------------------------------------------------- */

typedef struct auto_plan {
    int nsub;
    kmux_plan *sub[AUTO_MAX_SUBS];
    int first[AUTO_MAX_SUBS]; /* index of the sub-plan's implementation 0 in this plan */
    int count;
    char names[AUTO_MAX_IMPLS][160];
} auto_plan;

static void a_plan_destroy(void *state, void *plan) {
    auto_plan *p = plan;
    for (int i = 0; i < p->nsub; i++)
        kmux_plan_free(p->sub[i]);
    free(p);
}

/* Sub-plan and its own implementation index of implementation impl. */
static const kmux_plan *locate(const auto_plan *p, int impl, int *local) {
    int i = p->nsub - 1;
    while (i > 0 && impl < p->first[i])
        i--;
    *local = impl - p->first[i];
    return p->sub[i];
}

/* The info of implementation `local` of sub-plan s, by its kind. */
static kmux_status sub_info(const kmux_plan *s, int local, kmux_plan_info *info) {
    return kmux_plan_kind_slots(s->dev->backend->ops, s->kind)
        .plan_info(s->dev->backend->state, s->native, local, info);
}

static kmux_status a_plan_info(void *state, const void *plan, int impl, kmux_plan_info *info) {
    const auto_plan *p = plan;
    int local;
    const kmux_plan *s = locate(p, impl, &local);
    kmux_status st = sub_info(s, local, info);
    info->impl = p->names[impl];
    return st;
}

/* Makes the plan from sub-plans created by create(dev) on every routed device that accepts. */
static kmux_status make_plan(auto_state *st, kmux_plan_kind kind, const char *fn, const void *desc,
                             const kmux_plan_prefs *prefs, void **plan, int *impl_count) {
    auto_plan *p = kmux_sys_calloc(1, sizeof *p);
    if (!p) return st->hdr.host->set_error(KMUX_ERR_OUT_OF_MEMORY, "backend auto: out of memory");
    kmux_plan_prefs sp = *prefs;
    sp.tune = KMUX_TUNE_OFF; /* the core tunes this plan as a whole */
    kmux_status last = KMUX_ERR_UNSUPPORTED;
    char why[1024] = "";
    for (int i = 0; i < AUTO_MAX_SUBS; i++) {
        kmux_device *d = sub_device(st, i);
        if (!d) continue;
        kmux_plan *s = NULL;
        kmux_status r =
            kind == KMUX_PLAN_MATMUL
                ? kmux_matmul_plan_create_unchecked(d, (const kmux_matmul_desc *)desc, &sp, &s)
            : kind == KMUX_PLAN_CONV2D
                ? kmux_conv2d_plan_create_unchecked(d, (const kmux_conv2d_desc *)desc, &sp, &s)
            : kind == KMUX_PLAN_ELTWISE
                ? kmux_eltwise_plan_create_unchecked(d, (const kmux_eltwise_desc *)desc, &sp, &s)
            : kind == KMUX_PLAN_OPTIMIZER ? kmux_optimizer_plan_create_unchecked(
                                                d, (const kmux_optimizer_desc *)desc, &sp, &s)
            : kind == KMUX_PLAN_SOFTMAX
                ? kmux_softmax_plan_create_unchecked(d, (const kmux_softmax_desc *)desc, &sp, &s)
            : kind == KMUX_PLAN_BINARY
                ? kmux_binary_plan_create_unchecked(d, (const kmux_binary_desc *)desc, &sp, &s)
            : kind == KMUX_PLAN_REDUCTION
                ? kmux_reduction_plan_create_unchecked(d, (const kmux_reduction_desc *)desc, &sp,
                                                       &s)
                : kmux_pooling_plan_create_unchecked(d, (const kmux_pooling_desc *)desc, &sp, &s);
        if (r != KMUX_OK) {
            size_t n = strlen(why);
            snprintf(why + n, sizeof why - n, "%s%s", n ? "; " : "", kmux_last_error());
            last = r;
            continue;
        }
        p->first[p->nsub] = p->count;
        p->sub[p->nsub++] = s;
        for (int k = 0; k < s->impl_count && p->count < AUTO_MAX_IMPLS; k++) {
            kmux_plan_info info;
            memset(&info, 0, sizeof info);
            info.impl = "?";
            sub_info(s, k, &info);
            /* "onednn:brg:avx512_core" -> "auto->cpu:onednn:brg:avx512_core" */
            snprintf(p->names[p->count++], sizeof p->names[0], "auto->cpu:%s",
                     info.impl ? info.impl : "?");
        }
    }
    if (p->nsub == 0) {
        free(p);
        return st->hdr.host->set_error(last, "%s: device cpu:auto: no CPU backend runs it: %s", fn,
                                       why);
    }
    kmux_clear_error();
    *plan = p;
    *impl_count = p->count;
    return KMUX_OK;
}

static kmux_status a_mm_create(void *state, int device, const kmux_matmul_desc *desc,
                               const kmux_plan_prefs *prefs, void **plan, int *impl_count) {
    return make_plan(state, KMUX_PLAN_MATMUL, "kmux_matmul_plan_create", desc, prefs, plan,
                     impl_count);
}

static kmux_status a_mm_exec(void *state, const void *plan, int impl, void *stream,
                             const kmux_matmul_args *args) {
    int local;
    const kmux_plan *s = locate(plan, impl, &local);
    return s->dev->backend->ops->matmul->execute(s->dev->backend->state, s->native, local, stream,
                                                 args);
}

static kmux_status a_cv_create(void *state, int device, const kmux_conv2d_desc *desc,
                               const kmux_plan_prefs *prefs, void **plan, int *impl_count) {
    return make_plan(state, KMUX_PLAN_CONV2D, "kmux_conv2d_plan_create", desc, prefs, plan,
                     impl_count);
}

static kmux_status a_cv_exec(void *state, const void *plan, int impl, void *stream,
                             const kmux_conv2d_args *args) {
    int local;
    const kmux_plan *s = locate(plan, impl, &local);
    return s->dev->backend->ops->conv2d->execute(s->dev->backend->state, s->native, local, stream,
                                                 args);
}

static kmux_status a_el_create(void *state, int device, const kmux_eltwise_desc *desc,
                               const kmux_plan_prefs *prefs, void **plan, int *impl_count) {
    return make_plan(state, KMUX_PLAN_ELTWISE, "kmux_eltwise_plan_create", desc, prefs, plan,
                     impl_count);
}

static kmux_status a_el_exec(void *state, const void *plan, int impl, void *stream,
                             const kmux_eltwise_args *args) {
    int local;
    const kmux_plan *s = locate(plan, impl, &local);
    return s->dev->backend->ops->eltwise->execute(s->dev->backend->state, s->native, local, stream,
                                                  args);
}

static kmux_status a_op_create(void *state, int device, const kmux_optimizer_desc *desc,
                               const kmux_plan_prefs *prefs, void **plan, int *impl_count) {
    return make_plan(state, KMUX_PLAN_OPTIMIZER, "kmux_optimizer_plan_create", desc, prefs, plan,
                     impl_count);
}

static kmux_status a_op_exec(void *state, const void *plan, int impl, void *stream,
                             const kmux_optimizer_args *args) {
    int local;
    const kmux_plan *s = locate(plan, impl, &local);
    return s->dev->backend->ops->optimizer->execute(s->dev->backend->state, s->native, local,
                                                    stream, args);
}

static kmux_status a_sm_create(void *state, int device, const kmux_softmax_desc *desc,
                               const kmux_plan_prefs *prefs, void **plan, int *impl_count) {
    return make_plan(state, KMUX_PLAN_SOFTMAX, "kmux_softmax_plan_create", desc, prefs, plan,
                     impl_count);
}

static kmux_status a_sm_exec(void *state, const void *plan, int impl, void *stream,
                             const kmux_softmax_args *args) {
    int local;
    const kmux_plan *s = locate(plan, impl, &local);
    return s->dev->backend->ops->softmax->execute(s->dev->backend->state, s->native, local, stream,
                                                  args);
}

static kmux_status a_bin_create(void *state, int device, const kmux_binary_desc *desc,
                                const kmux_plan_prefs *prefs, void **plan, int *impl_count) {
    return make_plan(state, KMUX_PLAN_BINARY, "kmux_binary_plan_create", desc, prefs, plan,
                     impl_count);
}

static kmux_status a_bin_exec(void *state, const void *plan, int impl, void *stream,
                              const kmux_binary_args *args) {
    int local;
    const kmux_plan *s = locate(plan, impl, &local);
    return s->dev->backend->ops->binary->execute(s->dev->backend->state, s->native, local, stream,
                                                 args);
}

static kmux_status a_red_create(void *state, int device, const kmux_reduction_desc *desc,
                                const kmux_plan_prefs *prefs, void **plan, int *impl_count) {
    return make_plan(state, KMUX_PLAN_REDUCTION, "kmux_reduction_plan_create", desc, prefs, plan,
                     impl_count);
}

static kmux_status a_red_exec(void *state, const void *plan, int impl, void *stream,
                              const kmux_reduction_args *args) {
    int local;
    const kmux_plan *s = locate(plan, impl, &local);
    return s->dev->backend->ops->reduction->execute(s->dev->backend->state, s->native, local,
                                                    stream, args);
}

static kmux_status a_pool_create(void *state, int device, const kmux_pooling_desc *desc,
                                 const kmux_plan_prefs *prefs, void **plan, int *impl_count) {
    return make_plan(state, KMUX_PLAN_POOLING, "kmux_pooling_plan_create", desc, prefs, plan,
                     impl_count);
}

static kmux_status a_pool_exec(void *state, const void *plan, int impl, void *stream,
                               const kmux_pooling_args *args) {
    int local;
    const kmux_plan *s = locate(plan, impl, &local);
    return s->dev->backend->ops->pooling->execute(s->dev->backend->state, s->native, local, stream,
                                                  args);
}

static const kmux_pooling_ops a_pooling_ops = {
    .plan_create = a_pool_create,
    .execute = a_pool_exec,
    .plan_info = a_plan_info,
    .plan_destroy = a_plan_destroy,
};

static const kmux_binary_ops a_binary_ops = {
    .plan_create = a_bin_create,
    .execute = a_bin_exec,
    .plan_info = a_plan_info,
    .plan_destroy = a_plan_destroy,
};

static const kmux_reduction_ops a_reduction_ops = {
    .plan_create = a_red_create,
    .execute = a_red_exec,
    .plan_info = a_plan_info,
    .plan_destroy = a_plan_destroy,
};

static const kmux_softmax_ops a_softmax_ops = {
    .plan_create = a_sm_create,
    .execute = a_sm_exec,
    .plan_info = a_plan_info,
    .plan_destroy = a_plan_destroy,
};

static const kmux_optimizer_ops a_optimizer_ops = {
    .plan_create = a_op_create,
    .execute = a_op_exec,
    .plan_info = a_plan_info,
    .plan_destroy = a_plan_destroy,
};

static const kmux_eltwise_ops a_eltwise_ops = {
    .plan_create = a_el_create,
    .execute = a_el_exec,
    .plan_info = a_plan_info,
    .plan_destroy = a_plan_destroy,
};

static const kmux_matmul_ops a_matmul_ops = {
    .plan_create = a_mm_create,
    .execute = a_mm_exec,
    .plan_info = a_plan_info,
    .plan_destroy = a_plan_destroy,
};

static const kmux_conv2d_ops a_conv2d_ops = {
    .plan_create = a_cv_create,
    .execute = a_cv_exec,
    .plan_info = a_plan_info,
    .plan_destroy = a_plan_destroy,
};

static const kmux_backend_ops a_ops = {
    .struct_size = sizeof(kmux_backend_ops),
    .abi_major = KMUX_BACKEND_ABI_MAJOR,
    .abi_minor = KMUX_BACKEND_ABI_MINOR,
    .name = "auto",
    .init = a_init,
    .fini = a_fini,
    .probe = a_probe,
    .version = a_version,
    .device_props = a_props,
    .device_caps = a_caps,
    KMUX_CPU_RUNTIME_SLOTS,
    .matmul = &a_matmul_ops,
    .conv2d = &a_conv2d_ops,
    KMUX_CPU_AMP_SLOTS,
    .eltwise = &a_eltwise_ops,
    .optimizer = &a_optimizer_ops,
    .softmax = &a_softmax_ops,
    .binary = &a_binary_ops,
    .reduction = &a_reduction_ops,
    .pooling = &a_pooling_ops,
};

const kmux_backend_ops *kmux_auto_backend_ops(void) {
    return &a_ops;
}

/* ---- tuning ------------------------------------------------------------------------------ */

const kmux_device *kmux_auto_impl_device(const kmux_plan *pl, int impl) {
    /* the loader copies the table: its matmul ops pointer says whose plan this is */
    if (pl->dev->backend->ops->matmul != &a_matmul_ops || !pl->native) return pl->dev;
    int local = 0;
    return locate(pl->native, impl, &local)->dev;
}
