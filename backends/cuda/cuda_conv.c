/*
 * cuda_conv.c - 2-D convolution plans on cuDNN 9's convolution API (cudnnConvolutionForward,
 * BackwardData, BackwardFilter), forward, backward-data and backward-weights.
 *
 * Layouts: NCHW with KCRS filters, NHWC with KRSC filters (cuDNN's CUDNN_TENSOR_NCHW / NHWC
 * filter formats). Types: f32, f16, bf16 (f32 accumulation; f16 accumulation with
 * KMUX_COMPUTE_F16) and f64. The API takes one padding per axis: asymmetric padding runs on a
 * zero-padded copy of the input (or of dx) in the workspace with cuDNN padding 0
 * (cuda_conv_pad.c). Size limits (int sizes, < 2^31 elements per tensor) are the core's checks
 * (cuda_caps.c); only the padded copy is checked here.
 *
 * Precision: strict f32 (and f64) run with CUDNN_FMA_MATH, which restricts cuDNN to FMA kernels:
 * no TF32 tensor-core math. KMUX_COMPUTE_F32_FAST_TF32 allows CUDNN_DEFAULT_MATH (TF32 on sm_80+).
 * F32_FAST_BF16 has no cuDNN counterpart and runs strict f32 (reported as effective F32).
 * FFT and Winograd algorithms transform the data and do not round once per product as kmux's
 * "compute type" promises; they are offered only under F32_FAST_TF32, where the caller accepted
 * reduced precision.
 *
 * Implementations: the algorithms cudnnGet*Algorithm_v7 ranks for the problem whose workspace
 * fits the cap (prefs->max_workspace_bytes, default KMUX_CUDA_CONV_DEFAULT_WS), best first; the
 * implementation name is cuDNN's algorithm name plus the math mode ("+pad" through the copy).
 * Each implementation has its own convolution descriptor (with its math mode), so the plan is
 * immutable after creation and runs concurrently on several streams.
 *
 * kmux's own implicit-GEMM kernel (kernels/gpu/kmux_gpu_conv.cu) is an implementation too, once
 * per tile ("kmux-gpu:conv2d:fwd:nchw:f32:acc=f32:tile=64x64x16/4x4"): after cuDNN's algorithms
 * (also for asymmetric padding, where cuDNN runs on the padded copy), and alone where cuDNN
 * offers no algorithm (cuda_impl_order.h).
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpu_kernels.h"
#include "cuda_backend.h"
#include "cuda_conv_pad.h"
#include "cuda_impl_order.h"
#include "kmux_gpu_gemm_params.h"
#include "kmux_gpu_kernels.h"
#include "kmux_sys_alloc.h"

/* One implementation: a cuDNN algorithm (tile -1) or kmux's own kernel with tile `tile`. */
typedef struct conv_impl {
    int tile;
    cudnnConvolutionDescriptor_t cd; /* with this implementation's math mode */
    int algo;
    size_t ws;
    cudnnMathType_t math;
    int deterministic;
    kmux_compute_type effective;
    char name[128];
} conv_impl;

typedef struct conv_plan {
    kmux_cuda_plan_header hdr;
    kmux_conv2d_desc d;
    cudnnTensorDescriptor_t xd, yd;
    cudnnFilterDescriptor_t wd;
    cudnnConvolutionDescriptor_t cd; /* for the heuristics; copied per implementation */
    kmux_cuda_conv_pad pad;
    int n_impl;
    conv_impl impl[KMUX_CUDA_MAX_CONV_ALGOS + KMUX_GPU_TILE_COUNT];
} conv_plan;

