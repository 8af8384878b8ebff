/*
 * plan.c - matmul and convolution plans: validation, creation by the device's backend,
 * execution with the KMUX_VERBOSE trace, implementation walking.
 */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "dispatch/common/cpu_finish.h"
#include "tune.h"
#include "validate.h"
#include "verbose.h"
#include "kmux_sys_alloc.h"

#define OPS(dev) ((dev)->backend->ops)
#define STATE(dev) ((dev)->backend->state)

static double now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec * 1e-6;
}

kmux_status kmux_plan_backend_failed(kmux_status st, const char *fn, const kmux_device *dev) {
    if (st != KMUX_OK && kmux_last_error()[0] == '\0')
        kmux_set_error(st, "%s: backend %s on %s returned %s without a message", fn,
                       dev->backend->name, dev->props.id, kmux_status_str(st));
    return st;
}

/* Checks the arguments of a plan creation: non-NULL pointers, and prefs (optional, resolved into
 * *out with the defaults of fields beyond its struct_size) whose fields have closed value sets. */
kmux_status kmux_plan_check_create(const char *fn, const kmux_device *dev, const void *desc,
                                   kmux_plan *const *plan, const kmux_plan_prefs *prefs,
                                   kmux_plan_prefs *out) {
    if (!dev || !desc || !plan)
        return kmux_set_error(KMUX_ERR_INVALID_ARGUMENT, "%s: %s is NULL", fn,
                              !dev    ? "dev"
                              : !desc ? "desc"
                                      : "plan");
    KMUX_CHECK_HANDLE(fn, "dev", dev, KMUX_HANDLE_DEVICE);
    kmux_status st = kmux_resolve_plan_prefs(fn, prefs, out);
    if (st != KMUX_OK) return st;
    if (out->allow_emulation != 0 && out->allow_emulation != 1)
        return kmux_set_error(KMUX_ERR_INVALID_ARGUMENT,
                              "%s: prefs->allow_emulation = %d must be 0 or 1", fn,
                              out->allow_emulation);
    if (out->require_deterministic != 0 && out->require_deterministic != 1)
        return kmux_set_error(KMUX_ERR_INVALID_ARGUMENT,
                              "%s: prefs->require_deterministic = %d must be 0 or 1", fn,
                              out->require_deterministic);
    if (out->allow_fast_accumulation != 0 && out->allow_fast_accumulation != 1)
        return kmux_set_error(KMUX_ERR_INVALID_ARGUMENT,
                              "%s: prefs->allow_fast_accumulation = %d must be 0 or 1", fn,
                              out->allow_fast_accumulation);
    if (out->caller_workspace != 0 && out->caller_workspace != 1)
        return kmux_set_error(KMUX_ERR_INVALID_ARGUMENT,
                              "%s: prefs->caller_workspace = %d must be 0 or 1", fn,
                              out->caller_workspace);
    if (out->tune != KMUX_TUNE_DEFAULT && out->tune != KMUX_TUNE_OFF && out->tune != KMUX_TUNE_ON)
        return kmux_set_error(KMUX_ERR_INVALID_ARGUMENT,
                              "%s: prefs->tune = %d must be KMUX_TUNE_DEFAULT (0), KMUX_TUNE_OFF "
                              "(1) or KMUX_TUNE_ON (2)",
                              fn, out->tune);
    return KMUX_OK;
}

/* prefs of an internal caller (the plan cache: NULL), already checked. */
static kmux_plan_prefs resolve_prefs(const kmux_plan_prefs *prefs) {
    kmux_plan_prefs p = KMUX_PLAN_PREFS_INIT;
    if (prefs) p = *prefs;
    return p;
}

kmux_status kmux_plan_new(kmux_device *dev, kmux_plan_kind kind, kmux_plan **out) {
    kmux_plan *p = kmux_handle_alloc(KMUX_HANDLE_PLAN, sizeof *p);
    if (!p) return kmux_set_error(KMUX_ERR_OUT_OF_MEMORY, "plan creation: out of memory");
    p->dev = dev;
    p->kind = kind;
    *out = p;
    return KMUX_OK;
}

