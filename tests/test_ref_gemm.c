/*
 * test_ref_gemm.c - GEMM on the reference device, through the public API, against small cases
 * computed by hand: storage orders x transposes with padded leading dimensions, alpha/beta,
 * i8 -> i32, output rounding (ties and overflow) for f16/bf16 and fp8 inputs, epilogues, fp8
 * scales with amax, strided batches (including stride 0) and the degenerate BLAS semantics.
 */
#include <math.h>
#include <string.h>

#include "test_util.h"

TU_REF_SUITE(ref_gemm);

/* Offset of element (row, col) of a matrix stored in order o with leading dimension ld. */
static int64_t at(kmux_order o, int64_t row, int64_t col, int64_t ld) {
    return o == KMUX_ROW_MAJOR ? row * ld + col : row + col * ld;
}

/* A (2x3) = [1 2 3; 4 5 6], B (3x2) = [7 8; 9 10; 11 12]: AB = [58 64; 139 154].
 * With alpha = 2, beta = 3 and C = [1 2; 3 4]: 2 AB + 3 C = [119 134; 287 320]. */
static const double A23[2][3] = {{1, 2, 3}, {4, 5, 6}};
static const double B32[3][2] = {{7, 8}, {9, 10}, {11, 12}};
static const double C22[2][2] = {{1, 2}, {3, 4}};
static const double WANT22[2][2] = {{119, 134}, {287, 320}};

/* One order / transpose combination in f64 (f64 = 1) or f32, leading dimensions padded by 2
 * (A, B; padding holds NaN, which would poison any result that reads it) and 1 (C; padding holds
 * a sentinel that must survive). */
static void run_layout(kmux_order o, kmux_transpose ta, kmux_transpose tb, int f64) {
    enum { CAP = 64 };
    double a[CAP], b[CAP], c[CAP];
    for (int i = 0; i < CAP; i++)
        a[i] = b[i] = NAN, c[i] = -777.0;
    int64_t ar = ta == KMUX_NO_TRANS ? 2 : 3, ac = ta == KMUX_NO_TRANS ? 3 : 2;
    int64_t br = tb == KMUX_NO_TRANS ? 3 : 2, bc = tb == KMUX_NO_TRANS ? 2 : 3;
    int64_t lda = (o == KMUX_ROW_MAJOR ? ac : ar) + 2, ldb = (o == KMUX_ROW_MAJOR ? bc : br) + 2;
    int64_t ldc = 2 + 1;
    for (int i = 0; i < 2; i++)
        for (int l = 0; l < 3; l++)
            a[ta == KMUX_NO_TRANS ? at(o, i, l, lda) : at(o, l, i, lda)] = A23[i][l];
    for (int l = 0; l < 3; l++)
        for (int j = 0; j < 2; j++)
            b[tb == KMUX_NO_TRANS ? at(o, l, j, ldb) : at(o, j, l, ldb)] = B32[l][j];
    for (int i = 0; i < 2; i++)
        for (int j = 0; j < 2; j++)
            c[at(o, i, j, ldc)] = C22[i][j];

    if (f64) {
        double alpha = 2, beta = 3;
        TU_OK(kmux_gemm_ex(st, o, ta, tb, 2, 2, 3, &alpha, a, KMUX_F64, lda, b, KMUX_F64, ldb,
                           &beta, c, KMUX_F64, ldc, KMUX_COMPUTE_F64));
    } else {
        float af[CAP], bf[CAP], cf[CAP], alpha = 2, beta = 3;
        for (int i = 0; i < CAP; i++)
            af[i] = (float)a[i], bf[i] = (float)b[i], cf[i] = (float)c[i];
        TU_OK(kmux_gemm_ex(st, o, ta, tb, 2, 2, 3, &alpha, af, KMUX_F32, lda, bf, KMUX_F32, ldb,
                           &beta, cf, KMUX_F32, ldc, KMUX_COMPUTE_F32));
        for (int i = 0; i < CAP; i++)
            c[i] = cf[i];
    }
    int touched[CAP] = {0};
    for (int i = 0; i < 2; i++)
        for (int j = 0; j < 2; j++) {
            int64_t idx = at(o, i, j, ldc);
            touched[idx] = 1;
            cr_expect_eq(c[idx], WANT22[i][j], "%s order %d ta %d tb %d: C[%d][%d] = %g, want %g",
                         f64 ? "f64" : "f32", o, ta, tb, i, j, c[idx], WANT22[i][j]);
        }
    for (int i = 0; i < CAP; i++)
        if (!touched[i]) cr_expect_eq(c[i], -777.0, "element %d outside C was written", i);
}

