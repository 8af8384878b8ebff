/* kb_problem.c - benchdnn descriptor grammar (conv, matmul), problem sizes and kmux descs. */
#include "kb_problem.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kb_util.h"
#include "kmux_dtype_desc.h"

void kb_settings_default(kb_settings *s) {
    memset(s, 0, sizeof *s);
    s->dir_mask = KB_DIR_FWD;
    s->dt[0] = s->dt[1] = s->dt[2] = KMUX_F32;
    s->compute = (kmux_compute_type)0;
    s->layout = KMUX_NCHW;
    s->mb = 0;
    s->stag = s->wtag = s->dtag = 0;
}

void kb_problem_list_push(kb_problem_list *l, const kb_problem *p) {
    if (l->n == l->cap) {
        l->cap = l->cap ? 2 * l->cap : 16;
        l->v = kb_xrealloc(l->v, l->cap * sizeof *l->v);
    }
    l->v[l->n++] = *p;
}

void kb_problem_list_free(kb_problem_list *l) {
    free(l->v);
    l->v = NULL;
    l->n = l->cap = 0;
}

/* ---- names ---------------------------------------------------------------------------------- */

static const struct {
    const char *name;
    kmux_dtype t;
} dtype_names[] = {
    {"f64", KMUX_F64},
    {"f32", KMUX_F32},
    {"f16", KMUX_F16},
    {"bf16", KMUX_BF16},
    {"e4m3", KMUX_F8_E4M3},
    {"e5m2", KMUX_F8_E5M2},
    {"e4m3fnuz", KMUX_F8_E4M3_FNUZ},
    {"e5m2fnuz", KMUX_F8_E5M2_FNUZ},
    {"i8", KMUX_I8},
    {"i32", KMUX_I32},
    {"s8", KMUX_I8},
    {"s32", KMUX_I32},
    {"f8_e4m3", KMUX_F8_E4M3},
    {"f8_e5m2", KMUX_F8_E5M2},
    {"f8_e4m3fnuz", KMUX_F8_E4M3_FNUZ},
    {"f8_e5m2fnuz", KMUX_F8_E5M2_FNUZ},
};

int kb_parse_dtype(const char *s, kmux_dtype *t) {
    for (size_t i = 0; i < sizeof dtype_names / sizeof dtype_names[0]; ++i)
        if (kb_strieq(s, dtype_names[i].name)) {
            *t = dtype_names[i].t;
            return 1;
        }
    return 0;
}

const char *kb_dtype_name(kmux_dtype t) {
    for (size_t i = 0; i < sizeof dtype_names / sizeof dtype_names[0]; ++i)
        if (dtype_names[i].t == t) return dtype_names[i].name;
    return "?";
}

int kb_parse_dt_triple(const char *s, kmux_dtype dt[3]) {
    char buf[64];
    kb_strlcpy(buf, s, sizeof buf);
    char *parts[3] = {NULL, NULL, NULL};
    int np = 0;
    char *p = buf;
    for (;;) {
        if (np == 3) return 0;
        parts[np++] = p;
        char *c = strchr(p, ':');
        if (!c) break;
        *c = '\0';
        p = c + 1;
    }
    if (np != 1 && np != 3) return 0;
    kmux_dtype out[3];
    for (int i = 0; i < 3; ++i)
        if (!kb_parse_dtype(parts[np == 1 ? 0 : i], &out[i])) return 0;
    if (np == 1 && out[0] == KMUX_I8) out[2] = KMUX_I32; /* --dt=i8 means i8:i8:i32 */
    memcpy(dt, out, sizeof out);
    return 1;
}

static const struct {
    const char *name;
    kmux_compute_type c;
} compute_names[] = {
    {"f64", KMUX_COMPUTE_F64},
    {"f32", KMUX_COMPUTE_F32},
    {"tf32", KMUX_COMPUTE_F32_FAST_TF32},
    {"bf16x3", KMUX_COMPUTE_F32_FAST_BF16},
    {"f16", KMUX_COMPUTE_F16},
    {"i32", KMUX_COMPUTE_I32},
    {"f32_fast_tf32", KMUX_COMPUTE_F32_FAST_TF32},
    {"f32_fast_bf16", KMUX_COMPUTE_F32_FAST_BF16},
    {"s32", KMUX_COMPUTE_I32},
};

int kb_parse_compute(const char *s, kmux_compute_type *c) {
    for (size_t i = 0; i < sizeof compute_names / sizeof compute_names[0]; ++i)
        if (kb_strieq(s, compute_names[i].name)) {
            *c = compute_names[i].c;
            return 1;
        }
    return 0;
}

