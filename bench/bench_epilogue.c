/*
 * bench_epilogue.c - a layer's GEMM + bias + ReLU as ONE call (kmux_matmul with the BIAS | RELU
 * epilogue, as cuBLASLt's CUBLASLT_EPILOGUE_RELU_BIAS) against the same three steps as separate
 * calls (the GEMM, then the binary family's ADD of the broadcast bias in place, then the
 * element-wise family's RELU in place) on the CPU backends, side by side in one run (issue 49's
 * benchmark; not a test). f32 and bf16 (bias in the output type), default 1024 x 1024 x 1024.
 * "gain" = separate ms / fused ms (> 1: fusing pays). Each round runs every variant once, in
 * interleaved order; medians reported. The two outputs are compared, as a sanity check: the
 * fused call rounds once, the separate ones round after each step (bf16: up to 1 ulp apart).
 * The backward epilogues the same way: DRELU (the GEMM of a layer's input gradient with the
 * ReLU's backward from a 1-bit mask, as CUBLASLT_EPILOGUE_DRELU) against the GEMM then the
 * element-wise RELU backward from the saved output; BGRADB (the weight gradient's GEMM with the
 * bias gradient, the column sums of B, as CUBLASLT_EPILOGUE_BGRADB) against the GEMM then a SUM
 * reduction of B's rows.
 * Usage: bench_epilogue [--m=M] [--n=N] [--k=K] [--rounds=R]
 */
#define _ISOC11_SOURCE
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_clock.h"
#include "bench_cpus.h"
#include "kmux.h"

#define CHECK(x) kmux_bench_check("bench_epilogue", #x, (x))

/* The plans of one device and dtype: the fused GEMM, and the GEMM, bias-add and ReLU apart. */
typedef struct variant {
    kmux_plan *fused, *gemm, *add, *relu;
} variant;

static void plans_make(kmux_device *dev, kmux_dtype t, int64_t m, int64_t n, int64_t k,
                       variant *v) {
    kmux_matmul_desc d = KMUX_MATMUL_DESC_INIT;
    d.m = m, d.n = n, d.k = k, d.lda = k, d.ldb = n, d.ldc = n;
    d.a_type = d.b_type = d.c_type = t;
    CHECK(kmux_matmul_plan_create(dev, &d, NULL, &v->gemm));
    d.epilogue = KMUX_EPILOGUE_BIAS | KMUX_EPILOGUE_RELU, d.bias_type = t;
    CHECK(kmux_matmul_plan_create(dev, &d, NULL, &v->fused));
    kmux_binary_desc b = KMUX_BINARY_DESC_INIT;
    b.dtype = t, b.ndims = 2, b.dims[0] = m, b.dims[1] = n, b.src1_dims[0] = 1, b.src1_dims[1] = n;
    CHECK(kmux_binary_plan_create(dev, &b, NULL, &v->add));
    kmux_eltwise_desc e = KMUX_ELTWISE_DESC_INIT;
    e.dtype = t, e.n = m * n;
    CHECK(kmux_eltwise_plan_create(dev, &e, NULL, &v->relu));
}

static void plans_free(variant *v) {
    kmux_plan_destroy(v->fused), kmux_plan_destroy(v->gemm);
    kmux_plan_destroy(v->add), kmux_plan_destroy(v->relu);
}

static const float ONE = 1.0f, ZERO = 0.0f;

static double run_fused(const variant *v, kmux_stream *s, const void *a, const void *b,
                        const void *bias, void *c) {
    double t0 = kmux_bench_now_ms();
    kmux_matmul_args ma = KMUX_MATMUL_ARGS_INIT;
    ma.alpha = &ONE, ma.beta = &ZERO, ma.A = a, ma.B = b, ma.C = c, ma.bias = bias;
    CHECK(kmux_matmul_execute(v->fused, s, &ma));
    CHECK(kmux_stream_synchronize(s));
    return kmux_bench_now_ms() - t0;
}

