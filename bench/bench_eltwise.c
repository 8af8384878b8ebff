/*
 * bench_eltwise.c - the element-wise family on the CPU backends against the memory-bandwidth
 * bound and PyTorch, side by side in one run (issue 48's benchmark; not a test).
 *
 * Per algorithm, direction (forward; backward from src; backward from dst where the table has
 * it) and dtype, on a training-size tensor (default 64 x 256 x 56 x 56 elements):
 *   - the bound: memcpy of the bytes the op moves, split over the same threads as kmux's
 *     kernels (bytes moved = read + written: forward 2 n, backward 3 n elements; memcpy of B
 *     bytes moves 2 B, so the bound is a memcpy of half the op's bytes);
 *   - each CPU device's plan (cpu:onednn, cpu:openblas; implementation 0, named);
 *   - PyTorch's CPU op on a tensor of the same size and dtype (bench_eltwise_torch.py, in its own
 *     process before the kmux rounds, when python3 can import torch).
 * The memcpy and device runs are interleaved round by round (the first device rotating) and the
 * median of the rounds is reported; "bound" is memcpy's time / the op's time (1.0: at memory
 * speed), "torch" is PyTorch's time / the op's time (> 1: kmux faster).
 * Usage: bench_eltwise [--n=N] [--rounds=R] [--dtypes=f32,bf16] [--algs=relu,silu] [--no-torch]
 *                      [--quick]
 */
#define _POSIX_C_SOURCE 200809L
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dispatch/common/kmux_eltwise.h"
#include "bench_clock.h"
#include "bench_memcpy.h"
#include "kmux.h"

#define MAX_ROWS 128
#define MAX_ROUNDS 32
#define NDEV 2

static const char *const dev_ids[NDEV] = {"cpu:onednn", "cpu:openblas"};

typedef struct row {
    kmux_eltwise_desc d;
    const char *dir; /* "fwd", "bwd", "bwd_dst" */
    double torch_ms;
} row;

/* Every (algorithm, direction, dtype) of the table. */
static int make_rows(row *rows, int64_t n, const kmux_dtype *dts, int ndt) {
    int count = 0;
    for (int t = 0; t < ndt; t++)
        for (int alg = 1; kmux_eltwise_alg_valid(alg); alg++)
            for (int dir = 0; dir < 3 && count < MAX_ROWS; dir++) {
                const unsigned fl = kmux_eltwise_flags(alg);
                if (dir == 2 && !(fl & KMUX_ELT_DST_BWD)) continue;
                row *r = &rows[count++];
                kmux_eltwise_desc d = KMUX_ELTWISE_DESC_INIT;
                d.alg = (kmux_eltwise_alg)alg;
                d.prop = dir ? KMUX_PROP_BACKWARD : KMUX_PROP_FORWARD;
                d.use_dst_for_bwd = dir == 2;
                d.dtype = dts[t];
                d.n = n;
                if (alg == KMUX_ELTWISE_LINEAR) d.alpha = 1.5f, d.beta = 0.25f;
                r->d = d;
                r->dir = dir == 0 ? "fwd" : dir == 1 ? "bwd" : "bwd_dst";
                r->torch_ms = 0;
            }
    return count;
}

/* PyTorch's median times (0: no such op, or no torch), in its own process. */
static int torch_measure(row *rows, int count, int reps, int threads) {
    if (system("python3 -c 'import torch' >/dev/null 2>&1") != 0) return 0;
    char in_path[] = "/tmp/kmux-bench-eltwise-XXXXXX";
    int fd = mkstemp(in_path);
    if (fd < 0) return 0;
    FILE *in = fdopen(fd, "w");
    for (int i = 0; i < count; i++)
        fprintf(in, "%s %s %s %lld %d\n", kmux_eltwise_alg_name(rows[i].d.alg), rows[i].dir,
                kmux_dtype_name(rows[i].d.dtype), (long long)rows[i].d.n, reps);
    fclose(in);
    char cmd[1024];
    snprintf(cmd, sizeof cmd, "KMUX_BENCH_THREADS=%d python3 %s < %s", threads,
             KMUX_BENCH_TORCH_ELTWISE, in_path);
    FILE *pp = popen(cmd, "r");
    int got = 0;
    if (pp) {
        for (int i = 0; i < count; i++)
            if (fscanf(pp, "%lf", &rows[i].torch_ms) == 1) got++;
        pclose(pp);
    }
    remove(in_path);
    return got == count;
}

typedef struct target {
    kmux_device *dev;
    kmux_stream *s;
} target;

