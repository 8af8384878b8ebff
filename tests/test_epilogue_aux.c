/*
 * test_epilogue_aux.c - the auxiliary and backward GEMM epilogues (kmux.h kmux_epilogue, as
 * cuBLASLt's RELU_AUX, GELU_AUX, DRELU, DGELU, BGRADA, BGRADB) on every CPU device and every
 * implementation of each plan:
 * - against this file's own oracle (f64 sums of small integers, exact in every type), not
 *   against ref's code, which the CPU backends share: the mask bits and GELU inputs written, the
 *   select and product of the backward, the bias-gradient sums; D of an AUX plan is the bits of
 *   the same plan without AUX; the mask's padding bits are left as they were;
 * - against central finite differences of the forward (the library's own BIAS + RELU / GELU
 *   epilogue, perturbing the bias): DRELU / DGELU followed by BGRADA or BGRADB give dL/dbias;
 * - bad descriptors and arguments refused with a message naming the field, the output untouched.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "test_util.h"

static const kmux_dtype types[] = {KMUX_F32, KMUX_BF16, KMUX_F16};

/* Host operands of one execution: what is read, and where results come back. */
typedef struct host_ops {
    const void *A, *B, *bias;
    void *C, *aux, *bg;
    size_t na, nb, nbias, nc, naux, nbg; /* bytes; 0: not passed (NULL) */
} host_ops;

static void *to_dev(kmux_device *dev, kmux_stream *st, const void *h, size_t n) {
    if (!n || !h) return NULL;
    void *d = NULL;
    TU_OK(kmux_malloc(dev, n, &d));
    TU_OK(kmux_memcpy(st, d, h, n, KMUX_MEMCPY_HOST_TO_DEVICE));
    return d;
}

static void from_dev(kmux_device *dev, kmux_stream *st, void *h, void *d, size_t n) {
    if (!d) return;
    TU_OK(kmux_memcpy(st, h, d, n, KMUX_MEMCPY_DEVICE_TO_HOST));
    TU_OK(kmux_stream_synchronize(st));
    TU_OK(kmux_free(dev, d));
}

/* Executes the plan's current implementation on dev memory staged from and back to h (C, aux
 * and bias_grad come back). Returns the execute's status. */
static kmux_status exec_staged(kmux_device *dev, kmux_plan *plan, const host_ops *h, float alpha,
                               float beta, const float *d_scale) {
    kmux_stream *st = NULL;
    TU_OK(kmux_stream_create(dev, &st));
    kmux_matmul_args a = KMUX_MATMUL_ARGS_INIT;
    a.alpha = &alpha, a.beta = &beta;
    void *dA = to_dev(dev, st, h->A, h->na), *dB = to_dev(dev, st, h->B, h->nb);
    void *dbias = to_dev(dev, st, h->bias, h->nbias), *dC = to_dev(dev, st, h->C, h->nc);
    void *daux = to_dev(dev, st, h->aux, h->naux), *dbg = to_dev(dev, st, h->bg, h->nbg);
    void *dscale = to_dev(dev, st, d_scale, d_scale ? sizeof *d_scale : 0);
    a.A = dA, a.B = dB, a.bias = dbias, a.C = dC, a.aux = daux, a.bias_grad = dbg;
    a.d_scale = dscale;
    kmux_status s = kmux_matmul_execute(plan, st, &a);
    TU_OK(kmux_stream_synchronize(st));
    from_dev(dev, st, h->C, dC, h->nc);
    from_dev(dev, st, h->aux, daux, h->naux);
    from_dev(dev, st, h->bg, dbg, h->nbg);
    TU_OK(kmux_free(dev, dA));
    TU_OK(kmux_free(dev, dB));
    TU_OK(kmux_free(dev, dbias));
    TU_OK(kmux_free(dev, dscale));
    TU_OK(kmux_stream_destroy(st));
    return s;
}

/* Plan d on dev, its first implementation, once. */
static void run_first(kmux_device *dev, const kmux_matmul_desc *d, const host_ops *h, float alpha,
                      float beta) {
    kmux_plan *plan = NULL;
    TU_OK(kmux_matmul_plan_create(dev, d, NULL, &plan));
    TU_OK(exec_staged(dev, plan, h, alpha, beta, NULL));
    TU_OK(kmux_plan_destroy(plan));
}

static size_t esize(kmux_dtype t) {
    return t == KMUX_F32 ? 4 : 2;
}

static int64_t at(kmux_order o, int64_t i, int64_t j, int64_t ld) {
    return o == KMUX_ROW_MAJOR ? i * ld + j : i + j * ld;
}

/* op(A)(i, p) and op(B)(p, j) of desc d, batch b, as doubles. */
static double op_a(const kmux_matmul_desc *d, const void *A, int64_t b, int64_t i, int64_t p) {
    const int64_t x =
        d->transa == KMUX_TRANS ? at(d->order, p, i, d->lda) : at(d->order, i, p, d->lda);
    return tu_get(d->a_type, A, b * d->stride_a + x);
}
static double op_b(const kmux_matmul_desc *d, const void *B, int64_t b, int64_t p, int64_t j) {
    const int64_t x =
        d->transb == KMUX_TRANS ? at(d->order, j, p, d->ldb) : at(d->order, p, j, d->ldb);
    return tu_get(d->b_type, B, b * d->stride_b + x);
}

