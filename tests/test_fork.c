/*
 * test_fork.c - kmux in a fork() child, on every CPU device. The parent runs GEMM, a
 * convolution and a large ReLU (kmux's own kernel) with 4 threads (so that thread pools exist:
 * libgomp's under cpu:onednn, OpenBLAS's under cpu:openblas), then forks; the child runs them again
 * with a fresh context, with the context inherited from the parent, from a new thread and in a
 * grandchild, and checks every result against ref. A child that does not finish in CHILD_LIMIT_S
 * seconds is killed and is a failure (it hung: with GNU libgomp a forked thread's next parallel
 * region waits forever).
 */
#define _POSIX_C_SOURCE 200809L
#include "test_util.h"

#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define CHILD_LIMIT_S 120 /* generous: sanitizer builds are slow, a hang never ends */

/* ---- one round of work: GEMM + conv on `id`, compared with ref (small integers: exact) ----- */

enum { GM = 160, GN = 96, GK = 128 };
enum { CN = 2, CC = 8, CH = 14, CW = 14, CK = 8, CR = 3 };

static int gemm_on(kmux_context *ctx, const char *id, const float *a, const float *b, float *c) {
    kmux_device *dev = NULL;
    kmux_stream *s = NULL;
    if (kmux_device_find(ctx, id, &dev) != KMUX_OK || kmux_stream_create(dev, &s) != KMUX_OK)
        return -1;
    float one = 1, zero = 0;
    kmux_status st =
        kmux_gemm_ex(s, KMUX_ROW_MAJOR, KMUX_NO_TRANS, KMUX_NO_TRANS, GM, GN, GK, &one, a, KMUX_F32,
                     GK, b, KMUX_F32, GN, &zero, c, KMUX_F32, GN, KMUX_COMPUTE_F32);
    if (st == KMUX_OK) st = kmux_stream_synchronize(s);
    kmux_stream_destroy(s);
    return st == KMUX_OK ? 0 : -1;
}

static int conv_on(kmux_context *ctx, const char *id, float *x, float *w, float *y) {
    kmux_device *dev = NULL;
    kmux_stream *s = NULL;
    kmux_plan *plan = NULL;
    if (kmux_device_find(ctx, id, &dev) != KMUX_OK || kmux_stream_create(dev, &s) != KMUX_OK)
        return -1;
    kmux_conv2d_desc d = KMUX_CONV2D_DESC_INIT;
    d.n = CN, d.c = CC, d.h = CH, d.w = CW, d.k = CK, d.r = CR, d.s = CR;
    d.pad_top = d.pad_bottom = d.pad_left = d.pad_right = 1;
    kmux_status st = kmux_conv2d_plan_create(dev, &d, NULL, &plan);
    if (st == KMUX_OK) {
        float one = 1, zero = 0;
        kmux_conv2d_args args = KMUX_CONV2D_ARGS_INIT;
        args.alpha = &one, args.beta = &zero, args.x = x, args.w = w, args.y = y;
        st = kmux_conv2d_execute(plan, s, &args);
        if (st == KMUX_OK) st = kmux_stream_synchronize(s);
        kmux_plan_destroy(plan);
    }
    kmux_stream_destroy(s);
    return st == KMUX_OK ? 0 : -1;
}

/* ReLU over EN elements: past KMUX_CAST_PARALLEL_MIN, so kmux's own kernel splits it across
 * threads (on cpu:onednn, on oneDNN's OpenMP team: onednn_team.c, which must decline in a child
 * whose thread's pool is stale, or the child hangs) */
enum { EN = 3 << 20 };

static int relu_on(kmux_context *ctx, const char *id, const float *x, float *y) {
    kmux_device *dev = NULL;
    kmux_stream *s = NULL;
    kmux_plan *plan = NULL;
    if (kmux_device_find(ctx, id, &dev) != KMUX_OK || kmux_stream_create(dev, &s) != KMUX_OK)
        return -1;
    kmux_eltwise_desc d = KMUX_ELTWISE_DESC_INIT;
    d.alg = KMUX_ELTWISE_RELU, d.n = EN;
    kmux_status st = kmux_eltwise_plan_create(dev, &d, NULL, &plan);
    if (st == KMUX_OK) {
        kmux_eltwise_args args = KMUX_ELTWISE_ARGS_INIT;
        args.src = x, args.dst = y;
        st = kmux_eltwise_execute(plan, s, &args);
        if (st == KMUX_OK) st = kmux_stream_synchronize(s);
        kmux_plan_destroy(plan);
    }
    kmux_stream_destroy(s);
    return st == KMUX_OK ? 0 : -1;
}

