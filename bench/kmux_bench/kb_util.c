/* kb_util.c - allocation, string builder and string helpers of kmux-bench. */
#define _POSIX_C_SOURCE 200809L
#include "kb_util.h"

#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static void *oom(size_t bytes) {
    fprintf(stderr, "kmux-bench: out of memory allocating %zu bytes\n", bytes);
    exit(2);
}

void *kb_xmalloc(size_t bytes) {
    void *p = malloc(bytes ? bytes : 1);
    return p ? p : oom(bytes);
}

void *kb_xcalloc(size_t count, size_t size) {
    void *p = calloc(count ? count : 1, size ? size : 1);
    return p ? p : oom(count * size);
}

void *kb_xrealloc(void *p, size_t bytes) {
    void *q = realloc(p, bytes ? bytes : 1);
    return q ? q : oom(bytes);
}

char *kb_xstrdup(const char *s) {
    size_t n = strlen(s) + 1;
    char *d = kb_xmalloc(n);
    memcpy(d, s, n);
    return d;
}

static void sb_reserve(kb_sb *sb, size_t extra) {
    if (sb->len + extra + 1 <= sb->cap) return;
    size_t cap = sb->cap ? sb->cap : 256;
    while (cap < sb->len + extra + 1)
        cap *= 2;
    sb->buf = kb_xrealloc(sb->buf, cap);
    sb->cap = cap;
}

void kb_sb_printf(kb_sb *sb, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    char small[512];
    int n = vsnprintf(small, sizeof small, fmt, ap);
    va_end(ap);
    if (n < 0) return;
    sb_reserve(sb, (size_t)n);
    if ((size_t)n < sizeof small) {
        memcpy(sb->buf + sb->len, small, (size_t)n + 1);
    } else {
        va_start(ap, fmt);
        vsnprintf(sb->buf + sb->len, (size_t)n + 1, fmt, ap);
        va_end(ap);
    }
    sb->len += (size_t)n;
}

void kb_sb_append(kb_sb *sb, const char *s, size_t n) {
    if (n == (size_t)-1) n = strlen(s);
    sb_reserve(sb, n);
    memcpy(sb->buf + sb->len, s, n);
    sb->len += n;
    sb->buf[sb->len] = '\0';
}

void kb_sb_append_xml(kb_sb *sb, const char *s) {
    for (; *s; ++s) {
        switch (*s) {
        case '&':
            kb_sb_append(sb, "&amp;", 5);
            break;
        case '<':
            kb_sb_append(sb, "&lt;", 4);
            break;
        case '>':
            kb_sb_append(sb, "&gt;", 4);
            break;
        case '"':
            kb_sb_append(sb, "&quot;", 6);
            break;
        case '\'':
            kb_sb_append(sb, "&#39;", 5);
            break;
        default:
            kb_sb_append(sb, s, 1);
            break;
        }
    }
}

const char *kb_sb_str(const kb_sb *sb) {
    return sb->buf ? sb->buf : "";
}

void kb_sb_free(kb_sb *sb) {
    free(sb->buf);
    sb->buf = NULL;
    sb->len = sb->cap = 0;
}

void kb_strlcpy(char *dst, const char *src, size_t cap) {
    size_t n = strlen(src);
    if (n >= cap) {
        n = cap - 1;
        /* never half a UTF-8 character: back off over continuation bytes to a lead byte */
        while (n > 0 && ((unsigned char)src[n] & 0xC0) == 0x80)
            --n;
    }
    memcpy(dst, src, n);
    dst[n] = '\0';
}

void kb_text_clean(char *s) {
    unsigned char *p = (unsigned char *)s;
    for (; *p; ++p) {
        if (*p < 0x20 || *p == 0x7F) { /* C0 controls, ESC among them, and DEL */
            *p = '?';
        } else if (*p == 0xC2 && p[1] >= 0x80 && p[1] <= 0x9F) { /* C1 controls, UTF-8 */
            p[0] = '?';
            p[1] = '?';
            ++p;
        }
    }
}

char *kb_strtrim(char *s) {
    char *b = s;
    while (*b && isspace((unsigned char)*b))
        ++b;
    size_t n = strlen(b);
    while (n > 0 && isspace((unsigned char)b[n - 1]))
        --n;
    memmove(s, b, n);
    s[n] = '\0';
    return s;
}

int kb_strieq(const char *a, const char *b) {
    for (; *a && *b; ++a, ++b)
        if (tolower((unsigned char)*a) != tolower((unsigned char)*b)) return 0;
    return *a == *b;
}

int kb_parse_i64(const char *s, int64_t *out) {
    if (!s || !*s) return 0;
    char *end = NULL;
    errno = 0;
    long long v = strtoll(s, &end, 10);
    if (errno || *end) return 0;
    *out = (int64_t)v;
    return 1;
}

int kb_parse_double(const char *s, double *out) {
    if (!s || !*s) return 0;
    char *end = NULL;
    errno = 0;
    double v = strtod(s, &end);
    if (errno || *end) return 0;
    *out = v;
    return 1;
}

char *kb_read_file(const char *path, size_t *len) {
    return kb_read_file_max(path, SIZE_MAX, len, NULL);
}

char *kb_read_file_max(const char *path, size_t max, size_t *len, int *too_big) {
    if (too_big) *too_big = 0;
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    kb_sb sb = KB_SB_INIT;
    char chunk[65536];
    size_t n;
    while ((n = fread(chunk, 1, sizeof chunk, f)) > 0) {
        if (n > max - sb.len) { /* /dev/zero once read until memory ran out */
            fclose(f);
            kb_sb_free(&sb);
            if (too_big) *too_big = 1;
            return NULL;
        }
        kb_sb_append(&sb, chunk, n);
    }
    int err = ferror(f);
    fclose(f);
    if (err) {
        kb_sb_free(&sb);
        return NULL;
    }
    if (!sb.buf) kb_sb_append(&sb, "", 0);
    if (len) *len = sb.len;
    return sb.buf;
}

double kb_now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

void kb_sb_append_shell(kb_sb *sb, const char *s) {
    int plain = *s != '\0';
    for (const char *p = s; *p; ++p)
        if (!isalnum((unsigned char)*p) && !strchr("-_=.,:/+@%", *p)) plain = 0;
    if (plain) {
        kb_sb_append(sb, s, (size_t)-1);
        return;
    }
    kb_sb_append(sb, "'", 1);
    for (const char *p = s; *p; ++p) {
        if (*p == '\'')
            kb_sb_append(sb, "'\\''", 4);
        else
            kb_sb_append(sb, p, 1);
    }
    kb_sb_append(sb, "'", 1);
}
