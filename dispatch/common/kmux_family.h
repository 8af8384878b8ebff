/*
 * kmux_family.h - what the op families (kmux_eltwise_*, kmux_optimizer_*, kmux_softmax_*,
 * kmux_binary_*, kmux_reduction_*, kmux_pooling_*) share as facts and helpers: the dtypes their
 * tensors may have, element loads and stores in those dtypes, and the grouping of a dense shape
 * against a second one with some axes of size 1 (binary broadcasting, reduced axes). Read by the
 * core's validation, the caps of every backend, the family headers and the kernels; compiles as C,
 * C++ and device code.
 */
#ifndef KMUX_FAMILY_H
#define KMUX_FAMILY_H

#include "kmux.h"
#include "kmux_dtype_codec.h"
#include "kmux_dtype_desc.h"

/** The dtypes of an op family's tensors (bit 1 << kmux_dtype): f32, f16, bf16, computed in f32. */
#define KMUX_FAMILY_DTYPES ((1u << KMUX_F32) | (1u << KMUX_F16) | (1u << KMUX_BF16))

#ifdef __cplusplus
extern "C" {
#endif

/** 1 when a kmux_device_caps `caps` (of kmux_backend.h) as the core sized it has the member
 *  `field`: a plugin writes a family's caps only then (an older core's struct is shorter). */
#define KMUX_CAPS_HAS(caps, field)                                                                 \
    ((caps)->struct_size >= offsetof(kmux_device_caps, field) + sizeof((caps)->field))

/** 1 when t is one of KMUX_FAMILY_DTYPES. */
static inline KMUX_DTYPE_HD int kmux_family_dtype(int t) {
    return t > 0 && t < 32 && ((KMUX_FAMILY_DTYPES >> t) & 1u);
}

/** Element i of a tensor of a family dtype t, as f32 (exact). */
static inline KMUX_DTYPE_HD float kmux_fam_load(const void *p, int t, int64_t i) {
    if (t == KMUX_F32) return ((const float *)p)[i];
    return kmux_decode_f32(((const uint16_t *)p)[i], (kmux_dtype)t);
}

/** Stores v as element i of a tensor of a family dtype t (rounded to nearest even). */
static inline KMUX_DTYPE_HD void kmux_fam_store(void *p, int t, int64_t i, float v) {
    if (t == KMUX_F32)
        ((float *)p)[i] = v;
    else
        ((uint16_t *)p)[i] = (uint16_t)kmux_encode_f32(v, (kmux_dtype)t, 0);
}

/** A dense row-major shape `full` seen against a second shape `part` whose every axis is full's
 *  or 1: the axes merged into groups of consecutive axes that are all kept (present in part) or
 *  all dropped (size 1 in part), axes of size 1 in full left out. A binary op's src1 and a
 *  reduction's dst are the part. n = 0: a single element. */
typedef struct kmux_nd_groups {
    int n;
    int64_t size[KMUX_MAX_NDIMS];
    int kept[KMUX_MAX_NDIMS]; /**< 1: the group's axes are in part; 0: broadcast / reduced */
} kmux_nd_groups;

/** The groups of full (ndims axes) against part (see kmux_nd_groups). */
static inline KMUX_DTYPE_HD kmux_nd_groups kmux_nd_group(int ndims, const int64_t *full,
                                                         const int64_t *part) {
    kmux_nd_groups g;
    g.n = 0;
    /* Every slot set: GCC's TSan build (-O3) cannot prove the unused tail is never read. */
    for (int i = 0; i < KMUX_MAX_NDIMS; i++) {
        g.size[i] = 1;
        g.kept[i] = 0;
    }
    for (int i = 0; i < ndims; i++) {
        if (full[i] == 1) continue;
        const int k = part[i] == full[i];
        if (g.n > 0 && g.kept[g.n - 1] == k) {
            g.size[g.n - 1] *= full[i];
        } else {
            g.size[g.n] = full[i];
            g.kept[g.n++] = k;
        }
    }
    return g;
}

/** Elements of the groups whose kept flag is `kept` (the part's count for kept = 1). */
static inline KMUX_DTYPE_HD int64_t kmux_nd_count(const kmux_nd_groups *g, int kept) {
    int64_t c = 1;
    for (int i = 0; i < g->n; i++)
        if (g->kept[i] == kept) c *= g->size[i];
    return c;
}

/** The offset in the dense part of full's element i. */
static inline KMUX_DTYPE_HD int64_t kmux_nd_part_offset(const kmux_nd_groups *g, int64_t i) {
    int64_t off = 0, stride = 1;
    for (int k = g->n - 1; k >= 0; k--) {
        const int64_t s = g->size[k], idx = i % s;
        i /= s;
        if (g->kept[k]) off += idx * stride, stride *= s;
    }
    return off;
}

/** The offset in full of the element with part index j (over the kept groups) and dropped index
 *  r (over the other groups, row-major among themselves). */
static inline KMUX_DTYPE_HD int64_t kmux_nd_full_offset(const kmux_nd_groups *g, int64_t j,
                                                        int64_t r) {
    int64_t off = 0, stride = 1;
    for (int k = g->n - 1; k >= 0; k--) {
        const int64_t s = g->size[k];
        int64_t *q = g->kept[k] ? &j : &r;
        off += (*q % s) * stride;
        *q /= s;
        stride *= s;
    }
    return off;
}

/** Elements of a shape (the caller has checked that the product fits). */
static inline KMUX_DTYPE_HD int64_t kmux_nd_elements(int ndims, const int64_t *dims) {
    int64_t c = 1;
    for (int i = 0; i < ndims; i++)
        c *= dims[i];
    return c;
}

#ifdef __cplusplus
}
#endif
#endif
