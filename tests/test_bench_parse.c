/*
 * test_bench_parse.c - kmux-bench's inputs: benchdnn descriptor grammar (conv and matmul) with
 * benchdnn's defaults, batch files, CSV workloads, filters, and the kmux descriptions they map to.
 */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kb_problem.h"
#include "kb_workload.h"
#include "test_util.h"

static kb_conv_shape conv(const char *s) {
    kb_conv_shape c;
    char err[256] = "";
    cr_assert(kb_parse_conv_desc(s, &c, NULL, 0, err, sizeof err), "%s: %s", s, err);
    return c;
}

static void conv_fails(const char *s, const char *why) {
    kb_conv_shape c;
    char err[256] = "";
    cr_assert_not(kb_parse_conv_desc(s, &c, NULL, 0, err, sizeof err), "%s parsed", s);
    cr_assert(strstr(err, why), "%s: message '%s' does not say '%s'", s, err, why);
}

Test(bench_desc, conv_full_descriptor_of_resnet50_conv1) {
    char name[64];
    kb_conv_shape c;
    char err[256] = "";
    cr_assert(kb_parse_conv_desc(
                  "g1mb50ic3ih224iw224oc64oh112ow112kh7kw7sh2sw2ph3pw3n\"resnet_50:conv1\"", &c,
                  name, sizeof name, err, sizeof err),
              "%s", err);
    cr_assert_str_eq(name, "resnet_50:conv1");
    cr_assert_eq(c.g, 1);
    cr_assert_eq(c.mb, 50);
    cr_assert_eq(c.ic, 3);
    cr_assert_eq(c.ih, 224);
    cr_assert_eq(c.oc, 64);
    cr_assert_eq(c.oh, 112);
    cr_assert_eq(c.kh, 7);
    cr_assert_eq(c.sh, 2);
    cr_assert_eq(c.ph, 3);
    cr_assert_eq(c.dh, 0);
}

Test(bench_desc, conv_benchdnn_defaults) {
    /* mb 2; the w axis copies the h axis; oh from ph; ph absent -> 0 */
    kb_conv_shape c = conv("ic64ih56oc64oh56kh3ph1");
    cr_assert_eq(c.mb, 2);
    cr_assert_eq(c.iw, 56);
    cr_assert_eq(c.kw, 3);
    cr_assert_eq(c.ow, 56);
    cr_assert_eq(c.pw, 1);
    cr_assert_eq(c.sw, 1);
    c = conv("mb1ic8ih10oc4kh3");
    cr_assert_eq(c.oh, 8, "no padding: 10 - 3 + 1");
    cr_assert_eq(c.ph, 0);
    /* padding derived from the output size */
    c = conv("mb1ic8ih10oc4oh10kh3");
    cr_assert_eq(c.ph, 1);
    c = conv("mb1ic8ih56oc4oh28kh1sh2");
    cr_assert_eq(c.ph, 0, "(27*2 - 56 + 1) / 2 < 0 -> 0");
    cr_assert_eq(c.sw, 2, "square: sw copies sh");
    /* underscores between fields, as benchdnn allows */
    c = conv("mb2_ic16_ih7_oc32_kh3_ph1");
    cr_assert_eq(c.oh, 7);
    cr_assert_eq(c.ic, 16);
}

Test(bench_desc, conv_rectangular_and_dilated) {
    kb_conv_shape c = conv("mb1ic1ih161iw700oc32kh5kw20sh2sw2");
    cr_assert_eq(c.oh, 79);
    cr_assert_eq(c.ow, 341);
    /* benchdnn dilation: dh1 = one gap between taps: effective kernel 5 */
    c = conv("mb1ic3ih9oc4kh3dh1");
    cr_assert_eq(c.dh, 1);
    cr_assert_eq(c.dw, 1);
    cr_assert_eq(c.oh, 5);
}

