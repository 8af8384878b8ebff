/*
 * openblas_internal.h - private declarations of the OpenBLAS backend plugin (cpu:openblas):
 * backend state, the common head of its plans, and the functions its files share.
 */
#ifndef KMUX_OPENBLAS_INTERNAL_H
#define KMUX_OPENBLAS_INTERNAL_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

#include "backends/cpu_common/cpu_runtime.h"
#include "dispatch/common/kmux_common.h"
#include "kmux_backend.h"
#include "openblas_api.h" /* OpenBLAS calls go through its table */

#define KMUX_OB_NAME "openblas"

#define KMUX_OB_POOL_SLOTS 4

/** Free scratch buffers kept for reuse (see openblas_workspace.c). */
typedef struct kmux_ob_pool {
    pthread_mutex_t lock;
    void *buf[KMUX_OB_POOL_SLOTS]; /**< NULL = empty slot */
    size_t cap[KMUX_OB_POOL_SLOTS];
} kmux_ob_pool;

/** Backend state for one context. The CPU header must come first (cpu_runtime.h). */
typedef struct kmux_ob_state {
    kmux_cpu_state_header hdr;
    char version[64];         /**< "OpenBLAS 0.3.21" (of the library loaded at run time) */
    char library_version[96]; /**< "OpenBLAS 0.3.21 (SkylakeX, pthread)" */
    kmux_ob_pool pool;
} kmux_ob_state;

typedef enum kmux_ob_plan_kind { KMUX_OB_MATMUL = 1, KMUX_OB_CONV2D = 2 } kmux_ob_plan_kind;

/** Common head of both plan kinds: what kmux_plan_info reports. */
typedef struct kmux_ob_plan {
    kmux_ob_plan_kind kind;
    char impl[96];
    kmux_compute_type effective_compute;
    size_t workspace_bytes; /**< scratch each execute allocates (see openblas_util.c) */
    int deterministic;
} kmux_ob_plan;

/* ---- matmul (openblas_matmul.c) ---- */

/** plan_create slot for matmul (one implementation): the device's capabilities (openblas_backend.c)
 *  keep out what OpenBLAS cannot run (i8, FAST/F16 compute types, sizes beyond its 32-bit
 *  blasint); narrow types run by conversion ("+cvt"). UNSUPPORTED when the workspace exceeds
 *  prefs->max_workspace_bytes. */
kmux_status kmux_ob_matmul_plan_create(void *state, int device, const kmux_matmul_desc *desc,
                                       const kmux_plan_prefs *prefs, void **plan, int *impl_count);
/** execute slot. KMUX_ERR_OUT_OF_MEMORY when the conversion workspace cannot be had. */
kmux_status kmux_ob_matmul_execute(void *state, const void *plan, int impl, void *stream,
                                   const kmux_matmul_args *args);

/* ---- convolution (openblas_conv2d.c) ---- */

/** plan_create slot: f32 natively, f16/bf16 by conversion, compute F32 only (capabilities);
 *  1x1 plans have two implementations (GEMM on the input itself, then im2col + GEMM), and so do
 *  plans that lower by rows (openblas_conv2d_rows.c, then im2col + GEMM). */
kmux_status kmux_ob_conv2d_plan_create(void *state, int device, const kmux_conv2d_desc *desc,
                                       const kmux_plan_prefs *prefs, void **plan, int *impl_count);
/** execute slot. */
kmux_status kmux_ob_conv2d_execute(void *state, const void *plan, int impl, void *stream,
                                   const kmux_conv2d_args *args);
/** What plan_info reports for implementation impl of a conv plan. */
const kmux_ob_plan *kmux_ob_conv2d_head(const void *plan, int impl);

/** Row-major cblas_sgemm with the int casts in one place (every dimension passed fits
 *  OpenBLAS's 32-bit blasint: the device's limits on sizes and tensors, and rows_apply in
 *  openblas_conv2d.c for the lowering by rows). */
static inline void kmux_ob_sgemm_rm(CBLAS_TRANSPOSE ta, CBLAS_TRANSPOSE tb, int64_t m, int64_t n,
                                    int64_t k, float alpha, const float *a, int64_t lda,
                                    const float *b, int64_t ldb, float beta, float *c,
                                    int64_t ldc) {
    cblas_sgemm(CblasRowMajor, ta, tb, (int)m, (int)n, (int)k, alpha, a, (int)lda, b, (int)ldb,
                beta, c, (int)ldc);
}

