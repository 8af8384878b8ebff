/*
 * amp.c - kmux_cpu_amax and kmux_cpu_unscale_check_finite (semantics of kmux_amax and
 * kmux_unscale_check_finite in kmux.h), vectorised through the conversion building blocks and
 * split over threads for large tensors.
 */
#include <math.h>
#include <string.h>

#include "cast_internal.h"
#include "kmux_cpu_kernels.h"

#define CHUNK 4096

typedef struct amp_job {
    char *x;
    kmux_dtype type;
    float inv_scale; /* unscale only */
    int avx2;
    float amax[KMUX_CAST_MAX_THREADS];
    int found[KMUX_CAST_MAX_THREADS];
} amp_job;

static void amax_range(void *p, int64_t begin, int64_t end, int tid) {
    amp_job *j = p;
    if (j->type == KMUX_F64) {
        const double *x = (const double *)j->x;
        double m = 0.0;
        for (int64_t i = begin; i < end; i++)
            if (fabs(x[i]) > m) m = fabs(x[i]); /* false for NaN */
        j->amax[tid] = (float)m;
        return;
    }
    const size_t es = kmux_common_dtype_size(j->type);
    float buf[CHUNK], m = 0.0f;
    for (int64_t i = begin; i < end; i += CHUNK) {
        int64_t len = end - i < CHUNK ? end - i : CHUNK;
        const float *f = (const float *)(j->x + (size_t)i * es);
        if (j->type != KMUX_F32) {
            kmux_cast_to_f32_serial(len, f, j->type, buf, j->avx2);
            f = buf;
        }
        float a = kmux_cast_amax_f32(len, f, j->avx2);
        if (a > m) m = a;
    }
    j->amax[tid] = m;
}

float kmux_cpu_amax(int64_t n, const void *x, kmux_dtype type, int threads) {
    if (n <= 0 || !kmux_dtype_is_float(type)) return 0.0f;
    amp_job j;
    memset(&j, 0, sizeof j);
    j.x = (char *)(uintptr_t)x; /* only read */
    j.type = type;
    j.avx2 = kmux_cast_have_avx2();
    int nw = kmux_cast_parallel_for(n, 1, threads, CHUNK, amax_range, &j);
    float m = 0.0f;
    for (int i = 0; i < nw; i++)
        m = j.amax[i] > m ? j.amax[i] : m;
    return m;
}

static int f32_nonfinite_scale_portable(int64_t n, float *x, float s) {
    int found = 0;
    for (int64_t i = 0; i < n; i++) {
        uint32_t u;
        memcpy(&u, x + i, sizeof u);
        if ((u & 0x7fffffffu) > 0x7f7fffffu) found = 1;
        x[i] *= s;
    }
    return found;
}

static int any_nonfinite(int64_t n, const float *x) {
    for (int64_t i = 0; i < n; i++) {
        uint32_t u;
        memcpy(&u, x + i, sizeof u);
        if ((u & 0x7fffffffu) > 0x7f7fffffu) return 1;
    }
    return 0;
}

/* Each element becomes x * inv_scale rounded ONCE to the tensor's type (f32: the IEEE multiply;
 * f64: the f64 multiply; f16/bf16: decoded exactly, then the scaled cast of cast.c, whose
 * product is exact), which is what torch computes whenever inv_scale is a power of two. */
static void unscale_range(void *p, int64_t begin, int64_t end, int tid) {
    amp_job *j = p;
    int found = 0;
    if (j->type == KMUX_F64) {
        double *x = (double *)j->x;
        const double s = (double)j->inv_scale;
        for (int64_t i = begin; i < end; i++) {
            if (!isfinite(x[i])) found = 1;
            x[i] *= s;
        }
    } else if (j->type == KMUX_F32) {
        float *x = (float *)j->x + begin;
        found = j->avx2 ? kmux_cast_unscale_f32_avx2(end - begin, x, j->inv_scale)
                        : f32_nonfinite_scale_portable(end - begin, x, j->inv_scale);
    } else { /* f16, bf16: in place, one L1-sized chunk at a time */
        const size_t es = kmux_common_dtype_size(j->type);
        float buf[CHUNK];
        for (int64_t i = begin; i < end; i += CHUNK) {
            int64_t len = end - i < CHUNK ? end - i : CHUNK;
            char *x = j->x + (size_t)i * es;
            kmux_cast_to_f32_serial(len, x, j->type, buf, j->avx2);
            if (!found) found = any_nonfinite(len, buf);
            kmux_cast_from_f32(len, buf, x, j->type, 0, &j->inv_scale, j->avx2, 0);
        }
    }
    j->found[tid] = found;
}

int kmux_cpu_unscale_check_finite(int64_t n, void *x, kmux_dtype type, float inv_scale,
                                  int threads) {
    if (n <= 0) return 0;
    amp_job j;
    memset(&j, 0, sizeof j);
    j.x = x;
    j.type = type;
    j.inv_scale = inv_scale;
    j.avx2 = kmux_cast_have_avx2();
    int nw = kmux_cast_parallel_for(n, 1, threads, CHUNK, unscale_range, &j);
    int found = 0;
    for (int i = 0; i < nw; i++)
        found |= j.found[i];
    return found;
}
