/* memstat.h - what the trainer allocated, by category, against the rule of thumb. */
#ifndef FMNIST_MEMSTAT_H
#define FMNIST_MEMSTAT_H

#include <stddef.h>
#include <stdio.h>

typedef enum mem_cat {
    MEM_WEIGHTS,     /**< master weights and their low-precision copy */
    MEM_GRADIENTS,   /**< parameter gradients (T and f32) */
    MEM_OPTIMISER,   /**< momentum / Adam moments */
    MEM_ACTIVATIONS, /**< forward activations kept for backward, and their gradients */
    MEM_WORKSPACE,   /**< plan workspaces, the ones vector, the loss-scaling scalars */
    MEM_CAT_COUNT
} mem_cat;

typedef struct memstat {
    size_t dev[MEM_CAT_COUNT];  /**< kmux_malloc on the device */
    size_t host[MEM_CAT_COUNT]; /**< host copies the trainer needs beside a GPU */
    size_t fwd_activations;     /**< forward activations of the training batch (rule of thumb) */
} memstat;

/** Prints the table of m (one training step) and the total of run (the whole run); params:
 *  parameter count, opt_slots: f32 values of optimiser state per parameter (1 for SGD with
 *  momentum, 2 for Adam). */
void memstat_print(const memstat *m, const memstat *run, FILE *out, long long params,
                   int opt_slots);

#endif
