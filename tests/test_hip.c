/*
 * test_hip.c - the HIP plugin (libkmux-hip.so) without an AMD GPU.
 *
 * hip_listing: with no HIP runtime (ctest sets KMUX_HIP_RUNTIME to nothing), the backend loads
 *   and is listed unavailable with the true reason, which lists what was tried ("HIP runtime not
 *   found (KMUX_HIP_RUNTIME not set; no libamdhip64.so.7, libamdhip64.so.6 or libamdhip64.so.5
 *   on the loader path or in /opt/rocm/lib)"); a KMUX_HIP_RUNTIME that cannot be opened is the
 *   answer, not a step before the search.
 * hip_dev: any HIP device: against the fake runtime in CI, against a real one on an AMD machine
 *   (tests/gpu/run_hip.sh; ctest test_hip_device, skipped without an AMD GPU).
 * hip_fake: against the fake HIP runtime of tests/fake_hip (KMUX_HIP_RUNTIME): the plugin's host
 *   code (dlopen, attribute queries, architecture, code-object loading, launch logic, streams,
 *   events, the runtime and rocBLAS search, the ROCm 5 / 6 / 7 properties calls, target ids) for
 *   real, and the kernels of kernels/gpu run through the GPU emulator; every result
 *   is compared with ref bit for bit (GEMM and convolution: kmux's own kernels, launched from the
 *   code objects by name). Also: the honest refusals (no AMD GPU, an architecture the plugin
 *   carries no code object for, OCP fp8 on gfx942).
 * This is "emulated", not "run on an AMD GPU".
 */
#include <criterion/criterion.h>
#include <dlfcn.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "kmux.h"
#include "test_util.h"

static int hip_backend(kmux_context *ctx, kmux_backend_info *out) {
    int n = 0;
    TU_OK(kmux_backend_count(ctx, &n));
    for (int i = 0; i < n; i++) {
        TU_OK(kmux_backend_info_get(ctx, i, out));
        if (strcmp(out->name, "hip") == 0) return 1;
    }
    return 0;
}

/* Is any HIP runtime the plugin could find by soname or under /opt/rocm here? */
static const char *real_runtime(void) {
    static const char *const names[] = {"libamdhip64.so.7",
                                        "libamdhip64.so.6",
                                        "libamdhip64.so.5",
                                        "/opt/rocm/lib/libamdhip64.so.7",
                                        "/opt/rocm/lib/libamdhip64.so.6",
                                        "/opt/rocm/lib/libamdhip64.so.5"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        void *rt = dlopen(names[i], RTLD_LAZY | RTLD_LOCAL);
        if (rt) {
            dlclose(rt);
            return names[i];
        }
    }
    return NULL;
}

Test(hip_listing, unavailable_with_the_true_reason) {
    const char *rt = real_runtime();
    if (rt) cr_skip_test("this machine has a HIP runtime (%s): not the no-runtime case", rt);
    unsetenv("ROCM_PATH");
    kmux_context *ctx = tu_context();
    kmux_backend_info bi;
    cr_assert(hip_backend(ctx, &bi), "libkmux-hip.so was built but no 'hip' backend is listed");
    cr_assert(strstr(bi.path, "libkmux-hip.so") != NULL, "path '%s'", bi.path);
    cr_assert_eq(bi.available, 0);
    cr_assert_eq(bi.device_count, 0);
    /* what was tried, in order: ROCm 7, 6, 5 by soname, then the default install folder */
    cr_assert_str_eq(bi.reason,
                     "HIP runtime not found (KMUX_HIP_RUNTIME not set; no libamdhip64.so.7, "
                     "libamdhip64.so.6 or libamdhip64.so.5 on the loader path or in "
                     "/opt/rocm/lib)");
    kmux_device *dev = NULL;
    TU_STATUS(KMUX_ERR_NOT_FOUND, kmux_device_find(ctx, "hip:0", &dev));
    kmux_context_destroy(ctx);
}

/* $ROCM_PATH/lib is searched (an install without ROCm's ld.so.conf step) and named. */
Test(hip_listing, rocm_path_is_searched) {
    const char *rt = real_runtime();
    if (rt) cr_skip_test("this machine has a HIP runtime (%s): not the no-runtime case", rt);
    setenv("ROCM_PATH", "/nonexistent/rocm-7.0.0/", 1);
    kmux_context *ctx = tu_context();
    kmux_backend_info bi;
    cr_assert(hip_backend(ctx, &bi));
    cr_assert_eq(bi.available, 0);
    cr_assert(strstr(bi.reason, "on the loader path, in /nonexistent/rocm-7.0.0/lib or in "
                                "/opt/rocm/lib") != NULL,
              "reason '%s'", bi.reason);
    kmux_context_destroy(ctx);
}

/* An override that cannot be opened makes the plugin unavailable with that reason: it is not
 * followed by the search (which, on a machine with ROCm, would open the real runtime instead of
 * the one asked for). */
Test(hip_listing, failing_override_is_the_answer) {
    setenv("KMUX_HIP_RUNTIME", "/nonexistent/libkmux-fake-hip.so", 1);
    kmux_context *ctx = tu_context();
    kmux_backend_info bi;
    cr_assert(hip_backend(ctx, &bi));
    cr_assert_eq(bi.available, 0);
    cr_assert(strncmp(bi.reason,
                      "HIP runtime not found (KMUX_HIP_RUNTIME=/nonexistent/libkmux-fake-hip.so: ",
                      74) == 0,
              "reason '%s'", bi.reason);
    cr_assert(strstr(bi.reason, "no search follows") != NULL, "reason '%s'", bi.reason);
    cr_assert(strstr(bi.reason, "libamdhip64") == NULL, "the search ran: '%s'", bi.reason);
    kmux_context_destroy(ctx);
}

/* A truncated runtime (SIGBUS inside dlopen before) and a FIFO (a hang) as KMUX_HIP_RUNTIME are
 * refused with the reason (issue 50). A truncated ELF is made from a test plugin. */
Test(hip_listing, truncated_or_fifo_runtime_is_refused, .timeout = 60) {
    const char *plugins = getenv("KMUX_TEST_PLUGIN_DIR");
    cr_assert(plugins && plugins[0], "KMUX_TEST_PLUGIN_DIR not set (run through ctest)");
    char tmp[] = "/tmp/kmux-hip-rt-XXXXXX", src[1100], cut[300], fifo[300];
    cr_assert_not_null(mkdtemp(tmp));
    snprintf(src, sizeof src, "%s/libkmux-small.so", plugins);
    snprintf(cut, sizeof cut, "%s/libamdhip64.so.6", tmp);
    snprintf(fifo, sizeof fifo, "%s/fifo.so", tmp);
    cr_assert_eq(tu_copy_prefix(src, cut, 2000), 2000);
    cr_assert_eq(mkfifo(fifo, 0600), 0);
    const char *files[2] = {cut, fifo}, *why[2] = {"truncated: 2000 bytes", "a FIFO, not opened"};
    for (int i = 0; i < 2; i++) {
        setenv("KMUX_HIP_RUNTIME", files[i], 1);
        kmux_context *ctx = tu_context();
        kmux_backend_info bi;
        cr_assert(hip_backend(ctx, &bi));
        cr_expect_eq(bi.available, 0);
        cr_expect(strstr(bi.reason, files[i]) && strstr(bi.reason, why[i]), "reason '%s'",
                  bi.reason);
        kmux_context_destroy(ctx);
    }
    unlink(cut), unlink(fifo), rmdir(tmp);
}

/* A ROCM_PATH too long for the search's buffer was cut and <first 319 characters>/lib searched,
 * another folder (issue 50): it is reported and not searched at all. */
Test(hip_listing, too_long_rocm_path_is_not_searched_shorter) {
    char rp[1400];
    memset(rp, 'r', sizeof rp - 1);
    rp[0] = '/';
    rp[sizeof rp - 1] = '\0';
    setenv("ROCM_PATH", rp, 1);
    unsetenv("KMUX_HIP_RUNTIME");
    kmux_context *ctx = tu_context();
    kmux_backend_info bi;
    cr_assert(hip_backend(ctx, &bi));
    cr_expect_eq(bi.available, 0);
    cr_expect(strstr(bi.reason, "ROCM_PATH (1399 characters): too long, not searched") != NULL,
              "reason '%s'", bi.reason);
    cr_expect(strstr(bi.reason, "rrrr") == NULL, "a shortened ROCM_PATH was searched: '%s'",
              bi.reason);
    kmux_context_destroy(ctx);
    unsetenv("ROCM_PATH");
}

/* ---- against the fake runtime ---------------------------------------------------------------- */

static void need_code_objects(void) {
#if !KMUX_TEST_HIP_CODE_OBJECTS
    cr_skip_test("kmux-hip was built without code objects (no gfx942 toolchain at configure)");
#endif
}

/* hip:0 of ctx: on the fake runtime (KMUX_HIP_RUNTIME set) it must be there; on the real one
 * (tests/gpu/run_hip.sh, ctest test_hip_device) the test is skipped without an AMD GPU. */
static kmux_device *hip0(kmux_context *ctx) {
    need_code_objects();
    kmux_backend_info bi;
    cr_assert(hip_backend(ctx, &bi));
    const char *fake = getenv("KMUX_HIP_RUNTIME");
    if (!bi.available && !(fake && fake[0])) cr_skip_test("no HIP device: %s", bi.reason);
    cr_assert(bi.available, "hip unavailable with the fake runtime: %s", bi.reason);
    kmux_device *dev = NULL;
    TU_OK(kmux_device_find(ctx, "hip:0", &dev));
    return dev;
}

