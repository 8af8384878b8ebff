/*
 * validate.c - argument validation for GEMM/matmul and convolution (see validate.h).
 */
#include <stdint.h>
#include <stdio.h>

#include "validate.h"

#include "kmux_type_rules.h"

#define INVALID(...) kmux_set_error(KMUX_ERR_INVALID_ARGUMENT, __VA_ARGS__)

int kmux_bytes_of(int64_t n, kmux_dtype t, size_t *bytes) {
    int64_t b;
    if (n < 0 || __builtin_mul_overflow(n, (int64_t)kmux_dtype_bytes(t), &b) ||
        (uint64_t)b > (uint64_t)PTRDIFF_MAX)
        return 0;
    *bytes = (size_t)b;
    return 1;
}

/* Number of elements spanned by `batch` matrices of rows x cols with leading dimension ld (in the
 * storage order) and batch stride; 0 on overflow (callers only ask with rows, cols >= 1). */
static int span_of(int64_t outer, int64_t inner, int64_t ld, int64_t batch, int64_t stride,
                   int64_t *span) {
    int64_t s, t;
    if (__builtin_mul_overflow(outer - 1, ld, &s) || __builtin_add_overflow(s, inner, &s)) return 0;
    if (batch > 1) {
        if (__builtin_mul_overflow(batch - 1, stride, &t) || __builtin_add_overflow(s, t, &s))
            return 0;
    }
    *span = s;
    return 1;
}

/* One GEMM operand as stored (before op): rows x cols, leading dimension ld, batch stride, and
 * the names of the arguments each of those comes from, so that a message blames the right one. */
typedef struct operand {
    const char *name, *ldname, *stridename, *rowname,
        *colname; /* "A", "lda", "stride_a", "m", "k" */
    int64_t rows, cols, ld, stride;
    kmux_dtype t;
} operand;

static int spans(int64_t outer, int64_t inner, int64_t ld, int64_t batch, int64_t stride,
                 kmux_dtype t) {
    int64_t span;
    size_t bytes;
    return span_of(outer, inner, ld, batch, stride, &span) && kmux_bytes_of(span, t, &bytes);
}

/* Checks one operand. A matrix too large for the address space blames its leading dimension when
 * the minimal one would fit, else its sizes; a batch too large blames the stride when a dense
 * stride would fit, else batch_count. */
static kmux_status check_operand(const char *fn, kmux_order order, int64_t batch,
                                 const operand *o) {
    /* CBLAS: row-major ld >= max(1, cols); column-major ld >= max(1, rows). */
    int64_t need = order == KMUX_ROW_MAJOR ? o->cols : o->rows;
    if (need < 1) need = 1;
    if (o->ld < need)
        return INVALID("%s: %s = %lld is smaller than %lld, the minimum for %s %s (%lld x %lld as "
                       "stored)",
                       fn, o->ldname, (long long)o->ld, (long long)need,
                       order == KMUX_ROW_MAJOR ? "row-major" : "column-major", o->name,
                       (long long)o->rows, (long long)o->cols);
    if (o->rows == 0 || o->cols == 0) return KMUX_OK;
    int64_t outer = order == KMUX_ROW_MAJOR ? o->rows : o->cols;
    int64_t inner = order == KMUX_ROW_MAJOR ? o->cols : o->rows;
    if (!spans(outer, inner, o->ld, 1, 0, o->t)) {
        if (spans(outer, inner, need, 1, 0, o->t))
            return INVALID("%s: %s = %lld is too large: one %s matrix (%lld x %lld as stored, %s) "
                           "spans more elements than the address space can hold",
                           fn, o->ldname, (long long)o->ld, o->name, (long long)o->rows,
                           (long long)o->cols, kmux_dtype_name(o->t));
        return INVALID("%s: %s = %lld and %s = %lld are too large: %s (%lld x %lld as stored, %s) "
                       "spans more elements than the address space can hold",
                       fn, o->rowname, (long long)o->rows, o->colname, (long long)o->cols, o->name,
                       (long long)o->rows, (long long)o->cols, kmux_dtype_name(o->t));
    }
    if (!spans(outer, inner, o->ld, batch, o->stride, o->t)) {
        int64_t one = (outer - 1) * o->ld + inner; /* fits: checked above */
        if (o->stride > one && spans(outer, inner, o->ld, batch, one, o->t))
            return INVALID("%s: %s = %lld is too large: batch_count = %lld %s matrices at that "
                           "stride span more elements than the address space can hold",
                           fn, o->stridename, (long long)o->stride, (long long)batch, o->name);
        return INVALID("%s: batch_count = %lld is too large: %s matrices (%s = %lld) span more "
                       "elements than the address space can hold",
                       fn, (long long)batch, o->name, o->stridename, (long long)o->stride);
    }
    return KMUX_OK;
}

