/*
 * conformance.h - the cross-backend conformance library (static library kmux_conformance, linked
 * by tests/test_conformance_*.c). One file per job:
 *   report.c     options from the environment, counters, failure reports
 *   values.c     canaries, scalars and fills (element access: tests/util, on THE dtype codec)
 *   tolerance.c  precision figures of dtypes and compute types, error bounds, comparison
 *   guard.c      guarded host images, device copies, writes outside a tensor
 *   env.c        the devices under test and the oracle ("ref")
 *   require_device.c  KMUX_CONFORMANCE_REQUIRE_DEVICE, checked before Criterion's main (an
 *                object library, kmux_conformance_require, also linked by tests/test_amp.c)
 *   tables.c     the type combinations under test (from the public API) and conv shapes
 *   gemm.c       GEMM cases: layout, reproducer line, f64 model, fills, run and check
 *
 * Scheme (as oneDNN benchdnn): each case is run on "ref" (the oracle) and on every other
 * available device with the same inputs, and the outputs are compared
 *  - exactly for integer-valued fills: small integers, one operand made sparse until every
 *    partial sum (any order) is exactly representable in the accumulator and the output type;
 *  - within a bound scaled by K and the unit roundoffs of the compute and output types for
 *    random fills (and for GELU, which is never exact).
 * A device "claims" a case when plan creation (or kmux_gemm_ex) returns KMUX_OK; it may answer
 * KMUX_ERR_UNSUPPORTED (with a message, without touching the output); any other status fails.
 *
 * Every tensor lives in a guarded image: CF_GUARD bytes of canary before and after it, and
 * canary in every element of its span that is not part of the tensor (the gaps between rows
 * when ldc > n, between matrices when stride_c is larger than a matrix). Canaries of inputs are
 * NaN (or a large integer), so reading them shows in the result; canaries of outputs must come
 * back byte for byte, and inputs must come back unchanged.
 *
 * An independent f64 model (products of exactly decoded values, so exact for the integer
 * fills) drives the sparsification, gives the per-element error bounds, and checks "ref" itself:
 * a disagreement between ref and the model is reported as such.
 *
 * Environment:
 *   KMUX_CONFORMANCE_FULL=1        larger sweep (bigger shapes, every implementation of a plan)
 *   KMUX_CONFORMANCE_SHAPES=small  reduced sweep for a device that runs in the host emulation of
 *                                  the GPU execution model (the fake HIP runtime, tests/fake_hip):
 *                                  fewer shapes per layout, but still every order and transpose,
 *                                  padded leading dimensions, batches (one dtype row beyond 65535
 *                                  matrices), degenerate alpha/beta/k, every epilogue and bias
 *                                  type, every dtype row, sizes off the tile, every convolution
 *                                  direction, layout, stride, dilation, group and padding case;
 *                                  the same comparisons and tolerances (ignored with _FULL)
 *   KMUX_CONFORMANCE_DEVICES=a,b   only these device ids (ref always runs, as the oracle)
 *   KMUX_CONFORMANCE_CASE=N        only case number N of each test (as printed on failure)
 *   KMUX_CONFORMANCE_REQUIRE_DEVICE=ID  the suite is registered for device ID (tests/fake_hip:
 *                                  hip:0): without it, exit 77 ("Skipped") with the reason
 *                                  instead of checking only ref; with
 *   KMUX_CONFORMANCE_DEVICE_PROMISED=1  (the build promised ID) fail instead (require_device.c)
 */
#ifndef KMUX_CONFORMANCE_H
#define KMUX_CONFORMANCE_H

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kmux.h"
#include "kmux_dtype_desc.h"
#include "test_util.h"

/* ---- report.c: options and failure reporting ---------------------------------------------- */

#define CF_GUARD 256 /* bytes of canary before and after every tensor */
#define CF_MAX_DEVICES 32
#define CF_MAX_REPORTS 25 /* failures printed per test; the rest are only counted */

