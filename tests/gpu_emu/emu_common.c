/*
 * emu_common.c - see emu_common.h.
 */
#include "emu_common.h"

#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "kmux_dtype_codec.h"
#include "kmux_gpu_emu_api.h"

const emu_setting EMU_SETTINGS[] = {
    {32, 0},
    {64, 0},
    {32, 0x9e3779b97f4a7c15ull},
    {64, 12345},
};
const int EMU_SETTING_COUNT = (int)(sizeof EMU_SETTINGS / sizeof EMU_SETTINGS[0]);

void emu_apply(const emu_setting *s) {
    cr_assert_eq(kmux_gpu_emu_configure(s->wave, s->seed), 0);
    kmux_gpu_emu_clear();
}

void emu_check_launch(int rc, const char *what) {
    cr_assert_eq(rc, 0, "%s: launch returned %d: %s", what, rc, kmux_gpu_emu_message());
}

static kmux_context *g_ctx;
static kmux_device *g_ref;
static kmux_stream *g_st;

static void emu_ref_init(void) {
    if (g_ref) return;
    kmux_context_options o = KMUX_CONTEXT_OPTIONS_INIT;
    o.backends = "ref"; /* no plugin: the oracle only */
    cr_assert_eq(kmux_context_create(&o, &g_ctx), KMUX_OK, "%s", kmux_last_error());
    cr_assert_eq(kmux_device_find(g_ctx, "ref", &g_ref), KMUX_OK, "%s", kmux_last_error());
    cr_assert_eq(kmux_stream_create(g_ref, &g_st), KMUX_OK, "%s", kmux_last_error());
}

kmux_device *emu_ref(void) {
    emu_ref_init();
    return g_ref;
}

kmux_stream *emu_ref_stream(void) {
    emu_ref_init();
    return g_st;
}

double emu_get(kmux_dtype t, const void *p, int64_t i) {
    switch (t) {
    case KMUX_F64:
        return ((const double *)p)[i];
    case KMUX_F32:
        return ((const float *)p)[i];
    case KMUX_F16:
    case KMUX_BF16:
        return kmux_decode_f64(((const uint16_t *)p)[i], t);
    case KMUX_I8:
        return ((const int8_t *)p)[i];
    case KMUX_I32:
        return ((const int32_t *)p)[i];
    default:
        return kmux_decode_f64(((const uint8_t *)p)[i], t);
    }
}

static double clampd(double v, double lo, double hi) {
    return isnan(v) ? 0 : v < lo ? lo : v > hi ? hi : nearbyint(v);
}

void emu_set(kmux_dtype t, void *p, int64_t i, double v) {
    switch (t) {
    case KMUX_F64:
        ((double *)p)[i] = v;
        break;
    case KMUX_F32:
        ((float *)p)[i] = (float)v;
        break;
    case KMUX_F16:
    case KMUX_BF16:
        ((uint16_t *)p)[i] = (uint16_t)kmux_encode_f64(v, t, 0);
        break;
    case KMUX_I8:
        ((int8_t *)p)[i] = (int8_t)clampd(v, -128, 127);
        break;
    case KMUX_I32:
        ((int32_t *)p)[i] = (int32_t)clampd(v, -2147483648.0, 2147483647.0);
        break;
    default:
        ((uint8_t *)p)[i] = (uint8_t)kmux_encode_f64(v, t, 0);
        break;
    }
}

double emu_rand(uint64_t *st, double lo, double hi) {
    uint64_t x = *st;
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    *st = x;
    return lo + (hi - lo) * (double)((x * 2685821657736338717ull) >> 11) * 0x1.0p-53;
}

void emu_fill(kmux_dtype t, void *p, int64_t n, double range, uint64_t *st) {
    for (int64_t i = 0; i < n; i++) {
        double v = emu_rand(st, -range, range);
        if (kmux_dtype_is_int(t)) v = floor(v);
        emu_set(t, p, i, v);
    }
}

void emu_poison(kmux_dtype t, void *p, int64_t i) {
    if (t == KMUX_I8)
        ((int8_t *)p)[i] = -128;
    else if (t == KMUX_I32)
        ((int32_t *)p)[i] = INT32_MIN;
    else
        emu_set(t, p, i, NAN);
}

double emu_unit_roundoff(kmux_dtype t) {
    if (kmux_dtype_is_int(t)) return 0;
    return ldexp(1.0, -(kmux_dtype_desc_of(t).mbits + 1));
}

double emu_min_subnormal(kmux_dtype t) {
    if (kmux_dtype_is_int(t)) return 0;
    kmux_dtype_desc d = kmux_dtype_desc_of(t);
    return ldexp(1.0, 1 - d.bias - d.mbits);
}

double emu_tol(double want, double bound, double k, double u_acc, double u_out, double min_out,
               int gelu) {
    double acc = bound * (k + 4) * u_acc;
    double t = acc + u_out * (2 * fabs(want) + acc) + min_out;
    if (gelu) {
        double u = u_out > ldexp(1.0, -24) ? u_out : ldexp(1.0, -24);
        t = 1.25 * t + 8 * u * (1 + bound);
    }
    return t;
}

int emu_same(double got, double want, double tol) {
    if (isnan(want) || isnan(got)) return isnan(want) && isnan(got);
    if (isinf(want) || isinf(got)) return got == want;
    return tol == 0 ? got == want : fabs(got - want) <= tol;
}

void *emu_alloc(size_t bytes) {
    void *p = malloc(bytes ? bytes : 1);
    cr_assert(p, "out of memory (%zu bytes)", bytes);
    return p;
}
