/* net.c - the CNN of net.h on kmux: buffers, plans per batch size, forward and backward. */
#include "net.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rng.h"

#define KCHECK(call)                                                                               \
    do {                                                                                           \
        kmux_status s_ = (call);                                                                   \
        if (s_ != KMUX_OK) {                                                                       \
            fprintf(stderr, "train_fashion_mnist: %s failed: %s: %s\n", #call,                     \
                    kmux_status_str(s_), kmux_last_error());                                       \
            return -1;                                                                             \
        }                                                                                          \
    } while (0)

#define PCHECK(call)                                                                               \
    do {                                                                                           \
        if ((call) != 0) return -1;                                                                \
    } while (0)

static const float ONE = 1.0f, ZERO = 0.0f;

static size_t esize(const net *nt) {
    return kmux_dtype_size(nt->t);
}

/* Pointer to element off of a buffer of element size es. */
static void *at(const net_buf *b, int64_t off, size_t es) {
    return (char *)b->dev + (size_t)off * es;
}

static int buf_alloc(net *nt, net_buf *b, size_t bytes, mem_cat cat, int host_copy) {
    memset(b, 0, sizeof *b);
    b->bytes = bytes;
    KCHECK(kmux_malloc(nt->dev, bytes, &b->dev));
    KCHECK(kmux_memset(nt->s, b->dev, 0, bytes));
    nt->mem->dev[cat] += bytes;
    if (nt->is_host) {
        b->host = b->dev;
    } else if (host_copy) {
        b->host = calloc(1, bytes);
        if (!b->host) {
            fprintf(stderr, "train_fashion_mnist: out of host memory (%zu bytes)\n", bytes);
            return -1;
        }
        nt->mem->host[cat] += bytes;
    }
    return 0;
}

/* Frees b unless it is an alias of other (the same device pointer). */
static void buf_free(net *nt, net_buf *b, const net_buf *other) {
    if (!b->dev || (other && other->dev == b->dev)) return;
    if (b->host != b->dev) free(b->host);
    kmux_free(nt->dev, b->dev);
    memset(b, 0, sizeof *b);
}

int net_push(net *nt, net_buf *b) {
    if (!nt->is_host)
        KCHECK(kmux_memcpy(nt->s, b->dev, b->host, b->bytes, KMUX_MEMCPY_HOST_TO_DEVICE));
    return 0;
}

int net_pull(net *nt, net_buf *b) {
    if (!nt->is_host) {
        KCHECK(kmux_memcpy(nt->s, b->host, b->dev, b->bytes, KMUX_MEMCPY_DEVICE_TO_HOST));
        KCHECK(kmux_stream_synchronize(nt->s));
    }
    return 0;
}

static void layout_init(net_layout *L) {
    const int64_t len[P_COUNT] = {
        NET_C1 * 9, NET_C1, NET_C2 * 9 * NET_C1, NET_C2, NET_FC_IN * NET_CLASSES, NET_CLASSES};
    int64_t off = 0;
    L->params = 0;
    for (int i = 0; i < P_COUNT; i++) {
        L->off[i] = off;
        L->len[i] = len[i];
        L->params += len[i];
        off += (len[i] + 31) / 32 * 32; /* every tensor 64-byte aligned in f16/bf16 and f32 */
    }
    L->total = off;
}

/* PyTorch's default init, drawn in PyTorch's layouts (conv KCRS, linear out x in with the NCHW
 * flatten index) and stored in ours (KRSC, in x out with the NHWC flatten index), so that
 * compare_pytorch.py builds the same function from the same seed. */
