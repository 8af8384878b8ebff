/*
 * cuda_matmul_heur.c - cuBLASLt layouts and operation descriptors of a plan configuration, the
 * heuristic query, and the implementation names ("cublasLt:algo=66,tile=128x256,...").
 *
 * The heuristics see the alignment the candidate will be run with: every MIN_ALIGNMENT
 * preference and the value of the bias pointer (cuBLASLt reads only its alignment at query time)
 * are the promise of the alignment class being queried, never more.
 */
#include <stdio.h>
#include <string.h>

#include "cuda_matmul.h"

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
    int32_t b = (int32_t)batch; /* the core keeps batch_count within max_batch (INT32_MAX) */
    s = lt_check(
        st, cublasLtMatrixLayoutSetAttribute(h, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &b, sizeof b),
        "CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT");
    if (s != KMUX_OK) return s;
    return lt_check(st,
                    cublasLtMatrixLayoutSetAttribute(h, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET,
                                                     &stride, sizeof stride),
                    "CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET");
}

cublasStatus_t kmux_cuda_init_op(const matmul_plan *p, const lt_config *c,
                                 cublasLtMatmulDescOpaque_t *storage) {
    cublasLtMatmulDesc_t op = storage;
    cublasStatus_t s = cublasLtMatmulDescInit(op, c->compute, c->scale_type);
    if (s != CUBLAS_STATUS_SUCCESS) return s;
    int32_t ta = c->pack_a ? CUBLAS_OP_T : p->opa;
    int32_t tb = c->pack_b ? CUBLAS_OP_N : p->opb;
    uint32_t epi = c->epilogue;
    if ((s = cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_TRANSA, &ta, sizeof ta)) !=
        CUBLAS_STATUS_SUCCESS)
        return s;
    if ((s = cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_TRANSB, &tb, sizeof tb)) !=
        CUBLAS_STATUS_SUCCESS)
        return s;
    if ((s = cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_EPILOGUE, &epi, sizeof epi)) !=
        CUBLAS_STATUS_SUCCESS)
        return s;
    if (p->fast_accum) {
        int8_t fa = 1;
        s = cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_FAST_ACCUM, &fa, sizeof fa);
        if (s != CUBLAS_STATUS_SUCCESS) return s;
    }
    if (c->epilogue & CUBLASLT_EPILOGUE_BIAS) {
        int32_t bt = p->bias_dt;
        s = cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_BIAS_DATA_TYPE, &bt, sizeof bt);
        if (s != CUBLAS_STATUS_SUCCESS) return s;
    }
#if KMUX_CUDA_HAVE_EMULATION_DESC
    if (c->eager) {
        cublasLtEmulationDesc_t emu = (cublasLtEmulationDesc_t)&c->emu;
        s = cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_EMULATION_DESCRIPTOR, &emu,
                                           sizeof emu);
    }
#endif
    return s;
}

kmux_status kmux_cuda_build_layouts(const kmux_cuda_state *st, const matmul_plan *p, lt_config *c) {
    const kmux_matmul_desc *d = &p->d;
    int64_t bc = d->batch_count;
    cudaDataType_t ta = kmux_cuda_data_type(p->at), tb = kmux_cuda_data_type(p->bt);
    kmux_status s;
    if (c->pack_a) /* stored k_p x m', used transposed */
        s = set_layout(st, &c->la, ta, (uint64_t)c->k_p, p->m, c->lda_p, bc,
                       c->lda_p * (int64_t)p->m);
    else if (p->opa == CUBLAS_OP_N)
        s = set_layout(st, &c->la, ta, p->m, (uint64_t)c->k_p, p->lda, bc, p->stride_a);
    else
        s = set_layout(st, &c->la, ta, (uint64_t)c->k_p, p->m, p->lda, bc, p->stride_a);
    if (s != KMUX_OK) return s;
    if (c->pack_b) /* stored k_p x n_p, used as is */
        s = set_layout(st, &c->lb, tb, (uint64_t)c->k_p, (uint64_t)c->n_p, c->ldb_p, bc,
                       c->ldb_p * c->n_p);
    else if (p->opb == CUBLAS_OP_N)
        s = set_layout(st, &c->lb, tb, (uint64_t)c->k_p, (uint64_t)c->n_p, p->ldb, bc, p->stride_b);
    else
        s = set_layout(st, &c->lb, tb, (uint64_t)c->n_p, (uint64_t)c->k_p, p->ldb, bc, p->stride_b);
    if (s != KMUX_OK) return s;
    if (c->use_temp)
        s = set_layout(st, &c->lc, CUDA_R_32F, p->m, (uint64_t)c->n_p, c->ld_temp, bc,
                       c->ld_temp * c->n_p);
    else
        s = set_layout(st, &c->lc, kmux_cuda_data_type(d->c_type), p->m, p->n, d->ldc, bc,
                       d->stride_c);
    if (s == KMUX_OK) memcpy(&c->ld, &c->lc, sizeof c->ld);
    return s;
}

static kmux_compute_type effective_of(const matmul_plan *p, const lt_config *c,
                                      const cublasLtMatmulAlgo_t *algo, const char **tag) {
    *tag = NULL;
    if (p->d.compute_type != KMUX_COMPUTE_F32_FAST_BF16) return p->d.compute_type;
    int emulated = 0, cap_known = 0;
    int32_t algo_emulates = 0;
#if KMUX_CUDA_HAVE_BF16X9
    emulated = c->compute == CUBLAS_COMPUTE_32F_EMULATED_16BFX9;
#endif
#if KMUX_CUDA_HAVE_EMULATION_DESC
    size_t w = 0;
    cap_known = cublasLtMatmulAlgoCapGetAttribute(
                    algo, CUBLASLT_ALGO_CAP_FLOATING_POINT_EMULATION_SUPPORT, &algo_emulates,
                    sizeof algo_emulates, &w) == CUBLAS_STATUS_SUCCESS;
#else
    (void)algo;
#endif
    return kmux_cuda_bf16x9_effective(emulated, cap_known, algo_emulates != 0, c->eager, tag);
}

