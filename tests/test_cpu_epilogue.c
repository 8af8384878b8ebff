/*
 * test_cpu_epilogue.c - the threaded bias/ReLU epilogue of OpenBLAS's GEMMs (kernels/cpu/
 * epilogue.c) against the shared CPU finish it stands in for (dispatch/common/cpu_finish.c), bit
 * for bit: f32, bf16 and f16 outputs, row- and column-major with padded leading dimensions,
 * bias in f32 and in the output type, with and without ReLU, two batches, on results that
 * round (random f32 values, ties of bf16 and f16 after the bias), NaN of both signs with payloads,
 * +-Inf, sums beyond the output's range and below its smallest subnormal, and signed zeros; and
 * the ReLU's mask written (RELU_AUX, padding bits kept) or read (DRELU), with and without the
 * bias (the kernel's own loop without one), on 1 and 2 threads.
 */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "dispatch/common/cpu_finish.h"
#include "kernels/cpu/kmux_cpu_kernels.h"
#include "test_util.h"

static float f32_of(uint32_t u) {
    float f;
    memcpy(&f, &u, 4);
    return f;
}

/* The GEMM results: mostly random values across magnitudes, and the hostile ones above. */
static void fill_t(float *t, int64_t n, uint64_t seed) {
    const float special[] = {f32_of(0x7fc00001u), f32_of(0xffc12345u), INFINITY, -INFINITY, 3.0e38f,
                             -3.0e38f, 1e-42f, -1e-42f, 0.0f, -0.0f, 65520.0f, 1.00390625f,
                             /* beside a bias on a bf16/f16 midpoint: above or below the tie
                              * in f64, on it once rounded to f32 (a double rounding) */
                             0x1p-30f, -0x1p-30f};
    for (int64_t i = 0; i < n; i++) {
        const uint64_t r = tu_rand_u64(&seed);
        if (r % 11 == 0) {
            t[i] = special[(r >> 8) % (sizeof special / sizeof special[0])];
        } else {
            const double mag = ldexp(1.0, (int)((r >> 16) % 40) - 20);
            t[i] = (float)(tu_rand_uniform(&seed, -1.0, 1.0) * mag);
        }
    }
}

static void check(kmux_order order, kmux_dtype ct, kmux_dtype bt, unsigned epi, int threads) {
    kmux_matmul_desc d = KMUX_MATMUL_DESC_INIT;
    d.order = order, d.m = 37, d.n = 300, d.k = 1, d.batch_count = 2;
    d.a_type = d.b_type = d.c_type = ct;
    d.epilogue = epi, d.bias_type = bt;
    const int row = order == KMUX_ROW_MAJOR;
    const int64_t runs = row ? d.m : d.n, len = row ? d.n : d.m;
    d.ldc = len + 5;
    d.stride_c = runs * d.ldc + 3;
    const int64_t ldt = len + 2, nt = runs * ldt, nc = d.stride_c * 2;
    const size_t es = ct == KMUX_F32 ? 4 : 2;
    d.aux_ld = (len / 8 + 2) * 8;        /* a multiple of 8 bits, padding past each run */
    d.stride_aux = runs * d.aux_ld + 16; /* and between the batches */
    const size_t naux = (size_t)(2 * d.stride_aux) / 8;
    uint8_t *aux_want = malloc(naux), *aux_got = malloc(naux);
    cr_assert(aux_want && aux_got);
    for (size_t i = 0; i < naux; i++)
        aux_want[i] = aux_got[i] = (uint8_t)(i * 37 + 11); /* DRELU reads these bits */
    float *t = malloc((size_t)nt * 4);
    void *bias = malloc((size_t)d.n * 4), *want = malloc((size_t)nc * es),
         *got = malloc((size_t)nc * es);
    cr_assert(t && bias && want && got);
    uint64_t seed = 1234 + (uint64_t)ct * 7 + epi;
    for (int64_t i = 0; i < d.n; i++) { /* ties after the sum: halves of an output ulp */
        const double v = tu_rand_uniform(&seed, -4.0, 4.0);
        /* midpoints of bf16 (0.5 + 2^-9) and f16 (0.5 + 2^-12), exact in an f32 bias */
        tu_set(bt, bias, i, i % 7 == 0 ? 0.5 + 0x1p-9 : i % 7 == 1 ? -0.5 - 0x1p-12 : v);
    }
    memset(want, 0x5a, (size_t)nc * es), memset(got, 0x5a, (size_t)nc * es);
    kmux_matmul_args a = KMUX_MATMUL_ARGS_INIT;
    const float one = 1.0f, zero = 0.0f;
    a.alpha = &one, a.beta = &zero, a.bias = bias;
    cr_assert(kmux_cpu_matmul_epilogue_runs(&d, &a));
    for (int64_t b = 0; b < 2; b++) {
        fill_t(t, nt, seed + (uint64_t)b);
        const kmux_cpu_acc acc = {t, KMUX_F32, ldt, 0};
        double amax = 0;
        a.C = want, a.aux = aux_want;
        kmux_cpu_finish_batch(&d, &a, &acc, b, &amax);
        a.C = got, a.aux = aux_got;
        kmux_cpu_matmul_epilogue(&d, &a, t, ldt, b, threads);
    }
    cr_assert(memcmp(aux_got, aux_want, naux) == 0, "%s %s epilogue 0x%x: the mask differs",
              row ? "row" : "col", kmux_dtype_name(ct), epi);
    free(aux_want), free(aux_got);
    for (int64_t i = 0; i < nc; i++)
        if (memcmp((char *)got + i * (int64_t)es, (char *)want + i * (int64_t)es, es) != 0)
            cr_assert_fail("%s %s bias %s epilogue 0x%x, %d threads: C[%lld] = %g, the finish "
                           "gives %g",
                           row ? "row" : "col", kmux_dtype_name(ct), kmux_dtype_name(bt), epi,
                           threads, (long long)i, tu_get(ct, got, i), tu_get(ct, want, i));
    free(t), free(bias), free(want), free(got);
}

