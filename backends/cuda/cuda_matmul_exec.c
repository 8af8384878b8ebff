/*
 * cuda_matmul_exec.c - execution of a matmul plan: which configuration and implementation this
 * call runs (its d_scale/amax_d and its pointers' alignment decide), the workspace, packing,
 * cublasLtMatmul, and the post kernel; or kmux's own GEMM kernel (cuda_own.c), asked for or
 * where no cuBLASLt implementation of the plan serves the call (kmux_cuda_run_choice).
 *
 * d_scale and amax_d: cuBLASLt applies them only to fp8 D, and kmux's outputs are f32/f16/bf16,
 * so the post kernel applies them (amax of act(...) before d_scale). For f16/bf16 outputs the
 * call runs configuration 1 (through the f32 temporary) so that D is still rounded once; for f32
 * outputs d_scale multiplies the f32 result, a second f32 rounding (exact for power-of-two
 * scales). For i32 outputs the post kernel reads D back with an integer beta of 1.
 */
#include <string.h>

#include "cuda_matmul.h"
#include "dispatch/common/kmux_dtype_codec.h"

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
    case KMUX_COMPUTE_F16: /* COMPUTE_16F scales are f16; kmux passes them as float */
        s.f16 = (uint16_t)kmux_encode_f32(*(const float *)v, KMUX_F16, 0);
        break;
    default:
        s.f32 = *(const float *)v;
        break;
    }
    return s;
}

/* Configuration this call needs, or -1 (*why set) when the plan has none for it. */
static int pick_config(const matmul_plan *p, int cfg, const kmux_matmul_args *args,
                       const char **why) {
    const kmux_matmul_desc *d = &p->d;
    const lt_config *c = &p->cfg[cfg];
    int narrow = d->c_type == KMUX_F16 || d->c_type == KMUX_BF16;
    *why = NULL;
    if ((args->d_scale || args->amax_d) && narrow && !c->use_temp &&
        d->compute_type != KMUX_COMPUTE_F16)
        *why = "d_scale/amax_d with an f16/bf16 output (rounded once through an f32 temporary)";
    else if (p->fp8 && !c->use_temp &&
             (kmux_cuda_ptr_align((uintptr_t)args->C) < 16 ||
              ((c->epilogue & CUBLASLT_EPILOGUE_BIAS) &&
               kmux_cuda_ptr_align((uintptr_t)args->bias) < 16)))
        *why = "fp8 with C or bias under 16-byte alignment (through an f32 temporary)";
    if (!*why) return cfg;
    for (int i = 0; i < p->n_cfg; i++)
        if (p->cfg[i].use_temp) return i;
    return -1;
}

/* How a cuBLASLt implementation runs this call. */
typedef struct lt_call {
    int cfg;            /* configuration */
    int copy_a, copy_b; /* fp8 operands under 16 bytes copied like packed ones */
    unsigned align;     /* the call's alignment */
} lt_call;

/* The cuBLASLt implementation that serves this call for the requested one, or -1 with the
 * reason in why (no error reported: the own kernel may still run it). */
static int lt_choose(const matmul_plan *p, int impl, const kmux_matmul_args *args, lt_call *lc,
                     char *why, size_t why_size) {
    const kmux_matmul_desc *d = &p->d;
    if (!p->fp8 && (args->a_scale || args->b_scale)) {
        snprintf(why, why_size,
                 "cuBLASLt applies a_scale/b_scale to fp8 inputs only (this plan is %s x %s)",
                 kmux_common_dtype_name(d->a_type), kmux_common_dtype_name(d->b_type));
        return -1;
    }
    const char *cwhy = NULL;
    lc->cfg = pick_config(p, p->key[impl].cfg, args, &cwhy);
    if (lc->cfg < 0) {
        snprintf(why, why_size,
                 "this call needs %s, and cuBLASLt offered no algorithm for that configuration "
                 "when the plan was created",
                 cwhy);
        return -1;
    }
    const lt_config *c = &p->cfg[lc->cfg];
    const void *A = p->swapped ? args->B : args->A;
    const void *B = p->swapped ? args->A : args->B;
    lc->copy_a = p->fp8 && !c->pack_a && kmux_cuda_ptr_align((uintptr_t)A) < 16;
    lc->copy_b = p->fp8 && !c->pack_b && kmux_cuda_ptr_align((uintptr_t)B) < 16;
    kmux_cuda_align_in ain = {A,
                              B,
                              args->C,
                              args->bias,
                              !c->pack_a && !lc->copy_a,
                              !c->pack_b && !lc->copy_b,
                              !c->use_temp,
                              (c->epilogue & CUBLASLT_EPILOGUE_BIAS) != 0};
    lc->align = kmux_cuda_call_align(&ain);
    int run = kmux_cuda_pick_impl(p->key, p->n_impl, impl, lc->cfg, lc->align);
    if (run < 0)
        snprintf(why, why_size,
                 "no cuBLASLt algorithm of this plan accepts operands aligned to %u bytes (A %p, "
                 "B %p, C %p, bias %p)",
                 lc->align, args->A, args->B, args->C, args->bias);
    return run;
}

static kmux_status lt_execute(kmux_cuda_state *st, const matmul_plan *p, int run, const lt_call *lc,
                              kmux_cuda_stream *cs, const kmux_matmul_args *args);

