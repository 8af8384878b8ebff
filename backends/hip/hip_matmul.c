/*
 * hip_matmul.c - matmul plans of the HIP backend: hipBLASLt (hip_blaslt.c) and rocBLAS
 * (hip_rocblas.h) when the host has them, and kmux's own GEMM kernel (hip_gemm.c). rocBLAS's
 * implementation is "rocblas_gemm_ex" (rocblas_gemm_strided_batched_ex, standard algorithm).
 *
 * What rocblas_gemm_ex runs: f64 (compute f64), f32 (strict compute f32), f16 and bf16 inputs with
 * f32 accumulation into f16/bf16 or f32; no epilogue, no a/b/d scales or amax (those need a finish
 * kernel); sizes and leading dimensions within rocBLAS's 32-bit rocblas_int. Everything else is
 * refused with the reason (KMUX_ERR_UNSUPPORTED), as is every plan on a host without rocBLAS.
 * Row-major problems run as the column-major transpose (C^T = op(B)^T op(A)^T): A and B swap.
 * One rocBLAS handle per kmux stream, created on its first matmul and bound to the stream.
 * prefs.require_deterministic: rocBLAS runs with atomics not allowed (rocblas_set_atomics_mode),
 * else with its default (atomics allowed: faster for some shapes, not bitwise reproducible).
 *
 * Implementations of a plan, in order: hipBLASLt's heuristic candidates ("hipblaslt:algo=<i>",
 * its fastest estimate first: the default where hipBLASLt runs the problem, as cuBLASLt is on
 * CUDA and as PyTorch on ROCm prefers it), rocblas_gemm_ex where rocBLAS runs the description,
 * then kmux's own GEMM kernel (every row of the type table in the device's fp8 family, every
 * epilogue, scale and amax: the default for everything the libraries refuse). Tuning (KMUX_TUNE,
 * the device "auto") times them all on the device and starts the plan at the fastest.
 * KMUX_HIP_IMPL (hip_ops.c: "hipblaslt", "rocblas", "own", comma-separated, with MIOpen's words
 * for convolution) keeps only the named libraries' implementations: a problem none of them runs
 * is refused with their reasons (conformance runs each library alone this way).
 * A call that the current implementation cannot serve (amax_d, or scales on non-fp8 inputs, on a
 * library implementation) runs on kmux's own kernel, traced at KMUX_VERBOSE=2, also when
 * KMUX_HIP_IMPL left it out of the list (what a call passes is not known at plan creation); where
 * the own kernel cannot run the plan the call is refused (KMUX_ERR_UNSUPPORTED) before anything
 * is queued.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <limits.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dispatch/common/kmux_dtype_desc.h"
#include "hip_backend.h"
#include "kmux_gpu_gemm_params.h"
#include "kmux_sys_alloc.h"

enum { IMPL_OWN = 0, IMPL_ROCBLAS = 1, IMPL_BLASLT = 2 };
enum { FORCE_BLASLT = 1, FORCE_ROCBLAS = 2, FORCE_OWN = 4 };

typedef struct hip_matmul_impl {
    int kind; /* IMPL_* */
    int algo; /* IMPL_BLASLT: the candidate's index in blaslt.algos */
} hip_matmul_impl;

typedef struct hip_matmul_plan {
    int device;
    int n_impls;
    hip_matmul_impl impls[KMUX_HIP_BLASLT_MAX_ALGOS + 2]; /* hipBLASLt's, rocBLAS, own, in order */
    int own; /* index of the own kernel's implementation, -1 when none */
    int sub; /* 1: the own kernel runs d (listed or left out by KMUX_HIP_IMPL): calls a
                library implementation cannot serve run on it */
    kmux_hip_blaslt_plan blaslt;
    int tile; /* of the own kernel */
    char own_name[128];
    int deterministic; /* prefs->require_deterministic: rocBLAS runs without atomics */
    kmux_matmul_desc d;
    int at, ct, comp; /* rocBLAS datatypes of A and B, C and D, the computation */
} hip_matmul_plan;

static int rb_type(kmux_dtype t) {
    switch (t) {
    case KMUX_F16:
        return KMUX_ROCBLAS_F16;
    case KMUX_F32:
        return KMUX_ROCBLAS_F32;
    case KMUX_F64:
        return KMUX_ROCBLAS_F64;
    case KMUX_BF16:
        return KMUX_ROCBLAS_BF16;
    default:
        return 0;
    }
}

