/*
 * ld_conf.c - the folders /etc/ld.so.conf names (kmux_so_file.h: kmux_ld_conf_folders), so that a
 * plugin can find a vendor library with file checks where only the loader's cache
 * (/etc/ld.so.cache, built by ldconfig from these folders) would have found it: NVIDIA's
 * packages add /usr/local/cuda/lib64 this way (a file in /etc/ld.so.conf.d).
 *
 * The syntax is ldconfig's: one folder a line, '#' starts a comment, "include PATTERN..." reads
 * the files PATTERN matches (glob, relative to the including file's folder), "hwcap" lines are
 * skipped. Only regular files are read (a FIFO would block), includes at most 8 deep.
 */
#define _GNU_SOURCE
#include "kmux_so_file.h"

#include <ctype.h>
#include <glob.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

enum { MAX_DEPTH = 8 };

static int add_folder(char *list, size_t size, const char *dir) {
    size_t have = strlen(list), n = strlen(dir);
    if (have + (have ? 1 : 0) + n + 1 > size) return 0; /* whole or not at all */
    if (have) list[have++] = ':';
    memcpy(list + have, dir, n + 1);
    return 1;
}

static int read_conf(const char *path, char *list, size_t size, int depth);

/* "include a b" of the file at `from`: every file each pattern matches, in glob's order. */
static int include(const char *from, char *patterns, char *list, size_t size, int depth) {
    int added = 0;
    for (char *save = NULL, *p = strtok_r(patterns, " \t", &save); p;
         p = strtok_r(NULL, " \t", &save)) {
        char pattern[4096];
        if (p[0] == '/') {
            snprintf(pattern, sizeof pattern, "%s", p);
        } else { /* relative to the including file's folder */
            const char *slash = strrchr(from, '/');
            int dir_len = slash ? (int)(slash - from) : 0;
            if (snprintf(pattern, sizeof pattern, "%.*s/%s", dir_len, from, p) >=
                (int)sizeof pattern)
                continue;
        }
        glob_t g;
        if (glob(pattern, 0, NULL, &g) == 0)
            for (size_t i = 0; i < g.gl_pathc; i++)
                added += read_conf(g.gl_pathv[i], list, size, depth + 1);
        globfree(&g);
    }
    return added;
}

static int read_conf(const char *path, char *list, size_t size, int depth) {
    struct stat sb;
    if (depth > MAX_DEPTH || stat(path, &sb) != 0 || !S_ISREG(sb.st_mode)) return 0;
    FILE *f = fopen(path, "re");
    if (!f) return 0;
    int added = 0;
    char line[4096];
    while (fgets(line, sizeof line, f)) {
        line[strcspn(line, "#\r\n")] = '\0';
        char *s = line, *end = line + strlen(line);
        while (isspace((unsigned char)*s))
            s++;
        while (end > s && isspace((unsigned char)end[-1]))
            *--end = '\0';
        if (!*s) continue;
        if (strncmp(s, "include", 7) == 0 && isspace((unsigned char)s[7]))
            added += include(path, s + 8, list, size, depth);
        else if (strncmp(s, "hwcap", 5) == 0 && isspace((unsigned char)s[5]))
            continue;
        else if (s[0] == '/')
            added += add_folder(list, size, s);
    }
    fclose(f);
    return added;
}

int kmux_ld_conf_folders(const char *conf, char *list, size_t size) {
    if (!conf || !list || size == 0) return 0;
    return read_conf(conf, list, size, 0);
}