/* Fills one implementation's name from its algorithm configuration. */
static void name_impl(const matmul_plan *p, const lt_config *c, unsigned align, const char *tag,
                      lt_impl *im) {
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
    char extra[128] = "";
    size_t n = 0;
#define APPEND(...)                                                                                \
    do {                                                                                           \
        if (n < sizeof extra) n += (size_t)snprintf(extra + n, sizeof extra - n, __VA_ARGS__);     \
    } while (0)
    if (cluster) APPEND(",cluster=%s", cn);
    if (tag)
        APPEND(",compute=%s", tag);
    else if (c->compute != CUBLAS_COMPUTE_32F && c->compute != CUBLAS_COMPUTE_64F &&
             c->compute != CUBLAS_COMPUTE_32I)
        APPEND(",compute=%s", kmux_cuda_lt_compute_name(c->compute));
    if (align < 16) APPEND(",align=%u", align);
    if (c->pack_a || c->pack_b) APPEND("+pack");
    if (c->zero_a || c->zero_b) APPEND("+zeropad");
    if (c->post_epi) APPEND("+post_epilogue");
    if (c->use_temp) APPEND("+f32tmp");
    if (p->fast_accum) APPEND(",fast_accum");
#undef APPEND
    snprintf(im->name, sizeof im->name, "cublasLt:algo=%d,tile=%s,stages=%s,splitk=%d%s", id, tn,
             sn, splitk, extra);
}

int kmux_cuda_query(kmux_cuda_state *st, matmul_plan *p, int cfg, unsigned align, int max_out,
                    cublasStatus_t *last) {
    lt_config *c = &p->cfg[cfg];
    if (max_out > KMUX_CUDA_MAX_ALGOS) max_out = KMUX_CUDA_MAX_ALGOS;
    if (max_out > KMUX_CUDA_MAX_IMPLS - p->n_impl) max_out = KMUX_CUDA_MAX_IMPLS - p->n_impl;
    if (max_out <= 0) return 0;
    cublasLtMatmulDescOpaque_t op;
    cublasStatus_t s = kmux_cuda_init_op(p, c, &op);
    if (s == CUBLAS_STATUS_SUCCESS && (c->epilogue & CUBLASLT_EPILOGUE_BIAS)) {
        /* heuristics read the bias pointer's value for its alignment only: promise exactly the
         * class being queried */
        const void *fake = (const void *)(uintptr_t)align;
        s = cublasLtMatmulDescSetAttribute(&op, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &fake,
                                           sizeof fake);
    }
    if (s != CUBLAS_STATUS_SUCCESS) {
        lt_check(st, s, "matmul descriptor");
        return -1;
    }
    cublasLtMatmulPreferenceOpaque_t pref;
    uint64_t cap = c->algo_cap;
    uint32_t al = align;
    s = cublasLtMatmulPreferenceInit(&pref);
    if (s == CUBLAS_STATUS_SUCCESS)
        s = cublasLtMatmulPreferenceSetAttribute(&pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES,
                                                 &cap, sizeof cap);
    const cublasLtMatmulPreferenceAttributes_t aligns[] = {
        CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES,
        CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES};
    for (int i = 0; i < 4 && s == CUBLAS_STATUS_SUCCESS; i++)
        s = cublasLtMatmulPreferenceSetAttribute(&pref, aligns[i], &al, sizeof al);
    if (s != CUBLAS_STATUS_SUCCESS) {
        lt_check(st, s, "matmul preference");
        return -1;
    }
    cublasLtMatmulHeuristicResult_t res[KMUX_CUDA_MAX_ALGOS];
    int got = 0;
    s = cublasLtMatmulAlgoGetHeuristic(p->lt, &op, &c->la, &c->lb, &c->lc, &c->ld, &pref, max_out,
                                       res, &got);
    *last = s;
    /* NOT_SUPPORTED: no kernel for this configuration; INVALID_VALUE: a combination this
     * cuBLASLt rejects outright; any other failure of the heuristic query (ARCH_MISMATCH,
     * an internal error of one configuration, ...) also means "no candidate here": the caller
     * tries the next configuration, and plan creation fails only when none has a candidate
     * (the last status is then named). Only ALLOC_FAILED stops it: the host is out of memory. */
    if (s == CUBLAS_STATUS_ALLOC_FAILED) {
        lt_check(st, s, "cublasLtMatmulAlgoGetHeuristic");
        return -1;
    }
    if (s != CUBLAS_STATUS_SUCCESS) {
        if (st->host->verbose >= 2)
            st->host->trace(2,
                            "cuda,matmul_plan,cublasLtMatmulAlgoGetHeuristic: %s (%d): no "
                            "candidate for this configuration",
                            cublasLtGetStatusName(s), (int)s);
        return 0;
    }
    int n = 0;
    for (int i = 0; i < got; i++) {
        if (res[i].state != CUBLAS_STATUS_SUCCESS) continue;
        lt_impl *im = &p->impl[p->n_impl];
        im->algo = res[i].algo;
        im->ws = res[i].workspaceSize;
        const char *tag;
        im->effective = effective_of(p, c, &im->algo, &tag);
        name_impl(p, c, align, tag, im);
        p->key[p->n_impl] = (kmux_cuda_impl_key){cfg, align};
        p->n_impl++;
        n++;
    }
    return n;
}