/* The type table of kmux.h (kmux_type_rules.h: the one copy). */
static kmux_status check_types(const char *fn, const kmux_matmul_desc *d) {
    kmux_dtype a = d->a_type, b = d->b_type, c = d->c_type;
    kmux_compute_type ct = d->compute_type;
    const char *why = NULL;
    if (kmux_rules_matmul_legal(a, b, c, ct, &why)) return KMUX_OK;
    return INVALID("%s: a_type = %s, b_type = %s, c_type = %s, compute_type = %s is not a "
                   "supported combination: %s",
                   fn, kmux_dtype_name(a), kmux_dtype_name(b), kmux_dtype_name(c),
                   kmux_compute_type_name(ct), why);
}
const char *kmux_epilogue_flag_name(unsigned flags) {
    static const char *const names[] = {"BIAS",  "RELU",  "GELU",   "RELU_AUX", "GELU_AUX",
                                        "DRELU", "DGELU", "BGRADA", "BGRADB"};
    for (unsigned i = 0; i < sizeof names / sizeof names[0]; i++)
        if (flags & (1u << i)) return names[i];
    return "unknown";
}

/* The epilogue rules of kmux.h (kmux_epilogue, kmux_matmul_plan_create). */
static kmux_status check_epilogue(const char *fn, const kmux_matmul_desc *d) {
    const unsigned e = d->epilogue;
    if (e & ~KMUX_EPILOGUE_KNOWN) return INVALID("%s: epilogue = 0x%x has unknown flags", fn, e);
    if ((e & KMUX_EPILOGUE_RELU) && (e & KMUX_EPILOGUE_GELU))
        return INVALID("%s: epilogue = 0x%x: RELU and GELU are exclusive", fn, e);
    if (e && d->compute_type == KMUX_COMPUTE_I32)
        return INVALID("%s: epilogue = 0x%x is not defined for integer GEMM", fn, e);
    if ((e & KMUX_EPILOGUE_RELU_AUX) && !(e & KMUX_EPILOGUE_RELU))
        return INVALID("%s: epilogue = 0x%x: RELU_AUX needs RELU", fn, e);
    if ((e & KMUX_EPILOGUE_GELU_AUX) && !(e & KMUX_EPILOGUE_GELU))
        return INVALID("%s: epilogue = 0x%x: GELU_AUX needs GELU", fn, e);
    const unsigned alone = e & KMUX_EPILOGUE_ALONE;
    if (alone && ((alone & (alone - 1)) || (e & ~KMUX_EPILOGUE_ALONE)))
        return INVALID("%s: epilogue = 0x%x: DRELU, DGELU, BGRADA and BGRADB are each used alone",
                       fn, e);
    if (alone && d->a_type != KMUX_F32 && d->a_type != KMUX_F16 && d->a_type != KMUX_BF16)
        return INVALID("%s: epilogue = 0x%x is defined for f32, f16 and bf16 inputs, not a_type = "
                       "%s",
                       fn, e, kmux_dtype_name(d->a_type));
    if ((e & (KMUX_EPILOGUE_BGRADA | KMUX_EPILOGUE_BGRADB)) && d->batch_count > 1)
        return INVALID("%s: epilogue = 0x%x (a bias gradient) needs batch_count = 1, not %lld", fn,
                       e, (long long)d->batch_count);
    if ((e & (KMUX_EPILOGUE_BIAS | KMUX_EPILOGUE_BGRADA | KMUX_EPILOGUE_BGRADB)) &&
        d->bias_type != KMUX_F32 && d->bias_type != d->c_type)
        return INVALID("%s: bias_type = %s must be f32 or c_type (%s)", fn,
                       kmux_dtype_name(d->bias_type), kmux_dtype_name(d->c_type));
    const int bits = kmux_matmul_aux_is_mask(d);
    if (!(e & KMUX_EPILOGUE_WITH_AUX)) return KMUX_OK;
    if (!bits && d->aux_type != KMUX_F32 && d->aux_type != d->c_type)
        return INVALID("%s: aux_type = %s must be f32 or c_type (%s)", fn,
                       kmux_dtype_name(d->aux_type), kmux_dtype_name(d->c_type));
    const int64_t inner = d->order == KMUX_ROW_MAJOR ? d->n : d->m;
    const int64_t outer = d->order == KMUX_ROW_MAJOR ? d->m : d->n;
    const char *unit = bits ? "bits" : "elements";
    if (d->aux_ld < (inner > 1 ? inner : 1))
        return INVALID("%s: aux_ld = %lld must be >= %lld (D's %s, in %s)", fn,
                       (long long)d->aux_ld, (long long)(inner > 1 ? inner : 1),
                       d->order == KMUX_ROW_MAJOR ? "n" : "m", unit);
    if (outer > 0 && d->aux_ld > INT64_MAX / outer)
        return INVALID("%s: aux_ld = %lld times %lld overflows", fn, (long long)d->aux_ld,
                       (long long)outer);
    if (d->batch_count > 1 && outer > 0 && inner > 0) {
        const int64_t one = (outer - 1) * d->aux_ld + inner;
        if (d->stride_aux < one)
            return INVALID("%s: stride_aux = %lld is smaller than one aux matrix (%lld %s), so "
                           "the batches would overlap",
                           fn, (long long)d->stride_aux, (long long)one, unit);
        if (d->stride_aux > (INT64_MAX - one) / (d->batch_count - 1))
            return INVALID("%s: stride_aux = %lld times batch_count = %lld overflows", fn,
                           (long long)d->stride_aux, (long long)d->batch_count);
    }
    return KMUX_OK;
}

