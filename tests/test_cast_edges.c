/*
 * test_cast_edges.c - kmux_cast from f32 (and f64) to every narrow format on the values where
 * rounding and overflow are decided: exact ties, largest finite and just above, the rounding
 * midpoint above the largest finite value, the smallest subnormal and half of it, NaN payloads,
 * signed zeros and infinities, with and without saturate.
 *
 * Expected bit patterns are written by hand from the standards, never from an implementation:
 *   IEEE 754-2019 §3.6 Table 3.5 (binary16 parameters), §4.3.1 roundTiesToEven, §6.2.3 (NaN
 *   propagation: a quiet NaN result; a payload that does not fit may not turn it into Inf),
 *   §7.4 overflow (decided after rounding as if the exponent range were unbounded: the threshold
 *   is the midpoint above the largest finite value, ties going to the even neighbour).
 *   bfloat16: the upper half of binary32, same rules.
 *   OCP OFP8 v1.0 §5.1 Table 1 (E4M3: bias 7, max S.1111.110 = 448, NaN S.1111.111, no Inf;
 *   E5M2: bias 15, max S.11110.11 = 57344, Inf S.11111.00) and §5.2 / §5.2.1 (conversion:
 *   roundTiesToEven; saturating mode clamps to the largest finite value, Inf included;
 *   non-saturating mode gives Inf for E5M2 and NaN for E4M3).
 *   FNUZ (AMD gfx942): E4M3FNUZ bias 8, max 0.1111.111 = 240; E5M2FNUZ bias 16, max 0.11111.11 =
 *   57344; 0x80 is the only NaN, no Inf, no -0 (so -0 and negative underflow give 0x00).
 * Every table runs on every available device (kmux_cast, device memory through kmux_memcpy) and
 * on the CPU kernels directly, from f32 and from f64 sources (the same exact values).
 */
#include <math.h>
#include <string.h>

#include "kmux_cpu_kernels.h"
#include "test_util.h"

#define NANP -1 /* expected: a NaN with the sign bit clear (payload free) */
#define NANN -2 /* expected: a NaN with the sign bit set */

typedef struct edge {
    uint32_t in;            /* f32 bit pattern */
    int32_t want, want_sat; /* code without / with saturate, or NANP / NANN */
    const char *what;
} edge;

/* ---- IEEE binary16: max 65504 = 0x7bff, Inf 0x7c00, min subnormal 2^-24 = 0x0001 ---- */
static const edge F16_EDGES[] = {
    {0x3f800000, 0x3c00, 0x3c00, "1"},
    {0x3f801000, 0x3c00, 0x3c00, "1+2^-11: tie, even neighbour 1.0 (§4.3.1)"},
    {0x3f803000, 0x3c02, 0x3c02, "1+3*2^-11: tie, even neighbour 0x3c02"},
    {0x3f801001, 0x3c01, 0x3c01, "just above the tie"},
    {0xbf801000, 0xbc00, 0xbc00, "-(1+2^-11): tie, sign kept"},
    {0x477fe000, 0x7bff, 0x7bff, "65504, largest finite"},
    {0x477fefff, 0x7bff, 0x7bff, "just below the midpoint 65520"},
    {0x477ff000, 0x7c00, 0x7bff,
     "65520 = midpoint above max: tie to even = 2^16 -> overflow (§7.4)"},
    {0xc77ff000, 0xfc00, 0xfbff, "-65520"},
    {0x47800000, 0x7c00, 0x7bff, "65536"},
    {0x7f7fffff, 0x7c00, 0x7bff, "FLT_MAX"},
    {0x7f800000, 0x7c00, 0x7bff, "+Inf (saturate: largest finite, as __NV_SATFINITE)"},
    {0xff800000, 0xfc00, 0xfbff, "-Inf"},
    {0x33800000, 0x0001, 0x0001, "2^-24, smallest subnormal"},
    {0x33000000, 0x0000, 0x0000, "2^-25, half of it: tie to even 0"},
    {0xb3000000, 0x8000, 0x8000, "-2^-25: -0"},
    {0x33000001, 0x0001, 0x0001, "just above 2^-25"},
    {0x33c00000, 0x0002, 0x0002, "3*2^-25: tie between 1 and 2 units -> 2"},
    {0x38800000, 0x0400, 0x0400, "2^-14, smallest normal"},
    {0x387fe000, 0x0400, 0x0400, "1023.5 units of 2^-24: tie -> 1024 = smallest normal"},
    {0x387fa000, 0x03fe, 0x03fe, "1022.5 units: tie -> 1022"},
    {0x00000000, 0x0000, 0x0000, "+0"},
    {0x80000000, 0x8000, 0x8000, "-0"},
    {0x00000001, 0x0000, 0x0000, "f32 subnormal -> +0"},
    {0x80000001, 0x8000, 0x8000, "negative f32 subnormal -> -0"},
    {0x7fc00000, NANP, NANP, "quiet NaN"},
    {0xffc00000, NANN, NANN, "negative quiet NaN"},
    {0x7f800001, NANP, NANP, "signalling NaN whose payload truncates to 0 (must not become Inf)"},
    {0xff800001, NANN, NANN, "negative signalling NaN, low payload"},
    {0x7fa00000, NANP, NANP, "signalling NaN, high payload"},
};