/* Resolves rocBLAS's functions from lib into ctx (the kmux_hip_rocblas); NULL when usable. */
static const char *check_rocblas(void *lib, void *ctx) {
    kmux_hip_rocblas *rb = ctx;
    *(void **)&rb->create_handle = dlsym(lib, "rocblas_create_handle");
    *(void **)&rb->destroy_handle = dlsym(lib, "rocblas_destroy_handle");
    *(void **)&rb->set_stream = dlsym(lib, "rocblas_set_stream");
    *(void **)&rb->get_version_string = dlsym(lib, "rocblas_get_version_string");
    *(void **)&rb->set_atomics_mode = dlsym(lib, "rocblas_set_atomics_mode");
    *(void **)&rb->gemm_strided_batched_ex = dlsym(lib, "rocblas_gemm_strided_batched_ex");
    if (rb->create_handle && rb->destroy_handle && rb->set_stream && rb->gemm_strided_batched_ex)
        return NULL;
    rb->create_handle = NULL;
    rb->destroy_handle = NULL;
    rb->set_stream = NULL;
    rb->get_version_string = NULL;
    rb->set_atomics_mode = NULL;
    rb->gemm_strided_batched_ex = NULL;
    return "a rocblas_* function is missing";
}

/* Opens rocBLAS once per backend state (kmux_hip_lib_open: $KMUX_ROCBLAS_LIBRARY alone when set,
 * else the sonames in the runtime's folder, on the loader path, in $ROCM_PATH/lib, in
 * /opt/rocm/lib); 1 when it is there. Sonames: librocblas.so.5 (ROCm 7.x, rocBLAS 5),
 * librocblas.so.4 (ROCm 6.x, rocBLAS 4), librocblas.so.3 (ROCm 5.7), librocblas.so.0 (ROCm <= 5.6
 * and Debian's rocBLAS 2). */
static const char *rocblas_opened(kmux_hip_state *st) {
    kmux_hip_rocblas *rb = &st->rocblas;
    char v[48];
    if (!rb->get_version_string || rb->get_version_string(v, sizeof v) != KMUX_ROCBLAS_SUCCESS)
        snprintf(v, sizeof v, "?");
    snprintf(rb->base.version, sizeof rb->base.version, "rocBLAS %s", v);
    return NULL;
}

static int rocblas_open(kmux_hip_state *st) {
    static const char *const sonames[] = {"librocblas.so.5", "librocblas.so.4", "librocblas.so.3",
                                          "librocblas.so.0", NULL};
    const kmux_hip_lib_search s = {"rocblas", "KMUX_ROCBLAS_LIBRARY", sonames, check_rocblas,
                                   &st->rocblas};
    return kmux_hip_lib_once(st, &st->rocblas.base, &s, "rocBLAS", rocblas_opened);
}

int kmux_hip_rocblas_available(kmux_hip_state *st) {
    return rocblas_open(st);
}

void kmux_hip_rocblas_init(kmux_hip_state *st) {
    pthread_mutex_init(&st->rocblas.base.lock, NULL);
}

void kmux_hip_rocblas_fini(kmux_hip_state *st) {
    pthread_mutex_destroy(&st->rocblas.base.lock);
}

void kmux_hip_rocblas_stream_release(kmux_hip_state *st, kmux_hip_stream_t *s) {
    if (s->rocblas && st->rocblas.destroy_handle) (void)st->rocblas.destroy_handle(s->rocblas);
    s->rocblas = NULL;
}

