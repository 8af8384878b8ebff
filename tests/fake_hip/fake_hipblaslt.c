/*
 * fake_hipblaslt.c - a fake hipBLASLt (libkmux-fake-hipblaslt.so), a TEST TOOL for the HIP
 * plugin's hipBLASLt path (backends/hip/hip_blaslt.c) without ROCm, written from the hipBLASLt
 * API reference (hipblaslt.h, hipblas-common.h, HIP's library_types.h; ROCm 6.1 - 7.x): the 14
 * functions the plugin resolves, with hipblasLtMatmul computing on host memory (the fake HIP
 * runtime's device memory is host memory) in f64 (i8: exact, wrapping to int32), rounded once
 * to D's type.
 *
 * It rejects what hipBLASLt documents as rejected, so that a mapping error of the plugin fails
 * a test instead of computing something: a descriptor of the wrong kind in any position
 * (HIPBLAS_STATUS_INVALID_VALUE), an attribute buffer whose size is not the attribute's
 * (INVALID_VALUE), a leading dimension smaller than the rows, layouts whose sizes do not make
 * one product (op(A') m x k, op(B') k x n, D m x n), unequal batch counts, a type combination
 * or compute/scale type outside the support table (NOT_SUPPORTED), fp8 outside "TN", a bias
 * epilogue without its pointer, a workspace smaller than the algorithm needs or not 16-byte
 * aligned (INVALID_VALUE), D != C with a different layout.
 * Heuristics: three candidates needing 0, 1 MiB and 64 MiB of workspace, those within the
 * preference's HIPBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES (default 0) returned.
 * Hooks for tests: kmux_fake_hipblaslt_fail_call(k, status) makes the k-th next hipblasLtMatmul
 * return `status` once (0: disarm); kmux_fake_hipblaslt_fail_fired() says whether it did;
 * KMUX_FAKE_HIPBLASLT_VERSION sets hipblasLtGetVersion's answer (default 100000, 1.0.0).
 */
#include "fake_fail.h"
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kmux_dtype_codec.h"

#define EXPORT __attribute__((visibility("default")))

enum { OK = 0, NOT_INITIALIZED = 1, ALLOC_FAILED = 2, INVALID_VALUE = 3, NOT_SUPPORTED = 7 };
enum { OP_N = 111, OP_T = 112 };
enum { R32F = 0, R64F = 1, R16F = 2, R8I = 3, R32I = 10, R16BF = 14, E4M3 = 28, E5M2 = 29 };
enum { E4M3_FNUZ = 1000, E5M2_FNUZ = 1001 };
enum { C32F = 2, C32F_FAST_16BF = 5, C32F_FAST_TF32 = 6, C32I = 9 };
enum { EPI_DEFAULT = 1, EPI_RELU = 2, EPI_BIAS = 4, EPI_RELU_BIAS = 6, EPI_GELU = 32 };
enum { EPI_GELU_BIAS = 36 };
enum { MAGIC_HANDLE = 0x484e444c, MAGIC_DESC = 0x44455343, MAGIC_LAYOUT = 0x4c41594f };
enum { MAGIC_PREF = 0x50524546 };

typedef struct {
    uint8_t data[16];
    size_t max_workspace_bytes;
} algo_t;
typedef struct {
    algo_t algo;
    size_t workspace_size;
    int state;
    float waves;
    int reserved[4];
} heur_t;

typedef struct {
    int magic, compute, scale;
    int32_t ta, tb;
    uint32_t epi;
    int32_t bias_type;
    const void *bias, *a_scale, *b_scale, *d_scale;
} desc_t;
typedef struct {
    int magic, type;
    uint64_t rows, cols;
    int64_t ld, stride;
    int32_t batch;
} layout_t;
typedef struct {
    int magic;
    uint64_t max_ws;
} pref_t;

static long fail_countdown;
static int fail_status, fail_fired;

EXPORT void kmux_fake_hipblaslt_fail_call(long k, int status);
EXPORT void kmux_fake_hipblaslt_fail_call(long k, int status) {
    fail_countdown = k;
    fail_status = status;
    fail_fired = 0;
}
EXPORT int kmux_fake_hipblaslt_fail_fired(void);
EXPORT int kmux_fake_hipblaslt_fail_fired(void) {
    return fail_fired;
}