Test(hip_fake, props_are_those_of_the_architecture) {
    kmux_context *ctx = tu_context();
    kmux_device *dev = hip0(ctx);
    kmux_device_props p;
    TU_OK(kmux_device_props_get(dev, &p));
    cr_expect_str_eq(p.backend, "hip");
    cr_expect_str_eq(p.vendor, "AMD");
    cr_expect_str_eq(p.arch, "gfx942");
    cr_expect(strstr(p.name, "MI300X") != NULL, "name '%s'", p.name);
    cr_expect_eq(p.is_host, 0);
    cr_expect_eq(p.compute_units, 304);
    cr_expect_eq(p.memory_bytes, (int64_t)192 << 30);
    cr_expect(strstr(p.driver_version, "HIP runtime 6.2") != NULL, "'%s'", p.driver_version);
    cr_expect(strstr(p.library_version, "gfx942") != NULL, "'%s'", p.library_version);
    /* dtype_support is what plan creation accepts: the own GEMM kernel's types, fp8 in gfx942's
     * FNUZ formats, never OCP fp8 on gfx942 */
    cr_expect(p.dtype_support[KMUX_F32] && p.dtype_support[KMUX_F16] && p.dtype_support[KMUX_BF16]);
    cr_expect(p.dtype_support[KMUX_F64] && p.dtype_support[KMUX_I8]);
    cr_expect(p.dtype_support[KMUX_F8_E4M3_FNUZ] && p.dtype_support[KMUX_F8_E5M2_FNUZ]);
    cr_expect(!p.dtype_support[KMUX_F8_E4M3] && !p.dtype_support[KMUX_F8_E5M2]);
    cr_expect(p.peak_flops[KMUX_F8_E4M3_FNUZ] > p.peak_flops[KMUX_F16], "fnuz peak %g",
              p.peak_flops[KMUX_F8_E4M3_FNUZ]);
    /* MI300X: 304 CU x 2048 flop/clk x 2.1 GHz = 1307.4 TFLOP/s f16 (workloads/peaks.csv) */
    cr_expect(fabs(p.peak_flops[KMUX_F16] / 1e12 - 1307.4) < 0.5, "f16 peak %g",
              p.peak_flops[KMUX_F16]);
    cr_expect(fabs(p.peak_flops[KMUX_F32] / 1e12 - 163.4) < 0.5);
    cr_expect_eq(p.peak_flops[KMUX_F8_E4M3], 0.0);
    cr_expect(fabs(p.mem_bandwidth_gbps - 5300.0) < 1.0);
    kmux_context_destroy(ctx);
}

/* kmux_device_diag_get through the plugin's device_diag slot: the architecture the fake runtime
 * reports, the code objects this build carries (gfx942 among them), the opened runtime. */
Test(hip_fake, diag_facts) {
    kmux_context *ctx = tu_context();
    kmux_device *dev = hip0(ctx);
    kmux_device_diag d;
    memset(&d, 0, sizeof d);
    d.struct_size = sizeof d;
    TU_OK(kmux_device_diag_get(dev, &d));
    /* the full target id (gcnArchName through hipGetDevicePropertiesR0600 on ROCm 6) */
    if (getenv("KMUX_HIP_RUNTIME") && getenv("KMUX_HIP_RUNTIME")[0])
        cr_expect_str_eq(d.target_id, "gfx942:sramecc+:xnack-");
    else
        cr_expect(strncmp(d.target_id, "gfx", 3) == 0, "'%s'", d.target_id);
    cr_expect(strstr(d.code_objects, "gfx942") != NULL, "'%s'", d.code_objects);
    cr_expect(strncmp(d.runtime_version, "HIP 6.2.", 8) == 0, "'%s'", d.runtime_version);
    const char *fake = getenv("KMUX_HIP_RUNTIME");
    if (fake && fake[0]) /* the runtime's file first, then AMD's libraries with versions */
        cr_expect(strncmp(d.libraries, fake, strlen(fake)) == 0 &&
                      strncmp(d.libraries + strlen(fake), ", ", 2) == 0 &&
                      strstr(d.libraries, "rocBLAS ") && strstr(d.libraries, "hipBLASLt") &&
                      strstr(d.libraries, "MIOpen"),
                  "'%s'", d.libraries);
    else
        cr_expect(strstr(d.libraries, "libamdhip64.so") != NULL, "'%s'", d.libraries);
    cr_expect(strstr(d.device_nodes, "/dev/kfd") != NULL, "'%s'", d.device_nodes);
    cr_expect_eq(d.ecc_enabled, -1);
    kmux_context_destroy(ctx);
}

Test(hip_dev, memory_streams_events) {
    kmux_context *ctx = tu_context();
    kmux_device *dev = hip0(ctx);
    kmux_stream *s = NULL;
    TU_OK(kmux_stream_create(dev, &s));
    unsigned char host[1000], back[1000];
    for (int i = 0; i < 1000; i++)
        host[i] = (unsigned char)(i * 7 + 3);
    void *a = NULL, *b = NULL;
    TU_OK(kmux_malloc(dev, sizeof host, &a));
    TU_OK(kmux_malloc(dev, sizeof host, &b));
    kmux_event *e0 = NULL, *e1 = NULL;
    TU_OK(kmux_event_create(dev, &e0));
    TU_OK(kmux_event_create(dev, &e1));
    TU_OK(kmux_event_record(e0, s));
    TU_OK(kmux_memcpy(s, a, host, sizeof host, KMUX_MEMCPY_HOST_TO_DEVICE));
    TU_OK(kmux_memcpy(s, b, a, sizeof host, KMUX_MEMCPY_DEVICE_TO_DEVICE));
    TU_OK(kmux_memset(s, b, 0x5a, 10));
    TU_OK(kmux_memcpy(s, back, b, sizeof back, KMUX_MEMCPY_DEVICE_TO_HOST));
    TU_OK(kmux_event_record(e1, s));
    TU_OK(kmux_stream_synchronize(s));
    for (int i = 0; i < 1000; i++)
        cr_assert_eq(back[i], i < 10 ? 0x5a : host[i], "byte %d", i);
    float ms = -1.0f;
    TU_OK(kmux_event_elapsed_ms(e0, e1, &ms));
    cr_expect(ms >= 0.0f, "elapsed %g ms", ms);
    TU_OK(kmux_event_destroy(e0));
    TU_OK(kmux_event_destroy(e1));
    TU_OK(kmux_free(dev, a));
    TU_OK(kmux_free(dev, b));
    TU_OK(kmux_stream_destroy(s));
    kmux_context_destroy(ctx);
}

/* kmux_stream_wait_event on hip:0 is hipStreamWaitEvent on the stream's device (the fake counts
 * the calls: the device-side wait, not the core's host-side fallback), and data written on one
 * stream before the event is read by the other after it. */
Test(hip_dev, stream_waits_on_another_streams_event) {
    kmux_context *ctx = tu_context();
    kmux_device *dev = hip0(ctx);
    int (*waits)(void) = NULL;
    const char *fake = getenv("KMUX_HIP_RUNTIME");
    void *h = fake && fake[0] ? dlopen(fake, RTLD_NOW | RTLD_NOLOAD) : NULL;
    if (h) *(void **)&waits = dlsym(h, "kmux_fake_hip_stream_waits");
    int before = waits ? waits() : 0;
    kmux_stream *s1 = NULL, *s2 = NULL;
    kmux_event *e = NULL;
    TU_OK(kmux_stream_create(dev, &s1));
    TU_OK(kmux_stream_create(dev, &s2));
    TU_OK(kmux_event_create(dev, &e));
    unsigned char host[256], back[256];
    for (int i = 0; i < 256; i++)
        host[i] = (unsigned char)(255 - i);
    void *a = NULL, *b = NULL;
    TU_OK(kmux_malloc(dev, sizeof host, &a));
    TU_OK(kmux_malloc(dev, sizeof host, &b));
    TU_OK(kmux_memcpy(s1, a, host, sizeof host, KMUX_MEMCPY_HOST_TO_DEVICE));
    TU_OK(kmux_event_record(e, s1));
    TU_OK(kmux_stream_wait_event(s2, e));
    TU_OK(kmux_memcpy(s2, b, a, sizeof host, KMUX_MEMCPY_DEVICE_TO_DEVICE));
    TU_OK(kmux_memcpy(s2, back, b, sizeof back, KMUX_MEMCPY_DEVICE_TO_HOST));
    TU_OK(kmux_stream_synchronize(s2));
    cr_expect(memcmp(back, host, sizeof back) == 0);
    if (waits)
        cr_expect_eq(waits(), before + 1, "hipStreamWaitEvent called %d times, want 1",
                     waits() - before);
    else
        cr_log_info("not the fake runtime: hipStreamWaitEvent calls not counted");
    if (h) dlclose(h);
    TU_OK(kmux_free(dev, a));
    TU_OK(kmux_free(dev, b));
    TU_OK(kmux_event_destroy(e));
    TU_OK(kmux_stream_destroy(s1));
    TU_OK(kmux_stream_destroy(s2));
    kmux_context_destroy(ctx);
}

