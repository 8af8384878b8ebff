/*
 * hip_gemm.c - kmux's own GEMM kernel (kernels/gpu/kmux_gpu_gemm.cu, gemm_kernel) on a HIP
 * device: what the plugin refuses (fp8 formats the architecture's matrix units do not compute
 * in), and the launch by the shared launch logic (backends/gpu/gpu_tiled.c: tile, grid, kernel
 * name, argument struct) on the plugin's launcher (hip_vendor.c: hipModuleLaunchKernel).
 */
#include <stdio.h>

#include "dispatch/common/kmux_dtype_desc.h"
#include "dispatch/common/kmux_type_rules.h"
#include "gpu_kernels.h"
#include "hip_backend.h"

static int fp8_family_ok(const char *arch, kmux_dtype t) {
    if (!kmux_dtype_is_fp8(t)) return 1;
    int fam = kmux_hip_fp8_family(arch);
    return kmux_dtype_is_fnuz(t) ? fam == 'F' : fam == 'O';
}

const char *kmux_hip_gemm_refusal(const kmux_matmul_desc *d, const char *arch, char *buf,
                                  size_t size) {
    const kmux_dtype ts[3] = {d->a_type, d->b_type, d->c_type};
    for (int i = 0; i < 3; i++)
        if (!fp8_family_ok(arch, ts[i]))
            return snprintf(buf, size, "%s is not an fp8 format of %s (its matrix units: %s)",
                            kmux_dtype_desc_of(ts[i]).name, arch, kmux_hip_fp8_formats(arch)),
                   buf;
    const char *why = NULL;
    if (!kmux_rules_matmul_legal(d->a_type, d->b_type, d->c_type, d->compute_type, &why))
        return snprintf(buf, size, "kmux-gpu:gemm: %s", why ? why : "not in the type table"), buf;
    if (kmux_gpu_host_gemm_has_kernel(d->a_type, d->b_type)) return NULL;
    return snprintf(buf, size, "kmux-gpu:gemm has no kernel for %s x %s",
                    kmux_dtype_desc_of(d->a_type).name, kmux_dtype_desc_of(d->b_type).name),
           buf;
}

int kmux_hip_gemm_tile(const kmux_matmul_desc *d, char *buf, size_t size) {
    /* arch 0: the tile rule is the same on every current target */
    int tile = kmux_gpu_host_pick_tile(0, d->m, d->n);
    if (kmux_gpu_host_gemm_name(d, tile, buf, size) != 0) snprintf(buf, size, "kmux-gpu:gemm");
    return tile;
}

kmux_status kmux_hip_gemm_run(kmux_hip_state *st, const kmux_hip_stream_t *s,
                              const kmux_matmul_desc *d, const kmux_matmul_args *a, int tile) {
    const kmux_gpu_launcher l = kmux_gpu_plugin_launcher(st, s);
    return kmux_gpu_host_gemm(&l, d, a, tile);
}
