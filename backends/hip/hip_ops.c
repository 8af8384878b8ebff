/*
 * hip_ops.c - the degenerate-matmul slot of the HIP backend, its matmul op table and the fp8
 * format names.
 *
 * Matmul plans: hip_matmul.c (kmux's own GEMM kernel, rocBLAS when present); convolution plans:
 * hip_conv.c (kmux's own implicit-GEMM kernel). The degenerate matmul (k == 0, alpha == 0) runs
 * through the host, on THE CPU finish routine (below).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dispatch/common/cpu_finish.h"
#include "dispatch/common/kmux_dtype_desc.h"
#include "hip_backend.h"

const char *kmux_hip_fp8_formats(const char *arch) {
    switch (kmux_hip_fp8_family(arch)) {
    case 'F':
        return "fp8 in the FNUZ formats only (e4m3fnuz, e5m2fnuz)";
    case 'O':
        return "fp8 in the OCP formats only (e4m3, e5m2)";
    default:
        return "no fp8";
    }
}

int kmux_hip_impl_forced(const char *const *names, int count, char *why, size_t size) {
    static const char *const known[] = {"hipblaslt", "rocblas", "miopen", "own"};
    const char *v = getenv("KMUX_HIP_IMPL");
    const int all = (1 << count) - 1;
    why[0] = 0;
    if (!v || !*v) return all;
    int mask = 0;
    for (const char *w = v; *w;) {
        size_t n = strcspn(w, ",");
        if (n == 0) { /* an empty word (",own", "own,,rocblas"): nothing named */
            w += w[n] == ',';
            continue;
        }
        int is_known = 0;
        for (size_t i = 0; i < sizeof known / sizeof known[0]; i++)
            is_known |= strlen(known[i]) == n && strncmp(w, known[i], n) == 0;
        if (!is_known) {
            snprintf(why, size,
                     "KMUX_HIP_IMPL='%s': '%.*s' is none of hipblaslt, rocblas, miopen, own "
                     "(comma-separated)",
                     v, (int)n, w);
            return -1;
        }
        for (int i = 0; i < count; i++)
            if (strlen(names[i]) == n && strncmp(w, names[i], n) == 0) mask |= 1 << i;
        w += n + (w[n] == ',');
    }
    if (!mask) return all; /* it names only another op's libraries */
    snprintf(why, size, "left out by KMUX_HIP_IMPL=%s", v);
    return mask;
}

const kmux_matmul_ops kmux_hip_matmul_ops = {
    .plan_create = kmux_hip_matmul_plan_create,
    .execute = kmux_hip_matmul_execute,
    .plan_info = kmux_hip_matmul_plan_info,
    .plan_destroy = kmux_hip_matmul_plan_destroy,
};

/* Elements spanned by a matrix of rows x cols with leading dimension ld (batch stride). */
static int64_t span(kmux_order order, int64_t rows, int64_t cols, int64_t ld, int64_t batch,
                    int64_t stride) {
    int64_t outer = order == KMUX_ROW_MAJOR ? rows : cols;
    int64_t inner = order == KMUX_ROW_MAJOR ? cols : rows;
    return (outer - 1) * ld + inner + (batch - 1) * stride;
}

/* Device -> host (or back) on the stream, then wait. */
static kmux_status copy_sync(kmux_hip_state *st, kmux_hip_stream_t *s, void *dst, const void *src,
                             size_t bytes, kmux_memcpy_kind kind) {
    kmux_status ks = kmux_gpu_slot_mem_copy(st, s, dst, src, bytes, kind);
    return ks != KMUX_OK ? ks : kmux_gpu_slot_stream_synchronize(st, s);
}

/*
 * The degenerate matmul (k == 0 or alpha == 0: D = d_scale * act(beta * C + bias), A and B
 * unread) through the host: C, bias and d_scale are copied to host memory, finished by THE CPU
 * finish routine of dispatch/common (the one the core runs for host devices, so the result is
 * ref's bit for bit) and D (and amax_d) copied back. Synchronous (the stream is waited for
 * twice): a correct path for a rare case, not a fast one; a device kernel replaces it when
 * kernels/gpu has one.
 */
kmux_status kmux_hip_matmul_degenerate(void *state, void *stream, const kmux_matmul_desc *desc,
                                       const kmux_matmul_args *args) {
    kmux_hip_state *st = state;
    kmux_hip_stream_t *s = stream;
    if (desc->epilogue & (KMUX_EPILOGUE_ALONE | KMUX_EPILOGUE_WITH_AUX)) {
        /* aux and bias gradient: the own GEMM kernel, which runs k = 0 and alpha = 0 itself */
        char name[160];
        return kmux_hip_gemm_run(st, s, desc, args, kmux_hip_gemm_tile(desc, name, sizeof name));
    }
    const int64_t nc =
        span(desc->order, desc->m, desc->n, desc->ldc, desc->batch_count, desc->stride_c);
    const size_t cb = (size_t)nc * kmux_dtype_bytes(desc->c_type);
    const int bias = (desc->epilogue & KMUX_EPILOGUE_BIAS) != 0;
    const size_t bb = bias ? (size_t)desc->n * kmux_dtype_bytes(desc->bias_type) : 0;
    unsigned char *c = malloc(cb), *b = bb ? malloc(bb) : NULL;
    if (!c || (bb && !b)) {
        free(c);
        free(b);
        return st->host->set_error(KMUX_ERR_OUT_OF_MEMORY,
                                   "hip: kmux_matmul (degenerate) on hip:%d: %zu bytes of host "
                                   "memory for C",
                                   s->device, cb + bb);
    }
    float d_scale = 1.0f, amax = 0.0f;
    kmux_status ks = copy_sync(st, s, c, args->C, cb, KMUX_MEMCPY_DEVICE_TO_HOST);
    if (ks == KMUX_OK && bias) ks = copy_sync(st, s, b, args->bias, bb, KMUX_MEMCPY_DEVICE_TO_HOST);
    if (ks == KMUX_OK && args->d_scale)
        ks = copy_sync(st, s, &d_scale, args->d_scale, sizeof d_scale, KMUX_MEMCPY_DEVICE_TO_HOST);
    if (ks == KMUX_OK) {
        kmux_matmul_args h = *args;
        h.A = h.B = NULL;
        h.a_scale = h.b_scale = NULL; /* no product: the operand scales are not used */
        h.C = c;
        h.bias = b;
        h.d_scale = args->d_scale ? &d_scale : NULL;
        h.amax_d = args->amax_d ? &amax : NULL;
        kmux_cpu_finish(desc, &h, NULL);
        ks = copy_sync(st, s, args->C, c, cb, KMUX_MEMCPY_HOST_TO_DEVICE);
        if (ks == KMUX_OK && args->amax_d)
            ks = copy_sync(st, s, args->amax_d, &amax, sizeof amax, KMUX_MEMCPY_HOST_TO_DEVICE);
    }
    free(c);
    free(b);
    return ks;
}
