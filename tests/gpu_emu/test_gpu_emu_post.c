/*
 * test_gpu_emu_post.c - kmux_gpu_post_launch and kmux_gpu_pack_bytes (kernels/gpu/
 * kmux_gpu_post.cu, the CUDA plugin's completion of a cuBLASLt GEMM) in the host emulation at
 * wave 32 and 64 and in two block orders. The oracle is ref's full GEMM: the post kernel applied
 * to ref's partial result (an f32 accumulator, or D = alpha AB + beta C) must give ref's result
 * with the epilogue, d_scale and amax_d. Includes the i8 x i8 -> i32 GEMM with d_scale / amax_d
 * (read_c = 1, beta = 1), which came back 0 from the CUDA plugin (issue 16).
 */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "emu_common.h"
#include "kmux_dtype_desc.h"
#include "kmux_gpu_kernels.h"

typedef struct post_case {
    kmux_dtype in, d;  /* GEMM input type, D type */
    int temp;          /* 1: post reads an f32 accumulator of alpha AB; 0: D = alpha AB + beta C */
    int swapped;       /* ref in row-major order, post in the transposed view (bias per row) */
    unsigned epilogue; /* KMUX_EPILOGUE_* */
    kmux_dtype bias_type;
    float d_scale; /* 0: none */
    int amax;
} post_case;

enum { M = 13, NN = 21, K = 9, BATCH = 3 };

static kmux_compute_type compute_of(kmux_dtype t) {
    return t == KMUX_F64 ? KMUX_COMPUTE_F64 : t == KMUX_I8 ? KMUX_COMPUTE_I32 : KMUX_COMPUTE_F32;
}

/* ref: C = alpha op(A) op(B) + beta C (+ epilogue, scales) on the batch. */
static void ref_gemm(kmux_dtype in, kmux_dtype out, kmux_order o, const void *A, const void *B,
                     void *C, int64_t ldc, int64_t stride_c, double alpha, double beta,
                     unsigned epi, kmux_dtype bias_type, const void *bias, const float *d_scale,
                     float *amax) {
    kmux_matmul_desc d = KMUX_MATMUL_DESC_INIT;
    d.order = o;
    d.m = M, d.n = NN, d.k = K;
    d.a_type = d.b_type = in, d.c_type = out, d.compute_type = compute_of(in);
    d.lda = o == KMUX_COL_MAJOR ? M : K, d.ldb = o == KMUX_COL_MAJOR ? K : NN, d.ldc = ldc;
    d.batch_count = BATCH, d.stride_a = M * K, d.stride_b = K * NN, d.stride_c = stride_c;
    d.epilogue = epi;
    d.bias_type = bias_type;
    union {
        double f64;
        float f32;
        int32_t i32;
    } a, b;
    if (in == KMUX_F64)
        a.f64 = alpha, b.f64 = beta;
    else if (in == KMUX_I8)
        a.i32 = (int32_t)alpha, b.i32 = (int32_t)beta;
    else
        a.f32 = (float)alpha, b.f32 = (float)beta;
    kmux_matmul_args args = KMUX_MATMUL_ARGS_INIT;
    args.alpha = &a, args.beta = &b, args.A = A, args.B = B, args.C = C, args.bias = bias;
    args.d_scale = d_scale, args.amax_d = amax;
    kmux_plan *plan = NULL;
    cr_assert_eq(kmux_matmul_plan_create(emu_ref(), &d, NULL, &plan), KMUX_OK, "%s",
                 kmux_last_error());
    cr_assert_eq(kmux_matmul_execute(plan, emu_ref_stream(), &args), KMUX_OK, "%s",
                 kmux_last_error());
    kmux_plan_destroy(plan);
}

