/*
 * hip_blaslt.c - matmul on hipBLASLt (hip_blaslt.h): the library's search and version check, one
 * hipblasLtHandle_t per device, and the hipBLASLt half of a matmul plan: what it runs (types,
 * compute types, epilogues, fp8 per architecture and layout), the descriptors and the heuristic's
 * candidates at plan creation, hipblasLtMatmul at execution.
 *
 * Orientation (as the CUDA plugin's cuBLASLt): hipBLASLt is column-major. A column-major problem
 * is passed as it is; a row-major one as its transpose C^T = op(B)^T op(A)^T (A and B swap, m and
 * n swap), the same memory read column-major. kmux's bias (bias[j] over the columns of the
 * row-major view) is then per row of D' = C^T: hipBLASLt's BIAS epilogue. For a column-major
 * problem the bias runs along D's columns, which hipBLASLt's epilogue cannot do: refused (kmux's
 * own kernel serves it).
 *
 * What hipBLASLt is asked to run (hipBLASLt's data-type support table, ROCm 6.1 - 7.x):
 *   f32 x f32 -> f32            compute 32F; F32_FAST_TF32 -> 32F_FAST_TF32 (xf32) on gfx942 and
 *                               gfx950 only; F32_FAST_BF16 -> 32F_FAST_16BF
 *   f16 x f16 -> f16 or f32     compute 32F
 *   bf16 x bf16 -> bf16 or f32  compute 32F
 *   i8 x i8 -> i32              compute 32I, scale type i32
 *   fp8 x fp8 -> f32, f16, bf16 or fp8   compute 32F; FNUZ on gfx942, OCP on gfx950 and gfx12,
 *                               refused elsewhere with the architecture's formats; A' transposed
 *                               and B' not ("TN", cuBLASLt's fp8 rule: kmux asks hipBLASLt for no
 *                               other fp8 layout, whose solutions vary by release), a_scale,
 *                               b_scale and d_scale as hipBLASLt's scale pointers
 *   f64, compute F16, an f8/i8 bias, a column-major bias, require_deterministic (hipBLASLt does not
 *   promise bitwise reproducible solutions): refused with the reason. amax_d: at execution the
 *   call runs on another implementation of the plan (hip_matmul.c).
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dispatch/common/kmux_dtype_desc.h"
#include "hip_backend.h"
#include "kmux_sys_alloc.h"

static int hip_type(kmux_dtype t) {
    switch (t) {
    case KMUX_F32:
        return KMUX_HIP_R_32F;
    case KMUX_F16:
        return KMUX_HIP_R_16F;
    case KMUX_BF16:
        return KMUX_HIP_R_16BF;
    case KMUX_I8:
        return KMUX_HIP_R_8I;
    case KMUX_I32:
        return KMUX_HIP_R_32I;
    case KMUX_F8_E4M3:
        return KMUX_HIP_R_8F_E4M3;
    case KMUX_F8_E5M2:
        return KMUX_HIP_R_8F_E5M2;
    case KMUX_F8_E4M3_FNUZ:
        return KMUX_HIP_R_8F_E4M3_FNUZ;
    case KMUX_F8_E5M2_FNUZ:
        return KMUX_HIP_R_8F_E5M2_FNUZ;
    default:
        return -1;
    }
}

/* Resolves hipBLASLt's functions from lib into ctx (the kmux_hip_blaslt); NULL when usable. */
static const char *check_blaslt(void *lib, void *ctx) {
    kmux_hip_blaslt *b = ctx;
    struct {
        void **slot;
        const char *name;
    } const fns[] = {
        {(void **)&b->create, "hipblasLtCreate"},
        {(void **)&b->destroy, "hipblasLtDestroy"},
        {(void **)&b->get_version, "hipblasLtGetVersion"},
        {(void **)&b->layout_create, "hipblasLtMatrixLayoutCreate"},
        {(void **)&b->layout_destroy, "hipblasLtMatrixLayoutDestroy"},
        {(void **)&b->layout_set, "hipblasLtMatrixLayoutSetAttribute"},
        {(void **)&b->desc_create, "hipblasLtMatmulDescCreate"},
        {(void **)&b->desc_destroy, "hipblasLtMatmulDescDestroy"},
        {(void **)&b->desc_set, "hipblasLtMatmulDescSetAttribute"},
        {(void **)&b->pref_create, "hipblasLtMatmulPreferenceCreate"},
        {(void **)&b->pref_destroy, "hipblasLtMatmulPreferenceDestroy"},
        {(void **)&b->pref_set, "hipblasLtMatmulPreferenceSetAttribute"},
        {(void **)&b->heuristic, "hipblasLtMatmulAlgoGetHeuristic"},
        {(void **)&b->matmul, "hipblasLtMatmul"},
    };
    for (size_t i = 0; i < sizeof fns / sizeof fns[0]; i++) {
        *fns[i].slot = dlsym(lib, fns[i].name);
        if (!*fns[i].slot) {
            for (size_t j = 0; j < sizeof fns / sizeof fns[0]; j++)
                *fns[j].slot = NULL;
            static __thread char why[96];
            snprintf(why, sizeof why, "%s is missing", fns[i].name);
            return why;
        }
    }
    return NULL;
}

