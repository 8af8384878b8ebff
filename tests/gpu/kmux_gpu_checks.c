/*
 * kmux_gpu_checks.c - checks of the CUDA backend that only a GPU can run, each against the
 * reference backend "ref", through the public API only (tests/gpu/run.sh runs it; ctest runs it
 * too and reports "skipped" without a GPU, exit status 77):
 *
 *   precision    strict f32 and TF32 GEMMs at K = 16384 on random reals, every implementation
 *                of the plan: the RMS of |gpu - ref| / sqrt(sum_k (a_ik b_kj)^2) must stay within
 *                4 u32 sqrt(K) for strict f32 (u32 = 2^-24), which TF32 (inputs rounded to
 *                2^-11) exceeds by far; a "TF32" plan within the strict bound is reported as such
 *   i8_dscale    i8 x i8 -> i32 with d_scale and amax_d (the post kernel's integer beta)
 *   unaligned    f32 and f16 GEMMs with A, C and the bias off their 16-byte alignment, then the
 *                same plan aligned again (fallbacks keyed by alignment, real bias alignment)
 *   fp8_pad      e4m3 x e4m3 -> bf16 with K = 40 and N = 40 (zero-padded K and N) and C at a
 *                2-byte offset (the f32 temporary path)
 *   conv_asym    convolutions with asymmetric padding, all three directions, NCHW and NHWC
 *   bf16x9_name  F32_FAST_BF16: the implementation name says emulation only when the effective
 *                compute type is F32_FAST_BF16
 *   impls_gemm   every row of the GEMM type table, every implementation of each plan (cuBLASLt's
 *   impls_conv   and kmux's own kernels "kmux-gpu:..."), and every convolution direction, layout,
 *                group and padding case on every implementation (cuDNN's and kmux's own), each
 *                against ref, one table line per implementation (kmux_gpu_impls.c)
 * Integer-valued inputs wherever the result must be exact. Prints one line per check
 * ("PASS name: ...", "FAIL name: ...") and exits 0 when all passed, 1 otherwise, 77 when there
 * is no usable cuda:0, 2 when the reference backend itself fails.
 *
 *   kmux_gpu_checks [--device=cuda:0] [--only=NAME]
 */
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpu_checks.h"

kmux_context *ctx;
kmux_device *gpu, *ref;
kmux_stream *gs, *rs;
static int failures;

void verdict(const char *name, int ok, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    printf("%s %s: ", ok ? "PASS" : "FAIL", name);
    vprintf(fmt, ap);
    printf("\n");
    va_end(ap);
    fflush(stdout);
    if (!ok) failures++;
}

/* ---- data ---- */

static uint64_t rng = 88172645463325252ull;
static double urand(void) { /* [-1, 1) */
    rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
    return (double)(rng >> 11) / 4503599627370496.0 - 1.0;
}
static int irand(int range) { /* -range..range */
    return (int)((urand() + 1.0) * 0.5 * (2 * range + 1)) - range;
}

static float bf16_to_f32(uint16_t h) {
    uint32_t u = (uint32_t)h << 16;
    float f;
    memcpy(&f, &u, 4);
    return f;
}
/* small integers are exact in f16: 1.0 is 0x3c00; sign, exponent and mantissa by hand */
static uint16_t int_to_f16(int v) {
    if (v == 0) return 0;
    uint16_t sign = v < 0 ? 0x8000u : 0;
    unsigned a = (unsigned)(v < 0 ? -v : v), e = 0;
    while ((a >> e) > 1)
        e++;
    return (uint16_t)(sign | ((e + 15) << 10) | ((a << (10 - e)) & 0x3ffu));
}
static float f16_to_f32(uint16_t h) {
    unsigned e = (h >> 10) & 31, m = h & 0x3ffu;
    float v = e ? ldexpf(1.0f + (float)m / 1024.0f, (int)e - 15) : ldexpf((float)m, -24);
    return h & 0x8000u ? -v : v;
}
/* e4m3 code of a small integer |v| <= 16 (exact) */
static uint8_t int_to_e4m3(int v) {
    if (v == 0) return 0;
    uint8_t sign = v < 0 ? 0x80u : 0;
    unsigned a = (unsigned)(v < 0 ? -v : v), e = 0;
    while ((a >> e) > 1)
        e++;
    return (uint8_t)(sign | ((e + 7) << 3) | ((a << (3 - e)) & 7u));
}