static kmux_dtype dtype_of(int t) {
    switch (t) {
    case R16F:
        return KMUX_F16;
    case R16BF:
        return KMUX_BF16;
    case E4M3:
        return KMUX_F8_E4M3;
    case E5M2:
        return KMUX_F8_E5M2;
    case E4M3_FNUZ:
        return KMUX_F8_E4M3_FNUZ;
    case E5M2_FNUZ:
        return KMUX_F8_E5M2_FNUZ;
    default:
        return (kmux_dtype)0;
    }
}
static int is_fp8(int t) {
    return t == E4M3 || t == E5M2 || t == E4M3_FNUZ || t == E5M2_FNUZ;
}
static int known_type(int t) {
    return t == R32F || t == R64F || t == R16F || t == R8I || t == R32I || t == R16BF || is_fp8(t);
}

static double load(const void *p, int t, int64_t i) {
    switch (t) {
    case R32F:
        return ((const float *)p)[i];
    case R64F:
        return ((const double *)p)[i];
    case R8I:
        return ((const int8_t *)p)[i];
    case R32I:
        return ((const int32_t *)p)[i];
    case R16F:
    case R16BF:
        return kmux_decode_f64(((const uint16_t *)p)[i], dtype_of(t));
    default:
        return kmux_decode_f64(((const uint8_t *)p)[i], dtype_of(t));
    }
}

static void store(void *p, int t, int64_t i, double v) {
    switch (t) {
    case R32F:
        ((float *)p)[i] = (float)v;
        break;
    case R32I: /* exact integer sums, wrapped modulo 2^32 like integer BLAS */
        ((int32_t *)p)[i] = (int32_t)(uint32_t)(int64_t)v;
        break;
    case R16F:
    case R16BF:
        ((uint16_t *)p)[i] = (uint16_t)kmux_encode_f64(v, dtype_of(t), 0);
        break;
    default:
        ((uint8_t *)p)[i] = (uint8_t)kmux_encode_f64(v, dtype_of(t), 0);
        break;
    }
}

EXPORT int hipblasLtCreate(void **h) {
    KMUX_FAKE_FAIL_POINT("libhipblaslt", 6);
    static int handle_magic = MAGIC_HANDLE;
    if (!h) return INVALID_VALUE;
    *h = &handle_magic;
    return OK;
}
EXPORT int hipblasLtDestroy(void *h) {
    KMUX_FAKE_FAIL_POINT("libhipblaslt", 6);
    return h && *(int *)h == MAGIC_HANDLE ? OK : NOT_INITIALIZED;
}
EXPORT int hipblasLtGetVersion(void *h, int *v) {
    if (!h || *(int *)h != MAGIC_HANDLE || !v) return INVALID_VALUE;
    const char *e = getenv("KMUX_FAKE_HIPBLASLT_VERSION");
    *v = e && *e ? atoi(e) : 100000;
    return OK;
}

EXPORT int hipblasLtMatrixLayoutCreate(void **l, int type, uint64_t rows, uint64_t cols,
                                       int64_t ld) {
    KMUX_FAKE_FAIL_POINT("libhipblaslt", 6);
    if (!l || !known_type(type)) return INVALID_VALUE;
    if (ld < (int64_t)(rows > 1 ? rows : 1)) return INVALID_VALUE; /* column-major: ld >= rows */
    layout_t *p = calloc(1, sizeof *p);
    if (!p) return ALLOC_FAILED;
    *p = (layout_t){MAGIC_LAYOUT, type, rows, cols, ld, 0, 1};
    *l = p;
    return OK;
}
EXPORT int hipblasLtMatrixLayoutDestroy(void *l) {
    KMUX_FAKE_FAIL_POINT("libhipblaslt", 6);
    if (!l || ((layout_t *)l)->magic != MAGIC_LAYOUT) return INVALID_VALUE;
    ((layout_t *)l)->magic = 0;
    free(l);
    return OK;
}
EXPORT int hipblasLtMatrixLayoutSetAttribute(void *lv, int attr, const void *buf, size_t size) {
    KMUX_FAKE_FAIL_POINT("libhipblaslt", 6);
    layout_t *l = lv;
    if (!l || l->magic != MAGIC_LAYOUT || !buf) return INVALID_VALUE;
    if (attr == 0 && size == sizeof(int32_t)) return memcpy(&l->batch, buf, size), OK;
    if (attr == 1 && size == sizeof(int64_t)) return memcpy(&l->stride, buf, size), OK;
    return INVALID_VALUE;
}

