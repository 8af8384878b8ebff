/*
 * cuda_matmul_plan.c - matmul plan creation on cuBLASLt: every configuration and fallback is
 * prepared here, once; the plan is immutable afterwards (cuda_matmul.h says what it holds).
 *
 * Configuration 0 tries the most direct set-up first, then relaxes one thing at a time: strict
 * f32 for F32_FAST_BF16 when no emulated kernel exists, int8 operands packed into the TN layout,
 * the epilogue done by the post kernel. Configuration 1 is the same problem through the f32
 * temporary. fp8 layouts follow kmux_cuda_fp8_layout_plan (cuda_host_logic.c).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpu_kernels.h"
#include "cuda_matmul.h"
#include "kmux_gpu_gemm_params.h"
#include "dispatch/common/kmux_dtype_desc.h"
#include "kmux_sys_alloc.h"

static kmux_status unsupported(const kmux_cuda_state *st, int device, const kmux_matmul_desc *d,
                               const char *why) {
    return kmux_cuda_error(
        st, KMUX_ERR_UNSUPPORTED,
        "kmux_matmul_plan_create: cuda:%d cannot run %s x %s -> %s with compute %s "
        "(m=%lld n=%lld k=%lld, epilogue %s): %s",
        device, kmux_common_dtype_name(d->a_type), kmux_common_dtype_name(d->b_type),
        kmux_common_dtype_name(d->c_type), kmux_common_compute_type_name(d->compute_type),
        (long long)d->m, (long long)d->n, (long long)d->k, kmux_cuda_epi_name(d->epilogue), why);
}

/* Sets the view of the problem (swapped for row-major). */
static void set_view(matmul_plan *p) {
    const kmux_matmul_desc *d = &p->d;
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
    p->fp8 = kmux_cuda_is_ocp_fp8(p->at) || kmux_cuda_is_ocp_fp8(p->bt);
}

/* Sizes, layout rules and the cuBLASLt epilogue of configuration c for its current flags. */
static void configure(const matmul_plan *p, lt_config *c, int force_temp) {
    const kmux_matmul_desc *d = &p->d;
    unsigned e = d->epilogue;
    int narrow = d->c_type == KMUX_F16 || d->c_type == KMUX_BF16;
    c->k_p = (int64_t)p->k;
    c->n_p = (int64_t)p->n;
    c->zero_a = c->zero_b = 0;
    c->pack_a_bytes = c->pack_b_bytes = c->temp_bytes = 0;
    /* The post kernel reads an f32 temporary to round once into f16/bf16 (not with COMPUTE_16F,
     * whose kernels only write f16: that case adds the bias in place, as f16 arithmetic would). */
    c->use_temp = (c->post_epi || force_temp) && narrow && d->compute_type != KMUX_COMPUTE_F16;
    if (p->fp8) {
        kmux_cuda_fp8_in in = {p->opa == CUBLAS_OP_T,
                               p->opb == CUBLAS_OP_T,
                               (int64_t)p->m,
                               (int64_t)p->n,
                               (int64_t)p->k,
                               p->lda,
                               p->ldb,
                               p->stride_a,
                               p->stride_b,
                               d->stride_c,
                               d->ldc,
                               d->batch_count,
                               kmux_common_dtype_size(d->c_type),
                               c->use_temp || force_temp};
        kmux_cuda_fp8_layout l;
        kmux_cuda_fp8_layout_plan(&in, &l);
        c->pack_a = l.pack_a, c->pack_b = l.pack_b, c->zero_a = l.zero_a, c->zero_b = l.zero_b;
        c->k_p = l.k_p, c->n_p = l.n_p, c->lda_p = l.lda_p, c->ldb_p = l.ldb_p;
        c->pack_a_bytes = l.pack_a_bytes, c->pack_b_bytes = l.pack_b_bytes;
        c->use_temp = l.use_temp;
    } else {
        if (c->pack_a) {
            c->lda_p = (int64_t)kmux_cuda_align_up(p->k, 16);
            c->pack_a_bytes =
                kmux_cuda_align_up((size_t)c->lda_p * p->m * (size_t)d->batch_count, 256);
        }
        if (c->pack_b) {
            c->ldb_p = (int64_t)kmux_cuda_align_up(p->k, 16);
            c->pack_b_bytes =
                kmux_cuda_align_up((size_t)c->ldb_p * p->n * (size_t)d->batch_count, 256);
        }
    }
    /* Through the temporary, cuBLASLt computes alpha * AB only (beta = 0), so the whole epilogue
     * has to follow beta * C in the post kernel. */
    if (c->use_temp && e) c->post_epi = 1;
    if (c->post_epi || !e) {
        c->epilogue = CUBLASLT_EPILOGUE_DEFAULT;
    } else if (e & KMUX_EPILOGUE_BIAS) {
        c->epilogue = (e & KMUX_EPILOGUE_RELU)   ? CUBLASLT_EPILOGUE_RELU_BIAS
                      : (e & KMUX_EPILOGUE_GELU) ? CUBLASLT_EPILOGUE_GELU_BIAS
                                                 : CUBLASLT_EPILOGUE_BIAS;
    } else {
        c->epilogue = (e & KMUX_EPILOGUE_RELU) ? CUBLASLT_EPILOGUE_RELU : CUBLASLT_EPILOGUE_GELU;
    }
    if (c->use_temp) {
        c->ld_temp = kmux_cuda_temp_ld((int64_t)p->m);
        c->temp_bytes = kmux_cuda_temp_bytes((int64_t)p->m, c->n_p, d->batch_count);
    }
}