kmux_status kmux_validate_matmul_desc(const char *fn, const kmux_matmul_desc *d) {
    if (d->struct_size < sizeof(kmux_matmul_desc))
        return INVALID("%s: desc->struct_size = %zu, expected %zu (use KMUX_MATMUL_DESC_INIT)", fn,
                       d->struct_size, sizeof(kmux_matmul_desc));
    if (d->order != KMUX_ROW_MAJOR && d->order != KMUX_COL_MAJOR)
        return INVALID("%s: order = %d is not KMUX_ROW_MAJOR (101) or KMUX_COL_MAJOR (102)", fn,
                       (int)d->order);
    if (d->transa != KMUX_NO_TRANS && d->transa != KMUX_TRANS)
        return INVALID("%s: transa = %d is not KMUX_NO_TRANS (111) or KMUX_TRANS (112)", fn,
                       (int)d->transa);
    if (d->transb != KMUX_NO_TRANS && d->transb != KMUX_TRANS)
        return INVALID("%s: transb = %d is not KMUX_NO_TRANS (111) or KMUX_TRANS (112)", fn,
                       (int)d->transb);
    if (d->pointer_mode != KMUX_POINTER_MODE_HOST && d->pointer_mode != KMUX_POINTER_MODE_DEVICE)
        return INVALID("%s: pointer_mode = %d is not KMUX_POINTER_MODE_HOST (0) or "
                       "KMUX_POINTER_MODE_DEVICE (1)",
                       fn, (int)d->pointer_mode);
    if (!kmux_dtype_is_valid(d->a_type))
        return INVALID("%s: a_type = %d is not a kmux_dtype", fn, (int)d->a_type);
    if (!kmux_dtype_is_valid(d->b_type))
        return INVALID("%s: b_type = %d is not a kmux_dtype", fn, (int)d->b_type);
    if (!kmux_dtype_is_valid(d->c_type))
        return INVALID("%s: c_type = %d is not a kmux_dtype", fn, (int)d->c_type);
    if (d->compute_type < KMUX_COMPUTE_F64 || d->compute_type > KMUX_COMPUTE_I32)
        return INVALID("%s: compute_type = %d is not a kmux_compute_type", fn,
                       (int)d->compute_type);
    if (d->m < 0) return INVALID("%s: m = %lld is negative", fn, (long long)d->m);
    if (d->n < 0) return INVALID("%s: n = %lld is negative", fn, (long long)d->n);
    if (d->k < 0) return INVALID("%s: k = %lld is negative", fn, (long long)d->k);
    if (d->batch_count < 0)
        return INVALID("%s: batch_count = %lld is negative", fn, (long long)d->batch_count);
    if (d->stride_a < 0 || d->stride_b < 0 || d->stride_c < 0)
        return INVALID("%s: stride_%s = %lld is negative", fn,
                       d->stride_a < 0   ? "a"
                       : d->stride_b < 0 ? "b"
                                         : "c",
                       (long long)(d->stride_a < 0   ? d->stride_a
                                   : d->stride_b < 0 ? d->stride_b
                                                     : d->stride_c));
    kmux_status st = check_types(fn, d);
    if (st != KMUX_OK) return st;

    int ta = d->transa == KMUX_TRANS, tb = d->transb == KMUX_TRANS;
    int64_t batch = d->batch_count;
    const operand ops[3] = {
        {"A", "lda", "stride_a", ta ? "k" : "m", ta ? "m" : "k", ta ? d->k : d->m, ta ? d->m : d->k,
         d->lda, d->stride_a, d->a_type},
        {"B", "ldb", "stride_b", tb ? "n" : "k", tb ? "k" : "n", tb ? d->n : d->k, tb ? d->k : d->n,
         d->ldb, d->stride_b, d->b_type},
        {"C", "ldc", "stride_c", "m", "n", d->m, d->n, d->ldc, d->stride_c, d->c_type},
    };
    for (int i = 0; i < 3 && st == KMUX_OK; i++)
        st = check_operand(fn, d->order, batch, &ops[i]);
    if (st != KMUX_OK) return st;
    /* Batches of C must not overlap, or results would depend on the execution order. */
    if (batch > 1 && d->m > 0 && d->n > 0) {
        int64_t outer = d->order == KMUX_ROW_MAJOR ? d->m : d->n;
        int64_t inner = d->order == KMUX_ROW_MAJOR ? d->n : d->m;
        int64_t one = (outer - 1) * d->ldc + inner;
        if (d->stride_c < one)
            return INVALID("%s: stride_c = %lld is smaller than one C matrix (%lld elements), so "
                           "the %lld batches would overlap",
                           fn, (long long)d->stride_c, (long long)one, (long long)batch);
    }
    return check_epilogue(fn, d);
}

