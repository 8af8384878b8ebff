/*
 * cast_internal.h - private pieces of the conversion kernels (kernels/cpu/cast*.c, amp*.c):
 * fp8 decoding tables, the ISA-specific kernels and a small parallel-for (the scalar rounding
 * is the shared codec's, kmux_dtype_codec.h). Not part of any public or shared interface.
 */
#ifndef KMUX_CAST_INTERNAL_H
#define KMUX_CAST_INTERNAL_H

#include <stddef.h>
#include <stdint.h>
#include "kmux.h"
#include "kmux_common.h" /* kmux_common_dtype_size */
#include "kmux_dtype_codec.h"

/* ---- narrow floating-point formats ---------------------------------------------------------- */

/* Scalar encoding and decoding of f16, bf16 and fp8 are THE shared codec's
 * (kmux_dtype_codec.h: kmux_encode_f32, kmux_encode_f64, kmux_decode_f32, and
 * kmux_codec_round_bits for loops that hoist the descriptor); the vector kernels below are tested
 * bit for bit against it. */

/** 256-entry decoding table of an fp8 dtype (built once, thread-safe); NULL for other dtypes. */
const float *kmux_cast_fp8_table(kmux_dtype t);

/** f64 -> f32 with the kmux_cast rules (saturate: overflow and Inf -> +-FLT_MAX). */
float kmux_cast_f64_to_f32(double x, int saturate);

/** n f32 values times scale, rounded ONCE to dst_type (f16, bf16 or fp8: the product is formed
 *  exactly in f64 and rounded from there), portable scalar code. */
void kmux_cast_scaled_scalar(int64_t n, const float *src, void *dst, kmux_dtype dst_type,
                             int saturate, float scale);

/* ---- building blocks shared by cast.c and amp.c ---- */

/** 1 when the AVX2/FMA/F16C kernels can run on this CPU. */
int kmux_cast_have_avx2(void);
/** n elements of a floating dtype to f32 on the calling thread (f64: rounded to nearest). */
void kmux_cast_to_f32_serial(int64_t n, const void *src, kmux_dtype t, float *dst, int avx2);
/** n f32 to a floating dtype with the kmux_cast rules (scale NULL = none; stream: non-temporal
 *  stores for f16/bf16 on AVX2), on the calling thread. */
void kmux_cast_from_f32(int64_t n, const float *f, void *out, kmux_dtype dt, int saturate,
                        const float *scale, int avx2, int stream);
/** max |x| over n f32, NaN ignored (integer compare of magnitudes). */
float kmux_cast_amax_f32(int64_t n, const float *x, int avx2);

/* ---- floating-point environment ----------------------------------------------------------- */

/** Puts the calling thread's SSE control register into the IEEE default (round to nearest even,
 *  no flush-to-zero, no denormals-are-zero, exceptions masked) and returns the previous value for
 *  kmux_cast_fp_leave: a caller built with -ffast-math (FTZ/DAZ) must not make kmux flush
 *  subnormals. No-op (returns 0) on other architectures. */
unsigned kmux_cast_fp_enter(void);
void kmux_cast_fp_leave(unsigned saved);

/* ---- parallel for --------------------------------------------------------------------------- */

/** Element count from which the kernels split work across threads. */
#define KMUX_CAST_PARALLEL_MIN ((int64_t)1 << 20)
/** Most threads one call uses. */
#define KMUX_CAST_MAX_THREADS 256

/** Body of a parallel loop: processes [begin, end) as worker `tid` (0 <= tid < nworkers). */
typedef void (*kmux_cast_range_fn)(void *ctx, int64_t begin, int64_t end, int tid);

/** Splits [0, n) into contiguous ranges whose boundaries are multiples of `align` indices and
 *  runs fn on each, on up to `threads` threads (the calling thread is one of them; pthreads are
 *  created per call, which is negligible against >= KMUX_CAST_PARALLEL_MIN elements). One index
 *  stands for `unit` elements of work (a matrix row, say). Runs serially when n * unit <
 *  KMUX_CAST_PARALLEL_MIN or threads <= 1; a thread that cannot be created has its range run by
 *  the caller. Returns the number of ranges (fn's tid is below it, and below
 *  KMUX_CAST_MAX_THREADS). Every range runs inside kmux_cast_fp_enter/leave. */
int kmux_cast_parallel_for(int64_t n, int64_t unit, int threads, int64_t align,
                           kmux_cast_range_fn fn, void *ctx);
/** kmux_cast_parallel_for with its own threshold: serial when n * unit < min_work (>= 2). The
 *  helper threads are also kept off the CPU the caller runs on at the call, where the OS allows
 *  it (glibc on Linux, more than one CPU in the calling thread's affinity mask): the caller runs
 *  a range too (used by the im2col/col2im panels, where it was measured; the conversion kernels'
 *  kmux_cast_parallel_for does not pin). */
int kmux_parallel_for_from(int64_t n, int64_t unit, int threads, int64_t align, int64_t min_work,
                           kmux_cast_range_fn fn, void *ctx);

/** A team of threads that runs fn(arg, i) for every i in [0, n), the calling thread among them,
 *  and returns when all have run (1); or runs nothing and returns 0 when it cannot now (the loop
 *  then starts threads of its own). */
typedef int (*kmux_cpu_team_fn)(int n, void (*fn)(void *arg, int i), void *arg);
/** Sets the team the parallel loops of this copy of the kernels run on (NULL, the default: threads
 *  created per call). The oneDNN plugin sets its OpenMP team (onednn_team.c): kmux's own kernels on
 *  cpu:onednn then run on the workers oneDNN's primitives use and leave spinning (libgomp's wait
 *  policy), instead of beside them on the same cores. Set before any loop runs, at plugin init. */
void kmux_cpu_set_team(kmux_cpu_team_fn team);

/* ---- ISA-specific kernels (cast_avx2.c); call only when kmux_cpu_has_avx2_fma() and
 *      kmux_cpu_has_f16c() -------------------------------------------------------------------- */

/** n f16 -> f32, exact. */
void kmux_cast_f16_to_f32_avx2(int64_t n, const uint16_t *src, float *dst);
/** n bf16 -> f32, exact. */
void kmux_cast_bf16_to_f32_avx2(int64_t n, const uint16_t *src, float *dst);
/** n fp8 -> f32 through a 256-entry table. */
void kmux_cast_fp8_to_f32_avx2(int64_t n, const uint8_t *src, const float *table, float *dst);
/** n f32 -> f16 (RNE, kmux_cast rules); scale: multiply in f32 first (NULL = none); stream:
 *  write dst with non-temporal stores (kmux_cpu_stream_worth of the whole output), which the
 *  caller orders with one kmux_cpu_stream_fence (cpu_stream.h) at the end of its range, not one
 *  per call: that would stall the write-combining buffers every few KiB. */
void kmux_cast_f32_to_f16_avx2(int64_t n, const float *src, uint16_t *dst, int saturate,
                               const float *scale, int stream);
/** n f32 -> bf16 (RNE, kmux_cast rules); scale and stream as above. */
void kmux_cast_f32_to_bf16_avx2(int64_t n, const float *src, uint16_t *dst, int saturate,
                                const float *scale, int stream);
/** max |x| over n f32, NaN ignored (integer compare of magnitudes: independent of DAZ). */
float kmux_cast_amax_f32_avx2(int64_t n, const float *x);
/** x *= s for n f32 in place; returns 1 if any element was Inf/NaN before scaling. */
int kmux_cast_unscale_f32_avx2(int64_t n, float *x, float s);

#endif
