/* kb_problem.c - problems: lists, settings, canonical descriptors and options, kmux descriptions
 * and sizes (grammar: kb_desc.c; names: kb_names.c). */
#include "kb_problem.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kb_util.h"
#include "kmux_dtype_desc.h"

void kb_problem_init(kb_problem *p) {
    memset(p, 0, sizeof *p);
    kb_settings_default(&p->set);
}

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

/* ---- printing ------------------------------------------------------------------------------- */

int64_t kb_conv_mb(const kb_problem *p) {
    return p->set.mb > 0 ? p->set.mb : p->cv.mb;
}

void kb_format_desc(const kb_problem *p, char *buf, size_t cap) {
    kb_sb sb = KB_SB_INIT;
    if (p->op == KB_OP_CONV && p->depth.id > 0) { /* 3-D: benchdnn's canonical order */
        const kb_conv_shape *c = &p->cv;
        const kb_conv_depth *d = &p->depth;
        if (c->g != 1) kb_sb_printf(&sb, "g%lld", (long long)c->g);
        kb_sb_printf(&sb, "mb%lldic%lldid%lldih%lldiw%lldoc%lldod%lldoh%lldow%lld",
                     (long long)kb_conv_mb(p), (long long)c->ic, (long long)d->id, (long long)c->ih,
                     (long long)c->iw, (long long)c->oc, (long long)d->od, (long long)c->oh,
                     (long long)c->ow);
        kb_sb_printf(&sb, "kd%lldkh%lldkw%lldsd%lldsh%lldsw%lldpd%lldph%lldpw%lld",
                     (long long)d->kd, (long long)c->kh, (long long)c->kw, (long long)d->sd,
                     (long long)c->sh, (long long)c->sw, (long long)d->pd, (long long)c->ph,
                     (long long)c->pw);
        if (d->dd || c->dh || c->dw)
            kb_sb_printf(&sb, "dd%llddh%llddw%lld", (long long)d->dd, (long long)c->dh,
                         (long long)c->dw);
    } else if (p->op == KB_OP_CONV) {
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
    d->pad_bottom = kb_conv_pad_end(c->oh, c->ih, c->kh, c->sh, c->ph, c->dh);
    d->pad_right = kb_conv_pad_end(c->ow, c->iw, c->kw, c->sw, c->pw, c->dw);
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
    const kb_conv_depth *d = &p->depth; /* 3-D (not run): its depth counts too */
    double depth = d->id > 0 ? (double)d->od * (double)d->kd : 1.0;
    return 2.0 * (double)kb_conv_mb(p) * (double)c->oc * (double)c->oh * (double)c->ow *
           (double)(c->ic / c->g) * (double)c->kh * (double)c->kw * depth;
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
    const kb_conv_depth *d = &p->depth;
    int three = d->id > 0;
    double x = mb * (double)c->ic * (double)c->ih * (double)c->iw * (three ? (double)d->id : 1.0);
    double w = (double)c->oc * (double)(c->ic / c->g) * (double)c->kh * (double)c->kw *
               (three ? (double)d->kd : 1.0);
    double y = mb * (double)c->oc * (double)c->oh * (double)c->ow * (three ? (double)d->od : 1.0);
    return x * (double)kmux_dtype_bytes(p->set.dt[0]) + w * (double)kmux_dtype_bytes(p->set.dt[1]) +
           y * (double)kmux_dtype_bytes(p->set.dt[2]);
}
