/*
 * ref_internal.h - state and plan of the reference backend, shared by its source files.
 */
#ifndef KMUX_REF_INTERNAL_H
#define KMUX_REF_INTERNAL_H

#include "cpu_runtime.h"
#include "dispatch/common/kmux_common.h"

/** Backend state: one per context. Starts with the CPU header (host services, threads). */
typedef struct ref_state {
    kmux_cpu_state_header hdr;
    int64_t panel_elems; /**< doubles of one panel of op(B) in GEMM; read once in ref_init */
} ref_state;

typedef enum ref_plan_kind {
    REF_PLAN_MATMUL = 1,
    REF_PLAN_CONV2D = 2,
    REF_PLAN_ELTWISE = 3,
    REF_PLAN_OPTIMIZER = 4,
    REF_PLAN_SOFTMAX = 5,
    REF_PLAN_BINARY = 6,
    REF_PLAN_REDUCTION = 7,
    REF_PLAN_POOLING = 8
} ref_plan_kind;

/** A plan only keeps a copy of the validated description: ref has one implementation. */
typedef struct ref_plan {
    ref_plan_kind kind;
    kmux_matmul_desc mm;    /**< REF_PLAN_MATMUL */
    kmux_conv2d_desc cv;    /**< REF_PLAN_CONV2D */
    kmux_eltwise_desc el;   /**< REF_PLAN_ELTWISE */
    kmux_optimizer_desc op; /**< REF_PLAN_OPTIMIZER */
    kmux_softmax_desc sm;   /**< REF_PLAN_SOFTMAX */
    kmux_binary_desc bi;    /**< REF_PLAN_BINARY */
    kmux_reduction_desc re; /**< REF_PLAN_REDUCTION */
    kmux_pooling_desc po;   /**< REF_PLAN_POOLING */
} ref_plan;

/** Doubles of one GEMM panel of op(B): KMUX_REF_PANEL_ELEMS if set to a positive integer (an
 *  internal knob for tests; results do not depend on it), else 2^20 (8 MiB). Read by ref_init. */
int64_t kmux_ref_panel_elems_from_env(void);

/** Reports an allocation failure of `bytes` in function `fn` through host->set_error. */
kmux_status kmux_ref_oom(void *state, const char *fn, size_t bytes);

/* ---- GEMM (ref_gemm.c); slots of kmux_backend_ops ---- */
kmux_status kmux_ref_matmul_plan_create(void *state, int device, const kmux_matmul_desc *desc,
                                        const kmux_plan_prefs *prefs, void **plan, int *impl_count);
/** D = act(a_scale * b_scale * alpha * op(A) op(B) + beta * C + bias) * d_scale, per batch
 *  matrix, accumulated in double (exact for I32 compute), finished by the shared CPU finish. */
kmux_status kmux_ref_matmul_execute(void *state, const void *plan, int impl, void *stream,
                                    const kmux_matmul_args *args);

/* ---- convolution (ref_conv.c) ---- */
kmux_status kmux_ref_conv2d_plan_create(void *state, int device, const kmux_conv2d_desc *desc,
                                        const kmux_plan_prefs *prefs, void **plan, int *impl_count);
/** Direct loops over the forward index space, accumulating in double into a scratch copy of
 *  the output of the direction, then output = alpha * acc + beta * output. */
kmux_status kmux_ref_conv2d_execute(void *state, const void *plan, int impl, void *stream,
                                    const kmux_conv2d_args *args);

/* ---- element-wise (ref_eltwise.c): double-precision definitions, rounded once ---- */
/** The algorithms ref defines (bit alg), for its caps. */
uint64_t kmux_ref_eltwise_algs(void);
kmux_status kmux_ref_eltwise_plan_create(void *state, int device, const kmux_eltwise_desc *desc,
                                         const kmux_plan_prefs *prefs, void **plan,
                                         int *impl_count);
kmux_status kmux_ref_eltwise_execute(void *state, const void *plan, int impl, void *stream,
                                     const kmux_eltwise_args *args);

/* ---- optimizer (ref_optimizer.c): f64 definitions ---- */
kmux_status kmux_ref_optimizer_plan_create(void *state, int device, const kmux_optimizer_desc *desc,
                                           const kmux_plan_prefs *prefs, void **plan,
                                           int *impl_count);
kmux_status kmux_ref_optimizer_execute(void *state, const void *plan, int impl, void *stream,
                                       const kmux_optimizer_args *args);

/* ---- softmax (ref_softmax.c): f64 definitions ---- */
kmux_status kmux_ref_softmax_plan_create(void *state, int device, const kmux_softmax_desc *desc,
                                         const kmux_plan_prefs *prefs, void **plan,
                                         int *impl_count);
kmux_status kmux_ref_softmax_execute(void *state, const void *plan, int impl, void *stream,
                                     const kmux_softmax_args *args);

/* ---- binary (ref_binary.c) and reduction (ref_reduction.c): f64 definitions ---- */
kmux_status kmux_ref_binary_plan_create(void *state, int device, const kmux_binary_desc *desc,
                                        const kmux_plan_prefs *prefs, void **plan, int *impl_count);
kmux_status kmux_ref_binary_execute(void *state, const void *plan, int impl, void *stream,
                                    const kmux_binary_args *args);
kmux_status kmux_ref_reduction_plan_create(void *state, int device, const kmux_reduction_desc *desc,
                                           const kmux_plan_prefs *prefs, void **plan,
                                           int *impl_count);
kmux_status kmux_ref_reduction_execute(void *state, const void *plan, int impl, void *stream,
                                       const kmux_reduction_args *args);

/* ---- pooling (ref_pooling.c): f64 definitions ---- */
kmux_status kmux_ref_pooling_plan_create(void *state, int device, const kmux_pooling_desc *desc,
                                         const kmux_plan_prefs *prefs, void **plan,
                                         int *impl_count);
kmux_status kmux_ref_pooling_execute(void *state, const void *plan, int impl, void *stream,
                                     const kmux_pooling_args *args);

/* ---- mixed precision (ref_amp.c), semantics of kmux.h; scalars are host memory ---- */
kmux_status kmux_ref_cast(void *state, void *stream, int64_t n, const void *src,
                          kmux_dtype src_type, void *dst, kmux_dtype dst_type,
                          const kmux_cast_options *opts);
kmux_status kmux_ref_amax(void *state, void *stream, int64_t n, const void *x, kmux_dtype type,
                          float *amax);
kmux_status kmux_ref_unscale_check_finite(void *state, void *stream, int64_t count,
                                          void *const *tensors, const int64_t *sizes,
                                          const kmux_dtype *types, const float *inv_scale,
                                          float *found_inf);

#endif