Test(bench_desc, conv_errors) {
    conv_fails("mb2ic3oc4", "no spatial sizes");
    conv_fails("mb2ih5oc4kh3", "ic and oc");
    conv_fails("mb2ic3ih5oc4kh3xx7", "unknown field 'xx'");
    conv_fails("g3mb2ic4ih5oc6kh3", "divisible");
    conv_fails("mb2ic3ih2oc4kh5", "empty output");
    conv_fails("mb2ic3ih10oc4oh5kh3ph1", "inconsistent");
    conv_fails("mb2ic3id4ih10oc4kh3", "3-D");
    conv_fails("mb2ic3ih10oc4khx", "expected a number");
}

Test(bench_desc, conv_3d_notation_depth_1_is_2d_other_depths_unsupported) {
    /* benchdnn's shapes_dilated:28, and sd/pd/dd with '_' (dd1 with kd1 is still depth 1) */
    kb_conv_shape c = conv("mb2ic16id1ih2iw1oc16od1oh1ow1kd1kh2kw1pd0ph0pw0dd0dh1dw0");
    cr_assert(c.ih == 2 && c.kh == 2 && c.dh == 1 && c.oh == 1 && c.iw == 1);
    c = conv("mb2_ic4id1ih6oc4od1oh6_kd1kh3_sd1sh1_pd0ph1_dd1dh0");
    cr_assert(c.ih == 6 && c.oh == 6 && c.ph == 1 && c.iw == 6);
    conv_fails("mb2ic16id2ih1oc16kd2kh1", "3-D convolution (id2 kd2 od1) is not supported");
    conv_fails("mb1ic4id1ih5oc4kd1kh3pd1", "(id1 kd1 od3 pd1)");
    conv_fails("mb2ic3ih5oc4kh3kd1", "without id and kd");
    kb_problem p, q;
    memset(&p, 0, sizeof p);
    memset(&q, 0, sizeof q);
    char err[256] = "", d[512];
    cr_assert(kb_parse_problem("mb2ic16id3ih1oc16kd2kh1dd1n\"x\"", &p, err, sizeof err), "%s", err);
    cr_assert(strstr(p.unsupported, "3-D") && p.depth.id == 3 && p.depth.od == 1, "%s",
              p.unsupported);
    kb_format_desc(&p, d, sizeof d);
    cr_assert(kb_parse_problem(d, &q, err, sizeof err), "%s: %s", d, err);
    cr_assert(!memcmp(&p.depth, &q.depth, sizeof p.depth) && !memcmp(&p.cv, &q.cv, sizeof p.cv),
              "%s", d);
    cr_assert_not(kb_parse_desc(d, &q, err, sizeof err), "kb_parse_desc runs only what kmux can");
    kb_settings s;
    kb_settings_default(&s);
    kb_problem_list l = {NULL, 0, 0};
    cr_assert(kb_batch_parse("mb2ic4ih6oc5kh3\nmb2ic16id2ih1oc16kd2kh1\nmb2ic4ih6oc5kh1\n", "f",
                             NULL, &s, &l, err, sizeof err),
              "a 3-D line does not stop the batch: %s", err);
    cr_assert(l.n == 3 && !l.v[0].unsupported[0] && l.v[1].unsupported[0] &&
              !l.v[2].unsupported[0]);
    kb_problem_list_free(&l);
}

