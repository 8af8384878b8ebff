/*
 * test_hip_with_cuda.c - the CUDA and the HIP plugins in one process: both load (RTLD_NOW |
 * RTLD_LOCAL, as the core loads them) without a symbol clash, each exports only
 * kmux_backend_entry, and hip:0 (on the fake HIP runtime, KMUX_HIP_RUNTIME) works while the CUDA
 * plugin is loaded.
 */
#include <criterion/criterion.h>
#include <string.h>

#include "kmux.h"
#include "test_util.h"

Test(hip_with_cuda, both_plugins_load_in_one_process) {
    kmux_context *ctx = tu_context();
    int n = 0, cuda = -1, hip = -1;
    TU_OK(kmux_backend_count(ctx, &n));
    kmux_backend_info bi[16];
    for (int i = 0; i < n && i < 16; i++) {
        TU_OK(kmux_backend_info_get(ctx, i, &bi[i]));
        if (strcmp(bi[i].name, "cuda") == 0) cuda = i;
        if (strcmp(bi[i].name, "hip") == 0) hip = i;
    }
    cr_assert(cuda >= 0 && hip >= 0, "cuda %d, hip %d listed", cuda, hip);
    /* the CUDA plugin loaded (its version() answered) rather than failing in dlopen */
    cr_assert(strstr(bi[cuda].version, "cuBLASLt") != NULL, "cuda: version '%s', reason '%s'",
              bi[cuda].version, bi[cuda].reason);
#if !KMUX_TEST_HIP_CODE_OBJECTS
    /* a plugin built without code objects has no hip:0: both loaded, the rest is untestable */
    if (!bi[hip].available) {
        kmux_context_destroy(ctx);
        cr_skip_test("hip:0 absent (plugin built without code objects): %s", bi[hip].reason);
    }
#endif
    cr_assert(bi[hip].available, "hip with the fake runtime: %s", bi[hip].reason);
    kmux_device *dev = NULL;
    TU_OK(kmux_device_find(ctx, "hip:0", &dev));
    kmux_stream *s = NULL;
    TU_OK(kmux_stream_create(dev, &s));
    float x[64], y[64];
    for (int i = 0; i < 64; i++)
        x[i] = (float)i - 31.5f;
    float *d = NULL, *amax = NULL;
    TU_OK(kmux_malloc(dev, sizeof x, (void **)&d));
    TU_OK(kmux_malloc(dev, sizeof(float), (void **)&amax));
    TU_OK(kmux_memcpy(s, d, x, sizeof x, KMUX_MEMCPY_HOST_TO_DEVICE));
    TU_OK(kmux_amax(s, 64, d, KMUX_F32, amax));
    TU_OK(kmux_memcpy(s, y, amax, sizeof(float), KMUX_MEMCPY_DEVICE_TO_HOST));
    TU_OK(kmux_stream_synchronize(s));
    cr_expect_eq(y[0], 31.5f, "amax %g", y[0]);
    TU_OK(kmux_free(dev, d));
    TU_OK(kmux_free(dev, amax));
    TU_OK(kmux_stream_destroy(s));
    kmux_context_destroy(ctx);
}
