/*
 * test_gpu_emu_gemm.c - kmux_gpu_gemm (kernels/gpu/kmux_gpu_gemm.cu) run in the host emulation
 * of the GPU execution model at wave 32 and 64, in index and shuffled block order, with both
 * tiles, against the ref device: every row of the GEMM type table (kmux_rules_matmul_table) in
 * both orders and all transposes, the BLAS degenerate cases, epilogues, fp8 scales and amax,
 * batches with the grid y/z loops. Shapes are the conformance suite's small ones.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>

#include "emu_common.h"
#include "emu_gemm_case.h"
#include "kmux_dtype_desc.h"
#include "kmux_gpu_kernels.h"
#include "kmux_type_rules.h"

/* One type row of a test. */
typedef struct trow {
    kmux_dtype a, b, c;
    kmux_compute_type ct;
} trow;

static const kmux_order ORDERS[2] = {KMUX_ROW_MAJOR, KMUX_COL_MAJOR};
static const kmux_transpose TRANS[2] = {KMUX_NO_TRANS, KMUX_TRANS};

static void row_tag(const kmux_type_combination *r, char *buf, size_t n, const char *what) {
    snprintf(buf, n, "%s*%s->%s/%s %s", kmux_dtype_desc_of(r->a_type).name,
             kmux_dtype_desc_of(r->b_type).name, kmux_dtype_desc_of(r->c_type).name,
             kmux_compute_type_name(r->compute_type), what);
}

/* Every row of the type table whose A type satisfies `pick`: all orders and transposes on one
 * shape, plus a multi-block shape with alpha/beta. */
static int run_rows(int (*pick)(kmux_dtype)) {
    int count = 0, ran = 0;
    const kmux_type_combination *rows = kmux_rules_matmul_table(&count);
    for (int r = 0; r < count; r++) {
        if (!pick(rows[r].a_type)) continue;
        int isint = rows[r].compute_type == KMUX_COMPUTE_I32;
        for (int o = 0; o < 2; o++)
            for (int ta = 0; ta < 2; ta++)
                for (int tb = 0; tb < 2; tb++) {
                    emu_gemm_case gc = emu_gemm_case_make(
                        rows[r].a_type, rows[r].b_type, rows[r].c_type, rows[r].compute_type,
                        ORDERS[o], TRANS[ta], TRANS[tb], 7, 17, 33, (o + ta + tb) & 1 ? 3 : 0);
                    gc.alpha = isint ? 2 : 1.5;
                    gc.beta = isint ? -1 : -0.5;
                    char tag[128], what[48];
                    snprintf(what, sizeof what, "7x17x33 order %d trans %d%d", o, ta, tb);
                    row_tag(&rows[r], tag, sizeof tag, what);
                    emu_gemm_run(&gc, tag);
                }
        emu_gemm_case gc =
            emu_gemm_case_make(rows[r].a_type, rows[r].b_type, rows[r].c_type, rows[r].compute_type,
                               KMUX_COL_MAJOR, KMUX_TRANS, KMUX_NO_TRANS, 97, 70, 45, 2);
        gc.alpha = isint ? -1 : -0.75;
        gc.beta = isint ? 3 : 1;
        char tag[128];
        row_tag(&rows[r], tag, sizeof tag, "97x70x45");
        emu_gemm_run(&gc, tag);
        ran++;
    }
    return ran;
}

static int is_f64(kmux_dtype t) {
    return t == KMUX_F64;
}
static int is_f32(kmux_dtype t) {
    return t == KMUX_F32;
}
static int is_16(kmux_dtype t) {
    return t == KMUX_F16 || t == KMUX_BF16;
}
static int is_ocp(kmux_dtype t) {
    return kmux_dtype_is_fp8(t) && !kmux_dtype_is_fnuz(t);
}
static int is_fnuz(kmux_dtype t) {
    return kmux_dtype_is_fnuz(t);
}
static int is_i8(kmux_dtype t) {
    return t == KMUX_I8;
}

Test(gpu_emu_gemm, rows_f64) {
    cr_assert_eq(run_rows(is_f64), 1);
}
Test(gpu_emu_gemm, rows_f32) {
    cr_assert_eq(run_rows(is_f32), 3);
}
Test(gpu_emu_gemm, rows_f16_bf16) {
    cr_assert_eq(run_rows(is_16), 5);
}
Test(gpu_emu_gemm, rows_fp8_ocp) {
    cr_assert_eq(run_rows(is_ocp), 12);
}
Test(gpu_emu_gemm, rows_fp8_fnuz) {
    cr_assert_eq(run_rows(is_fnuz), 12);
}
Test(gpu_emu_gemm, rows_i8) {
    cr_assert_eq(run_rows(is_i8), 1);
}