static void run_post(const post_case *pc, const char *tag) {
    const kmux_order o = pc->swapped ? KMUX_ROW_MAJOR : KMUX_COL_MAJOR;
    const int64_t ldc = (pc->swapped ? NN : M) + 2, stride_c = ldc * (pc->swapped ? M : NN) + 3;
    const int64_t span = (BATCH - 1) * stride_c + ldc * (pc->swapped ? M : NN);
    const size_t ib = kmux_dtype_bytes(pc->in), db = kmux_dtype_bytes(pc->d);
    uint64_t st = 0xabcdefull + (uint64_t)pc->d * 31u + (uint64_t)pc->epilogue;
    void *A = emu_alloc((size_t)BATCH * M * K * ib), *B = emu_alloc((size_t)BATCH * K * NN * ib);
    emu_fill(pc->in, A, BATCH * M * K, pc->in == KMUX_I8 ? 20 : 2, &st);
    emu_fill(pc->in, B, BATCH * K * NN, pc->in == KMUX_I8 ? 20 : 2, &st);
    unsigned char *C0 = emu_alloc((size_t)span * db), *want = emu_alloc((size_t)span * db);
    unsigned char *part = emu_alloc((size_t)span * db), *got = emu_alloc((size_t)span * db);
    emu_fill(pc->d, C0, span, pc->d == KMUX_I32 ? 20 : 2, &st);
    void *bias = emu_alloc((size_t)NN * kmux_dtype_bytes(pc->bias_type));
    emu_fill(pc->bias_type, bias, NN, 1, &st);
    const double alpha = pc->in == KMUX_I8 ? 2 : 1.25, beta = pc->in == KMUX_I8 ? -1 : 0.5;
    const float ds = pc->d_scale;

    memcpy(want, C0, (size_t)span * db);
    float want_amax = -1, got_amax = -1;
    ref_gemm(pc->in, pc->d, o, A, B, want, ldc, stride_c, alpha, beta, pc->epilogue, pc->bias_type,
             bias, ds != 0 ? &ds : NULL, pc->amax ? &want_amax : NULL);

    kmux_gpu_post_args a;
    memset(&a, 0, sizeof a);
    a.rows = pc->swapped ? NN : M, a.cols = pc->swapped ? M : NN, a.batch = BATCH;
    a.d_type = pc->d, a.ldd = ldc, a.stride_d = stride_c;
    float *acc = NULL;
    if (pc->temp) { /* acc = alpha AB in f32, C untouched: post adds beta C */
        acc = emu_alloc(sizeof(float) * (size_t)span);
        ref_gemm(pc->in, KMUX_F32, o, A, B, acc, ldc, stride_c, alpha, 0, 0, KMUX_F32, NULL, NULL,
                 NULL);
        memcpy(part, C0, (size_t)span * db);
        a.acc = acc, a.ld_acc = ldc, a.stride_acc = stride_c;
        a.read_c = 1, a.beta = beta;
    } else { /* D = alpha AB + beta C already; post keeps it (beta 1) and finishes */
        memcpy(part, C0, (size_t)span * db);
        ref_gemm(pc->in, pc->d, o, A, B, part, ldc, stride_c, alpha, beta, 0, pc->bias_type, NULL,
                 NULL, NULL);
        a.read_c = 1, a.beta = 1.0;
    }
    if (pc->epilogue & KMUX_EPILOGUE_BIAS) a.bias = bias;
    a.bias_type = pc->bias_type;
    a.bias_per_row = pc->swapped;
    a.act = (pc->epilogue & KMUX_EPILOGUE_RELU)   ? KMUX_GPU_ACT_RELU
            : (pc->epilogue & KMUX_EPILOGUE_GELU) ? KMUX_GPU_ACT_GELU
                                                  : KMUX_GPU_ACT_NONE;
    a.d_scale = ds != 0 ? &ds : NULL;
    a.amax = pc->amax ? &got_amax : NULL;

    const int integer = pc->d == KMUX_I32;
    const double u_acc = integer ? 0 : ldexp(1.0, -24), u_out = emu_unit_roundoff(pc->d);
    const double bscale = 8.0 * K * (ds != 0 ? ds : 1); /* |terms| <= 2*2*K + 2 + 1 */
    unsigned char *first = emu_alloc((size_t)span * db);
    for (int si = 0; si < EMU_SETTING_COUNT; si++) {
        emu_apply(&EMU_SETTINGS[si]);
        memcpy(got, part, (size_t)span * db);
        a.d = got;
        got_amax = -1;
        emu_check_launch(kmux_gpu_post_launch(NULL, &a), tag);
        for (int64_t e = 0; e < span; e++) {
            double w = emu_get(pc->d, want, e), g = emu_get(pc->d, got, e);
            double tol = integer
                             ? 0
                             : emu_tol(w, bscale, K, u_acc, 2 * u_out, 2 * emu_min_subnormal(pc->d),
                                       (pc->epilogue & KMUX_EPILOGUE_GELU) != 0);
            cr_assert(emu_same(g, w, tol), "%s (wave %u): element %lld: got %.9g want %.9g", tag,
                      EMU_SETTINGS[si].wave, (long long)e, g, w);
        }
        if (pc->amax) {
            double tol = integer ? 0 : emu_tol(want_amax, bscale, K, u_acc, 2 * u_out, 0, 1);
            cr_assert(emu_same(got_amax, want_amax, tol), "%s (wave %u): amax got %.9g want %.9g",
                      tag, EMU_SETTINGS[si].wave, (double)got_amax, (double)want_amax);
            if (integer) cr_assert_gt(got_amax, 0, "%s: amax 0", tag);
        }
        if (si == 0)
            memcpy(first, got, (size_t)span * db);
        else
            cr_assert(memcmp(first, got, (size_t)span * db) == 0,
                      "%s: differs bitwise between settings", tag);
    }
    free(A);
    free(B);
    free(C0);
    free(want);
    free(part);
    free(got);
    free(first);
    free(bias);
    free(acc);
}

Test(gpu_emu_post, f32_accumulator_path) {
    static const kmux_dtype T[3] = {KMUX_F32, KMUX_F16, KMUX_BF16};
    static const unsigned E[4] = {0, KMUX_EPILOGUE_BIAS, KMUX_EPILOGUE_BIAS | KMUX_EPILOGUE_RELU,
                                  KMUX_EPILOGUE_GELU};
    for (int t = 0; t < 3; t++)
        for (int e = 0; e < 4; e++)
            for (int sw = 0; sw < 2; sw++) {
                post_case pc = {T[t], T[t], 1, sw, E[e], e & 1 ? KMUX_F32 : T[t], e == 2 ? 0.5f : 0,
                                1};
                char tag[96];
                snprintf(tag, sizeof tag, "post acc %s epi %u swapped %d",
                         kmux_dtype_desc_of(T[t]).name, E[e], sw);
                run_post(&pc, tag);
            }
}

