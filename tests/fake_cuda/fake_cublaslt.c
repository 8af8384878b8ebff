/*
 * fake_cublaslt.c - a fake cuBLASLt that computes, "libcublasLt.so.13", a TEST TOOL written from
 * NVIDIA's cuBLASLt documentation (cublasLtMatmul and its type tables, the descriptor, layout,
 * preference and algorithm attribute references, Tensor Core Usage, the FP8 rules) and
 * <cublasLt.h>. It exports every function the CUDA plugin resolves (KMUX_CUDA_LT_FUNCS and
 * KMUX_CUDA_LT_OPTIONAL_FUNCS of backends/cuda/cuda_libs.h) with the header's signatures, for the
 * fake CUDA driver (fake_cuda_driver.cpp), whose "device" memory is host memory: a device
 * pointer is a host address, and the driver is synchronous, so cublasLtMatmul computes on the
 * spot and ignores the stream. The device is taken to be sm_90 (the fake driver's; a cuBLASLt
 * cannot ask the driver from here).
 *
 * Modelled:
 *   - descriptors in the caller's storage (the *Init_internal entry points; the state fits the
 *     opaque structs, static asserts below; CUBLAS_STATUS_ALLOC_FAILED when the storage is too
 *     small, as cublasLt.h documents); SetAttribute with the documented type size of each
 *     attribute (CUBLAS_STATUS_INVALID_VALUE otherwise); an attribute not modelled is
 *     CUBLAS_STATUS_NOT_SUPPORTED;
 *   - the type table of cublasLtMatmul (compute, scale, A/B, C/D and bias types), the IMMA rules
 *     for i8 x i8 -> i32 (TN, m, k and leading dimensions multiples of 4, 4-byte pointers), the
 *     FP8 rules on Hopper (compute/scale 32F, TN, no e5m2 x e5m2, the Tensor Core Usage
 *     conditions as requirements: k, m * sizeof(C), leading dimensions and batch strides in bytes
 *     multiples of 16, 16-byte pointers), epilogues DEFAULT/RELU/GELU/BIAS/RELU_BIAS/GELU_BIAS
 *     (none for 32I; none with a bias and an activation on a row-major D);
 *   - three algorithms per supported problem: 0 and 1 need 16-byte aligned matrices (1 splits K in
 *     two and needs 4 KiB of workspace), 2 any alignment of at least the element size; the
 *     preference's MAX_WORKSPACE_BYTES (default 0) and MIN_ALIGNMENT_*_BYTES (default 256) and the
 *     bias pointer's value (its alignment) filter them;
 *   - cublasLtMatmul: D = act(alpha * scale_a * scale_b * op(A) op(B) + beta * scale_c * C + bias)
 *     (times scale_d for an fp8 D; amax_d = max |D| before scale_d), column- and row-major
 *     layouts, leading dimensions, strided batches; accumulation in f64 for 64F, wrapping int32
 *     for 32I, f32 otherwise, inputs rounded to TF32 / f16 / bf16 for the FAST_* compute types;
 *     beta == 0 never reads C; alpha/beta are read through the pointers in the scale type (host
 *     or device pointer mode: the same memory here); the algorithm's alignment and workspace
 *     requirements are checked (CUBLAS_STATUS_INVALID_VALUE).
 * Refused (CUBLAS_STATUS_NOT_SUPPORTED): FNUZ types (CUDA has none), complex and other types,
 * mixed A/B types outside fp8, COL32 and other orders, pointer-array batches, aux epilogues,
 * backward epilogues, other pointer modes, block-scaled modes, the matrix transform API.
 *
 * Built a second time with KMUX_FAKE_LT_NONE (tests/fake_cuda/CMakeLists.txt: the placeholder
 * next to the fake driver): the same descriptors and checks, but a cuBLASLt that has no
 * algorithm for any problem (cublasLtMatmulAlgoGetHeuristic answers CUBLAS_STATUS_NOT_SUPPORTED
 * with no result, cublasLtMatmul CUBLAS_STATUS_NOT_SUPPORTED), so the plugin run against it
 * offers kmux's own kernels only (its fallback path).
 */
#include "fake_fail.h"
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cublasLt.h>

#include "dispatch/common/kmux_dtype_codec.h"

#define EXPORT __attribute__((visibility("default")))

#define MAGIC_HANDLE 0x6b6d7578u /* "kmux" */
#define MAGIC_LAYOUT 0x6b4c4159u
#define MAGIC_DESC 0x6b444553u
#define MAGIC_PREF 0x6b505246u
#define MAGIC_ALGO 0x6b414c47u
#define MAGIC_EMU 0x6b454d55u

/* Workspace algorithm 1 needs (split-K partials). */
#define SPLITK_WS 4096u

struct fake_handle {
    uint32_t magic;
};

typedef struct fake_layout {
    uint32_t magic;
    uint32_t type; /* cudaDataType */
    int32_t order; /* cublasLtOrder_t */
    int32_t batch;
    uint64_t rows, cols;
    int64_t ld, stride;
    uint32_t batch_mode;
} fake_layout;

typedef struct fake_desc {
    uint32_t magic;
    int32_t compute, scale, pointer_mode;
    int32_t transa, transb, transc;
    uint32_t epilogue;
    int32_t bias_type; /* -1: the table's */
    int8_t fast_accum;
    const void *bias, *a_scale, *b_scale, *c_scale, *d_scale;
    void *amax_d;
    const void *emulation;
} fake_desc;

typedef struct fake_pref {
    uint32_t magic;
    uint32_t search_mode;
    uint64_t max_ws;
    uint32_t align[4]; /* A, B, C, D */
} fake_pref;

typedef struct fake_emu {
    uint32_t magic;
    int32_t strategy, special;
} fake_emu;

/* What an algorithm descriptor holds (inside cublasLtMatmulAlgo_t's 64 bytes). */
typedef struct fake_algo {
    uint32_t magic;
    int32_t id;
    uint32_t tile, stages;
    int32_t splitk;
    uint16_t cluster;
    uint16_t any_align; /* 1: element-size alignment suffices; 0: 16 bytes */
    uint64_t ws;
    int32_t compute;
    uint32_t atype, btype, ctype, dtype;
} fake_algo;

_Static_assert(sizeof(fake_layout) <= sizeof(cublasLtMatrixLayoutOpaque_t), "layout state");
_Static_assert(sizeof(fake_desc) <= sizeof(cublasLtMatmulDescOpaque_t), "matmul desc state");
_Static_assert(sizeof(fake_pref) <= sizeof(cublasLtMatmulPreferenceOpaque_t), "preference state");
_Static_assert(sizeof(fake_emu) <= sizeof(cublasLtEmulationDescOpaque_t), "emulation state");
_Static_assert(sizeof(fake_algo) <= sizeof(cublasLtMatmulAlgo_t), "algo state");

/* ---- handle, version, status ------------------------------------------------------------ */

static int handle_ok(cublasLtHandle_t h) {
    const struct fake_handle *f = (const struct fake_handle *)h;
    return f && f->magic == MAGIC_HANDLE;
}

EXPORT cublasStatus_t cublasLtCreate(cublasLtHandle_t *lightHandle) {
    KMUX_FAKE_FAIL_POINT("libcublasLt", CUBLAS_STATUS_INTERNAL_ERROR);
    if (!lightHandle) return CUBLAS_STATUS_INVALID_VALUE;
    struct fake_handle *h = malloc(sizeof *h);
    if (!h) return CUBLAS_STATUS_ALLOC_FAILED;
    h->magic = MAGIC_HANDLE;
    *lightHandle = (cublasLtHandle_t)h;
    return CUBLAS_STATUS_SUCCESS;
}