/* Why rocblas_gemm_ex cannot run d, or NULL when it can (types, epilogue, sizes). */
static const char *not_runnable(const kmux_matmul_desc *d, char *buf, size_t size) {
    if (d->epilogue != KMUX_EPILOGUE_NONE)
        return snprintf(buf, size, "rocblas_gemm_ex runs no epilogue (epilogue 0x%x)", d->epilogue),
               buf;
    int ok = d->a_type == d->b_type && rb_type(d->a_type) && rb_type(d->c_type);
    if (ok && d->compute_type == KMUX_COMPUTE_F64)
        ok = d->a_type == KMUX_F64 && d->c_type == KMUX_F64;
    else if (ok && d->compute_type == KMUX_COMPUTE_F32)
        ok = d->a_type != KMUX_F64 && (d->c_type == d->a_type || d->c_type == KMUX_F32);
    else
        ok = 0;
    if (!ok)
        return snprintf(buf, size,
                        "rocblas_gemm_ex does not run %s x %s -> %s with compute %d (it runs f64, "
                        "strict f32, and f16/bf16 with f32 accumulation)",
                        kmux_dtype_desc_of(d->a_type).name, kmux_dtype_desc_of(d->b_type).name,
                        kmux_dtype_desc_of(d->c_type).name, (int)d->compute_type),
               buf;
    const int64_t sizes[] = {d->m, d->n, d->k, d->lda, d->ldb, d->ldc, d->batch_count};
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++)
        if (sizes[i] > INT32_MAX)
            return snprintf(buf, size,
                            "a size or leading dimension (%lld) exceeds rocBLAS's 32-bit "
                            "rocblas_int",
                            (long long)sizes[i]),
                   buf;
    return NULL;
}

kmux_status kmux_hip_matmul_plan_create(void *state, int device, const kmux_matmul_desc *desc,
                                        const kmux_plan_prefs *prefs, void **plan,
                                        int *impl_count) {
    kmux_hip_state *st = state;
    const kmux_hip_device *dv = &st->devices[device];
    const int det =
        prefs &&
        prefs->struct_size >= offsetof(kmux_plan_prefs, require_deterministic) + sizeof(int) &&
        prefs->require_deterministic;
    static const char *const libs[] = {"hipblaslt", "rocblas", "own"};
    char why_own[256], why_rb[256], why_lt[512], why_force[160];
    const int forced = kmux_hip_impl_forced(libs, 3, why_force, sizeof why_force);
    if (forced < 0)
        return st->host->set_error(KMUX_ERR_INVALID_ARGUMENT,
                                   "hip: kmux_matmul_plan_create on hip:%d: %s", device, why_force);
    const char *no_own = kmux_hip_gemm_refusal(desc, dv->arch, why_own, sizeof why_own);
    const int sub = !no_own;
    const char *no_rb = not_runnable(desc, why_rb, sizeof why_rb);
    const char *no_lt = kmux_hip_blaslt_refusal(desc, dv->arch, det, why_lt, sizeof why_lt);
    if (!(forced & FORCE_OWN) && !no_own) no_own = why_force;
    if (!(forced & FORCE_ROCBLAS) && !no_rb) no_rb = why_force;
    if (!(forced & FORCE_BLASLT) && !no_lt) no_lt = why_force;
    /* alpha and beta in device memory: the own kernel reads them there; the libraries' pointer
     * modes are not mapped */
    static const char dev_ptr[] = "alpha and beta in device memory (pointer_mode) are not mapped "
                                  "to the library's pointer mode";
    if (desc->pointer_mode == KMUX_POINTER_MODE_DEVICE) {
        if (!no_rb) no_rb = dev_ptr;
        if (!no_lt) no_lt = dev_ptr;
    }
    if (!no_rb && !rocblas_open(st)) no_rb = st->rocblas.base.why;
    if (!no_rb && det && !st->rocblas.set_atomics_mode)
        no_rb = "require_deterministic: this rocBLAS has no rocblas_set_atomics_mode";
    hip_matmul_plan *p = kmux_sys_calloc(1, sizeof *p);
    if (!p) return st->host->set_error(KMUX_ERR_OUT_OF_MEMORY, "hip: matmul plan: out of memory");
    if (!no_lt) {
        const size_t cap = prefs && prefs->max_workspace_bytes != SIZE_MAX
                               ? prefs->max_workspace_bytes
                               : KMUX_HIP_BLASLT_DEFAULT_WORKSPACE;
        kmux_status ks =
            kmux_hip_blaslt_plan_build(st, device, desc, cap, &p->blaslt, why_lt, sizeof why_lt);
        if (ks != KMUX_OK && ks != KMUX_ERR_UNSUPPORTED) {
            free(p);
            return ks;
        }
        if (ks != KMUX_OK) no_lt = why_lt;
    }
    if (no_own && no_rb && no_lt) {
        free(p);
        return st->host->set_error(KMUX_ERR_UNSUPPORTED,
                                   "hip: kmux_matmul_plan_create on hip:%d (%s): %s; "
                                   "rocblas_gemm_ex: %s; hipBLASLt: %s",
                                   device, dv->arch, no_own, no_rb, no_lt);
    }
    p->device = device;
    p->deterministic = det;
    p->d = *desc;
    p->own = -1;
    p->sub = sub;
    if (sub) p->tile = kmux_hip_gemm_tile(desc, p->own_name, sizeof p->own_name);
    /* AMD's libraries first where they run the problem (as cuBLASLt is first on cuda:N): the
     * default a user and kmux-bench get is the vendor's; the own kernel follows (KMUX_TUNE or
     * the device "auto" time them all) and serves what the libraries refuse */
    for (int i = 0; !no_lt && i < p->blaslt.n_algos; i++)
        p->impls[p->n_impls++] = (hip_matmul_impl){IMPL_BLASLT, i};
    if (!no_rb) p->impls[p->n_impls++] = (hip_matmul_impl){IMPL_ROCBLAS, 0};
    if (!no_own) {
        p->own = p->n_impls;
        p->impls[p->n_impls++] = (hip_matmul_impl){IMPL_OWN, 0};
    }
    if (st->host->verbose >= 2)
        st->host->trace(2, "plan,hip:%d,matmul,impls=%d,hipblaslt=%s,rocblas=%s,own=%s", device,
                        p->n_impls, no_lt ? no_lt : "yes", no_rb ? no_rb : "yes",
                        no_own ? no_own : "yes");
    p->at = rb_type(desc->a_type);
    p->ct = rb_type(desc->c_type);
    p->comp = desc->compute_type == KMUX_COMPUTE_F64 ? KMUX_ROCBLAS_F64 : KMUX_ROCBLAS_F32;
    *plan = p;
    *impl_count = p->n_impls;
    return KMUX_OK;
}