/* t = alpha op(A) op(B) + beta C (+ bias) of element (b, i, j), in f64 (alpha = 1). */
static double oracle_t(const kmux_matmul_desc *d, const void *A, const void *B, const void *C,
                       double beta, const void *bias, int64_t b, int64_t i, int64_t j) {
    double t = 0.0;
    for (int64_t p = 0; p < d->k; p++)
        t += op_a(d, A, b, i, p) * op_b(d, B, b, p, j);
    if (beta != 0.0) t += beta * tu_get(d->c_type, C, b * d->stride_c + at(d->order, i, j, d->ldc));
    if (bias) t += tu_get(d->bias_type, bias, j);
    return t;
}

static double gelu(double x) {
    return 0.5 * x * (1.0 + tanh(0.7978845608028654 * (x + 0.044715 * x * x * x)));
}
/* gelu' written out here (not the library's) from the product rule */
static double gelu_grad(double x) {
    const double u = 0.7978845608028654 * (x + 0.044715 * x * x * x);
    const double du = 0.7978845608028654 * (1.0 + 3.0 * 0.044715 * x * x);
    return 0.5 * (1.0 + tanh(u)) + 0.5 * x * du / (cosh(u) * cosh(u));
}

static int get_bit(const uint8_t *m, int64_t x) {
    return (m[x / 8] >> (x % 8)) & 1;
}

/* A problem and its host operands. */
typedef struct prob {
    kmux_matmul_desc d;
    void *A, *B, *C, *bias, *aux;
    size_t na, nb, nc, naux; /* bytes */
    double beta;
} prob;

static void prob_make(prob *p, kmux_dtype t, kmux_order o, int ta, int tb, int64_t m, int64_t n,
                      int64_t k, int64_t batch, unsigned epi, kmux_dtype aux_type, double beta,
                      uint64_t *seed) {
    memset(p, 0, sizeof *p);
    kmux_matmul_desc d = KMUX_MATMUL_DESC_INIT;
    d.order = o, d.transa = ta ? KMUX_TRANS : KMUX_NO_TRANS,
    d.transb = tb ? KMUX_TRANS : KMUX_NO_TRANS;
    d.m = m, d.n = n, d.k = k, d.batch_count = batch;
    d.a_type = d.b_type = d.c_type = t;
    d.epilogue = epi;
    d.bias_type = KMUX_F32;
    d.aux_type = aux_type;
    int64_t na, nb, nc;
    tu_matmul_layout(&d, 1, 0, 0, &na, &nb, &nc);
    const int mask = (epi & (KMUX_EPILOGUE_RELU_AUX | KMUX_EPILOGUE_DRELU)) != 0;
    const int64_t inner = o == KMUX_ROW_MAJOR ? n : m, outer = o == KMUX_ROW_MAJOR ? m : n;
    /* padding past D's row: cuBLASLt's multiples, or an odd leading dimension whose rows share
     * bytes and words (kmux allows any) */
    const int64_t mult = (m + n) % 2 ? 1 : mask ? 128 : 8;
    d.aux_ld = (inner + 3 + mult - 1) / mult * mult;
    d.stride_aux = outer * d.aux_ld + 5;
    int64_t naux = (batch - 1) * d.stride_aux + outer * d.aux_ld;
    p->d = d;
    p->A = tu_fill_ints(t, na, 3, TU_DENSE, seed);
    p->B = tu_fill_ints(t, nb, 3, TU_DENSE, seed);
    p->C = tu_fill_ints(t, nc, 3, TU_DENSE, seed);
    p->bias = (epi & KMUX_EPILOGUE_BIAS) ? tu_fill_ints(KMUX_F32, n, 3, TU_DENSE, seed) : NULL;
    p->na = (size_t)na * esize(t), p->nb = (size_t)nb * esize(t), p->nc = (size_t)nc * esize(t);
    p->naux = mask ? (size_t)(naux + 7) / 8 : (size_t)naux * esize(aux_type);
    p->aux = malloc(p->naux ? p->naux : 1);
    for (size_t i = 0; i < p->naux; i++) /* bits and values the test can recognise */
        ((uint8_t *)p->aux)[i] = (uint8_t)tu_rand_u64(seed);
    if (!mask) /* DGELU's stored inputs: quarters in [-3, 3] */
        for (int64_t i = 0; i < naux; i++)
            tu_set(aux_type, p->aux, i, (double)((int)(tu_rand_u64(seed) % 25) - 12) / 4.0);
    p->beta = beta;
}

static void prob_free(prob *p) {
    free(p->A), free(p->B), free(p->C), free(p->bias), free(p->aux);
}

/* Runs every implementation of d on dev with fresh copies of C, aux and bias_grad; calls check
 * with the results of each. */
typedef void (*check_fn)(const prob *p, const char *what, const void *C, const void *aux,
                         const void *bgrad, const void *ctx);

