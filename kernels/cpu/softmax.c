/*
 * softmax.c - the softmax family on the CPU (kmux_cpu_softmax), for cpu:openblas and cpu:onednn
 * (backends/cpu_common/cpu_softmax.c): the definitions of dispatch/common/kmux_softmax.h, a row
 * at a time in f32 (f16/bf16 rows decoded once, results rounded once), each pass a vector loop:
 * the row's maximum and sums in 16 lanes (a fixed order: deterministic whatever the thread
 * split), exp through libmvec (cpu_libmvec.h). The maximum ignores NaN, as the shared routine's
 * does; a NaN or an infinity then reaches every output of its row through exp and the sum, so the
 * results are the shared routine's. Rows are split across threads; the mean loss is summed in
 * row order in f64 after them. A range whose buffers cannot be allocated runs the shared scalar
 * routine (kmux_smx_row).
 */
#include <math.h>
#include <stdlib.h>

#include "cast_internal.h"
#include "cpu_clones.h"
#include "cpu_f32_io.h"
#include "cpu_libmvec.h" /* before kmux_softmax.h, whose inline functions call expf */
#include "kmux_cpu_kernels.h"
#include "kmux_softmax.h"
#include "kmux_sys_alloc.h"

#define LANES 16

typedef struct smx_job {
    kmux_smx_params p;
    int avx2;
} smx_job;

/* the largest non-NaN x (-inf when none) */
KMUX_CPU_CLONES static float vmax(int64_t n, const float *x) {
    float acc[LANES], m = -INFINITY;
    for (int k = 0; k < LANES; k++)
        acc[k] = -INFINITY;
    int64_t i = 0;
    for (; i + LANES <= n; i += LANES)
        for (int k = 0; k < LANES; k++)
            acc[k] = x[i + k] > acc[k] ? x[i + k] : acc[k];
    for (; i < n; i++)
        m = x[i] > m ? x[i] : m;
    for (int k = 0; k < LANES; k++)
        m = acc[k] > m ? acc[k] : m;
    return m;
}

/* sum of a[i] * (b ? b[i] : 1), in lanes */
KMUX_CPU_CLONES static float vsum(int64_t n, const float *a, const float *b) {
    float acc[LANES] = {0}, s = 0.0f;
    int64_t i = 0;
    if (b) {
        for (; i + LANES <= n; i += LANES)
            for (int k = 0; k < LANES; k++)
                acc[k] += a[i + k] * b[i + k];
        for (; i < n; i++)
            s += a[i] * b[i];
    } else {
        for (; i + LANES <= n; i += LANES)
            for (int k = 0; k < LANES; k++)
                acc[k] += a[i + k];
        for (; i < n; i++)
            s += a[i];
    }
    for (int k = 0; k < LANES; k++)
        s += acc[k];
    return s;
}

/* sum of (m - x), in lanes (every term >= 0: nothing cancels) */
KMUX_CPU_CLONES static float vgap(int64_t n, const float *x, float m) {
    float acc[LANES] = {0}, s = 0.0f;
    int64_t i = 0;
    for (; i + LANES <= n; i += LANES)
        for (int k = 0; k < LANES; k++)
            acc[k] += m - x[i + k];
    for (; i < n; i++)
        s += m - x[i];
    for (int k = 0; k < LANES; k++)
        s += acc[k];
    return s;
}

KMUX_CPU_CLONES static void vexp(int64_t n, const float *x, float m, float *e) {
    for (int64_t i = 0; i < n; i++)
        e[i] = expf(x[i] - m);
}

/* y / s as y * (1 / s), as PyTorch's vectorised softmax: a multiply instead of a divide per
 * element, at most one more rounding */
KMUX_CPU_CLONES static void vscale(int64_t n, float *y, float s) {
    const float r = 1.0f / s;
    for (int64_t i = 0; i < n; i++)
        y[i] = y[i] * r;
}

/* log-softmax: (x - m) - log s, in that order (x - (m + log s) would lose x - m's exactness) */
KMUX_CPU_CLONES static void vlog_out(int64_t n, const float *x, float m, float ls, float *y) {
    for (int64_t i = 0; i < n; i++)
        y[i] = (x[i] - m) - ls;
}

KMUX_CPU_CLONES static void vsmx_bwd(int64_t n, const float *y, const float *dy, float sum,
                                     float *dx) {
    for (int64_t i = 0; i < n; i++)
        dx[i] = y[i] * (dy[i] - sum);
}