/* kmux_host_malloc goes through hipHostMalloc: pinned memory round-trips through the device,
 * and neither free takes the other's pointer: kmux's allocation record refuses it before the
 * runtime is asked (dispatch/alloc_record.c), on any runtime. */
Test(hip_dev, pinned_host_memory) {
    kmux_context *ctx = tu_context();
    kmux_device *dev = hip0(ctx);
    enum { N = 4096 };
    unsigned char *h = NULL, *back = NULL;
    void *d = NULL;
    TU_OK(kmux_host_malloc(dev, N, (void **)&h));
    TU_OK(kmux_host_malloc(dev, N, (void **)&back));
    cr_assert(h && back);
    for (int i = 0; i < N; i++)
        h[i] = (unsigned char)(i * 29 + 5);
    TU_OK(kmux_malloc(dev, N, &d));
    kmux_stream *s = NULL;
    TU_OK(kmux_stream_create(dev, &s));
    TU_OK(kmux_memcpy(s, d, h, N, KMUX_MEMCPY_HOST_TO_DEVICE));
    TU_OK(kmux_memcpy(s, back, d, N, KMUX_MEMCPY_DEVICE_TO_HOST));
    TU_OK(kmux_stream_synchronize(s));
    cr_expect_eq(memcmp(h, back, N), 0, "pinned round trip differs");
    TU_STATUS(KMUX_ERR_INVALID_ARGUMENT, kmux_free(dev, h));
    cr_expect(strstr(kmux_last_error(), "was returned by kmux_host_malloc, not kmux_malloc") !=
                  NULL,
              "'%s'", kmux_last_error());
    TU_STATUS(KMUX_ERR_INVALID_ARGUMENT, kmux_host_free(dev, d));
    cr_expect(strstr(kmux_last_error(), "was returned by kmux_malloc, not kmux_host_malloc") !=
                  NULL,
              "'%s'", kmux_last_error());
    void *z = (void *)&z;
    TU_OK(kmux_host_malloc(dev, 0, &z));
    cr_expect_null(z);
    TU_OK(kmux_stream_destroy(s));
    TU_OK(kmux_free(dev, d));
    TU_OK(kmux_host_free(dev, h));
    TU_OK(kmux_host_free(dev, back));
    kmux_context_destroy(ctx);
}

Test(hip_dev, wraps_a_native_hip_stream) {
    kmux_context *ctx = tu_context();
    kmux_device *dev = hip0(ctx);
    /* the same runtime library the plugin opened (dlopen of the same path: the same handle) */
    const char *fake = getenv("KMUX_HIP_RUNTIME");
    void *rt = dlopen(fake && fake[0] ? fake : "libamdhip64.so.6", RTLD_NOW | RTLD_LOCAL);
    cr_assert(rt, "%s", dlerror());
    int (*create)(void **) = NULL;
    int (*destroy)(void *) = NULL;
    *(void **)&create = dlsym(rt, "hipStreamCreate");
    *(void **)&destroy = dlsym(rt, "hipStreamDestroy");
    cr_assert(create && destroy);
    void *native = NULL;
    cr_assert_eq(create(&native), 0);
    kmux_stream *s = NULL;
    TU_OK(kmux_stream_wrap_native(dev, native, &s));
    float x[4] = {1, 2, 3, 4}, y[4] = {0};
    float *d = NULL;
    TU_OK(kmux_malloc(dev, sizeof x, (void **)&d));
    TU_OK(kmux_memcpy(s, d, x, sizeof x, KMUX_MEMCPY_HOST_TO_DEVICE));
    TU_OK(kmux_memcpy(s, y, d, sizeof y, KMUX_MEMCPY_DEVICE_TO_HOST));
    TU_OK(kmux_stream_synchronize(s));
    cr_expect_arr_eq(x, y, sizeof x);
    TU_OK(kmux_stream_destroy(s)); /* does not destroy the native stream */
    cr_expect_eq(destroy(native), 0);
    TU_OK(kmux_free(dev, d));
    dlclose(rt);
    kmux_context_destroy(ctx);
}

/* Device buffer of `bytes` on dev holding `host` (NULL: zeros). */
static void *dev_copy(kmux_device *dev, kmux_stream *s, const void *host, size_t bytes) {
    void *p = NULL;
    TU_OK(kmux_malloc(dev, bytes, &p));
    if (host)
        TU_OK(kmux_memcpy(s, p, host, bytes, KMUX_MEMCPY_HOST_TO_DEVICE));
    else
        TU_OK(kmux_memset(s, p, 0, bytes));
    return p;
}

static void to_host(kmux_stream *s, void *host, const void *d, size_t bytes) {
    TU_OK(kmux_memcpy(s, host, d, bytes, KMUX_MEMCPY_DEVICE_TO_HOST));
    TU_OK(kmux_stream_synchronize(s));
}

#define N_CAST 1003 /* not a multiple of 4: the float4 path and its tail */

static void fill_f32(float *x, int n) {
    uint64_t r = 42;
    for (int i = 0; i < n; i++)
        x[i] = (float)tu_rand_uniform(&r, -70000.0, 70000.0) / (float)(1 + i % 97);
    x[0] = NAN;
    x[1] = INFINITY;
    x[2] = -INFINITY;
    x[3] = -0.0f;
    x[4] = 1e-40f; /* f32 subnormal */
    x[5] = 3e38f;
    x[6] = 0.0009765625f; /* 2^-10 */
}

/* kmux_cast of src (host, n elements of st) to dt on dev: the destination bytes and the amax. */
static void cast_on(kmux_device *dev, const void *src, kmux_dtype st, int n, int offset,
                    kmux_dtype dt, int saturate, float scale, unsigned char *out, float *amax) {
    kmux_stream *s = NULL;
    TU_OK(kmux_stream_create(dev, &s));
    size_t sb = kmux_dtype_size(st), db = kmux_dtype_size(dt);
    unsigned char *d_src = dev_copy(dev, s, src, (size_t)(n + offset) * sb);
    void *d_dst = dev_copy(dev, s, NULL, (size_t)n * db);
    float *d_scale = dev_copy(dev, s, &scale, sizeof scale);
    float *d_amax = dev_copy(dev, s, NULL, sizeof(float));
    kmux_cast_options o = KMUX_CAST_OPTIONS_INIT;
    o.saturate = saturate;
    o.scale = d_scale;
    o.amax = d_amax;
    TU_OK(kmux_cast(s, n, d_src + (size_t)offset * sb, st, d_dst, dt, &o));
    to_host(s, out, d_dst, (size_t)n * db);
    to_host(s, amax, d_amax, sizeof(float));
    TU_OK(kmux_free(dev, d_src));
    TU_OK(kmux_free(dev, d_dst));
    TU_OK(kmux_free(dev, d_scale));
    TU_OK(kmux_free(dev, d_amax));
    TU_OK(kmux_stream_destroy(s));
}

Test(hip_dev, cast_matches_ref_bit_for_bit, .timeout = 600) {
    kmux_context *ctx = tu_context();
    kmux_device *dev = hip0(ctx);
    kmux_device *ref = NULL;
    TU_OK(kmux_device_find(ctx, "ref", &ref));
    static float x[N_CAST + 1];
    fill_f32(x, N_CAST + 1);
    const kmux_dtype dts[] = {KMUX_F64,     KMUX_F16,          KMUX_BF16,        KMUX_F8_E4M3,
                              KMUX_F8_E5M2, KMUX_F8_E4M3_FNUZ, KMUX_F8_E5M2_FNUZ};
    static unsigned char a[N_CAST * 8], b[N_CAST * 8], back_a[N_CAST * 4], back_b[N_CAST * 4];
    for (size_t t = 0; t < sizeof dts / sizeof dts[0]; t++) {
        for (int sat = 0; sat < 2; sat++) {
            /* offset 0: 16-byte aligned f32 source (float4 loads); offset 1: not */
            int offset = sat;
            float ma = -1, mb = -2;
            cast_on(dev, x, KMUX_F32, N_CAST, offset, dts[t], sat, 0.75f, a, &ma);
            cast_on(ref, x, KMUX_F32, N_CAST, offset, dts[t], sat, 0.75f, b, &mb);
            size_t bytes = (size_t)N_CAST * kmux_dtype_size(dts[t]);
            for (size_t i = 0; i < bytes; i++)
                cr_assert_eq(a[i], b[i], "f32 -> %s saturate %d: byte %zu: hip %02x, ref %02x",
                             kmux_dtype_name(dts[t]), sat, i, a[i], b[i]);
            cr_assert_eq(memcmp(&ma, &mb, sizeof ma), 0, "amax hip %g ref %g", ma, mb);
            /* and back to f32 from that format (another kernel per source format) */
            cast_on(dev, b, dts[t], N_CAST, 0, KMUX_F32, 0, 1.0f, back_a, &ma);
            cast_on(ref, b, dts[t], N_CAST, 0, KMUX_F32, 0, 1.0f, back_b, &mb);
            cr_assert_eq(memcmp(back_a, back_b, (size_t)N_CAST * 4), 0, "%s -> f32",
                         kmux_dtype_name(dts[t]));
            cr_assert_eq(memcmp(&ma, &mb, sizeof ma), 0, "%s amax hip %g ref %g",
                         kmux_dtype_name(dts[t]), ma, mb);
        }
    }
    kmux_context_destroy(ctx);
}