static const char *algo_name(kmux_conv_direction dir, int a) {
    static const char *const fwd[] = {
        "IMPLICIT_GEMM", "IMPLICIT_PRECOMP_GEMM", "GEMM", "DIRECT", "FFT", "FFT_TILING",
        "WINOGRAD",      "WINOGRAD_NONFUSED"};
    static const char *const bwd_data[] = {"ALGO_0",     "ALGO_1",   "FFT",
                                           "FFT_TILING", "WINOGRAD", "WINOGRAD_NONFUSED"};
    static const char *const bwd_filter[] = {
        "ALGO_0", "ALGO_1", "FFT", "ALGO_3", "WINOGRAD", "WINOGRAD_NONFUSED", "FFT_TILING"};
    if (dir == KMUX_CONV_FWD) return a >= 0 && a < 8 ? fwd[a] : "?";
    if (dir == KMUX_CONV_BWD_DATA) return a >= 0 && a < 6 ? bwd_data[a] : "?";
    return a >= 0 && a < 7 ? bwd_filter[a] : "?";
}

/* FFT / Winograd: transforms that change the numerics beyond one rounding per product. */
static int is_transform_algo(kmux_conv_direction dir, int a) {
    if (dir == KMUX_CONV_FWD)
        return a == CUDNN_CONVOLUTION_FWD_ALGO_FFT || a == CUDNN_CONVOLUTION_FWD_ALGO_FFT_TILING ||
               a == CUDNN_CONVOLUTION_FWD_ALGO_WINOGRAD ||
               a == CUDNN_CONVOLUTION_FWD_ALGO_WINOGRAD_NONFUSED;
    if (dir == KMUX_CONV_BWD_DATA)
        return a == CUDNN_CONVOLUTION_BWD_DATA_ALGO_FFT ||
               a == CUDNN_CONVOLUTION_BWD_DATA_ALGO_FFT_TILING ||
               a == CUDNN_CONVOLUTION_BWD_DATA_ALGO_WINOGRAD ||
               a == CUDNN_CONVOLUTION_BWD_DATA_ALGO_WINOGRAD_NONFUSED;
    return a == CUDNN_CONVOLUTION_BWD_FILTER_ALGO_FFT ||
           a == CUDNN_CONVOLUTION_BWD_FILTER_ALGO_FFT_TILING ||
           a == CUDNN_CONVOLUTION_BWD_FILTER_ALGO_WINOGRAD ||
           a == CUDNN_CONVOLUTION_BWD_FILTER_ALGO_WINOGRAD_NONFUSED;
}

static const char *math_name(cudnnMathType_t m) {
    switch (m) {
    case CUDNN_DEFAULT_MATH:
        return "default";
    case CUDNN_TENSOR_OP_MATH:
        return "tensor_op";
    case CUDNN_TENSOR_OP_MATH_ALLOW_CONVERSION:
        return "tensor_op_conv";
    case CUDNN_FMA_MATH:
        return "fma";
    default:
        return "?";
    }
}

static const char *dir_name(kmux_conv_direction d) {
    return d == KMUX_CONV_FWD ? "fwd" : d == KMUX_CONV_BWD_DATA ? "bwd_data" : "bwd_weights";
}

static kmux_status conv_unsupported(const kmux_cuda_state *st, int device,
                                    const kmux_conv2d_desc *d, const char *why) {
    return kmux_cuda_error(
        st, KMUX_ERR_UNSUPPORTED,
        "kmux_conv2d_plan_create: cuda:%d cannot run %s %s %s (compute %s, n%lld c%lld h%lld "
        "w%lld k%lld r%lld s%lld): %s",
        device, dir_name(d->direction), d->layout == KMUX_NHWC ? "NHWC" : "NCHW",
        kmux_common_dtype_name(d->x_type), kmux_common_compute_type_name(d->compute_type),
        (long long)d->n, (long long)d->c, (long long)d->h, (long long)d->w, (long long)d->k,
        (long long)d->r, (long long)d->s, why);
}

static void conv_free(conv_plan *p) {
    if (p->xd) cudnnDestroyTensorDescriptor(p->xd);
    if (p->yd) cudnnDestroyTensorDescriptor(p->yd);
    if (p->wd) cudnnDestroyFilterDescriptor(p->wd);
    if (p->cd) cudnnDestroyConvolutionDescriptor(p->cd);
    for (int i = 0; i < p->n_impl; i++)
        if (p->impl[i].cd) cudnnDestroyConvolutionDescriptor(p->impl[i].cd);
    free(p);
}