kmux_plan_slots kmux_plan_kind_slots(const kmux_backend_ops *o, kmux_plan_kind kind) {
    kmux_plan_slots s = {NULL, NULL, "a matmul"};
#define KMUX_KIND_SLOTS_(member, noun)                                                             \
    s = (kmux_plan_slots) {                                                                        \
        o->member ? o->member->plan_info : NULL, o->member ? o->member->plan_destroy : NULL, noun  \
    }
    switch (kind) {
    case KMUX_PLAN_MATMUL:
        KMUX_KIND_SLOTS_(matmul, "a matmul");
        break;
    case KMUX_PLAN_CONV2D:
        KMUX_KIND_SLOTS_(conv2d, "a convolution");
        break;
    case KMUX_PLAN_ELTWISE:
        KMUX_KIND_SLOTS_(eltwise, "an element-wise");
        break;
    case KMUX_PLAN_OPTIMIZER:
        KMUX_KIND_SLOTS_(optimizer, "an optimizer");
        break;
    case KMUX_PLAN_SOFTMAX:
        KMUX_KIND_SLOTS_(softmax, "a softmax");
        break;
    case KMUX_PLAN_BINARY:
        KMUX_KIND_SLOTS_(binary, "a binary");
        break;
    case KMUX_PLAN_REDUCTION:
        KMUX_KIND_SLOTS_(reduction, "a reduction");
        break;
    case KMUX_PLAN_POOLING:
        KMUX_KIND_SLOTS_(pooling, "a pooling");
        break;
    }
#undef KMUX_KIND_SLOTS_
    return s;
}

void kmux_plan_free(kmux_plan *plan) {
    if (!plan) return;
    if (plan->native) {
        const kmux_plan_slots s = kmux_plan_kind_slots(OPS(plan->dev), plan->kind);
        if (s.plan_destroy) s.plan_destroy(STATE(plan->dev), plan->native);
    }
    free(plan->impl_names);
    if (plan->counted) KMUX_LIVE_ADD(plan->dev->ctx, live_plans, -1);
    kmux_handle_release(plan);
}

/* A plan the caller made through the public API: counted in ctx->live_plans until it is freed
 * (the core's own plans, made by the _unchecked functions, are not). */
static void count_as_callers(kmux_plan *pl) {
    pl->counted = 1;
    KMUX_LIVE_ADD(pl->dev->ctx, live_plans, 1);
}

/* One trace line of a plan: its problem, by kind. */
static void trace_plan(int level, const char *what, const kmux_plan *pl, const char *impl,
                       double ms) {
    if (pl->kind == KMUX_PLAN_MATMUL)
        kmux_trace_matmul(level, what, pl->dev, impl, &pl->desc.matmul, ms, NULL);
    else if (pl->kind == KMUX_PLAN_CONV2D)
        kmux_trace_conv(level, what, pl->dev, impl, &pl->desc.conv, ms, NULL);
    else if (pl->kind == KMUX_PLAN_ELTWISE)
        kmux_trace_eltwise(level, what, pl->dev, impl, &pl->desc.eltwise, ms);
    else if (pl->kind == KMUX_PLAN_OPTIMIZER)
        kmux_trace_optimizer(level, what, pl->dev, impl, &pl->desc.optimizer, ms);
    else if (pl->kind == KMUX_PLAN_SOFTMAX)
        kmux_trace_softmax(level, what, pl->dev, impl, &pl->desc.softmax, ms);
    else if (pl->kind == KMUX_PLAN_BINARY)
        kmux_trace_binary(level, what, pl->dev, impl, &pl->desc.binary, ms);
    else if (pl->kind == KMUX_PLAN_REDUCTION)
        kmux_trace_reduction(level, what, pl->dev, impl, &pl->desc.reduction, ms);
    else
        kmux_trace_pooling(level, what, pl->dev, impl, &pl->desc.pooling, ms);
}

/* A created plan: it starts at its tuned implementation (tune.c: GEMM and convolution) and is
 * traced (KMUX_VERBOSE=2). */
static void plan_finish(kmux_plan *pl, const kmux_plan_prefs *prefs, double t0) {
    if ((pl->kind == KMUX_PLAN_MATMUL || pl->kind == KMUX_PLAN_CONV2D) &&
        kmux_tune_enabled(prefs, pl->dev))
        kmux_tune_plan(pl, prefs);
    if (kmux_verbose_level() < 2) return;
    kmux_plan_info info;
    kmux_plan_info_get(pl, &info);
    trace_plan(2, "create", pl, info.impl, now_ms() - t0);
}

/* A backend's impl_count must be >= 1; anything else is a plugin bug, reported as such. */
static kmux_status check_impl_count(const char *fn, const kmux_device *dev, int count) {
    if (count >= 1) return KMUX_OK;
    return kmux_set_error(KMUX_ERR_INTERNAL,
                          "%s: backend %s on %s created a plan with impl_count = %d (must be >= 1)",
                          fn, dev->backend->name, dev->props.id, count);
}

/* Device-memory alpha/beta on a device that is not the host's: its backend must read them when
 * the work runs (caps.matmul_device_scalars), and k == 0 has no such path (the degenerate slot
 * reads beta on the host). Host devices read them at the call, as host scalars. */
