/*
 * kmux_dtype_desc.h - THE table of kmux's element types: every fact about a dtype (size, bit
 * width, exponent and significand widths, bias, special-value rules, flags) lives here once, for
 * the core, every plugin, the CPU and GPU kernels, the tools and the tests.
 *
 * This header compiles as C11, as C++ and as CUDA/HIP device code (and for the host emulation of
 * kernels/gpu/): every function is static inline and marked KMUX_DTYPE_HD, so kernels get
 * constant-folded descriptors when the dtype is a compile-time constant, and no device copy of a
 * table in global memory is needed.
 *
 * Sources of the parameters: IEEE 754-2019 Table 3.5 (binary64, binary32, binary16); bfloat16 is
 * the upper half of binary32; OCP 8-bit Floating Point Specification (OFP8) rev 1.0 (E4M3: bias 7,
 * no Inf, NaN only S.1111.111, max 448; E5M2: bias 15, IEEE-like Inf/NaN, max 57344); the FNUZ
 * formats of AMD gfx942 / MI300 (bias one higher, no Inf, no -0, the single NaN 0x80: E4M3FNUZ max
 * 240, E5M2FNUZ max 57344; arXiv:2206.02915).
 */
#ifndef KMUX_DTYPE_DESC_H
#define KMUX_DTYPE_DESC_H

#include <stddef.h>
#include <stdint.h>

#include "kmux.h"

#if defined(__CUDACC__) || defined(__HIPCC__)
#define KMUX_DTYPE_HD __host__ __device__
#else
#define KMUX_DTYPE_HD
#endif