Test(ref_gemm, orders_and_transposes) {
    const kmux_order orders[] = {KMUX_ROW_MAJOR, KMUX_COL_MAJOR};
    const kmux_transpose tr[] = {KMUX_NO_TRANS, KMUX_TRANS};
    for (int f64 = 0; f64 < 2; f64++)
        for (int o = 0; o < 2; o++)
            for (int x = 0; x < 2; x++)
                for (int y = 0; y < 2; y++)
                    run_layout(orders[o], tr[x], tr[y], f64);
}

Test(ref_gemm, i8_to_i32) {
    /* A = [127 -128; -1 2], B = [127 1; -128 3]:
     * AB = [127*127 + 128*128, 127 - 384; -127 - 256, -1 + 6] = [32513 -257; -383 5];
     * alpha = 2, beta = -1, C = [10 20; 30 40]: [65016 -534; -796 -30]. */
    const int8_t a[4] = {127, -128, -1, 2}, b[4] = {127, 1, -128, 3};
    int32_t c[4] = {10, 20, 30, 40}, alpha = 2, beta = -1;
    TU_OK(kmux_gemm_ex(st, KMUX_ROW_MAJOR, KMUX_NO_TRANS, KMUX_NO_TRANS, 2, 2, 2, &alpha, a,
                       KMUX_I8, 2, b, KMUX_I8, 2, &beta, c, KMUX_I32, 2, KMUX_COMPUTE_I32));
    const int32_t want[4] = {65016, -534, -796, -30};
    for (int i = 0; i < 4; i++)
        cr_expect_eq(c[i], want[i], "C[%d] = %d, want %d", i, c[i], want[i]);
}

/* m x 1 = (m x k) (k x 1), row-major, compute F32, alpha = 1, beta = 0: one output per case. */
static void gemv_cases(int64_t m, int64_t k, const void *a, kmux_dtype at_, const void *b,
                       kmux_dtype bt, void *c, kmux_dtype ct) {
    float alpha = 1, beta = 0;
    TU_OK(kmux_gemm_ex(st, KMUX_ROW_MAJOR, KMUX_NO_TRANS, KMUX_NO_TRANS, m, 1, k, &alpha, a, at_, k,
                       b, bt, 1, &beta, c, ct, 1, KMUX_COMPUTE_F32));
}

Test(ref_gemm, f16_output_rounding) {
    /* f16 bits: 1 = 0x3C00, 1 + 2^-10 = 0x3C01, 2^-11 = 0x1000, 65504 = 0x7BFF, 16 = 0x4C00,
     * 15 = 0x4B80. Rows: 1 + 2^-11 (tie -> 0x3C00), 1 + 3 * 2^-11 (tie -> 0x3C02),
     * 65504 + 16 = 65520 (midpoint above max -> +Inf), 65504 + 15 (-> max 0x7BFF). */
    const uint16_t a[8] = {0x3C00, 0x1000, 0x3C01, 0x1000, 0x7BFF, 0x4C00, 0x7BFF, 0x4B80};
    const uint16_t b[2] = {0x3C00, 0x3C00};
    uint16_t c[4];
    gemv_cases(4, 2, a, KMUX_F16, b, KMUX_F16, c, KMUX_F16);
    const uint16_t want[4] = {0x3C00, 0x3C02, 0x7C00, 0x7BFF};
    for (int i = 0; i < 4; i++)
        cr_expect_eq(c[i], want[i], "row %d: 0x%04x, want 0x%04x", i, c[i], want[i]);
}

