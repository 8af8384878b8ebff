/*
 * test_ref_dtype.c - rounding of every dtype by kmux_cast on the reference device, with the
 * expected bit patterns derived by hand from the format definitions:
 *   IEEE 754-2019 3.4 (binary encodings), Table 3.5 (binary16 / binary32 parameters), 4.3.1
 *   (roundTiesToEven), 6.3 (sign of a zero result), 7.4 (overflow: decided on the result rounded
 *   with an unbounded exponent range); bfloat16 = the upper 16 bits of binary32;
 *   OCP 8-bit Floating Point Specification (OFP8) rev 1.0: E4M3 bias 7, max S.1111.110 = 448,
 *   NaN S.1111.111, no Inf; E5M2 bias 15, IEEE-like Inf/NaN, max S.11110.11 = 57344; conversion
 *   with roundTiesToEven, saturating (to max) or not (to NaN / Inf);
 *   FNUZ formats (AMD gfx942, arXiv:2206.02915): bias 8 / 16, 0x80 the only NaN, no Inf, no -0.
 * Inputs are f64 so that the rounding is tested directly from double (no f32 step).
 */
#include <math.h>
#include <string.h>

#include "test_util.h"

TU_REF_SUITE(ref_dtype);

/* Bit pattern of the f64 v converted to t (f32, f16, bf16, fp8) by kmux_cast. */
static uint32_t enc(double v, kmux_dtype t, int saturate) {
    kmux_cast_options o = KMUX_CAST_OPTIONS_INIT;
    o.saturate = saturate;
    unsigned char out[4] = {0xAA, 0xAA, 0xAA, 0xAA};
    TU_OK(kmux_cast(st, 1, &v, KMUX_F64, out, t, &o));
    size_t sz = kmux_dtype_size(t);
    if (sz == 1) return out[0];
    if (sz == 2) {
        uint16_t h;
        memcpy(&h, out, 2);
        return h;
    }
    uint32_t w;
    memcpy(&w, out, 4);
    return w;
}

/* Value of the bit pattern `bits` of t, decoded by kmux_cast to f64. */
static double dec(uint32_t bits, kmux_dtype t) {
    unsigned char in[4];
    size_t sz = kmux_dtype_size(t);
    if (sz == 1) in[0] = (unsigned char)bits;
    if (sz == 2) {
        uint16_t h = (uint16_t)bits;
        memcpy(in, &h, 2);
    }
    if (sz == 4) memcpy(in, &bits, 4);
    double v = 0;
    TU_OK(kmux_cast(st, 1, in, t, &v, KMUX_F64, NULL));
    return v;
}

typedef struct enc_case {
    double v;
    int saturate;
    uint32_t want;
    const char *why;
} enc_case;

static void check_cases(kmux_dtype t, const enc_case *c, size_t n) {
    for (size_t i = 0; i < n; i++) {
        uint32_t got = enc(c[i].v, t, c[i].saturate);
        cr_expect_eq(got, c[i].want, "%s: %a (saturate %d) -> 0x%x, want 0x%x (%s)",
                     kmux_dtype_name(t), c[i].v, c[i].saturate, (unsigned)got, (unsigned)c[i].want,
                     c[i].why);
    }
}

#define N_CASES(a) (sizeof(a) / sizeof((a)[0]))