static kmux_status check_device_scalars(const char *fn, const kmux_device *dev,
                                        const kmux_matmul_desc *d) {
    if (d->pointer_mode != KMUX_POINTER_MODE_DEVICE || dev->props.is_host) return KMUX_OK;
    if (!dev->caps.matmul_device_scalars)
        return kmux_set_error(KMUX_ERR_UNSUPPORTED,
                              "%s: pointer_mode = KMUX_POINTER_MODE_DEVICE: device %s (backend %s) "
                              "reads alpha and beta from host memory only",
                              fn, dev->props.id, dev->backend->name);
    if (d->k == 0 && d->m > 0 && d->n > 0 && d->batch_count > 0)
        return kmux_set_error(KMUX_ERR_UNSUPPORTED,
                              "%s: pointer_mode = KMUX_POINTER_MODE_DEVICE with k = 0 on %s: the "
                              "degenerate matmul reads beta on the host",
                              fn, dev->props.id);
    return KMUX_OK;
}

/* prefs->caller_workspace on a device whose backend runs only in its own workspace. */
static kmux_status check_caller_ws(const char *fn, const kmux_device *dev,
                                   const kmux_plan_prefs *prefs) {
    if (!prefs->caller_workspace || dev->caps.caller_workspace) return KMUX_OK;
    return kmux_set_error(KMUX_ERR_UNSUPPORTED,
                          "%s: prefs->caller_workspace = 1: device %s (backend %s) runs plans only "
                          "in a workspace of its own",
                          fn, dev->props.id, dev->backend->name);
}

size_t kmux_plan_workspace_need(const kmux_plan *plan, int impl) {
    if (!plan->native) return 0; /* the core runs it: no workspace */
    kmux_plan_info info;
    memset(&info, 0, sizeof info);
    kmux_plan_slots s = kmux_plan_kind_slots(OPS(plan->dev), plan->kind);
    if (!s.plan_info || s.plan_info(STATE(plan->dev), plan->native, impl, &info) != KMUX_OK)
        return 0;
    return info.workspace_bytes;
}

kmux_status kmux_plan_check_workspace(const char *fn, const kmux_plan *plan, const void *ws,
                                      size_t ws_bytes, const kmux_exec_tensor *ops, int n) {
    if (!plan->caller_ws) return KMUX_OK;
    const size_t need = kmux_plan_workspace_need(plan, plan->impl);
    if (need > 0 && (!ws || ws_bytes < need))
        return kmux_set_error(KMUX_ERR_WORKSPACE,
                              "%s: args->workspace = %p, args->workspace_bytes = %zu: the plan "
                              "(implementation %d, made with prefs.caller_workspace) needs %zu "
                              "bytes",
                              fn, ws, ws_bytes, plan->impl, need);
    if (!ws) return KMUX_OK;
    /* cuBLASLt's rule on GPUs (its workspace is the start of ours); a cache line on CPUs */
    const unsigned align = plan->dev->props.is_host ? 64u : 256u;
    if ((uintptr_t)ws % align != 0)
        return kmux_set_error(
            KMUX_ERR_INVALID_ARGUMENT,
            "%s: args->workspace = %p is not %u-byte aligned on %s (kmux_malloc's "
            "memory is)",
            fn, ws, align, plan->dev->props.id);
    for (int i = 0; i < n; i++)
        if (ops[i].p && kmux_spans_overlap(ws, ws_bytes, ops[i].p, ops[i].bytes))
            return kmux_set_error(KMUX_ERR_INVALID_ARGUMENT,
                                  "%s: args->workspace = %p (%zu bytes) overlaps args->%s = %p "
                                  "(%zu bytes)",
                                  fn, ws, ws_bytes, ops[i].name, ops[i].p, ops[i].bytes);
    return KMUX_OK;
}

kmux_status kmux_plan_create_family(kmux_device *dev, kmux_plan_kind kind, const char *fn,
                                    const void *desc, size_t desc_size, int empty,
                                    const kmux_plan_prefs *prefs, kmux_family_create_fn create,
                                    kmux_plan **plan) {
    kmux_plan_prefs pr = resolve_prefs(prefs);
    kmux_plan *pl = NULL;
    kmux_status st = kmux_plan_new(dev, kind, &pl);
    if (st != KMUX_OK) return st;
    memcpy(&pl->desc, desc, desc_size);
    pl->impl_count = 1;
    const double t0 = now_ms();
    if (!empty) { /* an op with nothing to do is the core's: no backend plan */
        st = create(dev, desc, &pr, &pl->native, &pl->impl_count);
        if (st != KMUX_OK) pl->native = NULL;
        if (st == KMUX_OK) st = check_impl_count(fn, dev, pl->impl_count);
        if (st != KMUX_OK) {
            kmux_plan_backend_failed(st, fn, dev);
            kmux_plan_free(pl);
            return st;
        }
    }
    plan_finish(pl, &pr, t0);
    *plan = pl;
    return KMUX_OK;
}

