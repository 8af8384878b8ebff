/*
 * hip_miopen.h - MIOpen, opened at run time when the host has it ($KMUX_MIOPEN_LIBRARY, else
 * libMIOpen.so.1 looked for first in the HIP runtime's folder: hip_miopen.c), as the
 * implementations "miopen:..." of convolution plans. Never a requirement: without it a plan
 * runs kmux's own implicit-GEMM kernel.
 *
 * The ABI values below are those of miopen.h (MIOpen 2.x - 3.x, ROCm 5 - 7): miopenStatus_t,
 * miopenDataType_t, miopenConvolutionMode_t, the algorithm enums, miopenConvolutionAttrib_t, and
 * the layouts of miopenConvAlgoPerf_t and miopenConvSolution_t. The convolution calls of the three
 * directions share their C types (handle, three tensor descriptors and a convolution descriptor
 * in a direction-specific order), so they are kept in arrays indexed by direction (0 forward,
 * 1 backward data, 2 backward weights) and called through one table of argument orders.
 */
#ifndef KMUX_HIP_MIOPEN_H
#define KMUX_HIP_MIOPEN_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

#include "hip_lib.h"
#include "kmux.h"

enum {
    /* miopenStatus_t */
    KMUX_MIOPEN_SUCCESS = 0,
    KMUX_MIOPEN_BAD_PARM = 3,
    KMUX_MIOPEN_NOT_IMPLEMENTED = 6,
    /* miopenDataType_t */
    KMUX_MIOPEN_HALF = 0,
    KMUX_MIOPEN_FLOAT = 1,
    KMUX_MIOPEN_BFLOAT16 = 5,
    /* miopenConvolutionMode_t: miopenConvolution is cross-correlation, as kmux's */
    KMUX_MIOPEN_CONVOLUTION = 0,
    /* miopenConvAlgorithm_t (and the direction enums, whose values agree) */
    KMUX_MIOPEN_ALGO_GEMM = 0,
    KMUX_MIOPEN_ALGO_DIRECT = 1,
    KMUX_MIOPEN_ALGO_FFT = 2,
    KMUX_MIOPEN_ALGO_WINOGRAD = 3,
    KMUX_MIOPEN_ALGO_IMPLICIT_GEMM = 5,
    /* miopenConvolutionAttrib_t */
    KMUX_MIOPEN_ATTRIB_DETERMINISTIC = 1
};

/** miopenConvAlgoPerf_t: the union of the three algorithm enums, time (ms), workspace. */
typedef struct kmux_miopen_perf {
    int algo;
    float time;
    size_t memory;
} kmux_miopen_perf;

/** miopenConvSolution_t (immediate mode). */
typedef struct kmux_miopen_solution {
    float time;
    size_t workspace_size;
    uint64_t solution_id;
    int algorithm;
} kmux_miopen_solution;

/** MIOpen's functions and its per-device handles (plan creation), in the backend state. */
typedef struct kmux_hip_miopen {
    kmux_hip_lib base; /**< opened once; version "MIOpen 3.4.0" (miopenGetVersion) */
    void **handles;    /**< one miopenHandle_t per device for plan creation, created on first use */
    int (*get_version)(size_t *major, size_t *minor, size_t *patch);
    int (*create)(void **handle);
    int (*create_with_stream)(void **handle, void *stream);
    int (*destroy)(void *handle);
    const char *(*error_string)(int status);
    int (*tensor_create)(void **desc);
    int (*tensor_set)(void *desc, int type, int dims, const int *lens, const int *strides);
    int (*tensor_destroy)(void *desc);
    int (*conv_create)(void **desc);
    int (*conv_init)(void *desc, int mode, int pad_h, int pad_w, int stride_h, int stride_w,
                     int dilation_h, int dilation_w);
    int (*conv_groups)(void *desc, int groups);
    int (*conv_attribute)(void *desc, int attr, int value); /**< NULL: no deterministic plans */
    int (*conv_destroy)(void *desc);
    /* per direction: fwd (w, x, y), bwd data (dy, w, dx), bwd weights (dy, x, dw) */
    int (*solution_count[3])(void *h, void *d1, void *d2, void *conv, void *d3, size_t *count);
    int (*solutions[3])(void *h, void *d1, void *d2, void *conv, void *d3, size_t max,
                        size_t *count, kmux_miopen_solution *out);
    int (*compile[3])(void *h, void *d1, void *d2, void *conv, void *d3, uint64_t id);
    int (*immediate[3])(void *h, void *d1, const void *p1, void *d2, const void *p2, void *conv,
                        void *d3, void *p3, void *ws, size_t ws_size, uint64_t id);
    int (*ws_size[3])(void *h, void *d1, void *d2, void *conv, void *d3, size_t *bytes);
    /* find mode, per direction: fwd (x, w, y), bwd data (dy, w, dx), bwd weights (dy, x, dw) */
    int (*find[3])(void *h, void *d1, const void *p1, void *d2, const void *p2, void *conv,
                   void *d3, void *p3, int request, int *returned, kmux_miopen_perf *perf, void *ws,
                   size_t ws_size, _Bool exhaustive);
    int (*run[3])(void *h, const void *alpha, void *d1, const void *p1, void *d2, const void *p2,
                  void *conv, int algo, const void *beta, void *d3, void *p3, void *ws,
                  size_t ws_size);
} kmux_hip_miopen;

/** Most MIOpen implementations a plan keeps. */
#define KMUX_HIP_MIOPEN_MAX_SOLUTIONS 8
/** Workspace an MIOpen solution may use when prefs leave it to the backend (256 MiB: MIOpen's
 *  GEMM solutions hold an im2col copy). */
#define KMUX_HIP_MIOPEN_DEFAULT_WORKSPACE ((size_t)256 << 20)

/** One MIOpen implementation of a plan. */
typedef struct kmux_hip_miopen_impl {
    int find;             /**< 1: an algorithm of the find step (run[]); 0: an immediate-mode
                               solution (immediate[]) */
    uint64_t solution_id; /**< immediate mode */
    int algo;             /**< miopenConvAlgorithm_t */
    size_t workspace;     /**< bytes */
    char name[80];        /**< "miopen:fwd:Winograd:id=12,ws=0", "miopen:find:fwd:GEMM,ws=..." */
} kmux_hip_miopen_impl;

/** The MIOpen half of a convolution plan: descriptors (created once) and the implementations. */
typedef struct kmux_hip_miopen_plan {
    int n;
    kmux_hip_miopen_impl impls[KMUX_HIP_MIOPEN_MAX_SOLUTIONS];
    void *x, *w, *y, *conv; /**< tensor descriptors of x, w, y and the convolution */
    int dir;                /**< 0 fwd, 1 bwd data, 2 bwd weights */
    int deterministic;      /**< MIOPEN_CONVOLUTION_ATTRIB_DETERMINISTIC set */
} kmux_hip_miopen_plan;

#endif
