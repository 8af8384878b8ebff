/*
 * test_check_diag.c - kmux_device_diag_get (dispatch/diag.c): argument checks, the "unknown"
 * answer of a backend without the device_diag slot (ref), and the facts of one that has it (the
 * fake GPU plugin of tests/plugins, when this core can load it), for callers of any struct size.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kmux.h"

static kmux_context *ctx_with(const char *backends, const char *path) {
    kmux_context_options opt = KMUX_CONTEXT_OPTIONS_INIT;
    opt.backends = backends;
    opt.backend_path = path;
    kmux_context *ctx = NULL;
    cr_assert_eq(kmux_context_create(&opt, &ctx), KMUX_OK, "%s", kmux_last_error());
    return ctx;
}

Test(check_diag, bad_arguments) {
    kmux_context *ctx = ctx_with("ref", NULL);
    kmux_device *ref = NULL;
    cr_assert_eq(kmux_device_find(ctx, "ref", &ref), KMUX_OK);
    kmux_device_diag d;
    memset(&d, 0, sizeof d);
    d.struct_size = sizeof d;
    cr_assert_eq(kmux_device_diag_get(NULL, &d), KMUX_ERR_INVALID_ARGUMENT);
    cr_assert(strstr(kmux_last_error(), "dev is NULL"), "%s", kmux_last_error());
    cr_assert_eq(kmux_device_diag_get(ref, NULL), KMUX_ERR_INVALID_ARGUMENT);
    cr_assert(strstr(kmux_last_error(), "diag is NULL"), "%s", kmux_last_error());
    d.struct_size = 8;
    cr_assert_eq(kmux_device_diag_get(ref, &d), KMUX_ERR_INVALID_ARGUMENT);
    cr_assert(strstr(kmux_last_error(), "struct_size = 8"), "%s", kmux_last_error());
    kmux_context_destroy(ctx);
}

Test(check_diag, backend_without_the_slot_answers_unknown) {
    kmux_context *ctx = ctx_with("ref", NULL);
    kmux_device *ref = NULL;
    cr_assert_eq(kmux_device_find(ctx, "ref", &ref), KMUX_OK);
    kmux_device_diag d;
    memset(&d, 0x55, sizeof d);
    d.struct_size = sizeof d;
    cr_assert_eq(kmux_device_diag_get(ref, &d), KMUX_ERR_UNSUPPORTED);
    cr_assert(strstr(kmux_last_error(), "ref"), "%s", kmux_last_error());
    cr_assert_eq(d.struct_size, sizeof d);
    cr_assert_str_eq(d.target_id, "");
    cr_assert_str_eq(d.code_objects, "");
    cr_assert_eq(d.ecc_enabled, -1);
    cr_assert_eq(d.ecc_supported, -1);
    cr_assert_eq(d.pcie_gen, 0);
    cr_assert_eq(d.link_rate_gbps, 0.0);
    kmux_context_destroy(ctx);
}

Test(check_diag, plugin_facts_and_a_smaller_caller_struct) {
    const char *dir = getenv("KMUX_TEST_PLUGIN_DIR");
    char path[1024];
    snprintf(path, sizeof path, "%s/libkmux-fakegpu.so", dir ? dir : "");
    if (!dir || access(path, R_OK) != 0) cr_skip_test("%s not built", path);
    setenv("KMUX_FAKE_GPU_TARGET", "gfx942:sramecc+:xnack-", 1);
    setenv("KMUX_FAKE_GPU_CODE_OBJECTS", "gfx90a,gfx942", 1);
    setenv("KMUX_FAKE_GPU_PCIE", "5x16", 1);
    kmux_context *ctx = ctx_with("fakegpu", dir);
    kmux_device *dev = NULL;
    if (kmux_device_find(ctx, "fakegpu:0", &dev) != KMUX_OK) {
        char why[512];
        snprintf(why, sizeof why, "%s", kmux_last_error());
        kmux_context_destroy(ctx);
        cr_skip_test("fakegpu not usable by this core: %s", why);
    }
    kmux_device_diag d;
    memset(&d, 0, sizeof d);
    d.struct_size = sizeof d;
    cr_assert_eq(kmux_device_diag_get(dev, &d), KMUX_OK, "%s", kmux_last_error());
    cr_assert_str_eq(d.target_id, "gfx942:sramecc+:xnack-");
    cr_assert_str_eq(d.code_objects, "gfx90a,gfx942");
    cr_assert_eq(d.pcie_gen, 5);
    cr_assert_eq(d.pcie_width, 16);
    cr_assert_eq(d.ecc_enabled, 1);
    /* A caller built with a later, larger struct: the fields this library does not know are
     * left alone, and struct_size keeps the caller's value. */
    unsigned char buf[sizeof(kmux_device_diag) + 16];
    memset(buf, 0xab, sizeof buf);
    kmux_device_diag *big = (kmux_device_diag *)(void *)buf;
    big->struct_size = sizeof buf;
    cr_assert_eq(kmux_device_diag_get(dev, big), KMUX_OK);
    cr_assert_eq(big->struct_size, sizeof buf);
    cr_assert_str_eq(big->target_id, "gfx942:sramecc+:xnack-");
    for (size_t i = sizeof(kmux_device_diag); i < sizeof buf; i++)
        cr_assert_eq(buf[i], 0xab, "byte %zu written", i);
    kmux_context_destroy(ctx);
}
