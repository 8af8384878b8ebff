/*
 * verbose.c - the KMUX_VERBOSE trace, in the spirit of ONEDNN_VERBOSE: one CSV line per event on
 * stderr, written with a single fputs so lines from several threads do not interleave. The
 * columns are fixed (verbose.h):
 *   kmux_verbose,<event>,<device>,<op>,<impl>,<dtypes>,<compute>,<problem>,<ms>,<message>
 *   level 1: the header (info) and every execution (exec)
 *   level 2: + plugin loading (every candidate, with the reason it was rejected), plan creation
 *            and rejection, errors and fallbacks.
 */
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "kmux_common.h"
#include "verbose.h"

/* How many live contexts asked for each level; the trace level is the highest one in use, so it
 * falls back when a verbose context is destroyed. Read on every execution: a few relaxed loads. */
#define LEVELS 10
static atomic_int contexts_at[LEVELS];

int kmux_verbose_level(void) {
    for (int l = LEVELS - 1; l > 0; l--)
        if (atomic_load_explicit(&contexts_at[l], memory_order_relaxed) > 0) return l;
    return 0;
}

void kmux_verbose_acquire(int level) {
    if (level > 0 && level < LEVELS) atomic_fetch_add(&contexts_at[level], 1);
}

void kmux_verbose_release(int level) {
    if (level > 0 && level < LEVELS) atomic_fetch_sub(&contexts_at[level], 1);
}

/* ---- line assembly -------------------------------------------------------------------------- */

typedef struct line_buf {
    char s[2048];
    size_t n;
} line_buf;

static void put_raw(line_buf *b, const char *t) {
    for (; t && *t && b->n < sizeof b->s - 3; ++t)
        b->s[b->n++] = (*t == '\n' || *t == '\r') ? ' ' : *t;
}

/* ",field" as it is (plain columns never contain commas: ids, names of dtypes and impls). */
static void put_plain(line_buf *b, const char *t) {
    put_raw(b, ",");
    if (t) {
        for (; *t && b->n < sizeof b->s - 3; ++t)
            b->s[b->n++] = *t == ',' ? ';' : (*t == '\n' ? ' ' : *t);
    }
}

/* ",\"field\"" with CSV quoting (a quote doubled); empty when t is NULL. */
static void put_quoted(line_buf *b, const char *t) {
    put_raw(b, ",");
    if (!t) return;
    put_raw(b, "\"");
    for (; *t && b->n < sizeof b->s - 4; ++t) {
        if (*t == '"') b->s[b->n++] = '"';
        b->s[b->n++] = (*t == '\n' || *t == '\r') ? ' ' : *t;
    }
    put_raw(b, "\"");
}

static void emit(line_buf *b) {
    b->s[b->n++] = '\n';
    b->s[b->n] = '\0';
    fputs(b->s, stderr);
}

/* One line with every column; NULL leaves a column empty, ms < 0 too. */
static void row(const char *event, const char *device, const char *op, const char *impl,
                const char *dtypes, const char *compute, const char *problem, double ms,
                const char *message) {
    line_buf b = {.n = 0};
    put_raw(&b, "kmux_verbose");
    put_plain(&b, event);
    put_plain(&b, device);
    put_plain(&b, op);
    put_plain(&b, impl);
    put_plain(&b, dtypes);
    put_plain(&b, compute);
    put_quoted(&b, problem);
    char t[32] = "";
    if (ms >= 0) snprintf(t, sizeof t, "%.4f", ms);
    put_plain(&b, t);
    put_quoted(&b, message);
    emit(&b);
}

/* ---- pending error ----------------------------------------------------------------------------
 */

static _Thread_local struct {
    int pending;
    kmux_status status;
    char message[1024];
} tls_err;

static void flush_at_exit(void) {
    kmux_trace_flush_error(); /* the last error of the main thread */
}

void kmux_trace_error(kmux_status status, const char *message) {
    if (kmux_verbose_level() < 2) return;
    static atomic_flag registered = ATOMIC_FLAG_INIT;
    if (!atomic_flag_test_and_set(&registered)) atexit(flush_at_exit);
    /* the same error re-set with more context replaces the pending line */
    if (tls_err.pending && !strstr(message, tls_err.message)) kmux_trace_flush_error();
    tls_err.pending = 1;
    tls_err.status = status;
    snprintf(tls_err.message, sizeof tls_err.message, "%s", message);
}

