/*
 * test_ref_memory.c - the reference backend's scratch memory is bounded: a large i8 GEMM (whose
 * op(B) as double is 128 MiB, 8x the operand) raises the peak RSS by far less than that, and the
 * panel size (KMUX_REF_PANEL_ELEMS, an internal knob) does not change a single bit of a result.
 */
#define _POSIX_C_SOURCE 200809L
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "test_util.h"

static long peak_rss_kib(void) {
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return ru.ru_maxrss;
}

static void gemm(kmux_stream *s, int64_t m, int64_t n, int64_t k, const void *A, const void *B,
                 void *C, kmux_dtype in, kmux_dtype out, kmux_compute_type ct) {
    float onef = 1, zerof = 0;
    int32_t onei = 1, zeroi = 0;
    int i32 = ct == KMUX_COMPUTE_I32;
    TU_OK(kmux_gemm_ex(s, KMUX_COL_MAJOR, KMUX_TRANS, KMUX_NO_TRANS, m, n, k,
                       i32 ? (const void *)&onei : (const void *)&onef, A, in, k, B, in, k,
                       i32 ? (const void *)&zeroi : (const void *)&zerof, C, out, m, ct));
}

Test(ref_memory, large_i8_gemm_scratch_is_bounded) {
    kmux_context *ctx = tu_context();
    kmux_device *ref = NULL;
    kmux_stream *s = NULL;
    TU_OK(kmux_device_find(ctx, "ref", &ref));
    TU_OK(kmux_stream_create(ref, &s));
    const int64_t m = 2, n = 4096, k = 4096;
    int8_t *A = malloc((size_t)(m * k)), *B = malloc((size_t)(n * k));
    int32_t *C = malloc((size_t)(m * n) * sizeof *C);
    cr_assert(A && B && C);
    for (int64_t i = 0; i < m * k; i++)
        A[i] = (int8_t)(i % 7 - 3);
    for (int64_t i = 0; i < n * k; i++)
        B[i] = (int8_t)(i % 11 - 5);
    memset(C, 0, (size_t)(m * n) * sizeof *C);
    long before = peak_rss_kib();
    gemm(s, m, n, k, A, B, C, KMUX_I8, KMUX_I32, KMUX_COMPUTE_I32);
    long grown_mib = (peak_rss_kib() - before) / 1024;
    /* op(B) as double would be n * k * 8 = 128 MiB; a panel is 8 MiB. */
    cr_expect_lt(grown_mib, 40, "ref's peak RSS grew by %ld MiB for a 16 MiB i8 operand",
                 grown_mib);
    /* spot check: C[0, j] = sum_l A[l] B[l + j k] */
    for (int64_t j = 0; j < n; j += 997) {
        int64_t want = 0;
        for (int64_t l = 0; l < k; l++)
            want += (int64_t)A[l] * B[l + j * k];
        cr_expect_eq(C[j * m], (int32_t)want, "C[0,%lld]", (long long)j);
    }
    free(A);
    free(B);
    free(C);
    TU_OK(kmux_stream_destroy(s));
    TU_OK(kmux_context_destroy(ctx));
}

/* ref reads KMUX_REF_PANEL_ELEMS once, when a context starts the backend: a second context made
 * after setenv runs with two columns of op(B) per panel, the first one with its default. */
Test(ref_memory, panel_size_does_not_change_results) {
    const int64_t m = 5, n = 37, k = 300;
    float *A = malloc(sizeof(float) * (size_t)(m * k)),
          *B = malloc(sizeof(float) * (size_t)(n * k));
    float *C[2] = {calloc((size_t)(m * n), sizeof(float)), calloc((size_t)(m * n), sizeof(float))};
    cr_assert(A && B && C[0] && C[1]);
    uint32_t x = 12345;
    for (int64_t i = 0; i < m * k; i++)
        A[i] = (float)((x = x * 1664525u + 1013904223u) >> 8) / 16777216.0f - 0.5f;
    for (int64_t i = 0; i < n * k; i++)
        B[i] = (float)((x = x * 1664525u + 1013904223u) >> 8) / 16777216.0f - 0.5f;
    for (int run = 0; run < 2; run++) {
        if (run == 1) setenv("KMUX_REF_PANEL_ELEMS", "700", 1); /* two columns per panel */
        kmux_context *ctx = tu_context();
        kmux_device *ref = NULL;
        kmux_stream *s = NULL;
        TU_OK(kmux_device_find(ctx, "ref", &ref));
        TU_OK(kmux_stream_create(ref, &s));
        gemm(s, m, n, k, A, B, C[run], KMUX_F32, KMUX_F32, KMUX_COMPUTE_F32);
        TU_OK(kmux_stream_destroy(s));
        TU_OK(kmux_context_destroy(ctx));
    }
    unsetenv("KMUX_REF_PANEL_ELEMS");
    cr_expect(memcmp(C[0], C[1], sizeof(float) * (size_t)(m * n)) == 0,
              "results differ with another panel size");
    free(A);
    free(B);
    free(C[0]);
    free(C[1]);
}