EXPORT int hipblasLtMatmulDescCreate(void **d, int compute, int scale) {
    KMUX_FAKE_FAIL_POINT("libhipblaslt", 6);
    if (!d) return INVALID_VALUE;
    if (compute != C32F && compute != C32F_FAST_16BF && compute != C32F_FAST_TF32 &&
        compute != C32I)
        return INVALID_VALUE;
    desc_t *p = calloc(1, sizeof *p);
    if (!p) return ALLOC_FAILED;
    *p = (desc_t){.magic = MAGIC_DESC,
                  .compute = compute,
                  .scale = scale,
                  .ta = OP_N,
                  .tb = OP_N,
                  .epi = EPI_DEFAULT,
                  .bias_type = -1};
    *d = p;
    return OK;
}
EXPORT int hipblasLtMatmulDescDestroy(void *d) {
    KMUX_FAKE_FAIL_POINT("libhipblaslt", 6);
    if (!d || ((desc_t *)d)->magic != MAGIC_DESC) return INVALID_VALUE;
    ((desc_t *)d)->magic = 0;
    free(d);
    return OK;
}
EXPORT int hipblasLtMatmulDescSetAttribute(void *dv, int attr, const void *buf, size_t size) {
    KMUX_FAKE_FAIL_POINT("libhipblaslt", 6);
    desc_t *d = dv;
    if (!d || d->magic != MAGIC_DESC || !buf) return INVALID_VALUE;
    switch (attr) {
    case 0:
    case 1:
        if (size != sizeof(int32_t)) return INVALID_VALUE;
        memcpy(attr ? &d->tb : &d->ta, buf, size);
        return (attr ? d->tb : d->ta) == OP_N || (attr ? d->tb : d->ta) == OP_T ? OK
                                                                                : INVALID_VALUE;
    case 2:
        if (size != sizeof(uint32_t)) return INVALID_VALUE;
        memcpy(&d->epi, buf, size);
        return OK;
    case 3:
    case 5:
    case 6:
    case 8: {
        if (size != sizeof(void *)) return INVALID_VALUE;
        const void **slot = attr == 3   ? &d->bias
                            : attr == 5 ? &d->a_scale
                            : attr == 6 ? &d->b_scale
                                        : &d->d_scale;
        memcpy((void *)slot, buf, size);
        return OK;
    }
    case 4:
        if (size != sizeof(int32_t)) return INVALID_VALUE;
        memcpy(&d->bias_type, buf, size);
        return OK;
    default:
        return INVALID_VALUE;
    }
}

EXPORT int hipblasLtMatmulPreferenceCreate(void **p) {
    KMUX_FAKE_FAIL_POINT("libhipblaslt", 6);
    if (!p) return INVALID_VALUE;
    pref_t *q = calloc(1, sizeof *q);
    if (!q) return ALLOC_FAILED;
    q->magic = MAGIC_PREF;
    *p = q;
    return OK;
}
EXPORT int hipblasLtMatmulPreferenceDestroy(void *p) {
    KMUX_FAKE_FAIL_POINT("libhipblaslt", 6);
    if (!p || ((pref_t *)p)->magic != MAGIC_PREF) return INVALID_VALUE;
    free(p);
    return OK;
}
EXPORT int hipblasLtMatmulPreferenceSetAttribute(void *p, int attr, const void *buf, size_t size) {
    KMUX_FAKE_FAIL_POINT("libhipblaslt", 6);
    pref_t *q = p;
    if (!q || q->magic != MAGIC_PREF || !buf) return INVALID_VALUE;
    if (attr == 1 && size == sizeof(uint64_t)) return memcpy(&q->max_ws, buf, size), OK;
    return INVALID_VALUE;
}

