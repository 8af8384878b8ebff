/*
 * fuzz_jsonl.c - libFuzzer target of kmux-bench's JSON-lines reader (kb_jsonl_read.c, what
 * `kmux-bench report` merges): any file content is read or refused with "file:line: message",
 * without undefined behaviour, and no record keeps a control character in its text.
 */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fuzz_common.h"
#include "kb_jsonl.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void clean_or_abort(const char *s) {
    for (const unsigned char *p = (const unsigned char *)s; *p; p++)
        if (*p < 0x20 || *p == 0x7F || (p[0] == 0xC2 && p[1] >= 0x80 && p[1] <= 0x9F)) abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size > 65536) return 0;
    const char *path = fz_temp_file("jsonl", data, size);
    if (!path) return 0;
    kb_rec_list l = {NULL, 0, 0};
    char err[512] = "";
    if (kb_jsonl_read(path, 0, &l, err, sizeof err)) {
        for (size_t i = 0; i < l.n; i++) {
            clean_or_abort(l.v[i].label);
            clean_or_abort(l.v[i].column);
            clean_or_abort(l.v[i].reason);
            clean_or_abort(l.v[i].reproducer);
        }
    } else if (!strstr(err, path)) {
        abort(); /* a refusal names the file */
    }
    kb_rec_list_free(&l);
    return 0;
}
