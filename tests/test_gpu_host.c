/*
 * test_gpu_host.c - the vendor-neutral host side of kmux's own GPU kernels (backends/gpu), no
 * vendor runtime needed:
 *   - the C helpers agree with the host functions of the .cu files (the emulated build of
 *     kernels/gpu, kmux_gpu_emu): kmux_gpu_host_pick_tile with kmux_gpu_pick_tile,
 *     kmux_gpu_host_gemm_name with kmux_gpu_gemm_name, kmux_gpu_host_conv2d_name with
 *     kmux_gpu_conv2d_name, over dtypes, directions, layouts, sizes, tiles and buffer sizes;
 *   - kmux_gpu_host_kernel_name_at enumerates distinct names, each kernel of every module;
 *   - the launch logic on a recording launcher: kernel, grid and block of each launch, amax zeroed
 *     before it, empty problems launching nothing, grid limits refused before any side effect.
 * (That every name is a symbol of the compiled kernels: test_hip_bundle.)
 */
#include <criterion/criterion.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "gpu_kernels.h"
#include "kmux_dtype_desc.h"
#include "kmux_gpu_kernels.h"

/* ---- a recording launcher ---- */

typedef struct record {
    int launches, memsets, errors;
    kmux_gpu_module_id mod;
    char name[256];
    unsigned grid[3], block;
    void *memset_dst;
    int memset_before_launch; /* a memset came before the (last) launch */
    kmux_status last_error;
    char message[512];
} record;

static record rec;

