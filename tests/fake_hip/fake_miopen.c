/*
 * fake_miopen.c - a fake MIOpen (libkmux-fake-miopen.so), a TEST TOOL for the HIP plugin's MIOpen
 * path (backends/hip/hip_miopen.c) without ROCm, written from MIOpen's API reference (miopen.h,
 * "Find and immediate mode"): the functions the plugin resolves, computing on host memory (the
 * fake HIP runtime's device memory is host memory) in f64, rounded once to the tensor type.
 *
 * It rejects what MIOpen rejects, so that a mapping error of the plugin fails a test instead of
 * computing something (miopenStatusBadParm): descriptors of the wrong kind or in the wrong order
 * (each call's tensors are read by position, as MIOpen does, and must make one convolution:
 * w K x C/groups x R x S, y N x K x P x Q with MIOpen's output formula), lengths or strides < 1,
 * mixed data types, an unknown convolution mode, a solution id not applicable to the problem,
 * a workspace smaller than the solution or algorithm needs.
 * Solutions of every problem: GEMM (id 100 + 10 * direction, an im2col workspace), Direct
 * (+1, none) and Winograd (+3, none; 3x3 filters, stride and dilation 1, one group only), listed
 * best first as Winograd, GEMM, Direct; the find step returns the algorithms whose workspace fits
 * in that order, with times 0.5, 1 and 2 ms. Tensors are addressed through their strides, so
 * NCHW and NHWC are both what the strides say.
 * Hooks for tests: kmux_fake_miopen_fail_call(k, status): the k-th next convolution call
 * (immediate or find mode) returns `status` once; kmux_fake_miopen_fail_fired().
 */
#include "fake_fail.h"
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kmux_dtype_codec.h"

#define EXPORT __attribute__((visibility("default")))

enum { OK = 0, BAD_PARM = 3, ALLOC_FAILED = 4, NOT_IMPLEMENTED = 6 };
enum { HALF = 0, FLOAT = 1, BF16 = 5 };
enum { GEMM = 0, DIRECT = 1, WINOGRAD = 3 };
enum { MAGIC_HANDLE = 0x4d494f48, MAGIC_TENSOR = 0x4d494f54, MAGIC_CONV = 0x4d494f43 };

typedef struct {
    int algo;
    float time;
    size_t memory;
} perf_t;
typedef struct {
    float time;
    size_t workspace_size;
    uint64_t solution_id;
    int algorithm;
} solution_t;
typedef struct {
    int magic;
    void *stream;
} handle_t;
typedef struct {
    int magic, type, set;
    int len[4], stride[4];
} tensor_t;
typedef struct {
    int magic, init, pad_h, pad_w, stride_h, stride_w, dil_h, dil_w, groups, deterministic;
} conv_t;

static long fail_countdown;
static int fail_status, fail_fired;

EXPORT void kmux_fake_miopen_fail_call(long k, int status) {
    fail_countdown = k;
    fail_status = status;
    fail_fired = 0;
}
EXPORT int kmux_fake_miopen_fail_fired(void) {
    return fail_fired;
}

EXPORT int miopenGetVersion(size_t *major, size_t *minor, size_t *patch) {
    if (major) *major = 3;
    if (minor) *minor = 4;
    if (patch) *patch = 0;
    return OK;
}
EXPORT const char *miopenGetErrorString(int e) {
    switch (e) {
    case OK:
        return "miopenStatusSuccess";
    case BAD_PARM:
        return "miopenStatusBadParm";
    case ALLOC_FAILED:
        return "miopenStatusAllocFailed";
    case NOT_IMPLEMENTED:
        return "miopenStatusNotImplemented";
    case 5:
        return "miopenStatusInternalError";
    default:
        return "miopenStatusUnknownError";
    }
}
EXPORT int miopenCreate(void **h) {
    KMUX_FAKE_FAIL_POINT("libMIOpen", 5);
    handle_t *p = h ? calloc(1, sizeof *p) : NULL;
    if (!p) return h ? ALLOC_FAILED : BAD_PARM;
    p->magic = MAGIC_HANDLE;
    *h = p;
    return OK;
}
EXPORT int miopenCreateWithStream(void **h, void *stream) {
    KMUX_FAKE_FAIL_POINT("libMIOpen", 5);
    int e = miopenCreate(h);
    if (e == OK) ((handle_t *)*h)->stream = stream;
    return e;
}
EXPORT int miopenDestroy(void *h) {
    KMUX_FAKE_FAIL_POINT("libMIOpen", 5);
    if (!h || ((handle_t *)h)->magic != MAGIC_HANDLE) return BAD_PARM;
    ((handle_t *)h)->magic = 0;
    free(h);
    return OK;
}

