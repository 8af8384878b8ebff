/*
 * test_validation.c - every invalid call returns a status and a message naming the argument and
 * its value, and never crashes (the core validates before any backend runs).
 */
#include <math.h>
#include <string.h>

#include "test_util.h"

static kmux_context *ctx;
static kmux_device *ref;
static kmux_stream *st;
static float buf[4096];
static const float one = 1.0f, zero = 0.0f;

static void setup(void) {
    ctx = tu_context();
    TU_OK(kmux_device_find(ctx, "ref", &ref));
    TU_OK(kmux_stream_create(ref, &st));
}
static void teardown(void) {
    kmux_stream_destroy(st);
    kmux_context_destroy(ctx);
}

#define EXPECT_MSG(needle)                                                                         \
    cr_expect(strstr(kmux_last_error(), needle) != NULL, "message \"%s\" lacks \"%s\"",            \
              kmux_last_error(), needle)

/* A valid 4x4x4 row-major f32 GEMM with one field changed by the test. */
typedef struct gemm_call {
    kmux_order order;
    kmux_transpose ta, tb;
    int64_t m, n, k, lda, ldb, ldc;
    kmux_dtype at, bt, ct;
    kmux_compute_type comp;
    const void *A, *B;
    void *C;
    const void *alpha, *beta;
} gemm_call;

static gemm_call valid_call(void) {
    gemm_call g = {KMUX_ROW_MAJOR,
                   KMUX_NO_TRANS,
                   KMUX_NO_TRANS,
                   4,
                   4,
                   4,
                   4,
                   4,
                   4,
                   KMUX_F32,
                   KMUX_F32,
                   KMUX_F32,
                   KMUX_COMPUTE_F32,
                   buf,
                   buf + 64,
                   buf + 128,
                   &one,
                   &zero};
    return g;
}

static kmux_status run(const gemm_call *g) {
    return kmux_gemm_ex(st, g->order, g->ta, g->tb, g->m, g->n, g->k, g->alpha, g->A, g->at, g->lda,
                        g->B, g->bt, g->ldb, g->beta, g->C, g->ct, g->ldc, g->comp);
}

TestSuite(validation, .init = setup, .fini = teardown);

Test(validation, valid_call_succeeds) {
    gemm_call g = valid_call();
    TU_OK(run(&g));
}

Test(validation, gemm_rejects_each_bad_argument) {
    struct {
        const char *what, *needle;
        gemm_call g;
    } cases[16];
    int n = 0;
#define CASE(desc, field_assign, needle_)                                                          \
    do {                                                                                           \
        gemm_call g_ = valid_call();                                                               \
        field_assign;                                                                              \
        cases[n].what = desc;                                                                      \
        cases[n].needle = needle_;                                                                 \
        cases[n].g = g_;                                                                           \
        n++;                                                                                       \
    } while (0)
    CASE("negative m", g_.m = -1, "m = -1");
    CASE("negative n", g_.n = -3, "n = -3");
    CASE("negative k", g_.k = -2, "k = -2");
    CASE("lda too small row-major", g_.lda = 3, "lda = 3");
    CASE("lda too small transposed col-major",
         (g_.order = KMUX_COL_MAJOR, g_.ta = KMUX_TRANS, g_.m = 8, g_.lda = 3, g_.ldc = 8),
         "lda = 3");
    CASE("ldb too small", g_.ldb = 2, "ldb = 2");
    CASE("ldc too small col-major", (g_.order = KMUX_COL_MAJOR, g_.m = 6, g_.lda = 6), "ldc = 4");
    CASE("unknown order", g_.order = (kmux_order)7, "order = 7");
    CASE("unknown transa", g_.ta = (kmux_transpose)0, "transa = 0");
    CASE("unknown dtype", g_.at = (kmux_dtype)42, "a_type = 42");
    CASE("mixed types", g_.bt = KMUX_F16, "a_type = f32, b_type = f16");
    CASE("f32 with i32 compute", g_.comp = KMUX_COMPUTE_I32, "compute_type = i32");
    CASE("NULL A", g_.A = NULL, "A is NULL");
    CASE("NULL C", g_.C = NULL, "C is NULL");
    CASE("NULL alpha", g_.alpha = NULL, "alpha is NULL");
    CASE("overflowing size",
         (g_.m = INT64_C(1) << 40, g_.k = INT64_C(1) << 40, g_.lda = INT64_C(1) << 40, g_.ldc = 4),
         "spans more elements");
#undef CASE
    for (int i = 0; i < n; i++) {
        kmux_status s = run(&cases[i].g);
        cr_expect_eq(s, KMUX_ERR_INVALID_ARGUMENT, "%s: got %s: %s", cases[i].what,
                     kmux_status_str(s), kmux_last_error());
        cr_expect(strstr(kmux_last_error(), cases[i].needle) != NULL,
                  "%s: message \"%s\" lacks \"%s\"", cases[i].what, kmux_last_error(),
                  cases[i].needle);
    }
    /* The buffers were never touched: every call was refused before any backend ran. */
    for (int i = 128; i < 144; i++)
        cr_expect_eq(buf[i], 0.0f);
}

