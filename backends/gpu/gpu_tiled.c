/*
 * gpu_tiled.c - module launches of the tiled kernels of kmux_gpu_gemm.cu (gemm_kernel) and
 * kmux_gpu_conv.cu (conv_kernel, the implicit GEMM), their tile choice and implementation names:
 * the argument structs (kmux_gpu_gemm_params.h, kmux_gpu_conv_params.h, shared with the device
 * code) by value in kernelParams, filled by the functions kmux_gpu_gemm / kmux_gpu_conv2d use;
 * grid x = tiles of the rows, y = tiles of the columns, z = batch matrices or groups, y and z
 * capped at 65535 with the kernels looping beyond (kmux_gpu_tile_grid).
 */
#include <stdio.h>
#include <string.h>

#include "gpu_kernels.h"
#include "kmux_dtype_desc.h"
#include "kmux_gpu_conv_params.h"
#include "kmux_gpu_gemm_params.h"

int kmux_gpu_host_pick_tile(int arch, int64_t m, int64_t n) {
    (void)arch; /* every current target (sm_80..sm_90, gfx942) prefers the large tile */
    return m * n >= (int64_t)64 * 64 * 16 ? 0 : 1;
}

int kmux_gpu_host_conv2d_pick_tile(int arch, const kmux_conv2d_desc *d) {
    kmux_gpu_conv_params q;
    memset(&q, 0, sizeof q);
    kmux_conv2d_args none;
    memset(&none, 0, sizeof none);
    const double one_d = 1.0;
    const float one_f = 1.0f; /* the scalars are read in the compute type: only sizes are used */
    none.alpha = none.beta = d->compute_type == KMUX_COMPUTE_F64 ? (const void *)&one_d : &one_f;
    kmux_gpu_conv_params_fill(&q, d, &none);
    int64_t gm, gn, gk;
    kmux_gpu_conv_gemm_dims(&q, d->direction, &gm, &gn, &gk);
    return kmux_gpu_host_pick_tile(arch, gm, gn);
}

/* "64x64x16/4x4" of kmux_gpu_tile_label; 0 for an unknown tile or a buffer too small. */
static int tile_label(int tile, char *buf, size_t size) {
    const kmux_gpu_host_tile_shape *t = kmux_gpu_host_tile_at(tile);
    if (!t) return 0;
    const int r = snprintf(buf, size, "%dx%dx%d/%dx%d", t->bm, t->bn, t->bk, t->tm, t->tn);
    return r >= 0 && (size_t)r < size;
}

int kmux_gpu_host_gemm_name(const kmux_matmul_desc *d, int tile, char *buf, size_t size) {
    char t[48];
    if (!tile_label(tile, t, sizeof t)) return -1;
    const char *acc = d->a_type == KMUX_F64 ? "f64" : d->a_type == KMUX_I8 ? "i32" : "f32";
    int r = snprintf(buf, size, "kmux-gpu:gemm:%s*%s->%s:acc=%s:tile=%s",
                     kmux_dtype_desc_of(d->a_type).name, kmux_dtype_desc_of(d->b_type).name,
                     kmux_dtype_desc_of(d->c_type).name, acc, t);
    return r < 0 || (size_t)r >= size ? -1 : 0;
}

int kmux_gpu_host_conv2d_name(const kmux_conv2d_desc *d, int tile, char *buf, size_t size) {
    char t[48];
    if (!tile_label(tile, t, sizeof t)) return -1;
    const char *dir = d->direction == KMUX_CONV_FWD        ? "fwd"
                      : d->direction == KMUX_CONV_BWD_DATA ? "bwd_data"
                                                           : "bwd_weights";
    int r = snprintf(buf, size, "kmux-gpu:conv2d:%s:%s:%s:acc=%s:tile=%s", dir,
                     d->layout == KMUX_NHWC ? "nhwc" : "nchw", kmux_dtype_desc_of(d->x_type).name,
                     d->x_type == KMUX_F64 ? "f64" : "f32", t);
    return r < 0 || (size_t)r >= size ? -1 : 0;
}

/* kmux_gpu_tile_grid: the grid of an m x n output over `layers`; 0 when m needs more row tiles
 * than a grid's x dimension holds (2^31 - 1), with the row tiles in *gx. */
static int tile_grid(const kmux_gpu_host_tile_shape *t, int64_t m, int64_t n, int64_t layers,
                     unsigned grid[3], int64_t *gx) {
    const int64_t cap = KMUX_GPU_HOST_MAX_GRID_YZ;
    *gx = (m + t->bm - 1) / t->bm;
    const int64_t gy = (n + t->bn - 1) / t->bn;
    if (*gx > INT32_MAX) return 0;
    grid[0] = (unsigned)*gx;
    grid[1] = (unsigned)(gy < cap ? gy : cap);
    grid[2] = (unsigned)(layers < cap ? layers : cap);
    return 1;
}