Test(cpu_epilogue, same_bits_as_the_shared_finish) {
    const kmux_dtype cts[] = {KMUX_F32, KMUX_BF16, KMUX_F16};
    const unsigned epis[] = {KMUX_EPILOGUE_BIAS,
                             KMUX_EPILOGUE_RELU,
                             KMUX_EPILOGUE_BIAS | KMUX_EPILOGUE_RELU,
                             KMUX_EPILOGUE_RELU | KMUX_EPILOGUE_RELU_AUX,
                             KMUX_EPILOGUE_BIAS | KMUX_EPILOGUE_RELU | KMUX_EPILOGUE_RELU_AUX,
                             KMUX_EPILOGUE_DRELU};
    for (int o = 0; o < 2; o++)
        for (int c = 0; c < 3; c++)
            for (int bt = 0; bt < 2; bt++)
                for (int e = 0; e < 6; e++)
                    check(o ? KMUX_COL_MAJOR : KMUX_ROW_MAJOR, cts[c], bt ? cts[c] : KMUX_F32,
                          epis[e], 1 + (c + e) % 2);
}

/* What the kernel does not stand in for goes to the finish. */
Test(cpu_epilogue, declines_what_it_does_not_reproduce) {
    kmux_matmul_desc d = KMUX_MATMUL_DESC_INIT;
    kmux_matmul_args a = KMUX_MATMUL_ARGS_INIT;
    float s = 1.0f;
    d.epilogue = KMUX_EPILOGUE_GELU;
    cr_expect(!kmux_cpu_matmul_epilogue_runs(&d, &a), "GELU");
    d.epilogue = KMUX_EPILOGUE_BIAS;
    a.d_scale = &s;
    cr_expect(!kmux_cpu_matmul_epilogue_runs(&d, &a), "d_scale");
    a.d_scale = NULL, a.amax_d = &s;
    cr_expect(!kmux_cpu_matmul_epilogue_runs(&d, &a), "amax_d");
    a.amax_d = NULL, d.c_type = KMUX_F8_E4M3;
    cr_expect(!kmux_cpu_matmul_epilogue_runs(&d, &a), "fp8 output");
    d.c_type = KMUX_BF16, d.bias_type = KMUX_F16;
    cr_expect(!kmux_cpu_matmul_epilogue_runs(&d, &a), "bias in a third type");
    d.bias_type = KMUX_BF16;
    cr_expect(kmux_cpu_matmul_epilogue_runs(&d, &a));
    d.epilogue = KMUX_EPILOGUE_DRELU, d.aux_ld = 12; /* runs would share mask bytes */
    cr_expect(!kmux_cpu_matmul_epilogue_runs(&d, &a), "aux_ld not a multiple of 8");
    d.aux_ld = 16, d.batch_count = 2, d.stride_aux = 36;
    cr_expect(!kmux_cpu_matmul_epilogue_runs(&d, &a), "stride_aux not a multiple of 8");
    d.stride_aux = 40;
    cr_expect(kmux_cpu_matmul_epilogue_runs(&d, &a));
    d.epilogue = KMUX_EPILOGUE_GELU | KMUX_EPILOGUE_GELU_AUX;
    cr_expect(!kmux_cpu_matmul_epilogue_runs(&d, &a), "GELU_AUX");
}