static void run_all(kmux_device *dev, const prob *p, const kmux_matmul_desc *d, size_t nbg,
                    check_fn check, const void *cctx, const char *label) {
    kmux_plan *plan = NULL;
    TU_OK(kmux_matmul_plan_create(dev, d, NULL, &plan));
    const int aux = (d->epilogue & (KMUX_EPILOGUE_RELU_AUX | KMUX_EPILOGUE_GELU_AUX |
                                    KMUX_EPILOGUE_DRELU | KMUX_EPILOGUE_DGELU)) != 0;
    for (int impl = 0;; impl++) {
        kmux_plan_info info;
        TU_OK(kmux_plan_info_get(plan, &info));
        void *C = tu_dup(p->C, p->nc), *x = tu_dup(p->aux, p->naux ? p->naux : 1);
        void *bg = malloc(nbg ? nbg : 1);
        memset(bg, 0x7f, nbg ? nbg : 1);
        const host_ops h = {.A = p->A,
                            .B = p->B,
                            .bias = p->bias,
                            .C = C,
                            .aux = aux ? x : NULL,
                            .bg = nbg ? bg : NULL,
                            .na = p->na,
                            .nb = p->nb,
                            .nbias = p->bias ? (size_t)d->n * 4 : 0,
                            .nc = p->nc,
                            .naux = aux ? p->naux : 0,
                            .nbg = nbg};
        TU_OK(exec_staged(dev, plan, &h, 1.0f, (float)p->beta, NULL));
        char what[256];
        snprintf(what, sizeof what, "%s %s impl %d (%s)", kmux_device_id(dev), label, impl,
                 info.impl);
        check(p, what, C, x, bg, cctx);
        free(C), free(x), free(bg);
        if (kmux_plan_next_impl(plan) == KMUX_ERR_LAST_IMPL) break;
    }
    TU_OK(kmux_plan_destroy(plan));
}

/* One case of a sweep: a device, a dtype, a shape {m, n, k, batch} and a variant number v (its
 * bits: 1 column-major, 2 op(A) transposed, 4 op(B) transposed; higher bits for the test). */
typedef struct sweep_case {
    kmux_device *dev;
    kmux_dtype t;
    kmux_order o;
    int ta, tb, si, v;
    const int64_t *s;
    uint64_t *seed;
} sweep_case;

/* Every device under test x f32, bf16, f16 x the nshapes shapes x variants 0 .. nvar - 1. */
static void sweep(const int64_t (*shapes)[4], int nshapes, int nvar, uint64_t seed,
                  void (*fn)(const sweep_case *c)) {
    kmux_context *ctx = tu_context();
    const char *ids[4];
    const int ndev = tu_devices_under_test(ids);
    for (int di = 0; di < ndev; di++) {
        kmux_device *dev = tu_device(ctx, ids[di]);
        if (!dev) continue; /* tu_device said why; ref always runs */
        for (int ti = 0; ti < 3; ti++)
            for (int si = 0; si < nshapes; si++)
                for (int v = 0; v < nvar; v++) {
                    const sweep_case c = {.dev = dev,
                                          .t = types[ti],
                                          .o = (v & 1) ? KMUX_COL_MAJOR : KMUX_ROW_MAJOR,
                                          .ta = (v >> 1) & 1,
                                          .tb = (v >> 2) & 1,
                                          .si = si,
                                          .v = v,
                                          .s = shapes[si],
                                          .seed = &seed};
                    fn(&c);
                }
    }
    TU_OK(kmux_context_destroy(ctx));
}

/* ---- forward: RELU_AUX / GELU_AUX ----------------------------------------------------------- */

typedef struct fwd_ref {
    void *C0; /* D of the same plan without AUX */
} fwd_ref;

static void check_fwd(const prob *p, const char *what, const void *C, const void *aux,
                      const void *bgrad, const void *ctx) {
    (void)bgrad;
    const kmux_matmul_desc *d = &p->d;
    const fwd_ref *r = ctx;
    const int mask = (d->epilogue & KMUX_EPILOGUE_RELU_AUX) != 0;
    /* ReLU's D is exact: the bits of the plan without AUX. GELU's is the finish's f64 GELU,
     * which oneDNN's post-op (the plan without AUX) approximates to a few ulp */
    if (mask)
        cr_assert(memcmp(C, r->C0, p->nc) == 0, "%s: D differs from the plan without AUX", what);
    const double gtol = d->c_type == KMUX_F32 ? 2e-5 : d->c_type == KMUX_F16 ? 1e-3 : 8e-3;
    int set = 0;
    for (int64_t b = 0; b < d->batch_count; b++)
        for (int64_t i = 0; i < d->m; i++)
            for (int64_t j = 0; j < d->n; j++) {
                const double t = oracle_t(d, p->A, p->B, p->C, p->beta, p->bias, b, i, j);
                const int64_t x = b * d->stride_aux + at(d->order, i, j, d->aux_ld);
                if (mask) {
                    cr_assert_eq(get_bit(aux, x), t > 0.0, "%s: mask bit (%lld,%lld,%lld) for t=%g",
                                 what, (long long)b, (long long)i, (long long)j, t);
                    set += t > 0.0;
                } else {
                    const int64_t ci = b * d->stride_c + at(d->order, i, j, d->ldc);
                    const double got = tu_get(d->c_type, C, ci), want = gelu(t);
                    cr_assert(fabs(got - want) <= gtol * (1.0 + fabs(want)),
                              "%s: D (%lld,%lld,%lld) = %.9g, want GELU(%g) = %.9g", what,
                              (long long)b, (long long)i, (long long)j, got, t, want);
                    cr_assert_eq(tu_get(d->aux_type, aux, x), t,
                                 "%s: GELU input (%lld,%lld,%lld) = %g, want %g", what,
                                 (long long)b, (long long)i, (long long)j,
                                 tu_get(d->aux_type, aux, x), t);
                }
            }
    if (mask) {
        cr_assert(set > 0 || d->m * d->n < 4, "%s: no bit set: the problem proves little", what);
        /* bits outside D's elements keep the caller's values */
        const int64_t outer = d->order == KMUX_ROW_MAJOR ? d->m : d->n;
        const int64_t inner = d->order == KMUX_ROW_MAJOR ? d->n : d->m;
        for (int64_t b = 0; b < d->batch_count; b++)
            for (int64_t o = 0; o < outer; o++)
                for (int64_t x = inner; x < d->aux_ld; x++) {
                    const int64_t bit = b * d->stride_aux + o * d->aux_ld + x;
                    cr_assert_eq(get_bit(aux, bit), get_bit(p->aux, bit),
                                 "%s: padding bit %lld changed", what, (long long)bit);
                }
    }
}