static void set_emulation(const matmul_plan *p, lt_config *c) {
    c->eager = 0;
#if KMUX_CUDA_HAVE_EMULATION_DESC
    if (c->compute == CUBLAS_COMPUTE_32F_EMULATED_16BFX9 &&
        cublasLtEmulationDescInit(&c->emu) == CUBLAS_STATUS_SUCCESS) {
        int32_t strategy = CUBLAS_EMULATION_STRATEGY_EAGER;
        c->eager =
            cublasLtEmulationDescSetAttribute(&c->emu, CUBLASLT_EMULATION_DESC_STRATEGY, &strategy,
                                              sizeof strategy) == CUBLAS_STATUS_SUCCESS;
    }
#else
    (void)p;
#endif
}

/* Smallest element size among the operands cuBLASLt reads at the caller's address. */
static size_t min_elem(const matmul_plan *p, const lt_config *c) {
    size_t m = 16;
    size_t sa = kmux_common_dtype_size(p->at), sb = kmux_common_dtype_size(p->bt);
    size_t sc = kmux_common_dtype_size(p->d.c_type), sbias = kmux_common_dtype_size(p->d.bias_type);
    if (!c->pack_a && sa < m) m = sa;
    if (!c->pack_b && sb < m) m = sb;
    if (!c->use_temp && sc < m) m = sc;
    if ((c->epilogue & CUBLASLT_EPILOGUE_BIAS) && sbias < m) m = sbias;
    return m;
}

/* Builds configuration `cfg` and appends its candidates. Returns KMUX_OK with *found > 0, or
 * KMUX_OK with *found == 0 and a reason in why, or an error already reported. */
