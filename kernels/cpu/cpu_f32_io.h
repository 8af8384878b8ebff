/* cpu_f32_io.h - an op family's CPU kernel works in f32: a span of a family tensor (f32, f16 or
 * bf16) read as f32 (in place for f32, decoded once into a buffer otherwise), and results formed
 * in f32 written back (in place for f32, rounded once, RNE, from the buffer otherwise). Used by
 * pooling.c and softmax.c. */
#ifndef KMUX_CPU_F32_IO_H
#define KMUX_CPU_F32_IO_H

#include <stddef.h>
#include <stdint.h>

#include "cast_internal.h"
#include "kmux_dtype_desc.h"

/** n elements from offset off of t (dtype dt) as f32: t itself for f32, else decoded into buf. */
static inline const float *kmux_f32_in(kmux_dtype dt, int avx2, const void *t, int64_t off,
                                       int64_t n, float *buf) {
    if (dt == KMUX_F32) return (const float *)t + off;
    const size_t es = (size_t)kmux_dtype_desc_of(dt).bytes;
    kmux_cast_to_f32_serial(n, (const char *)t + (size_t)off * es, dt, buf, avx2);
    return buf;
}

/** Where to form the f32 results for offset off of t: t itself for f32, else buf. */
static inline float *kmux_f32_out(kmux_dtype dt, void *t, int64_t off, float *buf) {
    return dt == KMUX_F32 ? (float *)t + off : buf;
}

/** Writes n results formed at f (kmux_f32_out's pointer) to offset off of t: nothing for f32
 *  (they are in place), else rounded once into dt. */
static inline void kmux_f32_store(kmux_dtype dt, int avx2, void *t, int64_t off, int64_t n,
                                  const float *f) {
    if (dt == KMUX_F32) return;
    const size_t es = (size_t)kmux_dtype_desc_of(dt).bytes;
    kmux_cast_from_f32(n, f, (char *)t + (size_t)off * es, dt, 0, NULL, avx2, 0);
}

#endif