/* The epilogue's pointers (aux, bias_grad) for a non-empty D. */
static kmux_status check_epilogue_args(const char *fn, const kmux_matmul_desc *d,
                                       const kmux_matmul_args *a) {
    const unsigned e = d->epilogue;
    if ((e & KMUX_EPILOGUE_ALONE) && (a->a_scale || a->b_scale || a->d_scale))
        return INVALID("%s: epilogue = 0x%x takes no fp8 scales (%s is not NULL)", fn, e,
                       a->a_scale   ? "a_scale"
                       : a->b_scale ? "b_scale"
                                    : "d_scale");
    if (!(e & (KMUX_EPILOGUE_WITH_AUX | KMUX_EPILOGUE_BGRADA | KMUX_EPILOGUE_BGRADB)))
        return KMUX_OK;
    int64_t el[3];
    kmux_matmul_operand_spans(d, el);
    const int bgrad_a = (e & KMUX_EPILOGUE_BGRADA) != 0, bgrad_b = (e & KMUX_EPILOGUE_BGRADB) != 0;
    const int aux = (e & KMUX_EPILOGUE_WITH_AUX) != 0;
    const size_t nbg = (size_t)(bgrad_a ? d->m : bgrad_b ? d->n : 0);
    /* the mask is read and written in 32-bit words on GPUs; elements at their natural alignment */
    const size_t align = kmux_matmul_aux_is_mask(d) ? 4 : kmux_dtype_bytes(d->aux_type);
    if (aux && a->aux && (uintptr_t)a->aux % align)
        return INVALID("%s: args->aux = %p is not aligned to %zu bytes", fn, a->aux, align);
    const kmux_exec_tensor t[5] = {
        {.name = "C",
         .p = a->C,
         .bytes = (size_t)el[2] * kmux_dtype_bytes(d->c_type),
         .written = 1,
         .needed = 1},
        {.name = "aux",
         .p = a->aux,
         .bytes = aux ? kmux_matmul_aux_bytes(d) : 0,
         .written = (e & (KMUX_EPILOGUE_RELU_AUX | KMUX_EPILOGUE_GELU_AUX)) != 0,
         .needed = aux},
        {.name = "bias_grad",
         .p = a->bias_grad,
         .bytes = nbg * kmux_dtype_bytes(d->bias_type),
         .written = 1,
         .needed = bgrad_a || bgrad_b},
        {.name = "A",
         .p = a->A,
         .bytes = (size_t)el[0] * kmux_dtype_bytes(d->a_type),
         .needed = bgrad_a && d->k > 0},
        {.name = "B",
         .p = a->B,
         .bytes = (size_t)el[1] * kmux_dtype_bytes(d->b_type),
         .needed = bgrad_b && d->k > 0},
    };
    return kmux_check_exec_tensors(fn, t, 5, "the epilogue needs it");
}