void kmux_trace_flush_error(void) {
    if (!tls_err.pending) return;
    tls_err.pending = 0;
    row("error", NULL, NULL, NULL, NULL, kmux_common_status_str(tls_err.status), NULL, -1,
        tls_err.message);
}

/* A line with a message: the pending error it carries is not written again. */
static void settle_pending(const char *message) {
    if (!tls_err.pending) return;
    if (message && !strcmp(message, tls_err.message))
        tls_err.pending = 0;
    else
        kmux_trace_flush_error();
}

/* ---- free-form lines (loader, plugins: host->trace) ------------------------------------------ */

void kmux_trace(int level, const char *fmt, ...) {
    if (level > kmux_verbose_level()) return;
    char text[1536];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(text, sizeof text, fmt, ap);
    va_end(ap);
    settle_pending(NULL);
    /* "<event>,<rest>": the event is the first field, the rest goes to the message column */
    char *comma = strchr(text, ',');
    if (comma) *comma = '\0';
    row(text, NULL, NULL, NULL, NULL, NULL, NULL, -1, comma ? comma + 1 : "");
}

/* ---- problems in kmux-bench's grammar ----------------------------------------------------------
 */

static const char *bench_compute(kmux_compute_type c) {
    switch (c) {
    case KMUX_COMPUTE_F32_FAST_TF32:
        return "tf32";
    case KMUX_COMPUTE_F32_FAST_BF16:
        return "bf16x3";
    default:
        return kmux_common_compute_type_name(c);
    }
}

static void dt_triple(kmux_dtype a, kmux_dtype b, kmux_dtype c, char *buf, size_t cap) {
    if (a == b && b == c)
        snprintf(buf, cap, "%s", kmux_common_dtype_name(a));
    else
        snprintf(buf, cap, "%s:%s:%s", kmux_common_dtype_name(a), kmux_common_dtype_name(b),
                 kmux_common_dtype_name(c));
}

void kmux_trace_problem_matmul(const kmux_matmul_desc *d, char *buf, size_t cap) {
    char dt[48];
    dt_triple(d->a_type, d->b_type, d->c_type, dt, sizeof dt);
    /* benchdnn tags: dtag from the storage order; A (B) is stored the other way when transposed */
    int col = d->order == KMUX_COL_MAJOR;
    const char *dtag = col ? "ba" : "ab", *other = col ? "ab" : "ba";
    const char *stag = d->transa == KMUX_TRANS ? other : dtag;
    const char *wtag = d->transb == KMUX_TRANS ? other : dtag;
    int n = snprintf(buf, cap, "--dt=%s --stag=%s --wtag=%s --dtag=%s --compute=%s ", dt, stag,
                     wtag, dtag, bench_compute(d->compute_type));
    if (n < 0 || (size_t)n >= cap) return;
    if (d->batch_count > 1)
        snprintf(buf + n, cap - (size_t)n, "%lldx%lldx%lld:%lldx%lldx%lld",
                 (long long)(d->stride_a ? d->batch_count : 1), (long long)d->m, (long long)d->k,
                 (long long)(d->stride_b ? d->batch_count : 1), (long long)d->k, (long long)d->n);
    else
        snprintf(buf + n, cap - (size_t)n, "%lldx%lld:%lldx%lld", (long long)d->m, (long long)d->k,
                 (long long)d->k, (long long)d->n);
}

void kmux_trace_problem_conv(const kmux_conv2d_desc *d, char *buf, size_t cap) {
    static const char *const dir[] = {"?", "FWD", "BWD_D", "BWD_W"};
    char dt[48];
    dt_triple(d->x_type, d->w_type, d->y_type, dt, sizeof dt);
    int64_t P =
        kmux_conv2d_out_dim(d->h, d->pad_top, d->pad_bottom, d->r, d->dilation_h, d->stride_h);
    int64_t Q =
        kmux_conv2d_out_dim(d->w, d->pad_left, d->pad_right, d->s, d->dilation_w, d->stride_w);
    /* benchdnn: the output size implies the bottom/right padding; dilation counts from 0 */
    snprintf(buf, cap,
             "--dir=%s --dt=%s --layout=%s --compute=%s g%lldmb%lldic%lldih%lldiw%lldoc%lldoh%lld"
             "ow%lldkh%lldkw%lldsh%lldsw%lldph%lldpw%llddh%llddw%lld",
             dir[d->direction >= 1 && d->direction <= 3 ? d->direction : 0], dt,
             d->layout == KMUX_NHWC ? "nhwc" : "nchw", bench_compute(d->compute_type),
             (long long)d->groups, (long long)d->n, (long long)d->c, (long long)d->h,
             (long long)d->w, (long long)d->k, (long long)P, (long long)Q, (long long)d->r,
             (long long)d->s, (long long)d->stride_h, (long long)d->stride_w, (long long)d->pad_top,
             (long long)d->pad_left, (long long)d->dilation_h - 1, (long long)d->dilation_w - 1);
}

