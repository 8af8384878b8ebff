/*
 * caps.c - the device capability checks (kmux_device_caps of kmux_backend.h), done once in the
 * core for every backend alike, after validation and before any backend sees the problem.
 *
 * One message format for every limit and every device:
 *   "<fn>: <name> = <value> exceeds the largest <what> device <id> accepts (<limit>)"
 * and, for what a device does not run at all, "<fn>: ...: device <id> does not run ..."; a dtype
 * the device runs only as another one (kmux_device_caps.dtype_instead) is named with that one:
 *   "<fn>: a_type = e4m3 (OCP) is not supported by hip:0 (gfx942, FNUZ fp8 only): use e4m3fnuz".
 * Every refusal is KMUX_ERR_UNSUPPORTED: the request is valid, this device cannot honour it.
 */
#include <inttypes.h>
#include <stdio.h>

#include "dispatch/common/kmux_dtype_desc.h"
#include "dispatch/common/kmux_type_rules.h"
#include "validate.h"

#define UNSUPPORTED(...) kmux_set_error(KMUX_ERR_UNSUPPORTED, __VA_ARGS__)

typedef struct named {
    const char *name;
    int64_t v;
} named;

/* The first value of list beyond limit (0 = no limit) is refused with the common message. */
static kmux_status check_limit(const char *fn, const kmux_device *dev, const char *what,
                               int64_t limit, const named *list, size_t n) {
    if (limit <= 0) return KMUX_OK;
    for (size_t i = 0; i < n; i++)
        if (list[i].v > limit)
            return UNSUPPORTED("%s: %s = %lld exceeds the largest %s device %s accepts (%lld)", fn,
                               list[i].name, (long long)list[i].v, what, dev->props.id,
                               (long long)limit);
    return KMUX_OK;
}

/* Index of the row (a, b, c, ct) in a legal type table, -1 when absent. */
static int type_row(const kmux_type_combination *rows, int n, kmux_dtype a, kmux_dtype b,
                    kmux_dtype c, kmux_compute_type ct) {
    for (int i = 0; i < n; i++)
        if (rows[i].a_type == a && rows[i].b_type == b && rows[i].c_type == c &&
            rows[i].compute_type == ct)
            return i;
    return -1;
}

_Static_assert(KMUX_DTYPE_COUNT <= sizeof(((kmux_device_caps *)0)->dtype_instead),
               "kmux_device_caps.dtype_instead holds fewer entries than kmux_dtype has");

/* The operand dtypes of a problem, with their argument names, for the refusal message. */
typedef struct typed_args {
    const char *name[3];
    kmux_dtype type[3];
} typed_args;

/* A dtype's name with its fp8 family: "e4m3 (OCP)", "e4m3fnuz (FNUZ)", "f16". */
static void family_name(kmux_dtype t, char *buf, size_t n) {
    snprintf(buf, n, "%s%s", kmux_dtype_name(t),
             !kmux_dtype_is_fp8(t)   ? ""
             : kmux_dtype_is_fnuz(t) ? " (FNUZ)"
                                     : " (OCP)");
}

/* The first operand whose dtype the device runs only as another one (dtype_instead, ABI 2.3):
 * the refusal names that one; KMUX_OK when no operand has such an alternative. */
static kmux_status instead(const char *fn, const kmux_device *dev, const typed_args *ta) {
    for (int i = 0; i < 3; i++) {
        kmux_dtype t = ta->type[i];
        if (t <= 0 || t >= KMUX_DTYPE_COUNT) continue;
        unsigned alt = dev->caps.dtype_instead[t];
        if (alt == 0 || alt >= KMUX_DTYPE_COUNT || alt == (unsigned)t) continue;
        char have[48], use[48];
        family_name(t, have, sizeof have);
        family_name((kmux_dtype)alt, use, sizeof use);
        const char *note = dev->caps.dtype_instead_note;
        return UNSUPPORTED("%s: %s = %s is not supported by %s%s%s%s: use %s", fn, ta->name[i],
                           have, dev->props.id, note ? " (" : "", note ? note : "", note ? ")" : "",
                           kmux_dtype_name((kmux_dtype)alt));
    }
    return KMUX_OK;
}