EXPORT int miopenCreateTensorDescriptor(void **d) {
    KMUX_FAKE_FAIL_POINT("libMIOpen", 5);
    tensor_t *p = d ? calloc(1, sizeof *p) : NULL;
    if (!p) return d ? ALLOC_FAILED : BAD_PARM;
    p->magic = MAGIC_TENSOR;
    *d = p;
    return OK;
}
EXPORT int miopenSetTensorDescriptor(void *dv, int type, int dims, const int *lens,
                                     const int *strides) {
    KMUX_FAKE_FAIL_POINT("libMIOpen", 5);
    tensor_t *d = dv;
    if (!d || d->magic != MAGIC_TENSOR || dims != 4 || !lens || !strides) return BAD_PARM;
    if (type != HALF && type != FLOAT && type != BF16) return BAD_PARM;
    for (int i = 0; i < 4; i++)
        if (lens[i] < 1 || strides[i] < 1) return BAD_PARM;
    d->type = type;
    memcpy(d->len, lens, sizeof d->len);
    memcpy(d->stride, strides, sizeof d->stride);
    d->set = 1;
    return OK;
}
EXPORT int miopenDestroyTensorDescriptor(void *d) {
    KMUX_FAKE_FAIL_POINT("libMIOpen", 5);
    if (!d || ((tensor_t *)d)->magic != MAGIC_TENSOR) return BAD_PARM;
    ((tensor_t *)d)->magic = 0;
    free(d);
    return OK;
}

EXPORT int miopenCreateConvolutionDescriptor(void **d) {
    KMUX_FAKE_FAIL_POINT("libMIOpen", 5);
    conv_t *p = d ? calloc(1, sizeof *p) : NULL;
    if (!p) return d ? ALLOC_FAILED : BAD_PARM;
    p->magic = MAGIC_CONV;
    p->groups = 1;
    *d = p;
    return OK;
}
EXPORT int miopenInitConvolutionDescriptor(void *dv, int mode, int ph, int pw, int sh, int sw,
                                           int dh, int dw) {
    KMUX_FAKE_FAIL_POINT("libMIOpen", 5);
    conv_t *d = dv;
    if (!d || d->magic != MAGIC_CONV || mode != 0) return BAD_PARM;
    if (ph < 0 || pw < 0 || sh < 1 || sw < 1 || dh < 1 || dw < 1) return BAD_PARM;
    d->pad_h = ph, d->pad_w = pw, d->stride_h = sh, d->stride_w = sw, d->dil_h = dh, d->dil_w = dw;
    d->init = 1;
    return OK;
}
EXPORT int miopenSetConvolutionGroupCount(void *dv, int g) {
    KMUX_FAKE_FAIL_POINT("libMIOpen", 5);
    conv_t *d = dv;
    if (!d || d->magic != MAGIC_CONV || g < 1) return BAD_PARM;
    d->groups = g;
    return OK;
}
EXPORT int miopenSetConvolutionAttribute(void *dv, int attr, int value) {
    KMUX_FAKE_FAIL_POINT("libMIOpen", 5);
    conv_t *d = dv;
    if (!d || d->magic != MAGIC_CONV || attr != 1 || (value != 0 && value != 1)) return BAD_PARM;
    d->deterministic = value;
    return OK;
}
EXPORT int miopenDestroyConvolutionDescriptor(void *d) {
    KMUX_FAKE_FAIL_POINT("libMIOpen", 5);
    if (!d || ((conv_t *)d)->magic != MAGIC_CONV) return BAD_PARM;
    ((conv_t *)d)->magic = 0;
    free(d);
    return OK;
}

/* One problem: the three tensors by role and the convolution. */
typedef struct {
    const tensor_t *x, *w, *y;
    const conv_t *c;
    int dir;
} problem;

static int valid(const tensor_t *t) {
    return t && t->magic == MAGIC_TENSOR && t->set;
}

