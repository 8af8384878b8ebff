/*
 * emu_common.h - helpers of the emulated GPU kernel tests (tests/gpu_emu): the ref device as
 * oracle through the public API, element access on the shared codec, fills, the tolerance of the
 * conformance suite (tests/conformance_common.h: cf_tol_of), and the emulation settings every
 * kernel runs under (wave 32 and 64, blocks in index order and shuffled).
 */
#ifndef KMUX_EMU_COMMON_H
#define KMUX_EMU_COMMON_H

#include <stddef.h>
#include <stdint.h>

#include "kmux.h"

/** One emulation setting: wavefront width and scheduling seed (0 = index order). */
typedef struct emu_setting {
    unsigned wave;
    uint64_t seed;
} emu_setting;

/** The settings every kernel is run under, and their number. */
extern const emu_setting EMU_SETTINGS[];
extern const int EMU_SETTING_COUNT;

/** Applies setting s to the emulator (asserts). */
void emu_apply(const emu_setting *s);
/** Asserts that a launcher returned 0; otherwise fails with the emulator's message. */
void emu_check_launch(int rc, const char *what);

/** The ref device and a stream on it (created once per test process). */
kmux_device *emu_ref(void);
kmux_stream *emu_ref_stream(void);

/** Element i of dtype t (any kmux dtype) as double, exactly. */
double emu_get(kmux_dtype t, const void *p, int64_t i);
/** Stores v (rounded once to nearest even, overflow to Inf/NaN; integers rounded and
 *  saturated) as element i of dtype t. */
void emu_set(kmux_dtype t, void *p, int64_t i, double v);
/** Uniform pseudo-random double in [lo, hi). */
double emu_rand(uint64_t *st, double lo, double hi);
/** Fills n elements with random values of dtype t in [-range, range] (integers for i8). */
void emu_fill(kmux_dtype t, void *p, int64_t n, double range, uint64_t *st);
/** Stores NaN (or -128 / INT32_MIN for integers) in element i: a poison a kernel must not read. */
void emu_poison(kmux_dtype t, void *p, int64_t i);

/** Unit roundoff of a storage or accumulation dtype (0 for integers); smallest subnormal. */
double emu_unit_roundoff(kmux_dtype t);
double emu_min_subnormal(kmux_dtype t);

/** The conformance suite's tolerance: acc = bound * (k + 4) * u_acc;
 *  tol = acc + u_out * (2 |want| + acc) + min_out, GELU: 1.25 tol + 8 u (1 + bound). */
double emu_tol(double want, double bound, double k, double u_acc, double u_out, double min_out,
               int gelu);
/** 1 when got matches want within tol (NaN matches NaN, Inf must be equal). */
int emu_same(double got, double want, double tol);

/** malloc that fails the test when out of memory; exact size, so ASan sees any overflow. */
void *emu_alloc(size_t bytes);

#endif
