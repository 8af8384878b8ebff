/*
 * test_cuda_host.c - the CUDA plugin's pure host logic (backends/cuda/cuda_host_logic.c), run on
 * every machine: no GPU, no CUDA toolkit, no cudart. Each test pins one decision that a defect
 * of the plugin got wrong (see the test names): the fallback keyed by alignment class, the fp8
 * layout rules, the workspace cap after packing, the honest F32_FAST_BF16 name (the device guard,
 * which must not create a context on GPU 0, runs against the fake driver: test_cuda's
 * guard_leaves_the_callers_context in ctest cuda_fake_test_cuda), the post-kernel arguments of
 * an i8 -> i32 GEMM with d_scale/amax, the padded copy of an asymmetric convolution, and the
 * device's type rows; and where kmux's own GEMM/convolution kernels are offered and become the
 * default (cuda_impl_order.c).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <criterion/criterion.h>

#include "cuda_host_logic.h"
#include "cuda_impl_order.h"
#include "kmux_gpu_gemm_params.h"

/* ---- alignment ---------------------------------------------------------------------------- */

Test(cuda_host, ptr_align_is_largest_power_of_two) {
    cr_expect_eq(kmux_cuda_ptr_align(0), 256u);
    cr_expect_eq(kmux_cuda_ptr_align(0x10000), 256u);
    cr_expect_eq(kmux_cuda_ptr_align(0x10080), 128u);
    cr_expect_eq(kmux_cuda_ptr_align(0x10008), 8u);
    cr_expect_eq(kmux_cuda_ptr_align(0x10004), 4u);
    cr_expect_eq(kmux_cuda_ptr_align(0x10002), 2u);
    cr_expect_eq(kmux_cuda_ptr_align(0x10001), 1u);
}

Test(cuda_host, align_classes_round_trip) {
    const unsigned bytes[] = {256, 16, 8, 4, 2, 1};
    const int cls[] = {0, 0, 1, 2, 3, 4};
    for (int i = 0; i < 6; i++) {
        cr_expect_eq(kmux_cuda_align_class(bytes[i]), cls[i], "align %u", bytes[i]);
        cr_expect_leq(kmux_cuda_align_class_bytes(cls[i]), bytes[i]);
    }
    cr_expect_eq(kmux_cuda_align_class_bytes(0), 16u);
    cr_expect_eq(kmux_cuda_align_class_bytes(4), 1u);
}

Test(cuda_host, call_align_counts_only_operands_cublaslt_reads) {
    kmux_cuda_align_in in = {(const void *)0x1000,
                             (const void *)0x2004,
                             (const void *)0x3002,
                             (const void *)0x4001,
                             1,
                             1,
                             1,
                             1};
    cr_expect_eq(kmux_cuda_call_align(&in), 1u,
                 "an under-aligned bias counts when cuBLASLt adds it");
    in.use_bias = 0; /* the post kernel adds the bias */
    cr_expect_eq(kmux_cuda_call_align(&in), 2u);
    in.use_c = 0; /* C through the f32 temporary */
    cr_expect_eq(kmux_cuda_call_align(&in), 4u);
    in.use_b = 0; /* B packed into the workspace */
    cr_expect_eq(kmux_cuda_call_align(&in), 256u);
}

/* Defect: the first fallback found was cached per plan and reused for later, less aligned calls. */
Test(cuda_host, fallback_is_keyed_by_alignment_class) {
    const kmux_cuda_impl_key k[] = {{0, 16}, {0, 16}, {0, 8}, {0, 4}, {1, 16}, {1, 4}};
    const int n = (int)(sizeof k / sizeof k[0]);
    cr_expect_eq(kmux_cuda_pick_impl(k, n, 1, 0, 256), 1, "aligned call: the requested one");
    cr_expect_eq(kmux_cuda_pick_impl(k, n, 1, 0, 8), 2, "8-byte call: the 8-byte fallback");
    cr_expect_eq(kmux_cuda_pick_impl(k, n, 2, 0, 4), 3,
                 "a 4-byte call never runs the 8-byte fallback, even when it was requested");
    cr_expect_eq(kmux_cuda_pick_impl(k, n, 1, 0, 2), -1, "no candidate promises 2 bytes");
    cr_expect_eq(kmux_cuda_pick_impl(k, n, 3, 0, 16), 3, "a fallback also runs aligned calls");
    cr_expect_eq(kmux_cuda_pick_impl(k, n, 0, 1, 16), 4, "configuration 1 when the call needs it");
    cr_expect_eq(kmux_cuda_pick_impl(k, n, 0, 1, 8), 5);
    cr_expect_eq(kmux_cuda_pick_impl(k, n, 5, 1, 256), 5);
}