static const char *blaslt_opened(kmux_hip_state *st) {
    kmux_hip_blaslt *b = &st->blaslt;
    b->handles =
        kmux_sys_calloc((size_t)(st->device_count > 0 ? st->device_count : 1), sizeof *b->handles);
    return b->handles ? NULL : "out of host memory";
}

/* Opens hipBLASLt once per backend state; 1 when it is there. Sonames: libhipblaslt.so.1
 * (ROCm 7.x), libhipblaslt.so.0 (ROCm 5.7 - 6.x). Its version comes with the first handle. */
static int blaslt_open(kmux_hip_state *st) {
    static const char *const sonames[] = {"libhipblaslt.so.1", "libhipblaslt.so.0", NULL};
    const kmux_hip_lib_search s = {"hipblaslt", "KMUX_HIPBLASLT_LIBRARY", sonames, check_blaslt,
                                   &st->blaslt};
    return kmux_hip_lib_once(st, &st->blaslt.base, &s, "hipBLASLt", blaslt_opened);
}

void kmux_hip_blaslt_init(kmux_hip_state *st) {
    pthread_mutex_init(&st->blaslt.base.lock, NULL);
}

void kmux_hip_blaslt_fini(kmux_hip_state *st) {
    kmux_hip_blaslt *b = &st->blaslt;
    for (int i = 0; b->handles && i < st->device_count; i++) {
        if (!b->handles[i]) continue;
        kmux_hip_guard g;
        /* hipblasLtDestroy synchronises the device: only where it can be entered */
        if (kmux_hip_enter(st, i, "kmux_context_destroy", &g) == KMUX_OK) {
            (void)b->destroy(b->handles[i]);
            kmux_hip_leave(st, &g);
        }
    }
    free(b->handles);
    b->handles = NULL;
    pthread_mutex_destroy(&b->base.lock);
}

/* The device's handle (the device entered), created on first use; the library's version is
 * read and checked with the first one. NULL with why. */