/* ---- device buffers ---- */

kmux_status up(kmux_device *dev, kmux_stream *s, const void *host, size_t bytes, size_t offset,
               buf *b, void **ptr) {
    b->dev = dev;
    b->bytes = bytes + offset + 256;
    TRY(kmux_malloc(dev, b->bytes, &b->base));
    TRY(kmux_memset(s, b->base, 0, b->bytes));
    *ptr = (char *)b->base + offset;
    if (host) TRY(kmux_memcpy(s, *ptr, host, bytes, KMUX_MEMCPY_HOST_TO_DEVICE));
    return kmux_stream_synchronize(s);
}
void drop(buf *b) {
    if (b->base) kmux_free(b->dev, b->base);
    b->base = NULL;
}
kmux_status down(kmux_stream *s, void *host, const void *dev, size_t bytes) {
    TRY(kmux_memcpy(s, host, dev, bytes, KMUX_MEMCPY_DEVICE_TO_HOST));
    return kmux_stream_synchronize(s);
}

/* One matmul on device dev with host operands; C (host, in/out) gets the result. Offsets put
 * A, C and bias that many bytes off a 256-byte boundary. impl: implementation to switch to. */
typedef struct mm_case {
    kmux_matmul_desc d;
    const void *A, *B, *bias;
    void *C;
    size_t a_bytes, b_bytes, c_bytes, bias_bytes;
    size_t off_a, off_c, off_bias;
    const void *alpha, *beta;
    float d_scale; /* 0: none */
    int want_amax;
    float amax;
} mm_case;

static kmux_status run_mm(kmux_device *dev, kmux_stream *s, mm_case *c, int impl, char *impl_name,
                          size_t name_size) {
    kmux_plan *plan = NULL;
    TRY(kmux_matmul_plan_create(dev, &c->d, NULL, &plan));
    for (int i = 0; i < impl; i++)
        if (kmux_plan_next_impl(plan) != KMUX_OK) break;
    kmux_plan_info info;
    TRY(kmux_plan_info_get(plan, &info));
    if (impl_name) snprintf(impl_name, name_size, "%s", info.impl);
    buf ba = {0}, bb = {0}, bc = {0}, bbias = {0}, bs = {0}, bm = {0};
    kmux_matmul_args a = KMUX_MATMUL_ARGS_INIT;
    void *p;
    kmux_status st = KMUX_OK;
    if ((st = up(dev, s, c->A, c->a_bytes, c->off_a, &ba, &p)) != KMUX_OK) goto out;
    a.A = p;
    if ((st = up(dev, s, c->B, c->b_bytes, 0, &bb, &p)) != KMUX_OK) goto out;
    a.B = p;
    if ((st = up(dev, s, c->C, c->c_bytes, c->off_c, &bc, &p)) != KMUX_OK) goto out;
    a.C = p;
    if (c->bias) {
        if ((st = up(dev, s, c->bias, c->bias_bytes, c->off_bias, &bbias, &p)) != KMUX_OK) goto out;
        a.bias = p;
    }
    if (c->d_scale != 0.0f) {
        if ((st = up(dev, s, &c->d_scale, sizeof(float), 0, &bs, &p)) != KMUX_OK) goto out;
        a.d_scale = p;
    }
    if (c->want_amax) {
        if ((st = up(dev, s, NULL, sizeof(float), 0, &bm, &p)) != KMUX_OK) goto out;
        a.amax_d = p;
    }
    a.alpha = c->alpha, a.beta = c->beta;
    if ((st = kmux_matmul_execute(plan, s, &a)) != KMUX_OK) {
        fprintf(stderr, "  kmux_matmul_execute: %s (%s)\n", kmux_status_str(st), kmux_last_error());
        goto out;
    }
    if ((st = down(s, c->C, a.C, c->c_bytes)) != KMUX_OK) goto out;
    if (c->want_amax) st = down(s, &c->amax, a.amax_d, sizeof(float));
out:
    drop(&ba), drop(&bb), drop(&bc), drop(&bbias), drop(&bs), drop(&bm);
    kmux_plan_destroy(plan);
    return st;
}

