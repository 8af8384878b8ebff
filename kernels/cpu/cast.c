/*
 * cast.c - kmux_cpu_to_f32, kmux_cpu_matrix_to_f32 and kmux_cpu_cast: run-time choice between
 * the AVX2/F16C kernels (cast_avx2.c) and portable C, and the split over threads.
 *
 * kmux_cpu_cast works in chunks that stay in L1: the source chunk is decoded to f32 (unless it is
 * f32 already), its amax taken, then it is scaled and rounded to the destination. Every value of
 * f16, bf16 and fp8 is exact in f32, so this is one rounding; an f64 source is rounded directly
 * from f64 to the destination (one rounding, no intermediate f32).
 *
 * Scale: the destination receives the EXACT product x * scale rounded once (kmux_cast's "rounded
 * once"): an f32 destination gets the IEEE f32 multiply (correctly rounded), narrow destinations
 * get the product formed exactly in f64 (scalar) or rounded to odd in f32 with FMA (AVX2, see
 * cast_avx2.c), an f64 destination the exact f64 product. kmux's GPU kernels (kernels/gpu) use
 * the same round-to-odd product, so every device gives the same bits. (Libraries that do one f32
 * multiply and then round again differ from this in rare double-rounding cases.) With an f64
 * SOURCE the product is one f64 multiply, rounded to f64, then rounded to the destination.
 */
#include <float.h>
#include <math.h>
#include <string.h>

#include "cast_internal.h"
#include "cpu_stream.h"
#include "kmux_cpu_kernels.h"

#define CHUNK 4096

int kmux_cast_have_avx2(void) {
    return kmux_cpu_has_avx2_fma() && kmux_cpu_has_f16c();
}

/* ---- widening -------------------------------------------------------------------------------- */

void kmux_cast_to_f32_serial(int64_t n, const void *src, kmux_dtype t, float *dst, int avx2) {
    switch (t) {
    case KMUX_F32:
        if ((const void *)dst != src) memcpy(dst, src, (size_t)n * sizeof(float));
        return;
    case KMUX_F64: {
        const double *s = src;
        for (int64_t i = 0; i < n; i++)
            dst[i] = (float)s[i]; /* RNE (kmux_cast_fp_enter) */
        return;
    }
    case KMUX_F16:
        if (avx2) {
            kmux_cast_f16_to_f32_avx2(n, src, dst);
        } else {
            const uint16_t *s = src;
            for (int64_t i = 0; i < n; i++)
                dst[i] = kmux_decode_f32(s[i], KMUX_F16);
        }
        return;
    case KMUX_BF16:
        if (avx2) {
            kmux_cast_bf16_to_f32_avx2(n, src, dst);
        } else {
            const uint16_t *s = src;
            for (int64_t i = 0; i < n; i++)
                dst[i] = kmux_decode_f32(s[i], KMUX_BF16);
        }
        return;
    default: { /* the four fp8 formats */
        const float *table = kmux_cast_fp8_table(t);
        const uint8_t *s = src;
        if (!table) return;
        if (avx2) {
            kmux_cast_fp8_to_f32_avx2(n, s, table, dst);
        } else {
            for (int64_t i = 0; i < n; i++)
                dst[i] = table[s[i]];
        }
        return;
    }
    }
}

typedef struct widen_job {
    const char *src;
    kmux_dtype type;
    int64_t ld, cols; /* matrix form; cols == 0 for a flat array */
    float *dst;
    int avx2;
} widen_job;

static void widen_range(void *p, int64_t begin, int64_t end, int tid) {
    const widen_job *j = p;
    size_t es = kmux_common_dtype_size(j->type);
    (void)tid;
    if (j->cols == 0) {
        kmux_cast_to_f32_serial(end - begin, j->src + (size_t)begin * es, j->type, j->dst + begin,
                                j->avx2);
        return;
    }
    for (int64_t r = begin; r < end; r++)
        kmux_cast_to_f32_serial(j->cols, j->src + (size_t)(r * j->ld) * es, j->type,
                                j->dst + r * j->cols, j->avx2);
}

