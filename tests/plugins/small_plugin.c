/*
 * small_plugin.c - a usable test plugin (device "test:small", host memory) with small capability
 * limits, for the core's capability checks (tests/test_loader.c):
 *   matmul: max_dim 1000, max_batch 4, max_ld 1000, max_elements 100000, ptr_align 64, only the
 *           BIAS epilogue, f32 (strict) natively and bf16 -> bf16 only by emulation;
 *   conv:   forward only, max_dim 1000, NCHW only, no asymmetric padding, no groups, f32;
 *   eltwise (the op families' worked example, docs/adding-ops.md): ReLU and SiLU, forward only,
 *           f32, at most 100000 elements, on kmux's CPU kernels.
 * Its plans are naive loops with TWO implementations (same results), so that the core's
 * implementation index is visible. It fails loudly (KMUX_ERR_INTERNAL) if the core ever passes
 * what the core promises to keep from backends: a problem beyond these limits, an empty or
 * k == 0 problem, alpha == 0, or an unaligned pointer.
 */
#define _POSIX_C_SOURCE 200809L
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "backends/cpu_common/cpu_runtime.h"
#include "dispatch/common/cpu_finish.h"
#include "dispatch/common/kmux_type_rules.h"

typedef struct small_state {
    kmux_cpu_state_header hdr;
} small_state;

static kmux_status s_init(const kmux_backend_host *host, void **state) {
    small_state *st = calloc(1, sizeof *st);
    if (!st) return host->set_error(KMUX_ERR_OUT_OF_MEMORY, "backend small: out of memory");
    st->hdr.host = host;
    st->hdr.num_threads = 1;
    *state = st;
    return KMUX_OK;
}
static void s_fini(void *state) {
    free(state);
}
/* SMALL_POSER (libkmux-aaposer.so, built for test_loader): the same plugin under its own name,
 * with three devices whose ids pose as another backend's ("cpu:openblas"), are its own
 * ("aaposer:1") and repeat one ("aaposer:1" again). Only device 1 may be taken. */
#if defined(SMALL_POSER)
#define SMALL_NAME "aaposer"
#define SMALL_DEVICES 3
#else
#define SMALL_NAME "small"
#define SMALL_DEVICES 1
#endif

static kmux_status s_probe(void *state, int *count, char *reason, size_t size) {
    *count = SMALL_DEVICES;
    if (size) reason[0] = '\0';
    return KMUX_OK;
}
static const char *s_version(void *state) {
    return "small 1.0";
}
static kmux_status s_props(void *state, int device, kmux_device_props *props) {
    memset(props, 0, sizeof *props);
#if defined(SMALL_POSER)
    snprintf(props->id, sizeof props->id, "%s", device == 0 ? "cpu:openblas" : "aaposer:1");
#else
    snprintf(props->id, sizeof props->id, "test:small");
#endif
    snprintf(props->backend, sizeof props->backend, "small");
    snprintf(props->vendor, sizeof props->vendor, "kmux tests");
    snprintf(props->name, sizeof props->name, "small capability limits");
    props->is_host = 1;
    props->compute_units = 1;
    props->dtype_support[KMUX_F32] = 1;
    props->dtype_support[KMUX_BF16] = 1;
    return KMUX_OK;
}

/* Bit of the legal-table row (a, b, c, ct). */
static uint64_t row_bit(const kmux_type_combination *rows, int n, kmux_dtype a, kmux_dtype c,
                        kmux_compute_type ct) {
    for (int i = 0; i < n; i++)
        if (rows[i].a_type == a && rows[i].b_type == a && rows[i].c_type == c &&
            rows[i].compute_type == ct)
            return UINT64_C(1) << i;
    return 0;
}