/* The type row against type_rows / emulated_rows; desc names the combination in messages. */
static kmux_status check_row(const char *fn, const kmux_device *dev, const kmux_op_caps *c, int row,
                             const char *desc, const typed_args *ta, const kmux_plan_prefs *prefs) {
    if (row < 0 || row >= 64 || !((c->type_rows >> row) & 1u)) {
        kmux_status st = instead(fn, dev, ta);
        if (st != KMUX_OK) return st;
        return UNSUPPORTED("%s: %s: device %s does not run this type combination", fn, desc,
                           dev->props.id);
    }
    int allow = prefs ? prefs->allow_emulation : 1; /* resolved prefs (compat.c) */
    if (((c->emulated_rows >> row) & 1u) && !allow)
        return UNSUPPORTED("%s: %s: device %s runs this type combination only by emulation "
                           "(conversion to a wider type, \"+cvt\"), which needs "
                           "prefs.allow_emulation = 1",
                           fn, desc, dev->props.id);
    return KMUX_OK;
}

kmux_status kmux_caps_check_matmul(const char *fn, const kmux_device *dev,
                                   const kmux_matmul_desc *d, const kmux_plan_prefs *prefs) {
    const kmux_op_caps *c = &dev->caps.matmul;
    if (!c->supported || !dev->backend->ops->matmul)
        return UNSUPPORTED("%s: device %s does not run matmul", fn, dev->props.id);
    const named dims[] = {{"m", d->m}, {"n", d->n}, {"k", d->k}};
    const named batch[] = {{"batch_count", d->batch_count}};
    const named lds[] = {{"lda", d->lda}, {"ldb", d->ldb}, {"ldc", d->ldc}};
    kmux_status st = check_limit(fn, dev, "dimension", c->max_dim, dims, 3);
    if (st == KMUX_OK) st = check_limit(fn, dev, "batch", c->max_batch, batch, 1);
    if (st == KMUX_OK) st = check_limit(fn, dev, "leading dimension", c->max_ld, lds, 3);
    if (st != KMUX_OK) return st;
    int64_t el[3];
    kmux_matmul_operand_spans(d, el);
    const named spans[] = {{"span of A", el[0]}, {"span of B", el[1]}, {"span of C", el[2]}};
    st = check_limit(fn, dev, "operand span (elements)", c->max_elements, spans, 3);
    if (st != KMUX_OK) return st;
    unsigned extra = d->epilogue & ~c->epilogues;
    if (extra)
        return UNSUPPORTED("%s: epilogue = 0x%x: device %s does not run the %s epilogue", fn,
                           d->epilogue, dev->props.id, kmux_epilogue_flag_name(extra));
    int n = 0;
    const kmux_type_combination *rows = kmux_rules_matmul_table(&n);
    char desc[160];
    snprintf(desc, sizeof desc, "a_type = %s, b_type = %s, c_type = %s, compute_type = %s",
             kmux_dtype_name(d->a_type), kmux_dtype_name(d->b_type), kmux_dtype_name(d->c_type),
             kmux_compute_type_name(d->compute_type));
    const typed_args types = {{"a_type", "b_type", "c_type"}, {d->a_type, d->b_type, d->c_type}};
    return check_row(fn, dev, c,
                     type_row(rows, n, d->a_type, d->b_type, d->c_type, d->compute_type), desc,
                     &types, prefs);
}

