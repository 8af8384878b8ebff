/*
 * test_handles.c - destroyed and foreign handles: double destruction of every handle kind, use
 * after destruction, handles of the wrong kind, pointers kmux never made, and a context destroyed
 * while its objects are alive. Every case returns KMUX_ERR_INVALID_ARGUMENT with a message that
 * names the function and the argument (before handles carried a tag these aborted or crashed).
 */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <string.h>

#include "test_util.h"

/* The status is INVALID_ARGUMENT and the message contains every given fragment. */
static void expect_msg(kmux_status st, const char *a, const char *b) {
    cr_expect_eq(st, KMUX_ERR_INVALID_ARGUMENT, "status %s: %s", kmux_status_str(st),
                 kmux_last_error());
    cr_expect(strstr(kmux_last_error(), a) != NULL, "\"%s\" not in \"%s\"", a, kmux_last_error());
    if (b)
        cr_expect(strstr(kmux_last_error(), b) != NULL, "\"%s\" not in \"%s\"", b,
                  kmux_last_error());
}

static kmux_plan *small_plan(kmux_device *dev) {
    kmux_matmul_desc d = KMUX_MATMUL_DESC_INIT;
    d.m = d.n = d.k = 2;
    d.lda = d.ldb = d.ldc = 2;
    d.a_type = d.b_type = d.c_type = KMUX_F32;
    d.compute_type = KMUX_COMPUTE_F32;
    kmux_plan *p = NULL;
    TU_OK(kmux_matmul_plan_create(dev, &d, NULL, &p));
    return p;
}

static kmux_device *ref_of(kmux_context *ctx) {
    kmux_device *dev = NULL;
    TU_OK(kmux_device_find(ctx, "ref", &dev));
    return dev;
}

Test(handles, double_plan_destroy) {
    kmux_context *ctx = tu_context();
    kmux_plan *p = small_plan(ref_of(ctx));
    TU_OK(kmux_plan_destroy(p));
    expect_msg(kmux_plan_destroy(p), "kmux_plan_destroy: plan", "was destroyed");
    kmux_plan_info info;
    expect_msg(kmux_plan_info_get(p, &info), "kmux_plan_info_get: plan", "was destroyed");
    expect_msg(kmux_plan_next_impl(p), "kmux_plan_next_impl: plan", "was destroyed");
    TU_OK(kmux_context_destroy(ctx));
}

Test(handles, double_stream_destroy_and_gemm_on_destroyed_stream) {
    kmux_context *ctx = tu_context();
    kmux_stream *s = NULL;
    TU_OK(kmux_stream_create(ref_of(ctx), &s));
    TU_OK(kmux_stream_destroy(s));
    expect_msg(kmux_stream_destroy(s), "kmux_stream_destroy: stream", "was destroyed");
    float A[4] = {1, 2, 3, 4}, C[4] = {0}, one = 1, zero = 0;
    expect_msg(kmux_gemm_ex(s, KMUX_COL_MAJOR, KMUX_NO_TRANS, KMUX_NO_TRANS, 2, 2, 2, &one, A,
                            KMUX_F32, 2, A, KMUX_F32, 2, &zero, C, KMUX_F32, 2, KMUX_COMPUTE_F32),
               "kmux_gemm_ex: stream", "was destroyed");
    expect_msg(kmux_stream_synchronize(s), "kmux_stream_synchronize: stream", "was destroyed");
    expect_msg(kmux_memset(s, C, 0, sizeof C), "kmux_memset: stream", "was destroyed");
    cr_expect_null(kmux_stream_device(s));
    TU_OK(kmux_context_destroy(ctx));
}

Test(handles, double_event_destroy) {
    kmux_context *ctx = tu_context();
    kmux_device *dev = ref_of(ctx);
    kmux_event *e = NULL;
    kmux_stream *s = NULL;
    TU_OK(kmux_event_create(dev, &e));
    TU_OK(kmux_stream_create(dev, &s));
    TU_OK(kmux_event_record(e, s));
    TU_OK(kmux_event_destroy(e));
    expect_msg(kmux_event_destroy(e), "kmux_event_destroy: event", "was destroyed");
    expect_msg(kmux_event_synchronize(e), "kmux_event_synchronize: event", "was destroyed");
    expect_msg(kmux_event_record(e, s), "kmux_event_record: event", "was destroyed");
    TU_OK(kmux_stream_destroy(s));
    TU_OK(kmux_context_destroy(ctx));
}

Test(handles, double_context_destroy_and_use_after) {
    kmux_context *ctx = tu_context();
    kmux_device *dev = ref_of(ctx);
    TU_OK(kmux_context_destroy(ctx));
    expect_msg(kmux_context_destroy(ctx), "kmux_context_destroy: ctx", "was destroyed");
    int n = 0;
    expect_msg(kmux_device_count(ctx, &n), "kmux_device_count: ctx", "was destroyed");
    kmux_stream *s = NULL;
    /* The context's devices went with it. */
    expect_msg(kmux_stream_create(dev, &s), "kmux_stream_create: dev", "was destroyed");
    cr_expect_null(s);
}

