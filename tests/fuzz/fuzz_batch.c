/*
 * fuzz_batch.c - libFuzzer target of kmux-bench's batch-file parser (bench/kmux_bench/kb_batch.c):
 * any text (NUL bytes, endless lines, settings, descriptors, includes) must parse or fail with a
 * "origin:line: message", without undefined behaviour; every problem kept has a descriptor that
 * prints and parses back.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_common.h"
#include "kb_problem.h"
#include "kb_workload.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    char *s = fz_text(data, size, 8192);
    if (!s) return 0;
    /* includes resolve against a folder that does not exist: the fuzzer reads no real file
     * through a relative --batch= (absolute ones are refused below) */
    if (strstr(s, "--batch=/")) {
        free(s);
        return 0;
    }
    kb_settings set;
    kb_settings_default(&set);
    kb_problem_list l = {NULL, 0, 0};
    char err[1024] = "";
    if (kb_batch_parse(s, "fuzz", "/nonexistent-kmux-fuzz", &set, &l, err, sizeof err)) {
        for (size_t i = 0; i < l.n; i++) {
            char buf[1024], e[512];
            kb_problem q;
            kb_problem_init(&q);
            q.set = l.v[i].set;
            if (l.v[i].op == KB_OP_CONV) l.v[i].dir = KB_DIR_FWD;
            kb_format_desc(&l.v[i], buf, sizeof buf);
            if (!kb_parse_problem(buf, &q, e, sizeof e)) abort(); /* printed form must parse */
        }
    } else if (strncmp(err, "fuzz:", 5) != 0) {
        abort(); /* a failure names the origin and line */
    }
    kb_problem_list_free(&l);
    free(s);
    return 0;
}