Test(ref_gemm, bf16_output_rounding) {
    /* bf16 bits: 1 = 0x3F80, 1 + 2^-7 = 0x3F81, 2^-8 = 0x3B80, max (2 - 2^-7) 2^127 = 0x7F7F,
     * 2^119 = 0x7B00. Rows: 1 + 2^-8 (tie -> 0x3F80), 1 + 3 * 2^-8 (tie -> 0x3F82),
     * (2 - 2^-8) 2^127 (midpoint above max -> +Inf). */
    const uint16_t a[6] = {0x3F80, 0x3B80, 0x3F81, 0x3B80, 0x7F7F, 0x7B00};
    const uint16_t b[2] = {0x3F80, 0x3F80};
    uint16_t c[3];
    gemv_cases(3, 2, a, KMUX_BF16, b, KMUX_BF16, c, KMUX_BF16);
    const uint16_t want[3] = {0x3F80, 0x3F82, 0x7F80};
    for (int i = 0; i < 3; i++)
        cr_expect_eq(c[i], want[i], "row %d: 0x%04x, want 0x%04x", i, c[i], want[i]);
}

Test(ref_gemm, fp8_inputs_f16_output) {
    /* A e4m3: 1 = 0x38, 2^-6 = 0x08; B e5m2: 1 = 0x3C, 2^-5 = 0x28, 2^-4 = 0x2C.
     * Row 0: 1 + 2^-11 + 0 (f16 tie -> 0x3C00); row 1: 1 + 2^-11 + 2^-10 (tie -> 0x3C02). */
    const uint8_t a[6] = {0x38, 0x08, 0x00, 0x38, 0x08, 0x08};
    const uint8_t b[3] = {0x3C, 0x28, 0x2C};
    uint16_t c[2];
    gemv_cases(2, 3, a, KMUX_F8_E4M3, b, KMUX_F8_E5M2, c, KMUX_F16);
    cr_expect_eq(c[0], 0x3C00, "0x%04x", c[0]);
    cr_expect_eq(c[1], 0x3C02, "0x%04x", c[1]);
    /* FNUZ pair: e4m3fnuz 240 = 0x7F times e5m2fnuz 2 = 0x44 (bias 16: 2 = 0.10001.00). */
    const uint8_t a2[1] = {0x7F}, b2[1] = {0x44};
    float c2 = 0;
    gemv_cases(1, 1, a2, KMUX_F8_E4M3_FNUZ, b2, KMUX_F8_E5M2_FNUZ, &c2, KMUX_F32);
    cr_expect_eq(c2, 480.0f);
}

/* Executes a 2x2x2 row-major f64 matmul plan with epilogue ep. */
static void run_epilogue(unsigned ep, double alpha, double beta, const double *bias, double *c) {
    /* A = [1 2; 3 4], B = I */
    const double a[4] = {1, 2, 3, 4}, b[4] = {1, 0, 0, 1};
    kmux_matmul_desc d = KMUX_MATMUL_DESC_INIT;
    d.m = d.n = d.k = 2;
    d.lda = d.ldb = d.ldc = 2;
    d.a_type = d.b_type = d.c_type = d.bias_type = KMUX_F64;
    d.compute_type = KMUX_COMPUTE_F64;
    d.epilogue = ep;
    kmux_plan *plan = NULL;
    TU_OK(kmux_matmul_plan_create(dev, &d, NULL, &plan));
    kmux_matmul_args args = KMUX_MATMUL_ARGS_INIT;
    args.alpha = &alpha;
    args.beta = &beta;
    args.A = a;
    args.B = b;
    args.C = c;
    args.bias = bias;
    TU_OK(kmux_matmul_execute(plan, st, &args));
    TU_OK(kmux_plan_destroy(plan));
}

/* GELU, tanh approximation (Hendrycks & Gimpel), as cuBLASLt's GELU epilogue. */
static double gelu_tanh(double x) {
    const double pi = 3.14159265358979323846;
    return 0.5 * x * (1.0 + tanh(sqrt(2.0 / pi) * (x + 0.044715 * x * x * x)));
}

