/*
 * hip_kernels.c - the launch logic of kernels/gpu for module launches: which kernel (by its
 * mangled name in the code object), which grid, which arguments. It mirrors the extern "C"
 * launchers of kmux_gpu_cast.cu and kmux_gpu_amp.cu (kmux_gpu_kernels.h), which cannot be used
 * here: they launch with <<<>>>, which needs the HIP runtime at link time.
 *
 * The kernels live in an anonymous namespace and are templates on the dtype (its kmux_dtype
 * value), so their names are the Itanium manglings below. test_hip_kernel_names checks every
 * name this file can produce against the symbols of the embedded gfx942 code object, so a
 * changed kernel signature fails CI instead of a launch on an MI300.
 */
#include <stdio.h>

#include "dispatch/common/kmux_dtype_desc.h"
#include "hip_backend.h"
#include "hip_kernel_names.h"

/* Mirrors kmux_gpu_vendor.h */
#define BLOCK 256
#define MAX_BLOCKS 8192

static int in(const kmux_dtype *set, int n, kmux_dtype t) {
    for (int i = 0; i < n; i++)
        if (set[i] == t) return 1;
    return 0;
}

static unsigned blocks_for(int64_t n, int per_thread) {
    int64_t b = (n + (int64_t)BLOCK * per_thread - 1) / ((int64_t)BLOCK * per_thread);
    if (b < 1) b = 1;
    if (b > MAX_BLOCKS) b = MAX_BLOCKS;
    return (unsigned)b;
}

static kmux_status bad_type(kmux_hip_state *st, const char *what, kmux_dtype t) {
    return st->host->set_error(KMUX_ERR_UNSUPPORTED, "hip: %s: no kernel for dtype %s", what,
                               kmux_dtype_desc_of(t).name);
}

/* *amax = +0 before the kernels merge into it with atomicMax */
static kmux_status zero_amax(kmux_hip_state *st, const kmux_hip_stream_t *s, float *amax,
                             const char *what) {
    kmux_hip_error e = st->api.hipMemsetAsync(amax, 0, sizeof(float), s->stream);
    if (e != KMUX_HIP_SUCCESS)
        return kmux_hip_fail(st, e, "%s: hipMemsetAsync(amax) on hip:%d", what, s->device);
    return KMUX_OK;
}

kmux_status kmux_hip_k_cast(kmux_hip_state *st, const kmux_hip_stream_t *s, int64_t n,
                            const void *src, kmux_dtype st_, void *dst, kmux_dtype dt, int saturate,
                            const float *scale, float *amax) {
    const char *what = "kmux_cast";
    if (!in(cast_types, NCAST, st_)) return bad_type(st, what, st_);
    if (!in(cast_types, NCAST, dt)) return bad_type(st, what, dt);
    if (amax) {
        kmux_status ks = zero_amax(st, s, amax, what);
        if (ks != KMUX_OK) return ks;
    }
    if (n <= 0) return KMUX_OK;
    int vec4 = st_ == KMUX_F32 && ((uintptr_t)src & 15u) == 0;
    char name[128];
    snprintf(name, sizeof name, NAME_CAST, (int)st_, (int)dt);
    void *p[] = {&n, (void *)&src, &dst, &saturate, (void *)&scale, &amax, &vec4};
    return kmux_hip_launch(st, s, KMUX_HIP_MOD_CAST, name, blocks_for(n, vec4 ? 4 : 1), BLOCK, p,
                           what);
}

kmux_status kmux_hip_k_amax(kmux_hip_state *st, const kmux_hip_stream_t *s, int64_t n,
                            const void *x, kmux_dtype t, float *amax) {
    const char *what = "kmux_amax";
    if (!in(cast_types, NCAST, t)) return bad_type(st, what, t);
    kmux_status ks = zero_amax(st, s, amax, what);
    if (ks != KMUX_OK || n <= 0) return ks;
    char name[128];
    snprintf(name, sizeof name, NAME_AMAX, (int)t);
    void *p[] = {&n, (void *)&x, &amax};
    return kmux_hip_launch(st, s, KMUX_HIP_MOD_CAST, name, blocks_for(n, 4), BLOCK, p, what);
}

kmux_status kmux_hip_k_unscale(kmux_hip_state *st, const kmux_hip_stream_t *s, int64_t n, void *x,
                               kmux_dtype t, const float *inv_scale, float *found_inf) {
    const char *what = "kmux_unscale_check_finite";
    if (!in(unscale_types, NUNSCALE, t)) return bad_type(st, what, t);
    if (n <= 0) return KMUX_OK;
    char name[128];
    snprintf(name, sizeof name, NAME_UNSCALE, (int)t);
    void *p[] = {&n, &x, (void *)&inv_scale, &found_inf};
    return kmux_hip_launch(st, s, KMUX_HIP_MOD_AMP, name, blocks_for(n, 1), BLOCK, p, what);
}

kmux_status kmux_hip_k_loss_scale(kmux_hip_state *st, const kmux_hip_stream_t *s, float *scale,
                                  int32_t *growth_tracker, const float *found_inf,
                                  double growth_factor, double backoff_factor,
                                  int64_t growth_interval) {
    void *p[] = {&scale,         &growth_tracker, (void *)&found_inf,
                 &growth_factor, &backoff_factor, &growth_interval};
    return kmux_hip_launch(st, s, KMUX_HIP_MOD_AMP, NAME_LOSS_SCALE, 1, 1, p,
                           "kmux_loss_scale_update");
}

kmux_status kmux_hip_k_fp8_scale(kmux_hip_state *st, const kmux_hip_stream_t *s,
                                 const float *amax_history, int64_t history_len, double fmax,
                                 double margin, float *scale) {
    void *p[] = {(void *)&amax_history, &history_len, &fmax, &margin, &scale};
    return kmux_hip_launch(st, s, KMUX_HIP_MOD_AMP, NAME_FP8_SCALE, 1, 1, p,
                           "kmux_fp8_scale_update");
}
