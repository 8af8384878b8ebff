/*
 * concurrency.c - many threads on one context, on every CPU device at once: GEMM through
 * the shared plan cache (kmux_gemm_ex), one matmul plan and one conv plan executed by every
 * thread concurrently, per-thread streams and plans created and destroyed, casts and amax, and
 * contexts created and destroyed beside them. Every result is checked (small integers: exact).
 * scripts/test.sh also runs it under ThreadSanitizer (build-tsan), where a data race in kmux's
 * own code fails it. A plain program (not Criterion, whose fork-based runner does not start under
 * TSan): exit status 0 when every check passed, and a "N passed, N failed" line.
 */
#include <kmux.h>

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define THREADS 6
enum { M = 24, N = 20, K = 16 };
enum { CN = 1, CC = 4, CH = 9, CW = 9, CK = 4, CR = 3, CP = CH - CR + 1, CQ = CW - CR + 1 };

static float g_a[M * K], g_b[K * N], g_want[M * N];
static float g_x[CN * CC * CH * CW], g_w[CK * CC * CR * CR], g_ywant[CN * CK * CP * CQ];

static void make_data(void) {
    for (int i = 0; i < M * K; i++)
        g_a[i] = (float)(i % 7 - 3);
    for (int i = 0; i < K * N; i++)
        g_b[i] = (float)(i % 5 - 2);
    for (int i = 0; i < M; i++)
        for (int j = 0; j < N; j++) {
            float acc = 0;
            for (int p = 0; p < K; p++)
                acc += g_a[i * K + p] * g_b[p * N + j];
            g_want[i * N + j] = acc;
        }
    for (int i = 0; i < CN * CC * CH * CW; i++)
        g_x[i] = (float)(i % 9 - 4);
    for (int i = 0; i < CK * CC * CR * CR; i++)
        g_w[i] = (float)(i % 3 - 1);
    for (int k = 0; k < CK; k++)
        for (int p = 0; p < CP; p++)
            for (int q = 0; q < CQ; q++) {
                float acc = 0;
                for (int c = 0; c < CC; c++)
                    for (int r = 0; r < CR; r++)
                        for (int s = 0; s < CR; s++)
                            acc += g_x[(c * CH + p + r) * CW + q + s] *
                                   g_w[((k * CC + c) * CR + r) * CR + s];
                g_ywant[(k * CP + p) * CQ + q] = acc;
            }
}

typedef struct job {
    kmux_context *ctx;
    kmux_device *dev;
    kmux_plan *shared_mm, *shared_conv; /* executed by every thread at once */
    int iters;
    int failures;
    char why[256];
} job;

#define FAIL(j, ...)                                                                               \
    do {                                                                                           \
        if (!(j)->failures++) snprintf((j)->why, sizeof(j)->why, __VA_ARGS__);                     \
    } while (0)

static kmux_matmul_desc mm_desc(void) {
    kmux_matmul_desc d = KMUX_MATMUL_DESC_INIT;
    d.m = M, d.n = N, d.k = K, d.lda = K, d.ldb = N, d.ldc = N;
    return d;
}

static kmux_conv2d_desc conv_desc(void) {
    kmux_conv2d_desc d = KMUX_CONV2D_DESC_INIT;
    d.n = CN, d.c = CC, d.h = CH, d.w = CW, d.k = CK, d.r = CR, d.s = CR;
    return d;
}

static void run_mm(job *j, kmux_plan *plan, kmux_stream *s, const char *what) {
    float c[M * N], one = 1, zero = 0;
    memset(c, 0xff, sizeof c);
    kmux_matmul_args a = KMUX_MATMUL_ARGS_INIT;
    a.alpha = &one, a.beta = &zero, a.A = g_a, a.B = g_b, a.C = c;
    kmux_status st = kmux_matmul_execute(plan, s, &a);
    if (st == KMUX_OK) st = kmux_stream_synchronize(s);
    if (st != KMUX_OK)
        FAIL(j, "%s: %s", what, kmux_last_error());
    else if (memcmp(c, g_want, sizeof c) != 0)
        FAIL(j, "%s: wrong result", what);
}

static void run_conv(job *j, kmux_plan *plan, kmux_stream *s, const char *what) {
    float y[CN * CK * CP * CQ], one = 1, zero = 0;
    memset(y, 0xff, sizeof y);
    kmux_conv2d_args a = KMUX_CONV2D_ARGS_INIT;
    a.alpha = &one, a.beta = &zero, a.x = g_x, a.w = g_w, a.y = y;
    kmux_status st = kmux_conv2d_execute(plan, s, &a);
    if (st == KMUX_OK) st = kmux_stream_synchronize(s);
    if (st != KMUX_OK)
        FAIL(j, "%s: %s", what, kmux_last_error());
    else if (memcmp(y, g_ywant, sizeof y) != 0)
        FAIL(j, "%s: wrong result", what);
}

