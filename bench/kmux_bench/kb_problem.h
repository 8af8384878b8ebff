/*
 * kb_problem.h - what kmux-bench runs: a matmul or 2-D convolution problem with its settings,
 * and the parsers/printers of oneDNN benchdnn's descriptor grammar.
 *
 * Convolution descriptors follow benchdnn (tests/benchdnn/doc/driver_conv.md):
 *   [gG][mbMB]icIC[ihIH][iwIW]ocOC[ohOH][owOW]khKH[kwKW][shSH][swSW][phPH][pwPW][dhDH][dwDW][n"name"]
 * with benchdnn's rules: mb defaults to 2, missing w-values copy the h-values (square problem),
 * a missing output size is computed from the padding (0 when absent), a missing padding is
 * computed from the output size, and dilation 0 means dense. '_' may separate the fields.
 * kmux's API counts dilation from 1 (1 = dense): kb_conv_to_desc converts.
 * benchdnn's 3-D notation (idID odOD kdKD sdSD pdPD ddDD, placed as in its canonical form
 * gXmbX_icXidXihXiwX_ocXodXohXowX_kdXkhXkwX_sdXshXswX_pdXphXpwX_ddXdhXdwX_nS) resolves the depth
 * axis by the same rules (only d-values: h and w copy them, a cube); a depth of 1 (id1 kd1 od1
 * pd0, any sd and dd) is the 2-D problem and parses as it. Any other depth is a 3-D convolution,
 * which kmux cannot run: kb_parse_problem returns it marked unsupported (reported, not run);
 * kb_parse_desc and kb_parse_conv_desc refuse it.
 *
 * Matmul descriptors follow benchdnn's matmul driver: MxK:KxN[:MxN], batched BxMxK:BxKxN (any
 * number of leading batch dims; one operand may be broadcast with all batch dims 1), an optional
 * [_]n"name". Storage of A, B and C is given by the tags "ab" (row-major) or "ba" (column-major),
 * benchdnn's --stag/--wtag/--dtag.
 */
#ifndef KB_PROBLEM_H
#define KB_PROBLEM_H

#include <stddef.h>
#include <stdint.h>
#include "kmux.h"

typedef enum kb_op { KB_OP_MATMUL = 1, KB_OP_CONV = 2 } kb_op;

/** Directions as benchdnn spells them (FWD_D/FWD_B are both "FWD" here). */
typedef enum kb_dir { KB_DIR_FWD = 1, KB_DIR_BWD_D = 2, KB_DIR_BWD_W = 4 } kb_dir;
#define KB_DIR_ALL (KB_DIR_FWD | KB_DIR_BWD_D | KB_DIR_BWD_W)

/** Run settings that options (command line, batch-file lines) give a problem. */
typedef struct kb_settings {
    unsigned dir_mask;         /**< OR of kb_dir; conv only (matmul is always FWD) */
    kmux_dtype dt[3];          /**< src/A, wei/B, dst/C */
    kmux_compute_type compute; /**< 0: the natural compute type of the dtypes */
    kmux_layout layout;        /**< convolution layout */
    int64_t mb;                /**< 0: the descriptor's minibatch; > 0 overrides it (--mb) */
    int stag, wtag, dtag;      /**< matmul storage: 0 "ab" (row-major), 1 "ba" (column-major) */
} kb_settings;

/** Defaults: FWD, f32 everywhere, natural compute, NCHW, descriptor's mb, all "ab". */
void kb_settings_default(kb_settings *s);

typedef struct kb_matmul_shape {
    int64_t batch_a, batch_b; /**< batch counts of A and B: equal, or one of them 1 (broadcast) */
    int64_t m, n, k;
} kb_matmul_shape;

/** A convolution in benchdnn terms, fully resolved (no missing values). */
typedef struct kb_conv_shape {
    int64_t g, mb, ic, ih, iw, oc, oh, ow, kh, kw, sh, sw, ph, pw, dh, dw; /**< dh, dw: 0 = dense */
} kb_conv_shape;

/** The depth axis of a 3-D convolution (benchdnn's id, od, kd, sd, pd, dd), resolved; all 0 for a
 *  2-D problem (and for a depth of 1, which is one). */
typedef struct kb_conv_depth {
    int64_t id, od, kd, sd, pd, dd;
} kb_conv_depth;

/** One problem: an op, its shape, its settings, and where it came from. */
typedef struct kb_problem {
    kb_op op;
    kb_dir dir; /**< one direction (after expansion) */
    kb_matmul_shape mm;
    kb_conv_shape cv;
    kb_conv_depth depth;   /**< depth.id > 0: a 3-D convolution (cv holds its h and w axes) */
    char unsupported[200]; /**< why kmux cannot run it ("" when it can): an UNSUPPORTED row per
                                device, not run (kb_run_problem) */
    kb_settings set;
    char name[160];    /**< benchdnn's n"..." or a workload label; may be "" */
    char workload[32]; /**< "deepbench-gemm-train", "resnet50", ... or "" */
    int occurrences;   /**< times the layer occurs in its network (model view); 1 otherwise */
} kb_problem;

/** An empty problem (all zero) with the default settings (kb_settings_default). */
void kb_problem_init(kb_problem *p);

/** A growable list of problems. */
typedef struct kb_problem_list {
    kb_problem *v;
    size_t n, cap;
} kb_problem_list;

void kb_problem_list_push(kb_problem_list *l, const kb_problem *p);
void kb_problem_list_free(kb_problem_list *l);