static kmux_status build_config(kmux_cuda_state *st, matmul_plan *p, int cfg, int force_temp,
                                int max_primary, size_t cap, int user_cap, int *found, char *why,
                                size_t why_size) {
    const kmux_matmul_desc *d = &p->d;
    lt_config *c = &p->cfg[cfg];
    int first = p->n_impl;
    cublasStatus_t last = CUBLAS_STATUS_SUCCESS;
    *found = 0;
    for (;;) {
        configure(p, c, force_temp);
        set_emulation(p, c);
        size_t extra = c->pack_a_bytes + c->pack_b_bytes + c->temp_bytes;
        int n = 0;
        if (kmux_cuda_algo_cap(cap, user_cap, extra, &c->algo_cap)) {
            kmux_status s = kmux_cuda_build_layouts(st, p, c);
            if (s != KMUX_OK) return s;
            n = kmux_cuda_query(st, p, cfg, 16, max_primary, &last);
            if (n < 0) return KMUX_ERR_DEVICE;
        }
        if (n > 0) break;
#if KMUX_CUDA_HAVE_BF16X9
        if (c->compute == CUBLAS_COMPUTE_32F_EMULATED_16BFX9) {
            kmux_cuda_choose_compute(d->compute_type, 0, c); /* strict f32: at least as precise */
            continue;
        }
#endif
        if (p->at == KMUX_I8 && !(c->pack_a && c->pack_b)) {
            c->pack_a = c->pack_b = 1;
            continue;
        }
        if (d->epilogue && !c->post_epi) {
            c->post_epi = 1; /* e.g. a bias type or activation cuBLASLt lacks here */
            continue;
        }
        if (user_cap && extra > cap)
            snprintf(why, why_size,
                     "needs %zu bytes of workspace for packing/temporaries, "
                     "prefs->max_workspace_bytes is %zu",
                     extra, cap);
        else
            snprintf(why, why_size,
                     "cublasLtMatmulAlgoGetHeuristic found no algorithm (%s; workspace cap %zu "
                     "bytes, cuBLASLt %zu)",
                     cublasLtGetStatusName(last), c->algo_cap, cublasLtGetVersion());
        return KMUX_OK;
    }
    /* fallbacks per smaller alignment class, within the cap left after packing (fp8 operands
     * below 16 bytes are copied instead, so fp8 has none) */
    if (!p->fp8) {
        unsigned aligns[4];
        int na = kmux_cuda_fallback_aligns(min_elem(p, c), aligns);
        for (int i = 0; i < na; i++)
            if (kmux_cuda_query(st, p, cfg, aligns[i], 1, &last) < 0) return KMUX_ERR_DEVICE;
    }
    *found = p->n_impl - first;
    return KMUX_OK;
}

static kmux_status build_lt(kmux_cuda_state *st, matmul_plan *p, size_t cap, int user_cap,
                            char *why, size_t why_size);

/* Appends kmux's own GEMM kernel once per tile, the preferred tile first, after the cuBLASLt
 * implementations (or alone where cuBLASLt offers none: why says why). */
static kmux_status add_own(kmux_cuda_state *st, matmul_plan *p, int own, const char *why) {
    const kmux_matmul_desc *d = &p->d;
    kmux_cuda_impl_order order = kmux_cuda_order_of(p->n_impl, 1, own);
    if (order == KMUX_CUDA_ORDER_NONE) return unsupported(st, p->hdr.device, d, why);
    if (order == KMUX_CUDA_ORDER_LIB_ONLY) return KMUX_OK;
    if (order == KMUX_CUDA_ORDER_OWN_ONLY && st->host->verbose >= 2)
        st->host->trace(2, "cuda,matmul_plan,cuda:%d,no cuBLASLt implementation (%s): kmux-gpu",
                        p->hdr.device, why);
    int tiles[8];
    int nt = kmux_cuda_own_tiles(kmux_gpu_host_pick_tile(st->devices[p->hdr.device].sm, d->m, d->n),
                                 KMUX_GPU_TILE_COUNT, tiles);
    for (int i = 0; i < nt && p->n_impl < KMUX_CUDA_MAX_IMPLS; i++) {
        lt_impl *im = &p->impl[p->n_impl];
        memset(im, 0, sizeof *im);
        im->tile = tiles[i];
        im->effective = kmux_gpu_own_effective_compute(d->compute_type);
        if (kmux_gpu_host_gemm_name(d, tiles[i], im->name, sizeof im->name) != 0)
            return kmux_cuda_error(st, KMUX_ERR_INTERNAL,
                                   "kmux_matmul_plan_create: no name for kmux-gpu tile %d",
                                   tiles[i]);
        p->key[p->n_impl].cfg = KMUX_CUDA_CFG_OWN;
        p->key[p->n_impl].align = 1;
        p->n_impl++;
    }
    return KMUX_OK;
}