Test(validation, null_stream) {
    TU_STATUS(KMUX_ERR_INVALID_ARGUMENT,
              kmux_gemm_ex(NULL, KMUX_ROW_MAJOR, KMUX_NO_TRANS, KMUX_NO_TRANS, 1, 1, 1, &one, buf,
                           KMUX_F32, 1, buf, KMUX_F32, 1, &zero, buf, KMUX_F32, 1,
                           KMUX_COMPUTE_F32));
    EXPECT_MSG("stream is NULL");
}

Test(validation, strided_batched_rejects_overlapping_c_and_negative_batch) {
    TU_STATUS(KMUX_ERR_INVALID_ARGUMENT,
              kmux_gemm_strided_batched_ex(st, KMUX_ROW_MAJOR, KMUX_NO_TRANS, KMUX_NO_TRANS, 2, 2,
                                           2, &one, buf, KMUX_F32, 2, 4, buf, KMUX_F32, 2, 4, &zero,
                                           buf + 100, KMUX_F32, 2, 0, 3, KMUX_COMPUTE_F32));
    EXPECT_MSG("stride_c = 0");
    TU_STATUS(KMUX_ERR_INVALID_ARGUMENT,
              kmux_gemm_strided_batched_ex(st, KMUX_ROW_MAJOR, KMUX_NO_TRANS, KMUX_NO_TRANS, 2, 2,
                                           2, &one, buf, KMUX_F32, 2, 4, buf, KMUX_F32, 2, 4, &zero,
                                           buf + 100, KMUX_F32, 2, 4, -1, KMUX_COMPUTE_F32));
    EXPECT_MSG("batch_count = -1");
}

Test(validation, degenerate_sizes_need_no_operands) {
    /* m == 0: nothing happens, even with every pointer NULL except alpha/beta */
    TU_OK(kmux_gemm_ex(st, KMUX_ROW_MAJOR, KMUX_NO_TRANS, KMUX_NO_TRANS, 0, 5, 5, &one, NULL,
                       KMUX_F32, 5, NULL, KMUX_F32, 5, &zero, NULL, KMUX_F32, 5, KMUX_COMPUTE_F32));
    /* k == 0: C = beta * C, A and B never read */
    float C[4] = {1, 2, NAN, 4};
    const float two = 2.0f;
    TU_OK(kmux_gemm_ex(st, KMUX_ROW_MAJOR, KMUX_NO_TRANS, KMUX_NO_TRANS, 2, 2, 0, &one, NULL,
                       KMUX_F32, 1, NULL, KMUX_F32, 2, &two, C, KMUX_F32, 2, KMUX_COMPUTE_F32));
    cr_expect_eq(C[0], 2.0f);
    cr_expect_eq(C[3], 8.0f);
    cr_expect(isnan(C[2]), "beta != 0 reads C, NaN stays");
    /* k == 0 and beta == 0: C is not read, so the NaN disappears */
    TU_OK(kmux_gemm_ex(st, KMUX_ROW_MAJOR, KMUX_NO_TRANS, KMUX_NO_TRANS, 2, 2, 0, &one, NULL,
                       KMUX_F32, 1, NULL, KMUX_F32, 2, &zero, C, KMUX_F32, 2, KMUX_COMPUTE_F32));
    for (int i = 0; i < 4; i++)
        cr_expect_eq(C[i], 0.0f, "C[%d] = %g", i, C[i]);
}

