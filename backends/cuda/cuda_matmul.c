/*
 * cuda_matmul.c - matmul plans on cuBLASLt.
 *
 * Orientation. cuBLASLt is column-major. A column-major problem is passed as it is; a row-major
 * one as its transpose, C^T = op(B)^T op(A)^T, which is the same memory read column-major. In
 * this file "A'", "B'", "m'", "n'" are cuBLASLt's operands and sizes after that mapping. kmux's
 * bias (bias[j] added to every row i of the row-major view, as torch.addmm) is then a per-row
 * vector of D' = C^T, exactly cuBLASLt's BIAS epilogue. For a column-major problem the bias runs
 * along D's columns, which cuBLASLt cannot do: the backend's post kernel adds it (and applies
 * the activation), computing from an f32 temporary for f16/bf16 outputs so that the result is
 * still rounded once.
 *
 * Implementations are cublasLtMatmulAlgoGetHeuristic's candidates (up to KMUX_CUDA_MAX_ALGOS),
 * best first; plan_next_impl walks them. The workspace lives with the stream
 * (kmux_cuda_stream_workspace); the plan only records how much each candidate needs.
 *
 * Degenerate sizes: k == 0 or alpha == 0 never reach cuBLASLt (which would read A and B or not
 * honour beta); the post kernel computes C = beta * C (+ bias, act) instead.
 *
 * fp8 (OCP e4m3/e5m2, sm_89+): cuBLASLt runs only "TN" problems (A' transposed, B' not) with
 * 16-byte aligned pointers and leading dimensions that are multiples of 16. Operands that do
 * not meet the rule are packed into that layout in the workspace; a C whose leading dimension
 * breaks it is computed through the f32 temporary. int8 (-> int32) tries the caller's layout
 * first and falls back to the same packing.
 *
 * d_scale and amax_d: cuBLASLt applies them only to fp8 D, and kmux's outputs are f32/f16/bf16,
 * so the post kernel applies them (amax of act(...) before d_scale). For f16/bf16 outputs the
 * plan then runs through the f32 temporary (a second configuration, made on first need) so that
 * D is still rounded once; for f32 outputs d_scale multiplies the f32 result, a second f32
 * rounding (exact for power-of-two scales).
 *
 * F32_FAST_BF16 maps to CUBLAS_COMPUTE_32F_EMULATED_16BFX9 (each f32 input split into three
 * bf16 terms, the bf16x3 that kmux.h allows); where cuBLASLt has no such kernel the plan runs
 * strict f32 and says so (effective_compute = F32). CUBLAS_COMPUTE_32F_FAST_16BF is never used:
 * it rounds inputs to a single bf16, a precision loss the caller did not allow.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cuda_backend.h"
#include "cuda_kernels.h"

typedef struct lt_impl {
    cublasLtMatmulAlgo_t algo;
    size_t ws; /* cuBLASLt workspace this algorithm needs */
    char name[192];
} lt_impl;

typedef struct matmul_plan {
    kmux_cuda_plan_header hdr;
    kmux_matmul_desc d;
    cudaDataType_t bias_dt;
    /* cuBLASLt's view */
    int swapped; /* row-major: A' = B, B' = A, D' = C^T */
    uint64_t m, n, k;
    cublasOperation_t opa, opb;           /* of A', B' as the caller stores them */
    int64_t lda, ldb, stride_a, stride_b; /* of A', B' as the caller stores them */
    kmux_dtype at, bt;
    cublasComputeType_t compute;
    cudaDataType_t scale_type;
    kmux_compute_type effective;
    cublasLtEpilogue_t epilogue; /* done by cuBLASLt */
    int post_epi;                /* bias and activation done by the post kernel */
    int use_temp;                /* cuBLASLt writes an f32 temporary that the post kernel reads */
    int64_t ld_temp;
    int pack_a, pack_b;   /* 1-byte operand copied into the TN layout */
    int64_t lda_p, ldb_p; /* leading dimensions of the packed copies */
    size_t pack_a_bytes, pack_b_bytes, temp_bytes;
    size_t ws_cap;
    cublasLtMatrixLayoutOpaque_t la, lb, lc, ld;
    int n_impl, cur;
    lt_impl impl[KMUX_CUDA_MAX_ALGOS];
    /* the candidate for operands less than 16-byte aligned, found on first need */
    pthread_mutex_t lock;
    int have_unaligned;
    lt_impl unaligned;
    cublasStatus_t last_query; /* status of the last heuristic query, for messages */
    /* d_scale / amax_d with an f16/bf16 output: the same problem through the f32 temporary (so
     * the result is rounded once), made on first need */
    int force_temp;
    kmux_plan_prefs prefs;
    cublasLtHandle_t lt; /* the device's handle (lives as long as the backend state) */
    struct matmul_plan *alt;
} matmul_plan;

/* ---- type helpers ---- */

static int is_fp8(kmux_dtype t) {
    return t == KMUX_F8_E4M3 || t == KMUX_F8_E5M2;
}
static int is_fnuz(kmux_dtype t) {
    return t == KMUX_F8_E4M3_FNUZ || t == KMUX_F8_E5M2_FNUZ;
}
static int is_byte(kmux_dtype t) {
    return is_fp8(t) || t == KMUX_I8;
}

static cudaDataType_t cuda_type(kmux_dtype t) {
    switch (t) {
    case KMUX_F64:
        return CUDA_R_64F;
    case KMUX_F32:
        return CUDA_R_32F;
    case KMUX_F16:
        return CUDA_R_16F;
    case KMUX_BF16:
        return CUDA_R_16BF;
    case KMUX_F8_E4M3:
        return CUDA_R_8F_E4M3;
    case KMUX_F8_E5M2:
        return CUDA_R_8F_E5M2;
    case KMUX_I8:
        return CUDA_R_8I;
    case KMUX_I32:
        return CUDA_R_32I;
    default:
        return CUDA_R_32F; /* not reached: rejected before */
    }
}