/* Workspace of one algorithm under the descriptor's current math mode; nonzero status when
 * cuDNN does not accept the combination. */
static cudnnStatus_t ws_size(cudnnHandle_t h, const conv_plan *p, cudnnConvolutionDescriptor_t cd,
                             int algo, size_t *bytes) {
    switch (p->d.direction) {
    case KMUX_CONV_FWD:
        return cudnnGetConvolutionForwardWorkspaceSize(h, p->xd, p->wd, cd, p->yd,
                                                       (cudnnConvolutionFwdAlgo_t)algo, bytes);
    case KMUX_CONV_BWD_DATA:
        return cudnnGetConvolutionBackwardDataWorkspaceSize(
            h, p->wd, p->yd, cd, p->xd, (cudnnConvolutionBwdDataAlgo_t)algo, bytes);
    default:
        return cudnnGetConvolutionBackwardFilterWorkspaceSize(
            h, p->xd, p->yd, cd, p->wd, (cudnnConvolutionBwdFilterAlgo_t)algo, bytes);
    }
}

/* A copy of the plan's convolution descriptor with math mode m. */
static cudnnStatus_t make_cd(const conv_plan *p, cudnnMathType_t m,
                             cudnnConvolutionDescriptor_t *out) {
    const kmux_conv2d_desc *d = &p->d;
    cudnnDataType_t ct;
    int pads[2], strides[2], dil[2], nd = 0;
    cudnnConvolutionMode_t mode;
    cudnnStatus_t s =
        cudnnGetConvolutionNdDescriptor(p->cd, 2, &nd, pads, strides, dil, &mode, &ct);
    if (s != CUDNN_STATUS_SUCCESS) return s;
    if ((s = cudnnCreateConvolutionDescriptor(out)) != CUDNN_STATUS_SUCCESS) return s;
    if ((s = cudnnSetConvolutionNdDescriptor(*out, 2, pads, strides, dil, mode, ct)) !=
            CUDNN_STATUS_SUCCESS ||
        (s = cudnnSetConvolutionGroupCount(*out, (int)d->groups)) != CUDNN_STATUS_SUCCESS ||
        (s = cudnnSetConvolutionMathType(*out, m)) != CUDNN_STATUS_SUCCESS) {
        cudnnDestroyConvolutionDescriptor(*out);
        *out = NULL;
    }
    return s;
}

/* One ranked candidate of cuDNN's heuristics, whatever the direction. */
typedef struct ranked {
    int algo;
    cudnnStatus_t status;
    size_t memory;
    cudnnDeterminism_t determinism;
    cudnnMathType_t math;
} ranked;