EXPORT cublasStatus_t cublasLtDestroy(cublasLtHandle_t lightHandle) {
    KMUX_FAKE_FAIL_POINT("libcublasLt", CUBLAS_STATUS_INTERNAL_ERROR);
    struct fake_handle *h = (struct fake_handle *)lightHandle;
    if (!handle_ok(lightHandle)) return CUBLAS_STATUS_NOT_INITIALIZED;
    h->magic = 0;
    free(h);
    return CUBLAS_STATUS_SUCCESS;
}

EXPORT const char *cublasLtGetStatusName(cublasStatus_t status) {
    switch (status) {
    case CUBLAS_STATUS_SUCCESS:
        return "CUBLAS_STATUS_SUCCESS";
    case CUBLAS_STATUS_NOT_INITIALIZED:
        return "CUBLAS_STATUS_NOT_INITIALIZED";
    case CUBLAS_STATUS_ALLOC_FAILED:
        return "CUBLAS_STATUS_ALLOC_FAILED";
    case CUBLAS_STATUS_INVALID_VALUE:
        return "CUBLAS_STATUS_INVALID_VALUE";
    case CUBLAS_STATUS_ARCH_MISMATCH:
        return "CUBLAS_STATUS_ARCH_MISMATCH";
    case CUBLAS_STATUS_MAPPING_ERROR:
        return "CUBLAS_STATUS_MAPPING_ERROR";
    case CUBLAS_STATUS_EXECUTION_FAILED:
        return "CUBLAS_STATUS_EXECUTION_FAILED";
    case CUBLAS_STATUS_INTERNAL_ERROR:
        return "CUBLAS_STATUS_INTERNAL_ERROR";
    case CUBLAS_STATUS_NOT_SUPPORTED:
        return "CUBLAS_STATUS_NOT_SUPPORTED";
    case CUBLAS_STATUS_LICENSE_ERROR:
        return "CUBLAS_STATUS_LICENSE_ERROR";
    default:
        return "CUBLAS_STATUS_UNKNOWN";
    }
}

EXPORT const char *cublasLtGetStatusString(cublasStatus_t status) {
    switch (status) {
    case CUBLAS_STATUS_SUCCESS:
        return "success (kmux fake cuBLASLt, computing on host memory)";
    case CUBLAS_STATUS_NOT_SUPPORTED:
#if defined(KMUX_FAKE_LT_NONE)
        return "operation not supported (kmux fake cuBLASLt: no algorithm for any problem)";
#else
        return "operation not supported (kmux fake cuBLASLt)";
#endif
    case CUBLAS_STATUS_INVALID_VALUE:
        return "invalid value (kmux fake cuBLASLt)";
    case CUBLAS_STATUS_NOT_INITIALIZED:
        return "not initialized (kmux fake cuBLASLt)";
    case CUBLAS_STATUS_ALLOC_FAILED:
        return "resource allocation failed (kmux fake cuBLASLt)";
    default:
        return "error (kmux fake cuBLASLt)";
    }
}

/* The cuBLASLt these headers describe (13.1.0: 130100). */
EXPORT size_t cublasLtGetVersion(void) {
    return CUBLAS_VERSION;
}

/* ---- descriptors ------------------------------------------------------------------------ */

static cublasStatus_t init_opaque(void *p, size_t size, size_t need, size_t state) {
    if (!p) return CUBLAS_STATUS_INVALID_VALUE;
    if (size < need) return CUBLAS_STATUS_ALLOC_FAILED; /* cublasLt.h's *Init contract */
    memset(p, 0, state);
    return CUBLAS_STATUS_SUCCESS;
}

/* Copies an attribute of exactly `want` bytes. */
static cublasStatus_t set_val(void *dst, size_t want, const void *buf, size_t size) {
    if (!buf || size != want) return CUBLAS_STATUS_INVALID_VALUE;
    memcpy(dst, buf, want);
    return CUBLAS_STATUS_SUCCESS;
}

/* Writes an attribute of `n` bytes as the GetAttribute functions document. */
static cublasStatus_t get_val(void *buf, size_t size, size_t *written, const void *v, size_t n) {
    if (size == 0) {
        if (!written) return CUBLAS_STATUS_INVALID_VALUE;
        *written = n;
        return CUBLAS_STATUS_SUCCESS;
    }
    if (!buf || size != n) return CUBLAS_STATUS_INVALID_VALUE;
    memcpy(buf, v, n);
    if (written) *written = n;
    return CUBLAS_STATUS_SUCCESS;
}

EXPORT cublasStatus_t cublasLtMatrixLayoutInit_internal(cublasLtMatrixLayout_t matLayout,
                                                        size_t size, cudaDataType type,
                                                        uint64_t rows, uint64_t cols, int64_t ld) {
    KMUX_FAKE_FAIL_POINT("libcublasLt", CUBLAS_STATUS_INTERNAL_ERROR);
    cublasStatus_t s =
        init_opaque(matLayout, size, sizeof(cublasLtMatrixLayoutOpaque_t), sizeof(fake_layout));
    if (s != CUBLAS_STATUS_SUCCESS) return s;
    fake_layout *l = (fake_layout *)matLayout;
    l->magic = MAGIC_LAYOUT;
    l->type = (uint32_t)type;
    l->order = CUBLASLT_ORDER_COL;
    l->batch = 1;
    l->rows = rows, l->cols = cols, l->ld = ld;
    return CUBLAS_STATUS_SUCCESS;
}

EXPORT cublasStatus_t cublasLtMatrixLayoutSetAttribute(cublasLtMatrixLayout_t matLayout,
                                                       cublasLtMatrixLayoutAttribute_t attr,
                                                       const void *buf, size_t sizeInBytes) {
    KMUX_FAKE_FAIL_POINT("libcublasLt", CUBLAS_STATUS_INTERNAL_ERROR);
    fake_layout *l = (fake_layout *)matLayout;
    if (!l || l->magic != MAGIC_LAYOUT) return CUBLAS_STATUS_INVALID_VALUE;
    switch (attr) {
    case CUBLASLT_MATRIX_LAYOUT_TYPE:
        return set_val(&l->type, sizeof l->type, buf, sizeInBytes);
    case CUBLASLT_MATRIX_LAYOUT_ORDER:
        return set_val(&l->order, sizeof l->order, buf, sizeInBytes);
    case CUBLASLT_MATRIX_LAYOUT_ROWS:
        return set_val(&l->rows, sizeof l->rows, buf, sizeInBytes);
    case CUBLASLT_MATRIX_LAYOUT_COLS:
        return set_val(&l->cols, sizeof l->cols, buf, sizeInBytes);
    case CUBLASLT_MATRIX_LAYOUT_LD:
        return set_val(&l->ld, sizeof l->ld, buf, sizeInBytes);
    case CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT:
        return set_val(&l->batch, sizeof l->batch, buf, sizeInBytes);
    case CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET:
        return set_val(&l->stride, sizeof l->stride, buf, sizeInBytes);
    case CUBLASLT_MATRIX_LAYOUT_BATCH_MODE:
        return set_val(&l->batch_mode, sizeof l->batch_mode, buf, sizeInBytes);
    default: /* PLANE_OFFSET (planar complex) */
        return CUBLAS_STATUS_NOT_SUPPORTED;
    }
}