/* Checks the roles make one convolution (MIOpen's output formula); OK or BAD_PARM. */
static int check(const problem *p) {
    if (!valid(p->x) || !valid(p->w) || !valid(p->y)) return BAD_PARM;
    if (!p->c || p->c->magic != MAGIC_CONV || !p->c->init) return BAD_PARM;
    if (p->x->type != p->w->type || p->x->type != p->y->type) return BAD_PARM;
    const int *x = p->x->len, *w = p->w->len, *y = p->y->len, g = p->c->groups;
    if (x[1] % g || w[0] % g || w[1] * g != x[1] || y[0] != x[0] || y[1] != w[0]) return BAD_PARM;
    const int eh = (w[2] - 1) * p->c->dil_h + 1, ew = (w[3] - 1) * p->c->dil_w + 1;
    const int ph = (x[2] + 2 * p->c->pad_h - eh) / p->c->stride_h + 1;
    const int pw = (x[3] + 2 * p->c->pad_w - ew) / p->c->stride_w + 1;
    return y[2] == ph && y[3] == pw ? OK : BAD_PARM;
}

static size_t esize(int type) {
    return type == FLOAT ? 4 : 2;
}

/* The applicable solutions, best first: Winograd (3x3, stride/dilation 1, one group), GEMM,
 * Direct. Returns how many (at most 3). */
static int applicable(const problem *p, solution_t out[3]) {
    const int *w = p->w->len, *y = p->y->len;
    const conv_t *c = p->c;
    int n = 0;
    const uint64_t base = 100 + 10 * (uint64_t)p->dir;
    if (w[2] == 3 && w[3] == 3 && c->stride_h == 1 && c->stride_w == 1 && c->dil_h == 1 &&
        c->dil_w == 1 && c->groups == 1)
        out[n++] = (solution_t){0.5f, 0, base + 3, WINOGRAD};
    const size_t col = (size_t)w[1] * w[2] * w[3] * y[2] * y[3] * esize(p->x->type);
    out[n++] = (solution_t){1.0f, col, base + 0, GEMM};
    out[n++] = (solution_t){2.0f, 0, base + 1, DIRECT};
    return n;
}

static int take_fault(void) {
    if (fail_countdown > 0 && --fail_countdown == 0) {
        fail_fired = 1;
        return 1;
    }
    return 0;
}

static double load(const tensor_t *t, const void *p, const int i[4]) {
    int64_t off = 0;
    for (int k = 0; k < 4; k++)
        off += (int64_t)i[k] * t->stride[k];
    if (t->type == FLOAT) return ((const float *)p)[off];
    return kmux_decode_f64(((const uint16_t *)p)[off], t->type == HALF ? KMUX_F16 : KMUX_BF16);
}
static void store(const tensor_t *t, void *p, const int i[4], double v) {
    int64_t off = 0;
    for (int k = 0; k < 4; k++)
        off += (int64_t)i[k] * t->stride[k];
    if (t->type == FLOAT)
        ((float *)p)[off] = (float)v;
    else
        ((uint16_t *)p)[off] =
            (uint16_t)kmux_encode_f64(v, t->type == HALF ? KMUX_F16 : KMUX_BF16, 0);
}