static kmux_status run_rocblas(kmux_hip_state *st, const hip_matmul_plan *p, kmux_hip_stream_t *s,
                               const kmux_matmul_args *a) {
    const kmux_matmul_desc *d = &p->d;
    kmux_hip_guard g;
    kmux_status ks = kmux_hip_enter(st, s->device, "kmux_matmul_execute", &g);
    if (ks != KMUX_OK) return ks;
    const kmux_hip_rocblas *rb = &st->rocblas;
    int e = KMUX_ROCBLAS_SUCCESS;
    if (!s->rocblas) {
        e = rb->create_handle(&s->rocblas);
        if (e == KMUX_ROCBLAS_SUCCESS) e = rb->set_stream(s->rocblas, s->stream);
        if (e != KMUX_ROCBLAS_SUCCESS) kmux_hip_rocblas_stream_release(st, s);
    }
    /* per plan: the handle belongs to the stream, which may run plans of both kinds */
    if (e == KMUX_ROCBLAS_SUCCESS && rb->set_atomics_mode)
        e = rb->set_atomics_mode(s->rocblas, p->deterministic ? KMUX_ROCBLAS_ATOMICS_NOT_ALLOWED
                                                              : KMUX_ROCBLAS_ATOMICS_ALLOWED);
    if (e == KMUX_ROCBLAS_SUCCESS) {
        int ta = d->transa == KMUX_TRANS ? KMUX_ROCBLAS_OP_T : KMUX_ROCBLAS_OP_N;
        int tb = d->transb == KMUX_TRANS ? KMUX_ROCBLAS_OP_T : KMUX_ROCBLAS_OP_N;
        if (d->order == KMUX_COL_MAJOR)
            e = rb->gemm_strided_batched_ex(
                s->rocblas, ta, tb, (int32_t)d->m, (int32_t)d->n, (int32_t)d->k, a->alpha, a->A,
                p->at, (int32_t)d->lda, d->stride_a, a->B, p->at, (int32_t)d->ldb, d->stride_b,
                a->beta, a->C, p->ct, (int32_t)d->ldc, d->stride_c, a->C, p->ct, (int32_t)d->ldc,
                d->stride_c, (int32_t)d->batch_count, p->comp, KMUX_ROCBLAS_ALGO_STANDARD, 0, 0);
        else /* row-major C = column-major C^T = op(B)^T op(A)^T */
            e = rb->gemm_strided_batched_ex(
                s->rocblas, tb, ta, (int32_t)d->n, (int32_t)d->m, (int32_t)d->k, a->alpha, a->B,
                p->at, (int32_t)d->ldb, d->stride_b, a->A, p->at, (int32_t)d->lda, d->stride_a,
                a->beta, a->C, p->ct, (int32_t)d->ldc, d->stride_c, a->C, p->ct, (int32_t)d->ldc,
                d->stride_c, (int32_t)d->batch_count, p->comp, KMUX_ROCBLAS_ALGO_STANDARD, 0, 0);
    }
    kmux_hip_leave(st, &g);
    if (e != KMUX_ROCBLAS_SUCCESS)
        return st->host->set_error(e == KMUX_ROCBLAS_NOT_IMPLEMENTED ||
                                           e == KMUX_ROCBLAS_INVALID_SIZE
                                       ? KMUX_ERR_UNSUPPORTED
                                       : KMUX_ERR_DEVICE,
                                   "hip: kmux_matmul_execute on hip:%d: %s: %s (%d)", s->device,
                                   rb->base.version, kmux_rocblas_status_name(e), e);
    return KMUX_OK;
}