EXPORT cublasStatus_t cublasLtMatmulDescInit_internal(cublasLtMatmulDesc_t matmulDesc, size_t size,
                                                      cublasComputeType_t computeType,
                                                      cudaDataType_t scaleType) {
    KMUX_FAKE_FAIL_POINT("libcublasLt", CUBLAS_STATUS_INTERNAL_ERROR);
    cublasStatus_t s =
        init_opaque(matmulDesc, size, sizeof(cublasLtMatmulDescOpaque_t), sizeof(fake_desc));
    if (s != CUBLAS_STATUS_SUCCESS) return s;
    fake_desc *d = (fake_desc *)matmulDesc;
    d->magic = MAGIC_DESC;
    d->compute = (int32_t)computeType;
    d->scale = (int32_t)scaleType;
    d->pointer_mode = CUBLASLT_POINTER_MODE_HOST;
    d->transa = d->transb = d->transc = CUBLAS_OP_N;
    d->epilogue = CUBLASLT_EPILOGUE_DEFAULT;
    d->bias_type = -1;
    return CUBLAS_STATUS_SUCCESS;
}

EXPORT cublasStatus_t cublasLtMatmulDescSetAttribute(cublasLtMatmulDesc_t matmulDesc,
                                                     cublasLtMatmulDescAttributes_t attr,
                                                     const void *buf, size_t sizeInBytes) {
    KMUX_FAKE_FAIL_POINT("libcublasLt", CUBLAS_STATUS_INTERNAL_ERROR);
    fake_desc *d = (fake_desc *)matmulDesc;
    if (!d || d->magic != MAGIC_DESC) return CUBLAS_STATUS_INVALID_VALUE;
    switch (attr) {
    case CUBLASLT_MATMUL_DESC_COMPUTE_TYPE:
        return set_val(&d->compute, sizeof d->compute, buf, sizeInBytes);
    case CUBLASLT_MATMUL_DESC_SCALE_TYPE:
        return set_val(&d->scale, sizeof d->scale, buf, sizeInBytes);
    case CUBLASLT_MATMUL_DESC_POINTER_MODE:
        return set_val(&d->pointer_mode, sizeof d->pointer_mode, buf, sizeInBytes);
    case CUBLASLT_MATMUL_DESC_TRANSA:
        return set_val(&d->transa, sizeof d->transa, buf, sizeInBytes);
    case CUBLASLT_MATMUL_DESC_TRANSB:
        return set_val(&d->transb, sizeof d->transb, buf, sizeInBytes);
    case CUBLASLT_MATMUL_DESC_TRANSC:
        return set_val(&d->transc, sizeof d->transc, buf, sizeInBytes);
    case CUBLASLT_MATMUL_DESC_EPILOGUE:
        return set_val(&d->epilogue, sizeof d->epilogue, buf, sizeInBytes);
    case CUBLASLT_MATMUL_DESC_BIAS_POINTER:
        return set_val(&d->bias, sizeof d->bias, buf, sizeInBytes);
    case CUBLASLT_MATMUL_DESC_BIAS_DATA_TYPE:
        return set_val(&d->bias_type, sizeof d->bias_type, buf, sizeInBytes);
    case CUBLASLT_MATMUL_DESC_A_SCALE_POINTER:
        return set_val(&d->a_scale, sizeof d->a_scale, buf, sizeInBytes);
    case CUBLASLT_MATMUL_DESC_B_SCALE_POINTER:
        return set_val(&d->b_scale, sizeof d->b_scale, buf, sizeInBytes);
    case CUBLASLT_MATMUL_DESC_C_SCALE_POINTER:
        return set_val(&d->c_scale, sizeof d->c_scale, buf, sizeInBytes);
    case CUBLASLT_MATMUL_DESC_D_SCALE_POINTER:
        return set_val(&d->d_scale, sizeof d->d_scale, buf, sizeInBytes);
    case CUBLASLT_MATMUL_DESC_AMAX_D_POINTER:
        return set_val(&d->amax_d, sizeof d->amax_d, buf, sizeInBytes);
    case CUBLASLT_MATMUL_DESC_FAST_ACCUM:
        return set_val(&d->fast_accum, sizeof d->fast_accum, buf, sizeInBytes);
    case CUBLASLT_MATMUL_DESC_EMULATION_DESCRIPTOR:
        return set_val(&d->emulation, sizeof d->emulation, buf, sizeInBytes);
    default: /* fill mode, aux buffers, vector/batch strides, SM target, block scale modes */
        return CUBLAS_STATUS_NOT_SUPPORTED;
    }
}

EXPORT cublasStatus_t cublasLtMatmulPreferenceInit_internal(cublasLtMatmulPreference_t pref,
                                                            size_t size) {
    KMUX_FAKE_FAIL_POINT("libcublasLt", CUBLAS_STATUS_INTERNAL_ERROR);
    cublasStatus_t s =
        init_opaque(pref, size, sizeof(cublasLtMatmulPreferenceOpaque_t), sizeof(fake_pref));
    if (s != CUBLAS_STATUS_SUCCESS) return s;
    fake_pref *p = (fake_pref *)pref;
    p->magic = MAGIC_PREF;
    p->search_mode = CUBLASLT_SEARCH_BEST_FIT;
    p->max_ws = 0; /* documented default: no workspace allowed */
    for (int i = 0; i < 4; i++)
        p->align[i] = 256;
    return CUBLAS_STATUS_SUCCESS;
}

EXPORT cublasStatus_t cublasLtMatmulPreferenceSetAttribute(
    cublasLtMatmulPreference_t pref, cublasLtMatmulPreferenceAttributes_t attr, const void *buf,
    size_t sizeInBytes) {
    KMUX_FAKE_FAIL_POINT("libcublasLt", CUBLAS_STATUS_INTERNAL_ERROR);
    fake_pref *p = (fake_pref *)pref;
    if (!p || p->magic != MAGIC_PREF) return CUBLAS_STATUS_INVALID_VALUE;
    switch (attr) {
    case CUBLASLT_MATMUL_PREF_SEARCH_MODE:
        return set_val(&p->search_mode, sizeof p->search_mode, buf, sizeInBytes);
    case CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES:
        return set_val(&p->max_ws, sizeof p->max_ws, buf, sizeInBytes);
    case CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES:
        return set_val(&p->align[0], sizeof p->align[0], buf, sizeInBytes);
    case CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES:
        return set_val(&p->align[1], sizeof p->align[1], buf, sizeInBytes);
    case CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES:
        return set_val(&p->align[2], sizeof p->align[2], buf, sizeInBytes);
    case CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES:
        return set_val(&p->align[3], sizeof p->align[3], buf, sizeInBytes);
    default: /* reduction scheme mask, waves count, impl mask */
        return CUBLAS_STATUS_NOT_SUPPORTED;
    }
}

#if defined(CUBLAS_VERSION) && CUBLAS_VERSION >= 130000
EXPORT cublasStatus_t cublasLtEmulationDescInit_internal(cublasLtEmulationDesc_t emulationDesc,
                                                         size_t size) {
    KMUX_FAKE_FAIL_POINT("libcublasLt", CUBLAS_STATUS_INTERNAL_ERROR);
    cublasStatus_t s =
        init_opaque(emulationDesc, size, sizeof(cublasLtEmulationDescOpaque_t), sizeof(fake_emu));
    if (s != CUBLAS_STATUS_SUCCESS) return s;
    fake_emu *e = (fake_emu *)emulationDesc;
    e->magic = MAGIC_EMU;
    e->strategy = CUBLAS_EMULATION_STRATEGY_DEFAULT;
    e->special = 0xFFFF;
    return CUBLAS_STATUS_SUCCESS;
}

