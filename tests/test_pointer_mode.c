/*
 * test_pointer_mode.c - a matmul's alpha and beta in device memory (kmux_matmul_desc.pointer_mode
 * = KMUX_POINTER_MODE_DEVICE, as cuBLASLt's CUBLASLT_POINTER_MODE_DEVICE) on every CPU device, or
 * on the device KMUX_TEST_DEVICE names (cuda:0, hip:0 through the fakes; registered with
 * KMUX_CONFORMANCE_REQUIRE_DEVICE, which skips with the reason where it is absent):
 * - the bits of the same plan with host scalars, for f32, bf16, f64 and i8 -> i32, with and
 *   without a bias + ReLU epilogue, on small integers and dyadic scalars (exact in every type, so
 *   any implementation must give them);
 * - alpha == 0 does not read A and B, beta == 0 does not read C (NaN there), decided from the
 *   device's memory;
 * - the scalars are read when the work runs: new values written to the same device memory give
 *   the new result with the same plan and arguments;
 * - bad descriptors and arguments refused by name.
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "test_util.h"

typedef struct row {
    kmux_dtype ab, c;
    kmux_compute_type ct;
} row;

static const row rows[] = {{KMUX_F32, KMUX_F32, KMUX_COMPUTE_F32},
                           {KMUX_BF16, KMUX_BF16, KMUX_COMPUTE_F32},
                           {KMUX_F64, KMUX_F64, KMUX_COMPUTE_F64},
                           {KMUX_I8, KMUX_I32, KMUX_COMPUTE_I32}};

enum { M = 13, N = 9, K = 7 };

/* One scalar of the scale type of ct, in s (8 bytes). */
static void scalar_set(kmux_compute_type ct, void *s, double v) {
    if (ct == KMUX_COMPUTE_F64)
        memcpy(s, &v, 8);
    else if (ct == KMUX_COMPUTE_I32) {
        int32_t i = (int32_t)v;
        memcpy(s, &i, 4);
    } else {
        float f = (float)v;
        memcpy(s, &f, 4);
    }
}

/* A device buffer holding the host bytes. */
static void *to_device(kmux_device *dev, kmux_stream *s, const void *h, size_t bytes) {
    void *p = NULL;
    TU_OK(kmux_malloc(dev, bytes, &p));
    TU_OK(kmux_memcpy(s, p, h, bytes, KMUX_MEMCPY_HOST_TO_DEVICE));
    TU_OK(kmux_stream_synchronize(s));
    return p;
}

static kmux_matmul_desc desc_of(const row *r, unsigned epi, kmux_pointer_mode pm) {
    kmux_matmul_desc d = KMUX_MATMUL_DESC_INIT;
    d.m = M, d.n = N, d.k = K, d.lda = K, d.ldb = N, d.ldc = N;
    d.a_type = d.b_type = r->ab, d.c_type = r->c, d.compute_type = r->ct;
    d.epilogue = epi;
    d.bias_type = r->ct == KMUX_COMPUTE_F64 ? KMUX_F64 : KMUX_F32;
    d.pointer_mode = pm;
    return d;
}

/* The problem's host data: A, B (NaN-poisoned when poison_ab and the type has NaN), C (NaN when
 * poison_c), bias. */
typedef struct data {
    void *A, *B, *C, *bias;
    size_t na, nb, nc, nbias;
} data;

static void data_make(data *x, const row *r, int poison_ab, int poison_c, uint64_t seed) {
    const int has_nan = r->ab != KMUX_I8;
    x->na = (size_t)M * K * kmux_dtype_size(r->ab), x->nb = (size_t)K * N * kmux_dtype_size(r->ab);
    x->nc = (size_t)M * N * kmux_dtype_size(r->c);
    kmux_dtype bt = r->ct == KMUX_COMPUTE_F64 ? KMUX_F64 : KMUX_F32;
    x->nbias = (size_t)N * kmux_dtype_size(bt);
    x->A = tu_fill_ints(r->ab, M * K, 2, TU_DENSE, &seed);
    x->B = tu_fill_ints(r->ab, K * N, 2, TU_DENSE, &seed);
    x->C = tu_fill_ints(r->c, M * N, 3, TU_DENSE, &seed);
    x->bias = tu_fill_ints(bt, N, 3, TU_DENSE, &seed);
    if (poison_ab && has_nan) {
        tu_fill_value(r->ab, x->A, M * K, NAN);
        tu_fill_value(r->ab, x->B, K * N, NAN);
    }
    if (poison_c && r->c != KMUX_I32) tu_fill_value(r->c, x->C, M * N, NAN);
}

static void data_free(data *x) {
    free(x->A), free(x->B), free(x->C), free(x->bias);
}

/* D of one execute of a plan of d on dev (alpha, beta: host values put where pointer_mode says);
 * a new host buffer. NULL with *st set when the plan cannot be made. */
