/*
 * test_conformance_gemm.c - cross-backend conformance of GEMM: every dtype combination of
 * kmux.h x storage order x transposes x odd sizes and padded leading dimensions x alpha/beta
 * (0, NaN in C) x k = 0 x epilogues x strided batches (up to more than 65535 matrices) x fp8
 * scales, through kmux_matmul_plan_create/execute (every implementation of the plan),
 * kmux_gemm_ex and kmux_gemm_strided_batched_ex, on every available device, against ref.
 * One parameterized test per dtype combination; see conformance/conformance.h for the scheme.
 */
#include <criterion/parameterized.h>

#include "conformance.h"

#define MAX_CASES 400

typedef struct gemm_param {
    int combo; /* index into cf_gemm_combos() */
} gemm_param;

typedef struct shape {
    int64_t m, n, k, pad;
    double alpha, beta;
    int c_nan;
} shape;

static int add_case(cf_gemm_case *out, int n, const cf_gemm_case *c) {
    cr_assert(n < MAX_CASES, "test bug: more than %d cases", MAX_CASES);
    out[n] = *c;
    return n + 1;
}

static cf_gemm_case make_case(const cf_combo *cb, int entry, kmux_order o, kmux_transpose ta,
                              kmux_transpose tb, const shape *s) {
    cf_gemm_case c;
    memset(&c, 0, sizeof c);
    c.entry = entry;
    c.order = o;
    c.transa = ta;
    c.transb = tb;
    c.m = s->m, c.n = s->n, c.k = s->k;
    c.batch = 1;
    c.a_type = cb->a_type, c.b_type = cb->b_type, c.c_type = cb->c_type;
    c.compute = cb->compute_type;
    c.epilogue = KMUX_EPILOGUE_NONE;
    c.bias_type = KMUX_F32;
    c.alpha = s->alpha;
    c.beta = s->beta;
    c.c_nan = s->c_nan;
    c.fill = CF_FILL_EXACT;
    cf_gemm_layout(&c, s->pad, 0);
    return c;
}

