/*
 * kmux_gpu_impls.c - every implementation of a plan on the GPU against ref (kmux_gpu_checks
 * impls_gemm and impls_conv): cuBLASLt's and cuDNN's candidates and kmux's own kernels
 * ("kmux-gpu:gemm:...", "kmux-gpu:conv2d:...", once per tile), walked with kmux_plan_next_impl.
 *
 *   impls_gemm  every row of the GEMM type table, twice: row-major N x T with bias + ReLU, and
 *               column-major T x N, 3 strided batches, padded leading dimensions, beta = 1;
 *   impls_conv  FWD, BWD_DATA, BWD_WEIGHTS x NCHW, NHWC x asymmetric padding, stride and
 *               dilation, groups = 2, depthwise x f64, f32, f16, bf16.
 * Small integer inputs make every sum exact, so each implementation must equal ref (-0 == +0).
 * One table line per implementation; a verdict per plan, which also requires at least one own
 * kernel in every plan and the own kernel as the default (implementation 0) where the library
 * refuses the problem (FNUZ fp8, e5m2 x e5m2). Asymmetric convolution padding is not a refusal:
 * cuDNN runs it through a zero-padded copy ("+pad"), by default, before the own kernel.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "gpu_checks.h"

static uint64_t seed = 0x9e3779b97f4a7c15ull;
static float small_int(int range) { /* -range..range */
    seed = seed * 6364136223846793005ull + 1442695040888963407ull;
    return (float)((int)((seed >> 33) % (uint64_t)(2 * range + 1)) - range);
}

/* n elements from src_type to dst_type (host buffers), by ref's kmux_cast. */
static kmux_status ref_cast(const void *src, kmux_dtype st, void *dst, kmux_dtype dt, int64_t n) {
    const size_t sb = kmux_dtype_size(st) * (size_t)n, db = kmux_dtype_size(dt) * (size_t)n;
    buf bs = {0}, bd = {0};
    void *ps = NULL, *pd = NULL;
    kmux_status s = up(ref, rs, src, sb, 0, &bs, &ps);
    if (s == KMUX_OK) s = up(ref, rs, NULL, db, 0, &bd, &pd);
    if (s == KMUX_OK) s = kmux_cast(rs, n, ps, st, pd, dt, NULL);
    if (s == KMUX_OK) s = down(rs, dst, pd, db);
    drop(&bs), drop(&bd);
    return s;
}

/* Host f32 values (small integers) as dtype t. */
static kmux_status encode(kmux_dtype t, const float *src, int64_t n, void *dst) {
    if (t == KMUX_I8 || t == KMUX_I32) {
        for (int64_t i = 0; i < n; i++)
            if (t == KMUX_I8)
                ((int8_t *)dst)[i] = (int8_t)src[i];
            else
                ((int32_t *)dst)[i] = (int32_t)src[i];
        return KMUX_OK;
    }
    if (t == KMUX_F32) return memcpy(dst, src, sizeof(float) * (size_t)n), KMUX_OK;
    return ref_cast(src, KMUX_F32, dst, t, n);
}

/* Elements of dtype t as doubles. */
static kmux_status decode(kmux_dtype t, const void *src, int64_t n, double *out) {
    if (t == KMUX_I32 || t == KMUX_F64 || t == KMUX_F32) {
        for (int64_t i = 0; i < n; i++)
            out[i] = t == KMUX_I32   ? ((const int32_t *)src)[i]
                     : t == KMUX_F64 ? ((const double *)src)[i]
                                     : ((const float *)src)[i];
        return KMUX_OK;
    }
    float *f = malloc(sizeof(float) * (size_t)n);
    if (!f) return KMUX_ERR_OUT_OF_MEMORY;
    kmux_status s = ref_cast(src, t, f, KMUX_F32, n);
    for (int64_t i = 0; s == KMUX_OK && i < n; i++)
        out[i] = f[i];
    free(f);
    return s;
}

/* A host scalar of the compute type's scalar type. */
typedef union scalar {
    double f64;
    float f32;
    int32_t i32;
} scalar;
static scalar scalar_of(kmux_compute_type ct, double v) {
    scalar s;
    memset(&s, 0, sizeof s);
    if (ct == KMUX_COMPUTE_F64)
        s.f64 = v;
    else if (ct == KMUX_COMPUTE_I32)
        s.i32 = (int32_t)v;
    else
        s.f32 = (float)v;
    return s;
}