kmux_status kmux_validate_matmul_args(const char *fn, const kmux_matmul_desc *d,
                                      const kmux_matmul_args *a) {
    if (a->struct_size < sizeof(kmux_matmul_args))
        return INVALID("%s: args->struct_size = %zu, expected %zu (use KMUX_MATMUL_ARGS_INIT)", fn,
                       a->struct_size, sizeof(kmux_matmul_args));
    if (!a->alpha) return INVALID("%s: alpha is NULL", fn);
    if (!a->beta) return INVALID("%s: beta is NULL", fn);
    if (d->m == 0 || d->n == 0 || d->batch_count == 0) return KMUX_OK;
    if (!a->C)
        return INVALID("%s: C is NULL with m = %lld, n = %lld", fn, (long long)d->m,
                       (long long)d->n);
    /* alpha in device memory is not read here: A and B are needed whenever k > 0 */
    const int dev_ptr = d->pointer_mode == KMUX_POINTER_MODE_DEVICE;
    int reads_ab = d->k > 0 && (dev_ptr || !kmux_scalar_is_zero(a->alpha, d->compute_type));
    const char *why = dev_ptr ? "alpha in device memory (pointer_mode)" : "alpha != 0";
    if (reads_ab && !a->A)
        return INVALID("%s: A is NULL with k = %lld and %s", fn, (long long)d->k, why);
    if (reads_ab && !a->B)
        return INVALID("%s: B is NULL with k = %lld and %s", fn, (long long)d->k, why);
    if ((d->epilogue & KMUX_EPILOGUE_BIAS) && !a->bias)
        return INVALID("%s: bias is NULL with the KMUX_EPILOGUE_BIAS epilogue", fn);
    return check_epilogue_args(fn, d, a);
}