/* ---- bfloat16: max 0x7f7f, Inf 0x7f80, min subnormal 2^-133 = 0x0001 ---- */
static const edge BF16_EDGES[] = {
    {0x3f800000, 0x3f80, 0x3f80, "1"},
    {0x3f808000, 0x3f80, 0x3f80, "1+2^-8: tie -> 1.0"},
    {0x3f818000, 0x3f82, 0x3f82, "1+3*2^-8: tie -> 0x3f82"},
    {0x3f808001, 0x3f81, 0x3f81, "just above the tie"},
    {0xbf808000, 0xbf80, 0xbf80, "negative tie"},
    {0x7f7f0000, 0x7f7f, 0x7f7f, "largest finite"},
    {0x7f7f7fff, 0x7f7f, 0x7f7f, "just below the midpoint"},
    {0x7f7f8000, 0x7f80, 0x7f7f, "midpoint above max: tie to even -> overflow"},
    {0xff7f8000, 0xff80, 0xff7f, "negative midpoint"},
    {0x7f7fffff, 0x7f80, 0x7f7f, "FLT_MAX"},
    {0x7f800000, 0x7f80, 0x7f7f, "+Inf"},
    {0xff800000, 0xff80, 0xff7f, "-Inf"},
    {0x00010000, 0x0001, 0x0001, "2^-133, smallest subnormal"},
    {0x00008000, 0x0000, 0x0000, "2^-134: tie -> 0"},
    {0x80008000, 0x8000, 0x8000, "-2^-134 -> -0"},
    {0x00008001, 0x0001, 0x0001, "just above 2^-134"},
    {0x00018000, 0x0002, 0x0002, "1.5 units: tie -> 2"},
    {0x00028000, 0x0002, 0x0002, "2.5 units: tie -> 2"},
    {0x00800000, 0x0080, 0x0080, "2^-126, smallest normal"},
    {0x007f8000, 0x0080, 0x0080, "127.5 units: tie -> 128 = smallest normal"},
    {0x00000000, 0x0000, 0x0000, "+0"},
    {0x80000000, 0x8000, 0x8000, "-0"},
    {0x7fc00000, NANP, NANP, "quiet NaN"},
    {0xffffffff, NANN, NANN, "negative NaN, all payload bits"},
    {0x7f800001, NANP, NANP, "NaN whose payload truncates to 0 (would read as Inf 0x7f80)"},
    {0xff800001, NANN, NANN, "negative NaN, low payload"},
};