kmux_status kmux_cuda_matmul_plan_create(void *state, int device, const kmux_matmul_desc *desc,
                                         const kmux_plan_prefs *prefs, void **plan,
                                         int *impl_count) {
    kmux_cuda_state *st = state;
    const kmux_cuda_device *dv = &st->devices[device];
    const kmux_matmul_desc *d = desc;
    kmux_status ls = kmux_cuda_need_libs(st, "kmux_matmul_plan_create", device);
    if (ls != KMUX_OK) return ls;

    const int own = kmux_cuda_own_gemm_runs(d);
    /* kmux's auxiliary and backward epilogues are not mapped to cuBLASLt's (RELU_AUX's bit
     * layout would need a GPU to confirm): the own kernel runs them */
    const int own_epi = (d->epilogue & (KMUX_EPILOGUE_ALONE | KMUX_EPILOGUE_WITH_AUX)) != 0;
    /* nor is its pointer mode (the post kernel after a cuBLASLt call reads beta on the host):
     * alpha and beta in device memory run on the own kernel, which reads them there */
    const int dev_ptr = d->pointer_mode == KMUX_POINTER_MODE_DEVICE;
    const int lt_row =
        !own_epi && !dev_ptr &&
        kmux_cuda_matmul_row_runs(d->a_type, d->b_type, d->c_type, d->compute_type, dv->sm);
    const char *lt_why =
        own_epi ? "kmux's auxiliary and backward epilogues are not mapped to cuBLASLt's"
        : dev_ptr
            ? "alpha and beta in device memory (pointer_mode) are not mapped to cuBLASLt's pointer "
              "mode"
        : kmux_dtype_is_fnuz(d->a_type) || kmux_dtype_is_fnuz(d->b_type)
            ? "the FNUZ fp8 formats are AMD's (gfx942); cuBLASLt has OCP "
              "e4m3/e5m2 only"
        : dv->sm < 89 ? "cuBLASLt's fp8 GEMM needs sm_89 (Ada) or newer"
                      : "cuBLASLt has no e5m2 x e5m2 kernel";
    if (!lt_row && !own) return unsupported(st, device, d, lt_why);

    matmul_plan *p = kmux_sys_calloc(1, sizeof *p);
    if (!p)
        return st->host->set_error(KMUX_ERR_OUT_OF_MEMORY,
                                   "kmux_matmul_plan_create: out of memory");
    p->hdr.kind = KMUX_CUDA_PLAN_MATMUL;
    p->hdr.device = device;
    p->d = *d;
    p->bias_dt = kmux_cuda_data_type(d->bias_type);
    set_view(p);
    p->fast_accum = p->fp8 && prefs && prefs->allow_fast_accumulation;

    /* The core runs empty and degenerate problems itself (ABI v2); should one arrive anyway,
     * the plan is still valid and never builds a cuBLASLt layout with 0 rows. */
    if (d->m == 0 || d->n == 0 || d->batch_count == 0 || d->k == 0) {
        p->empty = d->m == 0 || d->n == 0 || d->batch_count == 0;
        p->k_zero = !p->empty;
        p->n_impl = 1;
        snprintf(p->impl[0].name, sizeof p->impl[0].name, "%s",
                 p->empty ? "cuda:empty(m, n or batch = 0: nothing to do)"
                          : "cuda:post(k = 0: D = d_scale * act(beta * C + bias))");
        p->impl[0].effective = d->compute_type;
        *plan = p;
        *impl_count = 1;
        return KMUX_OK;
    }

    size_t pref_cap = prefs ? prefs->max_workspace_bytes : SIZE_MAX;
    int user_cap = pref_cap != SIZE_MAX;
    size_t cap = user_cap ? pref_cap : dv->default_workspace;

    char why[256] = "";
    kmux_status s = KMUX_OK;
    if (lt_row) {
        s = build_lt(st, p, cap, user_cap, why, sizeof why);
        if (s == KMUX_ERR_UNSUPPORTED && own) { /* cuBLASLt refused a layout: the own kernel */
            s = KMUX_OK;
            snprintf(why, sizeof why, "cuBLASLt refused the problem");
        }
    } else {
        snprintf(why, sizeof why, "%s", lt_why);
    }
    if (s == KMUX_OK) s = add_own(st, p, own, why);
    if (s != KMUX_OK) {
        free(p);
        return s;
    }
    if (st->host->verbose >= 2)
        st->host->trace(2, "cuda,matmul_plan,cuda:%d,%d implementations,%d configurations,first %s",
                        device, p->n_impl, p->n_cfg, p->impl[0].name);
    *plan = p;
    *impl_count = p->n_impl;
    return KMUX_OK;
}

/* The cuBLASLt implementations of configurations 0 and 1. KMUX_OK with none (reason in why)
 * when cuBLASLt offers none; an error already reported otherwise. */
