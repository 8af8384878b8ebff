/*
 * hip_miopen.c - convolution on MIOpen (hip_miopen.h): the library's search, one plan-time
 * miopenHandle_t per device and one per kmux stream (miopenCreateWithStream, created on its first
 * MIOpen convolution), and the MIOpen half of a convolution plan.
 *
 * Descriptors: x, w and y as 4-D tensors in MIOpen's N, C, H, W order with the strides of kmux's
 * layout (NCHW/KCRS or NHWC/KRSC: MIOpen reads the layout from the strides), the convolution as
 * miopenConvolution (cross-correlation) with stride, dilation, symmetric padding and the group
 * count. What MIOpen is not asked: f64 and mixed types, asymmetric padding (MIOpen pads both
 * sides alike), sizes beyond int; f16/bf16 with other than f32 accumulation. Strict f32
 * (KMUX_COMPUTE_F32 on f32 tensors) keeps only the GEMM, direct and implicit-GEMM solutions (FFT
 * and Winograd do not round once per product, as the CUDA plugin's rule for cuDNN).
 * prefs->require_deterministic sets MIOPEN_CONVOLUTION_ATTRIB_DETERMINISTIC (refused where the
 * library lacks miopenSetConvolutionAttribute).
 *
 * Two ways to the implementations, as MIOpen offers them:
 *  - immediate mode (the default: prefs->tune resolved off): miopenConvolution*GetSolution lists
 *    the applicable solutions, best first by MIOpen's heuristic or its find-db; those within the
 *    workspace cap are compiled at plan creation (miopenConvolution*CompileSolution) and run with
 *    miopenConvolution*Immediate. kmux's own tuning (the device "auto", KMUX_TUNE) then times
 *    them on the device like any implementations.
 *  - find mode (prefs->tune resolved on, as a caller asks for measurement on hip:N):
 *    miopenFindConvolution*Algorithm benchmarks MIOpen's algorithms on scratch tensors of the real
 *    shape at plan creation; the algorithms it returns, fastest first, run with
 *    miopenConvolutionForward / BackwardData / BackwardWeights.
 * Immediate mode takes no alpha or beta, and kmux asks MIOpen's find-mode calls only for
 * alpha = 1, beta = 0: other calls run on kmux's own kernel (hip_conv.c).
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

static const char *const dir_names[3] = {"fwd", "bwd_data", "bwd_weights"};

static const char *algo_name(int a) {
    switch (a) {
    case KMUX_MIOPEN_ALGO_GEMM:
        return "GEMM";
    case KMUX_MIOPEN_ALGO_DIRECT:
        return "Direct";
    case KMUX_MIOPEN_ALGO_FFT:
        return "FFT";
    case KMUX_MIOPEN_ALGO_WINOGRAD:
        return "Winograd";
    case KMUX_MIOPEN_ALGO_IMPLICIT_GEMM:
        return "ImplicitGEMM";
    default:
        return "algo?";
    }
}

static const char *check_miopen(void *lib, void *ctx) {
    kmux_hip_miopen *m = ctx;
    static const char *const dir_fn[3] = {"Forward", "BackwardData", "BackwardWeights"};
    char names[3][6][64];
    for (int d = 0; d < 3; d++) {
        snprintf(names[d][0], 64, "miopenConvolution%sGetSolutionCount", dir_fn[d]);
        snprintf(names[d][1], 64, "miopenConvolution%sGetSolution", dir_fn[d]);
        snprintf(names[d][2], 64, "miopenConvolution%sCompileSolution", dir_fn[d]);
        snprintf(names[d][3], 64, "miopenConvolution%sImmediate", dir_fn[d]);
        snprintf(names[d][4], 64, "miopenConvolution%sGetWorkSpaceSize", dir_fn[d]);
        snprintf(names[d][5], 64, "miopenFindConvolution%sAlgorithm", dir_fn[d]);
    }
    static const char *const run_names[3] = {"miopenConvolutionForward",
                                             "miopenConvolutionBackwardData",
                                             "miopenConvolutionBackwardWeights"};
    struct {
        void **slot;
        const char *name;
    } fns[12 + 3 * 7];
    size_t n = 0;
#define FN(field, str) fns[n].slot = (void **)&m->field, fns[n++].name = str
    FN(get_version, "miopenGetVersion");
    FN(create, "miopenCreate");
    FN(create_with_stream, "miopenCreateWithStream");
    FN(destroy, "miopenDestroy");
    FN(error_string, "miopenGetErrorString");
    FN(tensor_create, "miopenCreateTensorDescriptor");
    FN(tensor_set, "miopenSetTensorDescriptor");
    FN(tensor_destroy, "miopenDestroyTensorDescriptor");
    FN(conv_create, "miopenCreateConvolutionDescriptor");
    FN(conv_init, "miopenInitConvolutionDescriptor");
    FN(conv_groups, "miopenSetConvolutionGroupCount");
    FN(conv_destroy, "miopenDestroyConvolutionDescriptor");
    for (int d = 0; d < 3; d++) {
        FN(solution_count[d], names[d][0]);
        FN(solutions[d], names[d][1]);
        FN(compile[d], names[d][2]);
        FN(immediate[d], names[d][3]);
        FN(ws_size[d], names[d][4]);
        FN(find[d], names[d][5]);
        FN(run[d], run_names[d]);
    }
#undef FN
    for (size_t i = 0; i < n; i++) {
        *fns[i].slot = dlsym(lib, fns[i].name);
        if (!*fns[i].slot) {
            static __thread char why[96];
            snprintf(why, sizeof why, "%s is missing", fns[i].name);
            for (size_t j = 0; j < n; j++)
                *fns[j].slot = NULL;
            return why;
        }
    }
    /* optional: only deterministic plans need it (MIOpen >= 2.16) */
    *(void **)&m->conv_attribute = dlsym(lib, "miopenSetConvolutionAttribute");
    return NULL;
}