static void fwd_case(kmux_device *dev, kmux_dtype t, kmux_order o, int ta, int tb, int64_t m,
                     int64_t n, int64_t k, int64_t batch, unsigned epi, kmux_dtype aux_type,
                     double beta, uint64_t *seed) {
    prob p;
    prob_make(&p, t, o, ta, tb, m, n, k, batch, epi, aux_type, beta, seed);
    /* D without the AUX flag, by the same device's first implementation */
    kmux_matmul_desc d0 = p.d;
    d0.epilogue &= ~(unsigned)(KMUX_EPILOGUE_RELU_AUX | KMUX_EPILOGUE_GELU_AUX);
    fwd_ref r = {tu_dup(p.C, p.nc)};
    const host_ops h = {.A = p.A,
                        .B = p.B,
                        .bias = p.bias,
                        .C = r.C0,
                        .na = p.na,
                        .nb = p.nb,
                        .nbias = p.bias ? (size_t)n * 4 : 0,
                        .nc = p.nc};
    run_first(dev, &d0, &h, 1.0f, (float)beta);
    char label[160];
    snprintf(label, sizeof label, "%s %s ta%d tb%d %lldx%lldx%lld b%lld epi 0x%x aux %s beta %g",
             kmux_dtype_name(t), o == KMUX_ROW_MAJOR ? "row" : "col", ta, tb, (long long)m,
             (long long)n, (long long)k, (long long)batch, epi, kmux_dtype_name(aux_type), beta);
    run_all(dev, &p, &p.d, 0, check_fwd, &r, label);
    free(r.C0);
    prob_free(&p);
}

static void fwd_variant(const sweep_case *c) {
    const int64_t *s = c->s;
    const double beta = (c->v + c->si) % 3 == 0 ? 1.0 : 0.0;
    fwd_case(c->dev, c->t, c->o, c->ta, c->tb, s[0], s[1], s[2], s[3],
             KMUX_EPILOGUE_RELU | KMUX_EPILOGUE_RELU_AUX | (c->v % 2 ? KMUX_EPILOGUE_BIAS : 0),
             KMUX_F32, beta, c->seed);
    fwd_case(c->dev, c->t, c->o, c->ta, c->tb, s[0], s[1], s[2], s[3],
             KMUX_EPILOGUE_GELU | KMUX_EPILOGUE_GELU_AUX | (c->v % 3 ? KMUX_EPILOGUE_BIAS : 0),
             (c->v & 2) ? c->t : KMUX_F32, beta, c->seed);
}

Test(epilogue_aux, forward_writes_the_mask_and_the_gelu_input) {
    const int64_t shapes[][4] = {{1, 1, 1, 1}, {7, 13, 5, 1}, {33, 130, 17, 1}, {5, 9, 4, 3}};
    sweep(shapes, 4, 8, 11, fwd_variant);
}

/* ---- backward: DRELU / DGELU ---------------------------------------------------------------- */

static void check_bwd(const prob *p, const char *what, const void *C, const void *aux,
                      const void *bgrad, const void *ctx) {
    (void)bgrad, (void)ctx;
    const kmux_matmul_desc *d = &p->d;
    cr_assert(memcmp(aux, p->aux, p->naux) == 0, "%s: aux was written", what);
    const int drelu = (d->epilogue & KMUX_EPILOGUE_DRELU) != 0;
    /* DGELU rounds t * gelu'(x) once in c_type: half an ulp of c_type, and on GPUs gelu' in f32
     * arithmetic (tanh and the polynomial: a few ulp of f32, times |t| up to ~150) */
    const double tol = d->c_type == KMUX_F32 ? 2e-5 : d->c_type == KMUX_F16 ? 1e-3 : 8e-3;
    int nonzero = 0;
    for (int64_t b = 0; b < d->batch_count; b++)
        for (int64_t i = 0; i < d->m; i++)
            for (int64_t j = 0; j < d->n; j++) {
                const double t = oracle_t(d, p->A, p->B, p->C, p->beta, NULL, b, i, j);
                const int64_t x = b * d->stride_aux + at(d->order, i, j, d->aux_ld);
                const int64_t ci = b * d->stride_c + at(d->order, i, j, d->ldc);
                const double got = tu_get(d->c_type, C, ci);
                if (drelu) {
                    const double want = get_bit(p->aux, x) ? t : 0.0;
                    cr_assert_eq(got, want, "%s: DRELU (%lld,%lld,%lld) = %g, want %g", what,
                                 (long long)b, (long long)i, (long long)j, got, want);
                    cr_assert(get_bit(p->aux, x) || !signbit(got), "%s: DRELU's 0 is -0", what);
                } else {
                    const double want = t * gelu_grad(tu_get(d->aux_type, p->aux, x));
                    cr_assert(fabs(got - want) <= tol * (1.0 + fabs(want)),
                              "%s: DGELU (%lld,%lld,%lld) = %.9g, want %.9g", what, (long long)b,
                              (long long)i, (long long)j, got, want);
                }
                nonzero += got != 0.0;
            }
    cr_assert(nonzero > 0 || d->m * d->n < 4, "%s: an all-zero result proves little", what);
}

