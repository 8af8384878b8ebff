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

/* How many live contexts asked for each level; the trace level is the highest one in use, so it
 * falls back when a verbose context is destroyed. Read on every execution: a few relaxed loads. */
#define LEVELS 10
static atomic_int contexts_at[LEVELS];

int kmux_verbose_level(void) {
    for (int l = LEVELS - 1; l > 0; l--)
        if (atomic_load_explicit(&contexts_at[l], memory_order_relaxed) > 0) return l;
    return 0;
}

void kmux_verbose_acquire(int level) {
    if (level > 0 && level < LEVELS) atomic_fetch_add(&contexts_at[level], 1);
}

void kmux_verbose_release(int level) {
    if (level > 0 && level < LEVELS) atomic_fetch_sub(&contexts_at[level], 1);
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
