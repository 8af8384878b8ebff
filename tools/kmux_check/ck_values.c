/*
 * ck_values.c - dtype element access and host<->device staging for kmux-check.
 */
#include "ck_values.h"

#include <stdint.h>
#include <stdlib.h>

#include "dispatch/common/kmux_dtype_codec.h"

void ck_put(kmux_dtype t, void *buf, size_t i, double v) {
    switch (t) {
    case KMUX_F64:
        ((double *)buf)[i] = v;
        return;
    case KMUX_F32:
        ((float *)buf)[i] = (float)v;
        return;
    case KMUX_I8:
        ((int8_t *)buf)[i] = (int8_t)v;
        return;
    case KMUX_I32:
        ((int32_t *)buf)[i] = (int32_t)v;
        return;
    default:
        if (kmux_dtype_bytes(t) == 2)
            ((uint16_t *)buf)[i] = (uint16_t)kmux_encode_f64(v, t, 0);
        else
            ((uint8_t *)buf)[i] = (uint8_t)kmux_encode_f64(v, t, 0);
    }
}

double ck_get(kmux_dtype t, const void *buf, size_t i) {
    switch (t) {
    case KMUX_F64:
        return ((const double *)buf)[i];
    case KMUX_F32:
        return ((const float *)buf)[i];
    case KMUX_I8:
        return ((const int8_t *)buf)[i];
    case KMUX_I32:
        return ((const int32_t *)buf)[i];
    default:
        return kmux_dtype_bytes(t) == 2 ? kmux_decode_f64(((const uint16_t *)buf)[i], t)
                                        : kmux_decode_f64(((const uint8_t *)buf)[i], t);
    }
}

void *ck_upload(kmux_stream *s, kmux_dtype t, const double *values, size_t n) {
    size_t bytes = n * kmux_dtype_bytes(t);
    unsigned char *host = malloc(bytes ? bytes : 1);
    if (!host) return NULL;
    for (size_t i = 0; i < n; i++)
        ck_put(t, host, i, values ? values[i] : 0.0);
    void *d = NULL;
    kmux_device *dev = kmux_stream_device(s);
    if (kmux_malloc(dev, bytes, &d) != KMUX_OK ||
        kmux_memcpy(s, d, host, bytes, KMUX_MEMCPY_HOST_TO_DEVICE) != KMUX_OK ||
        kmux_stream_synchronize(s) != KMUX_OK) {
        if (d) kmux_free(dev, d);
        d = NULL;
    }
    free(host);
    return d;
}

int ck_download(kmux_stream *s, kmux_dtype t, const void *dbuf, double *values, size_t n) {
    size_t bytes = n * kmux_dtype_bytes(t);
    unsigned char *host = malloc(bytes ? bytes : 1);
    if (!host) return -1;
    int rc = kmux_memcpy(s, host, dbuf, bytes, KMUX_MEMCPY_DEVICE_TO_HOST) == KMUX_OK &&
                     kmux_stream_synchronize(s) == KMUX_OK
                 ? 0
                 : -1;
    for (size_t i = 0; rc == 0 && i < n; i++)
        values[i] = ck_get(t, host, i);
    free(host);
    return rc;
}

void ck_fill_small(double *x, size_t n, unsigned seed) {
    for (size_t i = 0; i < n; i++)
        x[i] = (double)((int)((i * 7 + seed * 13 + (i / 5) * 3) % 5) - 2);
}
