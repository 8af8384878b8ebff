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

static const char *impl_patterns(void) {
    const char *e = getenv("KMUX_CONFORMANCE_IMPLS");
    return e && e[0] ? e : NULL;
}

int cf_walk_limit(void) {
    return impl_patterns() ? 64 : cf_max_impls();
}

int cf_impl_wanted(int index, const char *name) {
    if (index < cf_max_impls()) return 1;
    const char *pat = impl_patterns();
    for (const char *p = pat; p && *p && name;) {
        const char *end = strchr(p, ',');
        size_t len = end ? (size_t)(end - p) : strlen(p);
        char one[128];
        if (len > 0 && len < sizeof one) {
            memcpy(one, p, len);
            one[len] = 0;
            if (strstr(name, one)) return 1;
        }
        if (!end) break;
        p = end + 1;
    }
    return 0;
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