Test(ref_gemm, epilogues) {
    const double bias[2] = {-2.5, 1.0}; /* bias[j] added to every row i */
    double c[4] = {NAN, NAN, NAN, NAN};
    run_epilogue(KMUX_EPILOGUE_BIAS, 1, 0, bias, c);
    const double want_bias[4] = {-1.5, 3, 0.5, 5};
    for (int i = 0; i < 4; i++)
        cr_expect_eq(c[i], want_bias[i], "bias: C[%d] = %g", i, c[i]);

    run_epilogue(KMUX_EPILOGUE_BIAS | KMUX_EPILOGUE_RELU, 1, 0, bias, c);
    const double want_relu[4] = {0, 3, 0.5, 5};
    for (int i = 0; i < 4; i++)
        cr_expect_eq(c[i], want_relu[i], "bias+relu: C[%d] = %g", i, c[i]);

    /* relu after beta * C: -A + C with C = 2: [1 0; -1 -2] -> [1 0; 0 0] */
    for (int i = 0; i < 4; i++)
        c[i] = 2;
    run_epilogue(KMUX_EPILOGUE_RELU, -1, 1, NULL, c);
    const double want_relu2[4] = {1, 0, 0, 0};
    for (int i = 0; i < 4; i++)
        cr_expect_eq(c[i], want_relu2[i], "relu: C[%d] = %g", i, c[i]);

    run_epilogue(KMUX_EPILOGUE_BIAS | KMUX_EPILOGUE_GELU, 1, 0, bias, c);
    for (int i = 0; i < 4; i++) {
        double want = gelu_tanh(want_bias[i]);
        cr_expect(fabs(c[i] - want) <= 1e-15 * fabs(want), "gelu: C[%d] = %.17g, want %.17g", i,
                  c[i], want);
    }
}

Test(ref_gemm, bias_f32_on_f16_output) {
    /* f16 A = [1 2] (0x3C00, 0x4000), B = I (1x... ) -> C = A + bias; bias f32 [0.5, -4] */
    const uint16_t a[2] = {0x3C00, 0x4000}, b[4] = {0x3C00, 0, 0, 0x3C00};
    const float bias[2] = {0.5f, -4.0f};
    uint16_t c[2];
    kmux_matmul_desc d = KMUX_MATMUL_DESC_INIT;
    d.m = 1, d.n = 2, d.k = 2, d.lda = 2, d.ldb = 2, d.ldc = 2;
    d.a_type = d.b_type = d.c_type = KMUX_F16;
    d.bias_type = KMUX_F32;
    d.epilogue = KMUX_EPILOGUE_BIAS | KMUX_EPILOGUE_RELU;
    kmux_plan *plan = NULL;
    TU_OK(kmux_matmul_plan_create(dev, &d, NULL, &plan));
    float alpha = 1, beta = 0;
    kmux_matmul_args args = KMUX_MATMUL_ARGS_INIT;
    args.alpha = &alpha, args.beta = &beta, args.A = a, args.B = b, args.C = c, args.bias = bias;
    TU_OK(kmux_matmul_execute(plan, st, &args));
    TU_OK(kmux_plan_destroy(plan));
    cr_expect_eq(c[0], 0x3E00, "1.5 = 0x3E00, got 0x%04x", c[0]);
    cr_expect_eq(c[1], 0x0000, "relu(2 - 4) = +0, got 0x%04x", c[1]);
}

Test(ref_gemm, fp8_scales_and_amax) {
    /* A e4m3 = [1 2; -3 4] (0x38 0x40 0xC4 0x48), B e4m3 = I; a_scale 2, b_scale 4, d_scale 1/4,
     * beta = 1 and C = 1: pre-scale D = 8 A + 1 = [9 17; -23 33], amax_d = 33, D = that / 4. */
    const uint8_t a[4] = {0x38, 0x40, 0xC4, 0x48}, b[4] = {0x38, 0x00, 0x00, 0x38};
    float c[4] = {1, 1, 1, 1};
    float as = 2, bs = 4, ds = 0.25f, amax = -1, alpha = 1, beta = 1;
    kmux_matmul_desc d = KMUX_MATMUL_DESC_INIT;
    d.m = d.n = d.k = 2;
    d.lda = d.ldb = d.ldc = 2;
    d.a_type = d.b_type = KMUX_F8_E4M3;
    d.c_type = KMUX_F32;
    kmux_plan *plan = NULL;
    TU_OK(kmux_matmul_plan_create(dev, &d, NULL, &plan));
    kmux_matmul_args args = KMUX_MATMUL_ARGS_INIT;
    args.alpha = &alpha, args.beta = &beta, args.A = a, args.B = b, args.C = c;
    args.a_scale = &as, args.b_scale = &bs, args.d_scale = &ds, args.amax_d = &amax;
    TU_OK(kmux_matmul_execute(plan, st, &args));
    TU_OK(kmux_plan_destroy(plan));
    const float want[4] = {2.25f, 4.25f, -5.75f, 8.25f};
    for (int i = 0; i < 4; i++)
        cr_expect_eq(c[i], want[i], "C[%d] = %g, want %g", i, c[i], want[i]);
    cr_expect_eq(amax, 33.0f, "amax_d = %g", amax);
}