Test(validation, matmul_desc_and_epilogue) {
    kmux_matmul_desc d = KMUX_MATMUL_DESC_INIT;
    d.m = d.n = d.k = 4;
    d.lda = d.ldb = d.ldc = 4;
    kmux_plan *p = NULL;
    d.epilogue = KMUX_EPILOGUE_RELU | KMUX_EPILOGUE_GELU;
    TU_STATUS(KMUX_ERR_INVALID_ARGUMENT, kmux_matmul_plan_create(ref, &d, NULL, &p));
    EXPECT_MSG("exclusive");
    d.epilogue = 0x400; /* no such flag */
    TU_STATUS(KMUX_ERR_INVALID_ARGUMENT, kmux_matmul_plan_create(ref, &d, NULL, &p));
    EXPECT_MSG("epilogue = 0x400");
    d.epilogue = KMUX_EPILOGUE_BIAS;
    d.bias_type = KMUX_I8;
    TU_STATUS(KMUX_ERR_INVALID_ARGUMENT, kmux_matmul_plan_create(ref, &d, NULL, &p));
    EXPECT_MSG("bias_type = i8");
    d.bias_type = KMUX_F32;
    d.struct_size = 8;
    TU_STATUS(KMUX_ERR_INVALID_ARGUMENT, kmux_matmul_plan_create(ref, &d, NULL, &p));
    EXPECT_MSG("struct_size");
    d.struct_size = sizeof d;
    TU_OK(kmux_matmul_plan_create(ref, &d, NULL, &p));
    kmux_matmul_args a = KMUX_MATMUL_ARGS_INIT;
    a.alpha = &one, a.beta = &zero, a.A = buf, a.B = buf, a.C = buf + 64;
    TU_STATUS(KMUX_ERR_INVALID_ARGUMENT, kmux_matmul_execute(p, st, &a));
    EXPECT_MSG("bias is NULL");
    TU_STATUS(KMUX_ERR_INVALID_ARGUMENT, kmux_conv2d_execute(p, st, NULL));
    TU_OK(kmux_plan_destroy(p));
    TU_STATUS(KMUX_ERR_INVALID_ARGUMENT, kmux_matmul_plan_create(NULL, &d, NULL, &p));
    EXPECT_MSG("dev is NULL");
}

static kmux_conv2d_desc valid_conv(void) {
    kmux_conv2d_desc d = KMUX_CONV2D_DESC_INIT;
    d.n = 1, d.c = 4, d.h = 5, d.w = 5, d.k = 4, d.r = 3, d.s = 3;
    return d;
}

Test(validation, conv_rejects_each_bad_argument) {
    struct {
        const char *needle;
        kmux_conv2d_desc d;
    } cases[12];
    int n = 0;
#define CASE(assign, needle_)                                                                      \
    do {                                                                                           \
        kmux_conv2d_desc d_ = valid_conv();                                                        \
        assign;                                                                                    \
        cases[n].needle = needle_;                                                                 \
        cases[n++].d = d_;                                                                         \
    } while (0)
    CASE(d_.n = 0, "n = 0");
    CASE(d_.c = -4, "c = -4");
    CASE(d_.stride_h = 0, "stride_h = 0");
    CASE(d_.dilation_w = 0, "dilation_w = 0");
    CASE(d_.pad_left = -1, "pad_left = -1");
    CASE(d_.groups = 3, "groups = 3");
    CASE((d_.r = 7, d_.s = 7), "output would be empty");
    CASE(d_.direction = (kmux_conv_direction)9, "direction = 9");
    CASE(d_.layout = (kmux_layout)0, "layout = 0");
    CASE(d_.w_type = KMUX_F16, "must be equal");
    CASE((d_.x_type = d_.w_type = d_.y_type = KMUX_I8), "not a supported convolution");
    CASE((d_.n = INT64_C(1) << 40, d_.c = INT64_C(1) << 20, d_.k = 4), "overflow");
#undef CASE
    for (int i = 0; i < n; i++) {
        kmux_plan *p = NULL;
        kmux_status s = kmux_conv2d_plan_create(ref, &cases[i].d, NULL, &p);
        cr_expect_eq(s, KMUX_ERR_INVALID_ARGUMENT, "case %d: got %s: %s", i, kmux_status_str(s),
                     kmux_last_error());
        cr_expect(strstr(kmux_last_error(), cases[i].needle) != NULL,
                  "case %d: message \"%s\" lacks \"%s\"", i, kmux_last_error(), cases[i].needle);
    }
    int64_t P, Q;
    kmux_conv2d_desc d = valid_conv();
    d.pad_top = 1, d.pad_bottom = 0, d.stride_w = 2, d.dilation_h = 2;
    TU_OK(kmux_conv2d_output_dims(&d, &P, &Q));
    cr_expect_eq(P, 2); /* (5 + 1 + 0 - 5) / 1 + 1 */
    cr_expect_eq(Q, 2); /* (5 - 3) / 2 + 1 */
}

