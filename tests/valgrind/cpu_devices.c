/*
 * cpu_devices.c - a small program that uses every CPU device (ref, cpu:openblas, cpu:onednn, as
 * built) the way an application does, for the valgrind (memcheck) stage of scripts/test.sh
 * (tests/valgrind/run.sh): GEMM in f64, f32 and f16 (row- and column-major, transposed), 2-D
 * convolution in all three directions, casts and amax; every result is compared with ref's.
 * Small integer data, so every backend must agree exactly. Exit status 0 = every check passed;
 * memcheck adds its own (--error-exitcode) for invalid accesses, uninitialised values and leaks.
 */
#include <kmux.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int g_failures;

#define CHECK(cond, ...)                                                                           \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            g_failures++;                                                                          \
            fprintf(stderr, "cpu_devices: " __VA_ARGS__);                                          \
            fputc('\n', stderr);                                                                   \
        }                                                                                          \
    } while (0)

enum { M = 13, N = 11, K = 9 };

static void fill(void *p, kmux_dtype t, int64_t n, int salt) {
    for (int64_t i = 0; i < n; i++) {
        double v = (double)((i * 7 + salt) % 5 - 2);
        if (t == KMUX_F64)
            ((double *)p)[i] = v;
        else
            ((float *)p)[i] = (float)v;
    }
}

/* GEMM of type t (f64 or f32, or f16 inputs/outputs through casts) on dev; 1 = ran. */
static int gemm(kmux_device *dev, kmux_stream *s, kmux_dtype t, kmux_order order, kmux_transpose ta,
                void *c_out) {
    kmux_dtype st = t == KMUX_F16 ? KMUX_F32 : t; /* storage of the host data */
    size_t es = t == KMUX_F64 ? 8 : 4;
    void *a = malloc(M * K * es), *b = malloc(K * N * es);
    fill(a, st, M * K, 1);
    fill(b, st, K * N, 2);
    memset(c_out, 0, (size_t)M * N * es);
    int64_t lda = order == KMUX_ROW_MAJOR ? (ta == KMUX_TRANS ? M : K) : (ta == KMUX_TRANS ? K : M);
    int64_t ldb = order == KMUX_ROW_MAJOR ? N : K, ldc = order == KMUX_ROW_MAJOR ? N : M;
    kmux_status r;
    if (t == KMUX_F16) {
        uint16_t *ah = malloc(M * K * 2), *bh = malloc(K * N * 2), *ch = malloc(M * N * 2);
        float one = 1, zero = 0;
        r = kmux_cast(s, M * K, a, KMUX_F32, ah, KMUX_F16, NULL);
        if (r == KMUX_OK) r = kmux_cast(s, K * N, b, KMUX_F32, bh, KMUX_F16, NULL);
        if (r == KMUX_OK)
            r = kmux_gemm_ex(s, order, ta, KMUX_NO_TRANS, M, N, K, &one, ah, KMUX_F16, lda, bh,
                             KMUX_F16, ldb, &zero, ch, KMUX_F16, ldc, KMUX_COMPUTE_F32);
        if (r == KMUX_OK) r = kmux_cast(s, M * N, ch, KMUX_F16, c_out, KMUX_F32, NULL);
        free(ah), free(bh), free(ch);
    } else if (t == KMUX_F64) {
        double one = 1, zero = 0;
        r = kmux_gemm_ex(s, order, ta, KMUX_NO_TRANS, M, N, K, &one, a, t, lda, b, t, ldb, &zero,
                         c_out, t, ldc, KMUX_COMPUTE_F64);
    } else {
        float one = 1, zero = 0;
        r = kmux_gemm_ex(s, order, ta, KMUX_NO_TRANS, M, N, K, &one, a, t, lda, b, t, ldb, &zero,
                         c_out, t, ldc, KMUX_COMPUTE_F32);
    }
    if (r == KMUX_OK) r = kmux_stream_synchronize(s);
    free(a), free(b);
    if (r == KMUX_ERR_UNSUPPORTED) return 0;
    CHECK(r == KMUX_OK, "gemm %s: %s", kmux_dtype_name(t), kmux_last_error());
    (void)dev;
    return r == KMUX_OK;
}

enum { CN = 2, CC = 4, CH = 7, CW = 6, CK = 6, CR = 3, CG = 2 };

