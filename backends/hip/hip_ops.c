/*
 * hip_ops.c - the matmul, convolution and degenerate-matmul slots of the HIP backend.
 *
 * NOT IMPLEMENTED YET (TODO): kernels/gpu has no GEMM and no implicit-GEMM convolution kernel in
 * this tree, and rocBLAS / hipBLASLt / MIOpen are not opened yet, so every plan is refused with
 * KMUX_ERR_UNSUPPORTED and the reason, never run by a stand-in. The slots exist so that the
 * refusal names the device, its architecture and its fp8 formats instead of the core's generic
 * "does not run matmul". When kmux_gpu_gemm.cu lands, plan_create builds its implementations here
 * (names "kmux_gpu_gemm_<tile>"), launched through hip_kernels.c like the element-wise kernels.
 */
#include "dispatch/common/kmux_dtype_desc.h"
#include "hip_backend.h"

static const char *fp8_formats(const char *arch) {
    switch (kmux_hip_fp8_family(arch)) {
    case 'F':
        return "fp8 in the FNUZ formats only (e4m3fnuz, e5m2fnuz)";
    case 'O':
        return "fp8 in the OCP formats only (e4m3, e5m2)";
    default:
        return "no fp8";
    }
}

static kmux_status refuse(kmux_hip_state *st, int device, const char *what, const char *kernel) {
    const kmux_hip_device *d = &st->devices[device];
    return st->host->set_error(KMUX_ERR_UNSUPPORTED,
                               "hip: %s on hip:%d (%s, matrix units: %s): kernels/gpu has no %s "
                               "kernel in this build of kmux-hip, and rocBLAS/hipBLASLt/MIOpen "
                               "are not used yet",
                               what, device, d->arch, fp8_formats(d->arch), kernel);
}

static kmux_status matmul_plan_create(void *state, int device, const kmux_matmul_desc *desc,
                                      const kmux_plan_prefs *prefs, void **plan, int *impl_count) {
    (void)desc, (void)prefs, (void)plan, (void)impl_count;
    return refuse(state, device, "kmux_matmul_plan_create", "GEMM");
}

static kmux_status conv_plan_create(void *state, int device, const kmux_conv2d_desc *desc,
                                    const kmux_plan_prefs *prefs, void **plan, int *impl_count) {
    (void)desc, (void)prefs, (void)plan, (void)impl_count;
    return refuse(state, device, "kmux_conv2d_plan_create", "convolution");
}

/* No plan is ever created, so the remaining slots are never reached; they answer honestly. */
static kmux_status no_plan(void *state) {
    kmux_hip_state *st = state;
    return st->host->set_error(KMUX_ERR_INTERNAL, "hip: no plan of this backend exists");
}
static kmux_status matmul_execute(void *state, const void *plan, int impl, void *stream,
                                  const kmux_matmul_args *args) {
    (void)plan, (void)impl, (void)stream, (void)args;
    return no_plan(state);
}
static kmux_status conv_execute(void *state, const void *plan, int impl, void *stream,
                                const kmux_conv2d_args *args) {
    (void)plan, (void)impl, (void)stream, (void)args;
    return no_plan(state);
}
static kmux_status plan_info(void *state, const void *plan, int impl, kmux_plan_info *info) {
    (void)plan, (void)impl, (void)info;
    return no_plan(state);
}
static void plan_destroy(void *state, void *plan) {
    (void)state, (void)plan;
}

const kmux_matmul_ops kmux_hip_matmul_ops = {
    .plan_create = matmul_plan_create,
    .execute = matmul_execute,
    .plan_info = plan_info,
    .plan_destroy = plan_destroy,
};

const kmux_conv2d_ops kmux_hip_conv2d_ops = {
    .plan_create = conv_plan_create,
    .execute = conv_execute,
    .plan_info = plan_info,
    .plan_destroy = plan_destroy,
};

kmux_status kmux_hip_matmul_degenerate(void *state, void *stream, const kmux_matmul_desc *desc,
                                       const kmux_matmul_args *args) {
    (void)desc, (void)args;
    const kmux_hip_stream_t *s = stream;
    return refuse(state, s->device, "kmux_matmul (degenerate: k = 0 or alpha = 0)", "GEMM finish");
}
