/*
 * test_check_sys.c - kmux-check's readers of machine facts that need no root and no device:
 * the SMBIOS memory-device parser on a synthetic table (no DMI table is readable here).
 */
#include <criterion/criterion.h>
#include <string.h>

#include "ck_sys.h"

/* Appends a type 17 structure (SMBIOS 3.x layout, length 0x28) and its empty string set. */
static size_t add_dimm(uint8_t *t, size_t p, unsigned size_mb, unsigned speed, unsigned conf) {
    memset(t + p, 0, 0x28 + 2);
    t[p] = 17;
    t[p + 1] = 0x28;
    t[p + 0x0C] = (uint8_t)size_mb, t[p + 0x0D] = (uint8_t)(size_mb >> 8);
    t[p + 0x15] = (uint8_t)speed, t[p + 0x16] = (uint8_t)(speed >> 8);
    t[p + 0x20] = (uint8_t)conf, t[p + 0x21] = (uint8_t)(conf >> 8);
    return p + 0x28 + 2;
}

Test(check_sys, dmi_memory_devices) {
    uint8_t t[1024];
    size_t p = 0;
    /* a type 0 (BIOS) structure with one string, to be skipped */
    memset(t, 0, 32);
    t[0] = 0, t[1] = 0x18;
    memcpy(t + 0x18, "vendor\0\0", 8);
    p = 0x18 + 8;
    p = add_dimm(t, p, 0x4000, 4800, 4400); /* runs at its configured 4400 MT/s */
    p = add_dimm(t, p, 0x4000, 4800, 0);    /* no configured speed: 4800 */
    p = add_dimm(t, p, 0, 0, 0);            /* empty slot */
    p = add_dimm(t, p, 0x4000, 4800, 4400);
    t[p] = 127, t[p + 1] = 4, t[p + 4] = 0, t[p + 5] = 0;
    p += 6;
    int modules = 0, mts = 0;
    cr_assert_eq(ck_dmi_parse_memory(t, p, &modules, &mts), 3);
    cr_assert_eq(modules, 3);
    cr_assert_eq(mts, 4400); /* channels run at the slowest module's speed */
    cr_assert_float_eq(ck_dmi_peak_gbps(modules, mts), 3 * 4400 * 8 / 1e3, 1e-9);
    /* truncated tables stop cleanly */
    cr_assert_eq(ck_dmi_parse_memory(t, 0x18 + 8 + 10, &modules, &mts), 0);
    cr_assert_eq(ck_dmi_parse_memory(t, 3, &modules, &mts), 0);
}
