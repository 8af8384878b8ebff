/*
 * type_rules.c - the legal type combinations of GEMM and convolution (see kmux_type_rules.h).
 * The rows are the table of kmux.h; the reasons for a refusal are read off the same rows, so a
 * new row changes validation, messages, the public query and the support matrix at once.
 */
#include "kmux_type_rules.h"

#include "kmux_dtype_desc.h"

#define ROW(a, b, c, ct)                                                                           \
    { sizeof(kmux_type_combination), KMUX_##a, KMUX_##b, KMUX_##c, KMUX_COMPUTE_##ct }
#define FP8_ROWS(a, b) ROW(a, b, F32, F32), ROW(a, b, F16, F32), ROW(a, b, BF16, F32)

/* cublasGemmEx / cublasLtMatmul's table restricted to what every kmux backend can express:
 * equal input types except between fp8 formats of one family (OCP or FNUZ), f32 accumulation for
 * the narrow types (f16 may also accumulate in f16), i8 -> i32 with i32 accumulation. */
static const kmux_type_combination MATMUL_ROWS[] = {
    ROW(F64, F64, F64, F64),
    ROW(F32, F32, F32, F32),
    ROW(F32, F32, F32, F32_FAST_TF32),
    ROW(F32, F32, F32, F32_FAST_BF16),
    ROW(F16, F16, F16, F32),
    ROW(F16, F16, F32, F32),
    ROW(F16, F16, F16, F16),
    ROW(BF16, BF16, BF16, F32),
    ROW(BF16, BF16, F32, F32),
    FP8_ROWS(F8_E4M3, F8_E4M3),
    FP8_ROWS(F8_E4M3, F8_E5M2),
    FP8_ROWS(F8_E5M2, F8_E4M3),
    FP8_ROWS(F8_E5M2, F8_E5M2),
    FP8_ROWS(F8_E4M3_FNUZ, F8_E4M3_FNUZ),
    FP8_ROWS(F8_E4M3_FNUZ, F8_E5M2_FNUZ),
    FP8_ROWS(F8_E5M2_FNUZ, F8_E4M3_FNUZ),
    FP8_ROWS(F8_E5M2_FNUZ, F8_E5M2_FNUZ),
    ROW(I8, I8, I32, I32),
};

/* cudnnConvolution* / oneDNN convolution: x, w and y of one type (a = b = c here). */
static const kmux_type_combination CONV_ROWS[] = {
    ROW(F64, F64, F64, F64),           ROW(F32, F32, F32, F32), ROW(F32, F32, F32, F32_FAST_TF32),
    ROW(F32, F32, F32, F32_FAST_BF16), ROW(F16, F16, F16, F32), ROW(BF16, BF16, BF16, F32),
};

#define COUNT(a) ((int)(sizeof(a) / sizeof((a)[0])))

const kmux_type_combination *kmux_rules_matmul_table(int *count) {
    *count = COUNT(MATMUL_ROWS);
    return MATMUL_ROWS;
}

const kmux_type_combination *kmux_rules_conv_table(int *count) {
    *count = COUNT(CONV_ROWS);
    return CONV_ROWS;
}

/* Finds (a, b, c, ct) in rows; on a miss, the reason is the first column that no row with the
 * columns before it allows. */
static int lookup(const kmux_type_combination *rows, int n, kmux_dtype a, kmux_dtype b,
                  kmux_dtype c, kmux_compute_type ct, const char **why,
                  const char *const reasons[4]) {
    int have_a = 0, have_ab = 0, have_abc = 0;
    for (int i = 0; i < n; i++) {
        if (rows[i].a_type != a) continue;
        have_a = 1;
        if (rows[i].b_type != b) continue;
        have_ab = 1;
        if (rows[i].c_type != c) continue;
        have_abc = 1;
        if (rows[i].compute_type == ct) return 1;
    }
    if (why)
        *why = !have_a ? reasons[0] : !have_ab ? reasons[1] : !have_abc ? reasons[2] : reasons[3];
    return 0;
}

int kmux_rules_matmul_legal(kmux_dtype a, kmux_dtype b, kmux_dtype c, kmux_compute_type ct,
                            const char **why) {
    const char *const generic[4] = {
        "this input type cannot be a GEMM operand",
        "a_type and b_type must be equal (except between fp8 formats)",
        "this output type is not allowed for these inputs",
        "this compute type is not allowed for these types",
    };
    if (lookup(MATMUL_ROWS, COUNT(MATMUL_ROWS), a, b, c, ct, why, generic)) return 1;
    if (!why) return 0;
    /* The sentence for the type family, so that the message says what would be legal. */
    if (*why == generic[1] && (kmux_dtype_is_fp8(a) || kmux_dtype_is_fp8(b)))
        *why = !kmux_dtype_is_fp8(a) || !kmux_dtype_is_fp8(b)
                   ? "fp8 A needs fp8 B and vice versa"
                   : "OCP and FNUZ fp8 formats cannot be mixed";
    else if (*why == generic[2] || *why == generic[3]) {
        switch (kmux_dtype_is_fp8(a) ? KMUX_F8_E4M3 : a) {
        case KMUX_F8_E4M3:
            *why = *why == generic[2] ? "fp8 inputs need an f32, f16 or bf16 output"
                                      : "fp8 inputs need KMUX_COMPUTE_F32";
            break;
        case KMUX_F64:
            *why = "f64 inputs need f64 output and KMUX_COMPUTE_F64";
            break;
        case KMUX_F32:
            *why = *why == generic[2]
                       ? "f32 inputs need an f32 output"
                       : "f32 inputs need KMUX_COMPUTE_F32 or one of its FAST variants";
            break;
        case KMUX_F16:
            *why = *why == generic[2] ? "f16 inputs need an f16 or f32 output"
                   : ct == KMUX_COMPUTE_F16
                       ? "KMUX_COMPUTE_F16 needs an f16 output"
                       : "f16 inputs need KMUX_COMPUTE_F32 or KMUX_COMPUTE_F16";
            break;
        case KMUX_BF16:
            *why = *why == generic[2] ? "bf16 inputs need a bf16 or f32 output"
                                      : "bf16 inputs need KMUX_COMPUTE_F32";
            break;
        case KMUX_I8:
            *why = "i8 inputs need an i32 output and KMUX_COMPUTE_I32";
            break;
        default:
            break;
        }
    }
    return 0;
}

int kmux_rules_conv_legal(kmux_dtype x, kmux_dtype w, kmux_dtype y, kmux_compute_type ct,
                          const char **why) {
    if (x != w || x != y) {
        if (why) *why = "x_type, w_type and y_type must be equal";
        return 0;
    }
    const char *const reasons[4] = {
        "not a supported convolution type (f64/F64, f32/F32[_FAST_*], f16 or bf16/F32)",
        "x_type, w_type and y_type must be equal", "x_type, w_type and y_type must be equal",
        "not a supported convolution compute type (f64/F64, f32/F32[_FAST_*], f16 or bf16/F32)"};
    return lookup(CONV_ROWS, COUNT(CONV_ROWS), x, w, y, ct, why, reasons);
}