EXPORT cublasStatus_t cublasLtEmulationDescSetAttribute(cublasLtEmulationDesc_t emulationDesc,
                                                        cublasLtEmulationDescAttributes_t attr,
                                                        const void *buf, size_t sizeInBytes) {
    KMUX_FAKE_FAIL_POINT("libcublasLt", CUBLAS_STATUS_INTERNAL_ERROR);
    fake_emu *e = (fake_emu *)emulationDesc;
    if (!e || e->magic != MAGIC_EMU) return CUBLAS_STATUS_INVALID_VALUE;
    switch (attr) {
    case CUBLASLT_EMULATION_DESC_STRATEGY:
        return set_val(&e->strategy, sizeof e->strategy, buf, sizeInBytes);
    case CUBLASLT_EMULATION_DESC_SPECIAL_VALUES_SUPPORT:
        return set_val(&e->special, sizeof e->special, buf, sizeInBytes);
    default: /* fixed-point emulation controls */
        return CUBLAS_STATUS_NOT_SUPPORTED;
    }
}
#endif

/* ---- types ------------------------------------------------------------------------------ */

/* Bytes per element, 0 for a type this fake does not model. */
static size_t type_size(uint32_t t) {
    switch ((cudaDataType)t) {
    case CUDA_R_64F:
        return 8;
    case CUDA_R_32F:
    case CUDA_R_32I:
        return 4;
    case CUDA_R_16F:
    case CUDA_R_16BF:
        return 2;
    case CUDA_R_8I:
    case CUDA_R_8F_E4M3:
    case CUDA_R_8F_E5M2:
        return 1;
    default:
        return 0;
    }
}

static int is_fp8(uint32_t t) {
    return t == CUDA_R_8F_E4M3 || t == CUDA_R_8F_E5M2;
}

/* The kmux codec's type of a narrow float type. */
static kmux_dtype narrow_of(uint32_t t) {
    switch ((cudaDataType)t) {
    case CUDA_R_16F:
        return KMUX_F16;
    case CUDA_R_16BF:
        return KMUX_BF16;
    case CUDA_R_8F_E4M3:
        return KMUX_F8_E4M3;
    default:
        return KMUX_F8_E5M2;
    }
}

static double load(uint32_t t, const void *base, int64_t idx) {
    switch ((cudaDataType)t) {
    case CUDA_R_64F:
        return ((const double *)base)[idx];
    case CUDA_R_32F:
        return ((const float *)base)[idx];
    case CUDA_R_32I:
        return ((const int32_t *)base)[idx];
    case CUDA_R_8I:
        return ((const int8_t *)base)[idx];
    case CUDA_R_16F:
    case CUDA_R_16BF:
        return kmux_decode_f32(((const uint16_t *)base)[idx], narrow_of(t));
    default:
        return kmux_decode_f32(((const uint8_t *)base)[idx], narrow_of(t));
    }
}

/* Stores a float-path result, rounded once (fp8 saturates, as cuBLASLt's fp8 outputs do). */
static void store_f32(uint32_t t, void *base, int64_t idx, float v) {
    switch ((cudaDataType)t) {
    case CUDA_R_32F:
        ((float *)base)[idx] = v;
        break;
    case CUDA_R_16F:
    case CUDA_R_16BF:
        ((uint16_t *)base)[idx] = (uint16_t)kmux_encode_f32(v, narrow_of(t), 0);
        break;
    default:
        ((uint8_t *)base)[idx] = (uint8_t)kmux_encode_f32(v, narrow_of(t), 1);
        break;
    }
}

static float round_tf32(float x) {
    uint32_t u = kmux_f32_bits(x);
    if ((u & 0x7f800000u) == 0x7f800000u) return x; /* Inf, NaN */
    u += 0x0fffu + ((u >> 13) & 1u);                /* nearest, ties to even, at 10 bits */
    return kmux_f32_from_bits(u & ~0x1fffu);
}

/* ---- the problem and its rules ---------------------------------------------------------- */

typedef struct problem {
    const fake_desc *d;
    const fake_layout *a, *b, *c, *dd;
    uint64_t m, n, k;
    int ta, tb;         /* op(A), op(B) transposed */
    uint32_t bias_type; /* effective */
    int has_bias, act;  /* act: 0 none, 1 relu, 2 gelu */
    int fp8;
    int64_t batch;
} problem;

static int layout_ok(const fake_layout *l) {
    return l && l->magic == MAGIC_LAYOUT;
}

static int base_compute(int32_t c) {
    switch (c) {
    case CUBLAS_COMPUTE_16F_PEDANTIC:
        return CUBLAS_COMPUTE_16F;
    case CUBLAS_COMPUTE_32F_PEDANTIC:
        return CUBLAS_COMPUTE_32F;
    case CUBLAS_COMPUTE_64F_PEDANTIC:
        return CUBLAS_COMPUTE_64F;
    case CUBLAS_COMPUTE_32I_PEDANTIC:
        return CUBLAS_COMPUTE_32I;
    default:
        return c;
    }
}

/* The bias type of the table row (A/B type ab, C type c, compute), or 0 when the row has none
 * (the row itself checked by the caller). */
static uint32_t table_bias(int comp, uint32_t ab, uint32_t c) {
    (void)ab;
    if (comp == CUBLAS_COMPUTE_32I) return 0;
    if (is_fp8(ab)) return c == CUDA_R_16F ? CUDA_R_16F : CUDA_R_16BF;
    return c;
}

/* Checks the descriptor and layouts against the documented rules: SUCCESS, NOT_SUPPORTED (no
 * kernel), INVALID_VALUE (inconsistent). Fills *p. */
