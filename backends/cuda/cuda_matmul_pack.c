/*
 * cuda_matmul_pack.c - fp8/int8 operands into the workspace for cuBLASLt: the TN layout with
 * 16-byte leading dimensions, K (and N for B') zero-padded to multiples of 16 where the plan's
 * configuration says so, or a same-layout copy of an operand whose pointer is under 16 bytes.
 * The gather itself is the byte-packing kernel of kernels/gpu (through the shared GPU host layer,
 * backends/gpu/gpu_kernels.h); the zero padding is a memset of the copy before it.
 */
#include "cuda_matmul.h"
#include "gpu_kernels.h"

/* Extent in elements of a strided-batched column-major operand. */
static size_t extent(int64_t rows, int64_t cols, int64_t ld, int64_t stride, int64_t batch) {
    return (size_t)((batch - 1) * stride + (cols - 1) * ld + rows);
}

/* Rows and columns of A' (which_b = 0) or B' as the caller stores them. */
static void stored_dims(const matmul_plan *p, int which_b, int64_t *rows, int64_t *cols,
                        int64_t *ld, int64_t *stride) {
    int64_t k = (int64_t)p->k;
    if (!which_b) {
        *rows = p->opa == CUBLAS_OP_N ? (int64_t)p->m : k;
        *cols = p->opa == CUBLAS_OP_N ? k : (int64_t)p->m;
        *ld = p->lda, *stride = p->stride_a;
    } else {
        *rows = p->opb == CUBLAS_OP_N ? k : (int64_t)p->n;
        *cols = p->opb == CUBLAS_OP_N ? (int64_t)p->n : k;
        *ld = p->ldb, *stride = p->stride_b;
    }
}

size_t kmux_cuda_copy_bytes(const matmul_plan *p, int which_b) {
    int64_t rows, cols, ld, stride;
    stored_dims(p, which_b, &rows, &cols, &ld, &stride);
    return kmux_cuda_align_up(extent(rows, cols, ld, stride, p->d.batch_count), 256);
}

kmux_status kmux_cuda_pack_operand(kmux_cuda_state *st, const kmux_cuda_stream *cs,
                                   const matmul_plan *p, const lt_config *c, int which_b,
                                   int copy_only, const void *src, void *dst) {
    const int64_t batch = p->d.batch_count, k = (int64_t)p->k;
    const char *what = which_b ? "kmux_matmul_execute (packing B')"
                               : "kmux_matmul_execute "
                                 "(packing A')";
    int64_t rows, cols, ld, stride;
    stored_dims(p, which_b, &rows, &cols, &ld, &stride);
    if (copy_only) {
        CUresult e =
            kmux_cu_memcpy_async(dst, src, extent(rows, cols, ld, stride, batch), cs->stream);
        if (e != CUDA_SUCCESS)
            return kmux_cuda_fail(st, e, "%s: cuMemcpyAsync on cuda:%d", what, cs->device);
        return KMUX_OK;
    }
    const int zero = which_b ? c->zero_b : c->zero_a;
    if (zero) {
        CUresult e =
            kmux_cu_memset_async(dst, 0, which_b ? c->pack_b_bytes : c->pack_a_bytes, cs->stream);
        if (e != CUDA_SUCCESS)
            return kmux_cuda_fail(st, e, "%s: cuMemsetD8Async on cuda:%d", what, cs->device);
    }
    const kmux_gpu_launcher l = kmux_gpu_plugin_launcher(st, cs);
    if (!which_b) {
        /* A' wanted as stored k_p x m' (used transposed), ld lda_p, batch stride lda_p * m' */
        int64_t m = (int64_t)p->m, dbs = c->lda_p * m;
        if (p->opa == CUBLAS_OP_N) /* stored m' x k: element (kk, i) = src[i + kk * lda] */
            return kmux_gpu_host_pack_bytes(&l, src, k, m, p->lda, 1, p->stride_a, dst, c->lda_p,
                                            dbs, batch);
        /* stored k x m' already, only the leading dimension changes */
        return kmux_gpu_host_pack_bytes(&l, src, k, m, 1, p->lda, p->stride_a, dst, c->lda_p, dbs,
                                        batch);
    }
    /* B' wanted as stored k_p x n_p (used as is), ld ldb_p, batch stride ldb_p * n_p */
    int64_t n = (int64_t)p->n, dbs = c->ldb_p * c->n_p;
    if (p->opb == CUBLAS_OP_N)
        return kmux_gpu_host_pack_bytes(&l, src, k, n, 1, p->ldb, p->stride_b, dst, c->ldb_p, dbs,
                                        batch);
    /* stored n' x k: element (kk, j) = src[j + kk * ldb] */
    return kmux_gpu_host_pack_bytes(&l, src, k, n, p->ldb, 1, p->stride_b, dst, c->ldb_p, dbs,
                                    batch);
}