/* ---- checks ---- */

static int check_precision(void) {
    const int64_t m = 64, n = 64, k = 16384;
    float *A = malloc(sizeof(float) * (size_t)(m * k)),
          *B = malloc(sizeof(float) * (size_t)(k * n));
    float *R = calloc((size_t)(m * n), sizeof(float)), *G = calloc((size_t)(m * n), sizeof(float));
    double *norm = calloc((size_t)(m * n), sizeof(double));
    if (!A || !B || !R || !G || !norm) return 2;
    for (int64_t i = 0; i < m * k; i++)
        A[i] = (float)urand();
    for (int64_t i = 0; i < k * n; i++)
        B[i] = (float)urand();
    for (int64_t i = 0; i < m; i++) /* row-major A (m x k), B (k x n) */
        for (int64_t j = 0; j < n; j++) {
            double s = 0;
            for (int64_t kk = 0; kk < k; kk++) {
                double t = (double)A[i * k + kk] * B[kk * n + j];
                s += t * t;
            }
            norm[i * n + j] = sqrt(s);
        }
    float one = 1.0f, zero = 0.0f;
    mm_case c = {.A = A, .B = B, .C = R, .alpha = &one, .beta = &zero};
    kmux_matmul_desc d = KMUX_MATMUL_DESC_INIT;
    d.m = m, d.n = n, d.k = k, d.lda = k, d.ldb = n, d.ldc = n;
    c.d = d;
    c.a_bytes = sizeof(float) * (size_t)(m * k), c.b_bytes = sizeof(float) * (size_t)(k * n);
    c.c_bytes = sizeof(float) * (size_t)(m * n);
    if (run_mm(ref, rs, &c, 0, NULL, 0) != KMUX_OK) return 2;
    const double u32 = ldexp(1.0, -24), strict_tol = 4.0 * u32 * sqrt((double)k);
    const double tf32_tol = 4.0 * ldexp(1.0, -11);
    const kmux_compute_type cts[2] = {KMUX_COMPUTE_F32, KMUX_COMPUTE_F32_FAST_TF32};
    for (int t = 0; t < 2; t++) {
        c.d.compute_type = cts[t];
        int count = 0; /* implementations of the plan, walked one by one */
        kmux_plan *probe = NULL;
        if (kmux_matmul_plan_create(gpu, &c.d, NULL, &probe) == KMUX_OK) {
            count = 1;
            while (kmux_plan_next_impl(probe) == KMUX_OK)
                count++;
            kmux_plan_destroy(probe);
        }
        if (count == 0) {
            verdict(t ? "precision[tf32]" : "precision[f32]", 0, "no plan");
            continue;
        }
        for (int impl = 0; impl < count; impl++) {
            char name[256] = "", label[320];
            c.C = G;
            memset(G, 0, c.c_bytes);
            kmux_status s = run_mm(gpu, gs, &c, impl, name, sizeof name);
            if (s != KMUX_OK) {
                snprintf(label, sizeof label, "precision[%s #%d]", t ? "tf32" : "f32", impl);
                verdict(label, 0, "execution failed");
                break;
            }
            double sum = 0;
            for (int64_t i = 0; i < m * n; i++) {
                double e = fabs((double)G[i] - R[i]) / norm[i];
                sum += e * e;
            }
            double rms = sqrt(sum / (double)(m * n));
            snprintf(label, sizeof label, "precision[%s #%d %s]", t ? "tf32" : "f32", impl, name);
            if (t == 0)
                verdict(label, rms <= strict_tol, "scaled RMS error %.3g, strict f32 bound %.3g",
                        rms, strict_tol);
            else if (rms <= strict_tol)
                verdict(label, 1,
                        "scaled RMS error %.3g within the strict f32 bound %.3g: this "
                        "TF32 plan ran strict f32",
                        rms, strict_tol);
            else
                verdict(label, rms <= tf32_tol, "scaled RMS error %.3g (TF32), bound %.3g", rms,
                        tf32_tol);
        }
    }
    free(A), free(B), free(R), free(G), free(norm);
    return 0;
}