kmux_status kmux_validate_conv_desc(const char *fn, const kmux_conv2d_desc *d, int64_t *p,
                                    int64_t *q) {
    if (d->struct_size < sizeof(kmux_conv2d_desc))
        return INVALID("%s: desc->struct_size = %zu, expected %zu (use KMUX_CONV2D_DESC_INIT)", fn,
                       d->struct_size, sizeof(kmux_conv2d_desc));
    if (d->direction < KMUX_CONV_FWD || d->direction > KMUX_CONV_BWD_WEIGHTS)
        return INVALID("%s: direction = %d is not a kmux_conv_direction", fn, (int)d->direction);
    if (d->layout != KMUX_NCHW && d->layout != KMUX_NHWC)
        return INVALID("%s: layout = %d is not KMUX_NCHW or KMUX_NHWC", fn, (int)d->layout);
    const struct {
        const char *name;
        int64_t v;
    } pos[] = {{"n", d->n},
               {"c", d->c},
               {"h", d->h},
               {"w", d->w},
               {"k", d->k},
               {"r", d->r},
               {"s", d->s},
               {"groups", d->groups},
               {"stride_h", d->stride_h},
               {"stride_w", d->stride_w},
               {"dilation_h", d->dilation_h},
               {"dilation_w", d->dilation_w}};
    for (size_t i = 0; i < sizeof pos / sizeof pos[0]; i++)
        if (pos[i].v < 1)
            return INVALID("%s: %s = %lld must be >= 1", fn, pos[i].name, (long long)pos[i].v);
    const struct {
        const char *name;
        int64_t v;
    } pads[] = {{"pad_top", d->pad_top},
                {"pad_bottom", d->pad_bottom},
                {"pad_left", d->pad_left},
                {"pad_right", d->pad_right}};
    for (size_t i = 0; i < 4; i++)
        if (pads[i].v < 0)
            return INVALID("%s: %s = %lld is negative", fn, pads[i].name, (long long)pads[i].v);
    if (d->c % d->groups)
        return INVALID("%s: c = %lld is not a multiple of groups = %lld", fn, (long long)d->c,
                       (long long)d->groups);
    if (d->k % d->groups)
        return INVALID("%s: k = %lld is not a multiple of groups = %lld", fn, (long long)d->k,
                       (long long)d->groups);
    /* Guard every intermediate against overflow: sizes up to 2^31 each keep products in range
     * only if checked, so check them. */
    int64_t eff_r, eff_s, hp, wp, P, Q;
    /* eff = (r - 1) * dilation + 1, the rows the dilated filter spans (found by fuzz_conv: the
     * + 1 alone can overflow) */
    if (__builtin_mul_overflow(d->r - 1, d->dilation_h, &eff_r) ||
        __builtin_add_overflow(eff_r, 1, &eff_r))
        return INVALID("%s: r = %lld with dilation_h = %lld: the dilated filter height overflows "
                       "int64_t",
                       fn, (long long)d->r, (long long)d->dilation_h);
    if (__builtin_mul_overflow(d->s - 1, d->dilation_w, &eff_s) ||
        __builtin_add_overflow(eff_s, 1, &eff_s))
        return INVALID("%s: s = %lld with dilation_w = %lld: the dilated filter width overflows "
                       "int64_t",
                       fn, (long long)d->s, (long long)d->dilation_w);
    if (__builtin_add_overflow(d->h, d->pad_top, &hp) ||
        __builtin_add_overflow(hp, d->pad_bottom, &hp))
        return INVALID("%s: h = %lld with pad_top = %lld and pad_bottom = %lld: the padded height "
                       "overflows int64_t",
                       fn, (long long)d->h, (long long)d->pad_top, (long long)d->pad_bottom);
    if (__builtin_add_overflow(d->w, d->pad_left, &wp) ||
        __builtin_add_overflow(wp, d->pad_right, &wp))
        return INVALID("%s: w = %lld with pad_left = %lld and pad_right = %lld: the padded width "
                       "overflows int64_t",
                       fn, (long long)d->w, (long long)d->pad_left, (long long)d->pad_right);
    if (hp < eff_r)
        return INVALID("%s: r = %lld (dilation_h = %lld: %lld rows) is taller than the padded "
                       "input (h = %lld + pad_top = %lld + pad_bottom = %lld): the output would "
                       "be empty",
                       fn, (long long)d->r, (long long)d->dilation_h, (long long)eff_r,
                       (long long)d->h, (long long)d->pad_top, (long long)d->pad_bottom);
    if (wp < eff_s)
        return INVALID("%s: s = %lld (dilation_w = %lld: %lld columns) is wider than the padded "
                       "input (w = %lld + pad_left = %lld + pad_right = %lld): the output would "
                       "be empty",
                       fn, (long long)d->s, (long long)d->dilation_w, (long long)eff_s,
                       (long long)d->w, (long long)d->pad_left, (long long)d->pad_right);
    /* now the formula of kmux.h cannot overflow */
    P = kmux_conv2d_out_dim(d->h, d->pad_top, d->pad_bottom, d->r, d->dilation_h, d->stride_h);
    Q = kmux_conv2d_out_dim(d->w, d->pad_left, d->pad_right, d->s, d->dilation_w, d->stride_w);
    /* Types first: the byte counts below need valid ones. */
    if (!kmux_dtype_valid(d->x_type))
        return INVALID("%s: x_type = %d is not a kmux_dtype", fn, (int)d->x_type);
    if (!kmux_dtype_valid(d->w_type))
        return INVALID("%s: w_type = %d is not a kmux_dtype", fn, (int)d->w_type);
    if (!kmux_dtype_valid(d->y_type))
        return INVALID("%s: y_type = %d is not a kmux_dtype", fn, (int)d->y_type);
    if (d->w_type != d->x_type)
        return INVALID("%s: w_type = %s must be equal to x_type = %s (x, w and y have one type)",
                       fn, kmux_dtype_name(d->w_type), kmux_dtype_name(d->x_type));
    if (d->y_type != d->x_type)
        return INVALID("%s: y_type = %s must be equal to x_type = %s (x, w and y have one type)",
                       fn, kmux_dtype_name(d->y_type), kmux_dtype_name(d->x_type));
    int64_t x_elems, w_elems, y_elems, t;
    size_t bytes;
    if (__builtin_mul_overflow(d->n, d->c, &t) || __builtin_mul_overflow(t, d->h, &t) ||
        __builtin_mul_overflow(t, d->w, &x_elems) || !kmux_bytes_of(x_elems, d->x_type, &bytes))
        return INVALID("%s: tensor x (n = %lld x c = %lld x h = %lld x w = %lld, %s) overflows "
                       "int64_t or the address space",
                       fn, (long long)d->n, (long long)d->c, (long long)d->h, (long long)d->w,
                       kmux_dtype_name(d->x_type));
    if (__builtin_mul_overflow(d->k, d->c / d->groups, &t) || __builtin_mul_overflow(t, d->r, &t) ||
        __builtin_mul_overflow(t, d->s, &w_elems) || !kmux_bytes_of(w_elems, d->w_type, &bytes))
        return INVALID("%s: tensor w (k = %lld x c / groups = %lld x r = %lld x s = %lld, %s) "
                       "overflows int64_t or the address space",
                       fn, (long long)d->k, (long long)(d->c / d->groups), (long long)d->r,
                       (long long)d->s, kmux_dtype_name(d->w_type));
    if (__builtin_mul_overflow(d->n, d->k, &t) || __builtin_mul_overflow(t, P, &t) ||
        __builtin_mul_overflow(t, Q, &y_elems) || !kmux_bytes_of(y_elems, d->y_type, &bytes))
        return INVALID("%s: tensor y (n = %lld x k = %lld x P = %lld x Q = %lld, %s) overflows "
                       "int64_t or the address space",
                       fn, (long long)d->n, (long long)d->k, (long long)P, (long long)Q,
                       kmux_dtype_name(d->y_type));
    /* Legal rows: dispatch/common/type_rules.c. The message names the one wrong argument. */
    kmux_dtype t0 = d->x_type;
    kmux_compute_type ct = d->compute_type;
    if (!kmux_rules_conv_legal(t0, t0, t0, ct, NULL)) {
        int n = 0, type_ok = 0;
        const kmux_type_combination *rows = kmux_rules_conv_table(&n);
        for (int i = 0; i < n; i++)
            type_ok |= rows[i].a_type == t0;
        if (!type_ok)
            return INVALID("%s: x_type = %s is not a supported convolution type (f64, f32, f16, "
                           "bf16; kmux_conv2d_type_combination_get lists the rows)",
                           fn, kmux_dtype_name(t0));
        return INVALID("%s: compute_type = %s (%d) is not allowed with x_type = %s "
                       "(kmux_conv2d_type_combination_get lists the rows)",
                       fn, kmux_compute_type_name(ct), (int)ct, kmux_dtype_name(t0));
    }
    if (p) *p = P;
    if (q) *q = Q;
    return kmux_conv_epilogue_check_desc(fn, d);
}

