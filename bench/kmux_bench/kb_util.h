/*
 * kb_util.h - small helpers of kmux-bench: checked allocation, a growable string builder, string
 * utilities and the monotonic clock. Nothing here knows about kmux.
 */
#ifndef KB_UTIL_H
#define KB_UTIL_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/** malloc/calloc/realloc that print a message and exit(2) when memory runs out (kmux-bench is
 *  a program; the library itself never exits). */
void *kb_xmalloc(size_t bytes);
void *kb_xcalloc(size_t count, size_t size);
void *kb_xrealloc(void *p, size_t bytes);
char *kb_xstrdup(const char *s);

/** A growable NUL-terminated string. Initialise with KB_SB_INIT; free with kb_sb_free. */
typedef struct kb_sb {
    char *buf;
    size_t len, cap;
} kb_sb;
#define KB_SB_INIT                                                                                 \
    { NULL, 0, 0 }

/** Appends printf-formatted text. */
void kb_sb_printf(kb_sb *sb, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/** Appends n bytes of s (n = strlen(s) when n == (size_t)-1). */
void kb_sb_append(kb_sb *sb, const char *s, size_t n);
/** Appends s with the five XML special characters escaped (&, <, >, ", '). */
void kb_sb_append_xml(kb_sb *sb, const char *s);
/** The string so far ("" when empty); owned by sb. */
const char *kb_sb_str(const kb_sb *sb);
void kb_sb_free(kb_sb *sb);

/** Copies src into dst (capacity cap >= 1), truncating, always NUL-terminated. */
void kb_strlcpy(char *dst, const char *src, size_t cap);
/** Replaces every control character of s (C0, DEL, and C1 encoded in UTF-8) with '?', so that
 *  text from a file (a JSONL record) cannot drive the terminal (OSC title/clipboard/link, SGR). */
void kb_text_clean(char *s);
/** Removes leading and trailing white space in place; returns s. */
char *kb_strtrim(char *s);
/** Case-insensitive string equality. */
int kb_strieq(const char *a, const char *b);
/** Parses a whole string as an int64 (decimal). Returns 1 on success. */
int kb_parse_i64(const char *s, int64_t *out);
/** Parses a whole string as a double. Returns 1 on success. */
int kb_parse_double(const char *s, double *out);
/** Reads a whole file into a NUL-terminated buffer (caller frees); NULL on failure. */
char *kb_read_file(const char *path, size_t *len);
/** kb_read_file that stops at max bytes: NULL with *too_big = 1 (too_big may be NULL) when the
 *  file holds more (a device such as /dev/zero never ends). */
char *kb_read_file_max(const char *path, size_t max, size_t *len, int *too_big);

/** Monotonic clock in seconds. */
double kb_now_s(void);

/** Appends to sb a shell-quoted copy of s (single quotes when it holds anything special). */
void kb_sb_append_shell(kb_sb *sb, const char *s);

#endif