static void *handle_of(kmux_hip_state *st, int device, char *why, size_t size) {
    kmux_hip_blaslt *b = &st->blaslt;
    pthread_mutex_lock(&b->base.lock);
    void *h = b->handles[device];
    if (!h && !b->base.why[0]) {
        int e = b->create(&h);
        int v = 0;
        if (e == KMUX_HIPBLAS_SUCCESS && b->get_version(h, &v) != KMUX_HIPBLAS_SUCCESS) v = 0;
        if (e != KMUX_HIPBLAS_SUCCESS) {
            snprintf(b->base.why, sizeof b->base.why, "hipblasLtCreate on hip:%d: %s (%d)", device,
                     kmux_hipblas_status_name(e), e);
            h = NULL;
        } else if (v < 700) {
            /* before 0.7 (ROCm 6.1) hipBLASLt had its own datatype and compute-type enums */
            snprintf(b->base.why, sizeof b->base.why,
                     "hipBLASLt %d.%d.%d is older than 0.7 (ROCm 6.1), whose hipDataType ABI "
                     "kmux uses",
                     v / 100000, v / 100 % 1000, v % 100);
            (void)b->destroy(h);
            h = NULL;
        } else {
            snprintf(b->base.version, sizeof b->base.version, "hipBLASLt %d.%d.%d", v / 100000,
                     v / 100 % 1000, v % 100);
            b->handles[device] = h;
        }
    }
    if (!h) snprintf(why, size, "%s", b->base.why);
    pthread_mutex_unlock(&b->base.lock);
    return h;
}

const char *kmux_hip_blaslt_version(kmux_hip_state *st, int device) {
    if (!blaslt_open(st)) return NULL;
    kmux_hip_guard g;
    if (kmux_hip_enter(st, device, "kmux_device_diag_get", &g) != KMUX_OK) return NULL;
    char why[64];
    void *h = handle_of(st, device, why, sizeof why);
    kmux_hip_leave(st, &g);
    return h ? st->blaslt.base.version : NULL;
}

