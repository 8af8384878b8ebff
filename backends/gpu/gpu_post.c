/*
 * gpu_post.c - module launches of kmux_gpu_post.cu: the element-wise completion of a vendor GEMM
 * (post_kernel<double>, post_kernel<float>, post_kernel_i32) and the byte packing of fp8/i8
 * operands (pack_bytes_kernel), exactly as kmux_gpu_post_launch and kmux_gpu_pack_bytes launch
 * them: grid-stride 1-D grids of KMUX_GPU_HOST_BLOCK threads, at most
 * KMUX_GPU_HOST_POST_MAX_BLOCKS blocks.
 */
#include "gpu_kernels.h"
#include "kmux_dtype_desc.h"

/* kmux_gpu_post.cu's blocks_for */
static unsigned blocks_for(int64_t total) {
    int64_t b = (total + KMUX_GPU_HOST_BLOCK - 1) / KMUX_GPU_HOST_BLOCK;
    if (b > KMUX_GPU_HOST_POST_MAX_BLOCKS) b = KMUX_GPU_HOST_POST_MAX_BLOCKS;
    if (b < 1) b = 1;
    return (unsigned)b;
}

kmux_status kmux_gpu_host_post(const kmux_gpu_launcher *l, const kmux_gpu_post_args *a) {
    const char *what = "kmux_matmul_execute";
    if (a->amax) { /* the kernels merge into *amax with atomicMax: start from +0 */
        kmux_status ks = l->memset_async(l, a->amax, 0, sizeof(float), what);
        if (ks != KMUX_OK) return ks;
    }
    const int64_t total = a->rows * a->cols * a->batch;
    if (total <= 0) return KMUX_OK;
    const char *name;
    switch (a->d_type) {
    case KMUX_F64:
        name = KMUX_GPU_NAME_POST_F64;
        break;
    case KMUX_F32:
    case KMUX_F16:
    case KMUX_BF16:
        if (a->bias && a->bias_type != KMUX_F32 && a->bias_type != a->d_type)
            return l->host->set_error(KMUX_ERR_UNSUPPORTED,
                                      "%s: %s on %s:%d: the GEMM completion takes an f32 or %s "
                                      "bias, not %s",
                                      l->vendor, what, l->vendor, l->device,
                                      kmux_dtype_desc_of(a->d_type).name,
                                      kmux_dtype_desc_of(a->bias_type).name);
        name = KMUX_GPU_NAME_POST_F32;
        break;
    case KMUX_I32:
        name = KMUX_GPU_NAME_POST_I32;
        break;
    default:
        return l->host->set_error(
            KMUX_ERR_UNSUPPORTED, "%s: %s on %s:%d: no GEMM completion kernel for D of %s",
            l->vendor, what, l->vendor, l->device, kmux_dtype_desc_of(a->d_type).name);
    }
    kmux_gpu_post_args copy = *a; /* the kernel takes the struct by value */
    void *params[] = {&copy};
    const unsigned grid[3] = {blocks_for(total), 1, 1};
    return l->launch(l, KMUX_GPU_MOD_POST, name, grid, KMUX_GPU_HOST_BLOCK, params, what);
}

kmux_status kmux_gpu_host_pack_bytes(const kmux_gpu_launcher *l, const void *src, int64_t rows,
                                     int64_t cols, int64_t src_rs, int64_t src_cs, int64_t src_bs,
                                     void *dst, int64_t ldd, int64_t dst_bs, int64_t batch) {
    const int64_t total = rows * cols * batch;
    if (total <= 0) return KMUX_OK;
    void *params[] = {(void *)&src, &rows, &cols, &src_rs, &src_cs,
                      &src_bs,      &dst,  &ldd,  &dst_bs, &batch};
    const unsigned grid[3] = {blocks_for(total), 1, 1};
    return l->launch(l, KMUX_GPU_MOD_POST, KMUX_GPU_NAME_PACK_BYTES, grid, KMUX_GPU_HOST_BLOCK,
                     params, "kmux_matmul_execute");
}