/** KMUX_CONFORMANCE_FULL is set (and not "0"). */
int cf_full(void);
/** KMUX_CONFORMANCE_SHAPES=small is set and KMUX_CONFORMANCE_FULL is not. */
int cf_small(void);
/** Case filter: -1 = every case, else only that case number (KMUX_CONFORMANCE_CASE). */
long cf_only_case(void);
/** Implementations executed per plan, walked with kmux_plan_next_impl: the first 4 (64 with
 *  KMUX_CONFORMANCE_FULL). */
int cf_max_impls(void);
/** How far a plan's implementations are walked: cf_max_impls(), or 64 when
 *  KMUX_CONFORMANCE_IMPLS is set. */
int cf_walk_limit(void);
/** Whether implementation `index` (0: the plan's default) named `name` is executed: the first
 *  cf_max_impls() ones, and beyond them those whose name contains one of the comma-separated
 *  substrings of KMUX_CONFORMANCE_IMPLS (tests/gpu/run.sh: "kmux-gpu:", kmux's own GPU kernels
 *  after cuBLASLt's and cuDNN's candidates). */
int cf_impl_wanted(int index, const char *name);
/* Moves a new plan on to its implementation `step` (0: the first). KMUX_OK, or the status of
 * kmux_plan_next_impl (KMUX_ERR_LAST_IMPL past the last) with the plan destroyed. */
kmux_status cf_plan_step(kmux_plan *plan, int step);

typedef struct cf_stats {
    long failures; /* reported through cf_fail */
    long cases;    /* cases prepared */
    long runs;     /* (case, device, implementation) executions compared */
    long unsupported;
} cf_stats;

/** The counters of the running test (each Criterion test runs in its own process). */
extern cf_stats cf_stat;

/** Reports one failure (a full reproducer, built by the caller) without stopping the test. */
void cf_fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/** Prints the summary of a test to stderr (always) and the number of suppressed failures. */
void cf_summary(const char *test);

/* ---- values.c: elements and fills --------------------------------------------------------- */

/* Element access: tu_get / tu_set (tests/util/test_util.h). */
/** Canary of one element of type t: a quiet NaN with a payload for float types, an unlikely
 *  large value for integers. As an input it poisons any result that reads it. */
void cf_poison(kmux_dtype t, void *p);
/** Deterministic random integer in [lo, hi] (tests/util xorshift). */
int64_t cf_rand_int(uint64_t *st, int64_t lo, int64_t hi);
/** Seed of case b of test a. */
uint64_t cf_seed(uint64_t a, uint64_t b);
/** A fill value: an integer in [lo, hi] when exact, else uniform in [-1, 1). */
double cf_fill_value(uint64_t *st, int exact, int64_t lo, int64_t hi);

/** Host scalar of the scale type of compute type c (kmux.h: double for F64, int32 for I32,
 *  float otherwise), holding v. */
typedef union cf_scalar {
    double d;
    float f;
    int32_t i;
} cf_scalar;
cf_scalar cf_make_scalar(kmux_compute_type c, double v);

/* ---- tolerance.c: precision figures and comparison ---------------------------------------- */

/** Unit roundoff of a storage type (0 for integers). */
double cf_unit_roundoff(kmux_dtype t);
/** Smallest positive (subnormal) value of a storage type (0 for integers). */
double cf_min_subnormal(kmux_dtype t);
/** Largest M such that every integer in [-M, M] is representable in t. */
double cf_exact_int_limit(kmux_dtype t);
/** Unit roundoff of the accumulation of a compute type, including the rounding of the inputs
 *  that the FAST types allow (TF32: 10 mantissa bits; bf16x3: about 2^-20 per product). */
double cf_compute_roundoff(kmux_compute_type c);
/** Largest integer magnitude below which a compute type accumulates integers exactly. */
double cf_compute_int_limit(kmux_compute_type c);
/** Whether an implementation's effective compute type honours the requested one: kmux never
 *  lowers precision silently (kmux.h), so a FAST or narrower type is only allowed when asked. */
