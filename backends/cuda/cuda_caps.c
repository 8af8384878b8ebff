/*
 * cuda_caps.c - what the core checks once for this backend (ABI v2 kmux_device_caps), so the
 * plugin carries no size checks of its own:
 * - matmul (cuBLASLt): batch counts are int32_t (CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT); rows,
 *   columns and leading dimensions are 64-bit. Dimensions are kept to INT32_MAX, the range
 *   cuBLASLt's heuristics are documented for. Pointers: any element-aligned pointer (operands
 *   under 16 bytes run the plan's fallback candidates, see cuda_matmul.h).
 * - convolution (cuDNN's legacy descriptors): every size is an int and a tensor has fewer than
 *   2^31 elements. Asymmetric padding runs on kmux's own kernel, or on cuDNN through a padded
 *   copy (cuda_conv_pad.c).
 * Which legal type rows run: those of cuBLASLt / cuDNN (kmux_cuda_{matmul,conv}_row_runs,
 * cuda_host_logic.c) and those of kmux's own kernels (kernels/gpu: every row of both tables).
 */
#include <limits.h>

#include "cuda_backend.h"
#include "gpu_kernels.h"
#include "cuda_host_logic.h"
#include "cuda_impl_order.h"
#include "kmux_gpu_caps.h"
#include "kmux_gpu_gemm_params.h"
#include "dispatch/common/kmux_family.h"
#include "dispatch/common/kmux_type_rules.h"

/* kmux's own convolution kernel on a row of the conv table (x = w = y). */
static int own_conv_row(kmux_dtype t) {
    kmux_conv2d_desc d = KMUX_CONV2D_DESC_INIT;
    d.x_type = d.w_type = d.y_type = t;
    return kmux_cuda_own_conv_runs(&d);
}

kmux_status kmux_cuda_device_caps(void *state, int device, kmux_device_caps *caps) {
    const kmux_cuda_state *st = state;
    int sm = st->devices[device].sm;
    int n = 0;
    const kmux_type_combination *rows = kmux_rules_matmul_table(&n);
    kmux_gpu_matmul_caps(caps); /* cuBLASLt's limits are no tighter than the own kernel's */
    kmux_op_caps *m = &caps->matmul;
    for (int i = 0; i < n && i < 64; i++)
        if (kmux_cuda_matmul_row_runs(rows[i].a_type, rows[i].b_type, rows[i].c_type,
                                      rows[i].compute_type, sm) ||
            kmux_gpu_gemm_pair_runs(rows[i].a_type, rows[i].b_type))
            m->type_rows |= UINT64_C(1) << i;
    rows = kmux_rules_conv_table(&n);
    uint64_t conv_rows = 0;
    for (int i = 0; i < n && i < 64; i++)
        if (kmux_cuda_conv_row_runs(rows[i].a_type, rows[i].compute_type) ||
            own_conv_row(rows[i].a_type))
            conv_rows |= UINT64_C(1) << i;
    kmux_gpu_conv2d_caps(caps, conv_rows); /* the own kernel serves every shape cuDNN refuses */
    caps->amp_dtypes = kmux_gpu_host_amp_dtypes();
    kmux_gpu_families_caps(caps);
    /* the execute of matmul and conv takes args->workspace instead of the stream's (cuda_stream.c,
     * hip_stream.c) */
    if (KMUX_CAPS_HAS(caps, caller_workspace)) caps->caller_workspace = 1;
    /* pointer_mode DEVICE on the own GEMM kernel (cuda_matmul_plan.c) */
    if (KMUX_CAPS_HAS(caps, matmul_device_scalars)) caps->matmul_device_scalars = 1;
    return KMUX_OK;
}
