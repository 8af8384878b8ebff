/*
 * fuzz_gemm.c - libFuzzer target: the GEMM argument space on "ref". Each input becomes one
 * matmul description (order, transposes, sizes including 0, negative and huge ones, leading
 * dimensions around their minimum, batch and strides, every dtype and compute type and invalid
 * ones, epilogue flags, NULL pointers) and is run through one of kmux_gemm_ex,
 * kmux_gemm_strided_batched_ex or the plan API. Properties:
 *  - a rejected description gives INVALID_ARGUMENT or UNSUPPORTED with a message that names the
 *    function, the same status from the plan API and the direct call, and touches no memory
 *    (the operands are then 1-byte buffers, so AddressSanitizer sees any access);
 *  - an accepted one runs on buffers of exactly the size the description spans, returns OK and,
 *    for f32/f64 without epilogue, gives exactly the naive product (small integers: exact).
 */
#include "fuzz_common.h"

#define CAP_ELEMS (1 << 16) /* larger descriptions are only validated, not run */

static const int orders[] = {KMUX_ROW_MAJOR, KMUX_COL_MAJOR};
static const int transes[] = {KMUX_NO_TRANS, KMUX_TRANS};
static const int dtypes[] = {KMUX_F32,     KMUX_F64,     KMUX_F16,          KMUX_BF16,
                             KMUX_F8_E4M3, KMUX_F8_E5M2, KMUX_F8_E4M3_FNUZ, KMUX_F8_E5M2_FNUZ,
                             KMUX_I8,      KMUX_I32,     KMUX_F32,          KMUX_F32};
static const int computes[] = {KMUX_COMPUTE_F32,           KMUX_COMPUTE_F64,
                               KMUX_COMPUTE_F32_FAST_TF32, KMUX_COMPUTE_F32_FAST_BF16,
                               KMUX_COMPUTE_F16,           KMUX_COMPUTE_I32};

/* Elements spanned by a stored rows x cols operand with leading dimension ld, batch, stride;
 * -1 when it overflows or exceeds CAP_ELEMS. (Called only for a validated description.) */
static int64_t span(kmux_order order, int64_t rows, int64_t cols, int64_t ld, int64_t batch,
                    int64_t stride) {
    if (rows == 0 || cols == 0 || batch == 0) return 0;
    int64_t outer = order == KMUX_ROW_MAJOR ? rows : cols;
    int64_t inner = order == KMUX_ROW_MAJOR ? cols : rows, s, t;
    if (__builtin_mul_overflow(outer - 1, ld, &s) || __builtin_add_overflow(s, inner, &s) ||
        __builtin_mul_overflow(batch - 1, stride, &t) || __builtin_add_overflow(s, t, &s))
        return -1;
    return s > CAP_ELEMS ? -1 : s;
}

