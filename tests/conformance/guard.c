/*
 * guard.c - guarded tensors: host images with canaries around and between the elements, their
 * device copies, and the search for bytes written where no element is.
 */
#include "conformance.h"

void cf_tensor_init_misaligned(cf_tensor *t, kmux_dtype type, int64_t span, int misalign) {
    memset(t, 0, sizeof *t);
    t->type = type;
    t->esz = kmux_dtype_bytes(type);
    t->span = span;
    t->front = CF_GUARD + (size_t)misalign * t->esz;
    t->bytes = t->front + CF_GUARD + (size_t)span * t->esz;
    t->img = malloc(t->bytes);
    t->mask = calloc((size_t)span + 1, 1);
    cr_assert(t->img && t->mask, "out of host memory (%zu bytes)", t->bytes);
    for (size_t o = 0; o + t->esz <= t->bytes; o += t->esz)
        cf_poison(type, t->img + o);
}

void cf_tensor_init(cf_tensor *t, kmux_dtype type, int64_t span) {
    cf_tensor_init_misaligned(t, type, span, 0);
}

void cf_tensor_free(cf_tensor *t) {
    free(t->img);
    free(t->mask);
    memset(t, 0, sizeof *t);
}

void *cf_data(const cf_tensor *t) {
    return t->img + t->front;
}

double cf_tget(const cf_tensor *t, int64_t e) {
    return tu_get(t->type, cf_data(t), e);
}

void cf_tset(cf_tensor *t, int64_t e, double v) {
    tu_set(t->type, cf_data(t), e, v);
    t->mask[e] = 1;
}

kmux_status cf_upload(kmux_device *dev, kmux_stream *st, const cf_tensor *t, cf_dbuf *d) {
    d->dev = dev;
    d->bytes = t->bytes;
    d->front = t->front;
    d->base = NULL;
    kmux_status s = kmux_malloc(dev, t->bytes, &d->base);
    if (s != KMUX_OK) return s;
    s = kmux_memcpy(st, d->base, t->img, t->bytes, KMUX_MEMCPY_HOST_TO_DEVICE);
    if (s == KMUX_OK) s = kmux_stream_synchronize(st);
    return s;
}

kmux_status cf_reupload(kmux_stream *st, const cf_tensor *t, cf_dbuf *d) {
    kmux_status s = kmux_memcpy(st, d->base, t->img, t->bytes, KMUX_MEMCPY_HOST_TO_DEVICE);
    return s == KMUX_OK ? kmux_stream_synchronize(st) : s;
}

kmux_status cf_download(kmux_stream *st, const cf_dbuf *d, unsigned char *out) {
    kmux_status s = kmux_memcpy(st, out, d->base, d->bytes, KMUX_MEMCPY_DEVICE_TO_HOST);
    return s == KMUX_OK ? kmux_stream_synchronize(st) : s;
}

void cf_dfree(cf_dbuf *d) {
    if (d->base) kmux_free(d->dev, d->base);
    d->base = NULL;
}

void *cf_dptr(const cf_dbuf *d) {
    return d->base ? (unsigned char *)d->base + d->front : NULL;
}

int64_t cf_foreign_write(const cf_tensor *t, const unsigned char *got) {
    for (size_t o = 0; o < t->bytes; o++) {
        if (got[o] == t->img[o]) continue;
        if (o >= t->front && o < t->front + (size_t)t->span * t->esz &&
            t->mask[(o - t->front) / t->esz])
            continue;
        return (int64_t)o;
    }
    return -1;
}

int64_t cf_any_change(const cf_tensor *t, const unsigned char *got) {
    for (size_t o = 0; o < t->bytes; o++)
        if (got[o] != t->img[o]) return (int64_t)o;
    return -1;
}

void cf_describe_byte(const cf_tensor *t, int64_t o, cf_locate_fn loc, const void *ctx, char *buf,
                      size_t n) {
    int64_t front = (int64_t)t->front;
    int64_t end = front + t->span * (int64_t)t->esz;
    if (o < front) {
        snprintf(buf, n, "front guard, %lld bytes before the first element",
                 (long long)(front - o));
    } else if (o >= end) {
        snprintf(buf, n, "back guard, byte %lld after the end of the span (%lld elements)",
                 (long long)(o - end), (long long)t->span);
    } else {
        char where[160] = "";
        int64_t e = (o - front) / (int64_t)t->esz;
        if (loc) loc(ctx, e, where, sizeof where);
        snprintf(buf, n, "element %lld %s, which is not part of the tensor (gap)", (long long)e,
                 where);
    }
}
