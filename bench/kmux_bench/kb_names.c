/* kb_names.c - names of dtypes, compute types, ops and directions, as kmux-bench spells them. */
#include "kb_problem.h"

#include <string.h>

#include "kb_util.h"

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

const char *kb_problem_op_name(const kb_problem *p) {
    return p->op == KB_OP_CONV && p->depth.id > 0 ? "conv3d" : kb_op_name(p->op);
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
