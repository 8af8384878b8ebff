/*
 * test_ref_amp.c - mixed-precision utilities on the reference device: amax, unscale with the
 * found_inf flag, the dynamic loss-scale update sequence (torch GradScaler semantics) and the
 * delayed-scaling fp8 scale update (Transformer Engine semantics), expected values by hand.
 */
#include <float.h>
#include <math.h>

#include "test_util.h"

TU_REF_SUITE(ref_amp);

Test(ref_amp, amax) {
    const float x[5] = {-3.0f, 2.0f, NAN, 1.0f, -0.0f};
    float m = -1;
    TU_OK(kmux_amax(st, 5, x, KMUX_F32, &m));
    cr_expect_eq(m, 3.0f, "NaN ignored: %g", m);
    const float xi[3] = {1.0f, -INFINITY, NAN};
    TU_OK(kmux_amax(st, 3, xi, KMUX_F32, &m));
    cr_expect_eq(m, INFINITY, "Inf counts: %g", m);
    m = -1;
    TU_OK(kmux_amax(st, 0, NULL, KMUX_F32, &m));
    cr_expect_eq(m, 0.0f);
    /* e4m3: 0xFE = -448, 0x7F = NaN, 0x01 = 2^-9 */
    const uint8_t f8[3] = {0x01, 0xFE, 0x7F};
    TU_OK(kmux_amax(st, 3, f8, KMUX_F8_E4M3, &m));
    cr_expect_eq(m, 448.0f);
    /* bf16 0xC040 = -3, f16 0x4200 = 3 */
    const uint16_t b16[2] = {0xC040, 0x3F80};
    TU_OK(kmux_amax(st, 2, b16, KMUX_BF16, &m));
    cr_expect_eq(m, 3.0f);
}

Test(ref_amp, unscale_check_finite) {
    float g32[3] = {2.0f, -4.0f, 6.0f};
    uint16_t g16[2] = {0x4000, 0xC400}; /* f16 2, -4 */
    double g64[2] = {8.0, 1.0};
    void *const tensors[3] = {g32, g16, g64};
    const int64_t sizes[3] = {3, 2, 2};
    const kmux_dtype types[3] = {KMUX_F32, KMUX_F16, KMUX_F64};
    float inv = 0.5f, found = 0.0f;
    TU_OK(kmux_unscale_check_finite(st, 3, tensors, sizes, types, &inv, &found));
    cr_expect_eq(found, 0.0f, "all finite: found_inf stays 0");
    cr_expect(g32[0] == 1.0f && g32[1] == -2.0f && g32[2] == 3.0f);
    cr_expect(g16[0] == 0x3C00 && g16[1] == 0xC000, "f16 halves: 0x%04x 0x%04x", g16[0], g16[1]);
    cr_expect(g64[0] == 4.0 && g64[1] == 0.5);

    /* a NaN in the second tensor: flag set; the other elements are still unscaled */
    g16[1] = 0x7E00;
    TU_OK(kmux_unscale_check_finite(st, 3, tensors, sizes, types, &inv, &found));
    cr_expect_eq(found, 1.0f);
    cr_expect(g32[0] == 0.5f && g64[0] == 2.0, "finite elements unscaled");

    /* found_inf is never cleared: all finite again, flag stays 1 */
    g16[1] = 0x3C00;
    TU_OK(kmux_unscale_check_finite(st, 3, tensors, sizes, types, &inv, &found));
    cr_expect_eq(found, 1.0f, "found_inf must not be cleared");

    /* Inf detected before scaling, even with inv_scale = 0 */
    float g[2] = {INFINITY, 1.0f}, zero = 0.0f;
    void *const t1[1] = {g};
    const int64_t s1[1] = {2};
    const kmux_dtype ty1[1] = {KMUX_F32};
    found = 0;
    TU_OK(kmux_unscale_check_finite(st, 1, t1, s1, ty1, &zero, &found));
    cr_expect_eq(found, 1.0f);
    cr_expect_eq(g[1], 0.0f);
}