Test(validation, conv_execute_null_tensors) {
    kmux_conv2d_desc d = valid_conv();
    kmux_plan *p = NULL;
    TU_OK(kmux_conv2d_plan_create(ref, &d, NULL, &p));
    kmux_conv2d_args a = KMUX_CONV2D_ARGS_INIT;
    a.alpha = &one, a.beta = &zero, a.x = buf, a.w = buf;
    TU_STATUS(KMUX_ERR_INVALID_ARGUMENT, kmux_conv2d_execute(p, st, &a));
    EXPECT_MSG("y is NULL");
    kmux_matmul_args ma = KMUX_MATMUL_ARGS_INIT;
    TU_STATUS(KMUX_ERR_INVALID_ARGUMENT, kmux_matmul_execute(p, st, &ma));
    EXPECT_MSG("convolution plan");
    TU_OK(kmux_plan_destroy(p));
}

Test(validation, mixed_precision_arguments) {
    TU_STATUS(KMUX_ERR_INVALID_ARGUMENT, kmux_cast(st, -1, buf, KMUX_F32, buf + 8, KMUX_F16, NULL));
    EXPECT_MSG("n = -1");
    TU_STATUS(KMUX_ERR_INVALID_ARGUMENT, kmux_cast(st, 4, buf, KMUX_I8, buf + 8, KMUX_F16, NULL));
    EXPECT_MSG("src_type = i8");
    TU_STATUS(KMUX_ERR_INVALID_ARGUMENT, kmux_cast(st, 4, NULL, KMUX_F32, buf + 8, KMUX_F16, NULL));
    EXPECT_MSG("src is NULL");
    TU_STATUS(KMUX_ERR_INVALID_ARGUMENT, kmux_cast(st, 8, buf, KMUX_F32, buf + 4, KMUX_F16, NULL));
    EXPECT_MSG("overlap");
    TU_STATUS(KMUX_ERR_INVALID_ARGUMENT, kmux_amax(st, 4, buf, KMUX_I32, buf + 8));
    float scale = 1, found = 0;
    int32_t tracker = 0;
    TU_STATUS(KMUX_ERR_INVALID_ARGUMENT,
              kmux_loss_scale_update(st, &scale, &tracker, &found, 0.5, 0.5, 10));
    EXPECT_MSG("growth_factor = 0.5");
    TU_STATUS(KMUX_ERR_INVALID_ARGUMENT,
              kmux_loss_scale_update(st, &scale, &tracker, &found, 2.0, 1.5, 10));
    EXPECT_MSG("backoff_factor = 1.5");
    TU_STATUS(KMUX_ERR_INVALID_ARGUMENT,
              kmux_loss_scale_update(st, &scale, &tracker, &found, 2.0, 0.5, 0));
    EXPECT_MSG("growth_interval = 0");
    TU_STATUS(KMUX_ERR_INVALID_ARGUMENT, kmux_fp8_scale_update(st, buf, 4, KMUX_F16, 0.0f, &scale));
    EXPECT_MSG("fp8_type = f16");
    TU_STATUS(KMUX_ERR_INVALID_ARGUMENT,
              kmux_fp8_scale_update(st, buf, 0, KMUX_F8_E4M3, 0.0f, &scale));
    EXPECT_MSG("history_len = 0");
    void *tensors[1] = {buf};
    int64_t sizes[1] = {-5};
    kmux_dtype types[1] = {KMUX_F32};
    TU_STATUS(KMUX_ERR_INVALID_ARGUMENT,
              kmux_unscale_check_finite(st, 1, tensors, sizes, types, &scale, &found));
    EXPECT_MSG("sizes[0] = -5");
    types[0] = KMUX_I8;
    sizes[0] = 4;
    TU_STATUS(KMUX_ERR_INVALID_ARGUMENT,
              kmux_unscale_check_finite(st, 1, tensors, sizes, types, &scale, &found));
    EXPECT_MSG("types[0] = i8");
}

