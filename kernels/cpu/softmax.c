/*
 * softmax.c - the softmax family on the CPU (kmux_cpu_softmax): the shared f32 row routine of
 * dispatch/common/kmux_softmax.h over the rows, split across threads; the mean loss summed in
 * row order in f64 after them (deterministic, whatever the split).
 */
#include <math.h>

#include "cast_internal.h"
#include "kmux_cpu_kernels.h"
#include "kmux_softmax.h"

static void rows(void *ctx, int64_t begin, int64_t end, int tid) {
    (void)tid;
    const kmux_smx_params *p = ctx;
    for (int64_t r = begin; r < end; r++)
        kmux_smx_row(p, r);
}

void kmux_cpu_softmax(const kmux_softmax_desc *d, const kmux_softmax_args *a, int threads) {
    const kmux_smx_params p = kmux_smx_params_of(d, a);
    kmux_cast_parallel_for(d->rows, d->cols, threads, 1, rows, (void *)&p);
    if (d->alg == KMUX_SOFTMAX_CROSS_ENTROPY && a->mean_loss) {
        double total = 0.0;
        for (int64_t r = 0; r < d->rows; r++)
            total += (double)a->loss[r];
        *a->mean_loss = (float)(total / (double)d->rows);
    }
}
