/*
 * gpu_checks.h - what the files of kmux_gpu_checks share: the devices and streams under test, the
 * verdict line, device buffers. kmux_gpu_checks.c has main and the single-purpose checks,
 * kmux_gpu_impls.c the walks over every implementation of a plan.
 */
#ifndef KMUX_GPU_CHECKS_H
#define KMUX_GPU_CHECKS_H

#include <stddef.h>
#include <stdio.h>

#include "kmux.h"

extern kmux_context *ctx;
extern kmux_device *gpu, *ref;
extern kmux_stream *gs, *rs;

#define TRY(call)                                                                                  \
    do {                                                                                           \
        kmux_status s_ = (call);                                                                   \
        if (s_ != KMUX_OK) {                                                                       \
            fprintf(stderr, "  %s: %s (%s)\n", #call, kmux_status_str(s_), kmux_last_error());     \
            return s_;                                                                             \
        }                                                                                          \
    } while (0)

/** Prints "PASS name: ..." or "FAIL name: ..." and counts a failure. */
void verdict(const char *name, int ok, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

/** A device buffer: bytes + offset + 256 allocated, zeroed. */
typedef struct buf {
    kmux_device *dev;
    void *base;
    size_t bytes;
} buf;
/** Allocates b on dev, puts *ptr `offset` bytes into it and copies `bytes` of host there (host
 *  may be NULL). Synchronises s. */
kmux_status up(kmux_device *dev, kmux_stream *s, const void *host, size_t bytes, size_t offset,
               buf *b, void **ptr);
void drop(buf *b);
/** Copies bytes from the device to host and synchronises s. */
kmux_status down(kmux_stream *s, void *host, const void *dev, size_t bytes);

/* kmux_gpu_impls.c */
int check_impls_gemm(void);
int check_impls_conv(void);

#endif