/* The amp sequence on one device: amax of f16 data, unscale of f32 + bf16 tensors (one Inf),
 * three loss-scale updates, an fp8 scale update; every result into *out (floats). */
static void amp_on(kmux_device *dev, float out[12]) {
    kmux_stream *s = NULL;
    TU_OK(kmux_stream_create(dev, &s));
    uint16_t h[300];
    for (int i = 0; i < 300; i++)
        h[i] = (uint16_t)(0x3c00 + i * 37); /* f16 values from 1.0 up, some Inf/NaN codes */
    void *dh = dev_copy(dev, s, h, sizeof h);
    float *damax = dev_copy(dev, s, NULL, sizeof(float));
    TU_OK(kmux_amax(s, 300, dh, KMUX_F16, damax));
    to_host(s, &out[0], damax, sizeof(float));

    float g[257];
    for (int i = 0; i < 257; i++)
        g[i] = (float)(i - 128) * 0.5f;
    uint16_t gb[100];
    for (int i = 0; i < 100; i++)
        gb[i] = (uint16_t)(0x3f80 + i);
    gb[50] = 0x7f80; /* bf16 +Inf */
    void *dg = dev_copy(dev, s, g, sizeof g), *dgb = dev_copy(dev, s, gb, sizeof gb);
    float inv = 0.125f, zero = 0.0f;
    float *dinv = dev_copy(dev, s, &inv, sizeof inv), *dfound = dev_copy(dev, s, &zero, 4);
    void *tensors[2] = {dg, dgb};
    int64_t sizes[2] = {257, 100};
    kmux_dtype types[2] = {KMUX_F32, KMUX_BF16};
    TU_OK(kmux_unscale_check_finite(s, 2, tensors, sizes, types, dinv, dfound));
    to_host(s, g, dg, sizeof g);
    to_host(s, gb, dgb, sizeof gb);
    to_host(s, &out[1], dfound, sizeof(float));
    out[2] = g[3];
    out[3] = g[256];
    uint32_t bits = (uint32_t)gb[7] << 16;
    memcpy(&out[4], &bits, sizeof bits);

    float scale = 65536.0f;
    int32_t tracker = 1;
    float *dscale = dev_copy(dev, s, &scale, 4), *dnf = dev_copy(dev, s, &zero, 4);
    int32_t *dtr = dev_copy(dev, s, &tracker, 4);
    TU_OK(kmux_loss_scale_update(s, dscale, dtr, dnf, 2.0, 0.5, 2)); /* grows */
    to_host(s, &out[5], dscale, 4);
    TU_OK(kmux_loss_scale_update(s, dscale, dtr, dfound, 2.0, 0.5, 2)); /* found_inf: backs off */
    to_host(s, &out[6], dscale, 4);
    to_host(s, &tracker, dtr, 4);
    out[7] = (float)tracker;

    float hist[5] = {3.0f, 17.5f, 0.25f, 9.0f, 1.0f}, fscale = 1.0f;
    float *dhist = dev_copy(dev, s, hist, sizeof hist), *dfs = dev_copy(dev, s, &fscale, 4);
    TU_OK(kmux_fp8_scale_update(s, dhist, 5, KMUX_F8_E4M3_FNUZ, 1.0f, dfs));
    to_host(s, &out[8], dfs, 4);
    TU_OK(kmux_fp8_scale_update(s, dhist, 5, KMUX_F8_E5M2, 0.0f, dfs));
    to_host(s, &out[9], dfs, 4);
    void *bufs[] = {dh, damax, dg, dgb, dinv, dfound, dscale, dnf, dtr, dhist, dfs};
    for (size_t i = 0; i < sizeof bufs / sizeof bufs[0]; i++)
        TU_OK(kmux_free(dev, bufs[i]));
    TU_OK(kmux_stream_destroy(s));
}

Test(hip_dev, amp_matches_ref, .timeout = 600) {
    kmux_context *ctx = tu_context();
    kmux_device *dev = hip0(ctx);
    kmux_device *ref = NULL;
    TU_OK(kmux_device_find(ctx, "ref", &ref));
    float a[12] = {0}, b[12] = {0};
    amp_on(dev, a);
    amp_on(ref, b);
    for (int i = 0; i < 10; i++)
        cr_expect_eq(memcmp(&a[i], &b[i], sizeof a[i]), 0, "result %d: hip %g, ref %g", i, a[i],
                     b[i]);
    cr_expect_eq(b[1], 1.0f, "ref found no Inf: the test lost its point");
    cr_expect_eq(b[5], 131072.0f, "ref did not grow the scale");
    kmux_context_destroy(ctx);
}

/* k == 0 with beta, bias, ReLU, d_scale and amax_d on one device: C (f16, column-major, ldc > m)
 * and amax into c_out / amax_out. */
static void degenerate_on(kmux_device *dev, uint16_t *c_out, float *amax_out) {
    kmux_stream *s = NULL;
    TU_OK(kmux_stream_create(dev, &s));
    enum { M = 5, N = 7, LDC = 8 };
    uint16_t c[LDC * N];
    for (int i = 0; i < LDC * N; i++)
        c[i] = (uint16_t)(0x3c00 + (i % 13) * 0x80 + ((i % 3) ? 0 : 0x8000)); /* some negative */
    float bias[N], d_scale = 0.5f, zero = 0.0f;
    for (int j = 0; j < N; j++)
        bias[j] = (float)j - 3.25f;
    void *dc = dev_copy(dev, s, c, sizeof c), *db = dev_copy(dev, s, bias, sizeof bias);
    float *dds = dev_copy(dev, s, &d_scale, 4), *dam = dev_copy(dev, s, &zero, 4);
    void *dab = dev_copy(dev, s, NULL, 64);
    kmux_matmul_desc md = KMUX_MATMUL_DESC_INIT;
    md.order = KMUX_COL_MAJOR;
    md.m = M, md.n = N, md.k = 0;
    md.a_type = md.b_type = md.c_type = KMUX_F16;
    md.lda = M, md.ldb = 1, md.ldc = LDC;
    md.epilogue = KMUX_EPILOGUE_BIAS | KMUX_EPILOGUE_RELU;
    md.bias_type = KMUX_F32;
    kmux_plan *plan = NULL;
    TU_OK(kmux_matmul_plan_create(dev, &md, NULL, &plan));
    float alpha = 1.0f, beta = 0.75f;
    kmux_matmul_args a = KMUX_MATMUL_ARGS_INIT;
    a.alpha = &alpha, a.beta = &beta, a.A = dab, a.B = dab, a.C = dc, a.bias = db;
    a.d_scale = dds, a.amax_d = dam;
    TU_OK(kmux_matmul_execute(plan, s, &a));
    to_host(s, c_out, dc, sizeof c);
    to_host(s, amax_out, dam, 4);
    TU_OK(kmux_plan_destroy(plan));
    void *bufs[] = {dc, db, dds, dam, dab};
    for (size_t i = 0; i < sizeof bufs / sizeof bufs[0]; i++)
        TU_OK(kmux_free(dev, bufs[i]));
    TU_OK(kmux_stream_destroy(s));
}

Test(hip_dev, degenerate_matmul_matches_ref) {
    kmux_context *ctx = tu_context();
    kmux_device *dev = hip0(ctx);
    kmux_device *ref = NULL;
    TU_OK(kmux_device_find(ctx, "ref", &ref));
    uint16_t a[8 * 7], b[8 * 7];
    float ma = -1, mb = -2;
    degenerate_on(dev, a, &ma);
    degenerate_on(ref, b, &mb);
    for (int i = 0; i < 8 * 7; i++)
        cr_assert_eq(a[i], b[i], "C[%d]: hip %04x, ref %04x", i, a[i], b[i]);
    cr_expect_eq(ma, mb, "amax_d hip %g, ref %g", ma, mb);
    cr_expect(mb > 0.0f);
    kmux_context_destroy(ctx);
}

/* One GEMM on a device: returns 0 (and skips nothing) when the device refused the plan. */
typedef struct gemm_case {
    kmux_order order;
    kmux_transpose ta, tb;
    int64_t m, n, k, batch;
    kmux_dtype ab, c;
    kmux_compute_type ct;
    int pad; /* extra leading-dimension padding */
} gemm_case;

static size_t esize(kmux_dtype t) {
    return kmux_dtype_size(t);
}

/* Small integers (exact in every format and every accumulation order), stored as type t. */
static void fill_int(void *p, kmux_dtype t, int64_t n, uint64_t seed) {
    for (int64_t i = 0; i < n; i++) {
        double v = (double)((int64_t)(tu_rand_u64(&seed) % 7) - 3);
        if (t == KMUX_F32)
            ((float *)p)[i] = (float)v;
        else if (t == KMUX_F64)
            ((double *)p)[i] = v;
        else /* f16 / bf16 codes of small integers via f32 bits */
        {
            float f = (float)v;
            uint32_t u;
            memcpy(&u, &f, 4);
            ((uint16_t *)p)[i] = t == KMUX_BF16 ? (uint16_t)(u >> 16) : 0;
            if (t == KMUX_F16) {
                /* f16: sign, exponent 15 + e, 10-bit mantissa (|v| <= 3) */
                int a = (int)(v < 0 ? -v : v);
                uint16_t h = 0;
                if (a == 1) h = 0x3c00;
                if (a == 2) h = 0x4000;
                if (a == 3) h = 0x4200;
                ((uint16_t *)p)[i] = (uint16_t)(h | (v < 0 ? 0x8000 : 0));
            }
        }
    }
}

