/*
 * report.c - options from the environment, the test's counters and failure reports.
 */
#include <stdarg.h>

#include "conformance.h"

#define CF_MSG 4096

cf_stats cf_stat;

int cf_full(void) {
    const char *e = getenv("KMUX_CONFORMANCE_FULL");
    return e && e[0] && strcmp(e, "0") != 0;
}

int cf_small(void) {
    const char *e = getenv("KMUX_CONFORMANCE_SHAPES");
    return !cf_full() && e && strcmp(e, "small") == 0;
}

long cf_only_case(void) {
    const char *e = getenv("KMUX_CONFORMANCE_CASE");
    return e && e[0] ? strtol(e, NULL, 10) : -1;
}

int cf_max_impls(void) {
    return cf_full() ? 64 : 4;
}

void cf_fail(const char *fmt, ...) {
    char msg[CF_MSG];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    cf_stat.failures++;
    if (cf_stat.failures <= CF_MAX_REPORTS)
        cr_expect(0, "%s", msg);
    else
        cr_expect(0, "%s", "(further failure, message suppressed)");
}

void cf_summary(const char *test) {
    fprintf(stderr,
            "conformance %s: %ld cases, %ld device runs compared, %ld unsupported answers, %ld "
            "failures%s\n",
            test, cf_stat.cases, cf_stat.runs, cf_stat.unsupported, cf_stat.failures,
            cf_stat.failures > CF_MAX_REPORTS ? " (only the first ones printed)" : "");
}
