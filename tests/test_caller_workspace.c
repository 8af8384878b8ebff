/*
 * test_caller_workspace.c - plans that run in the caller's workspace (kmux_plan_prefs.
 * caller_workspace, as cuBLASLt's and cuDNN's workspace arguments): on every CPU device, every
 * implementation of a matmul and of the three convolution directions gives the same bits in the
 * caller's memory as in its own (the workspace is filled with NaN bytes first, so a read of
 * memory the plan did not write shows), several plans share one arena on one stream, a tuned
 * plan measures in a workspace of its own making, and a workspace that is missing, too small,
 * misaligned or overlapping an operand is refused with a message, the output left untouched.
 */
#define _POSIX_C_SOURCE 200809L
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "test_util.h"

static const char *const cpu_ids[] = {"ref", "cpu:onednn", "cpu:openblas", "cpu:auto"};
enum { NDEV = sizeof cpu_ids / sizeof cpu_ids[0] };

/* A problem: a matmul or a convolution, its operands on the host (CPU devices' memory). */
typedef struct problem {
    const char *name;
    int is_conv;
    kmux_matmul_desc mm;
    kmux_conv2d_desc cv;
    void *in[4]; /* A, B, C, bias or x, w, y */
    size_t bytes[4];
} problem;

static kmux_matmul_desc mm_desc(kmux_dtype t, unsigned epilogue) {
    kmux_matmul_desc d = KMUX_MATMUL_DESC_INIT;
    d.m = 67, d.n = 45, d.k = 129;
    d.lda = d.k, d.ldb = d.n, d.ldc = d.n;
    d.a_type = d.b_type = d.c_type = t;
    d.epilogue = epilogue;
    d.bias_type = KMUX_F32;
    return d;
}

static kmux_conv2d_desc cv_desc(kmux_conv_direction dir, kmux_layout layout, kmux_dtype t) {
    const tu_conv_geom g = {.n = 5,
                            .c = 8,
                            .h = 13,
                            .w = 11,
                            .k = 16,
                            .r = 3,
                            .s = 3,
                            .groups = 1,
                            .sh = 2,
                            .sw = 2,
                            .pt = 1,
                            .pb = 1,
                            .pl = 1,
                            .pr = 1,
                            .dh = 1,
                            .dw = 1};
    return tu_conv_desc(&g, dir, layout, t);
}

/* Small integers: every sum is exact in f32, so implementations agree bit for bit whatever
 * their order (and a +cvt result rounds once). */
static void problem_fill(problem *p, uint64_t seed) {
    int64_t n[4] = {0, 0, 0, 0};
    kmux_dtype t[4];
    if (p->is_conv) {
        tu_conv_elems(&p->cv, &n[0], &n[1], &n[2]);
        t[0] = t[1] = t[2] = p->cv.x_type;
    } else {
        const kmux_matmul_desc *d = &p->mm;
        n[0] = d->m * d->k, n[1] = d->k * d->n, n[2] = d->m * d->n;
        n[3] = (d->epilogue & KMUX_EPILOGUE_BIAS) ? d->n : 0;
        t[0] = d->a_type, t[1] = d->b_type, t[2] = d->c_type, t[3] = d->bias_type;
    }
    for (int i = 0; i < 4; i++) {
        p->in[i] = n[i] ? tu_fill_ints(t[i], n[i], 3, TU_DENSE, &seed) : NULL;
        p->bytes[i] = (size_t)n[i] * (t[i] == KMUX_F32 ? 4 : 2);
    }
}

static void problem_free(problem *p) {
    for (int i = 0; i < 4; i++)
        free(p->in[i]);
}

/* Index of the operand a problem writes. */
static int out_index(const problem *p) {
    if (!p->is_conv) return 2;
    return p->cv.direction == KMUX_CONV_FWD ? 2 : p->cv.direction == KMUX_CONV_BWD_DATA ? 0 : 1;
}

static kmux_status plan_create(kmux_device *dev, const problem *p, int caller_ws, kmux_plan **pl) {
    kmux_plan_prefs prefs = KMUX_PLAN_PREFS_INIT;
    prefs.caller_workspace = caller_ws;
    prefs.tune = KMUX_TUNE_OFF;
    return p->is_conv ? kmux_conv2d_plan_create(dev, &p->cv, &prefs, pl)
                      : kmux_matmul_plan_create(dev, &p->mm, &prefs, pl);
}