static cudnnStatus_t heuristics(cudnnHandle_t h, const conv_plan *p, ranked *out, int *count) {
    cudnnStatus_t s;
    int got = 0;
    *count = 0;
    if (p->d.direction == KMUX_CONV_FWD) {
        cudnnConvolutionFwdAlgoPerf_t perf[CUDNN_CONVOLUTION_FWD_ALGO_COUNT];
        s = cudnnGetConvolutionForwardAlgorithm_v7(h, p->xd, p->wd, p->cd, p->yd,
                                                   CUDNN_CONVOLUTION_FWD_ALGO_COUNT, &got, perf);
        for (int i = 0; s == CUDNN_STATUS_SUCCESS && i < got; i++)
            out[i] = (ranked){(int)perf[i].algo, perf[i].status, perf[i].memory,
                              perf[i].determinism, perf[i].mathType};
    } else if (p->d.direction == KMUX_CONV_BWD_DATA) {
        cudnnConvolutionBwdDataAlgoPerf_t perf[CUDNN_CONVOLUTION_BWD_DATA_ALGO_COUNT];
        s = cudnnGetConvolutionBackwardDataAlgorithm_v7(
            h, p->wd, p->yd, p->cd, p->xd, CUDNN_CONVOLUTION_BWD_DATA_ALGO_COUNT, &got, perf);
        for (int i = 0; s == CUDNN_STATUS_SUCCESS && i < got; i++)
            out[i] = (ranked){(int)perf[i].algo, perf[i].status, perf[i].memory,
                              perf[i].determinism, perf[i].mathType};
    } else {
        cudnnConvolutionBwdFilterAlgoPerf_t perf[CUDNN_CONVOLUTION_BWD_FILTER_ALGO_COUNT];
        s = cudnnGetConvolutionBackwardFilterAlgorithm_v7(
            h, p->xd, p->yd, p->cd, p->wd, CUDNN_CONVOLUTION_BWD_FILTER_ALGO_COUNT, &got, perf);
        for (int i = 0; s == CUDNN_STATUS_SUCCESS && i < got; i++)
            out[i] = (ranked){(int)perf[i].algo, perf[i].status, perf[i].memory,
                              perf[i].determinism, perf[i].mathType};
    }
    if (s == CUDNN_STATUS_SUCCESS) *count = got;
    return s;
}

#define RANKED_MAX 8 /* >= every *_ALGO_COUNT */

/* Adds kmux's own implicit-GEMM kernel once per tile (the preferred tile first): after cuDNN's
 * algorithms (with asymmetric padding too: cuDNN on the padded copy), alone where cuDNN offers
 * nothing (why says why). */
static kmux_status add_own(kmux_cuda_state *st, conv_plan *p, int own, const char *why) {
    const kmux_conv2d_desc *d = &p->d;
    /* cuDNN through the padded copy still runs at cuDNN's speed (the own kernel reaches about
     * 1% of it on an H100-class GPU): cuDNN first, asymmetric padding or not */
    kmux_cuda_impl_order order = kmux_cuda_order_of(p->n_impl, 1, own);
    if (order == KMUX_CUDA_ORDER_NONE) return conv_unsupported(st, p->hdr.device, d, why);
    if (order == KMUX_CUDA_ORDER_LIB_ONLY) return KMUX_OK;
    if (order == KMUX_CUDA_ORDER_OWN_ONLY && st->host->verbose >= 2)
        st->host->trace(2, "cuda,conv_plan,cuda:%d,no cuDNN implementation (%s): kmux-gpu",
                        p->hdr.device, why);
    /* the tile kmux_gpu_pick_tile prefers for the implicit GEMM's m x n */
    int64_t m, n;
    kmux_cuda_conv_gemm_mn(d, &m, &n);
    int tiles[8];
    int nt = kmux_cuda_own_tiles(kmux_gpu_host_pick_tile(st->devices[p->hdr.device].sm, m, n),
                                 KMUX_GPU_TILE_COUNT, tiles);
    conv_impl own_impl[8];
    for (int i = 0; i < nt; i++) {
        conv_impl *im = &own_impl[i];
        memset(im, 0, sizeof *im);
        im->tile = tiles[i];
        im->deterministic = 1; /* a fixed accumulation order, no atomics */
        im->effective = kmux_gpu_own_effective_compute(d->compute_type);
        if (kmux_gpu_host_conv2d_name(d, tiles[i], im->name, sizeof im->name) != 0)
            return kmux_cuda_error(st, KMUX_ERR_INTERNAL,
                                   "kmux_conv2d_plan_create: no name for kmux-gpu tile %d",
                                   tiles[i]);
    }
    if (order == KMUX_CUDA_ORDER_OWN_FIRST) /* cuDNN's after them */
        memmove(&p->impl[nt], &p->impl[0], sizeof p->impl[0] * (size_t)p->n_impl);
    int at = order == KMUX_CUDA_ORDER_OWN_FIRST ? 0 : p->n_impl;
    memcpy(&p->impl[at], own_impl, sizeof own_impl[0] * (size_t)nt);
    p->n_impl += nt;
    return KMUX_OK;
}