Test(cuda_host, fallback_classes_stop_at_the_element_size) {
    unsigned a[4];
    cr_expect_eq(kmux_cuda_fallback_aligns(1, a), 4);
    cr_expect(a[0] == 8 && a[1] == 4 && a[2] == 2 && a[3] == 1);
    cr_expect_eq(kmux_cuda_fallback_aligns(2, a), 3);
    cr_expect_eq(a[2], 2u);
    cr_expect_eq(kmux_cuda_fallback_aligns(4, a), 2);
    cr_expect(a[0] == 8 && a[1] == 4);
    cr_expect_eq(kmux_cuda_fallback_aligns(8, a), 1);
    cr_expect_eq(kmux_cuda_fallback_aligns(16, a), 0, "16-byte operands: the primary candidates");
}

/* ---- fp8 layouts -------------------------------------------------------------------------- */

static kmux_cuda_fp8_in tn(int64_t m, int64_t n, int64_t k) {
    kmux_cuda_fp8_in in = {1, 0, m, n, k, k, k, m * k, k * n, m * n, m, 1, 2, 0};
    return in;
}

Test(cuda_host, fp8_tn_aligned_runs_in_place) {
    kmux_cuda_fp8_in in = tn(64, 64, 64);
    kmux_cuda_fp8_layout l;
    kmux_cuda_fp8_layout_plan(&in, &l);
    cr_expect(!l.pack_a && !l.pack_b && !l.use_temp && !l.zero_a && !l.zero_b);
    cr_expect(l.k_p == 64 && l.n_p == 64 && l.lda_p == 64 && l.ldb_p == 64);
}

/* Defect: packing fixed the leading dimension but did not zero-pad K, so no kernel was found. */
Test(cuda_host, fp8_k_not_multiple_of_16_is_zero_padded) {
    kmux_cuda_fp8_in in = tn(64, 64, 40);
    kmux_cuda_fp8_layout l;
    kmux_cuda_fp8_layout_plan(&in, &l);
    cr_expect_eq(l.k_p, 48);
    cr_expect(l.pack_a && l.pack_b && l.zero_a && l.zero_b);
    cr_expect(l.lda_p == 48 && l.ldb_p == 48);
    cr_expect_eq(l.pack_a_bytes, (size_t)3072, "48 * 64 bytes, 256-rounded");
    cr_expect(!l.use_temp);
}

Test(cuda_host, fp8_n_not_multiple_of_16_pads_b_and_goes_through_the_temporary) {
    kmux_cuda_fp8_in in = tn(64, 40, 64);
    kmux_cuda_fp8_layout l;
    kmux_cuda_fp8_layout_plan(&in, &l);
    cr_expect_eq(l.n_p, 48);
    cr_expect(!l.pack_a, "A' is TN with a 16-multiple ld and an unpadded K");
    cr_expect(l.pack_b && l.zero_b && l.use_temp);
    cr_expect_eq(l.pack_b_bytes, (size_t)(64 * 48));
    cr_expect_eq(kmux_cuda_temp_bytes(64, l.n_p, 1), (size_t)(64 * 48 * 4));
}

/* Defect: batch strides that are not multiples of 16 never triggered packing. */
Test(cuda_host, fp8_batch_stride_not_multiple_of_16_packs) {
    kmux_cuda_fp8_in in = tn(64, 64, 64);
    in.batch = 3;
    in.stride_a = 64 * 64 + 8;
    kmux_cuda_fp8_layout l;
    kmux_cuda_fp8_layout_plan(&in, &l);
    cr_expect(l.pack_a && !l.pack_b && !l.zero_a);
    cr_expect_eq(l.pack_a_bytes, (size_t)(64 * 64 * 3));
    in.batch = 1; /* one matrix: the stride is never used */
    kmux_cuda_fp8_layout_plan(&in, &l);
    cr_expect(!l.pack_a);
}