static const char *miopen_opened(kmux_hip_state *st) {
    kmux_hip_miopen *m = &st->miopen;
    size_t a = 0, b = 0, c = 0;
    if (m->get_version(&a, &b, &c) != KMUX_MIOPEN_SUCCESS) a = b = c = 0;
    snprintf(m->base.version, sizeof m->base.version, "MIOpen %zu.%zu.%zu", a, b, c);
    m->handles =
        kmux_sys_calloc((size_t)(st->device_count > 0 ? st->device_count : 1), sizeof *m->handles);
    return m->handles ? NULL : "out of host memory";
}

static int miopen_open(kmux_hip_state *st) {
    static const char *const sonames[] = {"libMIOpen.so.1", NULL};
    const kmux_hip_lib_search s = {"miopen", "KMUX_MIOPEN_LIBRARY", sonames, check_miopen,
                                   &st->miopen};
    return kmux_hip_lib_once(st, &st->miopen.base, &s, "MIOpen", miopen_opened);
}

int kmux_hip_miopen_available(kmux_hip_state *st) {
    return miopen_open(st);
}

void kmux_hip_miopen_init(kmux_hip_state *st) {
    pthread_mutex_init(&st->miopen.base.lock, NULL);
}

void kmux_hip_miopen_fini(kmux_hip_state *st) {
    kmux_hip_miopen *m = &st->miopen;
    for (int i = 0; m->handles && i < st->device_count; i++) {
        kmux_hip_guard g;
        if (m->handles[i] && kmux_hip_enter(st, i, "kmux_context_destroy", &g) == KMUX_OK) {
            (void)m->destroy(m->handles[i]);
            kmux_hip_leave(st, &g);
        }
    }
    free(m->handles);
    m->handles = NULL;
    pthread_mutex_destroy(&m->base.lock);
}

