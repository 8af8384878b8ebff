/*
 * test_vendor_binding.c - each CPU plugin runs its own vendor library, even when the process's
 * global scope already holds functions of the same names. This executable defines (and exports,
 * ENABLE_EXPORTS = -rdynamic, as an application with its own BLAS or CBLAS interface does) WRONG
 * cblas_sgemm, cblas_dgemm, dnnl_version and dnnl_primitive_execute: a plugin that bound to them
 * would compute nothing, report oneDNN 99.0.0 or fail its execute. Results must be right and the
 * impostors never called.
 */
#include "test_util.h"

#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

#include "dispatch/common/kmux_vendor_lib.h"

/* ---- the impostors (prototypes here only: they are public for the dynamic linker) --------- */

static atomic_int g_impostor_calls;

/* Tests build with -fvisibility=hidden: these must be in the dynamic symbol table. */
#define EXPORTED __attribute__((visibility("default")))

EXPORTED void cblas_sgemm(int order, int ta, int tb, int m, int n, int k, float alpha,
                          const float *a, int lda, const float *b, int ldb, float beta, float *c,
                          int ldc);
EXPORTED void cblas_dgemm(int order, int ta, int tb, int m, int n, int k, double alpha,
                          const double *a, int lda, const double *b, int ldb, double beta,
                          double *c, int ldc);
typedef struct fake_dnnl_version {
    int major, minor, patch;
    const char *hash;
    unsigned cpu_runtime, gpu_runtime;
} fake_dnnl_version;
EXPORTED const fake_dnnl_version *dnnl_version(void);
EXPORTED int dnnl_primitive_execute(const void *primitive, void *stream, int nargs,
                                    const void *args);

EXPORTED void cblas_sgemm(int order, int ta, int tb, int m, int n, int k, float alpha,
                          const float *a, int lda, const float *b, int ldb, float beta, float *c,
                          int ldc) {
    atomic_fetch_add(&g_impostor_calls, 1); /* and computes nothing */
}
EXPORTED void cblas_dgemm(int order, int ta, int tb, int m, int n, int k, double alpha,
                          const double *a, int lda, const double *b, int ldb, double beta,
                          double *c, int ldc) {
    atomic_fetch_add(&g_impostor_calls, 1);
}
EXPORTED const fake_dnnl_version *dnnl_version(void) {
    static const fake_dnnl_version v = {99, 0, 0, "impostor", 0, 0};
    atomic_fetch_add(&g_impostor_calls, 1);
    return &v;
}
EXPORTED int dnnl_primitive_execute(const void *primitive, void *stream, int nargs,
                                    const void *args) {
    atomic_fetch_add(&g_impostor_calls, 1);
    return 5; /* dnnl_runtime_error */
}

/* ---- GEMM on one device, checked exactly (small integers are exact in f32 and f64) -------- */

#define M 7
#define N 5
#define K 9

static void gemm_checked(const char *id, kmux_dtype t) {
    kmux_context *ctx = tu_context();
    kmux_device *dev = tu_device(ctx, id);
    if (!dev) {
        kmux_context_destroy(ctx);
        cr_skip_test("%s is not available", id);
    }
    kmux_stream *s = NULL;
    TU_OK(kmux_stream_create(dev, &s));
    double a[M * K], b[K * N], want[M * N];
    float af[M * K], bf[K * N], cf[M * N];
    double cd[M * N];
    for (int i = 0; i < M * K; i++)
        a[i] = af[i] = (float)(i % 5 - 2);
    for (int i = 0; i < K * N; i++)
        b[i] = bf[i] = (float)(i % 3 - 1);
    for (int i = 0; i < M; i++)
        for (int j = 0; j < N; j++) {
            double acc = 0;
            for (int p = 0; p < K; p++)
                acc += a[i * K + p] * b[p * N + j];
            want[i * N + j] = acc;
        }
    for (int i = 0; i < M * N; i++)
        cf[i] = cd[i] = -12345;
    int before = atomic_load(&g_impostor_calls);
    if (t == KMUX_F32) {
        float one = 1, zero = 0;
        TU_OK(kmux_gemm_ex(s, KMUX_ROW_MAJOR, KMUX_NO_TRANS, KMUX_NO_TRANS, M, N, K, &one, af, t, K,
                           bf, t, N, &zero, cf, t, N, KMUX_COMPUTE_F32));
    } else {
        double one = 1, zero = 0;
        TU_OK(kmux_gemm_ex(s, KMUX_ROW_MAJOR, KMUX_NO_TRANS, KMUX_NO_TRANS, M, N, K, &one, a, t, K,
                           b, t, N, &zero, cd, t, N, KMUX_COMPUTE_F64));
    }
    TU_OK(kmux_stream_synchronize(s));
    cr_expect_eq(atomic_load(&g_impostor_calls), before,
                 "%s called the executable's function instead of its own library's", id);
    for (int i = 0; i < M * N; i++) {
        double got = t == KMUX_F32 ? cf[i] : cd[i];
        cr_assert_eq(got, want[i], "%s %s: C[%d] = %g, want %g", id, kmux_dtype_name(t), i, got,
                     want[i]);
    }
    TU_OK(kmux_stream_destroy(s));
    kmux_context_destroy(ctx);
}