static void *worker(void *p) {
    job *j = p;
    for (int it = 0; it < j->iters && !j->failures; it++) {
        kmux_stream *s = NULL;
        if (kmux_stream_create(j->dev, &s) != KMUX_OK) {
            FAIL(j, "stream_create: %s", kmux_last_error());
            break;
        }
        /* the context's plan cache, shared by every thread */
        float c[M * N], one = 1, zero = 0;
        kmux_status st =
            kmux_gemm_ex(s, KMUX_ROW_MAJOR, KMUX_NO_TRANS, KMUX_NO_TRANS, M, N, K, &one, g_a,
                         KMUX_F32, K, g_b, KMUX_F32, N, &zero, c, KMUX_F32, N, KMUX_COMPUTE_F32);
        if (st == KMUX_OK) st = kmux_stream_synchronize(s);
        if (st != KMUX_OK)
            FAIL(j, "gemm_ex: %s", kmux_last_error());
        else if (memcmp(c, g_want, sizeof c) != 0)
            FAIL(j, "gemm_ex: wrong result");
        /* shared plans */
        run_mm(j, j->shared_mm, s, "shared matmul plan");
        run_conv(j, j->shared_conv, s, "shared conv plan");
        /* own plans, made and destroyed while the others run */
        kmux_matmul_desc md = mm_desc();
        kmux_plan *mine = NULL;
        if (kmux_matmul_plan_create(j->dev, &md, NULL, &mine) != KMUX_OK)
            FAIL(j, "matmul_plan_create: %s", kmux_last_error());
        else {
            run_mm(j, mine, s, "own matmul plan");
            kmux_plan_destroy(mine);
        }
        /* mixed precision on the same stream */
        uint16_t h[M * K];
        float back[M * K], amax = 0;
        if (kmux_cast(s, M * K, g_a, KMUX_F32, h, KMUX_F16, NULL) != KMUX_OK ||
            kmux_cast(s, M * K, h, KMUX_F16, back, KMUX_F32, NULL) != KMUX_OK ||
            kmux_amax(s, M * K, back, KMUX_F32, &amax) != KMUX_OK ||
            kmux_stream_synchronize(s) != KMUX_OK)
            FAIL(j, "cast/amax: %s", kmux_last_error());
        else if (memcmp(back, g_a, sizeof back) != 0 || amax != 3.0f)
            FAIL(j, "cast/amax: wrong result (amax %g)", (double)amax);
        kmux_stream_destroy(s);
    }
    return NULL;
}

/* A thread that creates and destroys contexts of its own while the workers run. */
static void *context_churn(void *p) {
    int *fails = p;
    for (int i = 0; i < 3; i++) {
        kmux_context *c = NULL;
        if (kmux_context_create(NULL, &c) != KMUX_OK) {
            (*fails)++;
            continue;
        }
        kmux_device *d = NULL;
        if (kmux_device_find(c, "ref", &d) != KMUX_OK) (*fails)++;
        kmux_context_destroy(c);
    }
    return NULL;
}

static int g_checks, g_failed;

#define EXPECT(cond, ...)                                                                          \
    do {                                                                                           \
        g_checks++;                                                                                \
        if (!(cond)) {                                                                             \
            g_failed++;                                                                            \
            fprintf(stderr, "concurrency: " __VA_ARGS__);                                          \
            fputc('\n', stderr);                                                                   \
        }                                                                                          \
    } while (0)
#define OK(expr) EXPECT((expr) == KMUX_OK, "%s: %s", #expr, kmux_last_error())

int main(void) {
    make_data();
    kmux_context_options o = KMUX_CONTEXT_OPTIONS_INIT;
    o.num_threads = 2;
    kmux_context *ctx = NULL;
    if (kmux_context_create(&o, &ctx) != KMUX_OK) {
        fprintf(stderr, "concurrency: %s\n", kmux_last_error());
        return 2;
    }
    const char *ids[] = {"ref", "cpu:openblas", "cpu:onednn"};
    job jobs[3 * THREADS];
    pthread_t th[3 * THREADS], churn;
    kmux_plan *plans[6] = {0};
    int nj = 0, churn_fails = 0;
    const char *iters_env = getenv("KMUX_TEST_CONCURRENCY_ITERS");
    int iters = iters_env ? atoi(iters_env) : 25;
    for (int d = 0; d < 3; d++) {
        kmux_device *dev = NULL;
        if (kmux_device_find(ctx, ids[d], &dev) != KMUX_OK) {
            printf("concurrency: %s not available, skipped: %s\n", ids[d], kmux_last_error());
            continue; /* a CPU plugin that was not built */
        }
        kmux_matmul_desc md = mm_desc();
        kmux_conv2d_desc cd = conv_desc();
        if (kmux_matmul_plan_create(dev, &md, NULL, &plans[2 * d]) != KMUX_OK ||
            kmux_conv2d_plan_create(dev, &cd, NULL, &plans[2 * d + 1]) != KMUX_OK) {
            fprintf(stderr, "concurrency: %s: %s\n", ids[d], kmux_last_error());
            return 2;
        }
        for (int t = 0; t < THREADS; t++, nj++) {
            jobs[nj] = (job){ctx, dev, plans[2 * d], plans[2 * d + 1], iters, 0, ""};
        }
    }
    if (nj == 0) return 2;
    for (int i = 0; i < nj; i++)
        if (pthread_create(&th[i], NULL, worker, &jobs[i]) != 0) return 2;
    if (pthread_create(&churn, NULL, context_churn, &churn_fails) != 0) return 2;
    for (int i = 0; i < nj; i++)
        pthread_join(th[i], NULL);
    pthread_join(churn, NULL);
    for (int i = 0; i < nj; i++) {
        kmux_device_props p;
        OK(kmux_device_props_get(jobs[i].dev, &p));
        EXPECT(jobs[i].failures == 0, "%s, thread %d: %s", p.id, i, jobs[i].why);
    }
    EXPECT(churn_fails == 0, "context create/destroy beside the workers failed %d times",
           churn_fails);
    for (int i = 0; i < 6; i++)
        if (plans[i]) OK(kmux_plan_destroy(plans[i]));
    OK(kmux_context_destroy(ctx));
    printf("concurrency: %d threads x %d iterations\n", nj, iters);
    printf("%d passed, %d failed\n", g_checks - g_failed, g_failed);
    return g_failed ? 1 : 0;
}