const char *kmux_hip_blaslt_refusal(const kmux_matmul_desc *d, const char *arch, int det, char *buf,
                                    size_t size) {
    const char *an = kmux_dtype_desc_of(d->a_type).name, *bn = kmux_dtype_desc_of(d->b_type).name,
               *cn = kmux_dtype_desc_of(d->c_type).name;
    if (det)
        return snprintf(buf, size,
                        "require_deterministic: hipBLASLt does not promise bitwise "
                        "reproducible solutions"),
               buf;
    const int fp8 = kmux_dtype_is_fp8(d->a_type) || kmux_dtype_is_fp8(d->b_type);
    int ok;
    if (fp8) {
        const int fam = kmux_hip_fp8_family(arch);
        const int fnuz = fam == 'F';
        ok = kmux_dtype_is_fp8(d->a_type) && kmux_dtype_is_fp8(d->b_type) &&
             d->compute_type == KMUX_COMPUTE_F32 &&
             (d->c_type == KMUX_F32 || d->c_type == KMUX_F16 || d->c_type == KMUX_BF16 ||
              kmux_dtype_is_fp8(d->c_type));
        if (ok && (!fam || kmux_dtype_is_fnuz(d->a_type) != fnuz ||
                   kmux_dtype_is_fnuz(d->b_type) != fnuz ||
                   (kmux_dtype_is_fp8(d->c_type) && kmux_dtype_is_fnuz(d->c_type) != fnuz)))
            return snprintf(buf, size, "hipBLASLt on %s runs %s, not %s x %s -> %s", arch,
                            kmux_hip_fp8_formats(arch), an, bn, cn),
                   buf;
    } else if (d->a_type != d->b_type) {
        ok = 0;
    } else if (d->a_type == KMUX_I8) {
        ok = d->c_type == KMUX_I32 && d->compute_type == KMUX_COMPUTE_I32;
    } else if (d->a_type == KMUX_F32) {
        ok = d->c_type == KMUX_F32 && (d->compute_type == KMUX_COMPUTE_F32 ||
                                       d->compute_type == KMUX_COMPUTE_F32_FAST_BF16 ||
                                       d->compute_type == KMUX_COMPUTE_F32_FAST_TF32);
        if (ok && d->compute_type == KMUX_COMPUTE_F32_FAST_TF32 && strcmp(arch, "gfx942") != 0 &&
            strcmp(arch, "gfx950") != 0)
            return snprintf(buf, size,
                            "hipBLASLt's xf32 (HIPBLAS_COMPUTE_32F_FAST_TF32) runs on gfx942 and "
                            "gfx950, not %s",
                            arch),
                   buf;
    } else if (d->a_type == KMUX_F16 || d->a_type == KMUX_BF16) {
        ok = (d->c_type == d->a_type || d->c_type == KMUX_F32) &&
             d->compute_type == KMUX_COMPUTE_F32;
    } else {
        ok = 0;
    }
    if (!ok)
        return snprintf(buf, size,
                        "hipBLASLt does not run %s x %s -> %s with compute %d (it runs f32, "
                        "f16/bf16 with f32 accumulation, i8 -> i32 and the architecture's fp8; "
                        "f64 is rocBLAS's)",
                        an, bn, cn, (int)d->compute_type),
               buf;
    const int row = d->order == KMUX_ROW_MAJOR;
    /* A' is B for a row-major problem (transposed problem): "TN" is op(A') = T, op(B') = N */
    if (fp8 && ((row ? d->transb : d->transa) != KMUX_TRANS ||
                (row ? d->transa : d->transb) != KMUX_NO_TRANS))
        return snprintf(buf, size,
                        "kmux asks hipBLASLt for fp8 in the TN layout only (column-major A "
                        "transposed, B not; row-major B transposed, A not)"),
               buf;
    if (d->epilogue & (KMUX_EPILOGUE_ALONE | KMUX_EPILOGUE_WITH_AUX))
        return snprintf(buf, size,
                        "kmux's auxiliary and backward epilogues (epilogue 0x%x) are not mapped "
                        "to hipBLASLt's: kmux's own kernel runs them",
                        d->epilogue),
               buf;
    if (d->epilogue & KMUX_EPILOGUE_BIAS) {
        if (!row)
            return snprintf(buf, size,
                            "a column-major bias runs along D's columns, which hipBLASLt's BIAS "
                            "epilogue (one value per row) cannot add"),
                   buf;
        if (d->bias_type != KMUX_F32 && d->bias_type != KMUX_F16 && d->bias_type != KMUX_BF16)
            return snprintf(buf, size, "hipBLASLt takes an f32, f16 or bf16 bias, not %s",
                            kmux_dtype_desc_of(d->bias_type).name),
                   buf;
    }
    const int64_t sizes[] = {d->m, d->n, d->k, d->batch_count};
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++)
        if (sizes[i] > INT32_MAX)
            return snprintf(buf, size,
                            "a size (%lld) exceeds what hipBLASLt's kernels index (32 bits)",
                            (long long)sizes[i]),
                   buf;
    return NULL;
}

static int compute_of(const kmux_matmul_desc *d, kmux_compute_type *effective) {
    *effective = d->compute_type;
    if (d->compute_type == KMUX_COMPUTE_I32) return KMUX_HIPBLAS_COMPUTE_32I;
    if (d->compute_type == KMUX_COMPUTE_F32_FAST_TF32) return KMUX_HIPBLAS_COMPUTE_32F_FAST_TF32;
    if (d->compute_type == KMUX_COMPUTE_F32_FAST_BF16) return KMUX_HIPBLAS_COMPUTE_32F_FAST_16BF;
    *effective = KMUX_COMPUTE_F32;
    return KMUX_HIPBLAS_COMPUTE_32F;
}

static unsigned epilogue_of(unsigned e) {
    const int bias = (e & KMUX_EPILOGUE_BIAS) != 0;
    if (e & KMUX_EPILOGUE_RELU)
        return bias ? KMUX_HIPBLASLT_EPILOGUE_RELU_BIAS : KMUX_HIPBLASLT_EPILOGUE_RELU;
    if (e & KMUX_EPILOGUE_GELU)
        return bias ? KMUX_HIPBLASLT_EPILOGUE_GELU_BIAS : KMUX_HIPBLASLT_EPILOGUE_GELU;
    return bias ? KMUX_HIPBLASLT_EPILOGUE_BIAS : KMUX_HIPBLASLT_EPILOGUE_DEFAULT;
}