/* Runs plan on s with the problem's inputs, the output copied from p into out (beta = 1 reads
 * it), in workspace ws of ws_bytes. */
static kmux_status run(kmux_plan *plan, kmux_stream *s, const problem *p, void *out, void *ws,
                       size_t ws_bytes) {
    const float one = 1.0f;
    void *ops[4] = {p->in[0], p->in[1], p->in[2], p->in[3]};
    const int o = out_index(p);
    memcpy(out, p->in[o], p->bytes[o]);
    ops[o] = out;
    kmux_status st;
    if (p->is_conv) {
        kmux_conv2d_args a = KMUX_CONV2D_ARGS_INIT;
        a.alpha = a.beta = &one;
        a.x = ops[0], a.w = ops[1], a.y = ops[2];
        a.workspace = ws, a.workspace_bytes = ws_bytes;
        st = kmux_conv2d_execute(plan, s, &a);
    } else {
        kmux_matmul_args a = KMUX_MATMUL_ARGS_INIT;
        a.alpha = a.beta = &one;
        a.A = ops[0], a.B = ops[1], a.C = ops[2], a.bias = ops[3];
        a.workspace = ws, a.workspace_bytes = ws_bytes;
        st = kmux_matmul_execute(plan, s, &a);
    }
    if (st == KMUX_OK) st = kmux_stream_synchronize(s);
    return st;
}

static problem make_problem(int i) {
    problem p;
    memset(&p, 0, sizeof p);
    switch (i) {
    case 0:
        p.name = "matmul bf16 bias+relu";
        p.mm = mm_desc(KMUX_BF16, KMUX_EPILOGUE_BIAS | KMUX_EPILOGUE_RELU);
        break;
    case 1:
        p.name = "matmul f16";
        p.mm = mm_desc(KMUX_F16, 0);
        break;
    case 2:
        p.name = "matmul f32 gelu";
        p.mm = mm_desc(KMUX_F32, KMUX_EPILOGUE_GELU);
        break;
    default:
        p.is_conv = 1;
        p.name = i == 3   ? "conv bf16 NHWC fwd"
                 : i == 4 ? "conv f16 NCHW bwd-data"
                          : "conv bf16 NHWC bwd-weights";
        p.cv = cv_desc(i == 3   ? KMUX_CONV_FWD
                       : i == 4 ? KMUX_CONV_BWD_DATA
                                : KMUX_CONV_BWD_WEIGHTS,
                       i == 4 ? KMUX_NCHW : KMUX_NHWC, i == 4 ? KMUX_F16 : KMUX_BF16);
        break;
    }
    problem_fill(&p, 77 + (uint64_t)i);
    return p;
}
enum { NPROBLEMS = 6 };

/* Every implementation of p on dev: own workspace and caller's give the same bits. Returns how
 * many implementations needed a workspace. */
static int compare_impls(kmux_device *dev, const problem *p) {
    kmux_plan *own = NULL, *callers = NULL;
    kmux_status st = plan_create(dev, p, 0, &own);
    if (st == KMUX_ERR_UNSUPPORTED) return 0; /* not this device's problem */
    TU_OK(st);
    TU_OK(plan_create(dev, p, 1, &callers));
    kmux_stream *s = NULL;
    TU_OK(kmux_stream_create(dev, &s));
    const int o = out_index(p);
    void *want = malloc(p->bytes[o]), *got = malloc(p->bytes[o]);
    cr_assert(want && got);
    int needed = 0;
    for (int impl = 0;; impl++) {
        kmux_plan_info io, ic;
        TU_OK(kmux_plan_info_get(own, &io));
        TU_OK(kmux_plan_info_get(callers, &ic));
        cr_expect_str_eq(ic.impl, io.impl, "%s on %s: implementation %d", p->name, ic.device, impl);
        cr_expect_eq(ic.workspace_bytes, io.workspace_bytes,
                     "%s on %s (%s): the caller needs what the plan would hold", p->name, ic.device,
                     ic.impl);
        const size_t need = ic.workspace_bytes;
        needed += need > 0;
        void *ws = NULL;
        if (need) {
            TU_OK(kmux_malloc(dev, need, &ws));
            memset(ws, 0xff, need); /* NaN in every float type: a read before a write shows */
        }
        TU_OK(run(own, s, p, want, NULL, 0));
        TU_OK(run(callers, s, p, got, ws, need));
        cr_expect(memcmp(got, want, p->bytes[o]) == 0,
                  "%s on %s (%s, workspace %zu bytes): the caller's workspace changed the result",
                  p->name, ic.device, ic.impl, need);
        size_t touched = 0; /* the plan worked in the caller's memory, not in memory of its own */
        for (size_t i = 0; i < need; i++)
            touched += ((unsigned char *)ws)[i] != 0xff;
        cr_expect(need == 0 || touched > 0,
                  "%s on %s (%s): needs %zu bytes of workspace but wrote none of the caller's",
                  p->name, ic.device, ic.impl, need);
        if (ws) TU_OK(kmux_free(dev, ws));
        kmux_status a = kmux_plan_next_impl(own), b = kmux_plan_next_impl(callers);
        cr_assert_eq(a, b, "%s: both plans have the same implementations", p->name);
        if (a == KMUX_ERR_LAST_IMPL) break;
        TU_OK(a);
    }
    free(want);
    free(got);
    TU_OK(kmux_stream_destroy(s));
    TU_OK(kmux_plan_destroy(own));
    TU_OK(kmux_plan_destroy(callers));
    return needed;
}