int kmux_spans_overlap(const void *a, size_t na, const void *b, size_t nb) {
    uintptr_t x = (uintptr_t)a, y = (uintptr_t)b;
    return na > 0 && nb > 0 && x < y + nb && y < x + na;
}

kmux_status kmux_check_exec_tensors(const char *fn, const kmux_exec_tensor *t, int n,
                                    const char *why) {
    for (int i = 0; i < n; i++)
        if (t[i].needed && !t[i].p) return INVALID("%s: args->%s is NULL (%s)", fn, t[i].name, why);
    /* each pair once: a written tensor against every read one and every later written one */
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++)
            if (i != j && t[i].written && t[i].p && t[j].p && (j > i || !t[j].written) &&
                kmux_spans_overlap(t[i].p, t[i].bytes, t[j].p, t[j].bytes))
                return INVALID("%s: args->%s = %p overlaps args->%s = %p", fn, t[i].name, t[i].p,
                               t[j].name, t[j].p);
    return KMUX_OK;
}

/* Elements from the first to the last of a batch of rows x cols matrices (as written: rows of
 * op(X)), stored in order with leading dimension ld; 0 when empty. */
static int64_t matrix_span(kmux_order order, int64_t rows, int64_t cols, int64_t ld, int64_t stride,
                           int64_t batch) {
    if (rows <= 0 || cols <= 0 || batch <= 0) return 0;
    const int64_t outer = order == KMUX_ROW_MAJOR ? rows : cols;
    const int64_t inner = order == KMUX_ROW_MAJOR ? cols : rows;
    return (batch - 1) * stride + (outer - 1) * ld + inner;
}

void kmux_matmul_operand_spans(const kmux_matmul_desc *d, int64_t el[3]) {
    const int ta = d->transa == KMUX_TRANS, tb = d->transb == KMUX_TRANS;
    /* A is stored m x k (k x m transposed), B k x n (n x k), C m x n */
    el[0] = matrix_span(d->order, ta ? d->k : d->m, ta ? d->m : d->k, d->lda, d->stride_a,
                        d->batch_count);
    el[1] = matrix_span(d->order, tb ? d->n : d->k, tb ? d->k : d->n, d->ldb, d->stride_b,
                        d->batch_count);
    el[2] = matrix_span(d->order, d->m, d->n, d->ldc, d->stride_c, d->batch_count);
}

int kmux_matmul_aux_is_mask(const kmux_matmul_desc *d) {
    return (d->epilogue & (KMUX_EPILOGUE_RELU_AUX | KMUX_EPILOGUE_DRELU)) != 0;
}

size_t kmux_matmul_aux_bytes(const kmux_matmul_desc *d) {
    const int64_t span =
        matrix_span(d->order, d->m, d->n, d->aux_ld, d->stride_aux, d->batch_count);
    if (kmux_matmul_aux_is_mask(d)) return (size_t)(span + 7) / 8;
    return (size_t)span * kmux_dtype_bytes(d->aux_type);
}

void kmux_matmul_operand_bytes(const kmux_matmul_desc *d, size_t bytes[4]) {
    int64_t el[3];
    kmux_matmul_operand_spans(d, el);
    bytes[0] = (size_t)el[0] * kmux_dtype_bytes(d->a_type);
    bytes[1] = (size_t)el[1] * kmux_dtype_bytes(d->b_type);
    bytes[2] = (size_t)el[2] * kmux_dtype_bytes(d->c_type);
    bytes[3] =
        (d->epilogue & KMUX_EPILOGUE_BIAS) ? (size_t)d->n * kmux_dtype_bytes(d->bias_type) : 0;
}