/* Up to four host tensors of one problem (encoded) and the index of the output. */
typedef struct tensors {
    int count, out;
    kmux_dtype type[4];
    int64_t elems[4];
    void *host[4];
} tensors;

static void tensors_free(tensors *t) {
    for (int i = 0; i < t->count; i++)
        free(t->host[i]);
}

static kmux_status tensor_add(tensors *t, kmux_dtype type, int64_t elems, int range) {
    int i = t->count++;
    t->type[i] = type, t->elems[i] = elems;
    t->host[i] = malloc(kmux_dtype_size(type) * (size_t)elems);
    float *f = malloc(sizeof(float) * (size_t)elems);
    if (!t->host[i] || !f) return free(f), KMUX_ERR_OUT_OF_MEMORY;
    for (int64_t e = 0; e < elems; e++)
        f[e] = small_int(range);
    kmux_status s = encode(type, f, elems, t->host[i]);
    free(f);
    return s;
}

/* Runs the plan's current implementation on dev with the tensors (uploaded afresh) and returns
 * the output decoded into out. is_conv: t = x, w, y; else A, B, C, bias. */
static kmux_status run_once(kmux_device *dev, kmux_stream *s, kmux_plan *plan, const tensors *t,
                            int is_conv, kmux_compute_type ct, double alpha, double beta,
                            double *out) {
    buf b[4];
    void *p[4] = {NULL, NULL, NULL, NULL};
    memset(b, 0, sizeof b);
    kmux_status st = KMUX_OK;
    for (int i = 0; i < t->count && st == KMUX_OK; i++)
        st = up(dev, s, t->host[i], kmux_dtype_size(t->type[i]) * (size_t)t->elems[i], 0, &b[i],
                &p[i]);
    scalar sa = scalar_of(ct, alpha), sb = scalar_of(ct, beta);
    if (st == KMUX_OK && is_conv) {
        kmux_conv2d_args a = KMUX_CONV2D_ARGS_INIT;
        a.alpha = &sa, a.beta = &sb, a.x = p[0], a.w = p[1], a.y = p[2];
        st = kmux_conv2d_execute(plan, s, &a);
    } else if (st == KMUX_OK) {
        kmux_matmul_args a = KMUX_MATMUL_ARGS_INIT;
        a.alpha = &sa, a.beta = &sb, a.A = p[0], a.B = p[1], a.C = p[2];
        a.bias = t->count > 3 ? p[3] : NULL;
        st = kmux_matmul_execute(plan, s, &a);
    }
    const int o = t->out;
    const size_t ob = kmux_dtype_size(t->type[o]) * (size_t)t->elems[o];
    void *host = st == KMUX_OK ? malloc(ob) : NULL;
    if (st == KMUX_OK && !host) st = KMUX_ERR_OUT_OF_MEMORY;
    if (st == KMUX_OK) st = down(s, host, p[o], ob);
    if (st == KMUX_OK) st = decode(t->type[o], host, t->elems[o], out);
    free(host);
    for (int i = 0; i < t->count; i++)
        drop(&b[i]);
    return st;
}

/* Walks every implementation of the GPU plan (created by the caller) against ref's result.
 * lib_refuses: the own kernel must be implementation 0. */
static void walk(const char *label, kmux_plan *gplan, kmux_plan *rplan, const tensors *t,
                 int is_conv, kmux_compute_type ct, double alpha, double beta, int lib_refuses) {
    const int64_t n = t->elems[t->out];
    double *want = malloc(sizeof(double) * (size_t)n), *got = malloc(sizeof(double) * (size_t)n);
    if (!want || !got || run_once(ref, rs, rplan, t, is_conv, ct, alpha, beta, want) != KMUX_OK) {
        verdict(label, 0, "the reference run failed (%s)", kmux_last_error());
        free(want), free(got);
        return;
    }
    int impls = 0, own = 0, bad_impls = 0, own_first = 0;
    do {
        kmux_plan_info info;
        if (kmux_plan_info_get(gplan, &info) != KMUX_OK) break;
        const int is_own = strncmp(info.impl, "kmux-gpu:", 9) == 0;
        if (impls == 0) own_first = is_own;
        own += is_own;
        kmux_status s = run_once(gpu, gs, gplan, t, is_conv, ct, alpha, beta, got);
        int64_t diff = 0;
        for (int64_t e = 0; s == KMUX_OK && e < n; e++)
            diff += got[e] != want[e];
        printf("  %-44s #%-2d %-64s %s", label, impls, info.impl,
               s != KMUX_OK ? "FAILED"
               : diff       ? "WRONG"
                            : "ok");
        if (s != KMUX_OK)
            printf(" (%s: %s)\n", kmux_status_str(s), kmux_last_error());
        else
            printf(" (%lld of %lld differ from ref)\n", (long long)diff, (long long)n);
        bad_impls += s != KMUX_OK || diff != 0;
        impls++;
    } while (kmux_plan_next_impl(gplan) == KMUX_OK);
    const int ok = bad_impls == 0 && own > 0 && (!lib_refuses || own_first);
    verdict(
        label, ok, "%d implementations (%d kmux-gpu, default %s%s), %d differ from ref or failed",
        impls, own, own_first ? "kmux-gpu" : "the library's",
        lib_refuses && !own_first ? ", want kmux-gpu where the library refuses" : "", bad_impls);
    free(want), free(got);
}

