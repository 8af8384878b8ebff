/*
 * ck_values.h - element access of any kmux dtype through a double (exact for every value the
 * checks use), and device buffers filled from the host.
 */
#ifndef KMUX_CHECK_VALUES_H
#define KMUX_CHECK_VALUES_H

#include <stddef.h>

#include "kmux.h"

/** Stores v (rounded once to t) as element i of buf. */
void ck_put(kmux_dtype t, void *buf, size_t i, double v);
/** Element i of buf as a double (exact). */
double ck_get(kmux_dtype t, const void *buf, size_t i);

/** Small integers -2..2 in a fixed pattern of seed: exact in every dtype, and sums of a few
 *  dozen of their products are exact in every accumulation (as benchdnn's integer fill). */
void ck_fill_small(double *x, size_t n, unsigned seed);

/** Device buffer of n elements of t filled from host values, or NULL with kmux_last_error(). The
 *  copy is synchronised on stream. */
void *ck_upload(kmux_stream *s, kmux_dtype t, const double *values, size_t n);
/** Copies n elements of t from the device buffer to host values (synchronised). 0 on success. */
int ck_download(kmux_stream *s, kmux_dtype t, const void *dbuf, double *values, size_t n);

#endif