/* ---- plan lines --------------------------------------------------------------------------------
 */

void kmux_trace_matmul(int level, const char *event, const kmux_device *dev, const char *impl,
                       const kmux_matmul_desc *d, double ms, const char *message) {
    if (level > kmux_verbose_level()) return;
    char msg[1024], problem[512], dt[48];
    snprintf(msg, sizeof msg, "%s", message ? message : "");
    settle_pending(message ? msg : NULL);
    kmux_trace_problem_matmul(d, problem, sizeof problem);
    snprintf(dt, sizeof dt, "%s:%s:%s", kmux_common_dtype_name(d->a_type),
             kmux_common_dtype_name(d->b_type), kmux_common_dtype_name(d->c_type));
    row(event, dev->props.id, "matmul", impl, dt, kmux_common_compute_type_name(d->compute_type),
        problem, ms, message ? msg : NULL);
}

void kmux_trace_conv(int level, const char *event, const kmux_device *dev, const char *impl,
                     const kmux_conv2d_desc *d, double ms, const char *message) {
    if (level > kmux_verbose_level()) return;
    char msg[1024], problem[512], dt[48];
    snprintf(msg, sizeof msg, "%s", message ? message : "");
    settle_pending(message ? msg : NULL);
    kmux_trace_problem_conv(d, problem, sizeof problem);
    snprintf(dt, sizeof dt, "%s:%s:%s", kmux_common_dtype_name(d->x_type),
             kmux_common_dtype_name(d->w_type), kmux_common_dtype_name(d->y_type));
    row(event, dev->props.id, "conv2d", impl, dt, kmux_common_compute_type_name(d->compute_type),
        problem, ms, message ? msg : NULL);
}

void kmux_trace_eltwise(int level, const char *event, const kmux_device *dev, const char *impl,
                        const kmux_eltwise_desc *d, double ms) {
    if (level > kmux_verbose_level()) return;
    settle_pending(NULL);
    char problem[160];
    snprintf(problem, sizeof problem, "%s:%s%s:n%lld:alpha%g:beta%g", kmux_eltwise_alg_name(d->alg),
             d->prop == KMUX_PROP_FORWARD ? "fwd" : "bwd", d->use_dst_for_bwd ? "_dst" : "",
             (long long)d->n, (double)d->alpha, (double)d->beta);
    row(event, dev->props.id, "eltwise", impl, kmux_common_dtype_name(d->dtype), "f32", problem, ms,
        NULL);
}

void kmux_trace_optimizer(int level, const char *event, const kmux_device *dev, const char *impl,
                          const kmux_optimizer_desc *d, double ms) {
    if (level > kmux_verbose_level()) return;
    settle_pending(NULL);
    char problem[200];
    snprintf(problem, sizeof problem,
             "%s:n%lld:copy%s:mom%g:damp%g:wd%g:nesterov%d:b1%g:b2%g:eps%g",
             kmux_optimizer_alg_name(d->alg), (long long)d->n,
             d->copy_type ? kmux_common_dtype_name((kmux_dtype)d->copy_type) : "none",
             (double)d->momentum, (double)d->dampening, (double)d->weight_decay, d->nesterov,
             (double)d->beta1, (double)d->beta2, (double)d->eps);
    row(event, dev->props.id, "optimizer", impl, kmux_common_dtype_name(d->grad_type), "f32",
        problem, ms, NULL);
}