static const char *lt_compute_name(cublasComputeType_t c) {
    switch (c) {
    case CUBLAS_COMPUTE_64F:
        return "64F";
    case CUBLAS_COMPUTE_32F:
        return "32F";
    case CUBLAS_COMPUTE_32F_FAST_TF32:
        return "32F_FAST_TF32";
    case CUBLAS_COMPUTE_32F_EMULATED_16BFX9:
        return "32F_EMULATED_16BFX9";
    case CUBLAS_COMPUTE_16F:
        return "16F";
    case CUBLAS_COMPUTE_32I:
        return "32I";
    default:
        return "?";
    }
}

/* IEEE binary16 bits of f, round to nearest even (host side, for COMPUTE_16F scalars). */
static uint16_t f32_to_f16_bits(float f) {
    uint32_t x;
    memcpy(&x, &f, sizeof x);
    uint32_t sign = (x >> 16) & 0x8000u;
    uint32_t ax = x & 0x7fffffffu;
    if (ax >= 0x7f800000u) return (uint16_t)(sign | (ax > 0x7f800000u ? 0x7e00u : 0x7c00u));
    if (ax >= 0x477ff000u) return (uint16_t)(sign | 0x7c00u); /* rounds to >= 65520: Inf */
    if (ax < 0x38800000u) { /* below 2^-14: an f16 subnormal q * 2^-24, or zero */
        if (ax < 0x33000000u) return (uint16_t)sign; /* below 2^-25: rounds to 0 */
        uint32_t mant = (ax & 0x7fffffu) | 0x800000u;
        int shift = 126 - (int)(ax >> 23); /* 14..24 */
        uint32_t q = mant >> shift, rem = mant & ((1u << shift) - 1), half = 1u << (shift - 1);
        if (rem > half || (rem == half && (q & 1u))) q++;
        return (uint16_t)(sign | q);
    }
    uint32_t q = ((ax - 0x38000000u) >> 13);
    uint32_t rem = ax & 0x1fffu;
    if (rem > 0x1000u || (rem == 0x1000u && (q & 1u))) q++;
    return (uint16_t)(sign | q);
}

/* ---- layouts and heuristics ---- */

static kmux_status lt_check(const kmux_cuda_state *st, cublasStatus_t s, const char *what) {
    if (s == CUBLAS_STATUS_SUCCESS) return KMUX_OK;
    return kmux_cuda_fail_lt(st, s, "kmux_matmul_plan_create: %s", what);
}

static kmux_status set_layout(const kmux_cuda_state *st, cublasLtMatrixLayoutOpaque_t *l,
                              cudaDataType_t t, uint64_t rows, uint64_t cols, int64_t ld,
                              int64_t batch, int64_t stride) {
    cublasLtMatrixLayout_t h = l;
    kmux_status s =
        lt_check(st, cublasLtMatrixLayoutInit(h, t, rows, cols, ld), "cublasLtMatrixLayoutInit");
    if (s != KMUX_OK || batch <= 1) return s;
    int32_t b = (int32_t)batch;
    s = lt_check(
        st, cublasLtMatrixLayoutSetAttribute(h, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &b, sizeof b),
        "CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT");
    if (s != KMUX_OK) return s;
    return lt_check(st,
                    cublasLtMatrixLayoutSetAttribute(h, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET,
                                                     &stride, sizeof stride),
                    "CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET");
}

/* Operation descriptor in caller storage; pointers (bias, scales) are set by the caller. */
static cublasStatus_t init_op(const matmul_plan *p, cublasLtMatmulDescOpaque_t *storage) {
    cublasLtMatmulDesc_t op = storage;
    cublasStatus_t s = cublasLtMatmulDescInit(op, p->compute, p->scale_type);
    if (s != CUBLAS_STATUS_SUCCESS) return s;
    int32_t ta = p->pack_a ? CUBLAS_OP_T : p->opa;
    int32_t tb = p->pack_b ? CUBLAS_OP_N : p->opb;
    uint32_t epi = p->epilogue;
    if ((s = cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_TRANSA, &ta, sizeof ta)) !=
        CUBLAS_STATUS_SUCCESS)
        return s;
    if ((s = cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_TRANSB, &tb, sizeof tb)) !=
        CUBLAS_STATUS_SUCCESS)
        return s;
    if ((s = cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_EPILOGUE, &epi, sizeof epi)) !=
        CUBLAS_STATUS_SUCCESS)
        return s;
    if (p->epilogue & CUBLASLT_EPILOGUE_BIAS) {
        int32_t bt = p->bias_dt;
        s = cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_BIAS_DATA_TYPE, &bt, sizeof bt);
    }
    return s;
}

static kmux_status build_layouts(const kmux_cuda_state *st, matmul_plan *p) {
    const kmux_matmul_desc *d = &p->d;
    kmux_status s;
    /* A' */
    if (p->pack_a) /* stored k x m', used transposed */
        s = set_layout(st, &p->la, cuda_type(p->at), p->k, p->m, p->lda_p, d->batch_count,
                       p->lda_p * (int64_t)p->m);
    else if (p->opa == CUBLAS_OP_N)
        s = set_layout(st, &p->la, cuda_type(p->at), p->m, p->k, p->lda, d->batch_count,
                       p->stride_a);
    else
        s = set_layout(st, &p->la, cuda_type(p->at), p->k, p->m, p->lda, d->batch_count,
                       p->stride_a);
    if (s != KMUX_OK) return s;
    /* B' */
    if (p->pack_b) /* stored k x n', used as is */
        s = set_layout(st, &p->lb, cuda_type(p->bt), p->k, p->n, p->ldb_p, d->batch_count,
                       p->ldb_p * (int64_t)p->n);
    else if (p->opb == CUBLAS_OP_N)
        s = set_layout(st, &p->lb, cuda_type(p->bt), p->k, p->n, p->ldb, d->batch_count,
                       p->stride_b);
    else
        s = set_layout(st, &p->lb, cuda_type(p->bt), p->n, p->k, p->ldb, d->batch_count,
                       p->stride_b);
    if (s != KMUX_OK) return s;
    /* C and D */
    if (p->use_temp) {
        s = set_layout(st, &p->lc, CUDA_R_32F, p->m, p->n, p->ld_temp, d->batch_count,
                       p->ld_temp * (int64_t)p->n);
        if (s == KMUX_OK) memcpy(&p->ld, &p->lc, sizeof p->ld);
        return s;
    }
    s = set_layout(st, &p->lc, cuda_type(d->c_type), p->m, p->n, d->ldc, d->batch_count,
                   d->stride_c);
    if (s == KMUX_OK) memcpy(&p->ld, &p->lc, sizeof p->ld);
    return s;
}