/* A column-major layout of `type`, rows x cols, leading dimension ld, with the plan's batch. */
static int make_layout(const kmux_hip_blaslt *b, void **l, int type, int64_t rows, int64_t cols,
                       int64_t ld, int32_t batch, int64_t stride) {
    int e = b->layout_create(l, type, (uint64_t)rows, (uint64_t)cols, ld);
    if (e == KMUX_HIPBLAS_SUCCESS)
        e = b->layout_set(*l, KMUX_HIPBLASLT_LAYOUT_BATCH_COUNT, &batch, sizeof batch);
    if (e == KMUX_HIPBLAS_SUCCESS)
        e = b->layout_set(*l, KMUX_HIPBLASLT_LAYOUT_STRIDED_BATCH_OFFSET, &stride, sizeof stride);
    return e;
}

void kmux_hip_blaslt_plan_release(kmux_hip_state *st, kmux_hip_blaslt_plan *bp) {
    const kmux_hip_blaslt *b = &st->blaslt;
    if (bp->desc) (void)b->desc_destroy(bp->desc);
    void *ls[3] = {bp->a, bp->b, bp->c};
    for (int i = 0; i < 3; i++)
        if (ls[i]) (void)b->layout_destroy(ls[i]);
    memset(bp, 0, sizeof *bp);
}