Test(cuda_host, fp8_nn_and_c_rules) {
    kmux_cuda_fp8_in in = tn(64, 64, 64);
    in.a_trans = 0; /* NN: A' must be packed transposed */
    kmux_cuda_fp8_layout l;
    kmux_cuda_fp8_layout_plan(&in, &l);
    cr_expect(l.pack_a && !l.pack_b && !l.zero_a);
    in = tn(64, 64, 64);
    in.ldc = 68; /* bf16: 136 bytes, not a multiple of 16 */
    kmux_cuda_fp8_layout_plan(&in, &l);
    cr_expect(l.use_temp);
    in = tn(64, 64, 64);
    in.batch = 2;
    in.stride_c = 64 * 64 + 4; /* 8-byte batch stride of C */
    kmux_cuda_fp8_layout_plan(&in, &l);
    cr_expect(l.use_temp);
    in = tn(64, 64, 64);
    in.force_temp = 1;
    kmux_cuda_fp8_layout_plan(&in, &l);
    cr_expect(l.use_temp && !l.pack_a && !l.pack_b);
}

Test(cuda_host, temp_leading_dimension_is_16_bytes) {
    cr_expect_eq(kmux_cuda_temp_ld(1), 4);
    cr_expect_eq(kmux_cuda_temp_ld(4), 4);
    cr_expect_eq(kmux_cuda_temp_ld(5), 8);
    cr_expect_eq(kmux_cuda_temp_bytes(5, 3, 2), (size_t)256, "8 * 3 * 4 * 2 = 192, 256-rounded");
}

/* ---- workspace ---------------------------------------------------------------------------- */

/* Defect: the fallback search used the whole cap, not the cap left after packing. */
Test(cuda_host, algo_cap_is_what_packing_leaves) {
    size_t c = 1;
    cr_expect(kmux_cuda_algo_cap(1000, 1, 300, &c));
    cr_expect_eq(c, (size_t)700);
    cr_expect(!kmux_cuda_algo_cap(1000, 1, 1001, &c));
    cr_expect_eq(c, (size_t)0);
    cr_expect(kmux_cuda_algo_cap(1000, 1, 1000, &c));
    cr_expect_eq(c, (size_t)0);
    cr_expect(kmux_cuda_algo_cap(4 << 20, 0, 300, &c), "backend default: the cap is cuBLASLt's");
    cr_expect_eq(c, (size_t)(4 << 20));
}

/* ---- F32_FAST_BF16 ------------------------------------------------------------------------ */

/* Defect: reported as bf16x9 whenever the heuristic accepted the emulated compute type. */
Test(cuda_host, bf16x9_reported_only_when_known_to_run) {
    const char *tag = NULL;
    cr_expect_eq(kmux_cuda_bf16x9_effective(1, 1, 1, 1, &tag), KMUX_COMPUTE_F32_FAST_BF16);
    cr_expect_str_eq(tag, "32F_EMULATED_16BFX9");
    for (int mask = 0; mask < 15; mask++) { /* any of the four conditions missing */
        kmux_compute_type e = kmux_cuda_bf16x9_effective(mask & 1, (mask >> 1) & 1, (mask >> 2) & 1,
                                                         (mask >> 3) & 1, &tag);
        cr_expect_eq(e, KMUX_COMPUTE_F32, "mask %d", mask);
        cr_expect_str_eq(tag, "32F");
    }
}

/* Defect: the emulated compute type was requested on every SM, although bf16x9 is Blackwell's. */
Test(cuda_host, bf16x9_asked_only_on_blackwell) {
    const int no[] = {80, 86, 89, 90, 99}, yes[] = {100, 103, 120};
    for (size_t i = 0; i < sizeof no / sizeof no[0]; i++)
        cr_expect_eq(kmux_cuda_bf16x9_offered(no[i]), 0, "sm_%d has no bf16x9 emulation", no[i]);
    for (size_t i = 0; i < sizeof yes / sizeof yes[0]; i++)
        cr_expect_eq(kmux_cuda_bf16x9_offered(yes[i]), 1, "sm_%d has bf16x9 emulation", yes[i]);
}

/* ---- capabilities ------------------------------------------------------------------------- */

