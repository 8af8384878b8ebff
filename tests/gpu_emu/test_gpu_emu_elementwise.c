/*
 * test_gpu_emu_elementwise.c - the element-wise kernels of kernels/gpu (kmux_gpu_cast,
 * kmux_gpu_amax, kmux_gpu_unscale_check_finite, kmux_gpu_loss_scale_update,
 * kmux_gpu_fp8_scale_update) run in the host emulation at wave 32 and 64, in index and shuffled
 * block order, against the ref device's kmux_cast, kmux_amax, ... on the same inputs: bit for bit
 * (both use the shared codec and round once), specials included (NaN, Inf, -0, subnormals,
 * values beyond the target's range).
 */
#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "emu_common.h"
#include "kmux_dtype_desc.h"
#include "kmux_gpu_kernels.h"

static const kmux_dtype FLOATS[] = {KMUX_F64,          KMUX_F32,         KMUX_F16,
                                    KMUX_BF16,         KMUX_F8_E4M3,     KMUX_F8_E5M2,
                                    KMUX_F8_E4M3_FNUZ, KMUX_F8_E5M2_FNUZ};
#define NFLOATS 8
/* Not a multiple of 4, 8 or any block: the tails of every loop run. */
#define N 1541

/* n values of dtype t: random over a wide range, plus specials at fixed places. */
static void *make_input(kmux_dtype t, int64_t n, uint64_t seed) {
    size_t eb = kmux_dtype_bytes(t);
    unsigned char *p = emu_alloc((size_t)n * eb + 16);
    uint64_t st = seed;
    const double big = kmux_dtype_desc_of(t).max_finite;
    for (int64_t i = 0; i < n; i++) {
        double v = emu_rand(&st, -1, 1) * ldexp(1.0, (int)emu_rand(&st, -30, 20));
        switch (i % 97) {
        case 3:
            v = NAN;
            break;
        case 5:
            v = INFINITY;
            break;
        case 7:
            v = -INFINITY;
            break;
        case 11:
            v = -0.0;
            break;
        case 13:
            v = big;
            break;
        case 17:
            v = ldexp(1.0, -140); /* subnormal in f32 */
            break;
        case 19:
            v = 70000.5;
            break;
        default:
            break;
        }
        emu_set(t, p, i, v);
    }
    return p;
}

static void ref_cast(int64_t n, const void *src, kmux_dtype st, void *dst, kmux_dtype dt,
                     int saturate, const float *scale, float *amax) {
    kmux_cast_options o = KMUX_CAST_OPTIONS_INIT;
    o.saturate = saturate, o.scale = scale, o.amax = amax;
    cr_assert_eq(kmux_cast(emu_ref_stream(), n, src, st, dst, dt, &o), KMUX_OK, "%s",
                 kmux_last_error());
}

/* Every pair of float dtypes, with and without saturation, scale and amax; src at an offset
 * that is not 16-byte aligned too (the f32 float4 path and the scalar path). */