void kmux_plan_count_as_callers(kmux_plan *pl) {
    count_as_callers(pl);
}

kmux_status kmux_matmul_plan_create_unchecked(kmux_device *dev, const kmux_matmul_desc *desc,
                                              const kmux_plan_prefs *prefs, kmux_plan **plan) {
    const char *fn = "kmux_matmul_plan_create";
    const kmux_backend_ops *o = OPS(dev);
    kmux_plan_prefs p = resolve_prefs(prefs);
    kmux_status st = kmux_caps_check_matmul(fn, dev, desc, &p);
    if (st == KMUX_OK) st = check_caller_ws(fn, dev, &p);
    if (st == KMUX_OK) st = check_device_scalars(fn, dev, desc);
    kmux_plan *pl = NULL;
    if (st == KMUX_OK) st = kmux_plan_new(dev, KMUX_PLAN_MATMUL, &pl);
    if (st == KMUX_OK) {
        pl->desc.matmul = *desc;
        pl->impl_count = 1;
        pl->caller_ws = p.caller_workspace;
    }
    double t0 = now_ms();
    /* The core runs empty problems and k == 0 itself: the backend only sees m, n, k, batch >= 1. */
    int backend_plan = desc->m > 0 && desc->n > 0 && desc->k > 0 && desc->batch_count > 0;
    if (st == KMUX_OK && backend_plan) {
        st = o->matmul->plan_create(STATE(dev), dev->index, desc, &p, &pl->native, &pl->impl_count);
        if (st != KMUX_OK) {
            kmux_plan_backend_failed(st, fn, dev);
            pl->native = NULL;
        } else {
            st = check_impl_count(fn, dev, pl->impl_count);
        }
    }
    if (st != KMUX_OK) {
        kmux_trace_matmul(2, "reject", dev, NULL, desc, -1, kmux_last_error());
        kmux_plan_free(pl);
        return st;
    }
    plan_finish(pl, &p, t0);
    *plan = pl;
    return KMUX_OK;
}

kmux_status kmux_matmul_plan_create(kmux_device *dev, const kmux_matmul_desc *desc,
                                    const kmux_plan_prefs *prefs, kmux_plan **plan) {
    kmux_clear_error();
    const char *fn = "kmux_matmul_plan_create";
    kmux_plan_prefs pr;
    kmux_matmul_desc d;
    kmux_status st = kmux_plan_check_create(fn, dev, desc, plan, prefs, &pr);
    if (st == KMUX_OK) st = kmux_resolve_matmul_desc(fn, desc, &d);
    if (st == KMUX_OK) st = kmux_validate_matmul_desc(fn, &d);
    if (st != KMUX_OK) return st;
    st = kmux_matmul_plan_create_unchecked(dev, &d, &pr, plan);
    if (st == KMUX_OK) count_as_callers(*plan);
    return st;
}

/* Checks the arguments of an execution: non-NULL pointers, a plan of this kind, and a stream of
 * the plan's own device. */
kmux_status kmux_plan_check_execute(const char *fn, const kmux_plan *plan, const kmux_stream *s,
                                    const void *args, kmux_plan_kind kind) {
    if (!plan || !s || !args)
        return kmux_set_error(KMUX_ERR_INVALID_ARGUMENT, "%s: %s is NULL", fn,
                              !plan ? "plan"
                              : !s  ? "stream"
                                    : "args");
    KMUX_CHECK_HANDLE(fn, "plan", plan, KMUX_HANDLE_PLAN);
    KMUX_CHECK_HANDLE(fn, "stream", s, KMUX_HANDLE_STREAM);
    if (plan->kind != kind)
        return kmux_set_error(KMUX_ERR_INVALID_ARGUMENT, "%s: plan is %s plan", fn,
                              kmux_plan_kind_slots(OPS(plan->dev), plan->kind).noun);
    if (s->dev != plan->dev)
        return kmux_set_error(KMUX_ERR_INVALID_ARGUMENT,
                              "%s: stream is on device %s but the plan was made for %s", fn,
                              s->dev->props.id, plan->dev->props.id);
    return KMUX_OK;
}

/* Times an execution for the level-1 trace. GPU work is asynchronous, so with the trace on the
 * stream is synchronised around the call (as ONEDNN_VERBOSE does): tracing changes timing. */