int main(int argc, char **argv) {
    int64_t n = 64LL * 256 * 56 * 56;
    int rounds = 5, quick = 0, no_torch = 0;
    const char *only = NULL; /* --algs=relu,silu: these algorithms only */
    kmux_dtype dts[3] = {KMUX_F32, KMUX_BF16};
    int ndt = 2;
    for (int i = 1; i < argc; i++) {
        if (!strncmp(argv[i], "--n=", 4))
            n = atoll(argv[i] + 4);
        else if (!strncmp(argv[i], "--rounds=", 9))
            rounds = atoi(argv[i] + 9);
        else if (!strcmp(argv[i], "--quick"))
            quick = 1;
        else if (!strcmp(argv[i], "--no-torch"))
            no_torch = 1;
        else if (!strncmp(argv[i], "--algs=", 7))
            only = argv[i] + 7;
        else if (!strncmp(argv[i], "--dtypes=", 9)) {
            ndt = 0;
            for (char *tok = strtok(argv[i] + 9, ","); tok && ndt < 3; tok = strtok(NULL, ","))
                dts[ndt++] = !strcmp(tok, "f16")    ? KMUX_F16
                             : !strcmp(tok, "bf16") ? KMUX_BF16
                                                    : KMUX_F32;
        } else {
            fprintf(stderr, "usage: bench_eltwise [--n=N] [--rounds=R] [--dtypes=f32,bf16] "
                            "[--algs=relu,silu] [--no-torch] [--quick]\n");
            return 2;
        }
    }
    if (quick) n = 1 << 16, rounds = 1;
    if (n < 1 || rounds < 1 || rounds > MAX_ROUNDS) {
        fprintf(stderr, "bench_eltwise: --n must be >= 1 and --rounds in [1, %d]\n", MAX_ROUNDS);
        return 2;
    }
    kmux_context *ctx = NULL;
    if (kmux_context_create(NULL, &ctx) != KMUX_OK) {
        fprintf(stderr, "bench_eltwise: %s\n", kmux_last_error());
        return 1;
    }
    target tg[NDEV];
    int nt = 0;
    kmux_device_props props;
    for (int i = 0; i < NDEV; i++) {
        kmux_device *d = NULL;
        if (kmux_device_find(ctx, dev_ids[i], &d) != KMUX_OK) continue;
        tg[nt].dev = d;
        if (kmux_stream_create(d, &tg[nt].s) != KMUX_OK) continue;
        nt++;
    }
    if (!nt) {
        fprintf(stderr, "bench_eltwise: neither cpu:onednn nor cpu:openblas is available\n");
        return 1;
    }
    kmux_device_props_get(tg[0].dev, &props);
    const int threads = props.compute_units > 0 ? props.compute_units : 1;
    static row rows[MAX_ROWS];
    int count = make_rows(rows, n, dts, ndt);
    if (only) { /* keep the rows of the algorithms named */
        int kept = 0;
        for (int r = 0; r < count; r++) {
            char pat[64];
            snprintf(pat, sizeof pat, ",%s,", kmux_eltwise_alg_name(rows[r].d.alg));
            char list[256];
            snprintf(list, sizeof list, ",%s,", only);
            if (strstr(list, pat)) rows[kept++] = rows[r];
        }
        count = kept;
    }
    const int have_torch = !quick && !no_torch && torch_measure(rows, count, rounds, threads);
    /* operands: x in [-3, 3], dd in [-1, 1], as the dtype; out; memcpy's two buffers */
    const size_t max_bytes = (size_t)n * 4;
    float *xf = malloc(max_bytes);
    void *x = malloc(max_bytes), *dd = malloc(max_bytes), *out = malloc(max_bytes);
    char *m_src = malloc(max_bytes * 3 / 2), *m_dst = malloc(max_bytes * 3 / 2);
    if (!xf || !x || !dd || !out || !m_src || !m_dst) {
        fprintf(stderr, "bench_eltwise: out of memory (%zu bytes a buffer)\n", max_bytes);
        return 1;
    }
    uint64_t seed = 1;
    for (int64_t i = 0; i < n; i++) {
        seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
        xf[i] = (float)((double)(seed >> 11) / 9007199254740992.0 * 6.0 - 3.0);
    }
    memset(m_src, 1, max_bytes * 3 / 2);
    memset(m_dst, 0, max_bytes * 3 / 2);
    printf("bench_eltwise: n = %lld elements, %d rounds (median), %d threads, %s; torch: %s\n",
           (long long)n, rounds, threads, props.name,
           have_torch ? "PyTorch's CPU ops, own process" : "not importable: left out");
    printf("%-10s %-7s %-5s %9s", "alg", "dir", "dtype", "memcpy ms");
    for (int k = 0; k < nt; k++)
        printf(" | %-12s %9s %6s %6s", kmux_device_id(tg[k].dev), "ms", "bound", "torch");
    printf(" | %9s\n", "torch ms");
    int below_bound[NDEV] = {0}, below_torch[NDEV] = {0}, compared = 0;
    for (int r = 0; r < count; r++) {
        const kmux_eltwise_desc *d = &rows[r].d;
        const size_t es = kmux_dtype_size(d->dtype), bytes = (size_t)n * es;
        const size_t moved = (d->prop == KMUX_PROP_FORWARD ? 2 : 3) * bytes;
        if (d->dtype == KMUX_F32)
            memcpy(x, xf, bytes);
        else
            kmux_cast(tg[0].s, n, xf, KMUX_F32, x, d->dtype, NULL);
        memcpy(dd, x, bytes);
        if (d->use_dst_for_bwd) { /* a dst the forward could have made */
            kmux_eltwise_desc f = *d;
            f.prop = KMUX_PROP_FORWARD, f.use_dst_for_bwd = 0;
            kmux_plan *fp = NULL;
            kmux_eltwise_args a = KMUX_ELTWISE_ARGS_INIT;
            a.src = dd, a.dst = x;
            if (kmux_eltwise_plan_create(tg[0].dev, &f, NULL, &fp) == KMUX_OK)
                kmux_eltwise_execute(fp, tg[0].s, &a);
            kmux_plan_destroy(fp);
        }
        kmux_plan *plan[NDEV] = {NULL};
        char impl[NDEV][96];
        kmux_eltwise_args a = KMUX_ELTWISE_ARGS_INIT;
        a.src = x, a.dst = d->use_dst_for_bwd ? x : out, a.diff_dst = dd, a.diff_src = out;
        if (d->prop == KMUX_PROP_FORWARD) a.dst = out;
        for (int k = 0; k < nt; k++) {
            snprintf(impl[k], sizeof impl[k], "-");
            if (kmux_eltwise_plan_create(tg[k].dev, d, NULL, &plan[k]) != KMUX_OK) {
                plan[k] = NULL;
                continue;
            }
            kmux_plan_info info;
            kmux_plan_info_get(plan[k], &info);
            snprintf(impl[k], sizeof impl[k], "%s", info.impl);
            kmux_eltwise_execute(plan[k], tg[k].s, &a); /* warm-up: pages, primitive */
        }
        kmux_bench_memcpy_mt(m_dst, m_src, moved / 2, threads);
        double t_copy[MAX_ROUNDS], t_dev[NDEV][MAX_ROUNDS];
        for (int rd = 0; rd < rounds; rd++) {
            /* each timed call follows an untimed one of the same contestant: the previous
             * one's thread pool may still be spinning (libgomp's workers after a oneDNN
             * primitive) on the cores this one needs */
            kmux_bench_memcpy_mt(m_dst, m_src, moved / 2, threads);
            double t0 = kmux_bench_now_ms();
            kmux_bench_memcpy_mt(m_dst, m_src, moved / 2, threads);
            t_copy[rd] = kmux_bench_now_ms() - t0;
            for (int j = 0; j < nt; j++) {
                const int k = (j + rd) % nt;
                if (plan[k]) kmux_eltwise_execute(plan[k], tg[k].s, &a); /* untimed */
                t0 = kmux_bench_now_ms();
                if (plan[k]) kmux_eltwise_execute(plan[k], tg[k].s, &a);
                t_dev[k][rd] = kmux_bench_now_ms() - t0;
            }
        }
        const double copy_ms = kmux_bench_median(t_copy, rounds);
        printf("%-10s %-7s %-5s %9.2f", kmux_eltwise_alg_name(d->alg), rows[r].dir,
               kmux_dtype_name(d->dtype), copy_ms);
        if (rows[r].torch_ms > 0) compared++;
        for (int k = 0; k < nt; k++) {
            if (!plan[k]) {
                printf(" | %-12s %9s %6s %6s", "unsupported", "-", "-", "-");
                continue;
            }
            const double ms = kmux_bench_median(t_dev[k], rounds), bound = copy_ms / ms;
            const double vs = rows[r].torch_ms > 0 ? rows[r].torch_ms / ms : 0;
            printf(" | %-12.12s %9.2f %6.2f %6.2f", impl[k], ms, bound, vs);
            below_bound[k] += bound < 0.9;
            below_torch[k] += rows[r].torch_ms > 0 && vs < 1.0;
            kmux_plan_destroy(plan[k]);
        }
        printf(" | %9.2f\n", rows[r].torch_ms);
    }
    for (int k = 0; k < nt; k++)
        printf("%s: %d of %d rows below 0.9 of the memcpy bound; %d of %d compared rows slower "
               "than PyTorch\n",
               kmux_device_id(tg[k].dev), below_bound[k], count, below_torch[k], compared);
    for (int k = 0; k < nt; k++)
        kmux_stream_destroy(tg[k].s);
    kmux_context_destroy(ctx);
    free(xf), free(x), free(dd), free(out), free(m_src), free(m_dst);
    return 0;
}