static int gemm_on(kmux_device *dev, const gemm_case *g, unsigned char *c_out, size_t c_bytes) {
    kmux_stream *s = NULL;
    TU_OK(kmux_stream_create(dev, &s));
    int64_t ar = g->ta == KMUX_NO_TRANS ? g->m : g->k, ac = g->ta == KMUX_NO_TRANS ? g->k : g->m;
    int64_t br = g->tb == KMUX_NO_TRANS ? g->k : g->n, bc = g->tb == KMUX_NO_TRANS ? g->n : g->k;
    int rm = g->order == KMUX_ROW_MAJOR;
    int64_t lda = (rm ? ac : ar) + g->pad, ldb = (rm ? bc : br) + g->pad,
            ldc = (rm ? g->n : g->m) + g->pad;
    int64_t sa = lda * (rm ? ar : ac), sb = ldb * (rm ? br : bc), sc = ldc * (rm ? g->m : g->n);
    size_t ab = (size_t)(sa * g->batch) * esize(g->ab), bb = (size_t)(sb * g->batch) * esize(g->ab);
    static unsigned char ha[1 << 16], hb[1 << 16], hc[1 << 16];
    cr_assert(ab <= sizeof ha && bb <= sizeof hb && c_bytes <= sizeof hc &&
              (size_t)(sc * g->batch) * esize(g->c) == c_bytes);
    fill_int(ha, g->ab, sa * g->batch, 1);
    fill_int(hb, g->ab, sb * g->batch, 2);
    fill_int(hc, g->c, sc * g->batch, 3);
    void *da = dev_copy(dev, s, ha, ab), *db = dev_copy(dev, s, hb, bb),
         *dc = dev_copy(dev, s, hc, c_bytes);
    kmux_matmul_desc md = KMUX_MATMUL_DESC_INIT;
    md.order = g->order, md.transa = g->ta, md.transb = g->tb;
    md.m = g->m, md.n = g->n, md.k = g->k, md.batch_count = g->batch;
    md.a_type = md.b_type = g->ab, md.c_type = g->c, md.compute_type = g->ct;
    md.lda = lda, md.ldb = ldb, md.ldc = ldc, md.stride_a = sa, md.stride_b = sb, md.stride_c = sc;
    kmux_plan *plan = NULL;
    kmux_status st = kmux_matmul_plan_create(dev, &md, NULL, &plan);
    int ran = 0;
    if (st == KMUX_OK) {
        double a64 = 2.0, b64 = -0.5;
        float a32 = 2.0f, b32 = -0.5f;
        int f64 = g->ct == KMUX_COMPUTE_F64;
        kmux_matmul_args a = KMUX_MATMUL_ARGS_INIT;
        a.alpha = f64 ? (const void *)&a64 : (const void *)&a32;
        a.beta = f64 ? (const void *)&b64 : (const void *)&b32;
        a.A = da, a.B = db, a.C = dc;
        TU_OK(kmux_matmul_execute(plan, s, &a));
        to_host(s, c_out, dc, c_bytes);
        TU_OK(kmux_plan_destroy(plan));
        ran = 1;
    } else {
        cr_assert_eq(st, KMUX_ERR_UNSUPPORTED, "%s", kmux_last_error());
        cr_log_info("%s", kmux_last_error());
    }
    TU_OK(kmux_free(dev, da));
    TU_OK(kmux_free(dev, db));
    TU_OK(kmux_free(dev, dc));
    TU_OK(kmux_stream_destroy(s));
    return ran;
}

Test(hip_dev, gemm_matches_ref) {
    kmux_context *ctx = tu_context();
    kmux_device *dev = hip0(ctx);
    kmux_device *ref = NULL;
    TU_OK(kmux_device_find(ctx, "ref", &ref));
    const gemm_case cases[] = {
        {KMUX_ROW_MAJOR, KMUX_NO_TRANS, KMUX_NO_TRANS, 13, 9, 17, 1, KMUX_F32, KMUX_F32,
         KMUX_COMPUTE_F32, 3},
        {KMUX_COL_MAJOR, KMUX_TRANS, KMUX_NO_TRANS, 7, 11, 5, 2, KMUX_F32, KMUX_F32,
         KMUX_COMPUTE_F32, 1},
        {KMUX_ROW_MAJOR, KMUX_NO_TRANS, KMUX_TRANS, 6, 10, 12, 3, KMUX_F64, KMUX_F64,
         KMUX_COMPUTE_F64, 2},
        {KMUX_ROW_MAJOR, KMUX_TRANS, KMUX_TRANS, 8, 5, 9, 1, KMUX_F16, KMUX_F32, KMUX_COMPUTE_F32,
         0},
        {KMUX_COL_MAJOR, KMUX_NO_TRANS, KMUX_TRANS, 9, 4, 6, 2, KMUX_BF16, KMUX_BF16,
         KMUX_COMPUTE_F32, 5},
    };
    static unsigned char x[1 << 16], y[1 << 16];
    int ran = 0;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const gemm_case *g = &cases[i];
        int rm = g->order == KMUX_ROW_MAJOR;
        size_t cb =
            (size_t)(((rm ? g->n : g->m) + g->pad) * (rm ? g->m : g->n) * g->batch) * esize(g->c);
        memset(x, 0xee, cb);
        if (!gemm_on(dev, g, x, cb)) continue;
        cr_assert(gemm_on(ref, g, y, cb), "ref refused case %zu", i);
        for (size_t j = 0; j < cb; j++)
            cr_assert_eq(x[j], y[j], "case %zu (%s): byte %zu: hip %02x, ref %02x", i,
                         kmux_dtype_name(g->ab), j, x[j], y[j]);
        ran++;
    }
    cr_expect_eq(ran, (int)(sizeof cases / sizeof cases[0]), "the own GEMM kernel ran every case");
    kmux_context_destroy(ctx);
}

/* Runs every implementation of the plan made by make (prefs.caller_workspace) on dev in a
 * workspace of 0xff bytes, the output (out_bytes at *out, restored from init before each run)
 * compared with want; returns how many implementations wrote into their workspace. */
typedef kmux_status (*ws_run_fn)(kmux_plan *plan, kmux_stream *s, void *ws, size_t ws_bytes);
static int each_impl_in_caller_ws(kmux_device *dev, kmux_plan *plan, ws_run_fn run, void *out,
                                  const void *init, const void *want, size_t out_bytes) {
    kmux_stream *s = NULL;
    TU_OK(kmux_stream_create(dev, &s));
    int used = 0;
    unsigned char *got = malloc(out_bytes);
    cr_assert(got);
    do {
        kmux_plan_info info;
        TU_OK(kmux_plan_info_get(plan, &info));
        const size_t need = info.workspace_bytes;
        void *ws = need ? dev_copy(dev, s, NULL, need) : NULL;
        if (ws) TU_OK(kmux_memset(s, ws, 0xff, need));
        TU_OK(kmux_memcpy(s, out, init, out_bytes, KMUX_MEMCPY_HOST_TO_DEVICE));
        TU_OK(run(plan, s, ws, need));
        to_host(s, got, out, out_bytes);
        cr_expect(memcmp(got, want, out_bytes) == 0,
                  "%s in the caller's workspace differs from ref", info.impl);
        if (ws) {
            unsigned char *h = malloc(need);
            cr_assert(h);
            to_host(s, h, ws, need);
            size_t touched = 0;
            for (size_t i = 0; i < need; i++)
                touched += h[i] != 0xff;
            cr_expect(touched > 0, "%s needs %zu bytes of workspace but wrote none of the caller's",
                      info.impl, need);
            used += touched > 0;
            free(h);
            TU_OK(kmux_free(dev, ws));
        }
    } while (kmux_plan_next_impl(plan) == KMUX_OK);
    free(got);
    TU_OK(kmux_stream_destroy(s));
    return used;
}

static void *ws_a, *ws_b, *ws_c; /* the operands of the runs below (device memory) */
static kmux_status ws_gemm(kmux_plan *plan, kmux_stream *s, void *ws, size_t ws_bytes) {
    const float one = 1.0f, half = 0.5f;
    kmux_matmul_args a = KMUX_MATMUL_ARGS_INIT;
    a.alpha = &one, a.beta = &half, a.A = ws_a, a.B = ws_b, a.C = ws_c;
    a.workspace = ws, a.workspace_bytes = ws_bytes;
    return kmux_matmul_execute(plan, s, &a);
}
static kmux_status ws_conv(kmux_plan *plan, kmux_stream *s, void *ws, size_t ws_bytes) {
    const float one = 1.0f, zero = 0.0f;
    kmux_conv2d_args a = KMUX_CONV2D_ARGS_INIT;
    a.alpha = &one, a.beta = &zero, a.x = ws_a, a.w = ws_b, a.y = ws_c;
    a.workspace = ws, a.workspace_bytes = ws_bytes;
    return kmux_conv2d_execute(plan, s, &a);
}

/* prefs.caller_workspace on hip:0: every implementation (hipBLASLt's algorithms, MIOpen's
 * solutions, the own kernels) runs in the caller's device memory, which the fake libraries
 * overwrite as their scratch, and matches ref bit for bit (small integers). */