static kmux_status rec_set_error(kmux_status s, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
static kmux_status rec_set_error(kmux_status s, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(rec.message, sizeof rec.message, fmt, ap);
    va_end(ap);
    rec.errors++;
    rec.last_error = s;
    return s;
}

static void rec_trace(int level, const char *fmt, ...) {
    (void)level, (void)fmt;
}

static const kmux_backend_host host = {sizeof host, rec_set_error, rec_trace, 0, 1, NULL};

static kmux_status rec_launch(const kmux_gpu_launcher *l, kmux_gpu_module_id mod, const char *name,
                              const unsigned grid[3], unsigned block, void **params,
                              const char *what) {
    (void)l, (void)params, (void)what;
    rec.launches++;
    rec.mod = mod;
    snprintf(rec.name, sizeof rec.name, "%s", name);
    memcpy(rec.grid, grid, sizeof rec.grid);
    rec.block = block;
    rec.memset_before_launch = rec.memsets > 0;
    return KMUX_OK;
}

static kmux_status rec_memset(const kmux_gpu_launcher *l, void *dst, int value, size_t bytes,
                              const char *what) {
    (void)l, (void)what;
    cr_expect(value == 0 && bytes == sizeof(float));
    rec.memsets++;
    rec.memset_dst = dst;
    return KMUX_OK;
}

static kmux_gpu_launcher launcher(void) {
    memset(&rec, 0, sizeof rec);
    kmux_gpu_launcher l = {NULL, NULL, 0, "test", &host, rec_launch, rec_memset};
    return l;
}

/* ---- the C helpers against the .cu host functions ---- */

static const kmux_dtype all_types[] = {
    KMUX_F64, KMUX_F32,     KMUX_F16,     KMUX_BF16,         KMUX_I8,
    KMUX_I32, KMUX_F8_E4M3, KMUX_F8_E5M2, KMUX_F8_E4M3_FNUZ, KMUX_F8_E5M2_FNUZ};
#define NTYPES ((int)(sizeof all_types / sizeof all_types[0]))

Test(gpu_host, tile_count_and_pick_tile_match_the_kernels) {
    cr_assert_eq(kmux_gpu_host_tile_count(), kmux_gpu_tile_count());
    cr_assert_eq(kmux_gpu_host_tile_count(), KMUX_GPU_TILE_COUNT);
    for (int t = 0; t < kmux_gpu_host_tile_count(); t++)
        cr_expect_eq(kmux_gpu_host_tile_threads(t), 256u, "tile %d", t);
    cr_expect_null(kmux_gpu_host_tile_at(-1));
    cr_expect_null(kmux_gpu_host_tile_at(KMUX_GPU_TILE_COUNT));
    static const int archs[] = {0, 80, 86, 89, 90, 942};
    static const int64_t sizes[] = {0, 1, 15, 16, 63, 64, 65, 255, 256, 1024, 1 << 20, INT32_MAX};
    const int ns = (int)(sizeof sizes / sizeof sizes[0]);
    for (int a = 0; a < (int)(sizeof archs / sizeof archs[0]); a++)
        for (int i = 0; i < ns; i++)
            for (int j = 0; j < ns; j++)
                cr_expect_eq(kmux_gpu_host_pick_tile(archs[a], sizes[i], sizes[j]),
                             kmux_gpu_pick_tile(archs[a], sizes[i], sizes[j]),
                             "arch %d, %lld x %lld", archs[a], (long long)sizes[i],
                             (long long)sizes[j]);
}

Test(gpu_host, gemm_names_match_the_kernels) {
    static const size_t bufs[] = {0, 1, 16, 40, 41, 42, 43, 44, 45, 46, 47, 48, 50, 60, 128};
    for (int a = 0; a < NTYPES; a++)
        for (int b = 0; b < NTYPES; b++)
            for (int c = 0; c < NTYPES; c++)
                for (int tile = -1; tile <= KMUX_GPU_TILE_COUNT; tile++)
                    for (int k = 0; k < (int)(sizeof bufs / sizeof bufs[0]); k++) {
                        kmux_matmul_desc d = KMUX_MATMUL_DESC_INIT;
                        d.a_type = all_types[a], d.b_type = all_types[b];
                        d.c_type = all_types[c];
                        char x[128], y[128];
                        memset(x, 'x', sizeof x);
                        memset(y, 'x', sizeof y);
                        int rx = kmux_gpu_host_gemm_name(&d, tile, x, bufs[k]);
                        int ry = kmux_gpu_gemm_name(&d, tile, y, bufs[k]);
                        cr_assert_eq(rx, ry, "tile %d, buffer %zu", tile, bufs[k]);
                        if (rx == 0) cr_assert_str_eq(x, y);
                    }
}

Test(gpu_host, conv2d_names_and_tiles_match_the_kernels) {
    static const kmux_conv_direction dirs[] = {KMUX_CONV_FWD, KMUX_CONV_BWD_DATA,
                                               KMUX_CONV_BWD_WEIGHTS};
    static const kmux_layout layouts[] = {KMUX_NCHW, KMUX_NHWC};
    static const size_t bufs[] = {0, 8, 40, 48, 52, 56, 60, 128};
    for (int t = 0; t < NTYPES; t++)
        for (int di = 0; di < 3; di++)
            for (int li = 0; li < 2; li++)
                for (int tile = -1; tile <= KMUX_GPU_TILE_COUNT; tile++)
                    for (int k = 0; k < (int)(sizeof bufs / sizeof bufs[0]); k++) {
                        kmux_conv2d_desc d = KMUX_CONV2D_DESC_INIT;
                        d.direction = dirs[di];
                        d.layout = layouts[li];
                        d.x_type = d.w_type = d.y_type = all_types[t];
                        char x[128], y[128];
                        int rx = kmux_gpu_host_conv2d_name(&d, tile, x, bufs[k]);
                        int ry = kmux_gpu_conv2d_name(&d, tile, y, bufs[k]);
                        cr_assert_eq(rx, ry, "tile %d, buffer %zu", tile, bufs[k]);
                        if (rx == 0) cr_assert_str_eq(x, y);
                    }
    /* the tile of the implicit GEMM: small and large problems of each direction */
    static const int64_t nchw[][4] = {{1, 1, 1, 1}, {2, 8, 9, 9}, {32, 64, 56, 56}};
    for (int di = 0; di < 3; di++)
        for (int s = 0; s < 3; s++) {
            kmux_conv2d_desc d = KMUX_CONV2D_DESC_INIT;
            d.direction = dirs[di];
            d.n = nchw[s][0], d.c = nchw[s][1], d.h = nchw[s][2], d.w = nchw[s][3];
            d.k = 64, d.r = d.s = 3;
            d.compute_type = s == 1 ? KMUX_COMPUTE_F64 : KMUX_COMPUTE_F32;
            const int64_t p = d.h - 2, q = d.w - 2; /* 3x3, no padding, stride 1 */
            const int64_t m = di == 0 ? d.n * p * q : di == 1 ? d.n * d.h * d.w : d.k;
            const int64_t n = di == 0 ? d.k : di == 1 ? d.c : d.c * 9;
            cr_expect_eq(kmux_gpu_host_conv2d_pick_tile(942, &d), kmux_gpu_pick_tile(942, m, n),
                         "direction %d, shape %d", di, s);
        }
}

Test(gpu_host, kernel_names_are_distinct_and_cover_every_kernel) {
    char names[512][256];
    int n = 0;
    for (; n < 512 && kmux_gpu_host_kernel_name_at(n, names[n], sizeof names[n]); n++)
        cr_assert(strncmp(names[n], "_ZN10kmux_gpu_k", 15) == 0 ||
                      strncmp(names[n], "kmux_gpu_", 9) == 0, /* the families' extern "C" */
                  "%s", names[n]);
    cr_assert_lt(n, 512);
    /* 8 x 8 casts, 8 amax, 4 unscale, 2 scalar updates, 13 pairs x 2 tiles of GEMM,
     * 4 dtypes x 3 directions x 2 tiles of convolution, 3 post kernels and pack bytes, the
     * element-wise and optimizer families' one kernel each, the softmax family's two, the
     * binary, reduction and pooling families' one each */
    cr_expect_eq(n, 64 + 8 + 4 + 2 + 26 + 24 + 4 + 2 + 2 + 3);
    for (int i = 0; i < n; i++)
        for (int j = i + 1; j < n; j++)
            cr_assert(strcmp(names[i], names[j]) != 0, "%d and %d: %s", i, j, names[i]);
    char buf[256];
    cr_expect_null(kmux_gpu_host_kernel_name_at(-1, buf, sizeof buf));
    const char *expect[] = {KMUX_GPU_NAME_LOSS_SCALE, KMUX_GPU_NAME_FP8_SCALE,
                            KMUX_GPU_NAME_POST_F64,   KMUX_GPU_NAME_POST_F32,
                            KMUX_GPU_NAME_POST_I32,   KMUX_GPU_NAME_PACK_BYTES};
    for (int e = 0; e < (int)(sizeof expect / sizeof expect[0]); e++) {
        int found = 0;
        for (int i = 0; i < n; i++)
            found |= strcmp(names[i], expect[e]) == 0;
        cr_expect(found, "%s not listed", expect[e]);
    }
}

/* ---- the launch logic ---- */

Test(gpu_host, elementwise_launches) {
    kmux_gpu_launcher l = launcher();
    float amax;
    _Alignas(16) float src[4] = {0};
    cr_assert_eq(kmux_gpu_host_cast(&l, 1 << 20, src, KMUX_F32, src, KMUX_F16, 0, NULL, &amax),
                 KMUX_OK);
    cr_expect_eq(rec.mod, KMUX_GPU_MOD_CAST);
    char want[256];
    snprintf(want, sizeof want, KMUX_GPU_NAME_CAST, (int)KMUX_F32, (int)KMUX_F16);
    cr_expect_str_eq(rec.name, want);
    cr_expect(rec.memset_before_launch && rec.memset_dst == &amax);
    cr_expect_eq(rec.grid[0], 1024u); /* float4: 2^20 / (256 * 4) */
    cr_expect(rec.grid[1] == 1 && rec.grid[2] == 1 && rec.block == 256);

    l = launcher();
    cr_assert_eq(kmux_gpu_host_amax(&l, 0, src, KMUX_BF16, &amax), KMUX_OK);
    cr_expect(rec.memsets == 1 && rec.launches == 0, "n = 0: *amax = 0, no launch");

    l = launcher();
    cr_assert_eq(kmux_gpu_host_unscale(&l, (int64_t)1 << 40, src, KMUX_F64, src, src), KMUX_OK);
    cr_expect_eq(rec.mod, KMUX_GPU_MOD_AMP);
    cr_expect_eq(rec.grid[0], 8192u, "capped at KMUX_GPU_MAX_BLOCKS");

    l = launcher();
    cr_expect_eq(kmux_gpu_host_cast(&l, 4, src, KMUX_I8, src, KMUX_F32, 0, NULL, &amax),
                 KMUX_ERR_UNSUPPORTED);
    cr_expect(rec.launches == 0 && rec.memsets == 0 && strstr(rec.message, "test: kmux_cast"), "%s",
              rec.message);

    l = launcher();
    cr_assert_eq(kmux_gpu_host_loss_scale(&l, src, NULL, src, 2.0, 0.5, 100), KMUX_OK);
    cr_expect_str_eq(rec.name, KMUX_GPU_NAME_LOSS_SCALE);
    cr_expect(rec.grid[0] == 1 && rec.block == 1);
}

Test(gpu_host, gemm_grid_limits_and_amax) {
    const float one = 1.0f, zero = 0.0f;
    float amax;
    kmux_matmul_desc d = KMUX_MATMUL_DESC_INIT;
    d.m = 1000, d.n = 64 * 70000, d.k = 8, d.batch_count = 100000;
    kmux_matmul_args a = KMUX_MATMUL_ARGS_INIT;
    a.alpha = &one, a.beta = &zero, a.amax_d = &amax;
    kmux_gpu_launcher l = launcher();
    cr_assert_eq(kmux_gpu_host_gemm(&l, &d, &a, 0), KMUX_OK);
    char want[256];
    kmux_gpu_host_gemm_kernel_name(KMUX_F32, KMUX_F32, 0, want, sizeof want);
    cr_expect_str_eq(rec.name, want);
    cr_expect_eq(rec.mod, KMUX_GPU_MOD_GEMM);
    cr_expect(rec.grid[0] == 16 && rec.grid[1] == 65535 && rec.grid[2] == 65535, "%u %u %u",
              rec.grid[0], rec.grid[1], rec.grid[2]);
    cr_expect(rec.block == 256 && rec.memset_before_launch);

    d.m = (int64_t)64 * INT32_MAX + 1; /* one row tile too many */
    l = launcher();
    cr_expect_eq(kmux_gpu_host_gemm(&l, &d, &a, 0), KMUX_ERR_UNSUPPORTED);
    cr_expect(rec.launches == 0 && rec.memsets == 0, "refused before any side effect");
    cr_expect(strstr(rec.message, "more than a grid's x dimension") != NULL, "%s", rec.message);

    d.m = 0;
    l = launcher();
    cr_expect_eq(kmux_gpu_host_gemm(&l, &d, &a, 0), KMUX_OK);
    cr_expect(rec.launches == 0 && rec.memsets == 0, "empty: amax_d untouched");

    d.m = 4, d.a_type = KMUX_F8_E4M3, d.b_type = KMUX_F8_E4M3_FNUZ;
    l = launcher();
    cr_expect_eq(kmux_gpu_host_gemm(&l, &d, &a, 0), KMUX_ERR_UNSUPPORTED);
    d.a_type = d.b_type = KMUX_F32;
    cr_expect_eq(kmux_gpu_host_gemm(&l, &d, &a, 7), KMUX_ERR_INTERNAL);
}

Test(gpu_host, conv2d_grid) {
    const float one = 1.0f, zero = 0.0f;
    kmux_conv2d_desc d = KMUX_CONV2D_DESC_INIT;
    d.n = 2, d.c = 8, d.h = d.w = 9, d.k = 16, d.r = d.s = 3, d.groups = 2;
    kmux_conv2d_args a = KMUX_CONV2D_ARGS_INIT;
    a.alpha = &one, a.beta = &zero;
    kmux_gpu_launcher l = launcher();
    cr_assert_eq(kmux_gpu_host_conv2d(&l, &d, &a, 1), KMUX_OK);
    char want[256];
    kmux_gpu_host_conv_kernel_name(KMUX_F32, KMUX_CONV_FWD, 1, want, sizeof want);
    cr_expect_str_eq(rec.name, want);
    cr_expect_eq(rec.mod, KMUX_GPU_MOD_CONV);
    /* m = 2 * 7 * 7 = 98 rows: 4 tiles of 32; n = 8 filters per group: 1 tile; 2 groups */
    cr_expect(rec.grid[0] == 4 && rec.grid[1] == 1 && rec.grid[2] == 2 && rec.block == 256);
    d.x_type = KMUX_I8;
    l = launcher();
    cr_expect_eq(kmux_gpu_host_conv2d(&l, &d, &a, 1), KMUX_ERR_UNSUPPORTED);
    cr_expect_eq(rec.launches, 0);
}

Test(gpu_host, post_and_pack_bytes) {
    float amax;
    kmux_gpu_post_args p;
    memset(&p, 0, sizeof p);
    p.rows = 1000, p.cols = 1000, p.batch = 100, p.ldd = 1000, p.amax = &amax;
    static const struct {
        kmux_dtype d;
        const char *name;
    } cases[] = {{KMUX_F64, KMUX_GPU_NAME_POST_F64},
                 {KMUX_F32, KMUX_GPU_NAME_POST_F32},
                 {KMUX_F16, KMUX_GPU_NAME_POST_F32},
                 {KMUX_BF16, KMUX_GPU_NAME_POST_F32},
                 {KMUX_I32, KMUX_GPU_NAME_POST_I32}};
    for (int i = 0; i < (int)(sizeof cases / sizeof cases[0]); i++) {
        p.d_type = cases[i].d;
        kmux_gpu_launcher l = launcher();
        cr_assert_eq(kmux_gpu_host_post(&l, &p), KMUX_OK);
        cr_expect_str_eq(rec.name, cases[i].name);
        cr_expect(rec.mod == KMUX_GPU_MOD_POST && rec.memset_before_launch);
        cr_expect(rec.grid[0] == 65535 && rec.block == 256, "%u", rec.grid[0]);
    }
    p.d_type = KMUX_F16, p.bias = &amax, p.bias_type = KMUX_BF16;
    kmux_gpu_launcher l = launcher();
    cr_expect_eq(kmux_gpu_host_post(&l, &p), KMUX_ERR_UNSUPPORTED);
    p.d_type = KMUX_I8, p.bias = NULL;
    cr_expect_eq(kmux_gpu_host_post(&l, &p), KMUX_ERR_UNSUPPORTED);
    p.rows = 0;
    l = launcher();
    cr_expect_eq(kmux_gpu_host_post(&l, &p), KMUX_OK);
    cr_expect(rec.memsets == 1 && rec.launches == 0, "amax zeroed first, as kmux_gpu_post_launch");

    char src[64] = {0}, dst[64];
    l = launcher();
    cr_assert_eq(kmux_gpu_host_pack_bytes(&l, src, 3, 5, 5, 1, 15, dst, 16, 80, 1), KMUX_OK);
    cr_expect_str_eq(rec.name, KMUX_GPU_NAME_PACK_BYTES);
    cr_expect(rec.grid[0] == 1 && rec.block == 256);
    l = launcher();
    cr_assert_eq(kmux_gpu_host_pack_bytes(&l, src, 3, 0, 5, 1, 15, dst, 16, 80, 1), KMUX_OK);
    cr_expect_eq(rec.launches, 0);
}