/* 0 = right, 1 = wrong result, 2 = a kmux call failed (the message goes to stderr). */
static int work(kmux_context *given, const char *id) {
    kmux_context *ctx = given;
    if (!ctx) {
        kmux_context_options o = KMUX_CONTEXT_OPTIONS_INIT;
        o.num_threads = 4;
        if (kmux_context_create(&o, &ctx) != KMUX_OK) return 2;
    }
    static float a[GM * GK], b[GK * GN], c[GM * GN], c_ref[GM * GN];
    static float x[CN * CC * CH * CW], w[CK * CC * CR * CR], y[CN * CK * CH * CW],
        y_ref[CN * CK * CH * CW];
    for (int i = 0; i < GM * GK; i++)
        a[i] = (float)(i % 7 - 3);
    for (int i = 0; i < GK * GN; i++)
        b[i] = (float)(i % 5 - 2);
    for (int i = 0; i < CN * CC * CH * CW; i++)
        x[i] = (float)(i % 9 - 4);
    for (int i = 0; i < CK * CC * CR * CR; i++)
        w[i] = (float)(i % 3 - 1);
    float *ex = malloc(EN * sizeof(float)), *ey = malloc(EN * sizeof(float)),
          *ey_ref = malloc(EN * sizeof(float));
    if (!ex || !ey || !ey_ref) {
        free(ex), free(ey), free(ey_ref);
        if (!given) kmux_context_destroy(ctx);
        return 2;
    }
    for (int i = 0; i < EN; i++)
        ex[i] = (float)(i % 11 - 5);
    int rc = 0;
    if (gemm_on(ctx, id, a, b, c) || gemm_on(ctx, "ref", a, b, c_ref) ||
        conv_on(ctx, id, x, w, y) || conv_on(ctx, "ref", x, w, y_ref) || relu_on(ctx, id, ex, ey) ||
        relu_on(ctx, "ref", ex, ey_ref)) {
        fprintf(stderr, "%s: %s\n", id, kmux_last_error());
        rc = 2;
    } else if (memcmp(c, c_ref, sizeof c) != 0 || memcmp(y, y_ref, sizeof y) != 0 ||
               memcmp(ey, ey_ref, EN * sizeof(float)) != 0) {
        fprintf(stderr, "%s: result differs from ref\n", id);
        rc = 1;
    }
    free(ex), free(ey), free(ey_ref);
    if (!given) kmux_context_destroy(ctx);
    return rc;
}

/* ---- waiting with a limit ------------------------------------------------------------------ */

/* The child's exit code, or -1 (and the child killed) when it ran past limit_s. */
static int wait_limited(pid_t pid, int limit_s) {
    struct timespec t0, now, nap = {0, 10 * 1000 * 1000};
    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (;;) {
        int ws = 0;
        pid_t r = waitpid(pid, &ws, WNOHANG);
        if (r == pid) return WIFEXITED(ws) ? WEXITSTATUS(ws) : 128 + WTERMSIG(ws);
        if (r < 0) return -2;
        clock_gettime(CLOCK_MONOTONIC, &now);
        if (now.tv_sec - t0.tv_sec >= limit_s) {
            kill(pid, SIGKILL);
            waitpid(pid, &ws, 0);
            return -1;
        }
        nanosleep(&nap, NULL);
    }
}

typedef struct thread_job {
    const char *id;
    int rc;
} thread_job;

static void *thread_main(void *p) {
    thread_job *j = p;
    j->rc = work(NULL, j->id);
    return NULL;
}

/* What the child does; its exit code is 10 * step + the failing work()'s code, 0 when right. */
static int child(kmux_context *inherited, const char *id) {
    int rc = work(NULL, id);
    if (rc) return 10 + rc;
    rc = work(inherited, id);
    if (rc) return 20 + rc;
    thread_job j = {id, 2};
    pthread_t t;
    if (pthread_create(&t, NULL, thread_main, &j) != 0) return 39;
    pthread_join(t, NULL);
    if (j.rc) return 30 + j.rc;
    pid_t g = fork();
    if (g < 0) return 49;
    if (g == 0) _exit(work(NULL, id));
    rc = wait_limited(g, CHILD_LIMIT_S);
    if (rc) return rc < 0 ? 48 : 40 + rc;
    return 0;
}

static void fork_after_calls(const char *id) {
    kmux_context_options o = KMUX_CONTEXT_OPTIONS_INIT;
    o.num_threads = 4;
    kmux_context *ctx = NULL;
    TU_OK(kmux_context_create(&o, &ctx));
    if (!tu_device(ctx, id)) {
        kmux_context_destroy(ctx);
        cr_skip_test("%s is not available", id);
    }
    cr_assert_eq(work(ctx, id), 0, "%s: the parent's own run failed", id);
    fflush(NULL);
    pid_t pid = fork();
    cr_assert_geq(pid, 0, "fork failed");
    if (pid == 0) {
        alarm(2 * CHILD_LIMIT_S); /* belt and braces: never outlive the parent's wait */
        _exit(child(ctx, id));
    }
    int rc = wait_limited(pid, CHILD_LIMIT_S);
    cr_assert_neq(rc, -1, "%s: the fork() child hung (killed after %d s)", id, CHILD_LIMIT_S);
    cr_assert_eq(rc, 0,
                 "%s: the fork() child failed with code %d (tens: 1 fresh context, 2 inherited "
                 "context, 3 new thread, 4 grandchild; units: 1 wrong result, 2 kmux error, "
                 "8 hung)",
                 id, rc);
    /* and the parent still works after the fork */
    cr_assert_eq(work(ctx, id), 0, "%s: the parent failed after the fork", id);
    TU_OK(kmux_context_destroy(ctx));
}

Test(fork, ref) {
    fork_after_calls("ref");
}
Test(fork, openblas) {
    fork_after_calls("cpu:openblas");
}
Test(fork, onednn) {
    fork_after_calls("cpu:onednn");
}