Test(ref_dtype, f16_rounding) {
    /* binary16: p = 11 (10 trailing bits), bias 15, max (2 - 2^-10) * 2^15 = 65504 = 0x7BFF. */
    const enc_case c[] = {
        {1.0, 0, 0x3C00, "1.0"},
        {1.0 + 0x1p-11, 0, 0x3C00, "tie between 0x3C00 and 0x3C01: even"},
        {1.0 + 3 * 0x1p-11, 0, 0x3C02, "tie between 0x3C01 and 0x3C02: even"},
        {-(1.0 + 0x1p-11), 0, 0xBC00, "negative tie"},
        {1.0 + 0x1p-11 + 0x1p-40, 0, 0x3C01, "just above the tie (wrong if rounded via f32)"},
        {65504.0, 0, 0x7BFF, "largest finite"},
        {65519.0, 0, 0x7BFF, "below the midpoint 65520 stays finite"},
        {65520.0, 0, 0x7C00, "midpoint rounds to even 2^16: overflow -> +Inf"},
        {65520.0, 1, 0x7BFF, "overflow saturated"},
        {-65520.0, 0, 0xFC00, "negative overflow -> -Inf"},
        {-65520.0, 1, 0xFBFF, "negative overflow saturated"},
        {0x1p-14, 0, 0x0400, "smallest normal"},
        {1023 * 0x1p-24, 0, 0x03FF, "largest subnormal"},
        {0x1p-24, 0, 0x0001, "smallest subnormal"},
        {0x1p-25, 0, 0x0000, "half the smallest subnormal: tie to even 0"},
        {-0x1p-25, 0, 0x8000, "negative half: -0"},
        {0x1p-25 + 0x1p-40, 0, 0x0001, "just above half"},
        {3 * 0x1p-25, 0, 0x0002, "tie between 0x0001 and 0x0002"},
        {0.0, 0, 0x0000, "+0"},
        {-0.0, 0, 0x8000, "-0"},
        {INFINITY, 0, 0x7C00, "+Inf"},
        {-INFINITY, 0, 0xFC00, "-Inf"},
        {INFINITY, 1, 0x7BFF, "+Inf saturated"},
        {-INFINITY, 1, 0xFBFF, "-Inf saturated"},
    };
    check_cases(KMUX_F16, c, N_CASES(c));
    uint32_t nan = enc(NAN, KMUX_F16, 0);
    cr_expect((nan & 0x7C00) == 0x7C00 && (nan & 0x03FF) != 0, "NaN -> 0x%x", (unsigned)nan);
    nan = enc(NAN, KMUX_F16, 1);
    cr_expect((nan & 0x7C00) == 0x7C00 && (nan & 0x03FF) != 0, "NaN saturated -> 0x%x",
              (unsigned)nan);
}

Test(ref_dtype, bf16_rounding) {
    /* bfloat16: p = 8 (7 trailing bits), bias 127, max (2 - 2^-7) * 2^127 = 0x7F7F. */
    const enc_case c[] = {
        {1.0, 0, 0x3F80, "1.0"},
        {1.0 + 0x1p-8, 0, 0x3F80, "tie: even"},
        {1.0 + 3 * 0x1p-8, 0, 0x3F82, "tie: even (up)"},
        {1.0 + 0x1p-8 + 0x1p-40, 0, 0x3F81, "just above the tie (wrong if rounded via f32)"},
        {0x1.fep127, 0, 0x7F7F, "largest finite"},
        {0x1.fefffp127, 0, 0x7F7F, "just below the midpoint"},
        {0x1.ffp127, 0, 0x7F80, "midpoint rounds to even 2^128: overflow -> +Inf"},
        {0x1.ffp127, 1, 0x7F7F, "overflow saturated"},
        {-0x1.ffp127, 0, 0xFF80, "negative overflow"},
        {0x1p-133, 0, 0x0001, "smallest subnormal"},
        {0x1p-134, 0, 0x0000, "half of it: tie to even 0"},
        {-0x1p-134, 0, 0x8000, "-0"},
        {3 * 0x1p-134, 0, 0x0002, "tie between 1 and 2 quanta"},
        {-0.0, 0, 0x8000, "-0"},
        {INFINITY, 0, 0x7F80, "+Inf"},
        {-INFINITY, 1, 0xFF7F, "-Inf saturated"},
    };
    check_cases(KMUX_BF16, c, N_CASES(c));
    uint32_t nan = enc(-NAN, KMUX_BF16, 0);
    cr_expect((nan & 0x7F80) == 0x7F80 && (nan & 0x7F) != 0, "NaN -> 0x%x", (unsigned)nan);
}

Test(ref_dtype, f32_rounding) {
    /* binary32: p = 24, bias 127, max (2 - 2^-23) * 2^127 = 0x7F7FFFFF. */
    const enc_case c[] = {
        {1.0 + 0x1p-24, 0, 0x3F800000, "tie: even"},
        {1.0 + 3 * 0x1p-24, 0, 0x3F800002, "tie: even (up)"},
        {0x1.fffffep127, 0, 0x7F7FFFFF, "largest finite"},
        {0x1.ffffffp127, 0, 0x7F800000, "midpoint: overflow -> +Inf"},
        {0x1.ffffffp127, 1, 0x7F7FFFFF, "overflow saturated"},
        {0x1p-149, 0, 0x00000001, "smallest subnormal"},
        {0x1p-150, 0, 0x00000000, "half of it: 0"},
        {3 * 0x1p-150, 0, 0x00000002, "tie between 1 and 2 quanta"},
        {-0.0, 0, 0x80000000, "-0"},
        {-INFINITY, 0, 0xFF800000, "-Inf"},
    };
    check_cases(KMUX_F32, c, N_CASES(c));
    uint32_t nan = enc(NAN, KMUX_F32, 0);
    cr_expect((nan & 0x7F800000) == 0x7F800000 && (nan & 0x7FFFFF) != 0, "NaN -> 0x%x",
              (unsigned)nan);
}

