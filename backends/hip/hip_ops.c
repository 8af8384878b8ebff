/*
 * hip_ops.c - the degenerate-matmul slot of the HIP backend, its matmul op table and the fp8
 * format names.
 *
 * Matmul plans: hip_matmul.c (kmux's own GEMM kernel, rocBLAS when present); convolution plans:
 * hip_conv.c (kmux's own implicit-GEMM kernel). The degenerate matmul (k == 0, alpha == 0) runs
 * on the own GEMM kernel (below).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

/*
 * The degenerate matmul (k == 0 or alpha == 0: D = d_scale * act(beta * C + bias), A and B
 * unread but for a bias gradient's sums) on the own GEMM kernel, which runs both cases itself:
 * on the stream, with no host round trip or synchronisation, so that a step holding one (a
 * convolution's epilogue the core runs after MIOpen or the own convolution) can be captured
 * into a HIP graph.
 */
kmux_status kmux_hip_matmul_degenerate(void *state, void *stream, const kmux_matmul_desc *desc,
                                       const kmux_matmul_args *args) {
    char name[160];
    return kmux_hip_gemm_run(state, stream, desc, args,
                             kmux_hip_gemm_tile(desc, name, sizeof name));
}
