/*
 * cuda_matmul.h - matmul plans on cuBLASLt, shared by the files that build and run them:
 *   cuda_lt_types.c     kmux types -> CUDA/cuBLASLt types, compute-type choice, names
 *   cuda_matmul_heur.c  layouts, operation descriptors, heuristic queries, implementation names
 *   cuda_matmul_plan.c  plan creation (every configuration and fallback), info, destroy
 *   cuda_matmul_pack.c  fp8/int8 operands into the workspace (TN layout, zero-padded K and N)
 *   cuda_matmul_post.c  the post kernel's launches (after cuBLASLt; the degenerate slot)
 *   cuda_matmul_exec.c  execution: configuration and implementation for the call, cublasLtMatmul
 * The pure decisions are in cuda_host_logic.c (tested without a GPU).
 *
 * Orientation. cuBLASLt is column-major. A column-major problem is passed as it is; a row-major
 * one as its transpose, C^T = op(B)^T op(A)^T, which is the same memory read column-major. "A'",
 * "B'", "m'", "n'" are cuBLASLt's operands and sizes after that mapping. kmux's bias (bias[j]
 * added to every row i of the row-major view, as torch.addmm) is then a per-row vector of
 * D' = C^T, exactly cuBLASLt's BIAS epilogue. For a column-major problem the bias runs along D's
 * columns, which cuBLASLt cannot do: the post kernel adds it (and applies the activation),
 * computing from an f32 temporary for f16/bf16 outputs so that the result is rounded once.
 *
 * A plan is immutable after creation (ABI v2). It holds up to two configurations: 0, the most
 * direct one; 1, the same problem through the f32 temporary (for d_scale/amax_d with an f16/bf16
 * output, so that D is still rounded once, and for fp8 calls whose C or bias is less than 16-byte
 * aligned). Its implementations are, in this order: the primary heuristic candidates of
 * configuration 0 (promising 16-byte aligned operands), one fallback per smaller alignment class
 * (8, 4, 2, 1 bytes, down to the smallest element size), then the same for configuration 1. Every
 * implementation is walkable with kmux_plan_next_impl and named by plan_info; execute runs the
 * requested one when the call's pointers meet its alignment promise and its configuration fits
 * the call, and otherwise the implementation keyed by (configuration, alignment class), tracing
 * the substitution at KMUX_VERBOSE=2.
 *
 * After the cuBLASLt implementations come kmux's own GEMM kernel (kernels/gpu/kmux_gpu_gemm.cu),
 * one implementation per tile, the preferred tile first ("kmux-gpu:gemm:...:tile=64x64x16/4x4"):
 * the only ones where cuBLASLt offers nothing (FNUZ fp8, fp8 before sm_89, e5m2 x e5m2, a
 * workspace cap), and what a call runs when no cuBLASLt implementation of the plan serves it
 * (cuda_impl_order.h).
 */
#ifndef KMUX_CUDA_MATMUL_H
#define KMUX_CUDA_MATMUL_H

#include "cuda_backend.h"
#include "cuda_host_logic.h"
#include "cuda_impl_order.h"
#include "cuda_kernels.h"

/** Most implementations of one matmul plan: primary candidates and fallbacks of both
 *  configurations, and kmux's own GEMM kernel once per tile. */
#define KMUX_CUDA_MAX_IMPLS (2 * (KMUX_CUDA_MAX_ALGOS + 4) + KMUX_GPU_TILE_COUNT)
/** Primary candidates kept for configuration 1 (it runs only where configuration 0 cannot). */
#define KMUX_CUDA_ALT_ALGOS 2

/* cuBLASLt's floating-point emulation descriptor (CUBLAS_EMULATION_STRATEGY_EAGER) and the
 * algorithm capability that says whether a candidate emulates came with cuBLAS 13.0; the
 * emulated compute type CUBLAS_COMPUTE_32F_EMULATED_16BFX9 with cuBLAS 12.9. Older toolkits
 * (CUDA 12.0 - 12.8) build without them and run F32_FAST_BF16 as strict f32. */
#if defined(CUBLAS_VERSION) && CUBLAS_VERSION >= 120900
#define KMUX_CUDA_HAVE_BF16X9 1
#else
#define KMUX_CUDA_HAVE_BF16X9 0
#endif
#if defined(CUBLAS_VERSION) && CUBLAS_VERSION >= 130000
#define KMUX_CUDA_HAVE_EMULATION_DESC 1
#else
#define KMUX_CUDA_HAVE_EMULATION_DESC 0
#endif