static double run_separate(const variant *v, kmux_stream *s, const void *a, const void *b,
                           const void *bias, void *c) {
    double t0 = kmux_bench_now_ms();
    kmux_matmul_args ma = KMUX_MATMUL_ARGS_INIT;
    ma.alpha = &ONE, ma.beta = &ZERO, ma.A = a, ma.B = b, ma.C = c;
    CHECK(kmux_matmul_execute(v->gemm, s, &ma));
    kmux_binary_args ba = KMUX_BINARY_ARGS_INIT;
    ba.src0 = c, ba.src1 = bias, ba.dst = c;
    CHECK(kmux_binary_execute(v->add, s, &ba));
    kmux_eltwise_args ea = KMUX_ELTWISE_ARGS_INIT;
    ea.src = c, ea.dst = c;
    CHECK(kmux_eltwise_execute(v->relu, s, &ea));
    CHECK(kmux_stream_synchronize(s));
    return kmux_bench_now_ms() - t0;
}

static double value(kmux_dtype t, const void *p, int64_t i) {
    if (t == KMUX_F32) return ((const float *)p)[i];
    uint32_t u = (uint32_t)((const uint16_t *)p)[i] << 16; /* bf16 */
    float f;
    memcpy(&f, &u, 4);
    return f;
}

/* Small integers and halves in every operand: exact in bf16, so the sums differ only by the
 * rounding of the output. */
static void fill(kmux_dtype t, void *p, int64_t n, unsigned seed) {
    for (int64_t i = 0; i < n; i++) {
        float f = (float)((int)((i * 2654435761u + seed) % 9u) - 4) * 0.5f;
        if (t == KMUX_F32) {
            ((float *)p)[i] = f;
        } else {
            uint32_t u;
            memcpy(&u, &f, 4);
            ((uint16_t *)p)[i] = (uint16_t)(u >> 16);
        }
    }
}

/* The backward pair of one device and dtype: fused (one GEMM with the epilogue) and the GEMM
 * with the separate op, for DRELU (aux: the mask, y: the saved forward output, > 0 where a bit
 * is set) or BGRADB (g: the bias gradient). */
typedef struct bwd {
    kmux_plan *fused, *gemm, *op;
    int drelu;
} bwd;

static void bwd_make(kmux_device *dev, kmux_dtype t, int64_t m, int64_t n, int64_t k, int drelu,
                     bwd *v) {
    kmux_matmul_desc d = KMUX_MATMUL_DESC_INIT;
    d.m = m, d.n = n, d.k = k, d.lda = k, d.ldb = n, d.ldc = n;
    d.a_type = d.b_type = d.c_type = t;
    v->drelu = drelu;
    CHECK(kmux_matmul_plan_create(dev, &d, NULL, &v->gemm));
    d.epilogue = drelu ? KMUX_EPILOGUE_DRELU : KMUX_EPILOGUE_BGRADB;
    d.aux_ld = n, d.bias_type = t;
    CHECK(kmux_matmul_plan_create(dev, &d, NULL, &v->fused));
    if (drelu) {
        kmux_eltwise_desc e = KMUX_ELTWISE_DESC_INIT;
        e.alg = KMUX_ELTWISE_RELU, e.prop = KMUX_PROP_BACKWARD, e.use_dst_for_bwd = 1;
        e.dtype = t, e.n = m * n;
        CHECK(kmux_eltwise_plan_create(dev, &e, NULL, &v->op));
    } else {
        kmux_reduction_desc r = KMUX_REDUCTION_DESC_INIT;
        r.src_dtype = r.dst_dtype = t, r.ndims = 2;
        r.src_dims[0] = k, r.src_dims[1] = n, r.dst_dims[0] = 1, r.dst_dims[1] = n;
        CHECK(kmux_reduction_plan_create(dev, &r, NULL, &v->op));
    }
}

static double bwd_run(const bwd *v, int fused, kmux_stream *s, const void *a, const void *b,
                      const void *aux, const void *y, void *c, void *g) {
    double t0 = kmux_bench_now_ms();
    kmux_matmul_args ma = KMUX_MATMUL_ARGS_INIT;
    ma.alpha = &ONE, ma.beta = &ZERO, ma.A = a, ma.B = b, ma.C = c;
    if (fused) {
        ma.aux = (void *)aux, ma.bias_grad = g;
        CHECK(kmux_matmul_execute(v->fused, s, &ma));
    } else {
        CHECK(kmux_matmul_execute(v->gemm, s, &ma));
        if (v->drelu) {
            kmux_eltwise_args ea = KMUX_ELTWISE_ARGS_INIT;
            ea.dst = (void *)y, ea.diff_dst = c, ea.diff_src = c; /* dst: read by the backward */
            CHECK(kmux_eltwise_execute(v->op, s, &ea));
        } else {
            kmux_reduction_args ra = KMUX_REDUCTION_ARGS_INIT;
            ra.src = b, ra.dst = g;
            CHECK(kmux_reduction_execute(v->op, s, &ra));
        }
    }
    CHECK(kmux_stream_synchronize(s));
    return kmux_bench_now_ms() - t0;
}