static kmux_status build_lt(kmux_cuda_state *st, matmul_plan *p, size_t cap, int user_cap,
                            char *why, size_t why_size) {
    const kmux_matmul_desc *d = &p->d;
    const int device = p->hdr.device;
    /* bf16x9 emulation of f32 (CUBLAS_COMPUTE_32F_EMULATED_16BFX9) is a Blackwell feature:
     * asked for only where the device has it; elsewhere F32_FAST_BF16 runs strict f32 */
    const int bf16x9 = kmux_cuda_bf16x9_offered(st->devices[device].sm);
    kmux_cuda_guard g;
    kmux_status s = kmux_cuda_enter(st, device, "kmux_matmul_plan_create", &g);
    if (s != KMUX_OK) return s;
    s = kmux_cuda_lt_handle(st, device, &p->lt);
    int found = 0;
    if (s == KMUX_OK) {
        p->cfg[0].post_epi = (d->epilogue & KMUX_EPILOGUE_BIAS) && !p->swapped;
        kmux_cuda_choose_compute(d->compute_type, bf16x9, &p->cfg[0]);
        s = build_config(st, p, 0, 0, KMUX_CUDA_MAX_ALGOS, cap, user_cap, &found, why, why_size);
    }
    p->n_cfg = found > 0 ? 1 : 0;
    /* configuration 1: through the f32 temporary, where configuration 0 writes C directly and
     * a call may need it (d_scale/amax_d with f16/bf16 D; fp8 with C or bias under 16 bytes) */
    int narrow = d->c_type == KMUX_F16 || d->c_type == KMUX_BF16;
    int want_alt =
        !p->cfg[0].use_temp && ((narrow && d->compute_type != KMUX_COMPUTE_F16) || p->fp8);
    if (s == KMUX_OK && found > 0 && want_alt) {
        lt_config *c1 = &p->cfg[1];
        *c1 = p->cfg[0];
        c1->post_epi = d->epilogue != 0;
        kmux_cuda_choose_compute(d->compute_type, bf16x9, c1);
        char why1[256];
        s = build_config(st, p, 1, 1, KMUX_CUDA_ALT_ALGOS, cap, user_cap, &found, why1,
                         sizeof why1);
        if (s == KMUX_OK && found > 0) p->n_cfg = 2;
        if (s == KMUX_OK && found == 0 && st->host->verbose >= 2)
            st->host->trace(2, "cuda,matmul_plan,cuda:%d,no f32-temporary configuration: %s",
                            device, why1);
    }
    kmux_cuda_leave(&g);
    return s;
}

kmux_status kmux_cuda_matmul_plan_info(void *state, const void *plan, int impl,
                                       kmux_plan_info *info) {
    (void)state;
    const matmul_plan *p = plan;
    if (impl < 0 || impl >= p->n_impl) impl = 0;
    const lt_impl *im = &p->impl[impl];
    info->impl = im->name;
    info->effective_compute = im->effective;
    if (p->empty || p->k_zero || p->key[impl].cfg == KMUX_CUDA_CFG_OWN) {
        info->workspace_bytes = 0; /* kmux's own kernel: none */
    } else {
        const lt_config *c = &p->cfg[p->key[impl].cfg];
        /* the most a call uses: an fp8 operand that is not packed is copied when its pointer is
         * aligned to less than 16 bytes (cuda_matmul_exec.c) */
        size_t a = c->pack_a ? c->pack_a_bytes : p->fp8 ? kmux_cuda_copy_bytes(p, 0) : 0;
        size_t b = c->pack_b ? c->pack_b_bytes : p->fp8 ? kmux_cuda_copy_bytes(p, 1) : 0;
        info->workspace_bytes = kmux_cuda_align_up(im->ws, 256) + a + b + c->temp_bytes;
    }
    /* cuBLASLt: bit-wise reproducible run to run on one GPU model with one workspace size; the
     * own kernel: a fixed accumulation order, amax by atomicMax (order independent) */
    info->deterministic = 1;
    return KMUX_OK;
}

void kmux_cuda_matmul_plan_destroy(void *state, void *plan) {
    (void)state;
    free(plan);
}