static void bwd_variant(const sweep_case *c) {
    const int64_t *s = c->s;
    for (int e = 0; e < 2; e++) {
        prob p;
        prob_make(&p, c->t, c->o, c->ta, c->tb, s[0], s[1], s[2], s[3],
                  e ? KMUX_EPILOGUE_DGELU : KMUX_EPILOGUE_DRELU, (c->v & 4) ? c->t : KMUX_F32,
                  c->v % 3 == 1 ? 1.0 : 0.0, c->seed);
        char label[160];
        snprintf(label, sizeof label, "%s %s ta%d tb%d %lldx%lldx%lld b%lld %s",
                 kmux_dtype_name(c->t), (c->v & 1) ? "col" : "row", c->ta, c->tb, (long long)s[0],
                 (long long)s[1], (long long)s[2], (long long)s[3], e ? "DGELU" : "DRELU");
        run_all(c->dev, &p, &p.d, 0, check_bwd, NULL, label);
        prob_free(&p);
    }
}

Test(epilogue_aux, backward_drelu_selects_and_dgelu_multiplies) {
    const int64_t shapes[][4] = {{1, 1, 1, 1}, {9, 17, 6, 1}, {31, 129, 11, 1}, {4, 7, 3, 2}};
    sweep(shapes, 4, 8, 23, bwd_variant);
}

/* ---- bias gradients: BGRADA / BGRADB -------------------------------------------------------- */

static void check_bgrad(const prob *p, const char *what, const void *C, const void *aux,
                        const void *bgrad, const void *ctx) {
    (void)aux;
    const kmux_matmul_desc *d = &p->d;
    cr_assert(memcmp(C, ctx, p->nc) == 0, "%s: D differs from the plan without BGRAD", what);
    const int of_a = (d->epilogue & KMUX_EPILOGUE_BGRADA) != 0;
    const int64_t count = of_a ? d->m : d->n;
    int nonzero = 0;
    for (int64_t i = 0; i < count; i++) {
        double want = 0.0;
        for (int64_t q = 0; q < d->k; q++)
            want += of_a ? op_a(d, p->A, 0, i, q) : op_b(d, p->B, 0, q, i);
        const double got = tu_get(d->bias_type, bgrad, i);
        cr_assert_eq(got, want, "%s: bias_grad[%lld] = %g, want %g", what, (long long)i, got, want);
        nonzero += got != 0.0;
    }
    cr_assert(nonzero > 0 || count * d->k < 4, "%s: all-zero sums prove little", what);
}

static void bgrad_variant(const sweep_case *c) {
    const int64_t *s = c->s;
    const unsigned epi = (c->v & 8) ? KMUX_EPILOGUE_BGRADB : KMUX_EPILOGUE_BGRADA;
    prob p;
    prob_make(&p, c->t, c->o, c->ta, c->tb, s[0], s[1], s[2], 1, epi, KMUX_F32,
              c->v % 3 == 0 ? 1.0 : 0.0, c->seed);
    p.d.bias_type = (c->v + c->si) % 2 ? c->t : KMUX_F32;
    kmux_matmul_desc d0 = p.d;
    d0.epilogue = KMUX_EPILOGUE_NONE;
    void *C0 = tu_dup(p.C, p.nc);
    const host_ops h = {.A = p.A, .B = p.B, .C = C0, .na = p.na, .nb = p.nb, .nc = p.nc};
    run_first(c->dev, &d0, &h, 1.0f, (float)p.beta);
    char label[160];
    snprintf(label, sizeof label, "%s %s ta%d tb%d %lldx%lldx%lld %s bias %s",
             kmux_dtype_name(c->t), (c->v & 1) ? "col" : "row", c->ta, c->tb, (long long)s[0],
             (long long)s[1], (long long)s[2], (c->v & 8) ? "BGRADB" : "BGRADA",
             kmux_dtype_name(p.d.bias_type));
    const size_t nbg = (size_t)((c->v & 8) ? s[1] : s[0]) * esize(p.d.bias_type);
    run_all(c->dev, &p, &p.d, nbg, check_bgrad, C0, label);
    free(C0);
    prob_free(&p);
}