static double synced_now_ms(kmux_plan *plan, kmux_stream *stream) {
    if (!plan->dev->props.is_host)
        OPS(plan->dev)->stream_synchronize(STATE(plan->dev), stream->native);
    return now_ms();
}

static void trace_exec(kmux_plan *plan, kmux_stream *stream, double t0) {
    double ms = synced_now_ms(plan, stream) - t0;
    kmux_plan_info info;
    kmux_plan_info_get(plan, &info);
    trace_plan(1, "exec", plan, info.impl, ms);
    kmux_clear_error();
}

double kmux_plan_exec_begin(kmux_plan *plan, kmux_stream *stream) {
    return kmux_verbose_level() >= 1 ? synced_now_ms(plan, stream) : 0.0;
}

void kmux_plan_exec_end(kmux_plan *plan, kmux_stream *stream, double t0) {
    if (kmux_verbose_level() >= 1) trace_exec(plan, stream, t0);
}

kmux_status kmux_matmul_run_degenerate(const char *fn, kmux_stream *stream,
                                       const kmux_matmul_desc *desc, const kmux_matmul_args *args) {
    kmux_device *dev = stream->dev;
    if (dev->props.is_host) {
        kmux_cpu_finish(desc, args, NULL);
        return KMUX_OK;
    }
    if (!OPS(dev)->matmul_degenerate)
        return kmux_set_error(KMUX_ERR_UNSUPPORTED,
                              "%s: backend %s (%s) has no matmul_degenerate slot for k == 0 or "
                              "alpha == 0",
                              fn, dev->backend->name, dev->props.id);
    kmux_status st = OPS(dev)->matmul_degenerate(STATE(dev), stream->native, desc, args);
    return kmux_plan_backend_failed(st, fn, dev);
}

static kmux_status check_matmul_align(const char *fn, const kmux_plan *plan,
                                      const kmux_matmul_args *a) {
    const void *ptrs[] = {a->A, a->B, a->C, a->bias};
    static const char *const names[] = {"A", "B", "C", "bias"};
    return kmux_caps_check_align(fn, plan->dev, &plan->dev->caps.matmul, ptrs, names, 4);
}

kmux_status kmux_matmul_execute_unchecked(kmux_plan *plan, kmux_stream *stream,
                                          const kmux_matmul_args *args) {
    const char *fn = "kmux_matmul_execute";
    const kmux_matmul_desc *d = &plan->desc.matmul;
    if (d->m == 0 || d->n == 0 || d->batch_count == 0) return KMUX_OK; /* BLAS: nothing to do */
    kmux_status st = check_matmul_align(fn, plan, args);
    if (st != KMUX_OK) return st;
    int verbose = kmux_verbose_level() >= 1;
    double t0 = verbose ? synced_now_ms(plan, stream) : 0;
    /* alpha in a GPU's memory is the backend's to read (when the work runs) */
    const int dev_scalars =
        d->pointer_mode == KMUX_POINTER_MODE_DEVICE && !plan->dev->props.is_host;
    if (!plan->native || (!dev_scalars && kmux_scalar_is_zero(args->alpha, d->compute_type))) {
        st = kmux_matmul_run_degenerate(fn, stream, d, args);
    } else {
        kmux_matmul_args a = *args; /* a plan that owns its workspace runs in it */
        if (!plan->caller_ws) {
            a.workspace = NULL;
            a.workspace_bytes = 0;
        }
        st = OPS(plan->dev)->matmul->execute(STATE(plan->dev), plan->native, plan->impl,
                                             stream->native, &a);
        kmux_plan_backend_failed(st, fn, plan->dev);
    }
    if (st != KMUX_OK) return st;
    if (verbose) trace_exec(plan, stream, t0);
    return KMUX_OK;
}

kmux_status kmux_matmul_execute(kmux_plan *plan, kmux_stream *stream,
                                const kmux_matmul_args *args) {
    kmux_clear_error();
    const char *fn = "kmux_matmul_execute";
    kmux_matmul_args a;
    kmux_status st = kmux_plan_check_execute(fn, plan, stream, args, KMUX_PLAN_MATMUL);
    if (st == KMUX_OK) st = kmux_resolve_matmul_args(fn, args, &a);
    if (st == KMUX_OK) st = kmux_validate_matmul_args(fn, &plan->desc.matmul, &a);
    if (st == KMUX_OK && plan->caller_ws) {
        size_t bytes[4];
        kmux_matmul_operand_bytes(&plan->desc.matmul, bytes);
        const kmux_exec_tensor ops[4] = {{"A", a.A, bytes[0], 0, 0},
                                         {"B", a.B, bytes[1], 0, 0},
                                         {"C", a.C, bytes[2], 1, 0},
                                         {"bias", a.bias, bytes[3], 0, 0}};
        st = kmux_plan_check_workspace(fn, plan, a.workspace, a.workspace_bytes, ops, 4);
    }
    if (st != KMUX_OK) return st;
    return kmux_matmul_execute_unchecked(plan, stream, &a);
}

