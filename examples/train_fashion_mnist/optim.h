/* optim.h - the optimisers, as torch.optim defines them, run by kmux's optimizer op on the
 * device: the f32 master weights, their gradients and the optimiser's state never leave it. */
#ifndef FMNIST_OPTIM_H
#define FMNIST_OPTIM_H

#include <stddef.h>
#include <stdint.h>

#include <kmux.h>

typedef enum optim_kind { OPT_SGD, OPT_ADAM } optim_kind;

typedef struct optim {
    optim_kind kind;
    double lr;
    int64_t n, t;     /**< parameters, steps taken */
    kmux_device *dev; /**< where the state lives */
    kmux_stream *s;
    kmux_plan *plan;
    float *m, *v; /**< device: momentum buffer / Adam moments (NULL when unused) */
} optim;

/** A plan for n parameters on dev (SGD with `momentum`, or Adam with PyTorch's defaults), the
 *  updated weights also written as copy_type (0: none; f16/bf16: the copy the forward reads), and
 *  its state zeroed on the device. Returns 0, or -1 (message on stderr). Bytes of state in
 *  *bytes. */
int optim_init(optim *o, optim_kind kind, double lr, double momentum, kmux_device *dev,
               kmux_stream *s, int64_t n, kmux_dtype copy_type, size_t *bytes);
/** One step on the device: w (f32 master) from g (f32), the copy written when asked; found_inf
 *  (device f32, may be NULL): a step whose gradients overflowed leaves everything as it was (as
 *  GradScaler.step). skipped: the caller knows it was (the step count stays). Returns 0 or -1. */
int optim_step(optim *o, float *w, const float *g, void *copy, const float *found_inf, int skipped);
void optim_free(optim *o);

#endif
