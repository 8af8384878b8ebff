/*
 * kb_verify.h - verification of a backend's result against the ref oracle, in the manner of
 * oneDNN's benchdnn.
 *
 * Inputs are small integers and one operand is sparse, chosen per problem (kb_fill_plan) so that
 * every partial sum is exact in the accumulation type: a correct backend then matches ref exactly
 * for f32, whatever its summation order, and within one rounding of a narrower output type. A
 * result whose expected values are mostly zeros proves little and is "mistrusted", not passed.
 * Outputs are pre-filled with NaN so elements never written are caught, and guard bands before and
 * after the output catch writes out of bounds.
 */
#ifndef KB_VERIFY_H
#define KB_VERIFY_H

#include <stddef.h>
#include <stdint.h>
#include "kb_problem.h"

typedef enum kb_verify_status {
    KB_VERIFY_NOT_RUN = 0, /**< --mode=P */
    KB_VERIFY_PASSED,
    KB_VERIFY_FAILED,
    KB_VERIFY_MISTRUSTED,
    KB_VERIFY_ERROR /**< the check could not run (oracle or backend refused the problem) */
} kb_verify_status;

/** "passed", "failed", "mistrusted", "not_run", "error". */
const char *kb_verify_status_name(kb_verify_status s);

/** How a problem's verification data is made and how close the result must be. */
typedef struct kb_fill_plan {
    int range_a,
        range_b;      /**< dense operand: integers in [-range_a, range_a]; sparse: |v| <= range_b */
    double density_b; /**< fraction of nonzeros of the sparse operand */
    double k_red;     /**< longest reduction (terms summed into one output element) */
    int exact;        /**< 1 when every partial sum is exact in the accumulation type */
    double tol_abs;   /**< allowed |got - want| beyond tol_rel * |want| */
    double tol_rel;   /**< allowed relative error (output rounding) */
    double zero_trust; /**< most expected zeros (fraction) a trusted result may have; 0: the
                            default KB_ZERO_TRUST_FRACTION */
} kb_fill_plan;

/** Chooses the fill and tolerance of p from its dtypes, compute type and reduction length. */
void kb_plan_fill(const kb_problem *p, kb_fill_plan *f);

/** Default zero-trust threshold: more than this fraction of expected zeros -> mistrusted
 *  (benchdnn's compare_t default, zero_trust_percent_ = 30). */
#define KB_ZERO_TRUST_FRACTION 0.30

/** The zero-trust threshold benchdnn sets for p's op and direction (relu: a ReLU epilogue, which
 *  turns the negative half of the outputs into legitimate zeros). See kb_verify.c. */
double kb_zero_trust_limit(const kb_problem *p, int relu);

/** Expected values at some (sampled) or all output elements. */
typedef struct kb_oracle {
    int ok; /**< 0: no oracle (message says why) */
    char message[256];
    int sampled;          /**< 1 when only a subset of the output is checked */
    char sample_note[96]; /**< how the subset was chosen, e.g. "2 of 8 images, 64 of 512 filters" */
    int64_t total;        /**< output elements */
    int64_t count;        /**< elements checked */
    int64_t *index;       /**< linear output index of each checked element; NULL = 0..count-1 */
    double *expect;       /**< expected value of each checked element */
    unsigned char *trusted; /**< NULL, or 0 for elements that are zero by structure (excluded
                                 from the zero-trust count: strided BWD_D) */
    double ref_flops;       /**< operations the oracle computed */
    double ref_ms;          /**< time the oracle took */
} kb_oracle;

void kb_oracle_free(kb_oracle *o);

/** Outcome of one check. */
typedef struct kb_check {
    kb_verify_status status;
    int sampled;
    int64_t checked, total;
    int64_t mismatches; /**< elements outside the tolerance (NaN included) */
    int64_t unwritten;  /**< elements still holding the NaN pre-fill (whole output scanned) */
    double max_abs_err, max_rel_err;
    double tol_abs, tol_rel;
    double zero_fraction; /**< expected zeros / trusted checked elements */
    int guard_ok;         /**< guard bands intact */
    int inputs_ok;        /**< inputs unchanged by the backend */
    char message[320];    /**< first mismatch, or why the check could not run */
} kb_check;

/** Initialises *c (status NOT_RUN, guards and inputs ok, message ""). */
void kb_check_init(kb_check *c);

/** Compares out (dtype t, o->total elements in the layout of the full output) with the oracle
 *  under the fill plan's tolerance, scans the whole output for unwritten elements, and sets the
 *  status from everything recorded in *c (guard_ok and inputs_ok must be set before). */
void kb_compare(const kb_oracle *o, const kb_fill_plan *f, const void *out, kmux_dtype t,
                kb_check *c);

/** Guard band helpers: fill `bytes` at p with the canary pattern of `seed`, and check it. */
void kb_guard_fill(unsigned char *p, size_t bytes, unsigned seed);
int kb_guard_check(const unsigned char *p, size_t bytes, unsigned seed);

#endif
