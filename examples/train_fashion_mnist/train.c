/*
 * train.c - trains the CNN of net.h on Fashion-MNIST with kmux as the compute backend. The
 * trainer owns the data loading and the loop; every convolution and matrix product, the ReLU
 * backward, the softmax cross-entropy, the casts, the loss scaling and the optimiser step run
 * through kmux (see README.md).
 *
 *   train_fashion_mnist [--device=cpu:onednn|cpu:openblas|ref|cuda:0|hip:0|auto]
 *                       [--precision=f32|bf16|f16] [--epochs=1] [--batch=64] [--seed=1]
 *                       [--threads=0] [--optimizer=sgd|adam] [--lr=..] [--momentum=0.9]
 *                       [--loss-scale=65536] [--growth-interval=2000] [--data=DIR]
 *                       [--train-limit=N] [--test-limit=N] [--summary=FILE] [--loss-log=FILE]
 *                       [--no-progress] [--plans] [--stage-through-host]
 *
 * --plans prints, for every kmux plan, the implementation kmux chose and its workspace.
 * --stage-through-host runs the code path of GPUs on any device: host copies of every tensor the
 * trainer touches, copied with kmux_memcpy (a test of that path on machines without a GPU).
 *
 * Exit status: 0 after training, 1 on an error (printed on stderr), 2 on a bad option.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <kmux.h>

#include "idx.h"
#include "memstat.h"
#include "net.h"
#include "optim.h"
#include "rng.h"

typedef struct options {
    const char *device, *data, *summary, *loss_log;
    kmux_dtype precision;
    optim_kind optimizer;
    int epochs, threads, progress, plans, stage;
    int64_t batch, train_limit, test_limit, growth_interval;
    double lr, momentum, loss_scale;
    uint64_t seed;
} options;

static void usage(FILE *f) {
    fprintf(f, "usage: train_fashion_mnist [--device=ID] [--precision=f32|bf16|f16] [--epochs=N]\n"
               "  [--batch=N] [--seed=N] [--threads=N] [--optimizer=sgd|adam] [--lr=X]\n"
               "  [--momentum=X] [--loss-scale=X] [--growth-interval=N] [--data=DIR]\n"
               "  [--train-limit=N] [--test-limit=N] [--summary=FILE] [--loss-log=FILE]\n"
               "  [--no-progress] [--plans] [--stage-through-host]\n"
               "device: cpu:onednn, cpu:openblas, ref, cuda:0, hip:0 or auto (default)\n"
               "data: the folder of the IDX files (default " FMNIST_DEFAULT_DIR
               ", from Debian's package dataset-fashion-mnist)\n");
}

/* Value of "--name=value" when arg is that option, else NULL. */
static const char *opt_val(const char *arg, const char *name) {
    size_t n = strlen(name);
    return strncmp(arg, name, n) == 0 && arg[n] == '=' ? arg + n + 1 : NULL;
}

/* The number v of the option arg ("--lr=0.1") when it lies in [lo, hi]. */
static int parse_num(const char *arg, const char *v, double lo, double hi, double *out) {
    char *end;
    double d = strtod(v, &end);
    if (*v == '\0' || *end != '\0' || !(d >= lo && d <= hi)) {
        fprintf(stderr, "train_fashion_mnist: %s: expected a number in [%g, %g]\n", arg, lo, hi);
        return -1;
    }
    *out = d;
    return 0;
}