int cf_compute_ok(kmux_compute_type requested, kmux_compute_type effective);

/** How results are compared. Per element e, with pre[e] the exact value before the activation
 *  and bound[e] the sum of the magnitudes of all terms that produced it:
 *    exact (integer fills, no GELU): got == want (NaN == NaN, -0 == +0);
 *    else acc = inexact ? bound * (k + 4) * u_acc : 0
 *         tol = acc + u_out * (2 |want| + acc) + min_out   (+ GELU slack, see tolerance.c). */
typedef struct cf_tol {
    int inexact;  /* random inputs: accumulation error possible */
    int gelu;     /* GELU epilogue: never exact */
    double u_acc; /* unit roundoff of the accumulation */
    double u_out; /* unit roundoff of the output type */
    double min_out;
    double k; /* length of the longest sum */
} cf_tol;

/** The bound for one element. */
double cf_tol_of(const cf_tol *ts, double want, double pre, double bound);
/** got equals want within tol (NaN matches NaN only, Inf matches exactly). */
int cf_same(double got, double want, double tol);

/* ---- guard.c: guarded tensors -------------------------------------------------------------- */

/** A host image: CF_GUARD bytes | span elements | CF_GUARD bytes. Elements of the span that
 *  are not part of the tensor (mask 0) and both guards hold the type's canary. */
typedef struct cf_tensor {
    kmux_dtype type;
    size_t esz;
    size_t front;        /* bytes before the first element: CF_GUARD + misalignment */
    int64_t span;        /* elements between the first and one past the last addressed one */
    size_t bytes;        /* size of the image */
    unsigned char *img;  /* as uploaded */
    unsigned char *mask; /* span entries: 1 where the element belongs to the tensor */
} cf_tensor;

/** misalign: elements added to the front guard, so that the first element is only
 *  element-aligned (CF_GUARD keeps 256-byte alignment otherwise). */
void cf_tensor_init_misaligned(cf_tensor *t, kmux_dtype type, int64_t span, int misalign);
void cf_tensor_init(cf_tensor *t, kmux_dtype type, int64_t span);
void cf_tensor_free(cf_tensor *t);
/** Start of the elements in the host image. */
void *cf_data(const cf_tensor *t);
double cf_tget(const cf_tensor *t, int64_t e);
/** Sets element e and marks it part of the tensor. */
void cf_tset(cf_tensor *t, int64_t e, double v);

/** Device copy of a tensor image. */
typedef struct cf_dbuf {
    kmux_device *dev;
    void *base;
    size_t bytes;
    size_t front;
} cf_dbuf;

kmux_status cf_upload(kmux_device *dev, kmux_stream *st, const cf_tensor *t, cf_dbuf *d);
/** Re-uploads the image (an output before every execution). */
kmux_status cf_reupload(kmux_stream *st, const cf_tensor *t, cf_dbuf *d);
kmux_status cf_download(kmux_stream *st, const cf_dbuf *d, unsigned char *out);
void cf_dfree(cf_dbuf *d);
/** Pointer to the first element of a device tensor. */
void *cf_dptr(const cf_dbuf *d);

/** First byte of got that differs from the uploaded image OUTSIDE the tensor (guards, gaps),
 *  as an offset into the image; -1 when there is none. */
int64_t cf_foreign_write(const cf_tensor *t, const unsigned char *got);
/** First byte of got that differs from the uploaded image anywhere; -1 when none. */
int64_t cf_any_change(const cf_tensor *t, const unsigned char *got);

/** Names element elem of a tensor for a message ("(batch 0, row i=3, col j=1)"). */
typedef void (*cf_locate_fn)(const void *ctx, int64_t elem, char *buf, size_t n);
/** Names byte o of an image: "front guard, ...", "back guard, ..." or "element E (...), which
 *  is not part of the tensor (gap)". */
void cf_describe_byte(const cf_tensor *t, int64_t o, cf_locate_fn loc, const void *ctx, char *buf,
                      size_t n);