void kmux_trace_softmax(int level, const char *event, const kmux_device *dev, const char *impl,
                        const kmux_softmax_desc *d, double ms) {
    if (level > kmux_verbose_level()) return;
    settle_pending(NULL);
    char problem[160];
    snprintf(problem, sizeof problem, "%s:%s:%lldx%lld:smoothing%g", kmux_softmax_alg_name(d->alg),
             d->prop == KMUX_PROP_FORWARD ? "fwd" : "bwd", (long long)d->rows, (long long)d->cols,
             (double)d->label_smoothing);
    row(event, dev->props.id, "softmax", impl, kmux_common_dtype_name(d->dtype), "f32", problem, ms,
        NULL);
}

/* "64x256x56x56" into buf */
static void dims_str(char *buf, size_t size, int ndims, const int64_t *dims) {
    size_t n = 0;
    buf[0] = 0;
    for (int i = 0; i < ndims && i < KMUX_MAX_NDIMS && n < size; i++)
        n += (size_t)snprintf(buf + n, size - n, "%s%lld", i ? "x" : "", (long long)dims[i]);
}

void kmux_trace_binary(int level, const char *event, const kmux_device *dev, const char *impl,
                       const kmux_binary_desc *d, double ms) {
    if (level > kmux_verbose_level()) return;
    settle_pending(NULL);
    char a[120], b[120], problem[300];
    dims_str(a, sizeof a, d->ndims, d->dims);
    dims_str(b, sizeof b, d->ndims, d->src1_dims);
    snprintf(problem, sizeof problem, "%s:%s+%s:a%g:b%g", kmux_binary_alg_name(d->alg), a, b,
             (double)d->alpha, (double)d->beta);
    row(event, dev->props.id, "binary", impl, kmux_common_dtype_name(d->dtype), "f32", problem, ms,
        NULL);
}

void kmux_trace_reduction(int level, const char *event, const kmux_device *dev, const char *impl,
                          const kmux_reduction_desc *d, double ms) {
    if (level > kmux_verbose_level()) return;
    settle_pending(NULL);
    char a[120], b[120], problem[300];
    dims_str(a, sizeof a, d->ndims, d->src_dims);
    dims_str(b, sizeof b, d->ndims, d->dst_dims);
    snprintf(problem, sizeof problem, "%s:%s->%s:%s", kmux_reduction_alg_name(d->alg), a, b,
             kmux_common_dtype_name(d->dst_dtype));
    row(event, dev->props.id, "reduction", impl, kmux_common_dtype_name(d->src_dtype), "f64",
        problem, ms, NULL);
}

void kmux_trace_pooling(int level, const char *event, const kmux_device *dev, const char *impl,
                        const kmux_pooling_desc *d, double ms) {
    if (level > kmux_verbose_level()) return;
    settle_pending(NULL);
    char problem[300];
    snprintf(problem, sizeof problem,
             "%s:%s:%lldx%lldx%lldx%lld:k%lldx%lld:s%lldx%lld:p%lld,%lld,%lld,%lld:%s",
             kmux_pooling_alg_name(d->alg), d->layout == KMUX_NHWC ? "nhwc" : "nchw",
             (long long)d->n, (long long)d->c, (long long)d->h, (long long)d->w,
             (long long)d->kernel_h, (long long)d->kernel_w, (long long)d->stride_h,
             (long long)d->stride_w, (long long)d->pad_top, (long long)d->pad_bottom,
             (long long)d->pad_left, (long long)d->pad_right,
             d->prop == KMUX_PROP_BACKWARD ? "bwd" : "fwd");
    row(event, dev->props.id, "pooling", impl, kmux_common_dtype_name(d->dtype), "f32", problem, ms,
        NULL);
}

void kmux_trace_header(const kmux_context *ctx) {
    if (kmux_verbose_level() < 1 || !ctx) return;
    char version[160];
    snprintf(version, sizeof version, "kmux %s", kmux_version());
    row("info", NULL, NULL, NULL, NULL, NULL, NULL, -1, version);
    row("info", NULL, NULL, NULL, NULL, NULL, NULL, -1, "columns: " KMUX_TRACE_COLUMNS);
    for (int i = 0; i < ctx->device_count; ++i) {
        const kmux_device_props *p = &ctx->devices[i]->props;
        char msg[400];
        snprintf(msg, sizeof msg, "%s; arch %s; %s%s%d %s", p->name, p->arch, p->library_version,
                 p->library_version[0] ? "; " : "", p->compute_units,
                 p->is_host ? "cores" : "compute units");
        row("info", p->id, NULL, NULL, NULL, NULL, NULL, -1, msg);
    }
}