kmux_status kmux_matmul_run_cached(kmux_stream *stream, const kmux_matmul_desc *desc,
                                   const kmux_matmul_args *args) {
    kmux_plan_cache *cache = stream->dev->ctx->plan_cache;
    kmux_plan *plan = NULL;
    kmux_status st = kmux_plan_cache_get_matmul(cache, stream->dev, desc, &plan);
    if (st != KMUX_OK) return st;
    st = kmux_matmul_execute_unchecked(plan, stream, args);
    kmux_plan_cache_release(cache, plan);
    return st;
}

kmux_status kmux_conv2d_output_dims(const kmux_conv2d_desc *desc, int64_t *p, int64_t *q) {
    kmux_clear_error();
    if (!desc || !p || !q)
        return kmux_set_error(KMUX_ERR_INVALID_ARGUMENT, "kmux_conv2d_output_dims: %s is NULL",
                              !desc ? "desc"
                              : !p  ? "p"
                                    : "q");
    kmux_conv2d_desc d;
    kmux_status st = kmux_resolve_conv_desc("kmux_conv2d_output_dims", desc, &d);
    if (st != KMUX_OK) return st;
    return kmux_validate_conv_desc("kmux_conv2d_output_dims", &d, p, q);
}

/* The names of a plan whose epilogue the core runs: the backend's, + " + epilogue". */
static kmux_status name_conv_epi_core(kmux_plan *pl) {
    pl->conv_epi_core = 1;
    pl->impl_names = kmux_sys_calloc((size_t)pl->impl_count, sizeof *pl->impl_names);
    if (!pl->impl_names)
        return kmux_set_error(KMUX_ERR_OUT_OF_MEMORY, "kmux_conv2d_plan_create: out of memory");
    for (int i = 0; i < pl->impl_count; i++) {
        kmux_plan_info info;
        memset(&info, 0, sizeof info);
        OPS(pl->dev)->conv2d->plan_info(STATE(pl->dev), pl->native, i, &info);
        snprintf(pl->impl_names[i], sizeof pl->impl_names[i], "%s + epilogue",
                 info.impl ? info.impl : "?");
    }
    return KMUX_OK;
}

kmux_status kmux_conv2d_plan_create_unchecked(kmux_device *dev, const kmux_conv2d_desc *desc,
                                              const kmux_plan_prefs *prefs, kmux_plan **plan) {
    const char *fn = "kmux_conv2d_plan_create";
    const kmux_backend_ops *o = OPS(dev);
    kmux_plan_prefs pr = resolve_prefs(prefs);
    kmux_status st = kmux_caps_check_conv(fn, dev, desc, &pr);
    if (st == KMUX_OK) st = check_caller_ws(fn, dev, &pr);
    if (st != KMUX_OK) return st;
    /* an epilogue the device's library does not fuse: the backend gets the convolution alone
     * and the core runs the epilogue after it (kmux_conv_epilogue_run) */
    kmux_conv2d_desc bd = *desc;
    const int epi_core = (desc->epilogue & ~dev->caps.conv2d[0].epilogues) != 0;
    if (epi_core) {
        if (!dev->props.is_host && !o->matmul_degenerate)
            return kmux_set_error(KMUX_ERR_UNSUPPORTED,
                                  "%s: epilogue = 0x%x: device %s neither fuses it nor has the "
                                  "matmul_degenerate slot that would run it after the convolution",
                                  fn, desc->epilogue, dev->props.id);
        bd.epilogue = KMUX_EPILOGUE_NONE;
        bd.bias_type = KMUX_F32;
    }
    kmux_plan *pl = NULL;
    st = kmux_plan_new(dev, KMUX_PLAN_CONV2D, &pl);
    if (st != KMUX_OK) return st;
    pl->desc.conv = *desc;
    pl->impl_count = 1;
    pl->caller_ws = pr.caller_workspace;
    /* the backend sees the tuning decision resolved (KMUX_TUNE, the device "auto"): hip:N runs
     * MIOpen's find step when the plan will be measured anyway */
    pr.tune = kmux_tune_enabled(&pr, dev) ? KMUX_TUNE_ON : KMUX_TUNE_OFF;
    double t0 = now_ms();
    st = o->conv2d->plan_create(STATE(dev), dev->index, &bd, &pr, &pl->native, &pl->impl_count);
    if (st != KMUX_OK) pl->native = NULL;
    if (st == KMUX_OK) st = check_impl_count(fn, dev, pl->impl_count);
    if (st == KMUX_OK && epi_core) st = name_conv_epi_core(pl);
    if (st != KMUX_OK) {
        kmux_plan_backend_failed(st, fn, dev);
        kmux_trace_conv(2, "reject", dev, NULL, desc, -1, kmux_last_error());
        kmux_plan_free(pl);
        return st;
    }
    plan_finish(pl, &pr, t0);
    *plan = pl;
    return KMUX_OK;
}