/* Fills one implementation's name from its algorithm configuration. */
static void name_impl(const matmul_plan *p, lt_impl *im) {
    int32_t id = -1, splitk = 1;
    uint32_t tile = 0, stages = 0;
    uint16_t cluster = 0;
    size_t w;
    (void)cublasLtMatmulAlgoConfigGetAttribute(&im->algo, CUBLASLT_ALGO_CONFIG_ID, &id, sizeof id,
                                               &w);
    (void)cublasLtMatmulAlgoConfigGetAttribute(&im->algo, CUBLASLT_ALGO_CONFIG_TILE_ID, &tile,
                                               sizeof tile, &w);
    (void)cublasLtMatmulAlgoConfigGetAttribute(&im->algo, CUBLASLT_ALGO_CONFIG_SPLITK_NUM, &splitk,
                                               sizeof splitk, &w);
    (void)cublasLtMatmulAlgoConfigGetAttribute(&im->algo, CUBLASLT_ALGO_CONFIG_STAGES_ID, &stages,
                                               sizeof stages, &w);
    (void)cublasLtMatmulAlgoConfigGetAttribute(&im->algo, CUBLASLT_ALGO_CONFIG_CLUSTER_SHAPE_ID,
                                               &cluster, sizeof cluster, &w);
    const char *tn = kmux_cuda_lt_tile_name((int)tile);
    const char *sn = kmux_cuda_lt_stages_name((int)stages);
    const char *cn = kmux_cuda_lt_cluster_name((int)cluster);
    char tbuf[16], sbuf[16], cbuf[16];
    if (!tn) snprintf(tbuf, sizeof tbuf, "#%u", tile), tn = tbuf;
    if (!sn) snprintf(sbuf, sizeof sbuf, "#%u", stages), sn = sbuf;
    if (!cn) snprintf(cbuf, sizeof cbuf, "#%u", (unsigned)cluster), cn = cbuf;
    char extra[96] = "";
    size_t n = 0;
    if (cluster) n += (size_t)snprintf(extra + n, sizeof extra - n, ",cluster=%s", cn);
    if (p->compute != CUBLAS_COMPUTE_32F && p->compute != CUBLAS_COMPUTE_64F &&
        p->compute != CUBLAS_COMPUTE_32I)
        n += (size_t)snprintf(extra + n, sizeof extra - n, ",compute=%s",
                              lt_compute_name(p->compute));
    if (p->pack_a || p->pack_b) n += (size_t)snprintf(extra + n, sizeof extra - n, "+pack");
    if (p->post_epi) n += (size_t)snprintf(extra + n, sizeof extra - n, "+post_epilogue");
    if (p->use_temp && n < sizeof extra) snprintf(extra + n, sizeof extra - n, "+f32tmp");
    snprintf(im->name, sizeof im->name, "cublasLt:algo=%d,tile=%s,stages=%s,splitk=%d%s", id, tn,
             sn, splitk, extra);
}

/* Asks cuBLASLt for candidates. Returns how many it found (0 = none for this configuration),
 * or -1 after reporting an error. align: minimum pointer alignment promised (bytes). */
static int query(kmux_cuda_state *st, cublasLtHandle_t lt, matmul_plan *p, uint32_t align,
                 size_t ws_cap, lt_impl *out, int max_out) {
    cublasLtMatmulDescOpaque_t op;
    cublasStatus_t s = init_op(p, &op);
    if (s == CUBLAS_STATUS_SUCCESS && (p->epilogue & CUBLASLT_EPILOGUE_BIAS)) {
        /* heuristics read the bias pointer's value for its alignment only */
        const void *fake = (const void *)(uintptr_t)256;
        s = cublasLtMatmulDescSetAttribute(&op, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &fake,
                                           sizeof fake);
    }
    if (s != CUBLAS_STATUS_SUCCESS) {
        lt_check(st, s, "matmul descriptor");
        return -1;
    }
    cublasLtMatmulPreferenceOpaque_t pref;
    uint64_t cap = ws_cap;
    s = cublasLtMatmulPreferenceInit(&pref);
    if (s == CUBLAS_STATUS_SUCCESS)
        s = cublasLtMatmulPreferenceSetAttribute(&pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES,
                                                 &cap, sizeof cap);
    const cublasLtMatmulPreferenceAttributes_t aligns[] = {
        CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES,
        CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES};
    for (int i = 0; i < 4 && s == CUBLAS_STATUS_SUCCESS; i++)
        s = cublasLtMatmulPreferenceSetAttribute(&pref, aligns[i], &align, sizeof align);
    if (s != CUBLAS_STATUS_SUCCESS) {
        lt_check(st, s, "matmul preference");
        return -1;
    }
    cublasLtMatmulHeuristicResult_t res[KMUX_CUDA_MAX_ALGOS];
    int got = 0;
    s = cublasLtMatmulAlgoGetHeuristic(lt, &op, &p->la, &p->lb, &p->lc, &p->ld, &pref, max_out, res,
                                       &got);
    p->last_query = s;
    /* NOT_SUPPORTED: no kernel for this configuration; INVALID_VALUE: a combination this
     * cuBLASLt rejects outright. Either way the caller tries the next configuration. */
    if (s == CUBLAS_STATUS_NOT_SUPPORTED || s == CUBLAS_STATUS_INVALID_VALUE) return 0;
    if (s != CUBLAS_STATUS_SUCCESS) {
        lt_check(st, s, "cublasLtMatmulAlgoGetHeuristic");
        return -1;
    }
    int n = 0;
    for (int i = 0; i < got; i++) {
        if (res[i].state != CUBLAS_STATUS_SUCCESS) continue;
        out[n].algo = res[i].algo;
        out[n].ws = res[i].workspaceSize;
        name_impl(p, &out[n]);
        n++;
    }
    return n;
}