void kmux_hip_miopen_stream_release(kmux_hip_state *st, kmux_hip_stream_t *s) {
    if (s->miopen && st->miopen.destroy) (void)st->miopen.destroy(s->miopen);
    s->miopen = NULL;
}

/* "miopenStatusBadParm (3)" */
static const char *status_text(const kmux_hip_miopen *m, int e, char *buf, size_t size) {
    const char *s = m->error_string ? m->error_string(e) : NULL;
    snprintf(buf, size, "%s (miopenStatus_t %d)", s ? s : "?", e);
    return buf;
}

const char *kmux_hip_miopen_refusal(const kmux_conv2d_desc *d, char *buf, size_t size) {
    const kmux_dtype t = d->x_type;
    if (d->w_type != t || d->y_type != t || (t != KMUX_F32 && t != KMUX_F16 && t != KMUX_BF16))
        return snprintf(buf, size,
                        "MIOpen is asked for x, w and y of one type among f32, f16 and bf16 "
                        "(got x %s, w %s, y %s)",
                        kmux_dtype_desc_of(t).name, kmux_dtype_desc_of(d->w_type).name,
                        kmux_dtype_desc_of(d->y_type).name),
               buf;
    if (t != KMUX_F32 && d->compute_type != KMUX_COMPUTE_F32)
        return snprintf(buf, size, "MIOpen accumulates %s in f32 (compute %d asked)",
                        kmux_dtype_desc_of(t).name, (int)d->compute_type),
               buf;
    if (d->pad_top != d->pad_bottom || d->pad_left != d->pad_right)
        return snprintf(buf, size,
                        "MIOpen pads both sides alike (pad_top %lld, pad_bottom %lld, pad_left "
                        "%lld, pad_right %lld)",
                        (long long)d->pad_top, (long long)d->pad_bottom, (long long)d->pad_left,
                        (long long)d->pad_right),
               buf;
    /* every tensor's element count (its largest int stride is below it) */
    const int64_t p =
        kmux_conv2d_out_dim(d->h, d->pad_top, d->pad_bottom, d->r, d->dilation_h, d->stride_h);
    const int64_t q =
        kmux_conv2d_out_dim(d->w, d->pad_left, d->pad_right, d->s, d->dilation_w, d->stride_w);
    const int64_t sizes[] = {d->n * d->c * d->h * d->w,
                             d->k * d->c * d->r * d->s,
                             d->n * d->k * p * q,
                             d->pad_top,
                             d->pad_left,
                             d->stride_h,
                             d->stride_w,
                             d->dilation_h,
                             d->dilation_w};
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++)
        if (sizes[i] > INT_MAX)
            return snprintf(buf, size, "a size (%lld) exceeds MIOpen's int descriptors",
                            (long long)sizes[i]),
                   buf;
    return NULL;
}

/* The device's plan-time handle (device entered), created on first use; NULL with why. */
static void *handle_of(kmux_hip_state *st, int device, char *why, size_t size) {
    kmux_hip_miopen *m = &st->miopen;
    pthread_mutex_lock(&m->base.lock);
    void *h = m->handles[device];
    if (!h) {
        int e = m->create(&h);
        if (e == KMUX_MIOPEN_SUCCESS) {
            m->handles[device] = h;
        } else {
            char t[96];
            snprintf(why, size, "%s: miopenCreate on hip:%d: %s", m->base.version, device,
                     status_text(m, e, t, sizeof t));
            h = NULL;
        }
    }
    pthread_mutex_unlock(&m->base.lock);
    return h;
}