/* Every row of the table is claimed by one of the groups above. */
Test(gpu_emu_gemm, groups_cover_the_table) {
    int count = 0;
    const kmux_type_combination *rows = kmux_rules_matmul_table(&count);
    cr_assert_gt(count, 0);
    for (int r = 0; r < count; r++) {
        kmux_dtype a = rows[r].a_type;
        cr_assert(is_f64(a) + is_f32(a) + is_16(a) + is_ocp(a) + is_fnuz(a) + is_i8(a) == 1,
                  "row %d (a_type %s) is in no group", r, kmux_dtype_desc_of(a).name);
    }
}

/* k == 0 and alpha == 0 never read A and B (NULL here); beta == 0 never reads C (NaN in C must
 * not survive); m == 0, n == 0 and batch == 0 write nothing (amax_d becomes 0). */
Test(gpu_emu_gemm, blas_degenerate_cases) {
    static const trow T[] = {{KMUX_F32, KMUX_F32, KMUX_F32, KMUX_COMPUTE_F32},
                             {KMUX_F16, KMUX_F16, KMUX_F16, KMUX_COMPUTE_F32},
                             {KMUX_F64, KMUX_F64, KMUX_F64, KMUX_COMPUTE_F64},
                             {KMUX_I8, KMUX_I8, KMUX_I32, KMUX_COMPUTE_I32}};
    for (int t = 0; t < 4; t++) {
        const kmux_compute_type ct = T[t].ct;
        emu_gemm_case k0 = emu_gemm_case_make(T[t].a, T[t].b, T[t].c, ct, KMUX_ROW_MAJOR,
                                              KMUX_NO_TRANS, KMUX_NO_TRANS, 5, 3, 0, 1);
        k0.beta = 2, k0.null_ab = 1;
        emu_gemm_run(&k0, "k == 0, beta 2");
        emu_gemm_case a0 = emu_gemm_case_make(T[t].a, T[t].b, T[t].c, ct, KMUX_COL_MAJOR,
                                              KMUX_TRANS, KMUX_NO_TRANS, 6, 5, 4, 1);
        a0.alpha = 0, a0.beta = -1, a0.null_ab = 1;
        emu_gemm_run(&a0, "alpha == 0, beta -1");
        emu_gemm_case a00 = a0;
        a00.beta = 0;
        emu_gemm_run(&a00, "alpha == 0, beta == 0");
        emu_gemm_case m0 = emu_gemm_case_make(T[t].a, T[t].b, T[t].c, ct, KMUX_ROW_MAJOR,
                                              KMUX_NO_TRANS, KMUX_NO_TRANS, 0, 5, 3, 0);
        m0.amax = !kmux_dtype_is_int(T[t].c);
        emu_gemm_run(&m0, "m == 0");
        emu_gemm_case n0 = emu_gemm_case_make(T[t].a, T[t].b, T[t].c, ct, KMUX_COL_MAJOR,
                                              KMUX_NO_TRANS, KMUX_NO_TRANS, 4, 0, 3, 0);
        emu_gemm_run(&n0, "n == 0");
        emu_gemm_case b0 = emu_gemm_case_make(T[t].a, T[t].b, T[t].c, ct, KMUX_COL_MAJOR,
                                              KMUX_NO_TRANS, KMUX_NO_TRANS, 4, 3, 3, 0);
        b0.d.batch_count = 0;
        emu_gemm_run(&b0, "batch == 0");
        emu_gemm_case b1 = emu_gemm_case_make(T[t].a, T[t].b, T[t].c, ct, KMUX_ROW_MAJOR,
                                              KMUX_NO_TRANS, KMUX_NO_TRANS, 9, 6, 21, 1);
        b1.beta = 0;
        b1.c_poison = 1; /* NaN (integers: INT32_MIN) in C, which must not be read */
        emu_gemm_run(&b1, "beta == 0");
    }
}

