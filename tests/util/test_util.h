/*
 * test_util.h - helpers shared by the Criterion tests. Each test file includes it.
 */
#ifndef KMUX_TEST_UTIL_H
#define KMUX_TEST_UTIL_H

#include <criterion/criterion.h>
#include <stdint.h>
#include "kmux.h"

/** Asserts that a kmux call returned KMUX_OK, printing the status and kmux_last_error(). */
#define TU_OK(expr)                                                                                \
    do {                                                                                           \
        kmux_status tu_s_ = (expr);                                                                \
        cr_assert_eq(tu_s_, KMUX_OK, "%s -> %s: %s", #expr, kmux_status_str(tu_s_),                \
                     kmux_last_error());                                                           \
    } while (0)

/** Asserts that a kmux call returned the status `want` and left a non-empty message. */
#define TU_STATUS(want, expr)                                                                      \
    do {                                                                                           \
        kmux_status tu_s_ = (expr);                                                                \
        cr_assert_eq(tu_s_, (want), "%s -> %s (want %s): %s", #expr, kmux_status_str(tu_s_),       \
                     kmux_status_str(want), kmux_last_error());                                    \
        if ((want) != KMUX_OK)                                                                     \
            cr_assert(kmux_last_error()[0] != '\0', "%s: empty kmux_last_error()", #expr);         \
    } while (0)

/** A context with default options (asserts on failure). */
kmux_context *tu_context(void);
/** The device `id` of ctx, or NULL when it is not available (the reason goes to stderr). */
kmux_device *tu_device(kmux_context *ctx, const char *id);
/** Ids of every available device of ctx, NULL-terminated, in a static array. */
const char **tu_device_ids(kmux_context *ctx);
/** The devices a family or epilogue suite runs on: the one KMUX_TEST_DEVICE names (cuda:0, hip:0
 *  on the fakes, registered with KMUX_CONFORMANCE_REQUIRE_DEVICE: tests/conformance/
 *  require_device.c makes the run exit 77 with the reason, or fail where promised, when that
 *  device is absent), else every CPU device (ref, cpu:onednn, cpu:openblas, cpu:auto). Fills ids
 *  and returns how many. */
int tu_devices_under_test(const char *ids[4]);

/** Deterministic pseudo-random generator (xorshift64*), for reproducible fills. */
uint64_t tu_rand_u64(uint64_t *state);
/** Uniform double in [lo, hi). */
double tu_rand_uniform(uint64_t *state, double lo, double hi);

/* ---- a backend's device beside the oracle (tu_run.c) ---------------------------------------- */

/** The context of a backend test file: "ref" and the device under test. */
typedef struct tu_pair {
    kmux_context *ctx;
    kmux_device *ref; /* always there */
    kmux_device *dev; /* NULL when the device is not available */
    char id[64];
    char reason[512]; /* why dev is NULL */
} tu_pair;

/** Declares `static tu_pair pair` and the Criterion suite `suite` that opens it (ref and device
 *  `id`) before each of its tests and closes it after. */
#define TU_DEVICE_SUITE(suite, pair, id)                                                           \
    static tu_pair pair;                                                                           \
    static void suite##_open(void) {                                                               \
        tu_pair_open(&pair, id);                                                                   \
    }                                                                                              \
    static void suite##_close(void) {                                                              \
        tu_pair_close(&pair);                                                                      \
    }                                                                                              \
    TestSuite(suite, .init = suite##_open, .fini = suite##_close)

/** The Criterion suite `suite` of a reference-device test file: the file-scope `ctx` (a default
 *  context), `dev` ("ref", which always exists) and `st` (a stream on it), opened before each
 *  test and closed after. */
#define TU_REF_SUITE(suite)                                                                        \
    static kmux_context *ctx;                                                                      \
    static kmux_device *dev;                                                                       \
    static kmux_stream *st;                                                                        \
    static void suite##_open(void) {                                                               \
        ctx = tu_context();                                                                        \
        dev = tu_device(ctx, "ref");                                                               \
        cr_assert(dev != NULL, "device ref must always exist");                                    \
        TU_OK(kmux_stream_create(dev, &st));                                                       \
    }                                                                                              \
    static void suite##_close(void) {                                                              \
        TU_OK(kmux_stream_destroy(st));                                                            \
        TU_OK(kmux_context_destroy(ctx));                                                          \
    }                                                                                              \
    TestSuite(suite, .init = suite##_open, .fini = suite##_close)

/** Opens a default context with ref and device `id` (for a TestSuite's .init). */
void tu_pair_open(tu_pair *p, const char *id);
void tu_pair_close(tu_pair *p);
/** Skips the test, with the reason, when the device of the pair is not available (the plugin
 *  was not built or found no hardware); every test of a backend file starts with it. */
#define TU_NEED_DEVICE(pair)                                                                       \
    do {                                                                                           \
        cr_assert_not_null((pair).ref);                                                            \
        if (!(pair).dev) cr_skip_test("%s is not available: %s", (pair).id, (pair).reason);        \
    } while (0)

/** Creates a matmul plan on dev, steps impl_step implementations on, runs it once on a new
 *  stream and synchronises. Returns the plan-creation or execution status; impl (may be NULL)
 *  receives the implementation name, *info (may be NULL) the plan's info. */
kmux_status tu_run_matmul(kmux_device *dev, const kmux_matmul_desc *d, const kmux_plan_prefs *prefs,
                          const kmux_matmul_args *a, int impl_step, char *impl, size_t impl_size,
                          kmux_plan_info *info);
/** The same for a convolution plan. */
kmux_status tu_run_conv(kmux_device *dev, const kmux_conv2d_desc *d, const kmux_plan_prefs *prefs,
                        const kmux_conv2d_args *a, int impl_step, char *impl, size_t impl_size);

/** kmux_cast of n elements on dev with host buffers (src in, dst out); scale (host, may be NULL)
 *  is passed as the device scale, amax (host, may be NULL) receives the amax output. */
void tu_cast_on_device(kmux_device *dev, int64_t n, const void *src, kmux_dtype st, void *dst,
                       kmux_dtype dt, int saturate, const float *scale, float *amax);

/** Elements spanned by `batch` matrices of rows x cols as stored (order, leading dimension ld,
 *  batch stride): the host buffer a test allocates for an operand. */
int64_t tu_matrix_span(kmux_order o, int64_t rows, int64_t cols, int64_t ld, int64_t batch,
                       int64_t stride);

/** Layout of a matmul descriptor whose order, transposes, m, n, k and batch_count are set:
 *  leading dimensions = the CBLAS minimum plus pad; batch strides = one matrix plus 3 (A), 5 (B)
 *  and 7 (C) elements (gaps a backend must skip), or 0 for an operand marked broadcast. na, nb
 *  and nc receive the elements each operand spans (the host buffers to allocate). */
void tu_matmul_layout(kmux_matmul_desc *d, int64_t pad, int bcast_a, int bcast_b, int64_t *na,
                      int64_t *nb, int64_t *nc);

/** Geometry of a 2-D convolution, in the order of kmux_conv2d_desc (stride, padding
 *  top/bottom/left/right, dilation; 1 = dense). */
typedef struct tu_conv_geom {
    int64_t n, c, h, w, k, r, s, groups, sh, sw, pt, pb, pl, pr, dh, dw;
} tu_conv_geom;

/** The descriptor of g in direction dir and layout, x = w = y of type t (compute type: the
 *  descriptor default, F32). */
kmux_conv2d_desc tu_conv_desc(const tu_conv_geom *g, kmux_conv_direction dir, kmux_layout layout,
                              kmux_dtype t);
/** Element counts of x, w and y of a valid descriptor. */
void tu_conv_elems(const kmux_conv2d_desc *d, int64_t *nx, int64_t *nw, int64_t *ny);

/* ---- typed host data (tu_data.c; THE dtype table and codec of dispatch/common/) -------------- */

/** Exact value of element i of an array of type t. */
double tu_get(kmux_dtype t, const void *base, int64_t i);
/** Stores v as element i: rounded to nearest even, finite values beyond the largest finite one
 *  saturate, an infinity stays one where the format has Inf; integers rounded and clamped. */
void tu_set(kmux_dtype t, void *base, int64_t i, double v);

/** 1 when c is a NaN code of the narrow format t. Written from the format specifications, not
 *  from the codec, so that tests of the codec's users do not judge them by the codec itself. */
int tu_is_nan_code(uint32_t c, kmux_dtype t);

/** Which elements of an integer fill are forced to 0 (keeps partial sums small, so exact). */
typedef enum tu_zeros {
    TU_DENSE = 0,       /**< none */
    TU_ZERO_3_OF_4 = 1, /**< three of four, at random */
    TU_ZERO_ODD = 2     /**< every odd index */
} tu_zeros;

/** A new buffer (free it) of n elements of t holding integers in [-range, range]. */
void *tu_fill_ints(kmux_dtype t, int64_t n, int range, tu_zeros zeros, uint64_t *seed);
/** Sets n elements of buf to v (NaN to poison an output that must not be read). */
void tu_fill_value(kmux_dtype t, void *buf, int64_t n, double v);
/** A new copy (free it) of bytes bytes of p. */
void *tu_dup(const void *p, size_t bytes);
/** Writes the first `bytes` bytes of file `from` (all of it when shorter) to `to`: a truncated
 *  shared object for the loader's hostile-file tests. Returns the bytes written. */
size_t tu_copy_prefix(const char *from, const char *to, size_t bytes);
/** Lines of the text file at path that contain needle (every line when needle is NULL); 0 when
 *  the file cannot be read (the tune cache's verdict lines, ...). */
int tu_count_lines(const char *path, const char *needle);

/** Standard error captured into a temporary file between tu_capture_begin and tu_capture_end,
 *  which restores it and reads what was written (KMUX_VERBOSE traces) into text (NUL-ended). */
typedef struct tu_capture {
    char path[40];
    int saved, fd;
} tu_capture;
void tu_capture_begin(tu_capture *c);
void tu_capture_end(tu_capture *c, char *text, size_t size);

/** Asserts that n elements of got (from device `dev`) equal want (from ref): bitwise when
 *  rel_tol == 0, else |got - want| <= rel_tol * (1 + |want|); no element of got is NaN; and at
 *  least one in nonzero_div elements of want is nonzero (a mostly-zero result proves little and
 *  is mistrusted, as benchdnn does). */
void tu_expect_equal(const char *what, const char *dev, const void *got, const void *want,
                     kmux_dtype t, int64_t n, double rel_tol, int nonzero_div);

#endif
