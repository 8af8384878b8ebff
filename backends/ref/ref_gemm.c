/*
 * ref_gemm.c - reference matmul: D = d_scale * act(a_scale * b_scale * alpha * op(A) op(B)
 *              + beta * C + bias), per batch matrix.
 *
 * Inputs are decoded exactly to double (op(A) one row at a time, op(B) in panels of columns of
 * at most REF_PANEL_ELEMS doubles, transposed so that every dot product runs over contiguous
 * memory: the oracle's scratch is bounded by the panel and the m x n accumulator, not by 8x the
 * operands), products are summed in
 * double in the order l = 0..k-1 into an m x n accumulator, and the shared CPU finish
 * (dispatch/common/cpu_finish.h) applies alpha, beta * C, the epilogue, d_scale and amax and
 * rounds once to c_type. For I32 compute the i8 products are summed exactly (in double, exact
 * while |sum| < 2^53, i.e. k < 2^39); the finish wraps modulo 2^32 as integer GEMMs do.
 *
 * The core runs k == 0, alpha == 0 and empty problems itself; this file sees m, n, k >= 1.
 */
#include "ref_internal.h"
#include "ref_dtype.h"

#include "dispatch/common/cpu_finish.h"
#include "kmux_sys_alloc.h"

#include <math.h>
#include <stdlib.h>

/* Doubles of one panel of op(B) (8 MiB). KMUX_REF_PANEL_ELEMS overrides it, read once per context
 * (ref_init): an internal knob for tests (results do not depend on it: every dot product sums
 * l = 0..k-1 in order). */
#define REF_PANEL_ELEMS ((int64_t)1 << 20)

int64_t kmux_ref_panel_elems_from_env(void) {
    const char *v = getenv("KMUX_REF_PANEL_ELEMS");
    long long x = v ? strtoll(v, NULL, 10) : 0;
    return x > 0 ? (int64_t)x : REF_PANEL_ELEMS;
}

kmux_status kmux_ref_matmul_plan_create(void *state, int device, const kmux_matmul_desc *desc,
                                        const kmux_plan_prefs *prefs, void **plan,
                                        int *impl_count) {
    ref_plan *p = kmux_sys_calloc(1, sizeof *p);
    if (!p) return kmux_ref_oom(state, "kmux_matmul_plan_create", sizeof *p);
    p->kind = REF_PLAN_MATMUL;
    p->mm = *desc;
    *plan = p;
    *impl_count = 1;
    return KMUX_OK;
}

/* Element offset of (row, col) of a matrix stored in `order` with leading dimension ld. */
static int64_t ref_at(kmux_order order, int64_t row, int64_t col, int64_t ld) {
    return order == KMUX_ROW_MAJOR ? row * ld + col : row + col * ld;
}

/* acc (m x n, C's storage order, ld = m or n) = op(A) op(B) of one batch, in double, for the
 * panel of columns [j0, j0 + nb). */
static void ref_mm_panel(const kmux_matmul_desc *d, const kmux_matmul_args *a, int64_t batch,
                         int64_t j0, int64_t nb, double *row_a, double *bt, double *acc) {
    const int64_t base_b = batch * d->stride_b, base_a = batch * d->stride_a;
    const int64_t ld = d->order == KMUX_ROW_MAJOR ? d->n : d->m;
    for (int64_t j = 0; j < nb; j++)
        for (int64_t l = 0; l < d->k; l++) {
            int64_t at = d->transb == KMUX_NO_TRANS ? ref_at(d->order, l, j0 + j, d->ldb)
                                                    : ref_at(d->order, j0 + j, l, d->ldb);
            bt[j * d->k + l] = kmux_ref_load(a->B, d->b_type, base_b + at);
        }
    for (int64_t i = 0; i < d->m; i++) {
        for (int64_t l = 0; l < d->k; l++) {
            int64_t at = d->transa == KMUX_NO_TRANS ? ref_at(d->order, i, l, d->lda)
                                                    : ref_at(d->order, l, i, d->lda);
            row_a[l] = kmux_ref_load(a->A, d->a_type, base_a + at);
        }
        for (int64_t j = 0; j < nb; j++) {
            double sum = 0.0;
            const double *b = bt + j * d->k;
            for (int64_t l = 0; l < d->k; l++)
                sum += row_a[l] * b[l];
            acc[ref_at(d->order, i, j0 + j, ld)] = sum;
        }
    }
}

kmux_status kmux_ref_matmul_execute(void *state, const void *plan, int impl, void *stream,
                                    const kmux_matmul_args *args) {
    const kmux_matmul_desc *d = &((const ref_plan *)plan)->mm;
    int64_t nb = ((const ref_state *)state)->panel_elems / d->k;
    if (nb < 1) nb = 1;
    if (nb > d->n) nb = d->n;
    size_t elems = (size_t)d->k + (size_t)nb * (size_t)d->k + (size_t)d->m * (size_t)d->n;
    double *row_a = kmux_sys_malloc(elems * sizeof(double));
    if (!row_a) return kmux_ref_oom(state, "kmux_matmul_execute", elems * sizeof(double));
    double *bt = row_a + d->k, *acc = bt + nb * d->k;
    kmux_cpu_acc ca = {acc, KMUX_F64, d->order == KMUX_ROW_MAJOR ? d->n : d->m, 0};
    double amax = 0.0;
    for (int64_t b = 0; b < d->batch_count; b++) {
        for (int64_t j0 = 0; j0 < d->n; j0 += nb)
            ref_mm_panel(d, args, b, j0, nb < d->n - j0 ? nb : d->n - j0, row_a, bt, acc);
        kmux_cpu_finish_batch(d, args, &ca, b, &amax);
    }
    free(row_a);
    if (args->amax_d) *args->amax_d = (float)amax;
    kmux_cpu_matmul_bias_grad(d, args);
    return KMUX_OK;
}