static void *run(kmux_device *dev, kmux_stream *s, const kmux_matmul_desc *d, const data *x,
                 double alpha, double beta, kmux_status *st) {
    kmux_plan *plan = NULL;
    *st = kmux_matmul_plan_create(dev, d, NULL, &plan);
    if (*st != KMUX_OK) return NULL;
    unsigned char sa[8], sb[8];
    scalar_set(d->compute_type, sa, alpha);
    scalar_set(d->compute_type, sb, beta);
    const int dp = d->pointer_mode == KMUX_POINTER_MODE_DEVICE;
    void *A = to_device(dev, s, x->A, x->na), *B = to_device(dev, s, x->B, x->nb);
    void *C = to_device(dev, s, x->C, x->nc), *bias = to_device(dev, s, x->bias, x->nbias);
    void *da = dp ? to_device(dev, s, sa, 8) : NULL, *db = dp ? to_device(dev, s, sb, 8) : NULL;
    kmux_matmul_args a = KMUX_MATMUL_ARGS_INIT;
    a.alpha = dp ? da : (const void *)sa, a.beta = dp ? db : (const void *)sb;
    a.A = A, a.B = B, a.C = C, a.bias = bias;
    TU_OK(kmux_matmul_execute(plan, s, &a));
    void *out = malloc(x->nc);
    TU_OK(kmux_memcpy(s, out, C, x->nc, KMUX_MEMCPY_DEVICE_TO_HOST));
    TU_OK(kmux_stream_synchronize(s));
    void *bufs[] = {A, B, C, bias, da, db};
    for (int i = 0; i < 6; i++)
        if (bufs[i]) TU_OK(kmux_free(dev, bufs[i]));
    TU_OK(kmux_plan_destroy(plan));
    return out;
}

Test(pointer_mode, device_scalars_give_the_bits_of_host_scalars) {
    kmux_context *ctx = tu_context();
    const char *ids[4];
    int nd = tu_devices_under_test(ids), checked = 0;
    static const double scal[][2] = {{1.5, 0.5}, {0.0, 0.75}, {2.0, 0.0}, {-1.0, -2.0}};
    for (int di = 0; di < nd; di++) {
        kmux_device *dev = tu_device(ctx, ids[di]);
        if (!dev) continue;
        kmux_stream *s;
        TU_OK(kmux_stream_create(dev, &s));
        for (size_t ri = 0; ri < sizeof rows / sizeof rows[0]; ri++)
            for (int epi = 0; epi < 2; epi++)
                for (size_t si = 0; si < sizeof scal / sizeof scal[0]; si++) {
                    const row *r = &rows[ri];
                    if (epi && r->ct == KMUX_COMPUTE_I32) continue; /* no integer epilogue */
                    const double al = scal[si][0], be = scal[si][1];
                    if (r->ct == KMUX_COMPUTE_I32 && al != (int)al) continue;
                    const unsigned e = epi ? KMUX_EPILOGUE_BIAS | KMUX_EPILOGUE_RELU : 0;
                    data x;
                    data_make(&x, r, al == 0.0, be == 0.0, 7 + si);
                    kmux_matmul_desc dh = desc_of(r, e, KMUX_POINTER_MODE_HOST);
                    kmux_matmul_desc dd = desc_of(r, e, KMUX_POINTER_MODE_DEVICE);
                    kmux_status sh, sd;
                    void *want = run(dev, s, &dh, &x, al, be, &sh);
                    void *got = run(dev, s, &dd, &x, al, be, &sd);
                    if (sh == KMUX_ERR_UNSUPPORTED) { /* the row is not this device's */
                        cr_assert_eq(sd, KMUX_ERR_UNSUPPORTED,
                                     "%s: %s x %s: host mode refused, "
                                     "device mode not: %s",
                                     ids[di], kmux_dtype_name(r->ab), kmux_dtype_name(r->c),
                                     kmux_last_error());
                        data_free(&x);
                        continue;
                    }
                    cr_assert_eq(sh, KMUX_OK, "%s: host mode: %s", ids[di], kmux_last_error());
                    cr_assert_eq(sd, KMUX_OK, "%s: device mode: %s", ids[di], kmux_last_error());
                    cr_assert(memcmp(want, got, x.nc) == 0,
                              "%s: %s -> %s, epilogue %u, alpha %g, beta %g: device scalars "
                              "differ from host scalars",
                              ids[di], kmux_dtype_name(r->ab), kmux_dtype_name(r->c), e, al, be);
                    checked++;
                    free(want), free(got);
                    data_free(&x);
                }
        TU_OK(kmux_stream_destroy(s));
    }
    cr_assert_gt(checked, 0, "no device ran a case");
    TU_OK(kmux_context_destroy(ctx));
}