Test(caller_workspace, every_cpu_implementation_gives_the_same_bits) {
    kmux_context *ctx = tu_context();
    int with_ws[NDEV] = {0};
    for (int d = 0; d < NDEV; d++) {
        kmux_device *dev = tu_device(ctx, cpu_ids[d]);
        if (!dev) continue;
        {
            kmux_plan *pl = NULL;
            problem p = make_problem(2);
            TU_OK(plan_create(dev, &p, 1, &pl)); /* every CPU device runs in the caller's memory */
            TU_OK(kmux_plan_destroy(pl));
            problem_free(&p);
        }
        for (int i = 0; i < NPROBLEMS; i++) {
            problem p = make_problem(i);
            with_ws[d] += compare_impls(dev, &p);
            problem_free(&p);
        }
    }
    /* not vacuous: the +cvt and im2col paths of both real CPU backends use a workspace */
    for (int d = 1; d < 3; d++)
        if (tu_device(ctx, cpu_ids[d]))
            cr_expect_gt(with_ws[d], 0, "%s: no implementation used a workspace", cpu_ids[d]);
    TU_OK(kmux_context_destroy(ctx));
}

/* A plan that needs a workspace on dev, from the problems above; NULL when none does. */
static kmux_plan *plan_with_workspace(kmux_device *dev, problem *out, size_t *need) {
    for (int i = 0; i < NPROBLEMS; i++) {
        problem p = make_problem(i);
        kmux_plan *pl = NULL;
        if (plan_create(dev, &p, 1, &pl) == KMUX_OK) {
            kmux_plan_info info;
            TU_OK(kmux_plan_info_get(pl, &info));
            if (info.workspace_bytes > 0) {
                *out = p;
                *need = info.workspace_bytes;
                return pl;
            }
            TU_OK(kmux_plan_destroy(pl));
        }
        problem_free(&p);
    }
    return NULL;
}

