/*
 * compare.c - the oracle comparison: per-element error bounds, the comparison of an output image
 * with the expected values, and the checks every execution of every operation gets (named
 * implementation, honoured compute type, no write outside the output, values within bounds).
 */
#include "conformance.h"

double cf_tol_of(const cf_tol *ts, double want, double pre, double bound) {
    if (!ts->inexact && !ts->gelu) return 0;
    double acc = ts->inexact ? bound * (ts->k + 4) * ts->u_acc : 0;
    double t = acc + ts->u_out * (2 * fabs(want) + acc) + ts->min_out;
    if (ts->gelu) { /* tanh-GELU: a few ulps of the activation on top, relative to |pre| */
        double u = ts->u_out > ldexp(1.0, -24) ? ts->u_out : ldexp(1.0, -24);
        t = 1.25 * t + 8 * u * (1 + fabs(pre));
    }
    return t;
}

int cf_same(double got, double want, double tol) {
    if (isnan(want) || isnan(got)) return isnan(want) && isnan(got);
    if (isinf(want) || isinf(got)) return got == want;
    return tol == 0 ? got == want : fabs(got - want) <= tol;
}

void cf_compare(const cf_tensor *t, const unsigned char *got_img, const double *want,
                const double *pre, const double *bound, const cf_tol *ts, cf_cmp *r) {
    memset(r, 0, sizeof *r);
    r->first = -1;
    for (int64_t e = 0; e < t->span; e++) {
        if (!t->mask[e]) continue;
        double g = tu_get(t->type, got_img + t->front, e);
        double tol = cf_tol_of(ts, want[e], pre ? pre[e] : want[e], bound ? bound[e] : 0);
        r->checked++;
        if (cf_same(g, want[e], tol)) continue;
        if (r->bad++ == 0) {
            r->first = e;
            r->got = g;
            r->want = want[e];
            r->tol = tol;
        }
    }
}

int cf_check_output(const cf_tensor *out, const unsigned char *got, const double *want,
                    const double *pre, const double *bound, const cf_tol *ts, cf_locate_fn loc,
                    const void *loc_ctx, const char *name, const char *tag, const char *id,
                    const char *impl, const char *desc) {
    int result = 0;
    int64_t o = cf_foreign_write(out, got);
    if (o >= 0) {
        char where[256];
        cf_describe_byte(out, o, loc, loc_ctx, where, sizeof where);
        cf_fail("%s on %s impl %s: write outside the output %s: %s\n  case: %s", tag, id, impl,
                name, where, desc);
        result = -1;
    }
    cf_cmp r;
    cf_compare(out, got, want, pre, bound, ts, &r);
    if (r.bad) {
        char where[160];
        loc(loc_ctx, r.first, where, sizeof where);
        cf_fail("%s on %s impl %s: %lld of %lld elements of %s differ; first at element %lld %s: "
                "got %.9g want %.9g (|diff| %.3g, tolerance %.3g%s)\n  case: %s",
                tag, id, impl, (long long)r.bad, (long long)r.checked, name, (long long)r.first,
                where, r.got, r.want, fabs(r.got - r.want), r.tol, r.tol == 0 ? ", exact" : "",
                desc);
        result = -1;
    }
    return result;
}

int cf_plan_answer(kmux_status s, const char *fn, const char *tag, const char *id,
                   const char *desc) {
    if (s == KMUX_OK) return 1;
    if (s == KMUX_ERR_UNSUPPORTED && kmux_last_error()[0]) return 0;
    if (s == KMUX_ERR_UNSUPPORTED)
        cf_fail("%s on %s: %s -> KMUX_ERR_UNSUPPORTED with an empty kmux_last_error()\n  case: %s",
                tag, id, fn, desc);
    else
        cf_fail("%s on %s: %s -> %s (only KMUX_OK or KMUX_ERR_UNSUPPORTED are acceptable for a "
                "valid case): %s\n  case: %s",
                tag, id, fn, kmux_status_str(s), kmux_last_error(), desc);
    return -1;
}

int cf_check_plan_info(const kmux_plan_info *info, kmux_compute_type requested, char *impl,
                       size_t impl_size, const char *tag, const char *id, const char *desc) {
    int result = 0;
    snprintf(impl, impl_size, "%s", info->impl ? info->impl : "(NULL impl)");
    if (!info->impl || !info->impl[0]) {
        cf_fail("%s on %s: kmux_plan_info_get gives an empty implementation name\n  case: %s", tag,
                id, desc);
        result = -1;
    }
    if (!cf_compute_ok(requested, info->effective_compute)) {
        cf_fail("%s on %s impl %s: effective compute %s for requested %s (precision lowered "
                "without being asked)\n  case: %s",
                tag, id, impl, kmux_compute_type_name(info->effective_compute),
                kmux_compute_type_name(requested), desc);
        result = -1;
    }
    return result;
}