Test(cuda_host, type_rows_of_an_nvidia_device) {
    cr_expect(kmux_cuda_matmul_row_runs(KMUX_F32, KMUX_F32, KMUX_F32, KMUX_COMPUTE_F32, 80));
    cr_expect(kmux_cuda_matmul_row_runs(KMUX_I8, KMUX_I8, KMUX_I32, KMUX_COMPUTE_I32, 80));
    cr_expect(
        !kmux_cuda_matmul_row_runs(KMUX_F8_E4M3, KMUX_F8_E4M3, KMUX_BF16, KMUX_COMPUTE_F32, 86),
        "fp8 needs sm_89");
    cr_expect(
        kmux_cuda_matmul_row_runs(KMUX_F8_E4M3, KMUX_F8_E5M2, KMUX_BF16, KMUX_COMPUTE_F32, 90));
    cr_expect(
        !kmux_cuda_matmul_row_runs(KMUX_F8_E5M2, KMUX_F8_E5M2, KMUX_F32, KMUX_COMPUTE_F32, 90),
        "no e5m2 x e5m2 kernel");
    cr_expect(!kmux_cuda_matmul_row_runs(KMUX_F8_E4M3_FNUZ, KMUX_F8_E4M3_FNUZ, KMUX_F32,
                                         KMUX_COMPUTE_F32, 90),
              "FNUZ is AMD's");
    cr_expect(kmux_cuda_conv_row_runs(KMUX_BF16, KMUX_COMPUTE_F32));
    cr_expect(!kmux_cuda_conv_row_runs(KMUX_F8_E4M3, KMUX_COMPUTE_F32));
}

/* ---- post-kernel arguments ---------------------------------------------------------------- */

static kmux_matmul_desc i8_desc(void) {
    kmux_matmul_desc d = KMUX_MATMUL_DESC_INIT;
    d.order = KMUX_COL_MAJOR;
    d.m = 5, d.n = 7, d.k = 9;
    d.a_type = d.b_type = KMUX_I8;
    d.c_type = KMUX_I32;
    d.lda = 5, d.ldb = 9, d.ldc = 5;
    d.compute_type = KMUX_COMPUTE_I32;
    return d;
}

/* Defect: an i8 x i8 -> i32 GEMM with d_scale or amax_d read D back with beta = 1 but an integer
 * beta left 0, so C and amax came back 0. */
Test(cuda_host, i8_post_after_gemm_reads_d_back_with_integer_beta_one) {
    kmux_matmul_desc d = i8_desc();
    int32_t alpha = 1, beta = 0;
    float scale = 0.5f, amax = 0.0f;
    int32_t C[35] = {0};
    kmux_matmul_args args = KMUX_MATMUL_ARGS_INIT;
    args.alpha = &alpha, args.beta = &beta, args.C = C, args.d_scale = &scale;
    args.amax_d = &amax;
    cr_assert(kmux_cuda_needs_post(0, 0, &args), "d_scale/amax_d need the post kernel");
    kmux_cuda_post_args a;
    kmux_cuda_post_after_gemm_args(&d, &args, 0, NULL, 0, 0, 0, &a);
    cr_expect_eq(a.read_c, 1);
    cr_expect_eq(a.beta, 1.0, "i32 D is read back with beta = 1");
    cr_expect(a.beta == 1.0);
    cr_expect(a.d_scale == &scale && a.amax == &amax && a.acc == NULL && a.bias == NULL);
    cr_expect(a.rows == 5 && a.cols == 7 && a.d_type == KMUX_I32 && a.ldd == 5);
    args.d_scale = NULL, args.amax_d = NULL;
    cr_expect(!kmux_cuda_needs_post(0, 0, &args), "nothing to do after cuBLASLt");
}

Test(cuda_host, post_after_gemm_through_the_temporary_adds_beta_c) {
    kmux_matmul_desc d = KMUX_MATMUL_DESC_INIT; /* row-major: D' = C^T */
    d.m = 3, d.n = 6, d.k = 4;
    d.c_type = KMUX_BF16;
    d.ldc = 6;
    d.epilogue = KMUX_EPILOGUE_BIAS | KMUX_EPILOGUE_GELU;
    float alpha = 1.0f, beta = 0.25f, bias[3] = {0};
    uint16_t C[18] = {0};
    float temp[64] = {0};
    kmux_matmul_args args = KMUX_MATMUL_ARGS_INIT;
    args.alpha = &alpha, args.beta = &beta, args.C = C, args.bias = bias;
    kmux_cuda_post_args a;
    kmux_cuda_post_after_gemm_args(&d, &args, 1, temp, 8, 8 * 3, 1, &a);
    cr_expect(a.acc == temp && a.ld_acc == 8 && a.stride_acc == 24);
    cr_expect(a.read_c == 1 && a.beta == 0.25);
    cr_expect(a.rows == 6 && a.cols == 3, "cuBLASLt's view of a row-major C");
    cr_expect(a.bias == bias && a.bias_per_row == 1 && a.act == KMUX_CUDA_ACT_GELU);
    beta = 0.0f;
    kmux_cuda_post_after_gemm_args(&d, &args, 1, temp, 8, 24, 0, &a);
    cr_expect(a.read_c == 0 && a.bias == NULL && a.act == KMUX_CUDA_ACT_NONE);
}