kmux_status kmux_hip_blaslt_plan_build(kmux_hip_state *st, int device, const kmux_matmul_desc *d,
                                       size_t cap, kmux_hip_blaslt_plan *bp, char *why,
                                       size_t size) {
    memset(bp, 0, sizeof *bp);
    if (!blaslt_open(st))
        return snprintf(why, size, "%s", st->blaslt.base.why), KMUX_ERR_UNSUPPORTED;
    const kmux_hip_blaslt *b = &st->blaslt;
    kmux_hip_guard g;
    kmux_status ks = kmux_hip_enter(st, device, "kmux_matmul_plan_create", &g);
    if (ks != KMUX_OK) return ks;
    void *h = handle_of(st, device, why, size);
    if (!h) {
        kmux_hip_leave(st, &g);
        return KMUX_ERR_UNSUPPORTED;
    }
    const int row = d->order == KMUX_ROW_MAJOR;
    /* the column-major problem hipBLASLt sees: A' op_a' B' op_b', m' x n' */
    const int ta = (row ? d->transb : d->transa) == KMUX_TRANS;
    const int tb = (row ? d->transa : d->transb) == KMUX_TRANS;
    const int64_t m = row ? d->n : d->m, n = row ? d->m : d->n, k = d->k;
    const int64_t lda = row ? d->ldb : d->lda, ldb = row ? d->lda : d->ldb;
    const int64_t sa = row ? d->stride_b : d->stride_a, sb = row ? d->stride_a : d->stride_b;
    const kmux_dtype at = row ? d->b_type : d->a_type, bt = row ? d->a_type : d->b_type;
    const int32_t batch = (int32_t)d->batch_count;
    bp->fp8 = kmux_dtype_is_fp8(d->a_type);
    const int compute = compute_of(d, &bp->effective);
    const int scale = compute == KMUX_HIPBLAS_COMPUTE_32I ? KMUX_HIP_R_32I : KMUX_HIP_R_32F;
    const int32_t opa = ta ? KMUX_HIPBLAS_OP_T : KMUX_HIPBLAS_OP_N;
    const int32_t opb = tb ? KMUX_HIPBLAS_OP_T : KMUX_HIPBLAS_OP_N;
    const uint32_t epi = epilogue_of(d->epilogue);
    const char *step = "hipblasLtMatmulDescCreate";
    int e = b->desc_create(&bp->desc, compute, scale);
    if (e == KMUX_HIPBLAS_SUCCESS)
        step = "hipblasLtMatmulDescSetAttribute",
        e = b->desc_set(bp->desc, KMUX_HIPBLASLT_DESC_TRANSA, &opa, sizeof opa);
    if (e == KMUX_HIPBLAS_SUCCESS)
        e = b->desc_set(bp->desc, KMUX_HIPBLASLT_DESC_TRANSB, &opb, sizeof opb);
    if (e == KMUX_HIPBLAS_SUCCESS)
        e = b->desc_set(bp->desc, KMUX_HIPBLASLT_DESC_EPILOGUE, &epi, sizeof epi);
    if (e == KMUX_HIPBLAS_SUCCESS && (d->epilogue & KMUX_EPILOGUE_BIAS)) {
        const int32_t bias_type = hip_type(d->bias_type);
        e = b->desc_set(bp->desc, KMUX_HIPBLASLT_DESC_BIAS_DATA_TYPE, &bias_type, sizeof bias_type);
    }
    if (e == KMUX_HIPBLAS_SUCCESS)
        step = "hipblasLtMatrixLayoutCreate",
        e = make_layout(b, &bp->a, hip_type(at), ta ? k : m, ta ? m : k, lda, batch, sa);
    if (e == KMUX_HIPBLAS_SUCCESS)
        e = make_layout(b, &bp->b, hip_type(bt), tb ? n : k, tb ? k : n, ldb, batch, sb);
    if (e == KMUX_HIPBLAS_SUCCESS)
        e = make_layout(b, &bp->c, hip_type(d->c_type), m, n, d->ldc, batch, d->stride_c);
    void *pref = NULL;
    if (e == KMUX_HIPBLAS_SUCCESS)
        step = "hipblasLtMatmulPreferenceCreate", e = b->pref_create(&pref);
    const uint64_t ws = cap;
    if (e == KMUX_HIPBLAS_SUCCESS)
        e = b->pref_set(pref, KMUX_HIPBLASLT_PREF_MAX_WORKSPACE_BYTES, &ws, sizeof ws);
    kmux_hipblaslt_heuristic found[KMUX_HIP_BLASLT_MAX_ALGOS];
    int returned = 0;
    if (e == KMUX_HIPBLAS_SUCCESS)
        step = "hipblasLtMatmulAlgoGetHeuristic",
        e = b->heuristic(h, bp->desc, bp->a, bp->b, bp->c, bp->c, pref, KMUX_HIP_BLASLT_MAX_ALGOS,
                         found, &returned);
    if (pref) (void)b->pref_destroy(pref);
    kmux_hip_leave(st, &g);
    for (int i = 0; e == KMUX_HIPBLAS_SUCCESS && i < returned && i < KMUX_HIP_BLASLT_MAX_ALGOS;
         i++) {
        if (found[i].state != KMUX_HIPBLAS_SUCCESS || found[i].workspace_size > cap) continue;
        const int j = bp->n_algos++;
        bp->algos[j] = found[i];
        snprintf(bp->names[j], sizeof bp->names[j], "hipblaslt:algo=%d,ws=%zu", i,
                 found[i].workspace_size);
    }
    if (e != KMUX_HIPBLAS_SUCCESS || bp->n_algos == 0) {
        if (e != KMUX_HIPBLAS_SUCCESS)
            snprintf(why, size, "%s: %s: %s (%d)", st->blaslt.base.version, step,
                     kmux_hipblas_status_name(e), e);
        else
            snprintf(why, size,
                     "%s offered no algorithm for the problem within a workspace of %zu bytes "
                     "(%d returned)",
                     st->blaslt.base.version, cap, returned);
        kmux_hip_blaslt_plan_release(st, bp);
        return KMUX_ERR_UNSUPPORTED;
    }
    return KMUX_OK;
}