Test(ref_gemm, strided_batched) {
    /* A shared (stride 0) = [1 2; 3 4], B_b = (b + 1) I -> C_b = (b + 1) A; C batches 6 apart,
     * the 2 elements between them must stay untouched. */
    const float a[4] = {1, 2, 3, 4};
    float b[12] = {0}, c[18], alpha = 1, beta = 0;
    for (int i = 0; i < 3; i++)
        b[4 * i] = b[4 * i + 3] = (float)(i + 1);
    for (int i = 0; i < 18; i++)
        c[i] = -777;
    TU_OK(kmux_gemm_strided_batched_ex(st, KMUX_ROW_MAJOR, KMUX_NO_TRANS, KMUX_NO_TRANS, 2, 2, 2,
                                       &alpha, a, KMUX_F32, 2, 0, b, KMUX_F32, 2, 4, &beta, c,
                                       KMUX_F32, 2, 6, 3, KMUX_COMPUTE_F32));
    for (int bt = 0; bt < 3; bt++) {
        for (int i = 0; i < 4; i++)
            cr_expect_eq(c[6 * bt + i], (bt + 1) * a[i], "batch %d C[%d] = %g", bt, i,
                         c[6 * bt + i]);
        cr_expect(c[6 * bt + 4] == -777 && c[6 * bt + 5] == -777, "gap after batch %d written", bt);
    }
    /* B shared (stride 0) = [0 1; 1 0] swaps columns; A_b = [b b+1; b+2 b+3] (stride 4),
     * column-major this time: A_b stored column-major holds A_b[i][j] at i + 2 j. */
    float a2[12], b2[4] = {0, 1, 1, 0}, c2[12];
    for (int bt = 0; bt < 3; bt++)
        for (int i = 0; i < 2; i++)
            for (int j = 0; j < 2; j++)
                a2[4 * bt + i + 2 * j] = (float)(bt + 2 * i + j);
    TU_OK(kmux_gemm_strided_batched_ex(st, KMUX_COL_MAJOR, KMUX_NO_TRANS, KMUX_NO_TRANS, 2, 2, 2,
                                       &alpha, a2, KMUX_F32, 2, 4, b2, KMUX_F32, 2, 0, &beta, c2,
                                       KMUX_F32, 2, 4, 3, KMUX_COMPUTE_F32));
    for (int bt = 0; bt < 3; bt++)
        for (int i = 0; i < 2; i++)
            for (int j = 0; j < 2; j++) {
                float want = (float)(bt + 2 * i + (1 - j)); /* column j of C = column 1-j of A */
                cr_expect_eq(c2[4 * bt + i + 2 * j], want, "batch %d C[%d][%d]", bt, i, j);
            }
}

Test(ref_gemm, k_zero_gives_beta_c_without_a_b) {
    float c[4] = {1, 2, 3, 4}, alpha = 1, beta = 2;
    TU_OK(kmux_gemm_ex(st, KMUX_ROW_MAJOR, KMUX_NO_TRANS, KMUX_NO_TRANS, 2, 2, 0, &alpha, NULL,
                       KMUX_F32, 1, NULL, KMUX_F32, 2, &beta, c, KMUX_F32, 2, KMUX_COMPUTE_F32));
    for (int i = 0; i < 4; i++)
        cr_expect_eq(c[i], 2.0f * (float)(i + 1), "C[%d] = %g", i, c[i]);
}

