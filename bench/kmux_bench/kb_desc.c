/* kb_desc.c - the benchdnn descriptor grammar (conv, matmul): parsing with benchdnn's defaults and
 * limits that keep every size computation of kmux-bench inside int64. */
#include "kb_problem.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kb_util.h"

/* Reads the benchdnn name that follows 'n': quoted ("...", the quotes dropped; the name ends at
 * the descriptor's last quote, so a name may itself contain quotes) or the rest. A name longer
 * than the caller's buffer is an error (it would not round-trip). */
static int read_name(const char *s, char *name, size_t cap, char *err, size_t err_cap) {
    const char *b = s;
    size_t n = strlen(s);
    if (*s == '"') {
        const char *e = strrchr(s, '"');
        if (e == s || e[1] != '\0') {
            snprintf(err, err_cap, "unterminated or trailing text after name %s", s);
            return 0;
        }
        b = s + 1, n = (size_t)(e - s - 1);
    }
    if (name && cap && n >= cap) {
        snprintf(err, err_cap, "name of %zu characters is too long (at most %zu)", n, cap - 1);
        return 0;
    }
    if (name && cap) {
        memcpy(name, b, n);
        name[n] = '\0';
    }
    return 1;
}

int kb_dims_fit(const int64_t *dims, int n) {
    int64_t prod = 1;
    for (int i = 0; i < n; ++i) {
        if (dims[i] < 0 || __builtin_mul_overflow(prod, dims[i], &prod)) return 0;
    }
    return prod <= ((int64_t)1 << KB_DESC_ELEMENTS_LOG2);
}

static int64_t out_size(int64_t i, int64_t k, int64_t s, int64_t p, int64_t d) {
    return (i - ((k - 1) * (d + 1) + 1) + 2 * p) / s + 1;
}

static int64_t pad_size(int64_t o, int64_t i, int64_t k, int64_t s, int64_t d) {
    int64_t p = ((o - 1) * s - i + ((k - 1) * (d + 1) + 1)) / 2;
    return p < 0 ? 0 : p;
}

int64_t kb_conv_pad_end(int64_t o, int64_t i, int64_t k, int64_t s, int64_t p, int64_t d) {
    int64_t r = (o - 1) * s - i + ((k - 1) * (d + 1) + 1) - p;
    return r < 0 ? 0 : r;
}

/* Resolves one spatial axis: fills o or p as benchdnn does and checks the result. */
static int resolve_axis(const char *axis, int64_t i, int64_t k, int64_t s, int64_t *p, int64_t d,
                        int64_t *o, char *err, size_t err_cap) {
    if (i <= 0 || k <= 0) {
        snprintf(err, err_cap, "i%s and k%s must be given and > 0", axis, axis);
        return 0;
    }
    if (s <= 0 || d < 0) {
        snprintf(err, err_cap, "s%s must be > 0 and d%s >= 0", axis, axis);
        return 0;
    }
    if (*o <= 0) {
        if (*p < 0) *p = 0;
        *o = out_size(i, k, s, *p, d);
    } else if (*p < 0) {
        *p = pad_size(*o, i, k, s, d);
    }
    if (*o <= 0) {
        snprintf(err, err_cap, "empty output along %s (i%s%lld k%s%lld)", axis, axis, (long long)i,
                 axis, (long long)k);
        return 0;
    }
    if (*o > KB_DESC_VALUE_MAX) { /* derived from a large padding: the printed form must parse */
        snprintf(err, err_cap, "o%s%lld (from i%s%lld p%s%lld) is above %lld along %s", axis,
                 (long long)*o, axis, (long long)i, axis, (long long)*p,
                 (long long)KB_DESC_VALUE_MAX, axis);
        return 0;
    }
    int64_t end = kb_conv_pad_end(*o, i, k, s, *p, d);
    if (*p > KB_DESC_VALUE_MAX || end > KB_DESC_VALUE_MAX) { /* a padding derived from o */
        snprintf(err, err_cap, "o%s%lld with s%s%lld needs a padding above %lld along %s", axis,
                 (long long)*o, axis, (long long)s, (long long)KB_DESC_VALUE_MAX, axis);
        return 0;
    }
    int64_t eff = (k - 1) * (d + 1) + 1;
    if ((i + *p + end - eff) / s + 1 != *o || i + *p + end < eff) {
        snprintf(err, err_cap, "o%s%lld is inconsistent with i%s%lld k%s%lld s%s%lld p%s%lld", axis,
                 (long long)*o, axis, (long long)i, axis, (long long)k, axis, (long long)s, axis,
                 (long long)*p);
        return 0;
    }
    return 1;
}