/* BIAS (f32 and c_type), RELU, GELU and their combinations, with amax. */
Test(gpu_emu_gemm, epilogues) {
    static const trow T[] = {{KMUX_F32, KMUX_F32, KMUX_F32, KMUX_COMPUTE_F32},
                             {KMUX_F16, KMUX_F16, KMUX_F16, KMUX_COMPUTE_F32},
                             {KMUX_BF16, KMUX_BF16, KMUX_F32, KMUX_COMPUTE_F32},
                             {KMUX_F8_E4M3, KMUX_F8_E5M2, KMUX_BF16, KMUX_COMPUTE_F32},
                             {KMUX_F64, KMUX_F64, KMUX_F64, KMUX_COMPUTE_F64}};
    static const unsigned E[] = {KMUX_EPILOGUE_BIAS, KMUX_EPILOGUE_RELU, KMUX_EPILOGUE_GELU,
                                 KMUX_EPILOGUE_BIAS | KMUX_EPILOGUE_RELU,
                                 KMUX_EPILOGUE_BIAS | KMUX_EPILOGUE_GELU};
    for (int t = 0; t < 5; t++)
        for (int e = 0; e < 5; e++)
            for (int bt = 0; bt < 2; bt++) {
                if (bt && !(E[e] & KMUX_EPILOGUE_BIAS)) continue;
                emu_gemm_case gc = emu_gemm_case_make(
                    T[t].a, T[t].b, T[t].c, T[t].ct, e & 1 ? KMUX_COL_MAJOR : KMUX_ROW_MAJOR,
                    KMUX_NO_TRANS, e & 2 ? KMUX_TRANS : KMUX_NO_TRANS, 17, 33, 7, 1);
                gc.d.epilogue = E[e];
                gc.d.bias_type = bt ? KMUX_F32 : T[t].c;
                gc.alpha = 1, gc.beta = e & 1 ? 1 : 0;
                gc.amax = 1;
                char tag[96];
                snprintf(tag, sizeof tag, "%s epilogue %u bias %s", kmux_dtype_desc_of(T[t].a).name,
                         E[e], kmux_dtype_desc_of(gc.d.bias_type).name);
                emu_gemm_run(&gc, tag);
            }
}

/* a_scale, b_scale, d_scale and amax_d on fp8, f32 and the integer GEMM (the i8 -> i32 case with
 * d_scale / amax_d that the CUDA post kernel got wrong, issue 16). */
Test(gpu_emu_gemm, scales_and_amax) {
    static const trow T[] = {{KMUX_F8_E4M3, KMUX_F8_E4M3, KMUX_F16, KMUX_COMPUTE_F32},
                             {KMUX_F8_E5M2_FNUZ, KMUX_F8_E4M3_FNUZ, KMUX_F32, KMUX_COMPUTE_F32},
                             {KMUX_F32, KMUX_F32, KMUX_F32, KMUX_COMPUTE_F32},
                             {KMUX_I8, KMUX_I8, KMUX_I32, KMUX_COMPUTE_I32}};
    for (int t = 0; t < 4; t++)
        for (int v = 0; v < 3; v++) {
            emu_gemm_case gc = emu_gemm_case_make(T[t].a, T[t].b, T[t].c, T[t].ct, KMUX_ROW_MAJOR,
                                                  KMUX_TRANS, KMUX_NO_TRANS, 13, 11, 29, 1);
            gc.beta = v == 2 ? 1 : 0;
            if (v != 1) gc.a_scale = 0.5f, gc.b_scale = 2.0f;
            if (v != 0) gc.d_scale = 0.25f;
            gc.amax = v != 2 || T[t].a != KMUX_I8;
            char tag[96];
            snprintf(tag, sizeof tag, "%s scales variant %d", kmux_dtype_desc_of(T[t].a).name, v);
            emu_gemm_run(&gc, tag);
        }
}

/* Strided batches (A broadcast with stride 0, padded strides) with the grid capped at 2 in y
 * and z, so both loops of the kernel run (the same loops carry batch counts beyond 65535). */
Test(gpu_emu_gemm, batches_and_grid_loops) {
    static const trow T[] = {{KMUX_F32, KMUX_F32, KMUX_F32, KMUX_COMPUTE_F32},
                             {KMUX_BF16, KMUX_BF16, KMUX_BF16, KMUX_COMPUTE_F32},
                             {KMUX_I8, KMUX_I8, KMUX_I32, KMUX_COMPUTE_I32}};
    for (int t = 0; t < 3; t++)
        for (int v = 0; v < 2; v++) {
            emu_gemm_case gc = emu_gemm_case_make(
                T[t].a, T[t].b, T[t].c, T[t].ct, v ? KMUX_COL_MAJOR : KMUX_ROW_MAJOR, KMUX_NO_TRANS,
                v ? KMUX_TRANS : KMUX_NO_TRANS, 9, 100, 12, 1);
            gc.d.batch_count = 5;
            int64_t a = 9 * 13 + 13, b = 100 * 13 + 13, c = 9 * 101 + 101;
            gc.d.stride_a = v ? 0 : a + 3;
            gc.d.stride_b = b + 1;
            gc.d.stride_c = c + 2;
            gc.beta = 1;
            gc.max_yz = 2;
            gc.tiles = 1;
            emu_gemm_run(&gc, v ? "batch 5, A broadcast, grid 2" : "batch 5, grid 2");
        }
}