kmux_status kmux_conv2d_plan_create(kmux_device *dev, const kmux_conv2d_desc *desc,
                                    const kmux_plan_prefs *prefs, kmux_plan **plan) {
    kmux_clear_error();
    const char *fn = "kmux_conv2d_plan_create";
    kmux_plan_prefs pr;
    kmux_conv2d_desc cd;
    kmux_status st = kmux_plan_check_create(fn, dev, desc, plan, prefs, &pr);
    if (st == KMUX_OK) st = kmux_resolve_conv_desc(fn, desc, &cd);
    if (st == KMUX_OK) st = kmux_validate_conv_desc(fn, &cd, NULL, NULL);
    if (st != KMUX_OK) return st;
    st = kmux_conv2d_plan_create_unchecked(dev, &cd, &pr, plan);
    if (st == KMUX_OK) count_as_callers(*plan);
    return st;
}

/* alpha == 0: the output becomes beta * output and the inputs are not read, as for GEMM (so NaN
 * in an input cannot leak into the result, on every backend alike). Run as the degenerate GEMM
 * C(1 x count) = beta * C with k = 0, by the core's degenerate path (no capability limit of the
 * device's matmul applies: on host devices no backend is called). */
static kmux_status conv_scale_output(kmux_plan *plan, kmux_stream *stream,
                                     const kmux_conv2d_args *args) {
    const kmux_conv2d_desc *d = &plan->desc.conv;
    int64_t P = 0, Q = 0, count;
    kmux_validate_conv_desc("kmux_conv2d_execute", d, &P, &Q);
    void *out;
    if (d->direction == KMUX_CONV_FWD) {
        out = args->y;
        count = d->n * d->k * P * Q;
    } else if (d->direction == KMUX_CONV_BWD_DATA) {
        out = args->x;
        count = d->n * d->c * d->h * d->w;
    } else {
        out = args->w;
        count = d->k * (d->c / d->groups) * d->r * d->s;
    }
    kmux_matmul_desc md = KMUX_MATMUL_DESC_INIT;
    md.m = 1;
    md.n = count;
    md.k = 0;
    md.lda = 1;
    md.ldb = md.ldc = count;
    md.a_type = md.b_type = md.c_type = d->y_type;
    md.compute_type = d->y_type == KMUX_F64 ? KMUX_COMPUTE_F64 : KMUX_COMPUTE_F32;
    kmux_matmul_args ma = KMUX_MATMUL_ARGS_INIT;
    ma.alpha = args->alpha;
    ma.beta = args->beta;
    ma.C = out;
    return kmux_matmul_run_degenerate("kmux_conv2d_execute", stream, &md, &ma);
}

kmux_status kmux_conv2d_execute(kmux_plan *plan, kmux_stream *stream,
                                const kmux_conv2d_args *args) {
    kmux_clear_error();
    const char *fn = "kmux_conv2d_execute";
    kmux_conv2d_args ca;
    kmux_status st = kmux_plan_check_execute(fn, plan, stream, args, KMUX_PLAN_CONV2D);
    if (st == KMUX_OK) st = kmux_resolve_conv_args(fn, args, &ca);
    if (st == KMUX_OK) st = kmux_validate_conv_args(fn, &plan->desc.conv, &ca);
    if (st == KMUX_OK && plan->caller_ws) {
        size_t bytes[3];
        kmux_conv_tensor_bytes(&plan->desc.conv, bytes);
        const kmux_conv2d_desc *cd = &plan->desc.conv;
        const kmux_exec_tensor ops[5] = {{"x", ca.x, bytes[0], 0, 0},
                                         {"w", ca.w, bytes[1], 0, 0},
                                         {"y", ca.y, bytes[2], 0, 0},
                                         {"bias", ca.bias, kmux_conv_bias_bytes(cd), 0, 0},
                                         {"aux", ca.aux, kmux_conv_aux_bytes(cd), 0, 0}};
        st = kmux_plan_check_workspace(fn, plan, ca.workspace, ca.workspace_bytes, ops, 5);
    }
    if (st != KMUX_OK) return st;
    if (!plan->caller_ws) { /* a plan that owns its workspace runs in it */
        ca.workspace = NULL;
        ca.workspace_bytes = 0;
    }
    args = &ca;
    {
        const kmux_conv2d_desc *cd = &plan->desc.conv;
        const void *ptrs[] = {args->x, args->w, args->y};
        static const char *const names[] = {"x", "w", "y"};
        st = kmux_caps_check_align(fn, plan->dev, &plan->dev->caps.conv2d[cd->direction - 1], ptrs,
                                   names, 3);
        if (st != KMUX_OK) return st;
    }
    const kmux_conv2d_desc *cd = &plan->desc.conv;
    if (kmux_scalar_is_zero(args->alpha, cd->compute_type)) {
        st = conv_scale_output(plan, stream, args);
        if (st == KMUX_OK && cd->epilogue) st = kmux_conv_epilogue_run(fn, stream, cd, args);
        return st;
    }
    int verbose = kmux_verbose_level() >= 1;
    double t0 = verbose ? synced_now_ms(plan, stream) : 0;
    st = OPS(plan->dev)->conv2d->execute(STATE(plan->dev), plan->native, plan->impl, stream->native,
                                         args);
    if (st != KMUX_OK) return kmux_plan_backend_failed(st, fn, plan->dev);
    if (plan->conv_epi_core) {
        st = kmux_conv_epilogue_run(fn, stream, cd, args);
        if (st != KMUX_OK) return st;
    }
    if (verbose) trace_exec(plan, stream, t0);
    return KMUX_OK;
}