Test(ref_dtype, e4m3_rounding) {
    /* OCP E4M3: bias 7, 3 trailing bits; 1.0 = 0.0111.000; max 0.1111.110 = 1.75 * 2^8 = 448.
     * The value after 448 in the binade would be 480 (S.1111.111 is NaN): the midpoint 464 is a
     * tie that rounds to 448 (even trailing bits 110), so only values > 464 overflow. */
    const enc_case c[] = {
        {1.0, 0, 0x38, "1.0"},
        {1.0 + 0x1p-4, 0, 0x38, "tie: even"},
        {1.0 + 3 * 0x1p-4, 0, 0x3A, "tie: even (up)"},
        {448.0, 0, 0x7E, "largest finite"},
        {464.0, 0, 0x7E, "midpoint 448/480 rounds to even 448: no overflow"},
        {465.0, 0, 0x7F, "overflow -> NaN"},
        {465.0, 1, 0x7E, "overflow saturated"},
        {-465.0, 0, 0xFF, "negative overflow -> NaN"},
        {-465.0, 1, 0xFE, "negative overflow saturated"},
        {0x1p-6, 0, 0x08, "smallest normal"},
        {0x1p-9, 0, 0x01, "smallest subnormal"},
        {0x1p-10, 0, 0x00, "half of it: 0"},
        {-0x1p-10, 0, 0x80, "-0 (OCP formats have -0)"},
        {3 * 0x1p-10, 0, 0x02, "tie between 1 and 2 quanta"},
        {0.0, 0, 0x00, "+0"},
        {-0.0, 0, 0x80, "-0"},
        {INFINITY, 0, 0x7F, "+Inf -> NaN (no Inf)"},
        {-INFINITY, 0, 0xFF, "-Inf -> NaN"},
        {INFINITY, 1, 0x7E, "+Inf saturated"},
        {-INFINITY, 1, 0xFE, "-Inf saturated"},
    };
    check_cases(KMUX_F8_E4M3, c, N_CASES(c));
    cr_expect_eq(enc(NAN, KMUX_F8_E4M3, 0) & 0x7F, 0x7F, "NaN -> S.1111.111");
    cr_expect_eq(enc(NAN, KMUX_F8_E4M3, 1) & 0x7F, 0x7F, "NaN saturated stays NaN");
}

Test(ref_dtype, e5m2_rounding) {
    /* OCP E5M2: bias 15, 2 trailing bits, IEEE-like; 1.0 = 0.01111.00; max 0.11110.11 = 57344. */
    const enc_case c[] = {
        {1.0, 0, 0x3C, "1.0"},
        {1.0 + 0x1p-3, 0, 0x3C, "tie: even"},
        {1.0 + 3 * 0x1p-3, 0, 0x3E, "tie: even (up)"},
        {57344.0, 0, 0x7B, "largest finite"},
        {61439.0, 0, 0x7B, "below the midpoint"},
        {61440.0, 0, 0x7C, "midpoint rounds to even 2^16: overflow -> +Inf"},
        {61440.0, 1, 0x7B, "overflow saturated"},
        {-61440.0, 0, 0xFC, "negative overflow -> -Inf"},
        {0x1p-16, 0, 0x01, "smallest subnormal"},
        {0x1p-17, 0, 0x00, "half of it: 0"},
        {3 * 0x1p-17, 0, 0x02, "tie between 1 and 2 quanta"},
        {-0.0, 0, 0x80, "-0"},
        {INFINITY, 0, 0x7C, "+Inf"},
        {-INFINITY, 0, 0xFC, "-Inf"},
        {INFINITY, 1, 0x7B, "+Inf saturated"},
    };
    check_cases(KMUX_F8_E5M2, c, N_CASES(c));
    uint32_t nan = enc(NAN, KMUX_F8_E5M2, 0);
    cr_expect((nan & 0x7C) == 0x7C && (nan & 0x03) != 0, "NaN -> 0x%x", (unsigned)nan);
}

