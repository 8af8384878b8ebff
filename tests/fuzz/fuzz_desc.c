/*
 * fuzz_desc.c - libFuzzer target of kmux-bench's descriptor parser (bench/kmux_bench/kb_problem.c):
 * any input must parse or fail with a message, without undefined behaviour (built with
 * -fsanitize=fuzzer,address,undefined); a descriptor that parses must print back to one that
 * parses to the same shape and name (round trip), and its sizes must stay in int64.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_common.h"
#include "kb_problem.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    char *s = fz_text(data, size, 4096);
    if (!s) return 0;
    kb_problem p, q;
    kb_problem_init(&p);
    kb_problem_init(&q);
    char err[512] = "", buf[1024];
    if (kb_parse_desc(s, &p, err, sizeof err)) {
        if (p.op == KB_OP_CONV) p.dir = KB_DIR_FWD;
        kb_format_desc(&p, buf, sizeof buf);
        if (!kb_parse_desc(buf, &q, err, sizeof err)) abort(); /* printed form must parse */
        if (strcmp(p.name, q.name) != 0) abort();
        if (p.op == KB_OP_CONV && memcmp(&p.cv, &q.cv, sizeof p.cv) != 0) abort();
        if (p.op == KB_OP_MATMUL && memcmp(&p.mm, &q.mm, sizeof p.mm) != 0) abort();
        int64_t na, nb, nc;
        if (p.op == KB_OP_MATMUL) kb_matmul_sizes(&p, &na, &nb, &nc);
        (void)kb_problem_flops(&p);
        (void)kb_problem_min_bytes(&p);
    } else if (!err[0]) {
        abort(); /* a failure always says why */
    }
    free(s);
    return 0;
}
