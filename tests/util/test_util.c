#include "test_util.h"

#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

kmux_context *tu_context(void) {
    kmux_context *ctx = NULL;
    TU_OK(kmux_context_create(NULL, &ctx));
    return ctx;
}

kmux_device *tu_device(kmux_context *ctx, const char *id) {
    kmux_device *dev = NULL;
    if (kmux_device_find(ctx, id, &dev) != KMUX_OK) {
        fprintf(stderr, "device %s not available: %s\n", id, kmux_last_error());
        return NULL;
    }
    return dev;
}

const char **tu_device_ids(kmux_context *ctx) {
    static const char *ids[64];
    int n = 0;
    TU_OK(kmux_device_count(ctx, &n));
    int j = 0;
    for (int i = 0; i < n && j < 63; i++) {
        kmux_device *d = NULL;
        TU_OK(kmux_device_get(ctx, i, &d));
        ids[j++] = kmux_device_id(d);
    }
    ids[j] = NULL;
    return ids;
}

int tu_devices_under_test(const char *ids[4]) {
    const char *want = getenv("KMUX_TEST_DEVICE");
    if (want && want[0]) return ids[0] = want, 1;
    ids[0] = "ref", ids[1] = "cpu:onednn", ids[2] = "cpu:openblas", ids[3] = "cpu:auto";
    return 4;
}

uint64_t tu_rand_u64(uint64_t *state) {
    uint64_t x = *state ? *state : 0x9E3779B97F4A7C15ull;
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    *state = x;
    return x * 0x2545F4914F6CDD1Dull;
}

double tu_rand_uniform(uint64_t *state, double lo, double hi) {
    return lo + (hi - lo) * (double)(tu_rand_u64(state) >> 11) * (1.0 / 9007199254740992.0);
}

void tu_capture_begin(tu_capture *c) {
    snprintf(c->path, sizeof c->path, "/tmp/kmux-test-capture-XXXXXX");
    fflush(stderr);
    c->saved = dup(2);
    c->fd = mkstemp(c->path);
    cr_assert(c->fd >= 0 && c->saved >= 0, "cannot capture standard error");
    dup2(c->fd, 2);
}

void tu_capture_end(tu_capture *c, char *text, size_t size) {
    fflush(stderr);
    dup2(c->saved, 2);
    close(c->fd);
    close(c->saved);
    FILE *f = fopen(c->path, "r");
    cr_assert_not_null(f, "cannot open %s", c->path);
    size_t n = fread(text, 1, size - 1, f);
    text[n] = '\0';
    fclose(f);
    unlink(c->path);
}