kmux_status kmux_cuda_conv2d_plan_create(void *state, int device, const kmux_conv2d_desc *desc,
                                         const kmux_plan_prefs *prefs, void **plan,
                                         int *impl_count) {
    kmux_cuda_state *st = state;
    kmux_cuda_device *dv = &st->devices[device];
    const kmux_conv2d_desc *d = desc;
    kmux_status ls = kmux_cuda_need_libs(st, "kmux_conv2d_plan_create", device);
    if (ls != KMUX_OK) return ls;

    int64_t p_out =
        kmux_conv2d_out_dim(d->h, d->pad_top, d->pad_bottom, d->r, d->dilation_h, d->stride_h);
    int64_t q_out =
        kmux_conv2d_out_dim(d->w, d->pad_left, d->pad_right, d->s, d->dilation_w, d->stride_w);
    kmux_cuda_conv_pad pad;
    kmux_cuda_conv_pad_plan(d, kmux_common_dtype_size(d->x_type), &pad);
    const int own = kmux_cuda_own_conv_runs(d);
    char why[256] = ""; /* why cuDNN offers nothing */
    /* cuDNN sees the padded input with padding 0 when the padding is asymmetric */
    const int64_t hx = pad.needed ? pad.hp : d->h, wx = pad.needed ? pad.wp : d->w;
    const int64_t ph = pad.needed ? 0 : d->pad_top, pw = pad.needed ? 0 : d->pad_left;

    cudnnDataType_t dt, ct;
    kmux_compute_type eff;
    int strict = 0, allow_transform = 0;
    cudnnMathType_t math0;
    switch (d->x_type) {
    case KMUX_F64:
        dt = ct = CUDNN_DATA_DOUBLE, eff = KMUX_COMPUTE_F64, strict = 1, math0 = CUDNN_FMA_MATH;
        break;
    case KMUX_F32:
        dt = ct = CUDNN_DATA_FLOAT;
        if (d->compute_type == KMUX_COMPUTE_F32_FAST_TF32)
            eff = KMUX_COMPUTE_F32_FAST_TF32, math0 = CUDNN_DEFAULT_MATH, allow_transform = 1;
        else
            eff = KMUX_COMPUTE_F32, strict = 1, math0 = CUDNN_FMA_MATH;
        break;
    case KMUX_F16:
    case KMUX_BF16:
        if (d->x_type == KMUX_BF16 && dv->sm < 80)
            return conv_unsupported(st, device, d, "bf16 needs sm_80");
        dt = d->x_type == KMUX_F16 ? CUDNN_DATA_HALF : CUDNN_DATA_BFLOAT16;
        ct = d->compute_type == KMUX_COMPUTE_F16 ? CUDNN_DATA_HALF : CUDNN_DATA_FLOAT;
        eff = d->compute_type == KMUX_COMPUTE_F16 ? KMUX_COMPUTE_F16 : KMUX_COMPUTE_F32;
        math0 = CUDNN_TENSOR_OP_MATH;
        break;
    default:
        return conv_unsupported(st, device, d, "cuDNN convolutions take f64, f32, f16 and bf16");
    }

    conv_plan *p = kmux_sys_calloc(1, sizeof *p);
    if (!p)
        return st->host->set_error(KMUX_ERR_OUT_OF_MEMORY,
                                   "kmux_conv2d_plan_create: out of memory");
    p->hdr.kind = KMUX_CUDA_PLAN_CONV;
    p->hdr.device = device;
    p->d = *d;
    p->pad = pad;
    kmux_status s = KMUX_OK;
    if (pad.needed && (pad.elements > INT_MAX || pad.hp > INT_MAX || pad.wp > INT_MAX)) {
        snprintf(why, sizeof why,
                 "the zero-padded copy for asymmetric padding would have 2^31 elements or more "
                 "(cuDNN's limit)");
        goto own_impls;
    }
    cudnnTensorFormat_t fmt = d->layout == KMUX_NHWC ? CUDNN_TENSOR_NHWC : CUDNN_TENSOR_NCHW;
    cudnnStatus_t cs;
    const char *what = "creating descriptors";
    if ((cs = cudnnCreateTensorDescriptor(&p->xd)) != CUDNN_STATUS_SUCCESS ||
        (cs = cudnnCreateTensorDescriptor(&p->yd)) != CUDNN_STATUS_SUCCESS ||
        (cs = cudnnCreateFilterDescriptor(&p->wd)) != CUDNN_STATUS_SUCCESS ||
        (cs = cudnnCreateConvolutionDescriptor(&p->cd)) != CUDNN_STATUS_SUCCESS)
        goto dnn_fail;
    what = "describing the tensors";
    if ((cs = cudnnSetTensor4dDescriptor(p->xd, fmt, dt, (int)d->n, (int)d->c, (int)hx, (int)wx)) !=
            CUDNN_STATUS_SUCCESS ||
        (cs = cudnnSetTensor4dDescriptor(p->yd, fmt, dt, (int)d->n, (int)d->k, (int)p_out,
                                         (int)q_out)) != CUDNN_STATUS_SUCCESS ||
        (cs = cudnnSetFilter4dDescriptor(p->wd, dt, fmt, (int)d->k, (int)(d->c / d->groups),
                                         (int)d->r, (int)d->s)) != CUDNN_STATUS_SUCCESS)
        goto dnn_fail;
    what = "describing the convolution";
    if ((cs = cudnnSetConvolution2dDescriptor(
             p->cd, (int)ph, (int)pw, (int)d->stride_h, (int)d->stride_w, (int)d->dilation_h,
             (int)d->dilation_w, CUDNN_CROSS_CORRELATION, ct)) != CUDNN_STATUS_SUCCESS ||
        (cs = cudnnSetConvolutionGroupCount(p->cd, (int)d->groups)) != CUDNN_STATUS_SUCCESS ||
        (cs = cudnnSetConvolutionMathType(p->cd, math0)) != CUDNN_STATUS_SUCCESS)
        goto dnn_fail;

    size_t pref_cap = prefs ? prefs->max_workspace_bytes : SIZE_MAX;
    int need_det = prefs ? prefs->require_deterministic : 0;
    size_t cap = pref_cap == SIZE_MAX ? KMUX_CUDA_CONV_DEFAULT_WS : pref_cap;
    /* the padded copy comes out of the same cap */
    size_t pad_bytes = pad.needed ? pad.bytes : 0;
    if (pref_cap != SIZE_MAX && pad_bytes > cap) {
        snprintf(why, sizeof why,
                 "the zero-padded copy for asymmetric padding needs %zu bytes of workspace, "
                 "prefs->max_workspace_bytes is %zu",
                 pad_bytes, cap);
        goto own_impls;
    }
    if (pref_cap != SIZE_MAX) cap -= pad_bytes;
    kmux_cuda_guard g;
    s = kmux_cuda_enter(st, device, "kmux_conv2d_plan_create", &g);
    if (s != KMUX_OK) {
        conv_free(p);
        return s;
    }
    pthread_mutex_lock(&dv->lock);
    cudnnHandle_t h;
    s = kmux_cuda_dnn_query_handle(st, device, &h);
    ranked r[RANKED_MAX];
    int got = 0;
    int rejected_cap = 0, rejected_det = 0, rejected_transform = 0;
    cudnnStatus_t refused = CUDNN_STATUS_SUCCESS;
    if (s == KMUX_OK) {
        cs = heuristics(h, p, r, &got);
        /* cuDNN refusing the problem (a NOT_SUPPORTED category status) means no algorithm: the
         * own kernel runs it; anything else (allocation, a bad descriptor) fails the plan */
        if (CUDNN_STATUS_CATEGORY(cs) == CUDNN_STATUS_NOT_SUPPORTED)
            got = 0, refused = cs;
        else if (cs != CUDNN_STATUS_SUCCESS)
            s = kmux_cuda_fail_dnn(
                st, cs, "kmux_conv2d_plan_create: cudnnGet*Algorithm_v7 on cuda:%d", device);
    }
    for (int i = 0; s == KMUX_OK && i < got && p->n_impl < KMUX_CUDA_MAX_CONV_ALGOS; i++) {
        if (r[i].status != CUDNN_STATUS_SUCCESS) continue;
        if (is_transform_algo(d->direction, r[i].algo) && !allow_transform) {
            rejected_transform++;
            continue;
        }
        if (need_det && r[i].determinism != CUDNN_DETERMINISTIC) {
            rejected_det++;
            continue;
        }
        cudnnMathType_t m = strict ? CUDNN_FMA_MATH : r[i].math;
        if (strict && r[i].math != CUDNN_FMA_MATH && r[i].math != CUDNN_DEFAULT_MATH) continue;
        int dup = 0;
        for (int j = 0; j < p->n_impl; j++)
            dup |= p->impl[j].algo == r[i].algo && p->impl[j].math == m;
        if (dup) continue;
        cudnnConvolutionDescriptor_t icd = NULL;
        if (make_cd(p, m, &icd) != CUDNN_STATUS_SUCCESS) continue;
        size_t bytes = 0;
        if (ws_size(h, p, icd, r[i].algo, &bytes) != CUDNN_STATUS_SUCCESS || bytes > cap) {
            if (bytes > cap) rejected_cap++;
            cudnnDestroyConvolutionDescriptor(icd);
            continue;
        }
        conv_impl *im = &p->impl[p->n_impl++];
        im->tile = -1;
        im->cd = icd;
        im->algo = r[i].algo;
        im->ws = bytes;
        im->math = m;
        im->deterministic = r[i].determinism == CUDNN_DETERMINISTIC;
        /* f32 data with any math but FMA may use TF32 tensor cores on sm_80+ */
        if (d->x_type == KMUX_F32)
            im->effective = m == CUDNN_FMA_MATH ? KMUX_COMPUTE_F32 : KMUX_COMPUTE_F32_FAST_TF32;
        else
            im->effective = eff;
        snprintf(im->name, sizeof im->name, "cudnn:%s:%s,math=%s%s", dir_name(d->direction),
                 algo_name(d->direction, im->algo), math_name(m), pad.needed ? "+pad" : "");
    }
    pthread_mutex_unlock(&dv->lock);
    kmux_cuda_leave(&g);
    if (s != KMUX_OK) {
        conv_free(p);
        return s;
    }
    if (p->n_impl == 0 && refused != CUDNN_STATUS_SUCCESS)
        snprintf(why, sizeof why, "cuDNN %zu refuses the problem (cudnnGet*Algorithm_v7: %s)",
                 cudnnGetVersion(), cudnnGetErrorString(refused));
    else if (p->n_impl == 0)
        snprintf(why, sizeof why,
                 "no cuDNN %zu algorithm qualifies (%d ranked; %d over the %zu-byte workspace cap, "
                 "%d not deterministic, %d FFT/Winograd excluded at this precision)",
                 cudnnGetVersion(), got, rejected_cap, cap, rejected_det, rejected_transform);
own_impls:
    s = add_own(st, p, own, why);
    if (s != KMUX_OK) {
        conv_free(p);
        return s;
    }
    if (st->host->verbose >= 2)
        st->host->trace(2, "cuda,conv_plan,cuda:%d,%d candidates,first %s", device, p->n_impl,
                        p->impl[0].name);
    *plan = p;
    *impl_count = p->n_impl;
    return KMUX_OK;

dnn_fail:;
    kmux_status fs =
        kmux_cuda_fail_dnn(st, cs, "kmux_conv2d_plan_create: %s on cuda:%d", what, device);
    conv_free(p);
    return fs;
}