/* The support table (hipBLASLt's data-type reference): OK, NOT_SUPPORTED or INVALID_VALUE. */
static int check_problem(const desc_t *d, const layout_t *a, const layout_t *b, const layout_t *c,
                         const layout_t *dd) {
    if (!d || d->magic != MAGIC_DESC) return INVALID_VALUE;
    const layout_t *ls[4] = {a, b, c, dd};
    for (int i = 0; i < 4; i++)
        if (!ls[i] || ls[i]->magic != MAGIC_LAYOUT) return INVALID_VALUE;
    const uint64_t m = dd->rows, n = dd->cols;
    const uint64_t am = d->ta == OP_N ? a->rows : a->cols, k = d->ta == OP_N ? a->cols : a->rows;
    const uint64_t bk = d->tb == OP_N ? b->rows : b->cols, bn = d->tb == OP_N ? b->cols : b->rows;
    if (am != m || bk != k || bn != n || c->rows != m || c->cols != n) return INVALID_VALUE;
    if (a->batch != dd->batch || b->batch != dd->batch || c->batch != dd->batch || dd->batch < 1)
        return INVALID_VALUE;
    if (c->type != dd->type) return INVALID_VALUE;
    const int at = a->type, bt = b->type, dt = dd->type;
    int ok;
    if (is_fp8(at) || is_fp8(bt)) {
        const int fnuz = at >= 1000;
        ok = is_fp8(at) && is_fp8(bt) && (bt >= 1000) == fnuz && d->compute == C32F &&
             d->scale == R32F &&
             (dt == R32F || dt == R16F || dt == R16BF || (is_fp8(dt) && (dt >= 1000) == fnuz));
        if (ok && !(d->ta == OP_T && d->tb == OP_N)) return NOT_SUPPORTED; /* fp8: TN */
    } else if (at != bt) {
        ok = 0;
    } else if (at == R8I) {
        ok = dt == R32I && d->compute == C32I && d->scale == R32I;
    } else if (at == R32F) {
        ok = dt == R32F && d->scale == R32F &&
             (d->compute == C32F || d->compute == C32F_FAST_16BF || d->compute == C32F_FAST_TF32);
    } else if (at == R16F || at == R16BF) {
        ok = (dt == at || dt == R32F) && d->compute == C32F && d->scale == R32F;
    } else {
        ok = 0; /* f64 and the rest: not in hipBLASLt's table */
    }
    if (!ok) return NOT_SUPPORTED;
    const uint32_t e = d->epi;
    if (e != EPI_DEFAULT && e != EPI_RELU && e != EPI_BIAS && e != EPI_RELU_BIAS && e != EPI_GELU &&
        e != EPI_GELU_BIAS)
        return NOT_SUPPORTED;
    if ((e & EPI_BIAS) && d->bias_type != R32F && d->bias_type != R16F && d->bias_type != R16BF)
        return NOT_SUPPORTED;
    if (at == R8I && e != EPI_DEFAULT) return NOT_SUPPORTED;
    return OK;
}

static const size_t ws_of[3] = {0, (size_t)1 << 20, (size_t)64 << 20};

EXPORT int hipblasLtMatmulAlgoGetHeuristic(void *h, void *desc, void *a, void *b, void *c, void *d,
                                           void *pref, int requested, heur_t *results,
                                           int *returned) {
    KMUX_FAKE_FAIL_POINT("libhipblaslt", 6);
    if (!h || *(int *)h != MAGIC_HANDLE) return NOT_INITIALIZED;
    if (!pref || ((pref_t *)pref)->magic != MAGIC_PREF || requested <= 0 || !results || !returned)
        return INVALID_VALUE;
    int s = check_problem(desc, a, b, c, d);
    if (s != OK) return s;
    int n = 0;
    for (int i = 0; i < 3 && n < requested; i++) {
        if (ws_of[i] > ((pref_t *)pref)->max_ws) continue;
        memset(&results[n], 0, sizeof results[n]);
        results[n].algo.data[0] = (uint8_t)(0xa0 + i);
        results[n].algo.max_workspace_bytes = ws_of[i];
        results[n].workspace_size = ws_of[i];
        results[n].state = OK;
        results[n].waves = 1.0f;
        n++;
    }
    *returned = n;
    return OK;
}

