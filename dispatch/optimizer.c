/*
 * optimizer.c - the optimizer family (kmux_optimizer_* of kmux.h): validation from the one table
 * (dispatch/common/kmux_optimizer.h), the device's caps.optimizer, the plan, and execution with
 * its argument checks. The backend sees n >= 1 only: an empty step is the core's.
 */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "dispatch/common/kmux_optimizer.h"
#include "validate.h"

#define OPS(dev) ((dev)->backend->ops)
#define STATE(dev) ((dev)->backend->state)
#define INVALID(...) kmux_set_error(KMUX_ERR_INVALID_ARGUMENT, __VA_ARGS__)

const char *kmux_optimizer_alg_name(kmux_optimizer_alg alg) {
    return kmux_optimizer_alg_str((int)alg);
}

/* A hyper-parameter: finite and within [lo, hi] (hi_open: hi excluded). */
static kmux_status in_range(const char *fn, const char *name, float v, double lo, double hi,
                            int hi_open) {
    if (isfinite(v) && v >= lo && (hi_open ? v < hi : v <= hi)) return KMUX_OK;
    if (isinf(hi))
        return INVALID("%s: desc->%s = %g must be finite and >= %g", fn, name, (double)v, lo);
    return INVALID("%s: desc->%s = %g must be in [%g, %g%s", fn, name, (double)v, lo, hi,
                   hi_open ? ")" : "]");
}

static kmux_status validate_desc(const char *fn, const kmux_optimizer_desc *d) {
    const unsigned fl = kmux_optimizer_flags((int)d->alg);
    if (!fl) return INVALID("%s: desc->alg = %d is not a kmux_optimizer_alg", fn, (int)d->alg);
    if (d->n < 0) return INVALID("%s: desc->n = %lld is negative", fn, (long long)d->n);
    size_t bytes;
    if (!kmux_bytes_of(d->n, KMUX_F32, &bytes))
        return INVALID("%s: desc->n = %lld parameters overflow the address space", fn,
                       (long long)d->n);
    if (!kmux_family_dtype((int)d->grad_type))
        return INVALID("%s: desc->grad_type = %s (%d) is not f32, f16 or bf16", fn,
                       kmux_dtype_name(d->grad_type), (int)d->grad_type);
    if (d->copy_type != 0 && d->copy_type != KMUX_F16 && d->copy_type != KMUX_BF16)
        return INVALID("%s: desc->copy_type = %d must be 0 (no copy), KMUX_F16 or KMUX_BF16", fn,
                       d->copy_type);
    kmux_status st = in_range(fn, "weight_decay", d->weight_decay, 0.0, INFINITY, 0);
    if (st == KMUX_OK && d->alg == KMUX_OPTIMIZER_SGD) {
        st = in_range(fn, "momentum", d->momentum, 0.0, INFINITY, 0);
        if (st == KMUX_OK) st = in_range(fn, "dampening", d->dampening, 0.0, 1.0, 0);
        if (st == KMUX_OK && d->nesterov != 0 && d->nesterov != 1)
            st = INVALID("%s: desc->nesterov = %d must be 0 or 1", fn, d->nesterov);
        if (st == KMUX_OK && d->nesterov && (d->momentum <= 0.0f || d->dampening != 0.0f))
            st = INVALID("%s: desc->nesterov = 1 needs momentum > 0 and dampening 0 (momentum = "
                         "%g, dampening = %g), as torch.optim.SGD",
                         fn, (double)d->momentum, (double)d->dampening);
    }
    if (st == KMUX_OK && (fl & KMUX_OPT_ADAM)) {
        st = in_range(fn, "beta1", d->beta1, 0.0, 1.0, 1);
        if (st == KMUX_OK) st = in_range(fn, "beta2", d->beta2, 0.0, 1.0, 1);
        if (st == KMUX_OK && !(isfinite(d->eps) && d->eps > 0.0f))
            st = INVALID("%s: desc->eps = %g must be finite and > 0", fn, (double)d->eps);
    }
    return st;
}

static kmux_status check_caps(const char *fn, const kmux_device *dev,
                              const kmux_optimizer_desc *d) {
    const kmux_family_query q = {
        (int)d->alg, kmux_optimizer_alg_name(d->alg), d->grad_type, "grad_type", 0, d->n, "n"};
    kmux_status st = kmux_caps_check_family(fn, dev, OPS(dev)->optimizer != NULL,
                                            &dev->caps.optimizer, "optimizer", &q);
    if (st == KMUX_OK && d->copy_type && !(dev->caps.optimizer.dtypes >> d->copy_type & 1u))
        st = kmux_set_error(KMUX_ERR_UNSUPPORTED,
                            "%s: desc->copy_type = %s is not supported by %s for optimizer ops", fn,
                            kmux_dtype_name((kmux_dtype)d->copy_type), dev->props.id);
    return st;
}

