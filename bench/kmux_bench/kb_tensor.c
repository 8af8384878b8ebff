/* kb_tensor.c - tensor indexing and gathers for sampled verification. */
#include "kb_tensor.h"

#include <string.h>

int64_t kb_off4(kmux_layout l, const int64_t d[4], int64_t n, int64_t c, int64_t h, int64_t w) {
    if (l == KMUX_NHWC) return ((n * d[2] + h) * d[3] + w) * d[1] + c;
    return ((n * d[1] + c) * d[2] + h) * d[3] + w;
}

void kb_gather4(const void *src, size_t esize, kmux_layout l, const int64_t d[4], const int64_t *ni,
                int64_t nn, const int64_t *ci, int64_t nc, void *dst) {
    const char *s = src;
    char *o = dst;
    const int64_t od[4] = {nn, nc, d[2], d[3]};
    for (int64_t a = 0; a < nn; ++a)
        for (int64_t b = 0; b < nc; ++b)
            for (int64_t h = 0; h < d[2]; ++h)
                for (int64_t w = 0; w < d[3]; ++w)
                    memcpy(o + (size_t)kb_off4(l, od, a, b, h, w) * esize,
                           s + (size_t)kb_off4(l, d, ni[a], ci[b], h, w) * esize, esize);
}

int64_t kb_mat_off(kmux_order order, kmux_transpose trans, int64_t ld, int64_t i, int64_t j) {
    int64_t r = trans == KMUX_TRANS ? j : i;
    int64_t c = trans == KMUX_TRANS ? i : j;
    return order == KMUX_ROW_MAJOR ? r * ld + c : c * ld + r;
}

void kb_gather_rows(const void *src, size_t esize, kmux_order order, kmux_transpose trans,
                    int64_t ld, const int64_t *ri, int64_t nr, int64_t cols, void *dst) {
    const char *s = src;
    char *o = dst;
    for (int64_t a = 0; a < nr; ++a)
        for (int64_t j = 0; j < cols; ++j)
            memcpy(o + (size_t)(a * cols + j) * esize,
                   s + (size_t)kb_mat_off(order, trans, ld, ri[a], j) * esize, esize);
}

void kb_gather_cols(const void *src, size_t esize, kmux_order order, kmux_transpose trans,
                    int64_t ld, int64_t rows, const int64_t *cj, int64_t nc, void *dst) {
    const char *s = src;
    char *o = dst;
    for (int64_t i = 0; i < rows; ++i)
        for (int64_t b = 0; b < nc; ++b)
            memcpy(o + (size_t)(i * nc + b) * esize,
                   s + (size_t)kb_mat_off(order, trans, ld, i, cj[b]) * esize, esize);
}

int64_t kb_pick_indices(int64_t n, int64_t count, int64_t *out) {
    if (count >= n) {
        for (int64_t i = 0; i < n; ++i)
            out[i] = i;
        return n;
    }
    if (count < 1) count = 1;
    /* edges: up to 4 at each end, the rest evenly spread over the middle */
    int64_t edge = count >= 16 ? 4 : count / 4;
    int64_t k = 0;
    for (int64_t i = 0; i < edge; ++i)
        out[k++] = i;
    int64_t mid = count - 2 * edge;
    int64_t lo = edge, hi = n - edge; /* [lo, hi) */
    for (int64_t i = 0; i < mid; ++i) {
        int64_t v = mid == 1 ? lo + (hi - lo) / 2 : lo + (i * (hi - 1 - lo)) / (mid - 1);
        if (k > 0 && v <= out[k - 1]) v = out[k - 1] + 1;
        out[k++] = v;
    }
    for (int64_t i = edge; i > 0; --i)
        out[k++] = n - i;
    return k;
}
