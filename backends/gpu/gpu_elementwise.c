/*
 * gpu_elementwise.c - module launches of the element-wise kernels of kmux_gpu_cast.cu (cast,
 * amax) and kmux_gpu_amp.cu (unscale, loss scale, fp8 scale): grid-stride 1-D grids of
 * KMUX_GPU_HOST_BLOCK threads, at most KMUX_GPU_HOST_MAX_BLOCKS blocks, as the launchers there.
 */
#include <stdio.h>

#include "gpu_kernels.h"
#include "kmux_dtype_desc.h"

/* kmux_gpu_cast.cu's and kmux_gpu_amp.cu's blocks_for */
static unsigned blocks_for(int64_t n, int per_thread) {
    const int64_t per_block = (int64_t)KMUX_GPU_HOST_BLOCK * per_thread;
    int64_t b = (n + per_block - 1) / per_block;
    if (b < 1) b = 1;
    if (b > KMUX_GPU_HOST_MAX_BLOCKS) b = KMUX_GPU_HOST_MAX_BLOCKS;
    return (unsigned)b;
}

/* A 1-D launch of `blocks` blocks of `threads`. */
static kmux_status launch_1d(const kmux_gpu_launcher *l, kmux_gpu_module_id mod, const char *name,
                             unsigned blocks, unsigned threads, void **params, const char *what) {
    const unsigned grid[3] = {blocks, 1, 1};
    return l->launch(l, mod, name, grid, threads, params, what);
}

static kmux_status bad_type(const kmux_gpu_launcher *l, const char *what, kmux_dtype t) {
    return l->host->set_error(KMUX_ERR_UNSUPPORTED, "%s: %s: no kernel for dtype %s", l->vendor,
                              what, kmux_dtype_desc_of(t).name);
}

/* *amax = +0 before the kernels merge into it with atomicMax */
static kmux_status zero_amax(const kmux_gpu_launcher *l, float *amax, const char *what) {
    return l->memset_async(l, amax, 0, sizeof(float), what);
}

kmux_status kmux_gpu_host_cast(const kmux_gpu_launcher *l, int64_t n, const void *src,
                               kmux_dtype src_type, void *dst, kmux_dtype dst_type, int saturate,
                               const float *scale, float *amax) {
    const char *what = "kmux_cast";
    if (!kmux_gpu_host_cast_type(src_type)) return bad_type(l, what, src_type);
    if (!kmux_gpu_host_cast_type(dst_type)) return bad_type(l, what, dst_type);
    if (amax) {
        kmux_status ks = zero_amax(l, amax, what);
        if (ks != KMUX_OK) return ks;
    }
    if (n <= 0) return KMUX_OK;
    int vec4 = src_type == KMUX_F32 && ((uintptr_t)src & 15u) == 0; /* read as float4 */
    char name[128];
    snprintf(name, sizeof name, KMUX_GPU_NAME_CAST, (int)src_type, (int)dst_type);
    void *p[] = {&n, (void *)&src, &dst, &saturate, (void *)&scale, &amax, &vec4};
    return launch_1d(l, KMUX_GPU_MOD_CAST, name, blocks_for(n, vec4 ? 4 : 1), KMUX_GPU_HOST_BLOCK,
                     p, what);
}

kmux_status kmux_gpu_host_amax(const kmux_gpu_launcher *l, int64_t n, const void *x, kmux_dtype t,
                               float *amax) {
    const char *what = "kmux_amax";
    if (!kmux_gpu_host_cast_type(t)) return bad_type(l, what, t);
    kmux_status ks = zero_amax(l, amax, what);
    if (ks != KMUX_OK || n <= 0) return ks;
    char name[128];
    snprintf(name, sizeof name, KMUX_GPU_NAME_AMAX, (int)t);
    void *p[] = {&n, (void *)&x, &amax};
    return launch_1d(l, KMUX_GPU_MOD_CAST, name, blocks_for(n, 4), KMUX_GPU_HOST_BLOCK, p, what);
}

kmux_status kmux_gpu_host_unscale(const kmux_gpu_launcher *l, int64_t n, void *x, kmux_dtype t,
                                  const float *inv_scale, float *found_inf) {
    const char *what = "kmux_unscale_check_finite";
    if (!kmux_gpu_host_unscale_type(t)) return bad_type(l, what, t);
    if (n <= 0) return KMUX_OK;
    char name[128];
    snprintf(name, sizeof name, KMUX_GPU_NAME_UNSCALE, (int)t);
    void *p[] = {&n, &x, (void *)&inv_scale, &found_inf};
    return launch_1d(l, KMUX_GPU_MOD_AMP, name, blocks_for(n, 1), KMUX_GPU_HOST_BLOCK, p, what);
}

kmux_status kmux_gpu_host_loss_scale(const kmux_gpu_launcher *l, float *scale,
                                     int32_t *growth_tracker, const float *found_inf,
                                     double growth_factor, double backoff_factor,
                                     int64_t growth_interval) {
    void *p[] = {&scale,         &growth_tracker, (void *)&found_inf,
                 &growth_factor, &backoff_factor, &growth_interval};
    return launch_1d(l, KMUX_GPU_MOD_AMP, KMUX_GPU_NAME_LOSS_SCALE, 1, 1, p,
                     "kmux_loss_scale_update");
}

kmux_status kmux_gpu_host_fp8_scale(const kmux_gpu_launcher *l, const float *amax_history,
                                    int64_t history_len, double fmax, double margin, float *scale) {
    void *p[] = {(void *)&amax_history, &history_len, &fmax, &margin, &scale};
    return launch_1d(l, KMUX_GPU_MOD_AMP, KMUX_GPU_NAME_FP8_SCALE, 1, 1, p,
                     "kmux_fp8_scale_update");
}