static int check_i8_dscale(void) {
    const int64_t m = 48, n = 40, k = 64;
    int8_t *A = malloc((size_t)(m * k)), *B = malloc((size_t)(k * n));
    int32_t *C0 = malloc(sizeof(int32_t) * (size_t)(m * n)),
            *R = malloc(sizeof(int32_t) * (size_t)(m * n)),
            *G = malloc(sizeof(int32_t) * (size_t)(m * n));
    if (!A || !B || !C0 || !R || !G) return 2;
    for (int64_t i = 0; i < m * k; i++)
        A[i] = (int8_t)irand(7);
    for (int64_t i = 0; i < k * n; i++)
        B[i] = (int8_t)irand(7);
    for (int64_t i = 0; i < m * n; i++)
        C0[i] = irand(100);
    int32_t alpha = 1, beta = 2;
    mm_case c = {.A = A, .B = B, .alpha = &alpha, .beta = &beta, .d_scale = 1.0f, .want_amax = 1};
    kmux_matmul_desc d = KMUX_MATMUL_DESC_INIT;
    d.m = m, d.n = n, d.k = k, d.lda = k, d.ldb = n, d.ldc = n;
    d.a_type = d.b_type = KMUX_I8, d.c_type = KMUX_I32, d.compute_type = KMUX_COMPUTE_I32;
    c.d = d;
    c.a_bytes = (size_t)(m * k), c.b_bytes = (size_t)(k * n), c.c_bytes = 4 * (size_t)(m * n);
    memcpy(R, C0, c.c_bytes);
    c.C = R;
    if (run_mm(ref, rs, &c, 0, NULL, 0) != KMUX_OK) return 2;
    float ref_amax = c.amax;
    memcpy(G, C0, c.c_bytes);
    c.C = G;
    c.amax = -1.0f;
    kmux_status s = run_mm(gpu, gs, &c, 0, NULL, 0);
    int64_t bad = 0;
    for (int64_t i = 0; i < m * n; i++)
        bad += G[i] != R[i];
    verdict("i8_dscale", s == KMUX_OK && bad == 0 && c.amax == ref_amax,
            "%.0f of the elements differ from ref, amax %g", (double)bad, (double)c.amax);
    free(A), free(B), free(C0), free(R), free(G);
    return 0;
}

/* f32 (offsets 4) and f16 with bias (offset 2), column-major bias via the post kernel and
 * row-major bias via cuBLASLt's epilogue; then the same descriptor aligned. */
