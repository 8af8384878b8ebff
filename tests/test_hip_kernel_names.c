/*
 * test_hip_kernel_names.c - prints every kernel name the module launchers of backends/gpu can
 * launch (kmux_gpu_host_kernel_name_at, one per line), for test_hip_bundle.sh, which checks each
 * against the symbols of the HIP plugin's gfx942 code objects.
 */
#include <stdio.h>

#include "gpu_kernel_names.h"

int main(void) {
    char buf[256];
    for (int i = 0; kmux_gpu_host_kernel_name_at(i, buf, sizeof buf); i++)
        printf("%s\n", buf);
    return 0;
}