static void init_weights(const net_layout *L, float *w, uint64_t seed) {
    uint64_t st = seed;
    const int64_t cin[2] = {1, NET_C1}, kout[2] = {NET_C1, NET_C2};
    const int pw[2] = {P_W1, P_W2}, pb[2] = {P_B1, P_B2};
    for (int l = 0; l < 2; l++) {
        double bound = 1.0 / sqrt((double)(cin[l] * 9));
        float *wl = w + L->off[pw[l]];
        for (int64_t k = 0; k < kout[l]; k++)
            for (int64_t c = 0; c < cin[l]; c++)
                for (int64_t rs = 0; rs < 9; rs++)
                    wl[(k * 9 + rs) * cin[l] + c] = rng_uniform(&st, bound);
        for (int64_t k = 0; k < kout[l]; k++)
            w[L->off[pb[l]] + k] = rng_uniform(&st, bound);
    }
    double bound = 1.0 / sqrt((double)NET_FC_IN);
    float *wf = w + L->off[P_WF];
    const int64_t pq = NET_H2 * NET_H2;
    for (int64_t o = 0; o < NET_CLASSES; o++)
        for (int64_t i = 0; i < NET_FC_IN; i++) {
            int64_t k = i / pq, p = i % pq; /* NCHW flatten index i = k * PQ + p */
            wf[(p * NET_C2 + k) * NET_CLASSES + o] = rng_uniform(&st, bound);
        }
    for (int64_t o = 0; o < NET_CLASSES; o++)
        w[L->off[P_BF] + o] = rng_uniform(&st, bound);
}

int net_create(net *nt, kmux_device *dev, kmux_stream *s, kmux_dtype t, uint64_t seed, int stage,
               memstat *mem) {
    memset(nt, 0, sizeof *nt);
    kmux_device_props props;
    KCHECK(kmux_device_props_get(dev, &props));
    nt->dev = dev, nt->s = s, nt->t = t, nt->mem = mem, nt->is_host = props.is_host && !stage;
    layout_init(&nt->L);
    size_t n = (size_t)nt->L.total;
    PCHECK(buf_alloc(nt, &nt->w32, n * 4, MEM_WEIGHTS, 1));
    PCHECK(buf_alloc(nt, &nt->g32, n * 4, MEM_GRADIENTS, 0));
    if (t != KMUX_F32) {
        PCHECK(buf_alloc(nt, &nt->w, n * esize(nt), MEM_WEIGHTS, 0));
        PCHECK(buf_alloc(nt, &nt->g, n * esize(nt), MEM_GRADIENTS, 0));
    } else {
        nt->w = nt->w32, nt->g = nt->g32;
    }
    init_weights(&nt->L, nt->w32.host, seed);
    return net_push(nt, &nt->w32);
}

static void batch_free(net *nt, net_batch *b) {
    kmux_plan *plans[] = {b->conv1,    b->act1,    b->conv2,     b->act2,     b->fc,
                          b->fc_dw,    b->fc_dx,   b->conv2_dw,  b->conv2_dx, b->b2_grad,
                          b->conv1_dw, b->b1_grad, b->relu1_bwd, b->xent};
    for (size_t i = 0; i < sizeof plans / sizeof plans[0]; i++)
        kmux_plan_destroy(plans[i]);
    buf_free(nt, &b->x, &b->x32);
    buf_free(nt, &b->dlog, &b->dlog32);
    net_buf *bufs[] = {&b->x32,  &b->y1,    &b->y2,     &b->logits, &b->dlog32, &b->dy2,   &b->dy1,
                       &b->ones, &b->mask2, &b->labels, &b->loss,   &b->mean,   &b->argmax};
    for (size_t i = 0; i < sizeof bufs / sizeof bufs[0]; i++)
        buf_free(nt, bufs[i], NULL);
    memset(b, 0, sizeof *b);
}

void net_destroy(net *nt) {
    for (int i = 0; i < 6; i++)
        if (nt->b[i].n) batch_free(nt, &nt->b[i]);
    buf_free(nt, &nt->arena, NULL);
    buf_free(nt, &nt->w, &nt->w32);
    buf_free(nt, &nt->g, &nt->g32);
    buf_free(nt, &nt->w32, NULL);
    buf_free(nt, &nt->g32, NULL);
}

/* The prefs of GEMM and convolution plans: they run in the net's arena. */
static kmux_plan_prefs arena_prefs(void) {
    kmux_plan_prefs p = KMUX_PLAN_PREFS_INIT;
    p.caller_workspace = 1;
    return p;
}