/** Every case of one dtype combination. */
static int build_cases(const cf_combo *cb, cf_gemm_case *out) {
    static const kmux_order orders[2] = {KMUX_ROW_MAJOR, KMUX_COL_MAJOR};
    static const kmux_transpose tr[2] = {KMUX_NO_TRANS, KMUX_TRANS};
    /* odd sizes and primes; a pad > 0 makes every leading dimension non-contiguous */
    static const shape quick[] = {
        {1, 1, 1, 0, 1, 0, 0},    {7, 17, 33, 0, 1, 1, 0}, {17, 7, 5, 3, 2, -1, 0},
        {33, 1, 127, 0, 1, 0, 1}, {1, 33, 7, 1, -1, 2, 0}, {127, 13, 31, 2, 1, 1, 0},
        {31, 37, 1, 0, 1, -1, 0},
    };
    static const shape full[] = {
        {255, 129, 257, 5, 1, 1, 0}, {64, 64, 64, 0, 1, 0, 1},   {1, 1000, 3, 0, 1, 1, 0},
        {1000, 1, 3, 0, 1, 1, 0},    {97, 101, 103, 7, 2, 1, 0}, {2, 3, 1031, 0, 1, 0, 0},
        {129, 65, 17, 1, -1, 1, 0},
    };
    const int isint = cb->c_type == KMUX_I32;
    /* KMUX_CONFORMANCE_SHAPES=small (an emulated device): each layout L takes about half of the
     * shapes, the other half going to the neighbouring layouts, so that every shape still meets
     * several layouts and every layout meets padding, tile edges and each alpha/beta kind */
    const int small = cf_small();
    int n = 0;
    cf_gemm_case c;

    /* A. storage order x transposes x shapes, through plans */
    for (int o = 0; o < 2; o++)
        for (int a = 0; a < 2; a++)
            for (int b = 0; b < 2; b++) {
                const int lay = o * 4 + a * 2 + b;
                for (size_t i = 0; i < sizeof quick / sizeof quick[0]; i++) {
                    if (small && ((int)i + lay) % 2 != 0) continue;
                    c = make_case(cb, CF_ENTRY_PLAN, orders[o], tr[a], tr[b], &quick[i]);
                    n = add_case(out, n, &c);
                }
                if (cf_full())
                    for (size_t i = 0; i < sizeof full / sizeof full[0]; i++) {
                        c = make_case(cb, CF_ENTRY_PLAN, orders[o], tr[a], tr[b], &full[i]);
                        n = add_case(out, n, &c);
                    }
                { /* random reals compared within a bound (i8: full-range integers, exact) */
                    shape r1 = {7, 17, 33, 0, isint ? 2 : 1.5, isint ? -1 : -0.5, 0};
                    shape r2 = {127, 13, 31, 1, isint ? -1 : -0.75, 0, 1};
                    if (!small || lay % 2 == 0) {
                        c = make_case(cb, CF_ENTRY_PLAN, orders[o], tr[a], tr[b], &r1);
                        c.fill = CF_FILL_RANDOM;
                        n = add_case(out, n, &c);
                    }
                    if (!small || lay % 2 == 1) {
                        c = make_case(cb, CF_ENTRY_PLAN, orders[o], tr[a], tr[b], &r2);
                        c.fill = CF_FILL_RANDOM;
                        n = add_case(out, n, &c);
                    }
                }
            }
    { /* m * n >= 64 x 64 x 16: GPU kernels switch to their large tile (64 x 64 x 16 in
         kernels/gpu); m, n, k are multiples of none of its sizes */
        shape big = {263, 251, 19, 1, 1, 1, 0};
        c = make_case(cb, CF_ENTRY_PLAN, KMUX_COL_MAJOR, KMUX_TRANS, KMUX_NO_TRANS, &big);
        n = add_case(out, n, &c);
    }

    /* B. degenerate sizes and scalars (reference BLAS semantics of kmux.h) */
    for (int o = 0; o < 2; o++) {
        shape k0 = {5, 3, 0, 1, 1, 2, 0}, k0n = {5, 3, 0, 0, 1, 0, 1};
        c = make_case(cb, CF_ENTRY_PLAN, orders[o], tr[o], KMUX_NO_TRANS, &k0);
        c.null_ab = 1; /* k == 0: A and B are not read and may be NULL */
        n = add_case(out, n, &c);
        c = make_case(cb, CF_ENTRY_GEMM_EX, orders[o], KMUX_NO_TRANS, tr[o], &k0n);
        c.null_ab = 1;
        n = add_case(out, n, &c);
        shape a0 = {6, 5, 4, 1, 0, 1, 0}, a0n = {6, 5, 4, 0, 0, 0, 1}, a0m = {9, 4, 3, 0, 0, -1, 0};
        c = make_case(cb, CF_ENTRY_PLAN, orders[o], tr[o], tr[1 - o], &a0);
        c.ab_nan = 1; /* alpha == 0: A and B are not read, NaN in them must not show */
        n = add_case(out, n, &c);
        c = make_case(cb, CF_ENTRY_GEMM_EX, orders[o], KMUX_NO_TRANS, KMUX_NO_TRANS, &a0n);
        c.ab_nan = 1;
        n = add_case(out, n, &c);
        c = make_case(cb, CF_ENTRY_GEMM_EX, orders[o], KMUX_TRANS, KMUX_NO_TRANS, &a0m);
        c.null_ab = 1;
        n = add_case(out, n, &c);
        /* m == 0 or n == 0: nothing happens (C keeps its canaries) */
        shape m0 = {0, 5, 3, 0, 1, 1, 0}, n0 = {4, 0, 3, 0, 1, 1, 0};
        c = make_case(cb, CF_ENTRY_GEMM_EX, orders[o], KMUX_NO_TRANS, KMUX_NO_TRANS, &m0);
        n = add_case(out, n, &c);
        c = make_case(cb, CF_ENTRY_GEMM_EX, orders[o], KMUX_TRANS, KMUX_TRANS, &n0);
        n = add_case(out, n, &c);
        /* beta == 0 with NaN in C, larger k */
        shape bn = {9, 11, 65, 1, 1, 0, 1};
        c = make_case(cb, CF_ENTRY_PLAN, orders[o], tr[o], tr[o], &bn);
        n = add_case(out, n, &c);
    }

    /* C. epilogues (plans only), bias of f32 and of the output type */
    {
        static const unsigned epis[] = {KMUX_EPILOGUE_BIAS, KMUX_EPILOGUE_RELU,
                                        KMUX_EPILOGUE_BIAS | KMUX_EPILOGUE_RELU, KMUX_EPILOGUE_GELU,
                                        KMUX_EPILOGUE_BIAS | KMUX_EPILOGUE_GELU};
        struct {
            kmux_order o;
            kmux_transpose a, b;
            int64_t pad;
        } lay[4] = {{KMUX_ROW_MAJOR, KMUX_NO_TRANS, KMUX_NO_TRANS, 0},
                    {KMUX_COL_MAJOR, KMUX_TRANS, KMUX_NO_TRANS, 2},
                    {KMUX_ROW_MAJOR, KMUX_TRANS, KMUX_TRANS, 1},
                    {KMUX_COL_MAJOR, KMUX_NO_TRANS, KMUX_TRANS, 0}};
        kmux_dtype bias_types[2] = {KMUX_F32, cb->c_type};
        int nbias = cb->c_type == KMUX_F32 ? 1 : 2;
        for (size_t e = 0; e < sizeof epis / sizeof epis[0]; e++) {
            /* the core defines no epilogue for integer GEMM (KMUX_ERR_INVALID_ARGUMENT) */
            if (isint) continue;
            for (int bt = 0; bt < ((epis[e] & KMUX_EPILOGUE_BIAS) ? nbias : 1); bt++)
                for (int l = 0; l < 4; l++) {
                    /* small: one layout per (epilogue, bias type), rotating */
                    if (small && l != ((int)e + bt) % 4) continue;
                    shape s = {17, 33, 7, lay[l].pad, 1, l & 1 ? 1 : 0, (l & 1) == 0};
                    c = make_case(cb, CF_ENTRY_PLAN, lay[l].o, lay[l].a, lay[l].b, &s);
                    c.epilogue = epis[e];
                    c.bias_type = bias_types[bt];
                    n = add_case(out, n, &c);
                }
            if (!isint && epis[e] != KMUX_EPILOGUE_BIAS) {
                shape s = {29, 19, 45, 1, 1, 1, 0};
                c = make_case(cb, CF_ENTRY_PLAN, KMUX_ROW_MAJOR, KMUX_NO_TRANS, KMUX_TRANS, &s);
                c.epilogue = epis[e];
                c.fill = CF_FILL_RANDOM;
                n = add_case(out, n, &c);
            }
        }
    }

    /* D. strided batches */
    {
        struct {
            int entry;
            kmux_order o;
            kmux_transpose a, b;
            shape s;
            int64_t batch, spad;
            int bcast; /* 1: stride_a = 0, 2: stride_b = 0 */
            unsigned epi;
        } bl[] = {
            {CF_ENTRY_BATCHED_EX,
             KMUX_ROW_MAJOR,
             KMUX_NO_TRANS,
             KMUX_NO_TRANS,
             {5, 7, 3, 1, 1, 1, 0},
             3,
             5,
             0,
             0},
            {CF_ENTRY_BATCHED_EX,
             KMUX_COL_MAJOR,
             KMUX_TRANS,
             KMUX_TRANS,
             {3, 4, 6, 0, 2, 0, 1},
             4,
             3,
             0,
             0},
            {CF_ENTRY_BATCHED_EX,
             KMUX_ROW_MAJOR,
             KMUX_TRANS,
             KMUX_NO_TRANS,
             {1, 9, 8, 2, 1, -1, 0},
             2,
             0,
             0,
             0},
            {CF_ENTRY_BATCHED_EX,
             KMUX_COL_MAJOR,
             KMUX_NO_TRANS,
             KMUX_TRANS,
             {6, 1, 5, 1, 1, 1, 0},
             3,
             2,
             0,
             0},
            {CF_ENTRY_BATCHED_EX,
             KMUX_ROW_MAJOR,
             KMUX_NO_TRANS,
             KMUX_NO_TRANS,
             {4, 5, 6, 0, 1, 0, 1},
             3,
             1,
             1,
             0},
            {CF_ENTRY_BATCHED_EX,
             KMUX_COL_MAJOR,
             KMUX_NO_TRANS,
             KMUX_TRANS,
             {5, 3, 7, 1, 1, 1, 0},
             3,
             0,
             2,
             0},
            {CF_ENTRY_PLAN,
             KMUX_ROW_MAJOR,
             KMUX_NO_TRANS,
             KMUX_NO_TRANS,
             {3, 5, 9, 1, 1, 1, 0},
             4,
             2,
             0,
             isint ? 0u : KMUX_EPILOGUE_BIAS},
            {CF_ENTRY_PLAN,
             KMUX_COL_MAJOR,
             KMUX_TRANS,
             KMUX_NO_TRANS,
             {7, 2, 5, 0, 1, 0, 1},
             3,
             0,
             0,
             isint ? 0u : KMUX_EPILOGUE_RELU},
            /* more than 65535 tiny matrices (a grid-dimension limit on GPUs) */
            {CF_ENTRY_BATCHED_EX,
             KMUX_ROW_MAJOR,
             KMUX_NO_TRANS,
             KMUX_NO_TRANS,
             {2, 3, 2, 0, 1, 1, 0},
             65537,
             0,
             0,
             0},
            {CF_ENTRY_PLAN,
             KMUX_COL_MAJOR,
             KMUX_TRANS,
             KMUX_NO_TRANS,
             {1, 2, 3, 0, 1, 0, 1},
             70001,
             1,
             0,
             0},
            /* batch_count == 0 does nothing */
            {CF_ENTRY_BATCHED_EX,
             KMUX_ROW_MAJOR,
             KMUX_NO_TRANS,
             KMUX_NO_TRANS,
             {3, 3, 3, 0, 1, 1, 0},
             0,
             0,
             0,
             0},
        };
        /* small: the batches beyond 65535 matrices (a grid loop of the GPU kernels, the same
           code for every dtype, and the slowest cases to emulate: some 45 s of CPU each) on one
           dtype row only, and only the one through plans (70001 matrices, padded strides,
           beta = 0 over NaN) */
        const int big_batches =
            !small || (cb->a_type == KMUX_F32 && cb->b_type == KMUX_F32 && cb->c_type == KMUX_F32 &&
                       cb->compute_type == KMUX_COMPUTE_F32);
        for (size_t i = 0; i < sizeof bl / sizeof bl[0]; i++) {
            if (bl[i].batch > 65535 && (!big_batches || (small && bl[i].entry != CF_ENTRY_PLAN)))
                continue;
            c = make_case(cb, bl[i].entry, bl[i].o, bl[i].a, bl[i].b, &bl[i].s);
            c.batch = bl[i].batch;
            cf_gemm_layout(&c, bl[i].s.pad, bl[i].spad);
            if (c.batch == 0) c.stride_a = c.stride_b = c.stride_c = 1;
            if (bl[i].bcast == 1) c.stride_a = 0;
            if (bl[i].bcast == 2) c.stride_b = 0;
            c.epilogue = bl[i].epi;
            n = add_case(out, n, &c);
        }
        {
            shape s = {9, 6, 21, 1, isint ? 1 : 0.5, 1, 0};
            c = make_case(cb, CF_ENTRY_BATCHED_EX, KMUX_COL_MAJOR, KMUX_TRANS, KMUX_TRANS, &s);
            c.batch = 5;
            cf_gemm_layout(&c, 1, 3);
            c.fill = CF_FILL_RANDOM;
            n = add_case(out, n, &c);
        }
    }

    /* E. kmux_gemm_ex over every layout */
    for (int o = 0; o < 2; o++)
        for (int a = 0; a < 2; a++)
            for (int b = 0; b < 2; b++) {
                const int lay = o * 4 + a * 2 + b; /* small: one of the three per layout */
                shape s1 = {7, 17, 33, 0, 1, 1, 0}, s2 = {17, 7, 5, 3, 2, -1, 0};
                if (!small || lay % 3 == 0) {
                    c = make_case(cb, CF_ENTRY_GEMM_EX, orders[o], tr[a], tr[b], &s1);
                    n = add_case(out, n, &c);
                }
                if (!small || lay % 3 == 1) {
                    c = make_case(cb, CF_ENTRY_GEMM_EX, orders[o], tr[a], tr[b], &s2);
                    n = add_case(out, n, &c);
                }
                if (!small || lay % 3 == 2) {
                    shape s3 = {13, 11, 29, 1, 1, 0, 1};
                    c = make_case(cb, CF_ENTRY_GEMM_EX, orders[o], tr[a], tr[b], &s3);
                    c.fill = CF_FILL_RANDOM;
                    n = add_case(out, n, &c);
                }
            }

    /* F. fp8 scales and amax_d */
    if (kmux_dtype_is_fp8(cb->a_type)) {
        shape s1 = {7, 17, 33, 0, 1, 0, 1}, s2 = {9, 5, 12, 1, 1, 1, 0};
        c = make_case(cb, CF_ENTRY_PLAN, KMUX_ROW_MAJOR, KMUX_NO_TRANS, KMUX_NO_TRANS, &s1);
        c.scales = 1;
        n = add_case(out, n, &c);
        c = make_case(cb, CF_ENTRY_PLAN, KMUX_COL_MAJOR, KMUX_TRANS, KMUX_NO_TRANS, &s2);
        c.scales = 1;
        n = add_case(out, n, &c);
        c.fill = CF_FILL_RANDOM;
        n = add_case(out, n, &c);
    }
    return n;
}