/* out = alpha * conv + beta * out (beta == 0: out not read), f64 sums rounded once. */
static void compute(const problem *p, const void *x, const void *w, const void *y, void *out,
                    double alpha, double beta) {
    const int *xl = p->x->len, *wl = p->w->len, *yl = p->y->len;
    const conv_t *c = p->c;
    const int cg = wl[1], kg = wl[0] / c->groups;
    if (p->dir == 0) {
        for (int n = 0; n < yl[0]; n++)
            for (int k = 0; k < yl[1]; k++)
                for (int oh = 0; oh < yl[2]; oh++)
                    for (int ow = 0; ow < yl[3]; ow++) {
                        double acc = 0;
                        const int g = k / kg;
                        for (int ci = 0; ci < cg; ci++)
                            for (int r = 0; r < wl[2]; r++)
                                for (int s = 0; s < wl[3]; s++) {
                                    int ih = oh * c->stride_h - c->pad_h + r * c->dil_h;
                                    int iw = ow * c->stride_w - c->pad_w + s * c->dil_w;
                                    if (ih < 0 || iw < 0 || ih >= xl[2] || iw >= xl[3]) continue;
                                    const int xi[4] = {n, g * cg + ci, ih, iw},
                                              wi[4] = {k, ci, r, s};
                                    acc += load(p->x, x, xi) * load(p->w, w, wi);
                                }
                        const int yi[4] = {n, k, oh, ow};
                        double v = alpha * acc;
                        if (beta != 0) v += beta * load(p->y, out, yi);
                        store(p->y, out, yi, v);
                    }
    } else if (p->dir == 1) {
        for (int n = 0; n < xl[0]; n++)
            for (int ch = 0; ch < xl[1]; ch++)
                for (int ih = 0; ih < xl[2]; ih++)
                    for (int iw = 0; iw < xl[3]; iw++) {
                        double acc = 0;
                        const int g = ch / cg;
                        for (int kk = 0; kk < kg; kk++)
                            for (int r = 0; r < wl[2]; r++)
                                for (int s = 0; s < wl[3]; s++) {
                                    int th = ih + c->pad_h - r * c->dil_h;
                                    int tw = iw + c->pad_w - s * c->dil_w;
                                    if (th < 0 || tw < 0 || th % c->stride_h || tw % c->stride_w)
                                        continue;
                                    int oh = th / c->stride_h, ow = tw / c->stride_w;
                                    if (oh >= yl[2] || ow >= yl[3]) continue;
                                    const int k = g * kg + kk;
                                    const int yi[4] = {n, k, oh, ow},
                                              wi[4] = {k, ch - g * cg, r, s};
                                    acc += load(p->y, y, yi) * load(p->w, w, wi);
                                }
                        const int xi[4] = {n, ch, ih, iw};
                        double v = alpha * acc;
                        if (beta != 0) v += beta * load(p->x, out, xi);
                        store(p->x, out, xi, v);
                    }
    } else {
        for (int k = 0; k < wl[0]; k++)
            for (int ci = 0; ci < cg; ci++)
                for (int r = 0; r < wl[2]; r++)
                    for (int s = 0; s < wl[3]; s++) {
                        double acc = 0;
                        const int g = k / kg;
                        for (int n = 0; n < yl[0]; n++)
                            for (int oh = 0; oh < yl[2]; oh++)
                                for (int ow = 0; ow < yl[3]; ow++) {
                                    int ih = oh * c->stride_h - c->pad_h + r * c->dil_h;
                                    int iw = ow * c->stride_w - c->pad_w + s * c->dil_w;
                                    if (ih < 0 || iw < 0 || ih >= xl[2] || iw >= xl[3]) continue;
                                    const int xi[4] = {n, g * cg + ci, ih, iw},
                                              yi[4] = {n, k, oh, ow};
                                    acc += load(p->x, x, xi) * load(p->y, y, yi);
                                }
                        const int wi[4] = {k, ci, r, s};
                        double v = alpha * acc;
                        if (beta != 0) v += beta * load(p->w, out, wi);
                        store(p->w, out, wi, v);
                    }
    }
}

/* The problem of a call's descriptors in immediate-mode order (fwd w, x, y; bwd data dy, w, dx;
 * bwd weights dy, x, dw) or find order (fwd x, w, y; the backward ones as immediate). */
static problem roles(int dir, int find, void *d1, void *d2, void *conv, void *d3) {
    problem p = {0};
    p.dir = dir;
    p.c = conv;
    if (dir == 0) {
        p.w = find ? d2 : d1;
        p.x = find ? d1 : d2;
        p.y = d3;
    } else if (dir == 1) {
        p.y = d1, p.w = d2, p.x = d3;
    } else {
        p.y = d1, p.x = d2, p.w = d3;
    }
    return p;
}

/* The tensors' data in role order from the call's pointers (p1, p2, p3 in the call's order). */
static void data(const problem *p, int find, const void *p1, const void *p2, void *p3,
                 const void **x, const void **w, const void **y, void **out) {
    if (p->dir == 0) {
        *x = find ? p1 : p2, *w = find ? p2 : p1, *y = p3, *out = p3;
    } else if (p->dir == 1) {
        *y = p1, *w = p2, *x = p3, *out = p3;
    } else {
        *y = p1, *x = p2, *w = p3, *out = p3;
    }
}