Test(cuda_host, degenerate_args_use_the_compute_types_scalar) {
    kmux_matmul_desc d = i8_desc();
    d.k = 0;
    int32_t beta = 3;
    int32_t C[35] = {0};
    kmux_matmul_args args = KMUX_MATMUL_ARGS_INIT;
    args.beta = &beta, args.C = C;
    kmux_cuda_post_args a;
    kmux_cuda_post_degenerate_args(&d, &args, &a);
    cr_expect(a.read_c == 1 && a.beta == 3.0 && a.acc == NULL);
    beta = 0;
    kmux_cuda_post_degenerate_args(&d, &args, &a);
    cr_expect(a.read_c == 0);
    d = i8_desc();
    d.a_type = d.b_type = d.c_type = KMUX_F64;
    d.compute_type = KMUX_COMPUTE_F64;
    d.epilogue = KMUX_EPILOGUE_RELU;
    double dbeta = -2.5;
    args.beta = &dbeta;
    kmux_cuda_post_degenerate_args(&d, &args, &a);
    cr_expect(a.read_c == 1 && a.beta == -2.5 && a.act == KMUX_CUDA_ACT_RELU);
    cr_expect(a.bias_per_row == 0 && a.rows == 5 && a.cols == 7, "column-major: as stored");
}

/* ---- asymmetric convolution padding ------------------------------------------------------- */

/* The interior copy as cudaMemcpy3D performs it, on the host. */
static void copy3d_host(const kmux_cuda_conv_pad *p, const unsigned char *src, unsigned char *dst) {
    for (int64_t z = 0; z < p->depth; z++)
        for (int64_t y = 0; y < p->height; y++)
            memcpy(dst + p->dst_offset + (size_t)(z * p->dst_rows + y) * p->dst_pitch,
                   src + (size_t)(z * p->height + y) * p->src_pitch, p->width_bytes);
}

static void check_padding(kmux_layout layout) {
    kmux_conv2d_desc d = KMUX_CONV2D_DESC_INIT;
    d.layout = layout;
    d.n = 2, d.c = 3, d.h = 5, d.w = 4;
    d.pad_top = 1, d.pad_bottom = 2, d.pad_left = 0, d.pad_right = 3;
    kmux_cuda_conv_pad p;
    kmux_cuda_conv_pad_plan(&d, sizeof(float), &p);
    cr_assert(p.needed);
    cr_assert(p.hp == 8 && p.wp == 7 && p.elements == 2 * 3 * 8 * 7);
    cr_assert_geq(p.bytes, (size_t)p.elements * sizeof(float));
    float *x = malloc(sizeof(float) * 2 * 3 * 5 * 4),
          *xp = calloc((size_t)p.elements, sizeof(float));
    cr_assert(x && xp);
    for (int i = 0; i < 2 * 3 * 5 * 4; i++)
        x[i] = (float)(i + 1);
    copy3d_host(&p, (const unsigned char *)x, (unsigned char *)xp);
    for (int64_t n = 0; n < 2; n++)
        for (int64_t c = 0; c < 3; c++)
            for (int64_t y = 0; y < 8; y++)
                for (int64_t xx = 0; xx < 7; xx++) {
                    int64_t iy = y - 1, ix = xx; /* pad_top 1, pad_left 0 */
                    float want = 0.0f;
                    if (iy >= 0 && iy < 5 && ix < 4)
                        want = layout == KMUX_NHWC ? x[((n * 5 + iy) * 4 + ix) * 3 + c]
                                                   : x[((n * 3 + c) * 5 + iy) * 4 + ix];
                    float got = layout == KMUX_NHWC ? xp[((n * 8 + y) * 7 + xx) * 3 + c]
                                                    : xp[((n * 3 + c) * 8 + y) * 7 + xx];
                    cr_expect(got == want, "n%lld c%lld y%lld x%lld: got %g want %g", (long long)n,
                              (long long)c, (long long)y, (long long)xx, got, want);
                }
    free(x);
    free(xp);
    d.pad_bottom = 1, d.pad_right = 0;
    kmux_cuda_conv_pad_plan(&d, sizeof(float), &p);
    cr_expect(!p.needed, "symmetric padding: cuDNN pads itself");
}