/* Grows the arena to at least bytes (a new batch size's plans may need more): the stream is
 * drained first, since work queued before may still use the old one. */
static int arena_reserve(net *nt, size_t bytes) {
    if (bytes <= nt->arena.bytes) return 0;
    KCHECK(kmux_stream_synchronize(nt->s));
    const size_t old = nt->arena.bytes;
    buf_free(nt, &nt->arena, NULL);
    nt->mem->dev[MEM_WORKSPACE] -= old;
    return buf_alloc(nt, &nt->arena, bytes, MEM_WORKSPACE, 0);
}

/* Counts a plan's workspace (in the arena for a GEMM or convolution plan, in the plan itself for
 * the others) and, when asked, says what kmux chose for it. */
static int plan_created(net *nt, const kmux_plan *p, int in_arena, const char *name, int64_t n) {
    kmux_plan_info info;
    KCHECK(kmux_plan_info_get(p, &info));
    if (in_arena)
        PCHECK(arena_reserve(nt, info.workspace_bytes));
    else
        nt->mem->dev[MEM_WORKSPACE] += info.workspace_bytes;
    if (nt->plan_log)
        fprintf(nt->plan_log, "plan batch %-5lld %-9s %-40s workspace %8.1f KiB%s\n", (long long)n,
                name, info.impl, (double)info.workspace_bytes / 1024.0, in_arena ? " (arena)" : "");
    return 0;
}

static int conv_plan(net *nt, int64_t n, int layer, kmux_conv_direction dir, const char *name,
                     kmux_plan **plan) {
    kmux_conv2d_desc d = KMUX_CONV2D_DESC_INIT;
    d.direction = dir, d.layout = KMUX_NHWC, d.n = n;
    d.c = layer == 1 ? 1 : NET_C1;
    d.h = d.w = layer == 1 ? NET_H0 : NET_H1;
    d.k = layer == 1 ? NET_C1 : NET_C2;
    d.r = d.s = 3;
    d.stride_h = d.stride_w = 2;
    d.pad_top = d.pad_bottom = d.pad_left = d.pad_right = 1;
    d.x_type = d.w_type = d.y_type = nt->t;
    d.compute_type = KMUX_COMPUTE_F32;
    const kmux_plan_prefs prefs = arena_prefs();
    KCHECK(kmux_conv2d_plan_create(nt->dev, &d, &prefs, plan));
    PCHECK(plan_created(nt, *plan, 1, name, n));
    return 0;
}

/* Row-major C(m x n) = op(A) op(B) (+ C when the ReLU epilogue is asked: bias and activation),
 * A and B in T, C in c_type, f32 accumulation; aux_ld: of the ReLU mask (RELU_AUX, DRELU), in
 * bits; a bias gradient (BGRADB) in T. */
static int gemm_plan(net *nt, int64_t m, int64_t n, int64_t k, kmux_transpose ta, kmux_transpose tb,
                     kmux_dtype c_type, unsigned epilogue, int64_t aux_ld, const char *name,
                     int64_t batch, kmux_plan **plan) {
    kmux_matmul_desc d = KMUX_MATMUL_DESC_INIT;
    d.transa = ta, d.transb = tb, d.m = m, d.n = n, d.k = k;
    d.a_type = d.b_type = nt->t, d.c_type = c_type;
    d.lda = ta == KMUX_NO_TRANS ? k : m;
    d.ldb = tb == KMUX_NO_TRANS ? n : k;
    d.ldc = n;
    d.epilogue = epilogue, d.aux_ld = aux_ld;
    d.bias_type = (epilogue & KMUX_EPILOGUE_BGRADB) ? nt->t : KMUX_F32;
    const kmux_plan_prefs prefs = arena_prefs();
    KCHECK(kmux_matmul_plan_create(nt->dev, &d, &prefs, plan));
    PCHECK(plan_created(nt, *plan, 1, name, batch));
    return 0;
}