Test(bench_desc, conv_to_kmux_desc_converts_dilation_and_end_padding) {
    kb_problem p;
    memset(&p, 0, sizeof p);
    kb_settings_default(&p.set);
    p.op = KB_OP_CONV;
    p.dir = KB_DIR_BWD_W;
    p.cv = conv("mb3ic8ih56oc16oh28kh1sh2dh2");
    p.set.layout = KMUX_NHWC;
    kmux_conv2d_desc d;
    kb_conv_to_desc(&p, &d);
    cr_assert_eq(d.direction, KMUX_CONV_BWD_WEIGHTS);
    cr_assert_eq(d.layout, KMUX_NHWC);
    cr_assert_eq(d.n, 3);
    cr_assert_eq(d.dilation_h, 3, "benchdnn dh2 is kmux dilation 3");
    cr_assert_eq(d.pad_top, 0);
    cr_assert_eq(d.pad_bottom, 0, "a negative end padding is clamped");
    int64_t P, Q;
    TU_OK(kmux_conv2d_output_dims(&d, &P, &Q));
    cr_assert_eq(P, 28);
    cr_assert_eq(Q, 28);
    /* --mb overrides the descriptor's minibatch */
    p.set.mb = 7;
    kb_conv_to_desc(&p, &d);
    cr_assert_eq(d.n, 7);
    /* asymmetric: oh needs more padding at the end than at the start */
    p.cv = conv("mb1ic2ih6oc2oh4kh2sh2ph0");
    kb_conv_to_desc(&p, &d);
    cr_assert_eq(d.pad_bottom, 2);
    TU_OK(kmux_conv2d_output_dims(&d, &P, &Q));
    cr_assert_eq(P, 4);
}

Test(bench_desc, canonical_descriptor_round_trips) {
    const char *in[] = {"ic64ih56oc64oh56kh3ph1n\"a b\"", "g2mb4ic8ih9iw7oc6kh3kw2sh2sw1dh1",
                        "3x5x7:3x7x2n\"bat\"", "1x4x6:5x6x3", "64x32:32x16"};
    for (size_t i = 0; i < sizeof in / sizeof in[0]; ++i) {
        kb_problem a, b;
        memset(&a, 0, sizeof a);
        memset(&b, 0, sizeof b);
        kb_settings_default(&a.set);
        b.set = a.set;
        char err[256] = "", d1[512], d2[512];
        cr_assert(kb_parse_desc(in[i], &a, err, sizeof err), "%s: %s", in[i], err);
        kb_format_desc(&a, d1, sizeof d1);
        cr_assert(kb_parse_desc(d1, &b, err, sizeof err), "%s: %s", d1, err);
        kb_format_desc(&b, d2, sizeof d2);
        cr_assert_str_eq(d1, d2);
        cr_assert_eq(memcmp(&a.cv, &b.cv, sizeof a.cv), 0, "%s", d1);
        cr_assert_eq(memcmp(&a.mm, &b.mm, sizeof a.mm), 0, "%s", d1);
        cr_assert_str_eq(a.name, b.name);
    }
}

Test(bench_desc, matmul_descriptors) {
    kb_matmul_shape m;
    char name[64], err[256] = "";
    cr_assert(
        kb_parse_matmul_desc("2x3x4x5:2x3x5x6_n\"attn\"", &m, name, sizeof name, err, sizeof err),
        "%s", err);
    cr_assert_eq(m.batch_a, 6);
    cr_assert_eq(m.batch_b, 6);
    cr_assert_eq(m.m, 4);
    cr_assert_eq(m.k, 5);
    cr_assert_eq(m.n, 6);
    cr_assert_str_eq(name, "attn");
    cr_assert(kb_parse_matmul_desc("8x16x32:1x32x4:8x16x4", &m, NULL, 0, err, sizeof err), "%s",
              err);
    cr_assert_eq(m.batch_b, 1, "B broadcast over the batch");
    const char *bad[] = {"16x32:31x8",   "16x32",       "16x32:32x8:16x9", "2x16x32:3x32x8",
                         "16x32:32x8zz", "16xx32:32x8", "0x4:4x4"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; ++i)
        cr_assert_not(kb_parse_matmul_desc(bad[i], &m, NULL, 0, err, sizeof err), "%s parsed",
                      bad[i]);
}

