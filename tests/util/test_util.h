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

/** Deterministic pseudo-random generator (xorshift64*), for reproducible fills. */
uint64_t tu_rand_u64(uint64_t *state);
/** Uniform double in [lo, hi). */
double tu_rand_uniform(uint64_t *state, double lo, double hi);

#endif