/* A bias gradient: db(cols) = the sum over the rows of dY(rows x cols, row-major: the NHWC
 * activations' gradient or the logits'), in T, accumulated by kmux in f64. */
static int bias_grad_plan(net *nt, int64_t rows, int64_t cols, const char *name, int64_t batch,
                          kmux_plan **plan) {
    kmux_reduction_desc d = KMUX_REDUCTION_DESC_INIT;
    d.alg = KMUX_REDUCTION_SUM, d.src_dtype = d.dst_dtype = nt->t, d.ndims = 2;
    d.src_dims[0] = rows, d.src_dims[1] = cols, d.dst_dims[0] = 1, d.dst_dims[1] = cols;
    KCHECK(kmux_reduction_plan_create(nt->dev, &d, NULL, plan));
    PCHECK(plan_created(nt, *plan, 0, name, batch));
    return 0;
}

static int bias_grad(net *nt, kmux_plan *p, const void *dy, void *db) {
    kmux_reduction_args a = KMUX_REDUCTION_ARGS_INIT;
    a.src = dy, a.dst = db;
    KCHECK(kmux_reduction_execute(p, nt->s, &a));
    return 0;
}

/* The ReLU's backward over n elements of T, from the forward's output (y > 0: the mask). */
static int relu_bwd_plan(net *nt, int64_t n, const char *name, int64_t batch, kmux_plan **plan) {
    kmux_eltwise_desc d = KMUX_ELTWISE_DESC_INIT;
    d.alg = KMUX_ELTWISE_RELU, d.prop = KMUX_PROP_BACKWARD, d.use_dst_for_bwd = 1;
    d.dtype = nt->t, d.n = n;
    KCHECK(kmux_eltwise_plan_create(nt->dev, &d, NULL, plan));
    PCHECK(plan_created(nt, *plan, 0, name, batch));
    return 0;
}