/* Sizes of the temporaries of the current configuration. */
static void size_extras(matmul_plan *p) {
    const kmux_matmul_desc *d = &p->d;
    p->pack_a_bytes = p->pack_b_bytes = p->temp_bytes = 0;
    if (p->pack_a) {
        p->lda_p = (int64_t)kmux_cuda_align_up(p->k, 16);
        p->pack_a_bytes = kmux_cuda_align_up((size_t)p->lda_p * p->m * (size_t)d->batch_count, 256);
    }
    if (p->pack_b) {
        p->ldb_p = (int64_t)kmux_cuda_align_up(p->k, 16);
        p->pack_b_bytes = kmux_cuda_align_up((size_t)p->ldb_p * p->n * (size_t)d->batch_count, 256);
    }
    if (p->use_temp) {
        p->ld_temp = (int64_t)kmux_cuda_align_up(p->m, 4);
        p->temp_bytes = kmux_cuda_align_up(
            (size_t)p->ld_temp * p->n * sizeof(float) * (size_t)d->batch_count, 256);
    }
}

static const char *epi_name(unsigned e) {
    switch (e & (KMUX_EPILOGUE_RELU | KMUX_EPILOGUE_GELU)) {
    case KMUX_EPILOGUE_RELU:
        return e & KMUX_EPILOGUE_BIAS ? "bias+relu" : "relu";
    case KMUX_EPILOGUE_GELU:
        return e & KMUX_EPILOGUE_BIAS ? "bias+gelu" : "gelu";
    default:
        return e & KMUX_EPILOGUE_BIAS ? "bias" : "none";
    }
}

static kmux_status unsupported(const kmux_cuda_state *st, int device, const kmux_matmul_desc *d,
                               const char *why) {
    return kmux_cuda_error(
        st, KMUX_ERR_UNSUPPORTED,
        "kmux_matmul_plan_create: cuda:%d cannot run %s x %s -> %s with compute %s "
        "(m=%lld n=%lld k=%lld, epilogue %s): %s",
        device, kmux_common_dtype_name(d->a_type), kmux_common_dtype_name(d->b_type),
        kmux_common_dtype_name(d->c_type), kmux_common_compute_type_name(d->compute_type),
        (long long)d->m, (long long)d->n, (long long)d->k, epi_name(d->epilogue), why);
}

/* Sets compute type, scale type and the effective compute type. */
static void choose_compute(matmul_plan *p, int emulate_bf16) {
    switch (p->d.compute_type) {
    case KMUX_COMPUTE_F64:
        p->compute = CUBLAS_COMPUTE_64F, p->scale_type = CUDA_R_64F,
        p->effective = KMUX_COMPUTE_F64;
        break;
    case KMUX_COMPUTE_F32_FAST_TF32:
        p->compute = CUBLAS_COMPUTE_32F_FAST_TF32, p->scale_type = CUDA_R_32F;
        p->effective = KMUX_COMPUTE_F32_FAST_TF32;
        break;
    case KMUX_COMPUTE_F32_FAST_BF16:
        p->compute = emulate_bf16 ? CUBLAS_COMPUTE_32F_EMULATED_16BFX9 : CUBLAS_COMPUTE_32F;
        p->scale_type = CUDA_R_32F;
        p->effective = emulate_bf16 ? KMUX_COMPUTE_F32_FAST_BF16 : KMUX_COMPUTE_F32;
        break;
    case KMUX_COMPUTE_F16:
        p->compute = CUBLAS_COMPUTE_16F, p->scale_type = CUDA_R_16F,
        p->effective = KMUX_COMPUTE_F16;
        break;
    case KMUX_COMPUTE_I32:
        p->compute = CUBLAS_COMPUTE_32I, p->scale_type = CUDA_R_32I,
        p->effective = KMUX_COMPUTE_I32;
        break;
    default:
        p->compute = CUBLAS_COMPUTE_32F, p->scale_type = CUDA_R_32F,
        p->effective = KMUX_COMPUTE_F32;
        break;
    }
}

/* Decides the epilogue split and temporaries for the current post_epi / pack flags. */
static void configure(matmul_plan *p) {
    const kmux_matmul_desc *d = &p->d;
    unsigned e = d->epilogue;
    int narrow = d->c_type == KMUX_F16 || d->c_type == KMUX_BF16;
    /* The post kernel reads an f32 temporary to round once into f16/bf16 (not with COMPUTE_16F,
     * whose kernels only write f16: that case adds the bias in place, as f16 arithmetic would). */
    p->use_temp = (p->post_epi || p->force_temp) && narrow && d->compute_type != KMUX_COMPUTE_F16;
    /* fp8: C and D need 16-byte leading dimensions */
    if (is_fp8(p->at) && ((size_t)d->ldc * kmux_common_dtype_size(d->c_type)) % 16 != 0)
        p->use_temp = 1;
    /* Through the temporary, cuBLASLt computes alpha * AB only (beta = 0), so the whole epilogue
     * has to follow beta * C in the post kernel. */
    if (p->use_temp && e) p->post_epi = 1;
    if (p->post_epi || !e) {
        p->epilogue = CUBLASLT_EPILOGUE_DEFAULT;
    } else if (e & KMUX_EPILOGUE_BIAS) {
        p->epilogue = (e & KMUX_EPILOGUE_RELU)   ? CUBLASLT_EPILOGUE_RELU_BIAS
                      : (e & KMUX_EPILOGUE_GELU) ? CUBLASLT_EPILOGUE_GELU_BIAS
                                                 : CUBLASLT_EPILOGUE_BIAS;
    } else {
        p->epilogue = (e & KMUX_EPILOGUE_RELU) ? CUBLASLT_EPILOGUE_RELU : CUBLASLT_EPILOGUE_GELU;
    }
    size_extras(p);
}

static kmux_status create_plan(kmux_cuda_state *st, int device, const kmux_matmul_desc *desc,
                               const kmux_plan_prefs *prefs, int force_temp, matmul_plan **plan);

