/*
 * partial_cublaslt.c - a "libcublasLt.so.13" that exports one function of the many the CUDA
 * plugin needs (test_cuda_libs). The plugin must open it from KMUX_CUDA_LIB_PATH, find that
 * cublasLtDestroy is missing, and say so in its probe reason instead of crashing later.
 * No CUDA header: the one symbol is declared with cuBLASLt's documented signature shape.
 */
int cublasLtCreate(void **handle);

int cublasLtCreate(void **handle) {
    if (handle) *handle = 0;
    return 3; /* CUBLAS_STATUS_ALLOC_FAILED: never called by a correct plugin */
}