Test(bench_desc, matmul_tags_map_to_blas_order_transposes_and_strides) {
    kb_problem p;
    memset(&p, 0, sizeof p);
    kb_settings_default(&p.set);
    char err[256];
    cr_assert(kb_parse_desc("3x10x20:1x20x30", &p, err, sizeof err));
    kmux_matmul_desc d;
    kb_matmul_to_desc(&p, &d);
    cr_assert_eq(d.order, KMUX_ROW_MAJOR);
    cr_assert_eq(d.transa, KMUX_NO_TRANS);
    cr_assert_eq(d.lda, 20);
    cr_assert_eq(d.ldb, 30);
    cr_assert_eq(d.ldc, 30);
    cr_assert_eq(d.batch_count, 3);
    cr_assert_eq(d.stride_a, 200);
    cr_assert_eq(d.stride_b, 0, "broadcast B");
    cr_assert_eq(d.stride_c, 300);
    /* DeepBench T,N: column-major C, A stored K x M column-major (= "ab"), B "ba" */
    p.set.dtag = 1, p.set.stag = 0, p.set.wtag = 1;
    kb_matmul_to_desc(&p, &d);
    cr_assert_eq(d.order, KMUX_COL_MAJOR);
    cr_assert_eq(d.transa, KMUX_TRANS);
    cr_assert_eq(d.transb, KMUX_NO_TRANS);
    cr_assert_eq(d.lda, 20, "K rows of the stored A");
    cr_assert_eq(d.ldb, 20);
    cr_assert_eq(d.ldc, 10);
    cr_assert_eq(kb_problem_flops(&p), 2.0 * 10 * 20 * 30 * 3);
}

Test(bench_desc, settings_options) {
    kb_settings s, def;
    kb_settings_default(&s);
    def = s;
    char err[128];
    int dir_given = 0;
    cr_assert_eq(kb_settings_apply(&s, &def, "--dt=bf16:bf16:f32", NULL, err, sizeof err), 1);
    cr_assert_eq(s.dt[0], KMUX_BF16);
    cr_assert_eq(s.dt[2], KMUX_F32);
    cr_assert_eq(kb_settings_apply(&s, &def, "--dt=i8", NULL, err, sizeof err), 1);
    cr_assert_eq(s.dt[2], KMUX_I32, "--dt=i8 accumulates into i32");
    cr_assert_eq(kb_settings_apply(&s, &def, "--dir=ALL", &dir_given, err, sizeof err), 1);
    cr_assert_eq(s.dir_mask, (unsigned)KB_DIR_ALL);
    cr_assert_eq(dir_given, 1);
    cr_assert_eq(kb_settings_apply(&s, &def, "--compute=tf32", NULL, err, sizeof err), 1);
    cr_assert_eq(s.compute, KMUX_COMPUTE_F32_FAST_TF32);
    cr_assert_eq(kb_settings_apply(&s, &def, "--layout=NHWC", NULL, err, sizeof err), 1);
    cr_assert_eq(s.layout, KMUX_NHWC);
    cr_assert_eq(kb_settings_apply(&s, &def, "--dt=f8", NULL, err, sizeof err), -1);
    cr_assert_eq(kb_settings_apply(&s, &def, "--dir=SIDEWAYS", NULL, err, sizeof err), -1);
    cr_assert_eq(kb_settings_apply(&s, &def, "--min-time=1", NULL, err, sizeof err), 0);
    cr_assert_eq(kb_settings_apply(&s, &def, "--reset", NULL, err, sizeof err), 1);
    cr_assert_eq(memcmp(&s, &def, sizeof s), 0);
}

Test(bench_workload, csv_quotes_and_padding) {
    kb_csv csv;
    char err[128];
    cr_assert(
        kb_csv_parse("a,b,c\n1,\"x, \"\"y\"\"\",3\r\n\n4,\"multi\nline\"\n", &csv, err, sizeof err),
        "%s", err);
    cr_assert_eq(csv.cols, 3);
    cr_assert_eq(csv.rows, 2);
    cr_assert_str_eq(kb_csv_get(&csv, 0, "b"), "x, \"y\"");
    cr_assert_str_eq(kb_csv_get(&csv, 1, "b"), "multi\nline");
    cr_assert_str_eq(kb_csv_get(&csv, 1, "c"), "", "short rows are padded");
    cr_assert_str_eq(kb_csv_get(&csv, 0, "nope"), "");
    kb_csv_free(&csv);
    cr_assert_not(kb_csv_parse("a,b\n\"open,1\n", &csv, err, sizeof err));
}