kmux_status kmux_cuda_matmul_plan_create(void *state, int device, const kmux_matmul_desc *desc,
                                         const kmux_plan_prefs *prefs, void **plan) {
    matmul_plan *p = NULL;
    kmux_status s = create_plan(state, device, desc, prefs, 0, &p);
    if (s == KMUX_OK) *plan = p;
    return s;
}

static kmux_status create_plan(kmux_cuda_state *st, int device, const kmux_matmul_desc *desc,
                               const kmux_plan_prefs *prefs, int force_temp, matmul_plan **plan) {
    const kmux_cuda_device *dv = &st->devices[device];
    const kmux_matmul_desc *d = desc;

    if (is_fnuz(d->a_type) || is_fnuz(d->b_type))
        return unsupported(
            st, device, d,
            "the FNUZ fp8 formats are AMD's (gfx942); NVIDIA GPUs have OCP e4m3/e5m2 only");
    if ((is_fp8(d->a_type) || is_fp8(d->b_type)) && dv->sm < 89)
        return unsupported(st, device, d, "fp8 GEMM needs sm_89 (Ada) or newer");
    if (d->a_type == KMUX_F8_E5M2 && d->b_type == KMUX_F8_E5M2)
        return unsupported(st, device, d,
                           "cuBLASLt has no e5m2 x e5m2 kernel (use e4m3 for one operand)");
    if (d->batch_count > INT32_MAX)
        return unsupported(st, device, d, "cuBLASLt batch counts are 32-bit");

    matmul_plan *p = calloc(1, sizeof *p);
    if (!p)
        return st->host->set_error(KMUX_ERR_OUT_OF_MEMORY,
                                   "kmux_matmul_plan_create: out of memory");
    p->hdr.kind = KMUX_CUDA_PLAN_MATMUL;
    p->hdr.device = device;
    p->d = *d;
    p->force_temp = force_temp;
    if (prefs)
        p->prefs = *prefs;
    else
        p->prefs.max_workspace_bytes = SIZE_MAX;
    pthread_mutex_init(&p->lock, NULL);
    p->bias_dt = cuda_type(d->bias_type);
    p->swapped = d->order == KMUX_ROW_MAJOR;
    if (p->swapped) {
        p->m = (uint64_t)d->n, p->n = (uint64_t)d->m;
        p->opa = d->transb == KMUX_TRANS ? CUBLAS_OP_T : CUBLAS_OP_N;
        p->opb = d->transa == KMUX_TRANS ? CUBLAS_OP_T : CUBLAS_OP_N;
        p->lda = d->ldb, p->ldb = d->lda;
        p->stride_a = d->stride_b, p->stride_b = d->stride_a;
        p->at = d->b_type, p->bt = d->a_type;
    } else {
        p->m = (uint64_t)d->m, p->n = (uint64_t)d->n;
        p->opa = d->transa == KMUX_TRANS ? CUBLAS_OP_T : CUBLAS_OP_N;
        p->opb = d->transb == KMUX_TRANS ? CUBLAS_OP_T : CUBLAS_OP_N;
        p->lda = d->lda, p->ldb = d->ldb;
        p->stride_a = d->stride_a, p->stride_b = d->stride_b;
        p->at = d->a_type, p->bt = d->b_type;
    }
    p->k = (uint64_t)d->k;
    /* A cuBLASLt layout needs at least one row/column; k == 0 never reaches cuBLASLt. */
    if (p->k == 0) p->k = 1;
    p->post_epi = (d->epilogue & KMUX_EPILOGUE_BIAS) && !p->swapped;
    if (is_fp8(p->at)) {
        p->pack_a = !(p->opa == CUBLAS_OP_T && p->lda % 16 == 0);
        p->pack_b = !(p->opb == CUBLAS_OP_N && p->ldb % 16 == 0);
    }
    int emulate_bf16 = 1;
    choose_compute(p, emulate_bf16);

    size_t pref_cap = prefs ? prefs->max_workspace_bytes : SIZE_MAX;
    size_t cap = pref_cap == SIZE_MAX ? dv->default_workspace : pref_cap;
    int user_cap = pref_cap != SIZE_MAX;
    p->ws_cap = cap;
    if (d->k == 0) { /* never reaches cuBLASLt: execute computes C = beta * C (+ epilogue) */
        p->n_impl = 1;
        snprintf(p->impl[0].name, sizeof p->impl[0].name,
                 "cuda:post(k=0: C = act(beta * C + bias))");
        *plan = p;
        return KMUX_OK;
    }

    kmux_cuda_guard g;
    kmux_status s = kmux_cuda_enter(st, device, "kmux_matmul_plan_create", &g);
    if (s != KMUX_OK) goto fail_noguard;
    cublasLtHandle_t lt;
    s = kmux_cuda_lt_handle(st, device, &lt);
    if (s != KMUX_OK) goto fail;
    p->lt = lt;

    /* Try the most direct configuration first, then relax one thing at a time. */
    for (;;) {
        configure(p);
        size_t extra = p->pack_a_bytes + p->pack_b_bytes + p->temp_bytes;
        size_t algo_cap = cap;
        int n = 0;
        if (user_cap && extra > cap) {
            n = 0; /* cannot fit: treat like "no kernel" and try the next configuration */
        } else {
            if (user_cap) algo_cap = cap - extra;
            s = build_layouts(st, p);
            if (s != KMUX_OK) goto fail;
            n = query(st, lt, p, 16, algo_cap, p->impl, KMUX_CUDA_MAX_ALGOS);
            if (n < 0) {
                s = KMUX_ERR_DEVICE;
                goto fail;
            }
        }
        if (n > 0) {
            p->n_impl = n;
            break;
        }
        if (p->compute == CUBLAS_COMPUTE_32F_EMULATED_16BFX9) {
            choose_compute(p, 0); /* strict f32 is at least as precise as bf16x3 */
            continue;
        }
        if (p->at == KMUX_I8 && !(p->pack_a && p->pack_b)) {
            p->pack_a = p->pack_b = 1;
            continue;
        }
        if (d->epilogue && !p->post_epi) {
            p->post_epi =
                1; /* e.g. a bias type or activation cuBLASLt lacks here: do it ourselves */
            continue;
        }
        char why[256];
        if (user_cap && extra > cap)
            snprintf(why, sizeof why,
                     "needs %zu bytes of workspace for packing/temporaries, "
                     "prefs->max_workspace_bytes is %zu",
                     extra, cap);
        else
            snprintf(why, sizeof why,
                     "cublasLtMatmulAlgoGetHeuristic found no algorithm (%s; workspace cap %zu "
                     "bytes, cuBLASLt %zu)",
                     cublasLtGetStatusName(p->last_query), algo_cap, cublasLtGetVersion());
        s = unsupported(st, device, d, why);
        goto fail;
    }
    kmux_cuda_leave(&g);
    if (st->host->verbose >= 2)
        st->host->trace(2, "cuda,matmul_plan,cuda:%d,%d candidates,first %s", device, p->n_impl,
                        p->impl[0].name);
    *plan = p;
    return KMUX_OK;
fail:
    kmux_cuda_leave(&g);
fail_noguard:
    pthread_mutex_destroy(&p->lock);
    free(p);
    return s;
}