const char *kb_compute_name(kmux_compute_type c) {
    for (size_t i = 0; i < sizeof compute_names / sizeof compute_names[0]; ++i)
        if (compute_names[i].c == c) return compute_names[i].name;
    return "?";
}

kmux_compute_type kb_problem_compute(const kb_problem *p) {
    if (p->set.compute) return p->set.compute;
    if (p->set.dt[0] == KMUX_I8) return KMUX_COMPUTE_I32;
    if (p->set.dt[0] == KMUX_F64) return KMUX_COMPUTE_F64;
    return KMUX_COMPUTE_F32;
}

const char *kb_op_name(kb_op op) {
    return op == KB_OP_CONV ? "conv2d" : "matmul";
}

const char *kb_dir_name(kb_dir d) {
    switch (d) {
    case KB_DIR_BWD_D:
        return "BWD_D";
    case KB_DIR_BWD_W:
        return "BWD_W";
    default:
        return "FWD";
    }
}

int kb_parse_dir(const char *s, unsigned *mask) {
    static const struct {
        const char *name;
        unsigned mask;
    } t[] = {{"FWD", KB_DIR_FWD},      {"FWD_D", KB_DIR_FWD},   {"FWD_B", KB_DIR_FWD},
             {"FWD_I", KB_DIR_FWD},    {"BWD_D", KB_DIR_BWD_D}, {"BWD_W", KB_DIR_BWD_W},
             {"BWD_WB", KB_DIR_BWD_W}, {"ALL", KB_DIR_ALL}};
    for (size_t i = 0; i < sizeof t / sizeof t[0]; ++i)
        if (kb_strieq(s, t[i].name)) {
            *mask = t[i].mask;
            return 1;
        }
    return 0;
}

/* ---- descriptor parsing ---------------------------------------------------------------------- */

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

/* Right (bottom) padding that gives output o; clamped at 0 (a negative one only drops input
 * rows the last window never reaches). */
static int64_t pad_end(int64_t o, int64_t i, int64_t k, int64_t s, int64_t p, int64_t d) {
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
    int64_t end = pad_end(*o, i, k, s, *p, d);
    int64_t eff = (k - 1) * (d + 1) + 1;
    if ((i + *p + end - eff) / s + 1 != *o || i + *p + end < eff) {
        snprintf(err, err_cap, "o%s%lld is inconsistent with i%s%lld k%s%lld s%s%lld p%s%lld", axis,
                 (long long)*o, axis, (long long)i, axis, (long long)k, axis, (long long)s, axis,
                 (long long)*p);
        return 0;
    }
    return 1;
}

