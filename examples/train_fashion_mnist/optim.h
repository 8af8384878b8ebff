/* optim.h - the optimisers, on the f32 master weights in host memory (PyTorch's formulas). */
#ifndef FMNIST_OPTIM_H
#define FMNIST_OPTIM_H

#include <stdint.h>

typedef enum optim_kind { OPT_SGD, OPT_ADAM } optim_kind;

typedef struct optim {
    optim_kind kind;
    double lr, momentum, beta1, beta2, eps;
    int64_t n, t; /**< parameters, steps taken */
    float *m, *v; /**< momentum buffer / Adam moments */
} optim;

/** Allocates the state for n parameters; returns 0, or -1 when out of memory. Bytes of state in
 *  *bytes. */
int optim_init(optim *o, optim_kind kind, double lr, double momentum, int64_t n, size_t *bytes);
/** One step: torch.optim.SGD(momentum) (buf = momentum buf + g; p -= lr buf) or torch.optim.Adam
 *  (bias-corrected moments, eps added to sqrt(v_hat)). */
void optim_step(optim *o, float *w, const float *g);
void optim_free(optim *o);

#endif