const char *kmux_hip_blaslt_call_refusal(const kmux_hip_blaslt_plan *bp,
                                         const kmux_matmul_args *a) {
    if (a->amax_d) return "hipBLASLt: amax_d is not asked of hipBLASLt";
    if (!bp->fp8 && (a->a_scale || a->b_scale || a->d_scale))
        return "hipBLASLt: a_scale, b_scale and d_scale apply to fp8 inputs only";
    return NULL;
}

kmux_status kmux_hip_blaslt_run(kmux_hip_state *st, kmux_hip_stream_t *s,
                                const kmux_hip_blaslt_plan *bp, int algo, const kmux_matmul_desc *d,
                                const kmux_matmul_args *a) {
    const kmux_hip_blaslt *b = &st->blaslt;
    kmux_hip_guard g;
    kmux_status ks = kmux_hip_enter(st, s->device, "kmux_matmul_execute", &g);
    if (ks != KMUX_OK) return ks;
    char why[256];
    void *h = handle_of(st, s->device, why, sizeof why);
    void *ws = NULL;
    const size_t ws_bytes = bp->algos[algo].workspace_size;
    if (h)
        ks = kmux_hip_stream_workspace(st, s, ws_bytes, a->workspace, a->workspace_bytes,
                                       "kmux_matmul_execute", &ws);
    if (!h || ks != KMUX_OK) {
        kmux_hip_leave(st, &g);
        return h ? ks
                 : st->host->set_error(KMUX_ERR_DEVICE, "hip: kmux_matmul_execute on hip:%d: %s",
                                       s->device, why);
    }
    const int row = d->order == KMUX_ROW_MAJOR;
    /* the descriptor is the plan's, shared by every stream that runs it, and the call's pointers
     * (bias, scales) are attributes of it: they are set and the call queued under one lock, so
     * that two threads running one plan never mix their pointers */
    pthread_mutex_lock(&st->blaslt.base.lock);
    int e = KMUX_HIPBLAS_SUCCESS;
    const char *step = "hipblasLtMatmulDescSetAttribute";
    if (d->epilogue & KMUX_EPILOGUE_BIAS)
        e = b->desc_set(bp->desc, KMUX_HIPBLASLT_DESC_BIAS_POINTER, &a->bias, sizeof a->bias);
    if (bp->fp8) {
        const void *sc[3] = {row ? a->b_scale : a->a_scale, row ? a->a_scale : a->b_scale,
                             a->d_scale};
        const int attr[3] = {KMUX_HIPBLASLT_DESC_A_SCALE_POINTER,
                             KMUX_HIPBLASLT_DESC_B_SCALE_POINTER,
                             KMUX_HIPBLASLT_DESC_D_SCALE_POINTER};
        for (int i = 0; i < 3 && e == KMUX_HIPBLAS_SUCCESS; i++)
            e = b->desc_set(bp->desc, attr[i], &sc[i], sizeof sc[i]);
    }
    if (e == KMUX_HIPBLAS_SUCCESS)
        step = "hipblasLtMatmul",
        e = b->matmul(h, bp->desc, a->alpha, row ? a->B : a->A, bp->a, row ? a->A : a->B, bp->b,
                      a->beta, a->C, bp->c, a->C, bp->c, &bp->algos[algo].algo, ws, ws_bytes,
                      s->stream);
    pthread_mutex_unlock(&st->blaslt.base.lock);
    kmux_hip_leave(st, &g);
    if (e != KMUX_HIPBLAS_SUCCESS)
        return st->host->set_error(
            e == KMUX_HIPBLAS_NOT_SUPPORTED ? KMUX_ERR_UNSUPPORTED : KMUX_ERR_DEVICE,
            "hip: kmux_matmul_execute on hip:%d: %s %s (%s): %s (%d)", s->device,
            st->blaslt.base.version, step, bp->names[algo], kmux_hipblas_status_name(e), e);
    return KMUX_OK;
}