/* The conv grammar with benchdnn's depth axis (id od kd sd pd dd). A depth of 1 (id1 kd1 od1 pd0)
 * leaves *dp all 0: the 2-D problem. Another depth fills *dp and the reason into why (a valid
 * 3-D convolution, which kmux cannot run). Returns 1, or 0 with a message in err. */
static int parse_conv(const char *s, kb_conv_shape *cv, kb_conv_depth *dp, char *name,
                      size_t name_cap, char *why, size_t why_cap, char *err, size_t err_cap) {
    int64_t g = 1, mb = 2, ic = 0, ih = 0, iw = 0, oc = 0, oh = 0, ow = 0, kh = 0, kw = 0;
    int64_t sh = 1, sw = 1, ph = -1, pw = -1, dh = 0, dw = 0;
    int64_t id = 0, od = 0, kd = 0, sd = 1, pd = -1, dd = 0;
    int has_sw = 0, has_sh = 0, has_oh = 0, has_ow = 0, has_od = 0;
    memset(dp, 0, sizeof *dp);
    if (why && why_cap) why[0] = '\0';
    if (name && name_cap) name[0] = '\0';
    const char *p = s;
    while (*p) {
        if (*p == '_') {
            ++p;
            continue;
        }
        if (*p == 'n') {
            if (!read_name(p + 1, name, name_cap, err, err_cap)) return 0;
            break;
        }
        char key[4];
        size_t kl = 0;
        while (isalpha((unsigned char)*p) && kl < 3)
            key[kl++] = *p++;
        key[kl] = '\0';
        if (*p == '-') {
            int n = 1 + (int)strspn(p + 1, "0123456789");
            snprintf(err, err_cap, "%s%.*s: a negative value is not allowed in %s", key,
                     n > 21 ? 21 : n, p, s);
            return 0;
        }
        if (!isdigit((unsigned char)*p)) {
            snprintf(err, err_cap, "expected a number after '%s' in %s", key, s);
            return 0;
        }
        long long v = 0;
        while (isdigit((unsigned char)*p)) {
            v = v * 10 + (*p++ - '0');
            if (v > KB_DESC_VALUE_MAX) {
                snprintf(err, err_cap, "%s: value above %lld in %s", key,
                         (long long)KB_DESC_VALUE_MAX, s);
                return 0;
            }
        }
        int64_t *dst = NULL;
        if (!strcmp(key, "g"))
            dst = &g;
        else if (!strcmp(key, "mb"))
            dst = &mb;
        else if (!strcmp(key, "ic"))
            dst = &ic;
        else if (!strcmp(key, "ih"))
            dst = &ih;
        else if (!strcmp(key, "iw"))
            dst = &iw;
        else if (!strcmp(key, "oc"))
            dst = &oc;
        else if (!strcmp(key, "oh"))
            dst = &oh, has_oh = 1;
        else if (!strcmp(key, "ow"))
            dst = &ow, has_ow = 1;
        else if (!strcmp(key, "kh"))
            dst = &kh;
        else if (!strcmp(key, "kw"))
            dst = &kw;
        else if (!strcmp(key, "sh"))
            dst = &sh, has_sh = 1;
        else if (!strcmp(key, "sw"))
            dst = &sw, has_sw = 1;
        else if (!strcmp(key, "ph"))
            dst = &ph;
        else if (!strcmp(key, "pw"))
            dst = &pw;
        else if (!strcmp(key, "dh"))
            dst = &dh;
        else if (!strcmp(key, "dw"))
            dst = &dw;
        else if (!strcmp(key, "id"))
            dst = &id;
        else if (!strcmp(key, "od"))
            dst = &od, has_od = 1;
        else if (!strcmp(key, "kd"))
            dst = &kd;
        else if (!strcmp(key, "sd"))
            dst = &sd;
        else if (!strcmp(key, "pd"))
            dst = &pd;
        else if (!strcmp(key, "dd"))
            dst = &dd;
        else {
            snprintf(err, err_cap, "unknown field '%s' in %s", key, s);
            return 0;
        }
        *dst = (int64_t)v;
    }
    if (ic <= 0 || oc <= 0) {
        snprintf(err, err_cap, "ic and oc must be given and > 0 in %s", s);
        return 0;
    }
    if ((has_oh && oh == 0) || (has_ow && ow == 0) || (has_od && od == 0)) {
        snprintf(err, err_cap, "o%s0: an output size must be > 0 in %s",
                 has_oh && !oh   ? "h"
                 : has_ow && !ow ? "w"
                                 : "d",
                 s);
        return 0;
    }
    if (g <= 0 || mb <= 0 || ic % g || oc % g) {
        snprintf(err, err_cap, "g%lld mb%lld: need g, mb > 0 and ic, oc divisible by g",
                 (long long)g, (long long)mb);
        return 0;
    }
    /* benchdnn: an axis with no value at all copies the other one (square problem); values
     * missing on one axis only are taken from the other axis where benchdnn would fail. */
    int no_h = !(ih | kh | oh | dh) && !has_sh && ph < 1;
    int no_w = !(iw | kw | ow | dw) && !has_sw && pw < 1;
    int no_d = !(id | kd | od | dd) && sd == 1 && pd < 1; /* benchdnn's test */
    if (!no_d) {
        if (id <= 0 || kd <= 0) {
            snprintf(err, err_cap, "3-D convolution without id and kd (both must be > 0) in %s", s);
            return 0;
        }
        if (!resolve_axis("d", id, kd, sd, &pd, dd, &od, err, err_cap)) return 0;
        if (no_h && no_w) { /* benchdnn: only d-values, a cube */
            ih = iw = id, kh = kw = kd, oh = ow = od, ph = pw = pd, sh = sw = sd, dh = dw = dd;
            no_h = no_w = 0;
        }
    }
    if (no_h && no_w) {
        snprintf(err, err_cap, "no spatial sizes (ih/kh) in %s", s);
        return 0;
    }
    if (no_w) {
        iw = ih, kw = kh, ow = oh, pw = ph, sw = sh, dw = dh;
    } else if (no_h) {
        ih = iw, kh = kw, oh = ow, ph = pw, sh = sw, dh = dw;
    } else {
        if (!iw) iw = ih;
        if (!ih) ih = iw;
        if (!kw) kw = kh;
        if (!kh) kh = kw;
    }
    if (!resolve_axis("h", ih, kh, sh, &ph, dh, &oh, err, err_cap)) return 0;
    if (!resolve_axis("w", iw, kw, sw, &pw, dw, &ow, err, err_cap)) return 0;
    /* a depth of 1 is the 2-D problem: its one output plane reads input plane 0 (no padding) */
    int depth = !no_d && !(id == 1 && kd == 1 && od == 1 && pd == 0);
    int64_t sizes[3][5] = {{mb, ic, ih, iw, depth ? id : 1},
                           {oc, ic / g, kh, kw, depth ? kd : 1},
                           {mb, oc, oh, ow, depth ? od : 1}};
    static const char *const tensor[3] = {"source", "weights", "destination"};
    for (int t = 0; t < 3; ++t)
        if (!kb_dims_fit(sizes[t], 5)) {
            snprintf(err, err_cap, "the %s tensor has more than 2^%d elements in %s", tensor[t],
                     KB_DESC_ELEMENTS_LOG2, s);
            return 0;
        }
    cv->g = g, cv->mb = mb, cv->ic = ic, cv->ih = ih, cv->iw = iw, cv->oc = oc, cv->oh = oh;
    cv->ow = ow, cv->kh = kh, cv->kw = kw, cv->sh = sh, cv->sw = sw, cv->ph = ph, cv->pw = pw;
    cv->dh = dh, cv->dw = dw;
    if (depth) {
        dp->id = id, dp->od = od, dp->kd = kd, dp->sd = sd, dp->pd = pd, dp->dd = dd;
        char pad[32] = "";
        if (pd) snprintf(pad, sizeof pad, " pd%lld", (long long)pd);
        if (why && why_cap)
            snprintf(why, why_cap,
                     "3-D convolution (id%lld kd%lld od%lld%s) is not supported: kmux "
                     "convolutions are 2-D (a depth of 1, id1 kd1 od1 pd0, runs as one)",
                     (long long)id, (long long)kd, (long long)od, pad);
    }
    return 1;
}