Test(handles, wrong_kind_and_foreign_pointers) {
    kmux_context *ctx = tu_context();
    kmux_device *dev = ref_of(ctx);
    kmux_stream *s = NULL;
    TU_OK(kmux_stream_create(dev, &s));
    kmux_plan *p = small_plan(dev);
    /* a plan passed as a stream, a stream as a plan */
    expect_msg(kmux_stream_synchronize((kmux_stream *)p), "kmux_stream_synchronize: stream",
               "is not a kmux_stream (it is a kmux_plan)");
    expect_msg(kmux_plan_destroy((kmux_plan *)s), "kmux_plan_destroy: plan",
               "is not a kmux_plan (it is a kmux_stream)");
    /* a pointer kmux never made: refused without reading it */
    double junk[16] = {0};
    expect_msg(kmux_stream_destroy((kmux_stream *)junk), "kmux_stream_destroy: stream",
               "not a handle kmux made");
    expect_msg(kmux_plan_destroy((kmux_plan *)(uintptr_t)0x10), "kmux_plan_destroy: plan",
               "is not a kmux_plan");
    kmux_device_props props;
    expect_msg(kmux_device_props_get((kmux_device *)ctx, &props), "kmux_device_props_get: dev",
               "is not a kmux_device (it is a kmux_context)");
    TU_OK(kmux_plan_destroy(p));
    TU_OK(kmux_stream_destroy(s));
    TU_OK(kmux_context_destroy(ctx));
}

Test(handles, context_destroy_with_live_objects_destroys_nothing) {
    kmux_context *ctx = tu_context();
    kmux_device *dev = ref_of(ctx);
    kmux_stream *s1 = NULL, *s2 = NULL;
    kmux_event *e = NULL;
    void *mem = NULL;
    TU_OK(kmux_stream_create(dev, &s1));
    TU_OK(kmux_stream_create(dev, &s2));
    TU_OK(kmux_event_create(dev, &e));
    TU_OK(kmux_malloc(dev, 64, &mem));
    kmux_plan *p = small_plan(dev);
    expect_msg(kmux_context_destroy(ctx), "1 plan, 2 streams, 1 event, 1 memory block",
               "nothing was destroyed");
    /* still usable */
    float A[4] = {1, 2, 3, 4}, C[4] = {0}, one = 1, zero = 0;
    TU_OK(kmux_gemm_ex(s1, KMUX_COL_MAJOR, KMUX_NO_TRANS, KMUX_NO_TRANS, 2, 2, 2, &one, A, KMUX_F32,
                       2, A, KMUX_F32, 2, &zero, C, KMUX_F32, 2, KMUX_COMPUTE_F32));
    cr_expect_eq(C[0], 7.0f);
    TU_OK(kmux_plan_destroy(p));
    TU_OK(kmux_stream_destroy(s1));
    TU_OK(kmux_stream_destroy(s2));
    TU_OK(kmux_event_destroy(e));
    expect_msg(kmux_context_destroy(ctx), "1 memory block", NULL);
    TU_OK(kmux_free(dev, mem));
    TU_OK(kmux_context_destroy(ctx));
}

Test(handles, host_blocks_count_as_live_and_a_destroyed_device_is_refused) {
    kmux_context *ctx = tu_context();
    kmux_device *dev = ref_of(ctx);
    void *h = NULL;
    TU_OK(kmux_host_malloc(dev, 64, &h));
    expect_msg(kmux_context_destroy(ctx), "1 memory block", "nothing was destroyed");
    TU_OK(kmux_host_free(dev, h));
    TU_OK(kmux_context_destroy(ctx));
    /* the device went with its context */
    expect_msg(kmux_host_malloc(dev, 64, &h), "kmux_host_malloc", "dev");
    expect_msg(kmux_host_free(dev, h), "kmux_host_free", "dev");
}

Test(handles, a_cpu_auto_conv_plan_counts_once) {
    kmux_context *ctx = tu_context();
    kmux_device *dev = NULL;
    if (kmux_device_find(ctx, "cpu:auto", &dev) != KMUX_OK) {
        TU_OK(kmux_context_destroy(ctx));
        cr_skip_test("no cpu:auto device here");
    }
    kmux_conv2d_desc d = KMUX_CONV2D_DESC_INIT;
    d.n = 1, d.c = 2, d.h = d.w = 4, d.k = 2, d.r = d.s = 3;
    kmux_plan *p = NULL;
    TU_OK(kmux_conv2d_plan_create(dev, &d, NULL, &p));
    expect_msg(kmux_context_destroy(ctx), "1 plan of this context", NULL);
    TU_OK(kmux_plan_destroy(p));
    TU_OK(kmux_context_destroy(ctx));
}