static double act(uint32_t e, double x) {
    if (e == EPI_RELU || e == EPI_RELU_BIAS) return isnan(x) ? x : (x > 0 ? x : 0.0);
    if (e == EPI_GELU || e == EPI_GELU_BIAS)
        return 0.5 * x * (1.0 + tanh(0.7978845608028654 * (x + 0.044715 * x * x * x)));
    return x;
}

EXPORT int hipblasLtMatmul(void *h, void *desc, const void *alpha, const void *A, void *adesc,
                           const void *B, void *bdesc, const void *beta, const void *C, void *cdesc,
                           void *D, void *ddesc, const algo_t *algo, void *ws, size_t ws_bytes,
                           void *stream) {
    KMUX_FAKE_FAIL_POINT("libhipblaslt", 6);
    (void)stream;
    if (!h || *(int *)h != MAGIC_HANDLE) return NOT_INITIALIZED;
    int s = check_problem(desc, adesc, bdesc, cdesc, ddesc);
    if (s != OK) return s;
    if (fail_countdown > 0 && --fail_countdown == 0) {
        fail_fired = 1;
        return fail_status;
    }
    const desc_t *d = desc;
    const layout_t *la = adesc, *lb = bdesc, *lc = cdesc, *ld = ddesc;
    if (!alpha || !beta || !A || !B || !D || !algo) return INVALID_VALUE;
    if ((algo->data[0] & 0xf0) != 0xa0 || (algo->data[0] & 0x0f) > 2) return INVALID_VALUE;
    const size_t need = ws_of[algo->data[0] & 0x0f];
    if (ws_bytes < need || (need && !ws) || ((uintptr_t)ws & 15)) return INVALID_VALUE;
    if (need) memset(ws, 0x5a, need); /* the algorithm's scratch: its bytes are overwritten */
    if ((d->epi & EPI_BIAS) && !d->bias) return INVALID_VALUE;
    if (C != D && (lc->ld != ld->ld || lc->stride != ld->stride)) return NOT_SUPPORTED;
    if (!C) C = D;
    const int isi = d->compute == C32I;
    const double al = isi ? *(const int32_t *)alpha : *(const float *)alpha;
    const double be = isi ? *(const int32_t *)beta : *(const float *)beta;
    const double sa = d->a_scale ? *(const float *)d->a_scale : 1.0;
    const double sb = d->b_scale ? *(const float *)d->b_scale : 1.0;
    const double sd = d->d_scale ? *(const float *)d->d_scale : 1.0;
    const int64_t m = (int64_t)ld->rows, n = (int64_t)ld->cols;
    const int64_t k = (int64_t)(d->ta == OP_N ? la->cols : la->rows);
    for (int32_t q = 0; q < ld->batch; q++)
        for (int64_t j = 0; j < n; j++)
            for (int64_t i = 0; i < m; i++) {
                double acc = 0.0;
                int64_t iacc = 0;
                for (int64_t p = 0; p < k; p++) {
                    int64_t ia = d->ta == OP_N ? i + p * la->ld : p + i * la->ld;
                    int64_t ib = d->tb == OP_N ? p + j * lb->ld : j + p * lb->ld;
                    double x = load(A, la->type, q * la->stride + ia);
                    double y = load(B, lb->type, q * lb->stride + ib);
                    if (isi)
                        iacc += (int64_t)x * (int64_t)y;
                    else
                        acc += x * y;
                }
                const int64_t ic = q * lc->stride + i + j * lc->ld;
                const int64_t id = q * ld->stride + i + j * ld->ld;
                if (isi) {
                    /* wraps modulo 2^32 like integer BLAS */
                    uint32_t r = (uint32_t)(int32_t)al * (uint32_t)iacc;
                    if (be != 0.0)
                        r += (uint32_t)(int32_t)be * (uint32_t)(int32_t)load(C, lc->type, ic);
                    ((int32_t *)D)[id] = (int32_t)r;
                    continue;
                }
                double v = sa * sb * al * acc;
                if (be != 0.0) v += be * load(C, lc->type, ic);
                if (d->epi & EPI_BIAS) v += load(d->bias, d->bias_type, i);
                store(D, ld->type, id, sd * act(d->epi, v));
            }
    return OK;
}