static int set_tensor(const kmux_hip_miopen *m, void **desc, int type, kmux_layout layout,
                      int64_t n, int64_t c, int64_t h, int64_t w) {
    /* lengths in N, C, H, W order; strides of the memory layout (NHWC: C fastest) */
    const int lens[4] = {(int)n, (int)c, (int)h, (int)w};
    int strides[4];
    if (layout == KMUX_NHWC)
        strides[0] = (int)(h * w * c), strides[1] = 1, strides[2] = (int)(w * c),
        strides[3] = (int)c;
    else
        strides[0] = (int)(c * h * w), strides[1] = (int)(h * w), strides[2] = (int)w,
        strides[3] = 1;
    int e = m->tensor_create(desc);
    return e == KMUX_MIOPEN_SUCCESS ? m->tensor_set(*desc, type, 4, lens, strides) : e;
}

void kmux_hip_miopen_plan_release(kmux_hip_state *st, kmux_hip_miopen_plan *bp) {
    const kmux_hip_miopen *m = &st->miopen;
    void *ts[3] = {bp->x, bp->w, bp->y};
    for (int i = 0; i < 3; i++)
        if (ts[i]) (void)m->tensor_destroy(ts[i]);
    if (bp->conv) (void)m->conv_destroy(bp->conv);
    memset(bp, 0, sizeof *bp);
}

/* The roles (0 x, 1 w, 2 y) of a direction's three tensor arguments in MIOpen's order: immediate
 * mode and the workspace query (find = 0; forward w, x, y), the find step and its runs (find = 1;
 * forward x, w, y); backward data dy, w, dx and backward weights dy, x, dw in both. */
static const int *roles(int dir, int find) {
    static const int r[2][3][3] = {{{1, 0, 2}, {2, 1, 0}, {2, 0, 1}},
                                   {{0, 1, 2}, {2, 1, 0}, {2, 0, 1}}};
    return r[find][dir];
}

/* The plan's descriptors in MIOpen's order (roles). */
static void order(const kmux_hip_miopen_plan *bp, int find, void *out[3]) {
    void *const by_role[3] = {bp->x, bp->w, bp->y};
    const int *r = roles(bp->dir, find);
    for (int j = 0; j < 3; j++)
        out[j] = by_role[r[j]];
}

static int keep_algo(const kmux_conv2d_desc *d, int algo) {
    const int strict = d->x_type == KMUX_F32 && d->compute_type == KMUX_COMPUTE_F32;
    return !strict || (algo != KMUX_MIOPEN_ALGO_FFT && algo != KMUX_MIOPEN_ALGO_WINOGRAD);
}