static int check_unaligned(void) {
    const int64_t m = 33, n = 20, k = 24;
    for (int half = 0; half < 2; half++)
        for (int row = 0; row < 2; row++)
            for (int aligned = 0; aligned < 2; aligned++) {
                size_t es = half ? 2 : 4;
                void *A = malloc(es * (size_t)(m * k)), *B = malloc(es * (size_t)(k * n));
                void *R = calloc((size_t)(m * n), es), *G = calloc((size_t)(m * n), es);
                void *bias = malloc(es * (size_t)(row ? n : m));
                if (!A || !B || !R || !G || !bias) return 2;
                for (int64_t i = 0; i < m * k; i++)
                    if (half)
                        ((uint16_t *)A)[i] = int_to_f16(irand(3));
                    else
                        ((float *)A)[i] = (float)irand(3);
                for (int64_t i = 0; i < k * n; i++)
                    if (half)
                        ((uint16_t *)B)[i] = int_to_f16(irand(3));
                    else
                        ((float *)B)[i] = (float)irand(3);
                for (int64_t i = 0; i < (row ? n : m); i++)
                    if (half)
                        ((uint16_t *)bias)[i] = int_to_f16(irand(8));
                    else
                        ((float *)bias)[i] = (float)irand(8);
                float one = 1.0f, zero = 0.0f;
                mm_case c = {.A = A, .B = B, .bias = bias, .alpha = &one, .beta = &zero};
                kmux_matmul_desc d = KMUX_MATMUL_DESC_INIT;
                d.order = row ? KMUX_ROW_MAJOR : KMUX_COL_MAJOR;
                d.m = m, d.n = n, d.k = k;
                d.lda = row ? k : m, d.ldb = row ? n : k, d.ldc = row ? n : m;
                d.a_type = d.b_type = d.c_type = d.bias_type = half ? KMUX_F16 : KMUX_F32;
                d.epilogue = KMUX_EPILOGUE_BIAS | KMUX_EPILOGUE_RELU;
                c.d = d;
                c.a_bytes = es * (size_t)(m * k), c.b_bytes = es * (size_t)(k * n);
                c.c_bytes = es * (size_t)(m * n), c.bias_bytes = es * (size_t)(row ? n : m);
                c.C = R;
                if (run_mm(ref, rs, &c, 0, NULL, 0) != KMUX_OK) return 2;
                c.off_a = aligned ? 0 : es, c.off_c = aligned ? 0 : es;
                c.off_bias = aligned ? 0 : es;
                c.C = G;
                char name[256] = "", label[320];
                kmux_status s = run_mm(gpu, gs, &c, 0, name, sizeof name);
                int64_t bad = 0;
                for (int64_t i = 0; i < m * n; i++) {
                    double g = half ? f16_to_f32(((uint16_t *)G)[i]) : ((float *)G)[i];
                    double r = half ? f16_to_f32(((uint16_t *)R)[i]) : ((float *)R)[i];
                    bad += g != r;
                }
                snprintf(label, sizeof label, "unaligned[%s %s %s]", half ? "f16" : "f32",
                         row ? "row-major" : "col-major",
                         aligned ? "aligned again" : "off by one element");
                verdict(label, s == KMUX_OK && bad == 0, "%.0f mismatches of %.0f", (double)bad,
                        (double)(m * n));
                free(A), free(B), free(R), free(G), free(bias);
            }
    return 0;
}

static int check_fp8_pad(void) {
    const int64_t m = 48, n = 40, k = 40; /* column-major TN: A stored k x m, B k x n */
    uint8_t *A = malloc((size_t)(k * m)), *B = malloc((size_t)(k * n));
    uint16_t *R = calloc((size_t)(m * n), 2), *G = calloc((size_t)(m * n), 2);
    if (!A || !B || !R || !G) return 2;
    for (int64_t i = 0; i < k * m; i++)
        A[i] = int_to_e4m3(irand(2));
    for (int64_t i = 0; i < k * n; i++)
        B[i] = int_to_e4m3(irand(2));
    float one = 1.0f, zero = 0.0f;
    mm_case c = {.A = A, .B = B, .alpha = &one, .beta = &zero};
    kmux_matmul_desc d = KMUX_MATMUL_DESC_INIT;
    d.order = KMUX_COL_MAJOR, d.transa = KMUX_TRANS;
    d.m = m, d.n = n, d.k = k, d.lda = k, d.ldb = k, d.ldc = m;
    d.a_type = d.b_type = KMUX_F8_E4M3, d.c_type = KMUX_BF16;
    c.d = d;
    c.a_bytes = (size_t)(k * m), c.b_bytes = (size_t)(k * n), c.c_bytes = 2 * (size_t)(m * n);
    c.C = R;
    if (run_mm(ref, rs, &c, 0, NULL, 0) != KMUX_OK) return 2;
    for (int off = 0; off <= 2; off += 2) {
        c.C = G;
        c.off_c = (size_t)off;
        memset(G, 0, c.c_bytes);
        char name[256] = "", label[320];
        kmux_status s = run_mm(gpu, gs, &c, 0, name, sizeof name);
        int64_t bad = 0;
        for (int64_t i = 0; i < m * n; i++)
            bad += bf16_to_f32(G[i]) != bf16_to_f32(R[i]);
        snprintf(label, sizeof label, "fp8_pad[K=40 N=40, C offset %d, %s]", off, name);
        verdict(label, s == KMUX_OK && bad == 0, "%.0f mismatches of %.0f", (double)bad,
                (double)(m * n));
    }
    free(A), free(B), free(R), free(G);
    return 0;
}

