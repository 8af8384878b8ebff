/*
 * test_bench_parse_limits.c - the descriptor parser refuses what it cannot represent: negative
 * values ("ph-1", "oh-1" are not "not given"), an explicit zero output, values or tensor sizes
 * whose arithmetic would overflow (dilation 2^63-1, a batch of 2^40), and names that would not
 * round-trip; names with quotes do round-trip.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kb_problem.h"
#include "test_util.h"

static void fails(const char *s, const char *why) {
    kb_problem p;
    memset(&p, 0, sizeof p);
    kb_settings_default(&p.set);
    char err[512] = "";
    cr_expect_not(kb_parse_desc(s, &p, err, sizeof err), "%s parsed", s);
    cr_expect(strstr(err, why) != NULL, "%s: message '%s' does not say '%s'", s, err, why);
}

Test(bench_desc_limits, negative_values_are_rejected_with_a_message) {
    fails("mb2ic8ih10oc8kh3ph-1", "ph-1: a negative value");
    fails("mb2ic8ih10oc8oh-1kh3", "oh-1: a negative value");
    fails("mb2ic8ih10oc8kh3pw-2", "pw-2");
    fails("mb2ic8ih10oc8kh3dh-1", "dh-1");
    fails("mb-2ic8ih10oc8kh3", "mb-2");
}

Test(bench_desc_limits, explicit_zero_output_is_an_error) {
    fails("mb2ic8ih10oc8oh0kh3", "oh0: an output size must be > 0");
}

Test(bench_desc_limits, values_that_would_overflow_are_rejected) {
    fails("mb2ic8ih10oc8kh3dh9223372036854775807", "dh: value above");
    fails("mb1099511627776ic8ih10oc8kh3", "mb: value above"); /* 2^40 */
    fails("mb2ic8ih99999999999999999999999oc8kh3", "ih: value above");
    fails("mb1000000ic100000ih1000oc8kh1", "source tensor has more than 2^48");
    fails("3000000000x2:2x2", "bad matmul descriptor");
    fails("1000000x1000000x1000:1000000x1000x4", "more than 2^48");
    fails("65537x65536x65536:65537x65536x1", "more than 2^48");
    /* found by fuzz_desc: an output size with a huge stride derives a padding above the limit,
     * which printed back would not parse */
    fails("g32mb2ic64ih56iw28oc64ow28kh3kw1sh2sw1024110202dw0", "needs a padding above");
    /* found by fuzz_desc (stop 21): the reverse, a padding under the limit derives an output size
     * above it (oh2049020418), which printed back would not parse either */
    fails("mb2ic64ih56iw220oc64kh3kw1sw102ph1024510202pw2dh20dw8", "oh2049020418 (from ih56");
}

static void round_trip(const char *desc, const char *name) {
    kb_problem p, q;
    kb_problem_init(&p);
    kb_problem_init(&q);
    char err[512] = "", buf[1024];
    cr_assert(kb_parse_desc(desc, &p, err, sizeof err), "%s: %s", desc, err);
    cr_expect_str_eq(p.name, name);
    kb_format_desc(&p, buf, sizeof buf);
    cr_assert(kb_parse_desc(buf, &q, err, sizeof err), "%s (from %s): %s", buf, desc, err);
    cr_expect_str_eq(q.name, p.name, "%s", buf);
    cr_expect(!memcmp(&p.cv, &q.cv, sizeof p.cv) && !memcmp(&p.mm, &q.mm, sizeof p.mm), "%s", buf);
}

Test(bench_desc_limits, names_with_quotes_round_trip) {
    round_trip("mb2ic8ih10oc8kh3n\"a \"quoted\" name\"", "a \"quoted\" name");
    round_trip("64x32:32x16n\"x\"y\"", "x\"y");
    round_trip("mb2ic8ih10oc8kh3n\"\"", "");
}

Test(bench_desc_limits, too_long_name_is_an_error) {
    char desc[600];
    char name[300];
    memset(name, 'a', sizeof name - 1);
    name[sizeof name - 1] = '\0';
    snprintf(desc, sizeof desc, "8x8:8x8n\"%s\"", name);
    fails(desc, "too long");
}