typedef struct cf_cmp {
    int64_t bad, checked;
    int64_t first; /* element of the first mismatch, -1 */
    double got, want, tol;
} cf_cmp;

/** Compares the elements of got (an image of t) with want (span doubles). */
void cf_compare(const cf_tensor *t, const unsigned char *got_img, const double *want,
                const double *pre, const double *bound, const cf_tol *ts, cf_cmp *r);

/** One execution's output check: got (image of out) must not differ outside the tensor and
 *  must match want within ts. Reports failures naming tag, device id, impl, the output's name
 *  and the case; returns 0 when clean, -1 when a failure was reported. */
int cf_check_output(const cf_tensor *out, const unsigned char *got, const double *want,
                    const double *pre, const double *bound, const cf_tol *ts, cf_locate_fn loc,
                    const void *loc_ctx, const char *name, const char *tag, const char *id,
                    const char *impl, const char *desc);
/** What plan creation answered for a valid case: 1 when it returned KMUX_OK; 0 for
 *  KMUX_ERR_UNSUPPORTED with a message; -1, reported, for UNSUPPORTED without a message or any
 *  other status. fn names the call ("kmux_matmul_plan_create"). */
int cf_plan_answer(kmux_status s, const char *fn, const char *tag, const char *id,
                   const char *desc);

/** In a run function with the locals `s` (kmux_status), `result`, `tag`, `id`, `desc` and a
 *  label `done`: a device call that must succeed; a failure is reported and jumps to done. */
#define CF_DEV(call)                                                                               \
    do {                                                                                           \
        s = (call);                                                                                \
        if (s != KMUX_OK) {                                                                        \
            cf_fail("%s on %s: %s -> %s: %s\n  case: %s", tag, id, #call, kmux_status_str(s),      \
                    kmux_last_error(), desc);                                                      \
            result = -1;                                                                           \
            goto done;                                                                             \
        }                                                                                          \
    } while (0)

/** The plan's implementation must be named and must honour the requested compute type.
 *  Writes the name into impl; returns 0 when clean, -1 when a failure was reported. */
int cf_check_plan_info(const kmux_plan_info *info, kmux_compute_type requested, char *impl,
                       size_t impl_size, const char *tag, const char *id, const char *desc);

/* ---- env.c: devices ------------------------------------------------------------------------ */

typedef struct cf_env {
    kmux_context *ctx;
    kmux_device *ref;
    kmux_stream *ref_stream;
    int ndev; /* devices under test (every available one except ref) */
    kmux_device *dev[CF_MAX_DEVICES];
    kmux_stream *stream[CF_MAX_DEVICES];
    const char *id[CF_MAX_DEVICES];
} cf_env;

/** A context, ref and a stream per selected device (KMUX_CONFORMANCE_DEVICES). */
void cf_env_init(cf_env *env);
void cf_env_fini(cf_env *env);

/* ---- tables.c: what is tested -------------------------------------------------------------- */

/** One legal type combination (kmux_matmul_type_combination_get & co). */
typedef kmux_type_combination cf_combo;

/** Every row of the legal GEMM table of kmux.h, read through the public API; at most max. */
int cf_gemm_combos(cf_combo *out, int max);
/** Every row of the legal convolution table (x = w = y in a_type; compute), at most max. */
int cf_conv_combos(cf_combo *out, int max);

/** The convolution shapes: the quick sweep (full = 0) or the extra shapes of
 *  KMUX_CONFORMANCE_FULL (full = 1); *count receives their number. */
const tu_conv_geom *cf_conv_shapes(int full, int *count);

/* ---- gemm.c: GEMM cases -------------------------------------------------------------------- */

enum { CF_ENTRY_PLAN = 0, CF_ENTRY_GEMM_EX = 1, CF_ENTRY_BATCHED_EX = 2 };
enum { CF_FILL_EXACT = 0, CF_FILL_RANDOM = 1 };

