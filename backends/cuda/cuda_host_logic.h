/*
 * cuda_host_logic.h - the CUDA plugin's pure host-side decisions, free of CUDA headers so that
 * tests/test_cuda_host.c can check them on a machine without a GPU or a CUDA toolkit:
 * alignment classes and the key of an unaligned fallback, the fp8 layout rules (packing,
 * zero-padding of K and N, the f32 temporary), the workspace left to cuBLASLt after packing, the
 * name and effective compute type of F32_FAST_BF16, the device guard (no hidden context on a GPU
 * the thread never chose), which legal type rows a device runs, and the post-kernel arguments.
 *
 * cuBLASLt's view: a row-major problem is passed as its transpose, so "A'", "B'", "m'", "n'" are
 * cuBLASLt's operands and sizes after that mapping (cuda_matmul.h).
 */
#ifndef KMUX_CUDA_HOST_LOGIC_H
#define KMUX_CUDA_HOST_LOGIC_H

#include <stddef.h>
#include <stdint.h>

#include "cuda_kernels.h"
#include "kmux.h"

/* ---- alignment ---- */

/** Pointer alignment classes a matmul plan keeps candidates for: >= 16 bytes (the primary
 *  candidates), 8, 4, 2 and 1. */
#define KMUX_CUDA_ALIGN_CLASSES 5

/** Largest power of two <= 256 that divides v (256 for v == 0). */
unsigned kmux_cuda_ptr_align(uintptr_t v);
/** Class of an alignment in bytes: 0 for >= 16, 1 for 8, 2 for 4, 3 for 2, 4 for 1. */
int kmux_cuda_align_class(unsigned align);
/** The alignment (bytes) a class promises to cuBLASLt's heuristics: 16, 8, 4, 2, 1. */
unsigned kmux_cuda_align_class_bytes(int cls);

/** The operands of one call as cuBLASLt sees them; NULL (or use_* = 0) for those cuBLASLt does
 *  not read at the caller's address (packed or copied into the workspace, C through the f32
 *  temporary, bias added by the post kernel). */
typedef struct kmux_cuda_align_in {
    const void *a, *b, *c, *bias;
    int use_a, use_b, use_c, use_bias;
} kmux_cuda_align_in;
/** The alignment one call promises: the minimum over the operands cuBLASLt reads (256 when it
 *  reads none of them at the caller's address). */
unsigned kmux_cuda_call_align(const kmux_cuda_align_in *in);

/** One implementation of a matmul plan as far as the choice at execution goes. */
typedef struct kmux_cuda_impl_key {
    int cfg;        /**< configuration (0: primary; 1: through the f32 temporary) */
    unsigned align; /**< pointer alignment its heuristic query promised (bytes) */
} kmux_cuda_impl_key;
/** The implementation to run: `requested` when it belongs to configuration `cfg` and its
 *  alignment promise holds for `call_align`; otherwise the best implementation of `cfg` whose
 *  promise holds, preferring the largest promised alignment (the fallback keyed by the call's
 *  alignment class; candidates are stored best first). -1 when none qualifies. */
int kmux_cuda_pick_impl(const kmux_cuda_impl_key *impls, int n, int requested, int cfg,
                        unsigned call_align);
/** Alignment classes a plan prepares fallbacks for: those from 8 bytes down to the smallest
 *  element size among the operands cuBLASLt reads (an operand cannot be less aligned than its
 *  element). Writes the alignments (bytes, decreasing) and returns how many (0..4). */
int kmux_cuda_fallback_aligns(size_t min_elem_size, unsigned out[4]);

/* ---- fp8 layout rules ---- */

/** What the fp8 rules look at (cuBLASLt's view, sizes in elements). */
typedef struct kmux_cuda_fp8_in {
    int a_trans;      /**< op(A') = T as the caller stores A' */
    int b_trans;      /**< op(B') = T */
    int64_t m, n, k;  /**< m', n', k */
    int64_t lda, ldb; /**< of A', B' as stored */
    int64_t stride_a, stride_b, stride_c, ldc;
    int64_t batch;
    size_t c_size;  /**< bytes per element of C */
    int force_temp; /**< 1: C and D through the f32 temporary anyway */
} kmux_cuda_fp8_in;

/** cuBLASLt's fp8 kernels run "TN" only (A' transposed, B' not), with 16-byte aligned pointers,
 *  leading dimensions and batch strides that are multiples of 16 bytes, and K and N multiples
 *  of 16. Operands that break a rule are packed into the workspace as TN copies with ld = k_p;
 *  K is zero-padded to k_p (both operands) and N to n_p (B', and D through the f32 temporary,
 *  of which the post kernel reads the first n columns). */
typedef struct kmux_cuda_fp8_layout {
    int pack_a, pack_b;                /**< copy A' (B') into the TN layout in the workspace */
    int zero_a, zero_b;                /**< the copy has padding that must be zero */
    int64_t k_p, n_p;                  /**< k and n' as cuBLASLt sees them */
    int64_t lda_p, ldb_p;              /**< leading dimensions of the copies (k_p) */
    size_t pack_a_bytes, pack_b_bytes; /**< 256-byte rounded sizes of the copies */
    int use_temp;                      /**< cuBLASLt writes an f32 temporary of m' x n_p */
} kmux_cuda_fp8_layout;
void kmux_cuda_fp8_layout_plan(const kmux_cuda_fp8_in *in, kmux_cuda_fp8_layout *out);

/** Leading dimension (elements) and size (bytes, 256-rounded) of the f32 temporary of an
 *  m x n x batch result: ld a multiple of 4 elements (16 bytes). */
int64_t kmux_cuda_temp_ld(int64_t m);
size_t kmux_cuda_temp_bytes(int64_t m, int64_t n, int64_t batch);