kmux_status kmux_cuda_matmul_execute(void *state, const void *plan, int impl, void *stream,
                                     const kmux_matmul_args *args) {
    kmux_cuda_state *st = state;
    const matmul_plan *p = plan;
    kmux_cuda_stream *cs = stream;
    const kmux_matmul_desc *d = &p->d;
    if (p->empty) return KMUX_OK;
    /* device-memory alpha (pointer_mode, never with k == 0): the own kernel decides alpha == 0 */
    if (p->k_zero || (d->pointer_mode != KMUX_POINTER_MODE_DEVICE &&
                      kmux_cuda_scalar_zero(d->compute_type, args->alpha)))
        return kmux_cuda_matmul_degenerate(state, stream, d, args);
    if (impl < 0 || impl >= p->n_impl) impl = 0;

    char why[256] = "";
    lt_call lc = {0, 0, 0, 0};
    int lt_run = -1;
    if (p->key[impl].cfg != KMUX_CUDA_CFG_OWN)
        lt_run = lt_choose(p, impl, args, &lc, why, sizeof why);
    int run = kmux_cuda_run_choice(p->key, p->n_impl, impl, lt_run);
    if (run < 0)
        return kmux_cuda_error(st, KMUX_ERR_UNSUPPORTED, "kmux_matmul_execute: cuda:%d: %s",
                               p->hdr.device, why);
    const lt_impl *im = &p->impl[run];
    if (run != impl && st->host->verbose >= 2)
        st->host->trace(2, "cuda,matmul_fallback,cuda:%d,impl %d -> %d (%s),%s", p->hdr.device,
                        impl, run, why[0] ? why : "alignment", im->name);
    if (p->key[run].cfg == KMUX_CUDA_CFG_OWN) return kmux_cuda_own_gemm(st, cs, d, args, im->tile);
    return lt_execute(st, p, run, &lc, cs, args);
}

static kmux_status lt_execute(kmux_cuda_state *st, const matmul_plan *p, int run, const lt_call *lc,
                              kmux_cuda_stream *cs, const kmux_matmul_args *args) {
    const kmux_matmul_desc *d = &p->d;
    const lt_config *c = &p->cfg[lc->cfg];
    const lt_impl *im = &p->impl[run];
    const void *A = p->swapped ? args->B : args->A;
    const void *B = p->swapped ? args->A : args->B;
    const int copy_a = lc->copy_a, copy_b = lc->copy_b;
    size_t bytes_a = copy_a ? kmux_cuda_copy_bytes(p, 0) : c->pack_a_bytes;
    size_t bytes_b = copy_b ? kmux_cuda_copy_bytes(p, 1) : c->pack_b_bytes;
    size_t off_a = kmux_cuda_align_up(im->ws, 256), off_b = off_a + bytes_a,
           off_t = off_b + bytes_b, total = off_t + c->temp_bytes;

    kmux_cuda_guard g;
    kmux_status s = kmux_cuda_enter(st, p->hdr.device, "kmux_matmul_execute", &g);
    if (s != KMUX_OK) return s;
    void *ws = NULL;
    s = kmux_cuda_stream_workspace(st, cs, total, args->workspace, args->workspace_bytes,
                                   "kmux_matmul_execute", &ws);
    if (s != KMUX_OK) goto out;
    char *wsb = ws;

    if (c->pack_a || copy_a) {
        s = kmux_cuda_pack_operand(st, cs, p, c, 0, copy_a, A, wsb + off_a);
        if (s != KMUX_OK) goto out;
        A = wsb + off_a;
    }
    if (c->pack_b || copy_b) {
        s = kmux_cuda_pack_operand(st, cs, p, c, 1, copy_b, B, wsb + off_b);
        if (s != KMUX_OK) goto out;
        B = wsb + off_b;
    }

    cublasLtMatmulDescOpaque_t op;
    cublasStatus_t ls = kmux_cuda_init_op(p, c, &op);
    if (ls == CUBLAS_STATUS_SUCCESS && (c->epilogue & CUBLASLT_EPILOGUE_BIAS))
        ls = cublasLtMatmulDescSetAttribute(&op, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &args->bias,
                                            sizeof args->bias);
    if (ls == CUBLAS_STATUS_SUCCESS && p->fp8) {
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
    int beta_zero = kmux_cuda_scalar_zero(d->compute_type, args->beta);
    lt_scalar alpha = to_scale(p, args->alpha, 0);
    lt_scalar beta = to_scale(p, args->beta, beta_zero || c->use_temp);
    void *Cd = c->use_temp ? (void *)(wsb + off_t) : args->C;
    /* cuBLASLt takes layouts as non-const handles but only reads them */
#define LAYOUT(l) ((cublasLtMatrixLayout_t)(uintptr_t)(l))
    ls = cublasLtMatmul(p->lt, &op, &alpha, A, LAYOUT(&c->la), B, LAYOUT(&c->lb), &beta, Cd,
                        LAYOUT(&c->lc), Cd, LAYOUT(&c->ld), &im->algo, im->ws ? wsb : NULL, im->ws,
                        cs->stream);
    if (ls != CUBLAS_STATUS_SUCCESS) {
        s = kmux_cuda_fail_lt(
            st, ls, "kmux_matmul_execute: cublasLtMatmul (%s, m'=%llu n'=%llu k=%llu) on cuda:%d",
            im->name, (unsigned long long)p->m, (unsigned long long)p->n, (unsigned long long)p->k,
            p->hdr.device);
        goto out;
    }
    if (kmux_cuda_needs_post(c->use_temp, c->post_epi, args)) {
        kmux_cuda_post_args a;
        kmux_cuda_post_after_gemm_args(d, args, c->use_temp, (const float *)(void *)(wsb + off_t),
                                       c->ld_temp, c->ld_temp * c->n_p, c->post_epi, &a);
        s = kmux_cuda_launch_post(st, cs, &a);
    }
out:
    kmux_cuda_leave(&g);
    return s;
}