Test(epilogue_aux, bias_gradients_sum_an_operand_over_k) {
    const int64_t shapes[][4] = {{1, 1, 1, 1}, {13, 6, 9, 1}, {70, 33, 21, 1}, {5, 8, 0, 1}};
    sweep(shapes, 4, 16, 37, bgrad_variant);
}

/* ---- finite differences of the forward ------------------------------------------------------ */

/* One f32 GEMM on dev: D (m x n, row-major) = op(A) op(B) with epilogue epi; aux of aux_bytes
 * (read or written), bgrad (m or n values) written. */
static void gemm(kmux_device *dev, int64_t m, int64_t n, int64_t k, int ta, const float *A,
                 const float *B, float *D, unsigned epi, const float *bias, void *aux,
                 int64_t aux_ld, size_t aux_bytes, float *bgrad) {
    kmux_matmul_desc d = KMUX_MATMUL_DESC_INIT;
    d.m = m, d.n = n, d.k = k, d.transa = ta ? KMUX_TRANS : KMUX_NO_TRANS;
    d.lda = ta ? m : k, d.ldb = n, d.ldc = n;
    d.epilogue = epi, d.aux_ld = aux_ld;
    const size_t f = sizeof(float);
    const host_ops h = {.A = A,
                        .B = B,
                        .bias = bias,
                        .C = D,
                        .aux = aux,
                        .bg = bgrad,
                        .na = (size_t)(m * k) * f,
                        .nb = (size_t)(k * n) * f,
                        .nbias = bias ? (size_t)n * f : 0,
                        .nc = (size_t)(m * n) * f,
                        .naux = aux ? aux_bytes : 0,
                        .nbg = bgrad ? (size_t)((epi & KMUX_EPILOGUE_BGRADA) ? m : n) * f : 0};
    run_first(dev, &d, &h, 1.0f, 0.0f);
}

/* L(bias) = sum G . act(X W + bias) by the library's forward epilogue, summed in f64. */
static double loss(kmux_device *dev, int64_t m, int64_t n, const float *X, const float *W,
                   const float *bias, const float *G, unsigned act) {
    float *Y = calloc((size_t)(m * n), sizeof *Y);
    gemm(dev, m, n, m, 0, X, W, Y, KMUX_EPILOGUE_BIAS | act, bias, NULL, 0, 0, NULL);
    double l = 0.0;
    for (int64_t i = 0; i < m * n; i++)
        l += (double)G[i] * (double)Y[i];
    free(Y);
    return l;
}

Test(epilogue_aux, backward_matches_finite_differences_of_the_forward) {
    kmux_context *ctx = tu_context();
    enum { M = 9, N = 11 };
    uint64_t seed = 5;
    float X[M * M], W[M * N], G[M * N], I[N * N], bias[N];
    for (int i = 0; i < M * M; i++) /* X = I: Z = W + bias, whose values the test chooses */
        X[i] = i % (M + 1) == 0 ? 1.0f : 0.0f;
    for (int i = 0; i < N * N; i++)
        I[i] = i % (N + 1) == 0 ? 1.0f : 0.0f;
    for (int i = 0; i < M * N; i++) { /* |Z| >= 0.2: ReLU's kink is beyond h */
        const double v = tu_rand_uniform(&seed, 0.2, 2.0);
        W[i] = (float)(tu_rand_u64(&seed) % 2 ? v : -v);
        G[i] = (float)tu_rand_uniform(&seed, -1.0, 1.0);
    }
    for (int j = 0; j < N; j++)
        bias[j] = 0.0f;
    const char *ids[4];
    const int ndev = tu_devices_under_test(ids);
    for (int di = 0; di < ndev; di++) {
        kmux_device *dev = tu_device(ctx, ids[di]);
        if (!dev) continue;
        for (int act = 0; act < 2; act++)
            for (int via_b = 0; via_b < 2; via_b++) {
                const unsigned fwd = act ? KMUX_EPILOGUE_GELU | KMUX_EPILOGUE_GELU_AUX
                                         : KMUX_EPILOGUE_RELU | KMUX_EPILOGUE_RELU_AUX;
                const int64_t aux_ld = act ? 16 : 128;
                uint8_t aux[M * 16 * 4];
                float Y[M * N], dZ[M * N], dW[M * N], bg[N];
                gemm(dev, M, N, M, 0, X, W, Y, fwd | KMUX_EPILOGUE_BIAS, bias, aux, aux_ld,
                     sizeof aux, NULL);
                /* dZ = (G I) . act'(Z), then the weight gradient's GEMM with the bias gradient:
                 * dW^T = dZ^T X (BGRADA: the rows of op(A) = dZ^T) or dW = X^T dZ (BGRADB) */
                gemm(dev, M, N, N, 0, G, I, dZ, act ? KMUX_EPILOGUE_DGELU : KMUX_EPILOGUE_DRELU,
                     NULL, aux, aux_ld, sizeof aux, NULL);
                if (via_b)
                    gemm(dev, M, N, M, 1, X, dZ, dW, KMUX_EPILOGUE_BGRADB, NULL, NULL, 0, 0, bg);
                else
                    gemm(dev, N, M, M, 1, dZ, X, dW, KMUX_EPILOGUE_BGRADA, NULL, NULL, 0, 0, bg);
                const double h = 1e-2;
                for (int j = 0; j < N; j++) {
                    float bp[N], bm[N];
                    memcpy(bp, bias, sizeof bp), memcpy(bm, bias, sizeof bm);
                    bp[j] += (float)h, bm[j] -= (float)h;
                    const unsigned a = act ? KMUX_EPILOGUE_GELU : KMUX_EPILOGUE_RELU;
                    const double fd =
                        (loss(dev, M, N, X, W, bp, G, a) - loss(dev, M, N, X, W, bm, G, a)) /
                        (2.0 * h);
                    cr_assert(fabs(bg[j] - fd) <= 2e-3 * (1.0 + fabs(fd)),
                              "%s %s via %s: dL/dbias[%d] = %.6f, finite difference %.6f", ids[di],
                              act ? "GELU" : "ReLU", via_b ? "BGRADB" : "BGRADA", j, bg[j], fd);
                }
            }
    }
    TU_OK(kmux_context_destroy(ctx));
}