Test(gpu_emu_post, in_place_path) {
    static const kmux_dtype T[4] = {KMUX_F64, KMUX_F32, KMUX_F16, KMUX_BF16};
    for (int t = 0; t < 4; t++)
        for (int v = 0; v < 3; v++) {
            unsigned e = v == 0   ? 0
                         : v == 1 ? KMUX_EPILOGUE_BIAS | KMUX_EPILOGUE_GELU
                                  : KMUX_EPILOGUE_RELU;
            post_case pc = {T[t], T[t], 0, v == 1, e, T[t], v == 0 ? 0.25f : 0, v != 2};
            char tag[96];
            snprintf(tag, sizeof tag, "post in place %s variant %d", kmux_dtype_desc_of(T[t]).name,
                     v);
            run_post(&pc, tag);
        }
}

/* Issue 16: i8 x i8 -> i32 with d_scale or amax_d: post with read_c = 1, beta = 1 must keep D
 * (and scale it), and amax must be max |D|, not 0. */
Test(gpu_emu_post, i32_with_d_scale_or_amax) {
    for (int v = 0; v < 3; v++) {
        post_case pc = {KMUX_I8, KMUX_I32, 0, v == 2, 0, KMUX_F32, v != 1 ? 0.5f : 0, v != 0};
        char tag[64];
        snprintf(tag, sizeof tag, "post i32 variant %d", v);
        run_post(&pc, tag);
    }
}

/* The degenerate integer GEMM: D = beta * D modulo 2^32 (alpha == 0), and D = 0 (beta == 0). */
Test(gpu_emu_post, i32_degenerate_wraps) {
    int32_t d[6] = {INT32_MAX, INT32_MIN, -7, 1 << 30, 0, 12345};
    int32_t want[6];
    for (int i = 0; i < 6; i++)
        want[i] = (int32_t)((uint32_t)-3 * (uint32_t)d[i]);
    kmux_gpu_post_args a;
    memset(&a, 0, sizeof a);
    a.rows = 2, a.cols = 3, a.batch = 1, a.d_type = KMUX_I32, a.ldd = 2;
    a.read_c = 1, a.beta = -3;
    for (int si = 0; si < EMU_SETTING_COUNT; si++) {
        emu_apply(&EMU_SETTINGS[si]);
        int32_t got[6];
        memcpy(got, d, sizeof got);
        a.d = got;
        emu_check_launch(kmux_gpu_post_launch(NULL, &a), "i32 degenerate");
        cr_assert(memcmp(got, want, sizeof got) == 0, "beta * D modulo 2^32");
        a.read_c = 0;
        emu_check_launch(kmux_gpu_post_launch(NULL, &a), "i32 beta 0");
        for (int i = 0; i < 6; i++)
            cr_assert_eq(got[i], 0);
        a.read_c = 1;
    }
}

/* The strided byte gather (transposed and not, batched) against its definition. */
Test(gpu_emu_post, pack_bytes) {
    enum { R = 19, CC = 33, NB = 2 };
    uint8_t src[NB * R * CC + 7];
    uint64_t st = 99;
    for (size_t i = 0; i < sizeof src; i++)
        src[i] = (uint8_t)(emu_rand(&st, 0, 256));
    const int64_t ldd = 48, dbs = ldd * CC + 16;
    for (int tr = 0; tr < 2; tr++) {
        const int64_t rs = tr ? CC : 1, cs = tr ? 1 : R, bs = R * CC + 7;
        const size_t bytes = (size_t)((NB - 1) * dbs + (CC - 1) * ldd + R);
        for (int si = 0; si < EMU_SETTING_COUNT; si++) {
            emu_apply(&EMU_SETTINGS[si]);
            uint8_t *dst = emu_alloc(bytes);
            memset(dst, 0xee, bytes);
            emu_check_launch(kmux_gpu_pack_bytes(NULL, src, R, CC, rs, cs, bs, dst, ldd, dbs, 1),
                             "pack");
            emu_check_launch(
                kmux_gpu_pack_bytes(NULL, src, R, CC, rs, cs, R * CC, dst, ldd, dbs, NB),
                "pack batched");
            for (int64_t b = 0; b < NB; b++)
                for (int64_t c = 0; c < CC; c++)
                    for (int64_t r = 0; r < R; r++)
                        cr_assert_eq(dst[b * dbs + r + c * ldd], src[b * R * CC + r * rs + c * cs],
                                     "pack (%lld, %lld, %lld) transposed %d", (long long)r,
                                     (long long)c, (long long)b, tr);
            for (int64_t r = R; r < ldd && r < (int64_t)bytes; r++)
                cr_assert_eq(dst[r], 0xee, "padding byte %lld written", (long long)r);
            free(dst);
        }
    }
}
