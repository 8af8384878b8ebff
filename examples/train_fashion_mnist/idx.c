/* idx.c - IDX files through zlib's gz* interface (which also reads uncompressed files). */
#include "idx.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#define HOW_TO_FIX                                                                                 \
    "(install or reinstall Debian's package dataset-fashion-mnist: apt-get install --reinstall "   \
    "dataset-fashion-mnist, or give another folder with --data=DIR)"

/* zlib's message without the "<path>: " that gzerror puts in front of it. */
static const char *zmsg(gzFile f, const char *path) {
    int code;
    const char *msg = gzerror(f, &code);
    size_t n = strlen(path);
    if (code == Z_ERRNO) return strerror(errno);
    return strncmp(msg, path, n) == 0 && msg[n] == ':' ? msg + n + 1 + (msg[n + 1] == ' ') : msg;
}

/* Reads exactly len bytes; on failure writes why (truncated or corrupt) into err. */
static int read_exact(gzFile f, const char *path, void *buf, size_t len, const char *what,
                      char *err, size_t errlen) {
    size_t got = 0;
    while (got < len) {
        unsigned chunk = len - got > (1u << 30) ? 1u << 30 : (unsigned)(len - got);
        int r = gzread(f, (char *)buf + got, chunk);
        if (r < 0) {
            snprintf(err, errlen, "%s: corrupt file (zlib: %s, while reading the %s) %s", path,
                     zmsg(f, path), what, HOW_TO_FIX);
            return -1;
        }
        if (r == 0) {
            snprintf(err, errlen,
                     "%s: truncated: the %s is %zu bytes, the file ends after %zu of them %s", path,
                     what, len, got, HOW_TO_FIX);
            return -1;
        }
        got += (size_t)r;
    }
    return 0;
}

static uint32_t be32(const unsigned char *p) {
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

/* Loads one IDX file of unsigned bytes with ndim dimensions; dims[i] > 0 are required sizes.
 * Fills dims with the sizes found and *data with the payload. */
static int load_idx(const char *path, int ndim, int64_t *dims, uint8_t **data, char *err,
                    size_t errlen) {
    errno = 0;
    gzFile f = gzopen(path, "rb");
    if (!f) {
        snprintf(err, errlen, "%s: cannot open: %s %s", path, errno ? strerror(errno) : "no memory",
                 HOW_TO_FIX);
        return -1;
    }
    unsigned char head[4 + 4 * 3];
    int rc = -1;
    *data = NULL;
    if (read_exact(f, path, head, 4 + 4 * (size_t)ndim, "header", err, errlen)) goto done;
    uint32_t magic = be32(head), want = 0x0800u | (uint32_t)ndim;
    if (magic != want) {
        snprintf(err, errlen,
                 "%s: not an IDX file of %d-dimensional unsigned bytes: magic 0x%08x, "
                 "expected 0x%08x %s",
                 path, ndim, magic, want, HOW_TO_FIX);
        goto done;
    }
    size_t total = 1;
    for (int i = 0; i < ndim; i++) {
        int64_t v = be32(head + 4 + 4 * i);
        if (dims[i] > 0 && v != dims[i]) {
            snprintf(err, errlen, "%s: dimension %d is %lld, expected %lld %s", path, i,
                     (long long)v, (long long)dims[i], HOW_TO_FIX);
            goto done;
        }
        dims[i] = v;
        total *= (size_t)v;
    }
    *data = malloc(total ? total : 1);
    if (!*data) {
        snprintf(err, errlen, "%s: out of memory for %zu bytes", path, total);
        goto done;
    }
    if (read_exact(f, path, *data, total, "data", err, errlen)) goto done;
    /* Read past the end so that zlib checks the gzip trailer (CRC-32 and length). */
    char extra;
    int r = gzread(f, &extra, 1);
    if (r != 0) {
        snprintf(err, errlen, "%s: corrupt file (%s) %s", path,
                 r > 0 ? "data after the last item" : zmsg(f, path), HOW_TO_FIX);
        goto done;
    }
    rc = 0;
done:
    gzclose(f);
    if (rc) {
        free(*data);
        *data = NULL;
    }
    return rc;
}

int fmnist_load(const char *dir, const char *prefix, int64_t expect_n, fmnist_split *out, char *err,
                size_t errlen) {
    char path[4096];
    memset(out, 0, sizeof *out);
    int64_t idims[3] = {expect_n, 28, 28}, ldims[1] = {expect_n};
    snprintf(path, sizeof path, "%s/%s-images-idx3-ubyte.gz", dir, prefix);
    if (load_idx(path, 3, idims, &out->images, err, errlen)) return -1;
    snprintf(path, sizeof path, "%s/%s-labels-idx1-ubyte.gz", dir, prefix);
    if (load_idx(path, 1, ldims, &out->labels, err, errlen)) {
        fmnist_free(out);
        return -1;
    }
    out->n = idims[0], out->rows = idims[1], out->cols = idims[2];
    for (int64_t i = 0; i < out->n; i++)
        if (out->labels[i] > 9) {
            snprintf(err, errlen, "%s: corrupt file: label %lld is %u, expected 0..9 %s", path,
                     (long long)i, out->labels[i], HOW_TO_FIX);
            fmnist_free(out);
            return -1;
        }
    return 0;
}

void fmnist_free(fmnist_split *s) {
    free(s->images);
    free(s->labels);
    memset(s, 0, sizeof *s);
}