Test(cuda_host, asymmetric_padding_copy_nchw) {
    check_padding(KMUX_NCHW);
}

Test(cuda_host, asymmetric_padding_copy_nhwc) {
    check_padding(KMUX_NHWC);
}

/* ---- kmux's own kernels beside cuBLASLt and cuDNN (cuda_impl_order.c) --------------------- */

/* Every row of the GEMM type table runs on the own kernel (FNUZ fp8 on NVIDIA included, which
 * cuBLASLt refuses), and at least every row cuBLASLt refuses on an sm_90 device does. */
Test(cuda_host, own_gemm_covers_every_type_row) {
    int n = 0;
    cr_assert_eq(kmux_matmul_type_combination_count(&n), KMUX_OK);
    cr_assert(n > 10, "the matmul table has %d rows", n);
    int refused_by_lt = 0;
    for (int i = 0; i < n; i++) {
        kmux_type_combination row = {.struct_size = sizeof row};
        cr_assert_eq(kmux_matmul_type_combination_get(i, &row), KMUX_OK);
        kmux_matmul_desc d = KMUX_MATMUL_DESC_INIT;
        d.a_type = row.a_type, d.b_type = row.b_type, d.c_type = row.c_type;
        d.compute_type = row.compute_type;
        cr_expect(kmux_cuda_own_gemm_runs(&d), "row %d (%d x %d -> %d) not on the own kernel", i,
                  (int)d.a_type, (int)d.b_type, (int)d.c_type);
        refused_by_lt +=
            !kmux_cuda_matmul_row_runs(d.a_type, d.b_type, d.c_type, d.compute_type, 90);
    }
    cr_expect(refused_by_lt >= 12, "FNUZ rows and e5m2 x e5m2 are cuBLASLt's refusals (%d)",
              refused_by_lt);
    kmux_matmul_desc mixed = KMUX_MATMUL_DESC_INIT;
    mixed.a_type = KMUX_F8_E4M3, mixed.b_type = KMUX_F8_E4M3_FNUZ;
    cr_expect(!kmux_cuda_own_gemm_runs(&mixed), "OCP x FNUZ is no row of the table");
    mixed.a_type = KMUX_F16, mixed.b_type = KMUX_BF16;
    cr_expect(!kmux_cuda_own_gemm_runs(&mixed));
}

Test(cuda_host, own_conv_runs_one_dtype_of_four) {
    kmux_conv2d_desc d = KMUX_CONV2D_DESC_INIT;
    const kmux_dtype ok[] = {KMUX_F64, KMUX_F32, KMUX_F16, KMUX_BF16};
    for (int i = 0; i < 4; i++) {
        d.x_type = d.w_type = d.y_type = ok[i];
        cr_expect(kmux_cuda_own_conv_runs(&d));
    }
    d.y_type = KMUX_F32;
    d.x_type = d.w_type = KMUX_F16;
    cr_expect(!kmux_cuda_own_conv_runs(&d), "mixed conv types");
    d.x_type = d.w_type = d.y_type = KMUX_F8_E4M3;
    cr_expect(!kmux_cuda_own_conv_runs(&d));
}

/* The default (index 0) is the library's where it runs the problem as given, the own kernel's
 * where the library refuses it or needs a workaround. */
Test(cuda_host, own_kernel_is_the_default_where_the_library_refuses) {
    cr_expect_eq(kmux_cuda_order_of(5, 1, 1), KMUX_CUDA_ORDER_LIB_FIRST);
    cr_expect_eq(kmux_cuda_order_of(5, 0, 1), KMUX_CUDA_ORDER_OWN_FIRST,
                 "asymmetric padding: cuDNN only through the padded copy");
    cr_expect_eq(kmux_cuda_order_of(0, 1, 1), KMUX_CUDA_ORDER_OWN_ONLY,
                 "no cuBLASLt candidate (FNUZ, e5m2 x e5m2, a cap)");
    cr_expect_eq(kmux_cuda_order_of(3, 1, 0), KMUX_CUDA_ORDER_LIB_ONLY);
    cr_expect_eq(kmux_cuda_order_of(0, 0, 0), KMUX_CUDA_ORDER_NONE);
}