int kb_parse_conv_desc(const char *s, kb_conv_shape *cv, char *name, size_t name_cap, char *err,
                       size_t err_cap) {
    int64_t g = 1, mb = 2, ic = 0, ih = 0, iw = 0, oc = 0, oh = 0, ow = 0, kh = 0, kw = 0;
    int64_t sh = 1, sw = 1, ph = -1, pw = -1, dh = 0, dw = 0;
    int has_sw = 0, has_sh = 0, has_oh = 0, has_ow = 0;
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
        else if (!strcmp(key, "id") || !strcmp(key, "od") || !strcmp(key, "kd") ||
                 !strcmp(key, "sd") || !strcmp(key, "pd") || !strcmp(key, "dd")) {
            int ok = (key[0] == 'p' || key[0] == 'd') ? v == 0 : v == 1;
            if (!ok) {
                snprintf(err, err_cap, "3-D convolution (%s%lld) is not supported", key, v);
                return 0;
            }
            continue;
        } else {
            snprintf(err, err_cap, "unknown field '%s' in %s", key, s);
            return 0;
        }
        *dst = (int64_t)v;
    }
    if (ic <= 0 || oc <= 0) {
        snprintf(err, err_cap, "ic and oc must be given and > 0 in %s", s);
        return 0;
    }
    if ((has_oh && oh == 0) || (has_ow && ow == 0)) {
        snprintf(err, err_cap, "o%s0: an output size must be > 0 in %s", has_oh && !oh ? "h" : "w",
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
    int64_t sizes[3][4] = {{mb, ic, ih, iw}, {oc, ic / g, kh, kw}, {mb, oc, oh, ow}};
    static const char *const tensor[3] = {"source", "weights", "destination"};
    for (int t = 0; t < 3; ++t)
        if (!kb_dims_fit(sizes[t], 4)) {
            snprintf(err, err_cap, "the %s tensor has more than 2^%d elements in %s", tensor[t],
                     KB_DESC_ELEMENTS_LOG2, s);
            return 0;
        }
    cv->g = g, cv->mb = mb, cv->ic = ic, cv->ih = ih, cv->iw = iw, cv->oc = oc, cv->oh = oh;
    cv->ow = ow, cv->kh = kh, cv->kw = kw, cv->sh = sh, cv->sw = sw, cv->ph = ph, cv->pw = pw;
    cv->dh = dh, cv->dw = dw;
    return 1;
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

int kb_parse_desc(const char *s, kb_problem *p, char *err, size_t err_cap) {
    if (isdigit((unsigned char)s[0])) {
        p->op = KB_OP_MATMUL;
        return kb_parse_matmul_desc(s, &p->mm, p->name, sizeof p->name, err, err_cap);
    }
    p->op = KB_OP_CONV;
    return kb_parse_conv_desc(s, &p->cv, p->name, sizeof p->name, err, err_cap);
}

/* ---- printing ------------------------------------------------------------------------------- */

int64_t kb_conv_mb(const kb_problem *p) {
    return p->set.mb > 0 ? p->set.mb : p->cv.mb;
}

void kb_format_desc(const kb_problem *p, char *buf, size_t cap) {
    kb_sb sb = KB_SB_INIT;
    if (p->op == KB_OP_CONV) {
        const kb_conv_shape *c = &p->cv;
        if (c->g != 1) kb_sb_printf(&sb, "g%lld", (long long)c->g);
        kb_sb_printf(&sb, "mb%lldic%lldih%lldiw%lldoc%lldoh%lldow%lldkh%lldkw%lld",
                     (long long)kb_conv_mb(p), (long long)c->ic, (long long)c->ih, (long long)c->iw,
                     (long long)c->oc, (long long)c->oh, (long long)c->ow, (long long)c->kh,
                     (long long)c->kw);
        kb_sb_printf(&sb, "sh%lldsw%lldph%lldpw%lld", (long long)c->sh, (long long)c->sw,
                     (long long)c->ph, (long long)c->pw);
        if (c->dh || c->dw) kb_sb_printf(&sb, "dh%llddw%lld", (long long)c->dh, (long long)c->dw);
    } else {
        const kb_matmul_shape *m = &p->mm;
        if (m->batch_a == 1 && m->batch_b == 1)
            kb_sb_printf(&sb, "%lldx%lld:%lldx%lld", (long long)m->m, (long long)m->k,
                         (long long)m->k, (long long)m->n);
        else
            kb_sb_printf(&sb, "%lldx%lldx%lld:%lldx%lldx%lld", (long long)m->batch_a,
                         (long long)m->m, (long long)m->k, (long long)m->batch_b, (long long)m->k,
                         (long long)m->n);
    }
    if (p->name[0]) kb_sb_printf(&sb, "n\"%s\"", p->name);
    kb_strlcpy(buf, kb_sb_str(&sb), cap);
    kb_sb_free(&sb);
}

static void format_dt(const kmux_dtype dt[3], char *buf, size_t cap) {
    if (dt[0] == dt[1] && dt[1] == dt[2])
        snprintf(buf, cap, "%s", kb_dtype_name(dt[0]));
    else
        snprintf(buf, cap, "%s:%s:%s", kb_dtype_name(dt[0]), kb_dtype_name(dt[1]),
                 kb_dtype_name(dt[2]));
}

void kb_format_options(const kb_problem *p, char *buf, size_t cap) {
    char dt[48];
    format_dt(p->set.dt, dt, sizeof dt);
    kb_sb sb = KB_SB_INIT;
    if (p->op == KB_OP_CONV)
        kb_sb_printf(&sb, "--dir=%s --dt=%s --layout=%s",
                     p->dir                          ? kb_dir_name(p->dir)
                     : p->set.dir_mask == KB_DIR_ALL ? "ALL"
                                                     : kb_dir_name((kb_dir)p->set.dir_mask),
                     dt, p->set.layout == KMUX_NHWC ? "nhwc" : "nchw");
    else
        kb_sb_printf(&sb, "--dt=%s --stag=%s --wtag=%s --dtag=%s", dt, p->set.stag ? "ba" : "ab",
                     p->set.wtag ? "ba" : "ab", p->set.dtag ? "ba" : "ab");
    if (p->set.compute) kb_sb_printf(&sb, " --compute=%s", kb_compute_name(p->set.compute));
    kb_strlcpy(buf, kb_sb_str(&sb), cap);
    kb_sb_free(&sb);
}

/* ---- kmux descriptions and sizes ------------------------------------------------------------ */

void kb_conv_to_desc(const kb_problem *p, kmux_conv2d_desc *d) {
    const kb_conv_shape *c = &p->cv;
    kmux_conv2d_desc init = KMUX_CONV2D_DESC_INIT;
    *d = init;
    d->direction = p->dir == KB_DIR_BWD_D   ? KMUX_CONV_BWD_DATA
                   : p->dir == KB_DIR_BWD_W ? KMUX_CONV_BWD_WEIGHTS
                                            : KMUX_CONV_FWD;
    d->layout = p->set.layout;
    d->n = kb_conv_mb(p), d->c = c->ic, d->h = c->ih, d->w = c->iw;
    d->k = c->oc, d->r = c->kh, d->s = c->kw, d->groups = c->g;
    d->stride_h = c->sh, d->stride_w = c->sw;
    d->pad_top = c->ph, d->pad_left = c->pw;
    d->pad_bottom = pad_end(c->oh, c->ih, c->kh, c->sh, c->ph, c->dh);
    d->pad_right = pad_end(c->ow, c->iw, c->kw, c->sw, c->pw, c->dw);
    d->dilation_h = c->dh + 1, d->dilation_w = c->dw + 1;
    d->x_type = p->set.dt[0], d->w_type = p->set.dt[1], d->y_type = p->set.dt[2];
    d->compute_type = kb_problem_compute(p);
}

void kb_matmul_to_desc(const kb_problem *p, kmux_matmul_desc *d) {
    const kb_matmul_shape *m = &p->mm;
    kmux_matmul_desc init = KMUX_MATMUL_DESC_INIT;
    *d = init;
    int col = p->set.dtag;
    d->order = col ? KMUX_COL_MAJOR : KMUX_ROW_MAJOR;
    d->transa = p->set.stag == col ? KMUX_NO_TRANS : KMUX_TRANS;
    d->transb = p->set.wtag == col ? KMUX_NO_TRANS : KMUX_TRANS;
    d->m = m->m, d->n = m->n, d->k = m->k;
    /* stored rows x cols in the storage order; ld = cols (row-major) or rows (column-major) */
    int64_t ar = d->transa == KMUX_NO_TRANS ? m->m : m->k;
    int64_t ac = d->transa == KMUX_NO_TRANS ? m->k : m->m;
    int64_t br = d->transb == KMUX_NO_TRANS ? m->k : m->n;
    int64_t bc = d->transb == KMUX_NO_TRANS ? m->n : m->k;
    d->lda = col ? ar : ac;
    d->ldb = col ? br : bc;
    d->ldc = col ? m->m : m->n;
    d->batch_count = m->batch_a > m->batch_b ? m->batch_a : m->batch_b;
    d->stride_a = m->batch_a > 1 ? m->m * m->k : 0;
    d->stride_b = m->batch_b > 1 ? m->k * m->n : 0;
    d->stride_c = d->batch_count > 1 ? m->m * m->n : 0;
    d->a_type = p->set.dt[0], d->b_type = p->set.dt[1], d->c_type = p->set.dt[2];
    d->compute_type = kb_problem_compute(p);
}

void kb_matmul_sizes(const kb_problem *p, int64_t *na, int64_t *nb, int64_t *nc) {
    const kb_matmul_shape *m = &p->mm;
    int64_t batch = m->batch_a > m->batch_b ? m->batch_a : m->batch_b;
    *na = m->m * m->k * m->batch_a;
    *nb = m->k * m->n * m->batch_b;
    *nc = m->m * m->n * batch;
}

double kb_problem_flops(const kb_problem *p) {
    if (p->op == KB_OP_MATMUL) {
        const kb_matmul_shape *m = &p->mm;
        double batch = (double)(m->batch_a > m->batch_b ? m->batch_a : m->batch_b);
        return 2.0 * (double)m->m * (double)m->n * (double)m->k * batch;
    }
    const kb_conv_shape *c = &p->cv;
    return 2.0 * (double)kb_conv_mb(p) * (double)c->oc * (double)c->oh * (double)c->ow *
           (double)(c->ic / c->g) * (double)c->kh * (double)c->kw;
}

double kb_problem_min_bytes(const kb_problem *p) {
    if (p->op == KB_OP_MATMUL) {
        int64_t na, nb, nc;
        kb_matmul_sizes(p, &na, &nb, &nc);
        return (double)na * (double)kmux_dtype_bytes(p->set.dt[0]) +
               (double)nb * (double)kmux_dtype_bytes(p->set.dt[1]) +
               (double)nc * (double)kmux_dtype_bytes(p->set.dt[2]);
    }
    const kb_conv_shape *c = &p->cv;
    double mb = (double)kb_conv_mb(p);
    double x = mb * (double)c->ic * (double)c->ih * (double)c->iw;
    double w = (double)c->oc * (double)(c->ic / c->g) * (double)c->kh * (double)c->kw;
    double y = mb * (double)c->oc * (double)c->oh * (double)c->ow;
    return x * (double)kmux_dtype_bytes(p->set.dt[0]) + w * (double)kmux_dtype_bytes(p->set.dt[1]) +
           y * (double)kmux_dtype_bytes(p->set.dt[2]);
}