kmux_status kmux_plan_info_get(const kmux_plan *plan, kmux_plan_info *info) {
    kmux_clear_error();
    if (!plan || !info)
        return kmux_set_error(KMUX_ERR_INVALID_ARGUMENT, "kmux_plan_info_get: %s is NULL",
                              !plan ? "plan" : "info");
    KMUX_CHECK_HANDLE("kmux_plan_info_get", "plan", plan, KMUX_HANDLE_PLAN);
    memset(info, 0, sizeof *info);
    info->impl = "?";
    info->effective_compute = plan->kind == KMUX_PLAN_MATMUL   ? plan->desc.matmul.compute_type
                              : plan->kind == KMUX_PLAN_CONV2D ? plan->desc.conv.compute_type
                                                               : KMUX_COMPUTE_F32;
    kmux_status st = KMUX_OK;
    const kmux_backend_ops *o = OPS(plan->dev);
    if (!plan->native && plan->kind != KMUX_PLAN_MATMUL) {
        info->impl = "kmux:empty"; /* an op family with nothing to do */
        info->deterministic = 1;
    } else if (!plan->native) {
        const kmux_matmul_desc *d = &plan->desc.matmul;
        info->impl = (d->m == 0 || d->n == 0 || d->batch_count == 0) ? "kmux:empty" : "kmux:k=0";
        info->deterministic = 1;
    } else {
        st = kmux_plan_kind_slots(o, plan->kind)
                 .plan_info(STATE(plan->dev), plan->native, plan->impl, info);
        if (plan->conv_epi_core) info->impl = plan->impl_names[plan->impl];
    }
    info->device = plan->dev->props.id;
    info->impl_index = plan->impl;
    if (!info->impl) info->impl = "?";
    return kmux_plan_backend_failed(st, "kmux_plan_info_get", plan->dev);
}

kmux_status kmux_plan_next_impl(kmux_plan *plan) {
    kmux_clear_error();
    KMUX_CHECK_HANDLE("kmux_plan_next_impl", "plan", plan, KMUX_HANDLE_PLAN);
    if (plan->cached)
        return kmux_set_error(KMUX_ERR_INVALID_ARGUMENT,
                              "kmux_plan_next_impl: plan belongs to the context's plan cache");
    if (plan->impl + 1 >= plan->impl_count) {
        kmux_plan_info info;
        kmux_plan_info_get(plan, &info);
        return kmux_set_error(KMUX_ERR_LAST_IMPL,
                              "kmux_plan_next_impl: %s is the last of the %d implementation%s of "
                              "this plan on %s",
                              info.impl, plan->impl_count, plan->impl_count == 1 ? "" : "s",
                              plan->dev->props.id);
    }
    plan->impl++;
    return KMUX_OK;
}

kmux_status kmux_plan_destroy(kmux_plan *plan) {
    kmux_clear_error();
    if (!plan) return KMUX_OK;
    KMUX_CHECK_HANDLE("kmux_plan_destroy", "plan", plan, KMUX_HANDLE_PLAN);
    if (plan->cached)
        return kmux_set_error(KMUX_ERR_INVALID_ARGUMENT,
                              "kmux_plan_destroy: plan belongs to the context's plan cache");
    kmux_plan_free(plan);
    return KMUX_OK;
}