/* ---- execution ---- */

static unsigned ptr_align(const void *ptr) {
    uintptr_t v = (uintptr_t)ptr;
    unsigned a = 1;
    while (a < 256 && !(v & a))
        a <<= 1;
    return v ? a : 256;
}

/* Scalars in the cuBLASLt scale type. */
typedef union lt_scalar {
    double f64;
    float f32;
    int32_t i32;
    uint16_t f16;
} lt_scalar;

static lt_scalar to_scale(const matmul_plan *p, const void *v, int zero) {
    lt_scalar s;
    memset(&s, 0, sizeof s);
    if (zero) return s;
    switch (p->d.compute_type) {
    case KMUX_COMPUTE_F64:
        s.f64 = *(const double *)v;
        break;
    case KMUX_COMPUTE_I32:
        s.i32 = *(const int32_t *)v;
        break;
    case KMUX_COMPUTE_F16:
        s.f16 = f32_to_f16_bits(*(const float *)v);
        break;
    default:
        s.f32 = *(const float *)v;
        break;
    }
    return s;
}

static int scalar_zero(const kmux_matmul_desc *d, const void *v) {
    switch (d->compute_type) {
    case KMUX_COMPUTE_F64:
        return *(const double *)v == 0.0;
    case KMUX_COMPUTE_I32:
        return *(const int32_t *)v == 0;
    default:
        return *(const float *)v == 0.0f;
    }
}

static kmux_cuda_act act_of(unsigned e) {
    return (e & KMUX_EPILOGUE_RELU)   ? KMUX_CUDA_ACT_RELU
           : (e & KMUX_EPILOGUE_GELU) ? KMUX_CUDA_ACT_GELU
                                      : KMUX_CUDA_ACT_NONE;
}

static kmux_status launch_post(kmux_cuda_state *st, const matmul_plan *p, cudaStream_t stream,
                               kmux_cuda_post_args *a) {
    int e = kmux_cuda_post_launch(stream, a);
    if (e != 0)
        return kmux_cuda_fail(st, (cudaError_t)e,
                              "kmux_matmul_execute: post-processing kernel on cuda:%d",
                              p->hdr.device);
    return KMUX_OK;
}

/* Common part of the post-kernel arguments (D is C in cuBLASLt's view). */
static void post_base(const matmul_plan *p, const kmux_matmul_args *args, kmux_cuda_post_args *a) {
    memset(a, 0, sizeof *a);
    a->rows = (int64_t)p->m;
    a->cols = (int64_t)p->n;
    a->batch = p->d.batch_count;
    a->d = args->C;
    a->d_type = p->d.c_type;
    a->ldd = p->d.ldc;
    a->stride_d = p->d.stride_c;
    a->bias_type = p->d.bias_type;
    a->bias_per_row = p->swapped;
    a->d_scale = args->d_scale;
    a->amax = args->amax_d;
}

/* C = act(beta * C + bias) without touching A and B. */
static kmux_status degenerate(kmux_cuda_state *st, const matmul_plan *p, cudaStream_t stream,
                              const kmux_matmul_args *args) {
    kmux_cuda_post_args a;
    post_base(p, args, &a);
    int beta_zero = scalar_zero(&p->d, args->beta);
    a.read_c = !beta_zero;
    if (p->d.compute_type == KMUX_COMPUTE_F64)
        a.beta = *(const double *)args->beta;
    else if (p->d.compute_type == KMUX_COMPUTE_I32)
        a.beta = (double)*(const int32_t *)args->beta; /* exact: one beta for every type */
    else
        a.beta = *(const float *)args->beta;
    if (p->d.epilogue & KMUX_EPILOGUE_BIAS) a.bias = args->bias;
    a.act = act_of(p->d.epilogue);
    return launch_post(st, p, stream, &a);
}

/* Extent in elements of a strided-batched column-major operand. */
static size_t extent(int64_t rows, int64_t cols, int64_t ld, int64_t stride, int64_t batch) {
    return (size_t)((batch - 1) * stride + (cols - 1) * ld + rows);
}

/* Finds (once) a candidate that accepts operands with the alignment of this call. */
static kmux_status unaligned_impl(kmux_cuda_state *st, matmul_plan *p, cublasLtHandle_t lt,
                                  unsigned align, const lt_impl **out) {
    kmux_status s = KMUX_OK;
    pthread_mutex_lock(&p->lock);
    if (!p->have_unaligned) {
        int n = query(st, lt, p, align, p->ws_cap, &p->unaligned, 1);
        if (n < 0)
            s = KMUX_ERR_DEVICE;
        else if (n == 0)
            s = kmux_cuda_error(st, KMUX_ERR_UNSUPPORTED,
                                "kmux_matmul_execute: cuda:%d: no cuBLASLt algorithm accepts "
                                "operands aligned to %u bytes for this plan",
                                p->hdr.device, align);
        else
            p->have_unaligned = 1;
    }
    *out = &p->unaligned;
    pthread_mutex_unlock(&p->lock);
    return s;
}

static kmux_status execute_plan(kmux_cuda_state *st, matmul_plan *p, kmux_cuda_stream *cs,
                                const kmux_matmul_args *args);