static int check_conv_asym(void) {
    for (int layout = 0; layout < 2; layout++)
        for (int dir = KMUX_CONV_FWD; dir <= KMUX_CONV_BWD_WEIGHTS; dir++) {
            kmux_conv2d_desc d = KMUX_CONV2D_DESC_INIT;
            d.direction = (kmux_conv_direction)dir;
            d.layout = layout ? KMUX_NHWC : KMUX_NCHW;
            d.n = 2, d.c = 3, d.h = 9, d.w = 8, d.k = 4, d.r = 3, d.s = 3;
            d.pad_top = 0, d.pad_bottom = 2, d.pad_left = 1, d.pad_right = 0;
            d.stride_h = 2, d.stride_w = 1;
            int64_t p = 0, q = 0;
            if (kmux_conv2d_output_dims(&d, &p, &q) != KMUX_OK) return 2;
            size_t nx = (size_t)(d.n * d.c * d.h * d.w), nw = (size_t)(d.k * d.c * d.r * d.s),
                   ny = (size_t)(d.n * d.k * p * q);
            float *x = malloc(4 * nx), *w = malloc(4 * nw), *y = malloc(4 * ny);
            float *out_r = NULL, *out_g = NULL;
            if (!x || !w || !y) return 2;
            for (size_t i = 0; i < nx; i++)
                x[i] = (float)irand(3);
            for (size_t i = 0; i < nw; i++)
                w[i] = (float)irand(3);
            for (size_t i = 0; i < ny; i++)
                y[i] = (float)irand(3);
            size_t nout = dir == KMUX_CONV_FWD ? ny : dir == KMUX_CONV_BWD_DATA ? nx : nw;
            out_r = calloc(nout, 4), out_g = calloc(nout, 4);
            kmux_status st[2] = {KMUX_OK, KMUX_OK};
            for (int side = 0; side < 2; side++) {
                kmux_device *dev = side ? gpu : ref;
                kmux_stream *s = side ? gs : rs;
                float *out = side ? out_g : out_r;
                kmux_plan *plan = NULL;
                buf bx = {0}, bw = {0}, by = {0};
                void *px, *pw, *py;
                float one = 1.0f, zero = 0.0f;
                kmux_conv2d_args a = KMUX_CONV2D_ARGS_INIT;
                kmux_status e = kmux_conv2d_plan_create(dev, &d, NULL, &plan);
                if (e == KMUX_OK) e = up(dev, s, x, 4 * nx, 0, &bx, &px);
                if (e == KMUX_OK) e = up(dev, s, w, 4 * nw, 0, &bw, &pw);
                if (e == KMUX_OK) e = up(dev, s, y, 4 * ny, 0, &by, &py);
                if (e == KMUX_OK) {
                    a.alpha = &one, a.beta = &zero, a.x = px, a.w = pw, a.y = py;
                    e = kmux_conv2d_execute(plan, s, &a);
                }
                void *res = dir == KMUX_CONV_FWD ? py : dir == KMUX_CONV_BWD_DATA ? px : pw;
                if (e == KMUX_OK) e = down(s, out, res, 4 * nout);
                if (e != KMUX_OK)
                    fprintf(stderr, "  conv on %s: %s (%s)\n", side ? "gpu" : "ref",
                            kmux_status_str(e), kmux_last_error());
                st[side] = e;
                drop(&bx), drop(&bw), drop(&by);
                kmux_plan_destroy(plan);
            }
            if (st[0] != KMUX_OK) return 2;
            int64_t bad = 0;
            for (size_t i = 0; i < nout; i++)
                bad += out_g[i] != out_r[i];
            char label[128];
            snprintf(label, sizeof label, "conv_asym[%s %s, pads t0 b2 l1 r0]",
                     layout ? "NHWC" : "NCHW",
                     dir == KMUX_CONV_FWD        ? "fwd"
                     : dir == KMUX_CONV_BWD_DATA ? "bwd_data"
                                                 : "bwd_weights");
            verdict(label, st[1] == KMUX_OK && bad == 0, "%.0f mismatches of %.0f", (double)bad,
                    (double)nout);
            free(x), free(w), free(y), free(out_r), free(out_g);
        }
    return 0;
}

