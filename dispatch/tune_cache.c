/*
 * tune_cache.c - the on-disk cache of tuning verdicts. One verdict per line, appended:
 *   kmux-tune-v1 TAB key TAB impl_index TAB impl_name TAB ms NEWLINE
 * The key names the machine, kmux and library versions, the device, the thread count and the
 * exact problem (tune.c builds it); a later line for the same key wins. A line is written with
 * one write() on an O_APPEND descriptor, so concurrent processes interleave whole lines. Anything
 * malformed is skipped (KMUX_VERBOSE=2 says where): the cache is an optimisation, never an error.
 */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tune.h"

#define TAG "kmux-tune-v1"
/* More lines than any real cache holds (one per tuned shape and machine): a bound, not a limit. */
#define KMUX_TUNE_CACHE_LINES_MAX 1000000

int kmux_tune_cache_path(char *buf, size_t size) {
    const char *env = getenv("KMUX_TUNE_CACHE");
    int n;
    if (env && env[0]) {
        n = snprintf(buf, size, "%s", env);
    } else {
        const char *xdg = getenv("XDG_CACHE_HOME");
        const char *home = getenv("HOME");
        if (xdg && xdg[0] == '/')
            n = snprintf(buf, size, "%s/kmux/tune-v1.txt", xdg);
        else if (home && home[0])
            n = snprintf(buf, size, "%s/.cache/kmux/tune-v1.txt", home);
        else
            return 0;
    }
    return n > 0 && (size_t)n < size;
}

void kmux_tune_fingerprint(char *buf, size_t size) {
    char model[128] = "unknown";
    FILE *f = fopen("/proc/cpuinfo", "r");
    if (f) {
        char line[512];
        while (fgets(line, sizeof line, f)) {
            if (strncmp(line, "model name", 10) != 0) continue;
            const char *v = strchr(line, ':');
            if (!v) continue;
            v++;
            while (*v == ' ' || *v == '\t')
                v++;
            snprintf(model, sizeof model, "%s", v);
            model[strcspn(model, "\r\n")] = '\0';
            break;
        }
        fclose(f);
    }
    snprintf(buf, size, "cpu=%s;cores=%ld", model, sysconf(_SC_NPROCESSORS_ONLN));
}

/* Splits line (modified) into 5 tab-separated fields; 1 when well formed. */
static int parse_line(char *line, char **f, const char **why) {
    size_t len = strlen(line);
    if (len == 0 || line[len - 1] != '\n') {
        *why = "no newline at the end (truncated write?)";
        return 0;
    }
    line[len - 1] = '\0';
    int n = 0;
    for (char *p = line;;) {
        if (n == 5) {
            *why = "more than 5 tab-separated fields";
            return 0;
        }
        f[n++] = p;
        char *t = strchr(p, '\t');
        if (!t) break;
        *t = '\0';
        p = t + 1;
    }
    if (n != 5) {
        *why = "fewer than 5 tab-separated fields";
        return 0;
    }
    if (strcmp(f[0], TAG) != 0) {
        *why = "not a " TAG " line";
        return 0;
    }
    char *end = NULL;
    errno = 0;
    long idx = strtol(f[2], &end, 10);
    if (errno || end == f[2] || *end || idx < 0 || idx > 1000000) {
        *why = "implementation index is not a number >= 0";
        return 0;
    }
    double ms = strtod(f[4], &end);
    if (end == f[4] || *end || !(ms >= 0)) {
        *why = "time is not a number >= 0";
        return 0;
    }
    if (f[3][0] == '\0') {
        *why = "empty implementation name";
        return 0;
    }
    return 1;
}

/* The cache is a regular file or nothing: a FIFO would block open() and a device such as
 * /dev/zero or /dev/full never ends, so either would hang plan creation. */
static int regular_file(const char *path, int fd) {
    struct stat sb;
    int ok = (fd >= 0 ? fstat(fd, &sb) : stat(path, &sb)) == 0 && S_ISREG(sb.st_mode);
    if (!ok && (fd >= 0 || errno != ENOENT))
        kmux_trace(2, "tune,cache,%s: not a regular file, not used", path);
    return ok;
}

int kmux_tune_cache_lookup(const char *path, const char *key, int *impl_index, char *impl_name,
                           size_t name_size) {
    if (!regular_file(path, -1)) return 0;
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) return 0;
    FILE *f = regular_file(path, fd) ? fdopen(fd, "r") : NULL;
    if (!f) {
        close(fd);
        return 0;
    }
    char line[4096];
    int found = 0;
    long lineno = 0;
    while (fgets(line, sizeof line, f)) {
        if (++lineno > KMUX_TUNE_CACHE_LINES_MAX) { /* a cache is small; this is not one */
            kmux_trace(2, "tune,cache,%s: more than %d lines, the rest ignored", path,
                       KMUX_TUNE_CACHE_LINES_MAX);
            break;
        }
        char *fields[5];
        const char *why = NULL;
        int complete = strchr(line, '\n') != NULL;
        if (!parse_line(line, fields, &why)) {
            kmux_trace(2, "tune,cache,%s:%ld: line ignored: %s", path, lineno, why);
            /* skip the rest of an over-long line */
            while (!complete && fgets(line, sizeof line, f))
                complete = strchr(line, '\n') != NULL;
            continue;
        }
        if (strcmp(fields[1], key) != 0) continue;
        *impl_index = (int)strtol(fields[2], NULL, 10);
        snprintf(impl_name, name_size, "%s", fields[3]);
        found = 1;
    }
    fclose(f);
    return found;
}

/* mkdir -p of path's folder. */
static void make_parent(const char *path) {
    char dir[1024];
    if (snprintf(dir, sizeof dir, "%s", path) >= (int)sizeof dir) return; /* never a shorter one */
    char *slash = strrchr(dir, '/');
    if (!slash || slash == dir) return;
    *slash = '\0';
    for (char *p = dir + 1; *p; p++) {
        if (*p != '/') continue;
        *p = '\0';
        mkdir(dir, 0755);
        *p = '/';
    }
    mkdir(dir, 0755);
}

int kmux_tune_cache_store(const char *path, const char *key, int impl_index, const char *impl_name,
                          double ms) {
    char line[4096];
    int n =
        snprintf(line, sizeof line, "%s\t%s\t%d\t%s\t%.4f\n", TAG, key, impl_index, impl_name, ms);
    if (n <= 0 || (size_t)n >= sizeof line) return -1;
    make_parent(path);
    int fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC | O_NONBLOCK, 0644);
    if (fd < 0) {
        kmux_trace(2, "tune,cache,%s: not written: %s", path, strerror(errno));
        return -1;
    }
    if (!regular_file(path, fd)) {
        close(fd);
        return -1;
    }
    ssize_t w = write(fd, line, (size_t)n);
    int err = errno;
    close(fd);
    if (w != n) {
        kmux_trace(2, "tune,cache,%s: not written: %s", path,
                   w < 0 ? strerror(err) : "short write");
        return -1;
    }
    return 0;
}