static int batch_create(net *nt, net_batch *b, int64_t n, int train) {
    size_t es = esize(nt);
    const int64_t a1 = n * NET_H1 * NET_H1 * NET_C1, a2 = n * NET_FC_IN, in = n * NET_H0 * NET_H0;
    b->n = n, b->train = train;
    memstat *m = nt->mem;
    size_t before = m->dev[MEM_ACTIVATIONS];
    /* forward activations: what backward reads (x, y1, y2) and the logits */
    PCHECK(buf_alloc(nt, &b->x32, (size_t)in * 4,
                     nt->t == KMUX_F32 ? MEM_ACTIVATIONS : MEM_WORKSPACE, 1));
    if (nt->t != KMUX_F32)
        PCHECK(buf_alloc(nt, &b->x, (size_t)in * es, MEM_ACTIVATIONS, 0));
    else
        b->x = b->x32;
    PCHECK(buf_alloc(nt, &b->y1, (size_t)a1 * es, MEM_ACTIVATIONS, 0));
    PCHECK(buf_alloc(nt, &b->y2, (size_t)a2 * es, MEM_ACTIVATIONS, 0));
    PCHECK(buf_alloc(nt, &b->logits, (size_t)n * NET_CLASSES * 4, MEM_ACTIVATIONS, 0));
    PCHECK(buf_alloc(nt, &b->labels, (size_t)n * 4, MEM_ACTIVATIONS, 1));
    PCHECK(buf_alloc(nt, &b->loss, (size_t)n * 4, MEM_WORKSPACE, 0));
    PCHECK(buf_alloc(nt, &b->mean, 4, MEM_WORKSPACE, 1));
    PCHECK(buf_alloc(nt, &b->argmax, (size_t)n * 4, MEM_WORKSPACE, 1));
    kmux_softmax_desc sd = KMUX_SOFTMAX_DESC_INIT;
    sd.alg = KMUX_SOFTMAX_CROSS_ENTROPY, sd.rows = n, sd.cols = NET_CLASSES;
    KCHECK(kmux_softmax_plan_create(nt->dev, &sd, NULL, &b->xent));
    PCHECK(plan_created(nt, b->xent, 0, "xent", n));
    if (train && !m->fwd_activations) m->fwd_activations = m->dev[MEM_ACTIVATIONS] - before;
    const int64_t ones = n * NET_H1 * NET_H1; /* the longest GEMM dimension it is used for */
    PCHECK(buf_alloc(nt, &b->ones, (size_t)ones * es, MEM_WORKSPACE, 1));
    for (int64_t i = 0; i < ones; i++) {
        if (nt->t == KMUX_F32)
            ((float *)b->ones.host)[i] = 1.0f;
        else
            ((uint16_t *)b->ones.host)[i] = nt->t == KMUX_F16 ? 0x3c00 : 0x3f80; /* 1.0 */
    }
    PCHECK(net_push(nt, &b->ones));
    PCHECK(conv_plan(nt, n, 1, KMUX_CONV_FWD, "conv1", &b->conv1));
    PCHECK(conv_plan(nt, n, 2, KMUX_CONV_FWD, "conv2", &b->conv2));
    PCHECK(gemm_plan(nt, n * NET_H1 * NET_H1, NET_C1, 1, KMUX_NO_TRANS, KMUX_NO_TRANS, nt->t,
                     KMUX_EPILOGUE_RELU, 0, "act1", n, &b->act1));
    /* training: act2 also writes the ReLU's mask, rows of C2 bits (NHWC), which fc_dx reads as
     * rows of FC_IN bits: the same bits, y2 flattened */
    PCHECK(gemm_plan(nt, n * NET_H2 * NET_H2, NET_C2, 1, KMUX_NO_TRANS, KMUX_NO_TRANS, nt->t,
                     KMUX_EPILOGUE_RELU | (train ? KMUX_EPILOGUE_RELU_AUX : 0), NET_C2, "act2", n,
                     &b->act2));
    PCHECK(gemm_plan(nt, n, NET_CLASSES, NET_FC_IN, KMUX_NO_TRANS, KMUX_NO_TRANS, KMUX_F32,
                     KMUX_EPILOGUE_BIAS, 0, "fc", n, &b->fc));
    if (!train) return 0;
    PCHECK(buf_alloc(nt, &b->mask2, ((size_t)(n * NET_FC_IN) + 31) / 32 * 4, MEM_ACTIVATIONS, 0));
    /* activation gradients */
    PCHECK(buf_alloc(nt, &b->dlog32, (size_t)n * NET_CLASSES * 4, MEM_ACTIVATIONS, 0));
    if (nt->t != KMUX_F32)
        PCHECK(buf_alloc(nt, &b->dlog, (size_t)n * NET_CLASSES * es, MEM_ACTIVATIONS, 0));
    else
        b->dlog = b->dlog32;
    PCHECK(buf_alloc(nt, &b->dy2, (size_t)a2 * es, MEM_ACTIVATIONS, 0));
    PCHECK(buf_alloc(nt, &b->dy1, (size_t)a1 * es, MEM_ACTIVATIONS, 0));
    PCHECK(relu_bwd_plan(nt, a1, "relu1_bwd", n, &b->relu1_bwd));
    /* dW = y2^T dlog with the bias gradient, the column sums of dlog (op(B)), in one GEMM */
    PCHECK(gemm_plan(nt, NET_FC_IN, NET_CLASSES, n, KMUX_TRANS, KMUX_NO_TRANS, nt->t,
                     KMUX_EPILOGUE_BGRADB, 0, "fc_dw", n, &b->fc_dw));
    /* dy2 = dlog W^T, zero where conv2's ReLU was not active (DRELU with act2's mask) */
    PCHECK(gemm_plan(nt, n, NET_FC_IN, NET_CLASSES, KMUX_NO_TRANS, KMUX_TRANS, nt->t,
                     KMUX_EPILOGUE_DRELU, NET_FC_IN, "fc_dx", n, &b->fc_dx));
    PCHECK(conv_plan(nt, n, 2, KMUX_CONV_BWD_WEIGHTS, "conv2_dw", &b->conv2_dw));
    PCHECK(conv_plan(nt, n, 2, KMUX_CONV_BWD_DATA, "conv2_dx", &b->conv2_dx));
    PCHECK(bias_grad_plan(nt, n * NET_H2 * NET_H2, NET_C2, "b2_grad", n, &b->b2_grad));
    PCHECK(conv_plan(nt, n, 1, KMUX_CONV_BWD_WEIGHTS, "conv1_dw", &b->conv1_dw));
    PCHECK(bias_grad_plan(nt, n * NET_H1 * NET_H1, NET_C1, "b1_grad", n, &b->b1_grad));
    return 0;
}

