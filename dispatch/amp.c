/*
 * amp.c - mixed-precision utilities: validation, then the stream's backend.
 */
#include <math.h>

#include "validate.h"

#define INVALID(...) kmux_set_error(KMUX_ERR_INVALID_ARGUMENT, __VA_ARGS__)

static kmux_status need_slot(const char *fn, const kmux_stream *s, int present) {
    if (!present)
        return kmux_set_error(KMUX_ERR_UNSUPPORTED, "%s: backend %s (%s) does not implement it", fn,
                              s->dev->backend->name, s->dev->props.id);
    return KMUX_OK;
}

static kmux_status done(kmux_status st, const char *fn, const kmux_stream *s) {
    if (st != KMUX_OK && kmux_last_error()[0] == '\0')
        kmux_set_error(st, "%s: backend %s on %s returned %s", fn, s->dev->backend->name,
                       s->dev->props.id, kmux_status_str(st));
    return st;
}

#define OPS(s) ((s)->dev->backend->ops)
#define STATE(s) ((s)->dev->backend->state)

static int castable(kmux_dtype t) {
    return kmux_dtype_is_float(t);
}

kmux_status kmux_cast(kmux_stream *stream, int64_t n, const void *src, kmux_dtype src_type,
                      void *dst, kmux_dtype dst_type, const kmux_cast_options *opts) {
    kmux_clear_error();
    const char *fn = "kmux_cast";
    KMUX_CHECK_HANDLE(fn, "stream", stream, KMUX_HANDLE_STREAM);
    if (n < 0) return INVALID("%s: n = %lld is negative", fn, (long long)n);
    if (!kmux_dtype_valid(src_type) || !castable(src_type))
        return INVALID("%s: src_type = %s (%d) is not a floating-point kmux_dtype", fn,
                       kmux_dtype_name(src_type), (int)src_type);
    if (!kmux_dtype_valid(dst_type) || !castable(dst_type))
        return INVALID("%s: dst_type = %s (%d) is not a floating-point kmux_dtype", fn,
                       kmux_dtype_name(dst_type), (int)dst_type);
    kmux_cast_options o;
    kmux_status rs = kmux_resolve_cast_options(fn, opts, &o);
    if (rs != KMUX_OK) return rs;
    if (o.saturate != 0 && o.saturate != 1)
        return INVALID("%s: opts->saturate = %d must be 0 or 1", fn, o.saturate);
    size_t sb, db;
    if (!kmux_bytes_of(n, src_type, &sb) || !kmux_bytes_of(n, dst_type, &db))
        return INVALID("%s: n = %lld elements of %s overflow the address space", fn, (long long)n,
                       kmux_dtype_name(kmux_dtype_size(src_type) >= kmux_dtype_size(dst_type)
                                           ? src_type
                                           : dst_type));
    if (n > 0 && (!src || !dst))
        return INVALID("%s: %s is NULL with n = %lld", fn, !src ? "src" : "dst", (long long)n);
    if (n > 0 && kmux_spans_overlap(dst, db, src, sb))
        return INVALID("%s: dst = %p (%zu bytes) overlaps src = %p (%zu bytes); in-place casts "
                       "are not supported",
                       fn, dst, db, src, sb);
    kmux_status st = need_slot(fn, stream, OPS(stream)->cast != NULL);
    if (st != KMUX_OK) return st;
    if (n == 0 && !o.amax) return KMUX_OK;
    return done(
        OPS(stream)->cast(STATE(stream), stream->native, n, src, src_type, dst, dst_type, &o), fn,
        stream);
}

kmux_status kmux_amax(kmux_stream *stream, int64_t n, const void *x, kmux_dtype type, float *amax) {
    kmux_clear_error();
    const char *fn = "kmux_amax";
    KMUX_CHECK_HANDLE(fn, "stream", stream, KMUX_HANDLE_STREAM);
    if (!amax) return INVALID("%s: amax is NULL", fn);
    if (n < 0) return INVALID("%s: n = %lld is negative", fn, (long long)n);
    if (!kmux_dtype_valid(type) || !kmux_dtype_is_float(type))
        return INVALID("%s: type = %s (%d) is not a floating-point kmux_dtype", fn,
                       kmux_dtype_name(type), (int)type);
    size_t b;
    if (!kmux_bytes_of(n, type, &b))
        return INVALID("%s: n = %lld elements of %s overflow the address space", fn, (long long)n,
                       kmux_dtype_name(type));
    if (n > 0 && !x) return INVALID("%s: x is NULL with n = %lld", fn, (long long)n);
    kmux_status st = need_slot(fn, stream, OPS(stream)->amax != NULL);
    if (st != KMUX_OK) return st;
    return done(OPS(stream)->amax(STATE(stream), stream->native, n, x, type, amax), fn, stream);
}