Test(gpu_emu_gemm, implementation_names) {
    kmux_matmul_desc d = KMUX_MATMUL_DESC_INIT;
    d.a_type = KMUX_F8_E4M3, d.b_type = KMUX_F8_E5M2, d.c_type = KMUX_BF16;
    char buf[128];
    cr_assert_eq(kmux_gpu_gemm_name(&d, 0, buf, sizeof buf), 0);
    cr_assert_str_eq(buf, "kmux-gpu:gemm:e4m3*e5m2->bf16:acc=f32:tile=64x64x16/4x4");
    cr_assert_eq(kmux_gpu_gemm_name(&d, 1, buf, sizeof buf), 0);
    cr_assert_str_eq(buf, "kmux-gpu:gemm:e4m3*e5m2->bf16:acc=f32:tile=32x32x8/2x2");
    cr_assert_eq(kmux_gpu_gemm_name(&d, KMUX_GPU_TILE_COUNT, buf, sizeof buf), -1);
    cr_assert_eq(kmux_gpu_gemm_name(&d, 0, buf, 8), -1);
    cr_assert_eq(kmux_gpu_tile_count(), KMUX_GPU_TILE_COUNT);
}

/* Element indices beyond 2^31: A's leading dimension and batch stride put elements past
 * 2^31 bytes into a sparse mapping (only the touched pages exist), i8 x i8 -> i32 against ref. */
Test(gpu_emu_gemm, element_indices_beyond_2_pow_31) {
    const int64_t lda = ((int64_t)1 << 31) + 3, stride_a = lda * 2 + 11;
    const size_t bytes = (size_t)(stride_a + lda * 2 + 1);
    int8_t *A = mmap(NULL, bytes, PROT_READ | PROT_WRITE,
                     MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (A == MAP_FAILED) cr_skip_test("no %zu-byte sparse mapping on this machine", bytes);
    kmux_matmul_desc d = KMUX_MATMUL_DESC_INIT;
    d.order = KMUX_COL_MAJOR;
    d.m = 1, d.n = 2, d.k = 3;
    d.a_type = d.b_type = KMUX_I8, d.c_type = KMUX_I32, d.compute_type = KMUX_COMPUTE_I32;
    d.lda = lda, d.ldb = 3, d.ldc = 1;
    d.batch_count = 2, d.stride_a = stride_a, d.stride_b = 6, d.stride_c = 2;
    for (int64_t b = 0; b < 2; b++)
        for (int64_t p = 0; p < 3; p++)
            A[b * stride_a + p * lda] = (int8_t)(5 * b + 3 * p - 4);
    int8_t B[12];
    for (int i = 0; i < 12; i++)
        B[i] = (int8_t)(i * 7 % 11 - 5);
    int32_t want[4] = {0}, got[4] = {0};
    int32_t alpha = 3, beta = 0;
    kmux_matmul_args a = KMUX_MATMUL_ARGS_INIT;
    a.alpha = &alpha, a.beta = &beta, a.A = A, a.B = B, a.C = want;
    kmux_plan *plan = NULL;
    cr_assert_eq(kmux_matmul_plan_create(emu_ref(), &d, NULL, &plan), KMUX_OK, "%s",
                 kmux_last_error());
    cr_assert_eq(kmux_matmul_execute(plan, emu_ref_stream(), &a), KMUX_OK, "%s", kmux_last_error());
    kmux_plan_destroy(plan);
    for (int si = 0; si < EMU_SETTING_COUNT; si++) {
        emu_apply(&EMU_SETTINGS[si]);
        memset(got, 0x55, sizeof got);
        a.C = got;
        emu_check_launch(kmux_gpu_gemm(NULL, &d, &a, si % KMUX_GPU_TILE_COUNT, 0), "2^31");
        cr_assert(memcmp(got, want, sizeof got) == 0, "got %d %d %d %d want %d %d %d %d", got[0],
                  got[1], got[2], got[3], want[0], want[1], want[2], want[3]);
    }
    cr_assert_neq(want[0], 0);
    munmap(A, bytes);
}