/* ---- OCP E4M3: max 448 = 0x7e, NaN 0x7f/0xff, no Inf, min subnormal 2^-9 ---- */
static const edge E4M3_EDGES[] = {
    {0x3f800000, 0x38, 0x38, "1"},
    {0x3f880000, 0x38, 0x38, "1+2^-4: tie -> 1.0"},
    {0x3f980000, 0x3a, 0x3a, "1+3*2^-4: tie -> 1.25"},
    {0x3f880001, 0x39, 0x39, "just above the tie"},
    {0x43e00000, 0x7e, 0x7e, "448, largest finite"},
    {0x43e80000, 0x7e, 0x7e, "464 = midpoint above max: tie to even mantissa 110 -> 448"},
    {0x43e80001, 0x7f, 0x7e, "just above 464: overflow -> NaN (§5.2.1) / saturate 448"},
    {0xc3e80001, 0xff, 0xfe, "negative"},
    {0x43f00000, 0x7f, 0x7e, "480"},
    {0x7f800000, 0x7f, 0x7e, "+Inf -> NaN / saturate 448 (§5.2)"},
    {0xff800000, 0xff, 0xfe, "-Inf"},
    {0x3b000000, 0x01, 0x01, "2^-9, smallest subnormal"},
    {0x3a800000, 0x00, 0x00, "2^-10: tie -> 0"},
    {0xba800000, 0x80, 0x80, "-2^-10 -> -0"},
    {0x3a800001, 0x01, 0x01, "just above 2^-10"},
    {0x3b400000, 0x02, 0x02, "1.5 units: tie -> 2"},
    {0x3c800000, 0x08, 0x08, "2^-6, smallest normal"},
    {0x3c700000, 0x08, 0x08, "7.5 units: tie -> 8"},
    {0x3c500000, 0x06, 0x06, "6.5 units: tie -> 6"},
    {0x00000000, 0x00, 0x00, "+0"},
    {0x80000000, 0x80, 0x80, "-0"},
    {0x7fc00000, 0x7f, 0x7f, "NaN -> S.1111.111"},
    {0xffc00000, 0xff, 0xff, "negative NaN"},
    {0x7f800001, 0x7f, 0x7f, "signalling NaN, low payload"},
};

/* ---- OCP E5M2: max 57344 = 0x7b, Inf 0x7c, NaN 0x7d-0x7f, min subnormal 2^-16 ---- */
static const edge E5M2_EDGES[] = {
    {0x3f800000, 0x3c, 0x3c, "1"},
    {0x3f900000, 0x3c, 0x3c, "1.125: tie -> 1.0"},
    {0x3fb00000, 0x3e, 0x3e, "1.375: tie -> 1.5"},
    {0x3f900001, 0x3d, 0x3d, "just above the tie"},
    {0x47600000, 0x7b, 0x7b, "57344, largest finite"},
    {0x476fffff, 0x7b, 0x7b, "just below the midpoint 61440"},
    {0x47700000, 0x7c, 0x7b, "61440 = midpoint: tie to even = 2^16 -> Inf / saturate"},
    {0xc7700000, 0xfc, 0xfb, "-61440"},
    {0x47800000, 0x7c, 0x7b, "65536"},
    {0x7f800000, 0x7c, 0x7b, "+Inf"},
    {0xff800000, 0xfc, 0xfb, "-Inf"},
    {0x37800000, 0x01, 0x01, "2^-16, smallest subnormal"},
    {0x37000000, 0x00, 0x00, "2^-17: tie -> 0"},
    {0xb7000000, 0x80, 0x80, "-2^-17 -> -0"},
    {0x37000001, 0x01, 0x01, "just above 2^-17"},
    {0x37c00000, 0x02, 0x02, "1.5 units: tie -> 2"},
    {0x38800000, 0x04, 0x04, "2^-14, smallest normal"},
    {0x38600000, 0x04, 0x04, "3.5 units: tie -> 4"},
    {0x00000000, 0x00, 0x00, "+0"},
    {0x80000000, 0x80, 0x80, "-0"},
    {0x7fc00000, NANP, NANP, "quiet NaN"},
    {0xffc00000, NANN, NANN, "negative NaN"},
    {0x7f800001, NANP, NANP, "NaN whose payload truncates to 0 (would read as Inf 0x7c)"},
};