/* After the plans were made on ref (rst) and the GPU (gst): the walk, or why not. */
static void compare(const char *label, kmux_status rst, kmux_status gst, kmux_plan *rp,
                    kmux_plan *gp, const tensors *t, int is_conv, kmux_compute_type ct, double beta,
                    int lib_refuses) {
    if (rst != KMUX_OK)
        printf("SKIP %s: ref refuses it (%s)\n", label, kmux_last_error());
    else if (gst != KMUX_OK)
        verdict(label, 0, "no plan on the GPU: %s", kmux_last_error());
    else
        walk(label, gp, rp, t, is_conv, ct, 1.0, beta, lib_refuses);
}

/* ---- GEMM ------------------------------------------------------------------------------- */

static int gemm_case(const kmux_type_combination *row, int variant) {
    kmux_matmul_desc d = KMUX_MATMUL_DESC_INIT;
    d.a_type = row->a_type, d.b_type = row->b_type, d.c_type = row->c_type;
    d.compute_type = row->compute_type;
    const int64_t m = 37, n = 29, k = 45;
    d.m = m, d.n = n, d.k = k;
    const int ints = row->compute_type == KMUX_COMPUTE_I32;
    if (variant == 0) { /* row-major, A N, B T (stored n x k), bias + ReLU */
        d.order = KMUX_ROW_MAJOR, d.transa = KMUX_NO_TRANS, d.transb = KMUX_TRANS;
        d.lda = k, d.ldb = k, d.ldc = n;
        if (!ints) {
            d.epilogue = KMUX_EPILOGUE_BIAS | KMUX_EPILOGUE_RELU;
            d.bias_type = row->c_type;
        }
    } else { /* column-major, A T (stored k x m), B N, 3 strided batches, padded lds */
        d.order = KMUX_COL_MAJOR, d.transa = KMUX_TRANS, d.transb = KMUX_NO_TRANS;
        d.lda = k + 3, d.ldb = k + 1, d.ldc = m + 2;
        d.batch_count = 3;
        d.stride_a = d.lda * m + 5, d.stride_b = d.ldb * n, d.stride_c = d.ldc * n + 7;
    }
    const int64_t batch = d.batch_count;
    const int64_t a_el = (batch - 1) * d.stride_a + m * d.lda;
    const int64_t b_el = (batch - 1) * d.stride_b + n * d.ldb;
    const int64_t c_el = (batch - 1) * d.stride_c + (variant == 0 ? m : n) * d.ldc;
    tensors t = {0};
    t.out = 2;
    kmux_status s = tensor_add(&t, d.a_type, a_el, 2);
    if (s == KMUX_OK) s = tensor_add(&t, d.b_type, b_el, 2);
    if (s == KMUX_OK) s = tensor_add(&t, d.c_type, c_el, 4);
    if (s == KMUX_OK && d.epilogue) s = tensor_add(&t, d.bias_type, n, 4);
    char label[160];
    snprintf(label, sizeof label, "impls_gemm[%s*%s->%s/%s %s]", kmux_dtype_name(d.a_type),
             kmux_dtype_name(d.b_type), kmux_dtype_name(d.c_type),
             kmux_compute_type_name(d.compute_type),
             variant == 0 ? "row NT bias+relu" : "col TN batch3 beta1");
    kmux_plan *gp = NULL, *rp = NULL;
    if (s == KMUX_OK) {
        kmux_status rst = kmux_matmul_plan_create(ref, &d, NULL, &rp);
        kmux_status gst = rst == KMUX_OK ? kmux_matmul_plan_create(gpu, &d, NULL, &gp) : rst;
        const int fnuz = strstr(kmux_dtype_name(d.a_type), "fnuz") != NULL;
        const int e5e5 = d.a_type == KMUX_F8_E5M2 && d.b_type == KMUX_F8_E5M2;
        compare(label, rst, gst, rp, gp, &t, 0, d.compute_type, variant == 0 ? 0.0 : 1.0,
                fnuz || e5e5);
    }
    kmux_plan_destroy(gp);
    kmux_plan_destroy(rp);
    tensors_free(&t);
    return s == KMUX_OK ? 0 : 2;
}

