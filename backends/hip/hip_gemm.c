/*
 * hip_gemm.c - kmux's own GEMM kernel (kernels/gpu/kmux_gpu_gemm.cu, gemm_kernel) on a HIP
 * device: launched by its mangled name from the embedded code object with hipModuleLaunchKernel,
 * its argument struct (kmux_gpu_gemm_params.h, shared with the device code) by value in
 * kernelParams, filled by the same function kmux_gpu_gemm uses. Grid and tile choice mirror
 * kmux_gpu_gemm / kmux_gpu_pick_tile (x = tiles of m, y = tiles of n, z = batch, y and z capped
 * at 65535 with the kernel looping beyond).
 */
#include <stdio.h>
#include <string.h>

#include "dispatch/common/kmux_dtype_desc.h"
#include "dispatch/common/kmux_type_rules.h"
#include "hip_backend.h"
#include "hip_kernel_names.h"
#include "kmux_gpu_gemm_params.h"

#define GEMM_THREADS 256
#define MAX_GRID_YZ 65535

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
    for (int i = 0; i < NGEMM; i++)
        if (gemm_pairs[i][0] == d->a_type && gemm_pairs[i][1] == d->b_type) return NULL;
    return snprintf(buf, size, "kmux-gpu:gemm has no kernel for %s x %s",
                    kmux_dtype_desc_of(d->a_type).name, kmux_dtype_desc_of(d->b_type).name),
           buf;
}

int kmux_hip_gemm_tile(const kmux_matmul_desc *d, char *buf, size_t size) {
    /* kmux_gpu_pick_tile: every current target prefers the large tile from 64 x 64 x 16 up */
    int tile = d->m * d->n >= (int64_t)64 * 64 * 16 ? 0 : 1;
    const int *t = gemm_tiles[tile];
    const char *acc = d->a_type == KMUX_F64 ? "f64" : d->a_type == KMUX_I8 ? "i32" : "f32";
    snprintf(buf, size, "kmux-gpu:gemm:%s*%s->%s:acc=%s:tile=%dx%dx%d/%dx%d",
             kmux_dtype_desc_of(d->a_type).name, kmux_dtype_desc_of(d->b_type).name,
             kmux_dtype_desc_of(d->c_type).name, acc, t[0], t[1], t[2], t[3], t[4]);
    return tile;
}

kmux_status kmux_hip_gemm_run(kmux_hip_state *st, const kmux_hip_stream_t *s,
                              const kmux_matmul_desc *d, const kmux_matmul_args *a, int tile) {
    const char *what = "kmux_matmul_execute";
    if (d->m == 0 || d->n == 0 || d->batch_count == 0) return KMUX_OK; /* as kmux.h says */
    if (a->amax_d) { /* the kernel merges into *amax_d with atomicMax: start from +0 */
        kmux_hip_guard g;
        kmux_status ks = kmux_hip_enter(st, s->device, what, &g);
        if (ks != KMUX_OK) return ks;
        kmux_hip_error e = st->api.hipMemsetAsync(a->amax_d, 0, sizeof(float), s->stream);
        kmux_hip_leave(st, &g);
        if (e != KMUX_HIP_SUCCESS)
            return kmux_hip_fail(st, e, "%s: hipMemsetAsync(amax_d) on hip:%d", what, s->device);
    }
    const int *t = gemm_tiles[tile];
    const int64_t gx = (d->m + t[0] - 1) / t[0], gy = (d->n + t[1] - 1) / t[1];
    if (gx > INT32_MAX)
        return st->host->set_error(KMUX_ERR_UNSUPPORTED,
                                   "hip: %s on hip:%d: m = %lld needs %lld row tiles, more than "
                                   "a grid's x dimension (2^31 - 1)",
                                   what, s->device, (long long)d->m, (long long)gx);
    const unsigned grid[3] = {
        (unsigned)gx, (unsigned)(gy < MAX_GRID_YZ ? gy : MAX_GRID_YZ),
        (unsigned)(d->batch_count < MAX_GRID_YZ ? d->batch_count : MAX_GRID_YZ)};
    kmux_gpu_gemm_params p;
    memset(&p, 0, sizeof p);
    kmux_gpu_gemm_params_fill(&p, d, a);
    char name[160];
    kmux_hip_gemm_kernel_name(d->a_type, d->b_type, tile, name, sizeof name);
    void *params[] = {&p};
    return kmux_hip_launch_3d(st, s, KMUX_HIP_MOD_GEMM, name, grid, GEMM_THREADS, params, what);
}