static cublasStatus_t check_problem(const fake_desc *d, const fake_layout *a, const fake_layout *b,
                                    const fake_layout *c, const fake_layout *dd, problem *p) {
    memset(p, 0, sizeof *p);
    if (!d || d->magic != MAGIC_DESC || !layout_ok(a) || !layout_ok(b) || !layout_ok(dd))
        return CUBLAS_STATUS_INVALID_VALUE;
    if (!c) c = dd; /* "If Cdesc is omitted, this function assumes it to be equal to Ddesc" */
    if (!layout_ok(c)) return CUBLAS_STATUS_INVALID_VALUE;
    p->d = d, p->a = a, p->b = b, p->c = c, p->dd = dd;
    const fake_layout *ls[4] = {a, b, c, dd};
    for (int i = 0; i < 4; i++) {
        if (ls[i]->order != CUBLASLT_ORDER_COL && ls[i]->order != CUBLASLT_ORDER_ROW)
            return CUBLAS_STATUS_NOT_SUPPORTED; /* COL32 & co. are Turing/Ampere IMMA orders */
        if (ls[i]->batch_mode != CUBLASLT_BATCH_MODE_STRIDED) return CUBLAS_STATUS_NOT_SUPPORTED;
        if (!type_size(ls[i]->type)) return CUBLAS_STATUS_NOT_SUPPORTED;
        if (ls[i]->batch < 1 || ls[i]->ld < 0) return CUBLAS_STATUS_INVALID_VALUE;
        uint64_t minld = ls[i]->order == CUBLASLT_ORDER_COL ? ls[i]->rows : ls[i]->cols;
        if (ls[i]->rows && ls[i]->cols && (uint64_t)ls[i]->ld < minld && !(i == 2 && !ls[i]->ld))
            return CUBLAS_STATUS_INVALID_VALUE; /* ld 0 of C: documented broadcast */
    }
    if (d->transa < CUBLAS_OP_N || d->transa > CUBLAS_OP_C || d->transb < CUBLAS_OP_N ||
        d->transb > CUBLAS_OP_C)
        return CUBLAS_STATUS_INVALID_VALUE;
    if (d->transc != CUBLAS_OP_N) return CUBLAS_STATUS_NOT_SUPPORTED; /* "only CUBLAS_OP_N" */
    if (d->pointer_mode != CUBLASLT_POINTER_MODE_HOST &&
        d->pointer_mode != CUBLASLT_POINTER_MODE_DEVICE)
        return CUBLAS_STATUS_NOT_SUPPORTED;
    p->ta = d->transa != CUBLAS_OP_N, p->tb = d->transb != CUBLAS_OP_N;
    p->m = dd->rows, p->n = dd->cols;
    uint64_t am = p->ta ? a->cols : a->rows, ak = p->ta ? a->rows : a->cols;
    uint64_t bk = p->tb ? b->cols : b->rows, bn = p->tb ? b->rows : b->cols;
    p->k = ak;
    if (am != p->m || bn != p->n || bk != p->k || c->rows != p->m || c->cols != p->n)
        return CUBLAS_STATUS_INVALID_VALUE;
    if (c->batch != dd->batch || a->batch != dd->batch || b->batch != dd->batch ||
        c->order != dd->order)
        return CUBLAS_STATUS_INVALID_VALUE;
    p->batch = dd->batch;

    /* the type table */
    const int comp = base_compute(d->compute);
    const uint32_t at = a->type, bt = b->type, ct = c->type, dt = dd->type;
    p->fp8 = is_fp8(at) || is_fp8(bt);
    if (p->fp8) {
        if (comp != CUBLAS_COMPUTE_32F || d->compute != CUBLAS_COMPUTE_32F ||
            d->scale != CUDA_R_32F)
            return CUBLAS_STATUS_NOT_SUPPORTED;
        if (!is_fp8(at) || !is_fp8(bt) || (at == CUDA_R_8F_E5M2 && bt == CUDA_R_8F_E5M2))
            return CUBLAS_STATUS_NOT_SUPPORTED;
        int d_ok =
            ct == CUDA_R_32F ? dt == CUDA_R_32F
            : ct == CUDA_R_16BF || ct == CUDA_R_16F
                ? dt == ct || dt == CUDA_R_8F_E4M3 ||
                      (dt == CUDA_R_8F_E5M2 && (at == CUDA_R_8F_E5M2 || bt == CUDA_R_8F_E5M2))
                : 0;
        if (!d_ok) return CUBLAS_STATUS_NOT_SUPPORTED;
    } else {
        if (at != bt || ct != dt) return CUBLAS_STATUS_NOT_SUPPORTED;
        int ok = 0;
        switch (comp) {
        case CUBLAS_COMPUTE_16F:
            ok = d->scale == CUDA_R_16F && at == CUDA_R_16F && ct == CUDA_R_16F;
            break;
        case CUBLAS_COMPUTE_32I:
            ok = d->scale == CUDA_R_32I && at == CUDA_R_8I && ct == CUDA_R_32I;
            break;
        case CUBLAS_COMPUTE_32F:
            ok = d->scale == CUDA_R_32F &&
                 (((at == CUDA_R_16BF || at == CUDA_R_16F) && (ct == at || ct == CUDA_R_32F)) ||
                  (at == CUDA_R_32F && ct == CUDA_R_32F));
            break;
        case CUBLAS_COMPUTE_32F_FAST_16F:
        case CUBLAS_COMPUTE_32F_FAST_16BF:
        case CUBLAS_COMPUTE_32F_FAST_TF32:
        case CUBLAS_COMPUTE_32F_EMULATED_16BFX9:
            ok = d->scale == CUDA_R_32F && at == CUDA_R_32F && ct == CUDA_R_32F;
            break;
        case CUBLAS_COMPUTE_64F:
            ok = d->scale == CUDA_R_64F && at == CUDA_R_64F && ct == CUDA_R_64F;
            break;
        default:
            break;
        }
        if (!ok) return CUBLAS_STATUS_NOT_SUPPORTED;
    }

    /* epilogue */
    switch (d->epilogue) {
    case CUBLASLT_EPILOGUE_DEFAULT:
        break;
    case CUBLASLT_EPILOGUE_RELU:
        p->act = 1;
        break;
    case CUBLASLT_EPILOGUE_GELU:
        p->act = 2;
        break;
    case CUBLASLT_EPILOGUE_BIAS:
        p->has_bias = 1;
        break;
    case CUBLASLT_EPILOGUE_RELU_BIAS:
        p->has_bias = 1, p->act = 1;
        break;
    case CUBLASLT_EPILOGUE_GELU_BIAS:
        p->has_bias = 1, p->act = 2;
        break;
    default: /* aux outputs, backward epilogues, bias gradients */
        return CUBLAS_STATUS_NOT_SUPPORTED;
    }
    if (d->epilogue != CUBLASLT_EPILOGUE_DEFAULT && comp == CUBLAS_COMPUTE_32I)
        return CUBLAS_STATUS_NOT_SUPPORTED; /* "Epilogue is not supported." */
    if (p->has_bias && p->act && dd->order == CUBLASLT_ORDER_ROW)
        return CUBLAS_STATUS_NOT_SUPPORTED; /* footnote: bias + activation, row-major D */
    if (p->has_bias) {
        uint32_t want = table_bias(comp, at, ct);
        p->bias_type = d->bias_type == -1 ? want : (uint32_t)d->bias_type;
        if (p->bias_type != want) return CUBLAS_STATUS_NOT_SUPPORTED;
    }

    /* IMMA with the regular ordering (the only one on Hopper) */
    if (comp == CUBLAS_COMPUTE_32I) {
        if (!p->ta || p->tb) return CUBLAS_STATUS_NOT_SUPPORTED; /* "TN" only */
        if (p->m % 4 || p->k % 4 || a->ld % 4 || b->ld % 4 || c->ld % 4 || dd->ld % 4)
            return CUBLAS_STATUS_NOT_SUPPORTED;
    }
    /* FP8: "TN" on Hopper, the Tensor Core Usage conditions as requirements */
    if (p->fp8) {
        if (!p->ta || p->tb) return CUBLAS_STATUS_NOT_SUPPORTED;
        for (int i = 0; i < 4; i++)
            if (ls[i]->order != CUBLASLT_ORDER_COL) return CUBLAS_STATUS_NOT_SUPPORTED;
        size_t cs = type_size(ct), ds = type_size(dt);
        if (p->k % 16 || (p->m * cs) % 16 || a->ld % 16 || b->ld % 16 ||
            ((uint64_t)c->ld * cs) % 16 || ((uint64_t)dd->ld * ds) % 16)
            return CUBLAS_STATUS_NOT_SUPPORTED;
        if (p->batch > 1 && (a->stride % 16 || b->stride % 16 || (c->stride * (int64_t)cs) % 16 ||
                             (dd->stride * (int64_t)ds) % 16))
            return CUBLAS_STATUS_NOT_SUPPORTED;
    }
    return CUBLAS_STATUS_SUCCESS;
}

/* Largest power of two <= 256 dividing v (256 for 0). */
static uint32_t ptr_align(uintptr_t v) {
    uint32_t a = 1;
    while (a < 256 && !(v & a))
        a <<= 1;
    return a;
}

/* The alignment each of A, B, C, D (and the bias) must have for an algorithm. */
static void required_align(const problem *p, int any_align, uint32_t req[5]) {
    const fake_layout *ls[4] = {p->a, p->b, p->c, p->dd};
    for (int i = 0; i < 4; i++) {
        uint32_t es = (uint32_t)type_size(ls[i]->type);
        req[i] = any_align && !p->fp8 ? es : 16;
        if (p->d->compute == CUBLAS_COMPUTE_32I || p->d->compute == CUBLAS_COMPUTE_32I_PEDANTIC)
            req[i] = req[i] < 4 ? 4 : req[i]; /* IMMA: 4-byte pointers */
    }
    uint32_t bs = p->has_bias ? (uint32_t)type_size(p->bias_type) : 1;
    req[4] = any_align && !p->fp8 ? bs : 16;
}