net_batch *net_batch_get(net *nt, int64_t n, int train) {
    for (int i = 0; i < 6; i++)
        if (nt->b[i].n == n && nt->b[i].train == train) return &nt->b[i];
    for (int i = 0; i < 6; i++)
        if (nt->b[i].n == 0) {
            if (batch_create(nt, &nt->b[i], n, train) == 0) return &nt->b[i];
            batch_free(nt, &nt->b[i]);
            return NULL;
        }
    fprintf(stderr, "train_fashion_mnist: more than six batch sizes\n");
    return NULL;
}

int net_cast_weights(net *nt) {
    if (nt->t != KMUX_F32)
        KCHECK(kmux_cast(nt->s, nt->L.total, nt->w32.dev, KMUX_F32, nt->w.dev, nt->t, NULL));
    return 0;
}

static int conv(net *nt, kmux_plan *p, void *x, void *w, void *y) {
    kmux_conv2d_args a = KMUX_CONV2D_ARGS_INIT;
    a.alpha = &ONE, a.beta = &ZERO, a.x = x, a.w = w, a.y = y;
    a.workspace = nt->arena.dev, a.workspace_bytes = nt->arena.bytes;
    KCHECK(kmux_conv2d_execute(p, nt->s, &a));
    return 0;
}

static int gemm_ex(net *nt, kmux_plan *p, const void *A, const void *B, void *C, const float *beta,
                   const void *bias, void *aux, void *bias_grad) {
    kmux_matmul_args a = KMUX_MATMUL_ARGS_INIT;
    a.alpha = &ONE, a.beta = beta, a.A = A, a.B = B, a.C = C, a.bias = bias;
    a.aux = aux, a.bias_grad = bias_grad;
    a.workspace = nt->arena.dev, a.workspace_bytes = nt->arena.bytes;
    KCHECK(kmux_matmul_execute(p, nt->s, &a));
    return 0;
}

static int gemm(net *nt, kmux_plan *p, const void *A, const void *B, void *C, const float *beta,
                const void *bias) {
    return gemm_ex(nt, p, A, B, C, beta, bias, NULL, NULL);
}

int net_forward(net *nt, net_batch *b) {
    const net_layout *L = &nt->L;
    size_t es = esize(nt);
    kmux_stream *s = nt->s;
    PCHECK(net_push(nt, &b->x32));
    if (nt->t != KMUX_F32)
        KCHECK(kmux_cast(s, b->n * NET_H0 * NET_H0, b->x32.dev, KMUX_F32, b->x.dev, nt->t, NULL));
    PCHECK(conv(nt, b->conv1, b->x.dev, at(&nt->w, L->off[P_W1], es), b->y1.dev));
    PCHECK(gemm(nt, b->act1, b->ones.dev, at(&nt->w, L->off[P_B1], es), b->y1.dev, &ONE, NULL));
    PCHECK(conv(nt, b->conv2, b->y1.dev, at(&nt->w, L->off[P_W2], es), b->y2.dev));
    PCHECK(gemm_ex(nt, b->act2, b->ones.dev, at(&nt->w, L->off[P_B2], es), b->y2.dev, &ONE, NULL,
                   b->mask2.dev, NULL));
    PCHECK(gemm(nt, b->fc, b->y2.dev, at(&nt->w, L->off[P_WF], es), b->logits.dev, &ZERO,
                at(&nt->w32, L->off[P_BF], 4)));
    return 0;
}