kmux_status kmux_cuda_matmul_execute(void *state, void *plan, void *stream,
                                     const kmux_matmul_args *args) {
    kmux_cuda_state *st = state;
    matmul_plan *p = plan;
    const kmux_matmul_desc *d = &p->d;
    int narrow = d->c_type == KMUX_F16 || d->c_type == KMUX_BF16;
    if ((args->d_scale || args->amax_d) && narrow && !p->use_temp && d->k > 0 &&
        d->compute_type != KMUX_COMPUTE_F16) {
        /* D = d_scale * act(...) rounded once: compute through the f32 temporary */
        kmux_status s = KMUX_OK;
        pthread_mutex_lock(&p->lock);
        if (!p->alt) {
            kmux_cuda_guard g;
            s = kmux_cuda_enter(st, p->hdr.device, "kmux_matmul_execute", &g);
            if (s == KMUX_OK) {
                s = create_plan(st, p->hdr.device, d, &p->prefs, 1, &p->alt);
                kmux_cuda_leave(&g);
            }
        }
        pthread_mutex_unlock(&p->lock);
        if (s != KMUX_OK) return s;
        return execute_plan(st, p->alt, stream, args);
    }
    return execute_plan(st, p, stream, args);
}

static kmux_status execute_plan(kmux_cuda_state *st, matmul_plan *p, kmux_cuda_stream *cs,
                                const kmux_matmul_args *args) {
    const kmux_matmul_desc *d = &p->d;
    kmux_cuda_guard g;
    kmux_status s = kmux_cuda_enter(st, p->hdr.device, "kmux_matmul_execute", &g);
    if (s != KMUX_OK) return s;

    if (!is_fp8(p->at) && !is_fp8(p->bt) && (args->a_scale || args->b_scale)) {
        s = kmux_cuda_error(st, KMUX_ERR_UNSUPPORTED,
                            "kmux_matmul_execute: cuda:%d: a_scale/b_scale apply to fp8 inputs "
                            "only (this plan is %s x %s)",
                            p->hdr.device, kmux_common_dtype_name(d->a_type),
                            kmux_common_dtype_name(d->b_type));
        goto out;
    }
    if (d->k == 0 || scalar_zero(d, args->alpha)) {
        s = degenerate(st, p, cs->stream, args);
        goto out;
    }

    const void *A = p->swapped ? args->B : args->A;
    const void *B = p->swapped ? args->A : args->B;
    const lt_impl *im = &p->impl[p->cur];
    int beta_zero = scalar_zero(d, args->beta);

    /* 1-byte operands that are not 16-byte aligned are copied (same layout) like packed ones */
    int fp8 = is_fp8(p->at);
    int copy_a = fp8 && !p->pack_a && ptr_align(A) < 16;
    int copy_b = fp8 && !p->pack_b && ptr_align(B) < 16;
    size_t bytes_a = p->pack_a_bytes, bytes_b = p->pack_b_bytes;
    int64_t a_rows = p->opa == CUBLAS_OP_N ? (int64_t)p->m : d->k,
            a_cols = p->opa == CUBLAS_OP_N ? d->k : (int64_t)p->m;
    int64_t b_rows = p->opb == CUBLAS_OP_N ? d->k : (int64_t)p->n,
            b_cols = p->opb == CUBLAS_OP_N ? (int64_t)p->n : d->k;
    if (copy_a)
        bytes_a =
            kmux_cuda_align_up(extent(a_rows, a_cols, p->lda, p->stride_a, d->batch_count), 256);
    if (copy_b)
        bytes_b =
            kmux_cuda_align_up(extent(b_rows, b_cols, p->ldb, p->stride_b, d->batch_count), 256);

    /* other operands below 16-byte alignment: a candidate chosen for their alignment */
    if (fp8 && !p->use_temp && ptr_align(args->C) < 16) {
        s = kmux_cuda_error(
            st, KMUX_ERR_UNSUPPORTED,
            "kmux_matmul_execute: cuda:%d: cuBLASLt's fp8 GEMM needs a 16-byte aligned C (got %p)",
            p->hdr.device, args->C);
        goto out;
    }
    if (!fp8) {
        unsigned al = 256;
        if (!p->pack_a && ptr_align(A) < al) al = ptr_align(A);
        if (!p->pack_b && ptr_align(B) < al) al = ptr_align(B);
        if (!p->use_temp && ptr_align(args->C) < al) al = ptr_align(args->C);
        if (p->epilogue & CUBLASLT_EPILOGUE_BIAS && ptr_align(args->bias) < al)
            al = ptr_align(args->bias);
        if (al < 16) {
            s = unaligned_impl(st, p, p->lt, al, &im);
            if (s != KMUX_OK) goto out;
        }
    }

    size_t off_ws = 0, off_a = kmux_cuda_align_up(im->ws, 256), off_b = off_a + bytes_a,
           off_t = off_b + bytes_b, total = off_t + p->temp_bytes;
    void *ws = NULL;
    s = kmux_cuda_stream_workspace(st, cs, total, "kmux_matmul_execute", &ws);
    if (s != KMUX_OK) goto out;
    char *wsb = ws;

    if (p->pack_a || copy_a) {
        /* A' wanted as stored k x m' (used transposed) with ld lda_p, or a same-layout copy */
        void *dst = wsb + off_a;
        int e;
        if (copy_a)
            e = (int)cudaMemcpyAsync(dst, A,
                                     extent(a_rows, a_cols, p->lda, p->stride_a, d->batch_count),
                                     cudaMemcpyDeviceToDevice, cs->stream);
        else if (p->opa == CUBLAS_OP_N) /* stored m' x k: element (kk, i) = src[i + kk * lda] */
            e = kmux_cuda_pack_bytes(cs->stream, A, d->k, (int64_t)p->m, p->lda, 1, p->stride_a,
                                     dst, p->lda_p, p->lda_p * (int64_t)p->m, d->batch_count);
        else /* stored k x m' already, only the leading dimension changes */
            e = kmux_cuda_pack_bytes(cs->stream, A, d->k, (int64_t)p->m, 1, p->lda, p->stride_a,
                                     dst, p->lda_p, p->lda_p * (int64_t)p->m, d->batch_count);
        if (e != 0) {
            s = kmux_cuda_fail(st, (cudaError_t)e,
                               "kmux_matmul_execute: packing fp8/int8 operand A' on cuda:%d",
                               p->hdr.device);
            goto out;
        }
        A = dst;
    }
    if (p->pack_b || copy_b) {
        /* B' wanted as stored k x n' (used as is) with ld ldb_p */
        void *dst = wsb + off_b;
        int e;
        if (copy_b)
            e = (int)cudaMemcpyAsync(dst, B,
                                     extent(b_rows, b_cols, p->ldb, p->stride_b, d->batch_count),
                                     cudaMemcpyDeviceToDevice, cs->stream);
        else if (p->opb == CUBLAS_OP_N)
            e = kmux_cuda_pack_bytes(cs->stream, B, d->k, (int64_t)p->n, 1, p->ldb, p->stride_b,
                                     dst, p->ldb_p, p->ldb_p * (int64_t)p->n, d->batch_count);
        else /* stored n' x k: element (kk, j) = src[j + kk * ldb] */
            e = kmux_cuda_pack_bytes(cs->stream, B, d->k, (int64_t)p->n, p->ldb, 1, p->stride_b,
                                     dst, p->ldb_p, p->ldb_p * (int64_t)p->n, d->batch_count);
        if (e != 0) {
            s = kmux_cuda_fail(st, (cudaError_t)e,
                               "kmux_matmul_execute: packing fp8/int8 operand B' on cuda:%d",
                               p->hdr.device);
            goto out;
        }
        B = dst;
    }

    cublasLtMatmulDescOpaque_t op;
    cublasStatus_t ls = init_op(p, &op);
    if (ls == CUBLAS_STATUS_SUCCESS && (p->epilogue & CUBLASLT_EPILOGUE_BIAS))
        ls = cublasLtMatmulDescSetAttribute(&op, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &args->bias,
                                            sizeof args->bias);
    if (ls == CUBLAS_STATUS_SUCCESS && fp8) {
        /* A' is B when swapped: the scales follow their operands */
        const float *sa = p->swapped ? args->b_scale : args->a_scale;
        const float *sb = p->swapped ? args->a_scale : args->b_scale;
        if (sa)
            ls = cublasLtMatmulDescSetAttribute(&op, CUBLASLT_MATMUL_DESC_A_SCALE_POINTER, &sa,
                                                sizeof sa);
        if (ls == CUBLAS_STATUS_SUCCESS && sb)
            ls = cublasLtMatmulDescSetAttribute(&op, CUBLASLT_MATMUL_DESC_B_SCALE_POINTER, &sb,
                                                sizeof sb);
    }
    if (ls != CUBLAS_STATUS_SUCCESS) {
        s = kmux_cuda_fail_lt(st, ls,
                              "kmux_matmul_execute: setting up the matmul descriptor on cuda:%d",
                              p->hdr.device);
        goto out;
    }
    lt_scalar alpha = to_scale(p, args->alpha, 0);
    lt_scalar beta = to_scale(p, args->beta, beta_zero || p->use_temp);
    void *Cd = p->use_temp ? (void *)(wsb + off_t) : args->C;
    ls = cublasLtMatmul(p->lt, &op, &alpha, A, &p->la, B, &p->lb, &beta, Cd, &p->lc, Cd, &p->ld,
                        &im->algo, im->ws ? wsb + off_ws : NULL, im->ws, cs->stream);
    if (ls != CUBLAS_STATUS_SUCCESS) {
        s = kmux_cuda_fail_lt(
            st, ls, "kmux_matmul_execute: cublasLtMatmul (%s, m'=%llu n'=%llu k=%llu) on cuda:%d",
            im->name, (unsigned long long)p->m, (unsigned long long)p->n, (unsigned long long)p->k,
            p->hdr.device);
        goto out;
    }

    if (p->post_epi || p->use_temp || args->d_scale || args->amax_d) {
        kmux_cuda_post_args a;
        post_base(p, args, &a);
        if (p->use_temp) {
            a.acc = (const float *)(const void *)(wsb + off_t);
            a.ld_acc = p->ld_temp;
            a.stride_acc = p->ld_temp * (int64_t)p->n;
            a.read_c = !beta_zero;
            a.beta = *(const float *)args->beta;
        } else {
            a.read_c = 1; /* D already holds alpha * AB + beta * C */
            a.beta = 1.0;
        }
        if (p->post_epi) {
            if (d->epilogue & KMUX_EPILOGUE_BIAS) a.bias = args->bias;
            a.act = act_of(d->epilogue);
        }
        s = launch_post(st, p, cs->stream, &a);
    }
out:
    kmux_cuda_leave(&g);
    return s;
}

