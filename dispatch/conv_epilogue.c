/*
 * conv_epilogue.c - a forward convolution's epilogue (kmux.h: y = act(alpha conv + beta y +
 * bias[k]), the ReLU's mask): its rules, and the core's run of it for a device whose library does
 * not fuse it. y is a matrix whose columns are the output channels, so the epilogue is the
 * matmul's with k = 0 and beta = 1 over y in place (kmux_conv_epilogue_matmul, cpu_finish.h): the
 * shared CPU finish on host devices, the plugin's matmul_degenerate (the own GEMM kernel) on a GPU.
 */
#include <stdint.h>

#include "internal.h"
#include "dispatch/common/cpu_finish.h"
#include "validate.h"

#define INVALID(...) kmux_set_error(KMUX_ERR_INVALID_ARGUMENT, __VA_ARGS__)

kmux_status kmux_conv_epilogue_check_desc(const char *fn, const kmux_conv2d_desc *d) {
    const unsigned e = d->epilogue;
    if (!e) return KMUX_OK;
    if (d->direction != KMUX_CONV_FWD)
        return INVALID("%s: epilogue = 0x%x on a %s convolution: only the forward direction has "
                       "one",
                       fn, e,
                       d->direction == KMUX_CONV_BWD_DATA ? "backward-data" : "backward-weights");
    if (e & ~KMUX_CONV_EPILOGUES)
        return INVALID("%s: epilogue = 0x%x: %s is not a convolution epilogue (BIAS, RELU, GELU, "
                       "RELU_AUX)",
                       fn, e, kmux_epilogue_flag_name(e & ~KMUX_CONV_EPILOGUES));
    if ((e & KMUX_EPILOGUE_RELU) && (e & KMUX_EPILOGUE_GELU))
        return INVALID("%s: epilogue = 0x%x: RELU and GELU are exclusive", fn, e);
    if ((e & KMUX_EPILOGUE_RELU_AUX) && !(e & KMUX_EPILOGUE_RELU))
        return INVALID("%s: epilogue = 0x%x: RELU_AUX needs RELU", fn, e);
    if ((e & KMUX_EPILOGUE_BIAS) && d->bias_type != KMUX_F32 && d->bias_type != d->y_type)
        return INVALID("%s: bias_type = %s (%d) must be f32 or y_type (%s)", fn,
                       kmux_dtype_is_valid(d->bias_type) ? kmux_dtype_name(d->bias_type) : "?",
                       (int)d->bias_type, kmux_dtype_name(d->y_type));
    return KMUX_OK;
}

size_t kmux_conv_aux_bytes(const kmux_conv2d_desc *d) {
    if (!(d->epilogue & KMUX_EPILOGUE_RELU_AUX)) return 0;
    size_t bytes[3];
    kmux_conv_tensor_bytes(d, bytes);
    const size_t elems = bytes[2] / kmux_dtype_bytes(d->y_type);
    return (elems + 7) / 8;
}

size_t kmux_conv_bias_bytes(const kmux_conv2d_desc *d) {
    if (!(d->epilogue & KMUX_EPILOGUE_BIAS)) return 0;
    return (size_t)d->k * kmux_dtype_bytes(d->bias_type);
}

kmux_status kmux_conv_epilogue_check_args(const char *fn, const kmux_conv2d_desc *d,
                                          const kmux_conv2d_args *a) {
    const unsigned e = d->epilogue;
    if (!e) return KMUX_OK;
    if ((e & KMUX_EPILOGUE_RELU_AUX) && a->aux && (uintptr_t)a->aux % 4)
        return INVALID("%s: args->aux = %p is not aligned to 4 bytes (the ReLU mask)", fn, a->aux);
    size_t bytes[3];
    kmux_conv_tensor_bytes(d, bytes);
    const kmux_exec_tensor t[5] = {
        {.name = "y", .p = a->y, .bytes = bytes[2], .written = 1, .needed = 1},
        {.name = "aux",
         .p = a->aux,
         .bytes = kmux_conv_aux_bytes(d),
         .written = 1,
         .needed = (e & KMUX_EPILOGUE_RELU_AUX) != 0},
        {.name = "bias",
         .p = a->bias,
         .bytes = kmux_conv_bias_bytes(d),
         .needed = (e & KMUX_EPILOGUE_BIAS) != 0},
        {.name = "x", .p = a->x, .bytes = bytes[0]},
        {.name = "w", .p = a->w, .bytes = bytes[1]},
    };
    return kmux_check_exec_tensors(fn, t, 5, "the epilogue needs it");
}

kmux_status kmux_conv_epilogue_run(const char *fn, kmux_stream *stream, const kmux_conv2d_desc *d,
                                   const kmux_conv2d_args *a) {
    static const double one_d = 1.0;
    static const float one_f = 1.0f;
    kmux_matmul_desc md;
    kmux_matmul_args ma;
    kmux_conv_epilogue_matmul(d, a->y, a->bias, a->aux,
                              d->y_type == KMUX_F64 ? (const void *)&one_d : (const void *)&one_f,
                              &md, &ma);
    return kmux_matmul_run_degenerate(fn, stream, &md, &ma);
}
