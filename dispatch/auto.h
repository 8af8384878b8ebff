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

/** The device implementation impl (0 <= impl < pl->impl_count) of plan pl runs on: for a
 *  cpu:auto plan, the routed device whose sub-plan it is (cpu:onednn, cpu:openblas); for any
 *  other plan, pl->dev. For the tuner (tune.c), which waits out a device's settle_ms
 *  (kmux_device_caps) before it times another device's implementations. */
const kmux_device *kmux_auto_impl_device(const kmux_plan *pl, int impl);

#endif