Test(caller_workspace, a_bad_workspace_is_refused_and_the_output_kept) {
    kmux_context *ctx = tu_context();
    int tried = 0;
    for (int d = 1; d < NDEV; d++) {
        kmux_device *dev = tu_device(ctx, cpu_ids[d]);
        if (!dev) continue;
        problem p;
        size_t need = 0;
        kmux_plan *pl = plan_with_workspace(dev, &p, &need);
        if (!pl) continue;
        tried++;
        kmux_stream *s = NULL;
        TU_OK(kmux_stream_create(dev, &s));
        const int o = out_index(&p);
        const size_t ob = p.bytes[o];
        char *out = malloc(ob), *ws = NULL;
        cr_assert(out);
        TU_OK(kmux_malloc(dev, need + 128, (void **)&ws));
        char needs[64];
        snprintf(needs, sizeof needs, "needs %zu bytes", need);
        /* missing, too small */
        TU_STATUS(KMUX_ERR_WORKSPACE, run(pl, s, &p, out, NULL, 0));
        cr_expect(strstr(kmux_last_error(), needs) != NULL, "%s: %s", p.name, kmux_last_error());
        cr_expect(memcmp(out, p.in[o], ob) == 0, "%s: a refused call wrote its output", p.name);
        TU_STATUS(KMUX_ERR_WORKSPACE, run(pl, s, &p, out, ws, need - 1));
        cr_expect(strstr(kmux_last_error(), needs) &&
                      strstr(kmux_last_error(), "args->workspace_bytes ="),
                  "%s", kmux_last_error());
        cr_expect(memcmp(out, p.in[o], ob) == 0);
        /* misaligned */
        TU_STATUS(KMUX_ERR_INVALID_ARGUMENT, run(pl, s, &p, out, ws + 8, need));
        cr_expect(strstr(kmux_last_error(), "-byte aligned on ") != NULL, "%s", kmux_last_error());
        cr_expect(memcmp(out, p.in[o], ob) == 0);
        /* overlapping the output: the workspace is the output buffer itself */
        if (ob >= need) {
            char *big = NULL;
            TU_OK(kmux_malloc(dev, ob, (void **)&big));
            const float one = 1.0f;
            kmux_status st;
            if (p.is_conv) {
                kmux_conv2d_args a = KMUX_CONV2D_ARGS_INIT;
                a.alpha = a.beta = &one;
                a.x = p.in[0], a.w = p.in[1], a.y = p.in[2];
                void **slot = o == 0 ? &a.x : o == 1 ? &a.w : &a.y;
                *slot = big;
                a.workspace = big, a.workspace_bytes = need;
                st = kmux_conv2d_execute(pl, s, &a);
            } else {
                kmux_matmul_args a = KMUX_MATMUL_ARGS_INIT;
                a.alpha = a.beta = &one;
                a.A = p.in[0], a.B = p.in[1], a.C = big, a.bias = p.in[3];
                a.workspace = big, a.workspace_bytes = need;
                st = kmux_matmul_execute(pl, s, &a);
            }
            cr_expect_eq(st, KMUX_ERR_INVALID_ARGUMENT, "%s: %s", p.name, kmux_last_error());
            cr_expect(strstr(kmux_last_error(), "overlaps args->") != NULL, "%s",
                      kmux_last_error());
            TU_OK(kmux_free(dev, big));
        }
        /* enough: runs */
        TU_OK(run(pl, s, &p, out, ws, need));
        TU_OK(kmux_free(dev, ws));
        free(out);
        TU_OK(kmux_stream_destroy(s));
        TU_OK(kmux_plan_destroy(pl));
        problem_free(&p);
    }
    cr_expect_gt(tried, 0, "no CPU device had a plan that needs a workspace");
    TU_OK(kmux_context_destroy(ctx));
}

Test(caller_workspace, plans_on_one_stream_share_one_arena) {
    kmux_context *ctx = tu_context();
    kmux_device *dev = tu_device(ctx, "cpu:onednn");
    if (!dev) dev = tu_device(ctx, "cpu:openblas");
    if (!dev) cr_skip_test("neither cpu:onednn nor cpu:openblas is available");
    problem p[NPROBLEMS];
    kmux_plan *own[NPROBLEMS], *callers[NPROBLEMS];
    size_t arena_bytes = 0, sum = 0;
    for (int i = 0; i < NPROBLEMS; i++) {
        p[i] = make_problem(i);
        TU_OK(plan_create(dev, &p[i], 0, &own[i]));
        TU_OK(plan_create(dev, &p[i], 1, &callers[i]));
        kmux_plan_info info;
        TU_OK(kmux_plan_info_get(callers[i], &info));
        if (info.workspace_bytes > arena_bytes) arena_bytes = info.workspace_bytes;
        sum += info.workspace_bytes;
    }
    cr_expect_gt(arena_bytes, 0);
    cr_expect_lt(arena_bytes, sum, "one arena is smaller than the plans' workspaces together");
    void *arena = NULL;
    TU_OK(kmux_malloc(dev, arena_bytes, &arena));
    memset(arena, 0xff, arena_bytes);
    kmux_stream *s = NULL;
    TU_OK(kmux_stream_create(dev, &s));
    for (int round = 0; round < 2; round++)
        for (int i = 0; i < NPROBLEMS; i++) {
            const int o = out_index(&p[i]);
            void *want = malloc(p[i].bytes[o]), *got = malloc(p[i].bytes[o]);
            cr_assert(want && got);
            TU_OK(run(own[i], s, &p[i], want, NULL, 0));
            TU_OK(run(callers[i], s, &p[i], got, arena, arena_bytes));
            cr_expect(memcmp(got, want, p[i].bytes[o]) == 0, "%s in the shared arena", p[i].name);
            free(want);
            free(got);
        }
    TU_OK(kmux_stream_destroy(s));
    TU_OK(kmux_free(dev, arena));
    for (int i = 0; i < NPROBLEMS; i++) {
        TU_OK(kmux_plan_destroy(own[i]));
        TU_OK(kmux_plan_destroy(callers[i]));
        problem_free(&p[i]);
    }
    TU_OK(kmux_context_destroy(ctx));
}

