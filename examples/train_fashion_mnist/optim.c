/* optim.c - SGD with momentum and Adam, as torch.optim defines them. */
#include <math.h>
#include <stdlib.h>

#include <stddef.h>

#include "optim.h"

int optim_init(optim *o, optim_kind kind, double lr, double momentum, int64_t n, size_t *bytes) {
    *o = (optim){kind, lr, momentum, 0.9, 0.999, 1e-8, n, 0, NULL, NULL};
    int slots = kind == OPT_ADAM ? 2 : momentum != 0.0 ? 1 : 0;
    if (slots >= 1 && !(o->m = calloc((size_t)n, sizeof(float)))) return -1;
    if (slots >= 2 && !(o->v = calloc((size_t)n, sizeof(float)))) return -1;
    *bytes = (size_t)n * sizeof(float) * (size_t)slots;
    return 0;
}

void optim_step(optim *o, float *w, const float *g) {
    o->t++;
    if (o->kind == OPT_SGD) {
        for (int64_t i = 0; i < o->n; i++) {
            float d = g[i];
            if (o->m) d = o->m[i] = (float)o->momentum * o->m[i] + g[i];
            w[i] -= (float)o->lr * d;
        }
        return;
    }
    double c1 = 1.0 - pow(o->beta1, (double)o->t), c2 = 1.0 - pow(o->beta2, (double)o->t);
    float b1 = (float)o->beta1, b2 = (float)o->beta2, step = (float)(o->lr / c1);
    float rc2 = (float)(1.0 / sqrt(c2)), eps = (float)o->eps;
    for (int64_t i = 0; i < o->n; i++) {
        o->m[i] = b1 * o->m[i] + (1.0f - b1) * g[i];
        o->v[i] = b2 * o->v[i] + (1.0f - b2) * g[i] * g[i];
        w[i] -= step * o->m[i] / (sqrtf(o->v[i]) * rc2 + eps);
    }
}

void optim_free(optim *o) {
    free(o->m);
    free(o->v);
    o->m = o->v = NULL;
}
