/*
 * fuzz_common.h - helpers of the libFuzzer targets in tests/fuzz/ (built by scripts/fuzz.sh):
 * a byte reader that turns fuzz input into sizes, enums and scalars biased towards the values
 * that matter (small, zero, negative, huge, invalid), typed buffers of exactly the size a call
 * may touch (so AddressSanitizer catches any access outside), and the "ref" device, created once.
 */
#ifndef KMUX_FUZZ_COMMON_H
#define KMUX_FUZZ_COMMON_H

#include <kmux.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* ---- text inputs (the parser targets) ---- */

/** The input as a NUL-terminated string (malloc'd; free it), or NULL when longer than max. */
static inline char *fz_text(const uint8_t *data, size_t size, size_t max) {
    if (size > max) return NULL;
    char *s = malloc(size + 1);
    if (!s) return NULL;
    memcpy(s, data, size);
    s[size] = '\0';
    return s;
}

/** Writes the input to this process's file /tmp/kmux-fuzz-<what>-<pid>.txt (for readers that
 *  take a path); returns its name, NULL when it cannot be written. */
static inline const char *fz_temp_file(const char *what, const uint8_t *data, size_t size) {
    static char path[96];
    snprintf(path, sizeof path, "/tmp/kmux-fuzz-%s-%ld.txt", what, (long)getpid());
    FILE *f = fopen(path, "wb");
    if (!f) return NULL;
    fwrite(data, 1, size, f);
    fclose(f);
    return path;
}

typedef struct fz {
    const uint8_t *p;
    size_t n;
} fz;

static inline uint8_t fz_u8(fz *f) {
    if (!f->n) return 0;
    f->n--;
    return *f->p++;
}

/* A size: mostly 0..max, sometimes an edge value. */
static inline int64_t fz_size(fz *f, int64_t max) {
    static const int64_t edge[] = {
        -1, 0, 1, INT64_MAX, INT64_MIN, (int64_t)1 << 31, ((int64_t)1 << 40) + 3, INT64_MAX / 2};
    uint8_t b = fz_u8(f);
    if (b >= 240) return edge[(b - 240) % (sizeof edge / sizeof edge[0])];
    return b % (max + 1);
}

/* Saturating arithmetic for the harness's own derived values (sizes may be huge or negative). */
static inline int64_t fz_add(int64_t a, int64_t b) {
    int64_t r;
    return __builtin_add_overflow(a, b, &r) ? (b > 0 ? INT64_MAX : INT64_MIN) : r;
}
static inline int64_t fz_mul(int64_t a, int64_t b) {
    int64_t r;
    return __builtin_mul_overflow(a, b, &r) ? ((a < 0) != (b < 0) ? INT64_MIN : INT64_MAX) : r;
}

/* An enum: one of `valid` mostly, sometimes any int. */
static inline int fz_enum(fz *f, const int *valid, int count) {
    uint8_t b = fz_u8(f);
    if (b >= 250) return (int)(int8_t)fz_u8(f) * 3;
    return valid[b % count];
}

/* A small integer scalar (exact in every float type, including fp8). */
static inline int fz_small(fz *f) {
    return (int)(fz_u8(f) % 5) - 2;
}

static inline int fz_is_float(kmux_dtype t) {
    return t >= KMUX_F64 && t <= KMUX_F8_E5M2_FNUZ;
}

/* The ref device and a stream on it, created on first use and kept (one per process). */
static inline kmux_stream *fz_ref_stream(kmux_device **dev) {
    static kmux_context *ctx;
    static kmux_device *ref;
    static kmux_stream *s;
    if (!ctx) {
        kmux_context_options o = KMUX_CONTEXT_OPTIONS_INIT;
        o.num_threads = 1;
        o.plan_cache_capacity = 8;
        if (kmux_context_create(&o, &ctx) != KMUX_OK || kmux_device_find(ctx, "ref", &ref) ||
            kmux_stream_create(ref, &s)) {
            fprintf(stderr, "fuzz: cannot open ref: %s\n", kmux_last_error());
            abort();
        }
    }
    *dev = ref;
    return s;
}

/* `elems` elements of type t holding small integers (from seed), in a buffer of exactly that
 * size (1 byte when elems is 0); host copies as double in *vals (may be NULL). */
static inline void *fz_tensor(kmux_stream *s, kmux_dtype t, int64_t elems, unsigned seed,
                              double **vals) {
    size_t es = kmux_dtype_size(t);
    void *buf = malloc(elems ? (size_t)elems * es : 1);
    double *v = vals ? malloc((elems ? (size_t)elems : 1) * sizeof *v) : NULL;
    float *stage = malloc((elems ? (size_t)elems : 1) * sizeof *stage);
    if (!buf || (vals && !v) || !stage) abort();
    for (int64_t i = 0; i < elems; i++) {
        int x = (int)((i * 2654435761u + seed) % 5) - 2;
        stage[i] = (float)x;
        if (v) v[i] = x;
        if (t == KMUX_I8) ((int8_t *)buf)[i] = (int8_t)x;
        if (t == KMUX_I32) ((int32_t *)buf)[i] = x;
    }
    if (elems && fz_is_float(t) &&
        (kmux_cast(s, elems, stage, KMUX_F32, buf, t, NULL) != KMUX_OK ||
         kmux_stream_synchronize(s) != KMUX_OK)) {
        fprintf(stderr, "fuzz: cast to %s failed: %s\n", kmux_dtype_name(t), kmux_last_error());
        abort();
    }
    free(stage);
    if (vals) *vals = v;
    return buf;
}

/* Element i of buf (type t) as double; f32/f64 only (the checked types). */
static inline double fz_get(const void *buf, kmux_dtype t, int64_t i) {
    return t == KMUX_F64 ? ((const double *)buf)[i] : ((const float *)buf)[i];
}

/* A rejected call: the status is an argument or support error and the message names the
 * function that was called. */
static inline void fz_check_rejection(kmux_status st, const char *fn) {
    const char *msg = kmux_last_error();
    if (st != KMUX_ERR_INVALID_ARGUMENT && st != KMUX_ERR_UNSUPPORTED) {
        fprintf(stderr, "fuzz: %s returned %s: %s\n", fn, kmux_status_str(st), msg);
        abort();
    }
    if (strncmp(msg, fn, strlen(fn)) != 0) {
        fprintf(stderr, "fuzz: %s failed with a message that does not name it: \"%s\"\n", fn, msg);
        abort();
    }
}

#endif
