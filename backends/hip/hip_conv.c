/*
 * hip_conv.c - convolution plans of the HIP backend on kmux's own implicit-GEMM kernel
 * (kernels/gpu/kmux_gpu_conv.cu, conv_kernel): FWD, BWD_DATA, BWD_WEIGHTS, NCHW/KCRS and
 * NHWC/KRSC, stride, dilation, groups (depthwise included), asymmetric padding; x, w and y of one
 * dtype among f64, f32, f16, bf16 (accumulation f64 for f64, f32 otherwise). Tile, name, grid
 * and arguments come from the shared launch logic (backends/gpu/gpu_tiled.c), the module launch
 * from the plugin's launcher (hip_vendor.c: hipModuleLaunchKernel), named by the kernel and its
 * tile; and MIOpen's implementations (hip_miopen.c) where the host has MIOpen and it runs the
 * problem: those first (the vendor library is the default, as cuDNN on CUDA), the own kernel
 * last. KMUX_HIP_IMPL ("miopen", "own") keeps the named ones. A call MIOpen is not asked for
 * (alpha != 1 or beta != 0) runs on the own kernel, also when KMUX_HIP_IMPL left it out of the
 * list, traced at KMUX_VERBOSE=2.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "dispatch/common/kmux_dtype_desc.h"
#include "gpu_kernels.h"
#include "hip_backend.h"
#include "kmux_gpu_gemm_params.h"
#include "kmux_sys_alloc.h"

typedef struct hip_conv_plan {
    kmux_conv2d_desc d;
    int n_impls; /* MIOpen's (miopen.n), then the own kernel when it runs d */
    int own;     /* index of the own kernel's implementation, -1 when none */
    int sub;     /* 1: the own kernel runs d (listed or left out by KMUX_HIP_IMPL): calls MIOpen
                    is not asked for run on it */
    kmux_hip_miopen_plan miopen;
    int tile;
    char name[128];
} hip_conv_plan;

static kmux_status conv_plan_create(void *state, int device, const kmux_conv2d_desc *desc,
                                    const kmux_plan_prefs *prefs, void **plan, int *impl_count) {
    kmux_hip_state *st = state;
    const kmux_hip_device *dv = &st->devices[device];
    const kmux_dtype t = desc->x_type;
    static const char *const libs[] = {"miopen", "own"};
    char why_own[256], why_mi[512], why_force[160];
    const int forced = kmux_hip_impl_forced(libs, 2, why_force, sizeof why_force);
    if (forced < 0)
        return st->host->set_error(KMUX_ERR_INVALID_ARGUMENT,
                                   "hip: kmux_conv2d_plan_create on hip:%d: %s", device, why_force);
    const char *no_own = NULL;
    if (desc->w_type != t || desc->y_type != t || !kmux_gpu_host_conv_type(t))
        no_own = why_own,
        snprintf(why_own, sizeof why_own,
                 "kmux-gpu:conv2d runs x, w and y of one dtype among f64, f32, "
                 "f16 and bf16 (got x %s, w %s, y %s)",
                 kmux_dtype_desc_of(t).name, kmux_dtype_desc_of(desc->w_type).name,
                 kmux_dtype_desc_of(desc->y_type).name);
    const int sub = !no_own;
    if (!(forced & 2) && !no_own) no_own = why_force;
    const char *no_mi = kmux_hip_miopen_refusal(desc, why_mi, sizeof why_mi);
    if (!(forced & 1) && !no_mi) no_mi = why_force;
    hip_conv_plan *p = kmux_sys_calloc(1, sizeof *p);
    if (!p) return st->host->set_error(KMUX_ERR_OUT_OF_MEMORY, "hip: conv plan: out of memory");
    if (!no_mi) {
        const int det =
            prefs &&
            prefs->struct_size >= offsetof(kmux_plan_prefs, require_deterministic) + sizeof(int) &&
            prefs->require_deterministic;
        /* the core resolves prefs->tune (KMUX_TUNE, the device): on, MIOpen's find step */
        const int find = prefs &&
                         prefs->struct_size >= offsetof(kmux_plan_prefs, tune) + sizeof(int) &&
                         prefs->tune == KMUX_TUNE_ON;
        const size_t cap = prefs && prefs->max_workspace_bytes != SIZE_MAX
                               ? prefs->max_workspace_bytes
                               : KMUX_HIP_MIOPEN_DEFAULT_WORKSPACE;
        kmux_status ks = kmux_hip_miopen_plan_build(st, device, desc, find, det, cap, &p->miopen,
                                                    why_mi, sizeof why_mi);
        if (ks != KMUX_OK && ks != KMUX_ERR_UNSUPPORTED) {
            free(p);
            return ks;
        }
        if (ks != KMUX_OK) no_mi = why_mi;
    }
    if (no_mi && no_own) {
        free(p);
        return st->host->set_error(KMUX_ERR_UNSUPPORTED,
                                   "hip: kmux_conv2d_plan_create on hip:%d (%s): %s; MIOpen: %s",
                                   device, dv->arch, no_own, no_mi);
    }
    p->d = *desc;
    p->own = -1;
    p->sub = sub;
    if (sub) {
        /* arch 0: the tile rule is the same on every current target */
        p->tile = kmux_gpu_host_conv2d_pick_tile(0, desc);
        if (kmux_gpu_host_conv2d_name(desc, p->tile, p->name, sizeof p->name) != 0)
            snprintf(p->name, sizeof p->name, "kmux-gpu:conv2d");
    }
    /* AMD's library first where it runs the problem (as cuDNN on cuda:N) */
    p->n_impls = no_mi ? 0 : p->miopen.n;
    if (!no_own) p->own = p->n_impls++;
    if (st->host->verbose >= 2)
        st->host->trace(2, "plan,hip:%d,conv2d,impls=%d,miopen=%s,own=%s", device, p->n_impls,
                        no_mi ? no_mi : "yes", no_own ? no_own : "yes");
    *plan = p;
    *impl_count = p->n_impls;
    return KMUX_OK;
}