static kmux_status s_caps(void *state, int device, kmux_device_caps *caps) {
    int n = 0;
    const kmux_type_combination *mm = kmux_rules_matmul_table(&n);
    kmux_op_caps *m = &caps->matmul;
    m->supported = 1;
    m->max_dim = 1000;
    m->max_batch = 4;
    m->max_ld = 1000;
    m->max_elements = 100000;
    m->ptr_align = 64;
    m->epilogues = KMUX_EPILOGUE_BIAS;
    m->type_rows = row_bit(mm, n, KMUX_F32, KMUX_F32, KMUX_COMPUTE_F32) |
                   row_bit(mm, n, KMUX_BF16, KMUX_BF16, KMUX_COMPUTE_F32);
    m->emulated_rows = row_bit(mm, n, KMUX_BF16, KMUX_BF16, KMUX_COMPUTE_F32);
    const kmux_type_combination *cv = kmux_rules_conv_table(&n);
    kmux_op_caps *c = &caps->conv2d[KMUX_CONV_FWD - 1];
    c->supported = 1;
    c->max_dim = 1000;
    c->layouts = 1u << KMUX_NCHW;
    c->type_rows = row_bit(cv, n, KMUX_F32, KMUX_F32, KMUX_COMPUTE_F32);
    /* ABI 2.3: an OCP-fp8 device (as NVIDIA sm_89+ or AMD gfx950) names OCP for FNUZ requests;
     * written only when the core's struct has the fields */
    if (caps->struct_size >=
        offsetof(kmux_device_caps, dtype_instead_note) + sizeof caps->dtype_instead_note) {
        caps->dtype_instead[KMUX_F8_E4M3_FNUZ] = KMUX_F8_E4M3;
        caps->dtype_instead[KMUX_F8_E5M2_FNUZ] = KMUX_F8_E5M2;
        caps->dtype_instead_note = "test device, OCP fp8 only";
    }
    /* ABI 2.6: an op family is one kmux_family_caps, written where the core's struct has it */
    if (caps->struct_size >= offsetof(kmux_device_caps, eltwise) + sizeof caps->eltwise) {
        caps->eltwise.algs =
            (UINT64_C(1) << KMUX_ELTWISE_RELU) | (UINT64_C(1) << KMUX_ELTWISE_SILU);
        caps->eltwise.dtypes = 1u << KMUX_F32;
        caps->eltwise.props = 1u << KMUX_PROP_FORWARD;
        caps->eltwise.max_elements = 100000;
    }
    return KMUX_OK;
}

static kmux_status broken(void *state, const char *what) {
    small_state *st = state;
    return st->hdr.host->set_error(KMUX_ERR_INTERNAL, "backend small: the core passed %s", what);
}

static kmux_status s_mm_create(void *state, int device, const kmux_matmul_desc *d,
                               const kmux_plan_prefs *prefs, void **plan, int *impl_count) {
    if (d->m < 1 || d->n < 1 || d->k < 1 || d->batch_count < 1)
        return broken(state, "an empty or k == 0 matmul");
    if (d->m > 1000 || d->n > 1000 || d->k > 1000 || d->batch_count > 4 || d->lda > 1000 ||
        d->ldb > 1000 || d->ldc > 1000 || (d->epilogue & ~(unsigned)KMUX_EPILOGUE_BIAS) ||
        d->compute_type != KMUX_COMPUTE_F32)
        return broken(state, "a matmul beyond its capabilities");
    kmux_matmul_desc *p = malloc(sizeof *p);
    if (!p) return KMUX_ERR_OUT_OF_MEMORY;
    *p = *d;
    *plan = p;
    *impl_count = 2;
    return KMUX_OK;
}