#ifdef __cplusplus
extern "C" {
#endif

/** How a floating format uses its largest exponent field (and its zero). */
typedef enum kmux_special_rule {
    KMUX_SPECIAL_NONE = 0, /**< integer type */
    KMUX_SPECIAL_IEEE = 1, /**< exponent all ones: Inf (significand 0) or NaN; +0 and -0 */
    KMUX_SPECIAL_E4M3 = 2, /**< OCP E4M3 ("FN"): no Inf, only S.1111.111 is NaN; +0 and -0 */
    KMUX_SPECIAL_FNUZ = 3  /**< AMD FNUZ: no Inf, no -0, the single NaN 0x80 */
} kmux_special_rule;

/* Flags of a dtype. */
#define KMUX_DTYPE_FLOAT 0x01u    /**< floating point */
#define KMUX_DTYPE_INT 0x02u      /**< two's-complement integer */
#define KMUX_DTYPE_FP8 0x04u      /**< one of the four 8-bit float formats */
#define KMUX_DTYPE_FNUZ 0x08u     /**< FNUZ special-value rules */
#define KMUX_DTYPE_NARROW 0x10u   /**< f16, bf16, fp8: stored as a code */
#define KMUX_DTYPE_HAS_INF 0x20u  /**< has +-Inf encodings */
#define KMUX_DTYPE_NEG_ZERO 0x40u /**< has a distinct -0 */

/** One row of the dtype table. Codes are the stored bit patterns (at most 16 bits are needed for
 *  the narrow formats); magnitude codes exclude the sign bit. Fields that do not apply (float
 *  fields of an integer type) are 0. */
typedef struct kmux_dtype_desc {
    kmux_dtype dtype;
    const char *name; /**< "f32", "bf16", "e4m3", "e4m3fnuz", "i8" (kmux_dtype_name) */
    unsigned bytes;   /**< storage size in bytes */
    unsigned bits;    /**< storage width in bits */
    int ebits;        /**< exponent field width */
    int mbits;        /**< trailing significand field width */
    int bias;         /**< exponent bias */
    kmux_special_rule special;
    unsigned flags;    /**< OR of KMUX_DTYPE_* */
    int sign_shift;    /**< bit index of the sign (bits - 1) */
    uint32_t max_code; /**< narrow floats: largest finite magnitude code */
    uint32_t inf_code; /**< narrow floats: magnitude code of Inf, 0 when there is none */
    uint32_t nan_code; /**< narrow floats: full code of the canonical positive quiet NaN */
    double max_finite; /**< largest finite value (integers: largest value) */
    double min_normal; /**< smallest positive normal value (integers: 0) */
    double epsilon;    /**< 2^-mbits: distance from 1 to the next value (integers: 1) */
} kmux_dtype_desc;

/*
 * The table, as an X-macro so that every reader (descriptor lookup, names, tests) expands the same
 * rows. Columns: dtype, name, bytes, ebits, mbits, bias, special, flags, max_code, inf_code,
 * nan_code, max_finite, min_normal.
 */
#define KMUX_DTYPE_TABLE(X)                                                                        \
    X(KMUX_F64, "f64", 8, 11, 52, 1023, KMUX_SPECIAL_IEEE,                                         \
      KMUX_DTYPE_FLOAT | KMUX_DTYPE_HAS_INF | KMUX_DTYPE_NEG_ZERO, 0u, 0u, 0u,                     \
      1.7976931348623157e308, 2.2250738585072014e-308)                                             \
    X(KMUX_F32, "f32", 4, 8, 23, 127, KMUX_SPECIAL_IEEE,                                           \
      KMUX_DTYPE_FLOAT | KMUX_DTYPE_HAS_INF | KMUX_DTYPE_NEG_ZERO, 0u, 0u, 0u,                     \
      3.4028234663852886e38, 1.1754943508222875e-38)                                               \
    X(KMUX_F16, "f16", 2, 5, 10, 15, KMUX_SPECIAL_IEEE,                                            \
      KMUX_DTYPE_FLOAT | KMUX_DTYPE_NARROW | KMUX_DTYPE_HAS_INF | KMUX_DTYPE_NEG_ZERO, 0x7bffu,    \
      0x7c00u, 0x7e00u, 65504.0, 6.103515625e-05)                                                  \
    X(KMUX_BF16, "bf16", 2, 8, 7, 127, KMUX_SPECIAL_IEEE,                                          \
      KMUX_DTYPE_FLOAT | KMUX_DTYPE_NARROW | KMUX_DTYPE_HAS_INF | KMUX_DTYPE_NEG_ZERO, 0x7f7fu,    \
      0x7f80u, 0x7fc0u, 3.3895313892515355e38, 1.1754943508222875e-38)                             \
    X(KMUX_F8_E4M3, "e4m3", 1, 4, 3, 7, KMUX_SPECIAL_E4M3,                                         \
      KMUX_DTYPE_FLOAT | KMUX_DTYPE_NARROW | KMUX_DTYPE_FP8 | KMUX_DTYPE_NEG_ZERO, 0x7eu, 0u,      \
      0x7fu, 448.0, 0.015625)                                                                      \
    X(KMUX_F8_E5M2, "e5m2", 1, 5, 2, 15, KMUX_SPECIAL_IEEE,                                        \
      KMUX_DTYPE_FLOAT | KMUX_DTYPE_NARROW | KMUX_DTYPE_FP8 | KMUX_DTYPE_HAS_INF |                 \
          KMUX_DTYPE_NEG_ZERO,                                                                     \
      0x7bu, 0x7cu, 0x7eu, 57344.0, 6.103515625e-05)                                               \
    X(KMUX_F8_E4M3_FNUZ, "e4m3fnuz", 1, 4, 3, 8, KMUX_SPECIAL_FNUZ,                                \
      KMUX_DTYPE_FLOAT | KMUX_DTYPE_NARROW | KMUX_DTYPE_FP8 | KMUX_DTYPE_FNUZ, 0x7fu, 0u, 0x80u,   \
      240.0, 0.0078125)                                                                            \
    X(KMUX_F8_E5M2_FNUZ, "e5m2fnuz", 1, 5, 2, 16, KMUX_SPECIAL_FNUZ,                               \
      KMUX_DTYPE_FLOAT | KMUX_DTYPE_NARROW | KMUX_DTYPE_FP8 | KMUX_DTYPE_FNUZ, 0x7fu, 0u, 0x80u,   \
      57344.0, 3.0517578125e-05)                                                                   \
    X(KMUX_I8, "i8", 1, 0, 0, 0, KMUX_SPECIAL_NONE, KMUX_DTYPE_INT, 0u, 0u, 0u, 127.0, 0.0)        \
    X(KMUX_I32, "i32", 4, 0, 0, 0, KMUX_SPECIAL_NONE, KMUX_DTYPE_INT, 0u, 0u, 0u, 2147483647.0, 0.0)

/** Descriptor of t; for a value that is not a kmux_dtype, a row with dtype 0, name "?" and
 *  bytes 0 (so callers can test `.bytes == 0`). */
static inline KMUX_DTYPE_HD kmux_dtype_desc kmux_dtype_desc_of(kmux_dtype t) {
#define KMUX_DTYPE_ROW_(id, nm, by, eb, mb, bi, sp, fl, mx, inf, nan, maxf, minn)                  \
    case id: {                                                                                     \
        kmux_dtype_desc d = {                                                                      \
            id,   nm,         by,   8u * by,                                                       \
            eb,   mb,         bi,   sp,                                                            \
            (fl), 8 * by - 1, mx,   inf,                                                           \
            nan,  maxf,       minn, ((fl)&KMUX_DTYPE_INT) ? 1.0 : 1.0 / (double)(1ull << mb)};     \
        return d;                                                                                  \
    }
    switch (t) {
        KMUX_DTYPE_TABLE(KMUX_DTYPE_ROW_)
    default:
        break;
    }
#undef KMUX_DTYPE_ROW_
    {
        kmux_dtype_desc none = {
            (kmux_dtype)0, "?", 0u, 0u, 0, 0, 0, KMUX_SPECIAL_NONE, 0u, 0, 0u, 0u, 0u,
            0.0,           0.0, 0.0};
        return none;
    }
}

/** 1 when t is a kmux_dtype. */
static inline KMUX_DTYPE_HD int kmux_dtype_is_valid(kmux_dtype t) {
    return kmux_dtype_desc_of(t).bytes != 0;
}
/** Size of one element in bytes; 0 for a value that is not a kmux_dtype. */
static inline KMUX_DTYPE_HD size_t kmux_dtype_bytes(kmux_dtype t) {
    return kmux_dtype_desc_of(t).bytes;
}
/** Flag tests: 1 when t has every flag of `flags`. */
static inline KMUX_DTYPE_HD int kmux_dtype_has(kmux_dtype t, unsigned flags) {
    return (kmux_dtype_desc_of(t).flags & flags) == flags && flags != 0 &&
           kmux_dtype_desc_of(t).bytes != 0;
}
static inline KMUX_DTYPE_HD int kmux_dtype_is_fp8(kmux_dtype t) {
    return kmux_dtype_has(t, KMUX_DTYPE_FP8);
}
static inline KMUX_DTYPE_HD int kmux_dtype_is_fnuz(kmux_dtype t) {
    return kmux_dtype_has(t, KMUX_DTYPE_FNUZ);
}
static inline KMUX_DTYPE_HD int kmux_dtype_is_float(kmux_dtype t) {
    return kmux_dtype_has(t, KMUX_DTYPE_FLOAT);
}
static inline KMUX_DTYPE_HD int kmux_dtype_is_int(kmux_dtype t) {
    return kmux_dtype_has(t, KMUX_DTYPE_INT);
}
/** f16, bf16 and the fp8 formats: stored as codes of at most 16 bits. */
static inline KMUX_DTYPE_HD int kmux_dtype_is_narrow(kmux_dtype t) {
    return kmux_dtype_has(t, KMUX_DTYPE_NARROW);
}

#ifdef __cplusplus
}
#endif
#endif /* KMUX_DTYPE_DESC_H */