kmux_status kmux_cuda_conv2d_execute(void *state, const void *plan, int impl, void *stream,
                                     const kmux_conv2d_args *args) {
    kmux_cuda_state *st = state;
    const conv_plan *p = plan;
    kmux_cuda_stream *cs = stream;
    if (impl < 0 || impl >= p->n_impl) impl = 0;
    const conv_impl *im = &p->impl[impl];
    if (im->tile >= 0) return kmux_cuda_own_conv(st, cs, &p->d, args, im->tile);
    const kmux_cuda_conv_pad *pad = &p->pad;
    kmux_cuda_guard g;
    kmux_status s = kmux_cuda_enter(st, p->hdr.device, "kmux_conv2d_execute", &g);
    if (s != KMUX_OK) return s;
    cudnnHandle_t h;
    void *ws = NULL;
    size_t off_pad = kmux_cuda_align_up(im->ws, 256);
    size_t total = pad->needed ? off_pad + pad->bytes : im->ws;
    s = kmux_cuda_stream_dnn(st, cs, &h);
    if (s == KMUX_OK)
        s = kmux_cuda_stream_workspace(st, cs, total, args->workspace, args->workspace_bytes,
                                       "kmux_conv2d_execute", &ws);
    /* x (or dx) as cuDNN sees it: the caller's, or the zero-padded copy */
    void *x = args->x;
    if (s == KMUX_OK && pad->needed) {
        x = (char *)ws + off_pad;
        s = kmux_cuda_conv_pad_in(st, p->hdr.device, cs->stream, pad, args->x, x);
    }
    if (s == KMUX_OK) {
        cudnnStatus_t ds;
        switch (p->d.direction) {
        case KMUX_CONV_FWD:
            ds = cudnnConvolutionForward(h, args->alpha, p->xd, x, p->wd, args->w, im->cd,
                                         (cudnnConvolutionFwdAlgo_t)im->algo, ws, im->ws,
                                         args->beta, p->yd, args->y);
            break;
        case KMUX_CONV_BWD_DATA:
            ds = cudnnConvolutionBackwardData(h, args->alpha, p->wd, args->w, p->yd, args->y,
                                              im->cd, (cudnnConvolutionBwdDataAlgo_t)im->algo, ws,
                                              im->ws, args->beta, p->xd, x);
            break;
        default:
            ds = cudnnConvolutionBackwardFilter(h, args->alpha, p->xd, x, p->yd, args->y, im->cd,
                                                (cudnnConvolutionBwdFilterAlgo_t)im->algo, ws,
                                                im->ws, args->beta, p->wd, args->w);
            break;
        }
        if (ds != CUDNN_STATUS_SUCCESS)
            s = kmux_cuda_fail_dnn(st, ds, "kmux_conv2d_execute: %s on cuda:%d", im->name,
                                   p->hdr.device);
    }
    if (s == KMUX_OK && pad->needed && p->d.direction == KMUX_CONV_BWD_DATA)
        s = kmux_cuda_conv_pad_out(st, p->hdr.device, cs->stream, pad, x, args->x);
    kmux_cuda_leave(&g);
    return s;
}

kmux_status kmux_cuda_conv_plan_info(void *state, const void *plan, int impl,
                                     kmux_plan_info *info) {
    (void)state;
    const conv_plan *p = plan;
    if (impl < 0 || impl >= p->n_impl) impl = 0;
    const conv_impl *im = &p->impl[impl];
    info->impl = im->name;
    info->effective_compute = im->effective;
    info->workspace_bytes = im->tile >= 0   ? 0
                            : p->pad.needed ? kmux_cuda_align_up(im->ws, 256) + p->pad.bytes
                                            : im->ws;
    info->deterministic = im->deterministic;
    return KMUX_OK;
}

void kmux_cuda_conv_plan_destroy(void *state, void *plan) {
    (void)state;
    conv_free(plan);
}