/* The backward rows: DRELU and BGRADB, f32 and bf16, every device, interleaved rounds. */
static void backward(kmux_bench_cpus *cpus, int64_t M, int64_t N, int64_t K, int rounds, void *a,
                     void *b, void *c1, void *c2) {
    void *y = aligned_alloc(64, (size_t)(M * N) * 4),
         *mask = aligned_alloc(64, (size_t)(M * N) / 8 + 64);
    void *g = aligned_alloc(64, (size_t)N * 4 + 64);
    if (!y || !mask || !g) {
        fprintf(stderr, "bench_epilogue: no memory\n");
        exit(1);
    }
    const kmux_dtype dts[2] = {KMUX_F32, KMUX_BF16};
    for (int ti = 0; ti < 2; ti++) {
        const kmux_dtype t = dts[ti];
        fill(t, a, M * K, 1), fill(t, b, K * N, 2), fill(t, y, M * N, 4);
        for (int64_t i = 0; i < M * N; i += 8) { /* the mask of y > 0, as RELU_AUX writes it */
            unsigned byte = 0;
            for (int q = 0; q < 8 && i + q < M * N; q++)
                byte |= (unsigned)(value(t, y, i + q) > 0) << q;
            ((unsigned char *)mask)[i / 8] = (unsigned char)byte;
        }
        for (int drelu = 1; drelu >= 0; drelu--) {
            bwd v[NDEV];
            double tf[NDEV][MAX_ROUNDS], ts[NDEV][MAX_ROUNDS];
            for (int d = 0; d < NDEV; d++) {
                bwd_make(cpus->dev[d], t, M, N, K, drelu, &v[d]);
                bwd_run(&v[d], 1, cpus->st[d], a, b, mask, y, c1, g); /* warm-up */
                bwd_run(&v[d], 0, cpus->st[d], a, b, mask, y, c2, g);
            }
            for (int r = 0; r < rounds; r++)
                for (int d = 0; d < NDEV; d++) {
                    const int first = r % 2;
                    double *x0 = first ? &ts[d][r] : &tf[d][r], *x1 = first ? &tf[d][r] : &ts[d][r];
                    *x0 = bwd_run(&v[d], !first, cpus->st[d], a, b, mask, y, first ? c2 : c1, g);
                    *x1 = bwd_run(&v[d], first, cpus->st[d], a, b, mask, y, first ? c1 : c2, g);
                }
            for (int d = 0; d < NDEV; d++) {
                kmux_plan_info info;
                CHECK(kmux_plan_info_get(v[d].fused, &info));
                const double f = kmux_bench_median(tf[d], rounds),
                             s = kmux_bench_median(ts[d], rounds);
                char what[64];
                snprintf(what, sizeof what, "%s (%s)", info.impl, drelu ? "DRELU" : "BGRADB");
                printf("%-5s %-13s %-44s %10.3f %12.3f %6.2f %10s\n", kmux_dtype_name(t),
                       dev_ids[d], what, f, s, s / f, "-");
                kmux_plan_destroy(v[d].fused), kmux_plan_destroy(v[d].gemm);
                kmux_plan_destroy(v[d].op);
            }
        }
    }
    free(y), free(mask), free(g);
}