Test(pointer_mode, the_scalars_are_read_when_the_work_runs) {
    kmux_context *ctx = tu_context();
    const char *ids[4];
    int nd = tu_devices_under_test(ids), checked = 0;
    for (int di = 0; di < nd; di++) {
        kmux_device *dev = tu_device(ctx, ids[di]);
        if (!dev) continue;
        kmux_stream *s;
        TU_OK(kmux_stream_create(dev, &s));
        const row *r = &rows[0];
        data x;
        data_make(&x, r, 0, 0, 3);
        kmux_matmul_desc dd = desc_of(r, 0, KMUX_POINTER_MODE_DEVICE);
        kmux_plan *plan;
        TU_OK(kmux_matmul_plan_create(dev, &dd, NULL, &plan));
        const float s1[2] = {1.0f, 0.0f}, s2[2] = {-0.5f, 2.0f};
        void *sc = to_device(dev, s, s1, sizeof s1);
        void *A = to_device(dev, s, x.A, x.na), *B = to_device(dev, s, x.B, x.nb);
        void *C = to_device(dev, s, x.C, x.nc);
        kmux_matmul_args a = KMUX_MATMUL_ARGS_INIT;
        a.alpha = sc, a.beta = (const float *)sc + 1, a.A = A, a.B = B, a.C = C;
        TU_OK(kmux_matmul_execute(plan, s, &a)); /* C = AB */
        /* new scalars in the same memory, queued on the stream: C = -0.5 AB + 2 C = 1.5 AB */
        TU_OK(kmux_memcpy(s, sc, s2, sizeof s2, KMUX_MEMCPY_HOST_TO_DEVICE));
        TU_OK(kmux_matmul_execute(plan, s, &a));
        float got[M * N];
        TU_OK(kmux_memcpy(s, got, C, sizeof got, KMUX_MEMCPY_DEVICE_TO_HOST));
        TU_OK(kmux_stream_synchronize(s));
        for (int i = 0; i < M; i++)
            for (int j = 0; j < N; j++) {
                double ab = 0;
                for (int p = 0; p < K; p++)
                    ab += tu_get(KMUX_F32, x.A, i * K + p) * tu_get(KMUX_F32, x.B, p * N + j);
                cr_assert_eq(got[i * N + j], (float)(1.5 * ab), "%s: (%d, %d): %g, want %g",
                             ids[di], i, j, got[i * N + j], 1.5 * ab);
            }
        checked++;
        void *bufs[] = {sc, A, B, C};
        for (int i = 0; i < 4; i++)
            TU_OK(kmux_free(dev, bufs[i]));
        TU_OK(kmux_plan_destroy(plan));
        data_free(&x);
        TU_OK(kmux_stream_destroy(s));
    }
    cr_assert_gt(checked, 0, "no device ran");
    TU_OK(kmux_context_destroy(ctx));
}

Test(pointer_mode, bad_descriptors_and_arguments_are_refused_by_name) {
    kmux_context *ctx = tu_context();
    const char *ids[4];
    int nd = tu_devices_under_test(ids);
    kmux_device *dev = NULL;
    for (int di = 0; di < nd && !dev; di++)
        dev = tu_device(ctx, ids[di]);
    cr_assert_not_null(dev);
    kmux_matmul_desc d = desc_of(&rows[0], 0, (kmux_pointer_mode)2);
    kmux_plan *plan = NULL;
    TU_STATUS(KMUX_ERR_INVALID_ARGUMENT, kmux_matmul_plan_create(dev, &d, NULL, &plan));
    cr_assert(strstr(kmux_last_error(), "pointer_mode = 2"), "%s", kmux_last_error());
    cr_assert_null(plan);

    /* A NULL with k > 0: alpha is not read at the call, so A is needed even when it is 0 */
    d.pointer_mode = KMUX_POINTER_MODE_DEVICE;
    TU_OK(kmux_matmul_plan_create(dev, &d, NULL, &plan));
    kmux_stream *s;
    TU_OK(kmux_stream_create(dev, &s));
    const float zero[2] = {0.0f, 0.0f};
    void *sc = to_device(dev, s, zero, sizeof zero), *C = NULL, *B = NULL;
    TU_OK(kmux_malloc(dev, (size_t)M * N * 4, &C));
    TU_OK(kmux_malloc(dev, (size_t)K * N * 4, &B));
    kmux_matmul_args a = KMUX_MATMUL_ARGS_INIT;
    a.alpha = sc, a.beta = (const float *)sc + 1, a.A = NULL, a.B = B, a.C = C;
    TU_STATUS(KMUX_ERR_INVALID_ARGUMENT, kmux_matmul_execute(plan, s, &a));
    cr_assert(strstr(kmux_last_error(), "A is NULL") && strstr(kmux_last_error(), "device memory"),
              "%s", kmux_last_error());
    TU_OK(kmux_plan_destroy(plan));

    /* k = 0 on a GPU: the degenerate path reads beta on the host */
    kmux_device_props props;
    TU_OK(kmux_device_props_get(dev, &props));
    d.k = 0;
    kmux_status st = kmux_matmul_plan_create(dev, &d, NULL, &plan);
    if (props.is_host) {
        cr_assert_eq(st, KMUX_OK, "%s", kmux_last_error());
        TU_OK(kmux_plan_destroy(plan));
    } else {
        cr_assert_eq(st, KMUX_ERR_UNSUPPORTED, "%s", kmux_status_str(st));
        cr_assert(strstr(kmux_last_error(), "k = 0"), "%s", kmux_last_error());
    }
    TU_OK(kmux_free(dev, sc));
    TU_OK(kmux_free(dev, B));
    TU_OK(kmux_free(dev, C));
    TU_OK(kmux_stream_destroy(s));
    TU_OK(kmux_context_destroy(ctx));
}