Test(validation, context_device_memory_stream_event) {
    TU_STATUS(KMUX_ERR_INVALID_ARGUMENT, kmux_context_create(NULL, NULL));
    kmux_context_options o = KMUX_CONTEXT_OPTIONS_INIT;
    o.num_threads = -3;
    kmux_context *c2 = NULL;
    TU_STATUS(KMUX_ERR_INVALID_ARGUMENT, kmux_context_create(&o, &c2));
    EXPECT_MSG("num_threads = -3");
    o = (kmux_context_options)KMUX_CONTEXT_OPTIONS_INIT;
    o.struct_size = 1;
    TU_STATUS(KMUX_ERR_INVALID_ARGUMENT, kmux_context_create(&o, &c2));
    kmux_device *d = NULL;
    TU_STATUS(KMUX_ERR_INVALID_ARGUMENT, kmux_device_get(ctx, 99, &d));
    EXPECT_MSG("i = 99");
    TU_STATUS(KMUX_ERR_NOT_FOUND, kmux_device_find(ctx, "tpu:0", &d));
    EXPECT_MSG("tpu:0");
    kmux_backend_info bi;
    TU_STATUS(KMUX_ERR_INVALID_ARGUMENT, kmux_backend_info_get(ctx, -1, &bi));
    TU_STATUS(KMUX_ERR_INVALID_ARGUMENT, kmux_malloc(ref, 16, NULL));
    TU_STATUS(KMUX_ERR_INVALID_ARGUMENT, kmux_memcpy(st, buf, buf + 8, 16, (kmux_memcpy_kind)17));
    EXPECT_MSG("kind = 17");
    TU_STATUS(KMUX_ERR_INVALID_ARGUMENT, kmux_memcpy(st, NULL, buf, 16, KMUX_MEMCPY_HOST_TO_HOST));
    TU_STATUS(KMUX_ERR_UNSUPPORTED, kmux_stream_wrap_native(ref, (void *)buf, &st));
    kmux_event *e1, *e2;
    TU_OK(kmux_event_create(ref, &e1));
    TU_OK(kmux_event_create(ref, &e2));
    float ms;
    TU_STATUS(KMUX_ERR_INVALID_ARGUMENT, kmux_event_elapsed_ms(e1, e2, &ms));
    EXPECT_MSG("never recorded");
    TU_OK(kmux_event_record(e1, st));
    TU_OK(kmux_event_record(e2, st));
    TU_OK(kmux_event_elapsed_ms(e1, e2, &ms));
    cr_expect_geq(ms, 0.0f);
    TU_OK(kmux_event_destroy(e1));
    TU_OK(kmux_event_destroy(e2));
    /* NULL destroys are no-ops */
    TU_OK(kmux_plan_destroy(NULL));
    TU_OK(kmux_stream_destroy(NULL));
    TU_OK(kmux_event_destroy(NULL));
    TU_OK(kmux_free(ref, NULL));
    cr_expect_str_eq(kmux_status_str((kmux_status)12345), "KMUX_STATUS_UNKNOWN");
}

/* A convolution whose output overlaps an input (y == x, y inside w; dx == dy) was run, and the
 * CPU backends then disagreed with ref (issue 50): refused on every device before any backend. */
Test(validation, conv_output_overlapping_an_input_is_refused) {
    kmux_context *c = tu_context();
    const char **ids = tu_device_ids(c);
    for (int i = 0; ids[i]; i++) {
        kmux_device *dev = tu_device(c, ids[i]);
        kmux_stream *sm = NULL;
        TU_OK(kmux_stream_create(dev, &sm));
        for (int dir = KMUX_CONV_FWD; dir <= KMUX_CONV_BWD_WEIGHTS; dir++) {
            kmux_conv2d_desc d = KMUX_CONV2D_DESC_INIT;
            d.direction = (kmux_conv_direction)dir;
            d.n = 1, d.c = 2, d.h = d.w = 4, d.k = 2, d.r = d.s = 3;
            d.pad_top = d.pad_bottom = d.pad_left = d.pad_right = 1;
            kmux_plan *p = NULL;
            if (kmux_conv2d_plan_create(dev, &d, NULL, &p) != KMUX_OK) continue;
            float io[128] = {0}, other[128] = {0}, f1 = 1, f0 = 0;
            kmux_conv2d_args a = KMUX_CONV2D_ARGS_INIT;
            a.alpha = &f1, a.beta = &f0;
            /* the output aliases the first input; the other input is separate */
            const char *out = dir == KMUX_CONV_FWD        ? "y = "
                              : dir == KMUX_CONV_BWD_DATA ? "x = "
                                                          : "w = ";
            a.x = io, a.w = other, a.y = io;
            if (dir == KMUX_CONV_BWD_WEIGHTS) a.x = other, a.w = io + 8, a.y = io;
            kmux_status rc = kmux_conv2d_execute(p, sm, &a);
            cr_expect_eq(rc, KMUX_ERR_INVALID_ARGUMENT, "%s dir %d: %s", ids[i], dir,
                         kmux_status_str(rc));
            cr_expect(strstr(kmux_last_error(), "overlaps") && strstr(kmux_last_error(), out),
                      "%s dir %d: %s", ids[i], dir, kmux_last_error());
            /* separate buffers still run */
            float y[128] = {0};
            a.x = io, a.w = other, a.y = y;
            TU_OK(kmux_conv2d_execute(p, sm, &a));
            TU_OK(kmux_plan_destroy(p));
        }
        TU_OK(kmux_stream_destroy(sm));
    }
    TU_OK(kmux_context_destroy(c));
}