/* ---- workspace ---- */

/** The workspace cuBLASLt's heuristics may ask for. cap: the plan's cap; user_cap: 1 when the
 *  caller set prefs->max_workspace_bytes (the cap is then for everything: packing, temporaries
 *  and cuBLASLt), 0 for the backend default (which is cuBLASLt's alone); extra: packing and
 *  temporaries. Returns 0 (and *algo_cap = 0) when extra alone exceeds a caller's cap. */
int kmux_cuda_algo_cap(size_t cap, int user_cap, size_t extra, size_t *algo_cap);

/* ---- F32_FAST_BF16 ---- */

/** 1 when a device of compute capability sm (10 * major + minor) has cuBLASLt's bf16x9
 *  emulation of f32 GEMM (Blackwell, sm_100 and newer), so that F32_FAST_BF16 asks cuBLASLt for
 *  CUBLAS_COMPUTE_32F_EMULATED_16BFX9; 0 below (strict f32 is then used). */
int kmux_cuda_bf16x9_offered(int sm);

/** What an F32_FAST_BF16 plan reports for one candidate. emulated_compute: the candidate was
 *  found for CUBLAS_COMPUTE_32F_EMULATED_16BFX9; cap_known: this cuBLASLt can say whether the
 *  algorithm emulates (CUBLASLT_ALGO_CAP_FLOATING_POINT_EMULATION_SUPPORT); algo_emulates: its
 *  answer; eager: the plan set CUBLAS_EMULATION_STRATEGY_EAGER (under the default strategy
 *  cuBLASLt may run plain f32 even where the algorithm could emulate). Returns
 *  KMUX_COMPUTE_F32_FAST_BF16 only when bf16x9 emulation is known to run, else KMUX_COMPUTE_F32,
 *  and *tag the name fragment ("32F_EMULATED_16BFX9" or "32F"). */
kmux_compute_type kmux_cuda_bf16x9_effective(int emulated_compute, int cap_known, int algo_emulates,
                                             int eager, const char **tag);

/* ---- capabilities ---- */

/** 1 when cuBLASLt runs the legal matmul row (a, b, c, compute) on an sm_`sm` device: no FNUZ
 *  formats (AMD's), fp8 from sm_89, no e5m2 x e5m2 kernel. */
int kmux_cuda_matmul_row_runs(kmux_dtype a, kmux_dtype b, kmux_dtype c, kmux_compute_type ct,
                              int sm);
/** 1 when cuDNN runs the legal convolution row with tensors of type x (f64, f32, f16, bf16). */
int kmux_cuda_conv_row_runs(kmux_dtype x, kmux_compute_type ct);

/* ---- asymmetric convolution padding ---- */

/** Geometry of running an asymmetrically padded convolution through a padded copy of the input
 *  (FWD, BWD_WEIGHTS: x; BWD_DATA: dx) in the workspace, with cuDNN padding 0. The interior copy
 *  is one strided 3-D copy: `depth` blocks (NCHW: n * c planes; NHWC: n images) of `height` rows
 *  (h) of `width_bytes` (NCHW: w elements; NHWC: w * c), rows `src_pitch` apart in the caller's
 *  tensor and `dst_pitch` apart in the copy, blocks dst_rows rows apart there, starting
 *  dst_offset bytes into the copy. */
typedef struct kmux_cuda_conv_pad {
    int needed;       /**< 0: symmetric padding, cuDNN pads itself */
    int64_t hp, wp;   /**< padded height and width */
    size_t bytes;     /**< size of the copy, 256-rounded */
    int64_t elements; /**< elements of the copy (cuDNN needs < 2^31) */
    size_t width_bytes, src_pitch, dst_pitch;
    int64_t height, depth, dst_rows;
    size_t dst_offset;
} kmux_cuda_conv_pad;
void kmux_cuda_conv_pad_plan(const kmux_conv2d_desc *d, size_t elem_size, kmux_cuda_conv_pad *out);

/* ---- post kernel arguments ---- */

/** cuBLASLt's view of a matmul description (what the post kernel and the layouts need). */
typedef struct kmux_cuda_view {
    int swapped;  /**< row-major: A' = B, B' = A, D' = C^T */
    int64_t m, n; /**< m', n' */
} kmux_cuda_view;
void kmux_cuda_view_of(const kmux_matmul_desc *d, kmux_cuda_view *v);

/** Arguments of the post kernel for the degenerate matmul (k == 0 or alpha == 0):
 *  D = d_scale * act(beta * C + bias), amax_d; A and B unread. beta is read in the compute type's
 *  scalar type (double for F64, int32_t for I32, float otherwise). */
void kmux_cuda_post_degenerate_args(const kmux_matmul_desc *d, const kmux_matmul_args *args,
                                    kmux_cuda_post_args *a);
/** Arguments of the post kernel after cuBLASLt. use_temp: cuBLASLt wrote alpha * AB into the f32
 *  temporary `temp` (ld ld_temp, batch stride stride_temp), beta * C is added here; otherwise D
 * already holds alpha * AB + beta * C and is read back with beta = 1.
 * post_epi: bias and activation are the post kernel's. */
void kmux_cuda_post_after_gemm_args(const kmux_matmul_desc *d, const kmux_matmul_args *args,
                                    int use_temp, const float *temp, int64_t ld_temp,
                                    int64_t stride_temp, int post_epi, kmux_cuda_post_args *a);
/** 1 when a call needs the post kernel after cuBLASLt. */
int kmux_cuda_needs_post(int use_temp, int post_epi, const kmux_matmul_args *args);
/** 1 when the scalar *v (in the compute type's scalar type) is zero. */
int kmux_cuda_scalar_zero(kmux_compute_type ct, const void *v);

#endif
