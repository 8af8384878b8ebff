/*
 * cuda_errors.c - CUDA driver, cuBLASLt and cuDNN errors as kmux statuses with a message that
 * names the operation, the device and the native code with its name.
 */
#include <stdarg.h>
#include <stdio.h>

#include "cuda_backend.h"

kmux_status kmux_cuda_status_of(CUresult e) {
    switch (e) {
    case CUDA_SUCCESS:
        return KMUX_OK;
    case CUDA_ERROR_OUT_OF_MEMORY:
        return KMUX_ERR_OUT_OF_MEMORY;
    case CUDA_ERROR_NO_DEVICE:
    case CUDA_ERROR_INVALID_DEVICE:
    case CUDA_ERROR_DEINITIALIZED:
    case CUDA_ERROR_NOT_INITIALIZED:
    case CUDA_ERROR_SYSTEM_DRIVER_MISMATCH:
    case CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE:
    case CUDA_ERROR_DEVICE_UNAVAILABLE:
    case CUDA_ERROR_STUB_LIBRARY:
        return KMUX_ERR_DEVICE_UNAVAILABLE;
    case CUDA_ERROR_NOT_SUPPORTED:
    case CUDA_ERROR_NO_BINARY_FOR_GPU:
    case CUDA_ERROR_UNSUPPORTED_PTX_VERSION:
        return KMUX_ERR_UNSUPPORTED;
    default:
        return KMUX_ERR_DEVICE;
    }
}

const char *kmux_cuda_error_name(CUresult e, char *buf, size_t size) {
    const char *name = NULL;
    if (kmux_cuda_lib.drv_ok && cuGetErrorName(e, &name) == CUDA_SUCCESS && name) return name;
    snprintf(buf, size, "CUresult %d", (int)e);
    return buf;
}

/* The message is built in two steps so that the caller's context comes first. */
static void format_context(char *buf, size_t size, const char *fmt, va_list ap)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 0)))
#endif
    ;
static void format_context(char *buf, size_t size, const char *fmt, va_list ap) {
    vsnprintf(buf, size, fmt, ap);
}

kmux_status kmux_cuda_fail(const kmux_cuda_state *st, CUresult e, const char *fmt, ...) {
    char buf[32];
    const char *desc = NULL;
    if (kmux_cuda_lib.drv_ok && cuGetErrorString(e, &desc) != CUDA_SUCCESS) desc = NULL;
    const kmux_gpu_vendor_code c = {kmux_cuda_error_name(e, buf, sizeof buf), (int)e,
                                    desc ? desc : "no description", "", " [backend cuda]"};
    va_list ap;
    va_start(ap, fmt);
    kmux_status s = kmux_gpu_vendor_error(st->host, kmux_cuda_status_of(e), &c, fmt, ap);
    va_end(ap);
    return s;
}

kmux_status kmux_cuda_fail_lt(const kmux_cuda_state *st, cublasStatus_t s, const char *fmt, ...) {
    char ctx[512];
    va_list ap;
    va_start(ap, fmt);
    format_context(ctx, sizeof ctx, fmt, ap);
    va_end(ap);
    kmux_status k = s == CUBLAS_STATUS_ALLOC_FAILED    ? KMUX_ERR_OUT_OF_MEMORY
                    : s == CUBLAS_STATUS_NOT_SUPPORTED ? KMUX_ERR_UNSUPPORTED
                    : s == CUBLAS_STATUS_ARCH_MISMATCH ? KMUX_ERR_UNSUPPORTED
                                                       : KMUX_ERR_DEVICE;
    return st->host->set_error(k, "%s: %s (%d): %s [backend cuda, cuBLASLt %zu]", ctx,
                               cublasLtGetStatusName(s), (int)s, cublasLtGetStatusString(s),
                               cublasLtGetVersion());
}

kmux_status kmux_cuda_fail_dnn(const kmux_cuda_state *st, cudnnStatus_t s, const char *fmt, ...) {
    char ctx[512];
    va_list ap;
    va_start(ap, fmt);
    format_context(ctx, sizeof ctx, fmt, ap);
    va_end(ap);
    /* cuDNN 9 groups its codes by category (3xxx: not supported, ...). */
    kmux_status k = KMUX_ERR_DEVICE;
    if (s == CUDNN_STATUS_INTERNAL_ERROR_HOST_ALLOCATION_FAILED ||
        s == CUDNN_STATUS_INTERNAL_ERROR_DEVICE_ALLOCATION_FAILED)
        k = KMUX_ERR_OUT_OF_MEMORY;
    else if (CUDNN_STATUS_CATEGORY(s) == CUDNN_STATUS_NOT_SUPPORTED)
        k = KMUX_ERR_UNSUPPORTED;
    return st->host->set_error(k, "%s: cuDNN status %d: %s [backend cuda, cuDNN %zu]", ctx, (int)s,
                               cudnnGetErrorString(s), cudnnGetVersion());
}

kmux_status kmux_cuda_error(const kmux_cuda_state *st, kmux_status status, const char *fmt, ...) {
    char ctx[768];
    va_list ap;
    va_start(ap, fmt);
    format_context(ctx, sizeof ctx, fmt, ap);
    va_end(ap);
    return st->host->set_error(status, "%s [backend cuda]", ctx);
}