/* ---- E4M3FNUZ: max 240 = 0x7f, NaN 0x80 only, no Inf, no -0, min subnormal 2^-10 ---- */
static const edge E4M3FNUZ_EDGES[] = {
    {0x3f800000, 0x40, 0x40, "1"},
    {0x43700000, 0x7f, 0x7f, "240, largest finite"},
    {0x4377ffff, 0x7f, 0x7f, "just below the midpoint 248"},
    {0x43780000, 0x80, 0x7f, "248 = midpoint: tie to even = 256 -> NaN / saturate 240"},
    {0xc3780000, 0x80, 0xff, "-248: the one NaN / saturate -240"},
    {0x7f800000, 0x80, 0x7f, "+Inf"},
    {0xff800000, 0x80, 0xff, "-Inf"},
    {0x3a800000, 0x01, 0x01, "2^-10, smallest subnormal"},
    {0x3a000000, 0x00, 0x00, "2^-11: tie -> 0"},
    {0xba000000, 0x00, 0x00, "-2^-11 -> +0 (no -0; 0x80 would be NaN)"},
    {0x3a000001, 0x01, 0x01, "just above 2^-11"},
    {0xba000001, 0x81, 0x81, "just below -2^-11"},
    {0x3ac00000, 0x02, 0x02, "1.5 units: tie -> 2"},
    {0x3c000000, 0x08, 0x08, "2^-7, smallest normal"},
    {0x3bf00000, 0x08, 0x08, "7.5 units: tie -> 8"},
    {0x00000000, 0x00, 0x00, "+0"},
    {0x80000000, 0x00, 0x00, "-0 -> +0"},
    {0x7fc00000, 0x80, 0x80, "NaN"},
    {0xffc00000, 0x80, 0x80, "negative NaN -> the one NaN"},
    {0x7f800001, 0x80, 0x80, "signalling NaN"},
};

/* ---- E5M2FNUZ: max 57344 = 0x7f, NaN 0x80 only, min subnormal 2^-17 ---- */
static const edge E5M2FNUZ_EDGES[] = {
    {0x3f800000, 0x40, 0x40, "1"},
    {0x47600000, 0x7f, 0x7f, "57344, largest finite"},
    {0x476fffff, 0x7f, 0x7f, "just below the midpoint"},
    {0x47700000, 0x80, 0x7f, "61440 = midpoint: overflow -> NaN / saturate"},
    {0xc7700000, 0x80, 0xff, "-61440"},
    {0x7f800000, 0x80, 0x7f, "+Inf"},
    {0xff800000, 0x80, 0xff, "-Inf"},
    {0x37000000, 0x01, 0x01, "2^-17, smallest subnormal"},
    {0x36800000, 0x00, 0x00, "2^-18: tie -> 0"},
    {0xb6800000, 0x00, 0x00, "-2^-18 -> +0"},
    {0x37400000, 0x02, 0x02, "1.5 units: tie -> 2"},
    {0x38000000, 0x04, 0x04, "2^-15, smallest normal"},
    {0x80000000, 0x00, 0x00, "-0 -> +0"},
    {0x7fc00000, 0x80, 0x80, "NaN"},
    {0xff800001, 0x80, 0x80, "negative signalling NaN"},
};

/* ---- helpers ---- */

/* kmux_cast on device id ("kernels": kmux_cpu_cast directly) with host buffers. */
static void run_cast(kmux_context *ctx, const char *id, int64_t n, const void *src, kmux_dtype st,
                     void *dst, kmux_dtype dt, int saturate, const float *scale) {
    if (strcmp(id, "kernels") == 0) {
        cr_assert_eq(kmux_cpu_cast(n, src, st, dst, dt, saturate, scale, NULL, 2), KMUX_OK);
        return;
    }
    kmux_device *dev = tu_device(ctx, id);
    cr_assert(dev);
    tu_cast_on_device(dev, n, src, st, dst, dt, saturate, scale, NULL);
}