KMUX_CPU_CLONES static void vlog_bwd(int64_t n, const float *y, const float *dy, float sum,
                                     float *dx) {
    for (int64_t i = 0; i < n; i++)
        dx[i] = dy[i] - expf(y[i]) * sum;
}

/* cross-entropy's gradient off the label: (e / s - off) * coef */
KMUX_CPU_CLONES static void vxent_grad(int64_t n, const float *e, float s, float off, float coef,
                                       float *dx) {
    for (int64_t i = 0; i < n; i++)
        dx[i] = (e[i] / s - off) * coef;
}

/* row r with the f32 buffers xb, yb, db of cols elements each */
static void row(const smx_job *j, int64_t r, float *xb, float *yb, float *db) {
    const kmux_smx_params *p = &j->p;
    const kmux_dtype t = (kmux_dtype)p->dtype;
    const int64_t C = p->cols, o = r * C;
    if (p->prop == KMUX_PROP_BACKWARD) {
        const float *y = kmux_f32_in(t, j->avx2, p->y, o, C, xb);
        const float *dy = kmux_f32_in(t, j->avx2, p->dy, o, C, db);
        float *dx = kmux_f32_out(t, p->out, o, yb);
        if (p->alg == KMUX_SOFTMAX)
            vsmx_bwd(C, y, dy, vsum(C, dy, y), dx);
        else
            vlog_bwd(C, y, dy, vsum(C, dy, NULL), dx);
        kmux_f32_store(t, j->avx2, p->out, o, C, dx);
        return;
    }
    const float *x = kmux_f32_in(t, j->avx2, p->x, o, C, xb);
    const float m = vmax(C, x);
    if (p->alg == KMUX_SOFTMAX) {
        float *y = kmux_f32_out(t, p->out, o, yb);
        vexp(C, x, m, y);
        vscale(C, y, vsum(C, y, NULL));
        kmux_f32_store(t, j->avx2, p->out, o, C, y);
        return;
    }
    float *e = db; /* exp(x - m) */
    vexp(C, x, m, e);
    const float s = vsum(C, e, NULL), ls = logf(s);
    if (p->alg == KMUX_LOG_SOFTMAX) {
        float *y = kmux_f32_out(t, p->out, o, yb);
        vlog_out(C, x, m, ls, y);
        kmux_f32_store(t, j->avx2, p->out, o, C, y);
        return;
    }
    /* cross-entropy: the first largest (none when every x is NaN: 0, as the shared routine) */
    int64_t am = 0;
    while (am < C && !(x[am] == m))
        am++;
    if (am == C) am = 0;
    const int32_t l = p->labels[r];
    const int ok = l >= 0 && (int64_t)l < C;
    const float e_ = p->smoothing, on = 1.0f - e_, off = e_ / (float)C;
    const float xl = ok ? x[l] : NAN;
    p->loss[r] = ls + on * (m - xl) + off * vgap(C, x, m); /* lse - on x_l - off sum x */
    if (p->argmax) p->argmax[r] = (int32_t)am;
    if (!p->out) return;
    const float coef = p->grad_scale ? p->grad_coef * *p->grad_scale : p->grad_coef;
    float *dx = kmux_f32_out(t, p->out, o, yb);
    if (ok) {
        vxent_grad(C, e, s, off, coef, dx);
        dx[l] = (e[l] / s - (on + off)) * coef;
    } else {
        for (int64_t c = 0; c < C; c++)
            dx[c] = NAN;
    }
    kmux_f32_store(t, j->avx2, p->out, o, C, dx);
}

static void rows(void *ctx, int64_t begin, int64_t end, int tid) {
    (void)tid;
    const smx_job *j = ctx;
    const int64_t C = j->p.cols;
    float *buf = kmux_sys_malloc((size_t)C * 3 * sizeof *buf);
    for (int64_t r = begin; r < end; r++) {
        if (buf)
            row(j, r, buf, buf + C, buf + 2 * C);
        else
            kmux_smx_row(&j->p, r);
    }
    free(buf);
}

void kmux_cpu_softmax(const kmux_softmax_desc *d, const kmux_softmax_args *a, int threads) {
    smx_job j;
    j.p = kmux_smx_params_of(d, a);
    j.avx2 = kmux_cast_have_avx2();
    kmux_cast_parallel_for(d->rows, d->cols, threads, 1, rows, &j);
    if (d->alg == KMUX_SOFTMAX_CROSS_ENTROPY && a->mean_loss) {
        double total = 0.0;
        for (int64_t r = 0; r < d->rows; r++)
            total += (double)a->loss[r];
        *a->mean_loss = (float)(total / (double)d->rows);
    }
}
