/*
 * test_hip_kernel_names.c - prints every kernel name the HIP plugin can launch (one per line),
 * for test_hip_bundle.sh, which checks each against the symbols of the gfx942 code object.
 */
#include <stdio.h>

#include "hip_kernel_names.h"

int main(void) {
    char buf[256];
    for (int i = 0; kmux_hip_kernel_name_at(i, buf, sizeof buf); i++)
        printf("%s\n", buf);
    return 0;
}