/* Checks one table on every target, from f32 and from f64, both saturate modes. */
static void check_table(const edge *e, size_t count, kmux_dtype t) {
    kmux_context *ctx = tu_context();
    const char **ids = tu_device_ids(ctx);
    float in32[64];
    double in64[64];
    uint32_t out[64];
    cr_assert(count <= 64);
    for (size_t i = 0; i < count; i++) {
        memcpy(&in32[i], &e[i].in, 4);
        in64[i] = (double)in32[i];
    }
    for (int d = -1; d == -1 || ids[d]; d++) {
        const char *id = d < 0 ? "kernels" : ids[d];
        for (int from64 = 0; from64 < 2; from64++)
            for (int sat = 0; sat < 2; sat++) {
                unsigned char raw[64 * 2];
                run_cast(ctx, id, (int64_t)count, from64 ? (const void *)in64 : (const void *)in32,
                         from64 ? KMUX_F64 : KMUX_F32, raw, t, sat, NULL);
                for (size_t i = 0; i < count; i++) {
                    out[i] =
                        kmux_dtype_size(t) == 2 ? (uint32_t)((uint16_t *)(void *)raw)[i] : raw[i];
                    int32_t want = sat ? e[i].want_sat : e[i].want;
                    uint32_t signbit = kmux_dtype_size(t) == 2 ? 0x8000u : 0x80u;
                    if (want == NANP || want == NANN)
                        cr_expect(tu_is_nan_code(out[i], t) &&
                                      !!(out[i] & signbit) == (want == NANN),
                                  "%s %s from %s sat=%d: %s (0x%08x) -> 0x%x, want a %sNaN", id,
                                  kmux_dtype_name(t), from64 ? "f64" : "f32", sat, e[i].what,
                                  e[i].in, out[i], want == NANN ? "negative " : "positive ");
                    else
                        cr_expect_eq(out[i], (uint32_t)want,
                                     "%s %s from %s sat=%d: %s (0x%08x) -> 0x%x, want 0x%x", id,
                                     kmux_dtype_name(t), from64 ? "f64" : "f32", sat, e[i].what,
                                     e[i].in, out[i], (unsigned)want);
                }
            }
    }
    TU_OK(kmux_context_destroy(ctx));
}

#define CHECK(tab, t) check_table(tab, sizeof tab / sizeof tab[0], t)

Test(cast_edges, f16) {
    CHECK(F16_EDGES, KMUX_F16);
}
Test(cast_edges, bf16) {
    CHECK(BF16_EDGES, KMUX_BF16);
}
Test(cast_edges, e4m3) {
    CHECK(E4M3_EDGES, KMUX_F8_E4M3);
}
Test(cast_edges, e5m2) {
    CHECK(E5M2_EDGES, KMUX_F8_E5M2);
}
Test(cast_edges, e4m3fnuz) {
    CHECK(E4M3FNUZ_EDGES, KMUX_F8_E4M3_FNUZ);
}
Test(cast_edges, e5m2fnuz) {
    CHECK(E5M2FNUZ_EDGES, KMUX_F8_E5M2_FNUZ);
}

/* f64 sources are rounded ONCE (kmux.h: "Rounding is to nearest, ties to even, once"): each input
 * lies just beside a midpoint of the target, so rounding it to f32 first would land exactly on
 * the midpoint and then tie the other way. */