static kmux_status create_native(kmux_device *dev, const void *desc, const kmux_plan_prefs *prefs,
                                 void **native, int *impl_count) {
    return OPS(dev)->optimizer->plan_create(STATE(dev), dev->index, desc, prefs, native,
                                            impl_count);
}

kmux_status kmux_optimizer_plan_create_unchecked(kmux_device *dev, const kmux_optimizer_desc *desc,
                                                 const kmux_plan_prefs *prefs, kmux_plan **plan) {
    const char *fn = "kmux_optimizer_plan_create";
    kmux_status st = check_caps(fn, dev, desc);
    if (st != KMUX_OK) return st;
    return kmux_plan_create_family(dev, KMUX_PLAN_OPTIMIZER, fn, desc, sizeof *desc, desc->n == 0,
                                   prefs, create_native, plan);
}

kmux_status kmux_optimizer_plan_create(kmux_device *dev, const kmux_optimizer_desc *desc,
                                       const kmux_plan_prefs *prefs, kmux_plan **plan) {
    kmux_clear_error();
    const char *fn = "kmux_optimizer_plan_create";
    kmux_plan_prefs pr;
    kmux_status st = kmux_plan_check_create(fn, dev, desc, plan, prefs, &pr);
    if (st != KMUX_OK) return st;
    if (desc->struct_size < sizeof(kmux_optimizer_desc))
        return INVALID("%s: desc->struct_size = %zu is smaller than kmux_optimizer_desc (%zu "
                       "bytes)",
                       fn, desc->struct_size, sizeof(kmux_optimizer_desc));
    kmux_optimizer_desc d = *desc;
    d.struct_size = sizeof d;
    st = validate_desc(fn, &d);
    if (st == KMUX_OK) st = kmux_optimizer_plan_create_unchecked(dev, &d, &pr, plan);
    if (st == KMUX_OK) kmux_plan_count_as_callers(*plan);
    return st;
}

kmux_status kmux_optimizer_execute(kmux_plan *plan, kmux_stream *stream,
                                   const kmux_optimizer_args *args) {
    kmux_clear_error();
    const char *fn = "kmux_optimizer_execute";
    kmux_status st = kmux_plan_check_execute(fn, plan, stream, args, KMUX_PLAN_OPTIMIZER);
    if (st != KMUX_OK) return st;
    if (args->struct_size < sizeof(kmux_optimizer_args))
        return INVALID("%s: args->struct_size = %zu is smaller than kmux_optimizer_args (%zu "
                       "bytes)",
                       fn, args->struct_size, sizeof(kmux_optimizer_args));
    const kmux_optimizer_desc *d = &plan->desc.optimizer;
    if (!isfinite(args->lr) || args->lr < 0.0f)
        return INVALID("%s: args->lr = %g must be finite and >= 0", fn, (double)args->lr);
    if (args->step < 1)
        return INVALID("%s: args->step = %lld must be >= 1 (1 for the first step)", fn,
                       (long long)args->step);
    if (d->n == 0) return KMUX_OK;
    kmux_optimizer_args a = *args;
    const unsigned fl = kmux_optimizer_flags((int)d->alg);
    const int uses1 =
        (fl & KMUX_OPT_STATE1) && (d->alg != KMUX_OPTIMIZER_SGD || d->momentum != 0.0f);
    const int uses2 = (fl & KMUX_OPT_STATE2) != 0;
    if (!uses1) a.state1 = NULL;
    if (!uses2) a.state2 = NULL;
    if (!d->copy_type) a.param_copy = NULL;
    /* the tensors the step uses: non-NULL and pairwise disjoint */
    const size_t n = (size_t)d->n;
    const kmux_exec_tensor t[] = {
        {"param", a.param, n * 4, 1, 1},
        {"grad", a.grad, n * kmux_dtype_size(d->grad_type), 0, 1},
        {"state1", a.state1, n * 4, 1, uses1},
        {"state2", a.state2, n * 4, 1, uses2},
        {"param_copy", a.param_copy, d->copy_type ? n * 2 : 0, 1, d->copy_type != 0},
    };
    char why[64];
    snprintf(why, sizeof why, "%s uses it, n = %lld", kmux_optimizer_alg_name(d->alg),
             (long long)d->n);
    st = kmux_check_exec_tensors(fn, t, (int)(sizeof t / sizeof t[0]), why);
    if (st != KMUX_OK) return st;
    const double t0 = kmux_plan_exec_begin(plan, stream);
    st = OPS(plan->dev)->optimizer->execute(STATE(plan->dev), plan->native, plan->impl,
                                            stream->native, &a);
    if (st != KMUX_OK) return kmux_plan_backend_failed(st, fn, plan->dev);
    kmux_plan_exec_end(plan, stream, t0);
    return KMUX_OK;
}