int main(int argc, char **argv) {
    int64_t M = 1024, N = 1024, K = 1024;
    int rounds = 7;
    for (int i = 1; i < argc; i++) {
        if (!strncmp(argv[i], "--m=", 4))
            M = atoll(argv[i] + 4);
        else if (!strncmp(argv[i], "--n=", 4))
            N = atoll(argv[i] + 4);
        else if (!strncmp(argv[i], "--k=", 4))
            K = atoll(argv[i] + 4);
        else if (!strncmp(argv[i], "--rounds=", 9))
            rounds = atoi(argv[i] + 9);
        else {
            fprintf(stderr, "usage: bench_epilogue [--m=M] [--n=N] [--k=K] [--rounds=R]\n");
            return 2;
        }
    }
    if (rounds < 1 || rounds > MAX_ROUNDS || M < 1 || N < 1 || K < 1) {
        fprintf(stderr, "bench_epilogue: sizes must be >= 1 and rounds in [1, %d]\n", MAX_ROUNDS);
        return 2;
    }
    kmux_bench_cpus cpus;
    kmux_bench_cpus_open("bench_epilogue", &cpus);
    /* CPU devices: host memory is device memory */
    void *a = aligned_alloc(64, (size_t)(M * K) * 4), *b = aligned_alloc(64, (size_t)(K * N) * 4);
    void *bias = aligned_alloc(64, (size_t)N * 4 + 64);
    void *c1 = aligned_alloc(64, (size_t)(M * N) * 4), *c2 = aligned_alloc(64, (size_t)(M * N) * 4);
    if (!a || !b || !bias || !c1 || !c2) return fprintf(stderr, "bench_epilogue: no memory\n"), 1;
    printf("bench_epilogue: C(%lld x %lld) = relu(A B + bias), k = %lld, %d threads, %d rounds "
           "(medians)\n",
           (long long)M, (long long)N, (long long)K, cpus.threads, rounds);
    printf("%-5s %-13s %-44s %10s %12s %6s %10s\n", "dtype", "device", "fused implementation",
           "fused ms", "separate ms", "gain", "max diff");
    const kmux_dtype dts[2] = {KMUX_F32, KMUX_BF16};
    for (int ti = 0; ti < 2; ti++) {
        const kmux_dtype t = dts[ti];
        fill(t, a, M * K, 1), fill(t, b, K * N, 2), fill(t, bias, N, 3);
        variant v[NDEV];
        for (int d = 0; d < NDEV; d++)
            plans_make(cpus.dev[d], t, M, N, K, &v[d]);
        double tf[NDEV][MAX_ROUNDS], ts[NDEV][MAX_ROUNDS];
        for (int d = 0; d < NDEV; d++) { /* warm-up: JIT, first touch */
            run_fused(&v[d], cpus.st[d], a, b, bias, c1);
            run_separate(&v[d], cpus.st[d], a, b, bias, c2);
        }
        for (int r = 0; r < rounds; r++)
            for (int d = 0; d < NDEV; d++) {
                if (r % 2 == 0) {
                    tf[d][r] = run_fused(&v[d], cpus.st[d], a, b, bias, c1);
                    ts[d][r] = run_separate(&v[d], cpus.st[d], a, b, bias, c2);
                } else {
                    ts[d][r] = run_separate(&v[d], cpus.st[d], a, b, bias, c2);
                    tf[d][r] = run_fused(&v[d], cpus.st[d], a, b, bias, c1);
                }
            }
        for (int d = 0; d < NDEV; d++) {
            run_fused(&v[d], cpus.st[d], a, b, bias, c1);
            run_separate(&v[d], cpus.st[d], a, b, bias, c2);
            double diff = 0;
            for (int64_t i = 0; i < M * N; i++) {
                const double x = value(t, c1, i), y = value(t, c2, i);
                const double rel = fabs(x - y) / (fabs(y) > 1 ? fabs(y) : 1);
                if (rel > diff || x != x) diff = x != x ? INFINITY : rel;
            }
            kmux_plan_info info;
            CHECK(kmux_plan_info_get(v[d].fused, &info));
            const double f = kmux_bench_median(tf[d], rounds), s = kmux_bench_median(ts[d], rounds);
            printf("%-5s %-13s %-44s %10.3f %12.3f %6.2f %10.2g\n", kmux_dtype_name(t), dev_ids[d],
                   info.impl, f, s, s / f, diff);
            plans_free(&v[d]);
        }
    }
    printf("backward: the GEMM with DRELU / BGRADB vs the GEMM then the separate op\n");
    backward(&cpus, M, N, K, rounds, a, b, c1, c2);
    free(a), free(b), free(bias), free(c1), free(c2);
    kmux_bench_cpus_close(&cpus);
    return 0;
}
