/*
 * cast_internal.h - private pieces of the conversion kernels (kernels/cpu/cast*.c, amp*.c):
 * narrow-format descriptors, the exact scalar rounding routines, the ISA-specific kernels and a
 * small parallel-for. Not part of any public or shared interface.
 */
#ifndef KMUX_CAST_INTERNAL_H
#define KMUX_CAST_INTERNAL_H

#include <stddef.h>
#include <stdint.h>
#include "kmux.h"
#include "kmux_common.h" /* kmux_common_dtype_size */

/* ---- narrow floating-point formats ---------------------------------------------------------- */

/** A binary floating-point format of at most 16 bits, described for the rounding routines.
 *  Magnitude codes exclude the sign bit. */
typedef struct kmux_cast_fmt {
    int mbits;         /**< explicit mantissa bits */
    int bias;          /**< exponent bias */
    int sign_shift;    /**< position of the sign bit (15 or 7) */
    uint32_t max_code; /**< magnitude code of the largest finite value */
    uint32_t inf_code; /**< magnitude code of Inf; 0 when the format has no Inf */
    uint32_t nan_code; /**< FULL code of the canonical quiet NaN with a + sign (0x80 for FNUZ) */
    int fnuz;          /**< 1: no -0, single NaN 0x80 (AMD gfx942 fp8) */
} kmux_cast_fmt;

/** The descriptor of f16, bf16 or one of the four fp8 formats; NULL for any other dtype. */
const kmux_cast_fmt *kmux_cast_fmt_of(kmux_dtype t);

/** Rounds the f32 with bit pattern u to fmt (round to nearest even, once; NaN kept as a quiet NaN
 *  with the sign and the leading payload bits where the format has them; subnormals kept;
 *  overflow -> Inf, or NaN without Inf, or the largest finite value of the sign with saturate). */
uint32_t kmux_cast_round_f32(uint32_t u, const kmux_cast_fmt *fmt, int saturate);
/** The same from an f64 bit pattern, rounded once (no intermediate f32). */
uint32_t kmux_cast_round_f64(uint64_t u, const kmux_cast_fmt *fmt, int saturate);
/** Exact value of a narrow code as f32 (every value of these formats is an f32). */
float kmux_cast_decode(uint32_t code, const kmux_cast_fmt *fmt);

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

/* ---- ISA-specific kernels (cast_avx2.c); call only when kmux_cpu_has_avx2_fma() and
 *      kmux_cpu_has_f16c() -------------------------------------------------------------------- */

/** n f16 -> f32, exact. */
void kmux_cast_f16_to_f32_avx2(int64_t n, const uint16_t *src, float *dst);
/** n bf16 -> f32, exact. */
void kmux_cast_bf16_to_f32_avx2(int64_t n, const uint16_t *src, float *dst);
/** n fp8 -> f32 through a 256-entry table. */
void kmux_cast_fp8_to_f32_avx2(int64_t n, const uint8_t *src, const float *table, float *dst);
/** n f32 -> f16 (RNE, kmux_cast rules); scale: multiply in f32 first (NULL = none); stream:
 *  write dst with non-temporal stores (for outputs much larger than the caches). */
void kmux_cast_f32_to_f16_avx2(int64_t n, const float *src, uint16_t *dst, int saturate,
                               const float *scale, int stream);
/** n f32 -> bf16 (RNE, kmux_cast rules); scale and stream as above. */
void kmux_cast_f32_to_bf16_avx2(int64_t n, const float *src, uint16_t *dst, int saturate,
                                const float *scale, int stream);
/** Orders the non-temporal stores of the kernels above (stream = 1) before later stores; call it
 *  once at the end of a range written with stream = 1, before another thread reads the data. No
 *  sfence is done per call: one per chunk would stall the write-combining buffers every few KiB. */
void kmux_cast_stream_fence(void);
/** max |x| over n f32, NaN ignored (integer compare of magnitudes: independent of DAZ). */
float kmux_cast_amax_f32_avx2(int64_t n, const float *x);
/** x *= s for n f32 in place; returns 1 if any element was Inf/NaN before scaling. */
int kmux_cast_unscale_f32_avx2(int64_t n, float *x, float s);

#endif