void kmux_cpu_to_f32(int64_t n, const void *src, kmux_dtype src_type, float *dst, int threads) {
    widen_job j = {src, src_type, 0, 0, dst, kmux_cast_have_avx2()};
    if (n > 0) kmux_cast_parallel_for(n, 1, threads, 64, widen_range, &j);
}

void kmux_cpu_matrix_to_f32(int64_t rows, int64_t cols, const void *src, kmux_dtype src_type,
                            int64_t ld, float *dst, int threads) {
    if (rows <= 0 || cols <= 0) return;
    if (ld == cols) {
        kmux_cpu_to_f32(rows * cols, src, src_type, dst, threads);
        return;
    }
    widen_job j = {src, src_type, ld, cols, dst, kmux_cast_have_avx2()};
    kmux_cast_parallel_for(rows, cols, threads, 1, widen_range, &j);
}

/* ---- amax and narrowing -------------------------------------------------------------------- */

float kmux_cast_amax_f32(int64_t n, const float *x, int avx2) {
    if (avx2) return kmux_cast_amax_f32_avx2(n, x);
    uint32_t best = 0;
    for (int64_t i = 0; i < n; i++) {
        uint32_t a = kmux_f32_bits(x[i]) & 0x7fffffffu;
        if (a <= 0x7f800000u && a > best) best = a;
    }
    return kmux_f32_from_bits(best);
}

void kmux_cast_from_f32(int64_t n, const float *f, void *out, kmux_dtype dt, int saturate,
                        const float *scale, int avx2, int stream) {
    switch (dt) {
    case KMUX_F16:
    case KMUX_BF16:
        if (avx2) {
            if (dt == KMUX_F16)
                kmux_cast_f32_to_f16_avx2(n, f, out, saturate, scale, stream);
            else
                kmux_cast_f32_to_bf16_avx2(n, f, out, saturate, scale, stream);
        } else if (scale) {
            kmux_cast_scaled_scalar(n, f, out, dt, saturate, *scale);
        } else if (dt == KMUX_BF16) {
            uint16_t *o = out;
            for (int64_t i = 0; i < n; i++)
                o[i] = (uint16_t)kmux_encode_f32(f[i], KMUX_BF16, saturate);
        } else {
            uint16_t *o = out;
            for (int64_t i = 0; i < n; i++)
                o[i] = (uint16_t)kmux_encode_f32(f[i], KMUX_F16, saturate);
        }
        return;
    case KMUX_F32: {
        float *o = out;
        if (!scale && !saturate) {
            memcpy(o, f, (size_t)n * sizeof *o);
            return;
        }
        for (int64_t i = 0; i < n; i++) {
            float y =
                scale ? f[i] * *scale : f[i]; /* IEEE multiply: the exact product, rounded once */
            if (saturate && isinf(y)) y = y > 0 ? FLT_MAX : -FLT_MAX;
            o[i] = y;
        }
        return;
    }
    case KMUX_F64: {
        double *o = out;
        for (int64_t i = 0; i < n; i++) {
            double y = scale ? (double)f[i] * (double)*scale : (double)f[i]; /* exact */
            if (saturate && isinf(y)) y = y > 0 ? DBL_MAX : -DBL_MAX;
            o[i] = y;
        }
        return;
    }
    default: { /* fp8 */
        if (scale) {
            kmux_cast_scaled_scalar(n, f, out, dt, saturate, *scale);
            return;
        }
        uint8_t *o = out;
        const kmux_dtype_desc fmt = kmux_dtype_desc_of(dt); /* hoisted: dt is not a constant */
        for (int64_t i = 0; i < n; i++) {
            uint32_t u = kmux_f32_bits(f[i]);
            o[i] = (uint8_t)kmux_codec_round_bits(u & 0x7fffffffu, (u >> 31) << fmt.sign_shift, 23,
                                                  127, &fmt, saturate);
        }
        return;
    }
    }
}

typedef struct cast_job {
    const char *src;
    kmux_dtype st;
    char *dst;
    kmux_dtype dt;
    int saturate;
    int has_scale;
    float scale;
    int want_amax;
    int avx2;
    int stream; /* the output is streamed out (kmux_cpu_stream_worth) */
    float amax[KMUX_CAST_MAX_THREADS];
} cast_job;