int kb_parse_conv_desc(const char *s, kb_conv_shape *cv, char *name, size_t name_cap, char *err,
                       size_t err_cap) {
    kb_conv_depth dp;
    if (!parse_conv(s, cv, &dp, name, name_cap, err, err_cap, err, err_cap)) return 0;
    return dp.id == 0; /* a real depth: the reason is in err */
}

/* Parses "AxBxC" (count >= 1 numbers) into dims; returns the count or 0. */
static int parse_dims(const char *s, size_t len, int64_t *dims, int max) {
    int n = 0;
    const char *p = s, *end = s + len;
    while (p < end) {
        if (n == max || !isdigit((unsigned char)*p)) return 0;
        int64_t v = 0;
        while (p < end && isdigit((unsigned char)*p)) {
            v = v * 10 + (*p - '0');
            if (v > KB_DESC_VALUE_MAX) return 0;
            ++p;
        }
        dims[n++] = v;
        if (p < end) {
            if (*p != 'x') return 0;
            ++p;
            if (p == end) return 0;
        }
    }
    return n;
}

int kb_parse_matmul_desc(const char *s, kb_matmul_shape *mm, char *name, size_t name_cap, char *err,
                         size_t err_cap) {
    if (name && name_cap) name[0] = '\0';
    size_t dl = strspn(s, "0123456789x:");
    const char *rest = s + dl;
    if (*rest == '_') ++rest;
    if (*rest == 'n') {
        if (!read_name(rest + 1, name, name_cap, err, err_cap)) return 0;
    } else if (*rest) {
        snprintf(err, err_cap, "unexpected '%s' in matmul descriptor %s", rest, s);
        return 0;
    }
    int64_t d[3][8];
    int nd[3] = {0, 0, 0};
    int parts = 0;
    const char *p = s, *end = s + dl;
    while (p < end || parts == 0) {
        const char *c = memchr(p, ':', (size_t)(end - p));
        size_t len = c ? (size_t)(c - p) : (size_t)(end - p);
        if (parts == 3 || (nd[parts] = parse_dims(p, len, d[parts], 8)) == 0) {
            snprintf(err, err_cap, "bad matmul descriptor %s (want MxK:KxN or BxMxK:BxKxN)", s);
            return 0;
        }
        ++parts;
        if (!c) break;
        p = c + 1;
    }
    if (parts < 2 || nd[0] != nd[1] || nd[0] < 2 || (parts == 3 && nd[2] != nd[0])) {
        snprintf(err, err_cap, "bad matmul descriptor %s (want MxK:KxN or BxMxK:BxKxN)", s);
        return 0;
    }
    int r = nd[0];
    int64_t m = d[0][r - 2], k = d[0][r - 1], n = d[1][r - 1];
    if (d[1][r - 2] != k) {
        snprintf(err, err_cap, "K of A (%lld) and B (%lld) differ in %s", (long long)k,
                 (long long)d[1][r - 2], s);
        return 0;
    }
    for (int t = 0; t < parts; ++t)
        if (!kb_dims_fit(d[t], r)) {
            snprintf(err, err_cap, "operand %d has more than 2^%d elements in %s", t + 1,
                     KB_DESC_ELEMENTS_LOG2, s);
            return 0;
        }
    int64_t dst[8];
    for (int i = 0; i < r - 2; ++i)
        dst[i] = d[0][i] > d[1][i] ? d[0][i] : d[1][i];
    dst[r - 2] = m, dst[r - 1] = n;
    if (!kb_dims_fit(dst, r)) {
        snprintf(err, err_cap, "the result has more than 2^%d elements in %s",
                 KB_DESC_ELEMENTS_LOG2, s);
        return 0;
    }
    int64_t ba = 1, bb = 1;
    int a_all1 = 1, b_all1 = 1, equal = 1;
    for (int i = 0; i < r - 2; ++i) {
        ba *= d[0][i], bb *= d[1][i];
        if (d[0][i] != 1) a_all1 = 0;
        if (d[1][i] != 1) b_all1 = 0;
        if (d[0][i] != d[1][i]) equal = 0;
    }
    if (!equal && !a_all1 && !b_all1) {
        snprintf(err, err_cap, "partial batch broadcast in %s is not supported", s);
        return 0;
    }
    if (parts == 3) {
        int ok = d[2][r - 2] == m && d[2][r - 1] == n;
        for (int i = 0; i < r - 2; ++i)
            ok = ok && d[2][i] == (d[0][i] > d[1][i] ? d[0][i] : d[1][i]);
        if (!ok) {
            snprintf(err, err_cap, "destination dims do not match A x B in %s", s);
            return 0;
        }
    }
    if (m <= 0 || n <= 0 || k <= 0 || ba <= 0 || bb <= 0) {
        snprintf(err, err_cap, "sizes must be > 0 in %s", s);
        return 0;
    }
    mm->m = m, mm->n = n, mm->k = k, mm->batch_a = ba, mm->batch_b = bb;
    return 1;
}