static int count_impl(int dir, void *h, void *d1, void *d2, void *conv, void *d3, size_t *count) {
    KMUX_FAKE_FAIL_POINT("libMIOpen", 5); /* the exported call of this direction */
    if (!h || ((handle_t *)h)->magic != MAGIC_HANDLE || !count) return BAD_PARM;
    problem p = roles(dir, 0, d1, d2, conv, d3);
    if (check(&p) != OK) return BAD_PARM;
    solution_t s[3];
    *count = (size_t)applicable(&p, s);
    return OK;
}

static int solutions_impl(int dir, void *h, void *d1, void *d2, void *conv, void *d3, size_t max,
                          size_t *count, solution_t *out) {
    KMUX_FAKE_FAIL_POINT("libMIOpen", 5); /* the exported call of this direction */
    if (!h || ((handle_t *)h)->magic != MAGIC_HANDLE || !count || !out || max < 1) return BAD_PARM;
    problem p = roles(dir, 0, d1, d2, conv, d3);
    if (check(&p) != OK) return BAD_PARM;
    solution_t s[3];
    int n = applicable(&p, s);
    *count = 0;
    for (int i = 0; i < n && (size_t)i < max; i++)
        out[(*count)++] = s[i];
    return OK;
}

/* The solution `id` of the problem, or NULL. */
static const solution_t *find_id(const problem *p, uint64_t id, solution_t s[3]) {
    int n = applicable(p, s);
    for (int i = 0; i < n; i++)
        if (s[i].solution_id == id) return &s[i];
    return NULL;
}

static int compile_impl(int dir, void *h, void *d1, void *d2, void *conv, void *d3, uint64_t id) {
    KMUX_FAKE_FAIL_POINT("libMIOpen", 5); /* the exported call of this direction */
    if (!h || ((handle_t *)h)->magic != MAGIC_HANDLE) return BAD_PARM;
    problem p = roles(dir, 0, d1, d2, conv, d3);
    solution_t s[3];
    return check(&p) == OK && find_id(&p, id, s) ? OK : BAD_PARM;
}

static int immediate_impl(int dir, void *h, void *d1, const void *p1, void *d2, const void *p2,
                          void *conv, void *d3, void *p3, void *ws, size_t ws_size, uint64_t id) {
    KMUX_FAKE_FAIL_POINT("libMIOpen", 5); /* the exported call of this direction */
    if (!h || ((handle_t *)h)->magic != MAGIC_HANDLE) return BAD_PARM;
    problem p = roles(dir, 0, d1, d2, conv, d3);
    solution_t s[3];
    const solution_t *sol = check(&p) == OK ? find_id(&p, id, s) : NULL;
    if (!sol || !p1 || !p2 || !p3) return BAD_PARM;
    if (ws_size < sol->workspace_size || (sol->workspace_size && !ws)) return BAD_PARM;
    if (take_fault()) return fail_status;
    if (sol->workspace_size) memset(ws, 0x5a, sol->workspace_size); /* the solution's scratch */
    const void *x, *w, *y;
    void *out;
    data(&p, 0, p1, p2, p3, &x, &w, &y, &out);
    compute(&p, x, w, y, out, 1.0, 0.0);
    return OK;
}

static int ws_impl(int dir, void *h, void *d1, void *d2, void *conv, void *d3, size_t *bytes) {
    KMUX_FAKE_FAIL_POINT("libMIOpen", 5); /* the exported call of this direction */
    if (!h || ((handle_t *)h)->magic != MAGIC_HANDLE || !bytes) return BAD_PARM;
    problem p = roles(dir, 0, d1, d2, conv, d3);
    if (check(&p) != OK) return BAD_PARM;
    solution_t s[3];
    int n = applicable(&p, s);
    *bytes = 0;
    for (int i = 0; i < n; i++)
        if (s[i].workspace_size > *bytes) *bytes = s[i].workspace_size;
    return OK;
}

static int find_impl(int dir, void *h, void *d1, const void *p1, void *d2, const void *p2,
                     void *conv, void *d3, void *p3, int request, int *returned, perf_t *perf,
                     void *ws, size_t ws_size, _Bool exhaustive) {
    KMUX_FAKE_FAIL_POINT("libMIOpen", 5); /* the exported call of this direction */
    (void)exhaustive;
    if (!h || ((handle_t *)h)->magic != MAGIC_HANDLE || request < 1 || !returned || !perf)
        return BAD_PARM;
    problem p = roles(dir, 1, d1, d2, conv, d3);
    if (check(&p) != OK || !p1 || !p2 || !p3 || (ws_size && !ws)) return BAD_PARM;
    solution_t s[3];
    int n = applicable(&p, s);
    *returned = 0;
    for (int i = 0; i < n && *returned < request; i++)
        if (s[i].workspace_size <= ws_size)
            perf[(*returned)++] = (perf_t){s[i].algorithm, s[i].time, s[i].workspace_size};
    return *returned ? OK : NOT_IMPLEMENTED;
}