Test(gpu_emu_elementwise, cast_every_pair_bitwise) {
    for (int a = 0; a < NFLOATS; a++)
        for (int b = 0; b < NFLOATS; b++) {
            const kmux_dtype s = FLOATS[a], d = FLOATS[b];
            unsigned char *src = make_input(s, N + 4, 77u + (uint64_t)a * 13u + (uint64_t)b);
            size_t db = kmux_dtype_bytes(d);
            unsigned char *want = emu_alloc(N * db), *got = emu_alloc(N * db);
            for (int v = 0; v < 4; v++) {
                const int saturate = v & 1;
                const float scale = 0.375f;
                const float *sc = v & 2 ? &scale : NULL;
                const size_t off = (v & 2 ? 1 : 0) * kmux_dtype_bytes(s); /* misaligned */
                float wamax = -1, gamax = -1;
                ref_cast(N, src + off, s, want, d, saturate, sc, &wamax);
                for (int si = 0; si < EMU_SETTING_COUNT; si++) {
                    emu_apply(&EMU_SETTINGS[si]);
                    memset(got, 0xa5, N * db);
                    emu_check_launch(
                        kmux_gpu_cast(NULL, N, src + off, s, got, d, saturate, sc, &gamax),
                        "kmux_gpu_cast");
                    for (int64_t i = 0; i < N; i++)
                        cr_assert(memcmp(got + i * db, want + i * db, db) == 0,
                                  "cast %s -> %s (sat %d, scale %d, wave %u): element %lld: got "
                                  "%.9g want %.9g",
                                  kmux_dtype_desc_of(s).name, kmux_dtype_desc_of(d).name, saturate,
                                  sc != NULL, EMU_SETTINGS[si].wave, (long long)i,
                                  emu_get(d, got, i), emu_get(d, want, i));
                    cr_assert(memcmp(&gamax, &wamax, sizeof gamax) == 0,
                              "cast %s -> %s amax (wave %u, seed %llu): got %.9g want %.9g",
                              kmux_dtype_desc_of(s).name, kmux_dtype_desc_of(d).name,
                              EMU_SETTINGS[si].wave, (unsigned long long)EMU_SETTINGS[si].seed,
                              (double)gamax, (double)wamax);
                }
            }
            free(src);
            free(want);
            free(got);
        }
}

Test(gpu_emu_elementwise, cast_refuses_integers) {
    int8_t x = 1;
    float y = 0;
    cr_assert_neq(kmux_gpu_cast(NULL, 1, &x, KMUX_I8, &y, KMUX_F32, 0, NULL, NULL), 0);
    cr_assert_neq(kmux_gpu_cast(NULL, 1, &y, KMUX_F32, &x, KMUX_I32, 0, NULL, NULL), 0);
}

Test(gpu_emu_elementwise, amax_every_float_type) {
    for (int a = 0; a < NFLOATS; a++) {
        const kmux_dtype t = FLOATS[a];
        void *x = make_input(t, N, 991u + (uint64_t)a);
        for (int64_t n = 0; n <= N; n += N) { /* n == 0: amax 0 */
            float want = -1;
            cr_assert_eq(kmux_amax(emu_ref_stream(), n, x, t, &want), KMUX_OK, "%s",
                         kmux_last_error());
            for (int si = 0; si < EMU_SETTING_COUNT; si++) {
                emu_apply(&EMU_SETTINGS[si]);
                float got = -1;
                emu_check_launch(kmux_gpu_amax(NULL, n, x, t, &got), "kmux_gpu_amax");
                cr_assert(memcmp(&got, &want, sizeof got) == 0,
                          "amax %s n=%lld (wave %u): got %.9g want %.9g",
                          kmux_dtype_desc_of(t).name, (long long)n, EMU_SETTINGS[si].wave,
                          (double)got, (double)want);
            }
        }
        free(x);
    }
}