Test(hip_dev, caller_workspace_every_implementation) {
    kmux_context *ctx = tu_context();
    kmux_device *dev = hip0(ctx), *ref = NULL;
    TU_OK(kmux_device_find(ctx, "ref", &ref));
    kmux_plan_prefs prefs = KMUX_PLAN_PREFS_INIT;
    prefs.caller_workspace = 1;
    kmux_stream *s = NULL, *rs = NULL;
    TU_OK(kmux_stream_create(dev, &s));
    TU_OK(kmux_stream_create(ref, &rs));
    int used = 0;
    /* GEMM: C(24 x 40) = A(24 x 32) B(32 x 40) + C / 2 */
    {
        kmux_matmul_desc md = KMUX_MATMUL_DESC_INIT;
        md.m = 24, md.n = 40, md.k = 32, md.lda = 32, md.ldb = 40, md.ldc = 40;
        static float a[24 * 32], b[32 * 40], c[24 * 40], want[24 * 40];
        fill_int(a, KMUX_F32, 24 * 32, 11), fill_int(b, KMUX_F32, 32 * 40, 12);
        fill_int(c, KMUX_F32, 24 * 40, 13);
        memcpy(want, c, sizeof c);
        kmux_plan *rp = NULL, *plan = NULL;
        TU_OK(kmux_matmul_plan_create(ref, &md, NULL, &rp));
        ws_a = a, ws_b = b, ws_c = want;
        TU_OK(ws_gemm(rp, rs, NULL, 0));
        TU_OK(kmux_plan_destroy(rp));
        ws_a = dev_copy(dev, s, a, sizeof a), ws_b = dev_copy(dev, s, b, sizeof b);
        ws_c = dev_copy(dev, s, NULL, sizeof c);
        TU_OK(kmux_matmul_plan_create(dev, &md, &prefs, &plan));
        used += each_impl_in_caller_ws(dev, plan, ws_gemm, ws_c, c, want, sizeof c);
        TU_OK(kmux_plan_destroy(plan));
        TU_OK(kmux_free(dev, ws_a));
        TU_OK(kmux_free(dev, ws_b));
        TU_OK(kmux_free(dev, ws_c));
    }
    /* convolution forward, NHWC: x 2x9x9x8, w 4x3x3x8, padding 1 */
    {
        kmux_conv2d_desc cd = KMUX_CONV2D_DESC_INIT;
        cd.layout = KMUX_NHWC, cd.n = 2, cd.c = 8, cd.h = cd.w = 9, cd.k = 4, cd.r = cd.s = 3;
        cd.pad_top = cd.pad_bottom = cd.pad_left = cd.pad_right = 1;
        static float x[2 * 9 * 9 * 8], w[4 * 3 * 3 * 8], y[2 * 9 * 9 * 4], want[2 * 9 * 9 * 4];
        fill_int(x, KMUX_F32, 2 * 9 * 9 * 8, 21), fill_int(w, KMUX_F32, 4 * 3 * 3 * 8, 22);
        memset(y, 0, sizeof y), memset(want, 0, sizeof want);
        kmux_plan *rp = NULL, *plan = NULL;
        TU_OK(kmux_conv2d_plan_create(ref, &cd, NULL, &rp));
        ws_a = x, ws_b = w, ws_c = want;
        TU_OK(ws_conv(rp, rs, NULL, 0));
        TU_OK(kmux_plan_destroy(rp));
        ws_a = dev_copy(dev, s, x, sizeof x), ws_b = dev_copy(dev, s, w, sizeof w);
        ws_c = dev_copy(dev, s, NULL, sizeof y);
        TU_OK(kmux_conv2d_plan_create(dev, &cd, &prefs, &plan));
        used += each_impl_in_caller_ws(dev, plan, ws_conv, ws_c, y, want, sizeof y);
        TU_OK(kmux_plan_destroy(plan));
        TU_OK(kmux_free(dev, ws_a));
        TU_OK(kmux_free(dev, ws_b));
        TU_OK(kmux_free(dev, ws_c));
    }
    cr_expect_gt(used, 0, "no hipBLASLt or MIOpen implementation used a workspace");
    TU_OK(kmux_stream_destroy(s));
    TU_OK(kmux_stream_destroy(rs));
    kmux_context_destroy(ctx);
}

Test(hip_dev, gemm_and_conv_refused_with_the_reason) {
    setenv("KMUX_HIP_IMPL", "own", 1); /* the own kernels' reach, not the libraries' */
    kmux_context *ctx = tu_context();
    kmux_device *dev = hip0(ctx);
    kmux_matmul_desc md = KMUX_MATMUL_DESC_INIT;
    md.m = md.n = md.k = 8;
    md.lda = md.ldb = md.ldc = 8;
    md.epilogue = KMUX_EPILOGUE_RELU;
    kmux_plan *plan = NULL;
    /* the own kernel runs epilogues and FNUZ fp8 (gfx942's format) */
    TU_OK(kmux_matmul_plan_create(dev, &md, NULL, &plan));
    kmux_plan_info info;
    TU_OK(kmux_plan_info_get(plan, &info));
    cr_expect(strncmp(info.impl, "kmux-gpu:gemm:f32*f32->f32:acc=f32:tile=", 40) == 0, "%s",
              info.impl);
    TU_OK(kmux_plan_destroy(plan));
    md.epilogue = KMUX_EPILOGUE_NONE;
    md.a_type = md.b_type = KMUX_F8_E4M3_FNUZ;
    md.c_type = KMUX_F32;
    TU_OK(kmux_matmul_plan_create(dev, &md, NULL, &plan));
    TU_OK(kmux_plan_destroy(plan));
    /* OCP fp8 is not what gfx942's matrix units compute in: not in its capability rows, so the
     * core refuses it before the plugin, naming the FNUZ format the device has (the caps'
     * dtype_instead, ABI 2.3) */
    kmux_device_props props;
    TU_OK(kmux_device_props_get(dev, &props));
    md.a_type = md.b_type = KMUX_F8_E4M3;
    TU_STATUS(KMUX_ERR_UNSUPPORTED, kmux_matmul_plan_create(dev, &md, NULL, &plan));
    if (strncmp(props.arch, "gfx942", 6) == 0)
        cr_expect_str_eq(kmux_last_error(),
                         "kmux_matmul_plan_create: a_type = e4m3 (OCP) is not supported by hip:0 "
                         "(gfx942, FNUZ fp8 only): use e4m3fnuz");
    else
        cr_expect(strstr(kmux_last_error(), "e4m3") != NULL, "%s", kmux_last_error());
    md.a_type = md.b_type = KMUX_F8_E5M2;
    TU_STATUS(KMUX_ERR_UNSUPPORTED, kmux_matmul_plan_create(dev, &md, NULL, &plan));
    if (strncmp(props.arch, "gfx942", 6) == 0)
        cr_expect_str_eq(kmux_last_error(),
                         "kmux_matmul_plan_create: a_type = e5m2 (OCP) is not supported by hip:0 "
                         "(gfx942, FNUZ fp8 only): use e5m2fnuz");
    /* a convolution the own kernel runs, and one whose dtypes it does not */
    kmux_conv2d_desc cd = KMUX_CONV2D_DESC_INIT;
    cd.n = 1, cd.c = 2, cd.h = cd.w = 5, cd.k = 3, cd.r = cd.s = 3;
    TU_OK(kmux_conv2d_plan_create(dev, &cd, NULL, &plan));
    TU_OK(kmux_plan_info_get(plan, &info));
    cr_expect(strncmp(info.impl, "kmux-gpu:conv2d:fwd:nchw:f32:acc=f32:tile=", 42) == 0, "%s",
              info.impl);
    TU_OK(kmux_plan_destroy(plan));
    kmux_context_destroy(ctx);
}

Test(hip_fake, gemm_without_rocblas_runs_the_own_kernel_only) {
    const char *libs[] = {"librocblas.so.5",
                          "librocblas.so.4",
                          "librocblas.so.3",
                          "librocblas.so.0",
                          "/opt/rocm/lib/librocblas.so.5",
                          "/opt/rocm/lib/librocblas.so.4"};
    for (int i = 0; i < 6; i++) {
        void *h = dlopen(libs[i], RTLD_LAZY | RTLD_LOCAL);
        if (h) {
            dlclose(h);
            cr_skip_test("this machine has %s: not the no-rocBLAS case", libs[i]);
        }
    }
    unsetenv("KMUX_ROCBLAS_LIBRARY");
    unsetenv("ROCM_PATH");
    setenv("KMUX_HIP_IMPL", "rocblas,own", 1); /* rocBLAS's absence, not hipBLASLt's */
    kmux_context *ctx = tu_context();
    kmux_device *dev = hip0(ctx);
    kmux_matmul_desc md = KMUX_MATMUL_DESC_INIT;
    md.m = md.n = md.k = 8;
    md.lda = md.ldb = md.ldc = 8;
    kmux_plan *plan = NULL;
    /* the own kernel is the only implementation */
    TU_OK(kmux_matmul_plan_create(dev, &md, NULL, &plan));
    kmux_plan_info info;
    TU_OK(kmux_plan_info_get(plan, &info));
    cr_expect(strncmp(info.impl, "kmux-gpu:gemm:", 14) == 0, "%s", info.impl);
    TU_STATUS(KMUX_ERR_LAST_IMPL, kmux_plan_next_impl(plan));
    TU_OK(kmux_plan_destroy(plan));
    kmux_context_destroy(ctx);
}