Test(ref_gemm, alpha_zero_does_not_read_a_b) {
    double c[4] = {1, -2, 3, -4}, alpha = 0, beta = -0.5;
    TU_OK(kmux_gemm_ex(st, KMUX_COL_MAJOR, KMUX_TRANS, KMUX_NO_TRANS, 2, 2, 3, &alpha, NULL,
                       KMUX_F64, 3, NULL, KMUX_F64, 3, &beta, c, KMUX_F64, 2, KMUX_COMPUTE_F64));
    const double want[4] = {-0.5, 1, -1.5, 2};
    for (int i = 0; i < 4; i++)
        cr_expect_eq(c[i], want[i], "C[%d] = %g", i, c[i]);
    /* alpha = 0 and beta = 0: zeros, even over NaN */
    double c2[4] = {NAN, INFINITY, NAN, -INFINITY}, zero = 0;
    TU_OK(kmux_gemm_ex(st, KMUX_ROW_MAJOR, KMUX_NO_TRANS, KMUX_NO_TRANS, 2, 2, 3, &zero, NULL,
                       KMUX_F64, 3, NULL, KMUX_F64, 2, &zero, c2, KMUX_F64, 2, KMUX_COMPUTE_F64));
    for (int i = 0; i < 4; i++)
        cr_expect_eq(c2[i], 0.0, "C[%d] = %g", i, c2[i]);
}

Test(ref_gemm, beta_zero_does_not_read_c) {
    /* A = [1 2; 3 4], B = I, C full of NaN/Inf, beta = 0: C = A exactly */
    const float a[4] = {1, 2, 3, 4}, b[4] = {1, 0, 0, 1};
    float c[4] = {NAN, INFINITY, -NAN, -INFINITY}, alpha = 1, beta = 0;
    TU_OK(kmux_gemm_ex(st, KMUX_ROW_MAJOR, KMUX_NO_TRANS, KMUX_NO_TRANS, 2, 2, 2, &alpha, a,
                       KMUX_F32, 2, b, KMUX_F32, 2, &beta, c, KMUX_F32, 2, KMUX_COMPUTE_F32));
    for (int i = 0; i < 4; i++)
        cr_expect_eq(c[i], a[i], "C[%d] = %g", i, c[i]);
    /* the same for i8 -> i32 (C holds garbage) */
    const int8_t ai[4] = {1, 2, 3, 4}, bi[4] = {1, 0, 0, 1};
    int32_t ci[4] = {INT32_MIN, INT32_MAX, -1, 7}, one = 1, izero = 0;
    TU_OK(kmux_gemm_ex(st, KMUX_ROW_MAJOR, KMUX_NO_TRANS, KMUX_NO_TRANS, 2, 2, 2, &one, ai, KMUX_I8,
                       2, bi, KMUX_I8, 2, &izero, ci, KMUX_I32, 2, KMUX_COMPUTE_I32));
    for (int i = 0; i < 4; i++)
        cr_expect_eq(ci[i], ai[i], "C[%d] = %d", i, ci[i]);
}

Test(ref_gemm, plan_info) {
    kmux_matmul_desc d = KMUX_MATMUL_DESC_INIT;
    d.m = d.n = d.k = 4;
    d.lda = d.ldb = d.ldc = 4;
    d.compute_type = KMUX_COMPUTE_F32_FAST_TF32;
    kmux_plan *plan = NULL;
    TU_OK(kmux_matmul_plan_create(dev, &d, NULL, &plan));
    kmux_plan_info info;
    TU_OK(kmux_plan_info_get(plan, &info));
    cr_expect_str_eq(info.impl, "ref:f64");
    cr_expect_str_eq(info.device, "ref");
    cr_expect_eq(info.effective_compute,
                 KMUX_COMPUTE_F64); /* ref accumulates in f64 whatever is asked */
    cr_expect_eq(info.deterministic, 1);
    cr_expect_eq(info.impl_index, 0);
    TU_STATUS(KMUX_ERR_LAST_IMPL, kmux_plan_next_impl(plan));
    TU_OK(kmux_plan_destroy(plan));
}

Test(ref_gemm, device_props) {
    kmux_device_props p;
    TU_OK(kmux_device_props_get(dev, &p));
    cr_expect_str_eq(p.id, "ref");
    cr_expect_str_eq(p.backend, "ref");
    cr_expect_eq(p.is_host, 1);
    for (int t = KMUX_F64; t <= KMUX_I32; t++) {
        cr_expect(p.dtype_support[t] != 0, "ref must support %s", kmux_dtype_name((kmux_dtype)t));
        cr_expect_eq(p.peak_flops[t], 0.0, "ref is no speed path");
    }
}