/** Largest value of one descriptor field (a size, stride, padding or dilation: 2^30) and largest
 *  element count of one tensor (log2), so that no size arithmetic of kmux-bench (products of two
 *  fields plus a few more) can overflow int64. */
#define KB_DESC_VALUE_MAX ((int64_t)1 << 30)
#define KB_DESC_ELEMENTS_LOG2 48

/** 1 when the product of the n dims (each >= 0) is at most 2^KB_DESC_ELEMENTS_LOG2. */
int kb_dims_fit(const int64_t *dims, int n);

/** Parses a benchdnn convolution descriptor into *cv and name (capacity name_cap, may be NULL).
 *  Returns 1 on success; on failure 0 with a message in err (capacity err_cap). */
int kb_parse_conv_desc(const char *s, kb_conv_shape *cv, char *name, size_t name_cap, char *err,
                       size_t err_cap);

/** Parses a benchdnn matmul descriptor. Returns 1 on success; 0 with a message in err. */
int kb_parse_matmul_desc(const char *s, kb_matmul_shape *mm, char *name, size_t name_cap, char *err,
                         size_t err_cap);

/** Parses either kind (a matmul descriptor starts with a digit) into p->op/shape/name; the
 *  settings of p are left alone. Returns 1 on success; 0 with a message in err (also for a
 *  valid problem kmux cannot run, a 3-D convolution). */
int kb_parse_desc(const char *s, kb_problem *p, char *err, size_t err_cap);

/** As kb_parse_desc, but a valid descriptor that kmux cannot run (a 3-D convolution with a depth
 *  other than 1) parses too: 1 with p->unsupported saying why (and p->depth filled), so that it
 *  is reported UNSUPPORTED as benchdnn would and the run goes on. 0 (a syntax or value error,
 *  message in err) as kb_parse_desc otherwise. p->unsupported is "" for a problem that runs. */
int kb_parse_problem(const char *s, kb_problem *p, char *err, size_t err_cap);

/** The canonical descriptor of p (shape and name, no settings) into buf; parsing it gives the
 *  same shape back. The effective minibatch (--mb) is written. */
void kb_format_desc(const kb_problem *p, char *buf, size_t cap);

/** Settings of p as command-line options ("--dir=FWD --dt=f32 --layout=nchw" or "--stag=ba ...")
 *  into buf, so that "kmux-bench <options> <descriptor>" reproduces the problem. */
void kb_format_options(const kb_problem *p, char *buf, size_t cap);

/** Right (bottom) padding that gives output o along an axis (input i, kernel k, stride s, top
 *  padding p, benchdnn dilation d); clamped at 0 (a negative one only drops input rows the last
 *  window never reaches). */
int64_t kb_conv_pad_end(int64_t o, int64_t i, int64_t k, int64_t s, int64_t p, int64_t d);

/** The minibatch p really runs with (settings' mb when > 0). */
int64_t kb_conv_mb(const kb_problem *p);

/** The kmux convolution description of p (direction, layout, dtypes, compute, dilation + 1). */
void kb_conv_to_desc(const kb_problem *p, kmux_conv2d_desc *d);

/** The kmux matmul description of p: storage order from dtag, transposes and leading dimensions
 *  from stag/wtag, dense strides, the broadcast operand with stride 0. */
void kb_matmul_to_desc(const kb_problem *p, kmux_matmul_desc *d);

/** Elements of A, B and C of a matmul (all batches). */
void kb_matmul_sizes(const kb_problem *p, int64_t *na, int64_t *nb, int64_t *nc);

/** Exact floating-point (or integer) operation count: 2*M*N*K*batch for matmul,
 *  2*N*K*P*Q*(C/g)*R*S for every conv direction. */
double kb_problem_flops(const kb_problem *p);

/** Minimal bytes moved: every input read once and the output written once. */
double kb_problem_min_bytes(const kb_problem *p);

/** "matmul" or "conv2d". */
const char *kb_op_name(kb_op op);
/** The op name of p's record: kb_op_name, "conv3d" for a 3-D convolution (p->depth.id > 0). */
const char *kb_problem_op_name(const kb_problem *p);
/** "FWD", "BWD_D", "BWD_W". */
const char *kb_dir_name(kb_dir d);
/** Parses FWD|FWD_D|FWD_B|FWD_I|BWD_D|BWD_W|BWD_WB|ALL into a mask. Returns 1 on success. */
int kb_parse_dir(const char *s, unsigned *mask);

/** Parses a dtype name: f64, f32, f16, bf16, e4m3 (f8_e4m3), e5m2, e4m3fnuz, e5m2fnuz, i8 (s8),
 *  i32 (s32). Returns 1 on success. */
int kb_parse_dtype(const char *s, kmux_dtype *t);
/** The name kmux-bench writes for a dtype ("f32", "e4m3"...). */
const char *kb_dtype_name(kmux_dtype t);
/** Parses --dt: "a" (all three) or "a:b:c" (src:wei:dst). Returns 1 on success. */
int kb_parse_dt_triple(const char *s, kmux_dtype dt[3]);
/** Parses a compute type: f64, f32, tf32 (f32_fast_tf32), bf16x3 (f32_fast_bf16), f16, i32.
 *  Returns 1 on success. */
int kb_parse_compute(const char *s, kmux_compute_type *c);
/** Short name of a compute type: "f32", "tf32", "bf16x3", ... */
const char *kb_compute_name(kmux_compute_type c);
/** The compute type p runs with: its setting or the natural one of its dtypes (i32 for i8,
 *  f64 for f64, f32 otherwise). */
kmux_compute_type kb_problem_compute(const kb_problem *p);

#endif