static int check_bf16x9_name(void) {
    kmux_matmul_desc d = KMUX_MATMUL_DESC_INIT;
    d.m = d.n = d.k = 256, d.lda = d.ldb = d.ldc = 256;
    d.compute_type = KMUX_COMPUTE_F32_FAST_BF16;
    kmux_plan *plan = NULL;
    kmux_status s = kmux_matmul_plan_create(gpu, &d, NULL, &plan);
    if (s != KMUX_OK) {
        verdict("bf16x9_name", 0, "plan creation failed");
        return 0;
    }
    int i = 0, bad = 0;
    do {
        kmux_plan_info info;
        if (kmux_plan_info_get(plan, &info) != KMUX_OK) break;
        int says = strstr(info.impl, "EMULATED") != NULL;
        int is = info.effective_compute == KMUX_COMPUTE_F32_FAST_BF16;
        if (says != is) bad++;
        printf("  bf16x9_name #%d: %s (effective %s)\n", i, info.impl,
               is ? "F32_FAST_BF16" : "F32");
        i++;
    } while (kmux_plan_next_impl(plan) == KMUX_OK);
    kmux_plan_destroy(plan);
    verdict("bf16x9_name", bad == 0, "%.0f of %.0f implementations named otherwise than they run",
            (double)bad, (double)i);
    return 0;
}

int main(int argc, char **argv) {
    const char *dev_id = "cuda:0", *only = NULL;
    for (int i = 1; i < argc; i++) {
        if (!strncmp(argv[i], "--device=", 9))
            dev_id = argv[i] + 9;
        else if (!strncmp(argv[i], "--only=", 7))
            only = argv[i] + 7;
        else {
            fprintf(stderr, "usage: kmux_gpu_checks [--device=cuda:0] [--only=NAME]\n");
            return 2;
        }
    }
    if (kmux_context_create(NULL, &ctx) != KMUX_OK) {
        fprintf(stderr, "kmux_gpu_checks: kmux_context_create: %s\n", kmux_last_error());
        return 2;
    }
    if (kmux_device_find(ctx, dev_id, &gpu) != KMUX_OK) {
        printf("SKIP kmux_gpu_checks: no usable %s (%s)\n", dev_id, kmux_last_error());
        kmux_context_destroy(ctx);
        return 77;
    }
    if (kmux_device_find(ctx, "ref", &ref) != KMUX_OK || kmux_stream_create(gpu, &gs) != KMUX_OK ||
        kmux_stream_create(ref, &rs) != KMUX_OK) {
        fprintf(stderr, "kmux_gpu_checks: setup: %s\n", kmux_last_error());
        return 2;
    }
    static const struct {
        const char *name;
        int (*fn)(void);
    } checks[] = {{"precision", check_precision},   {"i8_dscale", check_i8_dscale},
                  {"unaligned", check_unaligned},   {"fp8_pad", check_fp8_pad},
                  {"conv_asym", check_conv_asym},   {"bf16x9_name", check_bf16x9_name},
                  {"impls_gemm", check_impls_gemm}, {"impls_conv", check_impls_conv}};
    int rc = 0;
    for (size_t i = 0; i < sizeof checks / sizeof checks[0]; i++) {
        if (only && strcmp(only, checks[i].name)) continue;
        if (checks[i].fn() != 0) {
            printf("FAIL %s: the reference backend or the host failed (see stderr)\n",
                   checks[i].name);
            rc = 2;
        }
    }
    kmux_stream_destroy(gs);
    kmux_stream_destroy(rs);
    kmux_context_destroy(ctx);
    printf("kmux_gpu_checks: %d failure(s)\n", failures);
    return rc ? rc : failures ? 1 : 0;
}