void kmux_conv_tensor_bytes(const kmux_conv2d_desc *d, size_t bytes[3]) {
    int64_t P = 0, Q = 0;
    kmux_validate_conv_desc("kmux_conv_tensor_bytes", d, &P, &Q);
    bytes[0] = (size_t)(d->n * d->c * d->h * d->w) * kmux_dtype_bytes(d->x_type);
    bytes[1] = (size_t)(d->k * (d->c / d->groups) * d->r * d->s) * kmux_dtype_bytes(d->w_type);
    bytes[2] = (size_t)(d->n * d->k * P * Q) * kmux_dtype_bytes(d->y_type);
}

kmux_status kmux_validate_conv_args(const char *fn, const kmux_conv2d_desc *d,
                                    const kmux_conv2d_args *a) {
    if (a->struct_size < sizeof(kmux_conv2d_args))
        return INVALID("%s: args->struct_size = %zu, expected %zu (use KMUX_CONV2D_ARGS_INIT)", fn,
                       a->struct_size, sizeof(kmux_conv2d_args));
    if (!a->alpha) return INVALID("%s: alpha is NULL", fn);
    if (!a->beta) return INVALID("%s: beta is NULL", fn);
    if (!a->x) return INVALID("%s: x is NULL", fn);
    if (!a->w) return INVALID("%s: w is NULL", fn);
    if (!a->y) return INVALID("%s: y is NULL", fn);
    /* The tensor written (y forward, x backward-data, w backward-weights) must not overlap a tensor
     * read: backends read and write in different orders, so the result would depend on the
     * backend (as kmux_cast refuses an in-place cast). Sizes were checked at plan creation. */
    int64_t P = 0, Q = 0;
    if (kmux_validate_conv_desc(fn, d, &P, &Q) != KMUX_OK) return KMUX_ERR_INVALID_ARGUMENT;
    const int64_t elems[3] = {d->n * d->c * d->h * d->w, d->k * (d->c / d->groups) * d->r * d->s,
                              d->n * d->k * P * Q};
    const kmux_dtype types[3] = {d->x_type, d->w_type, d->y_type};
    const void *ptr[3] = {a->x, a->w, a->y};
    static const char *const names[3] = {"x", "w", "y"};
    size_t bytes[3];
    for (int i = 0; i < 3; i++)
        if (!kmux_bytes_of(elems[i], types[i], &bytes[i]))
            return INVALID("%s: %s of %lld elements overflows the address space", fn, names[i],
                           (long long)elems[i]);
    int out = d->direction == KMUX_CONV_FWD ? 2 : d->direction == KMUX_CONV_BWD_DATA ? 0 : 1;
    for (int i = 0; i < 3; i++) {
        if (i == out) continue;
        if (kmux_spans_overlap(ptr[out], bytes[out], ptr[i], bytes[i]))
            return INVALID("%s: %s = %p (%zu bytes, written) overlaps %s = %p (%zu bytes, read); "
                           "in-place convolutions are not supported",
                           fn, names[out], ptr[out], bytes[out], names[i], ptr[i], bytes[i]);
    }
    return kmux_conv_epilogue_check_args(fn, d, a);
}

kmux_status kmux_validate_nd(const char *fn, int ndims, const int64_t *full, const char *full_name,
                             const int64_t *part, const char *part_name, int64_t *elements) {
    if (ndims < 1 || ndims > KMUX_MAX_NDIMS)
        return INVALID("%s: desc->ndims = %d must be in [1, %d]", fn, ndims, KMUX_MAX_NDIMS);
    int64_t n = 1;
    int overflow = 0;
    for (int i = 0; i < ndims; i++) {
        if (full[i] < 0)
            return INVALID("%s: desc->%s[%d] = %lld is negative", fn, full_name, i,
                           (long long)full[i]);
        if (part[i] != full[i] && part[i] != 1)
            return INVALID("%s: desc->%s[%d] = %lld must be desc->%s[%d] = %lld or 1", fn,
                           part_name, i, (long long)part[i], full_name, i, (long long)full[i]);
        if (full[i] > 0 && n > INT64_MAX / full[i]) overflow = 1;
        n = overflow ? n : n * full[i];
    }
    size_t bytes;
    for (int i = 0; i < ndims; i++)
        if (full[i] == 0) return *elements = 0, KMUX_OK;
    if (overflow || !kmux_bytes_of(n, KMUX_F32, &bytes))
        return INVALID("%s: desc->%s (%d dims) has more elements than the address space holds", fn,
                       full_name, ndims);
    *elements = n;
    return KMUX_OK;
}
