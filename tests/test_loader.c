/*
 * test_loader.c - plugin discovery and loading: rejected plugins are listed with the reason,
 * never fatal; a missing plugin folder is not an error; the allow-list; concurrent contexts.
 */
#define _POSIX_C_SOURCE 200809L
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "test_util.h"

static const char *plugin_dir(void) {
    const char *d = getenv("KMUX_TEST_PLUGIN_DIR");
    cr_assert(d && *d, "KMUX_TEST_PLUGIN_DIR is not set (run through ctest)");
    return d;
}

static kmux_context *context_with_path(const char *path, const char *allow) {
    kmux_context_options o = KMUX_CONTEXT_OPTIONS_INIT;
    o.backend_path = path;
    o.backends = allow;
    kmux_context *ctx = NULL;
    TU_OK(kmux_context_create(&o, &ctx));
    return ctx;
}

/* The info of backend `name`, asserting that it is listed. */
static kmux_backend_info find_info(kmux_context *ctx, const char *name) {
    int n = 0;
    TU_OK(kmux_backend_count(ctx, &n));
    for (int i = 0; i < n; i++) {
        kmux_backend_info b;
        TU_OK(kmux_backend_info_get(ctx, i, &b));
        if (strcmp(b.name, name) == 0) return b;
    }
    cr_assert_fail("backend %s is not listed", name);
    kmux_backend_info none = {0};
    return none;
}

Test(loader, wrong_abi_is_rejected_with_reason) {
    kmux_context *ctx = context_with_path(plugin_dir(), NULL);
    kmux_backend_info b = find_info(ctx, "wrongabi");
    cr_expect_eq(b.available, 0);
    cr_expect(strstr(b.reason, "ABI 2.0") && strstr(b.reason, "incompatible"), "reason: %s",
              b.reason);
    cr_expect(strstr(b.path, "libkmux-wrongabi.so") != NULL, "path: %s", b.path);
    kmux_device *dev = NULL;
    TU_STATUS(KMUX_ERR_NOT_FOUND, kmux_device_find(ctx, "wrongabi", &dev));
    cr_expect(strstr(kmux_last_error(), "unavailable") != NULL, "%s", kmux_last_error());
    /* ref is unaffected */
    cr_expect_eq(find_info(ctx, "ref").available, 1);
    TU_OK(kmux_context_destroy(ctx));
}

Test(loader, missing_entry_symbol_is_rejected) {
    kmux_context *ctx = context_with_path(plugin_dir(), NULL);
    kmux_backend_info b = find_info(ctx, "noentry");
    cr_expect_eq(b.available, 0);
    cr_expect(strstr(b.reason, "kmux_backend_entry") != NULL, "reason: %s", b.reason);
    TU_OK(kmux_context_destroy(ctx));
}

Test(loader, plugin_without_device_reports_probe_reason) {
    kmux_context *ctx = context_with_path(plugin_dir(), NULL);
    kmux_backend_info b = find_info(ctx, "nodevice");
    cr_expect_eq(b.available, 0);
    cr_expect_eq(b.device_count, 0);
    cr_expect_str_eq(b.reason, "test plugin: no device (by design)");
    cr_expect_str_eq(b.version, "test 1.0");
    TU_OK(kmux_context_destroy(ctx));
}

Test(loader, file_that_is_not_a_library_is_rejected) {
    char dir[] = "/tmp/kmux-loader-XXXXXX";
    cr_assert_not_null(mkdtemp(dir));
    char path[256];
    snprintf(path, sizeof path, "%s/libkmux-garbage.so", dir);
    FILE *f = fopen(path, "w");
    cr_assert_not_null(f);
    fputs("this is not an ELF file\n", f);
    fclose(f);
    kmux_context *ctx = context_with_path(dir, NULL);
    kmux_backend_info b = find_info(ctx, "garbage");
    cr_expect_eq(b.available, 0);
    cr_expect(strstr(b.reason, "cannot load") != NULL, "reason: %s", b.reason);
    TU_OK(kmux_context_destroy(ctx));
    unlink(path);
    rmdir(dir);
}

Test(loader, missing_plugin_folder_is_not_an_error) {
    kmux_context *ctx = context_with_path("/nonexistent/kmux/plugins:/also/missing", NULL);
    int n = 0;
    TU_OK(kmux_device_count(ctx, &n));
    cr_expect_geq(n, 1, "ref must always be there");
    kmux_device *ref = NULL;
    TU_OK(kmux_device_find(ctx, "ref", &ref));
    TU_OK(kmux_context_destroy(ctx));
}

Test(loader, environment_path_is_searched) {
    setenv("KMUX_BACKEND_PATH", plugin_dir(), 1);
    kmux_context *ctx = tu_context();
    cr_expect_eq(find_info(ctx, "nodevice").available, 0);
    TU_OK(kmux_context_destroy(ctx));
}

Test(loader, allow_list_keeps_other_backends_out) {
    kmux_context *ctx = context_with_path(plugin_dir(), "ref");
    kmux_backend_info b = find_info(ctx, "nodevice");
    cr_expect_eq(b.available, 0);
    cr_expect(strstr(b.reason, "allow-list") != NULL, "reason: %s", b.reason);
    cr_expect_eq(find_info(ctx, "ref").available, 1);
    TU_OK(kmux_context_destroy(ctx));
}

static void *create_destroy(void *arg) {
    (void)arg;
    for (int i = 0; i < 5; i++) {
        kmux_context *ctx = NULL;
        if (kmux_context_create(NULL, &ctx) != KMUX_OK) return (void *)1;
        kmux_device *d = NULL;
        if (kmux_device_find(ctx, "ref", &d) != KMUX_OK) return (void *)1;
        kmux_context_destroy(ctx);
    }
    return NULL;
}

Test(loader, contexts_are_created_concurrently_and_coexist) {
    pthread_t t[4];
    for (int i = 0; i < 4; i++)
        cr_assert_eq(pthread_create(&t[i], NULL, create_destroy, NULL), 0);
    for (int i = 0; i < 4; i++) {
        void *r = NULL;
        pthread_join(t[i], &r);
        cr_expect_null(r, "thread %d failed: %s", i, kmux_last_error());
    }
    kmux_context *a = tu_context(), *b = tu_context();
    kmux_device *da, *db;
    TU_OK(kmux_device_find(a, "ref", &da));
    TU_OK(kmux_device_find(b, "ref", &db));
    cr_expect_neq(da, db, "devices belong to their context");
    TU_OK(kmux_context_destroy(a));
    TU_OK(kmux_context_destroy(b));
}