/** One cuBLASLt configuration of a plan (immutable after creation). */
typedef struct lt_config {
    int use_temp;         /* cuBLASLt writes an f32 temporary that the post kernel reads */
    int post_epi;         /* bias and activation done by the post kernel */
    int pack_a, pack_b;   /* 1-byte operand copied into the TN layout in the workspace */
    int zero_a, zero_b;   /* the copy has zero padding (K, N) */
    int64_t k_p, n_p;     /* k and n' as cuBLASLt sees them */
    int64_t lda_p, ldb_p; /* leading dimensions of the copies */
    int64_t ld_temp;      /* of the f32 temporary (m' x n_p) */
    size_t pack_a_bytes, pack_b_bytes, temp_bytes;
    size_t algo_cap; /* workspace cuBLASLt may use (cap left after the extras) */
    cublasComputeType_t compute;
    cudaDataType_t scale_type;
    cublasLtEpilogue_t epilogue; /* done by cuBLASLt */
    int eager;                   /* emulation strategy EAGER set (F32_FAST_BF16) */
#if KMUX_CUDA_HAVE_EMULATION_DESC
    cublasLtEmulationDescOpaque_t emu;
#endif
    cublasLtMatrixLayoutOpaque_t la, lb, lc, ld;
} lt_config;

/** One implementation: a cuBLASLt algorithm, or kmux's own GEMM kernel (key cfg
 *  KMUX_CUDA_CFG_OWN) with tile `tile`. */
typedef struct lt_impl {
    int tile; /* own kernel only */
    cublasLtMatmulAlgo_t algo;
    size_t ws; /* cuBLASLt workspace this algorithm needs */
    kmux_compute_type effective;
    char name[224];
} lt_impl;

typedef struct matmul_plan {
    kmux_cuda_plan_header hdr;
    kmux_matmul_desc d;
    cudaDataType_t bias_dt;
    int empty;  /* m, n or batch_count == 0: nothing to do */
    int k_zero; /* k == 0: the degenerate path only */
    /* cuBLASLt's view */
    int swapped; /* row-major: A' = B, B' = A, D' = C^T */
    uint64_t m, n, k;
    cublasOperation_t opa, opb;           /* of A', B' as the caller stores them */
    int64_t lda, ldb, stride_a, stride_b; /* of A', B' as the caller stores them */
    kmux_dtype at, bt;
    int fp8;        /* OCP fp8 inputs */
    int fast_accum; /* fp8 and prefs.allow_fast_accumulation: CUBLASLT_MATMUL_DESC_FAST_ACCUM */
    int n_cfg;
    lt_config cfg[2];
    int n_impl;
    lt_impl impl[KMUX_CUDA_MAX_IMPLS];
    kmux_cuda_impl_key key[KMUX_CUDA_MAX_IMPLS];
    cublasLtHandle_t lt; /* the device's handle (lives as long as the backend state) */
} matmul_plan;

/* ---- cuda_lt_types.c ---- */
cudaDataType_t kmux_cuda_data_type(kmux_dtype t);
const char *kmux_cuda_lt_compute_name(cublasComputeType_t c);
/** Compute and scale type for the plan's compute type; emulate_bf16 = 0 maps F32_FAST_BF16 to
 *  strict f32. */
void kmux_cuda_choose_compute(kmux_compute_type ct, int emulate_bf16, lt_config *c);
const char *kmux_cuda_epi_name(unsigned e);
/** 1 for OCP fp8 (e4m3, e5m2). */
int kmux_cuda_is_ocp_fp8(kmux_dtype t);

/* ---- cuda_matmul_heur.c ---- */
kmux_status kmux_cuda_build_layouts(const kmux_cuda_state *st, const matmul_plan *p, lt_config *c);
/** Operation descriptor of configuration c in caller storage; pointers are the caller's. */
cublasStatus_t kmux_cuda_init_op(const matmul_plan *p, const lt_config *c,
                                 cublasLtMatmulDescOpaque_t *storage);
/** Asks cuBLASLt for up to max_out candidates of configuration c whose operands are `align`-byte
 *  aligned, within c->algo_cap. Appends them to p->impl with key (cfg, align). Returns how many
 *  (0: none for this configuration), or -1 after reporting an error. *last receives the query's
 *  status for messages. */
int kmux_cuda_query(kmux_cuda_state *st, matmul_plan *p, int cfg, unsigned align, int max_out,
                    cublasStatus_t *last);

/* ---- cuda_matmul_pack.c ---- */
/** Copies A' (or B') into the workspace at dst as configuration c wants it (TN, ld_p, zero
 *  padding), or a same-layout copy when `copy_only` (an fp8 operand under 16-byte alignment),
 *  on stream cs (its device entered). Returns KMUX_OK or the mapped error, with a message. */
kmux_status kmux_cuda_pack_operand(kmux_cuda_state *st, const kmux_cuda_stream *cs,
                                   const matmul_plan *p, const lt_config *c, int which_b,
                                   int copy_only, const void *src, void *dst);
/** Bytes of a same-layout copy of A' (which_b = 0) or B', 256-rounded. */
size_t kmux_cuda_copy_bytes(const matmul_plan *p, int which_b);

/* ---- cuda_matmul_post.c ---- */
/** Launches the post kernel with a on stream cs (its device entered). */
kmux_status kmux_cuda_launch_post(kmux_cuda_state *st, const kmux_cuda_stream *cs,
                                  const kmux_cuda_post_args *a);

#endif