int check_impls_gemm(void) {
    int rows = 0;
    if (kmux_matmul_type_combination_count(&rows) != KMUX_OK) return 2;
    for (int i = 0; i < rows; i++) {
        kmux_type_combination row = {.struct_size = sizeof row};
        if (kmux_matmul_type_combination_get(i, &row) != KMUX_OK) return 2;
        for (int v = 0; v < 2; v++)
            if (gemm_case(&row, v) != 0) return 2;
    }
    return 0;
}

/* ---- convolution -------------------------------------------------------------------------- */

static int conv_case(kmux_dtype type, int layout, int dir, int shape) {
    static const char *const shapes[] = {"asym pad t0 b2 l1 r0, stride 2x1",
                                         "pad 1, stride 2, dilation 2", "groups 2", "depthwise"};
    kmux_conv2d_desc d = KMUX_CONV2D_DESC_INIT;
    d.direction = (kmux_conv_direction)dir;
    d.layout = layout ? KMUX_NHWC : KMUX_NCHW;
    d.x_type = d.w_type = d.y_type = type;
    d.compute_type = type == KMUX_F64 ? KMUX_COMPUTE_F64 : KMUX_COMPUTE_F32;
    d.n = 2, d.c = 4, d.h = 9, d.w = 8, d.k = 4, d.r = 3, d.s = 3;
    if (shape == 0) {
        d.pad_top = 0, d.pad_bottom = 2, d.pad_left = 1, d.pad_right = 0;
        d.stride_h = 2, d.stride_w = 1;
    } else if (shape == 1) {
        d.pad_top = d.pad_bottom = d.pad_left = d.pad_right = 1;
        d.stride_h = d.stride_w = 2, d.dilation_h = d.dilation_w = 2;
    } else {
        d.pad_top = d.pad_bottom = d.pad_left = d.pad_right = 1;
        d.groups = shape == 2 ? 2 : 4;
    }
    int64_t p = 0, q = 0;
    if (kmux_conv2d_output_dims(&d, &p, &q) != KMUX_OK) return 2;
    tensors t = {0};
    t.out = dir == KMUX_CONV_FWD ? 2 : dir == KMUX_CONV_BWD_DATA ? 0 : 1;
    kmux_status s = tensor_add(&t, type, d.n * d.c * d.h * d.w, 1);
    if (s == KMUX_OK) s = tensor_add(&t, type, d.k * (d.c / d.groups) * d.r * d.s, 1);
    if (s == KMUX_OK) s = tensor_add(&t, type, d.n * d.k * p * q, 1);
    char label[160];
    snprintf(label, sizeof label, "impls_conv[%s %s %s, %s]", kmux_dtype_name(type),
             layout ? "NHWC" : "NCHW",
             dir == KMUX_CONV_FWD        ? "fwd"
             : dir == KMUX_CONV_BWD_DATA ? "bwd_data"
                                         : "bwd_weights",
             shapes[shape]);
    kmux_plan *gp = NULL, *rp = NULL;
    if (s == KMUX_OK) {
        kmux_status rst = kmux_conv2d_plan_create(ref, &d, NULL, &rp);
        kmux_status gst = rst == KMUX_OK ? kmux_conv2d_plan_create(gpu, &d, NULL, &gp) : rst;
        compare(label, rst, gst, rp, gp, &t, 1, d.compute_type, 0.0, 0);
    }
    kmux_plan_destroy(gp);
    kmux_plan_destroy(rp);
    tensors_free(&t);
    return s == KMUX_OK ? 0 : 2;
}

int check_impls_conv(void) {
    static const kmux_dtype types[] = {KMUX_F32, KMUX_F16, KMUX_BF16, KMUX_F64};
    for (int ti = 0; ti < 4; ti++)
        for (int layout = 0; layout < 2; layout++)
            for (int dir = KMUX_CONV_FWD; dir <= KMUX_CONV_BWD_WEIGHTS; dir++)
                for (int shape = 0; shape < 4; shape++)
                    if (conv_case(types[ti], layout, dir, shape) != 0) return 2;
    return 0;
}
