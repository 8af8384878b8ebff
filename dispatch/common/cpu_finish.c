/*
 * cpu_finish.c - the CPU finish of a matmul (see cpu_finish.h).
 */
#include "cpu_finish.h"

#include <math.h>
#include <string.h>

#include "kmux_common.h"
#include "kmux_dtype_codec.h"

double kmux_gelu_tanh(double x) {
    const double sqrt_2_over_pi = 0.7978845608028654;
    return 0.5 * x * (1.0 + tanh(sqrt_2_over_pi * (x + 0.044715 * x * x * x)));
}

double kmux_gelu_tanh_grad(double x) {
    const double sqrt_2_over_pi = 0.7978845608028654;
    const double th = tanh(sqrt_2_over_pi * (x + 0.044715 * x * x * x));
    return 0.5 * (1.0 + th) +
           0.5 * x * (1.0 - th * th) * sqrt_2_over_pi * (1.0 + 3.0 * 0.044715 * x * x);
}

static int64_t at(kmux_order order, int64_t i, int64_t j, int64_t ld) {
    return order == KMUX_ROW_MAJOR ? i * ld + j : i + j * ld;
}

static double scalar(const void *p, kmux_compute_type ct) {
    if (ct == KMUX_COMPUTE_F64) return *(const double *)p;
    if (ct == KMUX_COMPUTE_I32) return (double)*(const int32_t *)p;
    return (double)*(const float *)p;
}

/* Element i of a host array of the output types (and of f32 bias) as double, exactly. */
static double load(const void *p, kmux_dtype t, int64_t i) {
    switch (t) {
    case KMUX_F64:
        return ((const double *)p)[i];
    case KMUX_F32:
        return (double)((const float *)p)[i];
    case KMUX_I32:
        return (double)((const int32_t *)p)[i];
    case KMUX_F16:
    case KMUX_BF16:
        return kmux_decode_f64(((const uint16_t *)p)[i], t);
    default:
        return kmux_decode_f64(((const uint8_t *)p)[i], t);
    }
}

/* Nearest even, saturated to int32, NaN -> 0. */
static int32_t to_i32(double v) {
    if (isnan(v)) return 0;
    if (v <= (double)INT32_MIN) return INT32_MIN;
    if (v >= (double)INT32_MAX) return INT32_MAX;
    double a = fabs(v), r = floor(a), f = a - r;
    if (f > 0.5 || (f == 0.5 && fmod(r, 2.0) != 0.0)) r += 1.0;
    return (int32_t)(v < 0 ? -r : r);
}

/* v rounded once to t; NaN becomes the quiet NaN with v's sign (as ref). */
static void store(void *p, kmux_dtype t, int64_t i, double v) {
    uint32_t sign = signbit(v) ? 1u : 0u;
    switch (t) {
    case KMUX_F64:
        ((double *)p)[i] = v;
        return;
    case KMUX_F32: {
        float f = (float)v;
        if (isnan(v)) f = kmux_f32_from_bits((sign << 31) | 0x7fc00000u);
        ((float *)p)[i] = f;
        return;
    }
    case KMUX_I32:
        ((int32_t *)p)[i] = to_i32(v);
        return;
    case KMUX_F16:
        ((uint16_t *)p)[i] =
            (uint16_t)(isnan(v) ? (sign << 15) | 0x7e00u : kmux_encode_f64(v, t, 0));
        return;
    case KMUX_BF16:
        ((uint16_t *)p)[i] =
            (uint16_t)(isnan(v) ? (sign << 15) | 0x7fc0u : kmux_encode_f64(v, t, 0));
        return;
    default:
        ((uint8_t *)p)[i] = (uint8_t)kmux_encode_f64(v, t, 0);
        return;
    }
}

static double acc_at(const kmux_cpu_acc *acc, kmux_order order, int64_t i, int64_t j) {
    int64_t o = at(order, i, j, acc->ld);
    if (acc->type == KMUX_F64) return ((const double *)acc->data)[o];
    if (acc->type == KMUX_F32) return (double)((const float *)acc->data)[o];
    return (double)((const int32_t *)acc->data)[o];
}

/* The aux part of the epilogue at aux index x for the value t before the activation: writes
 * the ReLU mask bit or the GELU input, or applies DRELU / DGELU; returns the new t. */
static double aux_step(const kmux_matmul_desc *d, const kmux_matmul_args *a, int64_t x, double t) {
    uint8_t *bits = (uint8_t *)a->aux + x / 8;
    const uint8_t bit = (uint8_t)(1u << (x % 8));
    if (d->epilogue & KMUX_EPILOGUE_RELU_AUX) {
        *bits = (uint8_t)(t > 0.0 ? *bits | bit : *bits & ~bit);
    } else if (d->epilogue & KMUX_EPILOGUE_GELU_AUX) {
        store(a->aux, d->aux_type, x, t);
    } else if (d->epilogue & KMUX_EPILOGUE_DRELU) {
        t = (*bits & bit) ? t : 0.0;
    } else { /* DGELU */
        t *= kmux_gelu_tanh_grad(load(a->aux, d->aux_type, x));
    }
    return t;
}