/* Why implementation q cannot serve the call's pointers, or NULL. */
static const char *call_refusal(const hip_matmul_plan *p, const hip_matmul_impl *q,
                                const kmux_matmul_args *a) {
    if (q->kind == IMPL_BLASLT) return kmux_hip_blaslt_call_refusal(&p->blaslt, a);
    if (q->kind == IMPL_ROCBLAS && (a->a_scale || a->b_scale || a->d_scale || a->amax_d))
        return "rocblas_gemm_ex takes no a_scale, b_scale, d_scale or amax_d";
    return NULL;
}

kmux_status kmux_hip_matmul_execute(void *state, const void *plan, int impl, void *stream,
                                    const kmux_matmul_args *a) {
    kmux_hip_state *st = state;
    const hip_matmul_plan *p = plan;
    kmux_hip_stream_t *s = stream;
    if (impl < 0 || impl >= p->n_impls) impl = 0;
    const char *no = call_refusal(p, &p->impls[impl], a);
    if (no) {
        if (!p->sub)
            return st->host->set_error(KMUX_ERR_UNSUPPORTED,
                                       "hip: kmux_matmul_execute on hip:%d: %s, and kmux's own "
                                       "kernel cannot run the plan",
                                       s->device, no);
        if (st->host->verbose >= 2)
            st->host->trace(2, "substitute,hip:%d,matmul,impl=%d,%s,%s", s->device, impl,
                            p->own_name, no);
        return kmux_hip_gemm_run(st, s, &p->d, a, p->tile);
    }
    const hip_matmul_impl *q = &p->impls[impl];
    if (q->kind == IMPL_OWN) return kmux_hip_gemm_run(st, s, &p->d, a, p->tile);
    if (q->kind == IMPL_BLASLT) return kmux_hip_blaslt_run(st, s, &p->blaslt, q->algo, &p->d, a);
    return run_rocblas(st, p, s, a);
}

kmux_status kmux_hip_matmul_plan_info(void *state, const void *plan, int impl,
                                      kmux_plan_info *info) {
    (void)state;
    const hip_matmul_plan *p = plan;
    if (impl < 0 || impl >= p->n_impls) impl = 0;
    info->effective_compute = p->d.compute_type;
    info->workspace_bytes = 0;
    const hip_matmul_impl *q = &p->impls[impl];
    if (q->kind == IMPL_BLASLT) {
        info->impl = p->blaslt.names[q->algo];
        info->effective_compute = p->blaslt.effective;
        info->workspace_bytes = p->blaslt.algos[q->algo].workspace_size;
        info->deterministic = 0; /* hipBLASLt promises no bitwise reproducibility */
        return KMUX_OK;
    }
    if (q->kind == IMPL_OWN) {
        /* strict accumulation in f64 / f32 / i32 in a fixed order, amax by atomicMax (order
         * independent): bitwise reproducible */
        info->impl = p->own_name;
        info->effective_compute = kmux_gpu_own_effective_compute(p->d.compute_type);
        info->deterministic = 1;
        return KMUX_OK;
    }
    info->impl = "rocblas_gemm_ex";
    /* rocBLAS's default atomics mode lets some kernels reduce with atomics: bitwise reproducible
     * only when the plan asked for it (atomics not allowed) */
    info->deterministic = p->deterministic;
    return KMUX_OK;
}

void kmux_hip_matmul_plan_destroy(void *state, void *plan) {
    hip_matmul_plan *p = plan;
    if (p && p->blaslt.desc) kmux_hip_blaslt_plan_release(state, &p->blaslt);
    free(plan);
}
