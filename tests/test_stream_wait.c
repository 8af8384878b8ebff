/*
 * test_stream_wait.c - kmux_stream_wait_event (as cudaStreamWaitEvent with flags 0): its
 * argument errors, the host-side wait where a backend has no device-side one (CPU devices,
 * another backend's event), and the device-side order through the fake GPU plugin, whose
 * streams keep virtual clocks (tests/plugins/fake_gpu_plugin.c): a stream that waits on another
 * stream's event starts its next work when that event's work has finished. The HIP plugin's
 * hipStreamWaitEvent is tested in test_hip.c against the fake HIP runtime.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "test_util.h"

Test(stream_wait, bad_arguments_are_named) {
    kmux_context *ctx = tu_context();
    kmux_device *ref = NULL;
    kmux_stream *s = NULL;
    kmux_event *e = NULL;
    TU_OK(kmux_device_find(ctx, "ref", &ref));
    TU_OK(kmux_stream_create(ref, &s));
    TU_OK(kmux_event_create(ref, &e));
    TU_STATUS(KMUX_ERR_INVALID_ARGUMENT, kmux_stream_wait_event(NULL, e));
    cr_expect(strstr(kmux_last_error(), "kmux_stream_wait_event: stream is NULL") != NULL, "%s",
              kmux_last_error());
    TU_STATUS(KMUX_ERR_INVALID_ARGUMENT, kmux_stream_wait_event(s, NULL));
    cr_expect(strstr(kmux_last_error(), "event is NULL") != NULL, "%s", kmux_last_error());
    TU_STATUS(KMUX_ERR_INVALID_ARGUMENT, kmux_stream_wait_event(s, e));
    cr_expect(strstr(kmux_last_error(), "never recorded") != NULL, "%s", kmux_last_error());
    TU_STATUS(KMUX_ERR_INVALID_ARGUMENT, kmux_stream_wait_event((kmux_stream *)e, e));
    cr_expect(strstr(kmux_last_error(), "stream") != NULL, "%s", kmux_last_error());
    TU_OK(kmux_event_record(e, s));
    TU_OK(kmux_stream_wait_event(s, e));
    TU_OK(kmux_event_destroy(e));
    TU_STATUS(KMUX_ERR_INVALID_ARGUMENT, kmux_stream_wait_event(s, e));
    cr_expect(strstr(kmux_last_error(), "destroyed") != NULL, "%s", kmux_last_error());
    TU_OK(kmux_stream_destroy(s));
    TU_OK(kmux_context_destroy(ctx));
}

/* ref (no device-side wait: the core's host-side path) waiting on an event of another backend's
 * device, when one is built; else on ref's own. Data written before the event is there after. */
Test(stream_wait, host_side_wait_across_backends) {
    kmux_context *ctx = tu_context();
    kmux_device *ref = NULL, *other = NULL;
    TU_OK(kmux_device_find(ctx, "ref", &ref));
    if (kmux_device_find(ctx, "cpu:openblas", &other) != KMUX_OK &&
        kmux_device_find(ctx, "cpu:onednn", &other) != KMUX_OK)
        other = ref;
    kmux_stream *s_ref = NULL, *s_other = NULL;
    kmux_event *e = NULL;
    TU_OK(kmux_stream_create(ref, &s_ref));
    TU_OK(kmux_stream_create(other, &s_other));
    TU_OK(kmux_event_create(other, &e));
    float src[64], mid[64], dst[64];
    for (int i = 0; i < 64; i++)
        src[i] = (float)i;
    TU_OK(kmux_memcpy(s_other, mid, src, sizeof mid, KMUX_MEMCPY_HOST_TO_HOST));
    TU_OK(kmux_event_record(e, s_other));
    TU_OK(kmux_stream_wait_event(s_ref, e));
    TU_OK(kmux_memcpy(s_ref, dst, mid, sizeof dst, KMUX_MEMCPY_HOST_TO_HOST));
    TU_OK(kmux_stream_synchronize(s_ref));
    cr_expect(memcmp(dst, src, sizeof dst) == 0);
    TU_OK(kmux_event_destroy(e));
    TU_OK(kmux_stream_destroy(s_ref));
    TU_OK(kmux_stream_destroy(s_other));
    TU_OK(kmux_context_destroy(ctx));
}

/* Virtual time of the fake GPU: s1 copies 1 MiB host-to-device and records e1; s2, idle at t = 0
 * (e0), waits on e1 and records e2. e0 -> e2 must be the copy's time (1 MiB at 25 GB/s, the
 * plugin's default); without the wait it would be 0. */
Test(stream_wait, device_side_wait_orders_streams) {
    const char *dir = getenv("KMUX_TEST_PLUGIN_DIR");
    char path[1024];
    snprintf(path, sizeof path, "%s/libkmux-fakegpu.so", dir ? dir : "");
    if (!dir || access(path, R_OK) != 0) cr_skip_test("%s not built", path);
    unsetenv("KMUX_FAKE_GPU_H2D_GBPS");
    kmux_context_options opt = KMUX_CONTEXT_OPTIONS_INIT;
    opt.backend_path = dir;
    opt.backends = "fakegpu";
    kmux_context *ctx = NULL;
    TU_OK(kmux_context_create(&opt, &ctx));
    kmux_device *dev = NULL;
    TU_OK(kmux_device_find(ctx, "fakegpu:0", &dev));
    kmux_stream *s1 = NULL, *s2 = NULL;
    kmux_event *e0 = NULL, *e1 = NULL, *e2 = NULL;
    TU_OK(kmux_stream_create(dev, &s1));
    TU_OK(kmux_stream_create(dev, &s2));
    TU_OK(kmux_event_create(dev, &e0));
    TU_OK(kmux_event_create(dev, &e1));
    TU_OK(kmux_event_create(dev, &e2));
    const size_t bytes = (size_t)1 << 20;
    void *host = calloc(1, bytes), *d = NULL;
    cr_assert(host);
    TU_OK(kmux_malloc(dev, bytes, &d));
    TU_OK(kmux_event_record(e0, s2));
    TU_OK(kmux_memcpy(s1, d, host, bytes, KMUX_MEMCPY_HOST_TO_DEVICE));
    TU_OK(kmux_event_record(e1, s1));
    TU_OK(kmux_stream_wait_event(s2, e1));
    TU_OK(kmux_event_record(e2, s2));
    float ms = -1.0f;
    TU_OK(kmux_event_elapsed_ms(e0, e2, &ms));
    double want = (double)bytes / 25e9 * 1e3;
    cr_expect(ms > 0.99 * want && ms < 1.01 * want, "s2 waited %g ms, want %g ms (the copy on s1)",
              ms, want);
    TU_OK(kmux_free(dev, d));
    free(host);
    TU_OK(kmux_event_destroy(e0));
    TU_OK(kmux_event_destroy(e1));
    TU_OK(kmux_event_destroy(e2));
    TU_OK(kmux_stream_destroy(s1));
    TU_OK(kmux_stream_destroy(s2));
    TU_OK(kmux_context_destroy(ctx));
}