int kb_parse_problem(const char *s, kb_problem *p, char *err, size_t err_cap) {
    memset(&p->depth, 0, sizeof p->depth);
    p->unsupported[0] = '\0';
    if (isdigit((unsigned char)s[0])) {
        p->op = KB_OP_MATMUL;
        return kb_parse_matmul_desc(s, &p->mm, p->name, sizeof p->name, err, err_cap);
    }
    p->op = KB_OP_CONV;
    if (!parse_conv(s, &p->cv, &p->depth, p->name, sizeof p->name, p->unsupported,
                    sizeof p->unsupported, err, err_cap))
        return 0;
    /* a --mb setting replaces the descriptor's mb: the tensors must fit with it too */
    if (p->set.mb > 0) {
        const kb_conv_shape *c = &p->cv;
        int64_t d_in = p->depth.id > 0 ? p->depth.id : 1, d_out = p->depth.od > 0 ? p->depth.od : 1;
        int64_t sizes[2][5] = {{p->set.mb, c->ic, c->ih, c->iw, d_in},
                               {p->set.mb, c->oc, c->oh, c->ow, d_out}};
        static const char *const tensor[2] = {"source", "destination"};
        for (int t = 0; t < 2; ++t)
            if (!kb_dims_fit(sizes[t], 5)) {
                snprintf(err, err_cap,
                         "with --mb=%lld the %s tensor has more than 2^%d elements in %s",
                         (long long)p->set.mb, tensor[t], KB_DESC_ELEMENTS_LOG2, s);
                return 0;
            }
    }
    return 1;
}

int kb_parse_desc(const char *s, kb_problem *p, char *err, size_t err_cap) {
    if (!kb_parse_problem(s, p, err, err_cap)) return 0;
    if (!p->unsupported[0]) return 1;
    snprintf(err, err_cap, "%s", p->unsupported);
    return 0;
}