Test(ref_dtype, e4m3fnuz_rounding) {
    /* E4M3FNUZ: bias 8, 3 trailing bits; 1.0 = 0.1000.000; max 0.1111.111 = 1.875 * 2^7 = 240.
     * Midpoint 248 between 240 (odd) and 256 (even) rounds to 256: overflow. */
    const enc_case c[] = {
        {1.0, 0, 0x40, "1.0"},
        {1.0 + 0x1p-4, 0, 0x40, "tie: even"},
        {1.0 + 3 * 0x1p-4, 0, 0x42, "tie: even (up)"},
        {240.0, 0, 0x7F, "largest finite"},
        {247.0, 0, 0x7F, "below the midpoint"},
        {248.0, 0, 0x80, "midpoint rounds to 256: overflow -> NaN 0x80"},
        {248.0, 1, 0x7F, "overflow saturated"},
        {-248.0, 1, 0xFF, "negative overflow saturated"},
        {0x1p-10, 0, 0x01, "smallest subnormal"},
        {0x1p-11, 0, 0x00, "half of it: 0"},
        {-0x1p-11, 0, 0x00, "negative half: +0 (no -0; 0x80 is NaN)"},
        {3 * 0x1p-11, 0, 0x02, "tie between 1 and 2 quanta"},
        {0.0, 0, 0x00, "+0"},
        {-0.0, 0, 0x00, "-0 -> +0"},
        {INFINITY, 0, 0x80, "+Inf -> NaN"},
        {-INFINITY, 0, 0x80, "-Inf -> NaN"},
        {INFINITY, 1, 0x7F, "+Inf saturated"},
        {-INFINITY, 1, 0xFF, "-Inf saturated"},
        {NAN, 0, 0x80, "NaN -> 0x80"},
        {-NAN, 1, 0x80, "NaN saturated -> 0x80"},
    };
    check_cases(KMUX_F8_E4M3_FNUZ, c, N_CASES(c));
}

Test(ref_dtype, e5m2fnuz_rounding) {
    /* E5M2FNUZ: bias 16, 2 trailing bits; 1.0 = 0.10000.00; max 0.11111.11 = 1.75 * 2^15. */
    const enc_case c[] = {
        {1.0, 0, 0x40, "1.0"},
        {1.0 + 0x1p-3, 0, 0x40, "tie: even"},
        {1.0 + 3 * 0x1p-3, 0, 0x42, "tie: even (up)"},
        {57344.0, 0, 0x7F, "largest finite"},
        {61439.0, 0, 0x7F, "below the midpoint"},
        {61440.0, 0, 0x80, "midpoint: overflow -> NaN 0x80"},
        {-61440.0, 1, 0xFF, "negative overflow saturated"},
        {0x1p-17, 0, 0x01, "smallest subnormal"},
        {0x1p-18, 0, 0x00, "half of it: 0"},
        {3 * 0x1p-18, 0, 0x02, "tie between 1 and 2 quanta"},
        {-0.0, 0, 0x00, "-0 -> +0"},
        {INFINITY, 0, 0x80, "+Inf -> NaN"},
        {NAN, 0, 0x80, "NaN -> 0x80"},
    };
    check_cases(KMUX_F8_E5M2_FNUZ, c, N_CASES(c));
}

Test(ref_dtype, exact_decoding) {
    cr_expect_eq(dec(0x7E, KMUX_F8_E4M3), 448.0);
    cr_expect_eq(dec(0xFE, KMUX_F8_E4M3), -448.0);
    cr_expect_eq(dec(0x01, KMUX_F8_E4M3), 0x1p-9);
    cr_expect(isnan(dec(0x7F, KMUX_F8_E4M3)) && isnan(dec(0xFF, KMUX_F8_E4M3)));
    cr_expect(dec(0x80, KMUX_F8_E4M3) == 0.0 && signbit(dec(0x80, KMUX_F8_E4M3)), "0x80 = -0");
    cr_expect_eq(dec(0x7B, KMUX_F8_E5M2), 57344.0);
    cr_expect_eq(dec(0x7C, KMUX_F8_E5M2), INFINITY);
    cr_expect_eq(dec(0x01, KMUX_F8_E5M2), 0x1p-16);
    cr_expect(isnan(dec(0x7D, KMUX_F8_E5M2)));
    cr_expect(isnan(dec(0x80, KMUX_F8_E4M3_FNUZ)));
    cr_expect_eq(dec(0x7F, KMUX_F8_E4M3_FNUZ), 240.0);
    cr_expect_eq(dec(0xFF, KMUX_F8_E4M3_FNUZ), -240.0);
    cr_expect_eq(dec(0x01, KMUX_F8_E4M3_FNUZ), 0x1p-10);
    cr_expect(isnan(dec(0x80, KMUX_F8_E5M2_FNUZ)));
    cr_expect_eq(dec(0x7F, KMUX_F8_E5M2_FNUZ), 57344.0);
    cr_expect_eq(dec(0x01, KMUX_F8_E5M2_FNUZ), 0x1p-17);
    cr_expect_eq(dec(0x0001, KMUX_F16), 0x1p-24);
    cr_expect_eq(dec(0x7BFF, KMUX_F16), 65504.0);
    cr_expect_eq(dec(0xFC00, KMUX_F16), -INFINITY);
    cr_expect_eq(dec(0x0001, KMUX_BF16), 0x1p-133);
    cr_expect_eq(dec(0x7F7F, KMUX_BF16), 0x1.fep127);
    cr_expect_eq(dec(0x00000001, KMUX_F32), 0x1p-149);
}