/* The find step: MIOpen's algorithms benchmarked on scratch tensors of the real shape. */
static int find_algos(kmux_hip_state *st, void *h, const kmux_conv2d_desc *d,
                      kmux_hip_miopen_plan *bp, size_t cap, int64_t p, int64_t q, char *why,
                      size_t size) {
    const kmux_hip_miopen *m = &st->miopen;
    const size_t es = kmux_dtype_bytes(d->x_type);
    const size_t bytes[3] = {(size_t)(d->n * d->c * d->h * d->w) * es,
                             (size_t)(d->k * (d->c / d->groups) * d->r * d->s) * es,
                             (size_t)(d->n * d->k * p * q) * es};
    void *buf[3] = {NULL, NULL, NULL}, *ws = NULL, *ds[3];
    size_t ws_bytes = 0;
    order(bp, 0, ds);
    int e = m->ws_size[bp->dir](h, ds[0], ds[1], bp->conv, ds[2], &ws_bytes);
    char t[96];
    if (e != KMUX_MIOPEN_SUCCESS)
        return snprintf(why, size, "%s: miopenConvolution*GetWorkSpaceSize: %s", m->base.version,
                        status_text(m, e, t, sizeof t)),
               e;
    if (ws_bytes > cap) ws_bytes = cap;
    kmux_hip_error he = KMUX_HIP_SUCCESS;
    for (int i = 0; i < 3 && he == KMUX_HIP_SUCCESS; i++)
        he = st->api.hipMalloc(&buf[i], bytes[i]);
    if (he == KMUX_HIP_SUCCESS && ws_bytes) he = st->api.hipMalloc(&ws, ws_bytes);
    kmux_miopen_perf perf[KMUX_HIP_MIOPEN_MAX_SOLUTIONS];
    int got = 0;
    if (he == KMUX_HIP_SUCCESS) {
        void *fd[3];
        order(bp, 1, fd);
        const int *ix = roles(bp->dir, 1);
        e = m->find[bp->dir](h, fd[0], buf[ix[0]], fd[1], buf[ix[1]], bp->conv, fd[2], buf[ix[2]],
                             KMUX_HIP_MIOPEN_MAX_SOLUTIONS, &got, perf, ws, ws_bytes, 0);
    }
    for (int i = 0; i < 3; i++)
        if (buf[i]) (void)st->api.hipFree(buf[i]);
    if (ws) (void)st->api.hipFree(ws);
    if (he != KMUX_HIP_SUCCESS)
        return snprintf(why, size,
                        "%s find step: hipMalloc of the scratch tensors and a %zu-byte "
                        "workspace failed",
                        m->base.version, ws_bytes),
               -1;
    if (e != KMUX_MIOPEN_SUCCESS)
        return snprintf(why, size, "%s: miopenFindConvolution*Algorithm: %s", m->base.version,
                        status_text(m, e, t, sizeof t)),
               e;
    for (int i = 0; i < got && i < KMUX_HIP_MIOPEN_MAX_SOLUTIONS; i++) {
        if (perf[i].memory > ws_bytes || !keep_algo(d, perf[i].algo)) continue;
        kmux_hip_miopen_impl *im = &bp->impls[bp->n++];
        im->find = 1;
        im->algo = perf[i].algo;
        im->workspace = perf[i].memory;
        snprintf(im->name, sizeof im->name, "miopen:find:%s:%s,ws=%zu", dir_names[bp->dir],
                 algo_name(im->algo), im->workspace);
    }
    return KMUX_MIOPEN_SUCCESS;
}

/* Immediate mode: the applicable solutions, compiled now. */
static int list_solutions(kmux_hip_state *st, void *h, const kmux_conv2d_desc *d,
                          kmux_hip_miopen_plan *bp, size_t cap, char *why, size_t size) {
    const kmux_hip_miopen *m = &st->miopen;
    void *ds[3];
    order(bp, 0, ds);
    kmux_miopen_solution sol[KMUX_HIP_MIOPEN_MAX_SOLUTIONS];
    size_t count = 0;
    char t[96];
    int e = m->solutions[bp->dir](h, ds[0], ds[1], bp->conv, ds[2], KMUX_HIP_MIOPEN_MAX_SOLUTIONS,
                                  &count, sol);
    if (e != KMUX_MIOPEN_SUCCESS)
        return snprintf(why, size, "%s: miopenConvolution*GetSolution: %s", m->base.version,
                        status_text(m, e, t, sizeof t)),
               e;
    for (size_t i = 0; i < count && i < KMUX_HIP_MIOPEN_MAX_SOLUTIONS; i++) {
        if (sol[i].workspace_size > cap || !keep_algo(d, sol[i].algorithm)) continue;
        e = m->compile[bp->dir](h, ds[0], ds[1], bp->conv, ds[2], sol[i].solution_id);
        if (e != KMUX_MIOPEN_SUCCESS) {
            if (st->host->verbose >= 2)
                st->host->trace(2, "plan,hip,miopen,solution %llu not compiled: %s",
                                (unsigned long long)sol[i].solution_id,
                                status_text(m, e, t, sizeof t));
            continue;
        }
        kmux_hip_miopen_impl *im = &bp->impls[bp->n++];
        im->solution_id = sol[i].solution_id;
        im->algo = sol[i].algorithm;
        im->workspace = sol[i].workspace_size;
        snprintf(im->name, sizeof im->name, "miopen:%s:%s:id=%llu,ws=%zu", dir_names[bp->dir],
                 algo_name(im->algo), (unsigned long long)im->solution_id, im->workspace);
    }
    return KMUX_MIOPEN_SUCCESS;
}

