/*
 * verbose.c - the KMUX_VERBOSE trace, in the spirit of ONEDNN_VERBOSE: one CSV line per event on
 * stderr, written with a single fputs so lines from several threads do not interleave.
 *   level 1: kmux_verbose,exec,<device>,<op>,<impl>,<dtypes>,<compute>,<shape>,<ms>
 *   level 2: + plugin loading (every candidate, with the reason it was rejected), plan creation,
 *            errors and fallbacks.
 */
#include <stdatomic.h>
#include <stdio.h>

#include "internal.h"

static atomic_int verbose_level;

int kmux_verbose_level(void) {
    return atomic_load_explicit(&verbose_level, memory_order_relaxed);
}

void kmux_verbose_raise(int level) {
    int cur = atomic_load(&verbose_level);
    while (level > cur && !atomic_compare_exchange_weak(&verbose_level, &cur, level)) {
    }
}

void kmux_trace(int level, const char *fmt, ...) {
    if (level > kmux_verbose_level()) return;
    char line[1536];
    int off = snprintf(line, sizeof line, "kmux_verbose,");
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line + off, sizeof line - (size_t)off - 1, fmt, ap);
    va_end(ap);
    size_t len = 0;
    while (line[len] && len < sizeof line - 2)
        len++;
    line[len] = '\n';
    line[len + 1] = '\0';
    fputs(line, stderr);
}
