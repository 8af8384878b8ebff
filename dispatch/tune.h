/*
 * tune.h - choosing a plan's implementation by measurement (tune.c) and the on-disk verdict cache
 * (tune_cache.c), in the spirit of MIOpen's find-db: time every implementation of a new plan
 * once on its real shape, keep the verdict keyed by machine, library versions and problem, and
 * start later plans of the same problem at the verdict without timing.
 */
#ifndef KMUX_TUNE_H
#define KMUX_TUNE_H

#include <stddef.h>

#include "internal.h"

/** 1 when a plan on dev with prefs (resolved) is tuned: KMUX_TUNE_ON; or KMUX_TUNE_DEFAULT with
 *  the environment variable KMUX_TUNE "1" or "on", or, on the "auto" device (dev->measured), with
 *  KMUX_TUNE unset or empty (any other value, "0" or "off", turns it off there too). */
int kmux_tune_enabled(const kmux_plan_prefs *prefs, const kmux_device *dev);

/** Starts a freshly created plan with impl_count > 1 at its fastest
 *  implementation: the cached verdict when there is a valid one, else by timing each
 *  implementation within a time budget and storing the verdict. Never fails: any trouble
 *  (memory, a failing implementation, an unreadable cache) leaves the plan at its default
 *  (index 0) with a KMUX_VERBOSE=2 line. prefs are the resolved prefs of the creation. */
void kmux_tune_plan(kmux_plan *plan, const kmux_plan_prefs *prefs);

/** The cache file: KMUX_TUNE_CACHE, else $XDG_CACHE_HOME/kmux/tune-v1.txt, else
 *  $HOME/.cache/kmux/tune-v1.txt. Returns 0 when no path can be formed. */
int kmux_tune_cache_path(char *buf, size_t size);

/** Looks key up in the cache file at path (the last valid line for key wins). Returns 1 and
 *  fills *impl_index and impl_name (size name_size) when found; 0 otherwise. Malformed lines
 *  are skipped with a KMUX_VERBOSE=2 line naming the file and line number. */
int kmux_tune_cache_lookup(const char *path, const char *key, int *impl_index, char *impl_name,
                           size_t name_size);

/** Appends the verdict for key (one line, one write; creates the folder). Returns 0 on success,
 *  -1 on failure (reported at KMUX_VERBOSE=2 only). */
int kmux_tune_cache_store(const char *path, const char *key, int impl_index, const char *impl_name,
                          double ms);

/** "cpu=<model>;cores=<online cores>": the machine part of a cache key. */
void kmux_tune_fingerprint(char *buf, size_t size);

#endif