void kmux_cpu_matmul_bias_grad(const kmux_matmul_desc *d, const kmux_matmul_args *a) {
    if (!(d->epilogue & (KMUX_EPILOGUE_BGRADA | KMUX_EPILOGUE_BGRADB))) return;
    const int of_a = (d->epilogue & KMUX_EPILOGUE_BGRADA) != 0;
    const int64_t count = of_a ? d->m : d->n;
    const int trans = (of_a ? d->transa : d->transb) == KMUX_TRANS;
    const int64_t ld = of_a ? d->lda : d->ldb;
    const void *x = of_a ? a->A : a->B;
    const kmux_dtype t = of_a ? d->a_type : d->b_type;
    for (int64_t i = 0; i < count; i++) {
        double sum = 0.0;
        for (int64_t p = 0; p < d->k; p++) {
            /* op(A)(i, p) is A(i, p), or A(p, i) transposed; op(B)(p, j) is B(p, j) or B(j, p) */
            const int64_t r = of_a != trans ? i : p, c = of_a != trans ? p : i;
            sum += load(x, t, at(d->order, r, c, ld));
        }
        store(a->bias_grad, d->bias_type, i, sum);
    }
}

void kmux_cpu_finish_batch(const kmux_matmul_desc *d, const kmux_matmul_args *a,
                           const kmux_cpu_acc *acc, int64_t batch, double *amax) {
    const double alpha = scalar(a->alpha, d->compute_type);
    const double beta = scalar(a->beta, d->compute_type);
    const double ab =
        (a->a_scale ? (double)*a->a_scale : 1.0) * (a->b_scale ? (double)*a->b_scale : 1.0) * alpha;
    const double d_scale = a->d_scale ? (double)*a->d_scale : 1.0;
    const int int_plain = d->compute_type == KMUX_COMPUTE_I32 &&
                          d->epilogue == KMUX_EPILOGUE_NONE && !a->a_scale && !a->b_scale &&
                          !a->d_scale && !a->amax_d;
    const int64_t base = batch * d->stride_c;
    double m = *amax;
    for (int64_t i = 0; i < d->m; i++)
        for (int64_t j = 0; j < d->n; j++) {
            const int64_t ci = base + at(d->order, i, j, d->ldc);
            if (int_plain) {
                uint64_t v = 0;
                if (acc)
                    v = (uint64_t)(int64_t)alpha * (uint64_t)(int64_t)acc_at(acc, d->order, i, j);
                if (beta != 0.0) v += (uint64_t)(int64_t)beta * (uint64_t)((int32_t *)a->C)[ci];
                ((int32_t *)a->C)[ci] = kmux_common_wrap_i32(v);
                continue;
            }
            double t = acc ? ab * acc_at(acc, d->order, i, j) : 0.0;
            if (beta != 0.0) {
                double bc = beta * load(a->C, d->c_type, ci);
                t = acc ? t + bc : bc; /* no product: C = beta * C keeps the sign of 0 */
            }
            if (d->epilogue & KMUX_EPILOGUE_BIAS) t += load(a->bias, d->bias_type, j);
            if (d->epilogue & KMUX_EPILOGUE_WITH_AUX)
                t = aux_step(d, a, batch * d->stride_aux + at(d->order, i, j, d->aux_ld), t);
            if (d->epilogue & KMUX_EPILOGUE_RELU) t = t > 0.0 ? t : (isnan(t) ? t : 0.0);
            if (d->epilogue & KMUX_EPILOGUE_GELU) t = kmux_gelu_tanh(t);
            if (fabs(t) > m) m = fabs(t); /* false for NaN: ignored */
            store(a->C, d->c_type, ci, d_scale * t);
        }
    *amax = m;
}

void kmux_cpu_finish(const kmux_matmul_desc *d, const kmux_matmul_args *a,
                     const kmux_cpu_acc *acc) {
    double m = 0.0;
    for (int64_t b = 0; b < d->batch_count; b++) {
        kmux_cpu_acc one;
        if (acc) {
            one = *acc;
            size_t es = acc->type == KMUX_F64 ? 8 : 4;
            one.data = (const char *)acc->data + (size_t)(b * acc->batch_stride) * es;
        }
        kmux_cpu_finish_batch(d, a, acc ? &one : NULL, b, &m);
    }
    kmux_cpu_matmul_bias_grad(d, a);
    if (a->amax_d) *a->amax_d = (float)m;
}

void kmux_conv_epilogue_matmul(const kmux_conv2d_desc *d, void *y, const void *bias, void *aux,
                               const void *one, kmux_matmul_desc *md, kmux_matmul_args *ma) {
    const int64_t P =
        kmux_conv2d_out_dim(d->h, d->pad_top, d->pad_bottom, d->r, d->dilation_h, d->stride_h);
    const int64_t Q =
        kmux_conv2d_out_dim(d->w, d->pad_left, d->pad_right, d->s, d->dilation_w, d->stride_w);
    const kmux_matmul_desc init = KMUX_MATMUL_DESC_INIT;
    *md = init;
    md->k = 0;
    md->n = d->k;
    if (d->layout == KMUX_NHWC) {
        md->order = KMUX_ROW_MAJOR;
        md->m = d->n * P * Q;
        md->lda = 1;
        md->ldb = md->ldc = md->aux_ld = d->k;
    } else {
        md->order = KMUX_COL_MAJOR;
        md->m = P * Q;
        md->lda = md->ldc = md->aux_ld = P * Q;
        md->ldb = 1;
        md->batch_count = d->n;
        md->stride_c = md->stride_aux = d->k * P * Q;
    }
    md->a_type = md->b_type = md->c_type = d->y_type;
    md->compute_type = d->y_type == KMUX_F64 ? KMUX_COMPUTE_F64 : KMUX_COMPUTE_F32;
    md->epilogue = d->epilogue;
    md->bias_type = d->bias_type;
    const kmux_matmul_args init_a = KMUX_MATMUL_ARGS_INIT;
    *ma = init_a;
    ma->alpha = ma->beta = one;
    ma->C = y;
    ma->bias = bias;
    ma->aux = aux;
}
