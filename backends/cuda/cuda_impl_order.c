/*
 * cuda_impl_order.c - the order of a CUDA plan's implementations and the one a call runs
 * (cuda_impl_order.h). No CUDA header: tested without a GPU (tests/test_cuda_host.c).
 */
#include "cuda_impl_order.h"

#include <string.h>

#include "kmux_gpu_conv_params.h"
#include "kmux_gpu_gemm_params.h"

int kmux_cuda_own_gemm_runs(const kmux_matmul_desc *d) {
    return kmux_gpu_gemm_pair_runs(d->a_type, d->b_type);
}

int kmux_cuda_own_conv_runs(const kmux_conv2d_desc *d) {
    const kmux_dtype t = d->x_type;
    return d->w_type == t && d->y_type == t &&
           (t == KMUX_F64 || t == KMUX_F32 || t == KMUX_F16 || t == KMUX_BF16);
}

void kmux_cuda_conv_gemm_mn(const kmux_conv2d_desc *d, int64_t *m, int64_t *n) {
    static const double one_d = 1.0;
    static const float one_f = 1.0f;
    kmux_conv2d_args none;
    memset(&none, 0, sizeof none);
    none.alpha = none.beta = d->compute_type == KMUX_COMPUTE_F64 ? (const void *)&one_d : &one_f;
    kmux_gpu_conv_params q;
    kmux_gpu_conv_params_fill(&q, d, &none); /* the sizes only */
    int64_t k;
    kmux_gpu_conv_gemm_dims(&q, d->direction, m, n, &k);
}

kmux_cuda_impl_order kmux_cuda_order_of(int lib_count, int lib_native, int own_runs) {
    if (lib_count <= 0) return own_runs ? KMUX_CUDA_ORDER_OWN_ONLY : KMUX_CUDA_ORDER_NONE;
    if (!own_runs) return KMUX_CUDA_ORDER_LIB_ONLY;
    return lib_native ? KMUX_CUDA_ORDER_LIB_FIRST : KMUX_CUDA_ORDER_OWN_FIRST;
}

int kmux_cuda_own_tiles(int preferred, int tile_count, int out[8]) {
    if (tile_count <= 0) return 0;
    if (tile_count > 8) tile_count = 8;
    if (preferred < 0 || preferred >= tile_count) preferred = 0;
    int n = 0;
    out[n++] = preferred;
    for (int t = 0; t < tile_count; t++)
        if (t != preferred) out[n++] = t;
    return n;
}

int kmux_cuda_run_choice(const kmux_cuda_impl_key *keys, int n, int requested, int lib_run) {
    if (requested >= 0 && requested < n && keys[requested].cfg == KMUX_CUDA_CFG_OWN)
        return requested;
    if (lib_run >= 0 && lib_run < n) return lib_run;
    for (int i = 0; i < n; i++)
        if (keys[i].cfg == KMUX_CUDA_CFG_OWN) return i;
    return -1;
}