kmux_status kmux_unscale_check_finite(kmux_stream *stream, int64_t count, void *const *tensors,
                                      const int64_t *sizes, const kmux_dtype *types,
                                      const float *inv_scale, float *found_inf) {
    kmux_clear_error();
    const char *fn = "kmux_unscale_check_finite";
    KMUX_CHECK_HANDLE(fn, "stream", stream, KMUX_HANDLE_STREAM);
    if (count < 0) return INVALID("%s: count = %lld is negative", fn, (long long)count);
    if (!inv_scale) return INVALID("%s: inv_scale is NULL", fn);
    if (!found_inf) return INVALID("%s: found_inf is NULL", fn);
    if (count > 0 && (!tensors || !sizes || !types))
        return INVALID("%s: %s is NULL with count = %lld", fn,
                       !tensors ? "tensors"
                       : !sizes ? "sizes"
                                : "types",
                       (long long)count);
    for (int64_t i = 0; i < count; i++) {
        kmux_dtype t = types[i];
        if (t != KMUX_F32 && t != KMUX_F16 && t != KMUX_BF16 && t != KMUX_F64)
            return INVALID("%s: types[%lld] = %s (%d) is not f32, f16, bf16 or f64", fn,
                           (long long)i, kmux_dtype_name(t), (int)t);
        size_t b;
        if (sizes[i] < 0)
            return INVALID("%s: sizes[%lld] = %lld is negative", fn, (long long)i,
                           (long long)sizes[i]);
        if (!kmux_bytes_of(sizes[i], t, &b))
            return INVALID("%s: sizes[%lld] = %lld elements of %s overflow the address space", fn,
                           (long long)i, (long long)sizes[i], kmux_dtype_name(t));
        if (sizes[i] > 0 && !tensors[i])
            return INVALID("%s: tensors[%lld] is NULL with sizes[%lld] = %lld", fn, (long long)i,
                           (long long)i, (long long)sizes[i]);
    }
    kmux_status st = need_slot(fn, stream, OPS(stream)->unscale_check_finite != NULL);
    if (st != KMUX_OK) return st;
    return done(OPS(stream)->unscale_check_finite(STATE(stream), stream->native, count, tensors,
                                                  sizes, types, inv_scale, found_inf),
                fn, stream);
}

kmux_status kmux_loss_scale_update(kmux_stream *stream, float *scale, int32_t *growth_tracker,
                                   const float *found_inf, double growth_factor,
                                   double backoff_factor, int64_t growth_interval) {
    kmux_clear_error();
    const char *fn = "kmux_loss_scale_update";
    if (!stream || !scale || !growth_tracker || !found_inf)
        return INVALID("%s: %s is NULL", fn,
                       !stream           ? "stream"
                       : !scale          ? "scale"
                       : !growth_tracker ? "growth_tracker"
                                         : "found_inf");
    KMUX_CHECK_HANDLE(fn, "stream", stream, KMUX_HANDLE_STREAM);
    if (!(growth_factor > 1.0) || !isfinite(growth_factor))
        return INVALID("%s: growth_factor = %g must be finite and > 1", fn, growth_factor);
    if (!(backoff_factor > 0.0 && backoff_factor < 1.0))
        return INVALID("%s: backoff_factor = %g must be in (0, 1)", fn, backoff_factor);
    if (growth_interval < 1 || growth_interval > INT32_MAX)
        return INVALID("%s: growth_interval = %lld must be in [1, 2^31-1]", fn,
                       (long long)growth_interval);
    kmux_status st = need_slot(fn, stream, OPS(stream)->loss_scale_update != NULL);
    if (st != KMUX_OK) return st;
    return done(OPS(stream)->loss_scale_update(STATE(stream), stream->native, scale, growth_tracker,
                                               found_inf, growth_factor, backoff_factor,
                                               growth_interval),
                fn, stream);
}

kmux_status kmux_fp8_scale_update(kmux_stream *stream, const float *amax_history,
                                  int64_t history_len, kmux_dtype fp8_type, float margin,
                                  float *scale) {
    kmux_clear_error();
    const char *fn = "kmux_fp8_scale_update";
    if (!stream || !amax_history || !scale)
        return INVALID("%s: %s is NULL", fn,
                       !stream         ? "stream"
                       : !amax_history ? "amax_history"
                                       : "scale");
    KMUX_CHECK_HANDLE(fn, "stream", stream, KMUX_HANDLE_STREAM);
    if (history_len < 1)
        return INVALID("%s: history_len = %lld must be >= 1", fn, (long long)history_len);
    if (!kmux_dtype_is_fp8(fp8_type))
        return INVALID("%s: fp8_type = %s (%d) is not an fp8 format", fn, kmux_dtype_name(fp8_type),
                       (int)fp8_type);
    if (!isfinite(margin) || margin < -KMUX_FP8_MARGIN_MAX || margin > KMUX_FP8_MARGIN_MAX)
        return INVALID("%s: margin = %g is not in [%d, %d] (a power of two of headroom)", fn,
                       (double)margin, -KMUX_FP8_MARGIN_MAX, KMUX_FP8_MARGIN_MAX);
    kmux_status st = need_slot(fn, stream, OPS(stream)->fp8_scale_update != NULL);
    if (st != KMUX_OK) return st;
    return done(OPS(stream)->fp8_scale_update(STATE(stream), stream->native, amax_history,
                                              history_len, fp8_type, margin, scale),
                fn, stream);
}

kmux_status kmux_fp8_amax_history_record(kmux_stream *stream, float *amax_history,
                                         int64_t history_len, int64_t step, const float *amax) {
    kmux_clear_error();
    const char *fn = "kmux_fp8_amax_history_record";
    if (!stream || !amax_history || !amax)
        return INVALID("%s: %s is NULL", fn,
                       !stream         ? "stream"
                       : !amax_history ? "amax_history"
                                       : "amax");
    KMUX_CHECK_HANDLE(fn, "stream", stream, KMUX_HANDLE_STREAM);
    if (history_len < 1)
        return INVALID("%s: history_len = %lld must be >= 1", fn, (long long)history_len);
    if (step < 0) return INVALID("%s: step = %lld is negative", fn, (long long)step);
    float *slot = amax_history + step % history_len;
    if (slot == amax) return KMUX_OK; /* already there */
    /* one f32 from device memory to device memory, ordered on the stream */
    return done(OPS(stream)->mem_copy(STATE(stream), stream->native, slot, amax, sizeof *slot,
                                      KMUX_MEMCPY_DEVICE_TO_DEVICE),
                fn, stream);
}