/* ---- algorithms ------------------------------------------------------------------------- */

static const struct {
    int32_t id;
    uint32_t tile, stages;
    int32_t splitk;
    uint16_t cluster, any_align;
    uint64_t ws;
} algos[3] = {
    {0, CUBLASLT_MATMUL_TILE_128x128, CUBLASLT_MATMUL_STAGES_64x4, 1, CUBLASLT_CLUSTER_SHAPE_1x1x1,
     0, 0},
    {1, CUBLASLT_MATMUL_TILE_64x64, CUBLASLT_MATMUL_STAGES_32x6, 2, CUBLASLT_CLUSTER_SHAPE_AUTO, 0,
     SPLITK_WS},
    {2, CUBLASLT_MATMUL_TILE_64x64, CUBLASLT_MATMUL_STAGES_64x3, 1, CUBLASLT_CLUSTER_SHAPE_AUTO, 1,
     0},
};

EXPORT cublasStatus_t cublasLtMatmulAlgoGetHeuristic(
    cublasLtHandle_t lightHandle, cublasLtMatmulDesc_t operationDesc, cublasLtMatrixLayout_t Adesc,
    cublasLtMatrixLayout_t Bdesc, cublasLtMatrixLayout_t Cdesc, cublasLtMatrixLayout_t Ddesc,
    cublasLtMatmulPreference_t preference, int requestedAlgoCount,
    cublasLtMatmulHeuristicResult_t heuristicResultsArray[], int *returnAlgoCount) {
    KMUX_FAKE_FAIL_POINT("libcublasLt", CUBLAS_STATUS_INTERNAL_ERROR);
    if (!handle_ok(lightHandle)) return CUBLAS_STATUS_NOT_INITIALIZED;
    if (!returnAlgoCount || requestedAlgoCount < 1 || !heuristicResultsArray)
        return CUBLAS_STATUS_INVALID_VALUE;
    *returnAlgoCount = 0;
    const fake_pref *pr = (const fake_pref *)preference;
    if (!pr || pr->magic != MAGIC_PREF) return CUBLAS_STATUS_INVALID_VALUE;
    problem p;
    cublasStatus_t s = check_problem((const fake_desc *)operationDesc, (const fake_layout *)Adesc,
                                     (const fake_layout *)Bdesc, (const fake_layout *)Cdesc,
                                     (const fake_layout *)Ddesc, &p);
    if (s != CUBLAS_STATUS_SUCCESS) return s;
#if defined(KMUX_FAKE_LT_NONE)
    return CUBLAS_STATUS_NOT_SUPPORTED; /* no algorithm for any problem */
#endif
    /* the promised alignments: the preferences, and the bias pointer's value */
    uint32_t have[5] = {pr->align[0], pr->align[1], pr->align[2], pr->align[3],
                        ptr_align((uintptr_t)p.d->bias)};
    int n = 0;
    for (int i = 0; i < 3 && n < requestedAlgoCount; i++) {
        if (algos[i].ws > pr->max_ws) continue;
        uint32_t req[5];
        required_align(&p, algos[i].any_align, req);
        int fits = 1;
        for (int j = 0; j < 5; j++)
            if ((j < 4 || p.has_bias) && have[j] < req[j]) fits = 0;
        if (!fits) continue;
        cublasLtMatmulHeuristicResult_t *r = &heuristicResultsArray[n++];
        memset(r, 0, sizeof *r);
        fake_algo *fa = (fake_algo *)(void *)&r->algo;
        fa->magic = MAGIC_ALGO;
        fa->id = algos[i].id;
        fa->tile = algos[i].tile, fa->stages = algos[i].stages, fa->splitk = algos[i].splitk;
        fa->cluster = algos[i].cluster, fa->any_align = algos[i].any_align;
        fa->ws = algos[i].ws;
        fa->compute = p.d->compute;
        fa->atype = p.a->type, fa->btype = p.b->type, fa->ctype = p.c->type;
        fa->dtype = p.dd->type;
        r->workspaceSize = (size_t)algos[i].ws;
        r->state = CUBLAS_STATUS_SUCCESS;
        r->wavesCount = 1.0f;
    }
    *returnAlgoCount = n;
    return n ? CUBLAS_STATUS_SUCCESS : CUBLAS_STATUS_NOT_SUPPORTED;
}

static const fake_algo *algo_of(const cublasLtMatmulAlgo_t *algo) {
    const fake_algo *fa = (const fake_algo *)(const void *)algo;
    return fa && fa->magic == MAGIC_ALGO && fa->id >= 0 && fa->id < 3 ? fa : NULL;
}

EXPORT cublasStatus_t cublasLtMatmulAlgoConfigGetAttribute(
    const cublasLtMatmulAlgo_t *algo, cublasLtMatmulAlgoConfigAttributes_t attr, void *buf,
    size_t sizeInBytes, size_t *sizeWritten) {
    KMUX_FAKE_FAIL_POINT("libcublasLt", CUBLAS_STATUS_INTERNAL_ERROR);
    const fake_algo *fa = algo_of(algo);
    if (!fa) return CUBLAS_STATUS_INVALID_VALUE;
    const uint32_t zero32 = 0;
    const uint16_t zero16 = 0;
    switch (attr) {
    case CUBLASLT_ALGO_CONFIG_ID:
        return get_val(buf, sizeInBytes, sizeWritten, &fa->id, sizeof fa->id);
    case CUBLASLT_ALGO_CONFIG_TILE_ID:
        return get_val(buf, sizeInBytes, sizeWritten, &fa->tile, sizeof fa->tile);
    case CUBLASLT_ALGO_CONFIG_SPLITK_NUM:
        return get_val(buf, sizeInBytes, sizeWritten, &fa->splitk, sizeof fa->splitk);
    case CUBLASLT_ALGO_CONFIG_REDUCTION_SCHEME: {
        uint32_t r = fa->splitk > 1 ? CUBLASLT_REDUCTION_SCHEME_COMPUTE_TYPE
                                    : CUBLASLT_REDUCTION_SCHEME_NONE;
        return get_val(buf, sizeInBytes, sizeWritten, &r, sizeof r);
    }
    case CUBLASLT_ALGO_CONFIG_CTA_SWIZZLING:
    case CUBLASLT_ALGO_CONFIG_CUSTOM_OPTION:
        return get_val(buf, sizeInBytes, sizeWritten, &zero32, sizeof zero32);
    case CUBLASLT_ALGO_CONFIG_STAGES_ID:
        return get_val(buf, sizeInBytes, sizeWritten, &fa->stages, sizeof fa->stages);
    case CUBLASLT_ALGO_CONFIG_INNER_SHAPE_ID:
        return get_val(buf, sizeInBytes, sizeWritten, &zero16, sizeof zero16);
    case CUBLASLT_ALGO_CONFIG_CLUSTER_SHAPE_ID:
        return get_val(buf, sizeInBytes, sizeWritten, &fa->cluster, sizeof fa->cluster);
    default:
        return CUBLAS_STATUS_INVALID_VALUE;
    }
}