static kmux_status conv_execute(void *state, const void *plan, int impl, void *stream,
                                const kmux_conv2d_args *args) {
    kmux_hip_state *st = state;
    const hip_conv_plan *p = plan;
    kmux_hip_stream_t *s = stream;
    if (impl < 0 || impl >= p->n_impls) impl = 0;
    if (impl != p->own) {
        const char *no = kmux_hip_miopen_call_refusal(args);
        if (!no) return kmux_hip_miopen_run(st, s, &p->miopen, impl, args);
        if (!p->sub)
            return st->host->set_error(KMUX_ERR_UNSUPPORTED,
                                       "hip: kmux_conv2d_execute on hip:%d: %s, and kmux's own "
                                       "kernel cannot run the plan",
                                       s->device, no);
        if (st->host->verbose >= 2)
            st->host->trace(2, "substitute,hip:%d,conv2d,impl=%d,%s,%s", s->device, impl, p->name,
                            no);
    }
    const kmux_gpu_launcher l = kmux_gpu_plugin_launcher(state, stream);
    return kmux_gpu_host_conv2d(&l, &p->d, args, p->tile);
}

static kmux_status conv_plan_info(void *state, const void *plan, int impl, kmux_plan_info *info) {
    (void)state;
    const hip_conv_plan *p = plan;
    if (impl < 0 || impl >= p->n_impls) impl = 0;
    if (impl != p->own) {
        const kmux_hip_miopen_impl *im = &p->miopen.impls[impl];
        info->impl = im->name;
        /* kmux sets no reduced-precision attribute: MIOpen accumulates in f32 (a fast f32 mode
         * only lets the FFT and Winograd solutions in) */
        info->effective_compute = KMUX_COMPUTE_F32;
        info->workspace_bytes = im->workspace;
        info->deterministic = p->miopen.deterministic;
        return KMUX_OK;
    }
    info->impl = p->name;
    info->effective_compute = kmux_gpu_own_effective_compute(p->d.compute_type);
    info->workspace_bytes = 0;
    info->deterministic = 1; /* fixed-order accumulation, no atomics */
    return KMUX_OK;
}

static void conv_plan_destroy(void *state, void *plan) {
    hip_conv_plan *p = plan;
    if (p && p->miopen.n) kmux_hip_miopen_plan_release(state, &p->miopen);
    free(plan);
}

const kmux_conv2d_ops kmux_hip_conv2d_ops = {
    .plan_create = conv_plan_create,
    .execute = conv_execute,
    .plan_info = conv_plan_info,
    .plan_destroy = conv_plan_destroy,
};