/** One GEMM of a convolution, in the forms of openblas_conv2d.c's table: the filter w is Kg x
 *  taps (leading dimension ldw), the lowered input col is taps x pixels (NCHW) or pixels x taps
 *  (NHWC; leading dimension ldc), the output or its gradient y is Kg x pixels (NCHW) or pixels x
 *  Kg (NHWC; ldy). In NCHW terms (NHWC runs the transposed products), beta applying to what the
 *  direction writes: FWD y = alpha w col + beta y; BWD_DATA col = alpha w^T y + beta col;
 *  BWD_WEIGHTS w = alpha y col^T + beta w. */
static inline void kmux_ob_conv_gemm(kmux_conv_direction dir, int nchw, int64_t pixels, int64_t kg,
                                     int64_t taps, float alpha, float *w, int64_t ldw, float *col,
                                     int64_t ldc, float *y, int64_t ldy, float beta) {
    const CBLAS_TRANSPOSE N = CblasNoTrans, T = CblasTrans;
    if (dir == KMUX_CONV_FWD) {
        if (nchw)
            kmux_ob_sgemm_rm(N, N, kg, pixels, taps, alpha, w, ldw, col, ldc, beta, y, ldy);
        else
            kmux_ob_sgemm_rm(N, T, pixels, kg, taps, alpha, col, ldc, w, ldw, beta, y, ldy);
    } else if (dir == KMUX_CONV_BWD_DATA) {
        if (nchw)
            kmux_ob_sgemm_rm(T, N, taps, pixels, kg, alpha, w, ldw, y, ldy, beta, col, ldc);
        else
            kmux_ob_sgemm_rm(N, N, pixels, taps, kg, alpha, y, ldy, w, ldw, beta, col, ldc);
    } else if (nchw) {
        kmux_ob_sgemm_rm(N, T, kg, taps, pixels, alpha, y, ldy, col, ldc, beta, w, ldw);
    } else {
        kmux_ob_sgemm_rm(T, N, kg, taps, pixels, alpha, y, ldy, col, ldc, beta, w, ldw);
    }
}

/* ---- convolution by rows (openblas_conv2d_rows.c) ---- */
/** The scratch of the lowering by rows, in floats (q: the output width): returns the row
 *  lowering of one image and group, (C/groups * S) x (H * Q), or SIZE_MAX where that product
 *  overflows; *wr_floats gets the repacked filter, (K/groups) x (C/groups * R * S) for NCHW, 0
 *  for NHWC (which reads the filter in place). */
size_t kmux_ob_conv_rows_floats(const kmux_conv2d_desc *d, int64_t q, size_t *wr_floats);
/** The convolution d (NCHW or NHWC, stride_h = 1; output p x q) by rows: the im2col of the
 *  filter's width only, then one sgemm per filter row on a shifted range of pixels (the file
 *  says how), as kmux_conv2d_execute with alpha and beta: FWD writes y, BWD_DATA x, BWD_WEIGHTS
 *  w. low and wr hold the floats kmux_ob_conv_rows_floats gives; both are scratch. im2col and
 * col2im run on up to `threads` threads. */
void kmux_ob_conv_rows_f32(const kmux_conv2d_desc *d, int64_t p, int64_t q, float alpha, float beta,
                           float *x, float *w, float *y, float *low, float *wr, int threads);

/* ---- scratch memory (openblas_workspace.c) ---- */

/** 64-byte aligned scratch of at least `bytes`, or NULL (out of memory). Each execute takes its
 *  own, so one plan can run on several threads at once; buffers given back are kept in a small
 *  pool of the backend state and reused by later executes of any plan. */
void *kmux_ob_ws_get(kmux_ob_state *st, size_t bytes);
/** Gives a buffer from kmux_ob_ws_get back (kept in the pool or freed). NULL is a no-op. */
void kmux_ob_ws_put(kmux_ob_state *st, void *p);
/** Frees every pooled buffer (at fini). */
void kmux_ob_ws_release_all(kmux_ob_state *st);

/** Sets the error of the calling thread through the host (returns status). */
#define KMUX_OB_ERROR(st, status, ...) ((st)->hdr.host->set_error((status), __VA_ARGS__))

#endif