EXPORT cublasStatus_t cublasLtMatmulAlgoCapGetAttribute(const cublasLtMatmulAlgo_t *algo,
                                                        cublasLtMatmulAlgoCapAttributes_t attr,
                                                        void *buf, size_t sizeInBytes,
                                                        size_t *sizeWritten) {
    KMUX_FAKE_FAIL_POINT("libcublasLt", CUBLAS_STATUS_INTERNAL_ERROR);
    const fake_algo *fa = algo_of(algo);
    if (!fa) return CUBLAS_STATUS_INVALID_VALUE;
    int32_t i32 = 0;
    uint32_t u32 = 0;
    uint64_t u64 = 0;
    switch (attr) {
    case CUBLASLT_ALGO_CAP_SPLITK_SUPPORT:
        i32 = fa->splitk > 1;
        break;
    case CUBLASLT_ALGO_CAP_STRIDED_BATCH_SUPPORT:
    case CUBLASLT_ALGO_CAP_OUT_OF_PLACE_RESULT_SUPPORT:
        i32 = 1;
        break;
    case CUBLASLT_ALGO_CAP_UPLO_SUPPORT:
    case CUBLASLT_ALGO_CAP_CUSTOM_OPTION_MAX:
    case CUBLASLT_ALGO_CAP_CUSTOM_MEMORY_ORDER:
    case CUBLASLT_ALGO_CAP_LD_NEGATIVE:
    case CUBLASLT_ALGO_CAP_POINTER_ARRAY_BATCH_SUPPORT:
    case CUBLASLT_ALGO_CAP_FLOATING_POINT_EMULATION_SUPPORT: /* bf16x9 is Blackwell's */
        i32 = 0;
        break;
    case CUBLASLT_ALGO_CAP_REDUCTION_SCHEME_MASK:
        u32 = fa->splitk > 1 ? CUBLASLT_REDUCTION_SCHEME_COMPUTE_TYPE : 0;
        return get_val(buf, sizeInBytes, sizeWritten, &u32, sizeof u32);
    case CUBLASLT_ALGO_CAP_CTA_SWIZZLING_SUPPORT:
        return get_val(buf, sizeInBytes, sizeWritten, &u32, sizeof u32);
    case CUBLASLT_ALGO_CAP_POINTER_MODE_MASK:
        u32 = CUBLASLT_POINTER_MODE_MASK_HOST | CUBLASLT_POINTER_MODE_MASK_DEVICE;
        return get_val(buf, sizeInBytes, sizeWritten, &u32, sizeof u32);
    case CUBLASLT_ALGO_CAP_EPILOGUE_MASK:
        u32 = CUBLASLT_EPILOGUE_DEFAULT | CUBLASLT_EPILOGUE_RELU | CUBLASLT_EPILOGUE_BIAS |
              CUBLASLT_EPILOGUE_GELU;
        return get_val(buf, sizeInBytes, sizeWritten, &u32, sizeof u32);
    case CUBLASLT_ALGO_CAP_TILE_IDS:
        return get_val(buf, sizeInBytes, sizeWritten, &fa->tile, sizeof fa->tile);
    case CUBLASLT_ALGO_CAP_STAGES_IDS:
        return get_val(buf, sizeInBytes, sizeWritten, &fa->stages, sizeof fa->stages);
    case CUBLASLT_ALGO_CAP_NUMERICAL_IMPL_FLAGS:
        return get_val(buf, sizeInBytes, sizeWritten, &u64, sizeof u64);
    case CUBLASLT_ALGO_CAP_MIN_ALIGNMENT_A_BYTES:
    case CUBLASLT_ALGO_CAP_MIN_ALIGNMENT_B_BYTES:
    case CUBLASLT_ALGO_CAP_MIN_ALIGNMENT_C_BYTES:
    case CUBLASLT_ALGO_CAP_MIN_ALIGNMENT_D_BYTES: {
        const uint32_t t[4] = {fa->atype, fa->btype, fa->ctype, fa->dtype};
        u32 = fa->any_align && !is_fp8(fa->atype)
                  ? (uint32_t)type_size(t[attr - CUBLASLT_ALGO_CAP_MIN_ALIGNMENT_A_BYTES])
                  : 16;
        return get_val(buf, sizeInBytes, sizeWritten, &u32, sizeof u32);
    }
    default:
        return CUBLAS_STATUS_INVALID_VALUE;
    }
    return get_val(buf, sizeInBytes, sizeWritten, &i32, sizeof i32);
}

/* ---- cublasLtMatmul --------------------------------------------------------------------- */

static int64_t elem_off(const fake_layout *l, uint64_t r, uint64_t c, int64_t batch) {
    int64_t o = l->order == CUBLASLT_ORDER_COL ? (int64_t)r + (int64_t)c * l->ld
                                               : (int64_t)r * l->ld + (int64_t)c;
    return o + batch * l->stride;
}

static float act_f32(int act, float x) {
    if (act == 1) return x > 0.0f ? x : 0.0f;
    if (act == 2) {
        const float k0 = 0.7978845608028654f, k1 = 0.044715f; /* sqrt(2/pi), GELU tanh form */
        return 0.5f * x * (1.0f + tanhf(k0 * (x + k1 * x * x * x)));
    }
    return x;
}

static double act_f64(int act, double x) {
    if (act == 1) return x > 0.0 ? x : 0.0;
    if (act == 2) return 0.5 * x * (1.0 + tanh(0.7978845608028654 * (x + 0.044715 * x * x * x)));
    return x;
}

/* op(A)[i][kk] and op(B)[kk][j] of batch bb. */
static double a_at(const problem *p, const void *A, uint64_t i, uint64_t kk, int64_t bb) {
    return load(p->a->type, A, p->ta ? elem_off(p->a, kk, i, bb) : elem_off(p->a, i, kk, bb));
}
static double b_at(const problem *p, const void *B, uint64_t kk, uint64_t j, int64_t bb) {
    return load(p->b->type, B, p->tb ? elem_off(p->b, j, kk, bb) : elem_off(p->b, kk, j, bb));
}

static float round_input(int comp, float x) {
    switch (comp) {
    case CUBLAS_COMPUTE_32F_FAST_TF32:
        return round_tf32(x);
    case CUBLAS_COMPUTE_32F_FAST_16BF:
        return kmux_decode_f32(kmux_encode_f32(x, KMUX_BF16, 0), KMUX_BF16);
    case CUBLAS_COMPUTE_32F_FAST_16F:
        return kmux_decode_f32(kmux_encode_f32(x, KMUX_F16, 0), KMUX_F16);
    default:
        return x;
    }
}

static void run_f64(const problem *p, const fake_algo *fa, double alpha, double beta, const void *A,
                    const void *B, const void *C, void *D) {
    const int64_t half = fa->splitk > 1 ? (int64_t)p->k / 2 : (int64_t)p->k;
    for (int64_t bb = 0; bb < p->batch; bb++)
        for (uint64_t j = 0; j < p->n; j++)
            for (uint64_t i = 0; i < p->m; i++) {
                double s0 = 0, s1 = 0;
                for (int64_t kk = 0; kk < (int64_t)p->k; kk++) {
                    double prod = a_at(p, A, i, (uint64_t)kk, bb) * b_at(p, B, (uint64_t)kk, j, bb);
                    if (kk < half)
                        s0 += prod;
                    else
                        s1 += prod;
                }
                double t = alpha * (s0 + s1);
                if (beta != 0) t += beta * load(p->c->type, C, elem_off(p->c, i, j, bb));
                if (p->has_bias) t += load(p->bias_type, p->d->bias, (int64_t)i);
                ((double *)D)[elem_off(p->dd, i, j, bb)] = act_f64(p->act, t);
            }
}