Test(cast_edges, f64_single_rounding) {
    struct {
        double in;
        kmux_dtype t;
        uint32_t want;
        const char *what;
    } c[] = {
        {1.0 + 0x1p-11 + 0x1p-40, KMUX_F16, 0x3c01, "1+2^-11+2^-40 (f32 first: 0x3c00)"},
        {65520.0 - 0x1p-30, KMUX_F16, 0x7bff, "65520-2^-30 (f32 first: 65520 -> Inf)"},
        {0x1p-25 + 0x1p-60, KMUX_F16, 0x0001, "2^-25+2^-60 (f32 first: 2^-25 -> 0)"},
        {1.0 + 0x1p-8 + 0x1p-40, KMUX_BF16, 0x3f81, "1+2^-8+2^-40 (f32 first: 0x3f80)"},
        {1.0 + 0x1p-4 + 0x1p-30, KMUX_F8_E4M3, 0x39, "1+2^-4+2^-30 (f32 first: 0x38)"},
        {1.125 + 0x1p-30, KMUX_F8_E5M2, 0x3d, "1.125+2^-30 (f32 first: 0x3c)"},
        {248.0 - 0x1p-30, KMUX_F8_E4M3_FNUZ, 0x7f, "248-2^-30 (f32 first: 248 -> NaN)"},
        {-(1.0 + 0x1p-11 + 0x1p-40), KMUX_F16, 0xbc01, "negative"},
    };
    kmux_context *ctx = tu_context();
    const char **ids = tu_device_ids(ctx);
    for (int d = -1; d == -1 || ids[d]; d++) {
        const char *id = d < 0 ? "kernels" : ids[d];
        for (size_t i = 0; i < sizeof c / sizeof c[0]; i++) {
            uint16_t out = 0;
            run_cast(ctx, id, 1, &c[i].in, KMUX_F64, &out, c[i].t, 0, NULL);
            uint32_t got = kmux_dtype_size(c[i].t) == 2 ? out : (uint32_t)(*(uint8_t *)&out);
            cr_expect_eq(got, c[i].want, "%s: %s -> 0x%x, want 0x%x", id, c[i].what, got,
                         c[i].want);
        }
        /* f64 -> f32: 1+2^-24+2^-50 is above the f32 midpoint 1+2^-24 -> 1+2^-23 */
        double x = 1.0 + 0x1p-24 + 0x1p-50;
        float y = 0;
        run_cast(ctx, id, 1, &x, KMUX_F64, &y, KMUX_F32, 0, NULL);
        cr_expect_eq(y, 1.0f + 0x1p-23f, "%s: f64->f32 %a", id, (double)y);
    }
    TU_OK(kmux_context_destroy(ctx));
}

/* With a scale, the EXACT product is rounded once: x = 1+2^-11+2^-23, scale = 1-2^-24; x*scale =
 * 1 + 2^-11 + 2^-24 - 2^-35 - 2^-47 lies above the f16 midpoint 1+2^-11, so the result is 0x3c01;
 * an f32 multiply first would give 1+2^-11 exactly and then tie to 0x3c00. Likewise for bf16
 * (x = 1+2^-8+2^-23) and e4m3 (x = 1+2^-4+2^-23). A power-of-two scale into the f16 subnormals:
 * 3*2^-25 * 0.5 = 0.75 units of 2^-24 -> 0x0001; and overflow after scaling: 65504 * 2 -> Inf. */
Test(cast_edges, scale_rounds_once) {
    struct {
        uint32_t in, scale;
        kmux_dtype t;
        uint32_t want;
    } c[] = {
        {0x3f801001, 0x3f7fffff, KMUX_F16, 0x3c01},   {0x3f808001, 0x3f7fffff, KMUX_BF16, 0x3f81},
        {0x3f880001, 0x3f7fffff, KMUX_F8_E4M3, 0x39}, {0x33c00000, 0x3f000000, KMUX_F16, 0x0001},
        {0x477fe000, 0x40000000, KMUX_F16, 0x7c00}, /* 65504 * 2 -> Inf */
    };
    kmux_context *ctx = tu_context();
    const char **ids = tu_device_ids(ctx);
    for (int d = -1; d == -1 || ids[d]; d++) {
        const char *id = d < 0 ? "kernels" : ids[d];
        for (size_t i = 0; i < sizeof c / sizeof c[0]; i++) {
            float x, s;
            memcpy(&x, &c[i].in, 4);
            memcpy(&s, &c[i].scale, 4);
            /* 17 copies so that vector paths (8 and 16 lanes) and their tails both see it */
            float xs[17];
            uint16_t out[17];
            for (int k = 0; k < 17; k++)
                xs[k] = x;
            run_cast(ctx, id, 17, xs, KMUX_F32, out, c[i].t, 0, &s);
            for (int k = 0; k < 17; k++) {
                uint32_t got = kmux_dtype_size(c[i].t) == 2 ? out[k] : ((uint8_t *)out)[k];
                cr_expect_eq(got, c[i].want, "%s: %s 0x%08x * 0x%08x [%d] -> 0x%x, want 0x%x", id,
                             kmux_dtype_name(c[i].t), c[i].in, c[i].scale, k, got, c[i].want);
            }
        }
    }
    TU_OK(kmux_context_destroy(ctx));
}
