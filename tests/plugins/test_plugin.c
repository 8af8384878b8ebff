/*
 * test_plugin.c - deliberately unusable plugins for the loader tests, one per build flag:
 *   TEST_PLUGIN_WRONGABI: a complete table that claims ABI major KMUX_BACKEND_ABI_MAJOR + 1;
 *   TEST_PLUGIN_ABIV1:    a table with the layout of plugin ABI 1 (plan slots in the main table,
 *                         no device_caps), as a plugin built against the previous kmux would be;
 *   TEST_PLUGIN_NOENTRY:  exports no kmux_backend_entry at all;
 *   TEST_PLUGIN_NODEVICE: a valid plugin whose probe finds no device and says why;
 *   TEST_PLUGIN_HUGECOUNT: a probe that reports INT_MAX devices (the core once summed the counts
 *                         in an int and wrote past its device array);
 *   TEST_PLUGIN_AAIMPOSTOR: file libkmux-aaimpostor.so whose table calls itself "small" (the
 *                         usable test plugin, found after it in sorted order), and
 *   TEST_PLUGIN_AUTO:     file libkmux-auto.so, a built-in backend's name.
 * (small_plugin.c is the usable one with small capability limits.)
 */
#define _POSIX_C_SOURCE 200809L /* setenv (TEST_PLUGIN_AUTO) */
#include <stdio.h>

#include "kmux_backend.h"

#if defined(TEST_PLUGIN_AUTO)
#include <stdlib.h>
/* what a plugin's constructor may do before any check: the loader must never open this file */
__attribute__((constructor)) static void opened(void) {
    setenv("KMUX_TEST_AUTO_PLUGIN_OPENED", "1", 1);
}
#endif

#if !defined(TEST_PLUGIN_NOENTRY)
static int dummy_state;

static kmux_status t_init(const kmux_backend_host *host, void **state) {
    *state = &dummy_state;
    return KMUX_OK;
}
static void t_fini(void *state) {}
static kmux_status t_probe(void *state, int *count, char *reason, size_t size) {
#if defined(TEST_PLUGIN_HUGECOUNT)
    *count = 2147483647;
    reason[0] = '\0';
    return KMUX_OK;
#endif
    *count = 0;
    snprintf(reason, size, "test plugin: no device (by design)");
    return KMUX_OK;
}
static const char *t_version(void *state) {
    return "test 1.0";
}
#if defined(TEST_PLUGIN_ABIV1)
/* The function table of plugin ABI 1 (kmux_backend.h before ABI 2): the same head (size,
 * version, name), then the slots in their old order, with per-plan slots in the table. */
typedef struct kmux_backend_ops_v1 {
    uint32_t struct_size;
    uint16_t abi_major, abi_minor;
    const char *name;
    kmux_status (*init)(const kmux_backend_host *host, void **state);
    void (*fini)(void *state);
    kmux_status (*probe)(void *state, int *device_count, char *reason, size_t reason_size);
    const char *(*version)(void *state);
    kmux_status (*device_props)(void *state, int device, kmux_device_props *props);
    void *memory_stream_event_slots[12];
    kmux_status (*matmul_plan_create)(void *state, int device, const kmux_matmul_desc *desc,
                                      const kmux_plan_prefs *prefs, void **plan);
    kmux_status (*matmul_execute)(void *state, void *plan, void *stream,
                                  const kmux_matmul_args *args);
    void *conv_and_plan_slots[5];
    void (*plan_destroy)(void *state, void *plan);
    void *amp_slots[5];
} kmux_backend_ops_v1;

static const kmux_backend_ops_v1 ops_v1 = {
    .struct_size = sizeof(kmux_backend_ops_v1),
    .abi_major = 1,
    .abi_minor = 0,
    .name = "abiv1",
    .init = t_init,
    .fini = t_fini,
    .probe = t_probe,
    .version = t_version,
};

KMUX_BACKEND_EXPORT const kmux_backend_ops *kmux_backend_entry(void);
const kmux_backend_ops *kmux_backend_entry(void) {
    /* what the core reads first (size, ABI, name) is laid out alike in every ABI */
    return (const kmux_backend_ops *)(const void *)&ops_v1;
}
#else
static kmux_status t_unreachable(void) {
    return KMUX_ERR_INTERNAL;
}

#define STUB(type) ((type)(void (*)(void))t_unreachable)

static const kmux_backend_ops ops = {
    .struct_size = sizeof(kmux_backend_ops),
#if defined(TEST_PLUGIN_WRONGABI)
    .abi_major = KMUX_BACKEND_ABI_MAJOR + 1,
    .name = "wrongabi",
#else
    .abi_major = KMUX_BACKEND_ABI_MAJOR,
#if defined(TEST_PLUGIN_HUGECOUNT)
    .name = "hugecount",
#elif defined(TEST_PLUGIN_AAIMPOSTOR)
    .name = "small",
#elif defined(TEST_PLUGIN_AUTO)
    .name = "auto",
#else
    .name = "nodevice",
#endif
#endif
    .abi_minor = 0,
    .init = t_init,
    .fini = t_fini,
    .probe = t_probe,
    .version = t_version,
    /* never called: probe reports no device */
    .device_props = STUB(kmux_status(*)(void *, int, kmux_device_props *)),
    .device_caps = STUB(kmux_status(*)(void *, int, kmux_device_caps *)),
    .mem_alloc = STUB(kmux_status(*)(void *, int, size_t, void **)),
    .mem_free = STUB(kmux_status(*)(void *, int, void *)),
    .stream_create = STUB(kmux_status(*)(void *, int, void *, int, void **)),
    .stream_destroy = STUB(kmux_status(*)(void *, void *)),
    .stream_synchronize = STUB(kmux_status(*)(void *, void *)),
    .mem_copy =
        STUB(kmux_status(*)(void *, void *, void *, const void *, size_t, kmux_memcpy_kind)),
    .mem_set = STUB(kmux_status(*)(void *, void *, void *, int, size_t)),
    .event_create = STUB(kmux_status(*)(void *, int, void **)),
    .event_destroy = STUB(kmux_status(*)(void *, void *)),
    .event_record = STUB(kmux_status(*)(void *, void *, void *)),
    .event_synchronize = STUB(kmux_status(*)(void *, void *)),
    .event_elapsed_ms = STUB(kmux_status(*)(void *, void *, void *, float *)),
};

KMUX_BACKEND_EXPORT const kmux_backend_ops *kmux_backend_entry(void);
const kmux_backend_ops *kmux_backend_entry(void) {
    return &ops;
}
#endif
#else
KMUX_BACKEND_EXPORT int kmux_not_an_entry(void);
int kmux_not_an_entry(void) {
    return 0;
}
#endif
