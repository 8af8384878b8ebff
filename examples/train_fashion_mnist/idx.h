/*
 * idx.h - reading the Fashion-MNIST IDX files (gzip-compressed or plain) with zlib.
 *
 * The IDX format (http://yann.lecun.com/exdb/mnist/): a big-endian 32-bit magic 0x000008TD
 * (T = 0x08: unsigned bytes, D = number of dimensions), D big-endian 32-bit sizes, then the
 * bytes. Every check that can fail names the file and says how to get a good copy.
 */
#ifndef FMNIST_IDX_H
#define FMNIST_IDX_H

#include <stddef.h>
#include <stdint.h>

/** Where Debian's dataset-fashion-mnist package puts the files. */
#define FMNIST_DEFAULT_DIR "/usr/share/datasets/fashion-mnist"

/** One split: n images of rows x cols bytes, row-major, and n labels in [0, 10). */
typedef struct fmnist_split {
    int64_t n, rows, cols;
    uint8_t *images; /**< n * rows * cols bytes */
    uint8_t *labels; /**< n bytes */
} fmnist_split;

/** Loads "<dir>/<prefix>-images-idx3-ubyte.gz" and "<dir>/<prefix>-labels-idx1-ubyte.gz"
 *  (prefix "train" or "t10k"), checks magic numbers, sizes (28 x 28, expect_n images and
 *  labels), the gzip CRC and the label range. Returns 0, or -1 with a message in err. */
int fmnist_load(const char *dir, const char *prefix, int64_t expect_n, fmnist_split *out, char *err,
                size_t errlen);

/** Frees what fmnist_load allocated; a zeroed split is a no-op. */
void fmnist_free(fmnist_split *s);

#endif
