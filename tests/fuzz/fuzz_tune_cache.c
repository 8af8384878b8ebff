/*
 * fuzz_tune_cache.c - libFuzzer target of the tune cache reader (dispatch/tune_cache.c): any
 * file content (over-long lines, NUL bytes, bad fields, numbers out of range) is read without
 * undefined behaviour; a found verdict has a name that fits and an index >= 0 as stored.
 */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fuzz_common.h"
#include "tune.h"

/* the core's trace, not linked here */
void kmux_trace(int level, const char *fmt, ...) {
    (void)level, (void)fmt;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    const char *path = fz_temp_file("tune", data, size);
    if (!path) return 0;
    /* the key is the input's first line after the tag's tab, so that hits happen */
    char key[256] = "k", head[512];
    size_t hn = size < sizeof head - 1 ? size : sizeof head - 1;
    memcpy(head, data, hn);
    head[hn] = '\0';
    const char *tab = strchr(head, '\t');
    if (tab) {
        size_t n = strcspn(tab + 1, "\t\n");
        if (n >= sizeof key) n = sizeof key - 1;
        memcpy(key, tab + 1, n);
        key[n] = '\0';
    }
    int idx = -1;
    char name[128];
    if (kmux_tune_cache_lookup(path, key, &idx, name, sizeof name)) {
        if (strlen(name) >= sizeof name) abort();
    }
    return 0;
}