/* ---- info, next, destroy ---- */

kmux_status kmux_cuda_matmul_plan_info(kmux_cuda_state *st, void *plan, kmux_plan_info *info) {
    (void)st;
    const matmul_plan *p = plan;
    const lt_impl *im = &p->impl[p->cur];
    info->impl = im->name;
    info->effective_compute = p->effective;
    info->workspace_bytes =
        kmux_cuda_align_up(im->ws, 256) + p->pack_a_bytes + p->pack_b_bytes + p->temp_bytes;
    /* cuBLASLt: bit-wise reproducible run to run on one GPU model with one workspace size */
    info->deterministic = 1;
    info->impl_index = p->cur;
    return KMUX_OK;
}

kmux_status kmux_cuda_matmul_next_impl(kmux_cuda_state *st, void *plan) {
    matmul_plan *p = plan;
    if (p->cur + 1 >= p->n_impl)
        return kmux_cuda_error(
            st, KMUX_ERR_LAST_IMPL,
            "kmux_plan_next_impl: cuda:%d: %s was the last of %d cuBLASLt candidates",
            p->hdr.device, p->impl[p->cur].name, p->n_impl);
    p->cur++;
    return KMUX_OK;
}

void kmux_cuda_matmul_plan_destroy(kmux_cuda_state *st, void *plan) {
    matmul_plan *p = plan;
    if (p->alt) kmux_cuda_matmul_plan_destroy(st, p->alt);
    pthread_mutex_destroy(&p->lock);
    free(p);
}
