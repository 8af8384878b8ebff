/*
 * fake_rocblas.c - a fake rocBLAS (libkmux-fake-rocblas.so), a TEST TOOL for the HIP plugin's
 * rocBLAS path (backends/hip/hip_matmul.c) without ROCm: the five rocblas_* functions the plugin
 * resolves, with rocblas_gemm_strided_batched_ex as a plain column-major loop on host memory
 * (the fake HIP runtime's device memory is host memory), accumulating in the compute type. It
 * tests the plugin's mapping (types, transposes, the row-major swap, leading dimensions, batch
 * strides, scalars), not rocBLAS; it refuses what rocBLAS refuses for these types (mixed A/B
 * types, unknown datatypes, d != c in place).
 */
#include "fake_fail.h"
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "kmux_dtype_codec.h"

#define EXPORT __attribute__((visibility("default")))

enum { OK = 0, INVALID_HANDLE = 1, NOT_IMPLEMENTED = 2, INVALID_SIZE = 4, INVALID_VALUE = 11 };
enum { OP_N = 111, OP_T = 112, F16 = 150, F32 = 151, F64 = 152, BF16 = 168 };

static int handles; /* live handles */
struct handle {
    void *stream;
};
static struct handle pool[64];

static kmux_dtype dtype_of(int t) {
    switch (t) {
    case F16:
        return KMUX_F16;
    case F32:
        return KMUX_F32;
    case F64:
        return KMUX_F64;
    case BF16:
        return KMUX_BF16;
    default:
        return (kmux_dtype)0;
    }
}

static double load(const void *p, int t, int64_t i) {
    switch (t) {
    case F32:
        return ((const float *)p)[i];
    case F64:
        return ((const double *)p)[i];
    default:
        return kmux_decode_f64(((const uint16_t *)p)[i], dtype_of(t));
    }
}

static void store(void *p, int t, int64_t i, double v) {
    switch (t) {
    case F32:
        ((float *)p)[i] = (float)v;
        break;
    case F64:
        ((double *)p)[i] = v;
        break;
    default:
        ((uint16_t *)p)[i] = (uint16_t)kmux_encode_f64(v, dtype_of(t), 0);
        break;
    }
}

EXPORT int rocblas_create_handle(void **h);
EXPORT int rocblas_create_handle(void **h) {
    KMUX_FAKE_FAIL_POINT("librocblas", 6);
    if (!h || handles >= 64) return INVALID_VALUE;
    *h = &pool[handles++];
    return OK;
}

EXPORT int rocblas_destroy_handle(void *h);
EXPORT int rocblas_destroy_handle(void *h) {
    KMUX_FAKE_FAIL_POINT("librocblas", 6);
    return h ? OK : INVALID_HANDLE;
}

EXPORT int rocblas_set_stream(void *h, void *stream);
EXPORT int rocblas_set_stream(void *h, void *stream) {
    KMUX_FAKE_FAIL_POINT("librocblas", 6);
    if (!h) return INVALID_HANDLE;
    ((struct handle *)h)->stream = stream;
    return OK;
}

EXPORT int rocblas_set_atomics_mode(void *h, int mode);
EXPORT int rocblas_set_atomics_mode(void *h, int mode) {
    KMUX_FAKE_FAIL_POINT("librocblas", 6);
    return h && (mode == 0 || mode == 1) ? OK : INVALID_VALUE;
}

EXPORT int rocblas_get_version_string(char *buf, size_t len);
EXPORT int rocblas_get_version_string(char *buf, size_t len) {
    snprintf(buf, len, "4.0.0-kmux-fake");
    return OK;
}

/* no separate prototype: the target is built with -Wno-missing-prototypes (exported API) */
EXPORT int rocblas_gemm_strided_batched_ex(void *h, int ta, int tb, int32_t m, int32_t n, int32_t k,
                                           const void *alpha, const void *a, int at, int32_t lda,
                                           int64_t sa, const void *b, int bt, int32_t ldb,
                                           int64_t sb, const void *beta, const void *c, int ct,
                                           int32_t ldc, int64_t sc, void *d, int dt, int32_t ldd,
                                           int64_t sd, int32_t batch, int comp, int algo,
                                           int32_t solution, uint32_t flags) {
    KMUX_FAKE_FAIL_POINT("librocblas", 6);
    (void)solution, (void)flags;
    if (!h) return INVALID_HANDLE;
    if (at != bt || ct != dt || !dtype_of(at) || !dtype_of(ct) || (comp != F32 && comp != F64) ||
        algo != 0 || (ta != OP_N && ta != OP_T) || (tb != OP_N && tb != OP_T))
        return NOT_IMPLEMENTED;
    if (m < 0 || n < 0 || k < 0 || batch < 0 || ldc < (m > 1 ? m : 1) || ldd != ldc)
        return INVALID_SIZE;
    if (ldc != ldd || c != d || sc != sd) return NOT_IMPLEMENTED; /* the plugin runs in place */
    if ((ta == OP_N ? lda < m : lda < k) || (tb == OP_N ? ldb < k : ldb < n)) return INVALID_SIZE;
    double al = comp == F64 ? *(const double *)alpha : *(const float *)alpha;
    double be = comp == F64 ? *(const double *)beta : *(const float *)beta;
    for (int32_t q = 0; q < batch; q++)
        for (int32_t j = 0; j < n; j++)
            for (int32_t i = 0; i < m; i++) {
                double acc = 0.0;
                float accf = 0.0f;
                for (int32_t l = 0; l < k; l++) {
                    int64_t ia =
                        q * sa + (ta == OP_N ? i + (int64_t)l * lda : l + (int64_t)i * lda);
                    int64_t ib =
                        q * sb + (tb == OP_N ? l + (int64_t)j * ldb : j + (int64_t)l * ldb);
                    double x = load(a, at, ia) * load(b, bt, ib);
                    if (comp == F64)
                        acc += x;
                    else
                        accf += (float)x;
                }
                int64_t ic = q * sc + i + (int64_t)j * ldc;
                double r = (comp == F64 ? acc : (double)accf) * al;
                if (be != 0.0) r += be * load(c, ct, ic);
                store(d, dt, ic, comp == F64 ? r : (double)(float)r);
            }
    return OK;
}