Test(hip_fake, copy_in_the_wrong_direction_names_the_hip_error) {
    kmux_context *ctx = tu_context();
    kmux_device *dev = hip0(ctx);
    kmux_stream *s = NULL;
    TU_OK(kmux_stream_create(dev, &s));
    char a[8] = {0}, b[8] = {0};
    /* host memory declared as device memory: the fake refuses it like a real runtime faults */
    TU_STATUS(KMUX_ERR_DEVICE, kmux_memcpy(s, a, b, 8, KMUX_MEMCPY_DEVICE_TO_HOST));
    cr_expect(strstr(kmux_last_error(), "hipErrorInvalidValue") != NULL, "%s", kmux_last_error());
    TU_OK(kmux_stream_destroy(s));
    kmux_context_destroy(ctx);
}

Test(hip_fake, no_amd_gpu) {
    need_code_objects();
    setenv("KMUX_FAKE_HIP_DEVICES", "0", 1);
    kmux_context *ctx = tu_context();
    kmux_backend_info bi;
    cr_assert(hip_backend(ctx, &bi));
    cr_assert_eq(bi.available, 0);
    cr_assert_str_eq(bi.reason, "no AMD GPU (hipErrorNoDevice)");
    kmux_context_destroy(ctx);
}

/* No carried target fits the device: the probe says what the plugin carries and what the
 * device needs (its full target id, in --offload-arch notation). */
Test(hip_fake, architecture_without_code_object) {
    need_code_objects();
    setenv("KMUX_FAKE_HIP_ARCH", "gfx1030", 1);
    kmux_context *ctx = tu_context();
    kmux_backend_info bi;
    cr_assert(hip_backend(ctx, &bi));
    cr_assert_eq(bi.available, 0);
    cr_assert(strncmp(bi.reason, "kmux-hip carries code objects for ", 34) == 0 &&
                  strstr(bi.reason, "gfx942") != NULL,
              "reason '%s'", bi.reason);
    cr_assert(strstr(bi.reason, "; device 0 is gfx1030 (needs gfx1030)") != NULL, "reason '%s'",
              bi.reason);
    kmux_context_destroy(ctx);
}

/* The same with features: the device's settings are named in what it needs. */
Test(hip_fake, target_id_without_code_object) {
    need_code_objects();
    setenv("KMUX_FAKE_HIP_ARCH", "gfx908:sramecc-:xnack+", 1);
    kmux_context *ctx = tu_context();
    kmux_backend_info bi;
    cr_assert(hip_backend(ctx, &bi));
    cr_assert_eq(bi.available, 0);
    cr_assert(strstr(bi.reason, "; device 0 is gfx908:sramecc-:xnack+ (needs "
                                "gfx908[:sramecc-][:xnack+])") != NULL,
              "reason '%s'", bi.reason);
    kmux_context_destroy(ctx);
}

/* A code object built without a feature setting loads on a device of either setting: gfx942
 * (carried without features) runs on gfx942:sramecc-:xnack+. */
Test(hip_fake, unspecified_features_match_any_setting) {
    setenv("KMUX_FAKE_HIP_ARCH", "gfx942:sramecc-:xnack+", 1);
    kmux_context *ctx = tu_context();
    kmux_device *dev = hip0(ctx);
    kmux_device_diag d;
    memset(&d, 0, sizeof d);
    d.struct_size = sizeof d;
    TU_OK(kmux_device_diag_get(dev, &d));
    cr_expect_str_eq(d.target_id, "gfx942:sramecc-:xnack+");
    kmux_device_props p;
    TU_OK(kmux_device_props_get(dev, &p));
    cr_expect_str_eq(p.arch, "gfx942");
    kmux_context_destroy(ctx);
}

/* The target id through the properties call of each runtime generation: ROCm 5.7 (the
 * unversioned hipGetDeviceProperties, ROCm 5 layout), 6.2 and 7.0 (hipGetDevicePropertiesR0600;
 * the gcnArch attribute answers nothing since 6.0, and the fake refuses R0600 under 6.0). */
static void target_id_on(const char *version, const char *want_runtime) {
    setenv("KMUX_FAKE_HIP_VERSION", version, 1);
    kmux_context *ctx = tu_context();
    kmux_device *dev = hip0(ctx);
    kmux_device_diag d;
    memset(&d, 0, sizeof d);
    d.struct_size = sizeof d;
    TU_OK(kmux_device_diag_get(dev, &d));
    cr_expect_str_eq(d.target_id, "gfx942:sramecc+:xnack-", "HIP %s", version);
    cr_expect(strncmp(d.runtime_version, want_runtime, strlen(want_runtime)) == 0, "'%s'",
              d.runtime_version);
    kmux_device_props p;
    TU_OK(kmux_device_props_get(dev, &p));
    cr_expect_str_eq(p.arch, "gfx942", "HIP %s", version);
    kmux_context_destroy(ctx);
}

Test(hip_fake, target_id_on_rocm5) {
    target_id_on("50700000", "HIP 5.7.");
}

Test(hip_fake, target_id_on_rocm6) {
    target_id_on("60400000", "HIP 6.4.");
}

Test(hip_fake, target_id_on_rocm7) {
    target_id_on("70000000", "HIP 7.0.");
}

/* hipModuleLoadData finding no code object for the device is KMUX_ERR_UNSUPPORTED naming the
 * device's target and the carried ones (the fake made to answer hipErrorNoBinaryForGpu, then
 * hipErrorInvalidImage). */
static void load_fails_with(const char *error, const char *name) {
    setenv("KMUX_FAKE_HIP_LOAD_ERROR", error, 1);
    kmux_context *ctx = tu_context();
    kmux_device *dev = hip0(ctx);
    kmux_stream *s = NULL;
    TU_OK(kmux_stream_create(dev, &s));
    void *x = NULL, *amax = NULL;
    TU_OK(kmux_malloc(dev, 16, &x));
    TU_OK(kmux_malloc(dev, sizeof(float), &amax));
    TU_STATUS(KMUX_ERR_UNSUPPORTED, kmux_amax(s, 4, x, KMUX_F32, amax));
    const char *m = kmux_last_error();
    cr_expect(strstr(m, "no code object in kmux_gpu_cast.cu loads on hip:0 (target "
                        "gfx942:sramecc+:xnack-): kmux-hip carries code objects for ") != NULL,
              "%s", m);
    cr_expect(strstr(m, "gfx942") != NULL && strstr(m, name) != NULL, "%s", m);
    TU_OK(kmux_free(dev, x));
    TU_OK(kmux_free(dev, amax));
    TU_OK(kmux_stream_destroy(s));
    kmux_context_destroy(ctx);
}

Test(hip_fake, no_binary_for_gpu_is_unsupported) {
    load_fails_with("209", "hipErrorNoBinaryForGpu");
}

Test(hip_fake, invalid_image_is_unsupported) {
    load_fails_with("200", "hipErrorInvalidImage");
}

/* gridDim.x * blockDim.x beyond 32 bits is refused before the launch, naming the sizes: the own
 * GEMM kernel's grid for m = 2^31 - 1 rows (2^25 row tiles of 64, blocks of 256 threads). No
 * memory is touched: the check comes first. */
Test(hip_fake, grid_overflow_is_refused_before_the_launch) {
    kmux_context *ctx = tu_context();
    kmux_device *dev = hip0(ctx);
    kmux_matmul_desc md = KMUX_MATMUL_DESC_INIT;
    md.m = INT32_MAX;
    md.n = md.k = 1;
    md.lda = md.ldb = md.ldc = 1;
    kmux_plan *plan = NULL;
    TU_OK(kmux_matmul_plan_create(dev, &md, NULL, &plan));
    kmux_plan_info info;
    TU_OK(kmux_plan_info_get(plan, &info));
    while (strncmp(info.impl, "kmux-gpu:gemm:", 14) != 0) { /* the libraries first: own last */
        TU_OK(kmux_plan_next_impl(plan));
        TU_OK(kmux_plan_info_get(plan, &info));
    }
    cr_assert(strncmp(info.impl, "kmux-gpu:gemm:", 14) == 0, "%s", info.impl);
    kmux_stream *s = NULL;
    TU_OK(kmux_stream_create(dev, &s));
    void *buf = NULL;
    TU_OK(kmux_malloc(dev, 256, &buf));
    const float one = 1.0f, zero = 0.0f;
    kmux_matmul_args a = KMUX_MATMUL_ARGS_INIT;
    a.A = a.B = a.C = buf;
    a.alpha = &one;
    a.beta = &zero;
    TU_STATUS(KMUX_ERR_UNSUPPORTED, kmux_matmul_execute(plan, s, &a));
    cr_expect(strstr(kmux_last_error(), "gridDim.x * blockDim.x = 33554432 * 256 = 8589934592 "
                                        "threads, more than HIP's 32-bit global work size") != NULL,
              "%s", kmux_last_error());
    TU_OK(kmux_free(dev, buf));
    TU_OK(kmux_stream_destroy(s));
    TU_OK(kmux_plan_destroy(plan));
    kmux_context_destroy(ctx);
}

/* The library search: the runtime found in $ROCM_PATH/lib, rocBLAS found in the folder of the
 * runtime that was loaded (neither override set). The fakes stand in under ROCm's file names. */