typedef struct cf_gemm_case {
    int entry; /* CF_ENTRY_* */
    kmux_order order;
    kmux_transpose transa, transb;
    int64_t m, n, k;
    int64_t lda, ldb, ldc;
    int64_t batch; /* 1 for a plain GEMM */
    int64_t stride_a, stride_b, stride_c;
    kmux_dtype a_type, b_type, c_type;
    kmux_compute_type compute;
    unsigned epilogue;
    kmux_dtype bias_type;
    double alpha, beta;
    int fill;     /* CF_FILL_* */
    int c_nan;    /* C holds NaN (poison) instead of values: only with beta == 0 */
    int ab_nan;   /* A and B hold NaN (poison): only when they must not be read */
    int null_ab;  /* A and B passed as NULL: only when they must not be read */
    int scales;   /* fp8 scales a = 2, b = 0.5, d = 0.5 and amax_d */
    int misalign; /* A, B, C start this many elements after a 256-byte boundary */
    uint64_t seed;
} cf_gemm_case;

/** Offset of element (i, j) of op(X) stored with leading dimension ld. */
int64_t cf_mat_off(kmux_order o, kmux_transpose t, int64_t i, int64_t j, int64_t ld);
/** Elements spanned by one stored matrix with op(X) = r x c (0 when it is empty). */
int64_t cf_mat_span(kmux_order o, kmux_transpose t, int64_t r, int64_t c, int64_t ld);
/** Sets minimal leading dimensions plus pad, and strides (packed matrices plus spad). */
void cf_gemm_layout(cf_gemm_case *c, int64_t pad, int64_t spad);
/** The matmul descriptor of a case. */
kmux_matmul_desc cf_gemm_desc(const cf_gemm_case *c);
/** One-line description of a case: everything needed to rebuild it. */
void cf_gemm_describe(const cf_gemm_case *c, char *buf, size_t n);
/** Locates element e of C for messages: "(batch b, row i, col j)" (ctx: the case). */
void cf_gemm_locate_c(const void *ctx, int64_t e, char *buf, size_t n);

/** Inputs, canaries and the model's answer of one case. */
typedef struct cf_gemm_data {
    cf_tensor a, b, c, bias;
    double *pre;   /* c.span: alpha*sa*sb*AB + beta*C + bias (NaN outside C) */
    double *bound; /* c.span: sum of |terms| of pre */
    double *model; /* c.span: d_scale * act(pre), the exact answer before rounding */
    double amax;   /* max |act(pre)| */
    float scale_a, scale_b, scale_d;
    int degenerate; /* the fill gave a mostly-zero answer: the case would prove little */
} cf_gemm_data;

/** Fills the operands of a case (see the file comment), sparsifying B for exact fills until
 *  every partial sum is representable, and runs the model. */
void cf_gemm_prepare(const cf_gemm_case *c, cf_gemm_data *d);
void cf_gemm_free(cf_gemm_data *d);
/** Tolerance of a device compared with ref (against_model: ref compared with the model). */
cf_tol cf_gemm_tol(const cf_gemm_case *c, int against_model);
/** Runs case c on dev and compares C (and amax_d) with want / want_amax. Returns 1 when the
 *  device claims the case and ran it, 0 when it answered KMUX_ERR_UNSUPPORTED, -1 when a failure
 *  was reported. out (c.span doubles, may be NULL) receives the decoded C of the first
 *  implementation, out_amax its amax_d. tag names the case in messages ("case 12 of ..."). */
int cf_gemm_run(kmux_device *dev, kmux_stream *st, const cf_gemm_case *c, const cf_gemm_data *d,
                const double *want, double want_amax, const cf_tol *ts, double *out,
                double *out_amax, const char *tag);
/** The whole check of one case: model, ref against the model, every device against ref (or
 *  against the model when ref itself failed, so that a ref bug does not hide a device's). */
void cf_gemm_check_case(cf_env *env, const cf_gemm_case *c, const char *tag);

#endif
