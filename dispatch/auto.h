/*
 * auto.h - the routing device "cpu:auto" (auto.c): a built-in backend whose plans hold plans of
 * the real CPU devices (cpu:onednn, cpu:openblas) and run the one chosen for the problem.
 */
#ifndef KMUX_AUTO_H
#define KMUX_AUTO_H

#include "internal.h"

/** The function table of the routing backend "auto" (device "cpu:auto"). Its init takes the
 *  context given by kmux_auto_prepare; the loader starts it after every plugin. */
const kmux_backend_ops *kmux_auto_backend_ops(void);

/** The context the next init of the auto backend (in this thread) belongs to. */
void kmux_auto_prepare(kmux_context *ctx);

/** For the tuner (tune.c): when plan pl is a cpu:auto plan with implementations on OpenBLAS
 *  built with its pthreads server, whose workers keep spinning for 2^OPENBLAS_THREAD_TIMEOUT
 *  time-stamp-counter ticks (default 2^28, ~0.1 s) after every call and slow another library's
 *  call in that window (README "Performance note"): sets [*first, *end) to those
 *  implementations and returns the pause in ms after which the workers sleep (that period
 *  + 20 ms). Returns 0 (and an empty range) for any other plan. */
double kmux_auto_spinning_impls(const kmux_plan *pl, int *first, int *end);

#endif