/* Tuning times every implementation at plan creation: in a workspace the core makes for it, since
 * the plan has none; the tuned plan then runs in the caller's. */
Test(caller_workspace, a_tuned_plan_measures_without_a_workspace_of_its_own) {
    char cache[] = "/tmp/kmux-cws-tune-XXXXXX";
    int fd = mkstemp(cache);
    cr_assert(fd >= 0);
    close(fd);
    setenv("KMUX_TUNE_CACHE", cache, 1);
    setenv("KMUX_TUNE_BUDGET_MS", "20", 1);
    kmux_context *ctx = tu_context();
    kmux_device *dev = tu_device(ctx, "cpu:auto");
    if (!dev) cr_skip_test("cpu:auto is not available");
    problem p = make_problem(3);
    kmux_plan_prefs prefs = KMUX_PLAN_PREFS_INIT;
    prefs.caller_workspace = 1;
    prefs.tune = KMUX_TUNE_ON;
    kmux_plan *pl = NULL;
    TU_OK(kmux_conv2d_plan_create(dev, &p.cv, &prefs, &pl));
    cr_expect_gt(tu_count_lines(cache, NULL), 0, "the verdict was cached");
    kmux_plan_info info;
    TU_OK(kmux_plan_info_get(pl, &info));
    void *ws = NULL;
    if (info.workspace_bytes) TU_OK(kmux_malloc(dev, info.workspace_bytes, &ws));
    kmux_stream *s = NULL;
    TU_OK(kmux_stream_create(dev, &s));
    void *out = malloc(p.bytes[2]);
    TU_OK(run(pl, s, &p, out, ws, info.workspace_bytes));
    free(out);
    if (ws) TU_OK(kmux_free(dev, ws));
    TU_OK(kmux_stream_destroy(s));
    TU_OK(kmux_plan_destroy(pl));
    problem_free(&p);
    TU_OK(kmux_context_destroy(ctx));
    unlink(cache);
}

Test(caller_workspace, prefs_value_outside_0_and_1_is_refused) {
    kmux_context *ctx = tu_context();
    kmux_device *dev = tu_device(ctx, "ref");
    problem p = make_problem(2);
    kmux_plan_prefs prefs = KMUX_PLAN_PREFS_INIT;
    prefs.caller_workspace = 2;
    kmux_plan *pl = NULL;
    TU_STATUS(KMUX_ERR_INVALID_ARGUMENT, kmux_matmul_plan_create(dev, &p.mm, &prefs, &pl));
    cr_expect_null(pl);
    cr_expect_str_eq(kmux_last_error(),
                     "kmux_matmul_plan_create: prefs->caller_workspace = 2 must be 0 or 1");
    problem_free(&p);
    TU_OK(kmux_context_destroy(ctx));
}

/* A plan that owns its workspace ignores the args' fields (as the header says), even nonsense. */
Test(caller_workspace, an_owning_plan_ignores_the_args_workspace) {
    kmux_context *ctx = tu_context();
    for (int d = 0; d < NDEV; d++) {
        kmux_device *dev = tu_device(ctx, cpu_ids[d]);
        if (!dev) continue;
        problem p = make_problem(0);
        kmux_plan *pl = NULL;
        TU_OK(plan_create(dev, &p, 0, &pl));
        kmux_stream *s = NULL;
        TU_OK(kmux_stream_create(dev, &s));
        void *want = malloc(p.bytes[2]), *got = malloc(p.bytes[2]);
        char junk[8];
        TU_OK(run(pl, s, &p, want, NULL, 0));
        TU_OK(run(pl, s, &p, got, junk + 1, 3));
        cr_expect(memcmp(got, want, p.bytes[2]) == 0, "%s", cpu_ids[d]);
        free(want);
        free(got);
        TU_OK(kmux_stream_destroy(s));
        TU_OK(kmux_plan_destroy(pl));
        problem_free(&p);
    }
    TU_OK(kmux_context_destroy(ctx));
}