/* ---- bad input ------------------------------------------------------------------------------ */

static void expect_desc_refused(kmux_device *dev, const kmux_matmul_desc *d, const char *needle) {
    kmux_plan *plan = NULL;
    TU_STATUS(KMUX_ERR_INVALID_ARGUMENT, kmux_matmul_plan_create(dev, d, NULL, &plan));
    cr_assert_null(plan);
    cr_assert(strstr(kmux_last_error(), needle), "message '%s' lacks '%s'", kmux_last_error(),
              needle);
}

Test(epilogue_aux, bad_descriptors_are_refused_by_name) {
    kmux_context *ctx = tu_context();
    kmux_device *dev = tu_device(ctx, "ref");
    kmux_matmul_desc d = KMUX_MATMUL_DESC_INIT;
    d.m = 4, d.n = 5, d.k = 3, d.lda = 3, d.ldb = 5, d.ldc = 5, d.aux_ld = 128;
    kmux_matmul_desc e = d;
    e.epilogue = KMUX_EPILOGUE_RELU_AUX;
    expect_desc_refused(dev, &e, "RELU_AUX needs RELU");
    e.epilogue = KMUX_EPILOGUE_GELU_AUX | KMUX_EPILOGUE_RELU;
    expect_desc_refused(dev, &e, "GELU_AUX needs GELU");
    e.epilogue = KMUX_EPILOGUE_DRELU | KMUX_EPILOGUE_BIAS;
    expect_desc_refused(dev, &e, "each used alone");
    e.epilogue = KMUX_EPILOGUE_BGRADA | KMUX_EPILOGUE_BGRADB;
    expect_desc_refused(dev, &e, "each used alone");
    e.epilogue = 0x200;
    expect_desc_refused(dev, &e, "unknown flags");
    e = d, e.epilogue = KMUX_EPILOGUE_RELU | KMUX_EPILOGUE_RELU_AUX, e.aux_ld = 4;
    expect_desc_refused(dev, &e, "aux_ld = 4 must be >= 5 (D's n, in bits)");
    e.aux_ld = 0;
    expect_desc_refused(dev, &e, "aux_ld = 0");
    e = d, e.epilogue = KMUX_EPILOGUE_GELU | KMUX_EPILOGUE_GELU_AUX, e.aux_ld = 8;
    e.aux_type = KMUX_I8;
    expect_desc_refused(dev, &e, "aux_type = i8");
    e = d, e.epilogue = KMUX_EPILOGUE_DGELU, e.aux_ld = 8, e.batch_count = 2;
    e.stride_a = 12, e.stride_b = 15, e.stride_c = 20, e.stride_aux = 28; /* one is 3 * 8 + 5 */
    expect_desc_refused(dev, &e, "stride_aux = 28 is smaller than one aux matrix (29 elements)");
    e = d, e.epilogue = KMUX_EPILOGUE_BGRADA, e.batch_count = 2;
    e.stride_a = 12, e.stride_b = 15, e.stride_c = 20;
    expect_desc_refused(dev, &e, "batch_count = 1");
    e = d, e.epilogue = KMUX_EPILOGUE_BGRADB, e.bias_type = KMUX_F16;
    expect_desc_refused(dev, &e, "bias_type = f16");
    e = d, e.epilogue = KMUX_EPILOGUE_DRELU, e.a_type = e.b_type = KMUX_F64, e.c_type = KMUX_F64;
    e.compute_type = KMUX_COMPUTE_F64;
    expect_desc_refused(dev, &e, "not a_type = f64");
    TU_OK(kmux_context_destroy(ctx));
}