/* Every non-NaN code of the 16- and 8-bit formats decodes to a value that encodes back to the
 * same code (FNUZ and OCP alike), through f64 and through f32. */
Test(ref_dtype, round_trip_every_code) {
    const kmux_dtype ts[] = {KMUX_F16,     KMUX_BF16,         KMUX_F8_E4M3,
                             KMUX_F8_E5M2, KMUX_F8_E4M3_FNUZ, KMUX_F8_E5M2_FNUZ};
    for (size_t i = 0; i < N_CASES(ts); i++) {
        uint32_t codes = kmux_dtype_size(ts[i]) == 1 ? 256u : 65536u;
        for (uint32_t c = 0; c < codes; c++) {
            double v = dec(c, ts[i]);
            if (isnan(v)) continue;
            uint32_t back = enc(v, ts[i], 0);
            cr_assert_eq(back, c, "%s: 0x%x -> %a -> 0x%x", kmux_dtype_name(ts[i]), (unsigned)c, v,
                         (unsigned)back);
        }
    }
    /* narrow -> f32 -> narrow in bulk */
    static uint8_t codes8[256], back8[256];
    static float mid[256];
    for (int c = 0; c < 256; c++)
        codes8[c] = (uint8_t)c;
    TU_OK(kmux_cast(st, 256, codes8, KMUX_F8_E4M3, mid, KMUX_F32, NULL));
    TU_OK(kmux_cast(st, 256, mid, KMUX_F32, back8, KMUX_F8_E4M3, NULL));
    for (int c = 0; c < 256; c++)
        if ((c & 0x7F) != 0x7F) cr_expect_eq(back8[c], c, "e4m3 0x%x via f32", (unsigned)c);
}

Test(ref_dtype, scale_and_amax) {
    const float x[4] = {1.0f, -600.0f, NAN, 0.25f};
    uint8_t y[4];
    float scale = 0.5f, amax = -1.0f;
    kmux_cast_options o = KMUX_CAST_OPTIONS_INIT;
    o.scale = &scale;
    o.amax = &amax;
    TU_OK(kmux_cast(st, 4, x, KMUX_F32, y, KMUX_F8_E4M3, &o));
    cr_expect_eq(amax, 600.0f, "amax is over the input before scaling, NaN ignored: %g", amax);
    cr_expect_eq(y[0], 0x30, "0.5 = 0.0110.000");
    /* -300 = -1.171875 * 2^8: 3 trailing bits give 9.375 / 8 -> 9 / 8: -288 = 1.1111.001 */
    cr_expect_eq(y[1], 0xF9, "-300 -> -288: 0x%x", y[1]);
    cr_expect_eq(y[2] & 0x7F, 0x7F, "NaN");
    cr_expect_eq(y[3], 0x20, "0.125 = 0.0100.000");
    /* scale pushing a value beyond 448: NaN, or 448 when saturating */
    scale = 1000.0f;
    TU_OK(kmux_cast(st, 1, x, KMUX_F32, y, KMUX_F8_E4M3, &o));
    cr_expect_eq(y[0], 0x7F);
    o.saturate = 1;
    TU_OK(kmux_cast(st, 1, x, KMUX_F32, y, KMUX_F8_E4M3, &o));
    cr_expect_eq(y[0], 0x7E);
    /* n == 0 with amax: amax = 0 */
    amax = -1.0f;
    TU_OK(kmux_cast(st, 0, NULL, KMUX_F32, NULL, KMUX_F16, &o));
    cr_expect_eq(amax, 0.0f);
}

Test(ref_dtype, f32_f64_exact) {
    const float x[3] = {0x1.fffffep127f, 0x1p-149f, -0.0f};
    double d[3];
    float back[3];
    TU_OK(kmux_cast(st, 3, x, KMUX_F32, d, KMUX_F64, NULL));
    cr_expect_eq(d[0], 0x1.fffffep127);
    cr_expect_eq(d[1], 0x1p-149);
    cr_expect(d[2] == 0.0 && signbit(d[2]));
    TU_OK(kmux_cast(st, 3, d, KMUX_F64, back, KMUX_F32, NULL));
    cr_expect(memcmp(back, x, sizeof x) == 0);
}