static int run_impl(int dir, void *h, const void *alpha, void *d1, const void *p1, void *d2,
                    const void *p2, void *conv, int algo, const void *beta, void *d3, void *p3,
                    void *ws, size_t ws_size) {
    KMUX_FAKE_FAIL_POINT("libMIOpen", 5); /* the exported call of this direction */
    if (!h || ((handle_t *)h)->magic != MAGIC_HANDLE || !alpha || !beta) return BAD_PARM;
    problem p = roles(dir, 1, d1, d2, conv, d3);
    if (check(&p) != OK || !p1 || !p2 || !p3) return BAD_PARM;
    solution_t s[3];
    int n = applicable(&p, s), i = 0;
    while (i < n && s[i].algorithm != algo)
        i++;
    if (i == n) return BAD_PARM;
    if (ws_size < s[i].workspace_size || (s[i].workspace_size && !ws)) return BAD_PARM;
    if (take_fault()) return fail_status;
    if (s[i].workspace_size) memset(ws, 0x5a, s[i].workspace_size); /* the algorithm's scratch */
    const void *x, *w, *y;
    void *out;
    data(&p, 1, p1, p2, p3, &x, &w, &y, &out);
    compute(&p, x, w, y, out, *(const float *)alpha, *(const float *)beta);
    return OK;
}

/* The exported names of the three directions. */
#define DIRECTION(dir, Name)                                                                       \
    EXPORT int miopenConvolution##Name##GetSolutionCount(void *h, void *a, void *b, void *c,       \
                                                         void *d, size_t *n) {                     \
        return count_impl(dir, h, a, b, c, d, n);                                                  \
    }                                                                                              \
    EXPORT int miopenConvolution##Name##GetSolution(void *h, void *a, void *b, void *c, void *d,   \
                                                    size_t max, size_t *n, solution_t *out) {      \
        return solutions_impl(dir, h, a, b, c, d, max, n, out);                                    \
    }                                                                                              \
    EXPORT int miopenConvolution##Name##CompileSolution(void *h, void *a, void *b, void *c,        \
                                                        void *d, uint64_t id) {                    \
        return compile_impl(dir, h, a, b, c, d, id);                                               \
    }                                                                                              \
    EXPORT int miopenConvolution##Name##Immediate(void *h, void *a, const void *pa, void *b,       \
                                                  const void *pb, void *c, void *d, void *pd,      \
                                                  void *ws, size_t wss, uint64_t id) {             \
        return immediate_impl(dir, h, a, pa, b, pb, c, d, pd, ws, wss, id);                        \
    }                                                                                              \
    EXPORT int miopenConvolution##Name##GetWorkSpaceSize(void *h, void *a, void *b, void *c,       \
                                                         void *d, size_t *bytes) {                 \
        return ws_impl(dir, h, a, b, c, d, bytes);                                                 \
    }                                                                                              \
    EXPORT int miopenFindConvolution##Name##Algorithm(                                             \
        void *h, void *a, const void *pa, void *b, const void *pb, void *c, void *d, void *pd,     \
        int req, int *ret, perf_t *perf, void *ws, size_t wss, _Bool ex) {                         \
        return find_impl(dir, h, a, pa, b, pb, c, d, pd, req, ret, perf, ws, wss, ex);             \
    }                                                                                              \
    EXPORT int miopenConvolution##Name(void *h, const void *al, void *a, const void *pa, void *b,  \
                                       const void *pb, void *c, int algo, const void *be, void *d, \
                                       void *pd, void *ws, size_t wss) {                           \
        return run_impl(dir, h, al, a, pa, b, pb, c, algo, be, d, pd, ws, wss);                    \
    }

DIRECTION(0, Forward)
DIRECTION(1, BackwardData)
DIRECTION(2, BackwardWeights)