Test(ref_amp, loss_scale_update_sequence) {
    /* growth 2, backoff 0.5, interval 3, starting at 2^16 with tracker 0 */
    float scale = 65536.0f, found = 0.0f;
    int32_t tracker = 0;
    struct step {
        float found;
        float scale;
        int32_t tracker;
    };
    const struct step seq[] = {
        {0, 65536, 1}, {0, 65536, 2}, {0, 131072, 0}, /* third clean step grows */
        {1, 65536, 0},                                /* overflow: back off, reset */
        {0, 65536, 1}, {1, 32768, 0}, {1, 16384, 0},  /* repeated overflows */
        {0, 16384, 1}, {0, 16384, 2}, {0, 32768, 0},
    };
    for (size_t i = 0; i < sizeof seq / sizeof seq[0]; i++) {
        found = seq[i].found;
        TU_OK(kmux_loss_scale_update(st, &scale, &tracker, &found, 2.0, 0.5, 3));
        cr_expect(scale == seq[i].scale && tracker == seq[i].tracker,
                  "step %zu: scale %g tracker %d, want %g %d", i, scale, tracker, seq[i].scale,
                  seq[i].tracker);
    }
    /* growth that would overflow f32 keeps the scale, but resets the tracker */
    scale = FLT_MAX / 1.5f;
    tracker = 2;
    found = 0;
    float before = scale;
    TU_OK(kmux_loss_scale_update(st, &scale, &tracker, &found, 2.0, 0.5, 3));
    cr_expect(scale == before && tracker == 0, "scale %g tracker %d", scale, tracker);
    /* interval 1: grows on every clean step */
    scale = 1.0f, tracker = 0;
    TU_OK(kmux_loss_scale_update(st, &scale, &tracker, &found, 4.0, 0.25, 1));
    TU_OK(kmux_loss_scale_update(st, &scale, &tracker, &found, 4.0, 0.25, 1));
    cr_expect(scale == 16.0f && tracker == 0, "scale %g tracker %d", scale, tracker);
}

Test(ref_amp, fp8_scale_update) {
    const float hist[4] = {1.0f, 4.0f, 2.0f, 0.5f}; /* amax = 4 */
    float scale = -1;
    TU_OK(kmux_fp8_scale_update(st, hist, 4, KMUX_F8_E4M3, 0.0f, &scale));
    cr_expect_eq(scale, 112.0f, "448 / 4: %g", scale);
    TU_OK(kmux_fp8_scale_update(st, hist, 4, KMUX_F8_E4M3, 1.0f, &scale));
    cr_expect_eq(scale, 56.0f, "448 / 4 / 2^1: %g", scale);
    TU_OK(kmux_fp8_scale_update(st, hist, 4, KMUX_F8_E5M2, 0.0f, &scale));
    cr_expect_eq(scale, 14336.0f, "57344 / 4: %g", scale);
    TU_OK(kmux_fp8_scale_update(st, hist, 4, KMUX_F8_E4M3_FNUZ, 0.0f, &scale));
    cr_expect_eq(scale, 60.0f, "240 / 4: %g", scale);
    TU_OK(kmux_fp8_scale_update(st, hist, 4, KMUX_F8_E5M2_FNUZ, 2.0f, &scale));
    cr_expect_eq(scale, 3584.0f, "57344 / 4 / 4: %g", scale);
    /* only the first history_len entries count */
    TU_OK(kmux_fp8_scale_update(st, hist, 1, KMUX_F8_E4M3, 0.0f, &scale));
    cr_expect_eq(scale, 448.0f, "448 / 1: %g", scale);
    /* amax 0 or Inf: scale unchanged */
    const float zeros[2] = {0.0f, 0.0f}, infs[2] = {1.0f, INFINITY};
    scale = 7.0f;
    TU_OK(kmux_fp8_scale_update(st, zeros, 2, KMUX_F8_E4M3, 0.0f, &scale));
    cr_expect_eq(scale, 7.0f);
    TU_OK(kmux_fp8_scale_update(st, infs, 2, KMUX_F8_E4M3, 0.0f, &scale));
    cr_expect_eq(scale, 7.0f);
}