Test(vendor_binding, openblas_sgemm_is_openblas) {
    gemm_checked("cpu:openblas", KMUX_F32);
}

Test(vendor_binding, openblas_dgemm_is_openblas) {
    gemm_checked("cpu:openblas", KMUX_F64);
}

Test(vendor_binding, onednn_matmul_is_onednn) {
    gemm_checked("cpu:onednn", KMUX_F32);
}

/* The version each plugin reports is its library's, not the executable's dnnl_version(). */
Test(vendor_binding, versions_are_the_libraries_own) {
    kmux_context *ctx = tu_context();
    int n = 0;
    TU_OK(kmux_backend_count(ctx, &n));
    for (int i = 0; i < n; i++) {
        kmux_backend_info info;
        TU_OK(kmux_backend_info_get(ctx, i, &info));
        if (!info.available) continue;
        cr_expect(strstr(info.version, "99.0.0") == NULL, "%s reports version '%s'", info.name,
                  info.version);
    }
    kmux_context_destroy(ctx);
}

/* ---- the loader itself: a missing library or symbol is named in the reason --------------- */

typedef struct one_fn {
    double (*cos)(double);
} one_fn;

Test(vendor_binding, loader_names_missing_library_and_symbol) {
    one_fn t = {0};
    char why[512];
    kmux_vendor_sym ok[] = {{"cos", offsetof(one_fn, cos)}};
    cr_assert_eq(kmux_vendor_lib_load("libm.so.6", ok, 1, &t, why, sizeof why), 0, "%s", why);
    cr_assert_not_null(t.cos);
    cr_assert_eq(t.cos(0.0), 1.0);

    cr_assert_eq(kmux_vendor_lib_load("libkmux-no-such-library.so.7", ok, 1, &t, why, sizeof why),
                 -1);
    cr_assert(strstr(why, "cannot open libkmux-no-such-library.so.7") != NULL, "%s", why);

    kmux_vendor_sym bad[] = {{"kmux_no_such_symbol", offsetof(one_fn, cos)}};
    cr_assert_eq(kmux_vendor_lib_load("libm.so.6", bad, 1, &t, why, sizeof why), -1);
    cr_assert(strstr(why, "libm.so.6 has no symbol kmux_no_such_symbol") != NULL, "%s", why);
}

Test(vendor_binding, load_once_keeps_the_first_outcome) {
    one_fn t = {0};
    char why[512] = "";
    kmux_vendor_sym ok[] = {{"cos", offsetof(one_fn, cos)}};
    kmux_vendor_lib_once failed = KMUX_VENDOR_LIB_ONCE_INIT;
    cr_assert_eq(kmux_vendor_lib_load_once(&failed, "libkmux-no-such-library.so.7", ok, 1, &t, why,
                                           sizeof why),
                 -1);
    cr_assert(strstr(why, "cannot open libkmux-no-such-library.so.7") != NULL, "%s", why);
    /* a later call does not retry (even with a library that exists) and repeats the reason */
    why[0] = '\0';
    cr_assert_eq(kmux_vendor_lib_load_once(&failed, "libm.so.6", ok, 1, &t, why, sizeof why), -1);
    cr_assert(strstr(why, "cannot open libkmux-no-such-library.so.7") != NULL, "%s", why);
    cr_assert_null(t.cos);

    kmux_vendor_lib_once loaded = KMUX_VENDOR_LIB_ONCE_INIT;
    cr_assert_eq(kmux_vendor_lib_load_once(&loaded, "libm.so.6", ok, 1, &t, why, sizeof why), 0);
    cr_assert_eq(t.cos(0.0), 1.0);
    cr_assert_eq(kmux_vendor_lib_load_once(&loaded, "libkmux-no-such.so", ok, 1, &t, NULL, 0), 0);
}
