/*
 * ref_backend.h - the reference backend, built into libkmux (device "ref").
 *
 * Plain C loops, exact decoding of every input dtype, f64 accumulation, one round-to-nearest-
 * even rounding to the output type. The oracle of every test: simple and right, not fast.
 */
#ifndef KMUX_REF_BACKEND_H
#define KMUX_REF_BACKEND_H

#include "kmux_backend.h"

/** The reference backend's function table (the core registers it like a plugin's). */
const kmux_backend_ops *kmux_ref_backend_ops(void);

#endif