Test(cuda_host, own_tiles_start_with_the_preferred_one) {
    int t[8];
    cr_assert_eq(kmux_cuda_own_tiles(1, 2, t), 2);
    cr_expect(t[0] == 1 && t[1] == 0);
    cr_assert_eq(kmux_cuda_own_tiles(0, 3, t), 3);
    cr_expect(t[0] == 0 && t[1] == 1 && t[2] == 2);
    cr_assert_eq(kmux_cuda_own_tiles(7, 2, t), 2, "an unknown preference falls back to tile 0");
    cr_expect(t[0] == 0 && t[1] == 1);
    cr_expect_eq(kmux_cuda_own_tiles(0, 0, t), 0);
}

/* A call no cuBLASLt implementation serves (pick_impl -1: alignment, a missing configuration)
 * runs the own kernel instead of failing; an own implementation asked for runs as asked. */
Test(cuda_host, a_call_cublaslt_cannot_serve_runs_the_own_kernel) {
    const kmux_cuda_impl_key keys[5] = {
        {0, 16}, {0, 4}, {1, 16}, {KMUX_CUDA_CFG_OWN, 1}, {KMUX_CUDA_CFG_OWN, 1}};
    cr_expect_eq(kmux_cuda_run_choice(keys, 5, 0, 1), 1, "cuBLASLt's alignment fallback");
    cr_expect_eq(kmux_cuda_run_choice(keys, 5, 0, -1), 3, "no cuBLASLt fallback: own kernel");
    cr_expect_eq(kmux_cuda_run_choice(keys, 5, 4, -1), 4, "the own tile asked for");
    cr_expect_eq(kmux_cuda_run_choice(keys, 3, 0, -1), -1, "no own kernel: refused");
    /* kmux_cuda_pick_impl never hands out an own implementation */
    cr_expect_eq(kmux_cuda_pick_impl(keys, 5, 3, 0, 256), 0);
}

Test(cuda_host, own_kernel_reports_what_it_accumulates_in) {
    cr_expect_eq(kmux_gpu_own_effective_compute(KMUX_COMPUTE_F64), KMUX_COMPUTE_F64);
    cr_expect_eq(kmux_gpu_own_effective_compute(KMUX_COMPUTE_I32), KMUX_COMPUTE_I32);
    cr_expect_eq(kmux_gpu_own_effective_compute(KMUX_COMPUTE_F32_FAST_TF32), KMUX_COMPUTE_F32);
    cr_expect_eq(kmux_gpu_own_effective_compute(KMUX_COMPUTE_F16), KMUX_COMPUTE_F32);
}

/* The implicit GEMM's m x n decides the tile: FWD N*P*Q x K/g, BWD_DATA N*H*W x C/g,
 * BWD_WEIGHTS K/g x C/g*R*S; asymmetric padding enters P and Q. */
Test(cuda_host, conv_gemm_sizes_of_each_direction) {
    kmux_conv2d_desc d = KMUX_CONV2D_DESC_INIT;
    d.n = 2, d.c = 6, d.h = 9, d.w = 8, d.k = 4, d.r = 3, d.s = 3, d.groups = 2;
    d.pad_top = 0, d.pad_bottom = 2, d.pad_left = 1, d.pad_right = 0, d.stride_h = 2;
    d.x_type = d.w_type = d.y_type = KMUX_F32;
    int64_t m, n;
    d.direction = KMUX_CONV_FWD;
    kmux_cuda_conv_gemm_mn(&d, &m, &n);
    /* P = (9 + 2 - 3) / 2 + 1 = 5, Q = (8 + 1 - 3) / 1 + 1 = 7 */
    cr_expect(m == 2 * 5 * 7 && n == 2, "fwd m %lld n %lld", (long long)m, (long long)n);
    d.direction = KMUX_CONV_BWD_DATA;
    kmux_cuda_conv_gemm_mn(&d, &m, &n);
    cr_expect(m == 2 * 9 * 8 && n == 3, "bwd_data m %lld n %lld", (long long)m, (long long)n);
    d.direction = KMUX_CONV_BWD_WEIGHTS;
    kmux_cuda_conv_gemm_mn(&d, &m, &n);
    cr_expect(m == 2 && n == 3 * 9, "bwd_weights m %lld n %lld", (long long)m, (long long)n);
}