ParameterizedTestParameters(conformance_gemm, combo) {
    static gemm_param params[64];
    cf_combo combos[64];
    int n = cf_gemm_combos(combos, 64);
    for (int i = 0; i < n; i++)
        params[i].combo = i;
    return cr_make_param_array(gemm_param, params, (size_t)n);
}

ParameterizedTest(gemm_param *p, conformance_gemm, combo) {
    cf_combo combos[64];
    int ncombo = cf_gemm_combos(combos, 64);
    cr_assert(p->combo < ncombo);
    const cf_combo *cb = &combos[p->combo];
    cf_gemm_case *cases = malloc(MAX_CASES * sizeof *cases);
    cr_assert(cases);
    int n = build_cases(cb, cases);
    long only = cf_only_case();
    char name[128];
    snprintf(name, sizeof name, "gemm a=%s b=%s c=%s compute=%s", kmux_dtype_name(cb->a_type),
             kmux_dtype_name(cb->b_type), kmux_dtype_name(cb->c_type),
             kmux_compute_type_name(cb->compute_type));
    cf_env env;
    cf_env_init(&env);
    for (int i = 0; i < n; i++) {
        if (only >= 0 && i != only) continue;
        cases[i].seed = cf_seed((uint64_t)p->combo + 1, (uint64_t)i);
        char tag[256];
        snprintf(tag, sizeof tag, "[%s, case %d; rerun alone with KMUX_CONFORMANCE_CASE=%d]", name,
                 i, i);
        cf_gemm_check_case(&env, &cases[i], tag);
    }
    cf_summary(name);
    cf_env_fini(&env);
    free(cases);
}
