/* optim.c - SGD with momentum and Adam (torch.optim's formulas) through kmux_optimizer_*. */
#include "optim.h"

#include <stdio.h>

#define KCHECK(call)                                                                               \
    do {                                                                                           \
        kmux_status s_ = (call);                                                                   \
        if (s_ != KMUX_OK) {                                                                       \
            fprintf(stderr, "train_fashion_mnist: %s failed: %s: %s\n", #call,                     \
                    kmux_status_str(s_), kmux_last_error());                                       \
            return -1;                                                                             \
        }                                                                                          \
    } while (0)

static int zeros(optim *o, float **p) {
    KCHECK(kmux_malloc(o->dev, (size_t)o->n * sizeof(float), (void **)p));
    KCHECK(kmux_memset(o->s, *p, 0, (size_t)o->n * sizeof(float)));
    return 0;
}

int optim_init(optim *o, optim_kind kind, double lr, double momentum, kmux_device *dev,
               kmux_stream *s, int64_t n, kmux_dtype copy_type, size_t *bytes) {
    *o = (optim){kind, lr, n, 0, dev, s, NULL, NULL, NULL};
    kmux_optimizer_desc d = KMUX_OPTIMIZER_DESC_INIT;
    d.alg = kind == OPT_ADAM ? KMUX_OPTIMIZER_ADAM : KMUX_OPTIMIZER_SGD;
    d.n = n;
    d.copy_type = copy_type == KMUX_F32 ? 0 : (int)copy_type;
    if (kind == OPT_SGD) d.momentum = (float)momentum;
    KCHECK(kmux_optimizer_plan_create(dev, &d, NULL, &o->plan));
    int slots = kind == OPT_ADAM ? 2 : momentum != 0.0 ? 1 : 0;
    if (slots >= 1 && zeros(o, &o->m)) return -1;
    if (slots >= 2 && zeros(o, &o->v)) return -1;
    *bytes = (size_t)n * sizeof(float) * (size_t)slots;
    return 0;
}

int optim_step(optim *o, float *w, const float *g, void *copy, const float *found_inf,
               int skipped) {
    kmux_optimizer_args a = KMUX_OPTIMIZER_ARGS_INIT;
    a.param = w, a.grad = g, a.state1 = o->m, a.state2 = o->v, a.param_copy = copy;
    a.lr = (float)o->lr;
    a.step = o->t + 1;
    a.found_inf = found_inf;
    KCHECK(kmux_optimizer_execute(o->plan, o->s, &a));
    if (!skipped) o->t++;
    return 0;
}

void optim_free(optim *o) {
    kmux_plan_destroy(o->plan);
    if (o->m) kmux_free(o->dev, o->m);
    if (o->v) kmux_free(o->dev, o->v);
    o->plan = NULL, o->m = o->v = NULL;
}
