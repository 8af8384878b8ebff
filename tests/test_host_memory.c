/*
 * test_host_memory.c - kmux_host_malloc / kmux_host_free: argument checks, and on every host
 * device (ref, the CPU backends) 64-byte aligned host memory that kmux_memcpy takes as the host
 * side of a copy. The page-locked path of GPU plugins is tested in test_hip.c (fake runtime).
 */
#include <criterion/criterion.h>
#include <stdint.h>
#include <string.h>

#include "kmux.h"
#include "test_util.h"

Test(host_memory, arguments) {
    kmux_context *ctx = tu_context();
    kmux_device *dev = NULL;
    TU_OK(kmux_device_find(ctx, "ref", &dev));
    void *p = (void *)&p;
    TU_STATUS(KMUX_ERR_INVALID_ARGUMENT, kmux_host_malloc(NULL, 16, &p));
    cr_expect(strstr(kmux_last_error(), "dev is NULL") != NULL, "'%s'", kmux_last_error());
    TU_STATUS(KMUX_ERR_INVALID_ARGUMENT, kmux_host_malloc(dev, 16, NULL));
    cr_expect(strstr(kmux_last_error(), "ptr is NULL") != NULL, "'%s'", kmux_last_error());
    TU_OK(kmux_host_malloc(dev, 0, &p));
    cr_expect_null(p, "bytes == 0 must give NULL");
    TU_STATUS(KMUX_ERR_INVALID_ARGUMENT, kmux_host_free(NULL, p));
    cr_expect(strstr(kmux_last_error(), "kmux_host_free: dev is NULL") != NULL, "'%s'",
              kmux_last_error());
    TU_OK(kmux_host_free(dev, NULL));
    TU_STATUS(KMUX_ERR_OUT_OF_MEMORY, kmux_host_malloc(dev, SIZE_MAX - 8, &p));
    cr_expect_null(p);
    kmux_context_destroy(ctx);
}

/* Every available host device: aligned, writable, usable by kmux_memcpy both ways. */
Test(host_memory, cpu_devices) {
    kmux_context *ctx = tu_context();
    int n = 0, tested = 0;
    TU_OK(kmux_device_count(ctx, &n));
    for (int i = 0; i < n; i++) {
        kmux_device *dev = NULL;
        TU_OK(kmux_device_get(ctx, i, &dev));
        kmux_device_props props;
        TU_OK(kmux_device_props_get(dev, &props));
        if (!props.is_host) continue;
        enum { N = 1000 };
        unsigned char *h = NULL, *back = NULL, *d = NULL;
        TU_OK(kmux_host_malloc(dev, N, (void **)&h));
        TU_OK(kmux_host_malloc(dev, N, (void **)&back));
        cr_assert(h && back);
        cr_expect_eq((uintptr_t)h % 64, 0, "%s: %p not 64-byte aligned", props.id, (void *)h);
        for (int j = 0; j < N; j++)
            h[j] = (unsigned char)(j * 13 + 1);
        TU_OK(kmux_malloc(dev, N, (void **)&d));
        kmux_stream *s = NULL;
        TU_OK(kmux_stream_create(dev, &s));
        TU_OK(kmux_memcpy(s, d, h, N, KMUX_MEMCPY_HOST_TO_DEVICE));
        TU_OK(kmux_memcpy(s, back, d, N, KMUX_MEMCPY_DEVICE_TO_HOST));
        TU_OK(kmux_stream_synchronize(s));
        cr_expect_eq(memcmp(h, back, N), 0, "%s: round trip differs", props.id);
        TU_OK(kmux_stream_destroy(s));
        TU_OK(kmux_free(dev, d));
        TU_OK(kmux_host_free(dev, h));
        TU_OK(kmux_host_free(dev, back));
        tested++;
    }
    cr_assert(tested >= 1, "no host device (ref is always there)");
    kmux_context_destroy(ctx);
}
