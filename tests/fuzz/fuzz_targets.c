/*
 * fuzz_targets.c - libFuzzer target of kmux-check's target-file parser (ck_targets.c): key=value
 * lines or a JSON object; any text parses or fails with a message, without undefined behaviour;
 * a parse that succeeds leaves every fraction in [0, 1] and each pass threshold at or above its
 * fail threshold; a failed parse changes nothing.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ck_targets.h"
#include "fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    char *s = fz_text(data, size, 16384);
    if (!s) return 0;
    ck_targets t, before;
    ck_targets_default(&t);
    before = t;
    char err[512] = "";
    if (ck_targets_parse(s, &t, err, sizeof err) == 0) {
        if (t.gemm_pass_frac < t.gemm_fail_frac || t.cpu_gemm_pass_frac < t.cpu_gemm_fail_frac ||
            t.devmem_pass_frac < t.devmem_fail_frac)
            abort();
        if (!(t.gemm_pass_frac >= 0 && t.gemm_pass_frac <= 1)) abort();
    } else {
        if (!err[0]) abort();                            /* a failure says why */
        if (memcmp(&t, &before, sizeof t) != 0) abort(); /* and changes nothing */
    }
    free(s);
    return 0;
}
