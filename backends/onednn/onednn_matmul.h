/*
 * onednn_matmul.h - the matmul plan of the oneDNN plugin, shared by onednn_matmul.c (creation)
 * and onednn_matmul_exec.c (execution).
 *
 * The plan works on a ROW-MAJOR problem R (M x N) = P (M x K) * Q (K x N): for row-major calls
 * P = op(A), Q = op(B), R = C; for column-major calls C^T = op(B)^T op(A)^T, so P comes from B,
 * Q from A, M and N swap, and the bias (one value per column of C) becomes one per ROW of R.
 * Transposes and leading dimensions are strides of oneDNN memory descriptors; strided batches
 * are a 3-D matmul (a stride of 0 is a broadcast batch dimension of 1).
 *
 * The bias is a binary-add post-op only when the C view is dense: oneDNN 2.6.3's gemm-based
 * matmul adds it at the wrong place in batches with a padded stride_c, and a padded ldc makes it
 * fall back to its reference kernel. Elsewhere (and for column-major calls, whose bias runs
 * along rows of R) the plugin adds the bias and applies the activation after the primitive.
 *
 * I32: oneDNN 2.6.3's s8 x s8 kernels (brgemm with VNNI) apply the s8 source compensation in
 * f32, so sums beyond 2^24 come out rounded; u8 x s8 accumulates exactly. The plan therefore
 * runs (P + 128) x Q on a biased u8 copy of P and subtracts 128 * (column sums of Q) by hand,
 * modulo 2^32, which gives the exact s32 sums (wrapping as integer BLAS does). Without VNNI
 * (e.g. AVX2 CPUs) oneDNN multiplies with vpmaddubsw, whose s16 pair sums saturate for u8 values
 * above 127, so there the biased copy is split into 7-bit halves, P + 128 = 2h + l (h <= 127,
 * l <= 1), and two exact u8 x s8 matmuls give 2 (h Q) + (l Q) ("+u8x2" in the impl name).
 * With VNNI (or AMX) the plan also keeps oneDNN's own s8 x s8 primitive on the caller's P, used
 * for a call whose data bound every intermediate of it by 2^24, where f32 holds integers
 * exactly: that kernel sums (P + 128) Q and adds -128 colsum(Q), so every value it forms is at
 * most 255 * max_j sum_l |Q(l, j)| in magnitude, whichever of them it rounds to f32 (measured
 * on oneDNN 2.6.3: only the final sum, so the bound has room to spare). Each call first tests
 * K * max|Q| against it (one cheap pass over Q), then, when that fails, the column sums of Q that
 * the u8 path needs anyway. A call within the bound skips the u8 copy and the compensation pass
 * (on oneDNN's OpenMP team they cost 10-13% of a 1024^3 GEMM on a 2-core Zen 5, issue 14), one
 * beyond it takes the u8 path. Both give the exact s32 sums; the implementation name is the
 * kernel's, and KMUX_VERBOSE=2 traces each call of a plan with the s8 kernel that takes the u8
 * path. KMUX_TUNE times plans on its scratch operands (bytes 0x3f, |Q| = 63: the s8 kernel up to
 * K = 1044), so for data on the u8 path its ranking of implementations may not hold.
 */
#ifndef KMUX_ONEDNN_MATMUL_H
#define KMUX_ONEDNN_MATMUL_H

#include "onednn_internal.h"

/** Distinct (alpha, beta) pairs a plan keeps a primitive for. oneDNN 2.x bakes constant output
 *  scales and the sum post-op's scale into the primitive; a RUNTIME output scale would move f32
 *  matmuls from the brgemm kernels to the slower gemm-based implementation, so alpha and beta are
 *  constants of each primitive. A plan prepares (1, 0) for every implementation and (1, 1) for
 *  the first at creation; other pairs get a primitive per call (found in oneDNN's primitive
 *  cache when repeated), so the plan never changes after creation. */
#define KMUX_DNN_MM_VARIANTS 8