static kmux_status bad_tile(const kmux_gpu_launcher *l, const char *what, int tile) {
    return l->host->set_error(KMUX_ERR_INTERNAL, "%s: %s on %s:%d: no tile configuration %d",
                              l->vendor, what, l->vendor, l->device, tile);
}

kmux_status kmux_gpu_host_gemm(const kmux_gpu_launcher *l, const kmux_matmul_desc *d,
                               const kmux_matmul_args *a, int tile) {
    const char *what = "kmux_matmul_execute";
    const kmux_gpu_host_tile_shape *t = kmux_gpu_host_tile_at(tile);
    if (!t) return bad_tile(l, what, tile);
    if (d->m == 0 || d->n == 0 || d->batch_count == 0) return KMUX_OK; /* as kmux.h says */
    if (!kmux_gpu_host_gemm_has_kernel(d->a_type, d->b_type))
        return l->host->set_error(KMUX_ERR_UNSUPPORTED,
                                  "%s: %s on %s:%d: no gemm_kernel for %s x %s", l->vendor, what,
                                  l->vendor, l->device, kmux_dtype_desc_of(d->a_type).name,
                                  kmux_dtype_desc_of(d->b_type).name);
    unsigned grid[3];
    int64_t gx;
    if (!tile_grid(t, d->m, d->n, d->batch_count, grid, &gx))
        return l->host->set_error(KMUX_ERR_UNSUPPORTED,
                                  "%s: %s on %s:%d: m = %lld needs %lld row tiles, more than a "
                                  "grid's x dimension (2^31 - 1)",
                                  l->vendor, what, l->vendor, l->device, (long long)d->m,
                                  (long long)gx);
    if (a->amax_d) { /* the kernel merges into *amax_d with atomicMax: start from +0 */
        kmux_status ks = l->memset_async(l, a->amax_d, 0, sizeof(float), what);
        if (ks != KMUX_OK) return ks;
    }
    kmux_gpu_gemm_params p;
    memset(&p, 0, sizeof p);
    kmux_gpu_gemm_params_fill(&p, d, a);
    char name[160];
    kmux_gpu_host_gemm_kernel_name(d->a_type, d->b_type, tile, name, sizeof name);
    void *params[] = {&p};
    return l->launch(l, KMUX_GPU_MOD_GEMM, name, grid, kmux_gpu_host_tile_threads(tile), params,
                     what);
}

kmux_status kmux_gpu_host_conv2d(const kmux_gpu_launcher *l, const kmux_conv2d_desc *d,
                                 const kmux_conv2d_args *a, int tile) {
    const char *what = "kmux_conv2d_execute";
    const kmux_gpu_host_tile_shape *t = kmux_gpu_host_tile_at(tile);
    if (!t) return bad_tile(l, what, tile);
    if (d->w_type != d->x_type || d->y_type != d->x_type || !kmux_gpu_host_conv_type(d->x_type))
        return l->host->set_error(
            KMUX_ERR_UNSUPPORTED, "%s: %s on %s:%d: no conv_kernel for x %s, w %s, y %s", l->vendor,
            what, l->vendor, l->device, kmux_dtype_desc_of(d->x_type).name,
            kmux_dtype_desc_of(d->w_type).name, kmux_dtype_desc_of(d->y_type).name);
    kmux_gpu_conv_params q;
    memset(&q, 0, sizeof q);
    kmux_gpu_conv_params_fill(&q, d, a);
    int64_t gm, gn, gk;
    kmux_gpu_conv_gemm_dims(&q, d->direction, &gm, &gn, &gk);
    if (gm == 0 || gn == 0 || q.groups == 0) return KMUX_OK; /* an empty output */
    unsigned grid[3];
    int64_t gx;
    if (!tile_grid(t, gm, gn, q.groups, grid, &gx))
        return l->host->set_error(KMUX_ERR_UNSUPPORTED,
                                  "%s: %s on %s:%d: the implicit GEMM has %lld rows (%lld row "
                                  "tiles), more than a grid's x dimension (2^31 - 1)",
                                  l->vendor, what, l->vendor, l->device, (long long)gm,
                                  (long long)gx);
    char name[160];
    kmux_gpu_host_conv_kernel_name(d->x_type, d->direction, tile, name, sizeof name);
    void *params[] = {&q};
    return l->launch(l, KMUX_GPU_MOD_CONV, name, grid, kmux_gpu_host_tile_threads(tile), params,
                     what);
}
