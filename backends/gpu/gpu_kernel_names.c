/*
 * gpu_kernel_names.c - the instantiation tables and mangled names of gpu_kernel_names.h (no
 * vendor call: the name test links this file alone).
 */
#include "gpu_kernel_names.h"
#include "kmux_gpu_eltwise_params.h"
#include "kmux_gpu_optimizer_params.h"

#include <stdio.h>

/* The (A, B) pairs gemm_kernel is instantiated for (kmux_gpu_gemm.cu's launch()). */
static const kmux_dtype gemm_pairs[][2] = {
    {KMUX_F64, KMUX_F64},
    {KMUX_F32, KMUX_F32},
    {KMUX_F16, KMUX_F16},
    {KMUX_BF16, KMUX_BF16},
    {KMUX_I8, KMUX_I8},
    {KMUX_F8_E4M3, KMUX_F8_E4M3},
    {KMUX_F8_E4M3, KMUX_F8_E5M2},
    {KMUX_F8_E5M2, KMUX_F8_E4M3},
    {KMUX_F8_E5M2, KMUX_F8_E5M2},
    {KMUX_F8_E4M3_FNUZ, KMUX_F8_E4M3_FNUZ},
    {KMUX_F8_E4M3_FNUZ, KMUX_F8_E5M2_FNUZ},
    {KMUX_F8_E5M2_FNUZ, KMUX_F8_E4M3_FNUZ},
    {KMUX_F8_E5M2_FNUZ, KMUX_F8_E5M2_FNUZ},
};
#define NGEMM ((int)(sizeof gemm_pairs / sizeof gemm_pairs[0]))

/* KMUX_GPU_TILES of kmux_gpu_tile.cuh (BM, BN, BK, TM, TN) */
static const kmux_gpu_host_tile_shape tiles[] = {{64, 64, 16, 4, 4}, {32, 32, 8, 2, 2}};
#define NTILES ((int)(sizeof tiles / sizeof tiles[0]))

/* The floating dtypes of kmux_gpu_cast.cu's switches. */
static const kmux_dtype cast_types[] = {KMUX_F64,          KMUX_F32,         KMUX_F16,
                                        KMUX_BF16,         KMUX_F8_E4M3,     KMUX_F8_E5M2,
                                        KMUX_F8_E4M3_FNUZ, KMUX_F8_E5M2_FNUZ};
#define NCAST ((int)(sizeof cast_types / sizeof cast_types[0]))
/* kmux_gpu_amp.cu's unscale switch, and kmux_gpu_conv.cu's dtypes: the same four */
static const kmux_dtype wide_types[] = {KMUX_F64, KMUX_F32, KMUX_F16, KMUX_BF16};
#define NWIDE ((int)(sizeof wide_types / sizeof wide_types[0]))
#define NDIRS 3 /* KMUX_CONV_FWD, KMUX_CONV_BWD_DATA, KMUX_CONV_BWD_WEIGHTS: 1, 2, 3 */

/* The kernels of kmux_gpu_post.cu, in the order kmux_gpu_host_kernel_name_at lists them. */
static const char *const post_names[] = {KMUX_GPU_NAME_POST_F64, KMUX_GPU_NAME_POST_F32,
                                         KMUX_GPU_NAME_POST_I32, KMUX_GPU_NAME_PACK_BYTES};
#define NPOST ((int)(sizeof post_names / sizeof post_names[0]))

static int in(const kmux_dtype *set, int n, kmux_dtype t) {
    for (int i = 0; i < n; i++)
        if (set[i] == t) return 1;
    return 0;
}

int kmux_gpu_host_tile_count(void) {
    return NTILES;
}

const kmux_gpu_host_tile_shape *kmux_gpu_host_tile_at(int tile) {
    return tile >= 0 && tile < NTILES ? &tiles[tile] : NULL;
}

unsigned kmux_gpu_host_tile_threads(int tile) {
    const kmux_gpu_host_tile_shape *t = kmux_gpu_host_tile_at(tile);
    return t ? (unsigned)((t->bm / t->tm) * (t->bn / t->tn)) : 0u;
}

int kmux_gpu_host_cast_type(kmux_dtype t) {
    return in(cast_types, NCAST, t);
}

uint32_t kmux_gpu_host_amp_dtypes(void) {
    uint32_t m = 0;
    for (int i = 0; i < NCAST; i++)
        m |= 1u << cast_types[i];
    return m;
}

int kmux_gpu_host_unscale_type(kmux_dtype t) {
    return in(wide_types, NWIDE, t);
}

