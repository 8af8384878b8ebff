/*
 * cuda_matmul_post.c - launches of the post kernel (kernels/gpu/kmux_gpu_post.cu, through the
 * shared GPU host layer): after cuBLASLt (bias of a
 * column-major GEMM, the f32 temporary, d_scale and amax_d for non-fp8 outputs), and the
 * degenerate matmul slot of ABI v2 (k == 0 or alpha == 0: D = d_scale * act(beta * C + bias),
 * A and B unread), which the core calls for this non-host device. The arguments come from
 * cuda_host_logic.c (tested without a GPU).
 */
#include "cuda_matmul.h"
#include "gpu_kernels.h"

kmux_status kmux_cuda_launch_post(kmux_cuda_state *st, const kmux_cuda_stream *cs,
                                  const kmux_cuda_post_args *a) {
    const kmux_gpu_launcher l = kmux_gpu_plugin_launcher(st, cs);
    return kmux_gpu_host_post(&l, a);
}

kmux_status kmux_cuda_matmul_degenerate(void *state, void *stream, const kmux_matmul_desc *desc,
                                        const kmux_matmul_args *args) {
    kmux_cuda_state *st = state;
    kmux_cuda_stream *cs = stream;
    if (desc->epilogue & (KMUX_EPILOGUE_ALONE | KMUX_EPILOGUE_WITH_AUX)) {
        /* the post kernel has no aux or bias gradient: the own GEMM kernel, which runs k = 0
         * and alpha = 0 itself (A and B unread but for the bias gradient's sums) */
        kmux_cuda_guard g;
        kmux_status s = kmux_cuda_enter(st, cs->device, "kmux_matmul_execute", &g);
        if (s != KMUX_OK) return s;
        s = kmux_cuda_own_gemm(st, cs, desc, args, kmux_gpu_host_pick_tile(0, desc->m, desc->n));
        kmux_cuda_leave(&g);
        return s;
    }
    kmux_cuda_post_args a;
    kmux_cuda_post_degenerate_args(desc, args, &a);
    if (a.rows == 0 || a.cols == 0 || a.batch == 0) return KMUX_OK;
    kmux_cuda_guard g;
    kmux_status s = kmux_cuda_enter(st, cs->device, "kmux_matmul_execute", &g);
    if (s != KMUX_OK) return s;
    s = kmux_cuda_launch_post(st, cs, &a);
    kmux_cuda_leave(&g);
    return s;
}