static double s_load(const void *p, kmux_dtype t, int64_t i) {
    if (t == KMUX_F32) return ((const float *)p)[i];
    uint32_t u = (uint32_t)((const uint16_t *)p)[i] << 16; /* bf16 */
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

static int64_t s_at(kmux_order o, int64_t r, int64_t c, int64_t ld) {
    return o == KMUX_ROW_MAJOR ? r * ld + c : r + c * ld;
}

static void sleep_us(long us) {
    struct timespec ts = {us / 1000000, (us % 1000000) * 1000};
    nanosleep(&ts, NULL);
}

/* KMUX_TEST_SMALL_DELAY_US="D0,D1": implementation i sleeps Di microseconds per call, so that
 * the tuner's choice is known (tests/test_tune.c); KMUX_TEST_SMALL_FIRST_US="F0,F1": Fi more on
 * its first call in the process (a one-time cost, as a first touch of a workspace). */
static void test_delay(int impl) {
    static _Atomic int seen[2];
    const char *e = getenv("KMUX_TEST_SMALL_DELAY_US"), *f = getenv("KMUX_TEST_SMALL_FIRST_US");
    long us[2] = {0, 0}, first[2] = {0, 0};
    if (f && sscanf(f, "%ld,%ld", &first[0], &first[1]) == 2 && !seen[impl & 1]++ &&
        first[impl & 1] > 0)
        sleep_us(first[impl & 1]);
    if (!e || sscanf(e, "%ld,%ld", &us[0], &us[1]) != 2 || us[impl & 1] <= 0) return;
    sleep_us(us[impl & 1]);
}

/* Naive product into a double accumulator, then the shared CPU finish. Implementation 1 sums
 * in reverse order (the same exact results for the small integers the tests use). */
static kmux_status s_mm_exec(void *state, const void *plan, int impl, void *stream,
                             const kmux_matmul_args *a) {
    const kmux_matmul_desc *d = plan;
    test_delay(impl);
    if (*(const float *)a->alpha == 0.0f) return broken(state, "alpha == 0");
    const void *ptrs[] = {a->A, a->B, a->C, a->bias};
    for (int i = 0; i < 4; i++)
        if ((uintptr_t)ptrs[i] % 64) return broken(state, "an unaligned pointer");
    double *acc = malloc((size_t)(d->m * d->n) * sizeof(double));
    if (!acc) return KMUX_ERR_OUT_OF_MEMORY;
    int64_t ld = d->order == KMUX_ROW_MAJOR ? d->n : d->m;
    size_t es = d->a_type == KMUX_F32 ? 4 : 2;
    kmux_cpu_acc ca = {acc, KMUX_F64, ld, 0};
    double amax = 0.0;
    for (int64_t b = 0; b < d->batch_count; b++) {
        const char *A = (const char *)a->A + (size_t)(b * d->stride_a) * es;
        const char *B = (const char *)a->B + (size_t)(b * d->stride_b) * es;
        for (int64_t i = 0; i < d->m; i++)
            for (int64_t j = 0; j < d->n; j++) {
                double s = 0.0;
                for (int64_t q = 0; q < d->k; q++) {
                    int64_t l = impl == 0 ? q : d->k - 1 - q;
                    int64_t ai = d->transa == KMUX_TRANS ? s_at(d->order, l, i, d->lda)
                                                         : s_at(d->order, i, l, d->lda);
                    int64_t bi = d->transb == KMUX_TRANS ? s_at(d->order, j, l, d->ldb)
                                                         : s_at(d->order, l, j, d->ldb);
                    s += s_load(A, d->a_type, ai) * s_load(B, d->b_type, bi);
                }
                acc[s_at(d->order, i, j, ld)] = s;
            }
        kmux_cpu_finish_batch(d, a, &ca, b, &amax);
    }
    free(acc);
    if (a->amax_d) *a->amax_d = (float)amax;
    return KMUX_OK;
}

static kmux_status s_mm_info(void *state, const void *plan, int impl, kmux_plan_info *info) {
    info->impl = impl == 0 ? "small:naive" : "small:naive-reversed";
    info->effective_compute = KMUX_COMPUTE_F64;
    info->workspace_bytes = 0;
    info->deterministic = 1;
    return KMUX_OK;
}

static void s_destroy(void *state, void *plan) {
    free(plan);
}

/* Convolution plans are never executed by the tests: creation proves the caps held. */
static kmux_status s_cv_create(void *state, int device, const kmux_conv2d_desc *d,
                               const kmux_plan_prefs *prefs, void **plan, int *impl_count) {
    if (d->direction != KMUX_CONV_FWD || d->layout != KMUX_NCHW || d->groups != 1 ||
        d->pad_top != d->pad_bottom || d->pad_left != d->pad_right || d->w > 1000 || d->h > 1000)
        return broken(state, "a convolution beyond its capabilities");
    kmux_conv2d_desc *p = malloc(sizeof *p);
    if (!p) return KMUX_ERR_OUT_OF_MEMORY;
    *p = *d;
    *plan = p;
    *impl_count = 1;
    return KMUX_OK;
}

static kmux_status s_cv_exec(void *state, const void *plan, int impl, void *stream,
                             const kmux_conv2d_args *a) {
    return broken(state, "a convolution to execute (the tests never run one)");
}

static kmux_status s_cv_info(void *state, const void *plan, int impl, kmux_plan_info *info) {
    info->impl = "small:conv";
    info->effective_compute = KMUX_COMPUTE_F32;
    info->deterministic = 1;
    return KMUX_OK;
}

static const kmux_matmul_ops small_matmul = {
    .plan_create = s_mm_create,
    .execute = s_mm_exec,
    .plan_info = s_mm_info,
    .plan_destroy = s_destroy,
};

static const kmux_conv2d_ops small_conv = {
    .plan_create = s_cv_create,
    .execute = s_cv_exec,
    .plan_info = s_cv_info,
    .plan_destroy = s_destroy,
};

/* The element-wise family: the shared CPU kernels behind a check that the core kept its promise
 * (only what the caps above declare, n >= 1). */
static kmux_status s_el_create(void *state, int device, const kmux_eltwise_desc *d,
                               const kmux_plan_prefs *prefs, void **plan, int *impl_count) {
    if ((d->alg != KMUX_ELTWISE_RELU && d->alg != KMUX_ELTWISE_SILU) || d->dtype != KMUX_F32 ||
        d->prop != KMUX_PROP_FORWARD || d->n < 1 || d->n > 100000)
        return broken(state, "an element-wise op beyond its caps");
    return kmux_cpu_eltwise_ops.plan_create(state, device, d, prefs, plan, impl_count);
}

static kmux_status s_el_exec(void *state, const void *plan, int impl, void *stream,
                             const kmux_eltwise_args *a) {
    if (!a->src || !a->dst) return broken(state, "a NULL element-wise operand");
    return kmux_cpu_eltwise_ops.execute(state, plan, impl, stream, a);
}

static kmux_status s_el_info(void *state, const void *plan, int impl, kmux_plan_info *info) {
    return kmux_cpu_kernels_info(info);
}

static void s_el_destroy(void *state, void *plan) {
    free(plan);
}

static const kmux_eltwise_ops small_eltwise_ops = {
    .plan_create = s_el_create,
    .execute = s_el_exec,
    .plan_info = s_el_info,
    .plan_destroy = s_el_destroy,
};

static const kmux_backend_ops small_ops = {
    .struct_size = sizeof(kmux_backend_ops),
    .abi_major = KMUX_BACKEND_ABI_MAJOR,
    .abi_minor = KMUX_BACKEND_ABI_MINOR,
    .name = SMALL_NAME,
    .init = s_init,
    .fini = s_fini,
    .probe = s_probe,
    .version = s_version,
    .device_props = s_props,
    .device_caps = s_caps,
    KMUX_CPU_RUNTIME_SLOTS,
    .matmul = &small_matmul,
    .conv2d = &small_conv,
    .eltwise = &small_eltwise_ops,
};

KMUX_BACKEND_EXPORT const kmux_backend_ops *kmux_backend_entry(void);
const kmux_backend_ops *kmux_backend_entry(void) {
    return &small_ops;
}