static size_t load(const char *name, kb_problem_list *l) {
    kb_settings s;
    kb_settings_default(&s);
    char err[256] = "";
    cr_assert(kb_workload_load(name, &s, 0, NULL, l, err, sizeof err), "%s: %s", name, err);
    return l->n;
}

Test(bench_workload, embedded_workloads_have_every_row) {
    kb_problem_list l = {NULL, 0, 0};
    cr_assert_eq(load("deepbench-gemm-train", &l), 160);
    /* row 44: 5124 x 9124 x 1760, N,N, column-major */
    kb_problem *p = &l.v[44];
    cr_assert_eq(p->mm.m, 5124);
    cr_assert_eq(p->mm.n, 9124);
    cr_assert_eq(p->mm.k, 1760);
    cr_assert_eq(p->set.dtag, 1);
    cr_assert_eq(p->set.stag, 1);
    cr_assert_eq(p->set.wtag, 1);
    cr_assert(strstr(p->name, "deepbench-gemm-train:44:"), "%s", p->name);
    cr_assert_null(strchr(p->name, ' '), "names have no spaces: %s", p->name);
    kb_problem_list_free(&l);

    cr_assert_eq(load("deepbench-conv-train", &l), 94);
    /* row 0: W700 H161 C1 N4 K32 S20 R5 stride 2: out 341 x 79 as derived in the file */
    cr_assert_eq(l.v[0].cv.iw, 700);
    cr_assert_eq(l.v[0].cv.ow, 341);
    cr_assert_eq(l.v[0].cv.oh, 79);
    cr_assert_eq(l.v[0].cv.kw, 20);
    kb_problem_list_free(&l);

    cr_assert_eq(load("resnet50", &l), 23);
    int occ = 0;
    for (size_t i = 0; i < l.n; ++i) {
        occ += l.v[i].occurrences;
        cr_assert_eq(l.v[i].set.dir_mask, (unsigned)KB_DIR_ALL, "network: every direction");
        cr_assert_eq(l.v[i].cv.mb, 2);
    }
    cr_assert_eq(occ, 53, "ResNet-50 has 53 convolutions");
    kb_problem_list_free(&l);
    cr_assert_eq(load("resnet50-v1", &l), 20);
    cr_assert_eq(l.v[0].cv.mb, 50);
    kb_problem_list_free(&l);
    cr_assert_eq(load("default", &l), 10);
    kb_problem_list_free(&l);
}

Test(bench_workload, filters_and_direction_expansion) {
    kb_problem_list l = {NULL, 0, 0}, x = {NULL, 0, 0};
    load("resnet50", &l);
    char err[128];
    cr_assert(kb_filter(&l, "branch2b", -1, err, sizeof err));
    cr_assert_eq(l.n, 7);
    cr_assert(kb_filter(&l, NULL, 2, err, sizeof err));
    cr_assert_eq(l.n, 2);
    kb_expand_directions(&l, &x);
    cr_assert_eq(x.n, 6);
    cr_assert_eq(x.v[1].dir, KB_DIR_BWD_D);
    cr_assert_eq(x.v[2].dir, KB_DIR_BWD_W);
    cr_assert_not(kb_filter(&l, "(", -1, err, sizeof err), "a bad regex is an error");
    kb_problem_list_free(&l);
    kb_problem_list_free(&x);
}