int kmux_gpu_host_conv_type(kmux_dtype t) {
    return in(wide_types, NWIDE, t);
}

int kmux_gpu_host_gemm_has_kernel(kmux_dtype a, kmux_dtype b) {
    for (int i = 0; i < NGEMM; i++)
        if (gemm_pairs[i][0] == a && gemm_pairs[i][1] == b) return 1;
    return 0;
}

const char *kmux_gpu_host_gemm_kernel_name(kmux_dtype a, kmux_dtype b, int tile, char *buf,
                                           size_t size) {
    const kmux_gpu_host_tile_shape *t = kmux_gpu_host_tile_at(tile);
    if (!t) return NULL;
    const char acc = a == KMUX_F64 ? 'd' : a == KMUX_I8 ? 'i' : 'f';
    snprintf(buf, size, KMUX_GPU_NAME_GEMM, (int)a, (int)b, acc, t->bm, t->bn, t->bk, t->tm, t->tn);
    return buf;
}

const char *kmux_gpu_host_conv_kernel_name(kmux_dtype t, int dir, int tile, char *buf,
                                           size_t size) {
    const kmux_gpu_host_tile_shape *s = kmux_gpu_host_tile_at(tile);
    if (!s) return NULL;
    snprintf(buf, size, KMUX_GPU_NAME_CONV, (int)t, t == KMUX_F64 ? 'd' : 'f', dir, s->bm, s->bn,
             s->bk, s->tm, s->tn);
    return buf;
}

const char *kmux_gpu_host_kernel_name_at(int i, char *buf, size_t size) {
    if (i < 0) return NULL;
    if (i < NCAST * NCAST) {
        snprintf(buf, size, KMUX_GPU_NAME_CAST, (int)cast_types[i / NCAST],
                 (int)cast_types[i % NCAST]);
        return buf;
    }
    i -= NCAST * NCAST;
    if (i < NCAST) {
        snprintf(buf, size, KMUX_GPU_NAME_AMAX, (int)cast_types[i]);
        return buf;
    }
    i -= NCAST;
    if (i < NWIDE) {
        snprintf(buf, size, KMUX_GPU_NAME_UNSCALE, (int)wide_types[i]);
        return buf;
    }
    i -= NWIDE;
    if (i == 0) return snprintf(buf, size, "%s", KMUX_GPU_NAME_LOSS_SCALE), buf;
    if (i == 1) return snprintf(buf, size, "%s", KMUX_GPU_NAME_FP8_SCALE), buf;
    i -= 2;
    if (i < NGEMM * NTILES)
        return kmux_gpu_host_gemm_kernel_name(gemm_pairs[i / NTILES][0], gemm_pairs[i / NTILES][1],
                                              i % NTILES, buf, size);
    i -= NGEMM * NTILES;
    if (i < NWIDE * NDIRS * NTILES)
        return kmux_gpu_host_conv_kernel_name(wide_types[i / (NDIRS * NTILES)],
                                              i / NTILES % NDIRS + 1, i % NTILES, buf, size);
    i -= NWIDE * NDIRS * NTILES;
    if (i < NPOST) return snprintf(buf, size, "%s", post_names[i]), buf;
    i -= NPOST;
    if (i == 0) return snprintf(buf, size, "%s", KMUX_GPU_NAME_ELTWISE), buf;
    if (i == 1) return snprintf(buf, size, "%s", KMUX_GPU_NAME_OPTIMIZER), buf;
    if (i == 2) return snprintf(buf, size, "%s", "kmux_gpu_softmax_kernel"), buf;
    if (i == 3) return snprintf(buf, size, "%s", "kmux_gpu_softmax_mean_kernel"), buf;
    if (i == 4) return snprintf(buf, size, "%s", "kmux_gpu_binary_kernel"), buf;
    if (i == 5) return snprintf(buf, size, "%s", "kmux_gpu_reduction_kernel"), buf;
    if (i == 6) return snprintf(buf, size, "%s", "kmux_gpu_pooling_kernel"), buf;
    return NULL;
}

const char *kmux_gpu_module_name(kmux_gpu_module_id id) {
    static const char *const names[KMUX_GPU_MOD_COUNT] = {
        "cast",      "amp",     "gemm",   "conv",      "post",   "eltwise",
        "optimizer", "softmax", "binary", "reduction", "pooling"};
    return (int)id >= 0 && id < KMUX_GPU_MOD_COUNT ? names[id] : "?";
}