/* Scales and rounds n f32 values to dt. */
static void from_f32(const cast_job *j, int64_t n, const float *f, void *out, int stream) {
    kmux_cast_from_f32(n, f, out, j->dt, j->saturate, j->has_scale ? &j->scale : NULL, j->avx2,
                       stream);
}

/* f64 source: amax in f64, scale in f64, one rounding from f64 to the destination. */
static float cast_from_f64(const cast_job *j, int64_t begin, int64_t end) {
    const double *x = (const double *)j->src;
    const kmux_dtype_desc fmt = kmux_dtype_desc_of(j->dt);
    double amax = 0.0;
    for (int64_t i = begin; i < end; i++) {
        double v = x[i];
        if (j->want_amax && fabs(v) > amax) amax = fabs(v); /* NaN compares false */
        if (j->has_scale) v *= (double)j->scale;
        const uint64_t u = kmux_f64_bits(v);
        const uint64_t mag = u & ~(UINT64_C(1) << 63);
        const uint32_t sign = (uint32_t)(u >> 63) << fmt.sign_shift;
        switch (j->dt) {
        case KMUX_F64:
            if (j->saturate && isinf(v)) v = v > 0 ? DBL_MAX : -DBL_MAX;
            ((double *)j->dst)[i] = v;
            break;
        case KMUX_F32:
            ((float *)j->dst)[i] = kmux_cast_f64_to_f32(v, j->saturate);
            break;
        case KMUX_F16:
        case KMUX_BF16:
            ((uint16_t *)j->dst)[i] =
                (uint16_t)kmux_codec_round_bits(mag, sign, 52, 1023, &fmt, j->saturate);
            break;
        default:
            ((uint8_t *)j->dst)[i] =
                (uint8_t)kmux_codec_round_bits(mag, sign, 52, 1023, &fmt, j->saturate);
            break;
        }
    }
    return (float)amax;
}

static void cast_range(void *p, int64_t begin, int64_t end, int tid) {
    cast_job *j = p;
    float amax = 0.0f;
    if (j->st == KMUX_F64) {
        j->amax[tid] = cast_from_f64(j, begin, end);
        return;
    }
    const size_t ss = kmux_common_dtype_size(j->st), ds = kmux_common_dtype_size(j->dt);
    float buf[CHUNK];
    for (int64_t i = begin; i < end; i += CHUNK) {
        int64_t len = end - i < CHUNK ? end - i : CHUNK;
        const float *f = (const float *)(j->src + (size_t)i * ss);
        if (j->st != KMUX_F32) {
            kmux_cast_to_f32_serial(len, f, j->st, buf, j->avx2);
            f = buf;
        }
        if (j->want_amax) {
            float a = kmux_cast_amax_f32(len, f, j->avx2);
            if (a > amax) amax = a;
        }
        from_f32(j, len, f, j->dst + (size_t)i * ds, j->stream);
    }
    if (j->stream) kmux_cpu_stream_fence();
    j->amax[tid] = amax;
}

kmux_status kmux_cpu_cast(int64_t n, const void *src, kmux_dtype src_type, void *dst,
                          kmux_dtype dst_type, int saturate, const float *scale, float *amax,
                          int threads) {
    if (!kmux_dtype_is_float(src_type) || !kmux_dtype_is_float(dst_type))
        return KMUX_ERR_UNSUPPORTED;
    if (n <= 0) {
        if (amax) *amax = 0.0f;
        return KMUX_OK;
    }
    cast_job job, *j = &job;
    memset(j, 0, sizeof *j);
    j->src = src;
    j->st = src_type;
    j->dst = dst;
    j->dt = dst_type;
    j->saturate = saturate != 0;
    j->has_scale = scale != NULL;
    j->scale = scale ? *scale : 1.0f;
    j->want_amax = amax != NULL;
    j->avx2 = kmux_cast_have_avx2();
    j->stream = kmux_cpu_stream_worth((size_t)n * kmux_common_dtype_size(dst_type));
    int nw = kmux_cast_parallel_for(n, 1, threads, CHUNK, cast_range, j);
    if (amax) {
        float m = 0.0f;
        for (int i = 0; i < nw; i++)
            m = j->amax[i] > m ? j->amax[i] : m;
        *amax = m;
    }
    return KMUX_OK;
}