static void run_i32(const problem *p, int32_t alpha, int32_t beta, const void *A, const void *B,
                    const void *C, void *D) {
    for (int64_t bb = 0; bb < p->batch; bb++)
        for (uint64_t j = 0; j < p->n; j++)
            for (uint64_t i = 0; i < p->m; i++) {
                uint32_t acc = 0; /* int32 arithmetic, wrapping */
                for (uint64_t kk = 0; kk < p->k; kk++)
                    acc +=
                        (uint32_t)((int32_t)a_at(p, A, i, kk, bb) * (int32_t)b_at(p, B, kk, j, bb));
                uint32_t t = (uint32_t)alpha * acc;
                if (beta != 0)
                    t += (uint32_t)beta * (uint32_t)((const int32_t *)C)[elem_off(p->c, i, j, bb)];
                ((int32_t *)D)[elem_off(p->dd, i, j, bb)] = (int32_t)t;
            }
}

/* Everything else: f32 accumulation. Returns amax of the result before d_scale. */
static float run_f32(const problem *p, const fake_algo *fa, float alpha, float beta, float c_scale,
                     float d_scale, const void *A, const void *B, const void *C, void *D) {
    const int comp = base_compute(p->d->compute);
    const int64_t half = fa->splitk > 1 ? (int64_t)p->k / 2 : (int64_t)p->k;
    float amax = 0.0f;
    for (int64_t bb = 0; bb < p->batch; bb++)
        for (uint64_t j = 0; j < p->n; j++)
            for (uint64_t i = 0; i < p->m; i++) {
                float s0 = 0, s1 = 0;
                for (int64_t kk = 0; kk < (int64_t)p->k; kk++) {
                    float x = round_input(comp, (float)a_at(p, A, i, (uint64_t)kk, bb));
                    float y = round_input(comp, (float)b_at(p, B, (uint64_t)kk, j, bb));
                    if (kk < half)
                        s0 += x * y;
                    else
                        s1 += x * y;
                }
                float t = alpha * (s0 + s1);
                if (beta != 0)
                    t += beta * c_scale * (float)load(p->c->type, C, elem_off(p->c, i, j, bb));
                if (p->has_bias) t += (float)load(p->bias_type, p->d->bias, (int64_t)i);
                t = act_f32(p->act, t);
                if (fabsf(t) > amax) amax = fabsf(t);
                if (is_fp8(p->dd->type)) t *= d_scale;
                store_f32(p->dd->type, D, elem_off(p->dd, i, j, bb), t);
            }
    return amax;
}

EXPORT cublasStatus_t cublasLtMatmul(cublasLtHandle_t lightHandle, cublasLtMatmulDesc_t computeDesc,
                                     const void *alpha, const void *A, cublasLtMatrixLayout_t Adesc,
                                     const void *B, cublasLtMatrixLayout_t Bdesc, const void *beta,
                                     const void *C, cublasLtMatrixLayout_t Cdesc, void *D,
                                     cublasLtMatrixLayout_t Ddesc, const cublasLtMatmulAlgo_t *algo,
                                     void *workspace, size_t workspaceSizeInBytes,
                                     cudaStream_t stream) {
    KMUX_FAKE_FAIL_POINT("libcublasLt", CUBLAS_STATUS_INTERNAL_ERROR);
    (void)stream; /* the fake driver runs everything at once */
    if (!handle_ok(lightHandle)) return CUBLAS_STATUS_NOT_INITIALIZED;
#if defined(KMUX_FAKE_LT_NONE)
    return CUBLAS_STATUS_NOT_SUPPORTED; /* it offered no algorithm */
#endif
    if (!alpha || !beta || !D) return CUBLAS_STATUS_INVALID_VALUE;
    problem p;
    cublasStatus_t s = check_problem((const fake_desc *)computeDesc, (const fake_layout *)Adesc,
                                     (const fake_layout *)Bdesc, (const fake_layout *)Cdesc,
                                     (const fake_layout *)Ddesc, &p);
    if (s != CUBLAS_STATUS_SUCCESS) return s;
    /* algo NULL would be an implicit heuristic query; the plugin always passes one */
    const fake_algo *fa = algo_of(algo);
    if (!fa) return CUBLAS_STATUS_INVALID_VALUE;
    if (fa->compute != p.d->compute || fa->atype != p.a->type || fa->btype != p.b->type ||
        fa->ctype != p.c->type || fa->dtype != p.dd->type)
        return CUBLAS_STATUS_INVALID_VALUE; /* an algo of another problem */
    if (fa->ws && (!workspace || workspaceSizeInBytes < fa->ws))
        return CUBLAS_STATUS_INVALID_VALUE; /* "workspaceSizeInBytes is less than ... required" */
    if (workspace && ((uintptr_t)workspace & 255u))
        return CUBLAS_STATUS_INVALID_VALUE; /* "Must be 256B aligned" */
    uint32_t req[5];
    required_align(&p, fa->any_align, req);
    const void *ptrs[5] = {A, B, C, D, p.d->bias};
    for (int j = 0; j < 5; j++) {
        if (j == 4 && !p.has_bias) continue;
        if (j == 2 && !C) continue;
        if (ptr_align((uintptr_t)ptrs[j]) < req[j]) return CUBLAS_STATUS_INVALID_VALUE;
    }
    if (p.has_bias && !p.d->bias) return CUBLAS_STATUS_INVALID_VALUE;
    /* fp8 scales: "If set for an unsupported ... combination, ... CUBLAS_INVALID_VALUE" */
    if (!p.fp8 && (p.d->a_scale || p.d->b_scale || p.d->c_scale || p.d->amax_d))
        return CUBLAS_STATUS_INVALID_VALUE;
    if (p.d->d_scale && !is_fp8(p.dd->type)) return CUBLAS_STATUS_INVALID_VALUE;
    if (p.m == 0 || p.n == 0) return CUBLAS_STATUS_SUCCESS;
    if (p.k > 0 && (!A || !B)) return CUBLAS_STATUS_INVALID_VALUE;
    /* the algorithm's scratch (split-K partial sums): its bytes are overwritten, as fake_cudnn.c
     * does, so that a workspace shared between calls really is shared */
    if (fa->ws) memset(workspace, 0x5a, (size_t)fa->ws);

    const int comp = base_compute(p.d->compute);
    if (comp == CUBLAS_COMPUTE_64F) {
        double al = *(const double *)alpha, be = *(const double *)beta;
        if (be != 0 && !C) return CUBLAS_STATUS_INVALID_VALUE;
        run_f64(&p, fa, al, be, A, B, C, D);
    } else if (comp == CUBLAS_COMPUTE_32I) {
        int32_t al = *(const int32_t *)alpha, be = *(const int32_t *)beta;
        if (be != 0 && !C) return CUBLAS_STATUS_INVALID_VALUE;
        run_i32(&p, al, be, A, B, C, D);
    } else {
        float al, be;
        if (p.d->scale == CUDA_R_16F) {
            al = kmux_decode_f32(*(const uint16_t *)alpha, KMUX_F16);
            be = kmux_decode_f32(*(const uint16_t *)beta, KMUX_F16);
        } else {
            al = *(const float *)alpha, be = *(const float *)beta;
        }
        if (be != 0 && !C) return CUBLAS_STATUS_INVALID_VALUE;
        if (p.d->a_scale) al *= *(const float *)p.d->a_scale;
        if (p.d->b_scale) al *= *(const float *)p.d->b_scale;
        float cs = p.d->c_scale ? *(const float *)p.d->c_scale : 1.0f;
        float ds = p.d->d_scale ? *(const float *)p.d->d_scale : 1.0f;
        float amax = run_f32(&p, fa, al, be, cs, ds, A, B, C, D);
        if (p.d->amax_d) *(float *)p.d->amax_d = amax;
    }
    return CUBLAS_STATUS_SUCCESS;
}