Test(handles, recycled_memory_keeps_detecting_within_the_quarantine) {
    kmux_context *ctx = tu_context();
    kmux_device *dev = ref_of(ctx);
    kmux_stream *first = NULL;
    TU_OK(kmux_stream_create(dev, &first));
    TU_OK(kmux_stream_destroy(first));
    /* Many create/destroy cycles later (more than the quarantine holds) the library still works
     * and never hands out the stale pointer while it is quarantined. */
    for (int i = 0; i < 32; i++) {
        kmux_stream *s = NULL;
        TU_OK(kmux_stream_create(dev, &s));
        cr_expect_neq((void *)s, (void *)first);
        TU_OK(kmux_stream_destroy(s));
    }
    expect_msg(kmux_stream_destroy(first), "kmux_stream_destroy: stream", "was destroyed");
    for (int i = 0; i < 200; i++) {
        kmux_stream *s = NULL;
        TU_OK(kmux_stream_create(dev, &s));
        TU_OK(kmux_stream_destroy(s));
    }
    TU_OK(kmux_context_destroy(ctx));
}

/* kmux_free / kmux_host_free refuse what kmux did not return on that device, on every CPU
 * device and ref (issue 50: a double free or a static array aborted the process in free(), a
 * malloc'd block and another context's block returned KMUX_OK). The record is kmux's own
 * (dispatch/alloc_record.c), so every backend answers the same. */
Test(handles, free_refuses_what_kmux_did_not_return) {
    kmux_context *ctx = tu_context(), *other = tu_context();
    const char **ids = tu_device_ids(ctx);
    static float static_array[64];
    for (int i = 0; ids[i]; i++) {
        kmux_device *dev = tu_device(ctx, ids[i]), *odev = tu_device(other, ids[i]);
        kmux_device_props props;
        TU_OK(kmux_device_props_get(dev, &props));
        if (!props.is_host) continue; /* CPU devices and ref here; the GPUs in their fakes' tests */
        void *mem = NULL, *host = NULL, *omem = NULL;
        TU_OK(kmux_malloc(dev, 256, &mem));
        TU_OK(kmux_host_malloc(dev, 256, &host));
        TU_OK(kmux_malloc(odev, 256, &omem));
        /* a static array, a malloc'd block: refused, not handed to free() */
        expect_msg(kmux_free(dev, static_array),
                   "kmux_free: ptr =", "was not returned by kmux_malloc");
        void *m = malloc(32);
        expect_msg(kmux_free(dev, m), "kmux_free: ptr =", ids[i]);
        free(m);
        /* a block of the other kind */
        expect_msg(kmux_free(dev, host), "was returned by kmux_host_malloc", "kmux_host_free");
        expect_msg(kmux_host_free(dev, mem), "was returned by kmux_malloc", "kmux_free");
        /* another context's block: refused, and both contexts can still be destroyed */
        expect_msg(kmux_free(dev, omem), "of another context", ids[i]);
        TU_OK(kmux_free(dev, mem));
        TU_OK(kmux_host_free(dev, host));
        /* a double free */
        expect_msg(kmux_free(dev, mem), "was not returned by kmux_malloc", "freed already");
        expect_msg(kmux_host_free(dev, host), "was not returned by kmux_host_malloc", NULL);
        TU_OK(kmux_free(odev, omem));
    }
    /* another device of the same context */
    kmux_device *ref = tu_device(ctx, "ref");
    for (int i = 0; ids[i]; i++) {
        kmux_device *dev = tu_device(ctx, ids[i]);
        kmux_device_props props;
        TU_OK(kmux_device_props_get(dev, &props));
        if (dev == ref || !props.is_host) continue;
        void *mem = NULL;
        TU_OK(kmux_malloc(dev, 64, &mem));
        expect_msg(kmux_free(ref, mem), "was allocated on", "not on dev = ref");
        TU_OK(kmux_free(dev, mem));
    }
    TU_OK(kmux_context_destroy(other));
    TU_OK(kmux_context_destroy(ctx));
}

/* Many blocks at once, freed in another order: the record's growth and deletion keep every one. */
Test(handles, free_record_many_blocks) {
    kmux_context *ctx = tu_context();
    kmux_device *dev = ref_of(ctx);
    enum { N = 3000 };
    void **p = calloc(N, sizeof *p);
    for (int i = 0; i < N; i++)
        TU_OK(kmux_malloc(dev, 16 + (size_t)i % 7, &p[i]));
    for (int i = 0; i < N; i += 2)
        TU_OK(kmux_free(dev, p[i]));
    for (int i = 0; i < N; i += 2)
        cr_expect_eq(kmux_free(dev, p[i]), KMUX_ERR_INVALID_ARGUMENT);
    for (int i = N - 1; i > 0; i -= 2)
        TU_OK(kmux_free(dev, p[i]));
    free(p);
    TU_OK(kmux_context_destroy(ctx));
}