Test(bench_workload, batch_file_options_apply_to_later_lines) {
    kb_settings s;
    kb_settings_default(&s);
    kb_problem_list l = {NULL, 0, 0};
    char err[256] = "";
    const char *text = "# header\n"
                       "mb2ic4ih6oc5kh3 --dt=bf16 mb2ic4ih6oc5kh1\n"
                       "  --dir=ALL --layout=nhwc 16x8:8x4 # comment\n"
                       "--reset mb1ic1ih3oc1kh1\n";
    cr_assert(kb_batch_parse(text, "t", NULL, &s, &l, err, sizeof err), "%s", err);
    cr_assert_eq(l.n, 4);
    cr_assert_eq(l.v[0].set.dt[0], KMUX_F32);
    cr_assert_eq(l.v[1].set.dt[0], KMUX_BF16);
    cr_assert_eq(l.v[2].op, KB_OP_MATMUL);
    cr_assert_eq(l.v[2].set.layout, KMUX_NHWC);
    cr_assert_eq(l.v[3].set.dt[0], KMUX_F32, "--reset");
    cr_assert_eq(l.v[3].set.dir_mask, (unsigned)KB_DIR_FWD);
    kb_problem_list_free(&l);
    cr_assert_not(
        kb_batch_parse("mb2ic4ih6oc5kh3\n--min-time=3\n", "f", NULL, &s, &l, err, sizeof err));
    cr_assert(strstr(err, "f:2:"), "error names file and line: %s", err);
    kb_problem_list_free(&l);
}

/* Hostile batch files (issue 50): each is refused with file, line and reason, or read whole. */
static void write_text(const char *path, const char *text, size_t n) {
    FILE *f = fopen(path, "wb");
    cr_assert_not_null(f, "%s", path);
    cr_assert_eq(fwrite(text, 1, n, f), n);
    fclose(f);
}

Test(bench_batch, hostile_batch_files) {
    kb_settings s;
    kb_settings_default(&s);
    kb_problem_list l = {NULL, 0, 0};
    char err[1024] = "";
    /* 100 descriptors on one line: every one kept (the first 64 only, before) */
    char line[4096] = "";
    for (int i = 0; i < 100; i++)
        strcat(line, "4x4:4x4 ");
    cr_assert(kb_batch_parse(line, "wide", NULL, &s, &l, err, sizeof err), "%s", err);
    cr_expect_eq(l.n, 100);
    kb_problem_list_free(&l);

    char dir[] = "/tmp/kmux-batch-XXXXXX";
    cr_assert_not_null(mkdtemp(dir));
    char a[300], b[300], n[300];
    snprintf(a, sizeof a, "%s/a.txt", dir);
    snprintf(b, sizeof b, "%s/b.txt", dir);
    snprintf(n, sizeof n, "%s/nul.txt", dir);
    /* a NUL byte ended the file silently */
    write_text(n, "4x4:4x4\n8x8:8x8\0 16x16:16x16\n", 30);
    cr_expect_not(kb_batch_load(n, &s, &l, err, sizeof err));
    cr_expect(strstr(err, ":2: a NUL byte"), "%s", err);
    kb_problem_list_free(&l);
    /* a file that includes itself, and two that include each other: stack overflow before */
    write_text(a, "4x4:4x4 --batch=a.txt\n", 22);
    cr_expect_not(kb_batch_load(a, &s, &l, err, sizeof err));
    cr_expect(strstr(err, "includes itself"), "%s", err);
    kb_problem_list_free(&l);
    write_text(a, "--batch=b.txt\n", 14);
    write_text(b, "--batch=a.txt\n", 14);
    cr_expect_not(kb_batch_load(a, &s, &l, err, sizeof err));
    cr_expect(strstr(err, "includes itself"), "%s", err);
    kb_problem_list_free(&l);
    /* /dev/zero read until memory ran out */
    cr_expect_not(kb_batch_load("/dev/zero", &s, &l, err, sizeof err));
    cr_expect(strstr(err, "larger than 64 MiB"), "%s", err);
    kb_problem_list_free(&l);
    /* --mb that makes a tensor too large skipped the size check */
    cr_expect_not(kb_batch_parse("--mb=1073741824 mb1ic4096ih4096oc4096kh3\n", "mb", NULL, &s, &l,
                                 err, sizeof err));
    cr_expect(strstr(err, "with --mb=1073741824 the source tensor has more than 2^48"), "%s", err);
    kb_problem_list_free(&l);
    unlink(a), unlink(b), unlink(n), rmdir(dir);
}