/* Several tensors of every unscale dtype, finite and not, bit for bit with ref. */
Test(gpu_emu_elementwise, unscale_check_finite) {
    static const kmux_dtype T[4] = {KMUX_F64, KMUX_F32, KMUX_F16, KMUX_BF16};
    for (int finite = 0; finite < 2; finite++) {
        void *src[4], *ref[4], *emu[4];
        int64_t sizes[4] = {N, 700, 1, 0};
        kmux_dtype types[4];
        for (int i = 0; i < 4; i++) {
            types[i] = T[i];
            size_t bytes = (size_t)sizes[i] * kmux_dtype_bytes(T[i]);
            src[i] = make_input(T[i], sizes[i], 5u + (uint64_t)i);
            if (finite)
                for (int64_t e = 0; e < sizes[i]; e++)
                    if (!isfinite(emu_get(T[i], src[i], e))) emu_set(T[i], src[i], e, 1.5);
            ref[i] = emu_alloc(bytes);
            emu[i] = emu_alloc(bytes);
            memcpy(ref[i], src[i], bytes);
        }
        const float inv = 1.0f / 1024.0f;
        float want_found = 0;
        cr_assert_eq(
            kmux_unscale_check_finite(emu_ref_stream(), 4, ref, sizes, types, &inv, &want_found),
            KMUX_OK, "%s", kmux_last_error());
        for (int si = 0; si < EMU_SETTING_COUNT; si++) {
            emu_apply(&EMU_SETTINGS[si]);
            for (int i = 0; i < 4; i++)
                memcpy(emu[i], src[i], (size_t)sizes[i] * kmux_dtype_bytes(T[i]));
            float found = 0;
            emu_check_launch(
                kmux_gpu_unscale_check_finite(NULL, 4, emu, sizes, types, &inv, &found),
                "kmux_gpu_unscale_check_finite");
            cr_assert_eq(found, want_found, "found_inf %g want %g (finite inputs: %d)",
                         (double)found, (double)want_found, finite);
            for (int i = 0; i < 4; i++)
                cr_assert(memcmp(emu[i], ref[i], (size_t)sizes[i] * kmux_dtype_bytes(T[i])) == 0,
                          "unscale tensor %d (%s) differs from ref", i,
                          kmux_dtype_desc_of(T[i]).name);
        }
        for (int i = 0; i < 4; i++) {
            free(src[i]);
            free(ref[i]);
            free(emu[i]);
        }
    }
}

/* The growth/backoff state machine over a sequence of found_inf values, against ref. */
Test(gpu_emu_elementwise, loss_scale_update) {
    static const float found[] = {0, 0, 0, 1, 0, 0, NAN, 0, 0, 0, 0, 0};
    float ws = 65536.0f, gs = 65536.0f;
    int32_t wt = 0, gt = 0;
    for (size_t i = 0; i < sizeof found / sizeof found[0]; i++) {
        emu_apply(&EMU_SETTINGS[i % (size_t)EMU_SETTING_COUNT]);
        cr_assert_eq(kmux_loss_scale_update(emu_ref_stream(), &ws, &wt, &found[i], 2.0, 0.5, 3),
                     KMUX_OK, "%s", kmux_last_error());
        emu_check_launch(kmux_gpu_loss_scale_update(NULL, &gs, &gt, &found[i], 2.0, 0.5, 3),
                         "kmux_gpu_loss_scale_update");
        cr_assert(gs == ws && gt == wt, "step %zu: scale %g tracker %d, ref %g %d", i, (double)gs,
                  gt, (double)ws, wt);
    }
}

Test(gpu_emu_elementwise, fp8_scale_update) {
    static const float hist[][4] = {
        {1, 2, 3, 0.5f}, {0, 0, 0, 0}, {1, NAN, 2, 3}, {1, INFINITY, 2, 3}, {1e-30f, 0, 0, 0}};
    for (int f = 4; f < NFLOATS; f++)
        for (int h = 0; h < 5; h++) {
            float ws = 7.0f, gs = 7.0f;
            emu_apply(&EMU_SETTINGS[h % EMU_SETTING_COUNT]);
            cr_assert_eq(kmux_fp8_scale_update(emu_ref_stream(), hist[h], 4, FLOATS[f], 1.0f, &ws),
                         KMUX_OK, "%s", kmux_last_error());
            emu_check_launch(kmux_gpu_fp8_scale_update(NULL, hist[h], 4, FLOATS[f], 1.0f, &gs),
                             "kmux_gpu_fp8_scale_update");
            cr_assert(memcmp(&gs, &ws, sizeof gs) == 0, "%s history %d: got %g want %g",
                      kmux_dtype_desc_of(FLOATS[f]).name, h, (double)gs, (double)ws);
        }
    float s = 1;
    cr_assert_neq(kmux_gpu_fp8_scale_update(NULL, hist[0], 4, KMUX_F16, 0, &s), 0);
}