static char *link_fake(const char *dir, const char *name, const char *target) {
    static char path[3][512];
    static int next = 0;
    char *p = path[next++ % 3];
    snprintf(p, sizeof path[0], "%s/%s", dir, name);
    cr_assert(symlink(target, p) == 0, "symlink %s -> %s", p, target);
    return p;
}

Test(hip_fake, runtime_from_rocm_path_and_rocblas_from_its_folder) {
    need_code_objects();
    const char *fake = getenv("KMUX_HIP_RUNTIME"), *fake_rb = getenv("KMUX_ROCBLAS_LIBRARY");
    if (!fake || !fake[0] || !fake_rb || !fake_rb[0])
        cr_skip_test("needs the fake runtime and the fake rocBLAS (ctest test_hip_fake_runtime)");
    if (real_runtime()) cr_skip_test("this machine has a HIP runtime on the loader path");
    char root[] = "/tmp/kmux-rocm-XXXXXX";
    cr_assert(mkdtemp(root) != NULL);
    char lib[600];
    snprintf(lib, sizeof lib, "%s/lib", root);
    cr_assert(mkdir(lib, 0700) == 0);
    char *rt = link_fake(lib, "libamdhip64.so.7", fake);
    char *rb = link_fake(lib, "librocblas.so.5", fake_rb);
    unsetenv("KMUX_HIP_RUNTIME");
    unsetenv("KMUX_ROCBLAS_LIBRARY");
    setenv("KMUX_HIP_IMPL", "rocblas,own", 1); /* where rocBLAS comes from */
    setenv("ROCM_PATH", root, 1);
    kmux_context *ctx = tu_context();
    kmux_backend_info bi;
    cr_assert(hip_backend(ctx, &bi));
    cr_assert(bi.available, "%s", bi.reason);
    kmux_device *dev = NULL;
    TU_OK(kmux_device_find(ctx, "hip:0", &dev));
    kmux_device_diag d;
    memset(&d, 0, sizeof d);
    d.struct_size = sizeof d;
    TU_OK(kmux_device_diag_get(dev, &d));
    cr_expect(strncmp(d.libraries, rt, strlen(rt)) == 0 && d.libraries[strlen(rt)] == ',', "'%s'",
              d.libraries);
    kmux_context_destroy(ctx);
    /* rocBLAS: KMUX_HIP_RUNTIME names the runtime in root/lib, ROCM_PATH is gone: only the
     * runtime's folder holds librocblas.so.5 */
    unsetenv("ROCM_PATH");
    setenv("KMUX_HIP_RUNTIME", rt, 1);
    ctx = tu_context();
    TU_OK(kmux_device_find(ctx, "hip:0", &dev));
    kmux_matmul_desc md = KMUX_MATMUL_DESC_INIT;
    md.m = md.n = md.k = 8;
    md.lda = md.ldb = md.ldc = 8;
    kmux_plan *plan = NULL;
    TU_OK(kmux_matmul_plan_create(dev, &md, NULL, &plan));
    kmux_plan_info info; /* rocblas_gemm_ex first where it runs the problem, the own kernel next */
    TU_OK(kmux_plan_info_get(plan, &info));
    cr_expect_str_eq(info.impl, "rocblas_gemm_ex");
    TU_OK(kmux_plan_next_impl(plan));
    TU_OK(kmux_plan_info_get(plan, &info));
    cr_expect(strncmp(info.impl, "kmux-gpu:gemm:", 14) == 0, "%s", info.impl);
    TU_OK(kmux_plan_destroy(plan));
    kmux_context_destroy(ctx);
    unlink(rb);
    unlink(rt);
    rmdir(lib);
    rmdir(root);
}

/* A KMUX_ROCBLAS_LIBRARY that cannot be opened is the answer for rocBLAS too (no search after
 * it, so even on a machine with ROCm's rocBLAS installed): the plan has the own kernel only. */
Test(hip_fake, failing_rocblas_override_is_the_answer) {
    setenv("KMUX_ROCBLAS_LIBRARY", "/nonexistent/librocblas.so.5", 1);
    setenv("KMUX_HIP_IMPL", "rocblas,own", 1); /* rocBLAS's answer, not hipBLASLt's */
    kmux_context *ctx = tu_context();
    kmux_device *dev = hip0(ctx);
    kmux_matmul_desc md = KMUX_MATMUL_DESC_INIT;
    md.m = md.n = md.k = 8;
    md.lda = md.ldb = md.ldc = 8;
    kmux_plan *plan = NULL;
    TU_OK(kmux_matmul_plan_create(dev, &md, NULL, &plan));
    TU_STATUS(KMUX_ERR_LAST_IMPL, kmux_plan_next_impl(plan));
    TU_OK(kmux_plan_destroy(plan));
    kmux_context_destroy(ctx);
}

Test(hip_fake, gfx90a_computes_no_fp8) {
    setenv("KMUX_FAKE_HIP_ARCH", "gfx90a", 1); /* gcnArch 910: the hex stepping of HIP's formula */
    kmux_context *ctx = tu_context();
    kmux_device *dev = hip0(ctx);
    kmux_device_props p;
    TU_OK(kmux_device_props_get(dev, &p));
    cr_expect_str_eq(p.arch, "gfx90a");
    for (int t = KMUX_F8_E4M3; t <= KMUX_F8_E5M2_FNUZ; t++)
        cr_expect(!p.dtype_support[t], "gfx90a lists %s", kmux_dtype_name((kmux_dtype)t));
    /* no fp8 format at all: no alternative to name, the core's plain refusal */
    {
        kmux_matmul_desc md = KMUX_MATMUL_DESC_INIT;
        md.m = md.n = md.k = 8;
        md.lda = md.ldb = md.ldc = 8;
        md.a_type = md.b_type = KMUX_F8_E4M3_FNUZ;
        kmux_plan *plan = NULL;
        TU_STATUS(KMUX_ERR_UNSUPPORTED, kmux_matmul_plan_create(dev, &md, NULL, &plan));
        cr_expect_str_eq(
            kmux_last_error(),
            "kmux_matmul_plan_create: a_type = e4m3fnuz, b_type = e4m3fnuz, c_type = "
            "f32, compute_type = f32: device hip:0 does not run this type combination");
    }
    /* CDNA 2: 1024 f16 flop/clk/CU (MI250X: 110 CU x 1024 x 1.7 GHz = 191.5 TFLOP/s per GCD) */
    cr_expect(fabs(p.peak_flops[KMUX_F16] - 1024.0 * p.compute_units * p.clock_mhz * 1e6) < 1e6);
    /* the module loads: the bundle carries a gfx90a code object */
    kmux_stream *s = NULL;
    TU_OK(kmux_stream_create(dev, &s));
    float x[4] = {1.0f, -6.5f, 2.0f, 0.5f}, m = 0.0f;
    float *d = dev_copy(dev, s, x, sizeof x), *amax = dev_copy(dev, s, NULL, sizeof(float));
    TU_OK(kmux_amax(s, 4, d, KMUX_F32, amax));
    to_host(s, &m, amax, sizeof m);
    cr_expect_eq(m, 6.5f);
    TU_OK(kmux_free(dev, d));
    TU_OK(kmux_free(dev, amax));
    TU_OK(kmux_stream_destroy(s));
    kmux_context_destroy(ctx);
}

/* The own kernels accumulate in strict f32 whatever fast f32 mode was asked: plan_info says so
 * (f64 and i32 as asked). */
Test(hip_fake, own_kernels_report_the_compute_type_they_run) {
    setenv("KMUX_HIP_IMPL", "own", 1);
    kmux_context *ctx = tu_context();
    kmux_device *dev = hip0(ctx);
    static const kmux_compute_type asked[] = {KMUX_COMPUTE_F32_FAST_TF32, KMUX_COMPUTE_F32};
    for (size_t i = 0; i < sizeof asked / sizeof asked[0]; i++) {
        kmux_matmul_desc md = KMUX_MATMUL_DESC_INIT;
        md.m = md.n = md.k = 8;
        md.lda = md.ldb = md.ldc = 8;
        md.compute_type = asked[i];
        kmux_plan *plan = NULL;
        TU_OK(kmux_matmul_plan_create(dev, &md, NULL, &plan));
        kmux_plan_info info;
        TU_OK(kmux_plan_info_get(plan, &info));
        cr_expect_eq(info.effective_compute, KMUX_COMPUTE_F32, "matmul %s: effective %s",
                     kmux_compute_type_name(asked[i]),
                     kmux_compute_type_name(info.effective_compute));
        TU_OK(kmux_plan_destroy(plan));
        kmux_conv2d_desc cd = KMUX_CONV2D_DESC_INIT;
        cd.n = 1, cd.c = 2, cd.h = cd.w = 4, cd.k = 2, cd.r = cd.s = 3;
        cd.compute_type = asked[i];
        TU_OK(kmux_conv2d_plan_create(dev, &cd, NULL, &plan));
        TU_OK(kmux_plan_info_get(plan, &info));
        cr_expect_eq(info.effective_compute, KMUX_COMPUTE_F32, "conv %s: effective %s",
                     kmux_compute_type_name(asked[i]),
                     kmux_compute_type_name(info.effective_compute));
        TU_OK(kmux_plan_destroy(plan));
    }
    TU_OK(kmux_context_destroy(ctx));
}
