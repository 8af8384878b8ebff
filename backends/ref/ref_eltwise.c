/*
 * ref_eltwise.c - the oracle of the element-wise family: every algorithm of kmux.h's table
 * defined again here in double precision (not the f32 formulas of dispatch/common/kmux_eltwise.h
 * that the CPU and GPU kernels share), inputs decoded exactly, the result rounded once to the
 * dtype. A new algorithm adds its two functions and one row to `algs` below.
 */
#include "ref_dtype.h"
#include "ref_internal.h"
#include "kmux_sys_alloc.h"

#include <math.h>
#include <stdlib.h>

#define PI 3.14159265358979323846

typedef double (*fwd_fn)(double x, double a, double b);
/* the derivative f'(x) from the input x, or from the output y (use_dst_for_bwd) */
typedef double (*der_fn)(double v, double a, double b);

static double relu(double x, double a, double b) {
    (void)b;
    if (isnan(x)) return x;
    return x > 0 ? x : x < 0 ? (a == 0 ? 0.0 : a * x) : x;
}
static double relu_d(double v, double a, double b) {
    (void)b;
    return v > 0 ? 1.0 : a; /* from x, and from y when a >= 0 */
}
static double gelu_tanh(double x, double a, double b) {
    (void)a, (void)b;
    return 0.5 * x * (1.0 + tanh(sqrt(2.0 / PI) * (x + 0.044715 * x * x * x)));
}
static double gelu_tanh_d(double x, double a, double b) {
    (void)a, (void)b;
    const double k = sqrt(2.0 / PI), t = tanh(k * (x + 0.044715 * x * x * x));
    return 0.5 * (1.0 + t) + 0.5 * x * (1.0 - t * t) * k * (1.0 + 3.0 * 0.044715 * x * x);
}
static double gelu_erf(double x, double a, double b) {
    (void)a, (void)b;
    return 0.5 * x * erfc(-x / sqrt(2.0)); /* erfc: no cancellation for large negative x */
}
static double gelu_erf_d(double x, double a, double b) {
    (void)a, (void)b;
    return 0.5 * erfc(-x / sqrt(2.0)) + x * exp(-0.5 * x * x) / sqrt(2.0 * PI);
}
static double sigmoid(double x, double a, double b) {
    (void)a, (void)b;
    return 1.0 / (1.0 + exp(-x));
}
static double sigmoid_d(double x, double a, double b) {
    const double s = sigmoid(x, a, b);
    return s * (1.0 - s);
}
static double sigmoid_dy(double y, double a, double b) {
    (void)a, (void)b;
    return y * (1.0 - y);
}
static double tanh_f(double x, double a, double b) {
    (void)a, (void)b;
    return tanh(x);
}
static double tanh_d(double x, double a, double b) {
    (void)a, (void)b;
    const double t = tanh(x);
    return 1.0 - t * t;
}
static double tanh_dy(double y, double a, double b) {
    (void)a, (void)b;
    return 1.0 - y * y;
}
static double linear(double x, double a, double b) {
    return a * x + b;
}
static double linear_d(double v, double a, double b) {
    (void)v, (void)b;
    return a;
}
static double reciprocal(double x, double a, double b) {
    (void)a, (void)b;
    return 1.0 / x;
}
static double reciprocal_d(double x, double a, double b) {
    (void)a, (void)b;
    return -1.0 / (x * x);
}
static double reciprocal_dy(double y, double a, double b) {
    (void)a, (void)b;
    return -(y * y);
}

static double silu(double x, double a, double b) {
    return x * sigmoid(x, a, b);
}
static double silu_d(double x, double a, double b) {
    const double s = sigmoid(x, a, b);
    return s * (1.0 + x * (1.0 - s));
}

static const struct {
    kmux_eltwise_alg alg;
    fwd_fn fwd;
    der_fn d_src, d_dst; /* d_dst NULL: no backward from the output */
} algs[] = {
    {KMUX_ELTWISE_RELU, relu, relu_d, relu_d},
    {KMUX_ELTWISE_GELU_TANH, gelu_tanh, gelu_tanh_d, NULL},
    {KMUX_ELTWISE_GELU_ERF, gelu_erf, gelu_erf_d, NULL},
    {KMUX_ELTWISE_SIGMOID, sigmoid, sigmoid_d, sigmoid_dy},
    {KMUX_ELTWISE_TANH, tanh_f, tanh_d, tanh_dy},
    {KMUX_ELTWISE_LINEAR, linear, linear_d, linear_d},
    {KMUX_ELTWISE_RECIPROCAL, reciprocal, reciprocal_d, reciprocal_dy},
    {KMUX_ELTWISE_SILU, silu, silu_d, NULL},
};
#define NALGS ((int)(sizeof algs / sizeof algs[0]))

uint64_t kmux_ref_eltwise_algs(void) {
    uint64_t m = 0;
    for (int i = 0; i < NALGS; i++)
        m |= UINT64_C(1) << algs[i].alg;
    return m;
}

static int row_of(kmux_eltwise_alg alg) {
    for (int i = 0; i < NALGS; i++)
        if (algs[i].alg == alg) return i;
    return -1;
}

kmux_status kmux_ref_eltwise_plan_create(void *state, int device, const kmux_eltwise_desc *desc,
                                         const kmux_plan_prefs *prefs, void **plan,
                                         int *impl_count) {
    (void)device, (void)prefs;
    if (row_of(desc->alg) < 0) /* the caps keep this from happening */
        return KMUX_ERR_UNSUPPORTED;
    ref_plan *p = kmux_sys_calloc(1, sizeof *p);
    if (!p) return kmux_ref_oom(state, "kmux_eltwise_plan_create", sizeof *p);
    p->kind = REF_PLAN_ELTWISE;
    p->el = *desc;
    *plan = p;
    *impl_count = 1;
    return KMUX_OK;
}

/* The masked ReLU gradient is 0 whatever diff_dst holds (PyTorch's threshold_backward). */
static double grad(const kmux_eltwise_desc *d, double der, double dd) {
    if (d->alg == KMUX_ELTWISE_RELU && der == 0.0) return 0.0;
    return dd * der;
}

kmux_status kmux_ref_eltwise_execute(void *state, const void *plan, int impl, void *stream,
                                     const kmux_eltwise_args *args) {
    (void)state, (void)impl, (void)stream;
    const kmux_eltwise_desc *d = &((const ref_plan *)plan)->el;
    const int r = row_of(d->alg);
    const double a = d->alpha, b = d->beta;
    for (int64_t i = 0; i < d->n; i++) {
        if (d->prop == KMUX_PROP_FORWARD) {
            kmux_ref_store(args->dst, d->dtype, i,
                           algs[r].fwd(kmux_ref_load(args->src, d->dtype, i), a, b), 0);
            continue;
        }
        const double dd = kmux_ref_load(args->diff_dst, d->dtype, i);
        const double der = d->use_dst_for_bwd
                               ? algs[r].d_dst(kmux_ref_load(args->dst, d->dtype, i), a, b)
                               : algs[r].d_src(kmux_ref_load(args->src, d->dtype, i), a, b);
        kmux_ref_store(args->diff_src, d->dtype, i, grad(d, der, dd), 0);
    }
    return KMUX_OK;
}