kmux_status kmux_hip_miopen_plan_build(kmux_hip_state *st, int device, const kmux_conv2d_desc *d,
                                       int find, int det, size_t cap, kmux_hip_miopen_plan *bp,
                                       char *why, size_t size) {
    memset(bp, 0, sizeof *bp);
    if (!miopen_open(st))
        return snprintf(why, size, "%s", st->miopen.base.why), KMUX_ERR_UNSUPPORTED;
    const kmux_hip_miopen *m = &st->miopen;
    if (det && !m->conv_attribute)
        return snprintf(why, size, "require_deterministic: %s has no miopenSetConvolutionAttribute",
                        m->base.version),
               KMUX_ERR_UNSUPPORTED;
    kmux_hip_guard g;
    kmux_status ks = kmux_hip_enter(st, device, "kmux_conv2d_plan_create", &g);
    if (ks != KMUX_OK) return ks;
    void *h = handle_of(st, device, why, size);
    if (!h) {
        kmux_hip_leave(st, &g);
        return KMUX_ERR_UNSUPPORTED;
    }
    bp->dir = d->direction == KMUX_CONV_FWD ? 0 : d->direction == KMUX_CONV_BWD_DATA ? 1 : 2;
    const int type = d->x_type == KMUX_F32   ? KMUX_MIOPEN_FLOAT
                     : d->x_type == KMUX_F16 ? KMUX_MIOPEN_HALF
                                             : KMUX_MIOPEN_BFLOAT16;
    const int64_t p =
        kmux_conv2d_out_dim(d->h, d->pad_top, d->pad_bottom, d->r, d->dilation_h, d->stride_h);
    const int64_t q =
        kmux_conv2d_out_dim(d->w, d->pad_left, d->pad_right, d->s, d->dilation_w, d->stride_w);
    const char *step = "miopenSetTensorDescriptor";
    int e = set_tensor(m, &bp->x, type, d->layout, d->n, d->c, d->h, d->w);
    if (e == KMUX_MIOPEN_SUCCESS)
        e = set_tensor(m, &bp->w, type, d->layout, d->k, d->c / d->groups, d->r, d->s);
    if (e == KMUX_MIOPEN_SUCCESS) e = set_tensor(m, &bp->y, type, d->layout, d->n, d->k, p, q);
    if (e == KMUX_MIOPEN_SUCCESS)
        step = "miopenCreateConvolutionDescriptor", e = m->conv_create(&bp->conv);
    if (e == KMUX_MIOPEN_SUCCESS)
        step = "miopenInitConvolutionDescriptor",
        e = m->conv_init(bp->conv, KMUX_MIOPEN_CONVOLUTION, (int)d->pad_top, (int)d->pad_left,
                         (int)d->stride_h, (int)d->stride_w, (int)d->dilation_h,
                         (int)d->dilation_w);
    if (e == KMUX_MIOPEN_SUCCESS && d->groups > 1)
        step = "miopenSetConvolutionGroupCount", e = m->conv_groups(bp->conv, (int)d->groups);
    if (e == KMUX_MIOPEN_SUCCESS && det)
        step = "miopenSetConvolutionAttribute",
        e = m->conv_attribute(bp->conv, KMUX_MIOPEN_ATTRIB_DETERMINISTIC, 1);
    bp->deterministic = det;
    char t[96];
    if (e != KMUX_MIOPEN_SUCCESS)
        snprintf(why, size, "%s: %s: %s", m->base.version, step, status_text(m, e, t, sizeof t));
    else if (find)
        e = find_algos(st, h, d, bp, cap, p, q, why, size);
    else
        e = list_solutions(st, h, d, bp, cap, why, size);
    kmux_hip_leave(st, &g);
    if (e == KMUX_MIOPEN_SUCCESS && bp->n == 0)
        snprintf(why, size, "%s offered no %s solution within a workspace of %zu bytes%s",
                 m->base.version, find ? "measured" : "applicable", cap,
                 d->x_type == KMUX_F32 && d->compute_type == KMUX_COMPUTE_F32
                     ? " (strict f32: FFT and Winograd left out)"
                     : "");
    if (e != KMUX_MIOPEN_SUCCESS || bp->n == 0) {
        kmux_hip_miopen_plan_release(st, bp);
        return KMUX_ERR_UNSUPPORTED;
    }
    return KMUX_OK;
}