static int parse_args(int argc, char **argv, options *o) {
    *o = (options){.device = "auto",
                   .data = FMNIST_DEFAULT_DIR,
                   .precision = KMUX_F32,
                   .optimizer = OPT_SGD,
                   .epochs = 1,
                   .progress = isatty(STDOUT_FILENO),
                   .batch = 64,
                   .train_limit = 60000,
                   .test_limit = 10000,
                   .growth_interval = 2000,
                   .lr = -1,
                   .momentum = 0.9,
                   .loss_scale = 65536.0,
                   .seed = 1};
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v;
        double d;
        int rc = 0;
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            usage(stdout);
            exit(0);
        } else if (!strcmp(a, "--no-progress")) {
            o->progress = 0;
        } else if (!strcmp(a, "--plans")) {
            o->plans = 1;
        } else if (!strcmp(a, "--stage-through-host")) {
            o->stage = 1;
        } else if ((v = opt_val(a, "--device"))) {
            o->device = v;
        } else if ((v = opt_val(a, "--data"))) {
            o->data = v;
        } else if ((v = opt_val(a, "--summary"))) {
            o->summary = v;
        } else if ((v = opt_val(a, "--loss-log"))) {
            o->loss_log = v;
        } else if ((v = opt_val(a, "--precision"))) {
            if (!strcmp(v, "f32"))
                o->precision = KMUX_F32;
            else if (!strcmp(v, "bf16"))
                o->precision = KMUX_BF16;
            else if (!strcmp(v, "f16"))
                o->precision = KMUX_F16;
            else
                rc = -1,
                fprintf(stderr, "train_fashion_mnist: --precision=%s: expected f32, bf16 or f16\n",
                        v);
        } else if ((v = opt_val(a, "--optimizer"))) {
            if (!strcmp(v, "sgd"))
                o->optimizer = OPT_SGD;
            else if (!strcmp(v, "adam"))
                o->optimizer = OPT_ADAM;
            else
                rc = -1,
                fprintf(stderr, "train_fashion_mnist: --optimizer=%s: expected sgd or adam\n", v);
        } else if ((v = opt_val(a, "--epochs"))) {
            if (!(rc = parse_num(a, v, 1, 1000, &d))) o->epochs = (int)d;
        } else if ((v = opt_val(a, "--batch"))) {
            if (!(rc = parse_num(a, v, 1, 60000, &d))) o->batch = (int64_t)d;
        } else if ((v = opt_val(a, "--seed"))) {
            if (!(rc = parse_num(a, v, 0, 9007199254740992.0, &d))) o->seed = (uint64_t)d;
        } else if ((v = opt_val(a, "--threads"))) {
            if (!(rc = parse_num(a, v, 0, 4096, &d))) o->threads = (int)d;
        } else if ((v = opt_val(a, "--lr"))) {
            rc = parse_num(a, v, 0, 100, &o->lr);
        } else if ((v = opt_val(a, "--momentum"))) {
            rc = parse_num(a, v, 0, 0.9999, &o->momentum);
        } else if ((v = opt_val(a, "--loss-scale"))) {
            rc = parse_num(a, v, 1, 3.0e38, &o->loss_scale);
        } else if ((v = opt_val(a, "--growth-interval"))) {
            if (!(rc = parse_num(a, v, 1, 1e9, &d))) o->growth_interval = (int64_t)d;
        } else if ((v = opt_val(a, "--train-limit"))) {
            if (!(rc = parse_num(a, v, 1, 60000, &d))) o->train_limit = (int64_t)d;
        } else if ((v = opt_val(a, "--test-limit"))) {
            if (!(rc = parse_num(a, v, 1, 10000, &d))) o->test_limit = (int64_t)d;
        } else {
            fprintf(stderr, "train_fashion_mnist: unknown option '%s'\n", a);
            usage(stderr);
            return -1;
        }
        if (rc) return -1;
    }
    if (o->lr < 0) o->lr = o->optimizer == OPT_SGD ? 0.02 : 0.001;
    return 0;
}

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* Pixels of the images idx[0..n) as f32, scaled to [0, 1] and normalised with the training set's
 * mean and standard deviation (torchvision's ToTensor and Normalize((0.2860,), (0.3530,))). */
static void load_batch(const fmnist_split *d, const int32_t *idx, int64_t n, float *x) {
    const int64_t px = d->rows * d->cols;
    for (int64_t i = 0; i < n; i++) {
        const uint8_t *src = d->images + (int64_t)idx[i] * px;
        for (int64_t j = 0; j < px; j++)
            x[i * px + j] = ((float)src[j] * (1.0f / 255.0f) - 0.2860f) * (1.0f / 0.3530f);
    }
}

/* The labels of the images idx[0..n) as int32 (the loss op's label type). */
static void load_labels(const fmnist_split *d, const int32_t *idx, int64_t n, int32_t *labels) {
    for (int64_t i = 0; i < n; i++)
        labels[i] = d->labels[idx[i]];
}

/* Loss and accuracy over the first n test images, batches of up to 1000. */
static int evaluate(net *nt, const fmnist_split *d, int64_t n, const int32_t *idx, double *loss,
                    double *acc) {
    int64_t correct = 0;
    double total = 0;
    for (int64_t i = 0; i < n; i += 1000) {
        int64_t m = n - i < 1000 ? n - i : 1000;
        net_batch *b = net_batch_get(nt, m, 0);
        if (!b) return -1;
        load_batch(d, idx + i, m, b->x32.host);
        load_labels(d, idx + i, m, b->labels.host);
        double l;
        if (net_forward(nt, b) || net_loss(nt, b, 0, NULL, &l, &correct)) return -1;
        total += l * (double)m;
    }
    *loss = total / (double)n, *acc = (double)correct / (double)n;
    return 0;
}

static void progress(int epoch, int64_t done, int64_t total, double loss) {
    int w = 30, f = (int)(w * done / total);
    printf("\repoch %d [%.*s%*s] %3d%%  loss %.4f", epoch, f, "##############################",
           w - f, "", (int)(100 * done / total), loss);
    fflush(stdout);
}

/* Loss-scaling state in device memory (kmux_unscale_check_finite, kmux_loss_scale_update), and
 * the plans that keep it there: the scale's reciprocal (kmux_eltwise RECIPROCAL) and the count of
 * skipped steps (kmux_binary ADD of the found-inf flag), so that a step reads nothing back. */
typedef struct scaler {
    float *scale, *inv, *found, *skipped;
    int32_t *tracker;
    kmux_plan *recip, *count;
} scaler;

/* The plans of the scaler on dev (one f32 element each). */
static int scaler_plans(kmux_device *dev, scaler *sc) {
    kmux_eltwise_desc e = KMUX_ELTWISE_DESC_INIT;
    e.alg = KMUX_ELTWISE_RECIPROCAL, e.n = 1;
    kmux_binary_desc b = KMUX_BINARY_DESC_INIT;
    b.alg = KMUX_BINARY_ADD, b.ndims = 1, b.dims[0] = 1, b.src1_dims[0] = 1;
    kmux_status st = kmux_eltwise_plan_create(dev, &e, NULL, &sc->recip);
    if (st == KMUX_OK) st = kmux_binary_plan_create(dev, &b, NULL, &sc->count);
    if (st == KMUX_OK) return 0;
    fprintf(stderr, "train_fashion_mnist: the loss scaler's plans: %s: %s\n", kmux_status_str(st),
            kmux_last_error());
    return -1;
}

/* GradScaler's unscale and update, on the stream, without a synchronisation: inv = 1 / scale
 * (as GradScaler's reciprocal), found = 0, the gradients unscaled and checked, skipped +=
 * found, the scale updated. */
static kmux_status scaler_step(kmux_stream *s, scaler *sc, float *grads, int64_t n,
                               int64_t growth_interval) {
    kmux_eltwise_args e = KMUX_ELTWISE_ARGS_INIT;
    e.src = sc->scale, e.dst = sc->inv;
    kmux_status st = kmux_eltwise_execute(sc->recip, s, &e);
    if (st == KMUX_OK) st = kmux_memset(s, sc->found, 0, 4);
    void *t[1] = {grads};
    const int64_t sz[1] = {n};
    const kmux_dtype ty[1] = {KMUX_F32};
    if (st == KMUX_OK) st = kmux_unscale_check_finite(s, 1, t, sz, ty, sc->inv, sc->found);
    kmux_binary_args b = KMUX_BINARY_ARGS_INIT;
    b.src0 = sc->skipped, b.src1 = sc->found, b.dst = sc->skipped;
    if (st == KMUX_OK) st = kmux_binary_execute(sc->count, s, &b);
    if (st == KMUX_OK)
        st =
            kmux_loss_scale_update(s, sc->scale, sc->tracker, sc->found, 2.0, 0.5, growth_interval);
    return st;
}

/* What the training steps write for the epoch's line instead of reading it back each step: the
 * mean loss and the predictions of every step (and with f16 its found-inf flag), in device
 * memory, read once at the end of the epoch. */
typedef struct epoch_log {
    float *loss, *found; /* device: one per step */
    int32_t *pred;       /* device: one per training image */
    float *loss_h, *found_h;
    int32_t *pred_h;
    size_t bytes; /* on the device */
} epoch_log;

static int epoch_log_init(kmux_device *dev, int64_t steps, int64_t images, epoch_log *el) {
    memset(el, 0, sizeof *el);
    const size_t sb = (size_t)steps * 4, pb = (size_t)images * 4;
    kmux_status st = kmux_malloc(dev, sb, (void **)&el->loss);
    if (st == KMUX_OK) st = kmux_malloc(dev, sb, (void **)&el->found);
    if (st == KMUX_OK) st = kmux_malloc(dev, pb, (void **)&el->pred);
    if (st != KMUX_OK) {
        fprintf(stderr, "train_fashion_mnist: the epoch log: %s\n", kmux_last_error());
        return -1;
    }
    el->bytes = 2 * sb + pb;
    el->loss_h = calloc((size_t)steps, 4), el->found_h = calloc((size_t)steps, 4);
    el->pred_h = calloc((size_t)images, 4);
    if (!el->loss_h || !el->found_h || !el->pred_h) {
        fprintf(stderr, "train_fashion_mnist: out of host memory for the epoch log\n");
        return -1;
    }
    return 0;
}

static void epoch_log_free(kmux_device *dev, epoch_log *el) {
    if (el->loss) kmux_free(dev, el->loss);
    if (el->found) kmux_free(dev, el->found);
    if (el->pred) kmux_free(dev, el->pred);
    free(el->loss_h), free(el->found_h), free(el->pred_h);
    memset(el, 0, sizeof *el);
}

/* The epoch's log on the host (one synchronisation). */
static kmux_status epoch_log_pull(kmux_stream *s, epoch_log *el, int64_t steps, int64_t images,
                                  int f16) {
    kmux_status st =
        kmux_memcpy(s, el->loss_h, el->loss, (size_t)steps * 4, KMUX_MEMCPY_DEVICE_TO_HOST);
    if (st == KMUX_OK)
        st = kmux_memcpy(s, el->pred_h, el->pred, (size_t)images * 4, KMUX_MEMCPY_DEVICE_TO_HOST);
    if (st == KMUX_OK && f16)
        st = kmux_memcpy(s, el->found_h, el->found, (size_t)steps * 4, KMUX_MEMCPY_DEVICE_TO_HOST);
    if (st == KMUX_OK) st = kmux_stream_synchronize(s);
    return st;
}

#define KTRY(call)                                                                                 \
    do {                                                                                           \
        kmux_status s_ = (call);                                                                   \
        if (s_ != KMUX_OK) {                                                                       \
            fprintf(stderr, "train_fashion_mnist: %s failed: %s: %s\n", #call,                     \
                    kmux_status_str(s_), kmux_last_error());                                       \
            goto fail;                                                                             \
        }                                                                                          \
    } while (0)

int main(int argc, char **argv) {
    options o;
    if (parse_args(argc, argv, &o)) return 2;
    char err[8192];
    fmnist_split train = {0}, test = {0};
    if (fmnist_load(o.data, "train", 60000, &train, err, sizeof err) ||
        fmnist_load(o.data, "t10k", 10000, &test, err, sizeof err)) {
        fprintf(stderr, "train_fashion_mnist: %s\n", err);
        fmnist_free(&train);
        return 1;
    }
    int rc = 1;
    kmux_context *ctx = NULL;
    kmux_device *dev = NULL;
    kmux_stream *s = NULL;
    net nt;
    int have_net = 0;
    optim opt = {0};
    memstat mem = {{0}, {0}, 0}, mem_step = {{0}, {0}, 0};
    scaler sc = {0};
    epoch_log el = {0};
    FILE *loss_log = NULL;
    int32_t *train_idx = malloc(sizeof(int32_t) * 60000),
            *test_idx = malloc(sizeof(int32_t) * 10000);
    if (!train_idx || !test_idx) goto fail;
    uint64_t data_rng = o.seed ^ 0x5eedda7aull;
    for (int32_t i = 0; i < 60000; i++)
        train_idx[i] = i;
    for (int32_t i = 0; i < 10000; i++)
        test_idx[i] = i;
    /* A subset is a fixed seeded sample; the whole set keeps the files' order before shuffling. */
    if (o.train_limit < 60000) rng_shuffle(&data_rng, train_idx, 60000);
    if (o.test_limit < 10000) rng_shuffle(&data_rng, test_idx, 10000);

    kmux_context_options copt = KMUX_CONTEXT_OPTIONS_INIT;
    copt.num_threads = o.threads;
    KTRY(kmux_context_create(&copt, &ctx));
    if (kmux_device_find(ctx, o.device, &dev) != KMUX_OK) {
        fprintf(stderr, "train_fashion_mnist: --device=%s: %s\navailable devices:", o.device,
                kmux_last_error());
        int count = 0;
        kmux_device_count(ctx, &count);
        for (int i = 0; i < count; i++) {
            kmux_device *d;
            if (kmux_device_get(ctx, i, &d) == KMUX_OK) fprintf(stderr, " %s", kmux_device_id(d));
        }
        fprintf(stderr, " auto\n");
        goto fail;
    }
    KTRY(kmux_stream_create(dev, &s));
    kmux_device_props props;
    KTRY(kmux_device_props_get(dev, &props));
    if (net_create(&nt, dev, s, o.precision, o.seed, o.stage, &mem)) goto fail;
    have_net = 1;
    if (o.plans) nt.plan_log = stdout;
    size_t opt_bytes;
    if (optim_init(&opt, o.optimizer, o.lr, o.momentum, dev, s, nt.L.total, o.precision,
                   &opt_bytes))
        goto fail;
    mem.dev[MEM_OPTIMISER] += opt_bytes;
    if (net_cast_weights(&nt)) goto fail; /* then the optimiser writes the copy every step */
    int f16 = o.precision == KMUX_F16;
    if (f16) {
        void *p[5];
        for (int i = 0; i < 5; i++) {
            KTRY(kmux_malloc(dev, 4, &p[i]));
            KTRY(kmux_memset(s, p[i], 0, 4));
            mem.dev[MEM_WORKSPACE] += 4;
        }
        sc = (scaler){p[0], p[1], p[2], p[3], p[4], NULL, NULL};
        float init = (float)o.loss_scale;
        KTRY(kmux_memcpy(s, sc.scale, &init, 4, KMUX_MEMCPY_HOST_TO_DEVICE));
        if (scaler_plans(dev, &sc)) goto fail;
    }
    if (o.loss_log && !(loss_log = fopen(o.loss_log, "w"))) {
        fprintf(stderr, "train_fashion_mnist: cannot write %s\n", o.loss_log);
        goto fail;
    }
    printf("kmux %s, device %s (%s, %s), %s, %s lr %g, batch %lld, seed %llu, %lld train / %lld "
           "test images\n",
           kmux_version(), kmux_device_id(dev), props.name, props.library_version,
           kmux_dtype_name(o.precision), o.optimizer == OPT_SGD ? "SGD+momentum" : "Adam", o.lr,
           (long long)o.batch, (unsigned long long)o.seed, (long long)o.train_limit,
           (long long)o.test_limit);

    uint64_t shuffle_rng = o.seed;
    const int64_t ntrain = o.train_limit, steps = (ntrain + o.batch - 1) / o.batch;
    if (epoch_log_init(dev, steps, ntrain, &el)) goto fail;
    double loss_head = 0, loss_tail = 0, test_loss = 0, test_acc = 0, epoch_s = 0;
    const int64_t window = steps / 5 < 20 ? (steps / 5 > 0 ? steps / 5 : 1) : 20;
    int64_t skipped_total = 0, head_n = 0;
    float scale = (float)o.loss_scale;
    for (int epoch = 1; epoch <= o.epochs; epoch++) {
        rng_shuffle(&shuffle_rng, train_idx, ntrain);
        double t0 = now_s(), sum_loss = 0, tail_sum = 0;
        int64_t correct = 0, skipped = 0, tail_n = 0;
        for (int64_t step = 0; step < steps; step++) {
            int64_t i0 = step * o.batch, n = ntrain - i0 < o.batch ? ntrain - i0 : o.batch;
            net_batch *b = net_batch_get(&nt, n, 1);
            if (!b) goto fail;
            if (epoch == 1 && step == 0) mem_step = mem; /* what one training step needs */
            load_batch(&train, train_idx + i0, n, b->x32.host);
            load_labels(&train, train_idx + i0, n, b->labels.host);
            /* f16: the loss gradient times the loss scale, read by the op on the device; the
             * mean loss and the predictions go to the epoch log, not to the host */
            if (net_forward(&nt, b) ||
                net_loss_to(&nt, b, 1, f16 ? sc.scale : NULL, el.loss + step, el.pred + i0))
                goto fail;
            if (net_backward(&nt, b)) goto fail;
            int found = 0;
            if (f16) {
                KTRY(scaler_step(s, &sc, nt.g32.dev, nt.L.total, o.growth_interval));
                KTRY(kmux_memcpy(s, el.found + step, sc.found, 4, KMUX_MEMCPY_DEVICE_TO_DEVICE));
                /* the flag on the host only for Adam's step count (a host value of
                 * kmux_optimizer_args, which must not advance on a skipped step) */
                if (o.optimizer == OPT_ADAM) {
                    float found_f;
                    KTRY(kmux_memcpy(s, &found_f, sc.found, 4, KMUX_MEMCPY_DEVICE_TO_HOST));
                    KTRY(kmux_stream_synchronize(s));
                    found = found_f != 0.0f;
                }
            }
            /* GradScaler.step: no update on overflowed gradients, decided on the device */
            if (optim_step(&opt, nt.w32.dev, nt.g32.dev, nt.t == KMUX_F32 ? NULL : nt.w.dev,
                           f16 ? sc.found : NULL, found))
                goto fail;
            if (o.progress && (step % 16 == 0 || step == steps - 1)) { /* reads the step's loss */
                float l;
                KTRY(kmux_memcpy(s, &l, el.loss + step, 4, KMUX_MEMCPY_DEVICE_TO_HOST));
                KTRY(kmux_stream_synchronize(s));
                progress(epoch, step + 1, steps, l);
            }
        }
        /* the epoch's losses, predictions and found-inf flags: one read-back */
        KTRY(epoch_log_pull(s, &el, steps, ntrain, f16));
        for (int64_t step = 0; step < steps; step++) {
            const int64_t i0 = step * o.batch, n = ntrain - i0 < o.batch ? ntrain - i0 : o.batch;
            const double loss = el.loss_h[step];
            sum_loss += loss * (double)n;
            if (epoch == 1 && step < window) loss_head += loss, head_n++;
            if (step >= steps - window) tail_sum += loss, tail_n++;
            if (loss_log)
                fprintf(loss_log, "%d %lld %.9g %d\n", epoch, (long long)step, loss,
                        f16 && el.found_h[step] != 0.0f);
        }
        for (int64_t i = 0; i < ntrain; i++)
            correct += el.pred_h[i] == train.labels[train_idx[i]];
        if (f16) { /* the scale and the skipped steps, once an epoch */
            float skipped_f;
            KTRY(kmux_memcpy(s, &skipped_f, sc.skipped, 4, KMUX_MEMCPY_DEVICE_TO_HOST));
            KTRY(kmux_memcpy(s, &scale, sc.scale, 4, KMUX_MEMCPY_DEVICE_TO_HOST));
            KTRY(kmux_stream_synchronize(s));
            skipped = (int64_t)skipped_f - skipped_total;
        }
        epoch_s = now_s() - t0;
        if (o.progress) printf("\n");
        loss_tail = tail_sum / (double)tail_n;
        skipped_total += skipped;
        if (evaluate(&nt, &test, o.test_limit, test_idx, &test_loss, &test_acc)) goto fail;
        printf("epoch %d: train loss %.4f acc %.2f%% | test loss %.4f acc %.2f%% | %.2f s, %.0f "
               "images/s",
               epoch, sum_loss / (double)ntrain, 100.0 * (double)correct / (double)ntrain,
               test_loss, 100.0 * test_acc, epoch_s, (double)ntrain / epoch_s);
        if (f16) printf(" | loss scale %g, %lld steps skipped", scale, (long long)skipped);
        printf("\n");
        fflush(stdout);
    }
    loss_head /= (double)head_n;
    printf("epoch log (each step's mean loss and predictions, read once an epoch): %.3f MiB on "
           "the device, not in the step's account below\n",
           (double)el.bytes / (1024.0 * 1024.0));
    printf("batch %lld, %s, %s: ", (long long)o.batch, kmux_dtype_name(o.precision),
           o.optimizer == OPT_SGD ? "SGD+momentum" : "Adam");
    memstat_print(&mem_step, &mem, stdout, nt.L.params,
                  o.optimizer == OPT_ADAM ? 2
                  : o.momentum != 0       ? 1
                                          : 0);
    if (o.summary) {
        FILE *f = fopen(o.summary, "w");
        if (!f) {
            fprintf(stderr, "train_fashion_mnist: cannot write %s\n", o.summary);
            goto fail;
        }
        fprintf(f,
                "device=%s\nprecision=%s\nsteps=%lld\nloss_first=%.6f\nloss_last=%.6f\n"
                "test_loss=%.6f\ntest_acc=%.6f\nskipped=%lld\nloss_scale=%g\nepoch_seconds=%.3f\n"
                "images_per_second=%.1f\n",
                kmux_device_id(dev), kmux_dtype_name(o.precision), (long long)steps, loss_head,
                loss_tail, test_loss, test_acc, (long long)skipped_total, scale, epoch_s,
                (double)ntrain / epoch_s);
        fclose(f);
    }
    rc = 0;
fail:
    if (loss_log) fclose(loss_log);
    epoch_log_free(dev, &el);
    optim_free(&opt);
    if (have_net) net_destroy(&nt);
    if (sc.scale) {
        kmux_free(dev, sc.scale), kmux_free(dev, sc.inv);
        kmux_free(dev, sc.found), kmux_free(dev, sc.skipped), kmux_free(dev, sc.tracker);
    }
    kmux_plan_destroy(sc.recip), kmux_plan_destroy(sc.count);
    kmux_stream_destroy(s);
    kmux_context_destroy(ctx);
    free(train_idx);
    free(test_idx);
    fmnist_free(&train);
    fmnist_free(&test);
    return rc;
}