Test(epilogue_aux, bad_arguments_are_refused_and_nothing_is_written) {
    kmux_context *ctx = tu_context();
    kmux_device *dev = tu_device(ctx, "cpu:onednn");
    if (!dev) dev = tu_device(ctx, "ref");
    kmux_matmul_desc d = KMUX_MATMUL_DESC_INIT;
    d.m = 4, d.n = 5, d.k = 3, d.lda = 3, d.ldb = 5, d.ldc = 5, d.aux_ld = 128;
    float A[12], B[15], C[20], bg[5], s = 1.0f;
    _Alignas(16) uint8_t aux[64];
    for (int i = 0; i < 12; i++)
        A[i] = (float)i;
    for (int i = 0; i < 15; i++)
        B[i] = 1.0f;
    for (int i = 0; i < 20; i++)
        C[i] = -7.0f;
    const float one = 1.0f, zero = 0.0f;
    struct {
        unsigned epi;
        int which; /* 0 aux NULL, 1 bias_grad NULL, 2 aux over C, 3 d_scale, 4 bias_grad over C,
                      5 aux misaligned */
        const char *needle;
    } cases[] = {
        {KMUX_EPILOGUE_RELU | KMUX_EPILOGUE_RELU_AUX, 0, "args->aux is NULL"},
        {KMUX_EPILOGUE_DRELU, 0, "args->aux is NULL"},
        {KMUX_EPILOGUE_BGRADB, 1, "args->bias_grad is NULL"},
        {KMUX_EPILOGUE_RELU | KMUX_EPILOGUE_RELU_AUX, 2, "overlaps"},
        {KMUX_EPILOGUE_DRELU, 3, "takes no fp8 scales (d_scale"},
        {KMUX_EPILOGUE_BGRADA, 4, "overlaps"},
        {KMUX_EPILOGUE_DRELU, 5, "is not aligned to 4 bytes"},
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        d.epilogue = cases[c].epi;
        kmux_plan *plan = NULL;
        TU_OK(kmux_matmul_plan_create(dev, &d, NULL, &plan));
        kmux_stream *st = NULL;
        TU_OK(kmux_stream_create(dev, &st));
        kmux_matmul_args a = KMUX_MATMUL_ARGS_INIT;
        a.alpha = &one, a.beta = &zero, a.A = A, a.B = B, a.C = C, a.aux = aux, a.bias_grad = bg;
        if (cases[c].which == 0) a.aux = NULL;
        if (cases[c].which == 1) a.bias_grad = NULL;
        if (cases[c].which == 2) a.aux = (uint8_t *)C + 4;
        if (cases[c].which == 3) a.d_scale = &s;
        if (cases[c].which == 4) a.bias_grad = C + 2;
        if (cases[c].which == 5) a.aux = aux + 1;
        TU_STATUS(KMUX_ERR_INVALID_ARGUMENT, kmux_matmul_execute(plan, st, &a));
        cr_assert(strstr(kmux_last_error(), cases[c].needle), "case %zu: '%s' lacks '%s'", c,
                  kmux_last_error(), cases[c].needle);
        TU_OK(kmux_stream_synchronize(st));
        for (int i = 0; i < 20; i++)
            cr_assert_eq(C[i], -7.0f, "case %zu: C[%d] was written", c, i);
        TU_OK(kmux_stream_destroy(st));
        TU_OK(kmux_plan_destroy(plan));
    }
    TU_OK(kmux_context_destroy(ctx));
}

/* k = 0 and alpha = 0 are the core's degenerate path: the bias gradient still sums the operand
 * (over no element when k = 0), DRELU still selects beta * C. */
Test(epilogue_aux, degenerate_problems_keep_the_epilogue) {
    kmux_context *ctx = tu_context();
    const char *ids[4];
    const int ndev = tu_devices_under_test(ids);
    for (int di = 0; di < ndev; di++) {
        kmux_device *dev = tu_device(ctx, ids[di]);
        if (!dev) continue;
        kmux_matmul_desc d = KMUX_MATMUL_DESC_INIT;
        d.m = 3, d.n = 2, d.k = 4, d.lda = 4, d.ldb = 2, d.ldc = 2, d.aux_ld = 128;
        float A[12], B[8], C[6], bg[3];
        for (int i = 0; i < 12; i++)
            A[i] = (float)(i + 1);
        for (int i = 0; i < 8; i++)
            B[i] = 1.0f;
        /* alpha = 0: D = 0, bias_grad = the row sums of A all the same */
        d.epilogue = KMUX_EPILOGUE_BGRADA;
        host_ops h = {.A = A,
                      .B = B,
                      .C = C,
                      .bg = bg,
                      .na = sizeof A,
                      .nb = sizeof B,
                      .nc = sizeof C,
                      .nbg = sizeof bg};
        run_first(dev, &d, &h, 0.0f, 0.0f);
        for (int i = 0; i < 3; i++)
            cr_assert_eq(bg[i], (float)(16 * i + 10), "%s: alpha = 0: bias_grad[%d] = %g", ids[di],
                         i, bg[i]);
        /* k = 0 with DRELU: D = bit ? beta C : 0 */
        d.k = 0, d.epilogue = KMUX_EPILOGUE_DRELU;
        uint8_t aux[3 * 16];
        memset(aux, 0, sizeof aux);
        aux[0] = 1;      /* (0, 0) */
        aux[16 * 2] = 2; /* (2, 1) */
        for (int i = 0; i < 6; i++)
            C[i] = (float)(i + 1);
        h = (host_ops){.C = C, .aux = aux, .nc = sizeof C, .naux = sizeof aux};
        run_first(dev, &d, &h, 1.0f, 2.0f);
        const float want[6] = {2.0f, 0.0f, 0.0f, 0.0f, 0.0f, 12.0f};
        for (int i = 0; i < 6; i++)
            cr_assert_eq(C[i], want[i], "%s: k = 0 DRELU: C[%d] = %g, want %g", ids[di], i, C[i],
                         want[i]);
    }
    TU_OK(kmux_context_destroy(ctx));
}