kmux_status kmux_caps_check_conv(const char *fn, const kmux_device *dev, const kmux_conv2d_desc *d,
                                 const kmux_plan_prefs *prefs) {
    static const char *dir_name[] = {"?", "forward", "backward-data", "backward-weights"};
    const kmux_op_caps *c = &dev->caps.conv2d[d->direction - 1];
    if (!c->supported || !dev->backend->ops->conv2d)
        return UNSUPPORTED("%s: device %s does not run %s convolution", fn, dev->props.id,
                           dir_name[d->direction]);
    int64_t p = 0, q = 0;
    kmux_validate_conv_desc(fn, d, &p, &q);
    const named dims[] = {{"n", d->n},
                          {"c", d->c},
                          {"h", d->h},
                          {"w", d->w},
                          {"k", d->k},
                          {"r", d->r},
                          {"s", d->s},
                          {"p", p},
                          {"q", q},
                          {"stride_h", d->stride_h},
                          {"stride_w", d->stride_w},
                          {"pad_top", d->pad_top},
                          {"pad_bottom", d->pad_bottom},
                          {"pad_left", d->pad_left},
                          {"pad_right", d->pad_right},
                          {"dilation_h", d->dilation_h},
                          {"dilation_w", d->dilation_w}};
    kmux_status st =
        check_limit(fn, dev, "dimension", c->max_dim, dims, sizeof dims / sizeof *dims);
    if (st != KMUX_OK) return st;
    const named elems[] = {{"elements of x", d->n * d->c * d->h * d->w},
                           {"elements of w", d->k * (d->c / d->groups) * d->r * d->s},
                           {"elements of y", d->n * d->k * p * q}};
    st = check_limit(fn, dev, "tensor (elements)", c->max_elements, elems, 3);
    if (st != KMUX_OK) return st;
    if (c->layouts && !(c->layouts & (1u << d->layout)))
        return UNSUPPORTED("%s: layout = %s: device %s does not run this layout", fn,
                           d->layout == KMUX_NHWC ? "NHWC" : "NCHW", dev->props.id);
    if (!c->asymmetric_padding && (d->pad_top != d->pad_bottom || d->pad_left != d->pad_right))
        return UNSUPPORTED("%s: pad_top = %lld, pad_bottom = %lld, pad_left = %lld, pad_right = "
                           "%lld: device %s does not run asymmetric padding",
                           fn, (long long)d->pad_top, (long long)d->pad_bottom,
                           (long long)d->pad_left, (long long)d->pad_right, dev->props.id);
    if (!c->groups && d->groups > 1)
        return UNSUPPORTED("%s: groups = %lld: device %s does not run grouped convolution", fn,
                           (long long)d->groups, dev->props.id);
    int n = 0;
    const kmux_type_combination *rows = kmux_rules_conv_table(&n);
    char desc[160];
    snprintf(desc, sizeof desc, "x_type = %s, w_type = %s, y_type = %s, compute_type = %s",
             kmux_dtype_name(d->x_type), kmux_dtype_name(d->w_type), kmux_dtype_name(d->y_type),
             kmux_compute_type_name(d->compute_type));
    const typed_args types = {{"x_type", "w_type", "y_type"}, {d->x_type, d->w_type, d->y_type}};
    return check_row(fn, dev, c,
                     type_row(rows, n, d->x_type, d->w_type, d->y_type, d->compute_type), desc,
                     &types, prefs);
}

kmux_status kmux_caps_check_align(const char *fn, const kmux_device *dev, const kmux_op_caps *c,
                                  const void *const *ptrs, const char *const *names, int count) {
    if (c->ptr_align <= 1) return KMUX_OK;
    for (int i = 0; i < count; i++)
        if (ptrs[i] && (uintptr_t)ptrs[i] % c->ptr_align != 0)
            return UNSUPPORTED("%s: %s = %p is not a multiple of %u bytes, the alignment device %s "
                               "requires",
                               fn, names[i], ptrs[i], (unsigned)c->ptr_align, dev->props.id);
    return KMUX_OK;
}

kmux_status kmux_caps_check_family(const char *fn, const kmux_device *dev, int has_ops,
                                   const kmux_family_caps *c, const char *family,
                                   const kmux_family_query *q) {
    if (!has_ops || !c->algs || !c->dtypes)
        return UNSUPPORTED("%s: device %s (backend %s) has no %s ops", fn, dev->props.id,
                           dev->backend->name, family);
    if (!(c->algs >> q->alg & 1u))
        return UNSUPPORTED("%s: desc->alg = %s is not supported by %s", fn, q->alg_name,
                           dev->props.id);
    if (!(c->dtypes >> q->dtype & 1u))
        return UNSUPPORTED("%s: desc->%s = %s is not supported by %s for %s ops", fn,
                           q->dtype_field, kmux_common_dtype_name(q->dtype), dev->props.id, family);
    if (q->prop > 0 && !(c->props >> q->prop & 1u))
        return UNSUPPORTED("%s: desc->prop = %s is not supported by %s", fn,
                           q->prop == KMUX_PROP_FORWARD ? "forward" : "backward", dev->props.id);
    if (c->max_elements > 0 && q->n > c->max_elements)
        return UNSUPPORTED("%s: desc->%s = %lld is beyond the %lld elements %s runs in one call",
                           fn, q->n_field ? q->n_field : "n", (long long)q->n,
                           (long long)c->max_elements, dev->props.id);
    return KMUX_OK;
}