int net_loss_to(net *nt, net_batch *b, int grad, const float *grad_scale, float *mean,
                int32_t *argmax) {
    PCHECK(net_push(nt, &b->labels));
    kmux_softmax_args a = KMUX_SOFTMAX_ARGS_INIT;
    a.x = b->logits.dev, a.labels = b->labels.dev, a.loss = b->loss.dev;
    a.mean_loss = mean, a.argmax = argmax;
    a.dx = grad ? b->dlog32.dev : NULL, a.grad_scale = grad_scale;
    KCHECK(kmux_softmax_execute(b->xent, nt->s, &a));
    return 0;
}

int net_loss(net *nt, net_batch *b, int grad, const float *grad_scale, double *loss,
             int64_t *correct) {
    PCHECK(net_loss_to(nt, b, grad, grad_scale, b->mean.dev, b->argmax.dev));
    /* the mean loss and the predictions on the host (a synchronisation) */
    PCHECK(net_pull(nt, &b->mean));
    PCHECK(net_pull(nt, &b->argmax));
    *loss = *(const float *)b->mean.host;
    const int32_t *pred = b->argmax.host, *label = b->labels.host;
    for (int64_t i = 0; i < b->n; i++)
        *correct += pred[i] == label[i];
    return 0;
}

/* The ReLU's backward, in place on the device: dy = 0 where the forward output y is not > 0. */
static int relu_backward(net *nt, kmux_plan *p, net_buf *y, net_buf *dy) {
    kmux_eltwise_args a = KMUX_ELTWISE_ARGS_INIT;
    a.dst = y->dev, a.diff_dst = dy->dev, a.diff_src = dy->dev;
    KCHECK(kmux_eltwise_execute(p, nt->s, &a));
    return 0;
}

int net_backward(net *nt, net_batch *b) {
    const net_layout *L = &nt->L;
    size_t es = esize(nt);
    kmux_stream *s = nt->s;
    const int64_t n = b->n;
    /* saturate = 0: a scaled gradient beyond f16's range becomes Inf, which the loss scaler sees */
    if (nt->t != KMUX_F32)
        KCHECK(kmux_cast(s, n * NET_CLASSES, b->dlog32.dev, KMUX_F32, b->dlog.dev, nt->t, NULL));
    /* fully connected layer: dW = y2^T dlog and db = the column sums of dlog (BGRADB) in one
     * GEMM; dy2 = dlog W^T through conv2's ReLU (DRELU) in another */
    PCHECK(gemm_ex(nt, b->fc_dw, b->y2.dev, b->dlog.dev, at(&nt->g, L->off[P_WF], es), &ZERO, NULL,
                   NULL, at(&nt->g, L->off[P_BF], es)));
    PCHECK(gemm_ex(nt, b->fc_dx, b->dlog.dev, at(&nt->w, L->off[P_WF], es), b->dy2.dev, &ZERO, NULL,
                   b->mask2.dev, NULL));
    /* conv2: bias, weights, data */
    PCHECK(bias_grad(nt, b->b2_grad, b->dy2.dev, at(&nt->g, L->off[P_B2], es)));
    PCHECK(conv(nt, b->conv2_dw, b->y1.dev, at(&nt->g, L->off[P_W2], es), b->dy2.dev));
    PCHECK(conv(nt, b->conv2_dx, b->dy1.dev, at(&nt->w, L->off[P_W2], es), b->dy2.dev));
    PCHECK(relu_backward(nt, b->relu1_bwd, &b->y1, &b->dy1));
    /* conv1: bias and weights (the input needs no gradient) */
    PCHECK(bias_grad(nt, b->b1_grad, b->dy1.dev, at(&nt->g, L->off[P_B1], es)));
    PCHECK(conv(nt, b->conv1_dw, b->x.dev, at(&nt->g, L->off[P_W1], es), b->dy1.dev));
    if (nt->t != KMUX_F32)
        KCHECK(kmux_cast(s, L->total, nt->g.dev, nt->t, nt->g32.dev, KMUX_F32, NULL));
    return 0;
}
