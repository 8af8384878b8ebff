/*
 * so_file.c - see kmux_so_file.h.
 */
#define _GNU_SOURCE /* ElfW */
#include "kmux_so_file.h"

#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static const char *type_name(mode_t m) {
    return S_ISDIR(m)    ? "a directory"
           : S_ISFIFO(m) ? "a FIFO"
           : S_ISCHR(m)  ? "a character device"
           : S_ISBLK(m)  ? "a block device"
           : S_ISSOCK(m) ? "a socket"
                         : "not a regular file";
}

static int bad(char *why, size_t size, const char *path, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static int bad(char *why, size_t size, const char *path, const char *fmt, ...) {
    if (why && size) {
        int n = snprintf(why, size, "%s: ", path);
        if (n >= 0 && (size_t)n < size) {
            va_list ap;
            va_start(ap, fmt);
            vsnprintf(why + n, size - (size_t)n, fmt, ap);
            va_end(ap);
        }
    }
    return KMUX_SO_BAD;
}

static int read_at(int fd, void *buf, size_t n, uint64_t off) {
    size_t got = 0;
    while (got < n) {
        ssize_t r = pread(fd, (char *)buf + got, n - got, (off_t)(off + got));
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) return -1;
        got += (size_t)r;
    }
    return 0;
}

int kmux_so_file_check(const char *path, char *why, size_t why_size) {
    if (why && why_size) why[0] = '\0';
    struct stat sb;
    if (stat(path, &sb) != 0) {
        if (errno == ENOENT || errno == ENOTDIR) return KMUX_SO_ABSENT;
        if (why && why_size) snprintf(why, why_size, "%s: cannot stat (%s)", path, strerror(errno));
        return KMUX_SO_BAD;
    }
    if (!S_ISREG(sb.st_mode)) {
        if (why && why_size)
            snprintf(why, why_size, "%s: %s, not opened", path, type_name(sb.st_mode));
        return KMUX_SO_BAD;
    }
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) {
        if (why && why_size) snprintf(why, why_size, "%s: cannot open (%s)", path, strerror(errno));
        return KMUX_SO_BAD;
    }
    int rc = KMUX_SO_OK;
    struct stat fb;
    ElfW(Ehdr) eh;
    uint64_t size = 0;
    if (fstat(fd, &fb) != 0 || !S_ISREG(fb.st_mode)) { /* replaced between stat and open */
        rc = bad(why, why_size, path, "not a regular file, not opened");
        goto out;
    }
    size = (uint64_t)fb.st_size;
    if (size < sizeof eh || read_at(fd, &eh, sizeof eh, 0) != 0) {
        rc = bad(why, why_size, path, "truncated: %llu bytes, an ELF header needs %zu",
                 (unsigned long long)size, sizeof eh);
        goto out;
    }
    if (memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0) {
        rc = bad(why, why_size, path, "not an ELF file");
        goto out;
    }
    if (eh.e_ident[EI_CLASS] != (sizeof(void *) == 8 ? ELFCLASS64 : ELFCLASS32) ||
        eh.e_phentsize != sizeof(ElfW(Phdr))) {
        rc = bad(why, why_size, path, "an ELF file of another class (%d-bit)",
                 eh.e_ident[EI_CLASS] == ELFCLASS64 ? 64 : 32);
        goto out;
    }
    if (eh.e_type != ET_DYN) {
        rc = bad(why, why_size, path, "not an ELF shared object (e_type %u)", (unsigned)eh.e_type);
        goto out;
    }
    uint64_t ph_end = (uint64_t)eh.e_phoff + (uint64_t)eh.e_phnum * sizeof(ElfW(Phdr));
    if (eh.e_phnum == 0 || ph_end > size) {
        rc = bad(why, why_size, path, "truncated: %llu bytes, its program headers need %llu",
                 (unsigned long long)size, (unsigned long long)ph_end);
        goto out;
    }
    uint64_t need = ph_end;
    for (unsigned i = 0; i < eh.e_phnum; i++) {
        ElfW(Phdr) ph;
        if (read_at(fd, &ph, sizeof ph, (uint64_t)eh.e_phoff + (uint64_t)i * sizeof ph) != 0) {
            rc = bad(why, why_size, path, "unreadable program header %u", i);
            goto out;
        }
        if (ph.p_type != PT_LOAD && ph.p_type != PT_DYNAMIC) continue;
        uint64_t end = (uint64_t)ph.p_offset + (uint64_t)ph.p_filesz;
        if (end < ph.p_offset) end = UINT64_MAX; /* wrapped */
        if (end > need) need = end;
    }
    if (need > size)
        rc = bad(why, why_size, path, "truncated: %llu bytes, its segments need %llu",
                 (unsigned long long)size, (unsigned long long)need);
out:
    close(fd);
    return rc;
}

int kmux_path_join(char *buf, size_t size, const char *dir, const char *file) {
    int n =
        dir && dir[0] ? snprintf(buf, size, "%s/%s", dir, file) : snprintf(buf, size, "%s", file);
    if (n < 0 || (size_t)n >= size) {
        if (size) buf[0] = '\0';
        return -1;
    }
    return 0;
}