typedef struct kmux_dnn_mm_variant {
    uint32_t alpha_bits, beta_bits; /**< f32 bit patterns (alpha unused with rt_alpha) */
    dnnl_primitive_t prim;
    size_t scratch;
} kmux_dnn_mm_variant;

/** One input of the row-major problem: logical rows x cols (P: M x K, Q: K x N). */
typedef struct kmux_dnn_mm_operand {
    int64_t rows, cols;
    int trans;       /**< 1: stored transposed (column stride ld), 0: row stride ld */
    int64_t ld;      /**< leading dimension of the user's storage, elements */
    int64_t bstride; /**< batch stride of the user's storage, elements (0 = broadcast) */
    kmux_dtype type;
    int from_a;        /**< 1: the user's A, 0: the user's B */
    int64_t distinct;  /**< distinct matrices: 1 when broadcast, else the batch count */
    size_t cvt_offset; /**< offset of its dense f32 copy in the workspace (cvt only) */
} kmux_dnn_mm_operand;

/* memory slots of an execution context */
enum { MM_MEM_P = 0, MM_MEM_Q, MM_MEM_DST, MM_MEM_BIAS, MM_MEM_SCALE, MM_MEM_P_S8 };

typedef struct kmux_dnn_mm_plan {
    kmux_dnn_plan base;
    kmux_matmul_desc d;
    int mode_index;     /**< implementation index within the current path's list */
    int alt_next;       /**< bf16/f16: the other path (native / "+cvt") follows */
    int native_by_hand; /**< epi_by_hand of the native path */
    int64_t M, N, K;    /**< the row-major problem */
    int swapped;        /**< column-major call: P = B, Q = A */
    kmux_dnn_mm_operand P, Q;
    int64_t ldr, bstride_r;    /**< the C view (row stride, batch stride), elements */
    int64_t prim_batch;        /**< batch size of the primitive (1 when looping) */
    int64_t loop;              /**< times the primitive runs per execute (A and B both broadcast) */
    int int_split;             /**< I32 without VNNI: P + 128 split in 7-bit halves, two matmuls */
    int is_int;                /**< I32 compute: u8 x s8 primitive plus compensation */
    int cvt;                   /**< inputs converted to dense f32 ("+cvt") */
    int use_w;                 /**< float path: the primitive writes the f32 workspace W */
    int rt_alpha;              /**< runtime output scale (fp8: alpha * a_scale * b_scale) */
    int bias_in_prim;          /**< bias as a binary post-op */
    int bias_cvt;              /**< bias converted to f32 in the workspace */
    int epi_by_hand;           /**< bias and activation applied after the primitive */
    dnnl_data_type_t in_type;  /**< oneDNN type of P and Q as the primitive reads them */
    dnnl_data_type_t dst_type; /**< oneDNN type the primitive writes */
    dnnl_memory_desc_t md_p, md_q, md_dst, md_bias, md_scale;
    dnnl_matmul_desc_t op;
    char prim_impl[64];     /**< oneDNN's implementation string of the plan */
    size_t off_w, off_bias; /**< workspace offsets of W and of the f32 bias */
    size_t off_w2;          /**< I32 split: workspace offset of the second s32 result */
    size_t off_colsum;      /**< I32: workspace offset of the column sums of Q */
    int nvariants;
    kmux_dnn_mm_variant v[KMUX_DNN_MM_VARIANTS];
    /* I32 with VNNI: oneDNN's s8 x s8 primitive of the same kernel on the caller's P, for calls
     * whose data keep it exact (see the top of this file); NULL when there is none */
    dnnl_primitive_t prim_s8;
    size_t scratch_s8;
    dnnl_memory_desc_t md_p_s8;
} kmux_dnn_mm_plan;

/** The primitive for (alpha, beta): one of the plan's prepared variants, or a primitive for this
 *  call only (*temporary set: the caller destroys it). Returns KMUX_OK or the oneDNN error. */
kmux_status kmux_dnn_mm_variant_get(kmux_dnn_state *st, const kmux_dnn_mm_plan *p, float alpha,
                                    float beta, dnnl_primitive_t *prim, size_t *scratch,
                                    int *temporary);

#endif