/* f32 convolution, direction dir, into out (the tensor the direction writes); 1 = ran. */
static int conv(kmux_device *dev, kmux_stream *s, kmux_conv_direction dir, kmux_layout layout,
                float *out, size_t out_elems) {
    kmux_conv2d_desc d = KMUX_CONV2D_DESC_INIT;
    d.direction = dir, d.layout = layout;
    d.n = CN, d.c = CC, d.h = CH, d.w = CW, d.k = CK, d.r = CR, d.s = CR, d.groups = CG;
    d.pad_top = d.pad_left = 1, d.stride_w = 2;
    int64_t p = 0, q = 0;
    if (kmux_conv2d_output_dims(&d, &p, &q) != KMUX_OK) return 0;
    size_t nx = CN * CC * CH * CW, nw = CK * (CC / CG) * CR * CR, ny = (size_t)(CN * CK * p * q);
    float *x = malloc(nx * 4), *w = malloc(nw * 4), *y = malloc(ny * 4);
    fill(x, KMUX_F32, (int64_t)nx, 3);
    fill(w, KMUX_F32, (int64_t)nw, 4);
    fill(y, KMUX_F32, (int64_t)ny, 5);
    kmux_plan *plan = NULL;
    kmux_status r = kmux_conv2d_plan_create(dev, &d, NULL, &plan);
    if (r == KMUX_OK) {
        float one = 1, zero = 0;
        kmux_conv2d_args a = KMUX_CONV2D_ARGS_INIT;
        a.alpha = &one, a.beta = &zero, a.x = x, a.w = w, a.y = y;
        r = kmux_conv2d_execute(plan, s, &a);
        if (r == KMUX_OK) r = kmux_stream_synchronize(s);
        kmux_plan_destroy(plan);
    }
    float *res = dir == KMUX_CONV_FWD ? y : dir == KMUX_CONV_BWD_DATA ? x : w;
    size_t n = dir == KMUX_CONV_FWD ? ny : dir == KMUX_CONV_BWD_DATA ? nx : nw;
    if (r == KMUX_OK) memcpy(out, res, (n < out_elems ? n : out_elems) * 4);
    free(x), free(w), free(y);
    if (r == KMUX_ERR_UNSUPPORTED) return 0;
    CHECK(r == KMUX_OK, "conv dir %d: %s", (int)dir, kmux_last_error());
    return r == KMUX_OK;
}

int main(void) {
    kmux_context_options o = KMUX_CONTEXT_OPTIONS_INIT;
    o.num_threads = 2;
    kmux_context *ctx = NULL;
    if (kmux_context_create(&o, &ctx) != KMUX_OK) {
        fprintf(stderr, "cpu_devices: %s\n", kmux_last_error());
        return 2;
    }
    kmux_device *ref = NULL;
    kmux_stream *rs = NULL;
    if (kmux_device_find(ctx, "ref", &ref) != KMUX_OK || kmux_stream_create(ref, &rs) != KMUX_OK)
        return 2;
    int ndev = 0, used = 0;
    kmux_device_count(ctx, &ndev);
    static const kmux_dtype types[] = {KMUX_F64, KMUX_F32, KMUX_F16};
    for (int i = 0; i < ndev; i++) {
        kmux_device *dev = NULL;
        kmux_device_props props;
        if (kmux_device_get(ctx, i, &dev) != KMUX_OK ||
            kmux_device_props_get(dev, &props) != KMUX_OK)
            return 2;
        if (!props.is_host) continue;
        used++;
        kmux_stream *s = NULL;
        if (kmux_stream_create(dev, &s) != KMUX_OK) return 2;
        int ran = 0;
        for (size_t t = 0; t < sizeof types / sizeof types[0]; t++)
            for (int ord = 0; ord < 2; ord++)
                for (int tr = 0; tr < 2; tr++) {
                    kmux_order order = ord ? KMUX_COL_MAJOR : KMUX_ROW_MAJOR;
                    kmux_transpose ta = tr ? KMUX_TRANS : KMUX_NO_TRANS;
                    double got[M * N], want[M * N];
                    if (!gemm(dev, s, types[t], order, ta, got)) continue;
                    if (!gemm(ref, rs, types[t], order, ta, want)) continue;
                    ran++;
                    size_t bytes = (size_t)M * N * (types[t] == KMUX_F64 ? 8 : 4);
                    CHECK(memcmp(got, want, bytes) == 0,
                          "%s: gemm %s order %d trans %d differs from ref", props.id,
                          kmux_dtype_name(types[t]), (int)order, (int)ta);
                }
        for (int dir = KMUX_CONV_FWD; dir <= KMUX_CONV_BWD_WEIGHTS; dir++)
            for (int lay = 0; lay < 2; lay++) {
                kmux_layout layout = lay ? KMUX_NHWC : KMUX_NCHW;
                float got[1024] = {0}, want[1024] = {0};
                if (!conv(dev, s, (kmux_conv_direction)dir, layout, got, 1024)) continue;
                if (!conv(ref, rs, (kmux_conv_direction)dir, layout, want, 1024)) continue;
                ran++;
                CHECK(memcmp(got, want, sizeof got) == 0,
                      "%s: conv direction %d layout %d differs from ref", props.id, dir,
                      (int)layout);
            }
        float v[100], amax = 0;
        fill(v, KMUX_F32, 100, 6);
        CHECK(kmux_amax(s, 100, v, KMUX_F32, &amax) == KMUX_OK &&
                  kmux_stream_synchronize(s) == KMUX_OK && amax == 2.0f,
              "%s: amax = %g: %s", props.id, (double)amax, kmux_last_error());
        printf("cpu_devices: %s: %d GEMM/conv cases agree with ref\n", props.id, ran);
        CHECK(ran > 0, "%s: no case ran", props.id);
        kmux_stream_destroy(s);
    }
    kmux_stream_destroy(rs);
    kmux_context_destroy(ctx);
    CHECK(used >= 1, "no CPU device found");
    printf("cpu_devices: %d CPU devices, %d failures\n", used, g_failures);
    return g_failures ? 1 : 0;
}