const char *kmux_hip_miopen_call_refusal(const kmux_conv2d_args *a) {
    if (*(const float *)a->alpha != 1.0f || *(const float *)a->beta != 0.0f)
        return "MIOpen is asked only for alpha = 1, beta = 0";
    return NULL;
}

kmux_status kmux_hip_miopen_run(kmux_hip_state *st, kmux_hip_stream_t *s,
                                const kmux_hip_miopen_plan *bp, int i, const kmux_conv2d_args *a) {
    const kmux_hip_miopen *m = &st->miopen;
    const kmux_hip_miopen_impl *im = &bp->impls[i];
    kmux_hip_guard g;
    kmux_status ks = kmux_hip_enter(st, s->device, "kmux_conv2d_execute", &g);
    if (ks != KMUX_OK) return ks;
    int e = KMUX_MIOPEN_SUCCESS;
    const char *step = "miopenCreateWithStream";
    if (!s->miopen) e = m->create_with_stream(&s->miopen, s->stream);
    if (e != KMUX_MIOPEN_SUCCESS) s->miopen = NULL;
    void *ws = NULL;
    if (e == KMUX_MIOPEN_SUCCESS)
        ks = kmux_hip_stream_workspace(st, s, im->workspace, a->workspace, a->workspace_bytes,
                                       "kmux_conv2d_execute", &ws);
    if (e == KMUX_MIOPEN_SUCCESS && ks == KMUX_OK) {
        void *ds[3];
        order(bp, im->find, ds);
        /* the pointers in the descriptors' order */
        void *const by_role[3] = {a->x, a->w, a->y};
        const int *r = roles(bp->dir, im->find);
        void *pp[3];
        for (int j = 0; j < 3; j++)
            pp[j] = by_role[r[j]];
        if (im->find) {
            const float one = 1.0f, zero = 0.0f;
            step = bp->dir == 0   ? "miopenConvolutionForward"
                   : bp->dir == 1 ? "miopenConvolutionBackwardData"
                                  : "miopenConvolutionBackwardWeights";
            e = m->run[bp->dir](s->miopen, &one, ds[0], pp[0], ds[1], pp[1], bp->conv, im->algo,
                                &zero, ds[2], pp[2], ws, im->workspace);
        } else {
            step = bp->dir == 0   ? "miopenConvolutionForwardImmediate"
                   : bp->dir == 1 ? "miopenConvolutionBackwardDataImmediate"
                                  : "miopenConvolutionBackwardWeightsImmediate";
            e = m->immediate[bp->dir](s->miopen, ds[0], pp[0], ds[1], pp[1], bp->conv, ds[2], pp[2],
                                      ws, im->workspace, im->solution_id);
        }
    }
    kmux_hip_leave(st, &g);
    if (ks != KMUX_OK) return ks;
    if (e != KMUX_MIOPEN_SUCCESS) {
        char t[96];
        return st->host->set_error(e == KMUX_MIOPEN_NOT_IMPLEMENTED ? KMUX_ERR_UNSUPPORTED
                                                                    : KMUX_ERR_DEVICE,
                                   "hip: kmux_conv2d_execute on hip:%d: %s %s (%s): %s", s->device,
                                   m->base.version, step, im->name, status_text(m, e, t, sizeof t));
    }
    return KMUX_OK;
}