static int64_t idx(kmux_order order, int64_t r, int64_t c, int64_t ld) {
    return order == KMUX_ROW_MAJOR ? r * ld + c : r + c * ld;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    fz f = {data, size};
    kmux_device *ref;
    kmux_stream *s = fz_ref_stream(&ref);
    kmux_matmul_desc d = KMUX_MATMUL_DESC_INIT;
    d.order = (kmux_order)fz_enum(&f, orders, 2);
    d.transa = (kmux_transpose)fz_enum(&f, transes, 2);
    d.transb = (kmux_transpose)fz_enum(&f, transes, 2);
    d.m = fz_size(&f, 9), d.n = fz_size(&f, 9), d.k = fz_size(&f, 9);
    int ta = d.transa == KMUX_TRANS, tb = d.transb == KMUX_TRANS, row = d.order == KMUX_ROW_MAJOR;
    int64_t ra = ta ? d.k : d.m, ca = ta ? d.m : d.k, rb = tb ? d.n : d.k, cb = tb ? d.k : d.n;
    /* leading dimensions around the minimum (one below it is an error) */
    int64_t mina = row ? ca : ra, minb = row ? cb : rb, minc = row ? d.n : d.m;
    d.lda = fz_add(mina > 1 ? mina : 1, fz_add(fz_size(&f, 3), -1));
    d.ldb = fz_add(minb > 1 ? minb : 1, fz_add(fz_size(&f, 3), -1));
    d.ldc = fz_add(minc > 1 ? minc : 1, fz_add(fz_size(&f, 3), -1));
    uint8_t mode = fz_u8(&f) % 3; /* 0 gemm_ex, 1 strided batched, 2 plan API */
    if (mode >= 1) {
        d.batch_count = fz_size(&f, 3);
        int64_t one_a = fz_mul(row ? ra : ca, d.lda), one_c = fz_mul(row ? d.m : d.n, d.ldc);
        int64_t one_b = fz_mul(row ? rb : cb, d.ldb);
        d.stride_a = fz_u8(&f) % 2 ? one_a : fz_size(&f, 40);
        d.stride_b = fz_u8(&f) % 2 ? one_b : fz_size(&f, 40);
        d.stride_c = fz_u8(&f) % 4 ? one_c : fz_size(&f, 40);
    }
    d.a_type = (kmux_dtype)fz_enum(&f, dtypes, 12);
    d.b_type = fz_u8(&f) % 4 ? d.a_type : (kmux_dtype)fz_enum(&f, dtypes, 12);
    d.c_type = fz_u8(&f) % 3 ? d.a_type : (kmux_dtype)fz_enum(&f, dtypes, 12);
    d.compute_type = (kmux_compute_type)fz_enum(&f, computes, 6);
    if (fz_u8(&f) % 2) /* the usual compute type of a_type */
        d.compute_type = d.a_type == KMUX_F64  ? KMUX_COMPUTE_F64
                         : d.a_type == KMUX_I8 ? KMUX_COMPUTE_I32
                                               : KMUX_COMPUTE_F32;
    if (d.a_type == KMUX_I8 && fz_u8(&f) % 2) d.c_type = KMUX_I32;
    if (mode == 2) {
        uint8_t e = fz_u8(&f);
        d.epilogue = e % 5 == 4 ? e : (unsigned)(e % 5 == 3 ? 0 : e % 5);
        d.bias_type = (kmux_dtype)(fz_u8(&f) % 2 ? KMUX_F32 : d.c_type);
    }
    double alpha = fz_small(&f), beta = fz_small(&f);
    uint8_t nulls = fz_u8(&f); /* a NULL operand now and then */
    float alpha_f = (float)alpha, beta_f = (float)beta;
    int32_t alpha_i = (int32_t)alpha, beta_i = (int32_t)beta;
    const void *pa = d.compute_type == KMUX_COMPUTE_F64   ? (const void *)&alpha
                     : d.compute_type == KMUX_COMPUTE_I32 ? (const void *)&alpha_i
                                                          : (const void *)&alpha_f;
    const void *pb = d.compute_type == KMUX_COMPUTE_F64   ? (const void *)&beta
                     : d.compute_type == KMUX_COMPUTE_I32 ? (const void *)&beta_i
                                                          : (const void *)&beta_f;

    kmux_plan *plan = NULL;
    kmux_status vst = kmux_matmul_plan_create(ref, &d, NULL, &plan);
    int64_t batch = mode >= 1 ? d.batch_count : 1;
    int64_t na = -1, nb = -1, nc = -1;
    if (vst == KMUX_OK) {
        na = span(d.order, ra, ca, d.lda, batch, d.stride_a);
        nb = span(d.order, rb, cb, d.ldb, batch, d.stride_b);
        nc = span(d.order, d.m, d.n, d.ldc, batch, d.stride_c);
    } else {
        fz_check_rejection(vst, "kmux_matmul_plan_create");
    }
    int run = vst == KMUX_OK && na >= 0 && nb >= 0 && nc >= 0 && d.n <= CAP_ELEMS;
    /* Rejected: 1-byte operands (nothing may be read); accepted: exactly sized ones. */
    double *va = NULL, *vb = NULL, *vc = NULL;
    void *A = fz_tensor(s, run ? d.a_type : KMUX_I8, run ? na : 0, 1, &va);
    void *B = fz_tensor(s, run ? d.b_type : KMUX_I8, run ? nb : 0, 2, &vb);
    void *C = fz_tensor(s, run ? d.c_type : KMUX_I8, run ? nc : 0, 3, &vc);
    void *bias = fz_tensor(s, run ? d.bias_type : KMUX_I8, run ? (d.n > 0 ? d.n : 0) : 0, 4, NULL);
    const void *a_arg = nulls == 1 ? NULL : A, *b_arg = nulls == 2 ? NULL : B;
    void *c_arg = nulls == 3 ? NULL : C;

    if (vst == KMUX_OK && !run) { /* valid but too large to run here */
        kmux_plan_destroy(plan);
        free(A), free(B), free(C), free(bias), free(va), free(vb), free(vc);
        return 0;
    }
    kmux_status st;
    const char *fn;
    if (mode == 0) {
        fn = "kmux_gemm_ex";
        st = kmux_gemm_ex(s, d.order, d.transa, d.transb, d.m, d.n, d.k, pa, a_arg, d.a_type, d.lda,
                          b_arg, d.b_type, d.ldb, pb, c_arg, d.c_type, d.ldc, d.compute_type);
    } else if (mode == 1) {
        fn = "kmux_gemm_strided_batched_ex";
        st = kmux_gemm_strided_batched_ex(s, d.order, d.transa, d.transb, d.m, d.n, d.k, pa, a_arg,
                                          d.a_type, d.lda, d.stride_a, b_arg, d.b_type, d.ldb,
                                          d.stride_b, pb, c_arg, d.c_type, d.ldc, d.stride_c,
                                          d.batch_count, d.compute_type);
    } else if (plan) {
        fn = "kmux_matmul_execute";
        kmux_matmul_args args = KMUX_MATMUL_ARGS_INIT;
        args.alpha = pa, args.beta = pb, args.A = a_arg, args.B = b_arg, args.C = c_arg;
        args.bias = bias;
        st = kmux_matmul_execute(plan, s, &args);
    } else {
        fn = "kmux_matmul_plan_create";
        st = vst;
    }
    if (st == KMUX_OK) st = kmux_stream_synchronize(s);
    if (vst != KMUX_OK && st != vst) {
        fprintf(stderr, "fuzz_gemm: plan_create said %s but %s returned %s: %s\n",
                kmux_status_str(vst), fn, kmux_status_str(st), kmux_last_error());
        abort();
    }
    int null_operand = (nulls == 1 || nulls == 2 || nulls == 3);
    if (vst == KMUX_OK && st != KMUX_OK) {
        /* only a NULL operand may make an accepted description fail */
        if (!null_operand || st != KMUX_ERR_INVALID_ARGUMENT) {
            fprintf(stderr, "fuzz_gemm: accepted description failed in %s: %s: %s\n", fn,
                    kmux_status_str(st), kmux_last_error());
            abort();
        }
        fz_check_rejection(st, fn);
    }
    int same = d.a_type == d.b_type && d.a_type == d.c_type;
    int checked = (d.a_type == KMUX_F32 && d.compute_type == KMUX_COMPUTE_F32) ||
                  (d.a_type == KMUX_F64 && d.compute_type == KMUX_COMPUTE_F64);
    if (run && st == KMUX_OK && nc > 0 && same && checked && d.epilogue == 0) {
        for (int64_t b = 0; b < batch; b++)
            for (int64_t i = 0; i < d.m; i++)
                for (int64_t j = 0; j < d.n; j++) {
                    double acc = 0;
                    for (int64_t p = 0; p < d.k; p++) {
                        double x = va[b * d.stride_a +
                                      (ta ? idx(d.order, p, i, d.lda) : idx(d.order, i, p, d.lda))];
                        double y = vb[b * d.stride_b +
                                      (tb ? idx(d.order, j, p, d.ldb) : idx(d.order, p, j, d.ldb))];
                        acc += x * y;
                    }
                    int64_t e = b * d.stride_c + idx(d.order, i, j, d.ldc);
                    double want = alpha * acc + (beta != 0 ? beta * vc[e] : 0);
                    if (d.k == 0 || alpha == 0) want = beta != 0 ? beta * vc[e] : 0;
                    double got = fz_get(C, d.c_type, e);
                    if (got != want) {
                        fprintf(stderr,
                                "fuzz_gemm: %s %s m=%lld n=%lld k=%lld batch %lld: C[%lld] = %g, "
                                "want %g\n",
                                fn, kmux_dtype_name(d.a_type), (long long)d.m, (long long)d.n,
                                (long long)d.k, (long long)b, (long long)e, got, want);
                        abort();
                    }
                }
    }
    if (plan) kmux_plan_destroy(plan);
    free(A), free(B), free(C), free(bias), free(va), free(vb), free(vc);
    return 0;
}
