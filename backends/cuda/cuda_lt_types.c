/*
 * cuda_lt_types.c - kmux's types in cuBLASLt's terms: data types, the compute and scale type of
 * each kmux compute type, and the names used in implementation strings and messages.
 *
 * F32_FAST_BF16 maps to CUBLAS_COMPUTE_32F_EMULATED_16BFX9 (each f32 input split into bf16
 * terms, at least the precision of the bf16x3 that kmux.h allows) where the toolkit has it
 * (cuBLAS 12.9+); otherwise, and where cuBLASLt has no such kernel, the plan runs strict f32 and
 * says so. CUBLAS_COMPUTE_32F_FAST_16BF is never used: it rounds inputs to a single bf16, a
 * precision loss the caller did not allow.
 */
#include "cuda_matmul.h"

int kmux_cuda_is_ocp_fp8(kmux_dtype t) {
    return t == KMUX_F8_E4M3 || t == KMUX_F8_E5M2;
}

cudaDataType_t kmux_cuda_data_type(kmux_dtype t) {
    switch (t) {
    case KMUX_F64:
        return CUDA_R_64F;
    case KMUX_F32:
        return CUDA_R_32F;
    case KMUX_F16:
        return CUDA_R_16F;
    case KMUX_BF16:
        return CUDA_R_16BF;
    case KMUX_F8_E4M3:
        return CUDA_R_8F_E4M3;
    case KMUX_F8_E5M2:
        return CUDA_R_8F_E5M2;
    case KMUX_I8:
        return CUDA_R_8I;
    case KMUX_I32:
        return CUDA_R_32I;
    default:
        return CUDA_R_32F; /* not reached: the device's capabilities exclude it */
    }
}

const char *kmux_cuda_lt_compute_name(cublasComputeType_t c) {
    switch (c) {
    case CUBLAS_COMPUTE_64F:
        return "64F";
    case CUBLAS_COMPUTE_32F:
        return "32F";
    case CUBLAS_COMPUTE_32F_FAST_TF32:
        return "32F_FAST_TF32";
#if KMUX_CUDA_HAVE_BF16X9
    case CUBLAS_COMPUTE_32F_EMULATED_16BFX9:
        return "32F_EMULATED_16BFX9";
#endif
    case CUBLAS_COMPUTE_16F:
        return "16F";
    case CUBLAS_COMPUTE_32I:
        return "32I";
    default:
        return "?";
    }
}

void kmux_cuda_choose_compute(kmux_compute_type ct, int emulate_bf16, lt_config *c) {
    switch (ct) {
    case KMUX_COMPUTE_F64:
        c->compute = CUBLAS_COMPUTE_64F, c->scale_type = CUDA_R_64F;
        break;
    case KMUX_COMPUTE_F32_FAST_TF32:
        c->compute = CUBLAS_COMPUTE_32F_FAST_TF32, c->scale_type = CUDA_R_32F;
        break;
    case KMUX_COMPUTE_F32_FAST_BF16:
#if KMUX_CUDA_HAVE_BF16X9
        c->compute = emulate_bf16 ? CUBLAS_COMPUTE_32F_EMULATED_16BFX9 : CUBLAS_COMPUTE_32F;
#else
        (void)emulate_bf16;
        c->compute = CUBLAS_COMPUTE_32F;
#endif
        c->scale_type = CUDA_R_32F;
        break;
    case KMUX_COMPUTE_F16:
        c->compute = CUBLAS_COMPUTE_16F, c->scale_type = CUDA_R_16F;
        break;
    case KMUX_COMPUTE_I32:
        c->compute = CUBLAS_COMPUTE_32I, c->scale_type = CUDA_R_32I;
        break;
    default:
        c->compute = CUBLAS_COMPUTE_32F, c->scale_type = CUDA_R_32F;
        break;
    }
}

const char *kmux_cuda_epi_name(unsigned e) {
    switch (e & (KMUX_EPILOGUE_RELU | KMUX_EPILOGUE_GELU)) {
    case KMUX_EPILOGUE_RELU:
        return e & KMUX_EPILOGUE_BIAS ? "bias+relu" : "relu";
    case KMUX_EPILOGUE_GELU:
        return e & KMUX_EPILOGUE_BIAS ? "bias+gelu" : "gelu";
    default:
        return e & KMUX_EPILOGUE_BIAS ? "bias" : "none";
    }
}
